/* SPDX-License-Identifier: MIT */
/*
 * gen-kineto - write seeded synthetic PyTorch profiler (Kineto) traces
 *
 * One JSON file per rank, shaped like torch.profiler's export: cpu_op
 * events with shapes and External ids, cuda_runtime launches with
 * correlation ids, kernels carrying both, ac2g flow pairs, NCCL kernels
 * with the collective arguments of record_param_comms, memcpy/memset,
 * ProfilerStep annotations and distributedInfo with the process group.
 *
 * Every rank follows one schedule drawn from the seed alone, so the same
 * collective has the same size, kind and order on every rank and ends at
 * the same instant (the synchronisation), while compute durations carry a
 * per-rank jitter: ranks wait for each other and communication overlaps the
 * next compute block.  Events are written as they are drawn, so memory is
 * constant at any size, and the same options give the same bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "ev.h"

#define MAX_MIX 16

struct mix_item { unsigned kind; unsigned weight; };

struct opts {
	struct ev_cli cli;
	uint32_t ranks, iters, kernels, only;
	int have_only;
	uint64_t seed;
	uint64_t size;         /* target bytes per rank, 0 = use iters */
	double jitter, scale, coll_scale;
	int gzip, flows, python;
	int old_era;           /* --era=2.1: collectives without collective arguments */
	uint32_t slow_rank, slow_iter, slow_k; /* --slow: one rank's kernel made slow */
	double slow;           /* its factor, 0 none */
	int event_sync;        /* --event-sync: collectives wait on the compute stream's CUDA event */
	struct mix_item mix[MAX_MIX];
	size_t nmix;
	const char *outdir;
};

static void usage(FILE *f)
{
	fputs(
"Usage: gen-kineto [options] OUTDIR\n"
"Write seeded synthetic PyTorch profiler (Kineto) traces, one per rank, as\n"
"OUTDIR/rank<R>/trace.json (or .json.gz).  OUTDIR '-' writes one rank\n"
"(--only, default 0) to standard output.  The same options give the same\n"
"bytes; memory does not grow with the size.\n"
"\n"
"Options:\n"
"  -r, --ranks=N          ranks (world size) [8]\n"
"  -i, --iters=N          iterations (ProfilerStep#) [4]\n"
"  -k, --kernels=N        compute kernels per iteration [24]\n"
"  -s, --size=SIZE        instead of --iters: iterations for about SIZE bytes\n"
"                         of JSON per rank (K/M/G suffixes)\n"
"  -m, --mix=LIST         collectives per iteration, kind:count, kinds\n"
"                         allreduce allgather reducescatter broadcast alltoall\n"
"                         sendrecv (pairs 0->1, 2->3, ...)\n"
"                         [allreduce:4,allgather:2,reducescatter:2]\n"
"      --seed=N           random seed [1]\n"
"      --jitter=F         per-rank compute jitter, fraction of the duration [0.1]\n"
"      --scale=F          compute duration factor (a sweep configuration) [1]\n"
"      --coll-scale=F     collective duration factor [1]\n"
"      --only=R           write only rank R\n"
"      --slow=R:I:K:F     a straggler: rank R runs kernel K (from 0) of\n"
"                         iteration I F times longer; the others wait for it\n"
"      --event-sync       each collective's stream waits for the compute\n"
"                         stream through a CUDA event (cudaEventRecord,\n"
"                         cudaStreamWaitEvent and Kineto's cuda_sync event)\n"
"  -z, --gzip             write .json.gz (zlib level 1)\n"
"      --no-flows         leave out the ac2g flow events\n"
"      --python           add python_function events around each op\n"
"      --era=V            PyTorch profiler generation: 2.4 (collective arguments\n"
"                         on record_param_comms and NCCL kernels) or 2.1 (none:\n"
"                         sizes only on the nccl:* annotation as Input Dims/Input\n"
"                         type, ncclKernel_<Coll>_RING_LL_Sum_<type> names,\n"
"                         distributedInfo without pg_config) [2.4]\n"
"  -q, --quiet            no summary line on stderr\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  I/O error\n"
"  2  usage error\n"
"\n"
"Example:\n"
"  gen-kineto --ranks 8 --size 50M --seed 3 run && kineto2ev run/rank*/trace.json | ev-stats timeline\n",
	f);
}

/* ---- seeded randomness ---------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

struct rng { uint64_t s; };

static void rng_seed(struct rng *g, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	g->s = mix64(mix64(mix64(mix64(a) ^ b) ^ c) ^ d);
}

static uint64_t rng_next(struct rng *g)
{
	g->s += 0x9E3779B97F4A7C15ull;
	uint64_t x = g->s;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static double rng_unit(struct rng *g) { return (double)(rng_next(g) >> 11) * (1.0 / 9007199254740992.0); }
static uint64_t rng_below(struct rng *g, uint64_t n) { return n ? rng_next(g) % n : 0; }

/* ---- output sink: plain, gzip or counting only ----------------------- */

struct sink {
	FILE *f;
	gzFile gz;
	int count_only, err;
	char *buf;
	size_t len, cap;
	uint64_t total;
};

static void sink_flush(struct sink *s)
{
	if (s->len && !s->count_only && !s->err) {
		if (s->gz) {
			if (gzwrite(s->gz, s->buf, (unsigned)s->len) != (int)s->len)
				s->err = 1;
		} else if (fwrite(s->buf, 1, s->len, s->f) != s->len) {
			s->err = 1;
		}
	}
	s->len = 0;
}

/* Decimal text of v at p; returns the length.  The bench streams tens of
 * GB through this generator, and glibc's vsnprintf alone ran at the speed
 * of the converter under test, so the common conversions are done here. */
static size_t put_u64(char *p, unsigned long long v)
{
	char t[24];
	size_t n = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (size_t i = 0; i < n; i++)
		p[i] = t[n - 1 - i];
	return n;
}

/* Formats fmt into at most cap bytes at p: %s %c %d %u %lld %llu and %%
 * inline, %.3f and %016llX through snprintf.  Returns
 * the length, or cap when it does not fit (the caller flushes and
 * retries), or -1 on a conversion it cannot type. */
static long fast_format(char *p, size_t cap, const char *fmt, va_list ap)
{
	size_t n = 0;
	for (const char *f = fmt; *f; f++) {
		char num[48];
		const char *src = num;
		size_t len;
		if (*f != '%') {
			const char *e = strchr(f, '%');
			len = e ? (size_t)(e - f) : strlen(f);
			if (n + len >= cap)
				return (long)cap;
			memcpy(p + n, f, len);
			n += len;
			f += len - 1;
			continue;
		}
		const char *spec = f++;
		while (*f && strchr("0123456789.-", *f))
			f++;
		int ll = 0;
		while (*f == 'l')
			ll++, f++;
		if (f - spec > 1 + ll && *f != '%') {
			/* The two with width or precision this file uses. */
			int k;
			if (!strncmp(spec, "%.3f", 4))
				k = snprintf(num, sizeof num, "%.3f", va_arg(ap, double));
			else if (!strncmp(spec, "%016llX", 7))
				k = snprintf(num, sizeof num, "%016llX", va_arg(ap, unsigned long long));
			else
				return -1;
			len = k < 0 ? 0 : (size_t)k;
		} else {
			switch (*f) {
			case '%': num[0] = '%'; len = 1; break;
			case 'c': num[0] = (char)va_arg(ap, int); len = 1; break;
			case 's': src = va_arg(ap, const char *); len = strlen(src); break;
			case 'u': len = put_u64(num, ll ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned)); break;
			case 'd': {
				long long v = ll ? va_arg(ap, long long) : va_arg(ap, int);
				len = 0;
				if (v < 0)
					num[len++] = '-';
				len += put_u64(num + len, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
				break;
			}
			default: return -1;
			}
		}
		if (n + len >= cap)
			return (long)cap;
		memcpy(p + n, src, len);
		n += len;
	}
	return (long)n;
}

static void out(struct sink *s, const char *fmt, ...) EV_PRINTF(2, 3);
static void out(struct sink *s, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		long n = fast_format(s->buf + s->len, s->cap - s->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			s->err = 1;
			return;
		}
		if ((size_t)n < s->cap - s->len) {
			s->len += (size_t)n;
			s->total += (uint64_t)n;
			return;
		}
		if (s->len == 0) {
			s->err = 1; /* one item larger than the buffer: never happens */
			return;
		}
		sink_flush(s);
	}
}

/* ---- the schedule ----------------------------------------------------- */

enum { K_GEMM, K_BMM, K_ADD, K_LAYERNORM, K_SOFTMAX, K_ATTN, K_NKINDS };

struct kspec { const char *op, *kernel; unsigned block; };
static const struct kspec kspecs[K_NKINDS] = {
	{ "aten::mm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1_execute_segment_k_off_kernel__5x_cublas", 384 },
	{ "aten::bmm", "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)", 128 },
	{ "aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)", 128 },
	{ "aten::native_layer_norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)", 256 },
	{ "aten::_softmax", "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)", 1024 },
	{ "aten::_scaled_dot_product_flash_attention", "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)", 128 },
};

struct cspec { const char *name, *coll, *annot, *op, *kernel; };
enum { C_ALLREDUCE, C_ALLGATHER, C_REDUCESCATTER, C_BROADCAST, C_ALLTOALL, C_SENDRECV, C_NKINDS };
static const struct cspec cspecs[C_NKINDS] = {
	{ "allreduce", "allreduce", "nccl:all_reduce", "c10d::allreduce_", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)" },
	{ "allgather", "_allgather_base", "nccl:_all_gather_base", "c10d::_allgather_base_", "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)" },
	{ "reducescatter", "_reduce_scatter_base", "nccl:_reduce_scatter_base", "c10d::_reduce_scatter_base_", "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)" },
	{ "broadcast", "broadcast", "nccl:broadcast", "c10d::broadcast_", "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)" },
	{ "alltoall", "all_to_all", "nccl:all_to_all", "c10d::alltoall_base_", "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)" },
	{ "sendrecv", "send", "nccl:send", "c10d::send", "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)" },
};

/* PyTorch <= 2.1 with NCCL < 2.19: kernel names of that generation. */
static const char *const old_kernels[C_NKINDS] = {
	"ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclWorkElem)",
	"ncclKernel_AllGather_RING_LL_Sum_int8(ncclWorkElem)",
	"ncclKernel_ReduceScatter_RING_LL_Sum_bfloat16(ncclWorkElem)",
	"ncclKernel_Broadcast_RING_LL_Sum_int8(ncclWorkElem)",
	"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8(ncclWorkElem)",
	"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8(ncclWorkElem)",
};

/* The schedule of one iteration, shared by every rank: memory is bounded
 * by the kernels and collectives of one iteration, not by the trace. */
struct kplan { unsigned kind; int64_t m, n, k; double nominal, slow; };
struct cplan { unsigned kind; int64_t nelems; int64_t end; };
struct plan {
	struct kplan *k;
	struct cplan *c;
	uint32_t nk, nc, blocks;
	int64_t start, end;
};

/* Per-rank CPU cost of ops, ns: upper bounds used by the shared schedule. */
#define OP_CPU_MAX 20000   /* a compute op: 12-18 us + 1 us */
#define OP_LAUNCH_GAP 11000
#define COLL_CPU 31000
#define COLL_LAUNCH_GAP 13000
#define COPY_BYTES (4 << 20)

static int64_t copy_dur(int64_t bytes) { return 2000 + bytes / 20000; }

static void plan_iteration(const struct opts *o, uint32_t it, int64_t start, struct plan *p)
{
	struct rng g;
	rng_seed(&g, o->seed, 0x5C4ED, it, 0);
	p->start = start;
	/* Collective kinds from the mix, shuffled per iteration. */
	uint32_t nc = 0;
	for (size_t i = 0; i < o->nmix; i++)
		for (unsigned c = 0; c < o->mix[i].weight; c++)
			p->c[nc++].kind = o->mix[i].kind;
	for (uint32_t i = nc; i > 1; i--) {
		uint32_t j = (uint32_t)rng_below(&g, i);
		unsigned t = p->c[i - 1].kind;
		p->c[i - 1].kind = p->c[j].kind;
		p->c[j].kind = t;
	}
	p->nc = nc;
	p->nk = o->kernels;
	p->blocks = nc + 1;
	for (uint32_t i = 0; i < p->nk; i++) {
		struct kplan *k = &p->k[i];
		k->kind = (unsigned)rng_below(&g, K_NKINDS);
		if (rng_below(&g, 2) == 0) /* GEMMs dominate a real step */
			k->kind = K_GEMM;
		k->m = (int64_t)512 << rng_below(&g, 4);
		k->n = (int64_t)1024 << rng_below(&g, 3);
		k->k = (int64_t)1024 << rng_below(&g, 3);
		double ns;
		switch (k->kind) {
		case K_GEMM: ns = (double)(2 * k->m * k->n * k->k) / 400e3; break; /* ~400 TFLOP/s */
		case K_BMM: ns = (double)(2 * 16 * k->m * k->k * 128) / 300e3; break;
		case K_ATTN: ns = (double)(4 * k->m * k->m * 128 * 16) / 250e3; break;
		default: ns = (double)(k->m * k->n * 2 * 3) / 2.0e3; break;         /* ~2 TB/s */
		}
		k->nominal = ns * o->scale + 2000.0;
		/* --slow: one rank runs this kernel F times longer; the shared
		 * schedule makes room, so the others wait for it. */
		k->slow = o->slow > 0 && it == o->slow_iter && i == o->slow_k ? o->slow : 1.0;
	}
	/* Bound: no rank's CPU or compute stream is past `b`; a collective ends
	 * on every rank when the slowest could have started it plus its cost. */
	int64_t b = start, cend = start;
	uint32_t per = p->nk / p->blocks, extra = p->nk % p->blocks, ki = 0;
	for (uint32_t blk = 0; blk < p->blocks; blk++) {
		uint32_t n = per + (blk < extra);
		for (uint32_t i = 0; i < n; i++, ki++)
			b += OP_CPU_MAX + OP_LAUNCH_GAP + (int64_t)(p->k[ki].nominal * p->k[ki].slow * (1.0 + o->jitter)) + 1;
		if (blk < nc) {
			struct cplan *c = &p->c[blk];
			c->nelems = (int64_t)1 << (14 + rng_below(&g, 10));
			int64_t bytes = c->nelems * 2 * (c->kind == C_ALLGATHER || c->kind == C_REDUCESCATTER ? o->ranks : 1);
			int64_t dur = (int64_t)((20000.0 + (double)bytes / 50.0) * o->coll_scale);
			if (dur < 2000)
				dur = 2000;
			int64_t s0 = b + COLL_LAUNCH_GAP > cend ? b + COLL_LAUNCH_GAP : cend;
			c->end = cend = s0 + dur;
			b += COLL_CPU;
		}
	}
	if (it % 2 == 1)
		b += 30000 + copy_dur(COPY_BYTES);
	p->end = (b > cend ? b : cend) + 20000;
}

/* Per-rank writing state. */
struct gen {
	const struct opts *o;
	struct sink *s;
	uint32_t rank;
	uint64_t ext, corr;     /* next External id and correlation id */
	int first;              /* no event written yet (comma handling) */
	int64_t cpu;            /* CPU thread clock, ns */
	int64_t gpu;            /* compute stream free at, ns */
	int64_t comm;           /* comm stream free at, ns */
	uint64_t events;
};

#define PID_CPU 4242
#define TID_MAIN 4242
#define STREAM_COMPUTE 7
#define STREAM_COMM 20
#define DEVICE(r) ((r) % 8)

/* Time in microseconds with 3 decimals, exactly from ns (ns >= 0). */
static const char *us(char *buf, int64_t ns)
{
	size_t n = put_u64(buf, (unsigned long long)(ns / 1000));
	int64_t f = ns % 1000;
	buf[n] = '.';
	buf[n + 1] = (char)('0' + f / 100);
	buf[n + 2] = (char)('0' + f / 10 % 10);
	buf[n + 3] = (char)('0' + f % 10);
	buf[n + 4] = '\0';
	return buf;
}

static void ev_begin(struct gen *g)
{
	out(g->s, g->first ? "\n  " : ",\n  ");
	g->first = 0;
	g->events++;
}

/* Opens an X event up to the inside of "args": {. */
static void x_event(struct gen *g, const char *cat, const char *name, int pid, int tid, int64_t ts, int64_t dur)
{
	char a[32], b[32];
	ev_begin(g);
	out(g->s, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": %s, \"dur\": %s,\n    \"args\": {",
	    cat, name, pid, tid, us(a, ts), us(b, dur));
}

static void flow(struct gen *g, char ph, uint64_t id, int pid, int tid, int64_t ts)
{
	char a[32];
	if (!g->o->flows)
		return;
	ev_begin(g);
	out(g->s, "{\"ph\": \"%c\", \"id\": %llu, \"pid\": %d, \"tid\": %d, \"ts\": %s, \"cat\": \"ac2g\", \"name\": \"ac2g\"%s}",
	    ph, (unsigned long long)id, pid, tid, us(a, ts), ph == 'f' ? ", \"bp\": \"e\"" : "");
}

/* A runtime call on the main thread and its flow start; returns the
 * correlation id. */
static uint64_t runtime_call(struct gen *g, const char *name, unsigned cbid, uint64_t ext, int64_t ts, int64_t dur)
{
	uint64_t c = g->corr++;
	x_event(g, "cuda_runtime", name, PID_CPU, TID_MAIN, ts, dur);
	out(g->s, "\"External id\": %llu, \"cbid\": %u, \"correlation\": %llu}}", (unsigned long long)ext, cbid,
	    (unsigned long long)c);
	flow(g, 's', c, PID_CPU, TID_MAIN, ts);
	return c;
}

/* A GPU activity up to the inside of its args (after the common ones). */
static void gpu_head(struct gen *g, const char *cat, const char *name, int64_t ts, int64_t dur, int stream, uint64_t ext,
                     uint64_t corr)
{
	flow(g, 'f', corr, (int)DEVICE(g->rank), stream, ts);
	x_event(g, cat, name, (int)DEVICE(g->rank), stream, ts, dur);
	out(g->s, "\"External id\": %llu, \"queued\": 0, \"device\": %u, \"context\": 1, \"stream\": %d, \"correlation\": %llu",
	    (unsigned long long)ext, DEVICE(g->rank), stream, (unsigned long long)corr);
}

static void compute_op(struct gen *g, const struct kplan *kp)
{
	const struct opts *o = g->o;
	const struct kspec *ks = &kspecs[kp->kind];
	uint64_t ext = g->ext++;
	struct rng jit;
	rng_seed(&jit, o->seed, 0x6A17, g->rank, ext);
	int64_t dur = (int64_t)(kp->nominal * (1.0 + o->jitter * rng_unit(&jit)));
	if (g->rank == o->slow_rank)
		dur = (int64_t)((double)dur * kp->slow);
	int64_t opdur = 12000 + (int64_t)rng_below(&jit, 6000);
	long long m = kp->m, n = kp->n, k = kp->k;
	char a[32], b[32];
	if (o->python) {
		ev_begin(g);
		out(g->s, "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"torch/nn/modules/module.py(1736): _call_impl\", "
		    "\"pid\": %d, \"tid\": %d, \"ts\": %s, \"dur\": %s, \"args\": {\"Python id\": %llu, \"Python parent id\": 1}}",
		    PID_CPU, TID_MAIN, us(a, g->cpu), us(b, opdur), (unsigned long long)ext);
	}
	x_event(g, "cpu_op", ks->op, PID_CPU, TID_MAIN, g->cpu, opdur);
	out(g->s, "\"External id\": %llu, \"Sequence number\": %llu, \"Fwd thread id\": 0, \"Record function id\": 0, ",
	    (unsigned long long)ext, (unsigned long long)(ext * 3 + 1));
	switch (kp->kind) {
	case K_GEMM:
		out(g->s, "\"Input Dims\": [[%lld, %lld], [%lld, %lld]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], "
		    "\"Input Strides\": [[%lld, 1], [1, %lld]], \"Concrete Inputs\": [\"\", \"\"]", m, k, k, n, k, k);
		break;
	case K_BMM:
		out(g->s, "\"Input Dims\": [[16, %lld, %lld], [16, %lld, 128]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], "
		    "\"Input Strides\": [[%lld, %lld, 1], [%lld, 128, 1]], \"Concrete Inputs\": [\"\", \"\"]",
		    m, k, k, m * k, k, k * 128);
		break;
	case K_ATTN:
		out(g->s, "\"Input Dims\": [[1, 16, %lld, 128], [1, 16, %lld, 128], [1, 16, %lld, 128], [], [], []], "
		    "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\", \"\"], "
		    "\"Concrete Inputs\": [\"\", \"\", \"\", \"0.\", \"True\", \"\"]", m, m, m);
		break;
	default:
		out(g->s, "\"Input Dims\": [[%lld, %lld], [%lld, %lld]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], "
		    "\"Input Strides\": [[%lld, 1], [%lld, 1]], \"Concrete Inputs\": [\"\", \"\"]", m, n, m, n, n, n);
		break;
	}
	out(g->s, ", \"Ev Idx\": %llu}}", (unsigned long long)(ext * 2));
	int64_t lts = g->cpu + 3000;
	uint64_t corr = runtime_call(g, "cudaLaunchKernel", 211, ext, lts, 5000);
	int64_t start = g->gpu > lts + 8000 ? g->gpu : lts + 8000;
	gpu_head(g, "kernel", ks->kernel, start, dur, STREAM_COMPUTE, ext, corr);
	out(g->s, ", \"registers per thread\": 128, \"shared memory\": 0, \"grid\": [%lld, 1, 1], \"block\": [%u, 1, 1], "
	    "\"est. achieved occupancy %%\": 50}}", m * n / 16384 + 1, ks->block);
	g->gpu = start + dur;
	g->cpu += opdur + 1000;
}

static void copy_op(struct gen *g, int64_t bytes)
{
	uint64_t ext = g->ext++;
	int64_t lts = g->cpu + 500, dur = copy_dur(bytes);
	x_event(g, "cpu_op", "aten::copy_", PID_CPU, TID_MAIN, g->cpu, 9000);
	out(g->s, "\"External id\": %llu, \"Ev Idx\": %llu}}", (unsigned long long)ext, (unsigned long long)(ext * 2));
	uint64_t c = runtime_call(g, "cudaMemcpyAsync", 41, ext, lts, 6000);
	int64_t start = g->gpu > lts + 4000 ? g->gpu : lts + 4000;
	gpu_head(g, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", start, dur, STREAM_COMPUTE, ext, c);
	out(g->s, ", \"bytes\": %lld, \"memory bandwidth (GB/s)\": %.3f}}", (long long)bytes, (double)bytes / (double)dur);
	g->gpu = start + dur;
	g->cpu += 10000;
	/* A memset of a buffer after the copy. */
	ext = g->ext++;
	c = runtime_call(g, "cudaMemsetAsync", 51, ext, g->cpu, 3000);
	start = g->gpu > g->cpu + 3000 ? g->gpu : g->cpu + 3000;
	gpu_head(g, "gpu_memset", "Memset (Device)", start, 1500, STREAM_COMPUTE, ext, c);
	out(g->s, ", \"bytes\": %lld, \"memory bandwidth (GB/s)\": %.3f}}", (long long)bytes, (double)bytes / 1500.0);
	g->gpu = start + 1500;
	g->cpu += 4000;
}

static void ranks_text(struct sink *s, uint32_t n)
{
	out(s, "[");
	for (uint32_t r = 0; r < n; r++)
		out(s, r ? ", %u" : "%u", r);
	out(s, "]");
}

/* The collective arguments record_param_comms and the NCCL kernel share. */
static void coll_args(struct gen *g, const char *cname, int64_t in, int64_t outn)
{
	uint32_t w = g->o->ranks;
	out(g->s, ", \"Collective name\": \"%s\", \"dtype\": \"BFloat16\", \"In msg nelems\": %lld, \"Out msg nelems\": %lld, "
	    "\"Group size\": %u, \"In split size\": \"[]\", \"Out split size\": \"[]\", \"Process Group Name\": \"0\", "
	    "\"Process Group Description\": \"default_pg\", \"Process Group Ranks\": \"",
	    cname, (long long)in, (long long)outn, w);
	ranks_text(g->s, w);
	out(g->s, "\"");
}

/* One collective: its kernel starts when this rank's data and comm stream
 * are ready and ends at cp->end, the same instant on every rank. */
static void coll_op(struct gen *g, const struct cplan *cp, int64_t ready)
{
	const struct cspec *cs = &cspecs[cp->kind];
	uint32_t w = g->o->ranks;
	const char *cname = cs->coll, *op = cs->op, *annot = cs->annot;
	int64_t in = cp->nelems, outn = cp->nelems;
	if (cp->kind == C_ALLGATHER)
		outn = cp->nelems * w;
	else if (cp->kind == C_REDUCESCATTER)
		in = cp->nelems * w;
	int p2p = cp->kind == C_SENDRECV;
	uint32_t peer = 0;
	if (p2p) {
		/* Pairs (0,1), (2,3), ...: even ranks send, odd ranks receive; the
		 * last rank of an odd world sends to rank 0, which posts no receive
		 * for it (an unmatched send, as a truncated capture would show). */
		int sender = g->rank % 2 == 0;
		peer = sender ? (g->rank + 1 < w ? g->rank + 1 : 0) : g->rank - 1;
		cname = sender ? "send" : "recv";
		op = sender ? "c10d::send" : "c10d::recv_";
		annot = sender ? "nccl:send" : "nccl:recv";
	}
	uint64_t e_op = g->ext++, e_ann = g->ext++, e_rpc = g->ext++;
	int64_t t0 = g->cpu;
	x_event(g, "cpu_op", op, PID_CPU, TID_MAIN, t0, 30000);
	out(g->s, "\"External id\": %llu, \"Record function id\": 0, \"Ev Idx\": %llu}}", (unsigned long long)e_op,
	    (unsigned long long)(e_op * 2));
	x_event(g, "user_annotation", annot, PID_CPU, TID_MAIN, t0 + 1000, 27000);
	out(g->s, "\"External id\": %llu, \"Record function id\": 0, ", (unsigned long long)e_ann);
	if (g->o->old_era) /* the message: all-gather's output, the others' input */
		out(g->s, "\"Input Dims\": [[%lld]], \"Input type\": [\"c10::BFloat16\"], ",
		    (long long)(cp->kind == C_ALLGATHER ? outn : in));
	out(g->s, "\"Ev Idx\": %llu}}", (unsigned long long)(e_ann * 2));
	x_event(g, "cpu_op", "record_param_comms", PID_CPU, TID_MAIN, t0 + 2000, 20000);
	out(g->s, "\"External id\": %llu, \"Record function id\": 0", (unsigned long long)e_rpc);
	if (!g->o->old_era) {
		coll_args(g, cname, in, outn);
		out(g->s, ", \"Rank\": %u", g->rank);
		if (p2p)
			out(g->s, ", \"Peer rank\": %u", peer);
	}
	out(g->s, ", \"Ev Idx\": %llu}}", (unsigned long long)(e_rpc * 2));
	if (g->o->event_sync) {
		/* As ProcessGroupNCCL: an event recorded on the compute stream,
		 * which the NCCL stream waits for (Kineto's cuda_sync event). */
		uint64_t cr = g->corr++, cw = g->corr++;
		x_event(g, "cuda_runtime", "cudaEventRecord", PID_CPU, TID_MAIN, t0 + 4000, 1000);
		out(g->s, "\"External id\": %llu, \"cbid\": 135, \"correlation\": %llu}}", (unsigned long long)e_rpc,
		    (unsigned long long)cr);
		x_event(g, "cuda_runtime", "cudaStreamWaitEvent", PID_CPU, TID_MAIN, t0 + 6000, 1000);
		out(g->s, "\"External id\": %llu, \"cbid\": 147, \"correlation\": %llu}}", (unsigned long long)e_rpc,
		    (unsigned long long)cw);
		x_event(g, "cuda_sync", "Stream Wait Event", (int)DEVICE(g->rank), STREAM_COMM, t0 + 6500, 500);
		out(g->s, "\"External id\": %llu, \"cuda_sync_kind\": \"Stream Wait Event\", \"wait_on_stream\": %d, "
		    "\"wait_on_cuda_event_record_corr_id\": %llu, \"stream\": %d, \"correlation\": %llu, \"device\": %u, "
		    "\"context\": 1}}", (unsigned long long)e_rpc, STREAM_COMPUTE, (unsigned long long)cr, STREAM_COMM,
		    (unsigned long long)cw, DEVICE(g->rank));
	}
	int64_t lts = t0 + 8000;
	uint64_t corr = runtime_call(g, "cudaLaunchKernel", 211, e_rpc, lts, 5000);
	int64_t start = ready;
	if (start < lts + 5000)
		start = lts + 5000;
	if (start < g->comm)
		start = g->comm;
	if (start > cp->end - 1000)
		start = cp->end - 1000; /* the shared bound prevents this; keep dur > 0 */
	gpu_head(g, "kernel", g->o->old_era ? old_kernels[cp->kind] : cs->kernel, start, cp->end - start, STREAM_COMM, e_rpc,
	         corr);
	out(g->s, ", \"grid\": [16, 1, 1], \"block\": [512, 1, 1]");
	if (!g->o->old_era)
		coll_args(g, cname, in, outn);
	out(g->s, "}}");
	g->comm = cp->end;
	g->cpu = t0 + COLL_CPU;
}

static void write_iteration(struct gen *g, const struct plan *p, uint32_t it)
{
	char a[32], b[32];
	g->cpu = g->gpu = p->start;
	ev_begin(g);
	out(g->s, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%u\", \"pid\": %d, \"tid\": %d, "
	    "\"ts\": %s, \"dur\": %s,\n    \"args\": {\"External id\": %llu, \"Record function id\": 0, \"Ev Idx\": %llu}}",
	    it, PID_CPU, TID_MAIN, us(a, p->start), us(b, p->end - p->start), (unsigned long long)g->ext,
	    (unsigned long long)(g->ext * 2));
	g->ext++;
	ev_begin(g);
	out(g->s, "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#%u\", \"pid\": %u, \"tid\": %d, "
	    "\"ts\": %s, \"dur\": %s,\n    \"args\": {\"External id\": %llu}}",
	    it, DEVICE(g->rank), STREAM_COMPUTE, us(a, p->start), us(b, p->end - p->start), (unsigned long long)g->ext++);
	uint32_t per = p->nk / p->blocks, extra = p->nk % p->blocks, ki = 0;
	for (uint32_t blk = 0; blk < p->blocks; blk++) {
		uint32_t n = per + (blk < extra);
		for (uint32_t i = 0; i < n; i++)
			compute_op(g, &p->k[ki++]);
		if (blk < p->nc)
			coll_op(g, &p->c[blk], g->gpu);
	}
	if (it % 2 == 1)
		copy_op(g, COPY_BYTES);
}

static void write_prologue(struct gen *g)
{
	const struct opts *o = g->o;
	struct sink *s = g->s;
	out(s, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
	for (uint32_t d = 0; d < 8; d++)
		out(s, "    {\"id\": %u, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85029158912, \"computeMajor\": 9, "
		    "\"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048, "
		    "\"regsPerBlock\": 65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"numSms\": 132}%s\n",
		    d, d < 7 ? "," : "");
	if (o->old_era) {
		out(s, "  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %u, \"world_size\": %u},\n"
		    "  \"record_shapes\": 1,\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1700000000000000000,\n"
		    "  \"traceEvents\": [", g->rank, o->ranks);
		goto events;
	}
	out(s, "  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %u, \"world_size\": %u, \"pg_count\": 1, "
	    "\"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", "
	    "\"pg_size\": %u, \"ranks\": ", g->rank, o->ranks, o->ranks);
	ranks_text(s, o->ranks);
	out(s, "}], \"nccl_version\": \"2.21.5\"},\n  \"record_shapes\": 1,\n  \"with_stack\": 0,\n"
	    "  \"trace_id\": \"%016llX\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1700000000000000000,\n"
	    "  \"traceEvents\": [",
	    (unsigned long long)mix64(o->seed ^ g->rank));
events:;
	char a[32];
	ev_begin(g);
	out(s, "{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": %s, \"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"python3\"}}",
	    us(a, 1000000), PID_CPU);
	ev_begin(g);
	out(s, "{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": %s, \"pid\": %d, \"tid\": %d, \"args\": {\"name\": \"thread %d (python3)\"}}",
	    us(a, 1000000), PID_CPU, TID_MAIN, TID_MAIN);
	ev_begin(g);
	out(s, "{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": %s, \"pid\": %u, \"tid\": 0, \"args\": {\"name\": \"GPU %u\"}}",
	    us(a, 1000000), DEVICE(g->rank), DEVICE(g->rank));
}

static void write_epilogue(struct gen *g, int64_t end)
{
	char a[32], b[32];
	ev_begin(g);
	out(g->s, "{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"pid\": \"Spans\", "
	    "\"tid\": \"PyTorch Profiler\", \"ts\": %s, \"dur\": %s, \"args\": {\"Op count\": 0}}",
	    us(a, 1000000), us(b, end - 1000000));
	out(g->s, "\n  ],\n  \"traceName\": \"rank%u/trace.json\"\n}\n", g->rank);
}

/* The whole trace of one rank into a sink. */
static void write_rank(const struct opts *o, struct plan *p, uint32_t rank, uint32_t iters, struct sink *s,
                       uint64_t *events)
{
	struct gen g;
	memset(&g, 0, sizeof g);
	g.o = o;
	g.s = s;
	g.rank = rank;
	g.ext = 1;
	g.corr = 1;
	g.first = 1;
	write_prologue(&g);
	int64_t t = 1000000 + 50000; /* 1 s after the profiler start, as ns */
	for (uint32_t it = 0; it < iters; it++) {
		plan_iteration(o, it, t, p);
		write_iteration(&g, p, it);
		t = p->end;
	}
	write_epilogue(&g, t);
	sink_flush(s);
	*events = g.events;
}

static int parse_mix(struct opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	if (!copy)
		return -1;
	o->nmix = 0;
	int rc = 0;
	unsigned total = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		uint32_t w = 1;
		if (colon) {
			*colon = '\0';
			if (ev_parse_u32(colon + 1, &w) || w > 64)
				rc = -1;
		}
		unsigned kind = C_NKINDS;
		for (unsigned k = 0; k < C_NKINDS; k++)
			if (strcmp(tok, cspecs[k].name) == 0)
				kind = k;
		if (kind == C_NKINDS || o->nmix >= MAX_MIX)
			rc = -1;
		if (!rc && w) {
			o->mix[o->nmix].kind = kind;
			o->mix[o->nmix++].weight = w;
			total += w;
		}
	}
	free(copy);
	return rc || total > 256 ? -1 : 0;
}

static int open_sink(struct sink *s, const struct opts *o, uint32_t rank, char *path, size_t pathn)
{
	if (strcmp(o->outdir, "-") == 0) {
		snprintf(path, pathn, "standard output");
		s->f = stdout;
		return 0;
	}
	/* mkdir -p OUTDIR/rank<R> */
	snprintf(path, pathn, "%s/rank%u", o->outdir, rank);
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = '\0';
		int bad = mkdir(path, 0777) && errno != EEXIST;
		*p = c;
		if (bad)
			return -1;
		if (!c)
			break;
	}
	snprintf(path, pathn, "%s/rank%u/trace.json%s", o->outdir, rank, o->gzip ? ".gz" : "");
	if (o->gzip) {
		s->gz = gzopen(path, "wb1");
		return s->gz ? 0 : -1;
	}
	s->f = fopen(path, "wb");
	return s->f ? 0 : -1;
}

static int close_sink(struct sink *s)
{
	int bad = s->err;
	if (s->gz)
		bad |= gzclose(s->gz) != Z_OK;
	else if (s->f && s->f != stdout)
		bad |= fclose(s->f) != 0;
	else if (s->f)
		bad |= fflush(s->f) != 0;
	s->gz = NULL;
	s->f = NULL;
	return bad;
}

static int run(struct opts *o)
{
	struct plan p;
	int status = 0;
	memset(&p, 0, sizeof p);
	p.k = calloc(o->kernels ? o->kernels : 1, sizeof *p.k);
	p.c = calloc(256, sizeof *p.c);
	char *buf = malloc(1 << 20);
	if (!p.k || !p.c || !buf) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	uint32_t iters = o->iters;
	if (o->size) {
		/* Iterations differ in size only by a few digits: measure two. */
		struct sink cnt = { NULL, NULL, 1, 0, buf, 0, 1 << 20, 0 };
		uint64_t ev;
		write_rank(o, &p, 0, 2, &cnt, &ev);
		uint64_t two = cnt.total;
		cnt.total = 0;
		write_rank(o, &p, 0, 0, &cnt, &ev);
		uint64_t per = (two - cnt.total) / 2;
		uint64_t n = per ? (o->size - (o->size < cnt.total ? o->size : cnt.total) + per - 1) / per : 1;
		iters = n < 1 ? 1 : n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	}
	uint64_t bytes = 0, events = 0;
	for (uint32_t r = 0; r < o->ranks && !status; r++) {
		if (o->have_only && r != o->only)
			continue;
		if (!o->have_only && strcmp(o->outdir, "-") == 0 && r != 0)
			continue;
		struct sink s = { NULL, NULL, 0, 0, buf, 0, 1 << 20, 0 };
		char path[4096];
		uint64_t ev;
		if (open_sink(&s, o, r, path, sizeof path)) {
			status = ev_cli_error(&o->cli, "%s: %s", path, strerror(errno));
			break;
		}
		write_rank(o, &p, r, iters, &s, &ev);
		if (close_sink(&s))
			status = ev_cli_error(&o->cli, "%s: write error", path);
		bytes += s.total;
		events += ev;
	}
	if (!status && !o->cli.quiet)
		fprintf(stderr, "gen-kineto: %u ranks x %u iterations, %llu events, %llu bytes of JSON\n",
		        o->have_only || strcmp(o->outdir, "-") == 0 ? 1 : o->ranks, iters, (unsigned long long)events,
		        (unsigned long long)bytes);
done:
	free(p.k);
	free(p.c);
	free(buf);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		EV_CLI_COMMON_LONG,
		{ "ranks", required_argument, NULL, 'r' },
		{ "iters", required_argument, NULL, 'i' },
		{ "kernels", required_argument, NULL, 'k' },
		{ "size", required_argument, NULL, 's' },
		{ "mix", required_argument, NULL, 'm' },
		{ "gzip", no_argument, NULL, 'z' },
		{ "seed", required_argument, NULL, 1 },
		{ "jitter", required_argument, NULL, 2 },
		{ "scale", required_argument, NULL, 3 },
		{ "coll-scale", required_argument, NULL, 4 },
		{ "only", required_argument, NULL, 5 },
		{ "no-flows", no_argument, NULL, 6 },
		{ "python", no_argument, NULL, 7 },
		{ "era", required_argument, NULL, 8 },
		{ "slow", required_argument, NULL, 9 },
		{ "event-sync", no_argument, NULL, 10 },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	int c;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "gen-kineto");
	o.ranks = 8;
	o.iters = 4;
	o.kernels = 24;
	o.seed = 1;
	o.jitter = 0.1;
	o.scale = 1.0;
	o.coll_scale = 1.0;
	o.flows = 1;
	parse_mix(&o, "allreduce:4,allgather:2,reducescatter:2");
	while ((c = getopt_long(argc, argv, EV_CLI_COMMON_SHORT "r:i:k:s:m:z", longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o.cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o.cli, 0);
		default: break;
		}
		double d;
		switch (c) {
		case 'r':
			if (ev_parse_u32(optarg, &o.ranks) || o.ranks == 0 || o.ranks > 65536)
				return ev_cli_usage_error(&o.cli, "--ranks: expected 1 to 65536, got '%s'", optarg);
			break;
		case 'i':
			if (ev_parse_u32(optarg, &o.iters))
				return ev_cli_usage_error(&o.cli, "--iters: not a count: '%s'", optarg);
			break;
		case 'k':
			if (ev_parse_u32(optarg, &o.kernels) || o.kernels > 1000000)
				return ev_cli_usage_error(&o.cli, "--kernels: expected 0 to 1000000, got '%s'", optarg);
			break;
		case 's':
			if (ev_parse_size(optarg, &o.size) || o.size == 0)
				return ev_cli_usage_error(&o.cli, "--size: not a size: '%s'", optarg);
			break;
		case 'm':
			if (parse_mix(&o, optarg))
				return ev_cli_usage_error(&o.cli, "--mix: expected kind:count,... (at most 256 per iteration), got '%s'", optarg);
			break;
		case 'z': o.gzip = 1; break;
		case 1:
			if (ev_parse_u64(optarg, &o.seed))
				return ev_cli_usage_error(&o.cli, "--seed: not a number: '%s'", optarg);
			break;
		case 2:
		case 3:
		case 4:
			if (ev_parse_double(optarg, &d) || d < 0 || d > 1000 || (c != 2 && d == 0))
				return ev_cli_usage_error(&o.cli, "--%s: not a factor: '%s'",
				                          c == 2 ? "jitter" : c == 3 ? "scale" : "coll-scale", optarg);
			*(c == 2 ? &o.jitter : c == 3 ? &o.scale : &o.coll_scale) = d;
			break;
		case 5:
			if (ev_parse_u32(optarg, &o.only))
				return ev_cli_usage_error(&o.cli, "--only: not a rank: '%s'", optarg);
			o.have_only = 1;
			break;
		case 6: o.flows = 0; break;
		case 7: o.python = 1; break;
		case 8:
			if (strcmp(optarg, "2.1") && strcmp(optarg, "2.4"))
				return ev_cli_usage_error(&o.cli, "--era: expected 2.1 or 2.4, got '%s'", optarg);
			o.old_era = strcmp(optarg, "2.1") == 0;
			break;
		case 10: o.event_sync = 1; break;
		case 9: {
			char tail;
			if (sscanf(optarg, "%u:%u:%u:%lf%c", &o.slow_rank, &o.slow_iter, &o.slow_k, &o.slow, &tail) != 4 ||
			    !(o.slow >= 1 && o.slow <= 1000))
				return ev_cli_usage_error(&o.cli, "--slow: expected RANK:ITER:KERNEL:FACTOR (1 to 1000), got '%s'", optarg);
			break;
		}
		default:
			return ev_cli_try_help(&o.cli);
		}
	}
	if (optind + 1 != argc)
		return ev_cli_usage_error(&o.cli, optind >= argc ? "no output directory" : "one output directory only");
	o.outdir = argv[optind];
	if (o.have_only && o.only >= o.ranks)
		return ev_cli_usage_error(&o.cli, "--only: rank %u is not below --ranks %u", o.only, o.ranks);
	if (o.gzip && strcmp(o.outdir, "-") == 0)
		return ev_cli_usage_error(&o.cli, "--gzip writes files; pipe standard output through gzip instead");
	return ev_cli_finish(&o.cli, run(&o));
}
