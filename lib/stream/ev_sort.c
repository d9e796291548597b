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

#include "ev/stream.h"

/* A record and its insertion number, which breaks ties stably (so runs may
 * be merged in any grouping and the result is the same). */
struct item { struct ev_rec rec; uint64_t pos; };
#define ITEM_DISK (EV_RECORD_SIZE + 8)
/* Runs merged at once.  Runs form levels like a counter in base FAN_IN: when
 * FAN_IN runs of one level exist they become one run of the next level, so
 * at most (FAN_IN - 1) runs per level stay open: no run count can exhaust
 * descriptors or the temp-file registry, and every record is rewritten
 * log_FAN_IN(runs) times. */
#define FAN_IN 16
/* Runs are written and read through buffers of this size, one per run being
 * merged and one for the run being written: at most (FAN_IN + 1) of them,
 * about 1 MiB besides the budget.  (stdio, a call per 104-byte item, cost
 * more than the rest of spilling and merging together.) */
#define RUN_BUF ((size_t)64 << 10)

struct run {
	int fd;
	char *path;
	int slot;
	struct item cur;
	int done;
	unsigned level;
	unsigned char *buf; /* while it is merged: bytes [pos, len) not yet decoded */
	size_t pos, len;
};

/* An item's place in the sort order: its time as an unsigned number of
 * the same order, and its index in the buffer. */
struct okey { uint64_t t; uint32_t idx, pad; };

struct ev_sorter {
	struct item *items;
	size_t cap, alloc, used; /* cap: items the budget allows */
	struct okey *order;      /* 2 * order_alloc: the order and scratch */
	size_t order_alloc;
	int big;                 /* items is an ev_big_reserve of cap items */
	uint64_t pos, total;
	char *tmpdir;
	struct run *runs;
	unsigned nruns, caprun, spills;
	unsigned char *wbuf; /* RUN_BUF: the run being written, wlen bytes */
	size_t wlen;
	const char *errpath;
};

/* Ties of time (the same order; rank, stream and seq decide), then
 * insertion (the index). */
static int tie_less(const struct item *items, const struct okey *a, const struct okey *b)
{
	int c = ev_rec_order_cmp(&items[a->idx].rec, &items[b->idx].rec);
	return c ? c < 0 : a->idx < b->idx;
}

/* Stable merge sort of k[0..n) by tie_less, tmp[0..n) as scratch; short
 * stretches by insertion. */
static void sort_ties(const struct item *items, struct okey *k, struct okey *tmp, size_t n)
{
	if (n <= 16) {
		for (size_t i = 1; i < n; i++) {
			struct okey v = k[i];
			size_t j = i;
			for (; j > 0 && tie_less(items, &v, &k[j - 1]); j--)
				k[j] = k[j - 1];
			k[j] = v;
		}
		return;
	}
	size_t h = n / 2, a = 0, b = h, o = 0;
	sort_ties(items, k, tmp, h);
	sort_ties(items, k + h, tmp, n - h);
	while (a < h && b < n)
		tmp[o++] = tie_less(items, &k[b], &k[a]) ? k[b++] : k[a++];
	while (a < h)
		tmp[o++] = k[a++];
	while (b < n)
		tmp[o++] = k[b++];
	memcpy(k, tmp, n * sizeof *k);
}

/* s->order[0..used) gets the buffered items' indices in sort order.
 *
 * Items are 104 bytes.  Kineto traces arrive in thousands of short runs
 * (an op is written when it ends, after the ops inside it), and qsort
 * moving items through a comparison function was 6% of kineto2ev's
 * instructions.  Here only 16-byte keys move: a radix sort, least
 * significant 11 bits first, over the bits in which the times differ
 * (stable: equal times keep insertion order), then each stretch of equal
 * times goes in (rank, stream, seq) order. */
static int sort_order(ev_sorter *s)
{
	size_t n = s->used;
	if (n > s->order_alloc) {
		size_t want = s->order_alloc ? s->order_alloc : 4096;
		while (want < n)
			want *= 2;
		if (want > s->cap)
			want = s->cap;
		struct okey *o = realloc(s->order, 2 * want * sizeof *o);
		if (!o)
			return EV_ERR_NOMEM;
		s->order = o;
		s->order_alloc = want;
	}
	struct okey *k = s->order, *tmp = s->order + s->order_alloc;
	uint64_t differ = 0;
	for (size_t i = 0; i < n; i++) {
		k[i].t = (uint64_t)s->items[i].rec.ts ^ (1ULL << 63);
		k[i].idx = (uint32_t)i;
		differ |= k[i].t ^ k[0].t;
	}
	size_t count[2048];
	for (unsigned shift = 0; shift < 64 && (differ >> shift); shift += 11) {
		memset(count, 0, sizeof count);
		for (size_t i = 0; i < n; i++)
			count[(k[i].t >> shift) & 2047]++;
		size_t sum = 0;
		for (size_t d = 0; d < 2048; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(k[i].t >> shift) & 2047]++] = k[i];
		struct okey *t = k;
		k = tmp;
		tmp = t;
	}
	if (k != s->order)
		memcpy(s->order, k, n * sizeof *k);
	k = s->order;
	tmp = s->order + s->order_alloc;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && k[j].t == k[i].t; j++)
			;
		if (j - i > 1)
			sort_ties(s->items, k + i, tmp, j - i);
	}
	return EV_OK;
}

int ev_sorter_open(ev_sorter **out, uint64_t budget, const char *tmpdir)
{
	ev_sorter *s = calloc(1, sizeof *s);
	*out = NULL;
	if (!s)
		return EV_ERR_NOMEM;
	if (!tmpdir || !*tmpdir)
		tmpdir = getenv("TMPDIR");
	s->tmpdir = strdup(tmpdir && *tmpdir ? tmpdir : "/tmp");
	/* Each buffered item also has two order keys (sort_order); indices
	 * are 32 bits, and the arrays' sizes must fit a size_t. */
	uint64_t cap = budget / (sizeof(struct item) + 2 * sizeof(struct okey));
	uint64_t most = SIZE_MAX / (sizeof(struct item) + 2 * sizeof(struct okey));
	if (most > UINT32_MAX)
		most = UINT32_MAX;
	s->cap = cap < 1024 ? 1024 : cap > most ? (size_t)most : (size_t)cap;
	if (!s->tmpdir) {
		ev_sorter_close(s);
		return EV_ERR_NOMEM;
	}
	*out = s;
	return EV_OK;
}

/* A new empty run file at the end of the run list. */
static int new_run(ev_sorter *s, struct run **out)
{
	if (s->nruns == s->caprun) {
		unsigned n = s->caprun ? s->caprun * 2 : 32;
		struct run *nr = realloc(s->runs, n * sizeof *nr);
		if (!nr)
			return EV_ERR_NOMEM;
		s->runs = nr;
		s->caprun = n;
	}
	struct run *r = &s->runs[s->nruns];
	memset(r, 0, sizeof *r);
	r->fd = -1;
	r->slot = -1;
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
	r->fd = fd;
	s->nruns++;
	s->errpath = r->path;
	*out = r;
	return EV_OK;
}

static void drop_run(struct run *r)
{
	if (r->fd >= 0)
		close(r->fd);
	if (r->path) {
		unlink(r->path);
		ev_temp_unregister(r->slot);
		free(r->path);
	}
	memset(r, 0, sizeof *r);
	r->fd = -1;
}

/* The written part of s->wbuf to the run file fd. */
static int flush_run(ev_sorter *s, int fd)
{
	int rc = ev_write_all(fd, s->wbuf, s->wlen);
	s->wlen = 0;
	return rc;
}

/* Append an item to the run being written (file fd), through s->wbuf. */
static int put_item(ev_sorter *s, int fd, const struct item *it)
{
	if (RUN_BUF - s->wlen < ITEM_DISK) {
		int rc = flush_run(s, fd);
		if (rc)
			return rc;
	}
	unsigned char *b = s->wbuf + s->wlen;
	ev_rec_encode(&it->rec, b);
	ev_put64(b + EV_RECORD_SIZE, it->pos);
	s->wlen += ITEM_DISK;
	return EV_OK;
}

/* A new run to write: its file, and the write buffer (made once). */
static int start_run(ev_sorter *s, struct run **out)
{
	if (!s->wbuf && !(s->wbuf = malloc(RUN_BUF)))
		return EV_ERR_NOMEM;
	s->wlen = 0;
	return new_run(s, out);
}

static int merge_runs(ev_sorter *s, unsigned from, unsigned to, ev_writer *w,
                      int (*fix)(void *, struct ev_rec *), void *ctx, struct run *dst);

/* Merge the runs [from, nruns) into one run of the given level. */
static int compact(ev_sorter *s, unsigned from, unsigned level)
{
	struct run *r;
	int rc = start_run(s, &r);
	if (rc)
		return rc;
	unsigned dst = s->nruns - 1;
	if ((rc = merge_runs(s, from, dst, NULL, NULL, NULL, r)) != EV_OK)
		return rc;
	s->errpath = r->path;
	if ((rc = flush_run(s, r->fd)) != EV_OK)
		return rc;
	for (unsigned k = from; k < dst; k++)
		drop_run(&s->runs[k]);
	s->runs[from] = s->runs[dst];
	s->runs[from].level = level;
	memset(&s->runs[dst], 0, sizeof s->runs[dst]);
	s->nruns = from + 1;
	return EV_OK;
}

static int spill(ev_sorter *s)
{
	struct run *r;
	int rc = start_run(s, &r);
	if (rc)
		return rc;
	s->spills++;
	if ((rc = sort_order(s)) != EV_OK)
		return rc;
	for (size_t i = 0; i < s->used; i++)
		if ((rc = put_item(s, r->fd, &s->items[s->order[i].idx])) != EV_OK)
			return rc;
	if ((rc = flush_run(s, r->fd)) != EV_OK)
		return rc;
	s->used = 0;
	/* Carry: FAN_IN runs of one level become one of the next.  Levels do not
	 * increase along the list, so equal levels are at the end. */
	for (;;) {
		unsigned lv = s->runs[s->nruns - 1].level, k = s->nruns;
		while (k > 0 && s->runs[k - 1].level == lv)
			k--;
		if (s->nruns - k < FAN_IN)
			return EV_OK;
		if ((rc = compact(s, k, lv + 1)) != EV_OK)
			return rc;
	}
}

static void free_items(ev_sorter *s)
{
	if (s->big)
		ev_big_release(s->items, s->cap * sizeof *s->items);
	else
		free(s->items);
	s->items = NULL;
	s->alloc = 0;
	s->big = 0;
	free(s->order);
	s->order = NULL;
	s->order_alloc = 0;
}

int ev_sorter_add(ev_sorter *s, const struct ev_rec *rec)
{
	int rc;
	if (s->used == s->alloc) {
		if (!s->items && (s->items = ev_big_reserve(s->cap * sizeof *s->items)) != NULL) {
			/* The whole budget at once: it never moves, and only what
			 * is touched is backed, so small inputs stay small. */
			s->big = 1;
			s->alloc = s->cap;
		} else if (s->alloc < s->cap) {
			/* No reservation: grow geometrically up to the budget. */
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

/* The next item of a run being merged into r->cur, or r->done at its end. */
static int run_next(struct run *r)
{
	if (r->len - r->pos < ITEM_DISK) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
		while (r->len < ITEM_DISK) {
			ssize_t k = read(r->fd, r->buf + r->len, RUN_BUF - r->len);
			if (k < 0) {
				if (errno == EINTR)
					continue;
				return EV_ERR_IO;
			}
			if (k == 0)
				break;
			r->len += (size_t)k;
		}
		if (r->len == 0) {
			r->done = 1;
			return EV_OK;
		}
		if (r->len < ITEM_DISK) {
			errno = EIO; /* the file ends inside an item: not a run this wrote */
			return EV_ERR_IO;
		}
	}
	const unsigned char *b = r->buf + r->pos;
	ev_rec_decode(b, &r->cur.rec);
	r->cur.pos = ev_le64(b + EV_RECORD_SIZE);
	r->pos += ITEM_DISK;
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

/* k-way merge of runs [from, to) to a writer (through fix) or to the run
 * dst being written, through the k-way heap (lib/stream/ev_kmerge.c) with
 * the items' insertion numbers as ties. */
static int merge_runs(ev_sorter *s, unsigned from, unsigned to, ev_writer *w,
                      int (*fix)(void *, struct ev_rec *), void *ctx, struct run *dst)
{
	int rc = EV_OK;
	unsigned n = to - from;
	struct ev_kmerge heap;
	unsigned char *bufs = malloc((n ? n : 1) * RUN_BUF);
	if (!bufs || ev_kmerge_init(&heap, n) != EV_OK) {
		free(bufs);
		return EV_ERR_NOMEM;
	}
	for (unsigned k = from; k < to && !rc; k++) {
		struct run *r = &s->runs[k];
		s->errpath = r->path;
		r->buf = bufs + (size_t)(k - from) * RUN_BUF;
		r->pos = r->len = 0;
		r->done = 0;
		if (lseek(r->fd, 0, SEEK_SET) != 0) {
			rc = EV_ERR_IO;
			break;
		}
		if ((rc = run_next(r)) != EV_OK || r->done)
			continue;
		rc = ev_kmerge_add(&heap, k, &r->cur.rec, r->cur.pos);
	}
	while (!rc && heap.n > 0) {
		struct run *r = &s->runs[ev_kmerge_top(&heap)];
		if (dst && (rc = put_item(s, dst->fd, &r->cur)) != EV_OK) {
			s->errpath = dst->path;
			break;
		}
		if (!dst && (rc = emit(w, &r->cur.rec, fix, ctx)) != EV_OK)
			break;
		s->errpath = r->path;
		if ((rc = run_next(r)) != EV_OK)
			break;
		if (r->done)
			ev_kmerge_drop(&heap);
		else
			ev_kmerge_next(&heap, r->cur.pos);
	}
	for (unsigned k = from; k < to; k++)
		s->runs[k].buf = NULL;
	free(bufs);
	ev_kmerge_free(&heap);
	return rc;
}

int ev_sorter_finish(ev_sorter *s, ev_writer *w, int (*fix)(void *ctx, struct ev_rec *rec), void *ctx)
{
	int rc = EV_OK;
	if (s->nruns == 0) {
		if ((rc = sort_order(s)) != EV_OK)
			return rc;
		for (size_t i = 0; i < s->used && !rc; i++)
			rc = emit(w, &s->items[s->order[i].idx].rec, fix, ctx);
		return rc;
	}
	if (s->used && (rc = spill(s)) != EV_OK)
		return rc;
	free_items(s);
	/* At most FAN_IN runs in the last merge: fold the tail first. */
	while (s->nruns > FAN_IN)
		if ((rc = compact(s, s->nruns - FAN_IN, s->runs[s->nruns - FAN_IN].level + 1)) != EV_OK)
			return rc;
	return merge_runs(s, 0, s->nruns, w, fix, ctx, NULL);
}

uint64_t ev_sorter_count(const ev_sorter *s) { return s->total; }
unsigned ev_sorter_runs(const ev_sorter *s) { return s->spills; }
const char *ev_sorter_errpath(const ev_sorter *s) { return s->errpath ? s->errpath : ""; }

void ev_sorter_close(ev_sorter *s)
{
	if (!s)
		return;
	for (unsigned k = 0; k < s->nruns; k++)
		drop_run(&s->runs[k]);
	free(s->runs);
	free(s->wbuf);
	free_items(s);
	free(s->tmpdir);
	free(s);
}
