# Contract inputs for ev-overlap: ev-view's small streams, but with a GEMM
# and a communication kernel under it, so that a good input has something
# to report (ev-overlap says so on stderr otherwise).
# shellcheck source=tests/contract/ev-view.bash
. "$TESTS_DIR/contract/ev-view.bash"
contract_good() {
	printf 'type\trank\tts\tdur\tname\nkernel\t0\t100\t50\tCijk_gemm\nkernel\t0\t120\t5\tncclDevKernel_AllReduce\n' >"$1.tsv"
	ev-view --pack -o "$1" "$1.tsv"
}
