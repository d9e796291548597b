/* SPDX-License-Identifier: MIT */
/*
 * unified.h - what stats_unified.c (TraceLens's unified_perf_summary)
 * takes from unified_ops.c.  Private to lib/analysis.
 */
#ifndef EV_UNIFIED_H
#define EV_UNIFIED_H

/* The op category TraceLens's registry gives an op it has a perf model
 * for, NULL when it has none for op `name`. */
const char *unified_model_category(const char *name);

#endif /* EV_UNIFIED_H */
