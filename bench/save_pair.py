"""hurray.save(durable=False) against safetensors' save_file of the same 8 x 8 MiB of random
float32, alternating in one process (the order reversed every other round), ROUNDS rounds each
(default 15): wall min / median per side and their ratio. No flushing side runs between them
(io_rounds.py's fsync'd sides change the page cache's dirty state from one call to the next),
so the two are compared under the same writeback conditions; both replace an existing file
(a temporary file renamed over it).

    .venv/bin/python bench/save_pair.py [ROUNDS]
"""
import os
import statistics
import sys
import tempfile
import time

import numpy as np
from safetensors.numpy import save_file

import hurray


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    tensors = {f"t{i}": np.random.default_rng(i).random(2 << 20, dtype=np.float32)
               for i in range(8)}
    with tempfile.TemporaryDirectory(dir=os.environ.get("HURRAY_BENCH_DIR")) as d:
        sides = {
            "hurray.save(durable=False)":
                lambda p=os.path.join(d, "t.hry"): hurray.save(p, tensors, durable=False),
            "safetensors save_file":
                lambda p=os.path.join(d, "t.safetensors"): save_file(tensors, p),
        }
        for f in sides.values():  # the files exist: every timed call replaces one
            f()
        times = {k: [] for k in sides}
        for r in range(rounds):
            for k in (list(sides) if r % 2 == 0 else list(reversed(sides))):
                t0 = time.perf_counter()
                sides[k]()
                times[k].append(time.perf_counter() - t0)
    print(f"save 8 x 8 MiB, {rounds} rounds, alternating (ms: min / median)")
    for k, v in times.items():
        print(f"  {k:28} {min(v) * 1e3:8.1f} / {statistics.median(v) * 1e3:8.1f}")
    h, s = times["hurray.save(durable=False)"], times["safetensors save_file"]
    print(f"  hurray / safetensors: {min(h) / min(s):.2f}x min, "
          f"{statistics.median(h) / statistics.median(s):.2f}x median")


if __name__ == "__main__":
    main()
