/* SPDX-License-Identifier: MIT */
/*
 * kineto_conv.c - Kineto events to ev records.
 *
 * Reading maps each event to a record (one pass over its JSON, see
 * kineto_event.c) and hands it to the external sorter; nothing about
 * links is kept while reading.  Links are made while the sorted records
 * are written, in time order, where each one is short-lived: a cpu_op is
 * open on its thread's stack until it ends; a runtime call takes the
 * innermost op open on its thread and is remembered (by correlation id)
 * in a window of recent calls until its kernels run; a kernel takes its
 * call's op.  So memory is fixed by the window and the nesting depth, not
 * by the size of the trace.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/kineto.h"
#include "ev/nccl.h"
#include "kineto/kineto_internal.h"
#include "kineto/kineto_window.h"

int ev_kineto_new(ev_kineto **out, const struct ev_kineto_opts *o, int nfiles)
{
	ev_kineto *k = calloc(1, sizeof *k);
	*out = NULL;
	if (!k)
		return EV_ERR_NOMEM;
	k->o = *o;
	if (!k->o.max_object)
		k->o.max_object = 16u << 20;
	k->st = ev_strtab_new();
	k->files = calloc(nfiles > 0 ? (size_t)nfiles : 1, sizeof *k->files);
	k->nfiles = nfiles;
	ev_map_init(&k->names);
	ev_vec_init(&k->name_info, sizeof(struct kname_info));
	ev_map_init(&k->seq);
	ev_map_init(&k->overrun);
	ev_map_init(&k->stacks);
	ev_map_init(&k->comm_seen);
	ev_map_init(&k->opstack_of);
	ev_vec_init(&k->opstacks, sizeof(struct opstack));
	ev_vec_init(&k->stack_store, sizeof(struct open_range));
	ev_vec_init(&k->comm_lines, sizeof(char *));
	ev_map_init(&k->meta_of);
	ev_vec_init(&k->meta_names, sizeof(struct kname_meta));
	ev_map_init(&k->thread_of);
	ev_vec_init(&k->threads, sizeof(struct kthread));
	ev_vec_init(&k->recs, sizeof(struct ev_rec));
	ev_vec_init(&k->defer, sizeof(struct kdefer));
	uint32_t win = o->link_window ? o->link_window : 65536;
	kwin_init(&k->calls, win);
	kwin_init(&k->ops, win);
	kwin_init(&k->flows, win);
	kwin_init(&k->fwdbwd, win);
	k->free_slot = -1;
	if (!k->st || !k->files || ev_sorter_open(&k->sorter, o->sort_bytes, o->tmpdir) != EV_OK) {
		ev_kineto_free(k);
		return EV_ERR_NOMEM;
	}
	for (int i = 0; i < nfiles; i++) {
		k->files[i].rank = -1;
		k->files[i].pid = -1;
		k->files[i].device = -1;
	}
	*out = k;
	return EV_OK;
}

void ev_kineto_free(ev_kineto *k)
{
	if (!k)
		return;
	ev_clipper_free(k->clipper);
	ev_sorter_close(k->sorter);
	for (size_t i = 0; i < k->comm_lines.len; i++)
		free(((char **)k->comm_lines.data)[i]);
	for (size_t i = 0; i < k->opstacks.len; i++)
		ev_vec_free(&((struct opstack *)k->opstacks.data)[i].ops);
	ev_vec_free(&k->opstacks);
	ev_vec_free(&k->comm_lines);
	for (size_t i = 0; i < k->meta_names.len; i++)
		free(((struct kname_meta *)k->meta_names.data)[i].text);
	ev_vec_free(&k->meta_names);
	ev_map_free(&k->meta_of);
	ev_vec_free(&k->threads);
	ev_vec_free(&k->recs);
	ev_vec_free(&k->defer);
	ev_map_free(&k->thread_of);
	ev_vec_free(&k->stack_store);
	ev_vec_free(&k->name_info);
	ev_map_free(&k->names);
	ev_map_free(&k->seq);
	ev_map_free(&k->overrun);
	ev_map_free(&k->stacks);
	ev_map_free(&k->comm_seen);
	ev_map_free(&k->opstack_of);
	kwin_free(&k->calls);
	kwin_free(&k->ops);
	kwin_free(&k->flows);
	kwin_free(&k->fwdbwd);
	free(k->scratch);
	free(k->files);
	ev_strtab_free(k->st);
	free(k);
}

struct ev_kineto_file *ev_kineto_file(ev_kineto *k, int i) { return &k->files[i]; }
ev_strtab *ev_kineto_strtab(ev_kineto *k) { return k->st; }
const char *ev_kineto_errpath(const ev_kineto *k) { return ev_sorter_errpath(k->sorter); }
uint64_t ev_kineto_overruns(const ev_kineto *k) { return k->overruns; }
uint64_t ev_kineto_clipped(const ev_kineto *k) { return k->clipper ? ev_clipper_clipped(k->clipper) : 0; }

char *kineto_scratch(ev_kineto *k, size_t n)
{
	if (n > k->scratch_cap) {
		char *p = realloc(k->scratch, n);
		if (!p)
			return NULL;
		k->scratch = p;
		k->scratch_cap = n;
	}
	return k->scratch;
}

int ev_kineto_add(ev_kineto *k, int i, struct ev_rec *r)
{
	r->src = (uint16_t)i;
	r->rank = (uint32_t)i; /* replaced by the file's rank on output */
	int64_t end = ev_rec_end(r);
	if (end > k->files[i].last_end)
		k->files[i].last_end = end; /* checked against the base at the end of the file */
	if (k->collect) {
		struct ev_rec *c = ev_vec_push(&k->recs);
		if (!c)
			return EV_ERR_NOMEM;
		*c = *r;
		return EV_OK;
	}
	return ev_sorter_add(k->sorter, r);
}

/* Everything derived from a name, computed once per distinct name. */
const struct kname_info *kineto_name_info(ev_kineto *k, uint64_t name)
{
	uint64_t *idx = ev_map_get(&k->names, name ? name : 1);
	if (idx)
		return (const struct kname_info *)k->name_info.data + (*idx - 1);
	struct kname_info *ni = ev_vec_push(&k->name_info);
	if (!ni)
		return NULL;
	const char *s = ev_strtab_get(k->st, name, NULL);
	if (!s)
		s = "";
	ni->kclass = (uint8_t)ev_kernel_class(k->o.rules, s);
	ni->copy = (uint8_t)(strstr(s, "HtoD") ? EV_CP_HTOD : strstr(s, "DtoH") ? EV_CP_DTOH :
	                     strstr(s, "DtoD") ? EV_CP_DTOD : strstr(s, "HtoH") ? EV_CP_HTOH :
	                     strstr(s, "PtoP") ? EV_CP_PTOP : EV_CP_UNKNOWN);
	ni->is_nccl = (uint8_t)ev_nccl_kernel_decode(s, &ni->kn);
	ni->step = strncmp(s, "ProfilerStep", 12) == 0;
	/* TraceLens joins a graph launch to its GPU events by correlation id,
	 * without flows (the names it knows). */
	ni->graph = strcmp(s, "cudaGraphLaunch") == 0 || strcmp(s, "hipGraphLaunch") == 0;
	/* nccl:all_reduce, nccl:send...: old traces' collective annotations. */
	ni->nvtx_coll = (uint8_t)(strncmp(s, "nccl:", 5) == 0 ? ev_torch_coll(s) : 0);
	if (ev_map_put(&k->names, name ? name : 1, k->name_info.len)) {
		k->name_info.len--;
		return NULL;
	}
	return ni;
}

/* ---- writing, in time order --------------------------------------- */

/* The op stack of a thread (input, tid), created on first use. */
static struct opstack *opstack(ev_kineto *k, uint64_t key)
{
	uint64_t *idx = ev_map_get(&k->opstack_of, key);
	if (idx)
		return (struct opstack *)k->opstacks.data + (*idx - 1);
	struct opstack *s = ev_vec_push(&k->opstacks);
	if (!s)
		return NULL;
	ev_vec_init(&s->ops, sizeof(struct open_op));
	if (ev_map_put(&k->opstack_of, key, k->opstacks.len)) {
		k->opstacks.len--;
		return NULL;
	}
	return s;
}

/* Ops that ended at or before ts are no longer open (TraceLens's rule). */
static void pop_ended(struct opstack *s, int64_t ts)
{
	while (s->ops.len && ((struct open_op *)s->ops.data)[s->ops.len - 1].end <= ts)
		s->ops.len--;
}

/* Open r on the stack of key: what ended before it is popped first; the
 * new entry is zeroed (ev_vec_push) but for its end.  NULL when out of
 * memory.  Ops and nccl:* annotations open alike, on stacks of their own. */
static struct open_op *open_on(ev_kineto *k, uint64_t key, const struct ev_rec *r)
{
	struct opstack *s = opstack(k, key);
	if (!s)
		return NULL;
	pop_ended(s, r->ts);
	struct open_op *o = ev_vec_push(&s->ops);
	if (o) {
		o->start = r->ts;
		o->end = ev_rec_end(r);
	}
	return o;
}

enum { HOW_STACK = 1, HOW_CALL_EXT = 2, HOW_CALL_ONLY = 3 };

/* An ac2g flow end: remembered by (input, id) with the ends seen so far
 * and where its 'f' end is, until the GPU event with that correlation
 * asks (the reader put each 'f' just before its ts, so it comes before
 * the GPU event it binds to, which starts at that ts). */
static int flow_mark(ev_kineto *k, const struct ev_rec *r)
{
	uint64_t key = kineto_key2(r->src | 2ull << 40, r->id);
	const struct kwin_ent *old = kwin_get(&k->flows, key);
	struct kwin_ent e;
	if (old)
		e = *old;
	else
		memset(&e, 0, sizeof e);
	if (r->op == 's') {
		e.how |= 1;
	} else {
		e.how |= 2;
		e.sig = r->comm;
	}
	return kwin_put(&k->flows, key, &e);
}

/* Whether TraceLens joins a GPU event to its call (correlation id corr):
 * through an 's' and an 'f' flow end of that id, the 'f' at the GPU
 * event's own (pid, tid) `where`.  A graph launch's events need none. */
static int flow_linked(ev_kineto *k, uint64_t file, const struct kwin_ent *call, uint32_t corr, uint64_t where)
{
	if (call->graph)
		return 1;
	const struct kwin_ent *f = kwin_get(&k->flows, kineto_key2(file | 2ull << 40, corr));
	return f && (f->how & 3) == 3 && f->sig == where;
}

/* A fwdbwd flow end (Kineto's link of a forward op to its backward op).
 * 'S': the op it sits on, the innermost open on its thread that starts at
 * its ts, is remembered by the flow's id in a window.  'F' (1 ns early):
 * that op's External id waits on the end's thread for the backward op
 * starting there, whose range gets it in aux (link_record). */
static int fwdbwd_mark(ev_kineto *k, const struct ev_rec *r)
{
	struct ev_kineto_file *fi = &k->files[r->src];
	struct opstack *s = opstack(k, kineto_key2(r->src, r->stream));
	if (!s)
		return EV_ERR_NOMEM;
	uint64_t key = kineto_key2(r->src | 3ull << 40, r->id);
	if (r->op == 'S') {
		pop_ended(s, r->ts);
		const struct open_op *o = NULL;
		for (size_t i = s->ops.len; i-- > 0 && !o;)
			if (((const struct open_op *)s->ops.data)[i].start == r->ts)
				o = (const struct open_op *)s->ops.data + i;
		if (!o || !o->ext) {
			fi->fwdbwd_unbound++;
			return EV_OK;
		}
		struct kwin_ent e;
		memset(&e, 0, sizeof e);
		e.op = o->ext;
		return kwin_put(&k->fwdbwd, key, &e);
	}
	const struct kwin_ent *e = kwin_get(&k->fwdbwd, key);
	if (!e) {
		fi->fwdbwd_lost++;
		return EV_OK;
	}
	if (s->bwd_fwd)
		fi->fwdbwd_unbound++; /* the previous one found no op */
	s->bwd_fwd = e->op;
	s->bwd_ts = r->ts + 1;
	return EV_OK;
}

static int link_record(ev_kineto *k, struct ev_rec *r)
{
	struct ev_kineto_file *fi = &k->files[r->src];
	uint64_t file = r->src;
	if (r->type == EV_RANGE && r->op == EV_RG_CPU_OP) {
		struct open_op *o = open_on(k, kineto_key2(file, r->stream), r);
		if (!o)
			return EV_ERR_NOMEM;
		o->ext = r->id;
		o->sig = r->sig;
		/* A backward op at its fwdbwd 'f' end: its forward op. */
		struct opstack *s = opstack(k, kineto_key2(file, r->stream));
		if (s && s->bwd_fwd && r->ts >= s->bwd_ts) {
			if (r->ts == s->bwd_ts) {
				r->step = s->bwd_fwd;
				fi->fwdbwd_linked++;
			} else {
				fi->fwdbwd_unbound++;
			}
			s->bwd_fwd = 0;
		}
		if (r->id) {
			struct kwin_ent e;
			memset(&e, 0, sizeof e);
			e.sig = r->sig;
			e.op = r->id;
			if (kwin_put(&k->ops, kineto_key2(file, r->id), &e))
				return EV_ERR_NOMEM;
		}
		return EV_OK;
	}
	if (r->type == EV_RANGE && r->op == EV_RG_USER && r->aux) {
		/* An nccl:* annotation: open on its thread's annotation stack. */
		struct open_op *o = open_on(k, kineto_key2(file | 1ull << 40, r->stream), r);
		if (!o)
			return EV_ERR_NOMEM;
		o->coll = r->aux;
		o->bytes = r->bytes;
		o->dtype = r->dtype;
		r->aux = 0;
		r->bytes = 0;
		r->dtype = 0;
		return EV_OK;
	}
	if (r->type == EV_API) {
		/* The innermost cpu_op open around the call on its thread; else
		 * the op named by the call's External id; else the call alone. */
		struct opstack *s = opstack(k, kineto_key2(file, r->stream));
		if (!s)
			return EV_ERR_NOMEM;
		pop_ended(s, r->ts);
		struct kwin_ent e;
		memset(&e, 0, sizeof e);
		if (k->o.flow_links) {
			const struct kname_info *ni = kineto_name_info(k, r->name);
			if (!ni)
				return EV_ERR_NOMEM;
			e.graph = ni->graph;
		}
		e.how = HOW_CALL_ONLY;
		e.sig = r->name; /* outside any op the call itself launches (TraceLens's leaf) */
		const struct kwin_ent *op;
		if (s->ops.len) {
			const struct open_op *o = (const struct open_op *)s->ops.data + s->ops.len - 1;
			e.op = o->ext;
			e.sig = o->sig;
			e.how = HOW_STACK;
		} else if (r->step && (op = kwin_get(&k->ops, kineto_key2(file, r->step))) != NULL) {
			e.op = op->op;
			e.sig = op->sig;
			e.how = HOW_CALL_EXT;
		}
		uint64_t akey = kineto_key2(file | 1ull << 40, r->stream);
		struct opstack *a = ev_map_get(&k->opstack_of, akey) ? opstack(k, akey) : NULL;
		if (a) {
			pop_ended(a, r->ts);
			if (a->ops.len) {
				const struct open_op *o = (const struct open_op *)a->ops.data + a->ops.len - 1;
				e.coll = o->coll;
				e.bytes = o->bytes;
				e.dtype = o->dtype;
			}
		}
		r->step = 0; /* the call's External id was only for linking */
		/* (correlation ids start at 1: 0 is a call without one) */
		return r->id ? kwin_put(&k->calls, kineto_key2(file, r->id), &e) : EV_OK;
	}
	if (r->type == EV_KERNEL || r->type == EV_MEMCPY || r->type == EV_MEMSET) {
		const struct kwin_ent *call = r->id ? kwin_get(&k->calls, kineto_key2(file, r->id)) : NULL;
		const struct kwin_ent *op = NULL;
		uint64_t where = r->comm; /* the event's (pid, tid), from the reader */
		r->comm = 0;
		uint32_t opid = 0;
		uint64_t sig = 0;
		if (call && call->how != HOW_CALL_ONLY) {
			opid = call->op;
			sig = call->sig;
			if (call->how == HOW_STACK)
				fi->linked_stack++;
			else
				fi->linked_ext++;
		} else if (r->step && (op = kwin_get(&k->ops, kineto_key2(file, r->step))) != NULL) {
			opid = op->op;
			sig = op->sig;
			fi->linked_ext++;
		} else if (call) {
			sig = call->sig;
			fi->linked_call_only++;
		}
		if (!call) {
			r->flags |= EV_F_UNLINKED;
			if (!op)
				fi->unlinked++;
		} else if (k->o.flow_links && !flow_linked(k, file, call, r->id, where)) {
			r->flags |= EV_F_NOFLOW;
			fi->noflow++;
		}
		r->sig = sig;
		r->step = opid; /* the launching op instance (its External id) */
		if (r->type == EV_KERNEL) {
			/* Same-stream overruns (a kernel ending after the next starts). */
			uint64_t key = kineto_key2(((uint64_t)r->rank << 32) | 1, r->stream);
			uint64_t *last = ev_map_get(&k->overrun, key);
			if (last && (int64_t)*last > r->ts)
				k->overruns++;
			if (ev_map_put(&k->overrun, key, (uint64_t)ev_rec_end(r)))
				return EV_ERR_NOMEM;
		}
		return EV_OK;
	}
	if ((r->type == EV_COLL || r->type == EV_P2P) && (r->flags & KINETO_F_INFER)) {
		/* Old traces: kind, algo, proto, redop, dtype from the kernel name
		 * (already on the record); size and, where the kernel does not
		 * say, kind from the nccl:* annotation around the launch; the
		 * default group, all ranks of the run. NCCL 2.12-2.18 runs work it
		 * has no specialised kernel for in its generic kernel, named
		 * ncclKernel_SendRecv_..., so an all_reduce launched there is still
		 * a collective: the annotation decides coll or p2p. */
		const struct kwin_ent *call = r->id ? kwin_get(&k->calls, kineto_key2(file, r->id)) : NULL;
		r->flags &= (uint16_t)~KINETO_F_INFER;
		if (call && call->coll) {
			if (!r->op || r->op == EV_OP_SENDRECV || r->type == EV_P2P)
				r->op = (uint8_t)call->coll;
			r->type = r->op == EV_OP_SEND || r->op == EV_OP_RECV || r->op == EV_OP_SENDRECV ? EV_P2P : EV_COLL;
			r->bytes = call->bytes;
			if (!r->dtype)
				r->dtype = (uint8_t)call->dtype;
		} else {
			k->files[r->src].inferred_no_size++;
		}
		r->comm = k->default_comm;
		r->aux = k->default_nranks > 0 ? (uint32_t)k->default_nranks : 0;
	}
	if (r->type == EV_COLL || r->type == EV_P2P) {
		uint64_t key = kineto_key2(((uint64_t)r->rank << 1) | (r->type == EV_P2P), r->comm);
		uint64_t *next = ev_map_get(&k->seq, key);
		r->seq = next ? (uint32_t)*next : 0;
		if (ev_map_put(&k->seq, key, (uint64_t)r->seq + 1))
			return EV_ERR_NOMEM;
		const struct kwin_ent *call = r->id ? kwin_get(&k->calls, kineto_key2(file, r->id)) : NULL;
		if (call)
			r->sig = call->sig;
	}
	return EV_OK;
}

/* The sorter's sink: each record in time order. */
static int sink(void *ctx, struct ev_rec *r)
{
	ev_kineto *k = ctx;
	const struct ev_kineto_file *fi = &k->files[r->src];
	r->rank = (uint32_t)fi->rank;
	if (r->type == KINETO_T_FLOW)
		return r->op == 'S' || r->op == 'F' ? fwdbwd_mark(k, r) : flow_mark(k, r);
	int rc = link_record(k, r);
	if (rc)
		return rc;
	if (fi->have_base)
		r->ts += fi->base_ns;
	if (r->type == EV_API && k->o.no_api)
		return EV_OK;
	if (k->sink)
		return k->sink->rec(k->sink->ctx, r);
	return k->clipper ? ev_clipper_add(k->clipper, r) : ev_write(k->w, r);
}

int kineto_text(ev_kineto *k, const char *line, size_t len)
{
	return k->sink ? k->sink->text(k->sink->ctx, line, len) : ev_write_text(k->w, line, len);
}

int kineto_textf(ev_kineto *k, const char *fmt, ...)
{
	char small[1024], *line = small;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return EV_ERR_ARG;
	if ((size_t)n >= sizeof small) { /* a long name: formatted again, whole */
		if (!(line = malloc((size_t)n + 1)))
			return EV_ERR_NOMEM;
		va_start(ap, fmt);
		vsnprintf(line, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	int rc = kineto_text(k, line, (size_t)n);
	if (line != small)
		free(line);
	return rc;
}

/* The metadata lines, then every record in time order, linked, to k->w or
 * k->sink (ev_kineto_write, ev_kineto_feed). */
static int emit(ev_kineto *k)
{
	int rc = EV_OK;
	for (int i = 0; i < k->nfiles && !rc; i++) {
		struct ev_kineto_file *fi = &k->files[i];
		char esc[8192];
		ev_text_escape(fi->path, strlen(fi->path), esc, sizeof esc);
		for (char *p = esc; *p; p++)
			if (*p == ' ')
				*p = '_';
		/* flow_links=ac2g: noflow was checked (docs/FORMAT.md §3), so a
		 * reader knows an unflagged GPU event has its flow pair; fwdbwd:
		 * backward ops carry their forward op (a cpu_op range's aux). */
		const char *fl = k->o.flow_links ? " flow_links=ac2g,fwdbwd" : "";
		/* trace_events=: how many elements traceEvents has (all read by
		 * now), after which TraceLens numbers its synthetic ops. */
		char base[64] = "";
		if (fi->have_base)
			snprintf(base, sizeof base, " base_ns=%lld", (long long)fi->base_ns);
		rc = kineto_textf(k, "#src %d file=%s rank=%lld%s trace_events=%llu%s", i, esc, (long long)fi->rank,
		                    base, (unsigned long long)fi->elements, fl);
		if (!rc) {
			char extra[256] = "";
			size_t n = 0;
			if (fi->pid >= 0)
				n += (size_t)snprintf(extra + n, sizeof extra - n, " pid=%lld", (long long)fi->pid);
			if (fi->device >= 0)
				n += (size_t)snprintf(extra + n, sizeof extra - n, " device=%lld", (long long)fi->device);
			if (fi->world > 0)
				n += (size_t)snprintf(extra + n, sizeof extra - n, " world_size=%lld", (long long)fi->world);
			/* deviceProperties: the rank's GPU by name (its device's, else
			 * the first), and how many GPUs the process saw. */
			const char *gpu = fi->device >= 0 && fi->device < 16 && fi->gpu_name[fi->device][0]
			                          ? fi->gpu_name[fi->device] : fi->gpu_name[0];
			if (gpu[0] && n < sizeof extra)
				n += (size_t)snprintf(extra + n, sizeof extra - n, " gpu=%s", gpu);
			if (fi->ngpus > 0 && n < sizeof extra)
				snprintf(extra + n, sizeof extra - n, " local_gpus=%d", fi->ngpus);
			rc = kineto_textf(k, "#rank %lld%s", (long long)fi->rank, extra);
		}
	}
	uint64_t inferred = 0;
	for (int i = 0; i < k->nfiles; i++) {
		inferred += k->files[i].inferred_colls;
		if (k->files[i].world > k->default_nranks)
			k->default_nranks = k->files[i].world;
	}
	if (inferred && k->default_nranks <= 0)
		k->default_nranks = k->nfiles; /* no world size anywhere: the inputs' ranks */
	if (inferred) {
		/* Collectives without process-group arguments: one default group
		 * of world_size ranks, said to be inferred. */
		k->default_comm = ev_hash64("default_pg", 10);
		if (!rc)
			rc = kineto_textf(k, "#comm %llu nranks=%lld name=default_pg inferred=kernel_names",
			                    (unsigned long long)k->default_comm, (long long)k->default_nranks);
	}
	for (size_t i = 0; i < k->comm_lines.len && !rc; i++) {
		const char *line = ((char **)k->comm_lines.data)[i];
		rc = kineto_text(k, line, strlen(line));
	}
	if (!rc)
		rc = kineto_write_names(k);
	if (rc)
		return rc;
	if (k->o.clip && (rc = ev_clipper_open(&k->clipper, k->w)) != EV_OK)
		return rc;
	/* (an empty sorter is not asked to sort: qsort on no items) */
	rc = ev_sorter_count(k->sorter) ? ev_sorter_finish(k->sorter, NULL, sink, k) : EV_OK;
	if (!rc && k->clipper)
		rc = ev_clipper_finish(k->clipper);
	return rc;
}

int ev_kineto_write(ev_kineto *k, ev_writer *w)
{
	int absolute = k->absolute_ts, rc;
	for (int i = 0; i < k->nfiles; i++)
		absolute |= k->files[i].have_base;
	rc = ev_writer_header(w, "origin", absolute ? "unix" : "trace");
	if (!rc)
		rc = ev_writer_header(w, "producer", "kineto2ev");
	if (rc)
		return rc;
	k->w = w;
	k->sink = NULL;
	return emit(k);
}

int ev_kineto_feed(ev_kineto *k, const struct ev_kineto_sink *sink)
{
	if (k->o.clip)
		return EV_ERR_ARG; /* (the clipper writes to a writer) */
	k->w = NULL;
	k->sink = sink;
	return emit(k);
}
