/* SPDX-License-Identifier: MIT */
/*
 * merge_int.h - what the files of lib/merge share: the merge, its inputs
 * and its sources.
 */
#ifndef EV_MERGE_INT_H
#define EV_MERGE_INT_H

#include "ev/align.h"
#include "ev/merge.h"
#include "ev/stream.h"

struct merge_in {
	const char *label;         /* NULL when none given */
	const char *path;
	char *spool;               /* temp copy of standard input, for two passes */
	int spool_slot;            /* its ev_temp_register slot */
	ev_reader *r;
	struct ev_rec rec;         /* next record */
	const char *line;          /* its escaped line, when it goes out unchanged */
	size_t line_len;
	int done;
	struct ev_order order;
	struct ev_map srcmap;      /* input source + 1 -> output source + 1 */
	uint32_t last_src, out_src; /* cache of the last mapping */
	int warned_regex, warned_key;
};

struct ev_merge {
	struct ev_merge_opts o;
	struct merge_in *in;
	size_t n;
	ev_strtab *st;             /* strings and metadata of pass 2 */
	ev_meta *meta;
	/* Sources (sources.c): every source of every input becomes one of the
	 * output, numbered in order of appearance. */
	uint16_t *cfg_of;          /* output source -> configuration id */
	uint32_t nsrc;             /* output sources so far */
	ev_meta *srcs;             /* the output #src lines, parsed */
	struct ev_align_cfgs cfgs; /* configuration names, shared by both passes */
	int input_is_run;          /* input= names a configuration (ev_align_input_is_config) */
	ev_align *al;              /* NULL without alignment */
	int need_sort;             /* corrected records of an input with several clocks */
	/* Pass 2 (write.c). */
	ev_writer *w;
	const char *output;        /* for messages */
	int header_set;            /* output origin chosen (before the first line) */
};

/* sources.c: start the numbering again (each pass sees the inputs anew). */
int merge_sources_reset(ev_merge *m);
/* A #src line of input i read by r; written to w unless w is NULL. */
int merge_src_line(ev_merge *m, size_t i, ev_reader *r, const char *line, size_t len, ev_writer *w);
/* The output source of source in_src of input i (defined by default on
 * first sight, its #src line written to w unless w is NULL). */
int merge_map_src(ev_merge *m, size_t i, uint32_t in_src, ev_writer *w, uint32_t *out);

/* spool.c: copy standard input to a temporary file for input i. */
int merge_spool_stdin(ev_merge *m, struct merge_in *in);
void merge_spool_remove(struct merge_in *in);

/* write.c: pass 2, and the error of a write to the output (returns rc). */
int merge_write(ev_merge *m);
int merge_say_output(ev_merge *m, int rc);

#endif /* EV_MERGE_INT_H */
