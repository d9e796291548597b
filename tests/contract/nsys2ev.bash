# Contract inputs for nsys2ev: a small generated annotated-NCCL export (one
# node, one GPU), and the same database cut short.
contract_good() {
	local d="$BATS_TEST_TMPDIR/nsys-contract"
	[ -f "$d/nsys_nid000000.sqlite" ] ||
		python3 "$TESTS_DIR/gen/gen-nsys.py" --nodes 1 --gpus 1 --iters 1 "$d" >/dev/null
	cp "$d/nsys_nid000000.sqlite" "$1"
}
contract_truncated() {
	contract_good "$1.full"
	head -c 20000 "$1.full" >"$1"
	rm -f "$1.full"
}
CONTRACT_TRUNC_MSG='truncated'
CONTRACT_NO_STREAM=1 # SQLite cannot read a FIFO
