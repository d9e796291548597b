/* SPDX-License-Identifier: MIT */
/*
 * config.c - which #src keys say what configuration a source belongs to:
 * all of them except those that describe one rank's file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/align.h"
#include "ev/stream.h"

static const char *const per_rank[] = {
	"file", "input", "rank", "local_rank", "base_ns", "host", "hostname", "node", "pid", "tid", "device", "gpu",
	"nsys", "schema", "nccl", "init_ns", "fini_ns", "trace_events",
};

int ev_align_per_rank_key(const char *key)
{
	for (size_t i = 0; i < sizeof per_rank / sizeof *per_rank; i++)
		if (strcmp(key, per_rank[i]) == 0)
			return 1;
	return 0;
}

static int wanted(const char *key, const char *const *keys, size_t nkeys)
{
	if (nkeys == 0)
		return !ev_align_per_rank_key(key);
	for (size_t i = 0; i < nkeys; i++)
		if (strcmp(key, keys[i]) == 0)
			return 1;
	return 0;
}

static const struct ev_kv *sort_kv;
static int cmp_ix(const void *pa, const void *pb)
{
	return strcmp(sort_kv[*(const size_t *)pa].key, sort_kv[*(const size_t *)pb].key);
}

/* Append "sep key=val" within cap; returns the new full length. */
static size_t put(char *buf, size_t cap, size_t len, const char *key, const char *val)
{
	size_t need = (len ? 1 : 0) + strlen(key) + 1 + strlen(val);
	if (len + need < cap) {
		char *p = buf + len;
		if (len)
			*p++ = ' ';
		p += strlen(strcpy(p, key));
		*p++ = '=';
		strcpy(p, val);
	}
	return len + need;
}

size_t ev_align_config_name(const struct ev_src_info *src, const char *const *keys, size_t nkeys, char *buf,
                            size_t cap)
{
	size_t len = 0;
	if (cap)
		buf[0] = '\0';
	if (!src)
		return 0;
	size_t stackix[64], *ix = src->nkv <= 64 ? stackix : malloc(src->nkv * sizeof *ix), n = 0;
	if (!ix)
		return len;
	for (size_t i = 0; i < src->nkv; i++)
		if (wanted(src->kv[i].key, keys, nkeys))
			ix[n++] = i;
	sort_kv = src->kv;
	qsort(ix, n, sizeof *ix, cmp_ix);
	for (size_t i = 0; i < n; i++)
		len = put(buf, cap, len, src->kv[ix[i]].key, src->kv[ix[i]].val);
	if (ix != stackix)
		free(ix);
	return len;
}

/* One run cannot hold a rank twice: when two sources that agree on every
 * run key name the same rank from different inputs, the inputs are runs
 * (ev-merge of one file per configuration), not ranks of one run (ev-merge
 * of one file per rank). */
int ev_align_input_is_config(const ev_meta *m)
{
	size_t n = ev_meta_nsrc(m);
	struct ev_map seen; /* hash(run keys, rank) -> hash(input) */
	ev_map_init(&seen);
	int found = 0;
	char buf[4096];
	for (size_t i = 0; i < n && !found; i++) {
		const struct ev_src_info *si = ev_meta_src_at(m, i);
		const char *rank = si ? ev_kv_get(si->kv, si->nkv, "rank") : NULL;
		const char *input = si ? ev_kv_get(si->kv, si->nkv, "input") : NULL;
		if (!rank || !input)
			continue;
		size_t len = ev_align_config_name(si, NULL, 0, buf, sizeof buf - 64);
		if (len >= sizeof buf - 64)
			continue;
		len += (size_t)snprintf(buf + len, 64, "\x1f%.60s", si->label ? si->label : "");
		uint64_t key = ev_hash64(buf, len) ^ (ev_hash64(rank, strlen(rank)) * 0x9E3779B97F4A7C15ULL);
		uint64_t in = ev_hash64(input, strlen(input)) | 1;
		uint64_t *have = ev_map_get(&seen, key | 1);
		if (have)
			found = *have != in;
		else if (ev_map_put(&seen, key | 1, in) != EV_OK)
			break;
	}
	ev_map_free(&seen);
	return found;
}
