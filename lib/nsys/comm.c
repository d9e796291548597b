/* SPDX-License-Identifier: MIT */
/*
 * comm.c - GPU processes and communicators: the registries, communicators
 * synthesized when init markers are missing (as ATLAHS does), and the
 * global ranks (a GPU's rank in the largest communicator that covers it,
 * the others in (node, pid) order, --rank-map first).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct gpu *nsys_gpu_find(struct ev_nsys *s, int file, uint32_t pid)
{
	uint64_t *v = ev_map_get(&s->gpu_idx, nsys_key3((uint64_t)file, pid, 0x67707500));
	return v ? &s->gpus[*v - 1] : NULL;
}

struct gpu *nsys_gpu_add(struct ev_nsys *s, int file, uint32_t pid)
{
	struct gpu *g = nsys_gpu_find(s, file, pid);
	if (g)
		return g;
	if (s->ngpus == s->capgpus) {
		size_t cap = s->capgpus ? 2 * s->capgpus : 16;
		struct gpu *n = realloc(s->gpus, cap * sizeof *n);
		if (!n)
			return NULL;
		s->gpus = n;
		s->capgpus = cap;
	}
	g = &s->gpus[s->ngpus];
	memset(g, 0, sizeof *g);
	g->file = file;
	g->pid = pid;
	g->device = -1;
	g->rank = -1;
	ev_map_init(&g->ptr_stream);
	ev_map_init(&g->stream_ptr);
	if (ev_map_put(&s->gpu_idx, nsys_key3((uint64_t)file, pid, 0x67707500), s->ngpus + 1))
		return NULL;
	s->ngpus++;
	return g;
}

struct comm *nsys_comm_find(struct ev_nsys *s, uint64_t id)
{
	uint64_t *v = ev_map_get(&s->comm_idx, id ? id : 1);
	return v ? &s->comms[*v - 1] : NULL;
}

struct comm *nsys_comm_add(struct ev_nsys *s, uint64_t id, uint32_t nranks)
{
	struct comm *c = nsys_comm_find(s, id);
	if (c)
		return c->nranks == nranks ? c : NULL;
	if (nranks == 0 || nranks > (1u << 20))
		return NULL;
	if (s->ncomms == s->capcomms) {
		size_t cap = s->capcomms ? 2 * s->capcomms : 8;
		struct comm *n = realloc(s->comms, cap * sizeof *n);
		if (!n)
			return NULL;
		s->comms = n;
		s->capcomms = cap;
	}
	c = &s->comms[s->ncomms];
	memset(c, 0, sizeof *c);
	c->id = id;
	c->nranks = nranks;
	c->gpu_of = malloc(nranks * sizeof *c->gpu_of);
	if (!c->gpu_of)
		return NULL;
	for (uint32_t i = 0; i < nranks; i++)
		c->gpu_of[i] = -1;
	if (ev_map_put(&s->comm_idx, id ? id : 1, s->ncomms + 1))
		return NULL;
	s->ncomms++;
	return c;
}

/* Global comm id of (file, pid, commHash) as an API call names it. */
uint64_t nsys_comm_id_of(struct ev_nsys *s, int file, uint32_t pid, uint64_t hash)
{
	uint64_t *v = ev_map_get(&s->comm_alias, nsys_key3((uint64_t)file, pid, hash));
	return v ? *v : hash;
}

/* Global rank of comm rank r of comm id, or -1. */
int32_t nsys_comm_global(struct ev_nsys *s, uint64_t id, int64_t r)
{
	struct comm *c = nsys_comm_find(s, id);
	if (!c || r < 0 || r >= c->nranks || c->gpu_of[r] < 0)
		return -1;
	return (int32_t)s->gpus[c->gpu_of[r]].rank;
}

static int node_cmp(const char *a, const char *b)
{
	size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");
	if (la && !a[la] && lb && !b[lb]) {
		while (*a == '0' && a[1]) a++, la--;
		while (*b == '0' && b[1]) b++, lb--;
		if (la != lb)
			return la < lb ? -1 : 1;
	}
	return strcmp(a, b);
}

static int gpu_order(const void *pa, const void *pb, void *ctx)
{
	const struct ev_nsys *ns = ctx;
	const struct gpu *a = &ns->gpus[*(const int *)pa], *b = &ns->gpus[*(const int *)pb];
	int c = node_cmp(ns->files[a->file].node, ns->files[b->file].node);
	if (c)
		return c;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return strcmp(ns->files[a->file].path, ns->files[b->file].path);
}

static int usage_order(const void *pa, const void *pb, void *ctx)
{
	const struct usage *a = pa, *b = pb;
	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	return gpu_order(&a->gpu, &b->gpu, ctx);
}

/* ATLAHS' fallback: members in (node, pid) order, ring in rank order, tree
 * a binary heap, as many channels as the widest NCCL kernel. */
int nsys_synthesize(struct ev_nsys *s)
{
	struct usage *u = s->usage.data;
	size_t n = s->usage.len;
	if (n)
		qsort_r(u, n, sizeof *u, usage_order, s);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && u[j].hash == u[i].hash)
			j++;
		uint32_t nr = (uint32_t)(j - i);
		struct comm *c = nsys_comm_find(s, u[i].hash) ? NULL : nsys_comm_add(s, u[i].hash, nr);
		if (!c) {
			i = j;
			continue;
		}
		c->synthesized = 1;
		s->nsynth++;
		int64_t nch = 1;
		for (uint32_t r = 0; r < nr; r++) {
			struct gpu *g = &s->gpus[u[i + r].gpu];
			c->gpu_of[r] = u[i + r].gpu;
			if (g->max_grid > nch)
				nch = g->max_grid;
			if (ev_map_put(&s->comm_rank, nsys_key3((uint64_t)g->file, g->pid, c->id), r + 1))
				return nsys_nomem(s);
		}
		if (nch > MAXCH)
			nch = MAXCH;
		c->ring_next = malloc(MAXCH * nr * sizeof *c->ring_next);
		c->tree = malloc(MAXCH * nr * 4 * sizeof *c->tree);
		if (!c->ring_next || !c->tree)
			return nsys_nomem(s);
		for (size_t k = 0; k < MAXCH * nr; k++)
			c->ring_next[k] = -2;
		for (size_t k = 0; k < MAXCH * nr * 4; k++)
			c->tree[k] = -2;
		for (int64_t ch = 0; ch < nch; ch++)
			for (uint32_t r = 0; r < nr; r++) {
				c->ring_next[(size_t)ch * nr + r] = (int32_t)((r + 1) % nr);
				int32_t *node = c->tree + ((size_t)ch * nr + r) * 4;
				node[0] = r ? (int32_t)((r - 1) / 2) : -1;
				node[1] = 2 * r + 1 < nr ? (int32_t)(2 * r + 1) : -1;
				node[2] = 2 * r + 2 < nr ? (int32_t)(2 * r + 2) : -1;
				node[3] = -1;
			}
		c->nch_ring = c->nch_tree = (uint32_t)nch;
		nsys_warn(s, "communicator %016llx: no init markers; %u members, rings and trees synthesized "
		            "in (node, pid) order", (unsigned long long)c->id, nr);
		i = j;
	}
	return 0;
}

static int comm_order(const void *pa, const void *pb, void *ctx)
{
	const struct ev_nsys *ns = ctx;
	const struct comm *a = &ns->comms[*(const int *)pa], *b = &ns->comms[*(const int *)pb];
	if (a->nranks != b->nranks)
		return a->nranks > b->nranks ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int read_rank_map(struct ev_nsys *s)
{
	FILE *in = fopen(s->o.rank_map, "r");
	if (!in)
		return nsys_fail(s, EV_ERR_FORMAT, "%s: %s", s->o.rank_map, strerror(errno));
	char line[1024];
	int status = 0;
	unsigned lineno = 0;
	while (!status && fgets(line, sizeof line, in)) {
		lineno++;
		char node[512], extra[2];
		long long pid, rank;
		char *h = strchr(line, '#');
		if (h)
			*h = '\0';
		int n = sscanf(line, "%511s %lld %lld %1s", node, &pid, &rank, extra);
		if (n <= 0)
			continue;
		if (n != 3 || pid < 0 || rank < 0 || rank > INT32_MAX) {
			status = nsys_fail(s, EV_ERR_FORMAT, "%s: line %u: expected 'NODE PID RANK'", s->o.rank_map, lineno);
			break;
		}
		int hit = 0;
		for (size_t i = 0; i < s->ngpus; i++) {
			struct gpu *g = &s->gpus[i];
			struct file *f = &s->files[g->file];
			const char *base = strrchr(f->path, '/');
			base = base ? base + 1 : f->path;
			if (g->pid == (uint32_t)pid && (!strcmp(node, f->node) || !strcmp(node, f->host) || !strcmp(node, base))) {
				g->rank = rank;
				hit = 1;
			}
		}
		if (!hit)
			nsys_warn(s, "%s: line %u: no GPU process %s pid %lld in the inputs", s->o.rank_map, lineno, node, pid);
	}
	if (!status && ferror(in))
		status = nsys_fail(s, EV_ERR_FORMAT, "%s: %s", s->o.rank_map, strerror(errno));
	fclose(in);
	return status;
}

int nsys_assign_ranks(struct ev_nsys *s)
{
	struct ev_map used;
	int status = 0;
	int64_t next = 0;
	ev_map_init(&used);
	int *order = malloc((s->ngpus + s->ncomms + 1) * sizeof *order);
	if (!order)
		return nsys_nomem(s);
	if (s->o.rank_map && (status = read_rank_map(s)) != 0)
		goto out;
	for (size_t i = 0; i < s->ngpus; i++)
		if (s->gpus[i].rank >= 0) {
			if (ev_map_get(&used, (uint64_t)s->gpus[i].rank + 1)) {
				status = nsys_fail(s, EV_ERR_FORMAT, "%s: rank %lld given to two GPU processes", s->o.rank_map,
				                      (long long)s->gpus[i].rank);
				goto out;
			}
			if (ev_map_put(&used, (uint64_t)s->gpus[i].rank + 1, 1))
				goto nomem;
			if (s->gpus[i].rank >= next)
				next = s->gpus[i].rank + 1;
		}
	for (size_t i = 0; i < s->ncomms; i++)
		order[i] = (int)i;
	qsort_r(order, s->ncomms, sizeof *order, comm_order, s);
	for (size_t i = 0; i < s->ncomms; i++) {
		struct comm *c = &s->comms[order[i]];
		for (uint32_t r = 0; r < c->nranks; r++) {
			if (c->gpu_of[r] < 0 || s->gpus[c->gpu_of[r]].rank >= 0)
				continue;
			int64_t want = ev_map_get(&used, (uint64_t)r + 1) ? next : r;
			s->gpus[c->gpu_of[r]].rank = want;
			if (ev_map_put(&used, (uint64_t)want + 1, 1))
				goto nomem;
			if (want >= next)
				next = want + 1;
		}
	}
	for (size_t i = 0; i < s->ngpus; i++)
		order[i] = (int)i;
	qsort_r(order, s->ngpus, sizeof *order, gpu_order, s);
	for (size_t i = 0; i < s->ngpus; i++) {
		struct gpu *g = &s->gpus[order[i]];
		if (g->rank >= 0)
			continue;
		while (ev_map_get(&used, (uint64_t)next + 1))
			next++;
		g->rank = next;
		if (ev_map_put(&used, (uint64_t)next + 1, 1))
			goto nomem;
	}
	goto out;
nomem:
	status = nsys_nomem(s);
out:
	free(order);
	ev_map_free(&used);
	return status;
}
