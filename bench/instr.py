"""Instructions per call (callgrind's Ir count) of the hurray paths of bench/ratios.py and
their anchors: deterministic where wall-clock time on a shared machine is not. Each case runs
in a fresh interpreter under `valgrind --tool=callgrind` with N calls, and the same setup with
0 calls once; (count(N) - count(0)) / N is the per-call figure (setup and imports cancel out).
Instruction counts ignore cache misses and system calls; they rank the per-call work.

    .venv/bin/python bench/instr.py [N=20000]           # needs valgrind
    PYTHONPATH=<pip --target dir> .venv/bin/python bench/instr.py   # another build
    .venv/bin/python bench/instr.py 5000 --export       # the export pair, inside the calls

--export counts the export pair (`np.from_dlpack(t)` and `np.from_dlpack(ndarray)`) only inside
NumPy's `from_dlpack` and the result array's `array_dealloc` (callgrind --toggle-collect; the
producer's `__dlpack__`, the capsule, the deleter and destructor all run there), divided by N:
no loop, no lambda and no start-up to subtract, so the figure repeats exactly between runs
(PYTHONHASHSEED=0), where the whole-process difference above moves by a few hundred.
"""
import os
import subprocess
import sys
import tempfile

CASE = r"""
import sys, numpy as np, hurray
sys.path.insert(0, sys.argv[3])
import test_bench_descriptor as tbd
with hurray.aligned_allocator():
    a = np.ones(16, np.float32)
h = hurray.from_numpy(a)
nd = np.ones(16, np.float32)
cls = tbd._anchor_class()
small = tbd._cases()["small"]
blob = small.descriptor.encode()
pb = tbd._anchor_message(cls, small).SerializeToString()
f = {
    "from_numpy": lambda: hurray.from_numpy(a),
    "from_dlpack": lambda: hurray.from_dlpack(a),
    "asarray_from_numpy": lambda: np.asarray(hurray.from_numpy(a)),
    "np_from_dlpack_a": lambda: np.from_dlpack(a),
    "np_from_dlpack_t": lambda: np.from_dlpack(h),
    "np_asarray_t": lambda: np.asarray(h),
    "np_from_dlpack_nd": lambda: np.from_dlpack(nd),
    "decode": lambda: hurray.Descriptor.decode(blob),
    "pb_decode": lambda: cls.FromString(pb),
    "decode_encode": lambda: hurray.Descriptor.decode(blob).encode(),
    "pb_decode_encode": lambda: cls.FromString(pb).SerializeToString(),
}[sys.argv[1]]
for _ in range(int(sys.argv[2])):
    f()
"""

PAIRS = [("from_numpy", "np_from_dlpack_a", "<= 1.5x"),
         ("from_dlpack", "np_from_dlpack_a", "<= 1.5x"),
         ("asarray_from_numpy", "np_from_dlpack_a", "<= 3x"),
         ("np_from_dlpack_t", "np_from_dlpack_nd", "<= 1.2x"),
         ("np_asarray_t", "np_from_dlpack_nd", ""),
         ("decode", "pb_decode", "<= 1.0x"),
         ("decode_encode", "pb_decode_encode", "<= 2x")]


def count(case, n, collect=()):
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python")
    toggles = [f"--toggle-collect={f}" for f in collect]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *toggles,
                        sys.executable, "-c", CASE, case, str(n), here],
                       capture_output=True, text=True, check=True,
                       env=dict(os.environ, PYTHONHASHSEED="0") if collect else None)
        with open(out) as f:
            total = next(line for line in f if line.startswith("totals:") or
                         line.startswith("summary:"))
    return int(total.split()[1])


def main():
    n = int(next((x for x in sys.argv[1:] if x.isdigit()), "20000"))
    if "--export" in sys.argv:
        per = {c: count(c, n, ("from_dlpack", "array_dealloc")) / n
               for c in ("np_from_dlpack_t", "np_from_dlpack_nd")}
        print(f"instructions per call inside np.from_dlpack + array_dealloc ({n} calls)")
        t, nd = per["np_from_dlpack_t"], per["np_from_dlpack_nd"]
        print(f"| np_from_dlpack_t | {t:,.0f} | np_from_dlpack_nd | {nd:,.0f} | {t / nd:.2f}x "
              "| <= 1.2x |")
        return
    per = {}
    zero = count("decode", 0)
    for case in sorted({c for p in PAIRS for c in p[:2]}):
        per[case] = (count(case, n) - zero) / n
    print(f"instructions per call (callgrind Ir, {n} calls)")
    print("| subject | instr/call | anchor | instr/call | ratio | target |")
    print("|---|---|---|---|---|---|")
    for s, a, target in PAIRS:
        print(f"| {s} | {per[s]:,.0f} | {a} | {per[a]:,.0f} | {per[s] / per[a]:.2f}x | {target} |")


if __name__ == "__main__":
    main()
