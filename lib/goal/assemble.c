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

static int spool_size_error(struct ev_goal *g, const struct spool *s, uint64_t have, uint64_t want)
{
	g->err.status = EV_ERR_IO;
	g->err.in_output = 0;
	snprintf(g->err.msg, sizeof g->err.msg, "%s: spool holds %llu bytes, %llu expected", s->path,
	         (unsigned long long)have, (unsigned long long)want);
	return EV_ERR_IO;
}

/* Copy a whole spool (in memory or in its file) to out. */
static int copy_spool(struct ev_goal *g, const struct spool *s, uint64_t want, ev_output *out)
{
	int werr, rc;
	if (spool_in_memory(s)) {
		if (s->len != want)
			return spool_size_error(g, s, s->len, want);
		return s->len && (rc = ev_output_write(out, s->buf, s->len)) ? out_fail(g, rc) : EV_OK;
	}
	if (s->bytes != want)
		return spool_size_error(g, s, s->bytes, want);
	if (goal_copy_file(s->path, out, &werr, g->iobuf, GOAL_IOBUF))
		return werr ? out_fail(g, werr) : goal_io_fail(g, s->path);
	return EV_OK;
}

/* The nodes spool holds each node's 39 bytes followed by its successor
 * entries.  A walk over it in pieces: pass 0 writes the nodes, pass 1 the
 * successor entries (the appendix, in node order). */
struct walk {
	int pass;
	unsigned char node[EV_GOAL_NODE_BYTES];
	size_t have;       /* bytes of node collected */
	uint64_t succ;     /* successor bytes still to come for the current node */
	uint64_t nodes;    /* nodes seen */
};

static int walk_piece(struct walk *w, const unsigned char *p, size_t n, ev_output *out)
{
	int rc;
	while (n) {
		if (w->succ) {
			size_t k = n < w->succ ? n : (size_t)w->succ;
			if (w->pass == 1 && (rc = ev_output_write(out, p, k)))
				return rc;
			p += k;
			n -= k;
			w->succ -= k;
			continue;
		}
		if (!w->have && n >= EV_GOAL_NODE_BYTES) {
			/* The common case: a whole node in the piece. */
			if (w->pass == 0 && (rc = ev_output_write(out, p, EV_GOAL_NODE_BYTES)))
				return rc;
			w->succ = 4 * ((uint64_t)ev_le32(p + 23) + ev_le32(p + 31));
			p += EV_GOAL_NODE_BYTES;
			n -= EV_GOAL_NODE_BYTES;
			w->nodes++;
			continue;
		}
		size_t k = EV_GOAL_NODE_BYTES - w->have;
		k = n < k ? n : k;
		memcpy(w->node + w->have, p, k);
		w->have += k;
		p += k;
		n -= k;
		if (w->have == EV_GOAL_NODE_BYTES) {
			if (w->pass == 0 && (rc = ev_output_write(out, w->node, EV_GOAL_NODE_BYTES)))
				return rc;
			w->succ = 4 * ((uint64_t)ev_le32(w->node + 23) + ev_le32(w->node + 31));
			w->have = 0;
			w->nodes++;
		}
	}
	return EV_OK;
}

static int walk_nodes(struct ev_goal *g, struct rankst *rs, ev_output *out, int pass)
{
	struct walk w = { .pass = pass };
	const struct spool *s = &rs->nodes;
	int rc;
	if (spool_in_memory(s)) {
		if ((rc = walk_piece(&w, s->buf, s->len, out)))
			return out_fail(g, rc);
	} else {
		int fd = open(s->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return goal_io_fail(g, s->path);
		for (;;) {
			ssize_t n = read(fd, g->iobuf, GOAL_IOBUF);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				int e = errno;
				close(fd);
				errno = e;
				return goal_io_fail(g, s->path);
			}
			if (n == 0)
				break;
			if ((rc = walk_piece(&w, g->iobuf, (size_t)n, out))) {
				close(fd);
				return out_fail(g, rc);
			}
		}
		close(fd);
	}
	if (w.nodes != rs->next_node || w.have || w.succ)
		return spool_size_error(g, s, w.nodes, rs->next_node);
	return EV_OK;
}

static uint64_t section_size(const struct rankst *rs)
{
	return 8 + 4 * rs->nroots + (uint64_t)EV_GOAL_NODE_BYTES * rs->next_node + 4 * rs->nedges;
}

int goal_write_section(struct ev_goal *g, struct rankst *rs, ev_output *out)
{
	unsigned char h[8];
	ev_put32(h, rs ? rs->next_node : 0);
	ev_put32(h + 4, rs ? (uint32_t)rs->nroots : 0);
	int rc = ev_output_write(out, h, 8);
	if (rc)
		return out_fail(g, rc);
	if (!rs)
		return EV_OK;
	if ((rc = copy_spool(g, &rs->roots, 4 * rs->nroots, out)) || (rc = walk_nodes(g, rs, out, 0)) ||
	    (rc = walk_nodes(g, rs, out, 1)))
		return rc;
	return EV_OK;
}

int goal_write_bin_header(ev_output *out, uint32_t nranks, uint8_t max_cpu, uint8_t max_nic, const uint64_t *sizes)
{
	unsigned char h[14];
	ev_put64(h, EV_GOAL_MAGIC);
	ev_put32(h + 8, nranks);
	h[12] = max_cpu;
	h[13] = max_nic;
	int rc = ev_output_write(out, h, 14);
	/* Offsets are relative to the byte after the magic. */
	uint64_t pos = 4 + 2 + 16 * (uint64_t)nranks;
	for (uint32_t r = 0; r < nranks && !rc; r++) {
		unsigned char j[16];
		ev_put64(j, pos);
		pos += sizes[r];
		ev_put64(j + 8, pos);
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
	for (uint32_t r = 0; r < n; r++)
		if ((rc = goal_write_section(g, goal_rank(g, r), out)))
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
		} else if ((rc = copy_spool(g, &rs->text, spool_in_memory(&rs->text) ? rs->text.len : rs->text.bytes,
		                            out))) {
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
		rc = copy_spool(g, &rs->text, rs->text.len, out);
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
		struct rankst *rs = goal_rank(g, r);
		int rc;
		if (rs && !g->o.binary && !spool_in_memory(&rs->text)) {
			/* The spool is in a directory inside dir: a rename. */
			if (rename(rs->text.path, path))
				return goal_io_fail(g, path);
		} else if ((rc = write_part(g, rs, r, path))) {
			return rc;
		}
	}
	return EV_OK;
}
