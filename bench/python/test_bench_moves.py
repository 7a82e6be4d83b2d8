"""Zero-copy moves: every ingest and export path of hurray, each next to the partners' own
exchange, in the same run (one 16-element float32 tensor: the per-call cost; the 64 MiB cases
in test_bench_dlpack.py / test_bench_numpy.py show the time does not grow with the size).

Groups (subject = a hurray path, anchor = the partner's own exchange):
  ingest     hurray.from_numpy(a), hurray.from_dlpack(a), hurray.asarray(a),
             hurray.from_torch(x), hurray.from_dlpack(j) (JAX), hurray.from_hurray(t)
             vs np.from_dlpack(a), torch.from_dlpack(x), jax.dlpack.from_dlpack(j)
  export     np.from_dlpack(t), np.asarray(t), torch.from_dlpack(t), t.to_torch(),
             jax.dlpack.from_dlpack(t)
             vs np.from_dlpack(ndarray), torch.from_dlpack(torch tensor),
             jax.dlpack.from_dlpack(jax array)
  roundtrip  np.asarray(hurray.from_numpy(a)) vs np.from_dlpack(a)

The issue's targets read off the ratio lines: ingest from_numpy / from_dlpack <= 1.5x
np.from_dlpack(a); export np.from_dlpack(t) <= 1.2x np.from_dlpack(ndarray); roundtrip <= 3x.
Every subject checks once, before timing, that its result shares the source's memory.

    .venv/bin/python -m pytest bench/python/test_bench_moves.py --benchmark-only
"""
import numpy as np
import pytest

import hurray

try:
    import torch
except ImportError:
    torch = None
try:
    import jax
    import jax.dlpack
except ImportError:
    jax = None

N = 16
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
needs_jax = pytest.mark.skipif(jax is None, reason="jax is not installed")


@pytest.fixture(scope="module")
def src():
    with hurray.aligned_allocator():
        a = np.ones(N, np.float32)
    out = {"a": a, "t": hurray.from_numpy(a), "nd": np.ones(N, np.float32)}
    if torch is not None:
        out["x"] = torch.ones(N)
        out["tx"] = hurray.from_torch(out["x"])
    if jax is not None:
        out["j"] = jax.numpy.ones(N, jax.numpy.float32)
    return out


def addr(r):
    if torch is not None and isinstance(r, torch.Tensor):
        return r.data_ptr()
    if jax is not None and isinstance(r, jax.Array):
        return r.unsafe_buffer_pointer()
    return np.asarray(r).ctypes.data


def run(benchmark, group, r, fn, arg, expect_addr=None):
    if expect_addr is not None:
        assert addr(fn(arg)) == expect_addr  # zero-copy
    benchmark.group = group
    benchmark.extra_info["role"] = r
    benchmark(fn, arg)


# ---- ingest --------------------------------------------------------------------------------

@pytest.mark.guard
def test_ingest_from_numpy(benchmark, src):
    run(benchmark, "ingest", "subject", hurray.from_numpy, src["a"], src["a"].ctypes.data)


@pytest.mark.guard
def test_ingest_from_dlpack_numpy(benchmark, src):
    run(benchmark, "ingest", "subject", hurray.from_dlpack, src["a"], src["a"].ctypes.data)


def test_ingest_asarray_numpy(benchmark, src):
    run(benchmark, "ingest", "subject", hurray.asarray, src["a"], src["a"].ctypes.data)


@needs_torch
def test_ingest_from_torch(benchmark, src):
    run(benchmark, "ingest", "subject", hurray.from_torch, src["x"], src["x"].data_ptr())


@needs_jax
def test_ingest_from_dlpack_jax(benchmark, src):
    run(benchmark, "ingest", "subject", hurray.from_dlpack, src["j"],
        src["j"].unsafe_buffer_pointer())


@pytest.mark.guard
def test_ingest_from_hurray(benchmark, src):
    run(benchmark, "ingest", "subject", hurray.from_hurray, src["t"], src["a"].ctypes.data)


@pytest.mark.guard
def test_ingest_anchor_np_from_dlpack(benchmark, src):
    run(benchmark, "ingest", "anchor", np.from_dlpack, src["a"], src["a"].ctypes.data)


@needs_torch
def test_ingest_anchor_torch_from_dlpack(benchmark, src):
    run(benchmark, "ingest", "anchor", torch.from_dlpack, src["x"], src["x"].data_ptr())


@needs_jax
def test_ingest_anchor_jax_from_dlpack(benchmark, src):
    run(benchmark, "ingest", "anchor", jax.dlpack.from_dlpack, src["j"],
        src["j"].unsafe_buffer_pointer())


# ---- export --------------------------------------------------------------------------------

@pytest.mark.guard
def test_export_np_from_dlpack(benchmark, src):
    run(benchmark, "export", "subject", np.from_dlpack, src["t"], src["a"].ctypes.data)


@pytest.mark.guard
def test_export_np_asarray(benchmark, src):
    run(benchmark, "export", "subject", np.asarray, src["t"], src["a"].ctypes.data)


@needs_torch
def test_export_torch_from_dlpack(benchmark, src):
    run(benchmark, "export", "subject", torch.from_dlpack, src["t"], src["a"].ctypes.data)


@needs_torch
def test_export_to_torch(benchmark, src):
    run(benchmark, "export", "subject", hurray.Tensor.to_torch, src["t"], src["a"].ctypes.data)


@needs_jax
def test_export_jax_from_dlpack(benchmark, src):
    run(benchmark, "export", "subject", jax.dlpack.from_dlpack, src["t"])


@pytest.mark.guard
def test_export_anchor_np_from_dlpack(benchmark, src):
    run(benchmark, "export", "anchor", np.from_dlpack, src["nd"], src["nd"].ctypes.data)


@needs_torch
def test_export_anchor_torch_from_dlpack(benchmark, src):
    run(benchmark, "export", "anchor", torch.from_dlpack, src["x"], src["x"].data_ptr())


@needs_jax
def test_export_anchor_jax_from_dlpack(benchmark, src):
    run(benchmark, "export", "anchor", jax.dlpack.from_dlpack, src["j"])


# ---- round trip ----------------------------------------------------------------------------

def _roundtrip(a):
    return np.asarray(hurray.from_numpy(a))


@pytest.mark.guard
def test_roundtrip_asarray_from_numpy(benchmark, src):
    run(benchmark, "roundtrip", "subject", _roundtrip, src["a"], src["a"].ctypes.data)


@pytest.mark.guard
def test_roundtrip_anchor_np_from_dlpack(benchmark, src):
    run(benchmark, "roundtrip", "anchor", np.from_dlpack, src["a"], src["a"].ctypes.data)
