/* SPDX-License-Identifier: MIT */
/*
 * npkit.c - NPKit per-primitive timing summaries into latency rows: one row
 * per (primitive, protocol, size) with count, mean and nearest-rank
 * percentiles, written sorted so that the same inputs give the same bytes.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/json.h"
#include "ev/nccl_sched.h"
#include "ev/table.h"

struct ev_npkit {
	struct ev_npkit_row *rows;
	size_t n, cap;
	struct ev_map seen;     /* key of (prim, proto, size) -> row index + 1 */
	char **names;           /* each primitive's name once, shared by its rows */
	size_t nnames, names_cap;
	struct ev_map name_of;  /* hash of a name -> index in names + 1 */
	double *samples;        /* scratch for one size's samples */
	size_t scap;
	struct ev_json_tok *toks;
	int ntoks;
};

ev_npkit *ev_npkit_new(void)
{
	ev_npkit *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	ev_map_init(&t->seen);
	ev_map_init(&t->name_of);
	t->ntoks = 4096;
	t->toks = malloc((size_t)t->ntoks * sizeof *t->toks);
	if (!t->toks) {
		free(t);
		return NULL;
	}
	return t;
}

void ev_npkit_free(ev_npkit *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	ev_map_free(&t->name_of);
	free(t->rows);
	free(t->samples);
	free(t->toks);
	ev_map_free(&t->seen);
	free(t);
}

size_t ev_npkit_count(const ev_npkit *t) { return t->n; }

unsigned ev_npkit_proto_from_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	char *low = malloc(n + 1);
	unsigned p = 0;
	if (!low)
		return 0;
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)tolower((unsigned char)base[i]);
	if (strstr(low, "ll128"))
		p = EV_PROTO_LL128;
	else if (strstr(low, "simple"))
		p = EV_PROTO_SIMPLE;
	else {
		/* "LL" as a word of the name: _LL. or -LL_ etc. */
		for (const char *s = strstr(low, "ll"); s; s = strstr(s + 1, "ll")) {
			int before = s == low || !isalpha((unsigned char)s[-1]);
			int after = !isalnum((unsigned char)s[2]);
			if (before && after) {
				p = EV_PROTO_LL;
				break;
			}
		}
	}
	free(low);
	return p;
}

const char *ev_npkit_strip_prefix(const char *s)
{
	if (strncmp(s, "NPKIT_EVENT_GPU_", 16) == 0)
		return s + 16;
	if (strncmp(s, "NPKIT_EVENT_", 12) == 0)
		return s + 12;
	return s;
}

/* Nearest-rank percentile of sorted v[0..n). */
static double pct(const double *v, size_t n, unsigned p)
{
	size_t k = (size_t)((p * (uint64_t)n + 99) / 100);
	if (k == 0)
		k = 1;
	return v[k - 1];
}

static int tokenize(ev_npkit *t, const char *text, size_t len)
{
	for (;;) {
		int n = ev_json_tokenize(text, len, t->toks, t->ntoks);
		if (n != EV_ERR_LIMIT || t->ntoks > (1 << 24))
			return n;
		int nn = t->ntoks * 4;
		struct ev_json_tok *nt = realloc(t->toks, (size_t)nn * sizeof *nt);
		if (!nt)
			return EV_ERR_NOMEM;
		t->toks = nt;
		t->ntoks = nn;
	}
}

static uint64_t row_key(const char *prim, unsigned proto, uint64_t size)
{
	uint64_t k = ev_hash64(prim, strlen(prim)) ^ ((uint64_t)proto * 0x9E3779B97F4A7C15ull) ^
	             (size * 0xC2B2AE3D27D4EB4Full);
	return k ? k : 1;
}

/* The row of (prim, proto, size), if any: hashed, so a summary with many
 * sizes is not quadratic. */
static int row_exists(const ev_npkit *t, const char *prim, unsigned proto, uint64_t size)
{
	uint64_t *ix = ev_map_get(&t->seen, row_key(prim, proto, size));
	if (!ix)
		return 0;
	const struct ev_npkit_row *r = &t->rows[*ix - 1];
	if (r->proto == proto && r->size == size && strcmp(r->prim, prim) == 0)
		return 1;
	/* a hash collision: look at every row */
	for (size_t k = 0; k < t->n; k++)
		if (t->rows[k].proto == proto && t->rows[k].size == size && strcmp(t->rows[k].prim, prim) == 0)
			return 1;
	return 0;
}

/* The shared copy of a primitive's name: one per name, not per row (a
 * summary may hold very many sizes of one primitive).  A hash collision
 * just keeps a copy of its own. */
static const char *intern(ev_npkit *t, const char *prim)
{
	uint64_t h = ev_hash64(prim, strlen(prim));
	h = h ? h : 1;
	uint64_t *ix = ev_map_get(&t->name_of, h);
	if (ix && strcmp(t->names[*ix - 1], prim) == 0)
		return t->names[*ix - 1];
	if (t->nnames == t->names_cap) {
		size_t nc = t->names_cap ? 2 * t->names_cap : 8;
		char **nn = realloc(t->names, nc * sizeof *nn);
		if (!nn)
			return NULL;
		t->names = nn;
		t->names_cap = nc;
	}
	char *c = strdup(prim);
	if (!c)
		return NULL;
	t->names[t->nnames++] = c;
	if (!ix && ev_map_put(&t->name_of, h, t->nnames)) {
		free(t->names[--t->nnames]);
		return NULL;
	}
	return c;
}

static struct ev_npkit_row *new_row(ev_npkit *t)
{
	if (t->n == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 64;
		struct ev_npkit_row *nr = realloc(t->rows, nc * sizeof *nr);
		if (!nr)
			return NULL;
		t->rows = nr;
		t->cap = nc;
	}
	struct ev_npkit_row *r = &t->rows[t->n];
	memset(r, 0, sizeof *r);
	return r;
}

int ev_npkit_add_event(ev_npkit *t, unsigned proto, const char *key, const char *text, size_t len, char *err,
                       size_t errlen)
{
	int n = tokenize(t, text, len);
	if (n == EV_ERR_NOMEM)
		return EV_ERR_NOMEM;
	if (n < 0)
		return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: invalid JSON", key);
	const struct ev_json_tok *tk = t->toks;
	if (tk[0].type != EV_JT_OBJECT)
		return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: expected an object of sizes", key);
	if (tk[0].size == 0)
		return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: no sizes", key);
	const char *prim = intern(t, ev_npkit_strip_prefix(key));
	if (!prim)
		return EV_ERR_NOMEM;
	int i = 1;
	for (int m = 0; m < tk[0].size; m++) {
		char buf[64];
		int kl = tk[i].end - tk[i].start;
		uint64_t size;
		if (kl <= 0 || kl >= (int)sizeof buf)
			return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: bad size key", key);
		memcpy(buf, text + tk[i].start, (size_t)kl);
		buf[kl] = '\0';
		if (ev_parse_u64(buf, &size))
			return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: size key '%s' is not a byte count", key, buf);
		int v = i + 1;
		if (tk[v].type != EV_JT_ARRAY)
			return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: size %s: expected an array of samples", key, buf);
		if (tk[v].size == 0)
			return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: size %s: no samples", key, buf);
		size_t ns = (size_t)tk[v].size;
		if (ns > t->scap) {
			double *s = realloc(t->samples, ns * sizeof *s);
			if (!s)
				return EV_ERR_NOMEM;
			t->samples = s;
			t->scap = ns;
		}
		double sum = 0;
		for (size_t k = 0; k < ns; k++) {
			const struct ev_json_tok *e = &tk[v + 1 + k];
			char num[64];
			int el = e->end - e->start;
			double x;
			if (e->type != EV_JT_PRIMITIVE || el <= 0 || el >= (int)sizeof num)
				return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: size %s: sample %zu is not a number", key, buf,
				           k + 1);
			memcpy(num, text + e->start, (size_t)el);
			num[el] = '\0';
			int prc = ev_parse_double(num, &x);
			if (prc == EV_ERR_RANGE)
				return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: size %s: sample %zu is not a finite number: '%s'",
				           key, buf, k + 1, num);
			if (prc || x < 0)
				return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: size %s: sample %zu is not a number >= 0: '%s'",
				           key, buf, k + 1, num);
			if (x > EV_NPKIT_MAX_NS)
				return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: size %s: sample %zu is over 2^53 (104 days in "
				           "ns), no primitive's time: '%s'", key, buf, k + 1, num);
			t->samples[k] = x;
			sum += x;
		}
		ev_sort_f64(t->samples, ns); /* in place: qsort would copy them */
		if (row_exists(t, prim, proto, size))
			return ev_errf(err, errlen, EV_ERR_FORMAT, "event %s: size %s for protocol %s given twice", key, buf,
			           ev_proto_name(proto));
		struct ev_npkit_row *r = new_row(t);
		if (!r)
			return EV_ERR_NOMEM;
		r->prim = prim;
		if (ev_map_put(&t->seen, row_key(prim, proto, size), t->n + 1))
			return EV_ERR_NOMEM;
		t->n++;
		r->proto = proto;
		r->size = size;
		r->n = ns;
		r->mean = sum / (double)ns;
		r->min = t->samples[0];
		r->max = t->samples[ns - 1];
		r->p10 = pct(t->samples, ns, 10);
		r->p50 = pct(t->samples, ns, 50);
		r->p90 = pct(t->samples, ns, 90);
		i = ev_json_skip(tk, v);
	}
	return EV_OK;
}

int ev_npkit_read(ev_npkit *t, const char *path, unsigned proto, uint64_t max_object, size_t *nevents, char *err,
                  size_t errlen)
{
	ev_input *in;
	ev_json *j;
	*nevents = 0;
	int rc = ev_input_open(&in, path);
	if (rc)
		return rc;
	if ((rc = ev_json_open(&j, in, "\x01no-array", (size_t)max_object)) != EV_OK) {
		ev_input_close(in);
		return EV_ERR_NOMEM;
	}
	int status = EV_OK;
	struct ev_json_item it;
	while ((rc = ev_json_next(j, &it)) > 0) {
		if (it.kind != EV_JSON_TOP) {
			status = ev_errf(err, errlen, EV_ERR_FORMAT, "not an NPKit summary (a JSON array)");
			break;
		}
		char *key = strndup(it.key, it.key_len);
		if (!key) {
			status = EV_ERR_NOMEM;
			break;
		}
		status = ev_npkit_add_event(t, proto, key, it.text, it.len, err, errlen);
		free(key);
		if (status)
			break;
		(*nevents)++;
	}
	if (!status && rc < 0)
		status = rc == EV_ERR_IO ? EV_ERR_IO : ev_errf(err, errlen, EV_ERR_FORMAT, "%s", ev_json_errdetail(j));
	ev_json_close(j);
	ev_input_close(in);
	return status;
}

int ev_npkit_has(const ev_npkit *t, size_t first, const char *prim)
{
	for (size_t k = first; k < t->n; k++)
		if (strcmp(t->rows[k].prim, prim) == 0)
			return 1;
	return 0;
}

void ev_npkit_guess_unit(const ev_npkit *t, size_t first, struct ev_npkit_unit *u)
{
	memset(u, 0, sizeof *u);
	const struct ev_npkit_row *best = NULL;
	for (size_t k = first; k < t->n; k++) {
		const struct ev_npkit_row *r = &t->rows[k];
		if (!(r->mean > 0))
			continue;
		if (!u->known || r->mean < u->min_mean)
			u->min_mean = r->mean;
		u->known = 1;
		if (!best || r->size > best->size || (r->size == best->size && r->mean < best->mean))
			best = r;
	}
	if (!best)
		return;
	u->prim = best->prim;
	u->size = best->size;
	u->gbps = (double)best->size / best->mean;
	u->us = u->gbps > EV_NPKIT_US_GBPS || u->min_mean < EV_NPKIT_US_MIN_NS;
}

/* A sample times f, to the nearest 1e-3: 2.349 us is 2349 ns, not the
 * 2349.0000000000005 of the binary product, so the table prints what the
 * file said (to six decimals of the input). */
static double scaled(double x, double f)
{
	return nearbyint(x * f * 1000.0) / 1000.0;
}

int ev_npkit_scale(ev_npkit *t, size_t first, double f, char *err, size_t errlen)
{
	for (size_t k = first; k < t->n; k++) {
		struct ev_npkit_row *r = &t->rows[k];
		if (r->max * f > EV_NPKIT_MAX_NS)
			return ev_errf(err, errlen, EV_ERR_RANGE, "%s size %llu: sample %.17g times %g is over 2^53 ns "
			           "(104 days), no primitive's time", r->prim, (unsigned long long)r->size, r->max, f);
	}
	for (size_t k = first; k < t->n; k++) {
		struct ev_npkit_row *r = &t->rows[k];
		r->mean *= f;
		r->p10 = scaled(r->p10, f);
		r->p50 = scaled(r->p50, f);
		r->p90 = scaled(r->p90, f);
		r->min = scaled(r->min, f);
		r->max = scaled(r->max, f);
	}
	return EV_OK;
}

static int cmp_row(const void *a, const void *b)
{
	const struct ev_npkit_row *x = a, *y = b;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	int c = strcmp(x->prim, y->prim);
	if (c)
		return c;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* Integral values as integers, others with enough digits to round-trip. */
/* A sample statistic as the table has always printed it: an integer
 * without a point, else every digit (%.17g). */
static int num_cell(ev_table *t, double x)
{
	char b[32];
	if (x == floor(x) && x < 9e15)
		snprintf(b, sizeof b, "%.0f", x);
	else
		snprintf(b, sizeof b, "%.17g", x);
	return ev_table_str_raw(t, b);
}

/* ev_table_fixed's one decimal; a sum that overflowed stays printf's
 * "inf" rather than an empty cell. */
static int mean_cell(ev_table *t, double x)
{
	char b[16];
	if (isfinite(x))
		return ev_table_fixed(t, x, 1);
	snprintf(b, sizeof b, "%.1f", x);
	return ev_table_str_raw(t, b);
}

int ev_npkit_write(ev_npkit *t, ev_output *out)
{
	static const char *const cols[] = { "primitive", "proto", "size_bytes", "n", "mean_ns",
		                            "p10", "p50", "p90", "min", "max" };
	if (t->n)
		qsort(t->rows, t->n, sizeof *t->rows, cmp_row);
	/* the rows moved: the index of the duplicate check is stale */
	ev_map_free(&t->seen);
	ev_map_init(&t->seen);
	for (size_t i = 0; i < t->n; i++)
		if (ev_map_put(&t->seen, row_key(t->rows[i].prim, t->rows[i].proto, t->rows[i].size), i + 1))
			return EV_ERR_NOMEM;
	ev_table *tb;
	int rc = ev_table_open(&tb, out, EV_TABLE_TSV, cols, sizeof cols / sizeof cols[0]);
	for (size_t i = 0; i < t->n && !rc; i++) {
		const struct ev_npkit_row *r = &t->rows[i];
		/* Names as read (raw), the mean with one decimal. */
		rc = ev_table_str_raw(tb, r->prim);
		rc = rc ? rc : ev_table_str_raw(tb, ev_proto_name(r->proto));
		rc = rc ? rc : ev_table_u64(tb, r->size);
		rc = rc ? rc : ev_table_u64(tb, r->n);
		rc = rc ? rc : mean_cell(tb, r->mean);
		rc = rc ? rc : num_cell(tb, r->p10);
		rc = rc ? rc : num_cell(tb, r->p50);
		rc = rc ? rc : num_cell(tb, r->p90);
		rc = rc ? rc : num_cell(tb, r->min);
		rc = rc ? rc : num_cell(tb, r->max);
	}
	int crc = ev_table_close(tb);
	return rc ? rc : crc;
}
