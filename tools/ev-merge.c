/* SPDX-License-Identifier: MIT */
/*
 * ev-merge - k-way time merge of ev streams, with sources, external sort and clock alignment
 *
 * Inputs are merged on (ts, rank, stream, seq), remaining ties by input
 * index and then input order, so the output is deterministic and detail
 * records (dep, chan) stay right after their op.  Memory is O(inputs) plus
 * the string table; --sort spills sorted runs to $TMPDIR within -S bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev.h"

enum align { AL_NONE, AL_START, AL_COLL, AL_DRIFT };

struct opts {
	struct ev_cli cli;
	int header_set;        /* output origin chosen (before the first line) */
	char **keys;           /* --src-keys */
	size_t nkeys;
	const char *src_regex;
	regex_t re;
	int rank_from_src;
	int sort;
	uint64_t sort_bytes;   /* -S */
	enum align align;
	int ref_rank;          /* -1: the lowest rank seen */
	char **inputs;
	int ninputs;
};

struct input {
	const char *label;     /* NULL when none given */
	const char *path;
	const char *spool;     /* temp copy of a pipe, for two passes */
	ev_reader *r;
	struct ev_rec rec;     /* next record */
	const char *line;      /* its escaped line, if forwardable */
	size_t line_len;
	int done;
	struct ev_order order;
};

static void usage(FILE *f)
{
	fputs(
"Usage: ev-merge [options] [LABEL=]INPUT...\n"
"Merge ev streams into one stream in time order (ts, rank, stream, seq; ties\n"
"by input order).  Each input becomes a source: a '#src N label=... file=...'\n"
"line, and src = N in its records.  Strings and metadata of all inputs appear\n"
"once.  INPUT may be '-' (once).\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -k, --src-keys=LIST    names for the groups of --src-regex, e.g. threads,channels\n"
"  -x, --src-regex=RE     POSIX extended RE matched against each input path;\n"
"                         its groups become key=value on the #src line\n"
"  -R, --rank-from-src    set each record's rank to its input's index (one\n"
"                         file per rank); #rank lines are renumbered likewise\n"
"  -s, --sort             accept inputs out of time order: external merge sort\n"
"  -S, --buffer-size=SIZE memory for --sort, e.g. 64M [256M]; sorted runs go\n"
"                         to $TMPDIR and are removed on every exit\n"
"  -a, --align=MODE       clock alignment of ranks: none, start (each rank's\n"
"                         first event at 0), coll (median offset from matched\n"
"                         collective end times), coll-drift (offset and a\n"
"                         linear drift per rank) [none]\n"
"      --ref-rank=R       reference rank for coll alignment [lowest rank]\n"
"  -f, --force            write binary output to a terminal\n"
"  -q, --quiet            no progress, warnings or alignment report\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Alignment offsets (and drifts) are printed on stderr and written as\n"
"'#meta align.rank<R>.offset_ns=O align.rank<R>.drift_ppm=D align.rank<R>.t0_ns=T'\n"
"lines; a rank's time t becomes t - (O + D/1e6 * (t - T)).\n"
"Inputs read from a pipe are spooled to a temporary file when two passes\n"
"are needed.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  data or I/O error (bad, truncated or out-of-order input, write error)\n"
"  2  usage error\n"
"\n"
"Example:\n"
"  ev-merge -k threads,channels -x '([0-9]+)thread/nccl_([0-9]+)channels' \\\n"
"      sweep/*/*/rank*.ev | ev-stats variance\n",
	f);
}

/* ---- record order --------------------------------------------------- */

static int rec_less(const struct ev_rec *a, int ia, const struct ev_rec *b, int ib)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	if (a->rank != b->rank)
		return a->rank < b->rank;
	if (a->stream != b->stream)
		return a->stream < b->stream;
	if (a->seq != b->seq)
		return a->seq < b->seq;
	return ia < ib;
}

/* Binary min-heap of input indices ordered by their next record. */
struct heap { int *v; int n; struct input *in; };

static int heap_less(const struct heap *h, int a, int b)
{
	return rec_less(&h->in[a].rec, a, &h->in[b].rec, b);
}

static void heap_down(struct heap *h, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && heap_less(h, h->v[l], h->v[m]))
			m = l;
		if (r < h->n && heap_less(h, h->v[r], h->v[m]))
			m = r;
		if (m == i)
			return;
		int t = h->v[i];
		h->v[i] = h->v[m];
		h->v[m] = t;
		i = m;
	}
}

static void heap_up(struct heap *h, int i)
{
	while (i > 0) {
		int p = (i - 1) / 2;
		if (!heap_less(h, h->v[i], h->v[p]))
			return;
		int t = h->v[i];
		h->v[i] = h->v[p];
		h->v[p] = t;
		i = p;
	}
}

/* ---- clock alignment ------------------------------------------------ */

/* Per-rank correction: ts' = ts - (offset + drift * (ts - t0)). */
struct corr { uint32_t rank; int64_t first_ts; double offset, drift; int64_t t0; int have; };

struct align_state {
	struct corr *c;
	size_t n;
	struct ev_map ix; /* rank + 1 -> index + 1 */
};

static struct corr *corr_get(struct align_state *a, uint32_t rank, int create)
{
	uint64_t *p = ev_map_get(&a->ix, (uint64_t)rank + 1);
	if (p)
		return &a->c[*p - 1];
	if (!create)
		return NULL;
	struct corr *nc = realloc(a->c, (a->n + 1) * sizeof *nc);
	if (!nc)
		return NULL;
	a->c = nc;
	memset(&a->c[a->n], 0, sizeof a->c[a->n]);
	a->c[a->n].rank = rank;
	a->c[a->n].first_ts = INT64_MAX;
	if (ev_map_put(&a->ix, (uint64_t)rank + 1, a->n + 1))
		return NULL;
	return &a->c[a->n++];
}

/* Collective end times per (comm, seq) and rank, bounded per rank so that
 * memory does not grow with trace length: the first MAX_MATCH collectives
 * of each rank are enough to estimate an offset and a drift. */
#define MAX_MATCH 65536
struct coll_end { uint64_t comm; uint32_t seq; uint32_t rank; int64_t end; };

static int cmp_coll(const void *pa, const void *pb)
{
	const struct coll_end *a = pa, *b = pb;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return (a->end > b->end) - (a->end < b->end);
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* --------------------------------------------------------------------- */

static int open_input(struct opts *o, struct input *in, ev_strtab *st, ev_meta *meta)
{
	int rc = ev_reader_open(&in->r, in->spool ? in->spool : in->path, st, meta);
	if (rc)
		return ev_cli_file_error(&o->cli, in->path, rc);
	memset(&in->order, 0, sizeof in->order);
	in->done = 0;
	return 0;
}

static void close_input(struct input *in)
{
	ev_reader_close(in->r);
	in->r = NULL;
}

/* Copy standard input to a temporary file so it can be read twice. */
static char *spool_path;
static void remove_spool(void)
{
	if (spool_path)
		unlink(spool_path);
}

static int spool_stdin(struct opts *o, struct input *in)
{
	const char *dir = getenv("TMPDIR");
	char *path = malloc(4096);
	if (!path)
		return ev_cli_error(&o->cli, "out of memory");
	snprintf(path, 4096, "%s/ev-merge-spool.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0) {
		int e = errno;
		free(path);
		return ev_cli_error(&o->cli, "cannot create a spool file in %s: %s", dir && *dir ? dir : "/tmp", strerror(e));
	}
	spool_path = path;
	ev_input *src;
	int rc = ev_input_fdopen(&src, STDIN_FILENO, 0, "standard input");
	if (rc) {
		close(fd);
		return ev_cli_file_error(&o->cli, "-", rc);
	}
	char buf[1 << 16];
	long got;
	while ((got = ev_input_read(src, buf, sizeof buf)) > 0)
		if (write(fd, buf, (size_t)got) != got) {
			int e = errno;
			ev_input_close(src);
			close(fd);
			return ev_cli_error(&o->cli, "%s: %s", path, strerror(e));
		}
	ev_input_close(src);
	if (close(fd) != 0 || got < 0)
		return ev_cli_error(&o->cli, "standard input: %s", got < 0 ? ev_strerror((int)got) : strerror(errno));
	in->spool = path;
	return 0;
}

/* Pass 1 of alignment: first time per rank, collective end times. */
static int scan_for_alignment(struct opts *o, struct input *ins, int n, struct align_state *al)
{
	struct ev_vec ends;
	struct ev_map per_rank; /* rank + 1 -> count kept */
	int status = 0;
	ev_vec_init(&ends, sizeof(struct coll_end));
	ev_map_init(&per_rank);
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	if (!st || !meta) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto out;
	}
	for (int i = 0; i < n && !status; i++) {
		struct input *in = &ins[i];
		if ((status = open_input(o, in, st, meta)) != 0)
			break;
		ev_reader_skip_text(in->r, 1);
		int rc;
		struct ev_rec r;
		while ((rc = ev_read(in->r, &r)) == EV_REC) {
			uint32_t rank = o->rank_from_src ? (uint32_t)i : r.rank;
			struct corr *c = corr_get(al, rank, 1);
			if (!c) {
				status = ev_cli_error(&o->cli, "out of memory");
				break;
			}
			if (r.ts < c->first_ts)
				c->first_ts = r.ts;
			if (o->align >= AL_COLL && (r.type == EV_COLL || r.type == EV_P2P) && r.comm) {
				uint64_t *cnt = ev_map_get(&per_rank, (uint64_t)rank + 1);
				if (cnt && *cnt >= MAX_MATCH)
					continue;
				struct coll_end *e = ev_vec_push(&ends);
				if (!e || ev_map_put(&per_rank, (uint64_t)rank + 1, cnt ? *cnt + 1 : 1)) {
					status = ev_cli_error(&o->cli, "out of memory");
					break;
				}
				e->comm = r.comm;
				e->seq = r.seq;
				e->rank = rank;
				e->end = ev_rec_end(&r);
			}
		}
		if (!status && rc < 0)
			status = ev_cli_reader_error(&o->cli, in->r, rc);
		close_input(in);
	}
	if (status || al->n == 0)
		goto out;
	if (o->align == AL_START) {
		for (size_t k = 0; k < al->n; k++) {
			al->c[k].offset = (double)al->c[k].first_ts;
			al->c[k].have = 1;
		}
		goto out;
	}
	/* Reference rank: as asked, else the lowest. */
	uint32_t ref = UINT32_MAX;
	for (size_t k = 0; k < al->n; k++)
		if (o->ref_rank >= 0 ? al->c[k].rank == (uint32_t)o->ref_rank : al->c[k].rank < ref)
			ref = al->c[k].rank;
	if (ref == UINT32_MAX) {
		status = ev_cli_error(&o->cli, "--ref-rank %d does not occur in the inputs", o->ref_rank);
		goto out;
	}
	struct coll_end *e = ends.data;
	qsort(e, ends.len, sizeof *e, cmp_coll);
	/* For each rank, the pairs (reference end, this rank's end - reference end). */
	for (size_t k = 0; k < al->n; k++) {
		struct corr *c = &al->c[k];
		if (c->rank == ref) {
			c->have = 1;
			continue;
		}
		size_t cap = 0, m = 0;
		double *d = NULL, *t = NULL;
		for (size_t a = 0; a < ends.len;) {
			size_t b = a;
			while (b < ends.len && e[b].comm == e[a].comm && e[b].seq == e[a].seq)
				b++;
			const struct coll_end *er = NULL, *ec = NULL;
			for (size_t x = a; x < b; x++) {
				if (e[x].rank == ref && !er)
					er = &e[x];
				if (e[x].rank == c->rank && !ec)
					ec = &e[x];
			}
			if (er && ec) {
				if (m == cap) {
					cap = cap ? cap * 2 : 256;
					double *nd = realloc(d, cap * sizeof *nd), *nt = nd ? realloc(t, cap * sizeof *nt) : NULL;
					if (!nd || !nt) {
						free(nd ? nd : d);
						free(t);
						status = ev_cli_error(&o->cli, "out of memory");
						goto out;
					}
					d = nd;
					t = nt;
				}
				d[m] = (double)(ec->end - er->end);
				t[m] = (double)er->end;
				m++;
			}
			a = b;
		}
		if (m == 0) {
			ev_cli_warn(&o->cli, "rank %u shares no collective with reference rank %u: not aligned", c->rank, ref);
			free(d);
			free(t);
			continue;
		}
		double *tmp = malloc(m * sizeof *tmp);
		if (!tmp) {
			free(d);
			free(t);
			status = ev_cli_error(&o->cli, "out of memory");
			goto out;
		}
		memcpy(tmp, d, m * sizeof *tmp);
		double med = median(tmp, m);
		c->offset = med;
		c->have = 1;
		if (o->align == AL_DRIFT && m >= 3) {
			/* Least squares on the pairs within 3 MADs of the median, so
			 * stragglers (late ranks) do not tilt the line. */
			for (size_t x = 0; x < m; x++)
				tmp[x] = fabs(d[x] - med);
			double mad = median(tmp, m);
			double lim = 3 * 1.4826 * mad + 1.0;
			double st0 = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
			size_t used = 0;
			for (size_t x = 0; x < m; x++)
				if (fabs(d[x] - med) <= lim) {
					st0 = used == 0 ? t[x] : st0;
					used++;
				}
			for (size_t x = 0; x < m; x++)
				if (fabs(d[x] - med) <= lim) {
					double xx = t[x] - st0;
					sx += xx;
					sy += d[x];
					sxx += xx * xx;
					sxy += xx * d[x];
				}
			double den = (double)used * sxx - sx * sx;
			if (used >= 3 && den > 0) {
				c->drift = ((double)used * sxy - sx * sy) / den;
				c->offset = (sy - c->drift * sx) / (double)used;
				c->t0 = (int64_t)st0;
			}
		}
		free(tmp);
		free(d);
		free(t);
	}
out:
	ev_vec_free(&ends);
	ev_map_free(&per_rank);
	ev_strtab_free(st);
	ev_meta_free(meta);
	return status;
}

static int64_t corrected(const struct align_state *al, uint32_t rank, int64_t ts)
{
	uint64_t *p = ev_map_get(&al->ix, (uint64_t)rank + 1);
	if (!p)
		return ts;
	const struct corr *c = &al->c[*p - 1];
	if (!c->have)
		return ts;
	double shift = c->offset + c->drift * (double)(ts - c->t0);
	return ts - (int64_t)llround(shift);
}

/* ---- source lines --------------------------------------------------- */

static int write_src_line(struct opts *o, ev_writer *w, int i, const struct input *in)
{
	char esc[8192], line[16384];
	size_t n = (size_t)snprintf(line, sizeof line, "#src %d", i);
	if (in->label) {
		ev_text_escape(in->label, strlen(in->label), esc, sizeof esc);
		n += (size_t)snprintf(line + n, sizeof line - n, " label=%s", esc);
	}
	const char *file = strcmp(in->path, "-") == 0 ? "standard input" : in->path;
	ev_text_escape(file, strlen(file), esc, sizeof esc);
	/* Values may not contain spaces: they would split the field. */
	for (char *p = esc; *p; p++)
		if (*p == ' ')
			*p = '_';
	n += (size_t)snprintf(line + n, sizeof line - n, " file=%s", esc);
	if (o->src_regex) {
		regmatch_t m[10];
		if (regexec(&o->re, in->path, 10, m, 0) == 0) {
			for (size_t k = 0; k < o->nkeys && k + 1 < 10; k++) {
				if (m[k + 1].rm_so < 0)
					continue;
				int len = (int)(m[k + 1].rm_eo - m[k + 1].rm_so);
				n += (size_t)snprintf(line + n, sizeof line - n, " %s=%.*s", o->keys[k], len, in->path + m[k + 1].rm_so);
			}
		} else {
			ev_cli_warn(&o->cli, "%s: does not match --src-regex; no keys for this source", in->path);
		}
	}
	if (n >= sizeof line)
		return ev_cli_error(&o->cli, "%s: source description too long", in->path);
	int rc = ev_write_text(w, line, n);
	return rc ? ev_cli_file_error(&o->cli, o->cli.output, rc) : 0;
}

/* Take the output's origin from the first input that has one. */
static int set_origin(struct opts *o, ev_writer *w, const char *origin)
{
	o->header_set = 1;
	if (origin && ev_writer_header(w, "origin", origin) != EV_OK)
		return ev_cli_error(&o->cli, "cannot use origin '%s' of the inputs", origin);
	return 0;
}

/* Pass a text line of input i through, adapting #src and #rank. */
static int pass_text(struct opts *o, ev_writer *w, int i, const char *line, size_t len, int *warned_src)
{
	int rc;
	if (len >= 5 && memcmp(line, "#src ", 5) == 0) {
		/* Every input is one source of the output: earlier sources are replaced. */
		if (!*warned_src)
			ev_cli_warn(&o->cli, "%s: input already has #src lines; its records become source %d",
			            o->inputs[i], i);
		*warned_src = 1;
		return 0;
	}
	if (o->rank_from_src && len >= 6 && memcmp(line, "#rank ", 6) == 0) {
		const char *p = line + 6;
		while (p < line + len && *p != ' ' && *p != '\t')
			p++;
		char buf[16384];
		int n = snprintf(buf, sizeof buf, "#rank %d%.*s", i, (int)(line + len - p), p);
		if (n < 0 || (size_t)n >= sizeof buf)
			return ev_cli_error(&o->cli, "%s: #rank line too long", o->inputs[i]);
		rc = ev_write_text(w, buf, (size_t)n);
	} else {
		rc = ev_write_text(w, line, len);
	}
	return rc ? ev_cli_file_error(&o->cli, o->cli.output, rc) : 0;
}

/* Advance input i to its next record, writing text lines on the way. */
static int advance(struct opts *o, ev_writer *w, struct input *ins, int i, const struct align_state *al,
                   int *warned_src)
{
	struct input *in = &ins[i];
	for (;;) {
		int rc = ev_read(in->r, &in->rec);
		if (rc == EV_TEXT) {
			const char *line;
			size_t len;
			/* The header must precede the first line written. */
			if (!o->header_set && (rc = set_origin(o, w, ev_reader_header(in->r, "origin"))) != 0)
				return rc;
			ev_reader_text(in->r, &line, &len);
			if ((rc = pass_text(o, w, i, line, len, warned_src)) != 0)
				return rc;
			continue;
		}
		if (rc == EV_EOF) {
			in->done = 1;
			return 0;
		}
		if (rc < 0)
			return ev_cli_reader_error(&o->cli, in->r, rc);
		if (!o->sort && ev_order_check(&in->order, in->rec.ts) != EV_OK) {
			ev_cli_error(&o->cli, "%s: record %llu: out of order (ts %lld after %lld); use ev-merge --sort",
			             ev_reader_name(in->r), (unsigned long long)ev_reader_recno(in->r),
			             (long long)in->rec.ts, (long long)in->order.last_ts);
			return 1;
		}
		int changed = 0;
		if (o->rank_from_src && in->rec.rank != (uint32_t)i) {
			in->rec.rank = (uint32_t)i;
			changed = 1;
		}
		if (in->rec.src != (uint16_t)i) {
			in->rec.src = (uint16_t)i;
			changed = 1;
		}
		if (o->align != AL_NONE) {
			int64_t ts = corrected(al, in->rec.rank, in->rec.ts);
			changed |= ts != in->rec.ts;
			in->rec.ts = ts;
		}
		if (changed)
			in->line = NULL;
		else
			ev_reader_record_line(in->r, &in->line, &in->line_len);
		return 0;
	}
}

static int run_merge(struct opts *o, struct input *ins, int n, ev_writer *w, const struct align_state *al);

static int run(struct opts *o)
{
	int status = 0, rc;
	struct input *ins = calloc((size_t)o->ninputs, sizeof *ins);
	struct align_state al;
	ev_writer *w = NULL;
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	memset(&al, 0, sizeof al);
	ev_map_init(&al.ix);
	if (!ins || !st || !meta) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	int stdin_used = 0;
	for (int i = 0; i < o->ninputs; i++) {
		char *arg = o->inputs[i], *eq = strchr(arg, '=');
		/* LABEL=INPUT, unless the whole argument is an existing file. */
		if (eq && eq != arg && access(arg, F_OK) != 0) {
			*eq = '\0';
			ins[i].label = arg;
			ins[i].path = eq + 1;
		} else {
			ins[i].path = arg;
		}
		if (strcmp(ins[i].path, "-") == 0 && stdin_used++) {
			status = ev_cli_usage_error(&o->cli, "standard input ('-') can be given only once");
			goto done;
		}
	}
	if (o->align != AL_NONE) {
		for (int i = 0; i < o->ninputs; i++)
			if (strcmp(ins[i].path, "-") == 0 && (status = spool_stdin(o, &ins[i])) != 0)
				goto done;
		if ((status = scan_for_alignment(o, ins, o->ninputs, &al)) != 0)
			goto done;
	}
	if (ev_cli_check_binary_out(&o->cli)) {
		status = 1;
		goto done;
	}
	if ((rc = ev_writer_open(&w, o->cli.output, st)) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	for (int i = 0; i < o->ninputs && !status; i++)
		status = open_input(o, &ins[i], st, meta);
	if (status)
		goto done;
	status = run_merge(o, ins, o->ninputs, w, &al);
	if (status)
		goto done;
	rc = ev_writer_close(w);
	w = NULL;
	if (rc)
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
done:
	ev_writer_abort(w);
	if (ins)
		for (int i = 0; i < o->ninputs; i++)
			close_input(&ins[i]);
	remove_spool();
	free(spool_path);
	spool_path = NULL;
	free(al.c);
	ev_map_free(&al.ix);
	ev_strtab_free(st);
	ev_meta_free(meta);
	free(ins);
	return status;
}

/* ---- external sort (--sort) ----------------------------------------- */

static int sort_merge(struct opts *o, struct input *ins, int n, ev_writer *w, const struct align_state *al,
                      int *warned_src)
{
	ev_sorter *s;
	int status = 0, rc = ev_sorter_open(&s, o->sort_bytes, NULL);
	if (rc)
		return ev_cli_error(&o->cli, "out of memory for --buffer-size %llu", (unsigned long long)o->sort_bytes);
	/* Text lines go out while reading, before every record: they stay ahead
	 * of the records that use them.  Records are added input by input, so
	 * equal keys keep input order. */
	for (int i = 0; i < n && !status; i++)
		while (!ins[i].done && !status) {
			if ((rc = ev_sorter_add(s, &ins[i].rec)) != EV_OK)
				break;
			status = advance(o, w, ins, i, al, warned_src);
		}
	if (!status && !rc)
		rc = ev_sorter_finish(s, w, NULL, NULL);
	if (!status && rc) {
		if (rc == EV_ERR_IO && *ev_sorter_errpath(s))
			status = ev_cli_error(&o->cli, "%s: %s", ev_sorter_errpath(s), strerror(errno));
		else
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
	ev_sorter_close(s);
	return status;
}

static int run_merge(struct opts *o, struct input *ins, int n, ev_writer *w, const struct align_state *al)
{
	int status = 0, warned_src = 0, rc;
	struct heap h = { calloc((size_t)n, sizeof(int)), 0, ins };
	uint64_t nrec = 0;
	if (!h.v)
		return ev_cli_error(&o->cli, "out of memory");
	/* Header: the first input's origin; say so when inputs disagree. */
	const char *origin = NULL;
	for (int i = 0; i < n && !status; i++) {
		/* Reading the first item fixes the segment header of each input. */
		status = advance(o, w, ins, i, al, &warned_src);
		const char *org = ev_reader_header(ins[i].r, "origin");
		if (org && !origin)
			origin = org;
		else if (org && origin && strcmp(org, origin) != 0)
			ev_cli_warn(&o->cli, "%s: origin=%s differs from origin=%s of an earlier input; times may not be comparable",
			            ins[i].path, org, origin);
	}
	if (!status && !o->header_set)
		status = set_origin(o, w, origin);
	if (!status)
		for (int i = 0; i < n && !status; i++)
			status = write_src_line(o, w, i, &ins[i]);
	if (!status && o->align != AL_NONE) {
		for (size_t k = 0; k < al->n && !status; k++) {
			const struct corr *c = &al->c[k];
			if (!c->have)
				continue;
			if (!o->cli.quiet)
				fprintf(stderr, "ev-merge: align: rank %u offset %.0f ns drift %.3f ppm (t0 %lld)\n", c->rank,
				        c->offset, c->drift * 1e6, (long long)c->t0);
			rc = ev_write_textf(w, "#meta align.rank%u.offset_ns=%.0f align.rank%u.drift_ppm=%.6f align.rank%u.t0_ns=%lld",
			                    c->rank, c->offset, c->rank, c->drift * 1e6, c->rank, (long long)c->t0);
			if (rc)
				status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		}
		if (!status && (rc = ev_write_textf(w, "#meta align.mode=%s",
		                                    o->align == AL_START ? "start" : o->align == AL_COLL ? "coll" : "coll-drift")))
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
	if (status)
		goto out;
	if (o->sort) {
		status = sort_merge(o, ins, n, w, al, &warned_src);
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (!ins[i].done) {
			h.v[h.n++] = i;
			heap_up(&h, h.n - 1);
		}
	while (h.n > 0) {
		int i = h.v[0];
		struct input *in = &ins[i];
		rc = in->line ? ev_write_escaped(w, &in->rec, in->line, in->line_len) : ev_write(w, &in->rec);
		if (rc) {
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
			goto out;
		}
		if ((++nrec & 0xFFFF) == 0)
			ev_cli_progress(&o->cli, nrec, 0);
		if ((status = advance(o, w, ins, i, al, &warned_src)) != 0)
			goto out;
		if (in->done) {
			h.v[0] = h.v[--h.n];
		}
		if (h.n)
			heap_down(&h, 0);
	}
	ev_cli_progress_done(&o->cli);
out:
	free(h.v);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		EV_CLI_COMMON_LONG,
		{ "src-keys", required_argument, NULL, 'k' },
		{ "src-regex", required_argument, NULL, 'x' },
		{ "rank-from-src", no_argument, NULL, 'R' },
		{ "sort", no_argument, NULL, 's' },
		{ "buffer-size", required_argument, NULL, 'S' },
		{ "align", required_argument, NULL, 'a' },
		{ "ref-rank", required_argument, NULL, 1 },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	int c, status = 0, have_re = 0;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev-merge");
	o.sort_bytes = 256u << 20;
	o.ref_rank = -1;
	while ((c = getopt_long(argc, argv, EV_CLI_COMMON_SHORT "k:x:RsS:a:", longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); status = 0; goto out;
		case EV_CLI_DONE: status = 0; goto out;
		default: break;
		}
		switch (c) {
		case 'k': {
			char *copy = strdup(optarg), *save = NULL;
			for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				if (!*t || strpbrk(t, " \t=")) {
					status = ev_cli_usage_error(&o.cli, "--src-keys: bad key name '%s'", t);
					free(copy);
					goto out;
				}
				o.keys = realloc(o.keys, (o.nkeys + 1) * sizeof *o.keys);
				o.keys[o.nkeys++] = strdup(t);
			}
			free(copy);
			break;
		}
		case 'x': o.src_regex = optarg; break;
		case 'R': o.rank_from_src = 1; break;
		case 's': o.sort = 1; break;
		case 'S':
			if (ev_parse_size(optarg, &o.sort_bytes) || o.sort_bytes < (1u << 20))
				{ status = ev_cli_usage_error(&o.cli, "--buffer-size: expected a size of at least 1M, like 64M, got '%s'", optarg); goto out; }
			break;
		case 'a':
			if (strcmp(optarg, "none") == 0) o.align = AL_NONE;
			else if (strcmp(optarg, "start") == 0) o.align = AL_START;
			else if (strcmp(optarg, "coll") == 0) o.align = AL_COLL;
			else if (strcmp(optarg, "coll-drift") == 0) o.align = AL_DRIFT;
			else { status = ev_cli_usage_error(&o.cli, "--align: expected none, start, coll or coll-drift, got '%s'", optarg); goto out; }
			break;
		case 1: {
			int32_t r;
			if (ev_parse_i32(optarg, &r) || r < 0)
				{ status = ev_cli_usage_error(&o.cli, "--ref-rank: not a rank: '%s'", optarg); goto out; }
			o.ref_rank = r;
			break;
		}
		default:
			status = ev_cli_try_help(&o.cli);
			goto out;
		}
	}
	if (o.src_regex) {
		int e = regcomp(&o.re, o.src_regex, REG_EXTENDED);
		have_re = e == 0;
		if (e) {
			char msg[128];
			regerror(e, &o.re, msg, sizeof msg);
			{ status = ev_cli_usage_error(&o.cli, "--src-regex: %s", msg); goto out; }
		}
		if (o.nkeys == 0)
			{ status = ev_cli_usage_error(&o.cli, "--src-regex needs --src-keys to name its groups"); goto out; }
		if (o.nkeys > o.re.re_nsub || o.nkeys > 9)
			{ status = ev_cli_usage_error(&o.cli, "--src-keys names %zu keys but --src-regex has %zu groups", o.nkeys,
			                          (size_t)o.re.re_nsub); goto out; }
	} else if (o.nkeys) {
		{ status = ev_cli_usage_error(&o.cli, "--src-keys needs --src-regex"); goto out; }
	}
	if (o.sort && o.align != AL_NONE)
		{ status = ev_cli_usage_error(&o.cli, "--sort and --align cannot be combined yet; sort first, then align"); goto out; }
	static char *stdin_only[] = { (char *)"-" };
	o.inputs = optind < argc ? argv + optind : stdin_only;
	o.ninputs = optind < argc ? argc - optind : 1;
	if (o.ninputs > 65535)
		{ status = ev_cli_usage_error(&o.cli, "at most 65535 inputs"); goto out; }
	ev_cli_cleanup_on_signal(remove_spool);
	status = run(&o);
out:
	if (have_re)
		regfree(&o.re);
	for (size_t k = 0; k < o.nkeys; k++)
		free(o.keys[k]);
	free(o.keys);
	return ev_cli_finish(&o.cli, status);
}
