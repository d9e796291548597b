/* SPDX-License-Identifier: MIT */
/*
 * bench-zread - the floor of reading a gzip file: inflate it with zlib, in large
 * blocks, and throw the bytes away.  bench/ divides a converter's time on
 * a .json.gz by this, the least any reader of the file must spend.
 *
 *   bench-zread FILE...   prints the inflated size of each FILE with -v
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int main(int argc, char **argv)
{
	int verbose = argc > 1 && strcmp(argv[1], "-v") == 0, status = 0;
	static char buf[1 << 20];
	if (argc < 2 + verbose) {
		fputs("Usage: bench-zread [-v] FILE...\n", stderr);
		return 2;
	}
	for (int i = 1 + verbose; i < argc; i++) {
		gzFile f = gzopen(argv[i], "rb");
		unsigned long long total = 0;
		int n = 0;
		if (f)
			gzbuffer(f, 1 << 20);
		while (f && (n = gzread(f, buf, sizeof buf)) > 0)
			total += (unsigned)n;
		if (!f || n < 0) {
			int e;
			fprintf(stderr, "bench-zread: %s: %s\n", argv[i], f ? gzerror(f, &e) : "cannot open");
			status = 1;
		} else if (verbose) {
			printf("%llu %s\n", total, argv[i]);
		}
		if (f)
			gzclose(f);
	}
	return status;
}
