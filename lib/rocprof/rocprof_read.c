/* SPDX-License-Identifier: MIT */
/*
 * rocprof_read.c - reading one rocprofv3 JSON document.
 *
 * rocprofiler-sdk writes, in this order, metadata, agents, strings (the
 * names of each record kind's operations, the ROCTx messages), the kernel
 * symbols and then buffer_records: kernel_dispatch, hip_api, hsa_api,
 * marker_api, rccl_api, memory_copy, ...  So every name a record needs is
 * known before its records come, and each record becomes an ev record at
 * once and goes to the sorter.  The reader enters the containers down to
 * the record arrays (ev_json_nest) and copies one element at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocprof/rocprof_int.h"

int ev_rp_names_parse(const char *s, enum ev_rp_names *n)
{
	static const char *const words[] = { "truncated", "formatted", "mangled" };
	for (int i = 0; i < 3; i++)
		if (!strcmp(s, words[i])) {
			*n = (enum ev_rp_names)i;
			return EV_OK;
		}
	return EV_ERR_ARG;
}

int rocprof_scratch(ev_rocprof *r, size_t n)
{
	if (n <= r->scratch_cap)
		return EV_OK;
	char *p = realloc(r->scratch, n);
	if (!p)
		return EV_ERR_NOMEM;
	r->scratch = p;
	r->scratch_cap = n;
	return EV_OK;
}

static int key_is(const char *key, size_t len, const char *s) { return strlen(s) == len && !memcmp(key, s, len); }

/* The reader's path through the document: the tool array and its
 * objects, metadata, strings and buffer_records are entered; the arrays
 * that hold names and records are read element by element. */
static int choose(void *ctx, int depth, const char *key, size_t len)
{
	ev_rocprof *r = ctx;
	struct ev_rocprof_file *fi = &r->files[r->cur];
	if (!key) { /* an element of the tool array: one process */
		if (depth == 2)
			fi->processes++;
		return depth == 2 ? EV_JSON_ENTER : EV_JSON_SKIP;
	}
	if (depth == 1) {
		if (!key_is(key, len, "rocprofiler-sdk-tool"))
			return EV_JSON_SKIP;
		r->tool_seen = 1;
		return EV_JSON_ENTER;
	}
	if (depth == 3) {
		r->section = RP_S_NONE;
		r->array = RP_A_NONE;
		if (key_is(key, len, "metadata") || key_is(key, len, "strings") || key_is(key, len, "buffer_records")) {
			r->section = key[0] == 'm' ? RP_S_METADATA : key[0] == 's' ? RP_S_STRINGS : RP_S_BUFFERS;
			return EV_JSON_ENTER;
		}
		r->array = key_is(key, len, "agents") ? RP_A_AGENTS : key_is(key, len, "kernel_symbols") ? RP_A_SYMBOLS : RP_A_NONE;
		return r->array ? EV_JSON_ITEMS : EV_JSON_SKIP;
	}
	if (depth != 4)
		return EV_JSON_SKIP;
	r->array = RP_A_NONE;
	switch (r->section) {
	case RP_S_METADATA:
		return key_is(key, len, "pid") || key_is(key, len, "init_time") || key_is(key, len, "fini_time") ||
		                       key_is(key, len, "node") ? EV_JSON_COPY : EV_JSON_SKIP;
	case RP_S_STRINGS:
		r->array = key_is(key, len, "buffer_records") ? RP_A_KINDS : key_is(key, len, "marker_api") ? RP_A_MESSAGES : RP_A_NONE;
		return r->array ? EV_JSON_ITEMS : EV_JSON_SKIP;
	case RP_S_BUFFERS:
		r->array = key_is(key, len, "kernel_dispatch") ? RP_A_KERNELS : key_is(key, len, "hip_api") ? RP_A_HIP :
		           key_is(key, len, "marker_api") ? RP_A_MARKERS : key_is(key, len, "memory_copy") ? RP_A_COPIES : RP_A_OTHER;
		/* Other record arrays are read too, only to name a non-empty one. */
		r->other_named = 0;
		return EV_JSON_ITEMS;
	default:
		return EV_JSON_SKIP;
	}
}

/* ---- one JSON value's tokens ---------------------------------------- */

struct doc {
	const char *text;
	const struct ev_json_tok *t;
};

static int tokenize(ev_rocprof *r, const char *text, size_t len, struct doc *d)
{
	for (;;) {
		int n = ev_json_tokenize(text, len, r->toks, r->ntoks);
		if (n > 0) {
			d->text = text;
			d->t = r->toks;
			return EV_OK;
		}
		if (n != EV_ERR_LIMIT || r->ntoks >= (1 << 20))
			return n == EV_ERR_NOMEM ? n : n == 0 ? EV_ERR_FORMAT : n;
		struct ev_json_tok *nt = realloc(r->toks, (size_t)r->ntoks * 4 * sizeof *nt);
		if (!nt)
			return EV_ERR_NOMEM;
		r->toks = nt;
		r->ntoks *= 4;
	}
}

/* Token of member a (and, if b, of its member b) of the object at i, or -1. */
static int at(const struct doc *d, int i, const char *a, const char *b)
{
	if (i < 0)
		return -1;
	int v = ev_json_get(d->text, d->t, i, a);
	return v >= 0 && b ? ev_json_get(d->text, d->t, v, b) : v;
}

/* Unsigned integer value of token i: 0 and *v, or -1 (absent, not a number). */
static int num(const struct doc *d, int i, uint64_t *v)
{
	char buf[24];
	if (i < 0 || d->t[i].type != EV_JT_PRIMITIVE)
		return -1;
	int n = d->t[i].end - d->t[i].start;
	if (n <= 0 || n >= (int)sizeof buf)
		return -1;
	memcpy(buf, d->text + d->t[i].start, (size_t)n);
	buf[n] = '\0';
	return ev_parse_u64(buf, v) == 0 ? 0 : -1;
}

static uint64_t num_or(const struct doc *d, int i, uint64_t dflt)
{
	uint64_t v;
	return num(d, i, &v) == 0 ? v : dflt;
}

/* String token i interned (the empty string is id 0). */
static int intern(ev_rocprof *r, const struct doc *d, int i, uint64_t *id)
{
	*id = 0;
	if (i < 0 || d->t[i].type != EV_JT_STRING)
		return EV_OK;
	size_t n = (size_t)(d->t[i].end - d->t[i].start);
	if (rocprof_scratch(r, n + 1))
		return EV_ERR_NOMEM;
	n = ev_json_str(d->text, d->t, i, r->scratch);
	if (n == (size_t)-1)
		return EV_ERR_FORMAT;
	return n ? ev_strtab_intern(r->st, r->scratch, n, id) : EV_OK;
}

/* String token i into buf[cap] (cut to fit), spaces made '_' for key=value. */
static void text_of(const struct doc *d, int i, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (i < 0 || d->t[i].type != EV_JT_STRING)
		return;
	size_t n = (size_t)(d->t[i].end - d->t[i].start);
	char tmp[512];
	if (n >= sizeof tmp || ev_json_str(d->text, d->t, i, tmp) == (size_t)-1)
		return;
	size_t m = strlen(tmp) < cap - 1 ? strlen(tmp) : cap - 1;
	memcpy(buf, tmp, m);
	buf[m] = '\0';
	for (char *p = buf; *p; p++)
		if (*p == ' ' || *p == '\t' || *p == '\n')
			*p = '_';
}

/* 32-bit fields from 64-bit ids: the low bits, counted. */
static uint32_t low32(struct ev_rocprof_file *fi, uint64_t v)
{
	if (v > UINT32_MAX)
		fi->big_field++;
	return (uint32_t)v;
}

/* ---- names ------------------------------------------------------------ */

static int agent(ev_rocprof *r, const struct doc *d)
{
	struct ev_rocprof_file *fi = &r->files[r->cur];
	if (num_or(d, at(d, 0, "type", NULL), 0) != 2) /* 1 CPU, 2 GPU */
		return EV_OK;
	struct ev_rp_gpu *g = realloc(fi->gpus, (size_t)(fi->ngpus + 1) * sizeof *g);
	if (!g)
		return EV_ERR_NOMEM;
	fi->gpus = g;
	g += fi->ngpus;
	memset(g, 0, sizeof *g);
	g->handle = num_or(d, at(d, 0, "id", "handle"), 0);
	/* The GPU's index on its node; agents list the GPUs in that order. */
	g->rank = (uint32_t)num_or(d, at(d, 0, "logical_node_type_id", NULL), (uint64_t)fi->ngpus);
	text_of(d, at(d, 0, "product_name", NULL), g->product, sizeof g->product);
	text_of(d, at(d, 0, "name", NULL), g->arch, sizeof g->arch);
	fi->ngpus++;
	return EV_OK;
}

static int symbol(ev_rocprof *r, const struct doc *d)
{
	static const char *const keys[][3] = {
		{ "truncated_kernel_name", "formatted_kernel_name", "kernel_name" },
		{ "formatted_kernel_name", "kernel_name", "truncated_kernel_name" },
		{ "kernel_name", "formatted_kernel_name", "truncated_kernel_name" },
	};
	uint64_t id, name = 0;
	if (num(d, at(d, 0, "kernel_id", NULL), &id) != 0)
		return EV_OK;
	/* The chosen name, else the next that is not empty (as TraceLens). */
	for (int k = 0; k < 3 && !name; k++) {
		int rc = intern(r, d, at(d, 0, keys[r->o.names][k], NULL), &name);
		if (rc)
			return rc;
	}
	return ev_map_put(&r->symbols, id + 1, name ? name : 1);
}

/* {"kind": "HIP_RUNTIME_API", "operations": [...]}: the n-th element
 * names kind n's operations. */
static int kind_names(ev_rocprof *r, const struct doc *d, uint32_t kind)
{
	int ops = at(d, 0, "operations", NULL);
	if (kind >= RP_MAX_KINDS || ops < 0 || d->t[ops].type != EV_JT_ARRAY)
		return EV_OK;
	uint64_t *ids = calloc(d->t[ops].size ? (size_t)d->t[ops].size : 1, sizeof *ids);
	if (!ids)
		return EV_ERR_NOMEM;
	free(r->kind_ops[kind]);
	r->kind_ops[kind] = ids;
	r->kind_nops[kind] = (uint32_t)d->t[ops].size;
	int i = ops + 1;
	for (int k = 0; k < d->t[ops].size; k++, i = ev_json_skip(d->t, i)) {
		int rc = intern(r, d, i, &ids[k]);
		if (rc)
			return rc;
	}
	return EV_OK;
}

/* {"key": correlation id, "value": "message"}: a ROCTx call's text. */
static int message(ev_rocprof *r, const struct doc *d)
{
	struct ev_rocprof_file *fi = &r->files[r->cur];
	uint64_t corr, msg;
	if (num(d, at(d, 0, "key", NULL), &corr) != 0)
		return EV_OK;
	if (r->nmessages >= r->o.max_markers) {
		fi->lost_markers++;
		return EV_OK;
	}
	int rc = intern(r, d, at(d, 0, "value", NULL), &msg);
	if (rc || !msg)
		return rc;
	r->nmessages++;
	return ev_map_put(&r->messages, corr + 1, msg);
}

static uint64_t op_name(const ev_rocprof *r, uint64_t kind, uint64_t op)
{
	return kind < RP_MAX_KINDS && op < r->kind_nops[kind] ? r->kind_ops[kind][op] : 0;
}

/* ---- records ------------------------------------------------------------ */

static uint32_t gpu_rank(struct ev_rocprof_file *fi, uint64_t handle, int *found)
{
	for (int g = 0; g < fi->ngpus; g++)
		if (fi->gpus[g].handle == handle) {
			fi->gpus[g].used++;
			*found = 1;
			return fi->gpus[g].rank;
		}
	*found = 0;
	return 0;
}

/* The fields every buffer record has: times, thread, correlation ids. */
static void common(ev_rocprof *r, const struct doc *d, struct ev_rec *e)
{
	struct ev_rocprof_file *fi = &r->files[r->cur];
	uint64_t t0 = num_or(d, at(d, 0, "start_timestamp", NULL), 0), t1 = num_or(d, at(d, 0, "end_timestamp", NULL), 0);
	ev_rec_init(e);
	e->src = (uint16_t)r->cur;
	e->ts = t0 > INT64_MAX ? INT64_MAX : (int64_t)t0;
	if (t1 < t0)
		fi->neg_dur++;
	e->dur = t1 > t0 ? t1 - t0 : 0;
	e->id = low32(fi, num_or(d, at(d, 0, "correlation_id", "internal"), 0));
	e->step = low32(fi, num_or(d, at(d, 0, "correlation_id", "external"), 0));
	e->stream = low32(fi, num_or(d, at(d, 0, "thread_id", NULL), 0));
	e->rank = RP_HOST_RANK;
}

static int kernel(ev_rocprof *r, const struct doc *d, struct ev_rec *e)
{
	struct ev_rocprof_file *fi = &r->files[r->cur];
	int info = at(d, 0, "dispatch_info", NULL), found;
	uint64_t kid = num_or(d, at(d, info, "kernel_id", NULL), UINT64_MAX);
	uint64_t *name = kid != UINT64_MAX ? ev_map_get(&r->symbols, kid + 1) : NULL;
	e->type = EV_KERNEL;
	if (!name)
		fi->no_symbol++;
	e->name = name && *name != 1 ? *name : 0;
	if (!e->name) {
		char buf[48];
		if (kid == UINT64_MAX)
			snprintf(buf, sizeof buf, "kernel_id_unknown");
		else
			snprintf(buf, sizeof buf, "kernel_id_%llu", (unsigned long long)kid);
		int rc = ev_strtab_intern(r->st, buf, strlen(buf), &e->name);
		if (rc)
			return rc;
	}
	const char *s = ev_strtab_get(r->st, e->name, NULL);
	e->op = (uint8_t)ev_kernel_class(r->o.rules, s ? s : "");
	e->rank = gpu_rank(fi, num_or(d, at(d, info, "agent_id", "handle"), 0), &found);
	if (!found)
		fi->no_agent++;
	/* The HIP stream when rocprofv3 gives it, else the HSA queue. */
	int sv = at(d, 0, "stream_id", "handle");
	e->stream = low32(fi, sv >= 0 ? num_or(d, sv, 0) : num_or(d, at(d, info, "queue_id", "handle"), 0));
	/* HSA sizes the grid in work-items: blocks = ceil(grid / workgroup).
	 * Without both sizes, both stay 0 (unknown). */
	static const char *const dims[] = { "x", "y", "z" };
	int wgo = at(d, info, "workgroup_size", NULL), gro = at(d, info, "grid_size", NULL);
	uint64_t threads = 1, blocks = 1;
	for (int k = 0; k < 3 && wgo >= 0 && gro >= 0; k++) {
		uint64_t wg = num_or(d, at(d, wgo, dims[k], NULL), 1), gr = num_or(d, at(d, gro, dims[k], NULL), 1);
		wg = wg ? wg : 1;
		threads = threads < (1u << 20) ? threads * wg : threads;
		blocks = blocks <= UINT32_MAX ? blocks * ((gr + wg - 1) / wg) : blocks;
	}
	if (wgo >= 0 && gro >= 0) {
		e->nthreads = threads < 65536 ? (uint16_t)threads : 0;
		e->aux = blocks > UINT32_MAX ? UINT32_MAX : (uint32_t)blocks;
	}
	fi->kernels++;
	return EV_OK;
}

static int copy(ev_rocprof *r, const struct doc *d, struct ev_rec *e, uint64_t name)
{
	struct ev_rocprof_file *fi = &r->files[r->cur];
	const char *s = ev_strtab_get(r->st, name, NULL);
	s = s ? s : "";
	int f1, f2;
	uint32_t dst = gpu_rank(fi, num_or(d, at(d, 0, "dst_agent_id", "handle"), 0), &f1);
	uint32_t src = gpu_rank(fi, num_or(d, at(d, 0, "src_agent_id", "handle"), 0), &f2);
	e->type = EV_MEMCPY;
	e->op = strstr(s, "HOST_TO_DEVICE") ? EV_CP_HTOD : strstr(s, "DEVICE_TO_HOST") ? EV_CP_DTOH :
	        strstr(s, "HOST_TO_HOST") ? EV_CP_HTOH : strstr(s, "DEVICE_TO_DEVICE") ? (src != dst ? EV_CP_PTOP : EV_CP_DTOD) :
	        EV_CP_UNKNOWN;
	/* The GPU end of the copy: the destination unless only the source is one. */
	if (!f1 && !f2)
		fi->no_agent++;
	e->rank = f1 ? dst : f2 ? src : 0;
	e->bytes = num_or(d, at(d, 0, "bytes", NULL), 0);
	int sv = at(d, 0, "stream_id", "handle");
	e->stream = sv >= 0 ? low32(fi, num_or(d, sv, 0)) : 0;
	e->name = name;
	fi->copies++;
	return EV_OK;
}

static int marker(ev_rocprof *r, struct ev_rec *e, uint64_t name)
{
	struct ev_rocprof_file *fi = &r->files[r->cur];
	const char *s = ev_strtab_get(r->st, name, NULL);
	uint64_t *msg = ev_map_get(&r->messages, (uint64_t)e->id + 1);
	/* roctxMarkA is an instant; push/pop and start/stop pairs come as
	 * one record spanning the range. */
	e->type = s && strstr(s, "Mark") ? EV_MARK : EV_RANGE;
	e->op = EV_RG_USER;
	if (e->type == EV_MARK)
		e->dur = 0;
	if (!msg)
		fi->unnamed_markers++;
	e->name = msg ? *msg : name;
	e->step = 0;
	fi->markers++;
	return EV_OK;
}

static void not_converted(struct ev_rocprof_file *fi, const char *key, size_t klen)
{
	size_t n = strlen(fi->not_converted);
	if (n + klen + 3 < sizeof fi->not_converted)
		snprintf(fi->not_converted + n, sizeof fi->not_converted - n, "%s%.*s", n ? ", " : "", (int)klen, key);
}

static int element(ev_rocprof *r, const struct ev_json_item *it)
{
	struct ev_rocprof_file *fi = &r->files[r->cur];
	struct doc d;
	uint64_t offset = it->offset;
	if (r->array == RP_A_OTHER) {
		if (!r->other_named)
			not_converted(fi, it->key, it->key_len);
		r->other_named = 1;
		return EV_OK;
	}
	int rc = tokenize(r, it->text, it->len, &d);
	if (rc) {
		snprintf(r->err, r->errn, "byte %llu: %s", (unsigned long long)offset,
		         rc == EV_ERR_NOMEM ? "out of memory" : rc == EV_ERR_LIMIT ? "more than 2^20 JSON tokens in one record"
		                                                                  : "invalid JSON in a record");
		return rc;
	}
	if (d.t[0].type != EV_JT_OBJECT)
		return EV_OK;
	switch (r->array) {
	case RP_A_AGENTS: return agent(r, &d);
	case RP_A_SYMBOLS: return symbol(r, &d);
	case RP_A_MESSAGES: return message(r, &d);
	case RP_A_KINDS: return kind_names(r, &d, r->nkinds++); /* the elements are numbered by kind */
	default: break;
	}
	struct ev_rec e;
	common(r, &d, &e);
	uint64_t name = op_name(r, num_or(&d, at(&d, 0, "kind", NULL), UINT64_MAX), num_or(&d, at(&d, 0, "operation", NULL), UINT64_MAX));
	switch (r->array) {
	case RP_A_KERNELS: rc = kernel(r, &d, &e); break;
	case RP_A_COPIES: rc = copy(r, &d, &e, name); break;
	case RP_A_MARKERS: rc = marker(r, &e, name); break;
	case RP_A_HIP:
		e.type = EV_API;
		e.op = EV_API_RUNTIME;
		e.name = name;
		e.step = 0;
		fi->api++;
		break;
	default: return EV_OK;
	}
	if (rc)
		return rc;
	if ((rc = ev_sorter_add(r->sorter, &e)) != EV_OK)
		snprintf(r->err, r->errn, "%s", rc == EV_ERR_NOMEM ? "out of memory" : "cannot write a sort run");
	return rc;
}

/* metadata's members: pid, init_time, fini_time (numbers), node.hostname. */
static void metadata(ev_rocprof *r, const char *key, size_t klen, const char *text, size_t len)
{
	struct ev_rocprof_file *fi = &r->files[r->cur];
	struct doc d;
	if (!text)
		return;
	if (key_is(key, klen, "node")) {
		if (tokenize(r, text, len, &d) == EV_OK)
			text_of(&d, at(&d, 0, "hostname", NULL), fi->host, sizeof fi->host);
		return;
	}
	char buf[24];
	uint64_t v;
	if (len >= sizeof buf)
		return;
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (ev_parse_u64(buf, &v) != 0 || v > INT64_MAX)
		return;
	if (key_is(key, klen, "pid"))
		fi->pid = (int64_t)v;
	else if (key_is(key, klen, "init_time"))
		fi->init_ns = (int64_t)v;
	else
		fi->fini_ns = (int64_t)v;
}

int ev_rocprof_read(ev_rocprof *r, int i, ev_input *in, char *err, size_t errn)
{
	struct ev_rocprof_file *fi = &r->files[i];
	ev_json *j;
	int rc;
	*err = '\0';
	r->tool_seen = 0;
	r->cur = i;
	r->err = err;
	r->errn = errn;
	r->section = RP_S_NONE;
	r->array = RP_A_NONE;
	/* Names are per process: kernel ids and correlation ids restart. */
	ev_map_free(&r->symbols);
	ev_map_free(&r->messages);
	r->nmessages = 0;
	for (int k = 0; k < RP_MAX_KINDS; k++) {
		free(r->kind_ops[k]);
		r->kind_ops[k] = NULL;
		r->kind_nops[k] = 0;
	}
	r->nkinds = 0;
	if (ev_json_open(&j, in, NULL, r->o.max_object) != EV_OK)
		return EV_ERR_NOMEM;
	ev_json_nest(j, choose, r);
	struct ev_json_item it;
	while ((rc = ev_json_next(j, &it)) > 0) {
		if (it.kind == EV_JSON_TOP && it.depth == 1)
			continue;
		if (fi->processes > 1) {
			snprintf(err, errn, "byte %llu: several processes in one rocprofiler-sdk-tool array: convert one "
			         "process per file", (unsigned long long)it.offset);
			rc = EV_ERR_FORMAT;
			break;
		}
		if (it.kind == EV_JSON_TOP && it.depth == 4 && r->section == RP_S_METADATA) {
			metadata(r, it.key, it.key_len, it.text, it.len);
		} else if (it.kind == EV_JSON_ELEM && it.text && (rc = element(r, &it)) != EV_OK) {
			break;
		}
	}
	if (rc < 0 && !*err)
		snprintf(err, errn, "%s", ev_json_errdetail(j));
	ev_json_close(j);
	if (rc >= 0 && !r->tool_seen) {
		snprintf(err, errn, "not rocprofv3 JSON (no rocprofiler-sdk-tool member): rocprof2ev reads rocprofv3's "
		         "--output-format json (*_results.json)");
		return EV_ERR_FORMAT;
	}
	return rc < 0 ? rc : EV_OK;
}
