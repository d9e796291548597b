/* SPDX-License-Identifier: MIT */
/*
 * rowset.c - result tables held in memory (string keys, double values), so
 * that compare can join the tables of two sources; their size grows with
 * groups only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_impl.h"
#include "ev/xlsx.h" /* ev_table_open_xlsx: a workbook sheet as the table's sink */

int ev_rowset_init(struct ev_rowset *rs, const struct ev_colspec *keys, size_t nkeys, const struct ev_colspec *vals,
                   size_t nvals)
{
	memset(rs, 0, sizeof *rs);
	ev_vec_init(&rs->rows, sizeof(struct ev_row));
	rs->keys = malloc((nkeys + 1) * sizeof *rs->keys);
	rs->vals = malloc((nvals + 1) * sizeof *rs->vals);
	if (!rs->keys || !rs->vals)
		return EV_ERR_NOMEM;
	if (nkeys) /* a table may have no key columns (keys NULL) */
		memcpy(rs->keys, keys, nkeys * sizeof *keys);
	if (nvals)
		memcpy(rs->vals, vals, nvals * sizeof *vals);
	rs->nkeys = nkeys;
	rs->nvals = nvals;
	return EV_OK;
}

struct ev_row *ev_rowset_add(struct ev_rowset *rs, uint32_t sg)
{
	struct ev_row *r = ev_vec_push(&rs->rows);
	if (!r)
		return NULL;
	r->sg = sg;
	r->key = calloc(rs->nkeys + 1, sizeof *r->key);
	r->val = calloc(rs->nvals + 1, sizeof *r->val);
	if (!r->key || !r->val)
		return NULL;
	return r;
}

int ev_row_key(struct ev_row *r, size_t i, const char *s)
{
	r->key[i] = strdup(s ? s : "");
	return r->key[i] ? EV_OK : EV_ERR_NOMEM;
}

int ev_row_keyu(struct ev_row *r, size_t i, uint64_t v)
{
	char b[24];
	snprintf(b, sizeof b, "%llu", (unsigned long long)v);
	return ev_row_key(r, i, b);
}

void ev_rowset_free(struct ev_rowset *rs)
{
	for (size_t i = 0; i < rs->rows.len; i++) {
		struct ev_row *r = (struct ev_row *)rs->rows.data + i;
		for (size_t k = 0; r->key && k < rs->nkeys; k++)
			free(r->key[k]);
		free(r->key);
		free(r->val);
	}
	ev_vec_free(&rs->rows);
	free(rs->keys);
	free(rs->vals);
	memset(rs, 0, sizeof *rs);
}

int rowset_cell_key(ev_table *t, const struct ev_colspec *c, const char *s)
{
	if (c->numeric && s && *s) {
		int64_t v;
		if (ev_parse_i64(s, &v) == EV_OK)
			return ev_table_i64(t, v);
	}
	return ev_table_str(t, s ? s : "");
}

/* The rowset as a table: to out in fmt, or (x not NULL) to a new sheet. */
static int rowset_write(const struct ev_rowset *rs, ev_output *out, enum ev_table_fmt fmt, struct ev_xlsx *x,
                        const char *sheet)
{
	size_t n = rs->nkeys + rs->nvals;
	const char **cols = malloc((n + 1) * sizeof *cols);
	ev_table *t = NULL;
	int rc;
	if (!cols)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < rs->nkeys; i++)
		cols[i] = rs->keys[i].name;
	for (size_t i = 0; i < rs->nvals; i++)
		cols[rs->nkeys + i] = rs->vals[i].name;
	rc = x ? ev_table_open_xlsx(&t, x, sheet, cols, n) : ev_table_open(&t, out, fmt, cols, n);
	for (size_t i = 0; !rc && i < rs->rows.len; i++) {
		const struct ev_row *r = (const struct ev_row *)rs->rows.data + i;
		for (size_t k = 0; !rc && k < rs->nkeys; k++)
			rc = rowset_cell_key(t, &rs->keys[k], r->key[k]);
		for (size_t k = 0; !rc && k < rs->nvals; k++)
			rc = ev_table_f64(t, r->val[k]);
	}
	int rc2 = ev_table_close(t);
	free(cols);
	return rc ? rc : rc2;
}

int ev_rowset_print(const struct ev_rowset *rs, ev_output *out, enum ev_table_fmt fmt)
{
	return rowset_write(rs, out, fmt, NULL, NULL);
}

int ev_rowset_print_xlsx(const struct ev_rowset *rs, struct ev_xlsx *x, const char *sheet)
{
	return rowset_write(rs, NULL, EV_TABLE_TSV, x, sheet);
}
