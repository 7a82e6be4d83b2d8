"""SciPy sparse through hurray against SciPy's own constructor, in the same run.

Subjects, per call:
  from_scipy    hurray.from_scipy(m), m a CSR object over arrays allocated in
                hurray.aligned_allocator() (so the values are shared: the copy each subject
                makes is the one the format forces, nothing else):
                - int32: SciPy's usual index dtype; the index arrays are widened into new uint64
                  buffers, in the same pass as the index check (memory-layout.md § Importing
                  index arrays);
                - int64: the index arrays are checked in place and shared (no copy).
  to_scipy      t.to_scipy() (a csr_matrix) and t.to_scipy(array=True) (a csr_array), over the
                tensor's buffers (values, and the uint64 indices viewed as int64), for two
                tensors: `owned` (from_scipy of the int32 matrix: index memory hurray imported,
                checked once and handed out read-only, memory-layout.md § Checked once, so no
                export reads it again) and `shared` (from_scipy of the int64 arrays, copy=False:
                the caller's memory, checked at every export).
Anchors, over the same arrays: scipy.sparse.csr_matrix((data, indices, indptr), shape,
copy=False) -- the issue's anchor (hurray / anchor <= 1.5). With int32 arrays SciPy does no work
proportional to nnz; with int64 ones its matrix constructor scans them and narrows them to int32
(a copy). Second references: for int32, the anchor plus the widening the format forces
(indices.astype(np.uint64), indptr.astype(np.uint64)); for int64, csr_array((...), copy=False),
which keeps int64 arrays as they are (no scan, no copy). For the subjects whose index check the
format mandates (from_scipy int64 and the shared to_scipy: O(nnz), the same 8-byte entries
read), that csr_array plus SciPy's own full check of them, check_format(full_check=True)
(indices.max(), indices.min(), np.diff(indptr).min(): the same bytes, the same question).

Every from_scipy subject and the shared to_scipy subjects check the index contents
(memory-layout.md § Index contents, a linear pass SciPy's constructors skip), so their cost
grows with nnz where SciPy's int32 constructor's does not; the owned to_scipy subjects do not. Cases: `small` (1000 x 1000, ~10,000 random entries) and `large` (100,000 x 100,000,
~1,000,000).

    .venv/bin/python -m pytest bench/python/test_bench_scipy.py --benchmark-only
    .venv/bin/python bench/ratios.py 7 --scipy     # the interleaved ratio table
"""
import numpy as np
import pytest
import scipy.sparse as sp

import hurray

CASES = {"small": (1000, 10_000), "large": (100_000, 1_000_000)}


def build(case):
    """The arrays, matrices and tensor of one case."""
    n, nnz = CASES[case]
    rng = np.random.default_rng(1)
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, n, nnz)
    m0 = sp.csr_matrix((rng.random(nnz), (rows, cols)), shape=(n, n))  # duplicates summed
    assert m0.indices.dtype == np.int32
    with hurray.aligned_allocator():
        d = np.array(m0.data, copy=True)
        i32, p32 = np.array(m0.indices, copy=True), np.array(m0.indptr, copy=True)
        i64, p64 = i32.astype(np.int64), p32.astype(np.int64)
    shape = (n, n)
    m32 = sp.csr_matrix((d, i32, p32), shape=shape, copy=False)
    assert np.shares_memory(m32.indices, i32) and np.shares_memory(m32.data, d)
    m64 = sp.csr_array((d, i64, p64), shape=shape, copy=False)  # the array class keeps int64
    assert np.shares_memory(m64.indices, i64) and m64.indices.dtype == np.int64
    t = hurray.from_scipy(m64, copy=False)
    own = hurray.from_scipy(m32)  # the int32 indices imported: hurray's own, checked once
    assert not np.asarray(own.col_indices).flags.writeable
    return dict(shape=shape, d=d, i32=i32, p32=p32, i64=i64, p64=p64, m32=m32, m64=m64, t=t,
                own=own)


def pairs(c):
    """(subject name, subject, anchor name, anchor) for one case's arrays `c`."""
    d, i32, p32, i64, p64, shape = c["d"], c["i32"], c["p32"], c["i64"], c["p64"], c["shape"]
    m32, m64, t, own = c["m32"], c["m64"], c["t"], c["own"]

    def anchor32():
        return sp.csr_matrix((d, i32, p32), shape=shape, copy=False)

    def anchor32_widened():
        return (sp.csr_matrix((d, i32, p32), shape=shape, copy=False),
                i32.astype(np.uint64), p32.astype(np.uint64))

    def anchor64():
        return sp.csr_matrix((d, i64, p64), shape=shape, copy=False)

    def array64():
        return sp.csr_array((d, i64, p64), shape=shape, copy=False)

    def array64_checked():  # SciPy's own full check of the same int64 index bytes
        m = sp.csr_array((d, i64, p64), shape=shape, copy=False)
        m.check_format(full_check=True)
        return m

    a32 = ("csr_matrix int32", anchor32)
    a32w = ("csr_matrix int32 + astype(uint64) x2", anchor32_widened)
    a64 = ("csr_matrix int64", anchor64)
    arr64 = ("csr_array int64", array64)
    arr64c = ("csr_array int64 + check_format(full_check=True)", array64_checked)
    from32 = ("from_scipy(m) int32 (widened)", lambda: hurray.from_scipy(m32))
    from64 = ("from_scipy(m) int64 (shared)", lambda: hurray.from_scipy(m64))
    own_m = ("t.to_scipy() owned", lambda: own.to_scipy())
    own_a = ("t.to_scipy(array=True) owned", lambda: own.to_scipy(array=True))
    to_m = ("t.to_scipy() shared", lambda: t.to_scipy())
    to_a = ("t.to_scipy(array=True) shared", lambda: t.to_scipy(array=True))
    return [
        (*from32, *a32), (*from32, *a32w),
        (*from64, *a64), (*from64, *arr64), (*from64, *arr64c),
        (*own_m, *a32), (*own_m, *a64),
        (*own_a, *a32), (*own_a, *arr64),
        (*to_m, *a32), (*to_m, *a64), (*to_m, *arr64c),
        (*to_a, *a32), (*to_a, *arr64), (*to_a, *arr64c),
    ]


@pytest.fixture(scope="module")
def mats():
    return {case: build(case) for case in CASES}


ANCHORS = ["csr_matrix int32", "csr_matrix int32 + astype(uint64) x2", "csr_matrix int64",
           "csr_array int64", "csr_array int64 + check_format(full_check=True)"]
SUBJECTS = ["from_scipy(m) int32 (widened)", "from_scipy(m) int64 (shared)",
            "t.to_scipy() owned", "t.to_scipy(array=True) owned", "t.to_scipy() shared",
            "t.to_scipy(array=True) shared"]


def lookup(c, name):
    for sn, sf, an, af in pairs(c):
        if sn == name:
            return sf
        if an == name:
            return af
    raise KeyError(name)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("which", ANCHORS)
def test_anchor_scipy_constructor(benchmark, mats, case, which):
    benchmark.group = f"scipy-{case}"
    benchmark.extra_info.update(role="anchor")
    benchmark(lookup(mats[case], which))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("which", SUBJECTS)
def test_subject(benchmark, mats, case, which):
    c = mats[case]
    out = lookup(c, which)()
    if which.startswith("from_scipy") and "int64" in which:  # shared: no copy
        assert np.asarray(out.col_indices).ctypes.data == c["i64"].ctypes.data
    if which.startswith("t.to_scipy"):  # the tensor's own buffers
        t = c["own"] if which.endswith("owned") else c["t"]
        assert out.indices.ctypes.data == np.asarray(t.col_indices).ctypes.data
    benchmark.group = f"scipy-{case}"
    benchmark.extra_info.update(role="subject")
    benchmark(lookup(c, which))
