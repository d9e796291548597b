/* SPDX-License-Identifier: MIT */
/*
 * names.c - the NCCL/RCCL vocabulary (ev/nccl.h).  Kernel names are read
 * part by part ('_'-separated words up to the argument list), each part
 * looked up in small word tables; the camel-case names of NCCL <= 2.7 are
 * read word by word instead.  Algorithms and protocols have one table each,
 * with every spelling NCCL has for them.  Nothing here allocates.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "ev/nccl.h"
#include "ev/stream.h"

struct word { const char *w; unsigned v; };
#define NWORDS(a) (sizeof(a) / sizeof(a)[0])

/* Longer words first where one is a prefix of another part sequence. */
static const struct word coll_words[] = {
	{ "AllReduce", EV_OP_ALLREDUCE }, { "AllGather", EV_OP_ALLGATHER },
	{ "ReduceScatter", EV_OP_REDUCESCATTER }, { "Broadcast", EV_OP_BROADCAST },
	{ "SendRecv", EV_OP_SENDRECV }, { "AllToAllPivot", EV_OP_ALLTOALL }, { "AllToAll", EV_OP_ALLTOALL },
	{ "AlltoAll", EV_OP_ALLTOALL }, { "Reduce", EV_OP_REDUCE }, { "Gather", EV_OP_GATHER },
	{ "Scatter", EV_OP_SCATTER }, { "Send", EV_OP_SEND }, { "Recv", EV_OP_RECV },
};

/* NCCL's algorithms, in NCCL's order: a row's index is its NCCL_ALGO_*
 * code.  part: the word of a kernel name (NCCL >= 2.8); name: NCCL's own
 * name (debug log, tuner, NCCL_ALGO); camel: the word of a camel-case
 * kernel name (NCCL <= 2.7), NULL where that era had none; old: the
 * kernel-name word of the one CollNet algorithm NCCL later split in two. */
static const struct nccl_algo {
	unsigned v; /* enum ev_algo */
	const char *part, *name, *camel, *old;
} algos[] = {
	{ EV_ALGO_TREE, "TREE", "Tree", "Tree", NULL },
	{ EV_ALGO_RING, "RING", "Ring", "Ring", NULL },
	{ EV_ALGO_COLLNET_DIRECT, "COLLNET_DIRECT", "CollNetDirect", "CollNet", "COLLNET" },
	{ EV_ALGO_COLLNET_CHAIN, "COLLNET_CHAIN", "CollNetChain", NULL, NULL },
	{ EV_ALGO_NVLS, "NVLS", "NVLS", NULL, NULL },
	{ EV_ALGO_NVLS_TREE, "NVLS_TREE", "NVLSTree", NULL, NULL },
	{ EV_ALGO_PAT, "PAT", "PAT", NULL, NULL },
};
_Static_assert(NWORDS(algos) == EV_ALGO_COUNT - 1, "a row for every enum ev_algo value but unknown");

/* NCCL's protocols, in NCCL's order (the index is the NCCL_PROTO_* code):
 * the word of a kernel name, which is also NCCL's name, and the word of a
 * camel-case kernel name. */
static const struct nccl_proto {
	unsigned v; /* enum ev_proto */
	const char *part, *camel;
} protos[] = {
	{ EV_PROTO_LL, "LL", "LL" },
	{ EV_PROTO_LL128, "LL128", "LL128" },
	{ EV_PROTO_SIMPLE, "SIMPLE", "Simple" },
};
_Static_assert(NWORDS(protos) == EV_PROTO_COUNT - 1, "a row for every enum ev_proto value but unknown");

static const struct word redop_words[] = {
	{ "Sum", EV_RED_SUM }, { "Prod", EV_RED_PROD }, { "Max", EV_RED_MAX }, { "Min", EV_RED_MIN },
	{ "Avg", EV_RED_AVG }, { "PreMulSum", EV_RED_PREMULSUM }, { "SumPostDiv", EV_RED_SUM },
	{ "Copy", EV_RED_NONE },
};
/* Type parts: NCCL >= 2.19 abbreviations, the C type names of earlier
 * kernels (int8_t spans two parts), and RCCL's. */
static const struct word dtype_words[] = {
	{ "i8", EV_DT_INT8 }, { "u8", EV_DT_UINT8 }, { "i32", EV_DT_INT32 }, { "u32", EV_DT_UINT32 },
	{ "i64", EV_DT_INT64 }, { "u64", EV_DT_UINT64 }, { "f16", EV_DT_FLOAT16 }, { "f32", EV_DT_FLOAT32 },
	{ "f64", EV_DT_FLOAT64 }, { "bf16", EV_DT_BFLOAT16 }, { "f8e4m3", EV_DT_FP8E4M3 },
	{ "f8e5m2", EV_DT_FP8E5M2 }, { "int8_t", EV_DT_INT8 }, { "uint8_t", EV_DT_UINT8 },
	{ "int32_t", EV_DT_INT32 }, { "uint32_t", EV_DT_UINT32 }, { "int64_t", EV_DT_INT64 },
	{ "uint64_t", EV_DT_UINT64 }, { "int8", EV_DT_INT8 }, { "uint8", EV_DT_UINT8 },
	{ "int32", EV_DT_INT32 }, { "uint32", EV_DT_UINT32 }, { "int64", EV_DT_INT64 },
	{ "uint64", EV_DT_UINT64 }, { "half", EV_DT_FLOAT16 }, { "float", EV_DT_FLOAT32 },
	{ "double", EV_DT_FLOAT64 }, { "__nv_bfloat16", EV_DT_BFLOAT16 }, { "rccl_bfloat16", EV_DT_BFLOAT16 },
	{ "hip_bfloat16", EV_DT_BFLOAT16 }, { "bfloat16", EV_DT_BFLOAT16 },
	{ "__nv_fp8_e4m3", EV_DT_FP8E4M3 }, { "__nv_fp8_e5m2", EV_DT_FP8E5M2 },
	{ "rccl_float8", EV_DT_FP8E4M3 }, { "rccl_bfloat8", EV_DT_FP8E5M2 },
};

/* Does the word w stand at p as whole parts: followed by '_' or the end
 * of the name (at end)? */
static int part_is(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(end - p) >= n && memcmp(p, w, n) == 0 && (p + n == end || p[n] == '_');
}

static unsigned lookup_part(const char *p, const char *end, const struct word *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (part_is(p, end, t[i].w))
			return t[i].v;
	return 0;
}

/* Word w at p as a camel-case prefix; returns its length or 0. */
static size_t camel(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(end - p) >= n && memcmp(p, w, n) == 0 ? n : 0;
}

/* Does w stand at p, longer than the longest word found so far (*len):
 * as whole parts, or (in_camel) as the prefix of a camel-case name?  Then
 * *len becomes its length. */
static int longer_at(const char *p, const char *end, const char *w, int in_camel, size_t *len)
{
	size_t n = w ? strlen(w) : 0;
	if (n <= *len || !(in_camel ? camel(p, end, w) != 0 : part_is(p, end, w)))
		return 0;
	*len = n;
	return 1;
}

/* The algorithm or protocol whose word stands at p, the longest that does
 * ("NVLS_TREE_LL" is NVLS_TREE, not NVLS; "LL128Kernel" LL128, not LL):
 * its value, and the word's length in *len; 0 when none does. */
static unsigned algo_at(const char *p, const char *end, int in_camel, size_t *len)
{
	unsigned v = 0;
	*len = 0;
	for (size_t i = 0; i < NWORDS(algos); i++) {
		if (longer_at(p, end, in_camel ? algos[i].camel : algos[i].part, in_camel, len))
			v = algos[i].v;
		if (!in_camel && longer_at(p, end, algos[i].old, 0, len))
			v = algos[i].v;
	}
	return v;
}

static unsigned proto_at(const char *p, const char *end, int in_camel, size_t *len)
{
	unsigned v = 0;
	*len = 0;
	for (size_t i = 0; i < NWORDS(protos); i++)
		if (longer_at(p, end, in_camel ? protos[i].camel : protos[i].part, in_camel, len))
			v = protos[i].v;
	return v;
}

/* NCCL <= 2.7: "ncclAllReduceRingLLKernel_sum_f32", "ncclBroadcastRingLL128Kernel_copy_i8". */
static int decode_camel(const char *p, const char *end, struct ev_nccl_kname *k)
{
	static const struct word low_red[] = { { "sum", EV_RED_SUM }, { "prod", EV_RED_PROD },
	                                       { "max", EV_RED_MAX }, { "min", EV_RED_MIN },
	                                       { "avg", EV_RED_AVG }, { "copy", EV_RED_NONE } };
	size_t n;
	for (size_t i = 0; i < NWORDS(coll_words) && !k->coll; i++)
		if ((n = camel(p, end, coll_words[i].w)) != 0)
			k->coll = coll_words[i].v, p += n;
	if (!k->coll)
		return 0;
	k->algo = algo_at(p, end, 1, &n);
	p += n;
	k->proto = proto_at(p, end, 1, &n);
	p += n;
	if (!camel(p, end, "Kernel"))
		return 0;
	p += 6;
	for (const char *q = p; q < end; q++) {
		if (*q != '_')
			continue;
		if (!k->redop)
			k->redop = lookup_part(q + 1, end, low_red, NWORDS(low_red));
		if (!k->dtype)
			k->dtype = lookup_part(q + 1, end, dtype_words, NWORDS(dtype_words));
	}
	return 1;
}

int ev_nccl_kernel_decode(const char *name, struct ev_nccl_kname *k)
{
	memset(k, 0, sizeof *k);
	if (!name)
		return 0;
	/* Demangled names may carry a return type ("void ncclKernel_..."). */
	if (strncmp(name, "void ", 5) == 0)
		name += 5;
	const char *end = name + strcspn(name, "(< ");
	const char *p;
	if (strncmp(name, "ncclDevKernel_", 14) == 0) {
		k->era = EV_NCCL_DEV;
		p = name + 13;
		if (part_is(p + 1, end, "Generic") || strncmp(p + 1, "Generic", 7) == 0) {
			k->era = EV_NCCL_GENERIC;
			return 1;
		}
	} else if (strncmp(name, "ncclSymkDevKernel_", 18) == 0 || strncmp(name, "ncclSymDevKernel_", 17) == 0) {
		/* The parts after the collective are symmetric-memory algorithm
		 * names (AGxLL_R), not NCCL's algorithms and protocols. */
		k->era = EV_NCCL_SYMMETRIC;
		const char *q = strchr(name, '_') + 1;
		k->coll = lookup_part(q, end, coll_words, NWORDS(coll_words));
		k->known = k->coll ? EV_NCCL_K_COLL : 0;
		return 1;
	} else if (strncmp(name, "ncclKernel_", 11) == 0) {
		k->era = EV_NCCL_LEGACY;
		p = name + 10;
	} else if (strncmp(name, "nccl", 4) == 0 && isupper((unsigned char)name[4])) {
		k->era = EV_NCCL_CAMEL;
		if (!decode_camel(name + 4, end, k)) {
			memset(k, 0, sizeof *k);
			k->era = EV_NCCL_OTHER;
			return 1;
		}
		/* Before 2.8 every (algo, proto, op, type) had its own kernel. */
		k->known = EV_NCCL_K_COLL | (k->algo ? EV_NCCL_K_ALGO : 0) | (k->proto ? EV_NCCL_K_PROTO : 0) |
		           (k->dtype ? EV_NCCL_K_DTYPE : 0) | (k->redop ? EV_NCCL_K_REDOP : 0);
		return 1;
	} else if (strncasecmp(name, "nccl", 4) == 0 || strncasecmp(name, "rccl", 4) == 0) {
		k->era = EV_NCCL_OTHER;
		return 1;
	} else {
		return 0;
	}
	/* p points at the '_' before the first part. */
	for (; p && p < end; p = memchr(p + 1, '_', (size_t)(end - p - 1))) {
		const char *q = p + 1;
		if (q >= end)
			break;
		unsigned v;
		size_t n;
		if (!k->coll && (v = lookup_part(q, end, coll_words, NWORDS(coll_words))) != 0)
			k->coll = v;
		else if (!k->algo && (v = algo_at(q, end, 0, &n)) != 0)
			k->algo = v;
		else if (!k->proto && (v = proto_at(q, end, 0, &n)) != 0)
			k->proto = v;
		else if (!k->redop && (v = lookup_part(q, end, redop_words, NWORDS(redop_words))) != 0)
			k->redop = v;
		else if (!k->dtype && (v = lookup_part(q, end, dtype_words, NWORDS(dtype_words))) != 0)
			k->dtype = v;
	}
	if (!k->coll && !k->algo) {
		memset(k, 0, sizeof *k);
		k->era = EV_NCCL_OTHER;
		return 1;
	}
	/* What each generation states reliably (ev/nccl.h). */
	k->known = EV_NCCL_K_COLL;
	if (k->coll == EV_OP_SENDRECV) {
		k->algo = k->proto = k->redop = k->dtype = 0;
		return 1;
	}
	if (k->era == EV_NCCL_LEGACY)
		k->known |= EV_NCCL_K_ALGO;
	else if (k->algo == EV_ALGO_TREE)
		k->known |= EV_NCCL_K_ALGO;
	if (k->dtype && k->redop)
		k->known |= EV_NCCL_K_DTYPE;
	return 1;
}

unsigned ev_nccl_kname_apply(const struct ev_nccl_kname *k, struct ev_rec *r)
{
	unsigned hints = 0;
	if (!r->algo && k->algo) {
		r->algo = (uint8_t)k->algo;
		if (!(k->known & EV_NCCL_K_ALGO))
			hints |= EV_NCCL_K_ALGO;
	}
	if (!r->proto && (k->known & EV_NCCL_K_PROTO))
		r->proto = (uint8_t)k->proto;
	if (!r->proto && r->algo == EV_ALGO_RING) {
		/* The launch geometry tells SIMPLE and LL apart whatever the
		 * algorithm behind a 2.19+ "RING" name; 640/320 threads are LL128
		 * only when the algorithm is known to be the ring. */
		unsigned p = ev_nccl_proto_from_threads(EV_ALGO_RING, r->nthreads);
		if (p == EV_PROTO_SIMPLE || p == EV_PROTO_LL || (k->known & EV_NCCL_K_ALGO))
			r->proto = (uint8_t)p;
	}
	if (!r->dtype && (k->known & EV_NCCL_K_DTYPE))
		r->dtype = (uint8_t)k->dtype;
	if (!r->redop && (k->known & EV_NCCL_K_REDOP))
		r->redop = (uint8_t)k->redop;
	return hints;
}

unsigned ev_nccl_proto_from_threads(unsigned algo, unsigned nthreads)
{
	if (algo != EV_ALGO_RING || nthreads == 0)
		return EV_PROTO_UNKNOWN;
	if (nthreads % 64 == 32 && nthreads >= 96)
		return EV_PROTO_SIMPLE;
	if (nthreads == 512 || nthreads == 256 || nthreads == 128)
		return EV_PROTO_LL;
	if (nthreads == 640 || nthreads == 320)
		return EV_PROTO_LL128;
	return EV_PROTO_UNKNOWN;
}

unsigned ev_nccl_api_coll(const char *name)
{
	static const struct word api[] = {
		{ "ncclAllReduce", EV_OP_ALLREDUCE }, { "ncclAllGather", EV_OP_ALLGATHER },
		{ "ncclReduceScatter", EV_OP_REDUCESCATTER }, { "ncclBroadcast", EV_OP_BROADCAST },
		{ "ncclBcast", EV_OP_BROADCAST }, { "ncclReduce", EV_OP_REDUCE }, { "ncclSend", EV_OP_SEND },
		{ "ncclRecv", EV_OP_RECV }, { "ncclAlltoAll", EV_OP_ALLTOALL }, { "ncclAllToAll", EV_OP_ALLTOALL },
		{ "ncclAllToAllv", EV_OP_ALLTOALLV }, { "ncclGather", EV_OP_GATHER }, { "ncclScatter", EV_OP_SCATTER },
	};
	for (size_t i = 0; i < NWORDS(api); i++)
		if (strcmp(name, api[i].w) == 0)
			return api[i].v;
	return EV_OP_UNKNOWN;
}

unsigned ev_torch_coll(const char *raw)
{
	static const char *const prefixes[] = { "nccl:", "c10d::", "gloo:", "rccl:", "hccl:" };
	for (size_t i = 0; i < NWORDS(prefixes); i++)
		if (strncmp(raw, prefixes[i], strlen(prefixes[i])) == 0) {
			raw += strlen(prefixes[i]);
			break;
		}
	char n[64];
	size_t o = 0;
	for (const char *p = raw; *p && o + 1 < sizeof n; p++)
		if (*p != '_')
			n[o++] = (char)tolower((unsigned char)*p);
	n[o] = '\0';
	/* Prefix order: longer names before the shorter names they start with. */
	static const struct word map[] = {
		{ "allreduce", EV_OP_ALLREDUCE }, { "allgather", EV_OP_ALLGATHER },
		{ "reducescatter", EV_OP_REDUCESCATTER }, { "broadcast", EV_OP_BROADCAST },
		{ "alltoallv", EV_OP_ALLTOALLV }, { "alltoall", EV_OP_ALLTOALL }, { "barrier", EV_OP_BARRIER },
		{ "gather", EV_OP_GATHER }, { "scatter", EV_OP_SCATTER }, { "sendrecv", EV_OP_SENDRECV },
		{ "send", EV_OP_SEND }, { "recv", EV_OP_RECV }, { "reduce", EV_OP_REDUCE },
	};
	for (size_t i = 0; i < NWORDS(map); i++)
		if (strncmp(n, map[i].w, strlen(map[i].w)) == 0)
			return map[i].v;
	return EV_OP_UNKNOWN;
}

/* Element types by every spelling PyTorch writes into a trace, in lower
 * case with namespaces removed (see ev_torch_dtype): ScalarType names
 * (record_param_comms' "dtype": Long, ComplexFloat, QInt8), torch.* names
 * (int64, cfloat), and C++ type names of an op's "Input type", which
 * depend on the compiler that built PyTorch (GCC "long int", "short
 * unsigned int"; Clang "long", "unsigned short"; MSVC "__int64").
 * Quantized, bit and packed sub-byte types are their storage type: an
 * element is one byte of quint4x2 or Float4_e2m1fn_x2, as their shapes
 * count.  ev's own names are read by ev_dtype_parse after the table. */
static const struct word torch_dtypes[] = {
	{ "long", EV_DT_INT64 }, { "long int", EV_DT_INT64 }, { "long long", EV_DT_INT64 },
	{ "long long int", EV_DT_INT64 }, { "int64_t", EV_DT_INT64 }, { "__int64", EV_DT_INT64 },
	{ "int", EV_DT_INT32 }, { "int32_t", EV_DT_INT32 }, { "qint32", EV_DT_INT32 },
	{ "short", EV_DT_INT16 }, { "short int", EV_DT_INT16 }, { "int16_t", EV_DT_INT16 },
	{ "char", EV_DT_INT8 }, { "signed char", EV_DT_INT8 }, { "int8_t", EV_DT_INT8 }, { "qint8", EV_DT_INT8 },
	{ "byte", EV_DT_UINT8 }, { "unsigned char", EV_DT_UINT8 }, { "uint8_t", EV_DT_UINT8 }, { "bool", EV_DT_UINT8 },
	{ "quint8", EV_DT_UINT8 }, { "quint4x2", EV_DT_UINT8 }, { "quint2x4", EV_DT_UINT8 },
	{ "bits1x8", EV_DT_UINT8 }, { "bits2x4", EV_DT_UINT8 }, { "bits4x2", EV_DT_UINT8 }, { "bits8", EV_DT_UINT8 },
	{ "unsigned short", EV_DT_UINT16 }, { "short unsigned int", EV_DT_UINT16 }, { "uint16_t", EV_DT_UINT16 },
	{ "bits16", EV_DT_UINT16 },
	{ "unsigned int", EV_DT_UINT32 }, { "uint32_t", EV_DT_UINT32 },
	{ "unsigned long", EV_DT_UINT64 }, { "long unsigned int", EV_DT_UINT64 }, { "unsigned long long", EV_DT_UINT64 },
	{ "long long unsigned int", EV_DT_UINT64 }, { "uint64_t", EV_DT_UINT64 },
	{ "half", EV_DT_FLOAT16 }, { "float", EV_DT_FLOAT32 }, { "double", EV_DT_FLOAT64 },
	{ "complexhalf", EV_DT_COMPLEX32 }, { "complex<half>", EV_DT_COMPLEX32 }, { "chalf", EV_DT_COMPLEX32 },
	{ "complexfloat", EV_DT_COMPLEX64 }, { "complex<float>", EV_DT_COMPLEX64 }, { "cfloat", EV_DT_COMPLEX64 },
	{ "complexdouble", EV_DT_COMPLEX128 }, { "complex<double>", EV_DT_COMPLEX128 }, { "cdouble", EV_DT_COMPLEX128 },
	/* The fnuz variants (ROCm's encodings) have the same size; ev keeps
	 * one name per width and exponent. */
	{ "float8_e4m3fn", EV_DT_FP8E4M3 }, { "float8_e4m3fnuz", EV_DT_FP8E4M3 },
	{ "float8_e5m2", EV_DT_FP8E5M2 }, { "float8_e5m2fnuz", EV_DT_FP8E5M2 },
	{ "float8_e8m0fnu", EV_DT_FP8E8M0 }, { "float4_e2m1fn_x2", EV_DT_FP4E2M1X2 },
};

unsigned ev_torch_dtype(const char *s)
{
	/* Lower case, without "torch." in front or "c10::", "at::", "std::"
	 * anywhere ("c10::complex<c10::Half>" is "complex<half>"). */
	static const char *const ns[] = { "c10::", "at::", "std::" };
	char n[64];
	size_t o = 0;
	if (strncmp(s, "torch.", 6) == 0)
		s += 6;
	while (*s) {
		size_t skip = 0;
		for (size_t i = 0; i < NWORDS(ns) && !skip; i++)
			if (strncmp(s, ns[i], strlen(ns[i])) == 0)
				skip = strlen(ns[i]);
		if (skip) {
			s += skip;
			continue;
		}
		if (o + 1 == sizeof n)
			return EV_DT_UNKNOWN; /* longer than any element type */
		n[o++] = (char)tolower((unsigned char)*s++);
	}
	n[o] = '\0';
	for (size_t i = 0; i < NWORDS(torch_dtypes); i++)
		if (strcmp(n, torch_dtypes[i].w) == 0)
			return torch_dtypes[i].v;
	unsigned v;
	return o && ev_dtype_parse(n, &v) == 0 ? v : EV_DT_UNKNOWN;
}

unsigned ev_nccl_func_code(int64_t v)
{
	static const unsigned m[] = { EV_OP_BROADCAST, EV_OP_REDUCE, EV_OP_ALLGATHER, EV_OP_REDUCESCATTER,
	                              EV_OP_ALLREDUCE, EV_OP_SENDRECV, EV_OP_SEND, EV_OP_RECV };
	return v >= 0 && v < (int64_t)NWORDS(m) ? m[v] : EV_OP_UNKNOWN;
}

unsigned ev_nccl_algo_code(int64_t v)
{
	return v >= 0 && v < (int64_t)NWORDS(algos) ? algos[v].v : EV_ALGO_UNKNOWN;
}

unsigned ev_nccl_proto_code(int64_t v)
{
	return v >= 0 && v < (int64_t)NWORDS(protos) ? protos[v].v : EV_PROTO_UNKNOWN;
}

unsigned ev_nccl_redop_code(int64_t v)
{
	return v >= 0 && v <= 4 ? (unsigned)v + 1 : EV_RED_UNKNOWN;
}

unsigned ev_nccl_dtype_code(int64_t v)
{
	return v >= 0 && v <= 11 ? (unsigned)v + 1 : EV_DT_UNKNOWN;
}

/* Is s[0..len) the word w, in any case? */
static int word_ci(const char *s, size_t len, const char *w)
{
	return w && strlen(w) == len && strncasecmp(s, w, len) == 0;
}

unsigned ev_nccl_algo_word(const char *s, size_t len)
{
	for (size_t i = 0; i < NWORDS(algos); i++)
		if (word_ci(s, len, algos[i].part) || word_ci(s, len, algos[i].name) || word_ci(s, len, algos[i].old))
			return algos[i].v;
	return 0;
}

unsigned ev_nccl_algo_setting(const char *s)
{
	size_t len = strlen(s);
	for (size_t i = 0; i < NWORDS(algos); i++)
		if (word_ci(s, len, algos[i].part) || word_ci(s, len, algos[i].name))
			return algos[i].v;
	return 0;
}

unsigned ev_nccl_proto_word(const char *s, size_t len)
{
	for (size_t i = 0; i < NWORDS(protos); i++)
		if (word_ci(s, len, protos[i].part))
			return protos[i].v;
	return 0;
}

const char *ev_nccl_proto_text(unsigned proto)
{
	for (size_t i = 0; i < NWORDS(protos); i++)
		if (protos[i].v == proto)
			return protos[i].part;
	return NULL;
}

unsigned ev_nccl_proto_setting(const char *s)
{
	int64_t v;
	if (ev_parse_i64(s, &v) == EV_OK)
		return ev_nccl_proto_code(v);
	return ev_nccl_proto_word(s, strlen(s));
}

/* NCCL's patterns, in the order of 2.18's ncclPattern_t (the index is its
 * number), with the collective and the algorithm each implies. */
static const struct nccl_pattern {
	const char *name;
	unsigned op, algo;
} patterns[] = {
	{ "Ring", EV_OP_UNKNOWN, EV_ALGO_RING },
	{ "RingTwice", EV_OP_ALLREDUCE, EV_ALGO_RING },
	{ "PipelineFrom", EV_OP_BROADCAST, EV_ALGO_RING },
	{ "PipelineTo", EV_OP_REDUCE, EV_ALGO_RING },
	{ "TreeUp", EV_OP_REDUCE, EV_ALGO_TREE },
	{ "TreeDown", EV_OP_BROADCAST, EV_ALGO_TREE },
	{ "TreeUpDown", EV_OP_ALLREDUCE, EV_ALGO_TREE },
	{ "CollnetChain", EV_OP_ALLREDUCE, EV_ALGO_COLLNET_CHAIN },
	{ "CollnetDirect", EV_OP_ALLREDUCE, EV_ALGO_COLLNET_DIRECT },
	{ "Nvls", EV_OP_ALLREDUCE, EV_ALGO_NVLS },
	{ "NvlsTree", EV_OP_ALLREDUCE, EV_ALGO_NVLS_TREE },
	{ "Send", EV_OP_SEND, EV_ALGO_UNKNOWN },
	{ "Recv", EV_OP_RECV, EV_ALGO_UNKNOWN },
};

/* a and b equal but for case and underscores. */
static int same_word(const char *a, const char *b)
{
	for (;; a++, b++) {
		while (*a == '_')
			a++;
		while (*b == '_')
			b++;
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
		if (!*a)
			return 1;
	}
}

void ev_nccl_pattern_word(const char *s, struct ev_rec *r)
{
	int64_t num;
	int isnum = ev_parse_i64(s, &num) == EV_OK;
	if (strncmp(s, "ncclPattern", 11) == 0)
		s += 11;
	for (size_t i = 0; i < NWORDS(patterns); i++)
		if (isnum ? num == (int64_t)i : same_word(s, patterns[i].name)) {
			r->op = (uint8_t)patterns[i].op;
			r->algo = (uint8_t)patterns[i].algo;
			return;
		}
}

unsigned ev_nccl_stage_word(const char *st)
{
	char l[64];
	size_t k = 0;
	for (; *st && k + 1 < sizeof l; st++)
		l[k++] = (char)tolower((unsigned char)*st);
	l[k] = '\0';
	if (strstr(l, "scatter") || strstr(l, "reduce") || !strcmp(l, "rs"))
		return EV_F_PHASE_RS;
	if (strstr(l, "gather") || !strcmp(l, "ag"))
		return EV_F_PHASE_AG;
	if (strstr(l, "up"))
		return EV_F_TREE_UP;
	if (strstr(l, "down"))
		return EV_F_TREE_DOWN;
	return 0;
}
