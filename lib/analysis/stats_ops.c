/* SPDX-License-Identifier: MIT */
/*
 * stats_ops.c - per launching op signature: op instances (rank, External
 * id) whose kernel time is the union of their kernels (TraceLens's
 * total_direct_kernel_time), with GEMM roofline numbers (gemm.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_impl.h"

struct inst { /* an open op instance */
	struct gkey key;        /* sg, rank, k1 = instance, k2 = sig */
	int64_t start, end;     /* current merged kernel interval */
	uint64_t busy;          /* merged time before it */
	uint64_t name;
	unsigned kclass;
	int live;
};

struct ops {
	struct ev_map inst_idx;         /* hash of an instance's key -> index + 1 */
	struct inst *inst;
	size_t ninst, capinst;
	int64_t now;
};

static int inst_close(struct ev_stats *s, struct inst *in)
{
	struct gkey k;
	memset(&k, 0, sizeof k);
	k.sg = in->key.sg;
	k.rank = has_by(&s->o, EV_BY_RANK) ? in->key.rank : 0;
	k.k1 = in->key.k2; /* the signature */
	struct opstat *os = group_get(&s->g, &k, NULL);
	if (!os)
		return EV_ERR_NOMEM;
	if (os->k.d.n == 0) {
		os->k.name = in->name;
		os->k.kclass = in->kclass;
		ev_gemm_model(str_of(s, in->key.k2), &os->gflop, &os->mbytes);
	}
	uint64_t busy = in->busy + ev_span(in->start, in->end);
	double us = (double)busy / 1e3;
	int rc = ev_dist_add(&os->k.d, &s->pool, us, in->start);
	if (!rc && os->gflop > 0 && us > 0)
		rc = ev_dist_add(&os->tflops, &s->pool, os->gflop / 1e3 / (us / 1e6), in->start);
	if (!rc && os->mbytes > 0 && us > 0)
		rc = ev_dist_add(&os->tbs, &s->pool, os->mbytes * 1048576.0 / 1e12 / (us / 1e6), in->start);
	in->live = 0;
	return rc;
}

/* Instances whose kernels ended more than a second before now are done:
 * an op's kernels are launched together, and keeping every instance open
 * to the end would grow with the trace.  Past INST_MAX open instances (a
 * dense trace) the half that ended first is closed too, so memory is
 * bounded whatever the kernel rate. */
#define INST_WINDOW_NS 1000000000LL
#define INST_MAX 65536

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int ops_sweep(struct ev_stats *s, int all)
{
	struct ops *op = s->state;
	size_t w = 0;
	int rc = EV_OK;
	int64_t cut = INT64_MIN; /* close also what ended at or before cut */
	if (!all && op->ninst >= INST_MAX) {
		int64_t *ends = malloc(op->ninst * sizeof *ends);
		if (!ends)
			return EV_ERR_NOMEM;
		for (size_t i = 0; i < op->ninst; i++)
			ends[i] = op->inst[i].end;
		qsort(ends, op->ninst, sizeof *ends, cmp_i64);
		cut = ends[op->ninst / 2];
		free(ends);
	}
	for (size_t i = 0; i < op->ninst; i++) {
		struct inst *in = &op->inst[i];
		int expired = op->now > INT64_MIN + INST_WINDOW_NS && in->end < op->now - INST_WINDOW_NS;
		if (!rc && (all || expired || in->end <= cut)) {
			s->n.ops_window += !all && !expired;
			rc = inst_close(s, in);
			continue;
		}
		op->inst[w++] = *in;
	}
	op->ninst = w;
	ev_map_free(&op->inst_idx);
	ev_map_init(&op->inst_idx);
	for (size_t i = 0; !rc && i < op->ninst; i++)
		rc = ev_map_put(&op->inst_idx, ev_hash64(&op->inst[i].key, sizeof op->inst[i].key) | 1, i + 1);
	return rc;
}

static int ops_init(struct ev_stats *s)
{
	struct ops *op = s->state;
	ev_map_init(&op->inst_idx);
	return EV_OK;
}

static int ops_rec(struct ev_stats *s, const struct ev_rec *r)
{
	struct ops *op = s->state;
	if (!is_gpu(r) || !r->sig)
		return EV_OK;
	unsigned kc = class_of(s, r);
	if (s->o.class_given && !(s->o.class_mask & (1u << kc)))
		return EV_OK;
	s->n.selected++;
	op->now = r->ts;
	struct inst key;
	memset(&key, 0, sizeof key);
	int rc = src_group(s, r->src, &key.key.sg);
	if (rc)
		return rc;
	key.key.rank = r->rank;
	key.key.k1 = r->step ? r->step : ((uint64_t)1 << 40) + r->id; /* no instance id: each kernel alone */
	key.key.k2 = r->sig;
	uint64_t h = ev_hash64(&key.key, sizeof key.key) | 1;
	uint64_t *slot = ev_map_get(&op->inst_idx, h);
	struct inst *in = slot ? &op->inst[*slot - 1] : NULL;
	if (in && memcmp(&in->key, &key.key, sizeof key.key) != 0)
		in = NULL; /* hash clash: treat as a new instance */
	int64_t end = ev_rec_end(r);
	if (in) {
		if (r->ts > in->end) {
			in->busy += ev_span(in->start, in->end);
			in->start = r->ts;
			in->end = end;
		} else if (end > in->end) {
			in->end = end;
		}
		return EV_OK;
	}
	if (op->ninst == op->capinst) {
		if (op->ninst > 4096 && (rc = ops_sweep(s, 0)) != EV_OK)
			return rc;
		/* Grow unless the sweep freed half: sweeps stay amortised O(1). */
		if (op->ninst == op->capinst || (op->ninst > op->capinst / 2 && op->capinst < INST_MAX)) {
			size_t cap = op->capinst ? 2 * op->capinst : 256;
			struct inst *ni = realloc(op->inst, cap * sizeof *ni);
			if (!ni)
				return EV_ERR_NOMEM;
			op->inst = ni;
			op->capinst = cap;
		}
	}
	in = &op->inst[op->ninst++];
	*in = key;
	in->start = r->ts;
	in->end = end;
	in->name = r->name;
	in->kclass = kc;
	in->live = 1;
	return ev_map_put(&op->inst_idx, h, op->ninst);
}

/* End of input: close every instance; count the rows of one instance,
 * whose sample std is undefined (left empty, as TraceLens's NaN). */
static int ops_finish(struct ev_stats *s)
{
	int rc = ops_sweep(s, 1);
	for (size_t i = 0; !rc && i < s->g.keys.len; i++)
		s->n.one_instance += ((struct kstat *)GROUP_VAL(&s->g, i))->d.n < 2;
	return rc;
}

static int cmp_sum_desc(const struct ev_stats *s, size_t ia, size_t ib)
{
	double sa = ((struct kstat *)GROUP_VAL(&s->g, ia))->d.sum, sb = ((struct kstat *)GROUP_VAL(&s->g, ib))->d.sum;
	return sa != sb ? (sa > sb ? -1 : 1) : 0;
}

/* TraceLens's op category of an op signature ("aten::mm dims=... types=..."):
 * by the op's name, the part before the shape arguments. */
static const char *op_category_of(const char *sig, const char *kernel)
{
	static const char *const args[] = { " dims=", " types=", " strides=", " concrete=" };
	char name[256];
	size_t n = strlen(sig);
	for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
		const char *a = strstr(sig, args[i]);
		if (a && (size_t)(a - sig) < n)
			n = (size_t)(a - sig);
	}
	if (n >= sizeof name)
		n = sizeof name - 1;
	memcpy(name, sig, n);
	name[n] = '\0';
	return ev_op_category(name, kernel);
}

static int ops_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	int rc = EV_OK;
	struct ev_colspec keys[EV_STATS_MAX_BY + 4];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	keys[nk++] = (struct ev_colspec){ "sig", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "kernel", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "class", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "op_category", 0, 0 };
	static const struct ev_colspec vals[] = {
		{ "count", 0, 0 }, { "kernel_time_sum_us", 0, EV_DIR_LOWER }, { "kernel_time_mean_us", 0, EV_DIR_LOWER },
		{ "kernel_time_median_us", 0, EV_DIR_LOWER }, { "kernel_time_std_us", 0, EV_DIR_NONE },
		{ "kernel_time_min_us", 0, EV_DIR_LOWER }, { "kernel_time_max_us", 0, EV_DIR_LOWER }, { "gflops", 0, EV_DIR_NONE },
		{ "data_moved_mb", 0, EV_DIR_NONE }, { "flops_per_byte", 0, EV_DIR_NONE }, { "tflops_s_mean", 0, EV_DIR_HIGHER },
		{ "tflops_s_median", 0, EV_DIR_HIGHER }, { "tb_s_mean", 0, EV_DIR_HIGHER },
	};
	if (!rc)
		rc = ev_rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
	size_t *ord = sorted_slots(s, cmp_sum_desc, &rc);
	struct ev_row *r;
	size_t n;
	struct kstat *ks;
	for (size_t j = 0; (ks = kstat_row(s, rs, ord, j, &r, &n, &rc)) != NULL; j++) {
		const char *sig = str_of(s, GROUP_KEY(&s->g, ord[j])->k1);
		rc = ev_row_key(r, n++, sig);
		rc = rc ? rc : ev_row_key(r, n++, str_of(s, ks->name));
		rc = rc ? rc : ev_row_key(r, n++, class_name(ks->kclass));
		rc = rc ? rc : ev_row_key(r, n++, op_category_of(sig, str_of(s, ks->name)));
		double *v = r->val;
		v[0] = (double)ks->d.n;
		v[1] = ks->d.sum;
		v[2] = ks->d.mean;
		v[3] = ev_dist_quantile(&ks->d, 0.5);
		v[4] = ks->d.n > 1 ? ev_dist_std(&ks->d) : NAN; /* one instance: no sample std */
		v[5] = ks->d.min;
		v[6] = ks->d.max;
		struct opstat *os = (struct opstat *)ks;
		v[7] = os->gflop > 0 ? os->gflop : NAN;
		v[8] = os->mbytes > 0 ? os->mbytes : NAN;
		v[9] = os->gflop > 0 && os->mbytes > 0 ? os->gflop * 1e9 / (os->mbytes * 1048576.0) : NAN;
		v[10] = os->tflops.n ? os->tflops.mean : NAN;
		v[11] = os->tflops.n ? ev_dist_quantile(&os->tflops, 0.5) : NAN;
		v[12] = os->tbs.n ? os->tbs.mean : NAN;
	}
	free(ord);
	return rc;
}

static void ops_free(struct ev_stats *s)
{
	struct ops *op = s->state;
	for (size_t i = 0; i < s->g.keys.len; i++) {
		struct opstat *os = GROUP_VAL(&s->g, i);
		ev_dist_free(&os->tflops);
		ev_dist_free(&os->tbs);
	}
	kstat_free_groups(s);
	free(op->inst);
	ev_map_free(&op->inst_idx);
}

static int ops_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	char cl[256];
	if (c->gpu && !c->with_sig)
		snprintf(buf, n, "none of the %llu GPU events is linked to a launching op (no sig): empty table",
		         (unsigned long long)c->gpu);
	else if (c->gpu)
		snprintf(buf, n, "no linked GPU event of class %s among %llu with an op: empty table (try --class=all)",
		         class_list(o->class_mask, cl, sizeof cl), (unsigned long long)c->with_sig);
	return c->gpu != 0;
}

static const char *const ops_options[] = { "class", "exact-limit", NULL };

const struct ev_stats_analysis ev_stats_analysis_ops = {
	.name = "ops",
	.sheet = "ops_unique_args",
	.help = "per launching op signature: instances, kernel busy time per\n"
	        "instance; GFLOPs, data moved and TFLOP/s for GEMMs with shapes",
	.options = ops_options,
	.comparable = 1,
	.state_size = sizeof(struct ops),
	.group_size = sizeof(struct opstat),
	.init = ops_init,
	.rec = ops_rec,
	.finish = ops_finish,
	.rows = ops_rows,
	.free = ops_free,
	.explain = ops_explain,
};
