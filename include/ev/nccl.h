/* SPDX-License-Identifier: MIT */
/*
 * ev/nccl.h - the NCCL/RCCL vocabulary: what kernel names, API names,
 * PyTorch collective names and NCCL's own enum codes say about an
 * operation.  Every converter and pipeline decodes names through these
 * functions so that one kernel name means one thing everywhere.
 * docs/nccl-names.md lists the name generations and what each gives.
 */
#ifndef EV_NCCL_H
#define EV_NCCL_H

#include "ev/stream.h"

/* Naming generation of an NCCL/RCCL kernel. */
enum ev_nccl_era {
	EV_NCCL_NOT = 0,     /* not an NCCL/RCCL kernel */
	EV_NCCL_CAMEL = 1,   /* NCCL <= 2.7: ncclAllReduceRingLLKernel_sum_f32 */
	EV_NCCL_LEGACY = 2,  /* NCCL 2.8-2.18, RCCL: ncclKernel_AllReduce_RING_LL_Sum_float */
	EV_NCCL_DEV = 3,     /* NCCL >= 2.19: ncclDevKernel_AllReduce_Sum_f32_RING_LL */
	EV_NCCL_GENERIC = 4, /* ncclDevKernel_Generic[_N], RCCL's generic kernels: no collective in the name */
	EV_NCCL_OTHER = 5,   /* starts like an NCCL kernel but the rest is not understood */
	EV_NCCL_SYMMETRIC = 6, /* NCCL >= 2.27 symmetric-memory kernels: ncclSymkDevKernel_AllReduce_AGxLL_R_sum_bf16 */
};

/* Which fields of struct ev_nccl_kname the name states reliably. */
enum ev_nccl_known {
	EV_NCCL_K_COLL = 1u << 0,
	EV_NCCL_K_ALGO = 1u << 1,
	EV_NCCL_K_PROTO = 1u << 2,
	EV_NCCL_K_DTYPE = 1u << 3,
	EV_NCCL_K_REDOP = 1u << 4,
};

/* What a kernel name says, and how far to trust it.  From NCCL 2.8 only
 * LL kernels are specialised: "_LL" and "_Sum" are in every name whatever
 * protocol and reduction ran (other combinations run through a function
 * table inside the same kernel), and from 2.19 the algorithm part is only
 * TREE or RING (NVLS, CollNet and PAT kernels are named RING).  So the
 * fields hold what the name spells (0 where it spells nothing) and
 * `known` says which of them are facts; the others are hints that a
 * converter may use only with a warning.  docs/nccl-names.md has the
 * table by NCCL version. */
struct ev_nccl_kname {
	unsigned era;   /* enum ev_nccl_era */
	unsigned coll;  /* enum ev_coll; EV_OP_SENDRECV for SendRecv kernels */
	unsigned algo;  /* enum ev_algo */
	unsigned proto; /* enum ev_proto */
	unsigned dtype; /* enum ev_dtype */
	unsigned redop; /* enum ev_redop; EV_RED_NONE for copy kernels */
	unsigned known; /* enum ev_nccl_known bits */
};

/* Decode an NCCL/RCCL kernel name (demangled or not, with or without an
 * argument list).  Returns 1 and fills *k for an NCCL/RCCL kernel, 0 (and
 * k->era = EV_NCCL_NOT) otherwise. */
int ev_nccl_kernel_decode(const char *name, struct ev_nccl_kname *k);

/* Fill a coll/p2p record's algo, proto, dtype and redop from a decoded
 * kernel name where the record has none: facts always, and the algorithm
 * as spelled even when it is only a hint (2.19+ "RING" = not TREE), which
 * is what every converter has done; the protocol from the record's
 * nthreads when the name does not state it (ev_nccl_proto_from_threads).
 * Returns the EV_NCCL_K_* bits of the
 * hints it used, so the caller can count and report them. */
unsigned ev_nccl_kname_apply(const struct ev_nccl_kname *k, struct ev_rec *r);

/* Protocol that a ring collective's threads per block reveal (NCCL adds a
 * warp to SIMPLE: 544/288/160; LL uses 512/256/128; LL128 640/320), or 0
 * when the count says nothing (tree, NVLS, CollNet and PAT use 640 for
 * every protocol). */
unsigned ev_nccl_proto_from_threads(unsigned algo, unsigned nthreads);

/* Collective of an NCCL API name ("ncclAllReduce", "ncclBcast",
 * "ncclSend"...), EV_OP_UNKNOWN when it is not one. */
unsigned ev_nccl_api_coll(const char *name);

/* Collective of a PyTorch / c10d name, case and underscores ignored:
 * "allreduce_coalesced", "_allgather_base", "all_to_all", "nccl:all_reduce"
 * (the "nccl:", "c10d::", "gloo:" prefixes and a trailing "_" are
 * skipped).  EV_OP_UNKNOWN when none matches. */
unsigned ev_torch_coll(const char *name);

/* Element type of a PyTorch dtype name in any spelling PyTorch has
 * written: ScalarType ("Float", "Long", "ComplexFloat"), torch.* ("torch.
 * float32", "torch.cdouble") and C++ type names of an op's "Input type"
 * ("long int", "unsigned char", "c10::Half", "c10::complex<float>",
 * "c10::Float8_e4m3fnuz"), or an ev dtype name; ev_dtype_size gives its
 * bytes.  EV_DT_UNKNOWN when not an element type ("Scalar", ""). */
unsigned ev_torch_dtype(const char *name);

/* NCCL's own enum codes (ncclFunc_t, NCCL_ALGO_*, NCCL_PROTO_*, ncclRedOp_t,
 * ncclDataType_t) as found in NCCL's NVTX payloads and debug logs, mapped
 * to ev's enums; 0 (unknown) for codes out of range. */
unsigned ev_nccl_func_code(int64_t code);  /* ncclFunc_t of NCCL 2.20 */
unsigned ev_nccl_algo_code(int64_t code);  /* 0 tree, 1 ring, 2 collnet direct, ... */
unsigned ev_nccl_proto_code(int64_t code); /* 0 LL, 1 LL128, 2 SIMPLE */
unsigned ev_nccl_redop_code(int64_t code); /* 0 sum .. 4 avg */
unsigned ev_nccl_dtype_code(int64_t code); /* ncclInt8 = 0 .. ncclBfloat16 = 9, fp8 10, 11 */

/* Names as NCCL's debug log and tuner print them ("RING", "LL128",
 * "Sum", "AllReduce"), parsed case-insensitively.  0 when unknown. */
unsigned ev_nccl_algo_word(const char *s, size_t len);
unsigned ev_nccl_proto_word(const char *s, size_t len);
/* A protocol as NCCL_PROTO or a flow file gives it: its name in any case,
 * or NCCL's number (0 LL, 1 LL128, 2 SIMPLE).  0 when unknown. */
unsigned ev_nccl_proto_setting(const char *s);
/* NCCL's ncclPattern_t by name ("ncclPatternRingTwice", "RING_TWICE",
 * "RingTwice") or by its number in 2.18's enum: the collective and the
 * algorithm it implies, into r's op and algo (left as they are when the
 * pattern is unknown; op unknown for Ring, which any ring collective uses). */
void ev_nccl_pattern_word(const char *s, struct ev_rec *r);
/* A step's stage as the flow extractor writes it ("ReduceScatter",
 * "AllGather", "rs", "ag", "up", "down", ...): its EV_F_* flag, 0 when
 * none. */
unsigned ev_nccl_stage_word(const char *s);
/* A protocol's name as NCCL prints it ("LL", "LL128", "SIMPLE"); NULL when
 * unknown. */
const char *ev_nccl_proto_text(unsigned proto);
/* An algorithm as NCCL_ALGO lists it: NCCL's name or its kernel-name word
 * in any case ("Ring", "nvlstree", "collnet_direct"), not the "CollNet"
 * of versions before it was split.  0 when unknown. */
unsigned ev_nccl_algo_setting(const char *s);

#endif /* EV_NCCL_H */
