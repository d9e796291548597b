/* SPDX-License-Identifier: MIT */
/*
 * test_tool.c - the tool driver's library parts: the option loop, option
 * words, the order message, the same-file guard that keeps inputs from
 * being overwritten, and the signal-cleanup registry past its first block
 * of slots.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ev.h"
#include "unit.h"

static char dir[] = "/tmp/ev-test-tool.XXXXXX";

static void test_words(void)
{
	static const char *const words[] = { "timeline", "kernels", "coll", NULL };
	struct ev_cli cli;
	unsigned idx = 99, mask = 0;
	ev_cli_init(&cli, "test_tool");
	CHECK(ev_cli_word(&cli, "--what", "kernels", words, &idx) == 0 && idx == 1);
	fprintf(stderr, "(an expected usage message follows)\n");
	CHECK(ev_cli_word(&cli, "--what", "kernel", words, &idx) == 2 && idx == 1);
	CHECK(ev_cli_word_list(&cli, "--only", "coll,timeline", words, &mask) == 0 && mask == 5);
	CHECK(ev_cli_word_list(&cli, "--only", "all", words, &mask) == 0 && mask == 7);
	fprintf(stderr, "(an expected usage message follows)\n");
	CHECK(ev_cli_word_list(&cli, "--only", "coll,,x", words, &mask) == 2);
}

/* A tool of the test's own for ev_cli_getopt: -x and --level=N. */
enum { OPT_LEVEL = 256 };
struct getopt_tool {
	struct ev_cli cli;
	int x, level, calls, helped;
};
static struct getopt_tool *helped_tool;

static int tool_opt(void *ctx, int code, const char *arg)
{
	struct getopt_tool *t = ctx;
	t->calls++;
	if (code == 'x') {
		t->x++;
		return 0;
	}
	if (code == OPT_LEVEL && arg && arg[0] >= '0' && arg[0] <= '9' && !arg[1]) {
		t->level = arg[0] - '0';
		return 0;
	}
	return ev_cli_usage_error(&t->cli, "--level: not a digit: '%s'", arg ? arg : "");
}

static void tool_usage(FILE *f)
{
	helped_tool->helped += f == stdout;
}

static const struct option tool_longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "level", required_argument, NULL, OPT_LEVEL },
	{ NULL, 0, NULL, 0 },
};

/* argv as a program gets it: writable strings, NULL after the last. */
static void make_argv(char (*buf)[32], char **argv, const char *const *words, int *argc)
{
	int n = 0;
	for (; words[n]; n++) {
		snprintf(buf[n], sizeof buf[n], "%s", words[n]);
		argv[n] = buf[n];
	}
	argv[n] = NULL;
	*argc = n;
}

/* Parse words with the test tool (its letters in shortopts); *first is
 * where the operands start, -1 when the parse stopped. */
static int parse(struct getopt_tool *t, const char *shortopts, const char *const *words, char **argv, int *first)
{
	static char buf[16][32];
	struct ev_cli_opts opts = { shortopts, tool_longopts, tool_opt, tool_usage };
	int argc;
	make_argv(buf, argv, words, &argc);
	memset(t, 0, sizeof *t);
	ev_cli_init(&t->cli, "test_tool");
	helped_tool = t;
	*first = -1;
	return ev_cli_getopt(&t->cli, argc, argv, &opts, t, first);
}

static void test_getopt(void)
{
	struct getopt_tool t;
	char *argv[16];
	int first;
	/* Common options, the tool's own, and options after the operands. */
	static const char *const mixed[] = { "prog", "-q", "in1", "--level=3", "-o", "out", "-x", "in2", "-f", NULL };
	CHECK(parse(&t, "x", mixed, argv, &first) == EV_CLI_RUN);
	CHECK(t.cli.quiet && !t.cli.progress && t.cli.force && strcmp(t.cli.output, "out") == 0);
	CHECK(t.x == 1 && t.level == 3 && t.calls == 2 && !t.helped);
	CHECK(first == 7 && strcmp(argv[first], "in1") == 0 && strcmp(argv[first + 1], "in2") == 0 && !argv[first + 2]);
	/* --help anywhere: the usage on stdout, exit 0, nothing after it read. */
	static const char *const help[] = { "prog", "in", "--help", "--nope", "--level=9", NULL };
	CHECK(parse(&t, "x", help, argv, &first) == 0 && t.helped == 1 && t.calls == 0 && first == -1);
	/* Unknown options and missing arguments: getopt's message, exit 2. */
	static const char *const unknown[] = { "prog", "--nope", "--help", NULL };
	fprintf(stderr, "(expected usage messages follow)\n");
	CHECK(parse(&t, "x", unknown, argv, &first) == 2 && !t.helped && first == -1);
	static const char *const missing[] = { "prog", "-x", "--level", NULL };
	CHECK(parse(&t, "x", missing, argv, &first) == 2 && t.x == 1 && t.calls == 1);
	/* The tool's own refusal stops the parse with its status. */
	static const char *const bad[] = { "prog", "--level=x", "-x", NULL };
	CHECK(parse(&t, "x", bad, argv, &first) == 2 && t.calls == 1 && t.x == 0);
	/* '+': the options end at the first operand (a subcommand); a second
	 * call parses the words after it, afresh. */
	static const char *const sub[] = { "prog", "-q", "table", "-x", "file", "--level=2", NULL };
	CHECK(parse(&t, "+x", sub, argv, &first) == EV_CLI_RUN && first == 2 && t.x == 0 && t.cli.quiet);
	static const struct ev_cli_opts after_sub = { "x", tool_longopts, tool_opt, tool_usage };
	int more;
	CHECK(ev_cli_getopt(&t.cli, 6 - first, argv + first, &after_sub, &t, &more) == EV_CLI_RUN);
	CHECK(t.x == 1 && t.level == 2 && more == 3 && strcmp(argv[first + more], "file") == 0);
	/* No operands: first is argc. */
	static const char *const none[] = { "prog", "-x", NULL };
	CHECK(parse(&t, "x", none, argv, &first) == EV_CLI_RUN && first == 2);
}

/* The one wording of a record out of time order. */
static void test_order_text(void)
{
	char buf[128];
	ev_order_text(buf, sizeof buf, -5, 7);
	CHECK(strcmp(buf, "out of order (ts -5 after 7); sort with ev-merge --sort") == 0);
}

static void test_same_file(void)
{
	char in[64], out[64], link[64];
	snprintf(in, sizeof in, "%s/in", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(link, sizeof link, "%s/link", dir);
	FILE *f = fopen(in, "w");
	CHECK(f && fputs("data\n", f) >= 0 && fclose(f) == 0);
	CHECK(symlink(in, link) == 0);
	ev_input *i;
	CHECK(ev_input_open(&i, in) == EV_OK);
	ev_output *o = NULL;
	CHECK(ev_output_open(&o, in) == EV_ERR_SAMEFILE && !o);
	CHECK(ev_output_open(&o, link) == EV_ERR_SAMEFILE && !o);
	CHECK(ev_output_open(&o, out) == EV_OK && o);
	CHECK(ev_output_close(o) == EV_OK);
	/* An output opened first: the input it would replace is refused. */
	CHECK(ev_output_open(&o, out) == EV_OK);
	ev_input *j = NULL;
	CHECK(ev_input_open(&j, out) == EV_ERR_SAMEFILE && !j);
	ev_output_abort(o);
	CHECK(ev_input_close(i) == EV_OK);
	/* Still an input of this process after closing: still refused. */
	CHECK(ev_files_check_output(in) == EV_ERR_SAMEFILE);
	CHECK(ev_files_check_output("-") == EV_OK);
	/* The input is untouched. */
	char buf[16] = { 0 };
	f = fopen(in, "r");
	CHECK(f && fgets(buf, sizeof buf, f) && strcmp(buf, "data\n") == 0);
	if (f)
		fclose(f);
	unlink(link);
	unlink(in);
	unlink(out);
}

static void test_temp_registry(void)
{
	enum { N = 1000 };
	static char paths[N][64];
	static int slots[N];
	for (int k = 0; k < N; k++) {
		snprintf(paths[k], sizeof paths[k], "%s/t%d", dir, k);
		int fd = open(paths[k], O_CREAT | O_WRONLY, 0600);
		CHECK(fd >= 0);
		close(fd);
		slots[k] = ev_temp_register(paths[k]);
		CHECK(slots[k] >= 0);
	}
	/* Unregistered ones stay, registered ones go. */
	ev_temp_unregister(slots[3]);
	ev_temp_unregister(slots[700]);
	ev_output_abort_all_signal();
	struct stat st;
	CHECK(stat(paths[3], &st) == 0 && stat(paths[700], &st) == 0);
	CHECK(stat(paths[0], &st) != 0 && stat(paths[999], &st) != 0 && stat(paths[300], &st) != 0);
	for (int k = 0; k < N; k++) {
		ev_temp_unregister(slots[k]);
		unlink(paths[k]);
	}
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_getopt);
	RUN(test_order_text);
	RUN(test_words);
	RUN(test_same_file);
	RUN(test_temp_registry);
	rmdir(dir);
	return unit_report("test_tool");
}
