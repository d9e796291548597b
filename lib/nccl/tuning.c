/* SPDX-License-Identifier: MIT */
/*
 * tuning.c - what NCCL decides before it moves a byte: the algorithm and
 * protocol (its cost model, with presets for the systems a trace does not
 * describe), channels and threads, buffer steps and chunk sizes, and how a
 * collective's elements are split across channels in each NCCL version
 * (docs/nccl-model.md, "Tuning" and "Chunking").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ev/nccl.h"
#include "ev/nccl_sched.h"
#include "nccl/util.h"

/* ------------------------------------------------------------------ */
/* Presets.                                                            */

/* RCCL's tables for gfx942 (MI300X/MI325X, its tuning model 5) and gfx950
 * (MI350X/MI355X, model 6), from ROCm/rccl src/graph/tuning.cc at 9e22c79d
 * (docs/nccl-model.md, section 14, says which number is which).  The two
 * differ only in their correction factors. */
#define R10(v) v, v, v, v, v, v, v, v, v, v
static const struct ev_rccl_tables rccl_gfx942 = {
	.base_lat = { { 12.0, 12.0, 17.0 }, { 12.0, 12.0, 17.0 } },
	.hw_lat = { { { 0.8, 0.8, 2.1 }, { 0.9, 0.9, 2.3 } },
	            { { 2.2, 2.2, 5.7 }, { 2.2, 2.2, 5.7 } },
	            { { 9.5, 9.5, 320.0 }, { 10.5, 10.5, 25.0 } } },
	.bw_ratio = { { { 0.08, 0.08, 1.0 }, { 0.06, 0.06, 0.11 } },
	              { { 0.08, 0.08, 1.0 }, { 0.06, 0.06, 0.59 } } },
	.tree_corr = {
		{ 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, R10(0.1), 0.1 },
		{ 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, R10(0.1), 0.1 },
		{ R10(0.1), 0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 0.7, 0.5, 0.6, 0.6, 0.6 } },
	.ring_corr = {
		{ R10(0.1), 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
		{ R10(0.1), 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
		{ R10(0.1), R10(0.1), 0.1, 0.1, 1.0, 0.8, 1.0, 1.0, 1.0 } },
	.no_tree_simple_1node = 1,
	.ring_ll_rooted_1node = 1.65,
};
static const struct ev_rccl_tables rccl_gfx950 = {
	.base_lat = { { 12.0, 12.0, 17.0 }, { 12.0, 12.0, 17.0 } },
	.hw_lat = { { { 0.8, 0.8, 2.1 }, { 0.9, 0.9, 2.3 } },
	            { { 2.2, 2.2, 5.7 }, { 2.2, 2.2, 5.7 } },
	            { { 9.5, 9.5, 320.0 }, { 10.5, 10.5, 25.0 } } },
	.bw_ratio = { { { 0.08, 0.08, 1.0 }, { 0.06, 0.06, 0.11 } },
	              { { 0.08, 0.08, 1.0 }, { 0.06, 0.06, 0.59 } } },
	.tree_corr = {
		{ 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, R10(0.1), 0.1 },
		{ 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0,
		  0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
		{ R10(0.1), 0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 1.0, 0.1, 0.1, 0.1, 0.9, 0.9, 0.7, 0.8, 0.6, 0.6, 0.6 } },
	.ring_corr = {
		{ R10(0.1), 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
		{ R10(0.1), 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
		{ R10(0.1), R10(0.1), 0.1, 0.1, 1.0, 0.8, 0.8, 1.0, 1.0 } },
	.no_tree_simple_1node = 1,
	.ring_ll_rooted_1node = 1.65,
};
#undef R10

/* The NVIDIA rows follow NCCL's defaults for those systems.  The AMD rows
 * are RCCL on an 8-GPU xGMI node; MI300X and MI350X cost with RCCL's own
 * tables above, and leave LL128 off as RCCL does unless the node's
 * topology model or RCCL_LL128_FORCE_ENABLE turns it on.  Channel counts
 * and per-channel bandwidths come from the topology search, not from those
 * tables, and stay estimates (docs/nccl-model.md). */
static const struct ev_nccl_preset presets[] = {
	{ "h100", "nvidia", EV_NCCL_HOPPER, 1, 16, 20.0, 25.0, 1, 32, 2, 0, NULL },
	{ "a100", "nvidia", EV_NCCL_AMPERE, 1, 12, 20.0, 12.0, 1, 32, 2, 0, NULL },
	{ "b200", "nvidia", EV_NCCL_BLACKWELL, 1, 16, 40.0, 25.0, 1, 32, 2, 0, NULL },
	{ "pcie", "nvidia", EV_NCCL_AMPERE, 0, 2, 12.0, 6.0, 0, 2, 2, 0, NULL },
	{ "mi300x", "amd", EV_NCCL_HOPPER, 1, 16, 16.0, 12.5, 0, 2, 2, 0, &rccl_gfx942 },
	{ "mi350x", "amd", EV_NCCL_HOPPER, 1, 16, 16.0, 12.5, 0, 2, 2, 0, &rccl_gfx950 },
	{ "mi250", "amd", EV_NCCL_AMPERE, 1, 8, 12.0, 6.25, 0, 2, 2, 0, NULL },
};

size_t ev_nccl_npresets(void) { return sizeof presets / sizeof presets[0]; }

const struct ev_nccl_preset *ev_nccl_preset_at(size_t i)
{
	return i < ev_nccl_npresets() ? &presets[i] : NULL;
}

const struct ev_nccl_preset *ev_nccl_preset_find(const char *name)
{
	for (size_t i = 0; i < ev_nccl_npresets(); i++)
		if (strcasecmp(name, presets[i].name) == 0)
			return &presets[i];
	return NULL;
}

/* Device names to presets.  A rule with a source text stands in for a
 * device whose own tuning is not modelled, and says so. */
static const struct device_rule {
	const char *needle, *preset, *source;
} device_rules[] = {
	{ "mi350", "mi350x", NULL }, { "mi355", "mi350x", NULL }, { "gfx950", "mi350x", NULL },
	{ "mi300", "mi300x", NULL }, { "mi325", "mi300x", NULL }, { "gfx942", "mi300x", NULL },
	{ "mi250", "mi250", NULL }, { "mi210", "mi250", NULL }, { "gfx90a", "mi250", NULL },
	{ "h100", "h100", NULL }, { "h200", "h100", NULL }, { "h800", "h100", NULL }, { "gh200", "h100", NULL },
	{ "sm_90", "h100", NULL },
	{ "b200", "b200", NULL }, { "gb200", "b200", NULL }, { "b100", "b200", NULL }, { "sm_100", "b200", NULL },
	{ "a100", "a100", NULL }, { "a800", "a100", NULL }, { "sm_80", "a100", NULL },
};

static const struct device_rule *device_rule(const char *desc)
{
	if (!desc)
		return NULL;
	char low[256];
	size_t n = strlen(desc);
	if (n >= sizeof low)
		n = sizeof low - 1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)((desc[i] >= 'A' && desc[i] <= 'Z') ? desc[i] + 32 : desc[i]);
	low[n] = '\0';
	for (size_t i = 0; i < sizeof device_rules / sizeof device_rules[0]; i++)
		if (strstr(low, device_rules[i].needle))
			return &device_rules[i];
	return NULL;
}

const struct ev_nccl_preset *ev_nccl_preset_for_device(const char *desc)
{
	const struct device_rule *r = device_rule(desc);
	return r ? ev_nccl_preset_find(r->preset) : NULL;
}

const char *ev_nccl_preset_device_source(const char *desc)
{
	const struct device_rule *r = device_rule(desc);
	return r && r->source ? r->source : "device";
}

int ev_nccl_parse_version(const char *v, enum ev_nccl_regime *reg)
{
	unsigned a = 0, b = 0;
	if (!v || sscanf(v, "%u.%u", &a, &b) < 2)
		return -1;
	*reg = a < 2 || (a == 2 && b <= 19) ? EV_NCCL_REG_A : a == 2 && b <= 21 ? EV_NCCL_REG_B : EV_NCCL_REG_C;
	return 0;
}

/* ------------------------------------------------------------------ */
/* NCCL_ALGO / NCCL_PROTO style lists.                                 */

void ev_nccl_masks_default(struct ev_nccl_masks *m)
{
	memset(m, 0, sizeof *m);
	for (int i = 0; i < EV_NCCL_NCOLL; i++) {
		m->algo[i] = (1u << EV_ALGO_RING) | (1u << EV_ALGO_TREE);
		m->proto[i] = (1u << EV_PROTO_LL) | (1u << EV_PROTO_LL128) | (1u << EV_PROTO_SIMPLE);
	}
}

_Static_assert(EV_ALGO_COUNT <= 32 && EV_PROTO_COUNT <= 32, "struct ev_nccl_masks: a bit per value");

static int algo_word(const char *w, unsigned *v)
{
	*v = ev_nccl_algo_setting(w);
	return *v ? 0 : -1;
}

static int proto_word(const char *w, unsigned *v)
{
	if (ev_proto_parse(w, v) || *v == 0 || *v >= EV_PROTO_COUNT)
		return -1;
	return 0;
}

/* "ring,tree;allreduce:tree" / "^LL128;allreduce:LL128" into per-collective masks. */
static int parse_list(const char *arg, uint32_t *mask, int (*word)(const char *, unsigned *))
{
	char *copy = strdup(arg), *save = NULL;
	if (!copy)
		return -1;
	int rc = 0;
	for (char *sec = strtok_r(copy, ";", &save); sec && !rc; sec = strtok_r(NULL, ";", &save)) {
		char *colon = strchr(sec, ':');
		int only = -1;
		if (colon) {
			*colon = '\0';
			unsigned cv;
			if (ev_coll_parse(sec, &cv) || cv >= EV_NCCL_NCOLL) {
				rc = -1;
				break;
			}
			only = (int)cv;
			sec = colon + 1;
		}
		int neg = *sec == '^';
		if (neg)
			sec++;
		uint32_t m = 0;
		char *s2 = NULL;
		for (char *w = strtok_r(sec, ",", &s2); w; w = strtok_r(NULL, ",", &s2)) {
			unsigned v;
			if (word(w, &v)) {
				rc = -1;
				break;
			}
			m |= 1u << v;
		}
		if (!m && !rc)
			rc = -1;
		for (int cidx = 0; cidx < EV_NCCL_NCOLL && !rc; cidx++)
			if (only < 0 || cidx == only)
				mask[cidx] = neg ? mask[cidx] & ~m : m;
	}
	free(copy);
	return rc;
}

int ev_nccl_parse_algos(const char *arg, struct ev_nccl_masks *m)
{
	if (parse_list(arg, m->algo, algo_word))
		return -1;
	m->algo_given = 1;
	return 0;
}

int ev_nccl_parse_protos(const char *arg, struct ev_nccl_masks *m)
{
	if (parse_list(arg, m->proto, proto_word))
		return -1;
	m->proto_given = 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Cost model.                                                         */

uint64_t ev_nccl_wire_bytes(unsigned proto, uint64_t b)
{
	if (proto == EV_PROTO_LL)
		return sat_mul(div_up(b, 8), 16);
	if (proto == EV_PROTO_LL128)
		return sat_mul(div_up(b, 1920), 2048);
	return b;
}

static unsigned traffic_per_byte(unsigned coll, uint32_t n)
{
	if (coll == EV_OP_ALLREDUCE)
		return 2;
	if (coll == EV_OP_ALLGATHER || coll == EV_OP_REDUCESCATTER)
		return n;
	return 1;
}

static const double base_lat[2][4] = { /* [ring, tree][proto] */
	{ 0, 6.6, 14.0, 8.4 }, { 0, 6.8, 14.0, 8.4 } };
static const double hw_lat[3][2][4] = { /* [nvlink, pci, net][ring, tree][proto] */
	{ { 0, 0.6, 1.9, 3.4 }, { 0, 0.6, 1.25, 4.0 } },
	{ { 0, 1.0, 2.5, 5.7 }, { 0, 1.0, 1.9, 4.0 } },
	{ { 0, 2.7, 4.0, 14.0 }, { 0, 5.0, 8.5, 14.0 } } };
static const double ll_max_bw[4][3] = { { 39, 39, 20.4 }, { 87.7, 22.5, 19 }, { 141, 45, 35 }, { 282, 90, 70 } };
static const double per_ch_ring_ll128[4][3] = { { 20, 20, 20 }, { 20, 20, 20 }, { 36.7, 36.7, 36.7 }, { 40, 40, 40 } };
static const double per_ch_tree_ll128[4][3] = { { 20, 20, 20 }, { 20, 20, 20 }, { 36.7, 36.7, 29 }, { 55.6, 31.67, 20 } };
static const double per_ch_tree[4][3] = { { 26.5, 18.5, 10 }, { 24, 23.6, 17.8 }, { 38.7, 41.4, 36 }, { 70, 42.8, 24 } };

/* RCCL's form of the model (its AMD build): the bus bandwidth is scaled by
 * the architecture's ratio instead of NCCL's caps, latencies come from its
 * own tables, and bandwidth is corrected by message size (trees always,
 * rings across nodes) instead of the ring plateau factor. */
static double rccl_time(const struct ev_nccl_preset *pr, const struct ev_rccl_tables *t, unsigned coll, int a,
                        unsigned proto, uint64_t nbytes, uint32_t nranks, uint32_t nnodes)
{
	unsigned p = proto - 1;
	if (a && proto == EV_PROTO_SIMPLE && nnodes <= 1 && t->no_tree_simple_1node)
		return 1e300;
	unsigned nch = pr->search_ch;
	double bus = nch * (nnodes <= 2 ? pr->bw_intra : pr->bw_inter) * t->bw_ratio[nnodes > 2][a][p];
	int rooted = coll == EV_OP_BROADCAST || coll == EV_OP_REDUCE;
	if (!a && proto == EV_PROTO_LL && rooted && nnodes <= 1 && t->ring_ll_rooted_1node > 0)
		bus *= t->ring_ll_rooted_1node;
	double nsteps = coll == EV_OP_ALLREDUCE ? 2.0 * (nranks - 1) :
	                coll == EV_OP_ALLGATHER || coll == EV_OP_REDUCESCATTER ? (double)(nranks - 1) : nranks;
	double bw = a ? bus * 0.5 : bus * nranks / (nsteps > 0 ? nsteps : 1);
	int ls = ilog2(nbytes >> 6);
	if (ls >= EV_RCCL_NCORR)
		ls = EV_RCCL_NCORR - 1;
	if (a)
		bw *= t->tree_corr[p][ls];
	else if (nnodes > 1)
		bw *= t->ring_corr[p][ls];
	if (!(bw > 0))
		return 1e300;
	uint32_t ppn = nnodes ? (nranks + nnodes - 1) / nnodes : nranks;
	double intra_lat = t->hw_lat[pr->nvlink ? 0 : 1][a][p];
	double inter_lat = ppn == 1 ? t->hw_lat[2][1][p] : t->hw_lat[2][a][p];
	double lat = t->base_lat[a][p];
	if (!a && !rooted) {
		double ninter = nnodes <= 1 ? 0 : coll == EV_OP_ALLREDUCE ? 2.0 * (nnodes - 1) : nnodes - 1.0;
		double ovh = nnodes > 1 ? (proto == EV_PROTO_SIMPLE ? 3.0 : 1.0) : 0;
		lat += (nsteps - ninter) * fmax(intra_lat, ovh) + ninter * inter_lat;
	} else if (!a) {
		lat += nnodes > 1 ? t->hw_lat[2][0][p] : intra_lat;
	} else {
		lat += 2 * ((ppn - 1) * intra_lat + ilog2(nnodes) * inter_lat);
	}
	return lat + (double)nbytes / (1000.0 * bw);
}

double ev_nccl_model_time(const struct ev_nccl_preset *pr, unsigned coll, unsigned algo, unsigned proto,
                          uint64_t nbytes, uint32_t nranks, uint32_t nnodes)
{
	int a = algo == EV_ALGO_TREE;
	if (pr->rccl && proto >= 1 && proto <= 3)
		return rccl_time(pr, pr->rccl, coll, a, proto, nbytes, nranks, nnodes);
	int ni = nnodes <= 1 ? 0 : nnodes == 2 ? 1 : 2;
	unsigned nch = pr->search_ch;
	if (proto < 1 || proto > 3)
		return 1e300;
	double bw = nnodes <= 2 ? pr->bw_intra : pr->bw_inter;
	double bus = nch * bw;
	if (!a) {
		if (proto == EV_PROTO_LL)
			bus = fmin(ll_max_bw[pr->arch][ni], bus * 0.5);
		else if (proto == EV_PROTO_LL128)
			bus = fmin(bus * 0.92, nch * per_ch_ring_ll128[pr->arch][ni]);
	} else {
		bus = fmin(bus * 0.92, nch * per_ch_tree[pr->arch][ni]);
		if (proto == EV_PROTO_LL)
			bus = fmin(bus / 3.8, ll_max_bw[pr->arch][ni]);
		else if (proto == EV_PROTO_LL128)
			bus = fmin(bus * (nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * per_ch_tree_ll128[pr->arch][ni]);
	}
	double nsteps = coll == EV_OP_ALLREDUCE ? 2.0 * (nranks - 1) :
	                coll == EV_OP_ALLGATHER || coll == EV_OP_REDUCESCATTER ? (double)(nranks - 1) : nranks;
	double algbw = a ? bus * 0.5 : bus * nranks / (nsteps > 0 ? nsteps : 1);
	uint32_t ppn = nnodes ? (nranks + nnodes - 1) / nnodes : nranks;
	int intra_hw = pr->nvlink ? 0 : 1;
	double intra_lat = hw_lat[intra_hw][a][proto];
	double inter_lat = (ppn == 1 ? hw_lat[2][1][proto] : hw_lat[2][a][proto]);
	double lat = base_lat[a][proto];
	if (!a && (coll == EV_OP_ALLREDUCE || coll == EV_OP_ALLGATHER || coll == EV_OP_REDUCESCATTER)) {
		double ninter = nnodes <= 1 ? 0 : coll == EV_OP_ALLREDUCE ? 2.0 * (nnodes - 1) : nnodes - 1.0;
		double ovh = nnodes > 1 ? (proto == EV_PROTO_SIMPLE ? 3.0 : 1.0) : 0;
		lat += (nsteps - ninter) * fmax(intra_lat, ovh) + ninter * inter_lat;
		if (coll == EV_OP_ALLREDUCE && proto == EV_PROTO_SIMPLE && nnodes > 1 &&
		    nbytes / ((uint64_t)nch * 2 * nranks) >= 64)
			lat *= pr->arch >= EV_NCCL_AMPERE ? 1.4 : 1.9;
	} else if (!a) {
		lat += nnodes > 1 ? hw_lat[2][0][proto] : intra_lat;
	} else {
		lat += 2 * ((ppn - 1) * intra_lat + ilog2(nnodes) * inter_lat);
	}
	return lat + (double)nbytes / (1000.0 * algbw);
}

/* ------------------------------------------------------------------ */
/* Chooser.                                                            */

const char *ev_nccl_choose(struct ev_nccl_plan *pl, const struct ev_nccl_preset *pr, const struct ev_nccl_masks *m,
                           enum ev_nccl_regime reg, unsigned nchannels_opt, unsigned nthreads_opt)
{
	unsigned coll = pl->coll < EV_NCCL_NCOLL ? pl->coll : 0;
	uint32_t n = pl->nranks;
	uint32_t amask = m->algo[coll], pmask = m->proto[coll];
	if (!pr->ll128 && !m->proto_given)
		pmask &= ~(1u << EV_PROTO_LL128);
	unsigned algo = pl->algo, proto = pl->proto;
	/* Values beyond the known ones are the caller's to refuse; here they
	 * count as unknown (and never shift past the mask's width). */
	if (algo >= EV_ALGO_COUNT || (algo && !(amask & (1u << algo)) && m->algo_given))
		algo = 0;
	if (proto >= EV_PROTO_COUNT || (proto && !(pmask & (1u << proto)) && m->proto_given))
		proto = 0;
	pl->guessed_algo = !algo;
	pl->guessed_proto = !proto;
	if (!algo || !proto) {
		double best = 1e300;
		unsigned ba = 0, bp = 0;
		for (unsigned a = EV_ALGO_RING; a <= EV_ALGO_TREE; a++) {
			if (algo && a != algo)
				continue;
			if (!algo && !(amask & (1u << a)))
				continue;
			if (a == EV_ALGO_TREE && pl->coll != EV_OP_ALLREDUCE)
				continue;
			for (unsigned p = EV_PROTO_LL; p <= EV_PROTO_SIMPLE; p++) {
				if (proto ? p != proto : !(pmask & (1u << p)))
					continue;
				double t = ev_nccl_model_time(pr, pl->coll, a, p, pl->nbytes, n, pl->nnodes);
				if (t < best) {
					best = t;
					ba = a;
					bp = p;
				}
			}
		}
		if (!ba) {
			if (!algo && pl->coll != EV_OP_ALLREDUCE && (amask & (1u << EV_ALGO_TREE)) &&
			    !(amask & (1u << EV_ALGO_RING)))
				ba = EV_ALGO_RING; /* only ring exists for this collective */
			else if (algo)
				ba = algo;
			if (!ba)
				return "no allowed algorithm/protocol for this collective (see --algo, --proto)";
			bp = proto ? proto : EV_PROTO_SIMPLE;
		}
		algo = ba;
		proto = bp;
	}
	pl->algo = algo;
	pl->proto = proto;
	/* Channels and threads (topoGetAlgoInfo). */
	unsigned nch = pl->nch, nt = pl->nthreads;
	if (nchannels_opt && !nch)
		nch = nchannels_opt;
	if (nthreads_opt && !nt)
		nt = nthreads_opt;
	if (!nch || !nt) {
		unsigned cnc = pr->search_ch * 2 > EV_NCCL_MAXCH ? EV_NCCL_MAXCH : pr->search_ch * 2;
		unsigned mt = proto == EV_PROTO_LL128 ? 640 : 512;
		if (proto == EV_PROTO_SIMPLE && algo == EV_ALGO_RING && pr->bw_intra * pr->search_ch <= 12)
			mt = 256;
		uint64_t thr = proto == EV_PROTO_SIMPLE ? 64 : 8;
		if (algo == EV_ALGO_RING && proto == EV_PROTO_LL)
			thr *= n;
		unsigned cnt_ch = cnc, cnt_t = mt;
		while (pl->nbytes < (uint64_t)cnt_ch * cnt_t * thr && cnt_ch >= 2)
			cnt_ch--;
		if (reg == EV_NCCL_REG_C)
			while (pl->nbytes < (uint64_t)cnt_ch * cnt_t * thr && cnt_t % 128 == 0)
				cnt_t /= 2;
		if (proto == EV_PROTO_SIMPLE)
			cnt_t += algo == EV_ALGO_RING ? 32 : 128;
		if (cnt_t < 96 && proto == EV_PROTO_SIMPLE)
			cnt_t = 96;
		if (algo == EV_ALGO_TREE && reg == EV_NCCL_REG_C)
			cnt_t = 640;
		if (!nch)
			nch = cnt_ch;
		if (!nt)
			nt = cnt_t;
	}
	if (nch > EV_NCCL_MAXCH)
		nch = EV_NCCL_MAXCH;
	pl->nch = nch ? nch : 1;
	pl->nthreads = nt;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Chunking.                                                           */

void ev_nccl_chunking(struct ev_nccl_plan *pl, enum ev_nccl_regime reg)
{
	uint64_t step = pl->step_size ? pl->step_size :
	                pl->proto == EV_PROTO_LL ? 64 * KiB : pl->proto == EV_PROTO_LL128 ? 614400 : 512 * KiB;
	int ring_simple = pl->algo == EV_ALGO_RING && pl->proto == EV_PROTO_SIMPLE &&
	                  (pl->coll == EV_OP_ALLREDUCE || pl->coll == EV_OP_ALLGATHER || pl->coll == EV_OP_REDUCESCATTER);
	unsigned cs = ring_simple ? 4 : 1, ss = ring_simple ? 2 : 1;
	if (pl->chunk_steps && pl->slice_steps && ring_simple) {
		cs = pl->chunk_steps;
		ss = pl->slice_steps;
	}
	pl->step_size = step;
	pl->chunk_steps = cs;
	pl->slice_steps = ss;
	uint64_t chunk = step * cs;
	if (pl->proto == EV_PROTO_LL)
		chunk /= 2;
	else if (pl->proto == EV_PROTO_LL128)
		chunk = chunk / 16 * 15;
	uint32_t n = pl->nranks, nn = pl->nnodes ? pl->nnodes : 1;
	double ppn = (double)n / nn;
	if (pl->algo == EV_ALGO_TREE && pl->proto == EV_PROTO_LL128 && reg == EV_NCCL_REG_C) {
		double lim = (1 + ilog2(nn) + 0.1 * ppn);
		while ((double)pl->nbytes / ((double)pl->nch * chunk) < lim * 64 / ppn && chunk > 128 * KiB)
			chunk /= 2;
		while ((double)pl->nbytes / ((double)pl->nch * chunk) < lim * 16 / ppn && chunk > 32 * KiB)
			chunk /= 2;
	}
	if (pl->algo == EV_ALGO_TREE && pl->proto == EV_PROTO_SIMPLE && reg == EV_NCCL_REG_A) {
		double depth = ppn - 1 + ilog2(nn);
		if (depth < 1)
			depth = 1;
		while ((double)pl->nbytes / ((double)pl->nch * chunk) < depth * 8 && chunk > 128 * KiB)
			chunk /= 2;
		while ((double)pl->nbytes / ((double)pl->nch * chunk) < depth * 4 && chunk > 64 * KiB)
			chunk /= 2;
		while ((double)pl->nbytes / ((double)pl->nch * chunk) < depth && chunk > 32 * KiB)
			chunk /= 2;
	}
	if (reg == EV_NCCL_REG_C) {
		uint64_t grain = pl->proto == EV_PROTO_LL ? 16 : pl->proto == EV_PROTO_LL128 ? 1920 : 512;
		chunk = chunk / grain * grain;
	}
	if (chunk < pl->T)
		chunk = pl->T;
	pl->chunk_bytes = chunk;
}

unsigned ev_nccl_split(const struct ev_nccl_plan *pl, enum ev_nccl_regime reg, struct ev_nccl_part pt[EV_NCCL_MAXCH])
{
	uint64_t cc0 = umax(1, pl->chunk_bytes / pl->T);
	if (pl->count == 0)
		return 0;
	if (reg == EV_NCCL_REG_B) {
		uint64_t align = pl->proto == EV_PROTO_SIMPLE ? umax(1, 4096 / pl->T) :
		                 pl->proto == EV_PROTO_LL ? umax(1, 8 / pl->T) * (pl->nthreads ? pl->nthreads : 512) :
		                 umax(1, 480 / pl->T) * ((pl->nthreads ? pl->nthreads : 640) / 32);
		uint64_t per = align_up(div_up(pl->count, pl->nch), align);
		unsigned k = 0;
		uint64_t nloop = pl->coll == EV_OP_ALLREDUCE ? pl->nranks : 1;
		for (unsigned i = 0; i < pl->nch && k < EV_NCCL_MAXCH; i++) {
			uint64_t off = (uint64_t)i * per;
			if (off >= pl->count)
				break;
			pt[k].off = off;
			pt[k].cnt = umin(per, pl->count - off);
			pt[k].cc = cc0;
			uint64_t rem = pt[k].cnt % (nloop * cc0);
			pt[k].lcc = rem ? align_up(div_up(rem, nloop), align) : 0;
			k++;
		}
		return k;
	}
	/* >= 2.22: continuous byte distribution of one task. */
	uint64_t tpb = traffic_per_byte(pl->coll, pl->nranks) * (pl->proto == EV_PROTO_LL ? 4 : 1);
	uint64_t bytes = pl->count * pl->T;
	uint64_t traffic = umax(32 * KiB, sat_mul(bytes, tpb));
	uint64_t tpc = div_up(div_up(traffic, pl->nch), 16) * 16;
	uint64_t cell = div_up(div_up(32 * KiB, tpb), 16) * 16;
	if (cell % pl->T)
		cell = align_up(cell, pl->T);
	uint64_t cells = div_up(bytes, cell);
	uint64_t cpc = umin(cells, div_up(tpc, sat_mul(cell, tpb)));
	if (cpc == 0)
		cpc = 1;
	if (div_up(cells, cpc) > pl->nch)
		cpc = div_up(cells, pl->nch);
	uint64_t epc = cell / pl->T;
	unsigned k = 0;
	for (uint64_t i = 0; i * cpc < cells && k < EV_NCCL_MAXCH; i++) {
		uint64_t off = i * cpc * epc;
		pt[k].off = off;
		pt[k].cnt = umin(cpc * epc, pl->count - off);
		pt[k].cc = cc0;
		pt[k].lcc = 0;
		k++;
	}
	return k;
}

int ev_nccl_slices(const struct ev_nccl_plan *pl, uint64_t nelem, uint64_t out[2])
{
	unsigned spc = pl->proto == EV_PROTO_SIMPLE && pl->chunk_steps > pl->slice_steps && pl->slice_steps
	                       ? pl->chunk_steps / pl->slice_steps : 1;
	if (spc <= 1 || pl->proto != EV_PROTO_SIMPLE) {
		out[0] = nelem;
		return 1;
	}
	if (spc > 2)
		spc = 2; /* NCCL's ring SIMPLE uses 2 (CHUNKSTEPS/SLICESTEPS) */
	uint64_t step_elems = pl->step_size / pl->T;
	uint64_t sl = umax(div_up(nelem, 16 * spc) * 16, step_elems * pl->slice_steps / 32);
	uint64_t off = 0;
	for (unsigned i = 0; i < spc; i++) {
		out[i] = off < nelem ? umin(sl, nelem - off) : 0;
		off += sl;
	}
	return (int)spc;
}
