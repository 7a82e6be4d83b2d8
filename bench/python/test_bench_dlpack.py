"""DLPack exchanges through hurray against the partners' own, in the same run.

Subjects (role "subject"): np.from_dlpack(t) and torch.from_dlpack(t) of a hurray tensor,
t.to_torch(), hurray.from_torch(x) and hurray.from_dlpack(a) -- each one capsule made,
consumed and wrapped, zero-copy. Anchors (role "anchor"): NumPy's and PyTorch's own exchange,
np.from_dlpack(a) of an ndarray and torch.from_dlpack(x) of a torch tensor. Every subject is
compared with both anchors (conftest.py prints min/mean ratios, subject / anchor). Cases: 16
float32 ("small") and 64 MiB ("large"): the time must not grow with the size.

    make bench-python      # or: .venv/bin/python -m pytest bench/python --benchmark-only
"""
import numpy as np
import pytest

import hurray

try:
    import torch
except ImportError:  # the NumPy cases still run
    torch = None

SIZES = {"small": 16, "large": (64 << 20) // 4}
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


@pytest.fixture(scope="module")
def data():
    out = {}
    for case, n in SIZES.items():
        with hurray.aligned_allocator():
            a = np.ones(n, np.float32)
        t = hurray.from_numpy(a)
        x = torch.ones(n, dtype=torch.float32) if torch is not None else None
        out[case] = {"a": a, "t": t, "x": x}
    return out


def bench(benchmark, case, role, fn, arg, same_ptr=None):
    r = fn(arg)
    if same_ptr is not None:
        assert same_ptr(r)  # zero-copy: the result is over the source's memory
    benchmark.group = f"dlpack-{case}"
    benchmark.extra_info.update(role=role, nbytes=SIZES[case] * 4)
    benchmark(fn, arg)


def ptr_of(r):
    if isinstance(r, np.ndarray):
        return r.ctypes.data
    if torch is not None and isinstance(r, torch.Tensor):
        return r.data_ptr()
    return np.asarray(r).ctypes.data


@pytest.mark.parametrize("case", list(SIZES))
def test_np_from_dlpack_hurray(benchmark, data, case):
    d = data[case]
    bench(benchmark, case, "subject", np.from_dlpack, d["t"],
          lambda r: ptr_of(r) == d["a"].ctypes.data)


@pytest.mark.parametrize("case", list(SIZES))
def test_hurray_from_dlpack_numpy(benchmark, data, case):
    d = data[case]
    bench(benchmark, case, "subject", hurray.from_dlpack, d["a"],
          lambda r: ptr_of(r) == d["a"].ctypes.data)


@needs_torch
@pytest.mark.parametrize("case", list(SIZES))
def test_torch_from_dlpack_hurray(benchmark, data, case):
    d = data[case]
    bench(benchmark, case, "subject", torch.from_dlpack, d["t"],
          lambda r: ptr_of(r) == d["a"].ctypes.data)


@needs_torch
@pytest.mark.parametrize("case", list(SIZES))
def test_hurray_to_torch(benchmark, data, case):
    d = data[case]
    bench(benchmark, case, "subject", hurray.Tensor.to_torch, d["t"],
          lambda r: ptr_of(r) == d["a"].ctypes.data)


@needs_torch
@pytest.mark.parametrize("case", list(SIZES))
def test_hurray_from_torch(benchmark, data, case):
    d = data[case]
    bench(benchmark, case, "subject", hurray.from_torch, d["x"],
          lambda r: ptr_of(r) == d["x"].data_ptr())


@pytest.mark.parametrize("case", list(SIZES))
def test_anchor_np_from_dlpack_numpy(benchmark, data, case):
    d = data[case]
    bench(benchmark, case, "anchor", np.from_dlpack, d["a"],
          lambda r: ptr_of(r) == d["a"].ctypes.data)


@needs_torch
@pytest.mark.parametrize("case", list(SIZES))
def test_anchor_torch_from_dlpack_torch(benchmark, data, case):
    d = data[case]
    bench(benchmark, case, "anchor", torch.from_dlpack, d["x"],
          lambda r: ptr_of(r) == d["x"].data_ptr())
