/* SPDX-License-Identifier: MIT */
/*
 * ev_record.c - encoding and decoding of the fixed-size binary record, and
 * the names of its enumerated fields.
 */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "ev/stream.h"

/* The decoded record is laid out as the encoded one (docs/FORMAT.md §4):
 * every field at its offset, 96 bytes, no padding.  On a little-endian host
 * the two are then the same bytes, and a record is encoded or decoded by one
 * copy instead of 26 loads and stores: a fifth of the work of reading a
 * record.  The assertions keep the layouts from drifting apart. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define REC_SAME_BYTES 1
#define AT(field, off) _Static_assert(offsetof(struct ev_rec, field) == (off), "struct ev_rec: " #field " is not at " #off)
AT(type, 0); AT(op, 1); AT(algo, 2); AT(proto, 3); AT(dtype, 4); AT(redop, 5); AT(flags, 6);
AT(rank, 8); AT(stream, 12); AT(ts, 16); AT(dur, 24); AT(bytes, 32); AT(name, 40); AT(sig, 48);
AT(comm, 56); AT(seq, 64); AT(peer, 68); AT(id, 72); AT(channel, 76); AT(src, 78); AT(step, 80);
AT(aux, 84); AT(nthreads, 88); AT(chunk_steps, 90); AT(slice_steps, 91); AT(step_size, 92);
#undef AT
_Static_assert(sizeof(struct ev_rec) == EV_RECORD_SIZE, "struct ev_rec has padding or more fields than a record");
#else
#define REC_SAME_BYTES 0
#endif

void ev_rec_init(struct ev_rec *r)
{
	memset(r, 0, sizeof *r);
	r->peer = -1;
}

void ev_rec_encode(const struct ev_rec *r, unsigned char *b)
{
	if (REC_SAME_BYTES) {
		memcpy(b, r, EV_RECORD_SIZE);
		return;
	}
	b[0] = r->type;
	b[1] = r->op;
	b[2] = r->algo;
	b[3] = r->proto;
	b[4] = r->dtype;
	b[5] = r->redop;
	ev_put16(b + 6, r->flags);
	ev_put32(b + 8, r->rank);
	ev_put32(b + 12, r->stream);
	ev_put64(b + 16, (uint64_t)r->ts);
	ev_put64(b + 24, r->dur);
	ev_put64(b + 32, r->bytes);
	ev_put64(b + 40, r->name);
	ev_put64(b + 48, r->sig);
	ev_put64(b + 56, r->comm);
	ev_put32(b + 64, r->seq);
	ev_put32(b + 68, (uint32_t)r->peer);
	ev_put32(b + 72, r->id);
	ev_put16(b + 76, r->channel);
	ev_put16(b + 78, r->src);
	ev_put32(b + 80, r->step);
	ev_put32(b + 84, r->aux);
	ev_put16(b + 88, r->nthreads);
	b[90] = r->chunk_steps;
	b[91] = r->slice_steps;
	ev_put32(b + 92, r->step_size);
}

void ev_rec_decode(const unsigned char *b, struct ev_rec *r)
{
	if (REC_SAME_BYTES) {
		memcpy(r, b, EV_RECORD_SIZE);
		return;
	}
	r->type = b[0];
	r->op = b[1];
	r->algo = b[2];
	r->proto = b[3];
	r->dtype = b[4];
	r->redop = b[5];
	r->flags = ev_le16(b + 6);
	r->rank = ev_le32(b + 8);
	r->stream = ev_le32(b + 12);
	r->ts = (int64_t)ev_le64(b + 16);
	r->dur = ev_le64(b + 24);
	r->bytes = ev_le64(b + 32);
	r->name = ev_le64(b + 40);
	r->sig = ev_le64(b + 48);
	r->comm = ev_le64(b + 56);
	r->seq = ev_le32(b + 64);
	r->peer = (int32_t)ev_le32(b + 68);
	r->id = ev_le32(b + 72);
	r->channel = ev_le16(b + 76);
	r->src = ev_le16(b + 78);
	r->step = ev_le32(b + 80);
	r->aux = ev_le32(b + 84);
	r->nthreads = ev_le16(b + 88);
	r->chunk_steps = b[90];
	r->slice_steps = b[91];
	r->step_size = ev_le32(b + 92);
}

/* Name tables are indexed by value; NULL marks a hole. */
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const type_names[EV_TYPE_MAX + 1] = {
	[EV_KERNEL] = "kernel", [EV_MEMCPY] = "memcpy", [EV_MEMSET] = "memset",
	[EV_COLL] = "coll", [EV_P2P] = "p2p", [EV_SEND] = "send", [EV_RECV] = "recv",
	[EV_CALC] = "calc", [EV_RANGE] = "range", [EV_API] = "api", [EV_MARK] = "mark",
	[EV_DEP] = "dep", [EV_COUNTER] = "counter", [EV_CHAN] = "chan",
	[EV_OVERLAP] = "overlap", [EV_TSX] = "tsx", [EV_IDEAL] = "ideal",
};
static const char *const kclass_names[] = {
	"other", "gemm", "comm", "attention", "elementwise", "reduce", "memset", "memcpy", "conv",
};
static const char *const coll_names[] = {
	"unknown", "allreduce", "allgather", "reducescatter", "broadcast", "reduce",
	"alltoall", "send", "recv", "barrier", "gather", "scatter", "alltoallv", "sendrecv",
};
static const char *const copy_names[] = { "unknown", "htod", "dtoh", "dtod", "htoh", "ptop" };
static const char *const calc_names[] = { "gap", "kernel", "reduce", "copy", "intra", "sync" };
static const char *const range_names[] = {
	"nvtx", "cpu_op", "user", "gpu_user", "python", "nccl", "step", "other",
};
static const char *const api_names[] = { "runtime", "driver" };
static const char *const zero_names[] = { "-" };
static const char *const algo_names[] = {
	"unknown", "ring", "tree", "nvls", "nvls_tree", "collnet_direct", "collnet_chain", "pat",
};
static const char *const proto_names[] = { "unknown", "ll", "ll128", "simple" };
_Static_assert(NELEM(algo_names) == EV_ALGO_COUNT, "a name for every enum ev_algo value");
_Static_assert(NELEM(proto_names) == EV_PROTO_COUNT, "a name for every enum ev_proto value");
static const char *const dtype_names[] = {
	"unknown", "int8", "uint8", "int32", "uint32", "int64", "uint64", "float16",
	"float32", "float64", "bfloat16", "fp8e4m3", "fp8e5m2", "int16", "uint16",
	"complex32", "complex64", "complex128", "fp8e8m0", "fp4e2m1x2",
};
/* Bytes per element; fp4e2m1x2 is PyTorch's Float4_e2m1fn_x2, two 4-bit
 * values packed in a byte, one element per byte as its shapes count. */
static const unsigned dtype_sizes[] = { 0, 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1, 2, 2, 4, 8, 16, 1, 1 };
_Static_assert(NELEM(dtype_names) == NELEM(dtype_sizes), "a size for every element type");
_Static_assert(NELEM(dtype_names) == EV_DT_FP4E2M1X2 + 1, "a name for every enum ev_dtype value");
static const char *const redop_names[] = {
	"unknown", "sum", "prod", "max", "min", "avg", "premulsum", "none",
};
static const char *const flag_names[] = {
	"intra", "phase_rs", "phase_ag", "tree_up", "tree_down", "synth", "ireq",
	"unlinked", "group", "clipped", "fallback", "noflow",
};

static const char *name_of(const char *const *tab, size_t n, unsigned v)
{
	return v < n ? tab[v] : NULL;
}

/* Accepts a listed name (case-insensitive) or a plain decimal value, so
 * that values without a name (from a newer minor version) round-trip. */
static int parse_in(const char *const *tab, size_t n, const char *s, unsigned *v)
{
	for (size_t i = 0; i < n; i++)
		if (tab[i] && strcasecmp(tab[i], s) == 0) {
			*v = (unsigned)i;
			return EV_OK;
		}
	uint32_t x;
	if (ev_parse_u32(s, &x) == 0 && x <= 255) {
		*v = x;
		return EV_OK;
	}
	return EV_ERR_ARG;
}

const char *ev_type_name(unsigned t) { return name_of(type_names, NELEM(type_names), t); }
int ev_type_parse(const char *s, unsigned *v)
{
	int rc = parse_in(type_names, NELEM(type_names), s, v);
	if (rc == EV_OK && (*v == 0 || *v > EV_TYPE_MAX || *v == 0x0A || *v == 0x0D))
		return EV_ERR_ARG;
	return rc;
}

static void op_table(unsigned type, const char *const **tab, size_t *n)
{
	switch (type) {
	case EV_KERNEL: case EV_OVERLAP:
		*tab = kclass_names; *n = NELEM(kclass_names); return;
	case EV_COLL: case EV_P2P: case EV_SEND: case EV_RECV: case EV_CHAN:
		*tab = coll_names; *n = NELEM(coll_names); return;
	case EV_MEMCPY:
		*tab = copy_names; *n = NELEM(copy_names); return;
	case EV_CALC:
		*tab = calc_names; *n = NELEM(calc_names); return;
	case EV_RANGE: case EV_MARK:
		*tab = range_names; *n = NELEM(range_names); return;
	case EV_API:
		*tab = api_names; *n = NELEM(api_names); return;
	default:
		*tab = zero_names; *n = NELEM(zero_names); return;
	}
}

const char *ev_op_name(unsigned type, unsigned op)
{
	const char *const *tab;
	size_t n;
	op_table(type, &tab, &n);
	return name_of(tab, n, op);
}

int ev_op_parse(unsigned type, const char *s, unsigned *v)
{
	const char *const *tab;
	size_t n;
	op_table(type, &tab, &n);
	return parse_in(tab, n, s, v);
}

const char *ev_algo_name(unsigned v) { return name_of(algo_names, NELEM(algo_names), v); }
int ev_algo_parse(const char *s, unsigned *v) { return parse_in(algo_names, NELEM(algo_names), s, v); }
const char *ev_proto_name(unsigned v) { return name_of(proto_names, NELEM(proto_names), v); }
int ev_proto_parse(const char *s, unsigned *v) { return parse_in(proto_names, NELEM(proto_names), s, v); }
const char *ev_dtype_name(unsigned v) { return name_of(dtype_names, NELEM(dtype_names), v); }
int ev_dtype_parse(const char *s, unsigned *v) { return parse_in(dtype_names, NELEM(dtype_names), s, v); }
unsigned ev_dtype_size(unsigned v) { return v < NELEM(dtype_sizes) ? dtype_sizes[v] : 0; }
const char *ev_redop_name(unsigned v) { return name_of(redop_names, NELEM(redop_names), v); }
int ev_redop_parse(const char *s, unsigned *v) { return parse_in(redop_names, NELEM(redop_names), s, v); }
const char *ev_coll_name(unsigned v) { return name_of(coll_names, NELEM(coll_names), v); }
int ev_coll_parse(const char *s, unsigned *v) { return parse_in(coll_names, NELEM(coll_names), s, v); }
const char *ev_kclass_name(unsigned v) { return name_of(kclass_names, NELEM(kclass_names), v); }
int ev_kclass_parse(const char *s, unsigned *v) { return parse_in(kclass_names, NELEM(kclass_names), s, v); }

void ev_flags_format(unsigned flags, char *buf, size_t n)
{
	size_t used = 0;
	if (n == 0)
		return;
	buf[0] = '\0';
	for (unsigned bit = 0; bit < 16; bit++) {
		if (!(flags & (1u << bit)))
			continue;
		char tmp[16];
		const char *nm = bit < NELEM(flag_names) ? flag_names[bit] : NULL;
		if (!nm) {
			/* Unknown bits are written by number so nothing is lost. */
			tmp[0] = 'b';
			tmp[1] = (char)('0' + bit / 10);
			tmp[2] = (char)('0' + bit % 10);
			tmp[3] = '\0';
			nm = tmp;
		}
		size_t len = strlen(nm) + (used ? 1 : 0);
		if (used + len + 1 > n)
			return;
		if (used)
			buf[used++] = '|';
		memcpy(buf + used, nm, strlen(nm) + 1);
		used += strlen(nm);
	}
}

int ev_flags_parse(const char *s, unsigned *v)
{
	unsigned out = 0;
	if (*s == '\0' || strcmp(s, "-") == 0) {
		*v = 0;
		return EV_OK;
	}
	while (*s) {
		const char *end = strchr(s, '|');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		unsigned bit = 99;
		for (unsigned i = 0; i < NELEM(flag_names); i++)
			if (strlen(flag_names[i]) == len && strncasecmp(flag_names[i], s, len) == 0)
				bit = i;
		if (bit == 99 && len == 3 && s[0] == 'b' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9')
			bit = (unsigned)((s[1] - '0') * 10 + (s[2] - '0'));
		if (bit > 15)
			return EV_ERR_ARG;
		out |= 1u << bit;
		if (!end)
			break;
		s = end + 1;
	}
	*v = out;
	return EV_OK;
}
