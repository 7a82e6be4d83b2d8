#!/usr/bin/env python3
"""Line coverage gate for libhurray (make coverage-check).

Reads the lcov file `make coverage` exports (llvm-cov export -format=lcov, reference/src only)
and the explanation table of docs/conformance/coverage.md, then

  1. prints line coverage per file and in total, and fails if the total is below --min;
  2. lists every line no run reached, each with the function it is in, and fails if one is
     not explained: the table must have a row for that file and function whose line ranges
     name at least as many lines as that function has uncovered. Rows are matched by file and
     function, not by line number, so an edit elsewhere in a file does not invalidate them; a
     row whose line range no longer holds the uncovered lines is reported (update the numbers)
     but does not fail, and a row with nothing left to explain is reported as stale.

Table rows (any Markdown table in the file):  | `reference/src/F.c` | A-B, C | `function` | reason |
"""
import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

ROW = re.compile(r"^\|\s*`reference/src/([\w.]+)`\s*\|\s*([\d,\s-]+?)\s*\|\s*`(\w+)`\s*\|(.*)\|\s*$")


def parse_lcov(path):
    """{file: (sorted [(fn_start, name)], {line: count})} keyed by base name."""
    files = {}
    cur = None
    for raw in Path(path).read_text().splitlines():
        if raw.startswith("SF:"):
            cur = Path(raw[3:]).name
            files[cur] = ([], {})
        elif raw.startswith("FN:") and cur:
            line, name = raw[3:].split(",", 1)
            files[cur][0].append((int(line), name.split(":")[-1]))
        elif raw.startswith("DA:") and cur:
            line, count = raw[3:].split(",")[:2]
            files[cur][1][int(line)] = int(count)
    for fns, _ in files.values():
        fns.sort()
    return files


def enclosing(fns, line):
    name = "?"
    for start, fn in fns:
        if start > line:
            break
        name = fn
    return name


def parse_lines(spec):
    out = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def parse_explained(path):
    rows = defaultdict(set)  # (file, function) -> lines named
    for raw in Path(path).read_text().splitlines():
        m = ROW.match(raw.strip())
        if m:
            rows[(m.group(1), m.group(3))] |= parse_lines(m.group(2))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lcov", required=True)
    ap.add_argument("--min", type=float, required=True, help="minimum total line coverage, %%")
    ap.add_argument("--explained", required=True, help="Markdown file with the explanation table")
    args = ap.parse_args()

    files = parse_lcov(args.lcov)
    explained = parse_explained(args.explained)
    total = hit = 0
    missed = defaultdict(list)  # (file, function) -> [line]
    print(f"{'file':<16} {'lines':>6} {'missed':>7} {'cover':>8}")
    for name in sorted(files):
        fns, da = files[name]
        n, h = len(da), sum(1 for c in da.values() if c)
        total, hit = total + n, hit + h
        if n:
            print(f"{name:<16} {n:>6} {n - h:>7} {100.0 * h / n:>7.2f}%")
        for line in sorted(l for l, c in da.items() if not c):
            missed[(name, enclosing(fns, line))].append(line)
    pct = 100.0 * hit / total if total else 0.0
    print(f"{'TOTAL':<16} {total:>6} {total - hit:>7} {pct:>7.2f}%")

    failures = []
    if pct < args.min:
        failures.append(f"line coverage {pct:.2f}% is below {args.min:g}%")
    print("\nlines no run reached (docs/conformance/coverage.md explains each):")
    for (name, fn), lines in sorted(missed.items()):
        named = explained.get((name, fn), set())
        where = f"reference/src/{name}:{','.join(map(str, lines))} ({fn})"
        if len(lines) > len(named):
            print(f"  UNEXPLAINED {where}: {len(lines)} line(s), the table names {len(named)}")
            failures.append(f"{where} is not explained")
        elif not set(lines) <= named:
            print(f"  explained   {where} (the table's line numbers are out of date)")
        else:
            print(f"  explained   {where}")
    for (name, fn) in sorted(set(explained) - set(missed)):
        print(f"  stale row: reference/src/{name} `{fn}` has no uncovered line left")
    if failures:
        print("\ncoverage-check: FAILED\n  " + "\n  ".join(failures))
        return 1
    print(f"\ncoverage-check: {pct:.2f}% of reference/src lines covered (minimum {args.min:g}%),"
          " every uncovered line explained")
    return 0


if __name__ == "__main__":
    sys.exit(main())
