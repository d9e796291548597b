/* SPDX-License-Identifier: MIT */
/*
 * complog.c - the compiler's "Perf Summary / Ideal/Total Cycles" tables:
 * one "<kernel>[-...]-opCat<Category>  <ideal cycles>" line per kernel
 * between the "Ideal/Total Cycles" title and "Perf Summary End".  As in
 * acelyzer, the kernel is the text before "-opCat" (or before a final
 * "-NA", category "NotAvailable"), Precompute and -LxPreload lines are
 * skipped, and the first definition of a kernel wins.  A line holding
 * only DECODING or PREFILL (indented) sets the phase of the tables after
 * it in that log, as acelyzer's iteration-mode lines.
 */
#include <stdlib.h>
#include <string.h>

#include "ev/flex.h"
#include "ev/stream.h"

const char *const ev_flex_phase_names[EV_FLEX_NPHASES] = { "ITL", "TTFT", "UNKN" };

static int add(struct ev_flex_complog *cl, const char *k, size_t kn, const char *cat, size_t cn, uint64_t ideal,
               enum ev_flex_phase phase)
{
	for (size_t i = 0; i < cl->n; i++)
		if (strlen(cl->k[i].kernel) == kn && memcmp(cl->k[i].kernel, k, kn) == 0)
			return EV_OK;
	if (cl->n == cl->cap) {
		size_t nc = cl->cap ? cl->cap * 2 : 64;
		struct ev_flex_kernel_info *p = realloc(cl->k, nc * sizeof *p);
		if (!p)
			return EV_ERR_NOMEM;
		cl->k = p;
		cl->cap = nc;
	}
	struct ev_flex_kernel_info *e = &cl->k[cl->n];
	e->kernel = strndup(k, kn);
	e->category = strndup(cat, cn);
	e->ideal = ideal;
	e->phase = phase;
	if (!e->kernel || !e->category) {
		free(e->kernel);
		free(e->category);
		return EV_ERR_NOMEM;
	}
	cl->n++;
	return EV_OK;
}

/* "name   12345" (name of [-_A-Za-z0-9], one number): the data lines. */
static int data_line(char *l, char **name, size_t *nlen, uint64_t *v)
{
	char *p = l;
	while (*p == '_' || *p == '-' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
		p++;
	if (p == l || *p != ' ')
		return 0;
	*name = l;
	*nlen = (size_t)(p - l);
	while (*p == ' ')
		p++;
	char *d = p;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == d)
		return 0;
	char save = *p;
	*p = '\0';
	int bad = ev_parse_u64(d, v);
	*p = save;
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	return !bad && *p == '\0';
}

/* acelyzer's iteration-mode line: white space, DECODING or PREFILL, and
 * nothing but white space after.  The phase it sets, or -1. */
static int phase_line(const char *l)
{
	const char *p = l;
	while (*p == ' ' || *p == '\t')
		p++;
	if (p == l)
		return -1;
	int ph = !strncmp(p, "DECODING", 8) ? EV_FLEX_PHASE_ITL : !strncmp(p, "PREFILL", 7) ? EV_FLEX_PHASE_TTFT : -1;
	if (ph < 0)
		return -1;
	p += ph == EV_FLEX_PHASE_ITL ? 8 : 7;
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	return *p ? -1 : ph;
}

int ev_flex_complog_read(struct ev_flex_complog *cl, const char *path)
{
	ev_input *in;
	int rc = ev_input_open(&in, path), active = 0, ph;
	enum ev_flex_phase phase = EV_FLEX_PHASE_UNKN, tphase = EV_FLEX_PHASE_UNKN;
	uint64_t tables = 0;
	if (rc != EV_OK)
		return rc;
	const char *line;
	size_t len;
	char *buf = NULL;
	size_t cap = 0;
	while ((rc = ev_input_line(in, &line, &len)) == EV_REC || rc == EV_ERR_TRUNCATED) {
		int last = rc == EV_ERR_TRUNCATED;
		if (len + 1 > cap) {
			char *b = realloc(buf, len + 1);
			if (!b) {
				rc = EV_ERR_NOMEM;
				break;
			}
			buf = b;
			cap = len + 1;
		}
		memcpy(buf, line, len);
		buf[len] = '\0';
		if ((ph = phase_line(buf)) >= 0) {
			phase = (enum ev_flex_phase)ph;
		} else if (strstr(buf, " Ideal/Total Cycles ")) {
			active = 1;
			tphase = phase;
			tables++;
		} else if (active && strstr(buf, "====== Perf Summary End ======")) {
			active = 0;
		} else if (active) {
			char *name;
			size_t nl;
			uint64_t v;
			if (!strncmp(buf, "Total", 5) && (buf[5] == ' ' || buf[5] == '\t')) {
				uint64_t t;
				char *p = buf + 5;
				while (*p == ' ' || *p == '\t')
					p++;
				char *e = p;
				while (*e >= '0' && *e <= '9')
					e++;
				*e = '\0';
				if (ev_parse_u64(p, &t) == 0)
					cl->total += t;
			} else if (data_line(buf, &name, &nl, &v) && !strstr(buf, "Precompute") && !strstr(buf, "-LxPreload")) {
				const char *cat = "other";
				size_t kn = nl, cn = 5;
				for (size_t i = 0; i + 6 <= nl; i++)
					if (memcmp(name + i, "-opCat", 6) == 0) {
						kn = i;
						cat = name + i + 6;
						cn = nl - i - 6;
						break;
					}
				if (kn == nl) {
					if (nl >= 3 && memcmp(name + nl - 3, "-NA", 3) == 0) {
						kn = nl - 3;
						cat = "NotAvailable";
						cn = 12;
					} else {
						cat = "Total";
						cn = 5;
					}
				}
				if (strncmp(cat, "Total", 5) && (rc = add(cl, name, kn, cat, cn, v, tphase)) != EV_OK)
					break;
			}
		}
		if (last)
			break;
	}
	free(buf);
	(void)ev_input_close(in);
	if (rc < 0 && rc != EV_ERR_TRUNCATED)
		return rc;
	cl->tables += tables;
	return tables ? EV_OK : EV_ERR_FORMAT;
}

const struct ev_flex_kernel_info *ev_flex_complog_find(const struct ev_flex_complog *cl, const char *name, size_t n)
{
	static const char sfx[] = " Cmpt Exec";
	if (n >= sizeof sfx - 1 && memcmp(name + n - (sizeof sfx - 1), sfx, sizeof sfx - 1) == 0)
		n -= sizeof sfx - 1;
	for (size_t i = 0; i < cl->n; i++)
		if (strlen(cl->k[i].kernel) == n && memcmp(cl->k[i].kernel, name, n) == 0)
			return &cl->k[i];
	return NULL;
}

void ev_flex_complog_free(struct ev_flex_complog *cl)
{
	for (size_t i = 0; i < cl->n; i++) {
		free(cl->k[i].kernel);
		free(cl->k[i].category);
	}
	free(cl->k);
	memset(cl, 0, sizeof *cl);
}
