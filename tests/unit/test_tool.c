/* SPDX-License-Identifier: MIT */
/*
 * test_tool.c - the tool driver's library parts: option words, the
 * same-file guard that keeps inputs from being overwritten, and the
 * signal-cleanup registry past its first block of slots.
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
	RUN(test_words);
	RUN(test_same_file);
	RUN(test_temp_registry);
	rmdir(dir);
	return unit_report("test_tool");
}
