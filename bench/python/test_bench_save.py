"""hurray.save against the floor (raw write + rename of the same bytes) and safetensors' save_file,
in the same run.

Sets: `2000x4KiB` (2,000 float32 tensors of 4 KiB: per-tensor cost) and `64MiB` (8 x 8 MiB:
throughput). Groups, per set:
  save-<set>   hurray.save(path, {name: ndarray})   (NumPy arrays as values: ingest included)
               vs raw: open + one write of the same total bytes + fsync + rename (the floor of an
               atomic replace; hurray's writer also flushes before it renames)
               vs safetensors.numpy.save_file
The ratio lines (conftest.py) give hurray / anchor at min and mean; the throughput lines GiB/s.

    .venv/bin/python -m pytest bench/python/test_bench_save.py --benchmark-only
"""
import os

import numpy as np
import pytest

import hurray

SETS = {"2000x4KiB": (2000, 4 << 10), "64MiB": (8, 8 << 20)}
ROUNDS = {"2000x4KiB": 30, "64MiB": 8}


def _tensors(count, nbytes):
    rng = np.random.default_rng(0)
    return {f"layer{i}.weight": rng.random(nbytes // 4, dtype=np.float32) for i in range(count)}


@pytest.fixture(scope="module", params=list(SETS))
def case(request, tmp_path_factory):
    count, nbytes = SETS[request.param]
    return request.param, _tensors(count, nbytes), tmp_path_factory.mktemp("save")


def _run(benchmark, set_name, nbytes, role, fn):
    benchmark.group = f"save-{set_name}"
    benchmark.extra_info.update(role=role, throughput=True, nbytes=nbytes)
    benchmark.pedantic(fn, rounds=ROUNDS[set_name], warmup_rounds=1)


def test_save_hurray(benchmark, case):
    name, tensors, d = case
    path = d / "h.hurray"
    _run(benchmark, name, sum(a.nbytes for a in tensors.values()), "subject",
         lambda: hurray.save(path, tensors))


def test_save_raw_write_rename(benchmark, case):
    name, tensors, d = case
    blob = b"".join(a.tobytes() for a in tensors.values())
    path, tmp = d / "raw.bin", d / "raw.bin.tmp"

    def raw():
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, blob)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, path)

    _run(benchmark, name, len(blob), "anchor", raw)


def test_save_safetensors(benchmark, case):
    st = pytest.importorskip("safetensors.numpy")
    name, tensors, d = case
    path = d / "s.safetensors"
    _run(benchmark, name, sum(a.nbytes for a in tensors.values()), "anchor",
         lambda: st.save_file(tensors, path))
