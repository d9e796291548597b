/* SPDX-License-Identifier: MIT */
/*
 * kineto_meta.c - the rarer parts of a Kineto document, tokenized whole:
 * counter events (one sample per numeric argument) and distributedInfo
 * (rank, world size, NCCL version).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kineto/kineto_internal.h"

#define META_TOKENS 65536

static int tok_i64(const char *text, const struct ev_json_tok *t, int i, int64_t *v)
{
	struct ev_kspan s = { .p = text + t[i].start, .n = (uint32_t)(t[i].end - t[i].start),
		              .type = t[i].type == EV_JT_STRING ? '"' : t[i].type == EV_JT_PRIMITIVE ? 'n' : 0 };
	return ev_kspan_i64(&s, v);
}

/* The tokens of a small JSON value (at most META_TOKENS), *n of them (an
 * error status when it does not tokenize); NULL on no memory. */
static struct ev_json_tok *meta_tokens(const char *text, size_t len, int *n)
{
	struct ev_json_tok *t = malloc(META_TOKENS * sizeof *t);
	if (t)
		*n = ev_json_tokenize(text, len, t, META_TOKENS);
	return t;
}

int kineto_counters(ev_kineto *k, int fidx, const struct ev_kspan *args, const struct ev_rec *r)
{
	const char *text = args->p;
	int n, rc = EV_OK;
	struct ev_json_tok *t = meta_tokens(text, args->n, &n);
	if (!t)
		return EV_ERR_NOMEM;
	const char *base = ev_strtab_get(k->st, r->name, NULL);
	for (int m = 0, i = 1; n > 0 && m < t[0].size; m++) {
		int64_t val;
		if (tok_i64(text, t, i + 1, &val) == 0 && val >= 0) {
			char kb[256], nb[512];
			if (t[i].end - t[i].start < 200 && ev_json_str(text, t, i, kb) != (size_t)-1) {
				int nn = snprintf(nb, sizeof nb, "%s.%s", base ? base : "", kb);
				struct ev_rec c = *r;
				c.type = EV_COUNTER;
				c.op = 0;
				c.bytes = (uint64_t)val;
				c.dur = 0;
				if (nn > 0 && (size_t)nn < sizeof nb && ev_strtab_intern(k->st, nb, (size_t)nn, &c.name) == EV_OK &&
				    (rc = ev_kineto_add(k, fidx, &c)) != EV_OK)
					break;
			}
		}
		i = ev_json_skip(t, i + 1);
	}
	free(t);
	return rc;
}

int kineto_distributed_info(ev_kineto *k, int fidx, const char *text, size_t len)
{
	struct ev_kineto_file *fi = &k->files[fidx];
	int n, v, rc = EV_OK;
	struct ev_json_tok *t = text ? meta_tokens(text, len, &n) : NULL;
	if (!t)
		return text ? EV_ERR_NOMEM : EV_OK;
	int64_t x;
	if (n > 0 && t[0].type == EV_JT_OBJECT) {
		if ((v = ev_json_get(text, t, 0, "rank")) >= 0 && tok_i64(text, t, v, &x) == 0)
			fi->rank = x;
		if ((v = ev_json_get(text, t, 0, "world_size")) >= 0 && tok_i64(text, t, v, &x) == 0)
			fi->world = x;
		if ((v = ev_json_get(text, t, 0, "nccl_version")) >= 0 && t[v].type == EV_JT_STRING &&
		    t[v].end - t[v].start < (int)sizeof fi->nccl_version &&
		    ev_json_str(text, t, v, fi->nccl_version) != (size_t)-1) {
			char line[128];
			snprintf(line, sizeof line, "#meta nccl_version=%s", fi->nccl_version);
			rc = kineto_comm_line(k, line);
		}
	}
	free(t);
	return rc;
}

int kineto_device_properties(ev_kineto *k, int fidx, const char *text, size_t len)
{
	struct ev_kineto_file *fi = &k->files[fidx];
	int n;
	struct ev_json_tok *t = text ? meta_tokens(text, len, &n) : NULL;
	if (!t)
		return text ? EV_ERR_NOMEM : EV_OK;
	fi->ngpus = 0;
	if (n > 0 && t[0].type == EV_JT_ARRAY) {
		/* The array's elements, one value after the other. */
		for (int e = 0, i = 1; e < t[0].size && i < n; e++, i = ev_json_skip(t, i)) {
			/* A device is an entry with a name: a writer that indexes
			 * the list by device id (ev2perfetto --tb) leaves the
			 * others empty, and they are no GPUs the process saw. */
			if (t[i].type != EV_JT_OBJECT || ev_json_get(text, t, i, "name") < 0)
				continue;
			fi->ngpus++;
			int v = ev_json_get(text, t, i, "id");
			int64_t id;
			char name[sizeof fi->gpu_name[0]];
			if (v < 0 || tok_i64(text, t, v, &id) != 0 || id < 0 || id >= 16)
				continue;
			v = ev_json_get(text, t, i, "name");
			if (v < 0 || t[v].type != EV_JT_STRING || t[v].end - t[v].start >= (int)sizeof name ||
			    ev_json_str(text, t, v, name) == (size_t)-1)
				continue;
			for (char *p = name; *p; p++)
				if (*p == ' ' || *p == '\t' || *p == '\\' || (unsigned char)*p < 0x20)
					*p = '_';
			memcpy(fi->gpu_name[id], name, sizeof name);
		}
	}
	free(t);
	return EV_OK;
}
