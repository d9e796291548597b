/* SPDX-License-Identifier: MIT */
/*
 * kineto_read.c - reading a Kineto document: each event becomes a record
 * (kernels, copies, runtime calls, ranges, marks, counters, collectives)
 * handed to the sorter; top-level members give the rank, world size, base
 * time and NCCL version.
 */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/flex.h"
#include "json/json_bytes.h"
#include "kineto/kineto_internal.h"

/* Largest communicator and rank numbers accepted from a trace: beyond
 * them the value is nonsense and readers would refuse the stream. */
#define MAX_GROUP (1 << 20)
#define MAX_RANK ((int64_t)1 << 24)

/* pid/tid may be numbers or names; names get a stable 31-bit number. */
static uint32_t span_id32(const struct ev_kspan *s, int *big)
{
	int64_t v;
	if (!s->type)
		return 0;
	if (ev_kspan_i64(s, &v) == 0) {
		if (v < 0 || v > UINT32_MAX) {
			*big = 1;
			return 0;
		}
		return (uint32_t)v;
	}
	return (uint32_t)(ev_hash64(s->p, s->n) & 0x7FFFFFFF);
}

static int intern_span(ev_kineto *k, const struct ev_kspan *s, uint64_t *id)
{
	if (s->type != '"' || !memchr(s->p, '\\', s->n))
		return ev_strtab_intern(k->st, s->p, s->n, id);
	char *buf = kineto_scratch(k, (size_t)s->n + 1);
	if (!buf)
		return EV_ERR_NOMEM;
	size_t n = ev_kspan_text(s, buf, (size_t)s->n + 1);
	if (n == (size_t)-1)
		return EV_ERR_FORMAT;
	return ev_strtab_intern(k->st, buf, n, id);
}

int kineto_comm_line(ev_kineto *k, const char *line)
{
	char *copy = strdup(line);
	char **slot = copy ? ev_vec_push(&k->comm_lines) : NULL;
	if (!slot) {
		free(copy);
		return EV_ERR_NOMEM;
	}
	*slot = copy;
	return EV_OK;
}

/* [p, end) of a JSON value without the whitespace between its tokens,
 * into out; the bytes written.  Strings keep theirs: an argument's type
 * "long int" or concrete value "[True, False]" is part of the op's
 * identity, as TraceLens groups by it. */
static size_t compact(const char *p, const char *end, char *out)
{
	char *o = out;
	int in_str = 0;
	for (; p < end; p++) {
		char c = *p;
		if (in_str) {
			*o++ = c;
			if (c == '\\' && p + 1 < end)
				*o++ = *++p;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			*o++ = c;
			in_str = 1;
		} else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			*o++ = c;
		}
	}
	return (size_t)(o - out);
}

/* cpu_op signature: name and the shape arguments, compact JSON. */
static int op_signature(ev_kineto *k, const struct ev_kevent *e, uint64_t *id)
{
	static const int fields[] = { EV_KA_INPUT_DIMS, EV_KA_INPUT_TYPE, EV_KA_INPUT_STRIDES, EV_KA_CONCRETE };
	static const char *const short_keys[] = { " dims=", " types=", " strides=", " concrete=" };
	const struct ev_kspan *nm = &e->f[EV_KF_NAME];
	size_t cap = 64 + (nm->type ? (size_t)nm->n : 0);
	for (size_t i = 0; i < 4; i++)
		cap += (e->f[fields[i]].type ? (size_t)e->f[fields[i]].n : 0) + 16;
	char *buf = kineto_scratch(k, cap);
	if (!buf)
		return EV_ERR_NOMEM;
	size_t o = 0;
	if (nm->type == '"' || nm->type == 'n') {
		size_t n = ev_kspan_text(nm, buf, cap);
		if (n == (size_t)-1)
			return EV_ERR_FORMAT;
		o = n;
	}
	for (size_t i = 0; i < 4; i++) {
		const struct ev_kspan *v = &e->f[fields[i]];
		if (!v->type)
			continue;
		/* A string value keeps its quotes, as the JSON text has them. */
		const char *p = v->type == '"' ? v->p - 1 : v->p, *end = v->type == '"' ? v->p + v->n + 1 : v->p + v->n;
		size_t kn = strlen(short_keys[i]);
		memcpy(buf + o, short_keys[i], kn);
		o += kn;
		o += compact(p, end, buf + o);
	}
	return ev_strtab_intern(k->st, buf, o, id);
}

static int comm_line(ev_kineto *k, uint64_t comm, const struct ev_kevent *e, int64_t group)
{
	if (ev_map_get(&k->comm_seen, comm ? comm : 1))
		return EV_OK;
	if (ev_map_put(&k->comm_seen, comm ? comm : 1, 1))
		return EV_ERR_NOMEM;
	char line[8192], tmp[4096], esc[8192];
	size_t o = (size_t)snprintf(line, sizeof line, "#comm %llu nranks=%lld", (unsigned long long)comm, (long long)group);
	const struct ev_kspan *v = &e->f[EV_KA_PG_RANKS];
	if (v->type && v->n < sizeof tmp) {
		/* "[0, 1, 2]" (a string) or [0, 1, 2]: keep the digits. */
		size_t n = 0, count = 0;
		int in_num = 0;
		for (uint32_t c = 0; c < v->n; c++) {
			char ch = v->p[c];
			if ((ch >= '0' && ch <= '9') || ch == '-') {
				if (!in_num && n)
					tmp[n++] = ',';
				if (!in_num)
					count++;
				tmp[n++] = ch;
				in_num = 1;
			} else {
				in_num = 0;
			}
		}
		tmp[n] = '\0';
		if (n && (int64_t)count == group)
			o += (size_t)snprintf(line + o, sizeof line - o, " ranks=%s", tmp);
	}
	static const int fields[] = { EV_KA_PG_NAME, EV_KA_PG_DESC };
	static const char *const keys[] = { "name", "desc" };
	for (int i = 0; i < 2; i++) {
		v = &e->f[fields[i]];
		if (v->type != '"')
			continue;
		size_t n = ev_kspan_text(v, tmp, sizeof tmp);
		if (n == (size_t)-1 || n == 0)
			continue;
		for (size_t c = 0; c < n; c++)
			if (tmp[c] == ' ')
				tmp[c] = '_';
		ev_text_escape(tmp, n, esc, sizeof esc);
		o += (size_t)snprintf(line + o, sizeof line - o, " %s=%s", keys[i], esc);
	}
	if (o >= sizeof line)
		return EV_OK;
	return kineto_comm_line(k, line);
}

/* NCCL arguments of a kernel -> a coll/p2p record after its kernel. */
static int nccl_record(ev_kineto *k, int fidx, const struct ev_kevent *e, const struct ev_rec *kr,
                       const struct kname_info *ni, char *err, size_t errn, uint64_t offset)
{
	struct ev_kineto_file *fi = &k->files[fidx];
	char buf[256];
	struct ev_rec r = *kr;
	r.flags = 0;
	r.id = kr->id;
	r.step = 0; /* the kernel's External id stays on the kernel record */
	r.step_size = 0; /* (the kernel's place in the trace; NCCL's stepSize here) */
	r.nthreads = kr->nthreads;
	if (!e->f[EV_KA_COLL_NAME].type) {
		/* No collective arguments (PyTorch <= 2.1): the writer completes
		 * this record from the kernel name and the nccl:* annotation. */
		r.type = ni->kn.coll == EV_OP_SENDRECV || ni->kn.coll == EV_OP_SEND || ni->kn.coll == EV_OP_RECV ? EV_P2P : EV_COLL;
		r.op = (uint8_t)ni->kn.coll;
		r.flags = KINETO_F_INFER;
		r.bytes = 0;
		r.aux = 0;
		r.sig = 0;
		(void)ev_nccl_kname_apply(&ni->kn, &r);
		fi->inferred_colls++;
		return ev_kineto_add(k, fidx, &r);
	}
	if (ev_kspan_text(&e->f[EV_KA_COLL_NAME], buf, sizeof buf) == (size_t)-1)
		return EV_OK;
	r.type = EV_COLL;
	r.op = (uint8_t)ev_torch_coll(buf);
	if (r.op == EV_OP_SEND || r.op == EV_OP_RECV)
		r.type = EV_P2P;
	int64_t nin = 0, nout = 0, group = 0;
	ev_kspan_i64(&e->f[EV_KA_IN_NELEMS], &nin);
	ev_kspan_i64(&e->f[EV_KA_OUT_NELEMS], &nout);
	if (e->f[EV_KA_GROUP_SIZE].type && ev_kspan_i64(&e->f[EV_KA_GROUP_SIZE], &group) == 0 &&
	    (group < 1 || group > MAX_GROUP)) {
		snprintf(err, errn, "byte %llu: Group size %lld is out of range (1 to %d)", (unsigned long long)offset,
		         (long long)group, MAX_GROUP);
		return EV_ERR_RANGE;
	}
	if (!e->f[EV_KA_GROUP_SIZE].type)
		fi->no_group_size++;
	if (e->f[EV_KA_DTYPE].type && ev_kspan_text(&e->f[EV_KA_DTYPE], buf, sizeof buf) != (size_t)-1)
		r.dtype = (uint8_t)ev_torch_dtype(buf);
	unsigned esize = ev_dtype_size(r.dtype);
	/* All-gather's message is its output; others are sized by the input. */
	int64_t nel = r.op == EV_OP_ALLGATHER ? nout : nin;
	r.bytes = nel > 0 ? (uint64_t)nel * (esize ? esize : 1) : 0;
	r.aux = group > 0 ? (uint32_t)group : 0;
	r.redop = r.op == EV_OP_ALLREDUCE || r.op == EV_OP_REDUCE || r.op == EV_OP_REDUCESCATTER ? EV_RED_SUM : 0;
	/* A communicator id from the process group's name (stable across ranks). */
	uint64_t comm = 0;
	if (e->f[EV_KA_PG_NAME].type)
		comm = ev_hash64(e->f[EV_KA_PG_NAME].p, e->f[EV_KA_PG_NAME].n);
	else if (e->f[EV_KA_PG_RANKS].type)
		comm = ev_hash64(e->f[EV_KA_PG_RANKS].p, e->f[EV_KA_PG_RANKS].n);
	r.comm = comm;
	if (ni->is_nccl)
		(void)ev_nccl_kname_apply(&ni->kn, &r);
	int rc = comm_line(k, comm, e, group);
	if (rc)
		return rc;
	fi->colls++;
	return ev_kineto_add(k, fidx, &r);
}

/* A memcpy's or memset's duration in ns as the profiler measured it,
 * from the trace's "memory bandwidth (GB/s)": Kineto writes bytes / ns in
 * full precision but the duration in whole microseconds (older traces), so
 * the bandwidth is the only exact account of the copy's time.  Kept (in
 * aux) only when bytes / ns gives the written bandwidth back exactly, so
 * that a reader recomputes the trace's own number; else 0, unknown. */
static uint32_t measured_ns(const struct ev_kspan *bw, uint64_t bytes)
{
	char buf[64], *end;
	if (bw->type != 'n' || !bytes || ev_kspan_text(bw, buf, sizeof buf) == (size_t)-1)
		return 0;
	double g = strtod(buf, &end);
	if (*end || !(g > 0))
		return 0;
	double ns = nearbyint((double)bytes / g);
	if (!(ns >= 1 && ns <= UINT32_MAX) || (double)bytes / ns != g)
		return 0;
	return (uint32_t)ns;
}

static int gpu_event(ev_kineto *k, int fidx, const struct ev_kevent *e, struct ev_rec *r, int cat, uint32_t uid1,
                     char *err, size_t errn, uint64_t offset)
{
	struct ev_kineto_file *fi = &k->files[fidx];
	const struct kname_info *ni = kineto_name_info(k, r->name);
	int64_t x;
	if (!ni)
		return EV_ERR_NOMEM;
	if (cat == 1) {
		r->type = EV_MEMCPY;
		r->op = ni->copy;
	} else if (cat == 2) {
		r->type = EV_MEMSET;
	} else {
		r->type = EV_KERNEL;
		r->op = ni->kclass;
	}
	/* Its own place in traceEvents + 1, as a cpu_op's aux: TraceLens
	 * numbers the synthetic ops of GPU events in their file order. */
	r->step_size = uid1;
	if (e->f[EV_KA_STREAM].type && ev_kspan_i64(&e->f[EV_KA_STREAM], &x) == 0) {
		if (x < 0 || x > UINT32_MAX)
			fi->big_stream++;
		else
			r->stream = (uint32_t)x;
	}
	if (ev_kspan_i64(&e->f[EV_KA_CORRELATION], &x) == 0)
		r->id = (uint32_t)x;
	if (ev_kspan_i64(&e->f[EV_KA_EXTERNAL_ID], &x) == 0)
		r->step = (uint32_t)x; /* resolved to the op on output */
	if (ev_kspan_i64(&e->f[EV_KA_BYTES], &x) == 0 && x > 0)
		r->bytes = (uint64_t)x;
	if (r->type != EV_KERNEL)
		r->aux = measured_ns(&e->f[EV_KA_MEM_BW], r->bytes);
	if (ev_kspan_i64(&e->f[EV_KA_DEVICE], &x) == 0)
		fi->device = x;
	if (e->f[EV_KA_BLOCK].type == '[') {
		/* [x, y, z]: the first number is the threads per block. */
		struct ev_kspan v = e->f[EV_KA_BLOCK];
		const char *p = v.p + 1, *end = v.p + v.n;
		while (p < end && (*p == ' ' || *p == '\n'))
			p++;
		struct ev_kspan n0 = { .p = p, .n = 0, .type = 'n' };
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		n0.n = (uint32_t)(p - n0.p);
		if (ev_kspan_i64(&n0, &x) == 0 && x > 0 && x < 65536)
			r->nthreads = (uint16_t)x;
	}
	if (e->f[EV_KA_GRID].type == '[') {
		struct ev_kspan v = e->f[EV_KA_GRID];
		const char *p = v.p + 1, *end = v.p + v.n;
		uint64_t g = 1;
		for (int i = 0; i < 3 && p < end; i++) {
			while (p < end && (*p == ' ' || *p == ',' || *p == '\n'))
				p++;
			struct ev_kspan n0 = { .p = p, .n = 0, .type = 'n' };
			while (p < end && *p >= '0' && *p <= '9')
				p++;
			n0.n = (uint32_t)(p - n0.p);
			if (ev_kspan_i64(&n0, &x) == 0 && x > 0 && g <= UINT32_MAX)
				g *= (uint64_t)x;
		}
		r->aux = g > UINT32_MAX ? UINT32_MAX : (uint32_t)g;
	}
	fi->gpu_events++;
	if (r->type != EV_KERNEL)
		return ev_kineto_add(k, fidx, r);
	fi->kernels++;
	int rc = ev_kineto_add(k, fidx, r);
	r->comm = 0; /* (the flow key, not the collective's) */
	/* Old traces: a kernel name that states its collective is enough. */
	if (rc == EV_OK && r->op == EV_KC_COMM &&
	    (e->f[EV_KA_COLL_NAME].type || (ni->is_nccl && (ni->kn.known & EV_NCCL_K_COLL) && ni->kn.coll)))
		rc = nccl_record(k, fidx, e, r, ni, err, errn, offset);
	return rc;
}

/* B/E pairs: each (input, pid, tid) has a stack of open ranges, linked
 * through `below`; closed slots go on a free list, so memory is bounded by
 * the open ranges at any moment; what is open at the end of an input is
 * counted and dropped. */
int kineto_open_range(ev_kineto *k, int fidx, uint64_t key, const struct ev_rec *r)
{
	struct open_range *o;
	uint64_t idx;
	if (k->free_slot >= 0) {
		idx = (uint64_t)k->free_slot;
		o = (struct open_range *)k->stack_store.data + idx;
		k->free_slot = o->below;
	} else {
		o = ev_vec_push(&k->stack_store);
		if (!o)
			return EV_ERR_NOMEM;
		idx = k->stack_store.len - 1;
	}
	uint64_t *top = ev_map_get(&k->stacks, key);
	o->key = key;
	o->ts = r->ts;
	o->name = r->name;
	o->stream = r->stream;
	o->file = fidx;
	o->below = top && *top ? (int64_t)(*top - 1) : -1;
	k->open_b++;
	return ev_map_put(&k->stacks, key, idx + 1);
}

int kineto_close_range(ev_kineto *k, int fidx, uint64_t key, struct ev_rec *r)
{
	uint64_t *top = ev_map_get(&k->stacks, key);
	if ((!top || *top == 0) && k->collect) {
		/* A second half's E whose B may be in the first: for the merge. */
		struct kdefer *d = ev_vec_push(&k->defer);
		if (!d)
			return -1;
		*d = (struct kdefer){ k->recs.len, key, *r };
		return 0;
	}
	if (!top || *top == 0)
		return 1; /* an E without its B */
	uint64_t idx = *top - 1;
	struct open_range *o = (struct open_range *)k->stack_store.data + idx;
	r->type = EV_RANGE;
	r->op = EV_RG_OTHER;
	r->name = o->name;
	if (r->ts < o->ts)
		k->files[fidx].neg_dur++;
	r->dur = r->ts >= o->ts ? (uint64_t)(r->ts - o->ts) : 0;
	r->ts = o->ts;
	r->stream = o->stream;
	*top = o->below >= 0 ? (uint64_t)o->below + 1 : 0;
	o->below = k->free_slot;
	k->free_slot = (int64_t)idx;
	k->open_b--;
	return ev_kineto_add(k, fidx, r) ? -1 : 0;
}

/* At the end of an input: drop (and count) its begins without an end. */
static void drop_open_ranges(ev_kineto *k, int fidx)
{
	if (!k->open_b)
		return;
	for (size_t m = 0; m < k->stacks.cap; m++) {
		if (!k->stacks.keys[m] || !k->stacks.vals[m])
			continue;
		uint64_t top = k->stacks.vals[m];
		struct open_range *o = (struct open_range *)k->stack_store.data + (top - 1);
		if (o->file != fidx)
			continue;
		while (top) {
			o = (struct open_range *)k->stack_store.data + (top - 1);
			uint64_t below = o->below >= 0 ? (uint64_t)o->below + 1 : 0;
			o->below = k->free_slot;
			k->free_slot = (int64_t)(top - 1);
			k->files[fidx].unmatched_b++;
			k->open_b--;
			top = below;
		}
		k->stacks.vals[m] = 0;
	}
}

/* Category words of Kineto events. */
enum { C_OTHER, C_KERNEL, C_MEMCPY, C_MEMSET, C_RUNTIME, C_DRIVER, C_CPU_OP, C_USER, C_GPU_USER, C_PYTHON, C_SYNC, C_FLOW, C_FWDBWD };

static int category(const struct ev_kspan *c)
{
	if (c->type != '"')
		return C_OTHER;
	switch (c->n) {
	case 4: return !memcmp(c->p, "ac2g", 4) ? C_FLOW : C_OTHER;
	case 6: return !memcmp(c->p, "kernel", 6) ? C_KERNEL : !memcmp(c->p, "cpu_op", 6) ? C_CPU_OP
	             : !memcmp(c->p, "fwdbwd", 6) ? C_FWDBWD : C_OTHER;
	case 9: return !memcmp(c->p, "cuda_sync", 9) ? C_SYNC : C_OTHER;
	case 10: return !memcmp(c->p, "gpu_memcpy", 10) ? C_MEMCPY : !memcmp(c->p, "gpu_memset", 10) ? C_MEMSET : C_OTHER;
	case 11: return !memcmp(c->p, "cuda_driver", 11) ? C_DRIVER : C_OTHER;
	case 12: return !memcmp(c->p, "cuda_runtime", 12) ? C_RUNTIME : C_OTHER;
	case 15: return !memcmp(c->p, "user_annotation", 15) ? C_USER : !memcmp(c->p, "python_function", 15) ? C_PYTHON : C_OTHER;
	case 19: return !memcmp(c->p, "gpu_user_annotation", 19) ? C_GPU_USER : C_OTHER;
	default: return C_OTHER;
	}
}

/* A cuda_sync event (Stream Sync, Event Sync, Context Sync, Stream Wait
 * Event): what a critical path needs to join it to its calls, kept in
 * fields a range leaves unused (docs/FORMAT.md): id = the runtime call's
 * correlation, peer = the stream the CUDA event was recorded on, aux = the
 * correlation of its cudaEventRecord (0 unknown). */
static void sync_record(const struct ev_kevent *e, struct ev_rec *r)
{
	int64_t x;
	r->op = EV_RG_OTHER;
	if (ev_kspan_i64(&e->f[EV_KA_CORRELATION], &x) == 0 && x > 0 && x <= UINT32_MAX)
		r->id = (uint32_t)x;
	if (ev_kspan_i64(&e->f[EV_KA_WAIT_STREAM], &x) == 0 && x >= 0 && x <= INT32_MAX)
		r->peer = (int32_t)x;
	if (ev_kspan_i64(&e->f[EV_KA_WAIT_CORR], &x) == 0 && x > 0 && x <= UINT32_MAX)
		r->aux = (uint32_t)x;
}

/* nccl:* annotation of an old trace: its first input's element count times
 * its element size, kept on the range for the writer (see link_record). */
static void annotation_bytes(const struct ev_kevent *e, struct ev_rec *r)
{
	const struct ev_kspan *d = &e->f[EV_KA_INPUT_DIMS], *t = &e->f[EV_KA_INPUT_TYPE];
	if (d->type != '[')
		return;
	/* [[a, b, ...], ...]: the first inner list's product. */
	const char *p = d->p + 1, *end = d->p + d->n;
	while (p < end && *p != '[' && *p != ']')
		p++;
	if (p >= end || *p != '[')
		return;
	p++;
	uint64_t nel = 1;
	int any = 0;
	while (p < end && *p != ']') {
		if (*p >= '0' && *p <= '9') {
			uint64_t v = 0;
			while (p < end && *p >= '0' && *p <= '9' && v < (1ull << 50))
				v = v * 10 + (uint64_t)(*p++ - '0');
			nel = nel < (1ull << 62) / (v ? v : 1) ? nel * v : nel;
			any = 1;
		} else {
			p++;
		}
	}
	if (!any)
		return;
	char ty[64] = "";
	if (t->type == '[') {
		const char *q = memchr(t->p, '"', t->n);
		const char *qe = q ? memchr(q + 1, '"', (size_t)(t->p + t->n - q - 1)) : NULL;
		if (q && qe && (size_t)(qe - q - 1) < sizeof ty) {
			memcpy(ty, q + 1, (size_t)(qe - q - 1));
			ty[qe - q - 1] = '\0';
		}
	}
	unsigned dt = ev_torch_dtype(ty);
	r->bytes = nel * (ev_dtype_size(dt) ? ev_dtype_size(dt) : 1);
	r->dtype = (uint8_t)dt;
}

static int scan_error(ev_kineto *k, int rc, uint64_t offset, char *err, size_t errn)
{
	if (rc == EV_ERR_RANGE) {
		snprintf(err, errn, "byte %llu: event has more than %u JSON tokens (--max-tokens)", (unsigned long long)offset,
		         k->o.max_tokens);
		return EV_ERR_LIMIT;
	}
	if (rc == EV_ERR_LIMIT) {
		snprintf(err, errn, "byte %llu: JSON nested deeper than %d levels in an event", (unsigned long long)offset,
		         EV_JSON_MAX_DEPTH);
		return EV_ERR_LIMIT;
	}
	snprintf(err, errn, "byte %llu: invalid JSON in an event", (unsigned long long)offset);
	return EV_ERR_FORMAT;
}

/* An ac2g flow end ('s' at the call, 'f' at its GPU event) to a record
 * the writer only reads (KINETO_T_FLOW), for TraceLens's way of joining
 * a GPU event to its call.  An 'f' goes 1 ns before its ts: Kineto gives
 * it the GPU event's own ts and writes it after that event, and it must
 * be known when the event is linked.  One without an integer id or ts
 * joins nothing for TraceLens either: passed over, as flows were.  A
 * fwdbwd end (forward op to its backward op) likewise, as 'S' and 'F':
 * the 'S' after its op (same ts, written after it), the 'F' before the
 * backward op it starts, whose record must carry the link. */
static int flow_event(ev_kineto *k, int fidx, const struct ev_kevent *e, char phc, int fwdbwd)
{
	struct ev_rec r;
	int64_t x;
	int big = 0;
	ev_rec_init(&r);
	if (ev_kspan_i64(&e->f[EV_KF_ID], &x) != 0 || x < 0 || x > UINT32_MAX ||
	    ev_kspan_us_to_ns(&e->f[EV_KF_TS], &r.ts) != 0)
		return EV_OK;
	r.type = KINETO_T_FLOW;
	r.op = (uint8_t)phc;
	r.id = (uint32_t)x;
	uint32_t tid = span_id32(&e->f[EV_KF_TID], &big), pid = span_id32(&e->f[EV_KF_PID], &big);
	r.stream = tid;
	r.comm = kineto_key2(pid, tid);
	if (phc == 'f' && r.ts > INT64_MIN)
		r.ts--;
	if (fwdbwd)
		r.op = phc == 's' ? 'S' : 'F';
	return ev_kineto_add(k, fidx, &r);
}

int ev_kineto_event(ev_kineto *k, int fidx, const char *text, size_t len, uint64_t offset, char *err, size_t errn)
{
	struct ev_kevent e;
	int rc = ev_kineto_scan_event(text, len, k->o.max_tokens, &e);
	if (rc)
		return scan_error(k, rc, offset, err, errn);
	return kineto_process(k, fidx, &e, offset, err, errn);
}

/* One scanned event to records. */
int kineto_process(ev_kineto *k, int fidx, struct ev_kevent *ep, uint64_t offset, char *err, size_t errn)
{
	struct ev_kineto_file *fi = &k->files[fidx];
	struct ev_kevent *e = ep;
	int rc;
	(void)rc;
	/* Its place in traceEvents + 1 (0 unknown, past 32 bits): TraceLens
	 * numbers every element so, and calls that its UID. */
	uint64_t place = ++fi->elements;
	uint32_t uid1 = place <= UINT32_MAX ? (uint32_t)place : 0;
	if (!e->is_object) {
		fi->skipped++;
		return EV_OK;
	}
	fi->events++;
	char phc = e->f[EV_KF_PH].type == '"' && e->f[EV_KF_PH].n ? e->f[EV_KF_PH].p[0] : '?';
	int cat = category(&e->f[EV_KF_CAT]);
	if (e->f[EV_KF_ARGS].type != '{')
		ev_kevent_clear(e, EV_KF_ARGS);
	if ((phc == 's' || phc == 'f') && (cat == C_FLOW || cat == C_FWDBWD) && k->o.flow_links)
		return flow_event(k, fidx, e, phc, cat == C_FWDBWD);
	if (phc == 'M') {
		int big = 0;
		uint32_t pid = span_id32(&e->f[EV_KF_PID], &big), tid = span_id32(&e->f[EV_KF_TID], &big);
		return big ? EV_OK : kineto_metadata_event(k, fidx, e, pid, tid);
	}
	if (phc == 's' || phc == 'f' || phc == 't' || phc == 'P' || phc == 'N' || phc == 'O' || phc == 'D')
		return EV_OK;
	struct ev_rec r;
	ev_rec_init(&r);
	if ((rc = ev_kspan_us_to_ns(&e->f[EV_KF_TS], &r.ts)) != 0) {
		if (rc == EV_ERR_RANGE)
			snprintf(err, errn, "byte %llu: ts out of range (microseconds beyond 2^63 ns)", (unsigned long long)offset);
		else
			snprintf(err, errn, "byte %llu: event without a numeric ts", (unsigned long long)offset);
		return EV_ERR_FORMAT;
	}
	if (r.ts > 1000000000000000000LL)
		k->absolute_ts = 1;
	if (e->f[EV_KF_DUR].type) {
		int64_t d;
		if ((rc = ev_kspan_us_to_ns(&e->f[EV_KF_DUR], &d)) != 0) {
			snprintf(err, errn, rc == EV_ERR_RANGE ? "byte %llu: dur out of range (microseconds beyond 2^63 ns)"
			                                       : "byte %llu: dur is not a number", (unsigned long long)offset);
			return EV_ERR_FORMAT;
		}
		if (d < 0)
			fi->neg_dur++;
		r.dur = d > 0 ? (uint64_t)d : 0;
	}
	if (e->f[EV_KF_NAME].type == '"' || e->f[EV_KF_NAME].type == 'n') {
		rc = intern_span(k, &e->f[EV_KF_NAME], &r.name);
		if (rc) {
			snprintf(err, errn, "byte %llu: %s in the event name", (unsigned long long)offset,
			         rc == EV_ERR_COLLISION ? "string id collision" : rc == EV_ERR_NOMEM ? "out of memory" : "bad escape");
			return rc == EV_ERR_NOMEM ? rc : EV_ERR_FORMAT;
		}
	}
	int big = 0;
	uint32_t tidv = span_id32(&e->f[EV_KF_TID], &big), pidv = span_id32(&e->f[EV_KF_PID], &big);
	r.stream = tidv;
	int64_t x;
	if (fi->pid < 0 && cat == C_CPU_OP && ev_kspan_i64(&e->f[EV_KF_PID], &x) == 0)
		fi->pid = x;
	/* The CPU threads of the records, named by #thread lines. */
	if ((cat == C_CPU_OP || cat == C_USER || cat == C_RUNTIME || cat == C_DRIVER || (cat == C_PYTHON && k->o.python)) &&
	    !big && (rc = kineto_note_thread(k, fidx, pidv, tidv, cat == C_CPU_OP)) != EV_OK)
		return rc;
	if (phc == 'X') {
		if (cat == C_KERNEL || cat == C_MEMCPY || cat == C_MEMSET) {
			r.comm = kineto_key2(pidv, tidv); /* for its flow; cleared by the writer */
			return gpu_event(k, fidx, e, &r, cat == C_KERNEL ? 0 : cat == C_MEMCPY ? 1 : 2, uid1, err, errn,
			                 offset);
		}
		if (big)
			fi->big_stream++;
		if (cat == C_RUNTIME || cat == C_DRIVER) {
			r.type = EV_API;
			r.op = cat == C_DRIVER ? EV_API_DRIVER : EV_API_RUNTIME;
			if (ev_kspan_i64(&e->f[EV_KA_CORRELATION], &x) == 0)
				r.id = (uint32_t)x;
			if (ev_kspan_i64(&e->f[EV_KA_EXTERNAL_ID], &x) == 0)
				r.step = (uint32_t)x; /* for linking only; cleared on output */
			r.aux = uid1;
			return ev_kineto_add(k, fidx, &r);
		}
		r.type = EV_RANGE;
		if (cat == C_CPU_OP) {
			r.op = EV_RG_CPU_OP;
			if ((rc = op_signature(k, e, &r.sig)) != EV_OK)
				return rc;
			if (ev_kspan_i64(&e->f[EV_KA_EXTERNAL_ID], &x) == 0)
				r.id = (uint32_t)x;
			r.aux = uid1;
		} else if (cat == C_USER) {
			const struct kname_info *ni = kineto_name_info(k, r.name);
			if (!ni)
				return EV_ERR_NOMEM;
			r.op = ni->step ? EV_RG_STEP : EV_RG_USER;
			if (ni->nvtx_coll) {
				/* nccl:all_reduce and the like: the collective and its
				 * size travel to the writer (cleared there). */
				r.aux = ni->nvtx_coll;
				annotation_bytes(e, &r);
			}
		} else if (cat == C_GPU_USER) {
			r.op = EV_RG_GPU_USER;
		} else if (cat == C_SYNC) {
			sync_record(e, &r);
		} else if (cat == C_PYTHON) {
			if (!k->o.python)
				return EV_OK;
			r.op = EV_RG_PYTHON;
		} else {
			r.op = EV_RG_OTHER;
		}
		return ev_kineto_add(k, fidx, &r);
	}
	if (phc == 'i' || phc == 'I' || phc == 'R' || phc == 'n') {
		r.type = EV_MARK;
		r.op = EV_RG_OTHER;
		r.dur = 0;
		return ev_kineto_add(k, fidx, &r);
	}
	if (phc == 'B' || phc == 'E') {
		uint64_t key = kineto_key2(((uint64_t)fidx << 32) | pidv, tidv);
		if (phc == 'B')
			return kineto_open_range(k, fidx, key, &r);
		rc = kineto_close_range(k, fidx, key, &r);
		if (rc > 0) {
			fi->unmatched_e++;
			fi->skipped++;
		}
		return rc < 0 ? EV_ERR_NOMEM : EV_OK;
	}
	if (phc == 'C' && e->f[EV_KF_ARGS].type == '{')
		return kineto_counters(k, fidx, &e->f[EV_KF_ARGS], &r);
	fi->skipped++;
	return EV_OK;
}

/* baseTimeNanoseconds: an integer number of ns (a number or a numeric
 * string, exponent notation allowed) from 0 to 2^63-1; null is no base.
 * Anything else is an error: ignoring it would mix trace-relative and
 * Unix times between ranks without a word. */
static int base_time(struct ev_kineto_file *fi, const char *text, size_t len, char *err, size_t errn)
{
	if (len == 4 && memcmp(text, "null", 4) == 0)
		return EV_OK;
	int quoted = len >= 2 && text[0] == '"' && text[len - 1] == '"';
	struct ev_kspan s = { .p = quoted ? text + 1 : text, .n = (uint32_t)(quoted ? len - 2 : len),
	                      .type = quoted ? '"' : 'n' };
	int64_t v;
	int numeric = s.n > 0 && (s.p[0] == '-' || (s.p[0] >= '0' && s.p[0] <= '9'));
	for (uint32_t i = 0; numeric && i < s.n; i++)
		numeric = strchr("0123456789+-.eE", s.p[i]) != NULL;
	int shown = len > 40 ? 40 : (int)len;
	if (!numeric || ev_kspan_i64(&s, &v) != 0) {
		if (!numeric)
			snprintf(err, errn, "baseTimeNanoseconds %.*s%s is not a number of nanoseconds", shown, text,
			         shown < (int)len ? "..." : "");
		else
			snprintf(err, errn, "baseTimeNanoseconds %.*s%s is not a number of nanoseconds from 0 to 2^63-1",
			         shown, text, shown < (int)len ? "..." : "");
		return EV_ERR_RANGE;
	}
	if (v < 0) {
		snprintf(err, errn, "baseTimeNanoseconds %.*s is not a Unix time (negative)", shown, text);
		return EV_ERR_RANGE;
	}
	fi->base_ns = v;
	fi->have_base = 1;
	return EV_OK;
}

int ev_kineto_top(ev_kineto *k, int fidx, const char *key, size_t key_len, const char *text, size_t len, char *err,
                  size_t errn)
{
	struct ev_kineto_file *fi = &k->files[fidx];
	if (key_len == 19 && memcmp(key, "baseTimeNanoseconds", 19) == 0)
		return base_time(fi, text, len, err, errn);
	if (key_len == 15 && memcmp(key, "distributedInfo", 15) == 0)
		return kineto_distributed_info(k, fidx, text, len);
	if (key_len == 16 && memcmp(key, "deviceProperties", 16) == 0)
		return kineto_device_properties(k, fidx, text, len);
	return EV_OK;
}

int ev_kineto_rank_from_path(const char *path, int64_t *rank)
{
	regex_t re;
	if (regcomp(&re, "(rank|worker)[-_]?([0-9]+)", REG_EXTENDED | REG_ICASE))
		return 1;
	int found = 0, ambiguous = 0, best_is_rank = 0;
	int64_t best = 0;
	const char *p = path;
	regmatch_t m[3];
	/* The last "rank" match counts (directories come first); "worker" only
	 * when there is no "rank"; different numbers make it ambiguous. */
	while (regexec(&re, p, 3, m, 0) == 0) {
		char buf[24];
		int len = (int)(m[2].rm_eo - m[2].rm_so);
		int is_rank = (p[m[1].rm_so] | 0x20) == 'r';
		int64_t v;
		if (len < (int)sizeof buf) {
			memcpy(buf, p + m[2].rm_so, (size_t)len);
			buf[len] = '\0';
			if (ev_parse_i64(buf, &v) == 0) {
				if (found && v != best)
					ambiguous = 1;
				if (!found || is_rank || !best_is_rank) {
					best = v;
					best_is_rank = is_rank;
				}
				found = 1;
			}
		}
		p += m[0].rm_eo;
	}
	regfree(&re);
	if (!found)
		return 1;
	*rank = best;
	return ambiguous ? 2 : 0;
}

/* Only these top-level members are copied; the others (a rocprof tool's
 * whole trace...) are scanned past whatever their size. */
static int wanted_member(void *ctx, const char *key, size_t len)
{
	(void)ctx;
	return (len == 15 && memcmp(key, "distributedInfo", 15) == 0) ||
	       (len == 16 && memcmp(key, "deviceProperties", 16) == 0) ||
	       (len == 19 && memcmp(key, "baseTimeNanoseconds", 19) == 0) ||
	       (len == 9 && memcmp(key, "otherData", 9) == 0);
}

/* IBM AIU (Flex) JSON looks like a Chrome trace but is another dialect:
 * its first events are also shown to the dialect sniffer, on the same
 * read (a pipe cannot be read twice), until it is sure of Kineto or has
 * seen SNIFF_EVENTS of them. */
#define SNIFF_EVENTS 1000
#define SNIFF_TOKENS 4096

struct sniffing {
	struct ev_flex_sniff s;
	struct ev_json_tok *toks;
	int on;
};

/* 1 when the events seen so far are Flex's beyond doubt. */
static int sniff_event(struct sniffing *sn, const char *text, size_t len)
{
	if (!sn->on)
		return 0;
	int nt = ev_json_tokenize(text, len, sn->toks, SNIFF_TOKENS);
	if (nt < 0)
		return 0; /* a huge or odd event decides nothing */
	ev_flex_sniff_event(&sn->s, text, sn->toks, 0);
	enum ev_dialect d = ev_flex_sniff_verdict(&sn->s);
	if (d == EV_DIALECT_KINETO || sn->s.events >= SNIFF_EVENTS) {
		sn->on = 0;
		return d == EV_DIALECT_FLEX;
	}
	return 0;
}

static int flex_error(const struct sniffing *sn, char *err, size_t errn)
{
	char what[400];
	ev_flex_sniff_describe(&sn->s, what, sizeof what);
	snprintf(err, errn, "this is an IBM AIU (Flex) trace, not a PyTorch profiler trace: convert it with flex2ev (%s)",
	         what);
	return EV_ERR_FORMAT;
}

int ev_kineto_read(ev_kineto *k, int fidx, ev_input *in, char *err, size_t errn)
{
	struct ev_kineto_file *fi = &k->files[fidx];
	ev_json *j;
	*err = '\0';
	struct sniffing sn = { .toks = malloc(SNIFF_TOKENS * sizeof *sn.toks), .on = 1 };
	ev_flex_sniff_init(&sn.s);
	if (!sn.toks || ev_json_open(&j, in, "traceEvents", k->o.max_object) != EV_OK) {
		free(sn.toks);
		return EV_ERR_NOMEM;
	}
	ev_json_want(j, wanted_member, NULL);
	struct ev_json_item it;
	struct khalf *half = NULL;
	uint64_t seam = 0;
	int rc = kineto_half_start(k, fidx, in, &half, &seam);
	for (; rc == EV_OK;) {
		/* Most events are parsed where they lie in the input buffer, in one
		 * pass; one that runs past the buffered text (or is invalid) goes
		 * the general way, copied whole by ev_json_next, then scanned. */
		const char *text;
		size_t len, used;
		uint64_t off, stop;
		int elem;
		if (ev_json_peek(j, &text, &len, &off)) {
			if (half && off >= seam) {
				/* The second half's first event, confirmed (once the
				 * dialect is sure): on where it stopped. */
				if (off == seam && !sn.on && (rc = kineto_half_join(k, fidx, half, &stop, &elem)) == EV_OK)
					rc = ev_json_jump(j, stop, elem);
				kineto_half_drop(half);
				half = NULL;
				if (rc != EV_OK)
					break;
				continue;
			}
			struct ev_kevent e;
			if (ev_kineto_scan_prefix(text, len, k->o.max_tokens, &e, &used) == EV_OK && used < len) {
				if (sniff_event(&sn, text, used)) {
					rc = flex_error(&sn, err, errn);
					break;
				}
				if ((rc = kineto_process(k, fidx, &e, off, err, errn)) != EV_OK)
					break;
				if ((rc = ev_json_consume(j, used)) != EV_OK)
					break;
				continue;
			}
		}
		if ((rc = ev_json_next(j, &it)) <= 0)
			break;
		if (it.kind == EV_JSON_TOP) {
			if (it.key_len == 20 && memcmp(it.key, "rocprofiler-sdk-tool", 20) == 0)
				fi->dialect = "rocprofv3";
			else if (it.key_len == 5 && memcmp(it.key, "nodes", 5) == 0)
				fi->dialect = "et";
			else if (it.key_len == 9 && memcmp(it.key, "otherData", 9) == 0 &&
			         (fi->processed = ev_processed_producer(it.text, it.len)) != NULL)
				break;
			ev_flex_sniff_top(&sn.s, it.key, it.key_len, it.text, it.len);
			if ((rc = ev_kineto_top(k, fidx, it.key, it.key_len, it.text, it.len, err, errn)) != EV_OK)
				break;
			continue;
		}
		if (half && it.offset >= seam) {
			/* As above, for an event read whole: the second half's
			 * first one, unless it left that one to this half. */
			int took = 0;
			if (it.offset == seam && !sn.on && (rc = kineto_half_join(k, fidx, half, &stop, &elem)) == EV_OK &&
			    stop != seam) {
				took = 1;
				if (ev_json_in_array(j)) /* (not when that event was the last) */
					rc = ev_json_jump(j, stop, elem);
			}
			kineto_half_drop(half);
			half = NULL;
			if (rc != EV_OK)
				break;
			if (took)
				continue;
		}
		if (sniff_event(&sn, it.text, it.len)) {
			rc = flex_error(&sn, err, errn);
			break;
		}
		if ((rc = ev_kineto_event(k, fidx, it.text, it.len, it.offset, err, errn)) != EV_OK)
			break;
	}
	kineto_half_drop(half);
	/* Fewer events than the sniffer wanted: its verdict on all of them. */
	if (rc >= 0 && sn.on && ev_flex_sniff_verdict(&sn.s) == EV_DIALECT_FLEX)
		rc = flex_error(&sn, err, errn);
	free(sn.toks);
	if (rc < 0 && !*err)
		snprintf(err, errn, "%s", ev_json_errdetail(j));
	ev_json_close(j);
	drop_open_ranges(k, fidx);
	if (rc >= 0 && fi->dialect && fi->events == 0) {
		if (!strcmp(fi->dialect, "et"))
			snprintf(err, errn, "a PyTorch execution trace (ExecutionTraceObserver: \"nodes\", no traceEvents) is "
			         "not a Kineto trace; convert the profiler trace recorded beside it");
		else
			snprintf(err, errn, "rocprof JSON (%s, rocprofiler-sdk-tool) is not a Kineto trace: convert it with "
			         "rocprof2ev", fi->dialect);
		return EV_ERR_FORMAT;
	}
	if (rc >= 0 && fi->processed) {
		/* Converting a view back loses what made it (links, ops, sizes)
		 * and would answer every analysis with less, without a word. */
		if (!strcmp(fi->processed, "ev2perfetto"))
			snprintf(err, errn, "this is ev2perfetto's output (a Perfetto view of an ev stream), not a "
			         "profiler trace: use the ev stream it was made from");
		else
			snprintf(err, errn, "this is Acelyzer's processed output, not a profiler trace: convert the raw "
			         "AIU trace with flex2ev");
		return EV_ERR_FORMAT;
	}
	if (rc >= 0 && (fi->rank < -1 || fi->rank > MAX_RANK)) {
		snprintf(err, errn, "distributedInfo: rank %lld is out of range (0 to %lld)", (long long)fi->rank,
		         (long long)MAX_RANK);
		return EV_ERR_RANGE;
	}
	if (rc >= 0 && fi->have_base && fi->last_end > 0 && fi->base_ns > INT64_MAX - fi->last_end) {
		/* Every time is base + ts: past 2^63-1 ns (year 2262) it would
		 * wrap round to negative times. */
		snprintf(err, errn, "baseTimeNanoseconds %lld + the last event's end (%lld ns) passes 2^63-1 ns "
		         "(year 2262): not a Unix time in nanoseconds", (long long)fi->base_ns, (long long)fi->last_end);
		return EV_ERR_RANGE;
	}
	if (rc >= 0 && (fi->world < 0 || fi->world > MAX_GROUP)) {
		snprintf(err, errn, "distributedInfo: world_size %lld is out of range (1 to %d)", (long long)fi->world,
		         MAX_GROUP);
		return EV_ERR_RANGE;
	}
	return rc < 0 ? rc : EV_OK;
}
