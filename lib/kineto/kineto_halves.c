/* SPDX-License-Identifier: MIT */
/*
 * kineto_halves.c - a big plain trace file read in two halves, the second
 * on a thread of its own, so that parsing uses both cores.
 *
 * The second half starts where an event seems to start near the file's
 * middle ("}" "," "{" between whitespace): a guess, which the first half
 * confirms only by meeting an element of traceEvents at that very byte.
 * It converts its events into a conversion of its own (strings, records in
 * the order they come, names, threads, collectives, open B ranges, and the
 * E events whose B is not in its half), until the array's ']', or until an
 * event it leaves to the first half (one it cannot read, or past its
 * memory budget).  When the first half arrives, that conversion is added
 * to the first half's as if its events had been read there, in order: the
 * records go to the sorter in the order they came, each waiting E paired
 * at its place, the events' places in the file shifted by the first half's
 * count; later names and threads first seen are kept as one reader keeps
 * them.  The first half then goes on where the second stopped.  The
 * output is the same, byte for byte, as one thread's: when anything is in
 * doubt (the guess was wrong, the second half met an error, the dialect
 * sniffer has not decided yet) the second half's work is dropped and the
 * first half reads on, as one thread would.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ev/worker.h"
#include "json/json_bytes.h"
#include "kineto/kineto_internal.h"

/* Smaller files are read on one thread: the second one's setup and the
 * merge would cost more than they save. */
#define HALVES_MIN ((uint64_t)4 << 20)
/* The second half's read buffer, grown for an event as long as the
 * --max-object limit. */
#define HALF_BUF ((size_t)256 << 10)
/* Where the seam is looked for: a little before the middle, as the first
 * half also reads the document's start and then adds the second half's
 * conversion to its own, so that the two end together. */
#define SEAM_PERCENT 46
/* Bytes looked at past that point for an event's start, a step at a
 * time (most events are far shorter than a step). */
#define SEAM_STEP ((size_t)64 << 10)
#define SEAM_LOOK ((size_t)1 << 20)

struct khalf {
	ev_kineto *k2;       /* the second half's conversion */
	const ev_kineto *k;  /* the first half's (its options, the path) */
	const ev_input *in;
	int fidx;
	uint64_t from;       /* its first event's byte */
	uint64_t stop;       /* where the first half goes on */
	int elem;            /* stop is an element (1) or the array's ']' (0) */
	int failed;          /* dropped: the first half reads it all */
	size_t budget;       /* bytes of records it may hold */
	atomic_int cancel;
	ev_worker *w;
};

/* The first byte of an element of an array of objects at or after from:
 * past a '}', a ',' and a '{' with only whitespace between them; 0 none. */
static uint64_t find_seam(const ev_input *in, uint64_t from)
{
	char *b = malloc(SEAM_STEP);
	uint64_t at = 0;
	for (uint64_t off = from; b && !at && off < from + SEAM_LOOK; off += SEAM_STEP - 16) {
		/* (steps overlap by 16 bytes, for a seam cut by a step's end) */
		long n = ev_input_pread(in, b, SEAM_STEP, off);
		for (long i = 0; i < n && !at; i++) {
			if (b[i] != '}')
				continue;
			const char *p = ev_json_skip_ws(b + i + 1, b + n);
			if (p < b + n && *p == ',') {
				p = ev_json_skip_ws(p + 1, b + n);
				if (p < b + n && *p == '{')
					at = off + (uint64_t)(p - b);
			}
		}
		if (n < (long)SEAM_STEP)
			break;
	}
	free(b);
	return at;
}

/* The second half's events, from h->from to the array's ']'. */
static void half_run(void *ctx)
{
	struct khalf *h = ctx;
	/* Its conversion made here, off the first half's way. */
	h->stop = h->from;
	h->elem = 1;
	if (ev_kineto_new(&h->k2, &h->k->o, h->k->nfiles) != EV_OK) {
		h->failed = 1;
		return;
	}
	ev_kineto *k2 = h->k2;
	k2->collect = 1;
	k2->files[h->fidx].path = h->k->files[h->fidx].path;
	size_t cap = HALF_BUF, most = k2->o.max_object + HALF_BUF;
	char *buf = malloc(cap), err[512];
	uint64_t at = h->from;  /* the file's byte of buf[0] */
	size_t len = 0, p = 0;  /* buf[0, len) read; the next element at p */
	int eof = 0;
	struct ev_kevent e;
	if (!buf) {
		h->failed = 1;
		return;
	}
	for (;;) {
		if (atomic_load_explicit(&h->cancel, memory_order_relaxed))
			break;
		p = (size_t)(ev_json_skip_ws(buf + p, buf + len) - buf);
		size_t used = 0;
		const char *q = NULL;
		int whole = p < len && buf[p] != ']' &&
		            ev_kineto_scan_prefix(buf + p, len - p, k2->o.max_tokens, &e, &used) == EV_OK &&
		            used < len - p && used <= k2->o.max_object;
		if (whole) {
			q = ev_json_skip_ws(buf + p + used, buf + len);
			whole = q < buf + len;
		}
		if (!whole) {
			/* More of the file, unless the event is not one this half
			 * can take (bad, too long, cut by the file's end): that one
			 * is the first half's. */
			if (eof || (len - p >= cap && cap >= most))
				break;
			memmove(buf, buf + p, len - p);
			at += p;
			len -= p;
			p = 0;
			if (len == cap) {
				size_t ncap = cap * 2 < most ? cap * 2 : most;
				char *nb = realloc(buf, ncap);
				if (!nb)
					break;
				buf = nb;
				cap = ncap;
			}
			long got = ev_input_pread(h->in, buf + len, cap - len, at + len);
			if (got < 0)
				break;
			eof = got == 0;
			len += (size_t)got;
			continue;
		}
		if (*q != ',' && *q != ']')
			break;
		if (k2->recs.len * sizeof(struct ev_rec) >= h->budget)
			break; /* the rest is the first half's */
		if (kineto_process(k2, h->fidx, &e, at + p, err, sizeof err) != EV_OK) {
			h->failed = 1; /* the first half meets the error itself */
			break;
		}
		if (*q == ']') {
			h->stop = at + (uint64_t)(q - buf);
			h->elem = 0;
			break;
		}
		p = (size_t)(q + 1 - buf);
	}
	/* An element start where it stopped inside one: its first byte. */
	if (h->elem)
		h->stop = at + (uint64_t)(ev_json_skip_ws(buf + p, buf + len) - buf);
	free(buf);
}

void kineto_half_drop(struct khalf *h)
{
	if (!h)
		return;
	atomic_store(&h->cancel, 1);
	ev_worker_free(h->w); /* waits for the run */
	ev_kineto_free(h->k2);
	free(h);
}

int kineto_half_start(ev_kineto *k, int fidx, const ev_input *in, struct khalf **out, uint64_t *from)
{
	*out = NULL;
	int64_t size = k->o.threads >= 2 ? ev_input_file_size(in) : -1;
	if (size < 0 || (uint64_t)size < HALVES_MIN)
		return EV_OK;
	/* The seam is found here, so that the first half knows it however
	 * late the second thread starts. */
	uint64_t seam = find_seam(in, (uint64_t)size / 100 * SEAM_PERCENT);
	if (!seam)
		return EV_OK;
	struct khalf *h = calloc(1, sizeof *h);
	if (!h)
		return EV_ERR_NOMEM;
	h->from = seam;
	h->k = k;
	h->in = in;
	h->fidx = fidx;
	/* Half the sorter's budget (-S): memory stays within 1.5 times it. */
	h->budget = k->o.sort_bytes / 2 > ((uint64_t)512 << 10) ? (size_t)(k->o.sort_bytes / 2) : (size_t)512 << 10;
	atomic_init(&h->cancel, 0);
	int rc = ev_worker_new(&h->w, half_run, h);
	if (rc != EV_OK) {
		free(h);
		return rc == EV_ERR_IO ? EV_OK : rc; /* no thread: one reads it all */
	}
	ev_worker_start(h->w);
	*out = h;
	*from = seam;
	return EV_OK;
}

/* A place in the file (an event's index + 1, 0 unknown) of the second
 * half, shifted past the first half's elements. */
static void shift_place(uint32_t *x, uint64_t by)
{
	if (*x) {
		uint64_t v = *x + by;
		*x = v <= UINT32_MAX ? (uint32_t)v : 0;
	}
}

/* The second half's records, in order, with its waiting E events paired
 * on the first half's stacks where they came; then its open B ranges on
 * top of the first half's, bottom first. */
static int merge_records(ev_kineto *k, int fidx, ev_kineto *k2, uint64_t elements)
{
	struct ev_kineto_file *fi = &k->files[fidx];
	const struct ev_rec *rec = k2->recs.data;
	const struct kdefer *d = k2->defer.data;
	size_t di = 0;
	int rc;
	for (size_t i = 0; i <= k2->recs.len; i++) {
		for (; di < k2->defer.len && d[di].at == i; di++) {
			struct ev_rec r = d[di].r;
			int c = kineto_close_range(k, fidx, d[di].key, &r);
			if (c < 0)
				return EV_ERR_NOMEM;
			if (c > 0) {
				fi->unmatched_e++;
				fi->skipped++;
			}
		}
		if (i == k2->recs.len)
			break;
		struct ev_rec r = rec[i];
		if (r.type == EV_API || (r.type == EV_RANGE && r.op == EV_RG_CPU_OP))
			shift_place(&r.aux, elements);
		else if (r.type == EV_KERNEL || r.type == EV_MEMCPY || r.type == EV_MEMSET)
			shift_place(&r.step_size, elements);
		if ((rc = ev_kineto_add(k, fidx, &r)) != EV_OK)
			return rc;
	}
	const struct open_range *store = k2->stack_store.data;
	struct ev_vec chain;
	ev_vec_init(&chain, sizeof(uint64_t));
	rc = EV_OK;
	for (size_t m = 0; rc == EV_OK && m < k2->stacks.cap; m++) {
		uint64_t top = k2->stacks.keys[m] ? k2->stacks.vals[m] : 0;
		chain.len = 0;
		for (; top; top = store[top - 1].below >= 0 ? (uint64_t)store[top - 1].below + 1 : 0) {
			uint64_t *slot = ev_vec_push(&chain);
			if (!slot) {
				rc = EV_ERR_NOMEM;
				break;
			}
			*slot = top - 1;
		}
		for (size_t j = chain.len; rc == EV_OK && j-- > 0;) {
			const struct open_range *o = &store[((uint64_t *)chain.data)[j]];
			struct ev_rec r;
			ev_rec_init(&r);
			r.ts = o->ts;
			r.name = o->name;
			r.stream = o->stream;
			rc = kineto_open_range(k, fidx, o->key, &r);
		}
	}
	ev_vec_free(&chain);
	return rc;
}

/* Its #comm lines of communicators the first half has not seen, its
 * process and thread names (the last read wins), its threads. */
static int merge_names(ev_kineto *k, int fidx, ev_kineto *k2, uint64_t events)
{
	int rc;
	for (size_t i = 0; i < k2->comm_lines.len; i++) {
		const char *line = ((char **)k2->comm_lines.data)[i];
		if (!strncmp(line, "#comm ", 6)) {
			uint64_t comm = strtoull(line + 6, NULL, 10), key = comm ? comm : 1;
			if (ev_map_get(&k->comm_seen, key))
				continue;
			if (ev_map_put(&k->comm_seen, key, 1))
				return EV_ERR_NOMEM;
		}
		if ((rc = kineto_comm_line(k, line)) != EV_OK)
			return rc;
	}
	const struct kname_meta *m = k2->meta_names.data;
	for (size_t i = 0; i < k2->meta_names.len; i++) {
		char *text = strdup(m[i].text);
		if (!text || (rc = kineto_meta_put(k, fidx, m[i].pid, m[i].tid, m[i].kind, text)) != EV_OK)
			return EV_ERR_NOMEM;
	}
	const struct kthread *t = k2->threads.data;
	for (size_t i = 0; i < k2->threads.len; i++) {
		uint64_t first = t[i].first_op == UINT64_MAX ? UINT64_MAX : t[i].first_op + events;
		uint64_t key = kineto_key2((uint64_t)(uint32_t)fidx + 1, t[i].tid);
		uint64_t *slot = ev_map_get(&k->thread_of, key);
		if (slot) {
			struct kthread *kt = &((struct kthread *)k->threads.data)[*slot - 1];
			if (kt->first_op == UINT64_MAX)
				kt->first_op = first;
			continue;
		}
		struct kthread *nt = ev_vec_push(&k->threads);
		if (!nt)
			return EV_ERR_NOMEM;
		*nt = (struct kthread){ fidx, t[i].tid, t[i].pid, first };
		if (ev_map_put(&k->thread_of, key, k->threads.len))
			return EV_ERR_NOMEM;
	}
	return EV_OK;
}

/* Its counts added to the first half's; its process id if the first half
 * had none, its device if it saw one (the last wins). */
static void merge_counts(struct ev_kineto_file *fi, const struct ev_kineto_file *f2)
{
	uint64_t *a[] = { &fi->events, &fi->kernels, &fi->gpu_events, &fi->colls, &fi->inferred_colls, &fi->skipped,
	                  &fi->elements, &fi->linked_stack, &fi->linked_ext, &fi->linked_call_only, &fi->unlinked,
	                  &fi->noflow, &fi->fwdbwd_linked, &fi->fwdbwd_lost, &fi->fwdbwd_unbound, &fi->neg_dur,
	                  &fi->big_stream, &fi->unmatched_b, &fi->unmatched_e, &fi->no_group_size,
	                  &fi->inferred_no_size };
	const uint64_t *b[] = { &f2->events, &f2->kernels, &f2->gpu_events, &f2->colls, &f2->inferred_colls,
	                        &f2->skipped, &f2->elements, &f2->linked_stack, &f2->linked_ext, &f2->linked_call_only,
	                        &f2->unlinked, &f2->noflow, &f2->fwdbwd_linked, &f2->fwdbwd_lost, &f2->fwdbwd_unbound,
	                        &f2->neg_dur, &f2->big_stream, &f2->unmatched_b, &f2->unmatched_e, &f2->no_group_size,
	                        &f2->inferred_no_size };
	for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
		*a[i] += *b[i];
	if (fi->pid < 0)
		fi->pid = f2->pid;
	if (f2->device >= 0)
		fi->device = f2->device;
}

int kineto_half_join(ev_kineto *k, int fidx, struct khalf *h, uint64_t *stop, int *elem)
{
	ev_worker_wait(h->w);
	*stop = h->from;
	*elem = 1;
	if (h->failed)
		return EV_OK; /* the first half reads it */
	struct ev_kineto_file *fi = &k->files[fidx];
	uint64_t elements = fi->elements, events = fi->events;
	int rc = ev_strtab_absorb(k->st, h->k2->st);
	if (rc == EV_OK)
		rc = merge_records(k, fidx, h->k2, elements);
	if (rc == EV_OK)
		rc = merge_names(k, fidx, h->k2, events);
	if (rc != EV_OK)
		return rc;
	merge_counts(fi, &h->k2->files[fidx]);
	k->absolute_ts |= h->k2->absolute_ts;
	if (h->stop != h->from) {
		fi->half_from = h->from;
		fi->half_to = h->stop;
	}
	*stop = h->stop;
	*elem = h->elem;
	return EV_OK;
}
