/* SPDX-License-Identifier: MIT */
/*
 * ev_sort.c - external merge sort of records: sort in a bounded buffer,
 * spill sorted runs to temporary files, merge the runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev.h"

/* A record and its insertion number, which breaks ties stably. */
struct item { struct ev_rec rec; uint64_t pos; };
#define ITEM_DISK (EV_RECORD_SIZE + 8)
#define MAX_RUNS 4096

struct run { FILE *f; char *path; int slot; struct item cur; int done; };

struct ev_sorter {
	struct item *items;
	size_t cap, alloc, used; /* cap: items the budget allows */
	uint64_t pos, total;
	char *tmpdir;
	struct run *runs;
	unsigned nruns;
	const char *errpath;
};

static int rec_cmp(const struct item *a, const struct item *b)
{
	const struct ev_rec *x = &a->rec, *y = &b->rec;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

static int item_cmp(const void *a, const void *b) { return rec_cmp(a, b); }

int ev_sorter_open(ev_sorter **out, uint64_t budget, const char *tmpdir)
{
	ev_sorter *s = calloc(1, sizeof *s);
	*out = NULL;
	if (!s)
		return EV_ERR_NOMEM;
	if (!tmpdir || !*tmpdir)
		tmpdir = getenv("TMPDIR");
	s->tmpdir = strdup(tmpdir && *tmpdir ? tmpdir : "/tmp");
	s->cap = (size_t)(budget / sizeof(struct item));
	if (s->cap < 1024)
		s->cap = 1024;
	s->runs = calloc(MAX_RUNS, sizeof *s->runs);
	if (!s->tmpdir || !s->runs) {
		ev_sorter_close(s);
		return EV_ERR_NOMEM;
	}
	*out = s;
	return EV_OK;
}

static int spill(ev_sorter *s)
{
	if (s->nruns == MAX_RUNS)
		return EV_ERR_LIMIT;
	struct run *r = &s->runs[s->nruns];
	size_t n = strlen(s->tmpdir) + 32;
	r->path = malloc(n);
	if (!r->path)
		return EV_ERR_NOMEM;
	snprintf(r->path, n, "%s/evkit-sort.XXXXXX", s->tmpdir);
	int fd = mkstemp(r->path);
	if (fd < 0) {
		s->errpath = s->tmpdir;
		free(r->path);
		r->path = NULL;
		return EV_ERR_IO;
	}
	r->slot = ev_temp_register(r->path);
	s->nruns++;
	s->errpath = r->path;
	r->f = fdopen(fd, "w+b");
	if (!r->f) {
		close(fd);
		return EV_ERR_IO;
	}
	qsort(s->items, s->used, sizeof *s->items, item_cmp);
	unsigned char b[ITEM_DISK];
	for (size_t i = 0; i < s->used; i++) {
		ev_rec_encode(&s->items[i].rec, b);
		ev_put64(b + EV_RECORD_SIZE, s->items[i].pos);
		if (fwrite(b, 1, sizeof b, r->f) != sizeof b)
			return EV_ERR_IO;
	}
	if (fflush(r->f) != 0)
		return EV_ERR_IO;
	s->used = 0;
	return EV_OK;
}

int ev_sorter_add(ev_sorter *s, const struct ev_rec *rec)
{
	int rc;
	if (s->used == s->alloc) {
		if (s->alloc < s->cap) {
			/* Grow geometrically up to the budget: small inputs stay small. */
			size_t n = s->alloc ? s->alloc * 2 : 4096;
			if (n > s->cap)
				n = s->cap;
			struct item *ni = realloc(s->items, n * sizeof *ni);
			if (!ni)
				return EV_ERR_NOMEM;
			s->items = ni;
			s->alloc = n;
		} else if ((rc = spill(s)) != EV_OK) {
			return rc;
		}
	}
	s->items[s->used].rec = *rec;
	s->items[s->used].pos = s->pos++;
	s->used++;
	s->total++;
	return EV_OK;
}

static int run_next(struct run *r)
{
	unsigned char b[ITEM_DISK];
	size_t got = fread(b, 1, sizeof b, r->f);
	if (got == 0 && feof(r->f)) {
		r->done = 1;
		return EV_OK;
	}
	if (got != sizeof b)
		return EV_ERR_IO;
	ev_rec_decode(b, &r->cur.rec);
	r->cur.pos = ev_le64(b + EV_RECORD_SIZE);
	return EV_OK;
}

static int emit(ev_writer *w, struct ev_rec *rec, int (*fix)(void *, struct ev_rec *), void *ctx)
{
	if (fix) {
		int rc = fix(ctx, rec);
		if (rc)
			return rc;
	}
	return w ? ev_write(w, rec) : EV_OK; /* no writer: fix is the sink */
}

int ev_sorter_finish(ev_sorter *s, ev_writer *w, int (*fix)(void *ctx, struct ev_rec *rec), void *ctx)
{
	int rc = EV_OK;
	if (s->nruns == 0) {
		qsort(s->items, s->used, sizeof *s->items, item_cmp);
		for (size_t i = 0; i < s->used && !rc; i++)
			rc = emit(w, &s->items[i].rec, fix, ctx);
		return rc;
	}
	if (s->used && (rc = spill(s)) != EV_OK)
		return rc;
	free(s->items);
	s->items = NULL;
	s->alloc = 0;
	unsigned *heap = malloc(s->nruns * sizeof *heap), hn = 0;
	if (!heap)
		return EV_ERR_NOMEM;
	for (unsigned k = 0; k < s->nruns && !rc; k++) {
		struct run *r = &s->runs[k];
		s->errpath = r->path;
		rewind(r->f);
		if ((rc = run_next(r)) != EV_OK || r->done)
			continue;
		heap[hn] = k;
		for (unsigned i = hn++; i > 0;) {
			unsigned p = (i - 1) / 2;
			if (rec_cmp(&s->runs[heap[i]].cur, &s->runs[heap[p]].cur) >= 0)
				break;
			unsigned t = heap[i]; heap[i] = heap[p]; heap[p] = t;
			i = p;
		}
	}
	while (!rc && hn > 0) {
		struct run *r = &s->runs[heap[0]];
		if ((rc = emit(w, &r->cur.rec, fix, ctx)) != EV_OK)
			break;
		s->errpath = r->path;
		if ((rc = run_next(r)) != EV_OK)
			break;
		if (r->done)
			heap[0] = heap[--hn];
		for (unsigned i = 0;;) {
			unsigned l = 2 * i + 1, rr = l + 1, m = i;
			if (l < hn && rec_cmp(&s->runs[heap[l]].cur, &s->runs[heap[m]].cur) < 0)
				m = l;
			if (rr < hn && rec_cmp(&s->runs[heap[rr]].cur, &s->runs[heap[m]].cur) < 0)
				m = rr;
			if (m == i)
				break;
			unsigned t = heap[i]; heap[i] = heap[m]; heap[m] = t;
			i = m;
		}
	}
	free(heap);
	return rc;
}

uint64_t ev_sorter_count(const ev_sorter *s) { return s->total; }
unsigned ev_sorter_runs(const ev_sorter *s) { return s->nruns; }
const char *ev_sorter_errpath(const ev_sorter *s) { return s->errpath ? s->errpath : ""; }

void ev_sorter_close(ev_sorter *s)
{
	if (!s)
		return;
	for (unsigned k = 0; k < s->nruns; k++) {
		struct run *r = &s->runs[k];
		if (r->f)
			fclose(r->f);
		if (r->path) {
			unlink(r->path);
			ev_temp_unregister(r->slot);
			free(r->path);
		}
	}
	free(s->runs);
	free(s->items);
	free(s->tmpdir);
	free(s);
}
