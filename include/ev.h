/* SPDX-License-Identifier: MIT */
/*
 * ev.h - public API of libev, the evkit library: the umbrella header.
 *
 * The modules (each its own header under include/ev/):
 *   ev/stream.h    the ev stream format (docs/FORMAT.md): record, strings,
 *                  input/output, metadata, reader, writer, sorter, utilities
 *   ev/table.h     result tables as TSV, CSV, JSON, Markdown or to a sink
 *   ev/json.h      streaming JSON scanner and tokens
 *   ev/analysis.h  clipping, kernel classes, op categories, coverage,
 *                  distributions
 *   ev/tool.h      the tool driver: options, messages, progress, signals
 *   ev/nccl.h      the NCCL/RCCL name vocabulary
 *   ev/hta.h       HTA's temporal breakdown, streaming
 *   ev/tsv.h       records as TSV/CSV/JSON Lines rows, and TSV packed back
 *   ev/align.h     clock alignment of ranks from anchors
 *   ev/flex.h      IBM AIU (Flex) traces: dialect, classes, conversion, tables
 *   ev/kineto.h    PyTorch profiler (Kineto) traces: scanning, linking, collectives
 *   ev/goal.h      GOAL schedules for LogGOPSim: text, binary, checks, joins
 *   ev/perfetto.h  Chrome trace-event JSON timelines: tracks, lanes, flows, counters
 *   ev/stats.h     ev-stats' analyses and the (comm, seq) collective matcher
 *   ev/xlsx.h      TSV tables into Excel workbooks
 * (ev/nsys.h, ev/rocprof.h, ev/nccl_sched.h and ev/merge.h, ev-merge's engine, are
 * included by the tools that need them.)
 * The library returns status codes and never exits; only ev/tool.h prints.
 * It is for tools and users: files of lib/ include the headers they use
 * (docs/ARCHITECTURE.md, checked by tests/modgraph.sh).
 */
#ifndef EV_H
#define EV_H

#include "ev/stream.h"
#include "ev/table.h"
#include "ev/json.h"
#include "ev/analysis.h"
#include "ev/stats.h"
#include "ev/tool.h"
#include "ev/nccl.h"
#include "ev/hta.h"
#include "ev/tsv.h"
#include "ev/align.h"
#include "ev/flex.h"
#include "ev/goal.h"
#include "ev/perfetto.h"
#include "ev/kineto.h"
#include "ev/xlsx.h"

#endif /* EV_H */
