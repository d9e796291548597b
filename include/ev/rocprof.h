/* SPDX-License-Identifier: MIT */
/*
 * ev/rocprof.h - rocprofv3 JSON (rocprofiler-sdk's *_results.json) to ev
 * records: kernel dispatches, memory copies, HIP API calls and ROCTx
 * markers, GPU agents as ranks, written in time order with each GPU event
 * checked against its HIP call by correlation id.  rocprof2ev is a front
 * end over this module.
 */
#ifndef EV_ROCPROF_H
#define EV_ROCPROF_H

#include "ev/analysis.h"
#include "ev/stream.h"

/* Which of a kernel symbol's names a kernel record gets. */
enum ev_rp_names {
	EV_RP_NAMES_TRUNCATED = 0, /* truncated_kernel_name, as TraceLens groups kernels */
	EV_RP_NAMES_FORMATTED = 1, /* formatted_kernel_name: demangled, with template arguments */
	EV_RP_NAMES_MANGLED = 2,   /* kernel_name: the symbol */
};
int ev_rp_names_parse(const char *s, enum ev_rp_names *n); /* 0 or EV_ERR_ARG */

struct ev_rocprof_opts {
	enum ev_rules rules;     /* kernel classes */
	enum ev_rp_names names;
	int no_api;              /* leave HIP calls out of the output */
	uint64_t sort_bytes;     /* external sort budget */
	size_t max_object;       /* largest single JSON value */
	const char *tmpdir;      /* NULL: $TMPDIR or /tmp */
	uint32_t link_window;    /* correlation ids remembered while linking; 0 = 65536 */
	uint32_t max_markers;    /* marker messages remembered; 0 = 4194304 */
};

/* A GPU agent of one input: its rank is its index among the node's GPUs
 * (logical_node_type_id). */
struct ev_rp_gpu {
	uint64_t handle;
	uint32_t rank;
	uint64_t used;           /* records placed on it */
	char product[64], arch[32];
};

/* What is known about one input once it has been read, and what the
 * conversion had to drop, clamp or could not link (the front end says it). */
struct ev_rocprof_file {
	const char *path;
	int64_t pid, init_ns, fini_ns; /* -1 unknown */
	char host[128];
	struct ev_rp_gpu *gpus;
	int ngpus;
	uint32_t host_rank;      /* rank of host-side records: the lowest GPU used */
	uint64_t kernels, copies, api, markers;
	uint64_t linked, unlinked;     /* GPU events with / without their HIP call */
	uint64_t no_symbol;      /* kernels whose kernel_id has no symbol */
	uint64_t no_agent;       /* GPU events on an agent not in "agents": rank 0 */
	uint64_t neg_dur;        /* end before start: dur 0 */
	uint64_t big_field;      /* stream, thread or correlation id beyond 32 bits: low 32 bits kept */
	uint64_t unnamed_markers;/* no message for the correlation id: the ROCTx call's name */
	uint64_t lost_markers;   /* messages beyond max_markers */
	char not_converted[256]; /* record arrays present but not converted ("hsa_api, rccl_api") */
	int processes;           /* elements of rocprofiler-sdk-tool */
};

typedef struct ev_rocprof ev_rocprof;
int ev_rocprof_new(ev_rocprof **r, const struct ev_rocprof_opts *o, int nfiles) EV_RESULT_USED;
void ev_rocprof_free(ev_rocprof *r);
struct ev_rocprof_file *ev_rocprof_file(ev_rocprof *r, int i);
ev_strtab *ev_rocprof_strtab(ev_rocprof *r);
/* Read input i from in.  EV_OK, or an error with a message in err
 * ("byte N: ..." or what is missing): EV_ERR_FORMAT (not rocprofv3 JSON,
 * invalid JSON, several processes), EV_ERR_LIMIT, EV_ERR_TRUNCATED,
 * EV_ERR_IO (a sort run: see ev_rocprof_errpath), EV_ERR_NOMEM. */
int ev_rocprof_read(ev_rocprof *r, int i, ev_input *in, char *err, size_t errn) EV_RESULT_USED;
/* Write the header, #src/#rank lines and every record in time order,
 * linking GPU events to their HIP calls on the way. */
int ev_rocprof_write(ev_rocprof *r, ev_writer *w) EV_RESULT_USED;
const char *ev_rocprof_errpath(const ev_rocprof *r);

#endif /* EV_ROCPROF_H */
