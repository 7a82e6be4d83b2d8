"""A stream over a pipe against raw os.write / os.readv of the same bytes, in the same run.

Subject: a thread writes one float32 tensor as one item with hurray.StreamWriter into a pipe;
the main thread iterates hurray.StreamReader over the other end (the item yielded, its buffer
held by the tensor). Anchor: the same stream bytes (StreamWriter().getvalue()) written with
os.write in 1 MiB pieces by a thread and read with os.readv into one preallocated buffer.
Both pipes are 1 MiB (F_SETPIPE_SZ where Linux allows it). Sizes: 1 MiB and 64 MiB; 1 GiB too
when HURRAY_BENCH_FULL=1 or HURRAY_BENCH_1GIB=1 (~3 GiB of memory). The pipe helpers are
conftest.py's (shared with test_bench_io.py). The issue's target is
subject / anchor <= 1 / 0.85 (the stream at >= 0.85x the raw pipe's throughput).

    .venv/bin/python -m pytest bench/python/test_bench_stream.py --benchmark-only
"""
import os

import numpy as np
import pytest

import hurray

SIZES = {"1MiB": 1 << 20, "64MiB": 64 << 20}
if os.environ.get("HURRAY_BENCH_FULL") == "1" or os.environ.get("HURRAY_BENCH_1GIB") == "1":
    SIZES["1GiB"] = 1 << 30
ROUNDS = {"1MiB": 60, "64MiB": 10, "1GiB": 3}


@pytest.fixture(scope="module", params=list(SIZES))
def case(request):
    name = request.param
    with hurray.aligned_allocator():
        a = np.random.default_rng(0).random(SIZES[name] // 4, dtype=np.float32)
    t = hurray.from_numpy(a, copy=False)
    w = hurray.StreamWriter()
    w.write(t)
    data = w.getvalue()
    return {"name": name, "a": a, "t": t, "data": data}



def run(benchmark, case, r, fn, *args):
    benchmark.group = f"stream-pipe-{case['name']}"
    benchmark.extra_info.update(role=r, nbytes=SIZES[case["name"]], throughput=True)
    return benchmark.pedantic(fn, args=args, rounds=ROUNDS[case["name"]], warmup_rounds=1)


@pytest.mark.guard
def test_stream_pipe_hurray(benchmark, case, stream_roundtrip):
    items = run(benchmark, case, "subject", stream_roundtrip, [case["t"]])
    assert len(items) == 1 and np.array_equal(np.asarray(items[0]), case["a"])


@pytest.mark.guard
def test_stream_pipe_anchor_raw(benchmark, case, raw_pipe_roundtrip):
    out = bytearray(len(case["data"]))
    got = run(benchmark, case, "anchor", raw_pipe_roundtrip, case["data"], out)
    assert got == len(case["data"]) and out == case["data"]
