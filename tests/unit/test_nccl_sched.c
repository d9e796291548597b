/* SPDX-License-Identifier: MIT */
/*
 * test_nccl_sched.c - the NCCL schedule model called directly: the closed
 * forms of docs/nccl-model.md (ring AllReduce/AllGather/ReduceScatter,
 * Broadcast/Reduce pipelines, tree AllReduce, send/recv chunking, wire
 * bytes of LL/LL128/SIMPLE), the chooser and its presets, tags that do not
 * depend on input order, and the bounds on absurd input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"
#include "ev/nccl_sched.h"
#include "unit.h"

#define NR 16

/* What a schedule holds, counted by a sink. */
struct tally {
	uint64_t sends, recvs, calcs, deps;
	uint64_t ireq;                      /* DEPs on a start (irequires) */
	uint64_t sent[NR];                  /* SEND bytes per rank */
	uint64_t ch_sends[NR][64];          /* per rank and channel */
	uint64_t ch_bytes[NR][64];
	uint64_t sizes[8], nsizes_count[8]; /* distinct SEND sizes of rank 0 */
	int nsizes;
	uint64_t tagsum;                    /* order-sensitive hash of SEND tags */
	int warnings;
};

static int tally_emit(void *ctx, const struct ev_rec *r)
{
	struct tally *t = ctx;
	if (r->type == EV_SEND) {
		t->sends++;
		t->tagsum = t->tagsum * 1000003u + r->aux + ((uint64_t)r->peer << 32);
		if (r->rank < NR) {
			t->sent[r->rank] += r->bytes;
			t->ch_sends[r->rank][r->channel & 63]++;
			t->ch_bytes[r->rank][r->channel & 63] += r->bytes;
		}
		if (r->rank == 0) {
			int i;
			for (i = 0; i < t->nsizes && t->sizes[i] != r->bytes; i++)
				;
			if (i == t->nsizes && i < 8) {
				t->sizes[i] = r->bytes;
				t->nsizes++;
			}
			if (i < 8)
				t->nsizes_count[i]++;
		}
	} else if (r->type == EV_RECV) {
		t->recvs++;
	} else if (r->type == EV_CALC) {
		t->calcs++;
	} else if (r->type == EV_DEP) {
		t->deps++;
		if (r->flags & EV_F_IREQ)
			t->ireq++;
	}
	return EV_OK;
}

static void tally_warn(void *ctx, const char *msg)
{
	struct tally *t = ctx;
	(void)msg;
	t->warnings++;
}

static int add_line(ev_meta *m, const char *line)
{
	return ev_meta_add_line(m, line, strlen(line));
}

/* A collective on ranks 0..n-1 of comm 7 (metadata lines in extra, '\n'
 * separated); returns the last status.  p may be NULL (defaults). */
static int run_coll(struct tally *t, const struct ev_nccl_params *p, const char *extra, uint32_t n, unsigned op,
                    uint64_t bytes, unsigned algo, unsigned proto, unsigned dtype, unsigned nch, int32_t root)
{
	struct ev_nccl_params def;
	ev_meta *m = ev_meta_new();
	char line[4096];
	int o = snprintf(line, sizeof line, "#comm 7 nranks=%u ranks=", n);
	for (uint32_t i = 0; i < n && o < (int)sizeof line - 16; i++)
		o += snprintf(line + o, sizeof line - (size_t)o, "%s%u", i ? "," : "", i);
	if (extra) {
		char *copy = strdup(extra), *save = NULL;
		for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			CHECK(add_line(m, l) == EV_OK);
		free(copy);
	}
	CHECK(add_line(m, line) == EV_OK);
	if (!p) {
		ev_nccl_params_default(&def);
		def.intra_send = 1;
		p = &def;
	}
	memset(t, 0, sizeof *t);
	struct ev_nccl_sink sink = { .emit = tally_emit, .warn = tally_warn, .ctx = t };
	ev_nccl_sched *s;
	CHECK(ev_nccl_sched_new(&s, p, m, NULL, &sink) == EV_OK);
	int rc = EV_OK;
	for (uint32_t r = 0; r < n && rc == EV_OK; r++) {
		struct ev_rec rec;
		int pass;
		ev_rec_init(&rec);
		rec.type = EV_COLL;
		rec.op = (uint8_t)op;
		rec.rank = r;
		rec.stream = 1;
		rec.ts = 1000;
		rec.dur = 500;
		rec.bytes = bytes;
		rec.comm = 7;
		rec.peer = root;
		rec.algo = (uint8_t)algo;
		rec.proto = (uint8_t)proto;
		rec.dtype = (uint8_t)dtype;
		rec.channel = (uint16_t)nch;
		rc = ev_nccl_sched_feed(s, &rec, r + 1, &pass);
	}
	if (rc == EV_OK)
		rc = ev_nccl_sched_flush(s);
	ev_nccl_sched_free(s);
	ev_meta_free(m);
	return rc;
}

static void test_ring_allreduce_simple(void)
{
	struct tally t;
	/* 256 MiB fp32 on 8 ranks, 32 channels: 28 x 512 KiB per channel and direction */
	CHECK(run_coll(&t, NULL, NULL, 8, EV_OP_ALLREDUCE, 268435456, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_FLOAT32, 32,
	               -1) == EV_OK);
	CHECK(t.sends == 7168 && t.recvs == 7168);
	CHECK(t.nsizes == 1 && t.sizes[0] == 524288);
	for (int c = 0; c < 32; c++)
		CHECK(t.ch_sends[3][c] == 28 && t.ch_bytes[3][c] == 14680064);
	/* 4 MiB: 16 KiB ring steps go as a 16 KiB slice and an empty one */
	CHECK(run_coll(&t, NULL, NULL, 8, EV_OP_ALLREDUCE, 4194304, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_FLOAT32, 32,
	               -1) == EV_OK);
	CHECK(t.nsizes == 2 && t.ch_sends[0][5] == 28);
	CHECK(t.sent[0] == 7340032); /* 2(n-1)/n x 4 MiB */
}

static void test_ring_ll_ll128_wire(void)
{
	struct tally t;
	CHECK(run_coll(&t, NULL, NULL, 8, EV_OP_ALLREDUCE, 524288, EV_ALGO_RING, EV_PROTO_LL, EV_DT_FLOAT16, 32, -1) ==
	      EV_OK);
	CHECK(t.ch_sends[0][0] == 14 && t.nsizes == 1 && t.sizes[0] == 4096); /* 2 KiB data, 4 KiB wire */
	CHECK(run_coll(&t, NULL, NULL, 8, EV_OP_ALLREDUCE, 16777216, EV_ALGO_RING, EV_PROTO_LL128, EV_DT_FLOAT16, 32,
	               -1) == EV_OK);
	CHECK(t.ch_sends[0][0] == 14 && t.nsizes == 1 && t.sizes[0] == 71680); /* 64 KiB data in 1920-byte lines */
	CHECK(ev_nccl_wire_bytes(EV_PROTO_LL, 100) == 208);
	CHECK(ev_nccl_wire_bytes(EV_PROTO_LL128, 1921) == 4096);
	CHECK(ev_nccl_wire_bytes(EV_PROTO_SIMPLE, 1921) == 1921);
	CHECK(ev_nccl_wire_bytes(EV_PROTO_LL, UINT64_MAX) == UINT64_MAX); /* saturates, never wraps */
}

static void test_totals(void)
{
	struct tally t;
	CHECK(run_coll(&t, NULL, NULL, 4, EV_OP_ALLREDUCE, 67108864, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_FLOAT32, 8,
	               -1) == EV_OK);
	for (int r = 0; r < 4; r++)
		CHECK(t.sent[r] == 100663296);
	CHECK(run_coll(&t, NULL, NULL, 8, EV_OP_ALLGATHER, 67108864, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_FLOAT32, 16,
	               -1) == EV_OK);
	for (int r = 0; r < 8; r++)
		CHECK(t.sent[r] == 58720256);
	CHECK(run_coll(&t, NULL, NULL, 8, EV_OP_REDUCESCATTER, 67108864, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_FLOAT32,
	               16, -1) == EV_OK);
	CHECK(t.sent[5] == 58720256 && t.sends == t.recvs);
	/* uneven: every byte travels 2(n-1) times in all */
	CHECK(run_coll(&t, NULL, NULL, 7, EV_OP_ALLREDUCE, 1234567, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_INT8, 3, -1) ==
	      EV_OK);
	uint64_t sum = 0;
	for (int r = 0; r < 7; r++)
		sum += t.sent[r];
	CHECK(sum == 2ull * 6 * 1234567);
}

static void test_broadcast_reduce(void)
{
	struct tally t;
	/* root 2: no edge into the root; 4 channels */
	CHECK(run_coll(&t, NULL, NULL, 5, EV_OP_BROADCAST, 10000000, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_FLOAT32, 4,
	               2) == EV_OK);
	CHECK(t.sends == 80 && t.recvs == 80);
	CHECK(t.sent[0] == 10000000 && t.sent[1] == 0 && t.sent[2] == 10000000 && t.sent[4] == 10000000);
	/* reduce to root 3: no edge out of the root */
	CHECK(run_coll(&t, NULL, NULL, 5, EV_OP_REDUCE, 10000000, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_FLOAT32, 4, 3) ==
	      EV_OK);
	CHECK(t.sent[3] == 0 && t.sent[2] == 10000000 && t.sent[4] == 10000000);
}

static void test_tree(void)
{
	struct tally t;
	const char *nodes = "#rank 0 host=a\n#rank 1 host=a\n#rank 2 host=a\n#rank 3 host=a\n"
	                    "#rank 4 host=b\n#rank 5 host=b\n#rank 6 host=b\n#rank 7 host=b";
	/* 2 channels x 4 MiB = 8 chunks of 512 KiB; 7 edges, up and down */
	CHECK(run_coll(&t, NULL, nodes, 8, EV_OP_ALLREDUCE, 8388608, EV_ALGO_TREE, EV_PROTO_SIMPLE, EV_DT_FLOAT32, 2,
	               -1) == EV_OK);
	CHECK(t.sends == 224 && t.recvs == 224);
	/* a leaf (rank 3) sends only up: 8 chunks per channel */
	CHECK(t.ch_sends[3][0] == 8 && t.ch_sends[3][1] == 8);
	int up, d0, d1;
	ev_nccl_btree(4, 0, &up, &d0, &d1);
	CHECK(up == -1 && d0 == -1 && d1 == 2);
	ev_nccl_btree(4, 3, &up, &d0, &d1);
	CHECK(up == 2 && d0 == -1 && d1 == -1);
}

static void test_p2p_chunking(void)
{
	const struct ev_nccl_preset *h100 = ev_nccl_preset_find("h100");
	struct ev_nccl_p2p pp;
	/* across nodes: 128 KiB chunks, parts of at least 64 KiB */
	ev_nccl_p2p_plan(&pp, h100, 1048576, 1, 0, 1, 8, 2, 0, 0);
	uint64_t sum = 0, msgs = 0;
	for (unsigned i = 0; i < pp.nparts; i++) {
		sum += pp.part[i].bytes;
		msgs += (pp.part[i].bytes + pp.part[i].chunk - 1) / pp.part[i].chunk;
		CHECK(pp.part[i].chunk == 131072 && pp.part[i].channel < 32);
	}
	CHECK(sum == 1048576 && pp.proto == EV_PROTO_SIMPLE && msgs == 8);
	/* a communicator with 4 p2p channels: channel ids stay below 4 */
	ev_nccl_p2p_plan(&pp, h100, 1048576, 1, 0, 1, 2, 1, 1, 4);
	for (unsigned i = 0; i < pp.nparts; i++)
		CHECK(pp.part[i].channel < 4);
	/* small intra-node sends go LL */
	ev_nccl_p2p_plan(&pp, h100, 4096, 1, 0, 1, 2, 1, 1, 0);
	CHECK(pp.proto == EV_PROTO_LL && pp.nparts == 1);
	/* a 0-byte send is one sync message */
	ev_nccl_p2p_plan(&pp, h100, 0, 1, 0, 1, 2, 1, 1, 0);
	CHECK(pp.nparts == 1 && pp.part[0].bytes == 0);
}

/* A grouped send/recv whose chan records give the parts: messages as recorded. */
static void test_p2p_recorded(void)
{
	ev_meta *m = ev_meta_new();
	CHECK(add_line(m, "#comm 9 nranks=2 ranks=0,1") == EV_OK);
	CHECK(add_line(m, "#rank 0 host=a") == EV_OK && add_line(m, "#rank 1 host=b") == EV_OK);
	struct ev_nccl_params p;
	ev_nccl_params_default(&p);
	struct tally t;
	memset(&t, 0, sizeof t);
	struct ev_nccl_sink sink = { .emit = tally_emit, .warn = tally_warn, .ctx = &t };
	ev_nccl_sched *s;
	CHECK(ev_nccl_sched_new(&s, &p, m, NULL, &sink) == EV_OK);
	int pass;
	for (uint32_t r = 0; r < 2; r++) {
		struct ev_rec rec;
		ev_rec_init(&rec);
		rec.type = EV_P2P;
		rec.op = r == 0 ? EV_OP_SEND : EV_OP_RECV;
		rec.rank = r;
		rec.ts = 100;
		rec.bytes = 262144;
		rec.comm = 9;
		rec.peer = (int32_t)(1 - r);
		rec.proto = EV_PROTO_SIMPLE;
		rec.channel = 4;
		CHECK(ev_nccl_sched_feed(s, &rec, 1, &pass) == EV_OK);
		for (unsigned c = 0; c < 4; c++) {
			struct ev_rec ch = rec;
			ch.type = EV_CHAN;
			ch.channel = (uint16_t)c;
			ch.bytes = 65536;
			ch.aux = 65536;
			CHECK(ev_nccl_sched_feed(s, &ch, 2 + c, &pass) == EV_OK);
		}
	}
	CHECK(ev_nccl_sched_flush(s) == EV_OK);
	/* 4 parts of 64 KiB, one message each (the model alone gives 2 x 128 KiB) */
	CHECK(t.sends == 4 && t.recvs == 4 && t.sent[0] == 262144);
	for (unsigned c = 0; c < 4; c++)
		CHECK(t.ch_sends[0][c] == 1 && t.ch_bytes[0][c] == 65536);
	CHECK(ev_nccl_sched_stats(s)->p2p_recorded == 2);
	ev_nccl_sched_free(s);
	ev_meta_free(m);
}

static void test_chooser_and_presets(void)
{
	struct ev_nccl_masks mk;
	ev_nccl_masks_default(&mk);
	const struct ev_nccl_preset *h100 = ev_nccl_preset_find("H100");
	CHECK(h100 && strcmp(h100->name, "h100") == 0);
	struct ev_nccl_plan pl;
	memset(&pl, 0, sizeof pl);
	pl.coll = EV_OP_ALLREDUCE;
	pl.nranks = 8;
	pl.nnodes = 1;
	pl.nbytes = 1ull << 30;
	pl.T = 4;
	CHECK(ev_nccl_choose(&pl, h100, &mk, EV_NCCL_REG_C, 0, 0) == NULL);
	CHECK(pl.algo == EV_ALGO_RING && pl.proto == EV_PROTO_SIMPLE && pl.guessed_algo && pl.guessed_proto);
	memset(&pl, 0, sizeof pl);
	pl.coll = EV_OP_ALLREDUCE;
	pl.nranks = 8;
	pl.nnodes = 1;
	pl.nbytes = 4096;
	pl.T = 4;
	CHECK(ev_nccl_parse_algos("ring", &mk) == 0);
	CHECK(ev_nccl_choose(&pl, h100, &mk, EV_NCCL_REG_C, 0, 0) == NULL);
	CHECK(pl.algo == EV_ALGO_RING && pl.proto == EV_PROTO_LL && pl.nch >= 1);
	/* an algorithm byte beyond the known ones never shifts past the mask */
	memset(&pl, 0, sizeof pl);
	pl.coll = EV_OP_ALLREDUCE;
	pl.nranks = 2;
	pl.nnodes = 1;
	pl.nbytes = 4096;
	pl.T = 4;
	pl.algo = 114;
	CHECK(ev_nccl_choose(&pl, h100, &mk, EV_NCCL_REG_C, 0, 0) == NULL && pl.algo == EV_ALGO_RING);
	CHECK(ev_nccl_parse_algos("bogus", &mk) == -1 && ev_nccl_parse_protos("ll,xx", &mk) == -1);
	/* presets from device names */
	CHECK(strcmp(ev_nccl_preset_for_device("AMD Instinct MI300X")->name, "mi300x") == 0);
	CHECK(strcmp(ev_nccl_preset_for_device("gfx90a:sramecc+:xnack-")->name, "mi250") == 0);
	CHECK(strcmp(ev_nccl_preset_for_device("NVIDIA A100-SXM4-80GB")->name, "a100") == 0);
	CHECK(strcmp(ev_nccl_preset_for_device("NVIDIA H100 80GB HBM3")->name, "h100") == 0);
	CHECK(ev_nccl_preset_for_device("Tesla K80") == NULL);
	CHECK(!ev_nccl_preset_find("mi250")->ll128);
	enum ev_nccl_regime reg;
	CHECK(ev_nccl_parse_version("2.18.3", &reg) == 0 && reg == EV_NCCL_REG_A);
	CHECK(ev_nccl_parse_version("2.20.5", &reg) == 0 && reg == EV_NCCL_REG_B);
	CHECK(ev_nccl_parse_version("2.27", &reg) == 0 && reg == EV_NCCL_REG_C);
	CHECK(ev_nccl_parse_version("x", &reg) == -1);
}

/* The AMD presets carry RCCL's gfx942 / gfx950 tables (ROCm/rccl
 * src/graph/tuning.cc at 9e22c79d, tuning models 5 and 6) and cost with
 * them; MI350X, MI355X and gfx950 pick mi350x. */
static void test_rccl_presets(void)
{
	const struct ev_nccl_preset *m3 = ev_nccl_preset_find("mi300x"), *m5 = ev_nccl_preset_find("MI350X");
	CHECK(m3 && m5 && m3->rccl && m5->rccl && m3->rccl != m5->rccl);
	CHECK(!m3->ll128 && !m5->ll128);
	const struct ev_rccl_tables *a = m3->rccl, *b = m5->rccl;
	/* base latency, per-hop latency (xGMI, network), bandwidth ratios */
	CHECK(a->base_lat[0][2] == 17.0 && a->base_lat[1][0] == 12.0);
	CHECK(a->hw_lat[0][0][2] == 2.1 && a->hw_lat[0][1][2] == 2.3 && a->hw_lat[2][0][2] == 320.0);
	CHECK(a->hw_lat[2][1][0] == 10.5 && a->hw_lat[1][0][2] == 5.7);
	CHECK(a->bw_ratio[0][1][2] == 0.11 && a->bw_ratio[1][1][2] == 0.59 && a->bw_ratio[0][0][0] == 0.08);
	CHECK(memcmp(a->hw_lat, b->hw_lat, sizeof a->hw_lat) == 0);
	CHECK(memcmp(a->bw_ratio, b->bw_ratio, sizeof a->bw_ratio) == 0);
	/* correction factors: every row is full (its last entry set) */
	for (int p = 0; p < 3; p++)
		CHECK(a->tree_corr[p][EV_RCCL_NCORR - 1] > 0 && a->ring_corr[p][EV_RCCL_NCORR - 1] > 0 &&
		      b->tree_corr[p][EV_RCCL_NCORR - 1] > 0 && b->ring_corr[p][EV_RCCL_NCORR - 1] > 0);
	CHECK(a->tree_corr[2][15] == 0.7 && a->tree_corr[2][16] == 1.0 && a->ring_corr[2][22] == 1.0);
	CHECK(a->ring_corr[0][11] == 1.0 && a->ring_corr[0][12] == 0.2);
	/* where gfx950 differs */
	CHECK(a->tree_corr[1][19] == 0.1 && b->tree_corr[1][19] == 2.0);
	CHECK(a->tree_corr[2][17] == 1.0 && b->tree_corr[2][17] == 0.1);
	CHECK(a->ring_corr[1][18] == 0.2 && b->ring_corr[1][18] == 0.1 && b->ring_corr[2][24] == 0.8);
	CHECK(a->no_tree_simple_1node && a->ring_ll_rooted_1node == 1.65);
	/* device names */
	CHECK(strcmp(ev_nccl_preset_for_device("AMD Instinct MI350X")->name, "mi350x") == 0);
	CHECK(strcmp(ev_nccl_preset_for_device("AMD Instinct MI355X")->name, "mi350x") == 0);
	CHECK(strcmp(ev_nccl_preset_for_device("gfx950:sramecc+:xnack-")->name, "mi350x") == 0);
	CHECK(strcmp(ev_nccl_preset_for_device("gfx942")->name, "mi300x") == 0);
	CHECK(strcmp(ev_nccl_preset_device_source("AMD Instinct MI350X"), "device") == 0);
	/* the cost: ring SIMPLE AllReduce, 8 ranks on one node, 1 MiB:
	 * 17 + 14 x 2.1 us + 1 MiB / (16 ch x 16 GB/s x 1.0 x 8/14) */
	double t = ev_nccl_model_time(m3, EV_OP_ALLREDUCE, EV_ALGO_RING, EV_PROTO_SIMPLE, 1048576, 8, 1);
	CHECK(fabs(t - (46.4 + 1048576.0 / (1000.0 * 256.0 * 8 / 14))) < 1e-9);
	/* single node: no TREE/SIMPLE; across nodes it is a candidate */
	CHECK(ev_nccl_model_time(m3, EV_OP_ALLREDUCE, EV_ALGO_TREE, EV_PROTO_SIMPLE, 1 << 20, 8, 1) >= 1e300);
	CHECK(ev_nccl_model_time(m3, EV_OP_ALLREDUCE, EV_ALGO_TREE, EV_PROTO_SIMPLE, 1 << 20, 16, 2) < 1e300);
	/* tree LL128 at 32 MiB (log2(bytes/64) = 19): gfx950's factor 2.0 against 0.1 */
	double t3 = ev_nccl_model_time(m3, EV_OP_ALLREDUCE, EV_ALGO_TREE, EV_PROTO_LL128, 32u << 20, 16, 2);
	double t5 = ev_nccl_model_time(m5, EV_OP_ALLREDUCE, EV_ALGO_TREE, EV_PROTO_LL128, 32u << 20, 16, 2);
	CHECK(t5 < t3);
	/* the chooser: 8 ranks on one node, 256 MiB -> ring SIMPLE; LL128 stays off */
	struct ev_nccl_masks mk;
	ev_nccl_masks_default(&mk);
	struct ev_nccl_plan pl;
	memset(&pl, 0, sizeof pl);
	pl.coll = EV_OP_ALLREDUCE;
	pl.nranks = 8;
	pl.nnodes = 1;
	pl.nbytes = 256u << 20;
	pl.T = 4;
	CHECK(ev_nccl_choose(&pl, m5, &mk, EV_NCCL_REG_C, 0, 0) == NULL);
	CHECK(pl.algo == EV_ALGO_RING && pl.proto == EV_PROTO_SIMPLE);
}

/* The preset comes from the device a #rank line names; every choice is stated. */
static void test_preset_from_device(void)
{
	struct tally t;
	struct ev_nccl_params p;
	ev_nccl_params_default(&p);
	ev_meta *m = ev_meta_new();
	CHECK(add_line(m, "#rank 0 gpu=AMD_Instinct_MI300X") == EV_OK);
	CHECK(add_line(m, "#comm 3 nranks=2 ranks=0,1") == EV_OK);
	memset(&t, 0, sizeof t);
	struct ev_nccl_sink sink = { .emit = tally_emit, .warn = tally_warn, .ctx = &t };
	ev_nccl_sched *s;
	CHECK(ev_nccl_sched_new(&s, &p, m, NULL, &sink) == EV_OK);
	int pass;
	for (uint32_t r = 0; r < 2; r++) {
		struct ev_rec rec;
		ev_rec_init(&rec);
		rec.type = EV_COLL;
		rec.op = EV_OP_ALLREDUCE;
		rec.rank = r;
		rec.bytes = 1 << 20;
		rec.comm = 3;
		rec.dtype = EV_DT_FLOAT32;
		CHECK(ev_nccl_sched_feed(s, &rec, r + 1, &pass) == EV_OK);
	}
	CHECK(ev_nccl_sched_flush(s) == EV_OK);
	const struct ev_nccl_stats *st = ev_nccl_sched_stats(s);
	CHECK(strcmp(st->preset, "mi300x") == 0 && strcmp(st->preset_source, "device") == 0);
	CHECK(st->guessed == 2 && t.warnings >= 1);
	uint64_t n = 0;
	const char *d = ev_nccl_sched_decision(s, 0, &n);
	CHECK(d && n == 2 && strstr(d, "preset mi300x"));
	CHECK(ev_nccl_sched_decision(s, 1, &n) == NULL);
	ev_nccl_sched_free(s);
	ev_meta_free(m);
}

/* Tags number communicators by id: the order of #comm lines does not matter. */
static uint64_t tags_with(const char *first, const char *second)
{
	ev_meta *m = ev_meta_new();
	CHECK(add_line(m, first) == EV_OK && add_line(m, second) == EV_OK);
	struct ev_nccl_params p;
	ev_nccl_params_default(&p);
	struct tally t;
	memset(&t, 0, sizeof t);
	struct ev_nccl_sink sink = { .emit = tally_emit, .ctx = &t };
	ev_nccl_sched *s;
	CHECK(ev_nccl_sched_new(&s, &p, m, NULL, &sink) == EV_OK);
	int pass;
	for (int k = 0; k < 2; k++)
		for (uint32_t r = 0; r < 2; r++) {
			struct ev_rec rec;
			ev_rec_init(&rec);
			rec.type = EV_COLL;
			rec.op = EV_OP_ALLREDUCE;
			rec.rank = r;
			rec.ts = 10 + k;
			rec.bytes = 65536;
			rec.comm = k ? 500 : 40;
			rec.algo = EV_ALGO_RING;
			rec.proto = EV_PROTO_SIMPLE;
			rec.channel = 1;
			rec.dtype = EV_DT_FLOAT32;
			CHECK(ev_nccl_sched_feed(s, &rec, 1, &pass) == EV_OK);
		}
	CHECK(ev_nccl_sched_flush(s) == EV_OK);
	ev_nccl_sched_free(s);
	ev_meta_free(m);
	return t.tagsum;
}

static void test_tags_by_content(void)
{
	uint64_t a = tags_with("#comm 40 nranks=2 ranks=0,1", "#comm 500 nranks=2 ranks=0,1");
	uint64_t b = tags_with("#comm 500 nranks=2 ranks=0,1", "#comm 40 nranks=2 ranks=0,1");
	CHECK(a == b && a != 0);
}

/* Absurd values: an error naming the bound, in bounded time and memory. */
static void test_bounds(void)
{
	struct tally t;
	struct ev_nccl_params p;
	ev_nccl_params_default(&p);
	CHECK(run_coll(&t, &p, NULL, 4, EV_OP_ALLREDUCE, INT64_MAX, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_FLOAT32, 32,
	               -1) == EV_ERR_LIMIT);
	CHECK(t.sends == 0);
	CHECK(run_coll(&t, &p, NULL, 4, EV_OP_ALLREDUCE, 18000000000000000000ull, 0, 0, EV_DT_FLOAT32, 0, -1) ==
	      EV_ERR_LIMIT);
	CHECK(run_coll(&t, &p, NULL, 4, EV_OP_ALLGATHER, UINT64_MAX, EV_ALGO_RING, EV_PROTO_LL, EV_DT_FLOAT32, 2, -1) ==
	      EV_ERR_LIMIT);
	CHECK(run_coll(&t, &p, NULL, 4, EV_OP_ALLREDUCE, 4096, 114, 0, EV_DT_FLOAT32, 0, -1) == EV_ERR_FORMAT);
	CHECK(run_coll(&t, &p, NULL, 4, EV_OP_ALLREDUCE, 4096, 0, 9, EV_DT_FLOAT32, 0, -1) == EV_ERR_FORMAT);
	/* a small bound is kept exactly */
	p.max_messages = 10;
	CHECK(run_coll(&t, &p, NULL, 8, EV_OP_ALLREDUCE, 4194304, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_FLOAT32, 1, -1) ==
	      EV_ERR_LIMIT);
	CHECK(t.sends == 0);
	/* a rank far beyond any real job */
	ev_meta *m = ev_meta_new();
	CHECK(add_line(m, "#comm 1 nranks=2 ranks=0,100000000") == EV_OK);
	memset(&t, 0, sizeof t);
	struct ev_nccl_sink sink = { .emit = tally_emit, .ctx = &t };
	ev_nccl_sched *s;
	ev_nccl_params_default(&p);
	CHECK(ev_nccl_sched_new(&s, &p, m, NULL, &sink) == EV_OK);
	struct ev_rec rec;
	int pass;
	ev_rec_init(&rec);
	rec.type = EV_COLL;
	rec.op = EV_OP_ALLREDUCE;
	rec.rank = 0;
	rec.bytes = 64;
	rec.comm = 1;
	CHECK(ev_nccl_sched_feed(s, &rec, 1, &pass) == EV_OK);
	CHECK(ev_nccl_sched_flush(s) == EV_ERR_LIMIT);
	CHECK(strstr(ev_nccl_sched_errmsg(s), "100000000") != NULL);
	rec.rank = 100000000;
	rec.comm = 2;
	rec.ts = 5;
	CHECK(ev_nccl_sched_feed(s, &rec, 2, &pass) == EV_OK);
	CHECK(ev_nccl_sched_flush(s) == EV_ERR_LIMIT);
	/* a seq jump of 2^32 - 1 costs nothing and says so */
	ev_nccl_sched_free(s);
	ev_meta_free(m);
}

static void test_huge_comm(void)
{
	/* a 1e6-rank communicator: refused before anything is allocated per member */
	size_t cap = 16 + 8 * 1000000;
	char *line = malloc(cap);
	int o = snprintf(line, cap, "#comm 5 nranks=1000000 ranks=");
	for (int i = 0; i < 1000000; i++)
		o += snprintf(line + o, cap - (size_t)o, "%s%d", i ? "," : "", i);
	ev_meta *m = ev_meta_new();
	CHECK(add_line(m, line) == EV_OK);
	free(line);
	struct ev_nccl_params p;
	ev_nccl_params_default(&p);
	struct tally t;
	memset(&t, 0, sizeof t);
	struct ev_nccl_sink sink = { .emit = tally_emit, .ctx = &t };
	ev_nccl_sched *s;
	CHECK(ev_nccl_sched_new(&s, &p, m, NULL, &sink) == EV_OK);
	struct ev_rec rec;
	int pass;
	ev_rec_init(&rec);
	rec.type = EV_COLL;
	rec.op = EV_OP_ALLREDUCE;
	rec.bytes = 1 << 20;
	rec.comm = 5;
	CHECK(ev_nccl_sched_feed(s, &rec, 1, &pass) == EV_OK);
	CHECK(ev_nccl_sched_flush(s) == EV_ERR_LIMIT);
	CHECK(strstr(ev_nccl_sched_errmsg(s), "1000000 ranks") != NULL);
	ev_nccl_sched_free(s);
	ev_meta_free(m);
}

static void test_seq_jump(void)
{
	ev_meta *m = ev_meta_new();
	CHECK(add_line(m, "#comm 1 nranks=2 ranks=0,1") == EV_OK);
	struct ev_nccl_params p;
	ev_nccl_params_default(&p);
	struct tally t;
	memset(&t, 0, sizeof t);
	struct ev_nccl_sink sink = { .emit = tally_emit, .warn = tally_warn, .ctx = &t };
	ev_nccl_sched *s;
	CHECK(ev_nccl_sched_new(&s, &p, m, NULL, &sink) == EV_OK);
	struct ev_rec rec;
	int pass;
	ev_rec_init(&rec);
	rec.type = EV_COLL;
	rec.op = EV_OP_ALLREDUCE;
	rec.bytes = 64;
	rec.comm = 1;
	rec.seq = 0;
	rec.algo = EV_ALGO_RING;
	rec.proto = EV_PROTO_SIMPLE;
	rec.channel = 1;
	CHECK(ev_nccl_sched_feed(s, &rec, 1, &pass) == EV_OK);
	rec.seq = UINT32_MAX;
	rec.ts = 1;
	uint64_t t0 = ev_now_ns();
	CHECK(ev_nccl_sched_feed(s, &rec, 2, &pass) == EV_OK);
	CHECK(ev_nccl_sched_flush(s) == EV_OK);
	CHECK(ev_now_ns() - t0 < 1000000000ull);
	CHECK(t.warnings == 1);
	/* the size check still works after the jump */
	rec.rank = 1;
	rec.bytes = 128;
	rec.ts = 2;
	CHECK(ev_nccl_sched_feed(s, &rec, 3, &pass) == EV_OK);
	CHECK(ev_nccl_sched_flush(s) == EV_ERR_FORMAT);
	ev_nccl_sched_free(s);
	ev_meta_free(m);
}

/* A channel's sends: each irequires the previous one (posted) and requires
 * the one whose FIFO slot it reuses; --sends=serial waits for delivery. */
static void test_send_fifo(void)
{
	struct tally t, u;
	struct ev_nccl_params p;
	ev_nccl_params_default(&p);
	p.intra_send = 1;
	/* 8 MiB fp32 ring AllReduce, 4 ranks, 1 channel, SIMPLE, 2 slices per ring
	 * step: every send but the first of a rank irequires its predecessor,
	 * and every send from the 5th on (8 steps / 2 per slice) requires one
	 * more, the send whose slot it reuses */
	CHECK(run_coll(&t, &p, NULL, 4, EV_OP_ALLREDUCE, 8388608, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_FLOAT32, 1, -1) ==
	      EV_OK);
	uint64_t per = t.sends / 4;
	CHECK(per > 4);
	CHECK(t.ireq == 4 * (per - 1));
	p.send_delivered = 1;
	CHECK(run_coll(&u, &p, NULL, 4, EV_OP_ALLREDUCE, 8388608, EV_ALGO_RING, EV_PROTO_SIMPLE, EV_DT_FLOAT32, 1, -1) ==
	      EV_OK);
	CHECK(u.ireq == 0 && u.sends == t.sends && u.recvs == t.recvs);
	/* the FIFO adds one requires per send beyond the window */
	CHECK(t.deps == u.deps + 4 * (per - 4));
	/* LL: one step per message, 8 in flight */
	p.send_delivered = 0;
	CHECK(run_coll(&t, &p, NULL, 4, EV_OP_ALLREDUCE, 1048576, EV_ALGO_RING, EV_PROTO_LL, EV_DT_FLOAT32, 1, -1) ==
	      EV_OK);
	p.send_delivered = 1;
	CHECK(run_coll(&u, &p, NULL, 4, EV_OP_ALLREDUCE, 1048576, EV_ALGO_RING, EV_PROTO_LL, EV_DT_FLOAT32, 1, -1) ==
	      EV_OK);
	per = t.sends / 4;
	CHECK(per > 8 && t.ireq == 4 * (per - 1) && t.deps == u.deps + 4 * (per - 8));
}

static void test_latency_table(void)
{
	ev_nccl_lat *L = ev_nccl_lat_new();
	char err[256];
	CHECK(ev_nccl_lat_add(L, EV_NCCL_P_RRS, EV_PROTO_SIMPLE, 4, 110) == EV_OK);
	CHECK(ev_nccl_lat_add(L, EV_NCCL_P_RRS, EV_PROTO_SIMPLE, 1024, 210) == EV_OK);
	CHECK(ev_nccl_lat_add(L, EV_NCCL_P_RRS, EV_PROTO_SIMPLE, 65536, 1050) == EV_OK);
	CHECK(ev_nccl_lat_add(L, EV_NCCL_P_RCS, EV_PROTO_LL, 1024, 150) == EV_OK);
	CHECK(ev_nccl_lat_seal(L, err, sizeof err) == EV_OK);
	CHECK(ev_nccl_lat_cost(L, EV_NCCL_P_RRS, EV_PROTO_SIMPLE, 1) == 110);    /* below: the first mean */
	CHECK(fabs(ev_nccl_lat_cost(L, EV_NCCL_P_RRS, EV_PROTO_SIMPLE, 514) - 160) < 1e-9); /* halfway */
	CHECK(ev_nccl_lat_cost(L, EV_NCCL_P_RCS, EV_PROTO_LL128, 1024) == 150);  /* LL128 falls back to LL */
	/* a composite not measured: reduce + copy */
	CHECK(ev_nccl_lat_cost(L, EV_NCCL_P_RRCS, EV_PROTO_SIMPLE, 1024) == 210 + 150);
	CHECK(ev_nccl_lat_cost(NULL, EV_NCCL_P_RRS, EV_PROTO_SIMPLE, 1024) == 0);
	CHECK(ev_nccl_lat_add(L, EV_NCCL_P_RRS, EV_PROTO_SIMPLE, 1024, 5) == EV_OK);
	CHECK(ev_nccl_lat_seal(L, err, sizeof err) == EV_ERR_FORMAT && strstr(err, "appears twice"));
	ev_nccl_lat_free(L);
}

static void test_npkit_rows(void)
{
	ev_npkit *t = ev_npkit_new();
	char err[256];
	const char *ev = "{\"4\": [3, 1, 2], \"1024\": [10]}";
	CHECK(ev_npkit_add_event(t, EV_PROTO_SIMPLE, "NPKIT_EVENT_GPU_SEND", ev, strlen(ev), err, sizeof err) == EV_OK);
	CHECK(ev_npkit_count(t) == 2 && ev_npkit_has(t, 0, "SEND") && !ev_npkit_has(t, 0, "RECV"));
	CHECK(ev_npkit_add_event(t, EV_PROTO_SIMPLE, "NPKIT_EVENT_GPU_SEND", ev, strlen(ev), err, sizeof err) ==
	      EV_ERR_FORMAT);
	CHECK(strstr(err, "given twice") != NULL);
	const char *bad = "{\"x\": [1]}";
	CHECK(ev_npkit_add_event(t, EV_PROTO_LL, "E", bad, strlen(bad), err, sizeof err) == EV_ERR_FORMAT);
	CHECK(ev_npkit_proto_from_name("dir/npkit_data_summary_LL128.json") == EV_PROTO_LL128);
	CHECK(ev_npkit_proto_from_name("npkit_LL.json") == EV_PROTO_LL);
	CHECK(ev_npkit_proto_from_name("allreduce.json") == 0);
	ev_npkit_free(t);
}

int main(void)
{
	RUN(test_ring_allreduce_simple);
	RUN(test_ring_ll_ll128_wire);
	RUN(test_totals);
	RUN(test_broadcast_reduce);
	RUN(test_tree);
	RUN(test_p2p_chunking);
	RUN(test_p2p_recorded);
	RUN(test_chooser_and_presets);
	RUN(test_rccl_presets);
	RUN(test_preset_from_device);
	RUN(test_tags_by_content);
	RUN(test_bounds);
	RUN(test_huge_comm);
	RUN(test_seq_jump);
	RUN(test_send_fifo);
	RUN(test_latency_table);
	RUN(test_npkit_rows);
	return unit_report("test_nccl_sched");
}
