/* SPDX-License-Identifier: MIT */
/*
 * markers.c - the ASCII markers of ATLAHS' annotated NCCL (comm info,
 * rings, trees; "pid N" where globalTid is missing) and the stock NCCL
 * init payloads that describe communicators.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Number after the word `key`: the word must start the text or follow a
 * space or comma; decimal, negative or 0x hex; "(nil)" reads as 0. */
int ev_nsys_marker_num(const char *text, const char *key, int64_t *v)
{
	size_t kl = strlen(key);
	for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
		if (p != text && p[-1] != ' ' && p[-1] != ',')
			continue;
		const char *q = p + kl;
		if (*q != ' ' && *q != ':')
			continue;
		while (*q == ' ' || *q == ':')
			q++;
		if (strncmp(q, "(nil)", 5) == 0) {
			*v = 0;
			return 0;
		}
		char *end;
		errno = 0;
		if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
			unsigned long long u = strtoull(q + 2, &end, 16);
			if (end == q + 2 || errno)
				return -1;
			*v = (int64_t)u;
		} else {
			long long x = strtoll(q, &end, 10);
			if (end == q || errno)
				return -1;
			*v = x;
		}
		return 0;
	}
	return -1;
}

/* pid of an NVTX row: from globalTid, else the marker's "pid N". */
int nsys_row_pid(sqlite3_stmt *st, int col, const char *text, uint32_t *pid)
{
	if (col >= 0 && sqlite3_column_type(st, col) != SQLITE_NULL) {
		*pid = nsys_pid_of(sqlite3_column_int64(st, col));
		return 0;
	}
	int64_t v;
	if (text && (ev_nsys_marker_num(text, "pid", &v) == 0) && v >= 0 && v <= 0xFFFFFF) {
		*pid = (uint32_t)v;
		return 0;
	}
	return -1;
}

/* CommInitRank* payloads (stock NCCL 2.25+ with blobs). */
int nsys_row_init_payload(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	size_t n;
	const unsigned char *b = nsys_col_blob(s, st, 1, &n);
	int64_t v[NPF];
	unsigned m;
	uint32_t pid;
	if (!b || nsys_decode_payload(f, b, n, v, &m) || nsys_row_pid(st, 0, NULL, &pid))
		return 0;
	unsigned need = 1u << PF_COMM | 1u << PF_NRANKS | 1u << PF_RANK;
	if ((m & need) != need || v[PF_RANK] < 0 || v[PF_RANK] >= v[PF_NRANKS])
		return 0;
	int fi = (int)(f - s->files);
	struct gpu *g = nsys_gpu_find(s, fi, pid);
	if (!g)
		return 0;
	struct comm *c = nsys_comm_add(s, (uint64_t)v[PF_COMM], (uint32_t)v[PF_NRANKS]);
	if (!c) {
		nsys_warn(s, "%s: communicator %llx: inconsistent rank count, ignored", f->path,
		            (unsigned long long)v[PF_COMM]);
		return 0;
	}
	c->gpu_of[v[PF_RANK]] = (int)(g - s->gpus);
	if (ev_map_put(&s->comm_rank, nsys_key3((uint64_t)fi, pid, c->id), (uint64_t)v[PF_RANK] + 1))
		return nsys_nomem(s);
	return 0;
}


int nsys_row_comm_info(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	const char *t = nsys_col_text(st, 1);
	int64_t hash, id, rank, nranks;
	uint32_t pid;
	int fi = (int)(f - s->files);
	if (!t || ev_nsys_marker_num(t, "commHash", &hash) || ev_nsys_marker_num(t, "commId", &id) || ev_nsys_marker_num(t, "rank", &rank) ||
	    ev_nsys_marker_num(t, "nranks", &nranks) || nsys_row_pid(st, 0, t, &pid) || nranks <= 0 || rank < 0 || rank >= nranks) {
		f->skipped_bad++;
		return 0;
	}
	struct gpu *g = nsys_gpu_add(s, fi, pid);
	struct comm *c = g ? nsys_comm_add(s, (uint64_t)id, (uint32_t)nranks) : NULL;
	if (!g)
		return nsys_nomem(s);
	if (!c) {
		nsys_warn(s, "%s: communicator %llx: inconsistent rank count, marker ignored", f->path,
		            (unsigned long long)id);
		return 0;
	}
	c->gpu_of[rank] = (int)(g - s->gpus);
	f->annotated = 1;
	if (ev_map_put(&s->comm_alias, nsys_key3((uint64_t)fi, pid, (uint64_t)hash), (uint64_t)id) ||
	    ev_map_put(&s->comm_rank, nsys_key3((uint64_t)fi, pid, (uint64_t)id), (uint64_t)rank + 1))
		return nsys_nomem(s);
	return 0;
}

/* Numbers separated by single punctuation characters: "3->0->1", "1/-1/-1->0->2". */
int nsys_parse_chain(const char *p, int64_t *v, int n)
{
	for (int i = 0; i < n; i++) {
		char *end;
		errno = 0;
		v[i] = strtoll(p, &end, 10);
		if (end == p || errno)
			return -1;
		p = end;
		if (i + 1 < n) {
			if (*p == '-' && p[1] == '>')
				p += 2;
			else if (*p == '/')
				p++;
			else
				return -1;
		}
	}
	return 0;
}

int nsys_row_topo(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	const char *t = nsys_col_text(st, 1);
	int fi = (int)(f - s->files);
	int64_t hash;
	uint32_t pid;
	if (!t || ev_nsys_marker_num(t, "commHash", &hash) || nsys_row_pid(st, 0, t, &pid)) {
		f->skipped_bad++;
		return 0;
	}
	if (t[0] == 'n') { /* an API call: remember comms that lack init markers */
		f->annotated = 1;
		if (ev_map_get(&s->comm_alias, nsys_key3((uint64_t)fi, pid, (uint64_t)hash)))
			return 0;
		struct gpu *g = nsys_gpu_add(s, fi, pid);
		if (!g)
			return nsys_nomem(s);
		uint64_t k = nsys_key3((uint64_t)(g - s->gpus), (uint64_t)hash, 0x757365);
		if (ev_map_get(&s->usage_seen, k))
			return 0;
		struct usage *u = ev_vec_push(&s->usage);
		if (!u || ev_map_put(&s->usage_seen, k, 1))
			return nsys_nomem(s);
		u->hash = (uint64_t)hash;
		u->gpu = (int)(g - s->gpus);
		return 0;
	}
	uint64_t *id = ev_map_get(&s->comm_alias, nsys_key3((uint64_t)fi, pid, (uint64_t)hash));
	struct comm *c = id ? nsys_comm_find(s, *id) : NULL;
	const char *rp = strstr(t, " Rings [");
	const char *tp = strstr(t, " Trees [");
	const char *p = rp ? rp + 8 : tp ? tp + 8 : NULL;
	char *end;
	long ch = p ? strtol(p, &end, 10) : -1;
	if (!c || !p || ch < 0 || ch >= MAXCH || end[0] != ']' || end[1] != ' ') {
		f->skipped_bad++;
		return 0;
	}
	int64_t v[5];
	size_t n = c->nranks;
	if (rp) {
		if (nsys_parse_chain(end + 2, v, 3) || v[1] < 0 || v[1] >= (int64_t)n || v[2] < 0 || v[2] >= (int64_t)n) {
			f->skipped_bad++;
			return 0;
		}
		if (!c->ring_next) {
			c->ring_next = malloc(MAXCH * n * sizeof *c->ring_next);
			if (!c->ring_next)
				return nsys_nomem(s);
			for (size_t i = 0; i < MAXCH * n; i++)
				c->ring_next[i] = -2;
		}
		c->ring_next[(size_t)ch * n + (size_t)v[1]] = (int32_t)v[2];
		if ((uint32_t)ch + 1 > c->nch_ring)
			c->nch_ring = (uint32_t)ch + 1;
	} else {
		/* d0/d1/d2->me->up */
		if (nsys_parse_chain(end + 2, v, 5) || v[3] < 0 || v[3] >= (int64_t)n) {
			f->skipped_bad++;
			return 0;
		}
		if (!c->tree) {
			c->tree = malloc(MAXCH * n * 4 * sizeof *c->tree);
			if (!c->tree)
				return nsys_nomem(s);
			for (size_t i = 0; i < MAXCH * n * 4; i++)
				c->tree[i] = -2;
		}
		int32_t *node = c->tree + ((size_t)ch * n + (size_t)v[3]) * 4;
		node[0] = (int32_t)v[4];
		node[1] = (int32_t)v[0];
		node[2] = (int32_t)v[1];
		node[3] = (int32_t)v[2];
		if ((uint32_t)ch + 1 > c->nch_tree)
			c->nch_tree = (uint32_t)ch + 1;
	}
	return 0;
}
