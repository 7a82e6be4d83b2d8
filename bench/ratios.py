"""The ratio table of bench/README.md: each hurray path against its anchor, interleaved.

    .venv/bin/python bench/ratios.py [ROUNDS=7] [--streams]
    .venv/bin/python bench/ratios.py [ROUNDS=7] --scipy    # the SciPy sparse table alone
    .venv/bin/python bench/ratios.py 21 --only="np.from_dlpack(t),np.asarray(hurray"  # some rows

Every pair (subject, anchor) is timed alternately ROUNDS times in one process (timeit: the best
of 5 repeats of N calls per round, N sized to ~20 ms); the table gives, per pair, the min and
median over the rounds of each side and the ratios subject / anchor of those (so 1.5x means
the hurray path takes 1.5 times as long). --streams adds the stream-over-pipe pairs at 1 MiB
and 64 MiB (bench/python/test_bench_stream.py's functions; ROUNDS rounds of one round trip
each, min and median). --only=A,B keeps the pairs whose subject starts with A or B. The
subjects, anchors and equivalent protobuf message are those of
bench/python/test_bench_{moves,descriptor,stream}.py. Whatever `hurray` is first on sys.path
is measured (PYTHONPATH=<a pip --target directory> measures another build).
Numbers are for the machine they ran on; nothing here judges them.
"""
import os
import statistics
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
import hurray  # noqa: E402
import test_bench_descriptor as tbd  # noqa: E402


def calls_per_round(f):
    n, t = 1, 0.0
    while t < 0.02:
        n *= 2
        t = timeit.timeit(f, number=n)
    return n


def per_call(f, n):
    return min(timeit.repeat(f, number=n, repeat=5)) / n


def pairs():
    with hurray.aligned_allocator():
        a = np.ones(16, np.float32)
    h = hurray.from_numpy(a)
    nd = np.ones(16, np.float32)
    cls = tbd._anchor_class()
    small = tbd._cases()["small"]
    blob = small.descriptor.encode()
    pb = tbd._anchor_message(cls, small).SerializeToString()
    anchor_in = ("np.from_dlpack(a)", lambda: np.from_dlpack(a))
    anchor_out = ("np.from_dlpack(ndarray)", lambda: np.from_dlpack(nd))
    return [
        (("hurray.from_numpy(a)", lambda: hurray.from_numpy(a)), anchor_in, "<= 1.5x"),
        (("hurray.from_dlpack(a)", lambda: hurray.from_dlpack(a)), anchor_in, "<= 1.5x"),
        (("np.asarray(hurray.from_numpy(a))", lambda: np.asarray(hurray.from_numpy(a))),
         anchor_in, "<= 3x"),
        (("np.from_dlpack(t)", lambda: np.from_dlpack(h)), anchor_out, "<= 1.2x"),
        (("np.asarray(t)", lambda: np.asarray(h)), anchor_out, ""),
        ((f"Descriptor.decode ({len(blob)} B)", lambda: hurray.Descriptor.decode(blob)),
         (f"protobuf (upb) FromString ({len(pb)} B)", lambda: cls.FromString(pb)), "<= 1.0x"),
        (("Descriptor.decode(b).encode()", lambda: hurray.Descriptor.decode(blob).encode()),
         ("FromString(b').SerializeToString()", lambda: cls.FromString(pb).SerializeToString()),
         "<= 2x"),
    ]


def stream_pairs():
    import conftest as pipes  # bench/python/conftest.py: the stream benchmarks' pipe helpers

    out = []
    for name, size in (("1 MiB", 1 << 20), ("64 MiB", 64 << 20)):
        with hurray.aligned_allocator():
            arr = np.ones(size // 4, np.float32)
        t = hurray.from_numpy(arr)
        w = hurray.StreamWriter()
        w.write(t)
        data = w.getvalue()
        buf = bytearray(len(data))
        out.append(((f"stream over a pipe, {name}", lambda t=t: pipes.run_stream_roundtrip([t])),
                    (f"os.write/os.readv, {name}",
                     lambda d=data, b=buf: pipes.run_raw_pipe_roundtrip(d, b)),
                    "<= 1.18x (>= 0.85x throughput)"))
    return out


def scipy_table(rounds):
    """--scipy: bench/python/test_bench_scipy.py's pairs, small and large, interleaved."""
    import test_bench_scipy as tbs

    print(f"\nSciPy sparse, {rounds} rounds, interleaved (us per call)")
    print("| case | subject | anchor | subject min / median | anchor min / median | ratio min | "
          "ratio median |")
    print("|---|---|---|---|---|---|---|")
    for case in tbs.CASES:
        c = tbs.build(case)
        table = tbs.pairs(c)
        fns = {}
        for sn, sf, an, af in table:
            fns.setdefault(sn, sf)
            fns.setdefault(an, af)
        n = {k: calls_per_round(f) for k, f in fns.items()}
        times = {k: [] for k in fns}
        for _ in range(rounds):  # every function once per round, in turn
            for k, f in fns.items():
                times[k].append(per_call(f, n[k]))
        for sn, _, an, _ in table:
            s, a = times[sn], times[an]
            print(f"| {case} | `{sn}` | `{an}` | {min(s) * 1e6:,.1f} / "
                  f"{statistics.median(s) * 1e6:,.1f} | {min(a) * 1e6:,.1f} / "
                  f"{statistics.median(a) * 1e6:,.1f} | {min(s) / min(a):.2f}x | "
                  f"{statistics.median(s) / statistics.median(a):.2f}x |")


def main():
    rounds = int(next((x for x in sys.argv[1:] if x.isdigit()), "7"))
    if "--scipy" in sys.argv:
        print(f"hurray from {os.path.dirname(hurray.__file__)}")
        scipy_table(rounds)
        return
    table = pairs()
    only = next((x.split("=", 1)[1] for x in sys.argv[1:] if x.startswith("--only=")), None)
    if only:
        table = [p for p in table if p[0][0].startswith(tuple(only.split(",")))]
    single = []
    if "--streams" in sys.argv:
        single = stream_pairs()
    print(f"hurray from {os.path.dirname(hurray.__file__)}; {rounds} rounds, interleaved")
    print(f"| subject | anchor | subject min / median | anchor min / median | ratio min | "
          f"ratio median | target |")
    print("|---|---|---|---|---|---|---|")
    for (sn, sf), (an, af), target in table + single:
        one = (sn, sf) in [p[0] for p in single]
        ns, na = (1, 1) if one else (calls_per_round(sf), calls_per_round(af))
        s, a = [], []
        for _ in range(rounds):
            s.append(per_call(sf, ns) if not one else min(timeit.repeat(sf, number=1, repeat=1)))
            a.append(per_call(af, na) if not one else min(timeit.repeat(af, number=1, repeat=1)))
        unit, scale = ("ms", 1e3) if one else ("ns", 1e9)
        print(f"| `{sn}` | `{an}` | {min(s) * scale:,.0f} / {statistics.median(s) * scale:,.0f} {unit} "
              f"| {min(a) * scale:,.0f} / {statistics.median(a) * scale:,.0f} {unit} "
              f"| {min(s) / min(a):.2f}x | {statistics.median(s) / statistics.median(a):.2f}x "
              f"| {target} |")


if __name__ == "__main__":
    main()
