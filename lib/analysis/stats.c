/* SPDX-License-Identifier: MIT */
/*
 * stats.c - the ev_stats object: source groups (--by), kernel-class
 * caches, key columns, the registry of analyses (one row each, defined in
 * stats_<name>.c) and the driver that runs a row over the records.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_impl.h"

/* Keys that name one process's own file rather than the run it belongs
 * to: kineto2ev writes file, rank, base_ns; nsys2ev file, node, host. */
int ev_stats_is_process_key(const char *key)
{
	return ev_align_per_rank_key(key);
}

/* The configuration text of a source: label and run keys ("" for none). */
static size_t config_text(struct ev_stats *s, const struct ev_src_info *si, char *buf, size_t cap)
{
	size_t n = 0;
	if (cap)
		buf[0] = '\0';
	if (!si)
		return 0;
	if (s->input_cfg_nsrc != ev_meta_nsrc(s->meta)) {
		s->input_cfg_nsrc = ev_meta_nsrc(s->meta);
		s->input_cfg = ev_align_input_is_config(s->meta);
	}
	int input_cfg = s->input_cfg;
	if (si->label && *si->label)
		n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s", si->label);
	for (size_t i = 0; i < si->nkv; i++)
		if ((!ev_stats_is_process_key(si->kv[i].key) || (input_cfg && !strcmp(si->kv[i].key, "input"))) &&
		    strcmp(si->kv[i].key, "label"))
			n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%s=%s", n ? "," : "", si->kv[i].key,
			                      si->kv[i].val);
	return n < cap ? n : cap - 1;
}

/* The source group of a record's src: the src itself with --by src, the
 * tuple of the --by #src keys (or configuration) otherwise: sources with
 * equal values pool. */
int src_group(struct ev_stats *s, uint32_t src, uint32_t *sg)
{
	uint64_t *have = ev_map_get(&s->src_sg, (uint64_t)src + 1);
	if (have) {
		*sg = (uint32_t)(*have - 1);
		return EV_OK;
	}
	const struct ev_stats_opts *o = &s->o;
	char buf[4096];
	size_t n = 0;
	int keyed = 0;
	const struct ev_src_info *si = ev_meta_src(s->meta, src);
	for (int i = 0; i < o->nby; i++) {
		const char *v = NULL;
		char num[1024];
		if (o->by[i] == EV_BY_SRC) {
			/* A source is a run: the per-rank #src lines that ev-merge
			 * keeps of one input (same label and run keys, other
			 * process keys) are one group, numbered by its first src. */
			size_t cn = config_text(s, si, num, sizeof num);
			if (!si || cn == 0 || cn + 1 >= sizeof num)
				snprintf(num, sizeof num, "%u", src);
			v = num;
		} else if (o->by[i] == EV_BY_CONFIG) {
			config_text(s, si, num, sizeof num);
			v = num;
		} else if (o->by[i] == EV_BY_SRCKEY) {
			v = si ? ev_kv_get(si->kv, si->nkv, o->by_key[i]) : NULL;
			if (!v && si && !strcmp(o->by_key[i], "label"))
				v = si->label;
			if (!v && si && !strcmp(o->by_key[i], "file"))
				v = si->file;
		} else {
			continue;
		}
		keyed = 1;
		n += (size_t)snprintf(buf + n, n < sizeof buf ? sizeof buf - n : 0, "%s%c", v ? v : "", 0x1f);
		if (n >= sizeof buf)
			n = sizeof buf - 1;
	}
	if (!keyed)
		n = 0;
	buf[n] = '\0';
	/* Find the tuple by its hash (the next hash value on a clash). */
	uint64_t h = ev_hash64(buf, n) | 1;
	const struct srcgrp *g = s->srcgrps.data;
	size_t i = s->srcgrps.len;
	for (;; h += 2) {
		uint64_t *at = ev_map_get(&s->srcgrp_idx, h);
		if (!at)
			break;
		if (!strcmp(g[*at - 1].keys, buf)) {
			i = (size_t)(*at - 1);
			break;
		}
	}
	if (i == s->srcgrps.len) {
		struct srcgrp *ng = ev_vec_push(&s->srcgrps);
		if (!ng || !(ng->keys = strdup(buf)))
			return EV_ERR_NOMEM;
		ng->first_src = src;
		if (ev_map_put(&s->srcgrp_idx, h, i + 1) != EV_OK)
			return EV_ERR_NOMEM;
	}
	*sg = (uint32_t)i;
	return ev_map_put(&s->src_sg, (uint64_t)src + 1, i + 1);
}

int has_by(const struct ev_stats_opts *o, int f)
{
	for (int i = 0; i < o->nby; i++)
		if (o->by[i] == f)
			return 1;
	return 0;
}

int base_key(struct ev_stats *s, const struct ev_rec *r, struct gkey *k)
{
	memset(k, 0, sizeof *k);
	int rc = src_group(s, r->src, &k->sg);
	if (has_by(&s->o, EV_BY_RANK))
		k->rank = r->rank;
	if (has_by(&s->o, EV_BY_STREAM))
		k->stream = r->stream;
	return rc;
}

const char *str_of(const struct ev_stats *s, uint64_t id)
{
	const char *t = ev_strtab_get(s->st, id, NULL);
	return t ? t : "";
}

/* Class of a GPU event under the rules (kernels by name; memcpy/memset by type). */
unsigned class_of(struct ev_stats *s, const struct ev_rec *r)
{
	if (r->type == EV_MEMCPY)
		return EV_KC_MEMCPY;
	if (r->type == EV_MEMSET)
		return EV_KC_MEMSET;
	uint64_t *c = r->name ? ev_map_get(&s->class_cache, r->name) : NULL;
	if (c)
		return (unsigned)(*c - 1);
	unsigned k = ev_kernel_class(s->o.rules, str_of(s, r->name));
	if (r->name && ev_map_put(&s->class_cache, r->name, k + 1) != EV_OK)
		return k; /* uncached: correct, only slower */
	return k;
}

int is_gpu(const struct ev_rec *r)
{
	return r->type == EV_KERNEL || r->type == EV_MEMCPY || r->type == EV_MEMSET;
}

const char *class_name(unsigned kc)
{
	const char *n = ev_kclass_name(kc);
	return n ? n : "other";
}

const char *src_label(const struct ev_stats *s, uint32_t src, char *buf, size_t n)
{
	const struct ev_src_info *si = ev_meta_src(s->meta, src);
	if (si && si->label && *si->label)
		return si->label;
	snprintf(buf, n, "%u", src);
	return buf;
}

void by_colspecs(const struct ev_stats_opts *o, struct ev_colspec *c, size_t *n)
{
	for (int i = 0; i < o->nby; i++) {
		switch (o->by[i]) {
		case EV_BY_SRC: c[(*n)++] = (struct ev_colspec){ "src", 0, 0 }; break;
		case EV_BY_CONFIG: c[(*n)++] = (struct ev_colspec){ "config", 0, 0 }; break;
		case EV_BY_RANK: c[(*n)++] = (struct ev_colspec){ "rank", 1, 0 }; break;
		case EV_BY_STREAM: c[(*n)++] = (struct ev_colspec){ "stream", 1, 0 }; break;
		default: c[(*n)++] = (struct ev_colspec){ o->by_key[i], 0, 0 }; break;
		}
	}
}

static int by_keys(struct ev_stats *s, struct ev_row *r, const struct gkey *k, size_t *n)
{
	const struct ev_stats_opts *o = &s->o;
	const struct srcgrp *g = (const struct srcgrp *)s->srcgrps.data + k->sg;
	const char *p = g->keys;
	int rc = EV_OK;
	for (int i = 0; i < o->nby && !rc; i++) {
		if (o->by[i] == EV_BY_RANK) {
			rc = ev_row_keyu(r, (*n)++, k->rank);
		} else if (o->by[i] == EV_BY_STREAM) {
			rc = ev_row_keyu(r, (*n)++, k->stream);
		} else {
			/* Fields of the source tuple, in --by order. */
			const char *e = strchr(p, 0x1f);
			size_t len = e ? (size_t)(e - p) : strlen(p);
			char v[1024];
			if (len >= sizeof v)
				len = sizeof v - 1;
			memcpy(v, p, len);
			v[len] = '\0';
			if (o->by[i] == EV_BY_SRC) {
				const struct ev_src_info *si = ev_meta_src(s->meta, g->first_src);
				if (si && si->label && *si->label)
					snprintf(v, sizeof v, "%s", si->label);
				else
					snprintf(v, sizeof v, "%u", g->first_src);
			} else if (o->by[i] == EV_BY_CONFIG && !*v) {
				snprintf(v, sizeof v, "*"); /* every source is one run */
			}
			rc = ev_row_key(r, (*n)++, v);
			p = e ? e + 1 : p + len;
		}
	}
	return rc;
}

int group_row(struct ev_stats *s, struct ev_rowset *rs, const struct gkey *k, struct ev_row **out, size_t *n)
{
	*n = 0;
	*out = ev_rowset_add(rs, k->sg);
	return *out ? by_keys(s, *out, k, n) : EV_ERR_NOMEM;
}

struct kstat *kstat_row(struct ev_stats *s, struct ev_rowset *rs, const size_t *ord, size_t j, struct ev_row **r,
                        size_t *n, int *rc)
{
	if (*rc || j >= s->g.keys.len)
		return NULL;
	if ((*rc = group_row(s, rs, GROUP_KEY(&s->g, ord[j]), r, n)) != EV_OK)
		return NULL;
	return GROUP_VAL(&s->g, ord[j]);
}

struct sort_ctx { const struct ev_stats *s; int (*cmp)(const struct ev_stats *, size_t, size_t); };

static int cmp_slots(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const struct gkey *ka = GROUP_KEY(&c->s->g, ia), *kb = GROUP_KEY(&c->s->g, ib);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	if (ka->stream != kb->stream)
		return ka->stream < kb->stream ? -1 : 1;
	int r = c->cmp(c->s, ia, ib);
	if (r)
		return r;
	return ia < ib ? -1 : ia > ib;
}

size_t *sorted_slots(struct ev_stats *s, int (*cmp)(const struct ev_stats *, size_t, size_t), int *rc)
{
	if (*rc)
		return NULL;
	size_t *ord = malloc((s->g.keys.len + 1) * sizeof *ord);
	if (!ord) {
		*rc = EV_ERR_NOMEM;
		return NULL;
	}
	for (size_t i = 0; i < s->g.keys.len; i++)
		ord[i] = i;
	struct sort_ctx c = { s, cmp };
	qsort_r(ord, s->g.keys.len, sizeof *ord, cmp_slots, &c);
	return ord;
}

double pandas_stat(struct ev_dist *d, int which)
{
	if (d->n == 0)
		return NAN;
	switch (which) {
	case 0: return d->mean;
	case 1: return ev_dist_quantile(d, 0.5);
	case 2: return d->n > 1 ? ev_dist_std(d) : NAN;
	case 3: return d->min;
	case 4: return d->max;
	default: return d->sum;
	}
}

const char *class_list(unsigned mask, char *buf, size_t n)
{
	size_t w = 0;
	buf[0] = '\0';
	for (unsigned k = 0; k < 32; k++)
		if (mask & (1u << k) && ev_kclass_name(k))
			w += (size_t)snprintf(buf + w, w < n ? n - w : 0, "%s%s", w ? "," : "", ev_kclass_name(k));
	return buf;
}

void kstat_free_groups(struct ev_stats *s)
{
	for (size_t i = 0; i < s->g.keys.len; i++) {
		struct kstat *ks = GROUP_VAL(&s->g, i);
		ev_dist_free(&ks->d);
	}
}

/* ------------------------------------------------------------------ */
/* The registry and the driver: every call goes through the row, so an
 * analysis is its file and its line in ANALYSES. */

/* The analyses in ev-stats --help order.  Adding one: its file defines
 * `const struct ev_stats_analysis ev_stats_analysis_NAME`, and X(NAME) goes here. */
#define ANALYSES(X) X(timeline) X(kernels) X(categories) X(ops) X(coll) X(variance) X(short) X(idle) X(launch) X(queue) X(membw) X(ops_summary) X(ops_category) X(kernel_ops) X(ops_args) X(critpath) X(kdist) X(kpatterns) X(perf) X(unified)

#define DECLARE(n) extern const struct ev_stats_analysis ev_stats_analysis_##n;
ANALYSES(DECLARE)
#define ROW(n) &ev_stats_analysis_##n,
const struct ev_stats_analysis *const ev_stats_registry[] = { ANALYSES(ROW) NULL };

int ev_stats_listed(const char *const *list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(*list, name))
			return 1;
	return 0;
}

int ev_stats_option_scoped(const char *name)
{
	for (size_t i = 0; ev_stats_registry[i]; i++)
		if (ev_stats_listed(ev_stats_registry[i]->options, name))
			return 1;
	return 0;
}

size_t ev_stats_option_users(const char *name, char *buf, size_t n)
{
	size_t k = 0;
	if (n)
		buf[0] = '\0';
	for (size_t i = 0; ev_stats_registry[i]; i++)
		if (ev_stats_listed(ev_stats_registry[i]->options, name))
			k += (size_t)snprintf(buf + (k < n ? k : n), k < n ? n - k : 0, "%s%s", k ? ", " : "",
			                      ev_stats_registry[i]->name);
	return k;
}

const char *const *ev_stats_table_words(const struct ev_stats_analysis *a, const char **words, size_t max)
{
	for (size_t i = 0; !a && ev_stats_registry[i]; i++)
		if (ev_stats_registry[i]->tables)
			a = ev_stats_registry[i];
	size_t n = 0;
	for (const struct ev_stats_subtable *t = a ? a->tables : NULL; t && t->name && n + 1 < max; t++)
		words[n++] = t->name;
	words[n] = NULL;
	return words;
}

int ev_stats_opts_by(struct ev_stats_opts *o, const char *list)
{
	static const char *const words[] = { "src", "rank", "stream", "config" };
	static const int fields[] = { EV_BY_SRC, EV_BY_RANK, EV_BY_STREAM, EV_BY_CONFIG };
	o->nby = 0;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (o->nby == EV_STATS_MAX_BY || n == 0 || n >= sizeof o->by_key_text[0])
			return EV_ERR_ARG;
		size_t k = 0;
		while (k < sizeof words / sizeof words[0] && !(strlen(words[k]) == n && !memcmp(p, words[k], n)))
			k++;
		o->by_key[o->nby] = NULL;
		if (k < sizeof words / sizeof words[0]) {
			o->by[o->nby++] = fields[k];
		} else {
			memcpy(o->by_key_text[o->nby], p, n);
			o->by_key_text[o->nby][n] = '\0';
			o->by_key[o->nby] = o->by_key_text[o->nby];
			o->by[o->nby++] = EV_BY_SRCKEY;
		}
		p += n + (p[n] == ',');
	}
	return EV_OK;
}

int64_t ev_stats_order_last(const ev_stats *s)
{
	return s->order_last;
}

const struct ev_stats_analysis *ev_stats_find(const char *name)
{
	for (size_t i = 0; ev_stats_registry[i]; i++)
		if (!strcmp(ev_stats_registry[i]->name, name))
			return ev_stats_registry[i];
	return NULL;
}

const char *ev_stats_sheet(const struct ev_stats_analysis *a, unsigned table)
{
	return a->tables ? a->tables[table].sheet : a->sheet;
}

int ev_stats_new(ev_stats **sp, const struct ev_stats_opts *o, const ev_strtab *st, const ev_meta *meta)
{
	*sp = NULL;
	if (!o->analysis || !o->analysis->rec || !o->analysis->rows)
		return EV_ERR_ARG;
	ev_stats *s = calloc(1, sizeof *s);
	*sp = s;
	if (!s)
		return EV_ERR_NOMEM;
	s->o = *o;
	s->a = o->analysis;
	s->st = st;
	s->meta = meta;
	s->pool.budget = o->exact_limit;
	/* Groups of at least one byte: ev_vec_push takes realloc(p, 0)
	 * returning NULL for no memory. */
	groups_init(&s->g, s->a->group_size ? s->a->group_size : 1);
	ev_vec_init(&s->srcgrps, sizeof(struct srcgrp));
	ev_map_init(&s->srcgrp_idx);
	ev_map_init(&s->src_sg);
	ev_map_init(&s->class_cache);
	if (s->a->state_size && !(s->state = calloc(1, s->a->state_size)))
		return EV_ERR_NOMEM;
	return s->a->init ? s->a->init(s) : EV_OK;
}

int ev_stats_add(ev_stats *s, const struct ev_rec *r)
{
	s->n.records++;
	if (is_gpu(r)) {
		s->n.gpu++;
		s->n.kernels += r->type == EV_KERNEL;
		s->n.with_sig += r->sig != 0;
	}
	return s->a->rec(s, r);
}

int ev_stats_finish(ev_stats *s)
{
	return s->a->finish ? s->a->finish(s) : EV_OK;
}

int ev_stats_rows(ev_stats *s, struct ev_rowset *rs)
{
	memset(rs, 0, sizeof *rs);
	return s->a->rows(s, rs);
}

int ev_stats_same_state(const struct ev_stats_analysis *a, const struct ev_stats_analysis *b)
{
	return a == b || (a->rec == b->rec && a->init == b->init && a->finish == b->finish &&
	                  a->state_size == b->state_size && a->group_size == b->group_size && a->free == b->free);
}

int ev_stats_rows_of(ev_stats *s, const struct ev_stats_analysis *a, struct ev_rowset *rs)
{
	memset(rs, 0, sizeof *rs);
	return ev_stats_same_state(s->a, a) ? a->rows(s, rs) : EV_ERR_ARG;
}

const char *ev_stats_errpath(const ev_stats *s)
{
	return s ? s->errpath : NULL;
}

void ev_stats_get_counts(const ev_stats *s, struct ev_stats_counts *c)
{
	*c = s->n;
	c->sketched = s->pool.sketched;
}

size_t ev_stats_nsrcgroups(const ev_stats *s)
{
	return s->srcgrps.len;
}

void *ev_stats_state(ev_stats *s)
{
	return s->state;
}

const struct ev_stats_opts *ev_stats_options(const ev_stats *s)
{
	return &s->o;
}

const char *ev_stats_str(const ev_stats *s, uint64_t id)
{
	return str_of(s, id);
}

void ev_stats_free(ev_stats *s)
{
	if (!s)
		return;
	/* The analysis's own first: its groups' and state's contents (not
	 * when its state could not be allocated: init never ran). */
	if (s->a->free && (s->state || !s->a->state_size))
		s->a->free(s);
	free(s->state);
	groups_free(&s->g);
	ev_map_free(&s->src_sg);
	ev_map_free(&s->srcgrp_idx);
	ev_map_free(&s->class_cache);
	for (size_t i = 0; i < s->srcgrps.len; i++)
		free(((struct srcgrp *)s->srcgrps.data)[i].keys);
	ev_vec_free(&s->srcgrps);
	free(s);
}
