# Contract inputs for rocprof2ev: the small rocprofv3 trace without what
# draws a warning (its hsa_api call, its kernel without a HIP call), and
# the trace cut short.
contract_good() {
	jq -c '.["rocprofiler-sdk-tool"][0].buffer_records |= (.hsa_api = [] |
		.kernel_dispatch |= map(select(.correlation_id.internal != 40)))' \
		"$TESTS_DIR/fixtures/rocprof2ev/small_results.json" >"$1"
}
contract_truncated() {
	head -c 9000 "$TESTS_DIR/fixtures/rocprof2ev/small_results.json" >"$1"
}
CONTRACT_TRUNC_MSG='truncated'
