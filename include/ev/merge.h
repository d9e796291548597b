/* SPDX-License-Identifier: MIT */
/*
 * ev/merge.h - the merge of ev streams behind ev-merge: inputs merged in the
 * stream's order with the k-way heap (or, when they are out of order or
 * alignment reorders them, through the external sorter), every source of
 * every input renumbered as a source of the output with its keys, and clock
 * alignment of the ranks (ev/align.h) in a first pass.
 *
 * Like the rest of the library, nothing here prints or exits: every
 * message goes to the caller's struct ev_say as it arises, and a function
 * that fails returns a status < 0 after saying why (or quietly, for
 * EV_ERR_PIPE).  Memory: a read buffer per input, the strings and
 * metadata, the sources and the alignment's tables; the sorter's budget
 * when it is used.  Never a record per event.
 */
#ifndef EV_MERGE_H
#define EV_MERGE_H

#include <regex.h>

#include "ev/stream.h"
#include "ev/align.h"

/* One input: "LABEL=PATH" already split (label NULL when none); "-" is
 * standard input, at most once. */
struct ev_merge_input { const char *label; const char *path; };

/* What is pointed to must outlive the merge. */
struct ev_merge_opts {
	const regex_t *re;             /* matched against each input path, NULL none */
	const char *const *keys;       /* names of re's groups (at most 9): #src keys */
	size_t nkeys;
	int rank_from_src;             /* a record's rank is its input's index */
	int sort;                      /* inputs may be out of order: sort them */
	uint64_t sort_bytes;           /* the sorter's budget */
	struct ev_align_opts align;    /* mode EV_ALIGN_NONE: no alignment */
	const char *report;            /* the alignment report as TSV to this file, NULL none */
	const char *const *cfg_keys;   /* #src keys that name a configuration (0: the default) */
	size_t ncfg_keys;
	struct ev_say say;
	/* Records written so far, every 65,536 of the k-way merge; may be NULL. */
	void (*progress)(void *ctx, uint64_t records);
	void *progress_ctx;
};

typedef struct ev_merge ev_merge;
/* Up to 65,535 inputs, read at once (past 256 their read buffers share
 * 64 MiB).  EV_OK, or EV_ERR_NOMEM / EV_ERR_LIMIT said. */
int ev_merge_new(ev_merge **m, const struct ev_merge_opts *o, const struct ev_merge_input *in,
                 size_t n) EV_RESULT_USED;
/* With alignment: standard input spooled to a temporary file, pass 1 over
 * every input (ev_align_scan), the report (notes and warnings, and the TSV
 * file).  Nothing without.  Then ready for ev_merge_write. */
int ev_merge_align(ev_merge *m) EV_RESULT_USED;
/* The strings of the inputs: the output's writer is opened on them. */
ev_strtab *ev_merge_strtab(ev_merge *m);
/* Pass 2: every input merged into w, named output in messages ("-" is
 * standard output); the caller closes w. */
int ev_merge_write(ev_merge *m, ev_writer *w, const char *output) EV_RESULT_USED;
/* Closes the inputs and removes the spool. */
void ev_merge_free(ev_merge *m);

#endif /* EV_MERGE_H */
