# Contract inputs for ev-stats: the ev-view streams, summarised by timeline.
# shellcheck source=tests/contract/ev-view.bash
. "$TESTS_DIR/contract/ev-view.bash"
# A rank that communicates: the good input gives no note (a rank without
# communication has its overlap percent left empty, and says so; HTA
# rounds events inward to whole microseconds).
contract_good() {
	printf 'type\trank\tts\tdur\tname\nkernel\t0\t100000\t50000\tCijk_gemm\nkernel\t0\t120000\t5000\tncclDevKernel_AllReduce\n' >"$1.tsv"
	ev-view --pack -o "$1" "$1.tsv"
}
CONTRACT_ARGS=(timeline)
