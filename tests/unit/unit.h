/* SPDX-License-Identifier: MIT */
/*
 * unit.h - the few lines every C unit test shares: a test passes when it
 * adds no failed CHECK; main() RUNs each and reports the counts.
 */
#ifndef EV_UNIT_H
#define EV_UNIT_H

#include <stdio.h>

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

#define CHECK(cond)                                                              \
	do {                                                                     \
		checks++;                                                        \
		if (!(cond)) {                                                   \
			failures++;                                              \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                \
	} while (0)

#endif
