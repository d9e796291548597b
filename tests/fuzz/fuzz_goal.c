/* SPDX-License-Identifier: MIT */
/*
 * fuzz_goal.c - a GOAL round trip through ev2goal's own run() (its source is
 * compiled in with main() renamed): an ev stream that ev2goal turns into a
 * GOAL schedule is parsed back into SEND/RECV/CALC records with DEP edges,
 * and ev2goal must write exactly the same schedule from those.  The parser
 * below is strict, so it also checks the grammar ev2goal writes.
 */
#include "fuzz.h"

int ev2goal_main(int argc, char **argv);
#define main ev2goal_main
#include "../../tools/ev2goal.c"
#undef main

static void goal_defaults(struct opts *o)
{
	memset(o, 0, sizeof *o);
	ev_cli_init(&o->cli, "ev2goal");
	o->cli.quiet = !getenv("EV_FUZZ_VERBOSE");
	o->cli.progress = 0;
	o->check = 1;
	o->window = 4096;
	o->cpu = CPU_LANE; /* lanes as recorded: what the parser gets back */
	o->tmpdir = fuzz_dir;
}

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

/* GOAL text -> ev stream at path.  Aborts on anything ev2goal should never
 * write; returns num_ranks. */
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
				abort(); /* --nic=0 */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *inputs[1];
	struct opts o;
	const char *in = fuzz_input_file(data, size, "in.ev");
	const char *g1 = fuzz_path(1, "one.goal"), *ev2 = fuzz_path(2, "back.ev"), *g2 = fuzz_path(3, "two.goal");
	goal_defaults(&o);
	o.cli.output = g1;
	inputs[0] = (char *)in;
	o.inputs = inputs;
	o.ninputs = 1;
	int status = run(&o);
	if (status != 0 && status != 1)
		abort();
	if (status == 0) {
		size_t n1, n2;
		char *t1 = slurp(g1, &n1);
		if (!t1)
			abort();
		uint32_t nranks = goal_to_ev(t1, ev2);
		goal_defaults(&o);
		o.cli.output = g2;
		o.num_ranks = nranks;
		inputs[0] = (char *)ev2;
		o.inputs = inputs;
		o.ninputs = 1;
		if (run(&o) != 0)
			abort();
		char *t2 = slurp(g2, &n2);
		if (!t2 || n1 != n2 || memcmp(t1, t2, n1) != 0) {
			if (getenv("EV_FUZZ_VERBOSE")) {
				fprintf(stderr, "first pass:\n%s\nsecond pass:\n%s\n", t1, t2 ? t2 : "(none)");
				if (link(ev2, "fuzz_goal.back.ev") == 0)
					fprintf(stderr, "parsed stream kept in fuzz_goal.back.ev\n");
			}
			abort();
		}
		free(t1);
		free(t2);
	}
	unlink(g1);
	unlink(ev2);
	unlink(g2);
	return 0;
}
