# Contract inputs for ev2goal: the expansion of a 2-rank AllReduce, and the
# same stream cut short.
contract_good() {
	ev-view --pack -o "$1.coll" "$TESTS_DIR/fixtures/coll-expand/ar2.tsv"
	coll-expand -o "$1" "$1.coll"
}
contract_truncated() {
	contract_good "$1.full"
	head -n 20 "$1.full" >"$1"
}
CONTRACT_TRUNC_MSG='record [0-9]+|line [0-9]+|truncated'
