#!/usr/bin/env bash
# Compares descriptor encode/decode speed of this tree with a base commit, in one run.
#
#   bench/compare_base.sh [BASE_COMMIT] [ROUNDS] [SECONDS]
#   PYTHON_COMPARE=0 bench/compare_base.sh ...     # the C part only
#
# BASE_COMMIT (default d01c12f: main before the compact descriptor record) is exported with
# `git archive` into a temporary directory (no worktree is registered); both trees build their
# own libhurray and their own bench/c/descriptor_bench.c (the same two cases, each written
# against its tree's API). The two binaries then run alternately, ROUNDS times each (default
# 7), SECONDS per measurement (default 0.3), and the script prints, per case and operation,
# the min and median ns per descriptor of each side and the speed-up (base / this tree).
#
# Then (unless PYTHON_COMPARE=0) both trees' Python bindings are built with the project's .venv
# (pip --target into the temporary directory: nothing is installed) and the same timeit
# micro-benchmarks run alternately in fresh interpreters, ROUNDS times each: Descriptor.decode
# of a 72-byte and of a strided descriptor, hurray.from_numpy of 16 float32 (zero-copy) and
# Tensor.descriptor. Each prints the min over timeit repeats; the script prints min and median.
#
# Numbers depend on the machine and its load: run on a quiet machine, compare only what one
# run prints. Nothing here fails on a slow result.
set -euo pipefail

BASE=${1:-d01c12f}
PY=${PYTHON:-$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python}
ROUNDS=${2:-7}
SECONDS_PER=${3:-0.3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hurray-compare.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "base: $BASE; this tree: $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet || echo '+changes')"
mkdir -p "$WORK/base"
git -C "$ROOT" archive "$BASE" | tar -x -C "$WORK/base"
make -s -C "$WORK/base" BUILD="$WORK/base-build" "$WORK/base-build/bench/descriptor_bench" >/dev/null
make -s -C "$ROOT" BUILD="$WORK/new-build" "$WORK/new-build/bench/descriptor_bench" >/dev/null

: >"$WORK/base.txt"
: >"$WORK/new.txt"
for ((r = 1; r <= ROUNDS; r++)); do
    "$WORK/base-build/bench/descriptor_bench" "$SECONDS_PER" | awk '$2=="encode"||$2=="decode"{print $1, $2, $6}' >>"$WORK/base.txt"
    "$WORK/new-build/bench/descriptor_bench" "$SECONDS_PER" | awk '$2=="encode"||$2=="decode"{print $1, $2, $6}' >>"$WORK/new.txt"
done

python3 - "$WORK/base.txt" "$WORK/new.txt" "$ROUNDS" <<'EOF'
import statistics, sys
def load(path):
    out = {}
    for line in open(path):
        case, op, ns = line.split()
        out.setdefault((case, op), []).append(float(ns))
    return out
base, new = load(sys.argv[1]), load(sys.argv[2])
print(f"{sys.argv[3]} rounds each, interleaved; ns per descriptor (lower is better)")
print(f"{'case':6} {'op':6} {'base min':>9} {'base med':>9} {'new min':>9} {'new med':>9} {'x (min)':>8} {'x (med)':>8}")
for key in sorted(base):
    b, n = base[key], new[key]
    bmin, bmed, nmin, nmed = min(b), statistics.median(b), min(n), statistics.median(n)
    print(f"{key[0]:6} {key[1]:6} {bmin:9.1f} {bmed:9.1f} {nmin:9.1f} {nmed:9.1f} {bmin/nmin:8.2f} {bmed/nmed:8.2f}")
EOF

[[ "${PYTHON_COMPARE:-1}" == 0 ]] && exit 0
echo
echo "Python bindings (built from each tree with $PY)"
"$PY" -m pip install -q --no-build-isolation --no-deps --target "$WORK/base-py" "$WORK/base/python" >/dev/null
"$PY" -m pip install -q --no-build-isolation --no-deps --target "$WORK/new-py" "$ROOT/python" >/dev/null
cat >"$WORK/timing.py" <<'PYEOF'
import timeit
import numpy as np
import hurray
small = hurray.from_numpy(np.zeros((2, 3), dtype=np.float32)).descriptor.encode()
with hurray.aligned_allocator():
    base_array = np.zeros((8, 6, 4), dtype=np.int16)
strided = hurray.from_numpy(base_array[:, ::2, ::-1]).descriptor.encode()
a = np.zeros(16, dtype=np.float32)
t = hurray.from_numpy(a)
cases = {
    "Descriptor.decode(72 B)": lambda: hurray.Descriptor.decode(small),
    "Descriptor.decode(strided, rank 3)": lambda: hurray.Descriptor.decode(strided),
    "from_numpy(16 float32)": lambda: hurray.from_numpy(a),
    "Tensor.descriptor": lambda: t.descriptor,
}
for name, fn in cases.items():
    timer = timeit.Timer(fn)
    n, _ = timer.autorange()
    best = min(timer.repeat(repeat=7, number=n)) / n
    print(f"{name}\t{best * 1e9:.1f}")
PYEOF
: >"$WORK/base-py.txt"
: >"$WORK/new-py.txt"
for ((r = 1; r <= ROUNDS; r++)); do
    PYTHONPATH="$WORK/base-py" "$PY" "$WORK/timing.py" >>"$WORK/base-py.txt"
    PYTHONPATH="$WORK/new-py" "$PY" "$WORK/timing.py" >>"$WORK/new-py.txt"
done
python3 - "$WORK/base-py.txt" "$WORK/new-py.txt" "$ROUNDS" <<'EOF2'
import statistics, sys
def load(path):
    out = {}
    for line in open(path):
        name, ns = line.rstrip("\n").split("\t")
        out.setdefault(name, []).append(float(ns))
    return out
base, new = load(sys.argv[1]), load(sys.argv[2])
print(f"{sys.argv[3]} rounds each, interleaved; ns per call, min over timeit repeats")
print(f"{'call':36} {'base min':>9} {'base med':>9} {'new min':>9} {'new med':>9} {'x (min)':>8}")
for key in base:
    b, n = base[key], new[key]
    print(f"{key:36} {min(b):9.1f} {statistics.median(b):9.1f} {min(n):9.1f} "
          f"{statistics.median(n):9.1f} {min(b) / min(n):8.2f}")
EOF2
