#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen-nsys.py - write small synthetic Nsight Systems SQLite exports.

One file per node, each with G GPU processes (one per rank), in the nsys
export schema (the tables and columns nsys2ev reads, named as nsys 2026.2
names them).  The same seed gives the same files byte for byte.

Flavours:
  annotated  ATLAHS' annotated NCCL 2.20: ASCII NVTX markers (comm info,
             rings, trees, API calls with commHash/data_size, coll_info,
             coll_kernel per channel, p2p_kernel, group start/end)
  stock      NCCL 2.27 as shipped: NVTX ranges in domain "NCCL" named by
             registered strings, payloads in binaryData (exported with
             --include-blobs=true), payload schemas, PyTorch ranges

Every iteration runs, on all ranks: ring AllReduce (Simple), tree
AllReduce (LL), AllGather, ReduceScatter, Broadcast (root 0), Reduce
(root 1) and a grouped Send/Recv ring exchange, with compute kernels,
a memcpy and a memset between them.

  --no-blobs       stock: exported without --include-blobs (schemas, no values)
  --nccl-log FILE  stock: also write the run's NCCL_DEBUG=INFO output
                   (INIT,COLL: comm init, channel and per-call lines)
  --marks          'nsys profiling start/stopped' marks around iterations
                   1 .. K-2 (ATLAHS' application patch); needs K >= 3
  --iter-ranges    one NVTX range 'ProfilerStep#N' spanning each iteration
  --torch-shapes   stock: PyTorch's 'nccl:all_reduce, op_id = N, sizes = [[C]]'
                   range around each collective (--pytorch=autograd-shapes-nvtx)

Usage: gen-nsys.py [--flavour annotated|stock] [--nodes N] [--gpus G]
                   [--iters K] [--seed S] [--channels C] [--no-init]
                   [--no-runtime] [--compute K] [--bench-kernels N]
                   [--no-blobs] [--nccl-log FILE] [--marks] [--iter-ranges]
                   [--torch-shapes] OUTDIR
"""
import argparse
import heapq
import os
import random
import sqlite3
import struct
import sys

SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER);
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, name TEXT NOT NULL,
    nameEnum INTEGER NOT NULL, value TEXT NOT NULL);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
    launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
    gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
    blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
    localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
    sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER,
    srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER,
    dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
    callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
    category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
    domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
    int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
CREATE TABLE NVTX_PAYLOAD_SCHEMAS (domainId INTEGER, schemaId INTEGER, name TEXT, type INTEGER, flags INTEGER,
    numEntries INTEGER, payloadSize INTEGER, alignTo INTEGER);
CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId INTEGER, schemaId INTEGER, idx INTEGER, flags INTEGER,
    type INTEGER, name TEXT, description TEXT, arrayOrUnionDetail INTEGER, offset INTEGER);
"""

# NCCL 2.27 payload schemas: (schemaId, [(name, type, offset)], size)
REDOP_ENUM = (1 << 24) + 16
SCHEMAS = {
    "CommInitRankConfig": ((1 << 24) + 11, [("NCCL communicator ID", 18, None), ("No. of ranks", 5, 8),
                                            ("Rank", 5, 12), ("CUDA device", 5, 16)], 24),
    "AllGather": ((1 << 24) + 4, [("NCCL communicator ID", 18, None), ("Message size [bytes]", 22, 8)], 16),
    "AllReduce": ((1 << 24) + 5, [("NCCL communicator ID", 18, None), ("Message size [bytes]", 22, 8),
                                  ("Reduction operation", REDOP_ENUM, 16)], 24),
    "Broadcast": ((1 << 24) + 6, [("NCCL communicator ID", 18, None), ("Message size [bytes]", 22, 8),
                                  ("Root", 5, 16)], 24),
    "ReduceScatter": ((1 << 24) + 7, [("NCCL communicator ID", 18, None), ("Message size [bytes]", 22, 8),
                                      ("Reduction operation", REDOP_ENUM, 16)], 24),
    "Reduce": ((1 << 24) + 8, [("NCCL communicator ID", 18, None), ("Message size [bytes]", 22, 8),
                               ("Root", 5, 16), ("Reduction operation", REDOP_ENUM, 20)], 24),
    "Send": ((1 << 24) + 9, [("NCCL communicator ID", 18, None), ("Message size [bytes]", 22, 8),
                             ("Peer rank", 5, 16)], 24),
    "Recv": ((1 << 24) + 10, [("NCCL communicator ID", 18, None), ("Message size [bytes]", 22, 8),
                              ("Peer rank", 5, 16)], 24),
}
NCCL_DOMAIN = 1
ARGS_220 = "(ncclDevComm*, unsigned long, ncclWork*)"
ARGS_227 = "(ncclDevKernelArgsStorage<(unsigned long)4096>)"
COMPUTE = [
    ("nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NTN", 132, 384),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", 1024, 128),
    ("flash_fwd_kernel", 216, 128),
    ("void at::native::reduce_kernel<512, 1>", 64, 512),
]
# (api, collType, kernel coll, dtype name, type_size, algo, proto, redop, root, size)
OPS = [
    ("AllReduce", 4, "AllReduce", "f32", 4, 1, 2, 0, None, 4 << 20),
    ("AllReduce", 4, "AllReduce", "bf16", 2, 0, 0, 0, None, 64 << 10),
    ("AllGather", 2, "AllGather", None, 1, 1, 2, None, None, 1 << 20),
    ("ReduceScatter", 3, "ReduceScatter", "f32", 4, 1, 2, 0, None, 256 << 10),
    ("Broadcast", 0, "Broadcast", None, 1, 1, 0, None, 0, 512 << 10),
    ("Reduce", 1, "Reduce", "f32", 4, 1, 2, 2, 1, 128 << 10),
]
THREADS = {(1, 2): 544, (1, 0): 512, (0, 0): 640, (0, 2): 640}


class Db:
    def __init__(self, path):
        if os.path.exists(path):
            os.unlink(path)
        self.con = sqlite3.connect(path)
        self.con.executescript(SCHEMA)
        self.strings = {}
        self.rows = {}

    def sid(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.strings) + 1
        return self.strings[text]

    def add(self, table, row):
        self.rows.setdefault(table, []).append(row)

    def close(self):
        for table, rows in self.rows.items():
            # nsys export writes the activity tables in start order.
            if table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                         "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
                rows.sort(key=lambda row: row[0])
            ph = ",".join("?" * len(rows[0]))
            self.con.executemany(f"INSERT INTO {table} VALUES ({ph})", rows)
        self.con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(i, s) for s, i in self.strings.items()])
        self.con.commit()
        self.con.execute("VACUUM")
        self.con.close()


def gpid(pid):
    return (1 << 48) | (pid << 24)


def gtid(pid, tid):
    return gpid(pid) | tid


class Rank:
    def __init__(self, rank, node, local, pid, db):
        self.rank, self.node, self.local, self.pid, self.db = rank, node, local, pid, db
        self.tid = pid
        self.corr = 1000 * (rank + 1)
        self.stream = 7 + 8 * local
        self.cpu = 0
        self.gpu = 0

    def nvtx(self, start, end, text=None, text_id=None, domain=0, blob=None, etype=None):
        if etype is None:
            etype = 34 if end is None else 59
        c = self.db.node_clock
        start, end = start + c, (None if end is None else end + c)
        self.db.add("NVTX_EVENTS", (start, end, etype, None, None, None, text, gtid(self.pid, self.tid), None,
                                    text_id, domain, None, None, None, None, None, None, None, None, blob))

    def launch(self, start, name="cudaLaunchKernel_v7000"):
        self.corr += 1
        start += self.db.node_clock
        self.db.add("CUPTI_ACTIVITY_KIND_RUNTIME", (start, start + 2500, 1, gtid(self.pid, self.tid), self.corr,
                                                    self.db.sid(name), 0, None))
        return self.corr

    def kernel(self, start, end, name, grid, block, corr, stream=None):
        sid = self.db.sid(name)
        start, end = start + self.db.node_clock, end + self.db.node_clock
        short = self.db.sid(name.split("(")[0].split("<")[0].split(" ")[-1])
        self.db.add("CUPTI_ACTIVITY_KIND_KERNEL", (start, end, self.local, 1, None, stream or self.stream, corr,
                                                   gpid(self.pid), sid, short, None, 1, 0, 32, grid, 1, 1, block,
                                                   1, 1, 0, 0, 0, 0, corr, 0, None, None))


def blob(domain, schema, values):
    sid, entries, size = SCHEMAS[schema]
    payload = bytearray(size)
    for (name, typ, off), v in zip(entries, values):
        off = off or 0
        if typ in (18, 22):
            struct.pack_into("<Q", payload, off, v)
        else:
            struct.pack_into("<i", payload, off, v)
    return struct.pack("<QQQQ", domain, sid, size, 0) + bytes(payload)


def chan_split(count, nch, ts, n, algo):
    """Per-channel (workCount, workOffset, chunkCount, lastChunkCount), NCCL 2.20 style."""
    align = max(1, 512 // ts)
    per = -(-(-(-count // nch)) // align) * align
    out, off = [], 0
    while off < count and len(out) < nch:
        work = min(per, count - off)
        chunk = max(align, min(work, (131072 // ts)))
        if algo == 1:
            rem = work % (n * chunk)
            last = -(-(-(-rem // n)) // align) * align if rem else chunk
        else:
            last = chunk
        out.append((work, off, chunk, last))
        off += work
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flavour", choices=["annotated", "stock"], default="annotated")
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--channels", type=int, default=2)
    ap.add_argument("--compute", type=int, default=2, help="compute kernels between NCCL ops")
    ap.add_argument("--no-init", action="store_true", help="annotated: leave out comm/ring/tree markers")
    ap.add_argument("--no-runtime", action="store_true", help="leave out the runtime table (time fallback)")
    ap.add_argument("--bench-kernels", type=int, default=0,
                    help="one node, G GPUs, this many compute kernels in all (benchmarks)")
    ap.add_argument("--no-blobs", action="store_true", help="stock: payload values left out of the export")
    ap.add_argument("--nccl-log", help="stock: write NCCL_DEBUG=INFO lines of the run to this file")
    ap.add_argument("--marks", action="store_true", help="nsys profiling start/stopped marks (iterations 1..K-2)")
    ap.add_argument("--iter-ranges", action="store_true", help="NVTX range ProfilerStep#N around each iteration")
    ap.add_argument("--torch-shapes", action="store_true", help="stock: PyTorch nccl:<coll> ranges with sizes")
    ap.add_argument("outdir")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    os.makedirs(a.outdir, exist_ok=True)
    if a.bench_kernels:
        a.nodes = 1
    n = a.nodes * a.gpus
    dbs = []
    ranks = []
    utc0 = 1700000000_000000000
    for node in range(a.nodes):
        db = Db(os.path.join(a.outdir, f"nsys_nid{node:06d}.sqlite"))
        sysclock = 50_000_000_000 + node * 7_000_000_123
        db.node_clock = sysclock
        dbs.append(db)
        for k, v in [("EXPORT_PRODUCT_VERSION", "2026.2.1.210"), ("EXPORT_SCHEMA_VERSION", "3.25.0"),
                     ("EXPORT_PARAM_INCLUDE_BLOBS", "true" if a.flavour == "stock" and not a.no_blobs else "false"),
                     ("EXPORT_PARAM_TIME_NORMALIZE", "false")]:
            db.add("META_DATA_EXPORT", (k, v))
        db.add("TARGET_INFO_SESSION_START_TIME", (utc0, "2023-11-14T22:13:20", "2023-11-14T22:13:20", sysclock))
        db.add("TARGET_INFO_SYSTEM_ENV", (1 << 48, "Local (CLI)", "Hostname", 619, f"host{node}"))
        db.add("PROCESSES", (gpid(90 + node), 90 + node, "torchrun"))
        for g in range(a.gpus):
            pid = 100 + 10 * node + g
            r = Rank(node * a.gpus + g, node, g, pid, db)
            db.add("PROCESSES", (gpid(pid), pid, "python3"))
            db.add("ThreadNames", (db.sid("python3"), 0, gtid(pid, pid)))
            r.cpu = r.gpu = 1_000_000 + rnd.randrange(20_000)
            if a.flavour == "stock":
                for name, (sid, entries, size) in SCHEMAS.items():
                    db.add("NVTX_PAYLOAD_SCHEMAS", (NCCL_DOMAIN, sid, None, 1, None, len(entries), size, None))
                    for i, (ename, typ, off) in enumerate(entries):
                        db.add("NVTX_PAYLOAD_SCHEMA_ENTRIES", (NCCL_DOMAIN, sid, i, None, typ, ename, None, None, off))
            ranks.append(r)
    comm_hash, comm_id = 0x5a1e0c0ffee0001, 0x77aa55
    nch = a.channels
    log = []          # (time, line) of NCCL_DEBUG=INFO output
    op_count = {}     # rank -> opCount
    DT_CODE = {"f32": 7, "bf16": 9, None: 0}

    def logline(r, t, text):
        log.append((t, f"host{r.node}:{r.pid}:{r.tid} [{r.local}] NCCL INFO {text}"))

    def log_call(r, t, api, count, dt, redop, root):
        k = op_count.get(r.rank, 0)
        op_count[r.rank] = k + 1
        logline(r, t, f"{api}: opCount {k:x} sendbuff 0x7f0000001000 recvbuff 0x7f0000002000 count {count} "
                      f"datatype {DT_CODE[dt]} op {redop or 0} root {root or 0} comm 0x55{r.rank:04x}00 "
                      f"[nranks={n}] stream 0x7f00{r.local:02x}00")

    def mkblob(domain, schema, values):
        # Without --include-blobs the schemas stay, the values are gone.
        return None if a.no_blobs else blob(domain, schema, values)

    def cpu_to(r, t):
        r.cpu = max(r.cpu, t)

    # Communicator set-up.
    for r in ranks:
        t = r.cpu
        if a.flavour == "annotated" and not a.no_init:
            r.nvtx(t, None, f"commHash 0x{comm_hash:x} commId 0x{comm_id:x} rank {r.rank} nranks {n} pid {r.pid}")
            for c in range(nch):
                order = list(range(n)) if c % 2 == 0 else list(reversed(range(n)))
                i = order.index(r.rank)
                r.nvtx(t + 100 + c, None, f"commHash 0x{comm_hash:x} Rings [{c}] {order[i - 1]}->{r.rank}->"
                                          f"{order[(i + 1) % n]} pid {r.pid}")
                kids = [k for k in (2 * r.rank + 1, 2 * r.rank + 2) if k < n] + [-1, -1]
                up = (r.rank - 1) // 2 if r.rank else -1
                r.nvtx(t + 200 + c, None, f"commHash 0x{comm_hash:x} Trees [{c}] {kids[0]}/{kids[1]}/-1->"
                                          f"{r.rank}->{up} pid {r.pid}")
        elif a.flavour == "stock":
            b = mkblob(NCCL_DOMAIN, "CommInitRankConfig", [comm_hash, n, r.rank, r.local])
            r.nvtx(t, t + 50_000, text_id=r.db.sid("ncclCommInitRankConfig"), domain=NCCL_DOMAIN, blob=b)
            init = (f"comm 0x55{r.rank:04x}00 rank {r.rank} nranks {n} cudaDev {r.local} nvmlDev {r.local} "
                    f"busId {r.local + 1}000 commId 0x{comm_hash:x}")
            logline(r, t + 10, init + " - Init START")
            if r.rank == 0:
                for c in range(nch):
                    order = list(range(n)) if c % 2 == 0 else list(reversed(range(n)))
                    logline(r, t + 20 + c, f"Channel {c:02d}/{nch:02d} : " + " ".join(f"{x:3d}" for x in order))
            kids = [k for k in (2 * r.rank + 1, 2 * r.rank + 2) if k < n] + [-1, -1]
            up = (r.rank - 1) // 2 if r.rank else -1
            logline(r, t + 30_000, "Trees " + " ".join(f"[{c}] {kids[0]}/{kids[1]}/-1->{r.rank}->{up}" for c in range(nch)))
            logline(r, t + 40_000, f"{nch} coll channels, {nch} collnet channels, 0 nvls channels, "
                                   f"{nch} p2p channels, {max(1, nch // 2)} p2p channels per peer")
            logline(r, t + 40_001, init + " - Init COMPLETE")
        r.cpu = t + 100_000

    def compute(r, count):
        for _ in range(count):
            name, grid, block = COMPUTE[rnd.randrange(len(COMPUTE))]
            corr = r.launch(r.cpu)
            start = max(r.gpu, r.cpu + 4000)
            end = start + rnd.randrange(20_000, 200_000)
            r.kernel(start, end, name + ("()" if "(" not in name else ""), grid, block, corr)
            r.gpu = end
            r.cpu += 6000 + rnd.randrange(3000)

    def kname(coll, dt, algo):
        if a.flavour == "annotated":
            mid = f"_Sum_{dt}" if dt else ""
            return f"ncclDevKernel_{coll}{mid}_{'TREE' if algo == 0 else 'RING'}_LL{ARGS_220}"
        mid = f"_Sum_{dt}" if dt else ""
        return f"ncclDevKernel_{coll}{mid}_{'TREE' if algo == 0 else 'RING'}_LL{ARGS_227}"

    def collective(spec):
        api, ctype, coll, dt, ts, algo, proto, redop, root, size = spec
        if api == "AllGather" or api == "ReduceScatter":
            size //= n
        launches = []
        for r in ranks:
            t = r.cpu
            fields = f"commHash 0x{comm_hash:x}, stream 0x7f00{r.local:02x}00, data_size {size}, type_size {ts}"
            if redop is not None:
                fields += f", red_op {redop}"
            if root is not None:
                fields += f", root {root}"
            if a.flavour == "annotated":
                r.nvtx(t, t + 30_000, f"nccl{api}(): {fields}, pid {r.pid}")
                r.nvtx(t + 5000, None, f"collType {ctype} root {root or 0} redOp {redop or 0} algo {algo} "
                                       f"proto {proto} commHash 0x{comm_hash:x} stream 0x7f00{r.local:02x}00 "
                                       f"data_size {size} type_size {ts} chunkSize 131072 chunkCount 32768 "
                                       f"chunkSteps {4 if proto == 2 else 1} sliceSteps {2 if proto == 2 else 1} "
                                       f"stepSize {131072 if proto == 2 else 16384} pid {r.pid}")
                count = size // ts
                # Device addresses as the annotated NCCL prints them (%lu):
                # a buffer pair per operation, never in place.
                sendbuff = 0x7F0000000000 + (r.local << 36) + (r.corr << 24)
                recvbuff = sendbuff + (1 << 23)
                for i, (work, off, chunk, last) in enumerate(chan_split(count, nch, ts, n, algo)):
                    r.nvtx(t + 6000 + i, None, f"nWarps {THREADS.get((algo, proto), 512) // 32} count {count} "
                                               f"chunkCount {chunk} workCount {work} lastChunkCount {last} "
                                               f"workOffset {off} sendbuff {sendbuff} recvbuff {recvbuff} "
                                               f"pid {r.pid}")
            else:
                vals = {"AllGather": [comm_hash, size], "AllReduce": [comm_hash, size, redop],
                        "Broadcast": [comm_hash, size, root], "ReduceScatter": [comm_hash, size, redop],
                        "Reduce": [comm_hash, size, root, redop]}[api]
                if a.torch_shapes:
                    torch = {"AllReduce": "all_reduce", "AllGather": "_allgather_base",
                             "ReduceScatter": "_reduce_scatter_base", "Broadcast": "broadcast", "Reduce": "reduce"}[api]
                    count = size // ts * (n if api == "ReduceScatter" else 1)
                    r.nvtx(t - 1000, t + 36_000, f"nccl:{torch}, op_id = {r.corr}, sizes = [[{count}]]")
                r.nvtx(t, t + 30_000, text_id=r.db.sid(f"nccl{api}"), domain=NCCL_DOMAIN,
                       blob=mkblob(NCCL_DOMAIN, api, vals))
                log_call(r, t + 1, api, size // ts, dt, redop, root)
            corr = r.launch(t + 20_000, "cuLaunchKernelEx")
            launches.append((r, max(r.gpu, t + 25_000), corr))
            r.cpu = t + 40_000
        dur = 30_000 + size // 50
        end = max(s for _, s, _ in launches) + dur
        for r, start, corr in launches:
            e = end + rnd.randrange(500)
            r.kernel(start, e, kname(coll, dt, algo), nch, THREADS.get((algo, proto), 512), corr)
            r.gpu = e

    def sendrecv(size):
        launches = []
        for r in ranks:
            t = r.cpu
            peer_s, peer_r = (r.rank + 1) % n, (r.rank - 1) % n
            if a.flavour == "annotated":
                r.nvtx(t, t + 1000, f"ncclGroupStart(): pid {r.pid}")
                for k, (api, key, peer) in enumerate([("Send", "receiver_rank", peer_s), ("Recv", "sender_rank", peer_r)]):
                    s0 = t + 2000 + k * 10_000
                    r.nvtx(s0, s0 + 8000, f"nccl{api}(): commHash 0x{comm_hash:x}, stream 0x7f00{r.local:02x}00, "
                                          f"data_size {size}, type_size 1, {key} {peer}, pid {r.pid}")
                    r.nvtx(s0 + 1000, s0 + 2000, f"ncclGroupStart(): pid {r.pid}")
                    r.nvtx(s0 + 3000, s0 + 4000, f"ncclGroupEnd(): pid {r.pid}")
                g0 = t + 25_000
                r.nvtx(g0, g0 + 20_000, f"ncclGroupEnd(): pid {r.pid}")
                for p2ptype, peer in [(2, peer_r), (1, peer_s)]:
                    half = size // nch
                    for c in range(nch):
                        part = half if c < nch - 1 else size - half * (nch - 1)
                        r.nvtx(g0 + 2000 + 10 * c + p2ptype, None,
                               f"Bytes {part} nWarps 16 p2pType {p2ptype} peer {peer} proto 2 countHi32 0 "
                               f"countLo32 {part} chunkSize 131072 pid {r.pid}")
            else:
                r.nvtx(t, t + 1000, text_id=r.db.sid("ncclGroupStart"), domain=NCCL_DOMAIN)
                for k, (api, peer) in enumerate([("Send", peer_s), ("Recv", peer_r)]):
                    s0 = t + 2000 + k * 10_000
                    r.nvtx(s0, s0 + 8000, text_id=r.db.sid(f"nccl{api}"), domain=NCCL_DOMAIN,
                           blob=mkblob(NCCL_DOMAIN, api, [comm_hash, size, peer]))
                    log_call(r, s0 + 1, api, size, None, None, peer)
                g0 = t + 25_000
                r.nvtx(g0, g0 + 20_000, text_id=r.db.sid("ncclGroupEnd"), domain=NCCL_DOMAIN)
            corr = r.launch(g0 + 10_000, "cuLaunchKernelEx")
            launches.append((r, max(r.gpu, g0 + 15_000), corr))
            r.cpu = g0 + 30_000
        end = max(s for _, s, _ in launches) + 40_000 + size // 50
        for r, start, corr in launches:
            e = end + rnd.randrange(500)
            r.kernel(start, e, "ncclDevKernel_SendRecv" + (ARGS_220 if a.flavour == "annotated" else ARGS_227),
                     nch, 640, corr)
            r.gpu = e

    def sync():
        t = max(max(r.cpu, r.gpu) for r in ranks)
        for r in ranks:
            r.cpu = t + rnd.randrange(5000)

    if a.bench_kernels:
        # Streamed into the table, never held in memory: 5 M rows are fine.
        names = [(r.db.sid(nm + "()"), r.db.sid(nm.split("<")[0].split(" ")[-1]), grid, block)
                 for r in ranks[:1] for nm, grid, block in COMPUTE]

        def rows(r, per):
            t, corr = r.gpu + r.db.node_clock, r.corr
            for i in range(per):
                sid, short, grid, block = names[i % len(names)]
                dur = 5000 + (i * 7919) % 20000
                corr += 1
                yield (t, t + dur, r.local, 1, None, r.stream, corr, gpid(r.pid), sid, short, None, 1, 0, 32,
                       grid, 1, 1, block, 1, 1, 0, 0, 0, 0, corr, 0, None, None)
                t += dur + 1000
        # In start order across the ranks, as nsys export writes them.
        db = ranks[0].db
        db.con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + ",".join("?" * 28) + ")",
                           heapq.merge(*(rows(r, a.bench_kernels // n) for r in ranks), key=lambda row: row[0]))
    else:
        for it in range(a.iters):
            if a.marks and it in (1, a.iters - 1):
                for r in ranks:
                    word = "start" if it == 1 else "stopped"
                    r.nvtx(r.cpu, None, f"nsys profiling {word}, pid: {r.pid}")
                    r.cpu += 1000
            it_start = {r.rank: r.cpu for r in ranks}
            for spec in OPS:
                for r in ranks:
                    compute(r, a.compute)
                sync()
                collective(spec)
                sync()
            for r in ranks:
                compute(r, a.compute)
                c0 = r.cpu
                corr = r.launch(c0, "cudaMemcpyAsync_v3020")
                m0 = max(r.gpu, c0 + 3000) + r.db.node_clock
                r.db.add("CUPTI_ACTIVITY_KIND_MEMCPY", (m0, m0 + 9000, r.local,
                                                        1, None, r.stream, corr, gpid(r.pid), 65536, 1, None, 0, 1,
                                                        None, None, r.local, 1, None, None, None, 1))
                r.gpu = max(r.gpu, c0 + 3000) + 9000
                corr = r.launch(c0 + 4000, "cudaMemsetAsync_v3020")
                m0 = r.gpu + r.db.node_clock
                r.db.add("CUPTI_ACTIVITY_KIND_MEMSET", (m0 + 100, m0 + 2100, r.local, 1, None, r.stream, corr,
                                                        gpid(r.pid), 0, 4096, None, 1))
                r.gpu += 2100
                r.cpu = c0 + 8000
                r.nvtx(c0, c0 + 8000, f"step {it}")
            sync()
            sendrecv(256 << 10)
            sync()
            if a.iter_ranges:
                for r in ranks:
                    r.nvtx(it_start[r.rank], max(r.cpu, r.gpu), f"ProfilerStep#{it}")
    if a.no_runtime:
        for db in dbs:
            db.rows.pop("CUPTI_ACTIVITY_KIND_RUNTIME", None)
    if a.nccl_log:
        with open(a.nccl_log, "w") as out:
            for _, line in sorted(log, key=lambda x: x[0]):
                out.write(line + "\n")
    for db in dbs:
        if a.no_runtime:
            db.con.execute("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
        db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
