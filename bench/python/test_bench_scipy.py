"""SciPy sparse through hurray against SciPy's own constructor, in the same run.

Subjects, per call:
  from_scipy    hurray.from_scipy(m): m a csr_matrix whose data and int64 indices were
                allocated in hurray.aligned_allocator(), so no buffer needs a copy (the
                zero-copy path); and from_scipy of SciPy's usual int32 csr_matrix (the
                indices are widened into uint64 buffers: two copies, by design).
  to_scipy      t.to_scipy() (a csr_matrix) and t.to_scipy(array=True) (a csr_array), both
                over the tensor's buffers (values, and the uint64 indices viewed as int64).
Anchors: scipy.sparse.csr_matrix((data, indices, indptr), shape, copy=False), the goal of the
issue (hurray / anchor <= 1.5), with SciPy's int32 index arrays (no copy in SciPy) and with
int64 ones (SciPy's matrix constructor checks their contents and narrows them to int32: a copy);
and csr_array((data, indices, indptr), copy=False) with int64 indices (kept as they are).

Every subject also checks what SciPy never does on these paths: the index contents
(memory-layout.md § Index contents, a linear pass), so the ratio grows with nnz. Cases:
`small` (1000 x 1000, ~10,000 random entries) and `large` (100,000 x 100,000, ~1,000,000).

    .venv/bin/python -m pytest bench/python/test_bench_scipy.py --benchmark-only
"""
import numpy as np
import pytest
import scipy.sparse as sp

import hurray

CASES = {"small": (1000, 10_000), "large": (100_000, 1_000_000)}


@pytest.fixture(scope="module")
def mats():
    out = {}
    for case, (n, nnz) in CASES.items():
        rng = np.random.default_rng(1)
        rows, cols = rng.integers(0, n, nnz), rng.integers(0, n, nnz)
        m32 = sp.csr_matrix((rng.random(nnz), (rows, cols)), shape=(n, n))  # duplicates summed
        assert m32.indices.dtype == np.int32
        with hurray.aligned_allocator():
            d = np.array(m32.data, copy=True)
            i64 = m32.indices.astype(np.int64)
            p64 = m32.indptr.astype(np.int64)
        m64 = sp.csr_matrix(sp.csr_array((d, i64, p64), shape=m32.shape))  # shares them
        assert m64.indices is i64 or np.shares_memory(m64.indices, i64)
        t = hurray.from_scipy(m64, copy=False)
        out[case] = dict(m32=m32, m64=m64, d=d, i64=i64, p64=p64, t=t)
    return out


def csr_matrix_anchor(d, i, p, shape):
    return sp.csr_matrix((d, i, p), shape=shape, copy=False)


def csr_array_anchor(d, i, p, shape):
    return sp.csr_array((d, i, p), shape=shape, copy=False)


def anchors(benchmark, mats, case, which):
    m = mats[case]
    shape = m["m32"].shape
    args = {
        "csr_matrix_int32": (csr_matrix_anchor, (m["m32"].data, m["m32"].indices,
                                                 m["m32"].indptr, shape)),
        "csr_matrix_int64": (csr_matrix_anchor, (m["d"], m["i64"], m["p64"], shape)),
        "csr_array_int64": (csr_array_anchor, (m["d"], m["i64"], m["p64"], shape)),
    }[which]
    benchmark.extra_info.update(role="anchor")
    benchmark(args[0], *args[1])


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("op", ["from_scipy", "to_scipy"])
@pytest.mark.parametrize("which", ["csr_matrix_int32", "csr_matrix_int64", "csr_array_int64"])
def test_anchor_scipy_constructor(benchmark, mats, case, op, which):
    benchmark.group = f"{op}-{case}"
    anchors(benchmark, mats, case, which)


@pytest.mark.parametrize("case", CASES)
def test_from_scipy_zero_copy(benchmark, mats, case):
    m = mats[case]["m64"]
    t = hurray.from_scipy(m, copy=False)
    assert np.asarray(t.col_indices).ctypes.data == m.indices.ctypes.data
    benchmark.group = f"from_scipy-{case}"
    benchmark.extra_info.update(role="subject")
    benchmark(hurray.from_scipy, m)


@pytest.mark.parametrize("case", CASES)
def test_from_scipy_int32_widened(benchmark, mats, case):
    benchmark.group = f"from_scipy-{case}"
    benchmark.extra_info.update(role="subject")
    benchmark(hurray.from_scipy, mats[case]["m32"])


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("array", [False, True])
def test_to_scipy(benchmark, mats, case, array):
    t = mats[case]["t"]
    m = t.to_scipy(array=array)
    assert m.indices.ctypes.data == np.asarray(t.col_indices).ctypes.data  # no copy
    benchmark.group = f"to_scipy-{case}"
    benchmark.extra_info.update(role="subject")
    benchmark(t.to_scipy, array=array)
