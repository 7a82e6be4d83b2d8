"""NumPy round trip through hurray against NumPy's own paths, in the same run.

Subject: hurray.from_numpy(a) then np.asarray(tensor) -- a zero-copy share each way (the
arrays are allocated inside hurray.aligned_allocator(), so no copy on ingest is needed).
Anchors: np.asarray(a) (returns `a` itself: the floor of any Python call) and
np.from_dlpack(a) (NumPy's zero-copy exchange through a DLPack capsule). Cases: a small array
(16 float32) and a large one (64 MiB); latency is per round trip. The large case also reports
throughput (bytes / time, as if the buffer were touched; it is not: the point is that the time
does not grow with the size). The copy path (copy=True) is measured next to np.array(copy=True).

    make bench-python      # or: .venv/bin/python -m pytest bench/python --benchmark-only
"""
import numpy as np
import pytest

import hurray

SMALL = 16
LARGE = (64 << 20) // 4  # float32 elements in 64 MiB


@pytest.fixture(scope="module")
def arrays():
    with hurray.aligned_allocator():
        out = {"small": np.ones(SMALL, np.float32), "large": np.ones(LARGE, np.float32)}
    for a in out.values():
        assert a.ctypes.data % 64 == 0
    return out


def roundtrip(a):
    return np.asarray(hurray.from_numpy(a))


@pytest.mark.parametrize("case", ["small", "large"])
def test_roundtrip_hurray(benchmark, arrays, case):
    a = arrays[case]
    b = roundtrip(a)
    assert np.shares_memory(a, b)  # zero-copy both ways
    benchmark.group = f"roundtrip-{case}"
    benchmark.extra_info.update(role="subject", nbytes=a.nbytes)
    benchmark(roundtrip, a)


@pytest.mark.parametrize("case", ["small", "large"])
def test_anchor_numpy_asarray(benchmark, arrays, case):
    benchmark.group = f"roundtrip-{case}"
    benchmark.extra_info.update(role="anchor", nbytes=arrays[case].nbytes)
    benchmark(np.asarray, arrays[case])


@pytest.mark.parametrize("case", ["small", "large"])
def test_anchor_numpy_from_dlpack(benchmark, arrays, case):
    benchmark.group = f"roundtrip-{case}"
    benchmark.extra_info.update(role="anchor", nbytes=arrays[case].nbytes)
    benchmark(np.from_dlpack, arrays[case])


def test_copy_hurray_large(benchmark, arrays):
    a = arrays["large"]
    benchmark.group = "copy-large"
    benchmark.extra_info.update(role="subject", nbytes=a.nbytes)
    benchmark.pedantic(hurray.from_numpy, args=(a,), kwargs={"copy": True}, rounds=20,
                       warmup_rounds=2)


def test_copy_anchor_numpy_large(benchmark, arrays):
    a = arrays["large"]
    benchmark.group = "copy-large"
    benchmark.extra_info.update(role="anchor", nbytes=a.nbytes)
    benchmark.pedantic(np.array, args=(a,), kwargs={"copy": True}, rounds=20, warmup_rounds=2)
