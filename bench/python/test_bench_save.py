"""hurray.save against the floor (raw write + rename of the same bytes) and safetensors' save_file,
in the same run.

Sets: `2000x4KiB` (2,000 float32 tensors of 4 KiB: per-tensor cost) and `64MiB` (8 x 8 MiB:
throughput). Groups, per set:
  save-<set>   hurray.save(path, {name: ndarray})   (NumPy arrays as values: ingest included;
               flushed before the rename, file-container.md HR-FILE-7)
               hurray.save(path, ..., durable=False) (no flush, HR-FILE-18)
               vs raw: open + one write of the same total bytes + fsync + rename (the floor of a
               durable atomic replace: what save() is compared with)
               vs raw: the same without the fsync (the floor of an atomic replace: what
               save(durable=False) is compared with)
               vs safetensors.numpy.save_file (which never flushes)
The ratio lines (conftest.py) give hurray / anchor at min and mean; the throughput lines GiB/s.
Each pairing is printed; read save() against the fsync anchor and durable=False against the
other. Benchmarks run one after another (pytest-benchmark): on a shared machine alternate
whole runs, or use the interleaved rounds of bench/io_rounds.py.

    .venv/bin/python -m pytest bench/python/test_bench_save.py --benchmark-only
"""
import os

import numpy as np
import pytest

import conftest  # bench/python/conftest.py: raw_replace, the floor
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


def test_save_hurray_not_durable(benchmark, case):
    name, tensors, d = case
    path = d / "h-nd.hurray"
    _run(benchmark, name, sum(a.nbytes for a in tensors.values()), "subject",
         lambda: hurray.save(path, tensors, durable=False))


def _raw_replace(tensors, d, sync):
    blob = b"".join(a.tobytes() for a in tensors.values())
    path, tmp = d / f"raw{int(sync)}.bin", d / f"raw{int(sync)}.bin.tmp"

    return len(blob), conftest.raw_replace(blob, tmp, path, sync)


def test_save_raw_write_fsync_rename(benchmark, case):
    name, tensors, d = case
    nbytes, raw = _raw_replace(tensors, d, True)
    _run(benchmark, name, nbytes, "anchor", raw)


def test_save_raw_write_rename(benchmark, case):
    name, tensors, d = case
    nbytes, raw = _raw_replace(tensors, d, False)
    _run(benchmark, name, nbytes, "anchor", raw)


def test_save_safetensors(benchmark, case):
    st = pytest.importorskip("safetensors.numpy")
    name, tensors, d = case
    path = d / "s.safetensors"
    _run(benchmark, name, sum(a.nbytes for a in tensors.values()), "anchor",
         lambda: st.save_file(tensors, path))
