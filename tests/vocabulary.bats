#!/usr/bin/env bats
# One vocabulary: a kernel name read by kineto2ev and by nsys2ev gets the
# same class, and an NCCL kernel the same collective and algorithm.  The
# nsys export is generated; its compute kernels are renamed to real names
# of every vendor, and a Kineto trace is written with the same kernels.
bats_require_minimum_version 1.5.0
load test_helper

NAMES=(
	"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"
	"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0"
	"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 32, 4, false, false, cutlass::half_t> >(Flash_fwd_params)"
	"sdpa_forward_kernel"
	"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw"
	"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_convert_element_type_0"
	"cross_device_reduce_1stage<__nv_bfloat16, 8>"
	"fused_moe_kernel"
	"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int)"
)

@test "kineto2ev and nsys2ev classify and decode every kernel name the same way" {
	command -v sqlite3 >/dev/null || skip "sqlite3 CLI not installed"
	local d="$BATS_TEST_TMPDIR" db i
	python3 "$TESTS_DIR/gen/gen-nsys.py" --nodes 1 --gpus 1 --iters 1 "$d/gen" >/dev/null
	db="$d/gen/nsys_nid000000.sqlite"
	# Rename the compute kernels, one real name per kernel row.
	mapfile -t rows < <(sqlite3 "$db" "SELECT k.rowid FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName WHERE s.value NOT LIKE 'nccl%' ORDER BY k.start")
	[ "${#rows[@]}" -ge "${#NAMES[@]}" ] || skip "the generated export has only ${#rows[@]} compute kernels"
	for i in "${!NAMES[@]}"; do
		sqlite3 "$db" "INSERT INTO StringIds VALUES ((SELECT max(id) + 1 FROM StringIds), '${NAMES[$i]//\'/\'\'}');
		               UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = (SELECT max(id) FROM StringIds),
		               shortName = (SELECT max(id) FROM StringIds) WHERE rowid = ${rows[$i]};"
	done
	run -0 nsys2ev -q -o "$d/nsys.ev" "$db"
	ev-view -M -H -c type,op,name,nthreads --type=kernel "$d/nsys.ev" | sort -u >"$d/nsys.tsv"
	ev-view -M -H -c op,algo,sig --type=coll "$d/nsys.ev" | sort -u >"$d/nsys-coll.tsv"
	# The same kernels as a Kineto trace: names, launch geometry, and the
	# NCCL arguments PyTorch records for collectives.
	python3 - "$d/nsys.tsv" "$d/trace.json" <<'PY'
import json, sys
events, ts = [], 1000
for line in open(sys.argv[1]):
    typ, op, name, nthreads = line.rstrip("\n").split("\t")
    args = {"device": 0, "stream": 7, "correlation": ts, "block": [int(nthreads), 1, 1]}
    if name.startswith("nccl") and "SendRecv" not in name:
        coll = name.split("_")[1]
        args.update({"Collective name": {"AllReduce": "allreduce", "AllGather": "_allgather_base",
                     "ReduceScatter": "_reduce_scatter_base", "Broadcast": "broadcast",
                     "Reduce": "reduce"}[coll], "In msg nelems": 1024, "Out msg nelems": 1024,
                     "Group size": 2, "dtype": "Float", "Process Group Name": "0",
                     "Process Group Ranks": "[0, 1]"})
    events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": 5, "args": args})
    ts += 10
json.dump({"traceEvents": events}, open(sys.argv[2], "w"))
PY
	run -0 kineto2ev -q -o "$d/kineto.ev" "$d/trace.json"
	ev-view -M -H -c type,op,name,nthreads --type=kernel "$d/kineto.ev" | sort -u >"$d/kineto.tsv"
	ev-view -M -H -c op,algo,name --type=coll "$d/kineto.ev" | sort -u >"$d/kineto-coll.tsv"
	run diff "$d/nsys.tsv" "$d/kineto.tsv"
	assert_success
	# Every renamed kernel is there, with the class the classifier gives.
	run grep -c . "$d/nsys.tsv"
	[ "$output" -ge "${#NAMES[@]}" ]
	run grep -F "	sdpa_forward_kernel	" "$d/nsys.tsv"
	assert_output --partial "attention"
	run grep -F "fused_moe_kernel" "$d/nsys.tsv"
	assert_output --partial "gemm"
	# Collectives: the algorithm read from the kernel name agrees.
	cut -f1,2 "$d/nsys-coll.tsv" | sort -u >"$d/a"
	cut -f1,2 "$d/kineto-coll.tsv" | sort -u >"$d/b"
	run comm -13 "$d/a" "$d/b"
	assert_output ""
}
