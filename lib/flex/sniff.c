/* SPDX-License-Identifier: MIT */
/*
 * sniff.c - which JSON trace dialect is this?  Decided on evidence, never by
 * elimination: acelyzer calls everything without deviceProperties "FLEX"
 * and then produces empty tables; here a file is Flex only when its events
 * carry the AIU device counters (TS1..TS5) or the runtime's instruction
 * names (" Cmpt Exec", " DmaI", ...) or a CollGroup, PyTorch only when it has
 * the profiler's top-level keys or event categories, and anything else is
 * named as what it is.
 */
#include <stdlib.h>
#include <string.h>

#include "ev/flex.h"
#include "ev/stream.h"

const char *ev_dialect_name(enum ev_dialect d)
{
	switch (d) {
	case EV_DIALECT_FLEX: return "flex";
	case EV_DIALECT_KINETO: return "kineto";
	case EV_DIALECT_META_ONLY: return "metadata-only";
	case EV_DIALECT_EMPTY: return "empty";
	case EV_DIALECT_PROCESSED: return "processed";
	case EV_DIALECT_ROCPROF: return "rocprofv3";
	default: return "unknown";
	}
}

void ev_flex_sniff_init(struct ev_flex_sniff *s)
{
	memset(s, 0, sizeof *s);
}

static int mem_has(const char *h, size_t n, const char *needle)
{
	size_t m = strlen(needle);
	for (size_t i = 0; i + m <= n; i++)
		if (h[i] == needle[0] && memcmp(h + i, needle, m) == 0)
			return 1;
	return 0;
}

const char *ev_processed_producer(const char *val, size_t vlen)
{
	if (!val)
		return NULL;
	if (mem_has(val, vlen, "ev2perfetto"))
		return "ev2perfetto";
	if (mem_has(val, vlen, "Acelyzer"))
		return "Acelyzer";
	return NULL;
}

static void copy_str(char *dst, size_t cap, const char *src, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)dst[i] < 0x20)
			dst[i] = ' ';
}

void ev_flex_sniff_top(struct ev_flex_sniff *s, const char *key, size_t klen, const char *val, size_t vlen)
{
	if (!s->top_key[0])
		copy_str(s->top_key, sizeof s->top_key, key, klen);
	static const char *const kineto[] = { "deviceProperties", "schemaVersion", "distributedInfo",
		                              "baseTimeNanoseconds", "cupti_version", "roctracer_version" };
	for (size_t i = 0; i < sizeof kineto / sizeof *kineto; i++)
		if (klen == strlen(kineto[i]) && memcmp(key, kineto[i], klen) == 0)
			s->kineto_top = 1;
	if (klen == 9 && memcmp(key, "otherData", 9) == 0 && ev_processed_producer(val, vlen))
		s->processed_top = 1;
	if (klen == 20 && memcmp(key, "rocprofiler-sdk-tool", 20) == 0)
		s->rocprof_top = 1;
}

int ev_flex_sniff_want(void *ctx, const char *key, size_t len)
{
	(void)ctx;
	return !(len == 20 && memcmp(key, "rocprofiler-sdk-tool", 20) == 0);
}

/* Does the name end in one of the Flex instruction suffixes? */
static int flex_name(const char *n, size_t len)
{
	static const char *const sfx[] = { " Cmpt Exec", " Cmpt Prep", " DmaI", " DmaO" };
	for (size_t i = 0; i < 4; i++) {
		size_t m = strlen(sfx[i]);
		if (len >= m && memcmp(n + len - m, sfx[i], m) == 0)
			return 1;
	}
	return mem_has(n, len, "AIU Roundtrip") || mem_has(n, len, "Flex RoundTrip");
}

static int kineto_cat(const char *c, size_t n)
{
	static const char *const cats[] = { "kernel", "cpu_op", "cuda_runtime", "cuda_driver", "gpu_memcpy",
		                            "gpu_memset", "user_annotation", "gpu_user_annotation", "ac2g",
		                            "python_function", "cuda_sync", "fwdbwd" };
	for (size_t i = 0; i < sizeof cats / sizeof *cats; i++)
		if (n == strlen(cats[i]) && memcmp(c, cats[i], n) == 0)
			return 1;
	return 0;
}

void ev_flex_sniff_event(struct ev_flex_sniff *s, const char *text, const struct ev_json_tok *t, int i)
{
	if (t[i].type != EV_JT_OBJECT)
		return;
	s->events++;
	int ph = ev_json_get(text, t, i, "ph");
	if (ph >= 0 && t[ph].end > t[ph].start) {
		char c = text[t[ph].start];
		if (c == 'M')
			s->meta++;
		if (!strchr(s->ph_seen, c) && strlen(s->ph_seen) + 1 < sizeof s->ph_seen) {
			size_t l = strlen(s->ph_seen);
			s->ph_seen[l] = c;
			s->ph_seen[l + 1] = '\0';
		}
		if (c == 'M')
			return;
		if (c == 'B' || c == 'E' || c == 'X')
			s->dur_events++;
	}
	int nm = ev_json_get(text, t, i, "name");
	if (nm >= 0 && t[nm].type == EV_JT_STRING) {
		const char *n = text + t[nm].start;
		size_t len = (size_t)(t[nm].end - t[nm].start);
		if (!s->name_seen[0])
			copy_str(s->name_seen, sizeof s->name_seen, n, len);
		if (flex_name(n, len))
			s->flex_names++;
	}
	int cat = ev_json_get(text, t, i, "cat");
	if (cat >= 0 && t[cat].type == EV_JT_STRING) {
		const char *c = text + t[cat].start;
		size_t len = (size_t)(t[cat].end - t[cat].start);
		if (!s->cat_seen[0])
			copy_str(s->cat_seen, sizeof s->cat_seen, c, len);
		if (kineto_cat(c, len))
			s->kineto_cats++;
	}
	for (int k = 0; k < 2; k++) {
		int a = ev_json_get(text, t, i, k ? "attr" : "args");
		if (a < 0 || t[a].type != EV_JT_OBJECT)
			continue;
		if (ev_json_get(text, t, a, "TS1") >= 0 && ev_json_get(text, t, a, "TS5") >= 0)
			s->flex_counters++;
		if (ev_json_get(text, t, a, "CollGroup") >= 0)
			s->collgroup++;
	}
}

enum ev_dialect ev_flex_sniff_verdict(const struct ev_flex_sniff *s)
{
	if (s->processed_top)
		return EV_DIALECT_PROCESSED;
	if (s->rocprof_top)
		return EV_DIALECT_ROCPROF;
	if (s->kineto_top || s->kineto_cats)
		return EV_DIALECT_KINETO;
	if (s->flex_counters || s->flex_names || s->collgroup)
		return EV_DIALECT_FLEX;
	if (!s->events)
		return EV_DIALECT_EMPTY;
	if (s->meta == s->events)
		return EV_DIALECT_META_ONLY;
	return EV_DIALECT_UNKNOWN;
}

void ev_flex_sniff_describe(const struct ev_flex_sniff *s, char *buf, size_t n)
{
	size_t l = 0;
	int w = snprintf(buf, n, "%llu events (%llu metadata)", (unsigned long long)s->events,
	                 (unsigned long long)s->meta);
	if (w < 0 || (size_t)w >= n)
		return;
	l = (size_t)w;
#define ADD(...)                                                    \
	do {                                                        \
		w = snprintf(buf + l, n - l, __VA_ARGS__);          \
		if (w < 0 || (size_t)w >= n - l)                    \
			return;                                     \
		l += (size_t)w;                                     \
	} while (0)
	if (s->rocprof_top)
		ADD(", rocprofv3 JSON (rocprofiler-sdk-tool): convert it with rocprof2ev");
	if (s->top_key[0])
		ADD(", first top-level key \"%s\"", s->top_key);
	if (s->ph_seen[0])
		ADD(", ph %s", s->ph_seen);
	if (s->cat_seen[0])
		ADD(", cat \"%s\"", s->cat_seen);
	if (s->name_seen[0])
		ADD(", first name \"%s\"", s->name_seen);
	ADD(", %llu with TS1..TS5 counters, %llu with Flex instruction names, %llu with CollGroup, %llu with PyTorch categories",
	    (unsigned long long)s->flex_counters, (unsigned long long)s->flex_names,
	    (unsigned long long)s->collgroup, (unsigned long long)s->kineto_cats);
#undef ADD
}

int ev_flex_sniff_file(const char *path, uint64_t max_events, unsigned flags, enum ev_dialect *d, char *what, size_t n)
{
	ev_input *in = NULL;
	ev_json *j = NULL;
	struct ev_flex_sniff s;
	int ntok = 4096, rc;
	struct ev_json_tok *toks = malloc((size_t)ntok * sizeof *toks);
	ev_flex_sniff_init(&s);
	*d = EV_DIALECT_UNKNOWN;
	if (!toks)
		return EV_ERR_NOMEM;
	if ((rc = ev_input_open(&in, path)) != EV_OK)
		goto out;
	if ((rc = ev_json_open(&j, in, "traceEvents", 64u << 20)) != EV_OK)
		goto out;
	ev_json_want(j, ev_flex_sniff_want, NULL);
	struct ev_json_item it;
	int decided = 0;
	while ((rc = ev_json_next(j, &it)) > 0) {
		if (it.kind == EV_JSON_TOP) {
			ev_flex_sniff_top(&s, it.key, it.key_len, it.text, it.len);
			if (s.kineto_top || s.processed_top || s.rocprof_top)
				break;
			continue;
		}
		/* Decided on PyTorch categories alone: scan on (without tokenizing)
		 * for a top-level otherData, which ev2perfetto writes at the end. */
		if (decided)
			continue;
		int nt = ev_json_tokenize(it.text, it.len, toks, ntok);
		if (nt == EV_ERR_LIMIT)
			continue; /* a huge event decides nothing */
		if (nt < 0) {
			rc = nt;
			goto out;
		}
		ev_flex_sniff_event(&s, it.text, toks, 0);
		if (ev_flex_sniff_verdict(&s) == EV_DIALECT_KINETO) {
			/* Reading on to the end doubled kineto2ev's time (and its
			 * gzip decoding), only to answer a question it does not ask. */
			if (flags & EV_SNIFF_FLEX_ONLY)
				break;
			decided = 1;
		} else if (max_events && s.events >= max_events)
			break;
	}
	if (rc >= 0)
		rc = EV_OK;
	*d = ev_flex_sniff_verdict(&s);
	if (what && n)
		ev_flex_sniff_describe(&s, what, n);
out:
	ev_json_close(j);
	if (in)
		(void)ev_input_close(in);
	free(toks);
	return rc;
}
