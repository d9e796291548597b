#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen-kineto.py - write small synthetic PyTorch profiler (Kineto) traces.

One trace per rank, in a single run (OUTDIR/torch_profiler/rank<r>/trace.json)
or in a sweep laid out as aorta lays it out (OUTDIR/<T>thread/nccl_<C>channels/
torch_profiler/rank<r>/trace.json, or OUTDIR/<CU>cu_<T>threads/... with --cu).
The same arguments give the same files byte for byte.

Every iteration i of rank r (times in microseconds, t0 = 1000 + 1000 i):
  GEMM A  aten::mm [[256,512],[512,128]]  stream 7  ts t0        dur 100 + 10 i + r + g
  GEMM B  aten::mm [[64,64],[64,64]]      stream 7  ts t0 + 200  dur 50 + g (+ 40 in the last iteration)
  AllReduce 4 MiB float   stream 9   ts t0 + 220  dur c
  AllGather 1 MiB bf16    stream 11  ts t0 + 230  dur 20
  elementwise kernel      stream 7   ts t0 + 400  dur 10
with g = 5 (T/256 - 1) + floor(2 (C - 28) / 28) (CU configs: 5 (T/256 - 1))
and c = 30 - floor(5 (C - 28) / 28) (CU configs: 30).  So GEMM A's range is 10 (K - 1) us,
GEMM B's max instance overlaps both collectives, whose union is 30 us.
--jitter J adds seeded noise of up to J us to every kernel duration.
Each kernel has a cpu_op and a cudaLaunchKernel linked by correlation id.
--era 2.1 writes collectives as PyTorch <= 2.1 did: no collective arguments;
an nccl:* user annotation with Input Dims/Input type around the launch, an
arg-less record_param_comms cpu_op, ncclKernel_<Coll>_RING_LL_Sum_<type>
kernel names, and distributedInfo without nccl_version.

Usage: gen-kineto.py [--ranks N] [--iters K] [--seed S] [--jitter J]
                     [--threads LIST] [--channels LIST] [--cu LIST]
                     [--run] [--gzip] [--name FILE] [--era 2.1|2.4] OUTDIR
"""
import argparse
import gzip
import json
import os
import random


def kernels(rank, it, iters, g, c):
    """The GPU work of one iteration: (name, stream, ts, dur, op, dims, coll)."""
    t0 = 1000.0 + 1000.0 * it
    ar = {"Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576,
          "dtype": "Float"}
    ag = {"Collective name": "_allgather_base", "In msg nelems": 65536, "Out msg nelems": 524288,
          "dtype": "BFloat16"}
    return [
        ("Cijk_Ailk_Bljk_SB_MT128x128x32_MI32x32x1x2", 7, t0, 100 + 10 * it + rank + g,
         "aten::mm", [[256, 512], [512, 128]], None),
        ("Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x1x1", 7, t0 + 200, 50 + g + (40 if it == iters - 1 else 0),
         "aten::mm", [[64, 64], [64, 64]], None),
        ("ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", 9, t0 + 220, c,
         "nccl:all_reduce", [], ar),
        ("ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", 11, t0 + 230, 20,
         "nccl:_all_gather_base", [], ag),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >",
         7, t0 + 400, 10, "aten::fill_", [[1024]], None),
    ]


OLD_KERNELS = {"allreduce": ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "float", "In msg nelems"),
               "_allgather_base": ("ncclKernel_AllGather_RING_LL_Sum_int8(ncclWorkElem)", "c10::BFloat16",
                                   "Out msg nelems")}


def trace(rank, nranks, iters, g, c, rng, jitter, old=False):
    ev = []
    corr = 1000
    for it in range(iters):
        for name, stream, ts, dur, op, dims, coll in kernels(rank, it, iters, g, c):
            corr += 1
            if jitter:
                dur += round(rng.uniform(0, jitter), 3)
            cpu_ts = ts - 50
            if coll and old:
                kname, ty, size_key = OLD_KERNELS[coll["Collective name"]]
                ev.append({"ph": "X", "cat": "user_annotation", "name": op, "pid": 100, "tid": 100,
                           "ts": cpu_ts - 1, "dur": 10,
                           "args": {"Input Dims": [[coll[size_key]]], "Input type": [ty]}})
                ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 100, "tid": 100,
                           "ts": cpu_ts, "dur": 8, "args": {"External id": corr}})
                ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100,
                           "tid": 100, "ts": cpu_ts + 2, "dur": 4,
                           "args": {"External id": corr, "correlation": corr}})
                ev.append({"ph": "X", "cat": "kernel", "name": kname, "pid": rank, "tid": stream,
                           "ts": round(ts, 3), "dur": round(dur, 3),
                           "args": {"External id": corr, "device": rank, "stream": stream, "correlation": corr,
                                    "grid": [64, 1, 1], "block": [256, 1, 1]}})
                continue
            args = {"External id": corr, "Input Dims": dims, "Input type": ["float"] * len(dims)}
            ev.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 100, "tid": 100,
                       "ts": cpu_ts, "dur": 8, "args": args})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100,
                       "tid": 100, "ts": cpu_ts + 2, "dur": 4,
                       "args": {"External id": corr, "correlation": corr}})
            kargs = {"External id": corr, "device": rank, "stream": stream, "correlation": corr,
                     "grid": [64, 1, 1], "block": [256, 1, 1]}
            if coll:
                kargs.update(coll)
                kargs.update({"Group size": nranks, "Process Group Name": "0",
                              "Process Group Ranks": "[" + ", ".join(map(str, range(nranks))) + "]"})
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": rank, "tid": stream,
                       "ts": round(ts, 3), "dur": round(dur, 3), "args": kargs})
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 100, "tid": 100,
               "ts": 900, "dur": 1000.0 * iters + 100})
    ev.append({"ph": "M", "name": "process_name", "pid": rank, "args": {"name": "GPU %d" % rank}})
    info = {"backend": "nccl", "rank": rank, "world_size": nranks}
    if not old:
        info["nccl_version"] = "2.21.5"
    return {"schemaVersion": 1, "traceEvents": ev, "distributedInfo": info}


def write_run(path, nranks, iters, g, c, seed, jitter, gz, name, old=False):
    for r in range(nranks):
        d = os.path.join(path, "torch_profiler", "rank%d" % r)
        os.makedirs(d, exist_ok=True)
        rng = random.Random(seed * 7919 + r * 31 + g * 131 + c * 1009)
        text = json.dumps(trace(r, nranks, iters, g, c, rng, jitter, old), separators=(",", ":"))
        f = os.path.join(d, name + (".gz" if gz else ""))
        if gz:
            with gzip.GzipFile(f, "wb", mtime=0) as fh:
                fh.write(text.encode())
        else:
            with open(f, "w") as fh:
                fh.write(text)


def ints(s):
    return [int(x) for x in s.split(",") if x]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jitter", type=float, default=0.0)
    ap.add_argument("--threads", type=ints, default=[256, 512])
    ap.add_argument("--channels", type=ints, default=[28, 56])
    ap.add_argument("--cu", type=ints, default=None, help="CU counts: <CU>cu_<T>threads layout")
    ap.add_argument("--run", action="store_true", help="one run, no sweep layout")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--name", default="trace.json")
    ap.add_argument("--era", choices=["2.1", "2.4"], default="2.4",
                    help="2.1: collectives without collective arguments")
    ap.add_argument("outdir")
    a = ap.parse_args()
    if a.run:
        write_run(a.outdir, a.ranks, a.iters, 0, 30, a.seed, a.jitter, a.gzip, a.name, a.era == "2.1")
    elif a.cu:
        for cu, t in zip(a.cu, a.threads):
            write_run(os.path.join(a.outdir, "%dcu_%dthreads" % (cu, t)), a.ranks, a.iters,
                      5 * (t // 256 - 1), 30, a.seed, a.jitter, a.gzip, a.name, a.era == "2.1")
    else:
        for t in a.threads:
            for ch in a.channels:
                write_run(os.path.join(a.outdir, "%dthread" % t, "nccl_%dchannels" % ch), a.ranks,
                          a.iters, 5 * (t // 256 - 1) + (2 * (ch - 28)) // 28, 30 - (5 * (ch - 28)) // 28,
                          a.seed, a.jitter, a.gzip, a.name, a.era == "2.1")


if __name__ == "__main__":
    main()
