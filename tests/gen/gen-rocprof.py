#!/usr/bin/python3
"""gen-rocprof.py - a rocprofv3 JSON (*_results.json) of about --size bytes:
the records of a template trace (default the test fixture) repeated, each
copy shifted past the previous one in time and given new correlation and
dispatch ids, so that HIP calls still pair with their GPU events.  Written
as it goes (memory does not grow with --size); the same options give the
same bytes."""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "rocprof2ev", "small_results.json")


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1].upper()]) if s[-1].upper() in mult else int(s)


def shifted(rec, dt, dc):
    """rec moved by dt ns, its ids by dc (a copy)."""
    r = json.loads(json.dumps(rec))
    for k in ("start_timestamp", "end_timestamp"):
        if k in r:
            r[k] += dt
    cid = r.get("correlation_id")
    if isinstance(cid, dict) and cid.get("internal"):
        cid["internal"] += dc
    di = r.get("dispatch_info")
    if isinstance(di, dict) and "dispatch_id" in di:
        di["dispatch_id"] += dc
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", required=True, help="bytes of JSON, K/M/G suffixes")
    ap.add_argument("--template", default=FIXTURE)
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    size = parse_size(a.size)
    doc = json.load(open(a.template))
    tool = doc["rocprofiler-sdk-tool"][0]
    recs = tool.pop("buffer_records")
    times = [r[k] for v in recs.values() for r in v for k in ("start_timestamp", "end_timestamp") if k in r]
    span = max(times) - min(times) + 1000 if times else 1000
    ids = [r["correlation_id"]["internal"] for v in recs.values() for r in v
           if isinstance(r.get("correlation_id"), dict)]
    idspan = max(ids) + 1 if ids else 1
    # One copy's records as a format string per array: two fields vary.
    copy_bytes = sum(len(json.dumps(r)) + 2 for v in recs.values() for r in v) or 1
    n = max(1, size // copy_bytes)
    out = sys.stdout if a.output == "-" else open(a.output, "w")
    head = json.dumps({"rocprofiler-sdk-tool": [dict(tool, buffer_records=None)]})
    # Split the document at the placeholder and stream the arrays into it.
    pre, post = head.split('"buffer_records": null')
    out.write(pre + '"buffer_records": {')
    for i, (kind, v) in enumerate(recs.items()):
        out.write(("," if i else "") + json.dumps(kind) + ": [")
        if v:
            # Templates with the shifted fields as %d slots, built once.
            marks = [shifted(r, 10**15, 10**12) for r in v]
            tpl = []
            for r, m in zip(v, marks):
                t = json.dumps(m).replace("%", "%%")
                for k in ("start_timestamp", "end_timestamp"):
                    if k in r:
                        t = t.replace(str(m[k]), "%(t" + k[0] + ")d", 1)
                tpl.append((t, r))
            first = True
            for c in range(n):
                dt, dc = c * span, c * idspan
                for t, r in tpl:
                    vals = {"ts": r.get("start_timestamp", 0) + dt, "te": r.get("end_timestamp", 0) + dt}
                    s = t % vals
                    if isinstance(r.get("correlation_id"), dict) and r["correlation_id"].get("internal"):
                        s = s.replace(str(r["correlation_id"]["internal"] + 10**12), str(r["correlation_id"]["internal"] + dc), 1)
                    if isinstance(r.get("dispatch_info"), dict) and "dispatch_id" in r["dispatch_info"]:
                        s = s.replace(str(r["dispatch_info"]["dispatch_id"] + 10**12), str(r["dispatch_info"]["dispatch_id"] + dc), 1)
                    out.write(s if first else "," + s)
                    first = False
        out.write("]")
    out.write("}" + post)
    out.flush()


if __name__ == "__main__":
    main()
