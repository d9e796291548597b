# Contract inputs for ev-overlap: the same small streams as ev-view.
# shellcheck source=tests/contract/ev-view.bash
. "$TESTS_DIR/contract/ev-view.bash"
