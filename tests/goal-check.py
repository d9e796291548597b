#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""goal-check - validate GOAL schedules as LogGOPSim's txt2bin reads them.

  goal-check.py [--match] [--dump] FILE.goal
  goal-check.py --bin FILE.bin [--text FILE.goal] [--dump]

Text: the txt2bin grammar (num_ranks first, rank blocks 0..N-1 in order,
`send Nb to P [tag T] [cpu C] [nic K]`, `recv Nb from P|-1 ...`,
`calc N [cpu C]`, `a requires b` / `a irequires b` with both labels defined
earlier in the same rank, comments, blank lines), plus the widths txt2bin
truncates silently: tag < 2^32, cpu and nic < 256, peers < num_ranks.
--match also requires every send to have a recv with the same
(source, destination, tag, size) in FIFO order.

Binary: reads txt2bin's layout (magic 4223, num_ranks, max cpu and nic, jump
table, per rank: nodes, roots, 39-byte nodes, appendix) and checks that it is
self-consistent; with --text it must describe exactly the graph of the text
file (node order, fields, dependency lists in order, roots, maxima).

--dump prints the graph in a canonical form.  Exit 0 valid, 1 invalid, 2 usage.
"""
import re
import struct
import sys
from collections import defaultdict, deque

U32 = (1 << 32) - 1
LABEL = r"[A-Za-z][A-Za-z0-9_]*"
INT = r"[0-9]+"
WS = r"[ \t]+"
OWS = r"[ \t]*"
RE_NUMRANKS = re.compile(rf"^{OWS}num_ranks{WS}({INT}){OWS}$")
RE_RANK = re.compile(rf"^{OWS}rank{WS}({INT}){OWS}\{{{OWS}$")
RE_CLOSE = re.compile(rf"^{OWS}\}}{OWS}$")
RE_SEND = re.compile(
    rf"^{OWS}(?:({LABEL}){OWS}:{OWS})?send{WS}({INT}){OWS}b{WS}to{WS}({INT})"
    rf"(?:{WS}tag{WS}({INT}|-1))?(?:{WS}cpu{WS}({INT}))?(?:{WS}nic{WS}({INT}))?{OWS}$")
RE_RECV = re.compile(
    rf"^{OWS}(?:({LABEL}){OWS}:{OWS})?recv{WS}({INT}){OWS}b{WS}from{WS}({INT}|-1)"
    rf"(?:{WS}tag{WS}({INT}|-1))?(?:{WS}cpu{WS}({INT}))?(?:{WS}nic{WS}({INT}))?{OWS}$")
RE_CALC = re.compile(rf"^{OWS}(?:({LABEL}){OWS}:{OWS})?calc{WS}({INT})(?:{WS}cpu{WS}({INT}))?{OWS}$")
RE_DEP = re.compile(rf"^{OWS}({LABEL}){WS}(requires|irequires){WS}({LABEL}){OWS}$")
KEYWORDS = {"send", "recv", "calc", "rank", "num_ranks", "requires", "irequires", "tag", "cpu", "nic", "to", "from"}
TYPE_CODE = {"send": 1, "recv": 2, "calc": 3}


class Bad(Exception):
    pass


def strip_comments(lines):
    """Remove // and /* */ comments, keeping line numbers."""
    out, in_block = [], False
    for ln in lines:
        s, res = ln, ""
        while s:
            if in_block:
                k = s.find("*/")
                if k < 0:
                    s = ""
                else:
                    s, in_block = s[k + 2:], False
                continue
            a, b = s.find("//"), s.find("/*")
            if a >= 0 and (b < 0 or a < b):
                res += s[:a]
                s = ""
            elif b >= 0:
                res += s[:b]
                s, in_block = s[b + 2:], True
            else:
                res += s
                s = ""
        out.append(res)
    if in_block:
        raise Bad("unterminated /* comment")
    return out


def parse_text(path):
    """Returns (num_ranks, ranks): ranks[r] = (nodes, deps, ideps) where nodes
    are (type, peer, size, tag, cpu, nic) and deps[i] lists the nodes that
    depend on node i, in file order."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw and not raw.endswith(b"\n"):
        raise Bad("last line has no newline")
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as e:
        raise Bad(f"byte {e.start}: not ASCII")
    lines = strip_comments(text.split("\n")[:-1] if text else [])
    num_ranks, cur, ranks, labels = None, None, [], {}
    nodes = deps = ideps = None
    for no, ln in enumerate(lines, 1):
        ln = ln.rstrip("\r")
        where = f"line {no}"
        if not ln.strip():
            continue
        m = RE_NUMRANKS.match(ln)
        if m:
            if num_ranks is not None:
                raise Bad(f"{where}: num_ranks given twice")
            if ranks or cur is not None:
                raise Bad(f"{where}: num_ranks after a rank block")
            num_ranks = int(m.group(1))
            if num_ranks < 1 or num_ranks > U32:
                raise Bad(f"{where}: num_ranks {num_ranks} out of range")
            continue
        m = RE_RANK.match(ln)
        if m:
            if num_ranks is None:
                raise Bad(f"{where}: rank block before num_ranks")
            if cur is not None:
                raise Bad(f"{where}: rank block inside rank {cur}")
            r = int(m.group(1))
            if r != len(ranks):
                raise Bad(f"{where}: rank {r} out of order (expected rank {len(ranks)})")
            if r >= num_ranks:
                raise Bad(f"{where}: rank {r} not below num_ranks {num_ranks}")
            cur, labels, nodes, deps, ideps = r, {}, [], [], []
            continue
        if RE_CLOSE.match(ln):
            if cur is None:
                raise Bad(f"{where}: '}}' outside a rank block")
            ranks.append((nodes, deps, ideps))
            cur = None
            continue
        if cur is None:
            raise Bad(f"{where}: operation outside a rank block: {ln.strip()[:60]}")
        op = None
        for kind, rx in (("send", RE_SEND), ("recv", RE_RECV), ("calc", RE_CALC)):
            m = rx.match(ln)
            if m:
                op = kind
                break
        if op:
            label = m.group(1)
            size = int(m.group(2))
            if size > (1 << 64) - 1:
                raise Bad(f"{where}: size {size} does not fit 64 bits")
            if op == "calc":
                peer, tag, cpu, nic = 0, 0, m.group(3), None
            else:
                peer = U32 if m.group(3) == "-1" else int(m.group(3))
                tag = m.group(4)
                tag = 0 if tag is None else U32 if tag == "-1" else int(tag)
                cpu, nic = m.group(5), m.group(6)
                if tag > U32:
                    raise Bad(f"{where}: tag {tag} does not fit 32 bits (txt2bin would wrap it)")
                if peer != U32 and peer >= num_ranks:
                    raise Bad(f"{where}: peer {peer} not below num_ranks {num_ranks}")
            cpu = 0 if cpu is None else int(cpu)
            nic = 0 if nic is None else int(nic)
            if cpu > 255:
                raise Bad(f"{where}: cpu {cpu} does not fit 8 bits (txt2bin would wrap it)")
            if nic > 255:
                raise Bad(f"{where}: nic {nic} does not fit 8 bits (txt2bin would wrap it)")
            if label is not None:
                if label in KEYWORDS:
                    raise Bad(f"{where}: label '{label}' is a keyword")
                if label in labels:
                    raise Bad(f"{where}: label {label} defined twice in rank {cur}")
                labels[label] = len(nodes)
            nodes.append((TYPE_CODE[op], peer, size, tag, cpu, nic))
            deps.append([])
            ideps.append([])
            continue
        m = RE_DEP.match(ln)
        if m:
            a, kind, b = m.group(1), m.group(2), m.group(3)
            for lab in (a, b):
                if lab not in labels:
                    raise Bad(f"{where}: label {lab} used before it is defined in rank {cur}")
            ia, ib = labels[a], labels[b]
            if ia == ib:
                raise Bad(f"{where}: {a} depends on itself")
            (ideps if kind == "irequires" else deps)[ib].append(ia)
            continue
        raise Bad(f"{where}: not a GOAL line: {ln.strip()[:60]}")
    if cur is not None:
        raise Bad(f"rank {cur} has no closing '}}'")
    if num_ranks is None:
        raise Bad("no num_ranks line")
    if len(ranks) != num_ranks:
        raise Bad(f"{len(ranks)} rank blocks for num_ranks {num_ranks}")
    for r, (nodes, deps, ideps) in enumerate(ranks):
        check_acyclic(r, nodes, deps, ideps)
    return num_ranks, ranks


def check_acyclic(r, nodes, deps, ideps):
    indeg = [0] * len(nodes)
    for lst in (deps, ideps):
        for succs in lst:
            for s in succs:
                indeg[s] += 1
    q = deque(i for i, d in enumerate(indeg) if d == 0)
    seen = 0
    while q:
        i = q.popleft()
        seen += 1
        for s in deps[i] + ideps[i]:
            indeg[s] -= 1
            if indeg[s] == 0:
                q.append(s)
    if seen != len(nodes):
        raise Bad(f"rank {r}: dependency cycle")


def check_match(ranks):
    q = defaultdict(deque)
    for r, (nodes, _, _) in enumerate(ranks):
        for (t, peer, size, tag, _, _) in nodes:
            if t == 1:
                q[(r, peer, tag)].append(("send", size))
    for r, (nodes, _, _) in enumerate(ranks):
        for (t, peer, size, tag, _, _) in nodes:
            if t != 2:
                continue
            if peer == U32 or tag == U32:
                raise Bad(f"rank {r}: recv from any source or tag cannot be matched")
            k = (peer, r, tag)
            if not q[k]:
                raise Bad(f"rank {r}: recv {size}b from {peer} tag {tag} has no send")
            _, s = q[k].popleft()
            if s != size:
                raise Bad(f"rank {r}: recv {size}b from {peer} tag {tag} matches a send of {s}b")
    for (src, dst, tag), v in q.items():
        if v:
            raise Bad(f"rank {src}: {len(v)} send(s) to {dst} tag {tag} have no recv")


def read_binary(path):
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < 14:
        raise Bad("binary: shorter than the header")
    magic, nranks, max_cpu, max_nic = struct.unpack_from("<QIBB", b, 0)
    if magic != 4223:
        raise Bad(f"binary: magic {magic}, expected 4223")
    base = 8
    jt = 14
    if len(b) < jt + 16 * nranks:
        raise Bad("binary: jump table cut short")
    ranks = []
    prev_end = 6 + 16 * nranks
    for r in range(nranks):
        start, end = struct.unpack_from("<QQ", b, jt + 16 * r)
        if start != prev_end:
            raise Bad(f"binary: rank {r} starts at {start}, previous ended at {prev_end}")
        if end > len(b) - base or end < start + 8:
            raise Bad(f"binary: rank {r} section [{start}, {end}) out of the file")
        p = base + start
        nn, nroots = struct.unpack_from("<II", b, p)
        p += 8
        roots = list(struct.unpack_from(f"<{nroots}I", b, p))
        p += 4 * nroots
        nodes, raw = [], []
        for _ in range(nn):
            dc, t, peer, size, tag, cpu, nic, nd, ds, nsd, sds = struct.unpack_from("<IBIQIBBIIII", b, p)
            p += 39
            nodes.append((t, peer, size, tag, cpu, nic))
            raw.append((dc, nd, ds, nsd, sds))
        app_start = p
        total = sum(x[1] + x[3] for x in raw)
        if base + end != app_start + 4 * total:
            raise Bad(f"binary: rank {r} ends at {end}, its appendix needs {app_start + 4 * total - base}")
        app = list(struct.unpack_from(f"<{total}I", b, app_start))
        deps, ideps, indeg, run = [], [], [0] * nn, 0
        for i, (dc, nd, ds, nsd, sds) in enumerate(raw):
            if ds != run or sds != run + nd:
                raise Bad(f"binary: rank {r} node {i}: appendix index {ds}/{sds}, expected {run}/{run + nd}")
            deps.append(app[ds:ds + nd])
            ideps.append(app[sds:sds + nsd])
            run += nd + nsd
            for s in deps[-1] + ideps[-1]:
                if s >= nn:
                    raise Bad(f"binary: rank {r} node {i}: dependent {s} out of range")
                indeg[s] += 1
        for i, (dc, *_rest) in enumerate(raw):
            if dc != indeg[i]:
                raise Bad(f"binary: rank {r} node {i}: DependenciesCnt {dc}, but {indeg[i]} edges point to it")
        if roots != [i for i in range(nn) if indeg[i] == 0]:
            raise Bad(f"binary: rank {r}: root list differs from the nodes without dependencies")
        for i, n in enumerate(nodes):
            if n[0] not in (1, 2, 3):
                raise Bad(f"binary: rank {r} node {i}: type {n[0]}")
        ranks.append((nodes, deps, ideps))
        prev_end = end
    if base + prev_end != len(b):
        raise Bad(f"binary: {len(b) - base - prev_end} bytes after the last rank")
    mc = max((n[4] for rk in ranks for n in rk[0]), default=0)
    mn = max((n[5] for rk in ranks for n in rk[0]), default=0)
    if (mc, mn) != (max_cpu, max_nic):
        raise Bad(f"binary: header max cpu/nic {max_cpu}/{max_nic}, nodes have {mc}/{mn}")
    return nranks, ranks


def dump(nranks, ranks, out):
    names = {1: "send", 2: "recv", 3: "calc"}
    out.write(f"num_ranks {nranks}\n")
    for r, (nodes, deps, ideps) in enumerate(ranks):
        for i, (t, peer, size, tag, cpu, nic) in enumerate(nodes):
            out.write(f"{r}\t{i}\t{names[t]}\t{size}\t{peer}\t{tag}\t{cpu}\t{nic}\t"
                      f"{','.join(map(str, deps[i]))}\t{','.join(map(str, ideps[i]))}\n")


def main(argv):
    args = argv[1:]
    opts = {"--match": False, "--dump": False}
    binp = textp = None
    files = []
    while args:
        a = args.pop(0)
        if a in opts:
            opts[a] = True
        elif a == "--bin" and args:
            binp = args.pop(0)
        elif a == "--text" and args:
            textp = args.pop(0)
        elif a.startswith("-"):
            print(f"goal-check: unknown option {a}", file=sys.stderr)
            return 2
        else:
            files.append(a)
    if binp is None and len(files) != 1:
        print("usage: goal-check.py [--match] [--dump] FILE.goal | --bin FILE.bin [--text FILE.goal]", file=sys.stderr)
        return 2
    try:
        if binp is not None:
            where = binp
            nr, ranks = read_binary(binp)
            if textp:
                where = textp
                tn, tranks = parse_text(textp)
                where = f"{binp} vs {textp}"
                if tn != nr:
                    raise Bad(f"num_ranks {nr} in binary, {tn} in text")
                for r in range(nr):
                    for part, name in ((0, "nodes"), (1, "requires lists"), (2, "irequires lists")):
                        if [tuple(x) if part == 0 else list(x) for x in ranks[r][part]] != \
                           [tuple(x) if part == 0 else list(x) for x in tranks[r][part]]:
                            raise Bad(f"rank {r}: {name} differ")
        else:
            where = files[0]
            nr, ranks = parse_text(files[0])
            if opts["--match"]:
                check_match(ranks)
    except Bad as e:
        print(f"goal-check: {where}: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"goal-check: {e}", file=sys.stderr)
        return 1
    if opts["--dump"]:
        dump(nr, ranks, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
