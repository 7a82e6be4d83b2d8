"""The native protocol against DLPack, in the same run.

Subjects (role "subject"): hurray.from_hurray(t) -- one capsule made by t.__hurray__(),
consumed and wrapped, zero-copy -- and t.__hurray__() alone (made, then destroyed unconsumed).
Anchors (role "anchor"): hurray's own DLPack exchange, hurray.from_dlpack(t) (the same work
over a DLManagedTensorVersioned), and NumPy's, np.from_dlpack(a) of an ndarray. conftest.py
prints subject / anchor ratios; the goal is from_hurray(t) / from_dlpack(t) <= 1.0. Cases: 16
float32 ("small") and 64 MiB ("large"): the time must not grow with the size; and a
block-quantized int8 tensor ("quantized", two buffers), which DLPack cannot carry at all (its
anchors are the small float32 exchanges' work on a one-buffer tensor of the same bytes).

    make bench-python      # or: .venv/bin/python -m pytest bench/python --benchmark-only
"""
import numpy as np
import pytest

import hurray

SIZES = {"small": 16, "large": (64 << 20) // 4}


@pytest.fixture(scope="module")
def data():
    out = {}
    for case, n in SIZES.items():
        with hurray.aligned_allocator():
            a = np.ones(n, np.float32)
        out[case] = {"a": a, "t": hurray.from_numpy(a)}
    with hurray.aligned_allocator():
        q = np.ones(4 * 256, np.int8)
        s = np.ones(4 * 8, np.float32)
    out["quantized"] = {
        "a": q,
        "t": hurray.Tensor([q, s], hurray.int8, (4, 256), quantization=hurray.BlockAffine(1, 32)),
        "dense": hurray.from_numpy(q),
    }
    return out


def addr(t, i=0):
    return np.frombuffer(t.buffer(i), np.uint8).ctypes.data


def bench(benchmark, case, role, fn, arg):
    for _ in range(20000):  # warm: the first benchmark of a run is not penalised
        fn(arg)
    benchmark.group = f"native-{case}"
    benchmark.extra_info.update(role=role, nbytes=int(data_nbytes(arg)))
    benchmark(fn, arg)


def data_nbytes(obj):
    if isinstance(obj, hurray.Tensor):
        return sum(h.size for h in obj.buffer_handles)
    return obj.nbytes


@pytest.mark.parametrize("case", list(SIZES) + ["quantized"])
def test_from_hurray(benchmark, data, case):
    t = data[case]["t"]
    r = hurray.from_hurray(t)
    assert [addr(r, i) for i in range(r.buffer_count)] == \
        [addr(t, i) for i in range(t.buffer_count)]  # zero-copy
    assert r.descriptor == t.descriptor
    bench(benchmark, case, "subject", hurray.from_hurray, t)


@pytest.mark.parametrize("case", list(SIZES) + ["quantized"])
def test_dunder_hurray(benchmark, data, case):
    bench(benchmark, case, "subject", hurray.Tensor.__hurray__, data[case]["t"])


@pytest.mark.parametrize("case", list(SIZES) + ["quantized"])
def test_anchor_hurray_from_dlpack(benchmark, data, case):
    t = data[case].get("dense", data[case]["t"])
    assert addr(hurray.from_dlpack(t)) == addr(t)
    bench(benchmark, case, "anchor", hurray.from_dlpack, t)


@pytest.mark.parametrize("case", list(SIZES) + ["quantized"])
def test_anchor_np_from_dlpack_numpy(benchmark, data, case):
    a = data[case]["a"]
    assert np.from_dlpack(a).ctypes.data == a.ctypes.data
    bench(benchmark, case, "anchor", np.from_dlpack, a)
