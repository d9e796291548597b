/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - shared set-up of the evkit fuzz harnesses: the input bytes as a
 * file the tools can open by name, a scratch directory for outputs, and
 * quiet stderr.  Used by libFuzzer (make fuzz) and by the plain driver
 * regress_main.c that replays the committed corpus under gcc's sanitizers.
 */
#ifndef EV_FUZZ_H
#define EV_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A private directory for this process, removed at exit. */
static char fuzz_dir[64];
static char fuzz_paths[4][128];

static void fuzz_cleanup(void)
{
	for (int i = 0; i < 4; i++)
		if (fuzz_paths[i][0])
			unlink(fuzz_paths[i]);
	if (fuzz_dir[0])
		rmdir(fuzz_dir);
}

/* Path of `name` in the scratch directory (slot 0-3 remembers it for
 * removal at exit). */
static const char *fuzz_path(int slot, const char *name)
{
	if (!fuzz_dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(fuzz_dir, sizeof fuzz_dir, "%s/evfuzz.XXXXXX", t && *t && strlen(t) < 40 ? t : "/tmp");
		if (!mkdtemp(fuzz_dir))
			abort();
		atexit(fuzz_cleanup);
		/* Tools report bad input on stderr, thousands of lines a second:
		 * point the stdio stream (not descriptor 2, where the sanitizers
		 * write their reports) at /dev/null. */
		if (!getenv("EV_FUZZ_VERBOSE")) {
			FILE *null = fopen("/dev/null", "w");
			if (!null)
				abort();
			stderr = null;
		}
	}
	snprintf(fuzz_paths[slot], sizeof fuzz_paths[slot], "%s/%s", fuzz_dir, name);
	return fuzz_paths[slot];
}

/* Write the input to a file; returns its path.  Not every harness needs it. */
__attribute__((unused)) static const char *fuzz_input_file(const uint8_t *data, size_t size, const char *name)
{
	const char *path = fuzz_path(0, name);
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		abort();
	return path;
}

#endif
