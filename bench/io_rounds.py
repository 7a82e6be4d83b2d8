"""hurray.save / hurray.load against their anchors in interleaved rounds (min and median).

pytest-benchmark (bench/python) times one benchmark after another; on a shared machine the
load changes between them. This script alternates the subjects and anchors of one case inside
every round (the order reversed every other round) and prints, per side, the min and median
over the rounds, and min / median ratios. The cases and anchors are those of
bench/python/test_bench_save.py and test_bench_open.py (load-<file>).

    .venv/bin/python bench/io_rounds.py save 15 2000x4KiB,64MiB
    .venv/bin/python bench/io_rounds.py load 21 2000x4KiB,64MiB
    .venv/bin/python bench/io_rounds.py load-cold 7 2000x4KiB,256MiB,1GiB
    .venv/bin/python bench/io_rounds.py save-new 41 2000x4KiB

`save-new` writes every call to a path that does not exist yet (the files are removed
before each timed call, untimed): no side replaces a file, so no rename pays for the blocks
of the file it replaces (ext4 allocates and frees them then) and what remains is each
writer's own work next to the raw write of the same bytes.

A case is `<count>x<bytes>` (suffixes KiB, MiB, GiB) or one of the named sets; tensors are
random float32 named like a checkpoint's. `load-cold` evicts both files from the page cache
before every timed call (fsync, then posix_fadvise(POSIX_FADV_DONTNEED): no privileges
needed), so each load reads from the device. Files go to $HURRAY_BENCH_DIR (default: a
temporary directory beside this script's working directory, removed at the end).
"""
import itertools
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

import hurray

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
import conftest as bench_helpers  # noqa: E402  bench/python/conftest.py: raw_replace

NAMED = {"2000x4KiB": (2000, 4 << 10), "64MiB": (8, 8 << 20), "256MiB": (16, 16 << 20),
         "1GiB": (16, 64 << 20)}
UNITS = {"": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_case(name):
    if name in NAMED:
        return NAMED[name]
    m = re.fullmatch(r"(\d+)x(\d+)(KiB|MiB|GiB|)", name)
    if not m:
        raise SystemExit(f"io_rounds: bad case {name!r} (e.g. 2000x4KiB, 1x64MiB, 1GiB)")
    return int(m.group(1)), int(m.group(2)) * UNITS[m.group(3)]


def tensors(count, nbytes):
    rng = np.random.default_rng(0)
    n = nbytes // 4
    shape = (n // 64, 64) if n >= 64 and n % 64 == 0 else (n,)
    return {f"model.layers.{i}.weight": rng.random(shape, dtype=np.float32)
            for i in range(count)}


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def raw_replace(blob, d, sync):
    return bench_helpers.raw_replace(blob, os.path.join(d, f"raw{int(sync)}.tmp"),
                             os.path.join(d, f"raw{int(sync)}.bin"), sync)


def rounds(sides, n, before=None):
    """{name: [seconds]}: every side once per round, the order reversed every other round."""
    res = {k: [] for k in sides}
    for f in sides.values():  # warm-up
        if before:
            before()
        f()
    items = list(sides.items())
    for r in range(n):
        for k, f in items if r % 2 == 0 else items[::-1]:
            if before:
                before()
            t = time.perf_counter()
            out = f()
            res[k].append(time.perf_counter() - t)
            del out
    return res


def report(title, res, pairs):
    print(f"== {title} (ms: min / median over {len(next(iter(res.values())))} rounds)")
    for k, v in res.items():
        print(f"  {k:32s} {min(v) * 1e3:10.3f} / {statistics.median(v) * 1e3:10.3f}")
    for a, b in pairs:
        x, y = res[a], res[b]
        print(f"  {a} / {b}: {min(x) / min(y):.2f}x min, "
              f"{statistics.median(x) / statistics.median(y):.2f}x median")


def main():
    what, n, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
    if what not in ("save", "save-new", "load", "load-cold"):
        raise SystemExit("io_rounds: save | save-new | load | load-cold")
    import safetensors.numpy as stn

    base = os.environ.get("HURRAY_BENCH_DIR")
    d = tempfile.mkdtemp(prefix="io-rounds-", dir=base or ".")
    try:
        for case in cases:
            ts = tensors(*parse_case(case))
            if what == "save":
                blob = b"".join(a.tobytes() for a in ts.values())
                sides = {
                    "hurray.save()": lambda: hurray.save(os.path.join(d, "h.hurray"), ts),
                    "hurray.save(durable=False)":
                        lambda: hurray.save(os.path.join(d, "h2.hurray"), ts, durable=False),
                    "raw write+fsync+rename": raw_replace(blob, d, True),
                    "raw write+rename": raw_replace(blob, d, False),
                    "safetensors save_file":
                        lambda: stn.save_file(ts, os.path.join(d, "s.safetensors")),
                }
                report(f"save {case}", rounds(sides, n), [
                    ("hurray.save()", "raw write+fsync+rename"),
                    ("hurray.save(durable=False)", "raw write+rename"),
                    ("hurray.save()", "safetensors save_file"),
                    ("hurray.save(durable=False)", "safetensors save_file")])
                continue
            if what == "save-new":
                blob = b"".join(a.tobytes() for a in ts.values())
                serial = itertools.count()

                def new(prefix):
                    return os.path.join(d, f"{prefix}{next(serial)}")

                def clear():
                    for name in os.listdir(d):
                        os.unlink(os.path.join(d, name))

                sides = {
                    "hurray.save(durable=False)":
                        lambda: hurray.save(new("h"), ts, durable=False),
                    "raw write+rename": bench_helpers.raw_replace(
                        blob, os.path.join(d, "raw.tmp"), lambda: new("r"), False),
                    "safetensors save_file": lambda: stn.save_file(ts, new("s")),
                }
                report(f"save {case} to new paths", rounds(sides, n, clear), [
                    ("hurray.save(durable=False)", "raw write+rename"),
                    ("hurray.save(durable=False)", "safetensors save_file")])
                continue
            hp, sp = os.path.join(d, "f.hurray"), os.path.join(d, "f.safetensors")
            hurray.save(hp, ts)
            stn.save_file(ts, sp)
            del ts
            sides = {"hurray.load": lambda: hurray.load(hp),
                     "safetensors load_file": lambda: stn.load_file(sp)}
            cold = what == "load-cold"
            res = rounds(sides, n, (lambda: (evict(hp), evict(sp))) if cold else None)
            report(f"load {case} ({'cold' if cold else 'warm'} page cache)", res,
                   [("hurray.load", "safetensors load_file")])
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
