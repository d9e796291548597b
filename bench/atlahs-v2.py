"""Run ATLAHS V2 (nccl_generator_v2's main.py) unmodified, with one change
made in memory before it starts: its collective label tables
(COLLECTIVE_LABELS, COLLECTIVE_LABELS_KERNEL in nsys_events_common.py) get
"Reduce": "G".  They have no Reduce entry though its schedule code handles
Reduce, and the first ncclReduce would stop the run (TypeError: sequence
item N: expected str instance, float found).  "G" is a letter none of its
parallelism rules reads.

Usage: atlahs-v2.py V2_DIR MAIN_PY_ARGS...
"""
import runpy
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: atlahs-v2.py V2_DIR MAIN_PY_ARGS...")
    v2 = sys.argv[1]
    sys.path.insert(0, v2)
    import nsys_events_common as common  # noqa: E402 (from V2_DIR)

    # The same dict objects main.py reaches through nsys_events' import.
    common.COLLECTIVE_LABELS.setdefault("Reduce", "G")
    common.COLLECTIVE_LABELS_KERNEL.setdefault("Reduce", "G")
    sys.argv = [v2 + "/main.py"] + sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")


main()
