/* SPDX-License-Identifier: MIT */
/*
 * assemble.c - the finished schedule from the spooled rank parts: one file
 * (text: `num_ranks N` and the rank blocks in order; binary: header, jump
 * table and the rank sections), or one part file per selected rank.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "goal_int.h"

static int out_fail(struct ev_goal *g, int rc)
{
	g->err.status = rc;
	g->err.in_output = 1;
	g->err.msg[0] = '\0';
	return rc;
}

/* The buffer for reading spool files back, made when first needed (small
 * schedules never leave memory); it goes with the arena. */
static unsigned char *iobuf(struct ev_goal *g)
{
	if (!g->iobuf)
		g->iobuf = goal_arena_alloc(&g->arena, GOAL_IOBUF, 0);
	return g->iobuf;
}

static int spool_size_error(struct ev_goal *g, uint64_t have, uint64_t want)
{
	g->err.status = EV_ERR_IO;
	g->err.in_output = 0;
	snprintf(g->err.msg, sizeof g->err.msg, "%s: spool holds %llu bytes, %llu expected", g->sf.name,
	         (unsigned long long)have, (unsigned long long)want);
	return EV_ERR_IO;
}

/* Copy a whole spool (in memory or in the spool file) to out; want is
 * its size. */
static int copy_spool(struct ev_goal *g, const struct spool *s, uint64_t want, ev_output *out)
{
	int werr;
	if (s->bytes + s->len != want)
		return spool_size_error(g, s->bytes + s->len, want);
	if (!spool_in_memory(s) && !iobuf(g))
		return goal_nomem(g);
	if (spool_copy(s, out, &werr, g->iobuf, GOAL_IOBUF))
		return werr ? out_fail(g, werr) : goal_io_fail(g, g->sf.name);
	return EV_OK;
}

/* A sequential reader over a spool: its buffer, or its blocks in the
 * spool file. */
struct sread {
	const struct spool *s;
	struct spool_iter it;   /* the blocks still to read (file spools) */
	const unsigned char *p; /* unread bytes: p[pos .. len) */
	unsigned char *buf;
	size_t cap, pos, len;
};

static void sr_open(struct sread *r, const struct spool *s, unsigned char *buf, size_t cap)
{
	r->s = s;
	r->pos = 0;
	if (spool_in_memory(s)) {
		r->p = s->buf;
		r->len = s->len;
		r->buf = NULL;
		r->it.left = 0;
		return;
	}
	r->p = r->buf = buf;
	r->cap = cap;
	r->len = 0;
	spool_iter_start(s, &r->it);
}

/* Keep the unread bytes, read more blocks.  -1 on a read error (errno). */
static int sr_fill(struct sread *r)
{
	if (!r->buf)
		return 0;
	memmove(r->buf, r->buf + r->pos, r->len - r->pos);
	r->len -= r->pos;
	r->pos = 0;
	while (r->it.left && r->cap - r->len >= r->s->cap) {
		long n = spool_next_block(r->s, &r->it, r->buf + r->len, r->cap - r->len);
		if (n < 0)
			return -1;
		r->len += (size_t)n;
	}
	return 0;
}

/* The next n bytes (n far below the buffer), or NULL at the end (errno 0)
 * or on a read error. */
static inline const unsigned char *sr_take(struct sread *r, size_t n)
{
	if (r->len - r->pos < n) {
		errno = 0;
		if (sr_fill(r) || r->len - r->pos < n)
			return NULL;
	}
	const unsigned char *q = r->p + r->pos;
	r->pos += n;
	return q;
}

static int spool_short(struct ev_goal *g)
{
	if (errno)
		return goal_io_fail(g, g->sf.name);
	g->err.status = EV_ERR_IO;
	g->err.in_output = 0;
	snprintf(g->err.msg, sizeof g->err.msg, "%s: spool ends early", g->sf.name);
	return EV_ERR_IO;
}

/* The nodes of a section: the first 23 bytes of each from the nodes spool,
 * its successor counts from the counts spool, the offsets into the
 * appendix counted here. */
static int write_nodes(struct ev_goal *g, struct rankst *rs, ev_output *out)
{
	enum { K = 1024 };
	struct sread e, f;
	int rc = EV_OK;
	if ((!spool_in_memory(&rs->nodes) || !spool_in_memory(&rs->cnt)) && !iobuf(g))
		return goal_nomem(g);
	sr_open(&e, &rs->nodes, g->iobuf, GOAL_IOBUF / 2);
	sr_open(&f, &rs->cnt, g->iobuf ? g->iobuf + GOAL_IOBUF / 2 : NULL, GOAL_IOBUF / 2);
	uint64_t run = 0;
	for (uint32_t i = 0; i < rs->next_node && !rc;) {
		uint32_t k = rs->next_node - i < K ? rs->next_node - i : K;
		unsigned char *o = (unsigned char *)ev_output_reserve(out, (size_t)k * EV_GOAL_NODE_BYTES);
		if (!o) {
			static const char z;
			rc = ev_output_write(out, &z, 0);
			rc = out_fail(g, rc ? rc : EV_ERR_NOMEM);
			break;
		}
		for (uint32_t j = 0; j < k; j++, o += EV_GOAL_NODE_BYTES) {
			const unsigned char *a = sr_take(&e, 23), *c = sr_take(&f, 8);
			if (!a || !c) {
				rc = spool_short(g);
				break;
			}
			uint32_t nr = le_get32(c), ni = le_get32(c + 4);
			memcpy(o, a, 23);
			le_put32(o + 23, nr);
			le_put32(o + 27, (uint32_t)run);
			run += nr;
			le_put32(o + 31, ni);
			le_put32(o + 35, (uint32_t)run);
			run += ni;
		}
		if (rc)
			break;
		ev_output_commit(out, (size_t)k * EV_GOAL_NODE_BYTES);
		i += k;
	}
	if (!rc && run != rs->nedges)
		rc = spool_size_error(g, run, rs->nedges);
	return rc;
}

static uint64_t section_size(const struct rankst *rs)
{
	return 8 + 4 * rs->nroots + (uint64_t)EV_GOAL_NODE_BYTES * rs->next_node + 4 * rs->nedges;
}

int goal_write_section(struct ev_goal *g, struct rankst *rs, ev_output *out)
{
	unsigned char h[8];
	le_put32(h, rs ? rs->next_node : 0);
	le_put32(h + 4, rs ? (uint32_t)rs->nroots : 0);
	int rc = ev_output_write(out, h, 8);
	if (rc)
		return out_fail(g, rc);
	if (!rs)
		return EV_OK;
	/* The appendix is the successor spool as it stands. */
	if ((rc = copy_spool(g, &rs->roots, 4 * rs->nroots, out)) || (rc = write_nodes(g, rs, out)) ||
	    (rc = copy_spool(g, &rs->succ, 4 * rs->nedges, out)))
		return rc;
	return EV_OK;
}

int goal_write_bin_header(ev_output *out, uint32_t nranks, uint8_t max_cpu, uint8_t max_nic, const uint64_t *sizes)
{
	unsigned char h[14];
	le_put64(h, EV_GOAL_MAGIC);
	le_put32(h + 8, nranks);
	h[12] = max_cpu;
	h[13] = max_nic;
	int rc = ev_output_write(out, h, 14);
	/* Offsets are relative to the byte after the magic. */
	uint64_t pos = 4 + 2 + 16 * (uint64_t)nranks;
	for (uint32_t r = 0; r < nranks && !rc; r++) {
		unsigned char j[16];
		le_put64(j, pos);
		pos += sizes[r];
		le_put64(j + 8, pos);
		rc = ev_output_write(out, j, 16);
	}
	return rc;
}

static int write_binary(struct ev_goal *g, ev_output *out)
{
	uint32_t n = g->nranks;
	uint64_t *sizes = calloc(n ? n : 1, sizeof *sizes);
	if (!sizes)
		return goal_nomem(g);
	for (uint32_t r = 0; r < n; r++) {
		struct rankst *rs = goal_rank(g, r);
		sizes[r] = rs ? section_size(rs) : 8;
	}
	int rc = goal_write_bin_header(out, n, g->max_cpu, g->max_nic, sizes);
	free(sizes);
	if (rc)
		return out_fail(g, rc);
	/* Each section as soon as its rank is drained (drain.c). */
	for (uint32_t r = 0; r < n; r++)
		if ((rc = goal_drain_wait(g, r)) || (rc = goal_write_section(g, goal_rank(g, r), out)))
			return rc;
	return EV_OK;
}

static int write_text(struct ev_goal *g, ev_output *out)
{
	int rc = ev_output_printf(out, "num_ranks %u\n", g->nranks);
	if (rc)
		return out_fail(g, rc);
	for (uint32_t r = 0; r < g->nranks; r++) {
		struct rankst *rs = goal_rank(g, r);
		if (!rs) {
			if ((rc = ev_output_printf(out, "rank %u {\n}\n", r)))
				return out_fail(g, rc);
		} else if ((rc = copy_spool(g, &rs->text, rs->text.bytes + rs->text.len, out))) {
			return rc;
		}
	}
	return EV_OK;
}

int ev_goal_write(ev_goal *g, ev_output *out)
{
	if (!g->finished || !g->nranks || !ev_goal_ranks_empty(&g->sel))
		return EV_ERR_ARG;
	return g->o.binary ? write_binary(g, out) : write_text(g, out);
}

int ev_goal_part_name(char *buf, size_t n, const char *dir, uint32_t r, int binary)
{
	return snprintf(buf, n, "%s/rank_%u.%s", dir, r, binary ? "bin" : "goal") >= (int)n ? EV_ERR_RANGE : EV_OK;
}

/* One part through ev_output (temp name, renamed when complete). */
static int write_part(struct ev_goal *g, struct rankst *rs, uint32_t r, const char *path)
{
	ev_output *out;
	int rc = ev_output_open(&out, path);
	if (rc)
		return goal_io_fail(g, path);
	if (g->o.binary)
		rc = goal_write_section(g, rs, out);
	else if (rs)
		rc = copy_spool(g, &rs->text, rs->text.bytes + rs->text.len, out);
	else if ((rc = ev_output_printf(out, "rank %u {\n}\n", r)))
		rc = out_fail(g, rc);
	if (rc) {
		ev_output_abort(out);
		if (g->err.in_output)
			goal_io_fail(g, path);
		return g->err.status;
	}
	if ((rc = ev_output_close(out)))
		return goal_io_fail(g, path);
	return EV_OK;
}

int ev_goal_write_parts(ev_goal *g, const char *dir)
{
	if (!g->finished || !g->nranks)
		return EV_ERR_ARG;
	char path[4096];
	for (uint32_t r = 0; r < g->nranks; r++) {
		if (!ev_goal_ranks_has(&g->sel, r))
			continue;
		if (ev_goal_part_name(path, sizeof path, dir, r, g->o.binary)) {
			g->err.status = EV_ERR_RANGE;
			snprintf(g->err.msg, sizeof g->err.msg, "%s: path too long", dir);
			return EV_ERR_RANGE;
		}
		int rc = goal_drain_wait(g, r);
		if (rc || (rc = write_part(g, goal_rank(g, r), r, path)))
			return rc;
	}
	return EV_OK;
}
