/* SPDX-License-Identifier: MIT */
/*
 * ev2goal - write GOAL schedules (LogGOPSim text or binary) from an ev stream
 *
 * Reads coll-expand output (SEND, RECV and CALC records with op ids and DEP
 * edges), which is in time order across ranks, and writes the rank-grouped
 * GOAL text or txt2bin's binary layout.  Each rank's part is spooled to a
 * temporary file as the records arrive and the parts are joined at the end,
 * so memory grows with ranks, lanes and open messages, never with the
 * number of ops: an op's id is remembered only inside a sliding window.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ev.h"

#define GOAL_MAGIC 4223u
#define NODE_BYTES 39      /* one op in the binary layout */
#define NONE32 0xFFFFFFFFu
#define MAX_RANKS (1u << 20) /* a larger rank is refused: the table is dense */
#define MAX_NODES ((1u << 29) - 1)

enum nic_policy { NIC_ZERO, NIC_CHANNEL, NIC_RAIL };
enum cpu_policy { CPU_DENSE, CPU_LANE };

struct range { uint32_t lo, hi; };

struct opts {
	struct ev_cli cli;
	int binary, check, keep_sync;
	int stats;
	const char *stats_file;
	const char *per_rank_dir;
	int concat, delete_parts;
	const char *join_dir;
	enum nic_policy nic;
	uint32_t nic_mod;          /* 0: no modulus */
	enum cpu_policy cpu;
	uint32_t num_ranks;        /* 0: from the data */
	uint32_t ranks_per_node;   /* 0: from #rank metadata */
	uint32_t window;
	const char *tmpdir;
	struct range *sel;         /* --ranks: emit only these */
	size_t nsel;
	uint32_t sel_k, sel_n;     /* --ranks=K%N: ranks r with r % N == K */
	char **inputs;
	int ninputs;
};

static void usage(FILE *f)
{
	fputs(
"Usage: ev2goal [options] [FILE...]\n"
"       ev2goal --join=DIR [-o FILE] [--binary] [--delete-parts]\n"
"Write a GOAL schedule for LogGOPSim from an ev stream of SEND, RECV and CALC\n"
"records with DEP edges (coll-expand output): `num_ranks N`, then one\n"
"`rank r { ... }` block per rank in order, every label defined before a\n"
"requires line names it.  FILE defaults to standard input; several FILEs are\n"
"read as one stream; gzip input is detected.  Other record types are ignored.\n"
"\n"
"Output:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -b, --binary           write LogGOPSim's binary schedule (txt2bin's layout,\n"
"                         for LogGOPSim -f) instead of text\n"
"  -p, --per-rank=DIR     write the rank parts DIR/rank_<r>.goal (.bin with\n"
"                         --binary) instead of one schedule\n"
"  -c, --concat           with --per-rank: also join the parts into -o\n"
"  -r, --delete-parts     after joining, delete the parts (implies --concat)\n"
"      --join=DIR         only join the parts rank_0 .. rank_<N-1> in DIR into\n"
"                         -o with the num_ranks header (or binary header)\n"
"      --ranks=LIST       emit only these ranks (e.g. 0-7,12, or K%N: the ranks\n"
"                         r with r mod N = K), for parallel workers writing\n"
"                         parts into one --per-rank DIR\n"
"      --num-ranks=N      num_ranks of the schedule [max rank or peer + 1]\n"
"\n"
"Lanes and NICs:\n"
"      --cpu=MODE         dense: lanes (record stream = channel + stream\n"
"                         offset) numbered 0, 1, ... in order of first\n"
"                         appearance, the same on every rank; lane: the\n"
"                         record's stream as is [dense]\n"
"      --nic=POLICY       0: every op on NIC 0 (ATLAHS); channel[:N]: NIC =\n"
"                         channel (mod N); rail[:N]: NIC = the rank's GPU\n"
"                         index inside its node (mod N) [0]\n"
"      --ranks-per-node=N node of a rank for --nic=rail [#rank node=/host=]\n"
"\n"
"Checks and reports:\n"
"      --no-check         skip the send/recv matching check\n"
"      --keep-sync        keep every zero-length CALC (by default one with at\n"
"                         most one dependency is folded into its dependents)\n"
"  -s, --stats[=FILE]     print counts (ops by type, lines against an\n"
"                         ATLAHS-style emitter, bytes per rank, message-size\n"
"                         histogram) to FILE [standard error]\n"
"  -w, --window=N         ops per rank kept for dependencies to refer to; the\n"
"                         window grows to twice the longest dependency seen\n"
"                         [4096]\n"
"  -T, --tmpdir=DIR       where rank parts are spooled [$TMPDIR or /tmp]\n"
"  -f, --force            write binary output to a terminal\n"
"  -q, --quiet            no warnings\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Always checked (exit 1, naming the record): op ids increasing per rank, a\n"
"DEP right after its op, no dependency on an undefined or later op, cpu and\n"
"nic below 256.  Unless --no-check: every send has a recv with the same\n"
"(source, destination, tag, size), in the same FIFO order.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  data or I/O error (bad or truncated input, unmatched message, dangling\n"
"     dependency, field out of range, write error)\n"
"  2  usage error\n"
"\n"
"Example:\n"
"  nsys2ev run/*.sqlite | coll-expand --lat lat.tsv --only-comm | ev2goal -s -o job.goal\n"
"  ev2goal --binary -o job.bin sched.ev && LogGOPSim -f job.bin\n",
	f);
}

/* ---- spool files: a buffered append-only file per rank part ---------- */

struct spool {
	char *path;
	char *buf;
	size_t len, cap;
	int fd;
	uint64_t bytes;
};

static int open_fds, max_open_fds = 256;
/* Paths to remove if a signal ends the process (read by the handler). */
static char **volatile sig_paths;
static volatile size_t sig_npaths;
static char *sig_dir;

static void remove_spools_signal(void)
{
	char **p = sig_paths;
	size_t n = sig_npaths;
	for (size_t i = 0; p && i < n; i++)
		if (p[i])
			unlink(p[i]);
	if (sig_dir)
		rmdir(sig_dir);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int spool_flush(struct spool *s)
{
	if (!s->len)
		return 0;
	if (s->fd < 0) {
		s->fd = open(s->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (s->fd < 0)
			return -1;
		open_fds++;
	}
	if (write_all(s->fd, s->buf, s->len))
		return -1;
	s->bytes += s->len;
	s->len = 0;
	/* Many ranks: keep only so many descriptors open. */
	if (open_fds > max_open_fds) {
		close(s->fd);
		s->fd = -1;
		open_fds--;
	}
	return 0;
}

/* Append n bytes (n is at most a line or a node, far below the buffer). */
static inline int spool_put(struct spool *s, const void *p, size_t n)
{
	if (s->len + n > s->cap && spool_flush(s))
		return -1;
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return 0;
}

static int spool_close(struct spool *s)
{
	int rc = spool_flush(s);
	if (s->fd >= 0) {
		if (close(s->fd) && !rc)
			rc = -1;
		s->fd = -1;
		open_fds--;
	}
	return rc;
}

static int spool_init(struct spool *s, const char *dir, const char *name, uint32_t rank, size_t cap)
{
	memset(s, 0, sizeof *s);
	s->fd = -1;
	size_t n = strlen(dir) + strlen(name) + 32;
	s->path = malloc(n);
	s->buf = malloc(cap);
	if (!s->path || !s->buf)
		return -1;
	snprintf(s->path, n, "%s/%s%u", dir, name, rank);
	s->cap = cap;
	return 0;
}

static void spool_free(struct spool *s, int remove)
{
	if (s->fd >= 0) {
		close(s->fd);
		open_fds--;
		s->fd = -1;
	}
	if (remove && s->path)
		unlink(s->path);
	free(s->path);
	free(s->buf);
	s->path = s->buf = NULL;
}

/* Copy a whole file into out. */
static int copy_file(const char *path, ev_output *out, int *werr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[1 << 16];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		int rc = ev_output_write(out, buf, (size_t)n);
		if (rc) {
			*werr = rc;
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

/* ---- message matching ---------------------------------------------- */

/* Open messages per (source, destination, tag): a FIFO of sizes that are
 * waiting for their other side.  Entries are removed when they balance, so
 * the table holds only messages in flight. */
struct mkey { uint32_t src, dst, tag; };
struct mslot {
	struct mkey k;
	int used;
	int sends;             /* 1: the queue holds sends, 0: receives */
	uint32_t head, n, cap; /* FIFO in q (inline while cap <= 2) */
	uint64_t inl[2];
	uint64_t *q;
	uint64_t first_rec;    /* record number of the oldest queued op */
	uint32_t first_rank;
};
struct mtable { struct mslot *s; size_t cap, len; uint64_t open_max; };

static uint64_t mhash(const struct mkey *k)
{
	uint64_t h = (uint64_t)k->src * 0x9E3779B97F4A7C15ull ^ (uint64_t)k->dst * 0xC2B2AE3D27D4EB4Full ^
	             (uint64_t)k->tag * 0x165667B19E3779F9ull;
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	return h ^ (h >> 32);
}

static int mgrow(struct mtable *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1024;
	struct mslot *ns = calloc(ncap, sizeof *ns);
	if (!ns)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->s[i].used)
			continue;
		size_t j = mhash(&t->s[i].k) & (ncap - 1);
		while (ns[j].used)
			j = (j + 1) & (ncap - 1);
		ns[j] = t->s[i];
	}
	free(t->s);
	t->s = ns;
	t->cap = ncap;
	return 0;
}

static struct mslot *mfind(struct mtable *t, const struct mkey *k, int create)
{
	if (create && (t->len + 1) * 4 > t->cap * 3 && mgrow(t))
		return NULL;
	if (!t->cap)
		return NULL;
	size_t j = mhash(k) & (t->cap - 1);
	while (t->s[j].used) {
		if (t->s[j].k.src == k->src && t->s[j].k.dst == k->dst && t->s[j].k.tag == k->tag)
			return &t->s[j];
		j = (j + 1) & (t->cap - 1);
	}
	if (!create)
		return NULL;
	memset(&t->s[j], 0, sizeof t->s[j]);
	t->s[j].used = 1;
	t->s[j].k = *k;
	t->s[j].cap = 2;
	t->len++;
	return &t->s[j];
}

/* Remove slot e by backward-shift deletion (no tombstones). */
static void mremove(struct mtable *t, struct mslot *e)
{
	size_t i = (size_t)(e - t->s);
	if (t->s[i].q)
		free(t->s[i].q);
	t->s[i].used = 0;
	t->len--;
	size_t j = i;
	for (;;) {
		j = (j + 1) & (t->cap - 1);
		if (!t->s[j].used)
			return;
		size_t h = mhash(&t->s[j].k) & (t->cap - 1);
		/* Can the entry at j move to the hole at i? */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			t->s[i] = t->s[j];
			t->s[j].used = 0;
			t->s[j].q = NULL;
			i = j;
		}
	}
}

static uint64_t *mq(struct mslot *e) { return e->q ? e->q : e->inl; }

static int mpush(struct mslot *e, uint64_t size)
{
	if (e->n == e->cap) {
		uint32_t ncap = e->cap * 2;
		uint64_t *nq = malloc(ncap * sizeof *nq);
		if (!nq)
			return -1;
		uint64_t *old = mq(e);
		for (uint32_t i = 0; i < e->n; i++)
			nq[i] = old[(e->head + i) % e->cap];
		free(e->q);
		e->q = nq;
		e->head = 0;
		e->cap = ncap;
	}
	mq(e)[(e->head + e->n) % e->cap] = size;
	e->n++;
	return 0;
}

static uint64_t mpop(struct mslot *e)
{
	uint64_t v = mq(e)[e->head];
	e->head = (e->head + 1) % e->cap;
	e->n--;
	return v;
}

/* ---- per-rank state ------------------------------------------------- */

/* Id window entry: kind in the top 3 bits, node index below. */
#define K_UNDEF 0u
#define K_REAL (1u << 29)
#define K_ALIAS (2u << 29)
#define K_NONE (3u << 29)
#define K_MASK (3u << 29)
#define K_IDX ((1u << 29) - 1)

struct nslot { uint32_t rh, rt, ih, it; }; /* successor lists (binary) */

struct dep { uint32_t target; int ireq; };

struct rankst {
	int used, emit;
	struct spool text, nodes, counts, app, roots;
	/* Id window: ids (last_id - wcap, last_id] live in map[id & (wcap-1)]. */
	uint32_t *map;
	uint32_t wcap;
	uint32_t first_id, last_id; /* first id still in the window */
	uint32_t min_id;            /* first id of the rank */
	int have_id;
	/* Binary: successor lists of nodes [node_lo, next_node). */
	struct nslot *ns;
	uint32_t node_lo, next_node;
	uint64_t nroots, nedges, app_next;
	/* The op being collected (its DEP records follow it). */
	int pending;
	struct ev_rec pend;
	uint64_t pend_recno;
	struct dep *deps;
	size_t ndeps, capdeps;
	/* Stats. */
	uint64_t nsend, nrecv, ncalc, nreq, nireq, bytes_sent, elided, dups;
	uint64_t in_ops, in_deps;
	int rail_known;
	uint32_t rail;
	/* ATLAHS-style estimate: the current group of ops. */
	int g_open;
	uint64_t g_comm;
	uint32_t g_seq, g_chan, g_step, g_first;
	uint32_t g_n, g_roots;
	unsigned char *g_succ;
	size_t g_cap;
	uint64_t atlahs_extra;
};

struct edgepool { uint32_t *succ, *next; uint32_t cap, len, free; };

struct state {
	struct opts *o;
	const char *fname;     /* current input, for messages */
	uint64_t recno;
	ev_meta *meta;
	struct rankst *r;
	uint32_t nr, capr;
	uint32_t max_peer_plus1;
	struct mtable mt;
	struct ev_map lanes;   /* lane + 1 -> cpu */
	uint32_t nlanes;
	uint8_t max_cpu, max_nic;
	struct edgepool ep;
	char *dir;             /* spool directory */
	int own_dir;           /* created by us (removed at the end) */
	char **paths;          /* every spool path (for signal cleanup) */
	size_t npaths, cappaths;
	uint64_t ignored;
	uint64_t hist[66];
	uint64_t lines;
	uint64_t max_dist;     /* longest dependency seen (ops back) */
};

static int in_sel(const struct opts *o, uint32_t r)
{
	if (o->sel_n)
		return r % o->sel_n == o->sel_k;
	if (!o->nsel)
		return 1;
	for (size_t i = 0; i < o->nsel; i++)
		if (r >= o->sel[i].lo && r <= o->sel[i].hi)
			return 1;
	return 0;
}

static int fail(struct state *s, const char *fmt, ...) EV_PRINTF(2, 3);
static int fail(struct state *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ev_cli_error(&s->o->cli, "%s: record %llu: %s", s->fname, (unsigned long long)s->recno, msg);
}

static int fail_rec(struct state *s, uint64_t recno, const char *fmt, ...) EV_PRINTF(3, 4);
static int fail_rec(struct state *s, uint64_t recno, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ev_cli_error(&s->o->cli, "%s: record %llu: %s", s->fname, (unsigned long long)recno, msg);
}

static int add_path(struct state *s, char *p)
{
	if (s->npaths == s->cappaths) {
		size_t nc = s->cappaths ? s->cappaths * 2 : 256;
		char **np = malloc(nc * sizeof *np);
		if (!np)
			return -1;
		if (s->npaths)
			memcpy(np, s->paths, s->npaths * sizeof *np);
		/* Publish the new array before freeing the old one. */
		char **old = s->paths;
		sig_paths = np;
		s->paths = np;
		s->cappaths = nc;
		free(old);
	}
	s->paths[s->npaths] = p;
	s->npaths++;
	sig_npaths = s->npaths;
	return 0;
}

static struct rankst *get_rank(struct state *s, uint32_t rank)
{
	if (rank >= MAX_RANKS)
		return NULL;
	if (rank >= s->capr) {
		uint32_t nc = s->capr ? s->capr : 64;
		while (nc <= rank)
			nc *= 2;
		struct rankst *nr = realloc(s->r, nc * sizeof *nr);
		if (!nr)
			return NULL;
		memset(nr + s->capr, 0, (nc - s->capr) * sizeof *nr);
		s->r = nr;
		s->capr = nc;
	}
	if (rank >= s->nr)
		s->nr = rank + 1;
	struct rankst *rs = &s->r[rank];
	if (!rs->used) {
		rs->used = 1;
		rs->emit = in_sel(s->o, rank);
		rs->wcap = 1024 < s->o->window ? 1024 : s->o->window;
		rs->map = calloc(rs->wcap, sizeof *rs->map);
		if (!rs->map)
			return NULL;
		if (s->o->binary) {
			rs->ns = malloc(rs->wcap * sizeof *rs->ns);
			if (!rs->ns)
				return NULL;
		}
		if (rs->emit) {
			size_t big = s->nr > 256 ? 8192 : 65536;
			if (s->o->binary) {
				if (spool_init(&rs->nodes, s->dir, ".nodes.", rank, big) ||
				    spool_init(&rs->counts, s->dir, ".counts.", rank, big / 4) ||
				    spool_init(&rs->app, s->dir, ".app.", rank, big / 2) ||
				    spool_init(&rs->roots, s->dir, ".roots.", rank, 1024) ||
				    add_path(s, rs->nodes.path) || add_path(s, rs->counts.path) ||
				    add_path(s, rs->app.path) || add_path(s, rs->roots.path))
					return NULL;
			} else {
				if (spool_init(&rs->text, s->dir, ".rank_", rank, big) || add_path(s, rs->text.path))
					return NULL;
				char head[48];
				int n = snprintf(head, sizeof head, "rank %u {\n", rank);
				if (spool_put(&rs->text, head, (size_t)n))
					return NULL;
			}
		}
	}
	return rs;
}

/* ---- number formatting ---------------------------------------------- */

static char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_s(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

/* ---- the id window ---------------------------------------------------- */

/* Grow the window of a rank (doubling, up to --window). */
static int window_grow(struct state *s, struct rankst *rs)
{
	uint32_t nc = rs->wcap * 2;
	uint32_t *nm = calloc(nc, sizeof *nm);
	struct nslot *nn = NULL;
	if (!nm)
		return -1;
	if (s->o->binary && !(nn = malloc(nc * sizeof *nn))) {
		free(nm);
		return -1;
	}
	if (rs->have_id)
		for (uint64_t id = rs->first_id; id <= rs->last_id; id++)
			nm[id & (nc - 1)] = rs->map[id & (rs->wcap - 1)];
	if (nn)
		for (uint32_t n = rs->node_lo; n < rs->next_node; n++)
			nn[n & (nc - 1)] = rs->ns[n & (rs->wcap - 1)];
	free(rs->map);
	free(rs->ns);
	rs->map = nm;
	rs->ns = nn;
	rs->wcap = nc;
	return 0;
}

static int edge_add(struct state *s, struct nslot *n, uint32_t succ, int ireq)
{
	struct edgepool *p = &s->ep;
	uint32_t e;
	if (p->free != NONE32) {
		e = p->free;
		p->free = p->next[e];
	} else {
		if (p->len == p->cap) {
			uint32_t nc = p->cap ? p->cap * 2 : 4096;
			uint32_t *a = realloc(p->succ, nc * sizeof *a);
			if (!a)
				return -1;
			p->succ = a;
			uint32_t *b = realloc(p->next, nc * sizeof *b);
			if (!b)
				return -1;
			p->next = b;
			p->cap = nc;
		}
		e = p->len++;
	}
	p->succ[e] = succ;
	p->next[e] = NONE32;
	uint32_t *h = ireq ? &n->ih : &n->rh, *t = ireq ? &n->it : &n->rt;
	if (*h == NONE32)
		*h = e;
	else
		p->next[*t] = e;
	*t = e;
	return 0;
}

/* Write one list to the appendix spool and free its edges; returns the count. */
static int64_t edge_drain(struct state *s, struct rankst *rs, uint32_t h)
{
	struct edgepool *p = &s->ep;
	int64_t n = 0;
	unsigned char b[4];
	while (h != NONE32) {
		uint32_t nx = p->next[h];
		ev_put32(b, p->succ[h]);
		if (rs->emit && spool_put(&rs->app, b, 4))
			return -1;
		p->next[h] = p->free;
		p->free = h;
		h = nx;
		n++;
	}
	return n;
}

/* Binary: node n leaves the window; its successor lists are final. */
static int node_finish(struct state *s, struct rankst *rs)
{
	uint32_t n = rs->node_lo;
	struct nslot *sl = &rs->ns[n & (rs->wcap - 1)];
	int64_t a = edge_drain(s, rs, sl->rh);
	int64_t b = a < 0 ? -1 : edge_drain(s, rs, sl->ih);
	if (b < 0)
		return -1;
	unsigned char c[8];
	ev_put32(c, (uint32_t)a);
	ev_put32(c + 4, (uint32_t)b);
	if (rs->emit && spool_put(&rs->counts, c, 8))
		return -1;
	rs->node_lo++;
	return 0;
}

/* Drop the oldest id of the window (finishing its node in binary mode). */
static int window_evict(struct state *s, struct rankst *rs)
{
	uint32_t v = rs->map[rs->first_id & (rs->wcap - 1)];
	rs->map[rs->first_id & (rs->wcap - 1)] = K_UNDEF;
	rs->first_id++;
	if (s->o->binary && (v & K_MASK) == K_REAL) {
		if ((v & K_IDX) != rs->node_lo)
			return -2;
		return node_finish(s, rs);
	}
	return 0;
}

/* Make room for id in the window (ids strictly increase). */
static int window_advance(struct state *s, struct rankst *rs, uint32_t id)
{
	int rc;
	if (!rs->have_id) {
		rs->first_id = rs->last_id = rs->min_id = id;
		rs->have_id = 1;
		rs->map[id & (rs->wcap - 1)] = K_UNDEF;
		return 0;
	}
	/* The window covers twice the longest dependency seen so far (at least
	 * --window ops): coll-expand's dependencies reach back at most to the
	 * start of the collective, and that distance grows one op at a time. */
	uint64_t want = s->o->window;
	while (want < 2 * s->max_dist && want < (1u << 28))
		want *= 2;
	while ((uint64_t)id - rs->first_id + 1 > rs->wcap && rs->wcap < want)
		if (window_grow(s, rs))
			return -1;
	if ((uint64_t)id - rs->last_id >= rs->wcap) {
		/* A jump past the whole window: everything in it leaves. */
		while (rs->first_id <= rs->last_id)
			if ((rc = window_evict(s, rs)))
				return rc;
		rs->first_id = id - rs->wcap + 1;
	} else {
		while ((uint64_t)id - rs->first_id + 1 > rs->wcap)
			if ((rc = window_evict(s, rs)))
				return rc;
	}
	/* Ids skipped over stay undefined (evicted slots are cleared). */
	rs->map[id & (rs->wcap - 1)] = K_UNDEF;
	rs->last_id = id;
	return 0;
}

/* ---- lanes and NICs ------------------------------------------------- */

static int lane_cpu(struct state *s, uint32_t lane, uint32_t *cpu)
{
	if (s->o->cpu == CPU_LANE) {
		*cpu = lane;
		return 0;
	}
	uint64_t *v = ev_map_get(&s->lanes, (uint64_t)lane + 1);
	if (v) {
		*cpu = (uint32_t)*v;
		return 0;
	}
	*cpu = s->nlanes++;
	return ev_map_put(&s->lanes, (uint64_t)lane + 1, *cpu) ? -1 : 0;
}

static const char *rank_node(const ev_meta *m, uint32_t r)
{
	const struct ev_rank_info *ri = ev_meta_rank(m, r);
	if (!ri)
		return NULL;
	const char *v = ev_kv_get(ri->kv, ri->nkv, "node");
	return v ? v : ev_kv_get(ri->kv, ri->nkv, "host");
}

/* GPU index of rank r inside its node: ranks of the node in rank order. */
static int rail_of(struct state *s, uint32_t r, uint32_t *rail)
{
	struct rankst *rs = &s->r[r];
	if (rs->rail_known) {
		*rail = rs->rail;
		return 0;
	}
	if (s->o->ranks_per_node) {
		rs->rail = r % s->o->ranks_per_node;
	} else {
		const char *node = rank_node(s->meta, r);
		if (!node)
			return -1;
		uint32_t k = 0;
		for (size_t i = 0; i < ev_meta_nrank(s->meta); i++) {
			const struct ev_rank_info *ri = ev_meta_rank_at(s->meta, i);
			const char *n2 = ri->rank < r ? rank_node(s->meta, ri->rank) : NULL;
			if (n2 && strcmp(n2, node) == 0)
				k++;
		}
		rs->rail = k;
	}
	rs->rail_known = 1;
	*rail = rs->rail;
	return 0;
}

/* ---- ATLAHS-style line estimate --------------------------------------- */

/* ATLAHS wraps the ops of every (collective, channel, step) in a parallel
 * group: two `calc 0` sentinels, a requires from each group root to the
 * start sentinel and from the end sentinel to each group tail.  Counted per
 * group of consecutive ops with the same key; inputs deps count as written. */
static void group_close(struct rankst *rs)
{
	if (!rs->g_open)
		return;
	uint32_t tails = 0;
	for (uint32_t i = 0; i < rs->g_n && i < rs->g_cap; i++)
		tails += !rs->g_succ[i];
	rs->atlahs_extra += 2 + rs->g_roots + tails;
	rs->g_open = 0;
}

static int group_op(struct rankst *rs, const struct ev_rec *op, const struct dep *deps, size_t nd)
{
	int grouped = op->type != EV_CALC || op->op == EV_CALC_REDUCE || op->op == EV_CALC_COPY ||
	              op->op == EV_CALC_INTRA;
	if (!grouped) {
		group_close(rs);
		return 0;
	}
	uint32_t step = op->type == EV_CALC ? rs->g_step : op->step;
	if (!rs->g_open || rs->g_comm != op->comm || rs->g_seq != op->seq || rs->g_chan != op->channel ||
	    rs->g_step != step) {
		group_close(rs);
		rs->g_open = 1;
		rs->g_comm = op->comm;
		rs->g_seq = op->seq;
		rs->g_chan = op->channel;
		rs->g_step = step;
		rs->g_first = op->id;
		rs->g_n = 0;
		rs->g_roots = 0;
	}
	uint32_t i = op->id - rs->g_first;
	if (i >= (1u << 20)) /* absurdly large group: stop tracking its tails */
		return 0;
	if (i >= rs->g_cap) {
		size_t nc = rs->g_cap ? rs->g_cap * 2 : 256;
		while (nc <= i)
			nc *= 2;
		unsigned char *ng = realloc(rs->g_succ, nc);
		if (!ng)
			return -1;
		rs->g_succ = ng;
		rs->g_cap = nc;
	}
	while (rs->g_n <= i)
		rs->g_succ[rs->g_n++] = 0;
	int in_group = 0;
	for (size_t k = 0; k < nd; k++)
		if (deps[k].target >= rs->g_first && deps[k].target - rs->g_first < rs->g_n) {
			rs->g_succ[deps[k].target - rs->g_first] = 1;
			in_group = 1;
		}
	if (!in_group)
		rs->g_roots++;
	return 0;
}

/* ---- ops ------------------------------------------------------------- */

static const char *type_word(unsigned t)
{
	return t == EV_SEND ? "send" : t == EV_RECV ? "recv" : "calc";
}

static int check_match(struct state *s, const struct ev_rec *op, uint64_t recno)
{
	struct mkey k;
	int is_send = op->type == EV_SEND;
	k.src = is_send ? op->rank : (uint32_t)op->peer;
	k.dst = is_send ? (uint32_t)op->peer : op->rank;
	k.tag = op->aux;
	struct mslot *e = mfind(&s->mt, &k, 1);
	if (!e)
		return ev_cli_error(&s->o->cli, "out of memory");
	if (e->n && e->sends != is_send) {
		uint64_t other = mpop(e);
		if (other != op->bytes)
			return fail_rec(s, recno,
			                "rank %u %s of %llu bytes %s rank %d tag %u is matched (FIFO) by a %s of %llu bytes",
			                op->rank, type_word(op->type), (unsigned long long)op->bytes,
			                is_send ? "to" : "from", op->peer, op->aux, is_send ? "recv" : "send",
			                (unsigned long long)other);
		if (!e->n)
			mremove(&s->mt, e);
		return 0;
	}
	if (!e->n) {
		e->sends = is_send;
		e->first_rec = recno;
		e->first_rank = op->rank;
	}
	if (mpush(e, op->bytes))
		return ev_cli_error(&s->o->cli, "out of memory");
	if (s->mt.len > s->mt.open_max)
		s->mt.open_max = s->mt.len;
	return 0;
}

static int emit_text(struct rankst *rs, const struct ev_rec *op, uint32_t node, uint32_t cpu,
                     uint32_t nic, const struct dep *deps, size_t nd)
{
	char line[160];
	char *p = line;
	*p++ = 'l';
	p = put_u64(p, node);
	p = put_s(p, ": ");
	if (op->type == EV_CALC) {
		p = put_s(p, "calc ");
		p = put_u64(p, op->dur);
		p = put_s(p, " cpu ");
		p = put_u64(p, cpu);
	} else {
		p = put_s(p, op->type == EV_SEND ? "send " : "recv ");
		p = put_u64(p, op->bytes);
		p = put_s(p, op->type == EV_SEND ? "b to " : "b from ");
		if (op->peer < 0)
			p = put_s(p, "-1");
		else
			p = put_u64(p, (uint32_t)op->peer);
		p = put_s(p, " tag ");
		p = put_u64(p, op->aux);
		p = put_s(p, " cpu ");
		p = put_u64(p, cpu);
		p = put_s(p, " nic ");
		p = put_u64(p, nic);
	}
	*p++ = '\n';
	if (spool_put(&rs->text, line, (size_t)(p - line)))
		return -1;
	for (size_t i = 0; i < nd; i++) {
		p = line;
		*p++ = 'l';
		p = put_u64(p, node);
		p = put_s(p, deps[i].ireq ? " irequires l" : " requires l");
		p = put_u64(p, deps[i].target);
		*p++ = '\n';
		if (spool_put(&rs->text, line, (size_t)(p - line)))
			return -1;
	}
	return 0;
}

static int emit_binary(struct state *s, struct rankst *rs, const struct ev_rec *op, uint32_t node, uint32_t cpu,
                       uint32_t nic, const struct dep *deps, size_t nd)
{
	struct nslot *sl = &rs->ns[node & (rs->wcap - 1)];
	sl->rh = sl->rt = sl->ih = sl->it = NONE32;
	if (!rs->emit) {
		rs->nedges += nd;
		return 0;
	}
	for (size_t i = 0; i < nd; i++) {
		struct nslot *ps = &rs->ns[deps[i].target & (rs->wcap - 1)];
		if (edge_add(s, ps, node, deps[i].ireq))
			return -1;
	}
	rs->nedges += nd;
	unsigned char b[NODE_BYTES];
	memset(b, 0, sizeof b);
	ev_put32(b, (uint32_t)nd);
	b[4] = op->type == EV_SEND ? 1 : op->type == EV_RECV ? 2 : 3;
	ev_put32(b + 5, op->type == EV_CALC ? 0 : op->peer < 0 ? NONE32 : (uint32_t)op->peer);
	ev_put64(b + 9, op->type == EV_CALC ? op->dur : op->bytes);
	ev_put32(b + 17, op->type == EV_CALC ? 0 : op->aux);
	b[21] = (unsigned char)cpu;
	b[22] = (unsigned char)nic;
	if (spool_put(&rs->nodes, b, NODE_BYTES))
		return -1;
	if (!nd) {
		unsigned char r[4];
		ev_put32(r, node);
		if (spool_put(&rs->roots, r, 4))
			return -1;
		rs->nroots++;
	}
	return 0;
}

static int io_fail(struct state *s, const char *path)
{
	return ev_cli_error(&s->o->cli, "%s: %s", path, strerror(errno));
}

/* The pending op of a rank has all its DEPs: resolve, check, write. */
static int flush_op(struct state *s, struct rankst *rs)
{
	if (!rs->pending)
		return 0;
	rs->pending = 0;
	const struct ev_rec *op = &rs->pend;
	uint64_t recno = rs->pend_recno;
	struct dep *d = rs->deps;
	size_t nd = rs->ndeps;
	if (group_op(rs, op, d, nd))
		return ev_cli_error(&s->o->cli, "out of memory");
	/* Resolve input ids to node indices. */
	size_t k = 0;
	for (size_t i = 0; i < nd; i++) {
		uint32_t t = d[i].target;
		if (t >= op->id)
			return fail_rec(s, recno, "rank %u op %u depends on op %u, which is not earlier", op->rank,
			                op->id, t);
		if (op->id - t > s->max_dist)
			s->max_dist = op->id - t;
		if (t < rs->min_id)
			return fail_rec(s, recno, "rank %u op %u depends on op %u, which is not defined (dangling dependency)",
			                op->rank, op->id, t);
		if (t < rs->first_id)
			return fail_rec(s, recno,
			                "rank %u op %u depends on op %u, %u ops back, which left the window of %u ops; raise --window",
			                op->rank, op->id, t, op->id - t, rs->wcap);
		uint32_t v = rs->map[t & (rs->wcap - 1)];
		switch (v & K_MASK) {
		case K_UNDEF:
			return fail_rec(s, recno, "rank %u op %u depends on op %u, which is not defined (dangling dependency)",
			                op->rank, op->id, t);
		case K_NONE:
			continue;
		case K_ALIAS:
			/* A folded zero-length calc ended when its dependency ended. */
			d[k].ireq = 0;
			break;
		default:
			break;
		}
		if ((v & K_IDX) < rs->node_lo && s->o->binary)
			return fail_rec(s, recno,
			                "rank %u op %u depends on op %u, %u ops back, which left the window of %u ops; raise --window",
			                op->rank, op->id, t, op->id - t, rs->wcap);
		d[k].target = v & K_IDX;
		if ((v & K_MASK) == K_REAL)
			d[k].ireq = d[i].ireq;
		k++;
	}
	/* Drop duplicates (a requires beats an irequires of the same op). */
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		size_t j;
		for (j = 0; j < m; j++)
			if (d[j].target == d[i].target)
				break;
		if (j < m) {
			if (!d[i].ireq)
				d[j].ireq = 0;
			rs->dups++;
			continue;
		}
		d[m++] = d[i];
	}
	nd = m;
	uint32_t slot = op->id & (rs->wcap - 1);
	if (op->type == EV_CALC && op->dur == 0 && !s->o->keep_sync && nd <= 1 && (nd == 0 || !d[0].ireq)) {
		rs->map[slot] = nd ? (K_ALIAS | d[0].target) : K_NONE;
		rs->elided++;
		return 0;
	}
	if (rs->next_node >= MAX_NODES)
		return fail_rec(s, recno, "rank %u has more than %u ops", op->rank, MAX_NODES);
	uint32_t node = rs->next_node++;
	rs->map[slot] = K_REAL | node;
	/* Lane, NIC, widths. */
	uint32_t cpu, nic = 0;
	if (lane_cpu(s, op->stream, &cpu))
		return ev_cli_error(&s->o->cli, "out of memory");
	if (op->type != EV_CALC) {
		if (s->o->nic == NIC_CHANNEL)
			nic = op->channel;
		else if (s->o->nic == NIC_RAIL && rail_of(s, op->rank, &nic))
			return fail_rec(s, recno, "--nic=rail: rank %u has no node (#rank node= or host=); give --ranks-per-node",
			                op->rank);
		if (s->o->nic_mod)
			nic %= s->o->nic_mod;
	}
	if (cpu > 255)
		return fail_rec(s, recno, "rank %u op %u (%s): cpu %u does not fit GOAL's 8-bit cpu field (lane %u)",
		                op->rank, op->id, type_word(op->type), cpu, op->stream);
	if (nic > 255)
		return fail_rec(s, recno, "rank %u op %u (%s): nic %u does not fit GOAL's 8-bit nic field; use --nic=channel:N",
		                op->rank, op->id, type_word(op->type), nic);
	if (op->type != EV_CALC) {
		if (op->peer < 0 && op->type == EV_SEND)
			return fail_rec(s, recno, "rank %u op %u: send without a destination (peer -1)", op->rank, op->id);
		if (op->peer >= 0) {
			if ((uint32_t)op->peer + 1 > s->max_peer_plus1)
				s->max_peer_plus1 = (uint32_t)op->peer + 1;
			if (s->o->num_ranks && (uint32_t)op->peer >= s->o->num_ranks)
				return fail_rec(s, recno, "rank %u op %u: peer %d is not below --num-ranks=%u", op->rank, op->id,
				                op->peer, s->o->num_ranks);
		}
		if (s->o->check) {
			if (op->peer < 0)
				return fail_rec(s, recno, "rank %u op %u: recv from any source (-1) cannot be checked; use --no-check",
				                op->rank, op->id);
			int rc = check_match(s, op, recno);
			if (rc)
				return rc;
		}
	}
	if (cpu > s->max_cpu)
		s->max_cpu = (uint8_t)cpu;
	if (nic > s->max_nic)
		s->max_nic = (uint8_t)nic;
	if (op->type == EV_SEND) {
		rs->nsend++;
		rs->bytes_sent += op->bytes;
		unsigned b = 0;
		for (uint64_t v = op->bytes; v; v >>= 1)
			b++;
		s->hist[b]++;
	} else if (op->type == EV_RECV) {
		rs->nrecv++;
	} else {
		rs->ncalc++;
	}
	for (size_t i = 0; i < nd; i++) {
		if (d[i].ireq)
			rs->nireq++;
		else
			rs->nreq++;
	}
	int rc = 0;
	if (s->o->binary)
		rc = emit_binary(s, rs, op, node, cpu, nic, d, nd);
	else if (rs->emit)
		rc = emit_text(rs, op, node, cpu, nic, d, nd);
	if (rc)
		return io_fail(s, s->o->binary ? rs->nodes.path : rs->text.path);
	return 0;
}

static int on_op(struct state *s, const struct ev_rec *rec)
{
	struct rankst *rs = get_rank(s, rec->rank);
	if (!rs)
		return rec->rank >= MAX_RANKS ? fail(s, "rank %u is too large", rec->rank)
		                              : ev_cli_error(&s->o->cli, "%s: %s", s->dir, strerror(errno ? errno : ENOMEM));
	int rc = flush_op(s, rs);
	if (rc)
		return rc;
	if (rs->have_id && rec->id <= rs->last_id)
		return fail(s, "rank %u: op id %u after op %u (op ids must increase per rank, as coll-expand writes them)",
		            rec->rank, rec->id, rs->last_id);
	rc = window_advance(s, rs, rec->id);
	if (rc == -2)
		return fail(s, "rank %u: internal error: window out of step", rec->rank);
	if (rc)
		return errno ? io_fail(s, s->dir) : ev_cli_error(&s->o->cli, "out of memory");
	rs->pending = 1;
	rs->pend = *rec;
	rs->pend_recno = s->recno;
	rs->ndeps = 0;
	rs->in_ops++;
	return 0;
}

static int on_dep(struct state *s, const struct ev_rec *rec)
{
	struct rankst *rs = rec->rank < s->nr ? &s->r[rec->rank] : NULL;
	if (!rs || !rs->used || !rs->pending || rs->pend.id != rec->id)
		return fail(s, "rank %u: dep of op %u does not follow that op", rec->rank, rec->id);
	if (rs->ndeps == rs->capdeps) {
		size_t nc = rs->capdeps ? rs->capdeps * 2 : 16;
		struct dep *nd = realloc(rs->deps, nc * sizeof *nd);
		if (!nd)
			return ev_cli_error(&s->o->cli, "out of memory");
		rs->deps = nd;
		rs->capdeps = nc;
	}
	rs->deps[rs->ndeps].target = rec->aux;
	rs->deps[rs->ndeps].ireq = (rec->flags & EV_F_IREQ) != 0;
	rs->ndeps++;
	rs->in_deps++;
	return 0;
}

/* ---- output assembly ------------------------------------------------ */

static int part_name(char *buf, size_t n, const char *dir, uint32_t r, int binary)
{
	return snprintf(buf, n, "%s/rank_%u.%s", dir, r, binary ? "bin" : "goal") >= (int)n ? -1 : 0;
}

/* Stream one rank's binary section (without the file header) to out, or to
 * a part file when out is NULL and part is set. */
static int write_section(struct rankst *rs, ev_output *out, int *werr)
{
	unsigned char h[8];
	ev_put32(h, rs->next_node);
	ev_put32(h + 4, (uint32_t)rs->nroots);
	int rc = ev_output_write(out, h, 8);
	if (rc) {
		*werr = rc;
		return -1;
	}
	if (rs->nroots && copy_file(rs->roots.path, out, werr))
		return -1;
	if (rs->next_node) {
		int fn = open(rs->nodes.path, O_RDONLY | O_CLOEXEC);
		int fc = fn < 0 ? -1 : open(rs->counts.path, O_RDONLY | O_CLOEXEC);
		if (fn < 0 || fc < 0) {
			if (fn >= 0)
				close(fn);
			return -1;
		}
		enum { K = 4096 };
		static unsigned char nb[K * NODE_BYTES], cb[K * 8];
		uint32_t left = rs->next_node;
		uint64_t run = 0;
		while (left) {
			uint32_t k = left < K ? left : K;
			size_t want_n = (size_t)k * NODE_BYTES, want_c = (size_t)k * 8;
			ssize_t a = read(fn, nb, want_n), b = read(fc, cb, want_c);
			/* Regular files return whole requests unless short. */
			if (a != (ssize_t)want_n || b != (ssize_t)want_c) {
				close(fn);
				close(fc);
				errno = a < 0 || b < 0 ? errno : EIO;
				return -1;
			}
			for (uint32_t i = 0; i < k; i++) {
				unsigned char *p = nb + (size_t)i * NODE_BYTES;
				uint32_t nreq = ev_le32(cb + i * 8), nireq = ev_le32(cb + i * 8 + 4);
				ev_put32(p + 23, nreq);
				ev_put32(p + 27, (uint32_t)run);
				run += nreq;
				ev_put32(p + 31, nireq);
				ev_put32(p + 35, (uint32_t)run);
				run += nireq;
			}
			rc = ev_output_write(out, nb, want_n);
			if (rc) {
				close(fn);
				close(fc);
				*werr = rc;
				return -1;
			}
			left -= k;
		}
		close(fn);
		close(fc);
	}
	if (rs->nedges && copy_file(rs->app.path, out, werr))
		return -1;
	return 0;
}

static uint64_t section_size(const struct rankst *rs)
{
	return 8 + 4 * rs->nroots + (uint64_t)NODE_BYTES * rs->next_node + 4 * rs->nedges;
}

static int write_bin_header(ev_output *out, uint32_t nranks, uint8_t max_cpu, uint8_t max_nic,
                            const uint64_t *sizes)
{
	unsigned char h[14];
	ev_put64(h, GOAL_MAGIC);
	ev_put32(h + 8, nranks);
	h[12] = max_cpu;
	h[13] = max_nic;
	int rc = ev_output_write(out, h, 14);
	/* Offsets are relative to the byte after the magic. */
	uint64_t pos = 4 + 2 + 16 * (uint64_t)nranks;
	for (uint32_t r = 0; r < nranks && !rc; r++) {
		unsigned char j[16];
		ev_put64(j, pos);
		pos += sizes[r];
		ev_put64(j + 8, pos);
		rc = ev_output_write(out, j, 16);
	}
	return rc;
}

/* An empty rank's text part. */
static int empty_text_part(struct state *s, uint32_t r, const char *path)
{
	(void)s;
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "rank %u {\n}\n", r);
	return fclose(f) ? -1 : 0;
}

static int finish_ranks(struct state *s)
{
	for (uint32_t r = 0; r < s->nr; r++) {
		struct rankst *rs = &s->r[r];
		if (!rs->used)
			continue;
		int rc = flush_op(s, rs);
		if (rc)
			return rc;
		group_close(rs);
		if (s->o->binary) {
			while (rs->have_id && rs->first_id <= rs->last_id) {
				int e = window_evict(s, rs);
				if (e == -2)
					return ev_cli_error(&s->o->cli, "rank %u: internal error: window out of step", r);
				if (e)
					return io_fail(s, rs->app.path);
				if (rs->first_id == 0)
					break; /* wrapped past UINT32_MAX */
			}
			if (rs->emit && (spool_close(&rs->nodes) || spool_close(&rs->counts) || spool_close(&rs->app) ||
			                 spool_close(&rs->roots)))
				return io_fail(s, rs->nodes.path);
		} else if (rs->emit) {
			if (spool_put(&rs->text, "}\n", 2) || spool_close(&rs->text))
				return io_fail(s, rs->text.path);
		}
	}
	return 0;
}

static uint32_t final_nranks(struct state *s)
{
	if (s->o->num_ranks)
		return s->o->num_ranks;
	return s->nr > s->max_peer_plus1 ? s->nr : s->max_peer_plus1;
}

/* Write the schedule to -o from the spooled parts. */
static int assemble(struct state *s, uint32_t nranks)
{
	ev_output *out = NULL;
	int werr = 0, rc;
	if ((rc = ev_output_open(&out, s->o->cli.output)) != EV_OK)
		return ev_cli_file_error(&s->o->cli, s->o->cli.output, rc);
	if (s->o->binary) {
		uint64_t *sizes = calloc(nranks ? nranks : 1, sizeof *sizes);
		if (!sizes) {
			ev_output_abort(out);
			return ev_cli_error(&s->o->cli, "out of memory");
		}
		for (uint32_t r = 0; r < nranks; r++)
			sizes[r] = r < s->nr && s->r[r].used ? section_size(&s->r[r]) : 8;
		rc = write_bin_header(out, nranks, s->max_cpu, s->max_nic, sizes);
		free(sizes);
		if (rc)
			goto werror;
		for (uint32_t r = 0; r < nranks; r++) {
			if (r < s->nr && s->r[r].used) {
				if (write_section(&s->r[r], out, &werr)) {
					if (werr) {
						rc = werr;
						goto werror;
					}
					ev_output_abort(out);
					return io_fail(s, s->r[r].nodes.path);
				}
			} else {
				static const unsigned char zero[8];
				if ((rc = ev_output_write(out, zero, 8)))
					goto werror;
			}
		}
	} else {
		if ((rc = ev_output_printf(out, "num_ranks %u\n", nranks)))
			goto werror;
		for (uint32_t r = 0; r < nranks; r++) {
			if (r < s->nr && s->r[r].used) {
				if (copy_file(s->r[r].text.path, out, &werr)) {
					if (werr) {
						rc = werr;
						goto werror;
					}
					ev_output_abort(out);
					return io_fail(s, s->r[r].text.path);
				}
			} else if ((rc = ev_output_printf(out, "rank %u {\n}\n", r))) {
				goto werror;
			}
		}
	}
	if ((rc = ev_output_close(out)) != EV_OK)
		return ev_cli_file_error(&s->o->cli, s->o->cli.output, rc);
	return 0;
werror:
	ev_output_abort(out);
	return ev_cli_file_error(&s->o->cli, s->o->cli.output, rc);
}

/* --per-rank: move the parts into the directory. */
static int place_parts(struct state *s, uint32_t nranks)
{
	char path[PATH_MAX];
	for (uint32_t r = 0; r < nranks; r++) {
		if (!in_sel(s->o, r))
			continue;
		if (part_name(path, sizeof path, s->o->per_rank_dir, r, s->o->binary))
			return ev_cli_error(&s->o->cli, "%s: path too long", s->o->per_rank_dir);
		struct rankst *rs = r < s->nr && s->r[r].used ? &s->r[r] : NULL;
		if (s->o->binary) {
			ev_output *out;
			int werr = 0, rc = ev_output_open(&out, path);
			if (rc)
				return ev_cli_file_error(&s->o->cli, path, rc);
			if (rs) {
				if (write_section(rs, out, &werr)) {
					ev_output_abort(out);
					return werr ? ev_cli_file_error(&s->o->cli, path, werr) : io_fail(s, rs->nodes.path);
				}
			} else {
				static const unsigned char zero[8];
				if ((rc = ev_output_write(out, zero, 8))) {
					ev_output_abort(out);
					return ev_cli_file_error(&s->o->cli, path, rc);
				}
			}
			if ((rc = ev_output_close(out)))
				return ev_cli_file_error(&s->o->cli, path, rc);
		} else if (rs) {
			if (rename(rs->text.path, path))
				return io_fail(s, path);
		} else if (empty_text_part(s, r, path)) {
			return io_fail(s, path);
		}
	}
	return 0;
}

/* Join rank_0 .. rank_<N-1> in dir into -o.  With remove, delete the parts
 * after a successful write. */
static int join_parts(struct opts *o, const char *dir, int remove_parts, uint32_t expect)
{
	char path[PATH_MAX];
	uint32_t n = 0;
	struct stat st;
	for (;;) {
		if (part_name(path, sizeof path, dir, n, o->binary))
			return ev_cli_error(&o->cli, "%s: path too long", dir);
		if ((expect && n == expect) || stat(path, &st))
			break;
		n++;
	}
	if (expect && n < expect)
		return ev_cli_error(&o->cli, "%s: %s", path, strerror(errno));
	if (!n) {
		part_name(path, sizeof path, dir, 0, o->binary);
		return ev_cli_error(&o->cli, "%s: %s", path, strerror(errno));
	}
	/* A part past a gap means a worker failed or the ranks are incomplete. */
	DIR *dh = opendir(dir);
	if (dh) {
		struct dirent *de;
		const char *ext = o->binary ? ".bin" : ".goal";
		while ((de = readdir(dh))) {
			unsigned long v;
			char *end;
			if (strncmp(de->d_name, "rank_", 5))
				continue;
			v = strtoul(de->d_name + 5, &end, 10);
			if (!expect && strcmp(end, ext) == 0 && v >= n) {
				closedir(dh);
				return ev_cli_error(&o->cli, "%s: rank_%u%s is missing but rank_%lu%s exists", dir, n, ext, v, ext);
			}
		}
		closedir(dh);
	}
	ev_output *out;
	int rc = ev_output_open(&out, o->cli.output), werr = 0;
	if (rc)
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	if (o->binary) {
		uint64_t *sizes = malloc(n * sizeof *sizes);
		uint8_t mc = 0, mn = 0;
		if (!sizes) {
			ev_output_abort(out);
			return ev_cli_error(&o->cli, "out of memory");
		}
		for (uint32_t r = 0; r < n; r++) {
			part_name(path, sizeof path, dir, r, 1);
			FILE *f = fopen(path, "rb");
			unsigned char h[8];
			if (!f || fstat(fileno(f), &st) || fread(h, 1, 8, f) != 8) {
				int e = errno;
				if (f)
					fclose(f);
				free(sizes);
				ev_output_abort(out);
				return ev_cli_error(&o->cli, "%s: %s", path, e ? strerror(e) : "too short for a rank section");
			}
			sizes[r] = (uint64_t)st.st_size;
			uint32_t nn = ev_le32(h), nroots = ev_le32(h + 4);
			uint64_t need = 8 + 4 * (uint64_t)nroots + (uint64_t)NODE_BYTES * nn;
			if (need > sizes[r] || fseeko(f, 8 + 4 * (off_t)nroots, SEEK_SET)) {
				fclose(f);
				free(sizes);
				ev_output_abort(out);
				return ev_cli_error(&o->cli, "%s: not a rank section (%u nodes in %llu bytes)", path, nn,
				                    (unsigned long long)st.st_size);
			}
			unsigned char nb[NODE_BYTES];
			for (uint32_t i = 0; i < nn; i++) {
				if (fread(nb, 1, NODE_BYTES, f) != NODE_BYTES)
					break;
				if (nb[21] > mc)
					mc = nb[21];
				if (nb[22] > mn)
					mn = nb[22];
			}
			fclose(f);
		}
		rc = write_bin_header(out, n, mc, mn, sizes);
		free(sizes);
	} else {
		rc = ev_output_printf(out, "num_ranks %u\n", n);
	}
	for (uint32_t r = 0; r < n && !rc; r++) {
		part_name(path, sizeof path, dir, r, o->binary);
		if (copy_file(path, out, &werr)) {
			if (werr) {
				rc = werr;
				break;
			}
			int e = errno;
			ev_output_abort(out);
			return ev_cli_error(&o->cli, "%s: %s", path, strerror(e));
		}
	}
	if (rc) {
		ev_output_abort(out);
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
	if ((rc = ev_output_close(out)))
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	if (remove_parts)
		for (uint32_t r = 0; r < n; r++) {
			part_name(path, sizeof path, dir, r, o->binary);
			unlink(path);
		}
	return 0;
}

/* ---- statistics ----------------------------------------------------- */

static int write_stats(struct state *s, uint32_t nranks)
{
	FILE *f = stderr;
	if (s->o->stats_file && strcmp(s->o->stats_file, "-") != 0) {
		f = fopen(s->o->stats_file, "w");
		if (!f)
			return ev_cli_error(&s->o->cli, "%s: %s", s->o->stats_file, strerror(errno));
	}
	uint64_t nsend = 0, nrecv = 0, ncalc = 0, nreq = 0, nireq = 0, elided = 0, dups = 0, in_ops = 0, in_deps = 0,
	         extra = 0, bytes = 0;
	for (uint32_t r = 0; r < s->nr; r++) {
		const struct rankst *rs = &s->r[r];
		nsend += rs->nsend;
		nrecv += rs->nrecv;
		ncalc += rs->ncalc;
		nreq += rs->nreq;
		nireq += rs->nireq;
		elided += rs->elided;
		dups += rs->dups;
		in_ops += rs->in_ops;
		in_deps += rs->in_deps;
		extra += rs->atlahs_extra;
		bytes += rs->bytes_sent;
	}
	uint64_t ops = nsend + nrecv + ncalc;
	uint64_t lines = 1 + 2 * (uint64_t)nranks + ops + nreq + nireq;
	uint64_t atlahs = 1 + 2 * (uint64_t)nranks + in_ops + in_deps + extra;
	fprintf(f, "# ev2goal summary\n");
	fprintf(f, "ranks\t%u\n", nranks);
	fprintf(f, "ops\t%llu\nsend\t%llu\nrecv\t%llu\ncalc\t%llu\n", (unsigned long long)ops,
	        (unsigned long long)nsend, (unsigned long long)nrecv, (unsigned long long)ncalc);
	fprintf(f, "requires\t%llu\nirequires\t%llu\n", (unsigned long long)nreq, (unsigned long long)nireq);
	fprintf(f, "bytes_sent\t%llu\n", (unsigned long long)bytes);
	fprintf(f, "lanes\t%u\nmax_cpu\t%u\nmax_nic\t%u\n", s->o->cpu == CPU_DENSE ? s->nlanes : (unsigned)s->max_cpu + 1,
	        s->max_cpu, s->max_nic);
	fprintf(f, "folded_zero_calcs\t%llu\nduplicate_deps\t%llu\n", (unsigned long long)elided,
	        (unsigned long long)dups);
	fprintf(f, "open_messages_max\t%llu\n", (unsigned long long)s->mt.open_max);
	fprintf(f, "ignored_records\t%llu\n", (unsigned long long)s->ignored);
	fprintf(f, "lines\t%llu\n", (unsigned long long)lines);
	fprintf(f, "lines_atlahs_style\t%llu\n", (unsigned long long)atlahs);
	fprintf(f, "lines_saved_pct\t%.1f\n", atlahs ? 100.0 * (double)(atlahs - (lines < atlahs ? lines : atlahs)) / (double)atlahs : 0.0);
	fprintf(f, "\n# bytes sent per rank\nrank\tsends\trecvs\tcalcs\tbytes_sent\n");
	for (uint32_t r = 0; r < nranks; r++) {
		const struct rankst *rs = r < s->nr ? &s->r[r] : NULL;
		fprintf(f, "%u\t%llu\t%llu\t%llu\t%llu\n", r, rs ? (unsigned long long)rs->nsend : 0ull,
		        rs ? (unsigned long long)rs->nrecv : 0ull, rs ? (unsigned long long)rs->ncalc : 0ull,
		        rs ? (unsigned long long)rs->bytes_sent : 0ull);
	}
	fprintf(f, "\n# message sizes (sends)\nmin_bytes\tmax_bytes\tcount\n");
	for (unsigned b = 0; b < 66; b++) {
		if (!s->hist[b])
			continue;
		uint64_t lo = b ? 1ull << (b - 1) : 0, hi = b == 0 ? 0 : b >= 64 ? UINT64_MAX : (1ull << b) - 1;
		fprintf(f, "%llu\t%llu\t%llu\n", (unsigned long long)lo, (unsigned long long)hi,
		        (unsigned long long)s->hist[b]);
	}
	if (f != stderr) {
		if (fclose(f))
			return ev_cli_error(&s->o->cli, "%s: %s", s->o->stats_file, strerror(errno));
	} else {
		fflush(stderr);
	}
	return 0;
}

/* ---- main loop ------------------------------------------------------ */

static void state_free(struct state *s, int remove)
{
	for (uint32_t r = 0; r < s->nr; r++) {
		struct rankst *rs = &s->r[r];
		if (!rs->used)
			continue;
		spool_free(&rs->text, remove);
		spool_free(&rs->nodes, remove);
		spool_free(&rs->counts, remove);
		spool_free(&rs->app, remove);
		spool_free(&rs->roots, remove);
		free(rs->map);
		free(rs->ns);
		free(rs->deps);
		free(rs->g_succ);
	}
	sig_paths = NULL;
	sig_npaths = 0;
	free(s->paths);
	free(s->r);
	for (size_t i = 0; i < s->mt.cap; i++)
		if (s->mt.s[i].used)
			free(s->mt.s[i].q);
	free(s->mt.s);
	ev_map_free(&s->lanes);
	free(s->ep.succ);
	free(s->ep.next);
	if (s->own_dir && s->dir) {
		if (remove)
			rmdir(s->dir);
		sig_dir = NULL;
	}
	free(s->dir);
	if (s->meta)
		ev_meta_free(s->meta);
}

static int read_input(struct state *s, const char *path, ev_strtab *st)
{
	ev_reader *r;
	int rc = ev_reader_open(&r, path, st, s->meta);
	if (rc)
		return ev_cli_file_error(&s->o->cli, path, rc);
	ev_reader_skip_text(r, 1);
	s->fname = ev_reader_name(r);
	struct ev_rec rec;
	int status = 0;
	while ((rc = ev_read(r, &rec)) > 0) {
		s->recno = ev_reader_recno(r);
		switch (rec.type) {
		case EV_SEND:
		case EV_RECV:
		case EV_CALC:
			status = on_op(s, &rec);
			break;
		case EV_DEP:
			status = on_dep(s, &rec);
			break;
		default:
			s->ignored++;
			break;
		}
		if (status)
			break;
		if ((s->recno & 0xFFFF) == 0)
			ev_cli_progress(&s->o->cli, s->recno, 0);
	}
	if (!status && rc < 0)
		status = ev_cli_reader_error(&s->o->cli, r, rc);
	ev_reader_close(r);
	return status;
}

static int run(struct opts *o)
{
	if (o->join_dir)
		return join_parts(o, o->join_dir, o->delete_parts, 0);
	struct state s;
	memset(&s, 0, sizeof s);
	s.o = o;
	s.ep.free = NONE32;
	ev_map_init(&s.lanes);
	int status = 0, remove = 1;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 64)
		max_open_fds = (int)(rl.rlim_cur - 32) < 1024 ? (int)(rl.rlim_cur - 32) : 1024;
	ev_strtab *st = ev_strtab_new();
	s.meta = ev_meta_new();
	if (!st || !s.meta) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto out;
	}
	if (o->binary && !o->per_rank_dir && ev_cli_check_binary_out(&o->cli)) {
		status = 1;
		goto out;
	}
	/* Spool directory: inside the --per-rank directory (parts are renamed
	 * from there) or under the temporary directory. */
	const char *base = o->per_rank_dir ? o->per_rank_dir : o->tmpdir ? o->tmpdir : getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	if (o->per_rank_dir && mkdir(o->per_rank_dir, 0777) && errno != EEXIST) {
		status = ev_cli_error(&o->cli, "%s: %s", o->per_rank_dir, strerror(errno));
		goto out;
	}
	size_t n = strlen(base) + 32;
	s.dir = malloc(n);
	if (!s.dir) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto out;
	}
	snprintf(s.dir, n, "%s/.ev2goal.XXXXXX", base);
	if (!mkdtemp(s.dir)) {
		status = ev_cli_error(&o->cli, "%s: cannot make a spool directory: %s", base, strerror(errno));
		free(s.dir);
		s.dir = NULL;
		goto out;
	}
	s.own_dir = 1;
	sig_dir = s.dir;
	for (int i = 0; i < o->ninputs && !status; i++)
		status = read_input(&s, o->inputs[i], st);
	ev_cli_progress_done(&o->cli);
	if (status)
		goto out;
	s.fname = o->ninputs == 1 ? o->inputs[0] : "input";
	if ((status = finish_ranks(&s)))
		goto out;
	if (o->check && s.mt.len) {
		/* Report the oldest unmatched message. */
		struct mslot *w = NULL;
		for (size_t i = 0; i < s.mt.cap; i++)
			if (s.mt.s[i].used && (!w || s.mt.s[i].first_rec < w->first_rec))
				w = &s.mt.s[i];
		status = ev_cli_error(&o->cli,
		                      "record %llu: rank %u: %s %s rank %u tag %u has no matching %s (%zu keys unmatched; --no-check skips this)",
		                      (unsigned long long)w->first_rec, w->first_rank, w->sends ? "send" : "recv",
		                      w->sends ? "to" : "from", w->sends ? w->k.dst : w->k.src, w->k.tag,
		                      w->sends ? "recv" : "send", s.mt.len);
		goto out;
	}
	uint32_t nranks = final_nranks(&s);
	if (o->num_ranks && s.nr > o->num_ranks) {
		status = ev_cli_error(&o->cli, "rank %u is not below --num-ranks=%u", s.nr - 1, o->num_ranks);
		goto out;
	}
	if (!nranks) {
		status = ev_cli_error(&o->cli, "%s: no send, recv or calc records: nothing to schedule", s.fname);
		goto out;
	}
	if (o->per_rank_dir) {
		if ((status = place_parts(&s, nranks)))
			goto out;
		if (o->concat && (status = join_parts(o, o->per_rank_dir, o->delete_parts, nranks)))
			goto out;
	} else if ((status = assemble(&s, nranks))) {
		goto out;
	}
	if (o->stats)
		status = write_stats(&s, nranks);
out:
	state_free(&s, remove);
	ev_strtab_free(st);
	return status;
}

static int parse_ranges(const char *arg, struct range **out, size_t *n)
{
	char *copy = strdup(arg), *save = NULL;
	if (!copy)
		return -1;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct range r;
		char *dash = strchr(tok, '-');
		if (dash)
			*dash = '\0';
		if (ev_parse_u32(tok, &r.lo) || (dash ? ev_parse_u32(dash + 1, &r.hi) : (r.hi = r.lo, 0)) || r.hi < r.lo) {
			free(copy);
			return -1;
		}
		struct range *nr = realloc(*out, (*n + 1) * sizeof *nr);
		if (!nr) {
			free(copy);
			return -1;
		}
		*out = nr;
		nr[(*n)++] = r;
	}
	free(copy);
	return *n ? 0 : -1;
}

/* "0", "channel", "channel:4", "rail", "rail:8" */
static int parse_nic(struct opts *o, const char *s)
{
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);
	if (len == 1 && s[0] == '0' && !colon)
		o->nic = NIC_ZERO;
	else if (len == 7 && !strncmp(s, "channel", 7))
		o->nic = NIC_CHANNEL;
	else if (len == 4 && !strncmp(s, "rail", 4))
		o->nic = NIC_RAIL;
	else
		return -1;
	o->nic_mod = 0;
	if (colon && (ev_parse_u32(colon + 1, &o->nic_mod) || o->nic_mod == 0 || o->nic_mod > 256))
		return -1;
	return 0;
}

static struct range **sel_to_free;
static void free_sel(void)
{
	free(*sel_to_free);
	*sel_to_free = NULL;
}

int main(int argc, char **argv)
{
	enum { O_JOIN = 256, O_RANKS, O_NUMRANKS, O_CPU, O_NIC, O_RPN, O_NOCHECK, O_KEEPSYNC };
	static const struct option longopts[] = {
		EV_CLI_COMMON_LONG,
		{ "binary", no_argument, NULL, 'b' },
		{ "per-rank", required_argument, NULL, 'p' },
		{ "concat", no_argument, NULL, 'c' },
		{ "delete-parts", no_argument, NULL, 'r' },
		{ "join", required_argument, NULL, O_JOIN },
		{ "ranks", required_argument, NULL, O_RANKS },
		{ "num-ranks", required_argument, NULL, O_NUMRANKS },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "nic", required_argument, NULL, O_NIC },
		{ "ranks-per-node", required_argument, NULL, O_RPN },
		{ "no-check", no_argument, NULL, O_NOCHECK },
		{ "keep-sync", no_argument, NULL, O_KEEPSYNC },
		{ "stats", optional_argument, NULL, 's' },
		{ "window", required_argument, NULL, 'w' },
		{ "tmpdir", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	int c;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev2goal");
	o.check = 1;
	o.window = 4096;
	/* Usage errors return from anywhere below: free the rank list at exit. */
	sel_to_free = &o.sel;
	atexit(free_sel);
	while ((c = getopt_long(argc, argv, EV_CLI_COMMON_SHORT "bp:crs::w:T:", longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o.cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o.cli, 0);
		default: break;
		}
		switch (c) {
		case 'b': o.binary = 1; break;
		case 'p': o.per_rank_dir = optarg; break;
		case 'c': o.concat = 1; break;
		case 'r': o.delete_parts = 1; o.concat = 1; break;
		case O_JOIN: o.join_dir = optarg; break;
		case O_RANKS:
			if (strchr(optarg, '%')) {
				char buf[64];
				snprintf(buf, sizeof buf, "%s", optarg);
				char *pc = strchr(buf, '%');
				*pc = '\0';
				if (ev_parse_u32(buf, &o.sel_k) || ev_parse_u32(pc + 1, &o.sel_n) || !o.sel_n || o.sel_k >= o.sel_n)
					return ev_cli_usage_error(&o.cli, "--ranks: expected K%%N with K < N, got '%s'", optarg);
				break;
			}
			if (parse_ranges(optarg, &o.sel, &o.nsel))
				return ev_cli_usage_error(&o.cli, "--ranks: expected a list like 0,2,4-7, got '%s'", optarg);
			break;
		case O_NUMRANKS:
			if (ev_parse_u32(optarg, &o.num_ranks) || o.num_ranks == 0 || o.num_ranks > MAX_RANKS)
				return ev_cli_usage_error(&o.cli, "--num-ranks: expected 1..%u, got '%s'", MAX_RANKS, optarg);
			break;
		case O_CPU:
			if (!strcmp(optarg, "dense"))
				o.cpu = CPU_DENSE;
			else if (!strcmp(optarg, "lane"))
				o.cpu = CPU_LANE;
			else
				return ev_cli_usage_error(&o.cli, "--cpu: expected dense or lane, got '%s'", optarg);
			break;
		case O_NIC:
			if (parse_nic(&o, optarg))
				return ev_cli_usage_error(&o.cli, "--nic: expected 0, channel[:N] or rail[:N] (N 1..256), got '%s'",
				                          optarg);
			break;
		case O_RPN:
			if (ev_parse_u32(optarg, &o.ranks_per_node) || !o.ranks_per_node)
				return ev_cli_usage_error(&o.cli, "--ranks-per-node: expected a positive number, got '%s'", optarg);
			break;
		case O_NOCHECK: o.check = 0; break;
		case O_KEEPSYNC: o.keep_sync = 1; break;
		case 's':
			o.stats = 1;
			o.stats_file = optarg;
			break;
		case 'w': {
			uint32_t w;
			if (ev_parse_u32(optarg, &w) || w < 2 || w > (1u << 28))
				return ev_cli_usage_error(&o.cli, "--window: expected 2..%u ops, got '%s'", 1u << 28, optarg);
			/* A power of two, at least the value asked for. */
			o.window = 2;
			while (o.window < w)
				o.window *= 2;
			break;
		}
		case 'T': o.tmpdir = optarg; break;
		default:
			return ev_cli_try_help(&o.cli);
		}
	}
	if (o.concat && !o.per_rank_dir && !o.join_dir)
		return ev_cli_usage_error(&o.cli, "--concat and --delete-parts need --per-rank=DIR");
	if (o.join_dir && (o.per_rank_dir || optind < argc))
		return ev_cli_usage_error(&o.cli, "--join reads the parts in DIR: it takes no FILE and no --per-rank");
	if ((o.nsel || o.sel_n) && !o.per_rank_dir)
		return ev_cli_usage_error(&o.cli, "--ranks writes some rank parts: it needs --per-rank=DIR");
	if ((o.nsel || o.sel_n) && o.concat)
		return ev_cli_usage_error(&o.cli, "--ranks writes only some parts: join them with --join once every worker is done");
	static char *stdin_only[] = { (char *)"-" };
	o.inputs = optind < argc ? argv + optind : stdin_only;
	o.ninputs = optind < argc ? argc - optind : 1;
	ev_cli_cleanup_on_signal(remove_spools_signal);
	return ev_cli_finish(&o.cli, run(&o));
}
