#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen-kineto-seams.py - a Kineto trace of about 6 MiB whose state crosses
its middle in every way kineto2ev keeps it, for the test that reads such a
file in two halves (kineto2ev --threads=2) and in one.

ITERS iterations (7000) of a cpu_op on thread 101 launching a kernel through
cudaLaunchKernel (correlation, External id, ac2g flow pair), and across them:
Iteration n below is n of 3000, scaled to ITERS.
  B/E ranges   on threads 300 and 301, two nested on 305; one open from iteration 10 to
               2400 (thread 302); an E without its B at 2000 (303); a B never
               closed at 2450 (304)
  names        thread 101's name at 0 and again at 2000, process 100's at 5
               and 2100 (the last read wins)
  threads      401 first seen at 1800; 402 seen at 100 (an annotation) with
               its first cpu_op at 1700
  collectives  every 50 iterations, process group "pg<i * 3 // iters>" (new groups
               after the middle)
  fwdbwd       flow pairs from a forward op to a backward op 1600 iterations
               later
  odd events   counters every 100 iterations, an escaped name at 1300, a
               negative duration at 2300, a stream past 32 bits at 2350, the
               device 1 after 2500
distributedInfo and deviceProperties come after traceEvents.

--trap: a 1 MiB name in the middle event, full of '}, {"ph": "X" ...' text,
so that the file's middle falls in a string that looks like events.
--bad N: iteration N's cpu_op has a ts that is not a number.

Usage: gen-kineto-seams.py [--iters N] [--trap] [--bad N] OUT.json
"""
import argparse
import json


def events(iters, trap, bad):
    ev = []
    pid = 100

    def at(n):
        """Iteration n of 3000, scaled to iters."""
        return n * iters // 3000

    def x(cat, name, tid, ts, dur, args, p=pid):
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": p, "tid": tid, "ts": ts, "dur": dur, "args": args})

    for i in range(iters):
        t0 = 1000.0 + 100.0 * i
        ext, corr = 10 * i + 1, 10 * i + 1
        if i == iters // 2 and trap:
            fake = '}, {"ph": "X", "cat": "kernel", "name": "fake", "pid": 0, "tid": 7, "ts": 5, "dur": 1, "args": {}}'
            x("cpu_op", "trap " + fake * ((1 << 20) // len(fake)), 101, t0 - 1, 0.5, {"External id": 9})
        if i == 0:
            ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": 101, "args": {"name": "main"}})
        if i == at(2000):
            ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": 101, "args": {"name": "main-late"}})
        if i == 5:
            ev.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python3"}})
        if i == at(2100):
            ev.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python3-late"}})
        name = "aten::mm" if i != at(1300) else "aten::\"odd\"\tname\u00e9"
        op = {"ph": "X", "cat": "cpu_op", "name": name, "pid": pid, "tid": 101, "ts": t0, "dur": 30,
              "args": {"External id": ext, "Input Dims": [[64, 64], [64, 64]], "Input type": ["float", "float"]}}
        if i == bad:
            op["ts"] = "later"
        ev.append(op)
        x("cuda_runtime", "cudaLaunchKernel", 101, t0 + 5, 4, {"correlation": corr, "External id": ext})
        ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": pid, "tid": 101, "ts": t0 + 5})
        dev = 1 if i > at(2500) else 0
        stream = 7 if i != at(2350) else 5000000000
        kdur = 20 if i != at(2300) else -5
        x("kernel", "Cijk_Ailk_Bljk_SB_MT64x64x16", stream, t0 + 40, kdur,
          {"stream": stream, "correlation": corr, "External id": ext, "device": dev, "grid": [64, 1, 1],
           "block": [256, 1, 1]}, p=dev)
        ev.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": dev, "tid": stream, "ts": t0 + 40,
                   "bp": "e"})
        if i % 50 == 25:
            c2 = corr + 5
            x("cuda_runtime", "cudaLaunchKernel", 101, t0 + 50, 4, {"correlation": c2, "External id": ext})
            x("kernel", "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", 9, t0 + 60, 10,
              {"stream": 9, "correlation": c2, "External id": ext, "device": dev, "Collective name": "allreduce",
               "In msg nelems": 1024, "Out msg nelems": 1024, "dtype": "Float", "Group size": 2,
               "Process Group Name": "pg%d" % (i * 3 // iters), "Process Group Ranks": "[0, 1]",
               "Process Group Description": "group %d" % (i * 3 // iters)}, p=dev)
        if i % 100 == 0:
            ev.append({"ph": "B", "name": "outer", "pid": pid, "tid": 300, "ts": t0})
            ev.append({"ph": "C", "name": "mem", "pid": pid, "tid": 0, "ts": t0, "args": {"allocated": i * 4096}})
        if i % 100 == 99:
            ev.append({"ph": "E", "pid": pid, "tid": 300, "ts": t0 + 90})
        if i % 100 in (1, 2):
            ev.append({"ph": "B", "name": "level %d" % (i % 100), "pid": pid, "tid": 305, "ts": t0})
        if i % 100 in (97, 98):
            ev.append({"ph": "E", "pid": pid, "tid": 305, "ts": t0})
        if i % 10 == 0:
            ev.append({"ph": "B", "name": "inner", "pid": pid, "tid": 301, "ts": t0 + 1})
        if i % 10 == 9:
            ev.append({"ph": "E", "pid": pid, "tid": 301, "ts": t0 + 80})
        if i == 10:
            ev.append({"ph": "B", "name": "long", "pid": pid, "tid": 302, "ts": t0})
        if i == at(2400):
            ev.append({"ph": "E", "pid": pid, "tid": 302, "ts": t0})
        if i == at(2000):
            ev.append({"ph": "E", "pid": pid, "tid": 303, "ts": t0})
        if i == at(2450):
            ev.append({"ph": "B", "name": "never closed", "pid": pid, "tid": 304, "ts": t0})
        if i == 100:
            x("user_annotation", "setup", 402, t0, 2, {})
        if i >= at(1800) and i % 100 == 0:
            x("cpu_op", "aten::add", 401, t0 + 2, 1, {"External id": ext + 7})
        if i == at(1700):
            x("cpu_op", "aten::sub", 402, t0 + 3, 1, {"External id": ext + 8})
        if i % 200 == 10 and i + at(1600) < iters:
            ev.append({"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 90000 + i, "pid": pid, "tid": 101,
                       "ts": t0})
            ev.append({"ph": "f", "cat": "fwdbwd", "name": "fwdbwd", "id": 90000 + i, "pid": pid, "tid": 101,
                       "ts": 1000.0 + 100.0 * (i + at(1600)), "bp": "e"})
    return ev


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=7000)
    ap.add_argument("--trap", action="store_true")
    ap.add_argument("--bad", type=int, default=-1)
    ap.add_argument("out")
    a = ap.parse_args()
    with open(a.out, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        f.write(",\n".join("  " + json.dumps(e) for e in events(a.iters, a.trap, a.bad)))
        f.write('\n], "distributedInfo": {"rank": 0, "world_size": 2, "nccl_version": "2.21.5"},\n'
                ' "deviceProperties": [{"id": 0, "name": "GPU A"}, {"id": 1, "name": "GPU B"}],\n'
                ' "baseTimeNanoseconds": 1700000000000000000}\n')


main()
