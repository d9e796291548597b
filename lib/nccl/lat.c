/* SPDX-License-Identifier: MIT */
/*
 * lat.c - the per-primitive latency table (npkit2lat's TSV) and the cost of
 * a reduction or copy of a received slice, interpolated from it.
 */
#include <stdlib.h>
#include <string.h>

#include "ev/nccl_sched.h"

static const char *const prim_names[EV_NCCL_NPRIM] = {
	"SEND", "DIRECT_RECV", "RECV_REDUCE_SEND", "DIRECT_RECV_REDUCE_COPY_SEND", "DIRECT_RECV_COPY_SEND",
	"RECV_REDUCE_COPY",
};

const char *ev_nccl_prim_name(enum ev_nccl_prim p)
{
	return (unsigned)p < EV_NCCL_NPRIM ? prim_names[p] : NULL;
}

struct lat_pt { uint64_t size; double mean; };
struct lat_tab { struct lat_pt *pt; size_t n, cap; };
struct ev_nccl_lat { struct lat_tab t[EV_NCCL_NPRIM][4]; };

ev_nccl_lat *ev_nccl_lat_new(void)
{
	return calloc(1, sizeof(struct ev_nccl_lat));
}

void ev_nccl_lat_free(ev_nccl_lat *L)
{
	if (!L)
		return;
	for (int p = 0; p < EV_NCCL_NPRIM; p++)
		for (int q = 0; q < 4; q++)
			free(L->t[p][q].pt);
	free(L);
}

int ev_nccl_lat_add(ev_nccl_lat *L, enum ev_nccl_prim p, unsigned proto, uint64_t size, double mean)
{
	if ((unsigned)p >= EV_NCCL_NPRIM || proto == 0 || proto > 3 || !(mean >= 0))
		return EV_ERR_ARG;
	struct lat_tab *t = &L->t[p][proto];
	if (t->n == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 16;
		struct lat_pt *np = realloc(t->pt, nc * sizeof *np);
		if (!np)
			return EV_ERR_NOMEM;
		t->pt = np;
		t->cap = nc;
	}
	t->pt[t->n].size = size;
	t->pt[t->n].mean = mean;
	t->n++;
	return EV_OK;
}

static int cmp_pt(const void *a, const void *b)
{
	const struct lat_pt *x = a, *y = b;
	return x->size < y->size ? -1 : x->size > y->size;
}

int ev_nccl_lat_seal(ev_nccl_lat *L, char *err, size_t errlen)
{
	int any = 0;
	for (int p = 0; p < EV_NCCL_NPRIM; p++)
		for (unsigned q = 0; q < 4; q++) {
			struct lat_tab *t = &L->t[p][q];
			if (t->n)
				qsort(t->pt, t->n, sizeof *t->pt, cmp_pt);
			for (size_t i = 1; i < t->n; i++)
				if (t->pt[i].size == t->pt[i - 1].size)
					return ev_errf(err, errlen, EV_ERR_FORMAT, "%s %s size %llu appears twice", prim_names[p],
					           ev_proto_name(q), (unsigned long long)t->pt[i].size);
			if ((p == EV_NCCL_P_RRS || p == EV_NCCL_P_RCS) && t->n)
				any = 1;
		}
	if (!any)
		return ev_errf(err, errlen, EV_ERR_FORMAT, "no RECV_REDUCE_SEND or DIRECT_RECV_COPY_SEND rows");
	return EV_OK;
}

int ev_nccl_lat_load(ev_nccl_lat **out, const char *path, char *err, size_t errlen)
{
	ev_input *in;
	const char *line;
	size_t len;
	*out = NULL;
	int rc = ev_input_open(&in, path), status = EV_OK;
	if (rc)
		return rc;
	ev_nccl_lat *L = ev_nccl_lat_new();
	if (!L) {
		ev_input_close(in);
		return EV_ERR_NOMEM;
	}
	int header = 0;
	while ((rc = ev_input_line(in, &line, &len)) == EV_REC || rc == EV_ERR_TRUNCATED) {
		unsigned long long ln = (unsigned long long)ev_input_lineno(in);
		char buf[512];
		int last = rc == EV_ERR_TRUNCATED;
		if (len >= sizeof buf) {
			status = ev_errf(err, errlen, EV_ERR_LIMIT, "line %llu: line too long", ln);
			break;
		}
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (!header) {
			if (strncmp(buf, "primitive\tproto\tsize_bytes\tn\tmean_ns", 36) != 0) {
				status = ev_errf(err, errlen, EV_ERR_FORMAT, "line 1: not an npkit2lat table (no header row)");
				break;
			}
			header = 1;
			if (last)
				break;
			continue;
		}
		char *f[10], *save = NULL;
		int nf = 0;
		for (char *t = strtok_r(buf, "\t", &save); t && nf < 10; t = strtok_r(NULL, "\t", &save))
			f[nf++] = t;
		unsigned proto;
		uint64_t size;
		double mean;
		if (nf < 5 || ev_proto_parse(f[1], &proto) || proto == 0 || proto > 3 || ev_parse_u64(f[2], &size) ||
		    ev_parse_double(f[4], &mean) || mean < 0) {
			status = ev_errf(err, errlen, EV_ERR_FORMAT, "line %llu: bad row", ln);
			break;
		}
		if (mean > EV_NPKIT_MAX_NS) {
			/* no primitive takes 104 days: a corrupt table, not a time */
			status = ev_errf(err, errlen, EV_ERR_FORMAT, "line %llu: mean_ns %s is over 2^53 ns (104 days)", ln, f[4]);
			break;
		}
		int p = -1;
		for (int i = 0; i < EV_NCCL_NPRIM; i++)
			if (strcmp(prim_names[i], f[0]) == 0)
				p = i;
		if (p >= 0 && (status = ev_nccl_lat_add(L, (enum ev_nccl_prim)p, proto, size, mean)) != EV_OK)
			break;
		if (last)
			break;
	}
	if (!status && rc < 0 && rc != EV_ERR_TRUNCATED)
		status = rc == EV_ERR_LIMIT ? ev_errf(err, errlen, EV_ERR_LIMIT, "line too long") : rc;
	if (!status && !header)
		status = ev_errf(err, errlen, EV_ERR_FORMAT, "empty latency table");
	ev_input_close(in);
	if (!status)
		status = ev_nccl_lat_seal(L, err, errlen);
	if (status) {
		ev_nccl_lat_free(L);
		return status;
	}
	*out = L;
	return EV_OK;
}

/* Linear in size between tabulated means; below the smallest size its
 * mean; above the largest, the slope of the last two points (no clamp
 * except at zero). */
static double interp(const struct lat_tab *t, uint64_t size)
{
	const struct lat_pt *p = t->pt;
	size_t n = t->n;
	if (size <= p[0].size || n == 1)
		return p[0].mean;
	if (size >= p[n - 1].size) {
		double slope = (p[n - 1].mean - p[n - 2].mean) / (double)(p[n - 1].size - p[n - 2].size);
		double v = p[n - 1].mean + slope * (double)(size - p[n - 1].size);
		return v > 0 ? v : 0;
	}
	size_t lo = 0, hi = n - 1;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (p[mid].size <= size)
			lo = mid;
		else
			hi = mid;
	}
	double f = (double)(size - p[lo].size) / (double)(p[hi].size - p[lo].size);
	return p[lo].mean + f * (p[hi].mean - p[lo].mean);
}

/* Table of a primitive for a protocol: the protocol's own, LL128 falls
 * back to LL (as ATLAHS does), anything else to whatever protocol has rows. */
static const struct lat_tab *lat_tab(const ev_nccl_lat *L, int prim, unsigned proto)
{
	if (proto < 4 && L->t[prim][proto].n)
		return &L->t[prim][proto];
	if (proto == EV_PROTO_LL128 && L->t[prim][EV_PROTO_LL].n)
		return &L->t[prim][EV_PROTO_LL];
	for (unsigned q = 3; q >= 1; q--)
		if (L->t[prim][q].n)
			return &L->t[prim][q];
	return NULL;
}

double ev_nccl_lat_cost(const ev_nccl_lat *L, enum ev_nccl_prim prim, unsigned proto, uint64_t bytes)
{
	if (!L || bytes == 0 || (unsigned)prim >= EV_NCCL_NPRIM)
		return 0;
	const struct lat_tab *t = lat_tab(L, prim, proto);
	if (t)
		return interp(t, bytes);
	/* Composite primitives not measured: reduction plus copy. */
	if (prim == EV_NCCL_P_RRCS || prim == EV_NCCL_P_RRC)
		return ev_nccl_lat_cost(L, EV_NCCL_P_RRS, proto, bytes) + ev_nccl_lat_cost(L, EV_NCCL_P_RCS, proto, bytes);
	return 0;
}
