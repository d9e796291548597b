# Contract inputs for ev-xlsx: a small TSV table, and the same cut inside a
# row (a row with fewer fields than the header).
contract_good() {
	{
		printf 'baseline\ttest\tmetric\tbase\tvalue\timprovement_pct\tstatus\n'
		for i in $(seq 1 200); do
			printf 'base\ttest\tGPU_metric_%d_ms\t%d.5\t%d.25\t-1.5\tWorse\n' "$i" "$i" "$i"
		done
	} >"$1"
}
contract_truncated() {
	contract_good "$1.full"
	head -c 150 "$1.full" >"$1"
	rm -f "$1.full"
}
CONTRACT_ARGS=()
CONTRACT_TRUNC_MSG='line [0-9]+: [0-9]+ fields, the header has 7'
# A table is text: no gzip input.
CONTRACT_NO_GZIP=1
