#!/usr/bin/env python3
"""Compare `ev-stats report --tracelens --csv` with TraceLens's perf report CSVs.

Usage: tracelens-layout.py [--side] TL_CSV_DIR EV_CSV_DIR|EV.xlsx SHEET...

For each SHEET, TL_CSV_DIR/SHEET.csv (generate_perf_report_pytorch's
--output_csvs_dir) and EV_CSV_DIR/SHEET.csv, or sheet SHEET of the
workbook EV.xlsx as openpyxl reads it (`--tracelens --xlsx`), are compared:
- columns: TraceLens's header must be the first columns of evkit's, in order
  (evkit's extra columns may follow);
- rows: the same number, in the same order; rows whose sort value (the
  column TraceLens sorts the sheet by) ties may come in another order, as
  pandas' unstable sort leaves them: they are paired by their text cells;
- cells: counts and text exactly, other numbers within 1e-6 relative (1e-9
  absolute near zero), TraceLens's event ids (ex_UID, UID_first) included;
  a cell evkit leaves empty where TraceLens has a value is counted apart, as
  not computed, and fails the comparison as a difference does.  In text,
  numpy 2's repr of a scalar, np.float64(x), equals numpy 1's, x
  (TraceLens's kernel_details print numpy scalars; which form
  depends on the numpy TraceLens ran with), and the numbers in a text
  (kernel_details' sums and stds) are compared as numbers: their last digit
  depends on the order numpy adds the instances' durations, TraceLens's
  order of events in the trace file, which an ev stream does not keep.  A
  parameter pandas 3 leaves missing (TraceLens's CSV: empty) equals pandas
  1 and 2's text of it, 'None' or 'nan' (astype(str) of None or NaN).
Prints one line per sheet (rows, cells equal, cells empty in evkit, cells
that differ), with --side every row's numbers side by side, and the first
differences and empty cells.  Exits 1 when a header, a row count or a cell
differs, or a cell is empty in evkit only.
"""
import csv
import math
import sys

import re

COUNT_COLS = {"Count", "operation_count", "Kernel duration (µs)_count", "name_count", "Short Kernel count", "count"}
NP_SCALAR = re.compile(r"np\.(?:float64|int64)\(([^()]*)\)")
SORT_COL = {
    "kernel_summary": "Kernel duration (µs)_sum",
    "ops_summary": "total_direct_kernel_time_sum",
    "ops_summary_by_category": "total_direct_kernel_time_ms",
    "ops_unique_args": "total_direct_kernel_time_sum",
    "unified_perf_summary": "Kernel Time (µs)_sum",
    "GEMM": "Kernel Time (µs)_sum",
    "BinaryElementwise": "Kernel Time (µs)_sum",
    "UnaryElementwise": "Kernel Time (µs)_sum",
    "Reduce_fwd": "Kernel Time (µs)_sum",
    "Reduce_bwd": "Kernel Time (µs)_sum",
    "short_kernels_summary": "Short Kernel duration (µs) sum",
    "coll_analysis": "dur_sum",
}


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def cell_text(v):
    """A workbook cell as the CSV holds it: numbers as Python's text of
    them (compared as numbers), an empty cell as ''."""
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return str(int(v))
    return str(v)


def read_sheet(path, sheet):
    import openpyxl  # only for a workbook

    wb = openpyxl.load_workbook(path, read_only=True)
    rows = [[cell_text(v) for v in r] for r in wb[sheet].iter_rows(values_only=True)]
    wb.close()
    return rows[0], rows[1:]


def number(s):
    try:
        return float(s)
    except ValueError:
        return None


NUM = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")


def same_text(a, b):
    """Texts equal but for numbers within 1e-6 relative."""
    a, b = NP_SCALAR.sub(r"\1", a), NP_SCALAR.sub(r"\1", b)
    if NUM.split(a) != NUM.split(b):
        return False
    return all(same_number("", float(x), float(y)) for x, y in zip(NUM.findall(a), NUM.findall(b)))


def same(col, a, b):
    if a == b or NP_SCALAR.sub(r"\1", a) == NP_SCALAR.sub(r"\1", b):
        return True
    if a == "" and b in ("None", "nan") and col.startswith("param: "):
        return True
    x, y = number(a), number(b)
    if x is None or y is None:
        return x is None and y is None and same_text(a, b)
    return same_number(col, x, y)


def same_number(col, x, y):
    if col in COUNT_COLS:
        return x == y
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return close(x, y)


def close(x, y):
    return abs(x - y) <= max(1e-9, 1e-6 * max(abs(x), abs(y)))


def text_cells(row, n):
    return tuple(c for c in row[:n] if number(c) is None)


def pair_ties(th, trows, erows, sheet):
    """evkit's rows reordered within TraceLens's blocks of tied sort values,
    paired by their text cells; the number of rows so moved."""
    col = SORT_COL.get(sheet)
    if col not in th or len(trows) != len(erows):
        return erows, 0
    k, n, moved, out, i = th.index(col), len(th), 0, list(erows), 0
    while i < len(trows):
        j = i + 1
        while j < len(trows) and trows[j][k] == trows[i][k]:
            j += 1
        pool = list(erows[i:j])
        for t in range(i, j):
            hit = [p for p in pool if text_cells(p, n) == text_cells(trows[t], n)]
            if not hit:
                break
            pool.remove(hit[0])
            moved += hit[0] is not erows[t]
            out[t] = hit[0]
        i = j
    return out, moved


def compare(tl_dir, ev_dir, sheet, side):
    th, trows = read(f"{tl_dir}/{sheet}.csv")
    eh, erows = read_sheet(ev_dir, sheet) if ev_dir.endswith(".xlsx") else read(f"{ev_dir}/{sheet}.csv")
    erows, ties = pair_ties(th, trows, erows, sheet)
    bad = []
    if eh[: len(th)] != th:
        bad.append(f"header: TraceLens {th} evkit {eh[:len(th)]}")
    if len(trows) != len(erows):
        bad.append(f"rows: TraceLens {len(trows)} evkit {len(erows)}")
    eq = empty = diff = 0
    for i, (tr, er) in enumerate(zip(trows, erows)):
        if side:
            print(f"  {sheet}[{i}] TL  {tr}\n  {sheet}[{i}] ev  {er[:len(th)]}")
        for j, col in enumerate(th):
            a, b = tr[j] if j < len(tr) else "", er[j] if j < len(er) else ""
            if b == "" and a != "":
                empty += 1
                if empty <= 5:
                    bad.append(f"row {i} {col!r}: TraceLens {a!r} evkit empty")
            elif same(col, a, b):
                eq += 1
            else:
                diff += 1
                if diff <= 5:
                    bad.append(f"row {i} {col!r}: TraceLens {a!r} evkit {b!r}")
    print(f"{sheet}: {len(trows)} rows ({ties} in another order among ties), {eq} cells equal, "
          f"{empty} empty in evkit, {diff} differ")
    for b in bad:
        print(f"  {sheet}: {b}")
    return not bad


def main(argv):
    side = "--side" in argv
    args = [a for a in argv[1:] if a != "--side"]
    if len(args) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    ok = all([compare(args[0], args[1], s, side) for s in args[2:]])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
