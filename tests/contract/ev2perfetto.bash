# Contract inputs for ev2perfetto: the same small ev streams as ev-view.
# shellcheck source=tests/contract/ev-view.bash
. "$TESTS_DIR/contract/ev-view.bash"
