/* SPDX-License-Identifier: MIT */
/*
 * regress_main.c - replay fuzz inputs without libFuzzer: a main() that
 * feeds every FILE (or every file in a DIR) to LLVMFuzzerTestOneInput, so
 * the committed corpus runs under gcc with the sanitizers in make check.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	int bad = ferror(f) || !buf;
	fclose(f);
	if (bad) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		return 1;
	}
	/* A copy of exactly the input's size, so ASan sees overreads. */
	uint8_t *exact = malloc(n ? n : 1);
	if (!exact) {
		free(buf);
		return 1;
	}
	memcpy(exact, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
	int status = 0, count = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			char **names = NULL;
			size_t n = 0;
			while (d && (e = readdir(d)) != NULL) {
				if (e->d_name[0] == '.')
					continue;
				char **nn = realloc(names, (n + 1) * sizeof *nn);
				if (!nn)
					return 1;
				names = nn;
				size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
				if (!(names[n] = malloc(len)))
					return 1;
				snprintf(names[n++], len, "%s/%s", argv[i], e->d_name);
			}
			if (d)
				closedir(d);
			qsort(names, n, sizeof *names, cmp);
			for (size_t k = 0; k < n; k++) {
				status |= run_file(names[k]);
				count++;
				free(names[k]);
			}
			free(names);
		} else {
			status |= run_file(argv[i]);
			count++;
		}
	}
	printf("%s: %d inputs replayed\n", argv[0], count);
	return status;
}
