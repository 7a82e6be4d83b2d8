"""Instructions per call (callgrind's Ir count) of the hurray paths of bench/ratios.py and
their anchors: deterministic where wall-clock time on a shared machine is not. Each case runs
in a fresh interpreter under `valgrind --tool=callgrind` with N calls, and the same setup with
0 calls once; (count(N) - count(0)) / N is the per-call figure (setup and imports cancel out).
Instruction counts ignore cache misses and system calls; they rank the per-call work.

    .venv/bin/python bench/instr.py [N=20000]           # needs valgrind
    PYTHONPATH=<pip --target dir> .venv/bin/python bench/instr.py   # another build
    .venv/bin/python bench/instr.py --scipy [N=5000] [NLARGE=200]
    .venv/bin/python bench/instr.py 5000 --export       # the export pair, inside the calls

--scipy: bench/python/test_bench_scipy.py's pairs, `small` (N calls each) and `large` (NLARGE
calls each), one interpreter per case: callgrind dumps its counters at each os.getppid()
(--dump-before=getppid), which the script calls just before and just after each function's N
calls, so each function's count is one dump (after one uncounted first call: lazy imports,
caches), without a setup to subtract. PYTHONHASHSEED=0 and the GC off around the counted
calls: without them the same small anchor counted 83,000-132,000 in different processes.
Each figure includes the loop and lambda call (the `lambda: None` row).

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

SCIPY_CASE = r"""
import gc, os, sys
sys.path.insert(0, sys.argv[2])
import test_bench_scipy as tbs
c = tbs.build(sys.argv[3])
for name in sys.argv[4:]:
    f = (lambda: None) if name == "-" else tbs.lookup(c, name)
    f()
    gc.collect()
    gc.disable()
    os.getppid()  # dump: everything before the loop
    for _ in range(int(sys.argv[1])):
        f()
    os.getppid()  # dump: the loop
    gc.enable()
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


def scipy_counts(case, n, names):
    """{name: instructions per call} for one case, one interpreter under callgrind."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        "--dump-before=getppid", sys.executable, "-c", SCIPY_CASE, str(n),
                        here, case, *names],
                       capture_output=True, text=True, check=True,
                       env=dict(os.environ, PYTHONHASHSEED="0"))
        per = {}
        for k, name in enumerate(names):  # dumps 2k+1 (before the loop), 2k+2 (the loop)
            with open(f"{out}.{2 * k + 2}") as f:
                total = next(line for line in f if line.startswith("totals:") or
                             line.startswith("summary:"))
            per[name] = int(total.split()[1]) / n
    return per


def scipy_main(args):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
    import test_bench_scipy as tbs

    nums = [int(x) for x in args if x.isdigit()]
    calls = {"small": nums[0] if nums else 5000, "large": nums[1] if len(nums) > 1 else 200}
    print("instructions per call (callgrind Ir; PYTHONHASHSEED=0, GC off around the calls)")
    print("| case | subject | instr/call | anchor | instr/call | ratio |")
    print("|---|---|---|---|---|---|")
    for case in tbs.CASES:
        table = tbs.pairs(tbs.build(case))
        names = ["-", *dict.fromkeys(x for sn, _, an, _ in table for x in (sn, an))]
        per = scipy_counts(case, calls[case], names)
        print(f"| {case} | `lambda: None` (the loop) | {per['-']:,.0f} | | | |")
        for sn, _, an, _ in table:
            print(f"| {case} | `{sn}` | {per[sn]:,.0f} | `{an}` | {per[an]:,.0f} | "
                  f"{per[sn] / per[an]:.2f}x |", flush=True)


def main():
    if "--scipy" in sys.argv:
        return scipy_main([x for x in sys.argv[1:] if x != "--scipy"])
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
