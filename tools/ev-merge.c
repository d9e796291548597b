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
	struct ev_align_opts aopt;
	const char *report;    /* --report FILE */
	char **cfg_keys;       /* --config-keys */
	size_t ncfg_keys;
	int need_sort;         /* alignment of inputs with several clocks */
	int input_is_run;      /* input= names a configuration (ev_align_input_is_config) */
	uint32_t world_size;   /* largest world_size of the #rank lines */
	int origin_scan;
	char origin[32], producer[32];
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
	struct ev_map srcmap;  /* input source + 1 -> output source + 1 */
	uint32_t last_src, out_src; /* cache of the last mapping */
	uint32_t cfg0, rank0;  /* the first clock seen (pass 1) */
	int nkeys;             /* 0, 1 or 2 (several clocks) */
	int warned_regex, warned_key;
};

static void usage(FILE *f)
{
	fputs(
"Usage: ev-merge [options] [LABEL=]INPUT...\n"
"Merge ev streams into one stream in time order (ts, rank, stream, seq; ties\n"
"by input order).  Every source of every input becomes a source of the\n"
"output ('#src N ...', src = N in its records), keeping all its keys; an\n"
"input without #src lines is one source (label=LABEL file=INPUT).  Strings\n"
"and metadata of all inputs appear once.  INPUT may be '-' (once).\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -k, --src-keys=LIST    names for the groups of --src-regex, e.g. threads,channels\n"
"  -x, --src-regex=RE     POSIX extended RE matched against each input path;\n"
"                         its groups become key=value on its #src lines\n"
"  -R, --rank-from-src    set each record's rank to its input's index (one\n"
"                         file per rank); #rank lines are renumbered likewise\n"
"  -s, --sort             accept inputs out of time order: external merge sort\n"
"  -S, --buffer-size=SIZE memory for --sort, e.g. 64M [256M]; sorted runs go\n"
"                         to $TMPDIR and are removed on every exit\n"
"  -a, --align=MODE       clock alignment of ranks, per configuration: none,\n"
"                         start (each rank's first event at 0), coll (offset\n"
"                         per rank from anchors: collective ends, p2p pairs,\n"
"                         NCCL kernels), coll-drift (offset and drift) [none]\n"
"      --ref-rank=R       reference rank of each configuration [lowest rank]\n"
"      --report=FILE      write the alignment report as TSV to FILE\n"
"      --config-keys=LIST #src keys that identify a configuration [all but\n"
"                         file, input, rank, base_ns, host, node, pid,\n"
"                         device, gpu, nsys, schema, nccl]\n"
"      --drift-min-span=T anchors must span T for a drift to be fitted [1s]\n"
"      --warn-residual=T  warn when a rank's median residual exceeds T [10us]\n"
"  -f, --force            write binary output to a terminal\n"
"  -q, --quiet            no progress, warnings or alignment report\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Alignment reads the inputs twice (a pipe is spooled to a temporary file);\n"
"inputs holding several ranks go through the external sorter, so the output\n"
"is in time order.  A rank's clock is t_rank = t_ref + O + D*(t_ref - t0);\n"
"its times become t0 + (t - O - t0)/(1 + D).  The report (stderr, --report)\n"
"gives per rank O, D, anchors used and residuals; the output keeps\n"
"'#meta align.rank<R>.offset_ns=O align.rank<R>.drift_ppm=D align.rank<R>.t0_ns=T'.\n"
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
	int c = ev_rec_order_cmp(a, b);
	return c ? c < 0 : ia < ib;
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

/* --------------------------------------------------------------------- */

static int open_input(struct opts *o, struct input *in, ev_strtab *st, ev_meta *meta)
{
	int rc = ev_reader_open(&in->r, in->spool ? in->spool : in->path, st, meta);
	if (rc)
		return ev_cli_input_error(&o->cli, in->path, rc);
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
		return ev_cli_input_error(&o->cli, "-", rc);
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

/* ---- sources ----------------------------------------------------------
 * Every source of every input becomes one source of the output, renumbered
 * in order of appearance.  Its #src keys are kept; ev-merge adds its own
 * (label, the input path as file= or input=, the --src-regex keys). */

struct sources {
	uint16_t *cfg_of;      /* output source -> configuration id */
	uint32_t n;            /* output sources so far */
	ev_meta *meta;         /* the output #src lines, parsed */
};

/* Configuration names, shared by both passes. */
static char **cfg_names;
static uint32_t ncfg;
static struct ev_map cfg_ix; /* hash(name) -> id + 1 */

static int cfg_id(const char *name, uint32_t *id)
{
	uint64_t h = ev_hash64(name, strlen(name)) | 1;
	uint64_t *p = ev_map_get(&cfg_ix, h);
	if (p) {
		*id = (uint32_t)(*p - 1);
		return 0;
	}
	if (ncfg >= 65535)
		return EV_ERR_LIMIT;
	char **nn = realloc(cfg_names, (ncfg + 1) * sizeof *nn);
	if (!nn)
		return EV_ERR_NOMEM;
	cfg_names = nn;
	if (!(cfg_names[ncfg] = strdup(name)) || ev_map_put(&cfg_ix, h, (uint64_t)ncfg + 1))
		return EV_ERR_NOMEM;
	*id = ncfg++;
	return 0;
}

static void sources_reset(struct sources *s, struct input *ins, int n)
{
	ev_meta_free(s->meta);
	s->meta = ev_meta_new();
	s->n = 0;
	for (int i = 0; i < n; i++) {
		ev_map_free(&ins[i].srcmap);
		ev_map_init(&ins[i].srcmap);
	}
}

/* Append " key=value" (value escaped, spaces made '_'). */
static size_t put_kv(char *line, size_t cap, size_t n, const char *key, const char *val, size_t vlen)
{
	char esc[8192];
	if (vlen > 4000)
		vlen = 4000;
	ev_text_escape(val, vlen, esc, sizeof esc);
	for (char *p = esc; *p; p++)
		if (*p == ' ')
			*p = '_';
	if (n < cap)
		n += (size_t)snprintf(line + n, cap - n, " %s=%s", key, esc);
	return n;
}

/* The regex keys of input i: their values in val/len (NULL when not matched). */
static int regex_keys(struct opts *o, struct input *in, const char **val, size_t *len)
{
	if (!o->src_regex)
		return 0;
	regmatch_t m[10];
	if (regexec(&o->re, in->path, 10, m, 0) != 0) {
		if (!in->warned_regex)
			ev_cli_warn(&o->cli, "%s: does not match --src-regex; no keys for this source", in->path);
		in->warned_regex = 1;
		return 0;
	}
	for (size_t k = 0; k < o->nkeys; k++) {
		val[k] = m[k + 1].rm_so < 0 ? NULL : in->path + m[k + 1].rm_so;
		len[k] = m[k + 1].rm_so < 0 ? 0 : (size_t)(m[k + 1].rm_eo - m[k + 1].rm_so);
	}
	return 1;
}

/* Build the output #src line of output source out for input i: from the
 * input's own #src line (text after "#src N", may be NULL) plus our keys. */
static int compose_src(struct opts *o, struct input *in, uint32_t out, const char *rest, size_t rlen, char *line,
                       size_t cap, size_t *lenp)
{
	const char *rv[10] = { 0 };
	size_t rl[10] = { 0 };
	int have_re = regex_keys(o, in, rv, rl);
	int seen_file = 0, seen_input = 0, seen_key[10] = { 0 };
	const char *path = strcmp(in->path, "-") == 0 ? "standard input" : in->path;
	size_t n = (size_t)snprintf(line, cap, "#src %u", out);
	if (in->label)
		n = put_kv(line, cap, n, "label", in->label, strlen(in->label));
	const char *p = rest, *end = rest ? rest + rlen : NULL;
	while (p && p < end) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		const char *t = p;
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		if (p == t)
			break;
		const char *eq = memchr(t, '=', (size_t)(p - t));
		size_t klen = eq ? (size_t)(eq - t) : (size_t)(p - t);
		char key[128];
		snprintf(key, sizeof key, "%.*s", (int)(klen < 127 ? klen : 127), t);
		if (strcmp(key, "label") == 0 && in->label) {
			/* Our label names the source now; the earlier one is kept. */
			if (n < cap)
				n += (size_t)snprintf(line + n, cap - n, " label.prev%.*s", (int)(p - t - (int)klen), t + klen);
			continue;
		}
		seen_file |= strcmp(key, "file") == 0;
		seen_input |= strcmp(key, "input") == 0;
		int replaced = 0;
		for (size_t k = 0; have_re && k < o->nkeys; k++)
			if (rv[k] && strcmp(key, o->keys[k]) == 0) {
				seen_key[k] = 1;
				const char *v = eq ? eq + 1 : p;
				if ((size_t)(p - v) != rl[k] || memcmp(v, rv[k], rl[k]) != 0) {
					if (!in->warned_key)
						ev_cli_warn(&o->cli, "%s: --src-regex sets %s=%.*s over the input's %.*s", in->path,
						            key, (int)rl[k], rv[k], (int)(p - t), t);
					in->warned_key = 1;
					n = put_kv(line, cap, n, key, rv[k], rl[k]);
					replaced = 1;
				}
			}
		if (!replaced && n < cap)
			n += (size_t)snprintf(line + n, cap - n, " %.*s", (int)(p - t), t);
	}
	if (!seen_file)
		n = put_kv(line, cap, n, "file", path, strlen(path));
	else if (!seen_input)
		n = put_kv(line, cap, n, "input", path, strlen(path));
	for (size_t k = 0; have_re && k < o->nkeys; k++)
		if (rv[k] && !seen_key[k])
			n = put_kv(line, cap, n, o->keys[k], rv[k], rl[k]);
	if (n >= cap)
		return ev_cli_error(&o->cli, "%s: source description too long", in->path);
	*lenp = n;
	return 0;
}

/* Map source in_src of input i to an output source, defining it from the
 * input's #src line (rest != NULL) or as a default one.  Writes the #src
 * line when w is not NULL. */
static int map_src(struct opts *o, struct sources *s, struct input *in, uint32_t in_src, const char *rest,
                   size_t rlen, ev_writer *w, uint32_t *outp)
{
	uint64_t *p = ev_map_get(&in->srcmap, (uint64_t)in_src + 1);
	uint32_t out;
	if (p) {
		out = (uint32_t)(*p - 1);
		if (!rest) {
			*outp = out;
			return 0;
		}
	} else {
		if (s->n >= 65535)
			return ev_cli_error(&o->cli, "%s: more than 65535 sources in all inputs", in->path);
		out = s->n++;
		if (ev_map_put(&in->srcmap, (uint64_t)in_src + 1, (uint64_t)out + 1))
			return ev_cli_error(&o->cli, "out of memory");
	}
	char line[16384];
	size_t len = 0;
	int status = compose_src(o, in, out, rest, rlen, line, sizeof line, &len);
	if (status)
		return status;
	if (ev_meta_add_line(s->meta, line, len) != EV_OK)
		return ev_cli_error(&o->cli, "%s: bad #src line: %.200s", in->path, line);
	char name[4096];
	uint32_t cfg = 0;
	const struct ev_src_info *si = ev_meta_src(s->meta, out);
	size_t nl = ev_align_config_name(si, (const char *const *)o->cfg_keys, o->ncfg_keys, name, sizeof name);
	const char *input = si && o->input_is_run && !o->ncfg_keys ? ev_kv_get(si->kv, si->nkv, "input") : NULL;
	if (input && nl < sizeof name)
		nl += (size_t)snprintf(name + nl, sizeof name - nl, "%sinput=%s", nl ? " " : "", input);
	if (nl >= sizeof name || cfg_id(name, &cfg))
		return ev_cli_error(&o->cli, "%s: too many or too long configurations", in->path);
	s->cfg_of[out] = (uint16_t)cfg;
	if (w) {
		int rc = ev_write_text(w, line, len);
		if (rc)
			return ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
	*outp = out;
	return 0;
}

/* A #src line read from input i. */
static int src_line(struct opts *o, struct sources *s, struct input *in, const char *line, size_t len,
                    ev_writer *w)
{
	const char *p = line + 5, *end = line + len, *t;
	while (p < end && *p == ' ')
		p++;
	t = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	char num[16];
	uint32_t n;
	snprintf(num, sizeof num, "%.*s", (int)(p - t < 15 ? p - t : 15), t);
	if (ev_parse_u32(num, &n) || n > 65535)
		return ev_cli_error(&o->cli, "%s: line %llu: bad #src number '%s'", in->path,
		                    (unsigned long long)ev_reader_lineno(in->r), num);
	uint32_t out;
	return map_src(o, s, in, n, p, (size_t)(end - p), w, &out);
}

/* ---- alignment, pass 1 ------------------------------------------------- */

static const char *mode_name(enum align m)
{
	return m == AL_START ? "start" : m == AL_COLL ? "coll" : m == AL_DRIFT ? "coll-drift" : "none";
}

/* Read every input once: anchors, first times, the ranks of each input.
 * With al NULL, only the headers' #src lines: whether input= separates
 * runs (one file per run merged) or ranks of one run (one file per rank),
 * which the configurations of the alignment depend on. */
static int scan_for_alignment(struct opts *o, struct input *ins, int n, struct sources *srcs, ev_align *al)
{
	int status = 0;
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
		int rc;
		struct ev_rec r;
		uint32_t last_src = UINT32_MAX, out = 0;
		while ((rc = ev_read(in->r, &r)) == EV_REC || rc == EV_TEXT) {
			if (rc == EV_TEXT) {
				const char *line;
				size_t len;
				ev_reader_text(in->r, &line, &len);
				if (len >= 5 && memcmp(line, "#src ", 5) == 0) {
					if ((status = src_line(o, srcs, in, line, len, NULL)) != 0)
						break;
					last_src = UINT32_MAX;
				}
				continue;
			}
			if (!al)
				break; /* the header is read */
			if (!o->origin_scan) {
				/* What the times mean, for the report of unaligned ranks. */
				const char *org = ev_reader_header(in->r, "origin"), *prod = ev_reader_header(in->r, "producer");
				snprintf(o->origin, sizeof o->origin, "%s", org ? org : "");
				snprintf(o->producer, sizeof o->producer, "%s", prod ? prod : "");
				o->origin_scan = 1;
			}
			if (r.src != last_src) {
				if ((status = map_src(o, srcs, in, r.src, NULL, 0, NULL, &out)) != 0)
					break;
				last_src = r.src;
			}
			uint32_t rank = o->rank_from_src ? (uint32_t)i : r.rank, cfg = srcs->cfg_of[out];
			if (!in->nkeys) {
				in->cfg0 = cfg;
				in->rank0 = rank;
				in->nkeys = 1;
			} else if (cfg != in->cfg0 || rank != in->rank0) {
				in->nkeys = 2; /* several clocks in one input: needs a sort after the correction */
			}
			if ((rc = ev_align_add(al, cfg, rank, &r)) != EV_OK) {
				status = ev_cli_error(&o->cli, "out of memory");
				break;
			}
		}
		if (!status && rc < 0)
			status = ev_cli_reader_error(&o->cli, in->r, rc);
		close_input(in);
	}
	if (!al) {
		if (!status)
			o->input_is_run = ev_align_input_is_config(srcs->meta);
		goto out;
	}
	/* The ranks a configuration should have. */
	for (size_t k = 0; meta && k < ev_meta_nrank(meta); k++) {
		const struct ev_rank_info *ri = ev_meta_rank_at(meta, k);
		const char *ws = ev_kv_get(ri->kv, ri->nkv, "world_size");
		uint32_t v;
		if (ws && ev_parse_u32(ws, &v) == 0 && v > o->world_size && v <= (1u << 24))
			o->world_size = v;
	}
	if (!status && ev_align_solve(al) != EV_OK)
		status = ev_cli_error(&o->cli, "out of memory");
out:
	ev_strtab_free(st);
	ev_meta_free(meta);
	return status;
}

/* Take the output's origin from the first input that has one. */
static int set_origin(struct opts *o, ev_writer *w, const char *origin)
{
	o->header_set = 1;
	if (origin && ev_writer_header(w, "origin", origin) != EV_OK)
		return ev_cli_error(&o->cli, "cannot use origin '%s' of the inputs", origin);
	return 0;
}

/* ---- alignment report -------------------------------------------------- */

static void fmt_ns(char *buf, size_t n, double v)
{
	double a = v < 0 ? -v : v;
	if (a >= 1e9)
		snprintf(buf, n, "%.6f s", v / 1e9);
	else if (a >= 1e6)
		snprintf(buf, n, "%.3f ms", v / 1e6);
	else if (a >= 1e3)
		snprintf(buf, n, "%.3f us", v / 1e3);
	else
		snprintf(buf, n, "%.0f ns", v);
}

static const char *state_name(enum ev_align_state s)
{
	switch (s) {
	case EV_ALIGNED_REF: return "reference";
	case EV_ALIGNED: return "aligned";
	case EV_ALIGNED_START: return "start";
	case EV_UNALIGNED: return "unaligned";
	}
	return "?";
}

/* One rank per line on stderr (unless -q) and as TSV in --report; warnings
 * for what the alignment could not do. */
static int report_alignment(struct opts *o, const ev_align *al)
{
	ev_output *rf = NULL;
	int rc = EV_OK;
	if (o->report && (rc = ev_output_open(&rf, o->report)) != EV_OK)
		return ev_cli_file_error(&o->cli, o->report, rc);
	if (rf)
		rc = ev_output_printf(rf, "%s", "config\trank\tstate\tvia\toffset_ns\tdrift_ppm\tt0_ns\tanchors_coll\tanchors_p2p\tanchors_kernel\t"
		      "used_coll\tused_p2p\tused_kernel\toutliers\tresid_median_ns\tresid_max_ns\tspan_ns\tnote\n");
	size_t n = ev_align_count(al);
	int say = !o->cli.quiet;
	uint64_t kinds_cfg[EV_ANCHOR_KINDS];
	for (size_t k = 0; k < n;) {
		const struct ev_align_rank *r0 = ev_align_at(al, k);
		uint32_t cfg = r0->config;
		size_t e = k, unaligned = 0, bad = 0, nodrift[6] = { 0 };
		memset(kinds_cfg, 0, sizeof kinds_cfg);
		while (e < n && ev_align_at(al, e)->config == cfg) {
			const struct ev_align_rank *r = ev_align_at(al, e);
			for (int x = 0; x < EV_ANCHOR_KINDS; x++)
				kinds_cfg[x] += r->anchors[x];
			e++;
		}
		const char *cname = *cfg_names[cfg] ? cfg_names[cfg] : "(single)";
		if (say)
			ev_cli_note(&o->cli, "align %s: configuration %s: %zu ranks, anchors coll %llu, p2p %llu, kernel %llu",
			        mode_name(o->align), cname, e - k, (unsigned long long)kinds_cfg[0],
			        (unsigned long long)kinds_cfg[1], (unsigned long long)kinds_cfg[2]);
		for (size_t x = k; x < e; x++) {
			const struct ev_align_rank *r = ev_align_at(al, x);
			const struct ev_align_fit *f = &r->fit;
			char off[32], med[32], mx[32];
			fmt_ns(off, sizeof off, (double)f->offset);
			fmt_ns(med, sizeof med, f->resid_med);
			fmt_ns(mx, sizeof mx, f->resid_max);
			const char *note = r->state == EV_ALIGNED ? ev_drift_note_text(f->drift_note)
			                   : r->state == EV_UNALIGNED ? "no anchor shared with an aligned rank" : "";
			if (say && r->state == EV_ALIGNED)
				ev_cli_note(&o->cli, "align:   rank %u: offset %s, drift %+.3f ppm, via rank %u, anchors %llu coll %llu p2p %llu kernel (%zu outliers), residual median %s max %s; %s",
				        r->rank, off, f->drift * 1e6, r->via, (unsigned long long)r->used[0],
				        (unsigned long long)r->used[1], (unsigned long long)r->used[2], f->outliers, med, mx, note);
			else if (say && r->state == EV_ALIGNED_START)
				ev_cli_note(&o->cli, "align:   rank %u: first event at %lld ns moved to 0", r->rank,
				        (long long)f->offset);
			else if (say)
				ev_cli_note(&o->cli, "align:   rank %u: %s", r->rank,
				        r->state == EV_ALIGNED_REF ? "reference" : "left on its own clock");
			if (rf && !rc)
				rc = ev_output_printf(rf, "%s\t%u\t%s\t%u\t%lld\t%.6f\t%lld\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%zu\t%.0f\t%.0f\t%llu\t%s\n",
				        cname, r->rank, state_name(r->state), r->via, (long long)f->offset, f->drift * 1e6,
				        (long long)f->t0, (unsigned long long)r->anchors[0], (unsigned long long)r->anchors[1],
				        (unsigned long long)r->anchors[2], (unsigned long long)r->used[0],
				        (unsigned long long)r->used[1], (unsigned long long)r->used[2], f->outliers, f->resid_med,
				        f->resid_max, (unsigned long long)f->span, note);
			if (r->state == EV_UNALIGNED)
				unaligned++;
			if (r->state == EV_ALIGNED && f->resid_med > (double)o->aopt.warn_residual)
				bad++;
			if (r->state == EV_ALIGNED && o->align == AL_DRIFT)
				nodrift[f->drift_note]++;
		}
		if (o->align >= AL_COLL) {
			if (kinds_cfg[0] + kinds_cfg[1] == 0 && e - k > 1)
				ev_cli_warn(&o->cli, "configuration %s: no coll or p2p records with a communicator; %s", cname,
				            kinds_cfg[2] ? "aligned by NCCL kernels matched by (stream, ordinal, name)"
				                         : "and no NCCL kernels either: nothing to align by");
			if (unaligned && unaligned == e - k - 1) {
				if (!strcmp(o->origin, "unix"))
					ev_cli_warn(&o->cli, "configuration %s: no rank could be aligned; times stay on each trace's own UTC clock (origin=unix%s)",
					            cname, !strcmp(o->producer, "nsys2ev") ? ": the nsys session start in UTC" : "");
				else
					ev_cli_warn(&o->cli, "configuration %s: no rank could be aligned; times left as they are", cname);
			} else if (unaligned) {
				ev_cli_warn(&o->cli, "configuration %s: %zu rank(s) share no anchor with an aligned rank and stay on their own clock",
				            cname, unaligned);
			}
			if (bad)
				ev_cli_warn(&o->cli, "configuration %s: %zu rank(s) with a median residual above %llu ns: their alignment is doubtful (see the report)",
				            cname, bad, (unsigned long long)o->aopt.warn_residual);
			for (int d = EV_DRIFT_SHORT_SPAN; d <= EV_DRIFT_IMPLAUSIBLE; d++)
				if (nodrift[d])
					ev_cli_warn(&o->cli, "configuration %s: %zu rank(s) %s%s", cname, nodrift[d],
					            ev_drift_note_text((enum ev_drift_note)d),
					            d == EV_DRIFT_SHORT_SPAN ? " (--drift-min-span)" : "");
		}
		/* Ranks of world_size that never appeared. */
		if (o->world_size && o->world_size <= 65536 && !o->rank_from_src) {
			char miss[256];
			size_t ml = 0, nm = 0;
			for (uint32_t rk = 0; rk < o->world_size; rk++)
				if (!ev_align_get(al, cfg, rk)) {
					if (ml < sizeof miss - 16)
						ml += (size_t)snprintf(miss + ml, sizeof miss - ml, "%s%u", nm ? "," : "", rk);
					nm++;
				}
			if (nm)
				ev_cli_warn(&o->cli, "configuration %s: %zu of world_size %u rank(s) missing: %s%s", cname, nm,
				            o->world_size, miss, ml >= sizeof miss - 16 ? ",..." : "");
		}
		k = e;
	}
	if (rf) {
		if (rc)
			ev_output_abort(rf);
		else
			rc = ev_output_close(rf);
		if (rc)
			return ev_cli_file_error(&o->cli, o->report, rc);
	}
	return 0;
}

static int write_align_meta(struct opts *o, ev_writer *w, const ev_align *al)
{
	int rc = 0;
	for (size_t k = 0; k < ev_align_count(al) && !rc; k++) {
		const struct ev_align_rank *r = ev_align_at(al, k);
		if (r->state == EV_UNALIGNED)
			continue; /* consumers read a missing rank as "not aligned" */
		char pre[32] = "";
		if (ncfg > 1)
			snprintf(pre, sizeof pre, "cfg%u.", r->config);
		rc = ev_write_textf(w, "#meta align.%srank%u.offset_ns=%lld align.%srank%u.drift_ppm=%.6f align.%srank%u.t0_ns=%lld",
		                    pre, r->rank, (long long)r->fit.offset, pre, r->rank, r->fit.drift * 1e6, pre, r->rank,
		                    (long long)r->fit.t0);
	}
	for (uint32_t c = 0; ncfg > 1 && c < ncfg && !rc; c++) {
		char esc[8192];
		ev_text_escape(cfg_names[c], strlen(cfg_names[c]), esc, sizeof esc);
		for (char *p = esc; *p; p++)
			if (*p == ' ')
				*p = ',';
		rc = ev_write_textf(w, "#meta align.cfg%u=%s", c, esc);
	}
	if (!rc)
		rc = ev_write_textf(w, "#meta align.mode=%s", mode_name(o->align));
	return rc ? ev_cli_file_error(&o->cli, o->cli.output, rc) : 0;
}

/* ---- pass 2: the merge --------------------------------------------------- */

/* Pass a text line of input i through, adapting #src and #rank. */
static int pass_text(struct opts *o, ev_writer *w, struct sources *srcs, int i, struct input *in, const char *line,
                     size_t len)
{
	int rc;
	if (len >= 5 && memcmp(line, "#src ", 5) == 0)
		return src_line(o, srcs, in, line, len, w);
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

struct merge { struct opts *o; ev_writer *w; struct input *ins; struct sources *srcs; const ev_align *al; };

/* Advance input i to its next record, writing text lines on the way. */
static int advance(struct merge *m, int i)
{
	struct opts *o = m->o;
	struct input *in = &m->ins[i];
	for (;;) {
		int rc = ev_read(in->r, &in->rec);
		if (rc == EV_TEXT) {
			const char *line;
			size_t len;
			/* The header must precede the first line written. */
			if (!o->header_set && (rc = set_origin(o, m->w, ev_reader_header(in->r, "origin"))) != 0)
				return rc;
			ev_reader_text(in->r, &line, &len);
			if ((rc = pass_text(o, m->w, m->srcs, i, in, line, len)) != 0)
				return rc;
			if (len >= 5 && memcmp(line, "#src ", 5) == 0)
				in->last_src = UINT32_MAX;
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
		if (in->rec.src != in->last_src) {
			if (!o->header_set && (rc = set_origin(o, m->w, ev_reader_header(in->r, "origin"))) != 0)
				return rc;
			if ((rc = map_src(o, m->srcs, in, in->rec.src, NULL, 0, m->w, &in->out_src)) != 0)
				return rc;
			in->last_src = in->rec.src;
		}
		int changed = 0;
		if (o->rank_from_src && in->rec.rank != (uint32_t)i) {
			in->rec.rank = (uint32_t)i;
			changed = 1;
		}
		if (in->rec.src != in->out_src) {
			in->rec.src = (uint16_t)in->out_src;
			changed = 1;
		}
		if (o->align != AL_NONE) {
			int64_t ts = in->rec.ts;
			uint64_t dur = in->rec.dur;
			ev_align_apply_rec(m->al, m->srcs->cfg_of[in->out_src], in->rec.rank, &in->rec);
			changed |= ts != in->rec.ts || dur != in->rec.dur;
		}
		if (changed)
			in->line = NULL;
		else
			ev_reader_record_line(in->r, &in->line, &in->line_len);
		return 0;
	}
}

/* External sort: for --sort, and for alignment of inputs that hold several
 * clocks (their corrected records are no longer in order). */
static int sort_merge(struct merge *m, int n)
{
	struct opts *o = m->o;
	ev_sorter *s;
	int status = 0, rc = ev_sorter_open(&s, o->sort_bytes, NULL);
	if (rc)
		return ev_cli_error(&o->cli, "out of memory for --buffer-size %llu", (unsigned long long)o->sort_bytes);
	/* Text lines go out while reading, before every record: they stay ahead
	 * of the records that use them.  Records are added input by input, so
	 * equal keys keep input order. */
	for (int i = 0; i < n && !status; i++)
		while (!m->ins[i].done && !status) {
			if ((rc = ev_sorter_add(s, &m->ins[i].rec)) != EV_OK)
				break;
			status = advance(m, i);
		}
	if (!status && !rc)
		rc = ev_sorter_finish(s, m->w, NULL, NULL);
	if (!status && rc) {
		if (rc == EV_ERR_IO && *ev_sorter_errpath(s))
			status = ev_cli_error(&o->cli, "%s: %s", ev_sorter_errpath(s), strerror(errno));
		else if (rc == EV_ERR_NOMEM)
			status = ev_cli_error(&o->cli, "out of memory");
		else
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
	ev_sorter_close(s);
	return status;
}

static int run_merge(struct merge *m, int n)
{
	struct opts *o = m->o;
	struct input *ins = m->ins;
	int status = 0, rc;
	struct heap h = { calloc((size_t)n, sizeof(int)), 0, ins };
	uint64_t nrec = 0;
	if (!h.v)
		return ev_cli_error(&o->cli, "out of memory");
	/* The output's origin: the first input's; say so when inputs disagree. */
	const char *origin = NULL;
	for (int i = 0; i < n && !status; i++) {
		const char *org = ev_reader_header(ins[i].r, "origin");
		if (!o->header_set && (status = set_origin(o, m->w, org)) != 0)
			break;
		/* Reading the first item fixes the segment header of each input. */
		status = advance(m, i);
		org = ev_reader_header(ins[i].r, "origin");
		if (org && !origin)
			origin = org;
		else if (org && origin && strcmp(org, origin) != 0)
			ev_cli_warn(&o->cli, "%s: origin=%s differs from origin=%s of an earlier input; times may not be comparable",
			            ins[i].path, org, origin);
	}
	if (!status && o->align != AL_NONE)
		status = write_align_meta(o, m->w, m->al);
	if (status)
		goto out;
	if (o->sort || o->need_sort) {
		status = sort_merge(m, n);
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
		rc = in->line ? ev_write_escaped(m->w, &in->rec, in->line, in->line_len) : ev_write(m->w, &in->rec);
		if (rc) {
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
			goto out;
		}
		if ((++nrec & 0xFFFF) == 0)
			ev_cli_progress(&o->cli, nrec, 0);
		if ((status = advance(m, i)) != 0)
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

static int run(struct opts *o)
{
	int status = 0, rc;
	struct input *ins = calloc((size_t)o->ninputs, sizeof *ins);
	struct sources srcs;
	ev_align *al = NULL;
	ev_writer *w = NULL;
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	memset(&srcs, 0, sizeof srcs);
	srcs.cfg_of = calloc(65536, sizeof *srcs.cfg_of);
	ev_map_init(&cfg_ix);
	if (!ins || !st || !meta || !srcs.cfg_of) {
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
		ev_map_init(&ins[i].srcmap);
		if (strcmp(ins[i].path, "-") == 0 && stdin_used++) {
			status = ev_cli_usage_error(&o->cli, "standard input ('-') can be given only once");
			goto done;
		}
	}
	if (o->align != AL_NONE) {
		for (int i = 0; i < o->ninputs; i++)
			if (strcmp(ins[i].path, "-") == 0 && (status = spool_stdin(o, &ins[i])) != 0)
				goto done;
		o->aopt.mode = o->align == AL_START ? EV_ALIGN_START : o->align == AL_COLL ? EV_ALIGN_OFFSET : EV_ALIGN_DRIFT;
		o->aopt.ref_rank = o->ref_rank;
		if (ev_align_new(&al, &o->aopt) != EV_OK) {
			status = ev_cli_error(&o->cli, "out of memory");
			goto done;
		}
		sources_reset(&srcs, ins, o->ninputs);
		if ((status = scan_for_alignment(o, ins, o->ninputs, &srcs, NULL)) != 0)
			goto done;
		for (uint32_t c = 0; c < ncfg; c++)
			free(cfg_names[c]);
		ncfg = 0;
		ev_map_free(&cfg_ix);
		ev_map_init(&cfg_ix);
		sources_reset(&srcs, ins, o->ninputs);
		if ((status = scan_for_alignment(o, ins, o->ninputs, &srcs, al)) != 0)
			goto done;
		if ((status = report_alignment(o, al)) != 0)
			goto done;
		/* An input holding several ranks (or configurations) is ordered by
		 * uncorrected time; corrected, it needs the sorter. */
		for (int i = 0; i < o->ninputs; i++)
			if (ins[i].nkeys > 1 && o->align != AL_NONE)
				o->need_sort = 1;
	}
	sources_reset(&srcs, ins, o->ninputs);
	if (!srcs.meta) {
		status = ev_cli_error(&o->cli, "out of memory");
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
	for (int i = 0; i < o->ninputs && !status; i++) {
		status = open_input(o, &ins[i], st, meta);
		ins[i].last_src = UINT32_MAX;
	}
	if (status)
		goto done;
	struct merge m = { o, w, ins, &srcs, al };
	status = run_merge(&m, o->ninputs);
	if (status)
		goto done;
	rc = ev_writer_close(w);
	w = NULL;
	if (rc)
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
done:
	ev_writer_abort(w);
	if (ins)
		for (int i = 0; i < o->ninputs; i++) {
			close_input(&ins[i]);
			ev_map_free(&ins[i].srcmap);
		}
	remove_spool();
	free(spool_path);
	spool_path = NULL;
	ev_align_free(al);
	ev_meta_free(srcs.meta);
	free(srcs.cfg_of);
	for (uint32_t c = 0; c < ncfg; c++)
		free(cfg_names[c]);
	free(cfg_names);
	ev_map_free(&cfg_ix);
	ev_strtab_free(st);
	ev_meta_free(meta);
	free(ins);
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
		{ "report", required_argument, NULL, 2 },
		{ "config-keys", required_argument, NULL, 3 },
		{ "drift-min-span", required_argument, NULL, 4 },
		{ "warn-residual", required_argument, NULL, 5 },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	int c, status = 0, have_re = 0;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev-merge");
	o.sort_bytes = 256u << 20;
	o.ref_rank = -1;
	ev_align_opts_default(&o.aopt);
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
		case 2: o.report = optarg; break;
		case 3: {
			char *copy = strdup(optarg), *save = NULL;
			for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				o.cfg_keys = realloc(o.cfg_keys, (o.ncfg_keys + 1) * sizeof *o.cfg_keys);
				o.cfg_keys[o.ncfg_keys++] = strdup(t);
			}
			free(copy);
			break;
		}
		case 4:
		case 5: {
			double v;
			char *end;
			v = strtod(optarg, &end);
			double unit = !strcmp(end, "s") ? 1e9 : !strcmp(end, "ms") ? 1e6 : !strcmp(end, "us") ? 1e3
			              : !strcmp(end, "ns") || !*end ? 1 : -1;
			if (end == optarg || unit < 0 || !(v >= 0) || v * unit > 1e18)
				{ status = ev_cli_usage_error(&o.cli, "--%s: expected a time like 500ms, 2s or 10us, got '%s'",
				                              c == 4 ? "drift-min-span" : "warn-residual", optarg); goto out; }
			if (c == 4)
				o.aopt.min_drift_span = (uint64_t)(v * unit);
			else
				o.aopt.warn_residual = (uint64_t)(v * unit);
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
	if (o.report && o.align == AL_NONE)
		{ status = ev_cli_usage_error(&o.cli, "--report needs --align"); goto out; }
	static char *stdin_only[] = { (char *)"-" };
	o.inputs = optind < argc ? argv + optind : stdin_only;
	o.ninputs = optind < argc ? argc - optind : 1;
	if (o.ninputs > 65535)
		{ status = ev_cli_usage_error(&o.cli, "at most 65535 inputs"); goto out; }
	ev_cli_cleanup_on_signal(remove_spool);
	/* All inputs are open at once: past 256 their read buffers (256 KiB
	 * each by default) share 64 MiB. */
	if (o.ninputs > 256)
		ev_input_set_default_buffer((64u << 20) / (unsigned)o.ninputs);
	status = run(&o);
out:
	if (have_re)
		regfree(&o.re);
	for (size_t k = 0; k < o.nkeys; k++)
		free(o.keys[k]);
	free(o.keys);
	for (size_t k = 0; k < o.ncfg_keys; k++)
		free(o.cfg_keys[k]);
	free(o.cfg_keys);
	return ev_cli_finish(&o.cli, status);
}
