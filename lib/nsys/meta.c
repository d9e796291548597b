/* SPDX-License-Identifier: MIT */
/*
 * meta.c - node names and the metadata lines of the stream: #src per
 * input, #rank per GPU process, #comm/#ring/#tree per communicator.
 */
#include <regex.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void nsys_node_from_path(struct ev_nsys *s, struct file *f, int fi)
{
	regmatch_t m[4];
	const char *base = strrchr(f->path, '/');
	base = base ? base + 1 : f->path;
	regex_t re;
	if (s->have_node_re && regexec(&s->node_re, f->path, 2, m, 0) == 0 && m[1].rm_so >= 0) {
		snprintf(f->node, sizeof f->node, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), f->path + m[1].rm_so);
		return;
	}
	if (regcomp(&re, "nid0*([0-9]+)", REG_EXTENDED) == 0) {
		int ok = regexec(&re, base, 2, m, 0) == 0;
		regfree(&re);
		if (ok) {
			snprintf(f->node, sizeof f->node, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), base + m[1].rm_so);
			return;
		}
	}
	if (regcomp(&re, "profile_([0-9]+)_([0-9]+)_([0-9]+)\\.sqlite", REG_EXTENDED) == 0) {
		int ok = regexec(&re, base, 4, m, 0) == 0;
		regfree(&re);
		if (ok) {
			snprintf(f->node, sizeof f->node, "%.*s", (int)(m[2].rm_eo - m[2].rm_so), base + m[2].rm_so);
			return;
		}
	}
	if (f->host[0])
		snprintf(f->node, sizeof f->node, "%s", f->host);
	else
		snprintf(f->node, sizeof f->node, "%d", fi);
}

/* ---- metadata lines -------------------------------------------------- */

/* A key=value value: escaped, spaces replaced (values may not hold one). */
static const char *kv_value(const char *v, char *buf, size_t cap)
{
	if (!v || !*v)
		return "-";
	ev_text_escape(v, strnlen(v, (cap - 1) / 2), buf, cap);
	for (char *p = buf; *p; p++)
		if (*p == ' ')
			*p = '_';
	return buf;
}

static int grow_line(struct ev_nsys *s, size_t need)
{
	if (need <= s->bufcap)
		return 0;
	size_t cap = s->bufcap ? s->bufcap : 4096;
	while (cap < need)
		cap *= 2;
	char *n = realloc(s->buf, cap);
	if (!n)
		return EV_ERR_NOMEM;
	s->buf = n;
	s->bufcap = cap;
	return 0;
}

int nsys_write_meta(struct ev_nsys *s)
{
	int rc = 0;
	char a[1024], b[512], c[512], d[256];
	for (int i = 0; i < s->nfiles && !rc; i++) {
		struct file *f = &s->files[i];
		rc = ev_write_textf(s->w, "#src %d file=%s node=%s host=%s nsys=%s schema=%s nccl=%s", i,
		                    kv_value(f->path, a, sizeof a), kv_value(f->node, b, sizeof b), kv_value(f->host, c, sizeof c),
		                    kv_value(f->version, d, sizeof d), f->schema_ver[0] ? f->schema_ver : "-",
		                    f->annotated ? "annotated" : f->has_blobs ? "stock-blobs" : "stock");
	}
	int *order = malloc((s->ngpus + 1) * sizeof *order);
	if (!order)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < s->ngpus; i++)
		order[i] = (int)i;
	for (size_t i = 1; i < s->ngpus; i++) /* by rank; few GPUs */
		for (size_t j = i; j > 0 && s->gpus[order[j - 1]].rank > s->gpus[order[j]].rank; j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t i = 0; i < s->ngpus && !rc; i++) {
		struct gpu *g = &s->gpus[order[i]];
		struct file *f = &s->files[g->file];
		rc = ev_write_textf(s->w, "#rank %lld host=%s node=%s pid=%u device=%lld src=%d", (long long)g->rank,
		                    kv_value(f->host, a, sizeof a), kv_value(f->node, b, sizeof b), g->pid,
		                    (long long)g->device, g->file);
	}
	free(order);
	for (size_t i = 0; i < s->ncomms && !rc; i++) {
		struct comm *cm = &s->comms[i];
		if ((rc = grow_line(s, 64 + (size_t)cm->nranks * 12 * 6)) != 0)
			return rc;
		size_t n = (size_t)snprintf(s->buf, s->bufcap, "#comm %llu nranks=%u ranks=", (unsigned long long)cm->id, cm->nranks);
		for (uint32_t r = 0; r < cm->nranks; r++)
			n += (size_t)snprintf(s->buf + n, s->bufcap - n, "%s%d", r ? "," : "", nsys_comm_global(s, cm->id, r));
		if (cm->synthesized)
			n += (size_t)snprintf(s->buf + n, s->bufcap - n, " synthesized=1");
		rc = ev_write_text(s->w, s->buf, n);
		for (uint32_t ch = 0; ch < cm->nch_ring && !rc && cm->ring_next; ch++) {
			int32_t *next = cm->ring_next + (size_t)ch * cm->nranks;
			n = (size_t)snprintf(s->buf, s->bufcap, "#ring %llu %u", (unsigned long long)cm->id, ch);
			int32_t r = 0;
			uint32_t k;
			for (k = 0; k < cm->nranks; k++) {
				int32_t gr = nsys_comm_global(s, cm->id, r);
				if (gr < 0 || next[r] < 0)
					break;
				n += (size_t)snprintf(s->buf + n, s->bufcap - n, " %d", gr);
				r = next[r];
				if (r == 0 && k + 1 < cm->nranks)
					break;
			}
			if (k == cm->nranks && r == 0)
				rc = ev_write_text(s->w, s->buf, n);
			else
				nsys_warn(s, "communicator %016llx channel %u: ring markers incomplete, no #ring line",
				            (unsigned long long)cm->id, ch);
		}
		for (uint32_t ch = 0; ch < cm->nch_tree && !rc && cm->tree; ch++) {
			n = (size_t)snprintf(s->buf, s->bufcap, "#tree %llu %u", (unsigned long long)cm->id, ch);
			size_t start = n;
			for (uint32_t r = 0; r < cm->nranks; r++) {
				int32_t *node = cm->tree + ((size_t)ch * cm->nranks + r) * 4;
				if (node[0] == -2 || nsys_comm_global(s, cm->id, r) < 0)
					continue;
				int32_t gl[4];
				for (int k = 0; k < 4; k++)
					gl[k] = node[k] < 0 ? -1 : nsys_comm_global(s, cm->id, node[k]);
				n += (size_t)snprintf(s->buf + n, s->bufcap - n, " %d:%d:%d,%d,%d", nsys_comm_global(s, cm->id, r), gl[0],
				                      gl[1], gl[2], gl[3]);
			}
			if (n > start)
				rc = ev_write_text(s->w, s->buf, n);
		}
	}
	return rc;
}
