/* SPDX-License-Identifier: MIT */
/*
 * coll-expand - expand NCCL collectives (COLL/P2P records) into the wire
 * messages NCCL sends (SEND/RECV), local time (CALC) and dependencies (DEP)
 *
 * Each COLL/P2P record of a rank is expanded on its own, channel by channel,
 * loop by loop, ring step by ring step and slice by slice, following NCCL's
 * chunking for the selected version (see ../shared/notes/nccl-model.md and
 * docs/coll-expand.md).  Because every rank's expansion of one collective is
 * computed from the same parameters, the SEND of one rank and the RECV of
 * its peer agree on size and tag without looking at each other.  Memory
 * grows with ranks, streams, communicators and channels, not with events.
 */
#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ev.h"

#define MAXCH 64
#define KiB 1024ull
#define MiB (1024ull * 1024ull)

static uint64_t div_up(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : 0; }
static uint64_t align_up(uint64_t a, uint64_t b) { return b ? div_up(a, b) * b : a; }
static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }
static int ilog2(uint64_t v) { int l = 0; while (v > 1) { v >>= 1; l++; } return l; }
static uint64_t pow2_up(uint64_t v) { uint64_t p = 1; while (p < v) p <<= 1; return p; }

/* ------------------------------------------------------------------ */
/* Options and presets.                                                */

enum regime { REG_AUTO = 0, REG_A = 1, REG_B = 2, REG_C = 3 }; /* <=2.19, 2.20-2.21, >=2.22 */
enum compute { COMP_GAPS, COMP_KERNELS, COMP_NONE };
enum arch { ARCH_VOLTA, ARCH_AMPERE, ARCH_HOPPER, ARCH_BLACKWELL };

/* Inputs of NCCL's tuning model that a trace does not show. */
struct preset {
	const char *name;
	enum arch arch;
	int nvlink;            /* intra-node links are NVLink (else PCI) */
	unsigned search_ch;    /* topology-search channels; comm channels = 2x (cap 64) */
	double bw_intra, bw_inter; /* GB/s per channel */
	int ll128;             /* LL128 enabled by default */
	unsigned p2p_per_peer_intra, p2p_per_peer_inter;
};

static const struct preset presets[] = {
	{ "h100", ARCH_HOPPER, 1, 16, 20.0, 25.0, 1, 32, 2 },
	{ "a100", ARCH_AMPERE, 1, 12, 20.0, 12.0, 1, 32, 2 },
	{ "b200", ARCH_BLACKWELL, 1, 16, 40.0, 25.0, 1, 32, 2 },
	{ "pcie", ARCH_AMPERE, 0, 2, 12.0, 6.0, 0, 2, 2 },
};

struct opts {
	struct ev_cli cli;
	const char *lat_path;
	enum regime regime;
	const char *version;        /* --nccl-version text */
	uint32_t algo_mask[14];     /* per collective: allowed algorithms (bit = enum ev_algo) */
	uint32_t proto_mask[14];    /* per collective: allowed protocols */
	int algo_given, proto_given;
	unsigned nchannels, nthreads;
	int intra_send;
	double intra_bw;            /* bytes per ns */
	unsigned ranks_per_node;
	enum compute compute;
	int merge_streams, only_comm, keep_coll, lenient, trace_params;
	int have_jitter;
	uint64_t seed;
	const struct preset *preset;
	char **inputs;
	int ninputs;
};

static void usage(FILE *f)
{
	fputs(
"Usage: coll-expand [options] [FILE...]\n"
"Expand the NCCL collectives of an ev stream (COLL and P2P records, with\n"
"#comm, #ring, #tree and #rank metadata) into the messages NCCL sends: per\n"
"rank SEND, RECV and CALC records with dense op ids and DEP records, per\n"
"channel, loop, ring step and slice.  Other records pass through.  FILE\n"
"defaults to standard input; several FILEs are read as one stream, which\n"
"must be in time order (ev-merge).\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -l, --lat=FILE         latency table from npkit2lat: CALC records for the\n"
"                         reduction and copy of every received slice\n"
"      --nccl-version=V   NCCL version whose channel split to follow: <= 2.19\n"
"                         interleaved, 2.20-2.21 contiguous, >= 2.22 byte\n"
"                         distribution [#meta nccl_version, else 2.22]\n"
"  -a, --algo=LIST        allowed algorithms, NCCL_ALGO syntax (ring,tree;\n"
"                         ^tree; allreduce:tree); forces the algorithm when\n"
"                         the trace does not give one [all]\n"
"  -p, --proto=LIST       allowed protocols, NCCL_PROTO syntax (ll,ll128,simple)\n"
"      --nchannels=N      channels per collective when the trace has none\n"
"      --nthreads=N       threads per block when the trace has none\n"
"      --trace-params=no  ignore algo/proto/channels/threads in the records\n"
"      --preset=NAME      system for the tuning model: h100, a100, b200, pcie [h100]\n"
"      --ranks-per-node=N ranks r and s share a node when r/N == s/N [from\n"
"                         #rank node= or host=; unknown: every rank its own node]\n"
"      --intra=MODE       intra-node messages: calc (0-byte handshake + CALC\n"
"                         intra of bytes/bandwidth on both sides, as ATLAHS) or\n"
"                         send (real SEND/RECV flagged intra) [calc]\n"
"      --intra-bw=GBPS    bandwidth of intra-node CALC [300]\n"
"      --compute=MODE     CALC between operations of a stream: gaps (idle time\n"
"                         between NCCL kernels, ATLAHS), kernels (time of the\n"
"                         compute kernels of the rank in between), none [gaps]\n"
"      --merge-streams    one chain per rank instead of one per CUDA stream\n"
"      --only-comm        drop records other than the expansion\n"
"      --keep-coll        also keep the COLL/P2P/CHAN records\n"
"      --lenient          skip (and count) collectives with an unknown\n"
"                         communicator, missing ring ranks or inconsistent sizes\n"
"      --jitter=SEED      1% Gaussian noise on CALC costs, seeded\n"
"  -f, --force            write binary output to a terminal\n"
"  -q, --quiet            no warnings\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Tags: a SEND and its RECV carry the same aux (tag) = comm index (10 bits) |\n"
"channel (6 bits) | message counter of that (sender, receiver, comm, channel)\n"
"(16 bits), so tags are < 2^32 and FIFO order per key is preserved.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  data or I/O error (bad or truncated input, unknown communicator,\n"
"     inconsistent collective, write error)\n"
"  2  usage error\n"
"\n"
"Example:\n"
"  npkit2lat -o lat.tsv npkit_data_summary_*.json\n"
"  kineto2ev rank*/trace.json.gz | coll-expand --lat lat.tsv --only-comm | ev2goal -o job.goal\n",
	f);
}

/* ------------------------------------------------------------------ */
/* Latency table (npkit2lat output).                                   */

enum prim { P_SEND, P_RECV, P_RRS, P_RRCS, P_RCS, P_RRC, NPRIM };
static const char *const prim_names[NPRIM] = {
	"SEND", "DIRECT_RECV", "RECV_REDUCE_SEND", "DIRECT_RECV_REDUCE_COPY_SEND", "DIRECT_RECV_COPY_SEND",
	"RECV_REDUCE_COPY",
};

struct lat_pt { uint64_t size; double mean; };
struct lat_tab { struct lat_pt *pt; size_t n; };
struct lat { struct lat_tab t[NPRIM][4]; int loaded; };

static int cmp_pt(const void *a, const void *b)
{
	const struct lat_pt *x = a, *y = b;
	return x->size < y->size ? -1 : x->size > y->size;
}

static int lat_load(const struct opts *o, struct lat *L, const char *path)
{
	ev_input *in;
	const char *line;
	size_t len;
	int rc = ev_input_open(&in, path), status = 0;
	if (rc)
		return ev_cli_file_error(&o->cli, path, rc);
	int header = 0;
	while ((rc = ev_input_line(in, &line, &len)) == EV_REC || rc == EV_ERR_TRUNCATED) {
		uint64_t ln = ev_input_lineno(in);
		char buf[512];
		if (len >= sizeof buf) {
			status = ev_cli_error(&o->cli, "%s: line %llu: line too long", path, (unsigned long long)ln);
			break;
		}
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (!header) {
			if (strncmp(buf, "primitive\tproto\tsize_bytes\tn\tmean_ns", 36) != 0) {
				status = ev_cli_error(&o->cli, "%s: line 1: not an npkit2lat table (no header row)", path);
				break;
			}
			header = 1;
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
			status = ev_cli_error(&o->cli, "%s: line %llu: bad row", path, (unsigned long long)ln);
			break;
		}
		int p = -1;
		for (int i = 0; i < NPRIM; i++)
			if (strcmp(prim_names[i], f[0]) == 0)
				p = i;
		if (p < 0)
			continue; /* a primitive coll-expand does not use */
		struct lat_tab *t = &L->t[p][proto];
		struct lat_pt *np = realloc(t->pt, (t->n + 1) * sizeof *np);
		if (!np) {
			status = ev_cli_error(&o->cli, "out of memory");
			break;
		}
		t->pt = np;
		np[t->n].size = size;
		np[t->n].mean = mean;
		t->n++;
		if (rc == EV_ERR_TRUNCATED)
			break;
	}
	if (!status && rc < 0 && rc != EV_ERR_TRUNCATED)
		status = ev_cli_file_error(&o->cli, path, rc);
	if (!status && !header)
		status = ev_cli_error(&o->cli, "%s: empty latency table", path);
	ev_input_close(in);
	if (status)
		return status;
	int any = 0;
	for (int p = 0; p < NPRIM; p++)
		for (int q = 0; q < 4; q++) {
			struct lat_tab *t = &L->t[p][q];
			if (t->n)
				qsort(t->pt, t->n, sizeof *t->pt, cmp_pt);
			for (size_t i = 1; i < t->n; i++)
				if (t->pt[i].size == t->pt[i - 1].size)
					return ev_cli_error(&o->cli, "%s: %s %s size %llu appears twice", path, prim_names[p],
					                    ev_proto_name((unsigned)q), (unsigned long long)t->pt[i].size);
			if ((p == P_RRS || p == P_RCS) && t->n)
				any = 1;
		}
	if (!any)
		return ev_cli_error(&o->cli, "%s: no RECV_REDUCE_SEND or DIRECT_RECV_COPY_SEND rows", path);
	L->loaded = 1;
	return 0;
}

static void lat_free(struct lat *L)
{
	for (int p = 0; p < NPRIM; p++)
		for (int q = 0; q < 4; q++)
			free(L->t[p][q].pt);
}

/* Linear in size between tabulated means; below the smallest size its
 * mean; above the largest, the slope of the last two points (no clamp). */
static double interp(const struct lat_tab *t, uint64_t size)
{
	const struct lat_pt *p = t->pt;
	size_t n = t->n;
	if (size <= p[0].size || n == 1)
		return size <= p[0].size ? p[0].mean : p[0].mean;
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
 * back to LL (as ATLAHS), anything else to whatever protocol has rows. */
static const struct lat_tab *lat_tab(const struct lat *L, int prim, unsigned proto)
{
	if (L->t[prim][proto].n)
		return &L->t[prim][proto];
	if (proto == EV_PROTO_LL128 && L->t[prim][EV_PROTO_LL].n)
		return &L->t[prim][EV_PROTO_LL];
	for (unsigned q = 3; q >= 1; q--)
		if (L->t[prim][q].n)
			return &L->t[prim][q];
	return NULL;
}

static double lat_cost(const struct lat *L, int prim, unsigned proto, uint64_t bytes)
{
	if (!L->loaded || bytes == 0)
		return 0;
	const struct lat_tab *t = lat_tab(L, prim, proto);
	if (t)
		return interp(t, bytes);
	/* Composite primitives not measured: reduction plus copy. */
	if (prim == P_RRCS || prim == P_RRC)
		return lat_cost(L, P_RRS, proto, bytes) + lat_cost(L, P_RCS, proto, bytes);
	return 0;
}

/* ------------------------------------------------------------------ */
/* State.                                                              */

/* One chain of operations: a CUDA stream of a rank (or the whole rank). */
struct chain {
	uint32_t key;          /* CUDA stream */
	uint32_t lane_base;    /* first schedule lane of this chain */
	int have_prev;
	int64_t prev_end;      /* end of the last op (observed) */
	int64_t group_ts;      /* ts of the current group */
	uint32_t start;        /* op the current group's heads wait for */
	int have_start;
	uint32_t *tails;       /* ops the next group must wait for */
	size_t ntails, tcap;
	uint64_t kernel_ns;    /* compute kernel time since prev_end */
};

struct rank_st {
	int used;
	uint32_t next_id;
	int64_t first_ts;
	struct chain *chains;
	size_t nchains;
	int node;              /* node index, -1 unknown */
	uint64_t kernel_ns;    /* compute kernel time seen on this rank */
	int node_known;
};

/* A communicator as needed for expansion. */
struct comm_st {
	uint64_t id;
	uint32_t idx;          /* position among #comm lines (tags) */
	uint32_t n;
	int32_t *ranks;        /* comm rank -> global */
	struct ev_map pos;     /* global rank + 1 -> comm rank */
	uint32_t nnodes;
	uint32_t nrings;       /* channels with a #ring line (0..nrings-1) */
	uint32_t bad_ring;     /* channel + 1 of a ring naming a non-member */
	int32_t bad_rank;
	uint32_t ntrees;
	/* consistency window: seq -> (bytes, seen) */
	uint64_t win_base;
	struct win { uint64_t bytes; uint32_t seen; uint32_t op; int used; } *win;
	uint32_t wcap;
};

struct stats {
	uint64_t colls, p2ps, sends, recvs, calcs, deps, skipped, dropped_deps, approx;
};

struct state {
	struct opts *o;
	ev_strtab *st;
	ev_meta *meta;
	ev_writer *w;
	struct lat lat;
	enum regime regime;
	struct rank_st *ranks;
	size_t nranks;
	struct comm_st **comms;
	size_t ncomms;
	struct ev_map comm_ix;      /* comm id -> index + 1 (id 0 kept apart) */
	int comm0_ix;               /* index + 1 of comm id 0 */
	struct ev_map tagc;         /* (dir, src, dst, comm, ch) -> counter */
	char **nodes;               /* node names, index = node id */
	size_t nnodes;
	uint64_t rng;
	struct stats stats;
	int warned_algo[8];
	int warned_version;
	/* the pending COLL and its CHAN records */
	struct ev_rec pend;
	int have_pend;
	uint64_t pend_recno;
	struct ev_rec chan[MAXCH];
	unsigned nchan;
	int64_t last_ts;
	int header_done;
	const char *fname;
	uint64_t recno;
};

/* ------------------------------------------------------------------ */
/* Ranks, nodes, chains.                                               */

static struct rank_st *rank_get(struct state *s, uint32_t r)
{
	if (r >= s->nranks) {
		size_t nn = s->nranks ? s->nranks : 16;
		while (nn <= r)
			nn *= 2;
		struct rank_st *p = realloc(s->ranks, nn * sizeof *p);
		if (!p)
			return NULL;
		memset(p + s->nranks, 0, (nn - s->nranks) * sizeof *p);
		s->ranks = p;
		s->nranks = nn;
	}
	return &s->ranks[r];
}

static int node_of(struct state *s, uint32_t r)
{
	if (s->o->ranks_per_node)
		return (int)(r / s->o->ranks_per_node);
	struct rank_st *rk = rank_get(s, r);
	if (!rk)
		return -1;
	if (rk->node_known)
		return rk->node;
	rk->node_known = 1;
	rk->node = -1;
	const struct ev_rank_info *ri = ev_meta_rank(s->meta, r);
	const char *name = ri ? ev_kv_get(ri->kv, ri->nkv, "node") : NULL;
	if (!name && ri)
		name = ev_kv_get(ri->kv, ri->nkv, "host");
	if (!name)
		return -1;
	for (size_t i = 0; i < s->nnodes; i++)
		if (strcmp(s->nodes[i], name) == 0)
			return rk->node = (int)i;
	char **nn = realloc(s->nodes, (s->nnodes + 1) * sizeof *nn);
	if (!nn)
		return -1;
	s->nodes = nn;
	if (!(nn[s->nnodes] = strdup(name)))
		return -1;
	return rk->node = (int)s->nnodes++;
}

static int same_node(struct state *s, int32_t a, int32_t b)
{
	if (a < 0 || b < 0)
		return 0;
	int na = node_of(s, (uint32_t)a);
	return na >= 0 && na == node_of(s, (uint32_t)b);
}

static struct chain *chain_get(struct state *s, struct rank_st *rk, uint32_t stream)
{
	uint32_t key = s->o->merge_streams ? 0 : stream;
	for (size_t i = 0; i < rk->nchains; i++)
		if (rk->chains[i].key == key)
			return &rk->chains[i];
	struct chain *p = realloc(rk->chains, (rk->nchains + 1) * sizeof *p);
	if (!p)
		return NULL;
	rk->chains = p;
	struct chain *c = &p[rk->nchains];
	memset(c, 0, sizeof *c);
	c->key = key;
	c->lane_base = (uint32_t)rk->nchains * MAXCH;
	c->kernel_ns = rk->kernel_ns; /* compute before the chain's first op */
	rk->nchains++;
	return c;
}

static int tail_add(struct chain *c, uint32_t id)
{
	if (c->ntails == c->tcap) {
		size_t nc = c->tcap ? 2 * c->tcap : 16;
		uint32_t *p = realloc(c->tails, nc * sizeof *p);
		if (!p)
			return EV_ERR_NOMEM;
		c->tails = p;
		c->tcap = nc;
	}
	c->tails[c->ntails++] = id;
	return EV_OK;
}

/* ------------------------------------------------------------------ */
/* Communicators.                                                      */

static struct comm_st *comm_get(struct state *s, uint64_t id)
{
	uint64_t *ix = id ? ev_map_get(&s->comm_ix, id) : NULL;
	if (id ? ix != NULL : s->comm0_ix != 0)
		return s->comms[(id ? *ix : (uint64_t)s->comm0_ix) - 1];
	const struct ev_comm_info *ci = ev_meta_comm(s->meta, id);
	if (!ci || ci->nranks == 0 || !ci->ranks)
		return NULL;
	/* Size the rank table for every member now: node_of() must not move it
	 * while an expansion holds a pointer into it. */
	int32_t maxr = -1;
	for (uint32_t i = 0; i < ci->nranks; i++)
		if (ci->ranks[i] > maxr)
			maxr = ci->ranks[i];
	if (maxr >= 0 && !rank_get(s, (uint32_t)maxr))
		return NULL;
	struct comm_st *c = calloc(1, sizeof *c);
	struct comm_st **nc = realloc(s->comms, (s->ncomms + 1) * sizeof *nc);
	if (!c || !nc) {
		free(c);
		if (nc)
			s->comms = nc;
		return NULL;
	}
	s->comms = nc;
	c->id = id;
	c->n = ci->nranks;
	for (size_t i = 0; i < ev_meta_ncomm(s->meta); i++)
		if (ev_meta_comm_at(s->meta, i)->id == id)
			c->idx = (uint32_t)i;
	c->ranks = malloc(c->n * sizeof *c->ranks);
	ev_map_init(&c->pos);
	if (!c->ranks) {
		free(c);
		return NULL;
	}
	int nodes_seen[1024];
	uint32_t nn = 0, unknown = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		c->ranks[i] = ci->ranks[i];
		if (ci->ranks[i] >= 0 && ev_map_put(&c->pos, (uint64_t)ci->ranks[i] + 1, i)) {
			free(c->ranks);
			free(c);
			return NULL;
		}
		int nd = ci->ranks[i] >= 0 ? node_of(s, (uint32_t)ci->ranks[i]) : -1;
		if (nd < 0) {
			unknown++;
			continue;
		}
		int seen = 0;
		for (uint32_t k = 0; k < nn && !seen; k++)
			seen = nodes_seen[k] == nd;
		if (!seen && nn < 1024)
			nodes_seen[nn++] = nd;
	}
	c->nnodes = nn + unknown;
	while (ev_meta_ring(s->meta, id, c->nrings))
		c->nrings++;
	for (uint32_t ch = 0; ch < c->nrings && !c->bad_ring; ch++) {
		const struct ev_ring_info *ri = ev_meta_ring(s->meta, id, ch);
		for (uint32_t i = 0; i < ri->n && !c->bad_ring; i++)
			if (ri->order[i] < 0 || !ev_map_get(&c->pos, (uint64_t)ri->order[i] + 1)) {
				c->bad_ring = ch + 1;
				c->bad_rank = ri->order[i];
			}
	}
	while (ev_meta_tree(s->meta, id, c->ntrees))
		c->ntrees++;
	s->comms[s->ncomms++] = c;
	if (id) {
		if (ev_map_put(&s->comm_ix, id, s->ncomms))
			return NULL;
	} else {
		s->comm0_ix = (int)s->ncomms;
	}
	return c;
}

static int comm_rank(const struct comm_st *c, uint32_t g)
{
	uint64_t *p = ev_map_get(&c->pos, (uint64_t)g + 1);
	return p ? (int)*p : -1;
}

/* Check that every rank calls collective seq with the same size.  Returns
 * 0, or 1 with *other set to a conflicting earlier size. */
static int comm_check(struct comm_st *c, uint32_t seq, uint32_t op, uint64_t bytes, uint64_t *other)
{
	if (!c->wcap) {
		c->wcap = 64;
		c->win = calloc(c->wcap, sizeof *c->win);
		if (!c->win)
			return -1;
		c->win_base = seq;
	}
	if (seq < c->win_base)
		return 0; /* already complete (or evicted) */
	while (seq - c->win_base >= c->wcap) {
		if (c->wcap < 65536) {
			struct win *nw = calloc(c->wcap * 2, sizeof *nw);
			if (!nw)
				return -1;
			for (uint32_t i = 0; i < c->wcap; i++)
				nw[(c->win_base + i) % (c->wcap * 2)] = c->win[(c->win_base + i) % c->wcap];
			free(c->win);
			c->win = nw;
			c->wcap *= 2;
		} else {
			/* Some rank never showed this one (partial trace): forget it. */
			memset(&c->win[c->win_base % c->wcap], 0, sizeof *c->win);
			c->win_base++;
		}
	}
	struct win *e = &c->win[seq % c->wcap];
	if (e->used && (e->bytes != bytes || e->op != op)) {
		*other = e->bytes;
		return 1;
	}
	e->used = 1;
	e->bytes = bytes;
	e->op = op;
	if (++e->seen >= c->n) {
		memset(e, 0, sizeof *e);
		while (c->win_base <= seq && !c->win[c->win_base % c->wcap].used)
			c->win_base++;
	}
	return 0;
}

static void comm_free(struct comm_st *c)
{
	if (!c)
		return;
	free(c->ranks);
	free(c->win);
	ev_map_free(&c->pos);
	free(c);
}

/* ------------------------------------------------------------------ */
/* Record output.                                                      */

/* The collective being expanded on one rank. */
struct cur {
	struct ev_rec base;     /* template for every output record */
	struct ev_rec dep;      /* template for DEP records */
	struct rank_st *rk;
	struct chain *ch;
	struct comm_st *comm;
	uint32_t me;            /* global rank */
	int mc;                 /* comm rank */
	unsigned coll, algo, proto;
	uint64_t T;             /* element size used for chunking */
	uint64_t count;         /* elements (per rank for AG/RS) */
	uint64_t nbytes;        /* NCCL's nBytes for tuning */
	unsigned nch;           /* channels */
	unsigned nthreads;
	uint64_t step_size;     /* buffer step, wire bytes */
	unsigned chunk_steps, slice_steps;
	uint64_t chunk_bytes;   /* data bytes per chunk */
	uint32_t lane0;
	int has_start;
	uint32_t start;
	int group_flag;
};

static double jitter(struct state *s, double v)
{
	if (!s->o->have_jitter || v <= 0)
		return v;
	/* xorshift64*, Box-Muller */
	double u[2];
	for (int i = 0; i < 2; i++) {
		s->rng ^= s->rng >> 12;
		s->rng ^= s->rng << 25;
		s->rng ^= s->rng >> 27;
		u[i] = ((double)((s->rng * 0x2545F4914F6CDD1Dull) >> 11) + 0.5) / 9007199254740992.0;
	}
	double z = sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
	double r = v * (1.0 + 0.01 * z);
	return r > 0 ? r : 0;
}

static int put_rec(struct state *s, struct cur *c, struct ev_rec *r, uint32_t *id)
{
	r->id = c->rk->next_id++;
	if (id)
		*id = r->id;
	return ev_write(s->w, r);
}

static int put_dep(struct state *s, struct cur *c, uint32_t lane, uint32_t id, uint32_t on)
{
	struct ev_rec d = c->dep;
	d.stream = lane;
	d.id = id;
	d.aux = on;
	s->stats.deps++;
	return ev_write(s->w, &d);
}

/* A CALC record (local time) on lane, waiting for deps. */
static int put_calc(struct state *s, struct cur *c, unsigned kind, uint32_t lane, uint64_t bytes, double ns,
                    const uint32_t *deps, int ndeps, uint16_t ch, uint32_t *id)
{
	struct ev_rec r = c->base;
	r.type = EV_CALC;
	r.op = (uint8_t)kind;
	r.flags = EV_F_SYNTH;
	r.stream = lane;
	r.bytes = bytes;
	r.dur = (uint64_t)llround(jitter(s, ns));
	r.peer = -1;
	r.channel = ch;
	/* Callers may pass the same variable as dependency and output id
	 * (a chain: "after this, then this"): read the dependency first. */
	uint32_t first = ndeps > 0 ? deps[0] : 0;
	int rc = put_rec(s, c, &r, id);
	for (int i = 0; i < ndeps && !rc; i++)
		rc = put_dep(s, c, lane, *id, i == 0 ? first : deps[i]);
	s->stats.calcs++;
	return rc;
}

static uint64_t wire_bytes(unsigned proto, uint64_t b)
{
	if (proto == EV_PROTO_LL)
		return div_up(b, 8) * 16;
	if (proto == EV_PROTO_LL128)
		return div_up(b, 1920) * 2048;
	return b;
}

/* Tag counter of (dir, src, dst, comm, channel). */
static uint64_t *tag_ctr(struct state *s, int dir, uint32_t src, uint32_t dst, uint32_t comm_idx, unsigned ch)
{
	uint64_t key = 1ull << 63 | (uint64_t)dir << 62 | ((uint64_t)src & 0xFFFFF) << 42 |
	               ((uint64_t)dst & 0xFFFFF) << 22 | ((uint64_t)comm_idx & 0xFFFF) << 6 | (ch & 63);
	uint64_t *v = ev_map_get(&s->tagc, key);
	if (!v) {
		if (ev_map_put(&s->tagc, key, 0))
			return NULL;
		v = ev_map_get(&s->tagc, key);
	}
	return v;
}

static uint32_t make_tag(uint32_t comm_idx, unsigned ch, uint32_t ctr)
{
	return (comm_idx & 0x3FF) << 22 | (uint32_t)(ch & 63) << 16 | (ctr & 0xFFFF);
}

/* One message in one direction.  For an intra-node message in calc mode:
 * a 0-byte message plus a CALC intra on this side (returned in *after). */
static int put_msg(struct state *s, struct cur *c, int is_send, int32_t peer, unsigned ch, uint32_t lane,
                   uint64_t data, uint16_t flags, uint32_t step, const uint32_t *deps, int ndeps,
                   uint32_t *id, uint32_t *after)
{
	uint32_t src = is_send ? c->me : (uint32_t)peer, dst = is_send ? (uint32_t)peer : c->me;
	uint64_t *ctr = tag_ctr(s, is_send, src, dst, c->comm->idx, ch);
	if (!ctr)
		return EV_ERR_NOMEM;
	uint32_t tag = make_tag(c->comm->idx, ch, (uint32_t)(*ctr)++);
	int intra = same_node(s, (int32_t)c->me, peer);
	struct ev_rec r = c->base;
	r.type = is_send ? EV_SEND : EV_RECV;
	r.proto = (uint8_t)c->proto;
	r.flags = (uint16_t)(flags | EV_F_SYNTH | (intra ? EV_F_INTRA : 0));
	r.stream = lane;
	r.peer = peer;
	r.channel = (uint16_t)ch;
	r.step = step;
	r.aux = tag;
	r.bytes = intra && !s->o->intra_send ? 0 : wire_bytes(c->proto, data);
	int rc = put_rec(s, c, &r, id);
	for (int i = 0; i < ndeps && !rc; i++)
		rc = put_dep(s, c, lane, *id, deps[i]);
	if (is_send)
		s->stats.sends++;
	else
		s->stats.recvs++;
	*after = *id;
	if (!rc && intra && !s->o->intra_send)
		rc = put_calc(s, c, EV_CALC_INTRA, lane, data, (double)data / s->o->intra_bw, id, 1, (uint16_t)ch, after);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Chunking.                                                           */

/* Per channel: part of the data (elements) and chunk counts. */
struct part { uint64_t off, cnt, cc, lcc; };

/* Slices of a ring step of nelem elements: returns the number of slices. */
static int slices(const struct cur *c, uint64_t nelem, uint64_t out[2])
{
	unsigned spc = c->proto == EV_PROTO_SIMPLE && c->chunk_steps > c->slice_steps && c->slice_steps
	                       ? c->chunk_steps / c->slice_steps : 1;
	if (spc <= 1 || c->proto != EV_PROTO_SIMPLE) {
		out[0] = nelem;
		return 1;
	}
	if (spc > 2)
		spc = 2; /* NCCL's ring SIMPLE uses 2 (CHUNKSTEPS/SLICESTEPS) */
	uint64_t step_elems = c->step_size / c->T;
	uint64_t sl = umax(div_up(nelem, 16 * spc) * 16, step_elems * c->slice_steps / 32);
	uint64_t off = 0;
	for (unsigned i = 0; i < spc; i++) {
		uint64_t n = off < nelem ? umin(sl, nelem - off) : 0;
		out[i] = n;
		off += sl;
	}
	return (int)spc;
}

/* A loop of a channel: nelem(chunk) = clamp(limit - (base + chunk*stride), 0, cc). */
struct loop { uint64_t base, stride, cc, limit; };

static uint64_t nelem_of(const struct loop *l, uint64_t chunk)
{
	uint64_t at = l->base + chunk * l->stride;
	if (at >= l->limit)
		return 0;
	return umin(l->cc, l->limit - at);
}

/* Iterates the loops of one channel. */
struct loopit {
	int ar;                 /* AllReduce: n chunks per loop */
	enum regime reg;
	uint64_t n, off, cnt, cc0, lcc;
	unsigned bid, nch;
	uint64_t size, chunk_elems, min_chunk, simple_round;
	int simple, ll;
	uint64_t pos;
	uint64_t align;         /* 2.22+ last-loop alignment (16 bytes in elements) */
};

static int loop_next(struct loopit *it, struct loop *l)
{
	if (it->reg != REG_A) {
		if (it->pos >= it->cnt)
			return 0;
		uint64_t rem = it->cnt - it->pos;
		if (it->ar) {
			uint64_t lc = it->n * it->cc0;
			uint64_t cc = it->cc0;
			if (rem < lc)
				cc = it->reg == REG_B && it->lcc ? it->lcc : align_up(div_up(rem, it->n), it->align);
			l->base = 0;
			l->stride = cc;
			l->cc = cc;
			l->limit = rem;
			it->pos += lc;
		} else {
			l->base = 0;
			l->stride = 0;
			l->cc = it->cc0;
			l->limit = rem;
			it->pos += it->cc0;
		}
		return 1;
	}
	/* <= 2.19: every channel walks the whole grid loop. */
	if (it->pos >= it->size)
		return 0;
	uint64_t go = it->pos, rem = it->size - go;
	uint64_t per = it->ar ? (uint64_t)it->nch * it->n : it->nch;
	uint64_t rcs;
	if (it->simple)
		rcs = align_up(umin(it->chunk_elems, div_up(rem, per)), it->simple_round);
	else
		rcs = umin(it->chunk_elems, div_up(rem, per * it->min_chunk) * it->min_chunk);
	if (rcs == 0)
		rcs = 1;
	if (it->ar && it->simple) {
		l->base = go + (uint64_t)it->bid * it->n * rcs;
		l->stride = rcs;
	} else if (it->ar) {
		l->base = go + (uint64_t)it->bid * rcs;
		l->stride = (uint64_t)it->nch * rcs;
	} else {
		l->base = go + (uint64_t)it->bid * rcs;
		l->stride = 0;
	}
	l->cc = rcs;
	l->limit = it->size;
	it->pos += per * it->chunk_elems;
	return 1;
}

/* ------------------------------------------------------------------ */
/* Parameters: algorithm, protocol, channels, threads, chunk size.     */

static unsigned traffic_per_byte(unsigned coll, uint32_t n)
{
	if (coll == EV_OP_ALLREDUCE)
		return 2;
	if (coll == EV_OP_ALLGATHER || coll == EV_OP_REDUCESCATTER)
		return n;
	return 1;
}

/* NCCL's tuning model (nccl-model.md section 14), for RING and TREE. */
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

static double model_time(const struct preset *pr, unsigned coll, unsigned algo, unsigned proto, uint64_t nbytes,
                         uint32_t nranks, uint32_t nnodes)
{
	int a = algo == EV_ALGO_TREE;
	int ni = nnodes <= 1 ? 0 : nnodes == 2 ? 1 : 2;
	unsigned nch = pr->search_ch;
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
			lat *= pr->arch >= ARCH_AMPERE ? 1.4 : 1.9;
	} else if (!a) {
		lat += nnodes > 1 ? hw_lat[2][0][proto] : intra_lat;
	} else {
		lat += 2 * ((ppn - 1) * intra_lat + ilog2(nnodes) * inter_lat);
	}
	return lat + (double)nbytes / (1000.0 * algbw);
}

/* Chooses what the trace does not say; returns 0 or a message. */
static const char *choose(struct state *s, struct cur *c, const struct ev_rec *r)
{
	const struct opts *o = s->o;
	const struct preset *pr = o->preset;
	unsigned coll = c->coll;
	uint32_t n = c->comm->n;
	uint32_t amask = o->algo_mask[coll < 14 ? coll : 0], pmask = o->proto_mask[coll < 14 ? coll : 0];
	if (!pr->ll128 && !(o->proto_given))
		pmask &= ~(1u << EV_PROTO_LL128);
	unsigned algo = o->trace_params ? r->algo : 0, proto = o->trace_params ? r->proto : 0;
	if (algo && !(amask & (1u << algo)) && o->algo_given)
		algo = 0;
	if (proto && !(pmask & (1u << proto)) && o->proto_given)
		proto = 0;
	if (!algo || !proto) {
		double best = 1e300;
		unsigned ba = 0, bp = 0;
		for (unsigned a = EV_ALGO_RING; a <= EV_ALGO_TREE; a++) {
			if (algo && a != algo)
				continue;
			if (!algo && !(amask & (1u << a)))
				continue;
			if (a == EV_ALGO_TREE && coll != EV_OP_ALLREDUCE)
				continue;
			for (unsigned p = EV_PROTO_LL; p <= EV_PROTO_SIMPLE; p++) {
				if (proto ? p != proto : !(pmask & (1u << p)))
					continue;
				double t = model_time(pr, coll, a, p, c->nbytes, n, c->comm->nnodes);
				if (t < best) {
					best = t;
					ba = a;
					bp = p;
				}
			}
		}
		if (!ba) {
			if (!algo && coll != EV_OP_ALLREDUCE && (amask & (1u << EV_ALGO_TREE)) && !(amask & (1u << EV_ALGO_RING)))
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
	c->algo = algo;
	c->proto = proto;
	/* Channels and threads (section 3). */
	unsigned nch = o->trace_params ? r->channel : 0, nt = o->trace_params ? r->nthreads : 0;
	if (o->nchannels && !nch)
		nch = o->nchannels;
	if (o->nthreads && !nt)
		nt = o->nthreads;
	if (!nch || !nt) {
		unsigned cnc = pr->search_ch * 2 > MAXCH ? MAXCH : pr->search_ch * 2;
		unsigned mt = proto == EV_PROTO_LL128 ? 640 : 512;
		if (proto == EV_PROTO_SIMPLE && algo == EV_ALGO_RING && pr->bw_intra * pr->search_ch <= 12)
			mt = 256;
		uint64_t thr = proto == EV_PROTO_SIMPLE ? 64 : 8;
		if (algo == EV_ALGO_RING && proto == EV_PROTO_LL)
			thr *= n;
		unsigned cnt_ch = cnc, cnt_t = mt;
		while (c->nbytes < (uint64_t)cnt_ch * cnt_t * thr && cnt_ch >= 2)
			cnt_ch--;
		if (s->regime == REG_C)
			while (c->nbytes < (uint64_t)cnt_ch * cnt_t * thr && cnt_t % 128 == 0)
				cnt_t /= 2;
		if (proto == EV_PROTO_SIMPLE)
			cnt_t += algo == EV_ALGO_RING ? 32 : 128;
		if (cnt_t < 96 && proto == EV_PROTO_SIMPLE)
			cnt_t = 96;
		if (algo == EV_ALGO_TREE && s->regime == REG_C)
			cnt_t = 640;
		if (!nch)
			nch = cnt_ch;
		if (!nt)
			nt = cnt_t;
	}
	if (nch > MAXCH)
		nch = MAXCH;
	c->nch = nch ? nch : 1;
	c->nthreads = nt;
	return NULL;
}

/* Buffer step, chunk and slice steps, chunk size in data bytes. */
static void chunking(struct state *s, struct cur *c, const struct ev_rec *r)
{
	uint64_t step = r->step_size && s->o->trace_params ? r->step_size :
	                c->proto == EV_PROTO_LL ? 64 * KiB : c->proto == EV_PROTO_LL128 ? 614400 : 512 * KiB;
	int ring_simple = c->algo == EV_ALGO_RING && c->proto == EV_PROTO_SIMPLE &&
	                  (c->coll == EV_OP_ALLREDUCE || c->coll == EV_OP_ALLGATHER || c->coll == EV_OP_REDUCESCATTER);
	unsigned cs = ring_simple ? 4 : 1, ss = ring_simple ? 2 : 1;
	if (s->o->trace_params && r->chunk_steps && r->slice_steps && ring_simple) {
		cs = r->chunk_steps;
		ss = r->slice_steps;
	}
	c->step_size = step;
	c->chunk_steps = cs;
	c->slice_steps = ss;
	uint64_t chunk = step * cs;
	if (c->proto == EV_PROTO_LL)
		chunk /= 2;
	else if (c->proto == EV_PROTO_LL128)
		chunk = chunk / 16 * 15;
	uint32_t n = c->comm->n, nn = c->comm->nnodes ? c->comm->nnodes : 1;
	double ppn = (double)n / nn;
	if (c->algo == EV_ALGO_TREE && c->proto == EV_PROTO_LL128 && s->regime == REG_C) {
		double lim = (1 + ilog2(nn) + 0.1 * ppn);
		while ((double)c->nbytes / ((double)c->nch * chunk) < lim * 64 / ppn && chunk > 128 * KiB)
			chunk /= 2;
		while ((double)c->nbytes / ((double)c->nch * chunk) < lim * 16 / ppn && chunk > 32 * KiB)
			chunk /= 2;
	}
	if (c->algo == EV_ALGO_TREE && c->proto == EV_PROTO_SIMPLE && s->regime == REG_A) {
		double depth = ppn - 1 + ilog2(nn);
		if (depth < 1)
			depth = 1;
		while ((double)c->nbytes / ((double)c->nch * chunk) < depth * 8 && chunk > 128 * KiB)
			chunk /= 2;
		while ((double)c->nbytes / ((double)c->nch * chunk) < depth * 4 && chunk > 64 * KiB)
			chunk /= 2;
		while ((double)c->nbytes / ((double)c->nch * chunk) < depth && chunk > 32 * KiB)
			chunk /= 2;
	}
	if (s->regime == REG_C) {
		uint64_t grain = c->proto == EV_PROTO_LL ? 16 : c->proto == EV_PROTO_LL128 ? 1920 : 512;
		chunk = chunk / grain * grain;
	}
	if (chunk < c->T)
		chunk = c->T;
	c->chunk_bytes = chunk;
}

/* Channel parts (elements) for regimes B and C; returns the number of
 * channels with work.  CHAN records, when present, are used as recorded. */
static unsigned split(struct state *s, struct cur *c, struct part *pt)
{
	uint64_t cc0 = umax(1, c->chunk_bytes / c->T);
	if (s->nchan) {
		unsigned k = 0;
		for (unsigned i = 0; i < s->nchan && k < MAXCH; i++) {
			const struct ev_rec *ch = &s->chan[i];
			pt[k].off = ch->dur;
			pt[k].cnt = ch->bytes;
			pt[k].cc = ch->aux ? ch->aux : cc0;
			pt[k].lcc = ch->step;
			k++;
		}
		return k;
	}
	if (c->count == 0)
		return 0;
	if (s->regime == REG_B) {
		uint64_t align = c->proto == EV_PROTO_SIMPLE ? umax(1, 4096 / c->T) :
		                 c->proto == EV_PROTO_LL ? umax(1, 8 / c->T) * (c->nthreads ? c->nthreads : 512) :
		                 umax(1, 480 / c->T) * ((c->nthreads ? c->nthreads : 640) / 32);
		uint64_t per = align_up(div_up(c->count, c->nch), align);
		unsigned k = 0;
		uint64_t nloop = c->coll == EV_OP_ALLREDUCE ? c->comm->n : 1;
		for (unsigned i = 0; i < c->nch; i++) {
			uint64_t off = (uint64_t)i * per;
			if (off >= c->count)
				break;
			pt[k].off = off;
			pt[k].cnt = umin(per, c->count - off);
			pt[k].cc = cc0;
			uint64_t rem = pt[k].cnt % (nloop * cc0);
			pt[k].lcc = rem ? align_up(div_up(rem, nloop), align) : 0;
			k++;
		}
		return k;
	}
	/* >= 2.22: continuous byte distribution of one task. */
	uint64_t tpb = traffic_per_byte(c->coll, c->comm->n) * (c->proto == EV_PROTO_LL ? 4 : 1);
	uint64_t bytes = c->count * c->T;
	uint64_t traffic = umax(32 * KiB, bytes * tpb);
	uint64_t tpc = div_up(div_up(traffic, c->nch), 16) * 16;
	uint64_t cell = div_up(div_up(32 * KiB, tpb), 16) * 16;
	if (cell % c->T)
		cell = align_up(cell, c->T);
	uint64_t cells = div_up(bytes, cell);
	uint64_t cpc = umin(cells, div_up(tpc, cell * tpb));
	if (cpc == 0)
		cpc = 1;
	if (div_up(cells, cpc) > c->nch)
		cpc = div_up(cells, c->nch);
	uint64_t epc = cell / c->T;
	unsigned k = 0;
	for (uint64_t i = 0; i * cpc < cells && k < MAXCH; i++) {
		uint64_t off = i * cpc * epc;
		pt[k].off = off;
		pt[k].cnt = umin(cpc * epc, c->count - off);
		pt[k].cc = cc0;
		pt[k].lcc = 0;
		k++;
	}
	return k;
}

static void loop_init(struct state *s, struct cur *c, struct loopit *it, const struct part *p, unsigned bid, int ar)
{
	memset(it, 0, sizeof *it);
	it->ar = ar;
	it->reg = s->nchan ? REG_B : s->regime;
	it->n = c->comm->n;
	it->align = umax(1, 16 / c->T);
	if (it->reg != REG_A) {
		it->off = p->off;
		it->cnt = p->cnt;
		it->cc0 = p->cc;
		it->lcc = p->lcc;
		return;
	}
	it->bid = bid;
	it->nch = c->nch;
	it->size = c->count;
	it->chunk_elems = umax(1, c->chunk_bytes / c->T);
	it->simple = c->proto == EV_PROTO_SIMPLE;
	unsigned nt = c->nthreads ? c->nthreads : (c->proto == EV_PROTO_LL128 ? 640 : c->proto == EV_PROTO_LL ? 512 : 544);
	it->simple_round = umax(1, (uint64_t)(nt > 32 ? nt - 32 : nt) * 8 / c->T);
	it->min_chunk = c->proto == EV_PROTO_LL ? umax(1, (uint64_t)nt * 8 / c->T) : umax(1, (uint64_t)nt * (60 / c->T) / 2);
}

/* ------------------------------------------------------------------ */
/* Rings and trees.                                                    */

/* Ring order of a channel: from #ring (channel mod the number given) or
 * comm rank order.  Sets prev/next of me; -1 if me is not in the ring. */
static int ring_of(struct state *s, struct cur *c, unsigned ch, const int32_t **order, int *pos)
{
	struct comm_st *cm = c->comm;
	*pos = -1;
	if (cm->nrings) {
		const struct ev_ring_info *ri = ev_meta_ring(s->meta, cm->id, ch % cm->nrings);
		if (!ri || ri->n != cm->n)
			return -1;
		*order = ri->order;
		for (uint32_t i = 0; i < ri->n; i++)
			if (ri->order[i] == (int32_t)c->me)
				*pos = (int)i;
		return *pos < 0 ? -1 : 0;
	}
	*order = cm->ranks;
	*pos = c->mc;
	return 0;
}

/* NCCL's binary tree over n nodes (ncclGetBtree), my own rendering. */
static void btree(int n, int r, int *up, int *d0, int *d1)
{
	int bit;
	for (bit = 1; bit < n; bit <<= 1)
		if (bit & r)
			break;
	if (r == 0) {
		*up = -1;
		*d0 = -1;
		*d1 = n > 1 ? bit >> 1 : -1;
		return;
	}
	int u = (r ^ bit) | (bit << 1);
	if (u >= n)
		u = r ^ bit;
	*up = u;
	int low = bit >> 1;
	*d0 = low == 0 ? -1 : r - low;
	int d = low == 0 ? -1 : r + low;
	while (d >= n) {
		low >>= 1;
		d = low == 0 ? -1 : r + low;
	}
	*d1 = d;
}

struct tnode { int32_t up, down[3]; };

/* Tree links of me on a channel: #tree lines, else NCCL's double binary
 * tree across nodes with a chain inside each node. */
static int tree_of(struct state *s, struct cur *c, unsigned ch, struct tnode *t)
{
	struct comm_st *cm = c->comm;
	t->up = -1;
	t->down[0] = t->down[1] = t->down[2] = -1;
	if (cm->ntrees) {
		const struct ev_tree_info *ti = ev_meta_tree(s->meta, cm->id, ch % cm->ntrees);
		for (size_t i = 0; ti && i < ti->n; i++)
			if (ti->nodes[i].rank == (int32_t)c->me) {
				t->up = ti->nodes[i].up;
				memcpy(t->down, ti->nodes[i].down, sizeof t->down);
				return 0;
			}
		return -1;
	}
	/* Nodes in order of first member; local ranks in comm order. */
	uint32_t n = cm->n;
	int mynode = -1, nnodes = 0, myloc = -1, locn = 0;
	int32_t head_of_node[1024];
	int32_t prevloc = -1, nextloc = -1;
	int ndid[1024];
	for (uint32_t i = 0; i < n; i++) {
		int32_t g = cm->ranks[i];
		int nd = node_of(s, (uint32_t)g);
		int key = nd >= 0 ? nd : -2 - (int)i;
		int k;
		for (k = 0; k < nnodes; k++)
			if (ndid[k] == key)
				break;
		if (k == nnodes && nnodes < 1024) {
			ndid[nnodes] = key;
			head_of_node[nnodes] = g;
			nnodes++;
		}
		if (g == (int32_t)c->me)
			mynode = k;
	}
	for (uint32_t i = 0; i < n; i++) {
		int32_t g = cm->ranks[i];
		int nd = node_of(s, (uint32_t)g);
		int key = nd >= 0 ? nd : -2 - (int)i;
		if (mynode < 0 || key != ndid[mynode])
			continue;
		if (g == (int32_t)c->me)
			myloc = locn;
		else if (myloc < 0)
			prevloc = g;
		else if (nextloc < 0)
			nextloc = g;
		locn++;
	}
	if (mynode < 0 || myloc < 0)
		return -1;
	int di = 0;
	if (nextloc >= 0)
		t->down[di++] = nextloc;
	if (myloc > 0) {
		t->up = prevloc;
		return 0;
	}
	/* A node head: links of the inter-node tree (tree 1 for the second half of the channels). */
	int u, d0, d1, r = mynode, nn = nnodes;
	int second = c->nch >= 2 && ch >= c->nch / 2;
	if (second) {
		int rr = nn % 2 == 0 ? nn - 1 - r : (r - 1 + nn) % nn;
		btree(nn, rr, &u, &d0, &d1);
		if (nn % 2 == 0) {
			u = u < 0 ? -1 : nn - 1 - u;
			d0 = d0 < 0 ? -1 : nn - 1 - d0;
			d1 = d1 < 0 ? -1 : nn - 1 - d1;
		} else {
			u = u < 0 ? -1 : (u + 1) % nn;
			d0 = d0 < 0 ? -1 : (d0 + 1) % nn;
			d1 = d1 < 0 ? -1 : (d1 + 1) % nn;
		}
	} else {
		btree(nn, r, &u, &d0, &d1);
	}
	t->up = u < 0 ? -1 : head_of_node[u];
	if (d0 >= 0 && di < 3)
		t->down[di++] = head_of_node[d0];
	if (d1 >= 0 && di < 3)
		t->down[di++] = head_of_node[d1];
	return 0;
}

/* ------------------------------------------------------------------ */
/* Expansion per algorithm.  Each returns EV_OK or a status; tails of   */
/* every channel are added to the chain.                                */

struct chx {
	unsigned ch;
	uint32_t lane;
	uint32_t last_send;
	int has_last_send;
	uint32_t step;
};

/* Dependencies of a send: the previous send of the channel (program
 * order) and the data it forwards, else the channel start. */
static int ndeps_of(uint32_t *d, const struct chx *x, const struct cur *c, int has_data, uint32_t data)
{
	int k = 0;
	if (x->has_last_send)
		d[k++] = x->last_send;
	if (has_data)
		d[k++] = data;
	else if (!x->has_last_send && c->has_start)
		d[k++] = c->start;
	return k;
}

/* Recv-side dependency for ops that only wait for the channel start. */
static int start_deps(uint32_t *d, const struct cur *c)
{
	if (c->has_start) {
		d[0] = c->start;
		return 1;
	}
	return 0;
}

/* Ring AllReduce, AllGather, ReduceScatter on one channel. */
static int ring_channel(struct state *s, struct cur *c, const struct part *p, unsigned bid)
{
	struct chx x = { .ch = bid, .lane = c->lane0 + bid };
	const int32_t *order;
	int pos;
	if (ring_of(s, c, bid, &order, &pos))
		return 1; /* reported by the caller */
	uint32_t n = c->comm->n;
	int32_t next = order[(pos + 1) % n], prev = order[(pos + n - 1) % n];
	int ar = c->coll == EV_OP_ALLREDUCE;
	uint32_t nsteps = ar ? 2 * (n - 1) : n - 1;
	struct loopit it;
	struct loop l;
	loop_init(s, c, &it, p, bid, ar);
	uint32_t avail[2];
	int have_avail = 0, rc = 0;
	uint32_t last_recv = 0;
	int has_last_recv = 0;
	while (loop_next(&it, &l)) {
		for (uint32_t k = 0; k < nsteps; k++) {
			uint64_t se, re;
			if (ar) {
				se = nelem_of(&l, (uint64_t)((pos + 2 * n - 1 - (k % n)) % n));
				re = nelem_of(&l, (uint64_t)((pos + 2 * n - 2 - (k % n)) % n));
			} else {
				se = re = nelem_of(&l, 0);
			}
			uint16_t fl = ar ? (k <= n - 2 ? EV_F_PHASE_RS : EV_F_PHASE_AG) :
			              c->coll == EV_OP_REDUCESCATTER ? EV_F_PHASE_RS : EV_F_PHASE_AG;
			uint64_t ssl[2], rsl[2];
			int nsl = slices(c, se, ssl);
			slices(c, re, rsl);
			for (int sl = 0; sl < nsl; sl++) {
				uint32_t d[3], id, after;
				int nd = ndeps_of(d, &x, c, k > 0 && have_avail, avail[sl]);
				rc = put_msg(s, c, 1, next, bid, x.lane, ssl[sl] * c->T, fl, x.step, d, nd, &id, &after);
				if (rc)
					return rc;
				x.last_send = after;
				x.has_last_send = 1;
			}
			/* Receive what prev sent at this step, then reduce/copy it. */
			int prim = ar ? (k < n - 2 ? P_RRS : k == n - 2 ? P_RRCS : k < nsteps - 1 ? P_RCS : -1) :
			           c->coll == EV_OP_REDUCESCATTER ? (k < n - 2 ? P_RRS : P_RRC) : (k < n - 2 ? P_RCS : -1);
			uint16_t rfl = fl;
			for (int sl = 0; sl < nsl; sl++) {
				uint32_t d[1], id, after;
				int nd = start_deps(d, c);
				rc = put_msg(s, c, 0, prev, bid, x.lane, rsl[sl] * c->T, rfl, x.step, d, nd, &id, &after);
				if (rc)
					return rc;
				uint32_t out = after;
				double cost = prim >= 0 ? lat_cost(&s->lat, prim, c->proto, rsl[sl] * c->T) : 0;
				if (cost > 0) {
					unsigned kind = prim == P_RCS ? EV_CALC_COPY : EV_CALC_REDUCE;
					rc = put_calc(s, c, kind, x.lane, rsl[sl] * c->T, cost, &after, 1, (uint16_t)bid, &out);
					if (rc)
						return rc;
				}
				avail[sl] = out;
				last_recv = out;
				has_last_recv = 1;
			}
			have_avail = 1;
			x.step++;
		}
	}
	struct chain *chn = c->ch;
	if (x.has_last_send && (rc = tail_add(chn, x.last_send)))
		return rc;
	if (has_last_recv && (rc = tail_add(chn, last_recv)))
		return rc;
	return 0;
}

/* Broadcast (pipeline from the root) and Reduce (pipeline to the root). */
static int pipe_channel(struct state *s, struct cur *c, const struct part *p, unsigned bid, int32_t root)
{
	struct chx x = { .ch = bid, .lane = c->lane0 + bid };
	const int32_t *order;
	int pos;
	if (ring_of(s, c, bid, &order, &pos))
		return 1;
	uint32_t n = c->comm->n;
	int32_t next = order[(pos + 1) % n], prev = order[(pos + n - 1) % n];
	int bc = c->coll == EV_OP_BROADCAST;
	int i_root = (int32_t)c->me == root;
	int do_recv, do_send, prim;
	if (bc) {
		do_send = next != root;
		do_recv = !i_root;
		prim = do_send && do_recv ? P_RCS : -1;
	} else {
		do_send = !i_root;
		do_recv = prev != root;
		prim = i_root ? P_RRC : do_recv ? P_RRS : -1;
	}
	if (n == 1)
		return 0;
	struct loopit it;
	struct loop l;
	loop_init(s, c, &it, p, bid, 0);
	int rc;
	uint32_t last_recv = 0;
	int has_last_recv = 0;
	while (loop_next(&it, &l)) {
		uint64_t ne = nelem_of(&l, 0);
		uint32_t data = 0;
		int has_data = 0;
		if (do_recv) {
			uint32_t d[1], id, after;
			int nd = start_deps(d, c);
			if ((rc = put_msg(s, c, 0, prev, bid, x.lane, ne * c->T, 0, x.step, d, nd, &id, &after)))
				return rc;
			double cost = prim >= 0 ? lat_cost(&s->lat, prim, c->proto, ne * c->T) : 0;
			if (cost > 0 && (rc = put_calc(s, c, prim == P_RCS ? EV_CALC_COPY : EV_CALC_REDUCE, x.lane, ne * c->T,
			                               cost, &after, 1, (uint16_t)bid, &after)))
				return rc;
			data = after;
			has_data = 1;
			last_recv = after;
			has_last_recv = 1;
		}
		if (do_send) {
			uint32_t d[3], id, after;
			int nd = ndeps_of(d, &x, c, has_data, data);
			if ((rc = put_msg(s, c, 1, next, bid, x.lane, ne * c->T, 0, x.step, d, nd, &id, &after)))
				return rc;
			x.last_send = after;
			x.has_last_send = 1;
		}
		x.step++;
	}
	if (x.has_last_send && (rc = tail_add(c->ch, x.last_send)))
		return rc;
	if (has_last_recv && (rc = tail_add(c->ch, last_recv)))
		return rc;
	return 0;
}

/* Tree AllReduce: per chunk reduce up to the root, broadcast down. */
static int tree_channel(struct state *s, struct cur *c, const struct part *p, unsigned bid)
{
	struct chx x = { .ch = bid, .lane = c->lane0 + bid };
	struct tnode t;
	if (tree_of(s, c, bid, &t))
		return 1;
	struct loopit it;
	struct loop l;
	loop_init(s, c, &it, p, bid, 0);
	int rc;
	uint32_t last_up = 0, last_down_send = 0, last_down_recv = 0;
	int has_up = 0, has_dsend = 0, has_drecv = 0;
	while (loop_next(&it, &l)) {
		uint64_t ne = nelem_of(&l, 0), b = ne * c->T;
		uint32_t got[3];
		int ngot = 0;
		for (int k = 0; k < 3; k++) {
			if (t.down[k] < 0)
				continue;
			uint32_t d[1], id, after;
			int nd = start_deps(d, c);
			if ((rc = put_msg(s, c, 0, t.down[k], bid, x.lane, b, EV_F_TREE_UP, x.step, d, nd, &id, &after)))
				return rc;
			double cost = lat_cost(&s->lat, t.up < 0 ? P_RRCS : P_RRS, c->proto, b);
			if (cost > 0 && (rc = put_calc(s, c, EV_CALC_REDUCE, x.lane, b, cost, &after, 1, (uint16_t)bid, &after)))
				return rc;
			got[ngot++] = after;
		}
		uint32_t down_src[3];
		int ndown_src = 0;
		if (t.up >= 0) {
			/* Up: after every child's contribution. */
			uint32_t d[5], id, after;
			int nd = 0;
			if (has_up)
				d[nd++] = last_up;
			for (int k = 0; k < ngot; k++)
				d[nd++] = got[k];
			if (!nd && c->has_start)
				d[nd++] = c->start;
			if ((rc = put_msg(s, c, 1, t.up, bid, x.lane, b, EV_F_TREE_UP, x.step, d, nd, &id, &after)))
				return rc;
			last_up = after;
			has_up = 1;
			/* Down: receive the result from up. */
			int ns = start_deps(d, c);
			if ((rc = put_msg(s, c, 0, t.up, bid, x.lane, b, EV_F_TREE_DOWN, x.step, d, ns, &id, &after)))
				return rc;
			int has_child = t.down[0] >= 0 || t.down[1] >= 0 || t.down[2] >= 0;
			double cost = has_child ? lat_cost(&s->lat, P_RCS, c->proto, b) : 0;
			if (cost > 0 && (rc = put_calc(s, c, EV_CALC_COPY, x.lane, b, cost, &after, 1, (uint16_t)bid, &after)))
				return rc;
			last_down_recv = after;
			has_drecv = 1;
			down_src[ndown_src++] = after;
		} else {
			for (int k = 0; k < ngot; k++)
				down_src[ndown_src++] = got[k];
		}
		for (int k = 0; k < 3; k++) {
			if (t.down[k] < 0)
				continue;
			uint32_t d[5], id, after;
			int nd = 0;
			if (has_dsend)
				d[nd++] = last_down_send;
			for (int q = 0; q < ndown_src; q++)
				d[nd++] = down_src[q];
			if (!nd && c->has_start)
				d[nd++] = c->start;
			if ((rc = put_msg(s, c, 1, t.down[k], bid, x.lane, b, EV_F_TREE_DOWN, x.step, d, nd, &id, &after)))
				return rc;
			last_down_send = after;
			has_dsend = 1;
		}
		x.step++;
	}
	if (has_up && (rc = tail_add(c->ch, last_up)))
		return rc;
	if (has_dsend && (rc = tail_add(c->ch, last_down_send)))
		return rc;
	if (has_drecv && (rc = tail_add(c->ch, last_down_recv)))
		return rc;
	return 0;
}

static unsigned bitrev(unsigned v, int bits)
{
	unsigned r = 0;
	for (int i = 0; i < bits; i++)
		if (v & (1u << i))
			r |= 1u << (bits - 1 - i);
	return r;
}

/* One direction of a point-to-point transfer with NCCL's p2p chunking. */
static int p2p_one(struct state *s, struct cur *c, int is_send, int32_t peer, uint64_t bytes)
{
	struct comm_st *cm = c->comm;
	const struct preset *pr = s->o->preset;
	int pc = comm_rank(cm, (uint32_t)peer);
	if (pc < 0)
		return 2;
	int intra = same_node(s, (int32_t)c->me, peer);
	uint32_t nn = cm->nnodes;
	unsigned comm_ch = pr->search_ch * 2 > MAXCH ? MAXCH : pr->search_ch * 2;
	uint64_t p2pn = pow2_up(comm_ch);
	uint64_t chunk = nn > 1 ? 128 * KiB : (pr->nvlink ? 512 * KiB : 128 * KiB);
	uint64_t cmax = intra ? pr->p2p_per_peer_intra : pr->p2p_per_peer_inter;
	cmax = umin(pow2_up(cmax), p2pn);
	uint64_t cmin = cmax;
	while (cmin * cm->n > p2pn && cmin > 1)
		cmin /= 2;
	uint64_t min_part = nn > 1 ? chunk / 2 : chunk / 8, max_part = nn > 1 ? chunk : chunk * 32;
	uint64_t nch = umax(1, umin(cmin, div_up(bytes, min_part)));
	uint64_t part = umax(min_part, div_up(bytes, nch));
	while (part > max_part && nch <= cmax / 2) {
		nch *= 2;
		part = div_up(bytes, nch);
	}
	uint64_t P = align_up(div_up(bytes, nch), 4 * KiB);
	int ll = intra && bytes <= nch * 16384;
	unsigned saved = c->proto;
	c->proto = ll ? EV_PROTO_LL : EV_PROTO_SIMPLE;
	uint64_t step_chunk = ll ? 32 * KiB : chunk;
	/* A round's base channel from the rank distance (an approximation of
	 * ncclP2pChannelBaseForRound; both sides compute the same). */
	uint32_t delta = is_send ? (uint32_t)((pc - c->mc + (int)cm->n) % (int)cm->n)
	                         : (uint32_t)((c->mc - pc + (int)cm->n) % (int)cm->n);
	int bits = ilog2(p2pn);
	unsigned base = bitrev(delta % (unsigned)p2pn, bits);
	int rc = 0;
	for (uint64_t pi = 0; pi < nch; pi++) {
		uint64_t lo = umin(pi * P, bytes), hi = umin((pi + 1) * P, bytes);
		if (hi == lo && !(bytes == 0 && pi == 0))
			continue;
		unsigned ch = (unsigned)((base + pi) & (p2pn - 1));
		struct chx x = { .ch = ch, .lane = c->lane0 + ch };
		uint64_t nsteps = hi > lo ? div_up(hi - lo, step_chunk) : 1;
		uint32_t last = 0;
		int has_last = 0;
		for (uint64_t k = 0; k < nsteps; k++) {
			uint64_t b = hi > lo ? umin(step_chunk, hi - lo - k * step_chunk) : 0;
			uint32_t d[1], id, after;
			int nd = has_last ? (d[0] = last, 1) : start_deps(d, c);
			if ((rc = put_msg(s, c, is_send, peer, ch, x.lane, b, 0, (uint32_t)k, d, nd, &id, &after)))
				goto out;
			last = after;
			has_last = 1;
		}
		if (has_last && (rc = tail_add(c->ch, last)))
			goto out;
	}
out:
	c->proto = saved;
	return rc;
}

/* ------------------------------------------------------------------ */
/* One COLL/P2P record.                                                */

static int err_rec(struct state *s, const char *fmt, ...) EV_PRINTF(2, 3);
static int err_rec(struct state *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (s->o->lenient) {
		if (s->stats.skipped++ == 0)
			ev_cli_warn(&s->o->cli, "%s: record %llu: %s (skipped; --lenient)", s->fname,
			            (unsigned long long)s->pend_recno, msg);
		return 0;
	}
	ev_cli_error(&s->o->cli, "%s: record %llu: %s", s->fname, (unsigned long long)s->pend_recno, msg);
	return 1;
}

/* Before an op on a chain: join the previous group's tails, then the gap. */
static int begin_op(struct state *s, struct cur *c, const struct ev_rec *r)
{
	struct chain *ch = c->ch;
	int rc;
	int same_group = ch->have_prev && r->ts == ch->group_ts && (r->flags & EV_F_GROUP || r->type == EV_P2P);
	if (same_group) {
		c->has_start = ch->have_start;
		c->start = ch->start;
		return 0;
	}
	uint32_t lane = ch->lane_base;
	uint32_t join = 0;
	int has_join = 0;
	if (ch->ntails == 1) {
		join = ch->tails[0];
		has_join = 1;
	} else if (ch->ntails > 1) {
		if ((rc = put_calc(s, c, EV_CALC_SYNC, lane, 0, 0, ch->tails, (int)ch->ntails, 0, &join)))
			return rc;
		has_join = 1;
	} else if (ch->have_start) {
		join = ch->start;
		has_join = 1;
	}
	ch->ntails = 0;
	int64_t from = ch->have_prev ? ch->prev_end : c->rk->first_ts;
	int64_t gap = r->ts > from ? r->ts - from : 0;
	double cost = 0;
	unsigned kind = EV_CALC_GAP;
	if (s->o->compute == COMP_GAPS)
		cost = (double)gap;
	else if (s->o->compute == COMP_KERNELS) {
		cost = (double)(ch->kernel_ns < (uint64_t)gap ? ch->kernel_ns : (uint64_t)gap);
		kind = EV_CALC_KERNEL;
	}
	if (cost > 0) {
		uint32_t id;
		if ((rc = put_calc(s, c, kind, lane, 0, cost, &join, has_join, 0, &id)))
			return rc;
		join = id;
		has_join = 1;
	}
	ch->kernel_ns = 0;
	ch->have_start = has_join;
	ch->start = join;
	ch->group_ts = r->ts;
	c->has_start = has_join;
	c->start = join;
	return 0;
}

static int end_op(struct cur *c, const struct ev_rec *r)
{
	struct chain *ch = c->ch;
	int64_t end = ev_rec_end(r);
	if (!ch->have_prev || end > ch->prev_end)
		ch->prev_end = end;
	ch->have_prev = 1;
	return 0;
}

static int expand(struct state *s, const struct ev_rec *r)
{
	struct cur c;
	int rc;
	memset(&c, 0, sizeof c);
	c.me = r->rank;
	c.comm = comm_get(s, r->comm);
	if (!c.comm)
		return err_rec(s, "communicator %llu has no #comm line with ranks", (unsigned long long)r->comm);
	c.rk = rank_get(s, r->rank);
	if (!c.rk)
		return ev_cli_error(&s->o->cli, "out of memory");
	c.ch = chain_get(s, c.rk, r->stream);
	if (!c.ch)
		return ev_cli_error(&s->o->cli, "out of memory");
	if (c.comm->bad_ring)
		return err_rec(s, "the ring of communicator %llu channel %u lists rank %d, which is not a member",
		               (unsigned long long)r->comm, c.comm->bad_ring - 1, c.comm->bad_rank);
	c.mc = comm_rank(c.comm, r->rank);
	if (c.mc < 0)
		return err_rec(s, "rank %u is not a member of communicator %llu", r->rank, (unsigned long long)r->comm);
	c.coll = r->op;
	if (r->type == EV_COLL) {
		uint64_t other;
		int k = comm_check(c.comm, r->seq, r->op, r->bytes, &other);
		if (k < 0)
			return ev_cli_error(&s->o->cli, "out of memory");
		if (k)
			return err_rec(s, "%s seq %u on communicator %llu has %llu bytes on rank %u but %llu on another rank",
			               ev_coll_name(r->op) ? ev_coll_name(r->op) : "collective", r->seq,
			               (unsigned long long)r->comm, (unsigned long long)r->bytes, r->rank,
			               (unsigned long long)other);
	}
	/* Template of every output record. */
	ev_rec_init(&c.base);
	c.base.op = r->op;
	c.base.dtype = r->dtype;
	c.base.redop = r->redop;
	c.base.rank = r->rank;
	c.base.ts = r->ts;
	c.base.comm = r->comm;
	c.base.seq = r->seq;
	c.base.src = r->src;
	ev_rec_init(&c.dep);
	c.dep.type = EV_DEP;
	c.dep.rank = r->rank;
	c.dep.ts = r->ts;
	c.dep.seq = r->seq;
	c.dep.comm = r->comm;
	c.dep.src = r->src;
	uint32_t n = c.comm->n;
	unsigned dts = ev_dtype_size(r->dtype);
	c.T = dts ? dts : 1;
	if ((rc = begin_op(s, &c, r)))
		return rc;
	c.lane0 = c.ch->lane_base;
	if (r->type == EV_P2P || c.coll == EV_OP_SEND || c.coll == EV_OP_RECV) {
		s->stats.p2ps++;
		c.algo = 0;
		c.proto = EV_PROTO_SIMPLE;
		c.step_size = 512 * KiB;
		c.base.algo = 0;
		if (r->peer < 0)
			return err_rec(s, "p2p record without a peer");
		rc = p2p_one(s, &c, c.coll != EV_OP_RECV, r->peer, r->bytes);
		if (rc == 2)
			return err_rec(s, "peer %d is not a member of communicator %llu", r->peer, (unsigned long long)r->comm);
		if (rc)
			return ev_cli_file_error(&s->o->cli, s->o->cli.output, rc);
		return end_op(&c, r);
	}
	s->stats.colls++;
	switch (c.coll) {
	case EV_OP_ALLTOALL: case EV_OP_ALLTOALLV: case EV_OP_GATHER: case EV_OP_SCATTER: {
		/* Grouped send/recv: equal shares per peer. */
		if (c.coll == EV_OP_ALLTOALLV && !s->warned_algo[0]++)
			ev_cli_warn(&s->o->cli, "alltoallv is expanded as equal shares per peer (sizes per peer are not in the trace)");
		uint64_t share = n ? r->bytes / n : 0;
		int32_t root = r->peer;
		for (uint32_t i = 0; i < n; i++) {
			int32_t g = c.comm->ranks[i];
			if (g == (int32_t)c.me || g < 0)
				continue;
			int snd = c.coll == EV_OP_GATHER ? g == root ? 1 : 0 : c.coll == EV_OP_SCATTER ? (int32_t)c.me == root : 1;
			int rcv = c.coll == EV_OP_GATHER ? (int32_t)c.me == root : c.coll == EV_OP_SCATTER ? g == root : 1;
			c.proto = EV_PROTO_SIMPLE;
			if (snd && (rc = p2p_one(s, &c, 1, g, share)) != 0)
				return rc == 2 ? err_rec(s, "bad peer") : ev_cli_file_error(&s->o->cli, s->o->cli.output, rc);
			if (rcv && (rc = p2p_one(s, &c, 0, g, share)) != 0)
				return rc == 2 ? err_rec(s, "bad peer") : ev_cli_file_error(&s->o->cli, s->o->cli.output, rc);
		}
		return end_op(&c, r);
	}
	case EV_OP_ALLREDUCE: case EV_OP_ALLGATHER: case EV_OP_REDUCESCATTER: case EV_OP_BROADCAST: case EV_OP_REDUCE:
		break;
	default:
		if (!s->warned_algo[1]++)
			ev_cli_warn(&s->o->cli, "%s collectives are not expanded (no messages written)",
			            ev_coll_name(c.coll) ? ev_coll_name(c.coll) : "unknown");
		return end_op(&c, r);
	}
	/* Sizes: AllGather and Broadcast are moved as bytes, like NCCL. */
	if (c.coll == EV_OP_ALLGATHER || c.coll == EV_OP_BROADCAST)
		c.T = 1;
	int per_rank = c.coll == EV_OP_ALLGATHER || c.coll == EV_OP_REDUCESCATTER;
	c.count = per_rank ? r->bytes / n / c.T : r->bytes / c.T;
	c.nbytes = r->bytes;
	const char *why = choose(s, &c, r);
	if (why)
		return err_rec(s, "%s", why);
	if (c.algo != EV_ALGO_RING && c.algo != EV_ALGO_TREE) {
		if (!s->warned_algo[c.algo & 7]++)
			ev_cli_warn(&s->o->cli, "algorithm %s is approximated by %s", ev_algo_name(c.algo),
			            c.coll == EV_OP_ALLREDUCE && c.algo == EV_ALGO_NVLS_TREE ? "tree" : "ring");
		s->stats.approx++;
		c.algo = c.coll == EV_OP_ALLREDUCE && c.algo == EV_ALGO_NVLS_TREE ? EV_ALGO_TREE : EV_ALGO_RING;
	}
	if (c.algo == EV_ALGO_TREE && c.coll != EV_OP_ALLREDUCE)
		c.algo = EV_ALGO_RING;
	chunking(s, &c, r);
	c.base.algo = (uint8_t)c.algo;
	c.base.proto = (uint8_t)c.proto;
	c.base.chunk_steps = (uint8_t)c.chunk_steps;
	c.base.slice_steps = (uint8_t)c.slice_steps;
	c.base.step_size = (uint32_t)c.step_size;
	if (n == 1 || c.count == 0)
		return end_op(&c, r);
	struct part pt[MAXCH];
	unsigned nparts;
	if (s->regime == REG_A && !s->nchan) {
		nparts = c.nch;
		memset(pt, 0, sizeof pt);
	} else {
		nparts = split(s, &c, pt);
	}
	int32_t root = r->peer >= 0 ? r->peer : c.comm->ranks[0];
	for (unsigned b = 0; b < nparts; b++) {
		/* Check every channel first, so an error leaves no half expansion. */
		unsigned bid = s->nchan ? s->chan[b].channel : b;
		const int32_t *order;
		int pos;
		struct tnode tn;
		if (c.algo == EV_ALGO_TREE ? tree_of(s, &c, bid, &tn) : ring_of(s, &c, bid, &order, &pos))
			return err_rec(s, "rank %u is missing from the %s of communicator %llu channel %u", c.me,
			               c.algo == EV_ALGO_TREE ? "tree" : "ring", (unsigned long long)r->comm, bid);
	}
	for (unsigned b = 0; b < nparts; b++) {
		unsigned bid = s->nchan ? s->chan[b].channel : b;
		if (c.algo == EV_ALGO_TREE)
			rc = tree_channel(s, &c, &pt[b], bid);
		else if (c.coll == EV_OP_BROADCAST || c.coll == EV_OP_REDUCE)
			rc = pipe_channel(s, &c, &pt[b], bid, root);
		else
			rc = ring_channel(s, &c, &pt[b], bid);
		if (rc == 1)
			return err_rec(s, "rank %u is missing from the %s of communicator %llu channel %u", c.me,
			               c.algo == EV_ALGO_TREE ? "tree" : "ring", (unsigned long long)r->comm, bid);
		if (rc)
			return rc == EV_ERR_NOMEM ? ev_cli_error(&s->o->cli, "out of memory")
			                          : ev_cli_file_error(&s->o->cli, s->o->cli.output, rc);
	}
	return end_op(&c, r);
}

static int flush_pending(struct state *s)
{
	if (!s->have_pend)
		return 0;
	s->have_pend = 0;
	int rc = expand(s, &s->pend);
	if (!rc && s->o->keep_coll) {
		if ((rc = ev_write(s->w, &s->pend)) == EV_OK)
			for (unsigned i = 0; i < s->nchan && !rc; i++)
				rc = ev_write(s->w, &s->chan[i]);
		if (rc)
			rc = ev_cli_file_error(&s->o->cli, s->o->cli.output, rc);
	}
	s->nchan = 0;
	return rc;
}

/* ------------------------------------------------------------------ */
/* Main loop.                                                          */

static int is_kernel_compute(const struct ev_rec *r)
{
	return r->type == EV_KERNEL && r->op != EV_KC_COMM;
}

static int parse_version(const char *v, enum regime *reg)
{
	unsigned a = 0, b = 0;
	if (!v || sscanf(v, "%u.%u", &a, &b) < 2)
		return -1;
	*reg = a < 2 || (a == 2 && b <= 19) ? REG_A : a == 2 && b <= 21 ? REG_B : REG_C;
	return 0;
}

static int start_output(struct state *s, ev_reader *r)
{
	if (s->header_done)
		return 0;
	s->header_done = 1;
	const char *origin = ev_reader_header(r, "origin");
	int rc = EV_OK;
	if (origin)
		rc = ev_writer_header(s->w, "origin", origin);
	if (!rc)
		rc = ev_writer_header(s->w, "producer", "coll-expand");
	return rc;
}

static int one_input(struct state *s, const char *path)
{
	ev_reader *r;
	struct opts *o = s->o;
	int rc = ev_reader_open(&r, path, s->st, s->meta);
	if (rc)
		return ev_cli_file_error(&o->cli, path, rc);
	s->fname = ev_reader_name(r);
	struct ev_rec rec;
	int status = 0;
	uint64_t nread = 0;
	while ((rc = ev_read(r, &rec)) > 0) {
		int kind = rc;
		if ((rc = start_output(s, r)) != EV_OK) {
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
			break;
		}
		if (kind == EV_TEXT) {
			/* metadata passes through (ev_write_text drops duplicates) */
			const char *line;
			size_t len;
			ev_reader_text(r, &line, &len);
			if ((rc = ev_write_text(s->w, line, len)) != EV_OK) {
				status = ev_cli_file_error(&o->cli, o->cli.output, rc);
				break;
			}
			continue;
		}
		if (s->regime == REG_AUTO) {
			/* Metadata comes before the first record. */
			const char *v = ev_meta_get(s->meta, "nccl_version");
			if (!v || parse_version(v, &s->regime))
				s->regime = REG_C;
		}
		nread = ev_reader_recno(r);
		if (rec.ts < s->last_ts) {
			status = ev_cli_error(&o->cli, "%s: record %llu: out of order (ts %lld after %lld); sort with ev-merge --sort",
			                      s->fname, (unsigned long long)nread, (long long)rec.ts, (long long)s->last_ts);
			break;
		}
		s->last_ts = rec.ts;
		if (rec.type == EV_CHAN && s->have_pend && rec.rank == s->pend.rank && rec.seq == s->pend.seq &&
		    rec.comm == s->pend.comm && rec.ts == s->pend.ts) {
			if (s->nchan < MAXCH)
				s->chan[s->nchan++] = rec;
			continue;
		}
		if ((status = flush_pending(s)) != 0)
			break;
		struct rank_st *rk = rank_get(s, rec.rank);
		if (!rk) {
			status = ev_cli_error(&o->cli, "out of memory");
			break;
		}
		if (!rk->used) {
			rk->used = 1;
			rk->first_ts = rec.ts;
		}
		if (rec.type == EV_COLL || rec.type == EV_P2P) {
			s->pend = rec;
			s->have_pend = 1;
			s->pend_recno = nread;
			s->nchan = 0;
			continue;
		}
		if (rec.type == EV_CHAN)
			continue; /* a CHAN without its COLL */
		if (rec.type == EV_DEP) {
			s->stats.dropped_deps++;
			continue;
		}
		if (is_kernel_compute(&rec) && o->compute == COMP_KERNELS) {
			rk->kernel_ns += rec.dur;
			for (size_t i = 0; i < rk->nchains; i++) {
				struct chain *ch = &rk->chains[i];
				int64_t from = ch->have_prev && ch->prev_end > rec.ts ? ch->prev_end : rec.ts;
				int64_t end = ev_rec_end(&rec);
				if (end > from)
					ch->kernel_ns += (uint64_t)(end - from);
			}
		}
		if (o->only_comm)
			continue;
		const char *line;
		size_t len;
		ev_reader_record_line(r, &line, &len);
		rc = line ? ev_write_escaped(s->w, &rec, line, len) : ev_write(s->w, &rec);
		if (rc) {
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
			break;
		}
		if ((nread & 0xFFFF) == 0)
			ev_cli_progress(&o->cli, nread, 0);
	}
	if (!status && rc < 0)
		status = ev_cli_reader_error(&o->cli, r, rc);
	if (!status)
		status = flush_pending(s);
	ev_reader_close(r);
	return status;
}

static int run(struct opts *o)
{
	struct state s;
	int status = 0, rc;
	memset(&s, 0, sizeof s);
	s.o = o;
	s.rng = o->seed * 0x9E3779B97F4A7C15ull + 0x1234567;
	if (!s.rng)
		s.rng = 1;
	ev_map_init(&s.comm_ix);
	ev_map_init(&s.tagc);
	s.st = ev_strtab_new();
	s.meta = ev_meta_new();
	s.last_ts = INT64_MIN;
	if (!s.st || !s.meta) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	if (o->lat_path && (status = lat_load(o, &s.lat, o->lat_path)) != 0)
		goto done;
	if (ev_cli_check_binary_out(&o->cli)) {
		status = 1;
		goto done;
	}
	if ((rc = ev_writer_open(&s.w, o->cli.output, s.st)) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	s.regime = o->regime;
	for (int i = 0; i < o->ninputs && !status; i++)
		status = one_input(&s, o->inputs[i]);
	if (!status) {
		uint64_t partial = 0;
		for (size_t i = 0; i < s.ncomms; i++)
			for (uint32_t k = 0; k < s.comms[i]->wcap; k++)
				partial += s.comms[i]->win[k].used;
		if (partial)
			ev_cli_warn(&o->cli, "%llu collectives were seen on fewer ranks than their communicator has "
			            "(a partial trace?): their messages have no partner", (unsigned long long)partial);
		if (s.stats.skipped)
			ev_cli_warn(&o->cli, "%llu collectives skipped (--lenient)", (unsigned long long)s.stats.skipped);
		ev_cli_progress_done(&o->cli);
		rc = ev_writer_close(s.w);
		s.w = NULL;
		if (rc)
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
done:
	ev_writer_abort(s.w);
	lat_free(&s.lat);
	for (size_t i = 0; i < s.ncomms; i++)
		comm_free(s.comms[i]);
	free(s.comms);
	for (size_t i = 0; i < s.nranks; i++) {
		for (size_t k = 0; k < s.ranks[i].nchains; k++)
			free(s.ranks[i].chains[k].tails);
		free(s.ranks[i].chains);
	}
	free(s.ranks);
	for (size_t i = 0; i < s.nnodes; i++)
		free(s.nodes[i]);
	free(s.nodes);
	ev_map_free(&s.comm_ix);
	ev_map_free(&s.tagc);
	ev_meta_free(s.meta);
	ev_strtab_free(s.st);
	return status;
}

/* ------------------------------------------------------------------ */
/* NCCL_ALGO / NCCL_PROTO style lists.                                 */

static int algo_word(const char *w, unsigned *v)
{
	static const struct { const char *n; unsigned v; } t[] = {
		{ "ring", EV_ALGO_RING }, { "tree", EV_ALGO_TREE }, { "nvls", EV_ALGO_NVLS },
		{ "nvlstree", EV_ALGO_NVLS_TREE }, { "nvls_tree", EV_ALGO_NVLS_TREE },
		{ "collnetdirect", EV_ALGO_COLLNET_DIRECT }, { "collnet_direct", EV_ALGO_COLLNET_DIRECT },
		{ "collnetchain", EV_ALGO_COLLNET_CHAIN }, { "collnet_chain", EV_ALGO_COLLNET_CHAIN },
		{ "pat", EV_ALGO_PAT },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcasecmp(w, t[i].n) == 0) {
			*v = t[i].v;
			return 0;
		}
	return -1;
}

static int proto_word(const char *w, unsigned *v)
{
	if (ev_proto_parse(w, v) || *v == 0 || *v > 3)
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
			if (ev_coll_parse(sec, &cv) || cv >= 14) {
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
		for (int cidx = 0; cidx < 14 && !rc; cidx++)
			if (only < 0 || cidx == only)
				mask[cidx] = neg ? mask[cidx] & ~m : m;
	}
	free(copy);
	return rc;
}

int main(int argc, char **argv)
{
	enum { O_NCCL = 256, O_NCH, O_NT, O_PRESET, O_RPN, O_INTRA, O_IBW, O_COMP, O_MERGE, O_ONLY, O_KEEP, O_LEN,
	       O_JIT, O_TP };
	static const struct option longopts[] = {
		EV_CLI_COMMON_LONG,
		{ "lat", required_argument, NULL, 'l' },
		{ "algo", required_argument, NULL, 'a' },
		{ "proto", required_argument, NULL, 'p' },
		{ "nccl-version", required_argument, NULL, O_NCCL },
		{ "nchannels", required_argument, NULL, O_NCH },
		{ "nthreads", required_argument, NULL, O_NT },
		{ "preset", required_argument, NULL, O_PRESET },
		{ "ranks-per-node", required_argument, NULL, O_RPN },
		{ "intra", required_argument, NULL, O_INTRA },
		{ "intra-bw", required_argument, NULL, O_IBW },
		{ "compute", required_argument, NULL, O_COMP },
		{ "merge-streams", no_argument, NULL, O_MERGE },
		{ "only-comm", no_argument, NULL, O_ONLY },
		{ "keep-coll", no_argument, NULL, O_KEEP },
		{ "lenient", no_argument, NULL, O_LEN },
		{ "jitter", required_argument, NULL, O_JIT },
		{ "trace-params", required_argument, NULL, O_TP },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	int c;
	uint32_t u;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "coll-expand");
	ev_cli_cleanup_on_signal(NULL);
	o.preset = &presets[0];
	o.intra_bw = 300.0;
	o.trace_params = 1;
	for (int i = 0; i < 14; i++) {
		o.algo_mask[i] = (1u << EV_ALGO_RING) | (1u << EV_ALGO_TREE);
		o.proto_mask[i] = (1u << EV_PROTO_LL) | (1u << EV_PROTO_LL128) | (1u << EV_PROTO_SIMPLE);
	}
	while ((c = getopt_long(argc, argv, EV_CLI_COMMON_SHORT "l:a:p:", longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o.cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o.cli, 0);
		default: break;
		}
		switch (c) {
		case 'l': o.lat_path = optarg; break;
		case 'a':
			if (parse_list(optarg, o.algo_mask, algo_word))
				return ev_cli_usage_error(&o.cli, "--algo: expected a list like ring,tree or ^tree, got '%s'", optarg);
			o.algo_given = 1;
			break;
		case 'p':
			if (parse_list(optarg, o.proto_mask, proto_word))
				return ev_cli_usage_error(&o.cli, "--proto: expected a list like ll,ll128,simple, got '%s'", optarg);
			o.proto_given = 1;
			break;
		case O_NCCL:
			if (parse_version(optarg, &o.regime))
				return ev_cli_usage_error(&o.cli, "--nccl-version: expected a version like 2.22.3, got '%s'", optarg);
			o.version = optarg;
			break;
		case O_NCH:
			if (ev_parse_u32(optarg, &u) || u == 0 || u > MAXCH)
				return ev_cli_usage_error(&o.cli, "--nchannels: expected 1..64, got '%s'", optarg);
			o.nchannels = u;
			break;
		case O_NT:
			if (ev_parse_u32(optarg, &u) || u == 0 || u > 1024)
				return ev_cli_usage_error(&o.cli, "--nthreads: expected 1..1024, got '%s'", optarg);
			o.nthreads = u;
			break;
		case O_PRESET: {
			o.preset = NULL;
			for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
				if (strcasecmp(optarg, presets[i].name) == 0)
					o.preset = &presets[i];
			if (!o.preset)
				return ev_cli_usage_error(&o.cli, "--preset: unknown system '%s' (h100, a100, b200, pcie)", optarg);
			break;
		}
		case O_RPN:
			if (ev_parse_u32(optarg, &u) || u == 0)
				return ev_cli_usage_error(&o.cli, "--ranks-per-node: expected a positive number, got '%s'", optarg);
			o.ranks_per_node = u;
			break;
		case O_INTRA:
			if (strcmp(optarg, "calc") == 0)
				o.intra_send = 0;
			else if (strcmp(optarg, "send") == 0)
				o.intra_send = 1;
			else
				return ev_cli_usage_error(&o.cli, "--intra: expected calc or send, got '%s'", optarg);
			break;
		case O_IBW:
			if (ev_parse_double(optarg, &o.intra_bw) || o.intra_bw <= 0)
				return ev_cli_usage_error(&o.cli, "--intra-bw: expected GB/s > 0, got '%s'", optarg);
			break;
		case O_COMP:
			if (strcmp(optarg, "gaps") == 0)
				o.compute = COMP_GAPS;
			else if (strcmp(optarg, "kernels") == 0)
				o.compute = COMP_KERNELS;
			else if (strcmp(optarg, "none") == 0)
				o.compute = COMP_NONE;
			else
				return ev_cli_usage_error(&o.cli, "--compute: expected gaps, kernels or none, got '%s'", optarg);
			break;
		case O_MERGE: o.merge_streams = 1; break;
		case O_ONLY: o.only_comm = 1; break;
		case O_KEEP: o.keep_coll = 1; break;
		case O_LEN: o.lenient = 1; break;
		case O_JIT:
			if (ev_parse_u64(optarg, &o.seed))
				return ev_cli_usage_error(&o.cli, "--jitter: expected a seed (unsigned number), got '%s'", optarg);
			o.have_jitter = 1;
			break;
		case O_TP:
			if (strcmp(optarg, "no") == 0)
				o.trace_params = 0;
			else if (strcmp(optarg, "yes") == 0)
				o.trace_params = 1;
			else
				return ev_cli_usage_error(&o.cli, "--trace-params: expected yes or no, got '%s'", optarg);
			break;
		default:
			return ev_cli_try_help(&o.cli);
		}
	}
	static char *stdin_only[] = { (char *)"-" };
	o.inputs = optind < argc ? argv + optind : stdin_only;
	o.ninputs = optind < argc ? argc - optind : 1;
	return ev_cli_finish(&o.cli, run(&o));
}
