#!/usr/bin/env python3
"""Compare evkit's tables of a rocprofv3 trace with TraceLens's rocprof report.

Usage: rocprof-tracelens.py TL_KERNEL_SUMMARY TL_GPU_TIMELINE EV_KERNELS
                           EV_TIMELINE_KERNELS EV_TIMELINE_COPIES EV_TIMELINE_ALL

TL_*: TraceLens's kernel_summary and gpu_timeline (generate_perf_report_rocprof,
as TSV).  EV_KERNELS: `ev-stats kernels` of the kernel records only;
EV_TIMELINE_*: `ev-stats timeline --by=src --include-unlinked --no-hta` of the
kernel records, the memcpy records, and all records.  Prints the numbers side by
side and exits 1 when one differs (counts exactly, times within 1e-9 relative).

TraceLens's rocprof mode keeps rocprofiler-sdk's nanoseconds in the columns it
labels microseconds (and "Total Kernel Time (ms)" is microseconds): each is
divided by 1000 here before it is compared.  Its total_time is the process's
lifetime (fini_time - init_time) and evkit's the span of the GPU events, so
total_time and idle are printed, not compared.
"""
import csv
import math
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def num(s):
    return float("nan") if s in ("", "nan", "NaN") else float(s)


def close(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def main(argv):
    tl_k, tl_t, ev_k, ev_tk, ev_tc, ev_ta = (rows(p) for p in argv[1:7])
    bad = 0
    ev = {r["name"]: r for r in ev_k}
    pairs = [("Count", "count", 1), ("Mean Kernel Time (µs)", "mean_us", 1000), ("Median Kernel Time (µs)", "median_us", 1000),
             ("Std Kernel Time (µs)", "std_us", 1000), ("Min Kernel Time (µs)", "min_us", 1000),
             ("Max Kernel Time (µs)", "max_us", 1000), ("Total Kernel Time (ms)", "sum_us", 1),
             ("Percentage (%)", "percent", 1)]
    print("kernel_summary: %d TraceLens rows, %d evkit rows" % (len(tl_k), len(ev_k)))
    if len(tl_k) != len(ev_k):
        bad += 1
    for t in tl_k:
        e = ev.get(t["name"])
        if e is None:
            print("  missing in evkit: %s" % t["name"])
            bad += 1
            continue
        for tc, ec, div in pairs:
            a, b = num(t[tc]) / div, num(e[ec])
            ok = close(a, b)
            bad += not ok
            if not ok or t is tl_k[0]:
                print("  %-40.40s %-26s TraceLens %-22r evkit %-22r %s" % (t["name"], ec, a, b, "ok" if ok else "DIFFERS"))
    tl = {r["type"]: num(r["time ms"]) for r in tl_t}
    busy = lambda rs: next(num(r["time_ms"]) for r in rs if r["type"] == "busy_time")
    total = next(num(r["time_ms"]) for r in ev_ta if r["type"] == "total_time")
    print("gpu_timeline (ms):")
    for name, ours in (("kernel", busy(ev_tk)), ("memory", busy(ev_tc) if ev_tc else 0.0), ("busy_time", busy(ev_ta))):
        ok = close(tl[name], ours)
        bad += not ok
        print("  %-10s TraceLens %-22r evkit %-22r %s" % (name, tl[name], ours, "ok" if ok else "DIFFERS"))
    print("  %-10s TraceLens %-22r evkit %-22r (process lifetime vs GPU span: not compared)" % ("total_time", tl["total_time"], total))
    print("  %-10s TraceLens %-22r evkit %-22r (follows total_time)" % ("idle", tl["idle"], total - busy(ev_ta)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
