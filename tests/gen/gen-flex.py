#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen-flex.py - write a synthetic multi-rank IBM AIU runtime ("Flex") trace.

One JSON array, one event per line, all ranks in one file (pid = rank), as
the AIU runtime writes B/E pairs with their device cycle counters.  The same
arguments give the same file byte for byte.

Per iteration and rank, in true time (ns; iteration i starts at i * P):
  Input DmaI                     data in, 64 KiB
  layer_k Cmpt Prep / Cmpt Exec  k < --kernels, seeded durations
  AllReduce chain                CollGroup AllReduce_all_reduce_<i mod 4>:
    rank 0 sends to 1 (SingleCast), rank r receives from r-1 (WDone Barrier)
    and adds (Cmpt Exec), sends to r+1; the last rank sets the broadcast
    list, sends an Xseg to every other rank and the data (MultiCast); every
    other rank receives it.  A receive ends exactly when its send ends.
  Output DmaO                    data out
Each rank's host clock is true time + skew(rank) (rank 0: 0); its device
counter is 32-bit: (true time + dev offset) at 1000 MHz mod 2^32, so some
events wrap (flex2ev corrects them).  Device slices are written with a host
interval that ends at the instruction's device end.

--truth FILE writes the numbers a converter must find: pairs (B/E slices),
p2p (sends = receives), colls (per-rank collective spans), exec, skew r us.

Usage: gen-flex.py [--ranks N] [--iters K] [--kernels M] [--seed S]
                   [--size BYTES] [--truth FILE] [--late I:NS]... [--drop I:K]...
                   -o OUT.json
--size keeps adding iterations until the file has at least BYTES bytes.
--late I:NS starts iteration I and every later one NS ns later; --drop I:K
leaves out the layer_K Cmpt Exec of iteration I on every rank (its Prep
stays): irregular iterations, for iteration detection.  --power gives
each slice's Power (the device's 32-bit charge accumulator) at its TS4:
rank r draws 20 + (7 i + 5 r) mod 30 W in iteration i (12 V, 1/512 LSB
per us, as acelyzer's power_ts4 reads it), from a random start, so that
the accumulator wraps.  Without them the output is the same as before
they existed.
"""
import argparse
import random
import sys

P = 2_000_000  # ns per iteration


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--kernels", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size", type=int, default=0)
    ap.add_argument("--truth")
    ap.add_argument("--late", action="append", default=[])
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("--power", action="store_true")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    late = [tuple(int(x) for x in v.split(":")) for v in a.late]
    drop = {tuple(int(x) for x in v.split(":")) for v in a.drop}
    rnd = random.Random(a.seed)
    R = a.ranks
    skew = [0] + [rnd.randint(-2_000_000, 2_000_000) for _ in range(R - 1)]  # ns
    devoff = [rnd.randint(0, 1 << 32) for _ in range(R)]
    # Its own generator: the other draws stay those of a run without --power.
    prnd = random.Random(a.seed + 1)
    pstart = [prnd.randint(0, 1 << 32) for _ in range(R)] if a.power else None
    out = open(a.output, "w")
    out.write("[\n")
    n = {"pairs": 0, "p2p": 0, "colls": 0, "exec": 0}
    first = [True]
    written = [2]

    def us(t):
        return "%d.%03d" % (t // 1000, t % 1000)

    def charge(r, t):
        """The Power accumulator of rank r at true time t (ns), in hex."""
        if not pstart:
            return "0x1000"
        # W x us x 512 / 12 counts; whole iterations, then the part of this one.
        i = max(0, (t - 1_000_000_000) // P)
        q = sum(20 + (7 * j + 5 * r) % 30 for j in range(i)) * P
        q += (20 + (7 * i + 5 * r) % 30) * (t - 1_000_000_000 - i * P)
        return "0x%x" % ((pstart[r] + q * 512 // 12 // 1000) % (1 << 32))

    def slice_(r, tid, name, ts5, ivl, extra=""):
        """A device slice: ts5 = (TS1..TS5) in true ns; the instruction
        interval ivl = (a, b) indexes into it; host interval ends at TS[b]."""
        c = [str((t + devoff[r]) % (1 << 32)) for t in ts5]
        attr = ('{"Power":"%s"' % charge(r, ts5[3])
                + ',"TS1":"%s","TS2":"%s","TS3":"%s","TS4":"%s","TS5":"%s"%s}'
                % (c[0], c[1], c[2], c[3], c[4], extra))
        hb = ts5[ivl[0]] + skew[r] - 500  # the host sees a little more
        he = ts5[ivl[1]] + skew[r]
        for ph, t in (("B", hb), ("E", he)):
            line = '{"attr":%s,"name":"%s","ph":"%s","pid":%d,"tid":%d,"ts":%s}' % (attr, name, ph, r, tid, us(t))
            out.write(("" if first[0] else ",\n") + line)
            first[0] = False
            written[0] += len(line) + 2
        n["pairs"] += 1

    i = 0
    while (a.size and written[0] < a.size) or (not a.size and i < a.iters):
        t0 = 1_000_000_000 + i * P + sum(ns for it, ns in late if i >= it)
        g = "AllReduce_all_reduce_%d" % (i % 4)
        # compute, per rank
        ends = []
        for r in range(R):
            t = t0
            slice_(r, 13, "Input DmaI", (t, t + 3000, t + 3000, t + 3000, t + 3000), (0, 1), ',"Bytes":"65536"')
            t += 3000
            for k in range(a.kernels):
                d = rnd.randint(5_000, 40_000)
                slice_(r, 11, "layer_%d Cmpt Prep" % k, (t, t, t + 1000, t + 1000 + d, t + 1000 + d + 5), (1, 2))
                if (i, k) not in drop:
                    slice_(r, 12, "layer_%d Cmpt Exec" % k, (t, t, t + 1000, t + 1000 + d, t + 1000 + d + 5), (2, 3))
                    n["exec"] += 1
                t += 1000 + d + 100
            ends.append(t)
        # the chain: r -> r+1, data lands when the send ends
        t = max(ends)
        sync = 0
        for r in range(R - 1):
            sname = "%s_s%d_r%d_%d" % (g, r, r + 1, sync)
            d = 20_000
            slice_(r, 14, "SenRdmaSend_%d [sync=%s] DmaO" % (r, sname), (ends[r], ends[r], ends[r], t, t + d), (3, 4),
                   ',"Bytes":"524288","CollGroup":"%s","Peer":"%d","Type":"SingleCast"' % (g, r + 1))
            slice_(r + 1, 13, "SenRdmaReceive_%d [524288B] [sync=%s] DmaI" % (r, sname),
                   (ends[r + 1], t + d, t + d, t + d, t + d), (0, 1),
                   ',"Bytes":"524288","CollGroup":"%s","Peer":"%d","Type":"WDone Barrier"' % (g, r))
            n["p2p"] += 1
            t += d
            slice_(r + 1, 12, "%s_Add_%d Cmpt Exec" % (g, r + 1), (t, t, t + 100, t + 8000, t + 8005), (2, 3),
                   ',"CollGroup":"%s"' % g)
            n["exec"] += 1
            t += 8100
            sync += 2
        last = R - 1
        mask = (1 << last) - 1
        sname = "%s_s%d_r0x%x_%d" % (g, last, mask, sync)
        peers = ",".join(str(p) for p in range(last))
        slice_(last, 14, "SenRdmaSend_%d - Set BcList [sync=%s] DmaO" % (last, sname), (t, t, t, t, t + 2000), (3, 4),
               ',"CollGroup":"%s","Peers":"%s","Type":"Set BCList"' % (g, peers))
        t += 2000
        for p in range(last):
            slice_(last, 14, "SenRdmaSend_%d - Xseg to rank %d [sync=%s] DmaO" % (last, p, sname),
                   (t, t, t, t, t + 1000), (3, 4), ',"CollGroup":"%s","Peer":"%d","Type":"MultiCast XSEG"' % (g, p))
            slice_(p, 13, "SenRdmaReceive_%d [524288B] [sync=%s] DmaI" % (last, sname),
                   (ends[p], t + 1000, t + 1000, t + 1000, t + 1000), (0, 1),
                   ',"Bytes":"524288","CollGroup":"%s","Peer":"%d","Type":"WDone Barrier"' % (g, last))
            n["p2p"] += 1
            t += 1000
        slice_(last, 14, "SenRdmaSend_%d Data [sync=%s] DmaO" % (last, sname), (t, t, t, t, t + 30000), (3, 4),
               ',"Bytes":"524288","CollGroup":"%s","Type":"MultiCast"' % g)
        t += 30000
        n["colls"] += R
        for r in range(R):
            slice_(r, 14, "Output DmaO", (t, t, t, t, t + 4000), (3, 4), ',"Bytes":"65536"')
        i += 1
    out.write("\n]\n")
    out.close()
    if a.truth:
        with open(a.truth, "w") as f:
            for k in ("pairs", "p2p", "colls", "exec"):
                f.write("%s %d\n" % (k, n[k]))
            f.write("iters %d\n" % i)
            for r in range(R):
                f.write("skew %d %.3f\n" % (r, skew[r] / 1000.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
