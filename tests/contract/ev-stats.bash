# Contract inputs for ev-stats: the ev-view streams, summarised by timeline.
# shellcheck source=tests/contract/ev-view.bash
. "$TESTS_DIR/contract/ev-view.bash"
CONTRACT_ARGS=(timeline)
