#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""op-attribution.py - how much of TraceLens's per-op kernel time lands on
the same op in an ev stream written by kineto2ev.

Usage: op-attribution.py EV_VIEW STREAM REFERENCE.csv

REFERENCE.csv is TraceLens's ops_summary (name, total_direct_kernel_time_sum
in microseconds).  For the stream, an op instance is the launching op of a
GPU event (kernel, memcpy, memset): its name is the head of `sig`, its
instance `step` (its External id), or the runtime call (`id`) when the call
was outside any op; its direct kernel time is the union of its GPU events'
intervals, summed per name, as TraceLens sums it.  Prints the percentage of
TraceLens's total found on the same name (min of the two per name).
"""
import collections
import csv
import re
import subprocess
import sys


def main():
    ev_view, stream, ref = sys.argv[1:4]
    out = subprocess.run([ev_view, "-M", "-H", "--type=kernel,memcpy,memset", "-c", "step,id,ts,dur,sig", stream],
                         capture_output=True, text=True, check=True).stdout
    inst = collections.defaultdict(list)
    for line in out.splitlines():
        step, cid, ts, dur, sig = line.split("\t", 4)
        if not sig:
            continue
        name = re.split(r" (?:dims|types|strides|concrete)=", sig)[0]
        inst[(name, step if step != "0" else "call" + cid)].append((int(ts), int(ts) + int(dur)))
    ours = collections.Counter()
    for (name, _), iv in inst.items():
        iv.sort()
        total, (s, e) = 0, iv[0]
        for a, b in iv[1:]:
            if a <= e:
                e = max(e, b)
            else:
                total, s, e = total + e - s, a, b
        ours[name] += (total + e - s) / 1000.0
    theirs = {row["name"]: float(row["total_direct_kernel_time_sum"]) for row in csv.DictReader(open(ref))}
    total = sum(theirs.values())
    same = sum(min(ours.get(k, 0.0), v) for k, v in theirs.items())
    print("%.2f" % (100.0 * same / total if total else 0.0))


if __name__ == "__main__":
    main()
