/* SPDX-License-Identifier: MIT */
/*
 * iterdet.c - acelyzer's iteration detection (IterationDectectContext in
 * its pipeline/iteration_detect.py), kernel by kernel on one rank:
 *
 * Looking: the kernels so far, w of them, are searched for a prefix p
 * (p < floor(w/3)) followed by one word twice, w - p = 2h; the smallest
 * such p wins, and only once w >= 10.  The word is the iteration; the
 * first interval is the start of its second copy minus that of its first.
 *
 * Found: the kernels after it are collected; when they spell the word,
 * the interval from the last iteration's start to theirs is counted and
 * they start over.  When one more kernel arrives than the word has, the
 * sequence broke (a kernel missing or added): the longest tail of the
 * collected kernels that begins the word is kept, and the next complete
 * word is not counted (acelyzer's "restarted"), only its start kept.
 *
 * acelyzer compares letters, chr(65 + hash(name) % 26), Python's salted
 * string hash: two names can share a letter, differently in each run.
 * Here names are compared, which is acelyzer's result whenever the
 * names of a rank's kernels have distinct letters.
 *
 * Memory: while looking, every kernel up to window (then it gives up, for
 * the caller to say so); once found, twice the word.
 */
#include <stdlib.h>
#include <string.h>

#include "flex/iterdet_int.h"
#include "ev/stream.h"

void fs_iterdet_init(struct fs_iterdet *d, size_t window)
{
	memset(d, 0, sizeof *d);
	d->window = window;
}

static int reserve(struct fs_iterdet *d, size_t n)
{
	if (n <= d->cap)
		return EV_OK;
	size_t cap = d->cap ? d->cap : 64;
	while (cap < n)
		cap *= 2;
	uint64_t *nm = realloc(d->name, cap * sizeof *nm);
	if (!nm)
		return EV_ERR_NOMEM;
	d->name = nm;
	int64_t *ts = realloc(d->ts, cap * sizeof *ts);
	if (!ts)
		return EV_ERR_NOMEM;
	d->ts = ts;
	d->cap = cap;
	return EV_OK;
}

static int same(const uint64_t *a, const uint64_t *b, size_t n)
{
	return memcmp(a, b, n * sizeof *a) == 0;
}

/* Looking: the word, if the kernels now end in it twice after a prefix. */
static int look(struct fs_iterdet *d)
{
	size_t w = d->len;
	if (w < 2 * FS_ITER_MIN_RUN)
		return EV_OK;
	for (size_t p = 0; p < w / 3; p++) {
		if ((w - p) % 2)
			continue;
		size_t h = (w - p) / 2;
		if (!same(d->name + p, d->name + p + h, h))
			continue;
		d->ref = malloc(h * sizeof *d->ref);
		if (!d->ref)
			return EV_ERR_NOMEM;
		memcpy(d->ref, d->name + p, h * sizeof *d->ref);
		d->rlen = h;
		d->prev = d->ts[p + h];
		d->sum = d->ts[p + h] - d->ts[p];
		d->iterations = 1;
		d->len = 0;
		d->state = 1;
		return EV_OK;
	}
	return EV_OK;
}

/* One kernel too many: keep the longest tail of the collected kernels
 * that is a beginning of the word, or none. */
static void skip(struct fs_iterdet *d)
{
	size_t rem = d->len < d->rlen ? d->len : d->rlen;
	for (size_t k = 1; rem > 0; k++, rem--)
		if (same(d->ref, d->name + k, rem)) {
			memmove(d->name, d->name + k, rem * sizeof *d->name);
			memmove(d->ts, d->ts + k, rem * sizeof *d->ts);
			d->len = rem;
			return;
		}
	d->len = 0;
}

int fs_iterdet_add(struct fs_iterdet *d, uint64_t name, int64_t ts)
{
	if (d->state == 2)
		return EV_OK;
	int rc = reserve(d, d->len + 1);
	if (rc != EV_OK)
		return rc;
	d->name[d->len] = name;
	d->ts[d->len++] = ts;
	if (d->state == 0) {
		if ((rc = look(d)) != EV_OK)
			return rc;
		if (d->state == 0 && d->len >= d->window) {
			d->state = 2;
			free(d->name);
			free(d->ts);
			d->name = NULL;
			d->ts = NULL;
			d->len = d->cap = 0;
		}
		return EV_OK;
	}
	if (d->len > d->rlen) {
		skip(d);
		d->skips++;
		d->restarted = 1;
	}
	if (d->len == d->rlen && same(d->ref, d->name, d->rlen)) {
		if (!d->restarted) {
			d->iterations++;
			d->sum += d->ts[0] - d->prev;
		}
		d->restarted = 0;
		d->prev = d->ts[0];
		d->len = 0;
	}
	return EV_OK;
}

double fs_iterdet_mean(const struct fs_iterdet *d)
{
	return d->iterations ? (double)d->sum / (double)d->iterations : 0;
}

void fs_iterdet_free(struct fs_iterdet *d)
{
	free(d->name);
	free(d->ts);
	free(d->ref);
	memset(d, 0, sizeof *d);
}
