/* SPDX-License-Identifier: MIT */
/*
 * ncclog.c - NCCL_DEBUG=INFO output (--nccl-log), the source of sizes and
 * communicators for exports without NCCL payloads, as ATLAHS accepts it:
 *
 *   host:pid:tid [dev] NCCL INFO comm 0x.. rank R nranks N cudaDev D ... commId 0x.. - Init START
 *   host:pid:tid [dev] NCCL INFO Channel 00/02 :    0   1   2   3
 *   host:pid:tid [dev] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] ...
 *   host:pid:tid [dev] NCCL INFO AllReduce: opCount 3 sendbuff 0x.. recvbuff 0x.. count 1024
 *                                datatype 7 op 0 root 0 comm 0x.. [nranks=4] stream 0x..
 *
 * Calls are matched to the export's NCCL ranges of the same process by
 * kind and order (the k-th AllReduce logged by pid P is the k-th
 * ncclAllReduce range of P): NCCL logs every call in call order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct logop {
	uint32_t pid;
	uint8_t kind, redop, dtype;
	int32_t peer;      /* root or p2p peer, comm rank; -1 */
	uint64_t bytes;
	uint64_t comm;     /* commId of the communicator (or its pointer when no init line) */
};

static int num_after(const char *s, const char *key, int64_t *v)
{
	return ev_nsys_marker_num(s, key, v);
}

unsigned ev_nsys_log_parse(const char *line, struct ev_nsys_log_line *o)
{
	memset(o, 0, sizeof *o);
	o->pid = o->tid = -1;
	o->root = o->rank = o->nranks = o->device = o->channel = -1;
	const char *m = strstr(line, "NCCL INFO ");
	if (!m)
		return 0;
	/* host:pid:tid prefix */
	const char *c1 = memchr(line, ':', (size_t)(m - line));
	if (c1) {
		size_t hl = (size_t)(c1 - line) < sizeof o->host - 1 ? (size_t)(c1 - line) : sizeof o->host - 1;
		memcpy(o->host, line, hl);
		o->host[hl] = '\0';
		char *end;
		long long p = strtoll(c1 + 1, &end, 10);
		if (end != c1 + 1 && *end == ':') {
			o->pid = p;
			o->tid = strtoll(end + 1, NULL, 10);
		}
	}
	m += 10;
	int64_t v;
	const char *colon = strchr(m, ':');
	if (colon && colon - m < 24 && strstr(colon, " opCount ")) {
		char fn[32];
		snprintf(fn, sizeof fn, "nccl%.*s", (int)(colon - m), m);
		o->coll = ev_nccl_api_coll(fn);
		if (o->coll == EV_OP_UNKNOWN)
			return 0;
		const char *oc = strstr(colon, " opCount ");
		o->op_count = strtoull(oc + 9, NULL, 16);
		if (num_after(colon, "count", &v) || v < 0)
			return 0;
		o->count = (uint64_t)v;
		if (!num_after(colon, "datatype", &v))
			o->dtype = ev_nccl_dtype_code(v);
		if (!num_after(colon, "op", &v))
			o->redop = ev_nccl_redop_code(v);
		if (!num_after(colon, "root", &v))
			o->root = v;
		if (!num_after(colon, "comm", &v))
			o->comm = (uint64_t)v;
		const char *nr = strstr(colon, "nranks=");
		if (nr)
			o->nranks = strtoll(nr + 7, NULL, 10);
		if (!num_after(colon, "stream", &v))
			o->stream = v;
		return o->kind = EV_NSYS_LOG_COLL;
	}
	if (!strncmp(m, "comm ", 5) && strstr(m, " commId ") && !num_after(m, "rank", &o->rank) &&
	    !num_after(m, "nranks", &o->nranks) && !num_after(m, "comm", &v)) {
		o->comm = (uint64_t)v;
		if (num_after(m, "commId", &v))
			return 0;
		o->comm_id = (uint64_t)v;
		num_after(m, "cudaDev", &o->device);
		return o->kind = EV_NSYS_LOG_INIT;
	}
	char *end;
	if (!strncmp(m, "Channel ", 8)) {
		o->channel = strtoll(m + 8, &end, 10);
		if (end == m + 8 || *end != '/')
			return 0;
		o->nchannels = strtoll(end + 1, &end, 10);
		while (*end == ' ')
			end++;
		if (*end != ':')
			return 0;
		o->rest = end + 1;
		return o->kind = EV_NSYS_LOG_RING;
	}
	if (!strncmp(m, "Trees ", 6)) {
		o->rest = m + 6;
		return o->kind = EV_NSYS_LOG_TREE;
	}
	const char *pc = strstr(m, " p2p channels,");
	if (pc && strstr(m, "coll channels")) {
		o->nchannels = strtoll(m, NULL, 10);
		const char *q = pc;
		while (q > m && q[-1] >= '0' && q[-1] <= '9')
			q--;
		o->p2p_channels = strtoll(q, NULL, 10);
		return o->kind = EV_NSYS_LOG_CHANNELS;
	}
	return 0;
}

/* The GPU process of a log line: pid among the inputs, the host (when the
 * log names one) matching a file's host or node. */
static struct gpu *log_gpu(struct ev_nsys *s, const struct ev_nsys_log_line *l)
{
	struct gpu *any = NULL;
	for (size_t i = 0; i < s->ngpus; i++) {
		struct gpu *g = &s->gpus[i];
		if ((int64_t)g->pid != l->pid)
			continue;
		const struct file *f = &s->files[g->file];
		if (!l->host[0] || !strcmp(l->host, f->host) || !strcmp(l->host, f->node))
			return g;
		any = g;
	}
	return any;
}

struct logstate {
	struct ev_map ptr_comm;   /* (pid, comm pointer) -> commId */
	struct ev_map last_init;  /* pid -> commId of its last Init line */
	uint64_t lines, colls, unplaced;
};

static int log_ring(struct ev_nsys *s, struct comm *c, const struct ev_nsys_log_line *l)
{
	if (l->channel < 0 || l->channel >= MAXCH)
		return 0;
	if (!c->ring_next) {
		c->ring_next = malloc(MAXCH * (size_t)c->nranks * sizeof *c->ring_next);
		if (!c->ring_next)
			return nsys_nomem(s);
		for (size_t i = 0; i < MAXCH * (size_t)c->nranks; i++)
			c->ring_next[i] = -2;
	}
	int64_t prev = -1, first = -1;
	const char *p = l->rest;
	char *end;
	for (;;) {
		long long r = strtoll(p, &end, 10);
		if (end == p)
			break;
		p = end;
		if (r < 0 || r >= c->nranks)
			return 0;
		if (prev >= 0)
			c->ring_next[(size_t)l->channel * c->nranks + (size_t)prev] = (int32_t)r;
		else
			first = r;
		prev = r;
	}
	if (prev >= 0 && first >= 0)
		c->ring_next[(size_t)l->channel * c->nranks + (size_t)prev] = (int32_t)first;
	if ((uint32_t)l->channel + 1 > c->nch_ring)
		c->nch_ring = (uint32_t)l->channel + 1;
	return 0;
}

/* "Trees [0] 1/-1/-1->0->-1 [1] ...": the logging rank's children and
 * parent on each channel. */
static int log_tree(struct ev_nsys *s, struct comm *c, const struct ev_nsys_log_line *l)
{
	const char *p = l->rest;
	while ((p = strchr(p, '[')) != NULL) {
		char *end;
		long ch = strtol(p + 1, &end, 10);
		int64_t v[5];
		if (end == p + 1 || end[0] != ']' || end[1] != ' ' || ch < 0 || ch >= MAXCH ||
		    nsys_parse_chain(end + 2, v, 5) || v[3] < 0 || v[3] >= (int64_t)c->nranks)
			return 0;
		if (!c->tree) {
			c->tree = malloc(MAXCH * (size_t)c->nranks * 4 * sizeof *c->tree);
			if (!c->tree)
				return nsys_nomem(s);
			for (size_t i = 0; i < MAXCH * (size_t)c->nranks * 4; i++)
				c->tree[i] = -2;
		}
		int32_t *node = c->tree + ((size_t)ch * c->nranks + (size_t)v[3]) * 4;
		for (int k = 0; k < 4; k++) {
			int64_t x = k == 0 ? v[4] : v[k - 1];
			node[k] = x >= 0 && x < (int64_t)c->nranks ? (int32_t)x : -1;
		}
		if ((uint32_t)ch + 1 > c->nch_tree)
			c->nch_tree = (uint32_t)ch + 1;
		p = end;
	}
	return 0;
}

int nsys_read_nccl_log(struct ev_nsys *s)
{
	FILE *in = fopen(s->o.nccl_log, "r");
	if (!in)
		return nsys_fail(s, EV_ERR_IO, "%s: %s", s->o.nccl_log, strerror(errno));
	struct logstate ls;
	memset(&ls, 0, sizeof ls);
	ev_map_init(&ls.ptr_comm);
	ev_map_init(&ls.last_init);
	ev_vec_init(&s->logops, sizeof(struct logop));
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int status = 0;
	struct ev_nsys_log_line l;
	while (!status && (n = getline(&line, &cap, in)) >= 0) {
		ls.lines++;
		if (n && line[n - 1] == '\n')
			line[n - 1] = '\0';
		unsigned kind = ev_nsys_log_parse(line, &l);
		if (!kind || l.pid < 0)
			continue;
		struct gpu *g = log_gpu(s, &l);
		if (kind == EV_NSYS_LOG_INIT) {
			if (l.nranks <= 0 || l.nranks > (1 << 20) || l.rank < 0 || l.rank >= l.nranks)
				continue;
			if (ev_map_put(&ls.ptr_comm, nsys_key3((uint64_t)l.pid, l.comm, 0x6c6f67), l.comm_id) ||
			    ev_map_put(&ls.last_init, (uint64_t)l.pid + 1, l.comm_id))
				status = nsys_nomem(s);
			if (!g)
				continue;
			struct comm *c = nsys_comm_find(s, l.comm_id);
			if (c && c->from_log == 0 && c->gpu_of[l.rank] >= 0)
				continue; /* the export's own markers already say it */
			if (!c && (c = nsys_comm_add(s, l.comm_id, (uint32_t)l.nranks)) != NULL)
				c->from_log = 1;
			if (!c) {
				nsys_warn(s, "%s: communicator %llx: inconsistent rank count, log line ignored", s->o.nccl_log,
				          (unsigned long long)l.comm_id);
				continue;
			}
			c->gpu_of[l.rank] = (int)(g - s->gpus);
			if (ev_map_put(&s->comm_rank, nsys_key3((uint64_t)g->file, g->pid, c->id), (uint64_t)l.rank + 1))
				status = nsys_nomem(s);
		} else if (kind == EV_NSYS_LOG_RING) {
			uint64_t *id = ev_map_get(&ls.last_init, (uint64_t)l.pid + 1);
			struct comm *c = id ? nsys_comm_find(s, *id) : NULL;
			if (c && c->from_log)
				status = log_ring(s, c, &l);
		} else if (kind == EV_NSYS_LOG_TREE) {
			uint64_t *id = ev_map_get(&ls.last_init, (uint64_t)l.pid + 1);
			struct comm *c = id ? nsys_comm_find(s, *id) : NULL;
			if (c && c->from_log)
				status = log_tree(s, c, &l);
		} else if (kind == EV_NSYS_LOG_COLL) {
			ls.colls++;
			if (!g) {
				ls.unplaced++;
				continue;
			}
			struct logop *op = ev_vec_push(&s->logops);
			if (!op) {
				status = nsys_nomem(s);
				break;
			}
			uint64_t *id = ev_map_get(&ls.ptr_comm, nsys_key3((uint64_t)l.pid, l.comm, 0x6c6f67));
			unsigned ts = ev_dtype_size(l.dtype);
			op->pid = g->pid;
			op->kind = (uint8_t)l.coll;
			op->dtype = (uint8_t)l.dtype;
			op->redop = (uint8_t)l.redop;
			op->peer = (int32_t)l.root;
			op->bytes = l.count * (ts ? ts : 1);
			op->comm = id ? *id : l.comm;
		}
	}
	if (!status && ferror(in))
		status = nsys_fail(s, EV_ERR_IO, "%s: %s", s->o.nccl_log, strerror(errno));
	free(line);
	fclose(in);
	ev_map_free(&ls.ptr_comm);
	ev_map_free(&ls.last_init);
	if (!status && ls.unplaced)
		nsys_warn(s, "%s: %llu of %llu NCCL calls logged by processes that are in none of the exports; left out",
		          s->o.nccl_log, (unsigned long long)ls.unplaced, (unsigned long long)ls.colls);
	if (!status && !ls.colls)
		nsys_warn(s, "%s: no NCCL call lines ('NCCL INFO AllReduce: opCount ...'): run with NCCL_DEBUG=INFO "
		          "NCCL_DEBUG_SUBSYS=INIT,COLL", s->o.nccl_log);
	/* Per (pid, kind) ordinal -> index, for the calls to find theirs. */
	struct logop *ops = s->logops.data;
	struct ev_map next;
	ev_map_init(&next);
	for (size_t i = 0; !status && i < s->logops.len; i++) {
		uint64_t k = nsys_key3(ops[i].pid, ops[i].kind, 0x6e657874);
		uint64_t *v = ev_map_get(&next, k);
		uint64_t ord = v ? *v : 0;
		if (ev_map_put(&next, k, ord + 1) || ev_map_put(&s->logidx, nsys_key3(ops[i].pid, ops[i].kind, ord), i + 1))
			status = nsys_nomem(s);
	}
	ev_map_free(&next);
	return status;
}

/* A stock call without payload values: sizes, communicator, root/peer and
 * reduction from the log line of the same process, kind and order. */
int nsys_log_fill(struct ev_nsys *s, struct gpu *g, struct call *c)
{
	if (!s->logops.len)
		return 0;
	uint64_t k = nsys_key3(g->pid, c->kind, 0x6e657874);
	uint64_t *v = ev_map_get(&s->logseen, k);
	uint64_t ord = v ? *v : 0;
	if (ev_map_put(&s->logseen, k, ord + 1))
		return nsys_nomem(s);
	uint64_t *ix = ev_map_get(&s->logidx, nsys_key3(g->pid, c->kind, ord));
	if (!ix)
		return 0;
	const struct logop *op = &((const struct logop *)s->logops.data)[*ix - 1];
	c->bytes = (int64_t)op->bytes;
	c->comm = (int64_t)op->comm;
	c->have |= HC_BYTES | HC_COMM;
	if (op->redop && (c->kind == EV_OP_ALLREDUCE || c->kind == EV_OP_REDUCE || c->kind == EV_OP_REDUCESCATTER)) {
		c->redop = op->redop - 1; /* back to ncclRedOp_t: add_call maps it */
		c->have |= HC_REDOP;
	}
	if (op->peer >= 0) {
		if (c->p2p)
			c->peer = op->peer, c->have |= HC_PEER;
		else
			c->root = op->peer, c->have |= HC_ROOT;
	}
	if (op->dtype) {
		unsigned ts = ev_dtype_size(op->dtype);
		if (ts)
			c->type_size = ts, c->have |= HC_TS;
	}
	return 0;
}
