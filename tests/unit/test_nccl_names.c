/* SPDX-License-Identifier: MIT */
/*
 * test_nccl_names.c - the NCCL/RCCL vocabulary and the kernel classifier
 * on real kernel names of every generation and vendor.  Both converters
 * (kineto2ev, nsys2ev) decode names through exactly these functions.
 */
#include <string.h>

#include "ev.h"
#include "ev/nccl.h"
#include "unit.h"

struct kcase { const char *name; unsigned era, coll, algo, proto, dtype, redop, known; };

static void test_kernel_decode(void)
{
	static const struct kcase cases[] = {
		/* NCCL >= 2.19 */
		{ "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", EV_NCCL_DEV,
		  EV_OP_ALLREDUCE, EV_ALGO_RING, EV_PROTO_LL, EV_DT_FLOAT32, EV_RED_SUM, EV_NCCL_K_COLL | EV_NCCL_K_DTYPE },
		{ "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", EV_NCCL_DEV, EV_OP_ALLGATHER,
		  EV_ALGO_RING, EV_PROTO_LL, 0, 0, EV_NCCL_K_COLL },
		{ "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", EV_NCCL_DEV, EV_OP_REDUCESCATTER, EV_ALGO_RING,
		  EV_PROTO_LL, EV_DT_BFLOAT16, EV_RED_SUM, EV_NCCL_K_COLL | EV_NCCL_K_DTYPE },
		{ "ncclDevKernel_AllReduce_Sum_bf16_NVLS_TREE_SIMPLE", EV_NCCL_DEV, EV_OP_ALLREDUCE, EV_ALGO_NVLS_TREE,
		  EV_PROTO_SIMPLE, EV_DT_BFLOAT16, EV_RED_SUM, EV_NCCL_K_COLL | EV_NCCL_K_DTYPE },
		{ "ncclDevKernel_AllReduce_Sum_f16_COLLNET_DIRECT_SIMPLE", EV_NCCL_DEV, EV_OP_ALLREDUCE,
		  EV_ALGO_COLLNET_DIRECT, EV_PROTO_SIMPLE, EV_DT_FLOAT16, EV_RED_SUM, EV_NCCL_K_COLL | EV_NCCL_K_DTYPE },
		{ "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", EV_NCCL_DEV, EV_OP_SENDRECV, 0, 0, 0, 0, EV_NCCL_K_COLL },
		{ "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", EV_NCCL_GENERIC, 0, 0, 0, 0, 0, 0 },
		{ "ncclDevKernel_Generic", EV_NCCL_GENERIC, 0, 0, 0, 0, 0, 0 },
		/* NCCL 2.8 - 2.18 and RCCL */
		{ "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", EV_NCCL_LEGACY, EV_OP_ALLREDUCE, EV_ALGO_RING,
		  EV_PROTO_LL, EV_DT_FLOAT32, EV_RED_SUM, EV_NCCL_K_COLL | EV_NCCL_K_ALGO | EV_NCCL_K_DTYPE },
		{ "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", EV_NCCL_LEGACY,
		  EV_OP_SENDRECV, 0, 0, 0, 0, EV_NCCL_K_COLL },
		{ "ncclKernel_AllReduce_TREE_LL128_Sum___nv_bfloat16(ncclDevComm*, unsigned long, ncclWork*)",
		  EV_NCCL_LEGACY, EV_OP_ALLREDUCE, EV_ALGO_TREE, EV_PROTO_LL128, EV_DT_BFLOAT16, EV_RED_SUM, EV_NCCL_K_COLL | EV_NCCL_K_ALGO | EV_NCCL_K_DTYPE },
		{ "void ncclKernel_Broadcast_RING_LL_Sum_uint8_t(ncclWorkElem)", EV_NCCL_LEGACY, EV_OP_BROADCAST,
		  EV_ALGO_RING, EV_PROTO_LL, EV_DT_UINT8, EV_RED_SUM, EV_NCCL_K_COLL | EV_NCCL_K_ALGO | EV_NCCL_K_DTYPE },
		{ "ncclKernel_AllReduce_COLLNET_LL_Sum_float(ncclWorkElem)", EV_NCCL_LEGACY, EV_OP_ALLREDUCE,
		  EV_ALGO_COLLNET_DIRECT, EV_PROTO_LL, EV_DT_FLOAT32, EV_RED_SUM, EV_NCCL_K_COLL | EV_NCCL_K_ALGO | EV_NCCL_K_DTYPE },
		{ "ncclKernel_AllReduce_RING_LL_Sum_rccl_bfloat16(ncclDevComm*, unsigned long, ncclWork*)",
		  EV_NCCL_LEGACY, EV_OP_ALLREDUCE, EV_ALGO_RING, EV_PROTO_LL, EV_DT_BFLOAT16, EV_RED_SUM, EV_NCCL_K_COLL | EV_NCCL_K_ALGO | EV_NCCL_K_DTYPE },
		/* NCCL <= 2.7 */
		{ "ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs)", EV_NCCL_CAMEL, EV_OP_ALLREDUCE, EV_ALGO_RING,
		  EV_PROTO_LL, EV_DT_FLOAT32, EV_RED_SUM, EV_NCCL_K_COLL | EV_NCCL_K_ALGO | EV_NCCL_K_PROTO | EV_NCCL_K_DTYPE | EV_NCCL_K_REDOP },
		{ "ncclBroadcastRingLL128Kernel_copy_i8", EV_NCCL_CAMEL, EV_OP_BROADCAST, EV_ALGO_RING, EV_PROTO_LL128,
		  EV_DT_INT8, EV_RED_NONE, EV_NCCL_K_COLL | EV_NCCL_K_ALGO | EV_NCCL_K_PROTO | EV_NCCL_K_DTYPE | EV_NCCL_K_REDOP },
		{ "ncclAllReduceCollNetLL128Kernel_sum_f32", EV_NCCL_CAMEL, EV_OP_ALLREDUCE, EV_ALGO_COLLNET_DIRECT,
		  EV_PROTO_LL128, EV_DT_FLOAT32, EV_RED_SUM, EV_NCCL_K_COLL | EV_NCCL_K_ALGO | EV_NCCL_K_PROTO | EV_NCCL_K_DTYPE | EV_NCCL_K_REDOP },
		{ "ncclReduceScatterTreeSimpleKernel_max_f16", EV_NCCL_CAMEL, EV_OP_REDUCESCATTER, EV_ALGO_TREE,
		  EV_PROTO_SIMPLE, EV_DT_FLOAT16, EV_RED_MAX, EV_NCCL_K_COLL | EV_NCCL_K_ALGO | EV_NCCL_K_PROTO | EV_NCCL_K_DTYPE | EV_NCCL_K_REDOP },
		/* NCCL-looking names without a decodable body */
		{ "ncclSomethingNew", EV_NCCL_OTHER, 0, 0, 0, 0, 0, 0 },
		{ "rccl_custom_kernel", EV_NCCL_OTHER, 0, 0, 0, 0, 0, 0 },
		{ "ncclSymkDevKernel_AllReduce_AGxLL_R_sum_bf16", EV_NCCL_SYMMETRIC, EV_OP_ALLREDUCE, 0, 0, 0, 0, EV_NCCL_K_COLL },
		/* not NCCL */
		{ "volta_sgemm_128x32_nt", EV_NCCL_NOT, 0, 0, 0, 0, 0, 0 },
		{ "cross_device_reduce_1stage<__nv_bfloat16, 8>", EV_NCCL_NOT, 0, 0, 0, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct kcase *c = &cases[i];
		struct ev_nccl_kname k;
		int r = ev_nccl_kernel_decode(c->name, &k);
		CHECK(r == (c->era != EV_NCCL_NOT));
		CHECK(k.era == c->era);
		CHECK(k.coll == c->coll);
		CHECK(k.algo == c->algo);
		CHECK(k.proto == c->proto);
		CHECK(k.dtype == c->dtype);
		CHECK(k.redop == c->redop);
		CHECK(k.known == c->known);
		if (k.era != c->era || k.coll != c->coll || k.algo != c->algo || k.proto != c->proto ||
		    k.dtype != c->dtype || k.redop != c->redop || k.known != c->known)
			fprintf(stderr, "  decoding %s\n", c->name);
	}
}

static void test_words(void)
{
	CHECK(ev_nccl_api_coll("ncclAllReduce") == EV_OP_ALLREDUCE);
	CHECK(ev_nccl_api_coll("ncclBcast") == EV_OP_BROADCAST);
	CHECK(ev_nccl_api_coll("ncclSend") == EV_OP_SEND);
	CHECK(ev_nccl_api_coll("ncclCommInitRank") == EV_OP_UNKNOWN);
	CHECK(ev_torch_coll("allreduce_coalesced") == EV_OP_ALLREDUCE);
	CHECK(ev_torch_coll("_allgather_base") == EV_OP_ALLGATHER);
	CHECK(ev_torch_coll("_reduce_scatter_base") == EV_OP_REDUCESCATTER);
	CHECK(ev_torch_coll("nccl:all_reduce") == EV_OP_ALLREDUCE);
	CHECK(ev_torch_coll("nccl:all_to_all") == EV_OP_ALLTOALL);
	CHECK(ev_torch_coll("c10d::alltoall_base_") == EV_OP_ALLTOALL);
	CHECK(ev_torch_coll("all_to_allv") == EV_OP_ALLTOALLV);
	CHECK(ev_torch_coll("nccl:send") == EV_OP_SEND);
	CHECK(ev_torch_coll("nccl:recv") == EV_OP_RECV);
	CHECK(ev_torch_coll("reduce") == EV_OP_REDUCE);
	CHECK(ev_torch_coll("profiler") == EV_OP_UNKNOWN);
	CHECK(ev_torch_dtype("Float") == EV_DT_FLOAT32);
	CHECK(ev_torch_dtype("c10::BFloat16") == EV_DT_BFLOAT16);
	CHECK(ev_torch_dtype("torch.float16") == EV_DT_FLOAT16);
	CHECK(ev_torch_dtype("Float8_e4m3fnuz") == EV_DT_FP8E4M3);
	CHECK(ev_torch_dtype("Int3") == EV_DT_UNKNOWN);
	CHECK(ev_nccl_func_code(4) == EV_OP_ALLREDUCE && ev_nccl_func_code(8) == EV_OP_UNKNOWN);
	CHECK(ev_nccl_algo_code(1) == EV_ALGO_RING && ev_nccl_algo_code(-1) == EV_ALGO_UNKNOWN);
	CHECK(ev_nccl_proto_code(1) == EV_PROTO_LL128 && ev_nccl_proto_code(3) == EV_PROTO_UNKNOWN);
	CHECK(ev_nccl_redop_code(0) == EV_RED_SUM && ev_nccl_redop_code(5) == EV_RED_UNKNOWN);
	CHECK(ev_nccl_dtype_code(9) == EV_DT_BFLOAT16 && ev_nccl_dtype_code(12) == EV_DT_UNKNOWN);
	CHECK(ev_nccl_algo_word("Ring", 4) == EV_ALGO_RING && ev_nccl_algo_word("CollNetChain", 12) == EV_ALGO_COLLNET_CHAIN);
	CHECK(ev_nccl_proto_from_threads(EV_ALGO_RING, 544) == EV_PROTO_SIMPLE);
	CHECK(ev_nccl_proto_from_threads(EV_ALGO_RING, 256) == EV_PROTO_LL);
	CHECK(ev_nccl_proto_from_threads(EV_ALGO_RING, 640) == EV_PROTO_LL128);
	CHECK(ev_nccl_proto_from_threads(EV_ALGO_TREE, 640) == EV_PROTO_UNKNOWN);
	CHECK(ev_nccl_proto_from_threads(EV_ALGO_RING, 0) == EV_PROTO_UNKNOWN);
	CHECK(ev_nccl_proto_word("ll128", 5) == EV_PROTO_LL128 && ev_nccl_proto_word("LL1", 3) == 0);
	CHECK(ev_nccl_algo_word("COLLNET", 7) == EV_ALGO_COLLNET_DIRECT && ev_nccl_algo_setting("collnet") == 0);
	CHECK(ev_nccl_algo_setting("nvlstree") == EV_ALGO_NVLS_TREE && ev_nccl_algo_setting("NVLS_TREE") == EV_ALGO_NVLS_TREE);
	CHECK(ev_nccl_algo_setting("") == 0 && ev_nccl_algo_setting("unknown") == 0);
}

/* The words of the flow extractor's files: patterns by name or number,
 * protocols by name or number, stages. */
static void test_flow_words(void)
{
	struct ev_rec r = { 0 };
	ev_nccl_pattern_word("ncclPatternRingTwice", &r);
	CHECK(r.op == EV_OP_ALLREDUCE && r.algo == EV_ALGO_RING);
	ev_nccl_pattern_word("TREE_UP", &r);
	CHECK(r.op == EV_OP_REDUCE && r.algo == EV_ALGO_TREE);
	ev_nccl_pattern_word("12", &r); /* Recv in 2.18's enum */
	CHECK(r.op == EV_OP_RECV && r.algo == EV_ALGO_UNKNOWN);
	ev_nccl_pattern_word("RingThrice", &r); /* unknown: left as it was */
	CHECK(r.op == EV_OP_RECV);
	CHECK(ev_nccl_proto_setting("simple") == EV_PROTO_SIMPLE && ev_nccl_proto_setting("1") == EV_PROTO_LL128);
	CHECK(ev_nccl_proto_setting("LL64") == 0 && ev_nccl_proto_setting("7") == EV_PROTO_UNKNOWN);
	CHECK(!strcmp(ev_nccl_proto_text(EV_PROTO_SIMPLE), "SIMPLE") && ev_nccl_proto_text(EV_PROTO_UNKNOWN) == NULL);
	CHECK(ev_nccl_stage_word("ReduceScatter") == EV_F_PHASE_RS && ev_nccl_stage_word("ag") == EV_F_PHASE_AG);
	CHECK(ev_nccl_stage_word("tree-down") == EV_F_TREE_DOWN && ev_nccl_stage_word("send") == 0);
}

struct dcase { const char *spelling; unsigned dt, size; };

/* Every spelling of an element type PyTorch has written into a trace:
 * ScalarType names (record_param_comms' "dtype"), torch.* names, and the
 * C++ type names of "Input type" (GCC's "long int", Clang's "long",
 * c10:: types).  Each gives its ev dtype and its size in bytes, so that a
 * collective's bytes are elements times the right size. */
static void test_torch_dtypes(void)
{
	static const struct dcase cases[] = {
		{ "long int", EV_DT_INT64, 8 }, { "long", EV_DT_INT64, 8 }, { "long long", EV_DT_INT64, 8 },
		{ "long long int", EV_DT_INT64, 8 }, { "int64_t", EV_DT_INT64, 8 }, { "Long", EV_DT_INT64, 8 },
		{ "torch.int64", EV_DT_INT64, 8 }, { "torch.long", EV_DT_INT64, 8 },
		{ "int", EV_DT_INT32, 4 }, { "int32_t", EV_DT_INT32, 4 }, { "Int", EV_DT_INT32, 4 },
		{ "short", EV_DT_INT16, 2 }, { "short int", EV_DT_INT16, 2 }, { "int16_t", EV_DT_INT16, 2 },
		{ "Short", EV_DT_INT16, 2 }, { "torch.int16", EV_DT_INT16, 2 },
		{ "signed char", EV_DT_INT8, 1 }, { "int8_t", EV_DT_INT8, 1 }, { "Char", EV_DT_INT8, 1 },
		{ "unsigned char", EV_DT_UINT8, 1 }, { "uint8_t", EV_DT_UINT8, 1 }, { "Byte", EV_DT_UINT8, 1 },
		{ "bool", EV_DT_UINT8, 1 }, { "Bool", EV_DT_UINT8, 1 }, { "torch.bool", EV_DT_UINT8, 1 },
		{ "unsigned short", EV_DT_UINT16, 2 }, { "short unsigned int", EV_DT_UINT16, 2 },
		{ "UInt16", EV_DT_UINT16, 2 }, { "unsigned int", EV_DT_UINT32, 4 }, { "UInt32", EV_DT_UINT32, 4 },
		{ "unsigned long", EV_DT_UINT64, 8 }, { "long unsigned int", EV_DT_UINT64, 8 },
		{ "uint64_t", EV_DT_UINT64, 8 }, { "UInt64", EV_DT_UINT64, 8 },
		{ "c10::Half", EV_DT_FLOAT16, 2 }, { "Half", EV_DT_FLOAT16, 2 }, { "torch.float16", EV_DT_FLOAT16, 2 },
		{ "c10::BFloat16", EV_DT_BFLOAT16, 2 }, { "BFloat16", EV_DT_BFLOAT16, 2 },
		{ "float", EV_DT_FLOAT32, 4 }, { "Float", EV_DT_FLOAT32, 4 }, { "torch.float32", EV_DT_FLOAT32, 4 },
		{ "double", EV_DT_FLOAT64, 8 }, { "Double", EV_DT_FLOAT64, 8 }, { "torch.float64", EV_DT_FLOAT64, 8 },
		{ "c10::complex<c10::Half>", EV_DT_COMPLEX32, 4 }, { "ComplexHalf", EV_DT_COMPLEX32, 4 },
		{ "c10::complex<float>", EV_DT_COMPLEX64, 8 }, { "ComplexFloat", EV_DT_COMPLEX64, 8 },
		{ "std::complex<float>", EV_DT_COMPLEX64, 8 }, { "torch.complex64", EV_DT_COMPLEX64, 8 },
		{ "c10::complex<double>", EV_DT_COMPLEX128, 16 }, { "ComplexDouble", EV_DT_COMPLEX128, 16 },
		{ "torch.cdouble", EV_DT_COMPLEX128, 16 },
		{ "c10::Float8_e4m3fn", EV_DT_FP8E4M3, 1 }, { "c10::Float8_e4m3fnuz", EV_DT_FP8E4M3, 1 },
		{ "c10::Float8_e5m2", EV_DT_FP8E5M2, 1 }, { "c10::Float8_e5m2fnuz", EV_DT_FP8E5M2, 1 },
		{ "Float8_e5m2fnuz", EV_DT_FP8E5M2, 1 }, { "torch.float8_e4m3fn", EV_DT_FP8E4M3, 1 },
		{ "c10::Float8_e8m0fnu", EV_DT_FP8E8M0, 1 }, { "Float8_e8m0fnu", EV_DT_FP8E8M0, 1 },
		{ "c10::Float4_e2m1fn_x2", EV_DT_FP4E2M1X2, 1 }, { "Float4_e2m1fn_x2", EV_DT_FP4E2M1X2, 1 },
		{ "c10::qint8", EV_DT_INT8, 1 }, { "QUInt8", EV_DT_UINT8, 1 }, { "c10::qint32", EV_DT_INT32, 4 },
		{ "c10::quint4x2", EV_DT_UINT8, 1 }, { "c10::bits16", EV_DT_UINT16, 2 }, { "Bits8", EV_DT_UINT8, 1 },
		/* ev's own names read back */
		{ "int16", EV_DT_INT16, 2 }, { "complex64", EV_DT_COMPLEX64, 8 }, { "fp8e8m0", EV_DT_FP8E8M0, 1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned dt = ev_torch_dtype(cases[i].spelling);
		CHECK(dt == cases[i].dt && ev_dtype_size(dt) == cases[i].size);
		if (dt != cases[i].dt || ev_dtype_size(dt) != cases[i].size)
			fprintf(stderr, "  '%s': dtype %u size %u, expected %u size %u\n", cases[i].spelling, dt,
			        ev_dtype_size(dt), cases[i].dt, cases[i].size);
	}
	/* Not element types: left unknown rather than guessed. */
	CHECK(ev_torch_dtype("Scalar") == EV_DT_UNKNOWN && ev_torch_dtype("TensorList") == EV_DT_UNKNOWN);
	CHECK(ev_torch_dtype("") == EV_DT_UNKNOWN && ev_torch_dtype("long intx") == EV_DT_UNKNOWN);
	/* Every ev dtype has a name that reads back to it. */
	for (unsigned v = 1; ev_dtype_name(v); v++)
		CHECK(ev_torch_dtype(ev_dtype_name(v)) == v && ev_dtype_size(v) > 0);
}

/* Every algorithm and protocol has its ev name, NCCL's spellings and
 * NCCL's code: the tables end where the enums' counts say. */
static void test_tables_complete(void)
{
	unsigned seen = 0;
	for (int64_t code = 0; code < EV_ALGO_COUNT - 1; code++)
		seen |= 1u << ev_nccl_algo_code(code);
	CHECK(seen == ((1u << EV_ALGO_COUNT) - 2) && ev_nccl_algo_code(EV_ALGO_COUNT - 1) == EV_ALGO_UNKNOWN);
	for (unsigned v = 1; v < EV_ALGO_COUNT; v++) {
		const char *name = ev_algo_name(v);
		CHECK(name && ev_nccl_algo_setting(name) == v && ev_nccl_algo_word(name, strlen(name)) == v);
	}
	CHECK(ev_algo_name(EV_ALGO_COUNT) == NULL);
	seen = 0;
	for (int64_t code = 0; code < EV_PROTO_COUNT - 1; code++)
		seen |= 1u << ev_nccl_proto_code(code);
	CHECK(seen == ((1u << EV_PROTO_COUNT) - 2) && ev_nccl_proto_code(EV_PROTO_COUNT - 1) == EV_PROTO_UNKNOWN);
	for (unsigned v = 1; v < EV_PROTO_COUNT; v++) {
		const char *name = ev_proto_name(v);
		CHECK(name && ev_nccl_proto_word(name, strlen(name)) == v);
	}
	CHECK(ev_proto_name(EV_PROTO_COUNT) == NULL);
}

struct ccase { const char *name; unsigned kc; };

/* Real names from NVIDIA (cuBLAS, cuDNN, CUTLASS, flash-attention), AMD
 * (Tensile, hipBLASLt, CK, MIOpen), Triton and PyTorch's own kernels. */
static void test_classifier(void)
{
	static const struct ccase cases[] = {
		{ "volta_sgemm_128x32_nt", EV_KC_GEMM },
		{ "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", EV_KC_GEMM },
		{ "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTT", EV_KC_GEMM },
		{ "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8>(Params)", EV_KC_GEMM },
		{ "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0", EV_KC_GEMM },
		{ "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64", EV_KC_GEMM },
		{ "void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<...> >(...)", EV_KC_GEMM },
		{ "void splitKreduce_kernel<float, float, float, float, true, false, false>(cublasSplitKParams<float>)", EV_KC_GEMM },
		{ "triton_tem_fused_addmm_0", EV_KC_GEMM },
		{ "fused_moe_kernel", EV_KC_GEMM },
		{ "void wvSplitK_hf_sml_<__hip_bfloat16, 64, 2, 16, 8, 2, 1>(...)", EV_KC_GEMM },
		{ "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 32, 4, false, false, cutlass::half_t> >(Flash_fwd_params)", EV_KC_ATTENTION },
		{ "void fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::half_t>::Params)", EV_KC_ATTENTION },
		{ "sdpa_forward_kernel", EV_KC_ATTENTION },
		{ "fused_attn_fwd", EV_KC_ATTENTION },
		{ "void ck_tile::kentry<ck_tile::FmhaFwdKernel<...> >(...)", EV_KC_ATTENTION },
		{ "_fwd_kernel_splitK (paged_attention_v2)", EV_KC_ATTENTION },
		{ "void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(...)", EV_KC_CONV },
		{ "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw", EV_KC_CONV },
		{ "sm86_xmma_dgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc", EV_KC_CONV },
		{ "void cudnn::cnn::reduce_wgrad_nchw_helper<float, float>(void*, void const*, float, int, int)", EV_KC_CONV },
		{ "igemm_fwd_gtcx_nhwc_fp16_bx0_ex1_bt128x128x32", EV_KC_CONV },
		{ "naive_conv_fwd_nchw_float_double_float", EV_KC_CONV },
		/* cuDNN's implicit-GEMM convolutions: scudnn/h884cudnn engines,
		 * implicit_convolve_sgemm, and cudnn names with a conv word. */
		{ "volta_scudnn_128x64_relu_interior_nn_v1", EV_KC_CONV },
		{ "maxwell_scudnn_winograd_128x128_ldg1_ldg4_tile148n_nt", EV_KC_CONV },
		{ "cudnn_infer_ampere_scudnn_128x32_relu_small_nn_v1", EV_KC_CONV },
		{ "volta_h884cudnn_256x64_ldg8_relu_exp_interior_nhwc_tn_v1", EV_KC_CONV },
		{ "turing_h1688cudnn_128x128_ldg8_relu_exp_small_nhwc_tn_v1", EV_KC_CONV },
		{ "void cudnn::detail::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)", EV_KC_CONV },
		{ "xmma_cudnn_infer::conv::kernel<...>", EV_KC_CONV },
		/* cuDNN's other kernels are not convolutions ("convert" is no conv). */
		{ "void cudnn::ops::convertTensor_kernel<float, float, float, (cudnnKernelDataType_t)2>(...)", EV_KC_OTHER },
		{ "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(...)", EV_KC_OTHER },
		/* "convert" is not a convolution */
		{ "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_convert_element_type_0", EV_KC_REDUCE },
		{ "void vllm::rms_norm_kernel<c10::BFloat16>(...)", EV_KC_REDUCE },
		{ "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(...)", EV_KC_REDUCE },
		{ "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_args<float>)", EV_KC_REDUCE },
		{ "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, ...> >(...)", EV_KC_REDUCE },
		{ "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(...)", EV_KC_REDUCE },
		{ "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int)", EV_KC_ELEMENTWISE },
		{ "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float> >(...)", EV_KC_ELEMENTWISE },
		{ "triton_poi_fused_add_mul_0", EV_KC_ELEMENTWISE },
		{ "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", EV_KC_COMM },
		{ "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", EV_KC_COMM },
		{ "cross_device_reduce_1stage<__nv_bfloat16, 8>", EV_KC_COMM },
		{ "__amd_rocclr_fillBufferAligned.kd", EV_KC_MEMSET },
		{ "void at::native::vectorized_elementwise_kernel<4, at::native::fill_kernel_cuda(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda()#1}, std::array<char*, 1ul> >(...)", EV_KC_MEMSET },
		/* masked_fill reads a mask and its input: compute, not a memset. */
		{ "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#11}::operator()() const::{lambda(float, bool)#1}, std::array<char*, 3ul> >(...)", EV_KC_ELEMENTWISE },
		{ "void at::native::unrolled_elementwise_kernel<at::native::masked_fill_kernel>(...)", EV_KC_ELEMENTWISE },
		{ "masked_fill_kernel", EV_KC_OTHER },
		{ "__amd_rocclr_copyBuffer.kd", EV_KC_MEMCPY },
		{ "void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int> >(...)", EV_KC_OTHER },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned kc = ev_kernel_class(EV_RULES_TRACELENS, cases[i].name);
		CHECK(kc == cases[i].kc);
		if (kc != cases[i].kc)
			fprintf(stderr, "  %s: %s, expected %s\n", cases[i].name, ev_kclass_name(kc),
			        ev_kclass_name(cases[i].kc));
	}
	/* A name longer than the classifier's buffer is classified on its start. */
	char longname[4096];
	memset(longname, 'x', sizeof longname - 1);
	memcpy(longname, "Cijk_Ailk_Bljk_HHS_BH_", 22);
	longname[sizeof longname - 1] = '\0';
	CHECK(ev_kernel_class(EV_RULES_TRACELENS, longname) == EV_KC_GEMM);
}

int main(void)
{
	RUN(test_kernel_decode);
	RUN(test_words);
	RUN(test_flow_words);
	RUN(test_tables_complete);
	RUN(test_classifier);
	RUN(test_torch_dtypes);
	return unit_report("test_nccl_names");
}
