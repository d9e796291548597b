/* SPDX-License-Identifier: MIT */
/*
 * rocprof_int.h - lib/rocprof's state, shared by reading and writing.
 */
#ifndef EV_ROCPROF_INT_H
#define EV_ROCPROF_INT_H

#include "ev/json.h"
#include "ev/rocprof.h"

/* A host-side record's rank until the writer knows its input's host rank. */
#define RP_HOST_RANK UINT32_MAX
/* Kinds of strings.buffer_records remembered (rocprofiler-sdk has ~33). */
#define RP_MAX_KINDS 128

/* The record arrays of buffer_records that are converted. */
enum rp_array { RP_A_NONE, RP_A_SYMBOLS, RP_A_AGENTS, RP_A_KINDS, RP_A_MESSAGES, RP_A_KERNELS, RP_A_HIP, RP_A_MARKERS,
	        RP_A_COPIES, RP_A_OTHER };
/* Where the reader is: which member of the tool object it is inside. */
enum rp_section { RP_S_NONE, RP_S_METADATA, RP_S_STRINGS, RP_S_BUFFERS };

struct ev_rocprof {
	struct ev_rocprof_opts o;
	ev_strtab *st;
	ev_sorter *sorter;
	ev_writer *w;
	struct ev_rocprof_file *files;
	int nfiles;
	/* per input, while it is read */
	int cur;
	enum rp_section section;
	enum rp_array array;
	struct ev_map symbols;     /* kernel_id + 1 -> name id (or 1 for the empty name) */
	struct ev_map messages;    /* correlation id + 1 -> message id */
	uint64_t nmessages;
	uint64_t *kind_ops[RP_MAX_KINDS]; /* per kind: operation name ids */
	uint32_t kind_nops[RP_MAX_KINDS];
	uint32_t nkinds;           /* elements of strings.buffer_records read */
	int other_named;           /* the current unconverted array is named */
	int tool_seen;             /* the document has rocprofiler-sdk-tool */
	struct ev_json_tok *toks;
	int ntoks;
	char *scratch;
	size_t scratch_cap;
	char *err;
	size_t errn;
	/* linking, while writing: correlation ids of recent HIP calls,
	 * direct-mapped (ids grow one by one, so the table holds the last
	 * link_window of them) */
	uint64_t *calls;
	uint32_t calls_mask;
};

int rocprof_scratch(ev_rocprof *r, size_t n);

#endif
