# Contract inputs for ev-view (and the default for tools reading ev streams).
contract_good() {
	printf 'type\trank\tts\tdur\tname\nkernel\t0\t100\t5\tk1\nkernel\t0\t200\t5\tk2\n' >"$1.tsv"
	ev-view --pack -o "$1" "$1.tsv"
}
contract_truncated() {
	contract_good "$1.full"
	head -n 3 "$1.full" >"$1"
}
CONTRACT_TRUNC_MSG='record [0-9]+|line [0-9]+'
