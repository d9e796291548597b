/* SPDX-License-Identifier: MIT */
/*
 * fuzz_goal.c - lib/goal on hostile input, through its public entry points
 * (include/ev/goal.h).
 *
 * 1. A GOAL round trip: an ev stream that ev_goal turns into a GOAL schedule
 *    is parsed back into SEND/RECV/CALC records with DEP edges, and ev_goal
 *    must write exactly the same schedule from those.  The parser below is
 *    strict, so it also checks the grammar the library writes.
 * 2. The same schedule, written as rank parts, must join (ev_goal_join) into
 *    the same bytes, text and binary.
 * 3. The input bytes themselves as a text part and as a binary part: the
 *    join must reject or accept them without a sanitizer report, and what it
 *    accepts must start with the header it promises.
 */
#include <sys/stat.h>

#include "fuzz.h"
#include "ev.h"
#include "ev/goal.h"

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16;
	char *b = malloc(cap + 1);
	*n = 0;
	for (size_t got; b && (got = fread(b + *n, 1, cap - *n, f)) > 0;) {
		*n += got;
		if (*n == cap) {
			char *nb = realloc(b, (cap *= 2) + 1);
			if (!nb)
				abort();
			b = nb;
		}
	}
	fclose(f);
	if (b)
		b[*n] = '\0';
	return b;
}

/* ev stream at in -> schedule at out (and, with parts, rank parts in
 * parts).  Returns 0, or 1 when the library rejects the input. */
static int goal_run(const char *in, const char *out, uint32_t num_ranks, int binary, const char *parts)
{
	struct ev_goal_opts o;
	ev_goal_opts_init(&o);
	o.cpu = EV_GOAL_CPU_LANE; /* lanes as recorded: what the parser gets back */
	o.num_ranks = num_ranks;
	o.binary = binary;
	o.spool_parent = parts ? parts : fuzz_dir;
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	ev_goal *g = NULL;
	ev_reader *r = NULL;
	int status = 1, rc;
	o.meta = meta;
	if (!st || !meta || ev_goal_new(&g, &o) != EV_OK)
		abort();
	if (ev_reader_open(&r, in, st, meta) != EV_OK)
		goto done;
	ev_reader_skip_text(r, 1);
	ev_goal_source(g, in);
	struct ev_rec rec;
	uint64_t n = 0;
	while ((rc = ev_read(r, &rec)) > 0)
		if (ev_goal_add(g, &rec, ++n) != EV_OK)
			goto done;
	if (rc < 0 || ev_goal_finish(g) != EV_OK)
		goto done;
	/* Every failure from here on is the library's fault. */
	if (ev_goal_nranks(g) == 0)
		abort();
	if (parts) {
		if (ev_goal_write_parts(g, parts) != EV_OK)
			abort();
	} else {
		ev_output *w;
		if (ev_output_open(&w, out) != EV_OK || ev_goal_write(g, w) != EV_OK || ev_output_close(w) != EV_OK)
			abort();
	}
	status = 0;
done:
	if (r)
		ev_reader_close(r);
	ev_goal_free(g);
	ev_meta_free(meta);
	ev_strtab_free(st);
	return status;
}

/* GOAL text -> ev stream at path.  Aborts on anything the library should
 * never write; returns num_ranks. */
static uint32_t goal_to_ev(const char *text, const char *path)
{
	ev_strtab *st = ev_strtab_new();
	ev_writer *w;
	if (!st || ev_writer_open(&w, path, st) != EV_OK)
		abort();
	const char *p = text;
	unsigned long long nranks, v[6];
	int used = 0;
	if (sscanf(p, "num_ranks %llu\n%n", &nranks, &used) != 1 || used == 0)
		abort();
	p += used;
	long long rank = -1;
	struct ev_rec op;
	ev_rec_init(&op);
	int have_op = 0;
	while (*p) {
		const char *eol = strchr(p, '\n');
		if (!eol)
			abort(); /* every line ends in a newline */
		char line[256];
		size_t len = (size_t)(eol - p);
		if (len >= sizeof line)
			abort();
		memcpy(line, p, len);
		line[len] = '\0';
		p = eol + 1;
		char c;
		long long peer;
		if (sscanf(line, "rank %llu %c", &v[0], &c) == 2 && c == '{') {
			if ((long long)v[0] != rank + 1 || v[0] >= nranks)
				abort(); /* rank blocks in order */
			rank = (long long)v[0];
			continue;
		}
		if (strcmp(line, "}") == 0)
			continue;
		if (rank < 0)
			abort();
		if (sscanf(line, "l%llu: calc %llu cpu %llu", &v[0], &v[1], &v[2]) == 3) {
			ev_rec_init(&op);
			op.type = EV_CALC;
			op.dur = v[1];
			op.stream = (uint32_t)v[2];
		} else if (sscanf(line, "l%llu: send %llub to %lld tag %llu cpu %llu nic %llu", &v[0], &v[1], &peer, &v[3],
		                  &v[4], &v[5]) == 6 ||
		           sscanf(line, "l%llu: recv %llub from %lld tag %llu cpu %llu nic %llu", &v[0], &v[1], &peer, &v[3],
		                  &v[4], &v[5]) == 6) {
			ev_rec_init(&op);
			op.type = line[strcspn(line, ":") + 2] == 's' ? EV_SEND : EV_RECV;
			op.bytes = v[1];
			op.peer = (int32_t)peer;
			op.aux = (uint32_t)v[3];
			op.stream = (uint32_t)v[4];
			if (v[5] != 0)
				abort(); /* NIC 0 by default */
		} else if (sscanf(line, "l%llu requires l%llu", &v[0], &v[1]) == 2 ||
		           sscanf(line, "l%llu irequires l%llu", &v[0], &v[1]) == 2) {
			if (!have_op || v[0] != op.id || v[1] >= v[0])
				abort(); /* an edge of the op just written, to an earlier op */
			struct ev_rec d = op;
			d.type = EV_DEP;
			d.op = 0;
			d.flags = strstr(line, "irequires") ? EV_F_IREQ : 0;
			d.bytes = 0;
			d.dur = 0;
			d.peer = -1;
			d.aux = (uint32_t)v[1];
			if (ev_write(w, &d) != EV_OK)
				abort();
			continue;
		} else {
			abort();
		}
		op.rank = (uint32_t)rank;
		op.id = (uint32_t)v[0];
		op.ts = (int64_t)v[0] * 1000 + (int64_t)rank;
		if (ev_write(w, &op) != EV_OK)
			abort();
		have_op = 1;
	}
	if (ev_writer_close(w) != EV_OK)
		abort();
	ev_strtab_free(st);
	return (uint32_t)nranks;
}

static char parts_dir[128], join_out[160];

static void clear_parts(void)
{
	char path[256];
	for (uint32_t r = 0; r < 64; r++)
		for (int b = 0; b < 2; b++)
			if (!ev_goal_part_name(path, sizeof path, parts_dir, r, b))
				unlink(path);
	unlink(join_out);
}

/* Runs before fuzz.h's cleanup (registered later), which removes fuzz_dir. */
static void remove_parts_dir(void)
{
	clear_parts();
	rmdir(parts_dir);
}

/* Join the parts in parts_dir; 0 and the joined bytes, or 1. */
static int join(int binary, char **bytes, size_t *n)
{
	ev_output *w;
	struct ev_goal_error err;
	uint32_t nparts = 0;
	if (ev_output_open(&w, join_out) != EV_OK)
		abort();
	if (ev_goal_join(parts_dir, binary, 0, w, &nparts, &err) != EV_OK) {
		if (err.in_output || !err.msg[0] || err.status >= 0)
			abort(); /* a rejection says why */
		ev_output_abort(w);
		return 1;
	}
	if (ev_output_close(w) != EV_OK || !nparts)
		abort();
	if (bytes && !(*bytes = slurp(join_out, n)))
		abort();
	return 0;
}

/* The input bytes as part rank_0 of a one-rank schedule. */
static void join_raw(const uint8_t *data, size_t size, int binary)
{
	char path[256];
	clear_parts();
	if (ev_goal_part_name(path, sizeof path, parts_dir, 0, binary))
		abort();
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		abort();
	char *t = NULL;
	size_t n = 0;
	if (join(binary, &t, &n) == 0) {
		/* Accepted: the header and then the part unchanged. */
		size_t h = binary ? 14 + 16 : 12;
		if (n != h + size || memcmp(t + h, data, size) != 0)
			abort();
		if (!binary && memcmp(t, "num_ranks 1\n", 12) != 0)
			abort();
	}
	free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = fuzz_input_file(data, size, "in.ev");
	const char *g1 = fuzz_path(1, "one.goal"), *ev2 = fuzz_path(2, "back.ev"), *g2 = fuzz_path(3, "two.goal");
	if (!parts_dir[0]) {
		snprintf(parts_dir, sizeof parts_dir, "%s/parts", fuzz_dir);
		snprintf(join_out, sizeof join_out, "%s/joined", fuzz_dir);
		if (mkdir(parts_dir, 0700))
			abort();
		atexit(remove_parts_dir);
	}
	if (goal_run(in, g1, 0, 0, NULL) == 0) {
		size_t n1, n2;
		char *t1 = slurp(g1, &n1);
		if (!t1)
			abort();
		uint32_t nranks = goal_to_ev(t1, ev2);
		if (goal_run(ev2, g2, nranks, 0, NULL) != 0)
			abort();
		char *t2 = slurp(g2, &n2);
		if (!t2 || n1 != n2 || memcmp(t1, t2, n1) != 0) {
			if (getenv("EV_FUZZ_VERBOSE"))
				fprintf(stderr, "first pass:\n%s\nsecond pass:\n%s\n", t1, t2 ? t2 : "(none)");
			abort();
		}
		free(t2);
		/* Parts joined give the same schedule (small schedules only: the
		 * part names are cleared up to rank 63). */
		if (nranks <= 64) {
			char *tj = NULL;
			size_t nj = 0;
			clear_parts();
			if (goal_run(ev2, NULL, nranks, 0, parts_dir) != 0 || join(0, &tj, &nj) != 0 || nj != n1 ||
			    memcmp(tj, t1, n1) != 0)
				abort();
			free(tj);
			/* Binary: the parts joined equal the binary schedule.  (g2
			 * is removed first: the library refuses to replace a file
			 * whose inode it has read from, and a deleted input's inode
			 * may come back.) */
			clear_parts();
			unlink(g2);
			if (goal_run(ev2, g2, nranks, 1, NULL) != 0)
				abort();
			char *b1 = slurp(g2, &n2);
			if (!b1 || goal_run(ev2, NULL, nranks, 1, parts_dir) != 0 || join(1, &tj, &nj) != 0 || nj != n2 ||
			    memcmp(tj, b1, n2) != 0)
				abort();
			free(b1);
			free(tj);
		}
		free(t1);
	}
	join_raw(data, size, 0);
	join_raw(data, size, 1);
	clear_parts();
	unlink(g1);
	unlink(ev2);
	unlink(g2);
	return 0;
}
