/* SPDX-License-Identifier: MIT */
/*
 * unit.h - the few lines every C unit test shares: a test passes when it
 * adds no failed CHECK; main() RUNs each and reports the counts.
 */
#ifndef EV_UNIT_H
#define EV_UNIT_H

#include <stdio.h>
#include <unistd.h>

static int failures, checks, tests_passed, tests_failed;

static void run_test(const char *name, void (*fn)(void))
{
	int before = failures;
	fn();
	if (failures == before) {
		tests_passed++;
	} else {
		tests_failed++;
		fprintf(stderr, "FAILED: %s\n", name);
	}
}
#define RUN(fn) run_test(#fn, fn)

/* The closing lines of every unit program: its checks, then the plain
 * "N passed, N failed" line that tests/suite.sh and CI add up.  Returns
 * main's exit status. */
static int unit_report(const char *program)
{
	printf("%s: %d checks\n%d passed, %d failed\n", program, checks, tests_passed, tests_failed);
	return tests_failed != 0 || failures != 0;
}

#define CHECK(cond)                                                              \
	do {                                                                     \
		checks++;                                                        \
		if (!(cond)) {                                                   \
			failures++;                                              \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                \
	} while (0)

/* What a test wrote to the temporary file PATH (its descriptor FD from
 * mkstemp), read back into buf as a string; the file is removed and FD
 * closed.  Returns buf (empty when the file cannot be read). */
static inline char *unit_read_back(const char *path, int fd, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, size - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
	remove(path);
	close(fd);
	return buf;
}

#endif
