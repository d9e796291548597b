/* SPDX-License-Identifier: MIT */
/*
 * compare.c - join every source group's result rows with the baseline's
 * (the group of the lowest source number) and print one line per key and
 * metric.  The join is hashed, so it is linear in rows.  Ranks pair by
 * position (the i-th lowest rank of each side), so that two single-rank
 * runs recorded as rank 3 and rank 1 compare with each other.  With
 * rank_mean, each side's rows are first reduced to their mean over ranks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_impl.h"
#include "ev/xlsx.h" /* ev_table_open_xlsx: a workbook sheet as the table's sink */

struct join {
	const struct ev_rowset *rs;
	size_t rank_col;        /* key column "rank", or 0 for none */
	char **jkey;            /* per row: keys 1.. joined, rank mapped to the base's */
	struct ev_map idx;      /* hash(sg, jkey) -> row + 1 (next hash on a clash) */
	uint8_t *used;          /* test rows matched */
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorted distinct ranks of group sg (*n of them); NULL with *n = 0 when none. */
static uint32_t *ranks_of(const struct join *j, uint32_t sg, size_t *n)
{
	const struct ev_row *rows = j->rs->rows.data;
	size_t len = j->rs->rows.len, m = 0;
	uint32_t *r = malloc((len + 1) * sizeof *r);
	*n = 0;
	if (!r)
		return NULL;
	for (size_t i = 0; i < len; i++)
		if (rows[i].sg == sg)
			r[m++] = (uint32_t)strtoul(rows[i].key[j->rank_col], NULL, 10);
	qsort(r, m, sizeof *r, cmp_u32);
	size_t w = 0;
	for (size_t i = 0; i < m; i++)
		if (w == 0 || r[w - 1] != r[i])
			r[w++] = r[i];
	*n = w;
	return r;
}

static uint64_t jhash(uint32_t sg, const char *k)
{
	return (ev_hash64(k, strlen(k)) ^ (uint64_t)sg * 0x9E3779B97F4A7C15ULL) | 1;
}

static size_t find(const struct join *j, uint32_t sg, const char *k)
{
	const struct ev_row *rows = j->rs->rows.data;
	for (uint64_t h = jhash(sg, k);; h += 2) {
		uint64_t *at = ev_map_get(&j->idx, h);
		if (!at)
			return SIZE_MAX;
		if (rows[*at - 1].sg == sg && !strcmp(j->jkey[*at - 1], k))
			return (size_t)(*at - 1);
	}
}

/* Join keys of every row; the ranks of group sg mapped through rmap. */
static int join_keys(struct join *j, uint32_t sg, const uint32_t *from, const uint32_t *to, size_t nmap)
{
	const struct ev_rowset *rs = j->rs;
	const struct ev_row *rows = rs->rows.data;
	for (size_t i = 0; i < rs->rows.len; i++) {
		if (rows[i].sg != sg)
			continue;
		size_t len = 1;
		for (size_t k = 1; k < rs->nkeys; k++)
			len += strlen(rows[i].key[k]) + 24;
		char *s = malloc(len), num[24];
		if (!s)
			return EV_ERR_NOMEM;
		size_t n = 0;
		for (size_t k = 1; k < rs->nkeys; k++) {
			const char *v = rows[i].key[k];
			if (k == j->rank_col && nmap) {
				uint32_t r = (uint32_t)strtoul(v, NULL, 10);
				const uint32_t *p = bsearch(&r, from, nmap, sizeof *from, cmp_u32);
				if (p) {
					snprintf(num, sizeof num, "%u", to[p - from]);
					v = num;
				} else {
					snprintf(num, sizeof num, "unpaired:%u", r);
					v = num;
				}
			}
			size_t l = strlen(v);
			memcpy(s + n, v, l);
			n += l;
			s[n++] = 0x1f;
		}
		s[n] = '\0';
		j->jkey[i] = s;
		uint64_t h = jhash(sg, s);
		while (ev_map_get(&j->idx, h))
			h += 2;
		if (ev_map_put(&j->idx, h, i + 1) != EV_OK)
			return EV_ERR_NOMEM;
	}
	return EV_OK;
}

struct printer {
	ev_table *t;
	const struct ev_rowset *rs;
	const struct ev_compare_opts *o;
	size_t rank_col, count_col; /* count_col: value index + 1, 0 none */
};

static int count_cell(const struct printer *p, const struct ev_row *r)
{
	if (!r || !p->count_col)
		return ev_table_null(p->t);
	return ev_table_f64(p->t, r->val[p->count_col - 1]);
}

/* The lines of one key: b or m may be NULL (a side without the key). */
static int key_lines(const struct printer *p, const char *blabel, const char *tlabel, const struct ev_row *b,
                     const struct ev_row *m)
{
	const struct ev_rowset *rs = p->rs;
	const struct ev_row *kr = b ? b : m;
	int rc = EV_OK;
	for (size_t v = 0; !rc && v < rs->nvals; v++) {
		if (rs->vals[v].dir == EV_DIR_NONE)
			continue; /* counts, shares, spreads: context, not a judgement */
		rc = ev_table_str(p->t, blabel);
		rc = rc ? rc : ev_table_str(p->t, tlabel);
		for (size_t k = 1; !rc && k < rs->nkeys; k++) {
			if (k == p->rank_col && !b)
				rc = ev_table_null(p->t); /* no baseline rank pairs with it */
			else
				rc = rowset_cell_key(p->t, &rs->keys[k], kr->key[k]);
			if (!rc && k == p->rank_col)
				rc = m ? rowset_cell_key(p->t, &rs->keys[k], m->key[k]) : ev_table_null(p->t);
		}
		rc = rc ? rc : ev_table_str(p->t, rs->vals[v].name);
		if (b && m) {
			double bv = b->val[v], tv = m->val[v], diff = tv - bv;
			double pct = bv != 0 ? 100 * diff / bv : NAN;
			const char *status = "Similar";
			if (isfinite(pct) && fabs(pct) > p->o->threshold)
				status = (pct < 0) == (rs->vals[v].dir == EV_DIR_LOWER) ? "Better" : "Worse";
			else if (!isfinite(pct) && diff != 0)
				status = (diff < 0) == (rs->vals[v].dir == EV_DIR_LOWER) ? "Better" : "Worse";
			rc = rc ? rc : ev_table_f64(p->t, bv);
			rc = rc ? rc : ev_table_f64(p->t, tv);
			rc = rc ? rc : ev_table_f64(p->t, diff);
			rc = rc ? rc : ev_table_f64(p->t, pct);
			rc = rc ? rc : ev_table_str(p->t, status);
		} else {
			rc = rc ? rc : (b ? ev_table_f64(p->t, b->val[v]) : ev_table_null(p->t));
			rc = rc ? rc : (m ? ev_table_f64(p->t, m->val[v]) : ev_table_null(p->t));
			rc = rc ? rc : ev_table_null(p->t);
			rc = rc ? rc : ev_table_null(p->t);
			rc = rc ? rc : ev_table_str(p->t, b ? "only-baseline" : "only-test");
		}
		rc = rc ? rc : count_cell(p, b);
		rc = rc ? rc : count_cell(p, m);
	}
	return rc;
}

static const char *key_text(const struct ev_row *r, size_t k)
{
	return r->key[k] ? r->key[k] : "";
}

/* The rows of in with the rank key dropped and each value the mean over
 * the ranks of its (group, other keys), in first-seen order, into out. */
static int mean_over_ranks(const struct ev_rowset *in, size_t rank_col, struct ev_rowset *out)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 8];
	size_t nk = 0;
	if (in->nkeys - 1 > sizeof keys / sizeof keys[0])
		return EV_ERR_ARG;
	for (size_t k = 0; k < in->nkeys; k++)
		if (k != rank_col)
			keys[nk++] = in->keys[k];
	int rc = ev_rowset_init(out, keys, nk, in->vals, in->nvals);
	struct ev_map at; /* hash(sg, keys) -> out row + 1 (next hash on a clash) */
	ev_map_init(&at);
	struct ev_vec nranks; /* per out row: rows summed */
	ev_vec_init(&nranks, sizeof(uint32_t));
	const struct ev_row *rows = in->rows.data;
	char *jk = NULL;
	for (size_t i = 0; !rc && i < in->rows.len; i++) {
		size_t len = 0;
		for (size_t k = 0; k < in->nkeys; k++)
			len += k == rank_col ? 0 : strlen(key_text(&rows[i], k)) + 1;
		char *p = realloc(jk, len + 1);
		if (!p) {
			rc = EV_ERR_NOMEM;
			break;
		}
		jk = p;
		for (size_t k = 0; k < in->nkeys; k++)
			if (k != rank_col) {
				const char *v = key_text(&rows[i], k);
				size_t n = strlen(v);
				memcpy(p, v, n);
				p[n] = '\x1f';
				p += n + 1;
			}
		*p = '\0';
		struct ev_row *r = NULL;
		uint64_t h = jhash(rows[i].sg, jk);
		for (uint64_t *o; !r && (o = ev_map_get(&at, h)); h += 2) {
			struct ev_row *c = (struct ev_row *)out->rows.data + (*o - 1);
			int same = c->sg == rows[i].sg;
			for (size_t k = 0; same && k < in->nkeys; k++)
				if (k != rank_col)
					same = !strcmp(key_text(c, k - (k > rank_col)), key_text(&rows[i], k));
			if (same)
				r = c;
		}
		uint32_t *cnt;
		if (!r) {
			if (!(r = ev_rowset_add(out, rows[i].sg)) || !(cnt = ev_vec_push(&nranks))) {
				rc = EV_ERR_NOMEM;
				break;
			}
			*cnt = 0;
			for (size_t k = 0; !rc && k < in->nkeys; k++)
				if (k != rank_col && rows[i].key[k])
					rc = ev_row_key(r, k - (k > rank_col), rows[i].key[k]);
			rc = rc ? rc : ev_map_put(&at, h, out->rows.len);
		}
		if (rc)
			break;
		size_t ri = (size_t)(r - (struct ev_row *)out->rows.data);
		((uint32_t *)nranks.data)[ri]++;
		for (size_t v = 0; v < in->nvals; v++)
			r->val[v] += rows[i].val[v];
	}
	struct ev_row *orow = out->rows.data;
	for (size_t i = 0; !rc && i < out->rows.len; i++)
		for (size_t v = 0; v < out->nvals; v++)
			orow[i].val[v] /= ((uint32_t *)nranks.data)[i];
	free(jk);
	ev_vec_free(&nranks);
	ev_map_free(&at);
	return rc;
}

static int cmp_first_src(const void *a, const void *b, void *arg)
{
	const struct srcgrp *g = arg;
	uint32_t x = g[*(const uint32_t *)a].first_src, y = g[*(const uint32_t *)b].first_src;
	return x < y ? -1 : x > y;
}

int ev_stats_compare(ev_stats *s, const struct ev_rowset *rs, const struct ev_compare_opts *o, ev_output *out,
                     struct ev_compare_counts *cnt)
{
	memset(cnt, 0, sizeof *cnt);
	if (o->rank_mean) {
		for (size_t k = 1; k < rs->nkeys; k++)
			if (!strcmp(rs->keys[k].name, "rank")) {
				struct ev_rowset mean;
				struct ev_compare_opts mo = *o;
				mo.rank_mean = 0;
				int rc = mean_over_ranks(rs, k, &mean);
				rc = rc ? rc : ev_stats_compare(s, &mean, &mo, out, cnt);
				ev_rowset_free(&mean);
				return rc;
			}
	}
	struct join j;
	memset(&j, 0, sizeof j);
	j.rs = rs;
	ev_map_init(&j.idx);
	struct printer p = { NULL, rs, o, 0, 0 };
	for (size_t k = 1; k < rs->nkeys; k++)
		if (!strcmp(rs->keys[k].name, "rank"))
			j.rank_col = p.rank_col = k;
	for (size_t v = 0; v < rs->nvals; v++)
		if (!strcmp(rs->vals[v].name, "count"))
			p.count_col = v + 1;
	size_t nk = rs->nkeys, n = 0;
	const char **cols = malloc((nk + 12) * sizeof *cols);
	size_t ngrp = s->srcgrps.len;
	uint32_t *order = malloc((ngrp + 1) * sizeof *order);
	j.jkey = calloc(rs->rows.len + 1, sizeof *j.jkey);
	j.used = calloc(rs->rows.len + 1, 1);
	uint32_t *branks = NULL;
	size_t nb = 0;
	int rc = cols && order && j.jkey && j.used ? EV_OK : EV_ERR_NOMEM;
	if (!rc) {
		cols[n++] = "baseline";
		cols[n++] = "test";
		for (size_t k = 1; k < nk; k++) {
			cols[n++] = rs->keys[k].name;
			if (k == j.rank_col)
				cols[n++] = "test_rank";
		}
		const char *tail[] = { "metric", "base", "value", "diff", "pct", "status", "base_count", "test_count" };
		for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
			cols[n++] = tail[i];
		rc = o->xlsx ? ev_table_open_xlsx(&p.t, o->xlsx, o->sheet ? o->sheet : "compare", cols, n)
		             : ev_table_open(&p.t, out, o->fmt, cols, n);
	}
	/* Groups in source order: the first is the baseline. */
	const struct srcgrp *sgs = s->srcgrps.data;
	for (uint32_t g = 0; !rc && g < ngrp; g++)
		order[g] = g;
	if (!rc)
		qsort_r(order, ngrp, sizeof *order, cmp_first_src, (void *)sgs);
	uint32_t base_sg = ngrp ? order[0] : 0;
	if (!rc && j.rank_col) {
		branks = ranks_of(&j, base_sg, &nb);
		if (!branks)
			rc = EV_ERR_NOMEM;
	}
	if (!rc)
		rc = join_keys(&j, base_sg, branks, branks, nb);
	const struct ev_row *rows = rs->rows.data;
	const char *blabel = NULL;
	for (size_t i = 0; i < rs->rows.len && !blabel; i++)
		if (rows[i].sg == base_sg)
			blabel = rows[i].key[0];
	for (size_t oi = 1; !rc && oi < ngrp; oi++) {
		uint32_t sg = order[oi];
		const char *tlabel = NULL;
		for (size_t i = 0; i < rs->rows.len && !tlabel; i++)
			if (rows[i].sg == sg)
				tlabel = rows[i].key[0];
		if (!tlabel)
			continue; /* nothing of this analysis in that source */
		cnt->tests++;
		size_t nt = 0;
		uint32_t *tranks = NULL;
		if (j.rank_col && !(tranks = ranks_of(&j, sg, &nt)))
			rc = EV_ERR_NOMEM;
		if (!rc)
			rc = join_keys(&j, sg, tranks, branks, nt < nb ? nt : nb);
		free(tranks);
		/* Baseline rows in order, each with its match; then the test's own. */
		for (size_t i = 0; !rc && i < rs->rows.len; i++) {
			if (rows[i].sg != base_sg)
				continue;
			size_t m = find(&j, sg, j.jkey[i]);
			if (m != SIZE_MAX) {
				j.used[m] = 1;
				cnt->matched++;
			} else {
				cnt->only_base++;
			}
			rc = key_lines(&p, blabel ? blabel : "", tlabel, &rows[i], m != SIZE_MAX ? &rows[m] : NULL);
		}
		for (size_t i = 0; !rc && i < rs->rows.len; i++) {
			if (rows[i].sg != sg || j.used[i])
				continue;
			cnt->only_test++;
			rc = key_lines(&p, blabel ? blabel : "", tlabel, NULL, &rows[i]);
		}
	}
	int rc2 = p.t ? ev_table_close(p.t) : EV_OK;
	for (size_t i = 0; j.jkey && i < rs->rows.len; i++)
		free(j.jkey[i]);
	free(j.jkey);
	free(j.used);
	free(branks);
	ev_map_free(&j.idx);
	free(order);
	free(cols);
	return rc ? rc : rc2;
}
