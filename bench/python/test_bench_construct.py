"""Constructing tensors, each next to the partner's own constructor of the same thing, in the
same run.

Groups (subject = the hurray path, anchor = the partner's):
  construct-dense      hurray.Tensor(a, float32, (16,)) over an aligned ndarray (zero-copy)
                       vs np.frombuffer(a, np.float32) (NumPy's own view of a buffer)
  construct-zeros      hurray.zeros((16,)) vs np.zeros(16, np.float32) and torch.zeros(16)
  construct-zeros-64MiB  hurray.zeros of 64 MiB vs np.zeros / torch.zeros (GiB/s: bytes made)
  construct-quantized  hurray.Tensor([q, scale], int8, (4, 256), quantization=BlockAffine(1, 32))
                       vs torch.quantize_per_channel of the same int8 shape's float source
                       (PyTorch's own quantized-tensor constructor) and the dense hurray.Tensor of
                       the same int8 buffer (the cost the quantization section adds)
  construct-sparse     hurray.sparse_coo(indices, values, (64, 64)) with 256 entries
                       vs scipy.sparse.coo_array((values, indices), shape=(64, 64))
                       and torch.sparse_coo_tensor(indices, values, (64, 64))
  construct-composite  hurray.Composite("partition", ...) of 8 row members (already built)
                       vs torch.nested.nested_tensor of the same 8 rows (a tensor of tensors)

    .venv/bin/python -m pytest bench/python/test_bench_construct.py --benchmark-only
"""
import numpy as np
import pytest

import hurray

try:
    import torch
except ImportError:  # the other anchors still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
ZEROS_LARGE = 64 << 20


def role(benchmark, group, r, nbytes=None):
    benchmark.group = group
    benchmark.extra_info["role"] = r
    if nbytes:
        benchmark.extra_info.update(nbytes=nbytes, throughput=True)


@pytest.fixture(scope="module")
def src():
    with hurray.aligned_allocator():
        a = np.ones(16, np.float32)
        q = np.ones(4 * 256, np.int8)
        s = np.ones(4 * 8, np.float32)
    rng = np.random.default_rng(0)
    flat = rng.choice(64 * 64, 256, replace=False)
    idx = np.stack([flat // 64, flat % 64]).astype(np.int64)
    with hurray.aligned_allocator():
        indices = np.ascontiguousarray(idx)
        values = rng.random(256).astype(np.float32)
    rows = []
    for i in range(8):
        with hurray.aligned_allocator():
            r = np.full(16, i, np.float32)
        rows.append(hurray.Tensor(r, hurray.float32, (1, 16),
                                  shard=hurray.Shard(i, 8, [8, 16], [i, 0])))
    return {"a": a, "q": q, "s": s, "indices": indices, "values": values, "rows": rows}


@pytest.mark.guard
def test_construct_dense_hurray(benchmark, src):
    role(benchmark, "construct-dense", "subject")
    t = benchmark(hurray.Tensor, src["a"], hurray.float32, (16,))
    assert np.asarray(t).ctypes.data == src["a"].ctypes.data  # zero-copy


@pytest.mark.guard
def test_construct_dense_anchor_np_frombuffer(benchmark, src):
    role(benchmark, "construct-dense", "anchor")
    benchmark(np.frombuffer, src["a"], np.float32)


@pytest.mark.guard
def test_construct_zeros_hurray(benchmark):
    role(benchmark, "construct-zeros", "subject")
    benchmark(hurray.zeros, (16,))


@pytest.mark.guard
def test_construct_zeros_anchor_numpy(benchmark):
    role(benchmark, "construct-zeros", "anchor")
    benchmark(np.zeros, 16, np.float32)


@needs_torch
def test_construct_zeros_anchor_torch(benchmark):
    role(benchmark, "construct-zeros", "anchor")
    benchmark(torch.zeros, 16)


def test_construct_zeros_large_hurray(benchmark):
    role(benchmark, "construct-zeros-64MiB", "subject", ZEROS_LARGE)
    benchmark(hurray.zeros, (ZEROS_LARGE // 4,))


def test_construct_zeros_large_anchor_numpy(benchmark):
    role(benchmark, "construct-zeros-64MiB", "anchor", ZEROS_LARGE)
    benchmark(np.zeros, ZEROS_LARGE // 4, np.float32)


@needs_torch
def test_construct_zeros_large_anchor_torch(benchmark):
    role(benchmark, "construct-zeros-64MiB", "anchor", ZEROS_LARGE)
    benchmark(torch.zeros, ZEROS_LARGE // 4)


@pytest.mark.guard
def test_construct_quantized_hurray(benchmark, src):
    role(benchmark, "construct-quantized", "subject")
    quant = hurray.BlockAffine(1, 32)
    t = benchmark(hurray.Tensor, [src["q"], src["s"]], hurray.int8, (4, 256),
                  quantization=quant)
    assert t.quantization == quant


def test_construct_quantized_anchor_hurray_dense(benchmark, src):
    role(benchmark, "construct-quantized", "anchor")
    benchmark(hurray.Tensor, src["q"], hurray.int8, (4, 256))


@needs_torch
def test_construct_quantized_anchor_torch(benchmark):
    role(benchmark, "construct-quantized", "anchor")
    x = torch.ones(4, 256)
    scales, zeros = torch.ones(4, dtype=torch.float64), torch.zeros(4, dtype=torch.int64)
    benchmark(torch.quantize_per_channel, x, scales, zeros, 0, torch.qint8)


@pytest.mark.guard
def test_construct_sparse_hurray(benchmark, src):
    role(benchmark, "construct-sparse", "subject")
    t = benchmark(hurray.sparse_coo, src["indices"], src["values"], (64, 64))
    assert t.layout.nnz == 256


def test_construct_sparse_anchor_scipy(benchmark, src):
    sparse = pytest.importorskip("scipy.sparse")
    role(benchmark, "construct-sparse", "anchor")
    benchmark(sparse.coo_array, (src["values"], (src["indices"][0], src["indices"][1])),
              shape=(64, 64))


@needs_torch
def test_construct_sparse_anchor_torch(benchmark, src):
    role(benchmark, "construct-sparse", "anchor")
    i, v = torch.from_numpy(src["indices"]), torch.from_numpy(src["values"])
    benchmark(torch.sparse_coo_tensor, i, v, (64, 64))


@pytest.mark.guard
def test_construct_composite_hurray(benchmark, src):
    role(benchmark, "construct-composite", "subject")
    c = benchmark(hurray.Composite, "partition", shape=(8, 16), dtype=hurray.float32,
                  members=src["rows"])
    assert c.member_count == 8


@needs_torch
def test_construct_composite_anchor_torch_nested(benchmark):
    role(benchmark, "construct-composite", "anchor")
    rows = [torch.full((16,), float(i)) for i in range(8)]
    benchmark(torch.nested.nested_tensor, rows)
