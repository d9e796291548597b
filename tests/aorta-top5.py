#!/usr/bin/env python3
"""aorta's top-5 GEMM variance table from evkit's GEMM sheets, checked.

Usage: aorta-top5.py DIR EXPECTED_CSV

DIR/THREADS-CHANNEL-RANK/GEMM.csv (ev-stats report --tracelens --csv) for the
aorta sweep's 2 threads x 2 channels x 8 ranks; as aorta's
analyze_gemm_reports.py: per sheet row the first kernel name of
kernel_details__summarize_kernel_stats, Kernel Time (µs)_min and _max, the 5
rows of each rank with the largest max - min, all of them by that (stable,
as its sorts).  EXPECTED_CSV (tests/expected/aorta) must hold the same rows
in the same order: threads, channel, rank and kernel exactly, the times
within 1e-6 relative.  Prints "160 rows equal"; an assertion otherwise.
"""
import csv, re, sys
rows = []
for th in (256, 512):
    for ch in (28, 56):
        for r in range(8):
            with open(f"{sys.argv[1]}/{th}-{ch}-{r}/GEMM.csv", newline="", encoding="utf-8") as f:
                got = []
                for d in csv.DictReader(f):
                    m = re.search(r"'name':\s*'([^']+)'", d["kernel_details__summarize_kernel_stats"])
                    lo, hi = float(d["Kernel Time (µs)_min"]), float(d["Kernel Time (µs)_max"])
                    got.append((hi - lo, th, ch, r, m.group(1), lo, hi))
            rows += sorted(got, key=lambda x: -x[0])[:5]
rows.sort(key=lambda x: -x[0])
with open(sys.argv[2], newline="", encoding="utf-8") as f:
    want = list(csv.reader(f))[1:]
assert len(rows) == len(want) == 160, (len(rows), len(want))
for i, (g, w) in enumerate(zip(rows, want)):
    assert [str(g[1]), str(g[2]), str(g[3]), g[4]] == w[:4], (i, g, w[:4])
    for a, b in zip((g[5], g[6], g[0]), w[4:7]):
        assert abs(a - float(b)) <= 1e-6 * abs(float(b)), (i, a, b)
print(len(rows), "rows equal")
