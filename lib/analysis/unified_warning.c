/* SPDX-License-Identifier: MIT */
/*
 * unified_warning.c - what unified_perf_summary tells its reader on
 * stderr: cells left empty, instances and events left out or decided
 * early, numbers approximated, each counted once.
 */
#include <math.h>
#include <stdio.h>

#include "analysis/unified.h"

int unified_warning(ev_stats *s, unsigned i, char *buf, size_t n)
{
	struct unified *u = s->state;
	uint64_t skipped = 0, nouid = 0, synth = 0;
	for (size_t j = 0; j < s->g.keys.len; j++) {
		const struct ugroup *g = GROUP_VAL(&s->g, j);
		skipped += g->skipped;
		synth += isnan(g->uid) && g->kname;
		nouid += isnan(g->uid) && !g->kname;
	}
	unsigned k = 0;
	if (nouid && i == k++)
		snprintf(buf, n, "ex_UID left empty on %llu op row(s): TraceLens's index of the op's event in the trace "
		         "is not in the stream (ties of kernel time come in TraceLens's order of collection, ops by "
		         "start)", (unsigned long long)nouid);
	else if (synth && i == k++)
		snprintf(buf, n, "ex_UID left empty on %llu synthetic op row(s): TraceLens numbers them after the "
		         "trace's last event, in the file order of every such GPU event; %s", (unsigned long long)synth,
		         u->synlost ? "evkit keeps the places of the first 1048576 only"
		         : u->synwhy & SYN_NOUID ? "the stream has not that order or the trace's event count (kineto2ev "
		                                   "writes them: a GPU event's step_size, #src trace_events=)"
		                                 : "GPU events past the first of their op that evkit keeps were left out");
	else if (u->nomodel && i == k++)
		snprintf(buf, n, "%llu op instance(s) TraceLens has a perf model for that evkit has not (first: %s): "
		         "GFLOPS, data moved, TB/s, TFLOPS/s and perf_params left empty", (unsigned long long)u->nomodel,
		         u->nomodel_op);
	else if (u->noargs && i == k++)
		snprintf(buf, n, "%llu op instance(s) without the args their perf model reads (first: %s): GFLOPS, "
		         "data moved, TB/s, TFLOPS/s and perf_params left empty%s%s", (unsigned long long)u->noargs,
		         u->noargs_op, u->noargs_why ? "; " : "", u->noargs_why ? u->noargs_why : "");
	else if (u->failed && i == k++)
		snprintf(buf, n, "%llu op instance(s) whose arguments their perf model cannot read (first: %s): its "
		         "numbers left empty", (unsigned long long)u->failed, u->failed_op);
	else if (u->evicted && i == k++)
		snprintf(buf, n, "%llu op(s) left the op-tree window before their GPU events came: those events count "
		         "for the op that launched them only", (unsigned long long)u->evicted);
	else if (u->deep && i == k++)
		snprintf(buf, n, "%llu op(s) nested more than %d deep: the ops above them not seen", (unsigned long long)u->deep,
		         UNI_DEPTH);
	else if (u->window && i == k++)
		snprintf(buf, n, "%llu op instance(s) decided before their tree's GPU events ended (more than %d open): "
		         "their row may differ", (unsigned long long)u->window, INST_MAX);
	else if (u->nocall && i == k++)
		snprintf(buf, n, "%llu GPU event(s) launched outside any op whose runtime call was not found: their "
		         "synthetic op's duration and thread unknown", (unsigned long long)u->nocall);
	else if (u->dmore && i == k++)
		snprintf(buf, n, "%llu GPU event(s) past the first %d of their op, which TraceLens makes synthetic ops of: "
		         "left out", (unsigned long long)u->dmore, UNI_MAXK);
	else if (skipped && i == k++)
		snprintf(buf, n, "%llu op instance(s) with another number of GPU events than their group's first: "
		         "not in kernel_details_summary (as TraceLens)", (unsigned long long)skipped);
	else if (u->more && i == k++)
		snprintf(buf, n, "%llu op instance(s) with more than %d GPU events: the others not in "
		         "kernel_details_summary", (unsigned long long)u->more, UNI_MAXK);
	else if (u->sketched && i == k++)
		snprintf(buf, n, "%llu kernel_details position(s) past the exact-sample budget: their sum, mean, "
		         "median and std are approximate", (unsigned long long)u->sketched);
	else
		return 0;
	return 1;
}
