#!/usr/bin/env python3
"""kineto-order.py JSON: how far a Kineto trace is from time order.

Prints one line: the complete ("X") events, the share that starts before
an event met earlier in the file, and the largest such step back as a share
of the trace's span.  A reorder window can release a record only once no
later event can start before it; a step back as long as the span means the
last event read may be the earliest, so nothing can be written before the
end of the input (docs/kineto2ev.md, "Streaming, speed and memory").
"""
import json
import sys


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        events = [e for e in json.load(f).get("traceEvents", []) if e.get("ph") == "X" and "ts" in e]
    if not events:
        print("no complete events")
        return
    late = 0
    back = 0.0
    latest = float("-inf")
    for e in events:
        t = float(e["ts"])
        if t < latest:
            late += 1
            back = max(back, latest - t)
        latest = max(latest, t)
    ts = [float(e["ts"]) for e in events]
    span = max(ts) - min(ts)
    print("%d events; %.1f%% start before an event read earlier; largest step back %.0f us = %.0f%% of the %.0f us span"
          % (len(events), 100.0 * late / len(events), back, 100.0 * back / span if span else 0.0, span))


if __name__ == "__main__":
    main()
