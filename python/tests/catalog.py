"""Tensors and composites of every kind, for the file, stream and composite tests.

Every element type, every constructible layout (private and unknown included), every
quantization scheme, the optional sections, a dynamic extent; and composites of each rule,
nested. Buffers hold random bytes (over-sized buffers are legal, so the quantized tensors
get generous ones), so a round trip that compares bytes compares something.
"""
import os
import struct

import numpy as np

import hurray
from hurray import (
    BlockPagedLayout,
    ColMajorLayout,
    Composite,
    CooLayout,
    CscLayout,
    CsfLayout,
    CsrLayout,
    HilbertLayout,
    MortonLayout,
    PrivateExtensionLayout,
    Shard,
    StridedLayout,
    Tensor,
    TiledLayout,
    UnknownLayout,
)


def owned(data: bytes) -> memoryview:
    """The bytes in a buffer hurray allocated (64-byte aligned)."""
    return Tensor(data, hurray.uint8, (len(data),), copy=True).buffer(0)


def rand(n: int) -> memoryview:
    return owned(os.urandom(n))


def u64(*values: int) -> memoryview:
    return owned(struct.pack(f"<{len(values)}Q", *values))


def f32(*values: float) -> memoryview:
    return owned(struct.pack(f"<{len(values)}f", *values))


def every_dtype():
    """One dtype object per element type (aliases once), plus two private ones."""
    seen = {}
    for name in vars(hurray.dtype):
        if name.startswith("_"):
            continue
        d = getattr(hurray.dtype, name)
        seen.setdefault(d.tag, d)
    seen[0xF0] = hurray.Dtype.from_tag(0xF0)
    seen[0xFE] = hurray.Dtype.from_tag(0xFE)
    return [seen[t] for t in sorted(seen)]


def dtype_tensor(d, n=8) -> Tensor:
    try:
        size = hurray.buffer_size_bytes(d, n)
    except hurray.UnsupportedError:  # extension types: width unknown
        size = 16
    return Tensor(rand(size), d, (n,))


def layout_tensors():
    f = hurray.float32
    yield "row_major", Tensor(rand(24), f, (2, 3))
    yield "col_major", Tensor(rand(24), f, (2, 3), layout=ColMajorLayout())
    yield "strided", Tensor(rand(48), f, (2, 3), layout=StridedLayout([1, 4]), byte_offset=4)
    yield "strided_negative", Tensor(rand(48), f, (2, 3), layout=StridedLayout([-4, 1]),
                                     byte_offset=16)
    yield "tiled", Tensor(rand(64), f, (4, 4), layout=TiledLayout([2, 2], [8, 2], [2, 1]))
    yield "morton", Tensor(rand(64), f, (4, 4), layout=MortonLayout())
    yield "hilbert", Tensor(rand(64), f, (4, 4), layout=HilbertLayout())
    yield "coo", Tensor([rand(8), u64(0, 1, 1, 0)], f, (2, 2), layout=CooLayout(nnz=2))
    yield "csr", Tensor([rand(4), u64(1), u64(0, 1, 1)], f, (2, 2), layout=CsrLayout(nnz=1))
    yield "csc", Tensor([rand(4), u64(1), u64(0, 0, 1)], f, (2, 2), layout=CscLayout(nnz=1))
    yield "csf", Tensor([rand(8), u64(0, 1), u64(1), u64(0, 2), u64(0, 1)], f, (2, 2),
                        layout=CsfLayout(nnz=2, fiber_counts=[1]))
    yield "block_paged", Tensor([rand(4 * 8 * 4), u64(0, 1, 3), u64(0, 2, 1)], f, (2, 16),
                                layout=BlockPagedLayout(page_size=8, num_pages=4, num_seqs=2,
                                                        num_blocks=3))
    yield "private", Tensor([rand(4), rand(8)], f, (3,),
                            layout=PrivateExtensionLayout(0xF3, 7, b"abc"))
    yield "unknown", Tensor([rand(4)], f, (1,), layout=UnknownLayout(0x40, b"\x01\x02"))
    yield "sections", Tensor(
        [rand(16), rand(16)], hurray.int8, (4, 4),
        quantization=hurray.PerChannelAffine(axis=1),
        statistics=hurray.Statistics(min=-1.0, max=3.0, nan_count=0),
        shard=Shard(0, 2, [8, 4], [0, 0]))
    yield "dynamic", Tensor(rand(64), f, (None, 4))
    yield "empty", Tensor(b"", f, (0, 3))
    yield "scalar", Tensor(rand(8), hurray.float64, ())


def quant_tensors():
    def big():
        return rand(1024)

    cases = [
        ("per_tensor", hurray.PerTensorAffine(scale=0.5, zero_point=1), hurray.int8, 1),
        ("per_channel", hurray.PerChannelAffine(axis=1), hurray.int8, 2),
        ("per_channel_zp", hurray.PerChannelAffine(axis=1, zero_point_dtype=hurray.int8),
         hurray.int8, 3),
        ("block", hurray.BlockAffine(1, 32), hurray.int8, 2),
        ("block_zp", hurray.BlockAffine(1, 32, hurray.bfloat16, hurray.uint8), hurray.int8, 3),
        ("nf4", hurray.NF4(), hurray.uint4, 2),
        ("nf4_double", hurray.NF4(double_quant=True), hurray.uint4, 4),
        ("mx", hurray.MX(1), hurray.float8_e4m3fn, 2),
        ("nvfp4", hurray.NVFP4(1, 2.5), hurray.float4_e2m1fn, 2),
    ]
    for name, q, d, n in cases:
        yield name, Tensor([big() for _ in range(n)], d, (4, 64), quantization=q)


def every_tensor():
    """(id, tensor) for every dtype, layout and quantization scheme."""
    for d in every_dtype():
        yield f"dtype-{d.name}-{d.tag:#04x}", dtype_tensor(d)
    for name, t in layout_tensors():
        yield f"layout-{name}", t
    for name, t in quant_tensors():
        yield f"quant-{name}", t


# ---- composites ------------------------------------------------------------------------------


def row(values, index, rows, cols=3, dtype=hurray.float32):
    """Row `index` of a rows x cols partition."""
    return Tensor(f32(*values), dtype, (1, cols), shard=Shard(index, rows, [rows, cols],
                                                              [index, 0]))


def partition(rows=2):
    return Composite("partition", shape=(rows, 3), dtype=hurray.float32,
                     members=[row([3 * i, 3 * i + 1, 3 * i + 2], i, rows) for i in range(rows)])


def overlay(combine="add"):
    base = Tensor(rand(16), hurray.float32, (4,))
    fix = Tensor(rand(8), hurray.float32, (2,), shard=Shard(0, 1, [4], [1]))
    fix2 = Tensor(rand(4), hurray.float32, (1,), shard=Shard(0, 1, [4], [3]))
    return Composite("overlay", shape=(4,), dtype=hurray.float32, members=[base, fix, fix2],
                     combine_op=combine)


def group():
    return Composite("group", shape=(2,), dtype=hurray.uint8,
                     members=[Tensor(rand(5), hurray.uint8, (5,)),
                              Tensor([rand(8), u64(0, 1, 1, 0)], hurray.float32, (2, 2),
                                     layout=CooLayout(nnz=2))])


def nested():
    """A group holding a partition whose second member is itself a partition (placed by
    its shard), and an overlay: every rule, three levels."""
    inner = Composite("partition", shape=(1, 3), dtype=hurray.float32,
                      shard=Shard(1, 2, [2, 3], [1, 0]),
                      members=[Tensor(rand(4), hurray.float32, (1, 1),
                                      shard=Shard(0, 2, [1, 3], [0, 0])),
                               Tensor(rand(8), hurray.float32, (1, 2),
                                      shard=Shard(1, 2, [1, 3], [0, 1]))])
    outer = Composite("partition", shape=(2, 3), dtype=hurray.float32,
                      members=[row([1, 2, 3], 0, 2), inner])
    return Composite("group", shape=(3,), dtype=hurray.float32,
                     members=[outer, overlay("max"), Tensor(rand(12), hurray.float32, (3,))])


def every_composite():
    yield "partition", partition()
    yield "partition-4", partition(4)
    yield "overlay", overlay()
    yield "group", group()
    yield "nested", nested()


# ---- comparison ---------------------------------------------------------------------------------


def same_tensor(a: Tensor, b: Tensor) -> bool:
    """Equal descriptors and equal bytes in every buffer."""
    if a.descriptor != b.descriptor:
        return False
    return all(bytes(a.buffer(i)) == bytes(b.buffer(i)) for i in range(a.buffer_count))


def same(a, b) -> bool:
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return same_tensor(a, b)
    return isinstance(a, Composite) and isinstance(b, Composite) and a == b


_DESCRIPTOR_FIELDS = ("version", "dtype", "shape", "layout", "quantization", "statistics", "shard",
                      "device", "byte_offset", "role", "unknown_sections", "buffer_count")


def same_saved(a, b) -> bool:
    """`same` for a tensor and its saved-and-loaded or streamed copy: equal descriptors except
    the declared buffer alignment (exempt from the round-trip obligation: a file or a stream
    declares the alignment an owned buffer would, not one measured from where the source lived;
    file-container.md § Declared alignment of saved buffers, stream.md § Declared alignment of
    written buffers), and equal bytes."""
    if isinstance(a, Composite) and isinstance(b, Composite):
        return (a.layout == b.layout and a.shape == b.shape and a.dtype == b.dtype
                and a.member_roles == b.member_roles and len(a.members) == len(b.members)
                and all(same_saved(x, y) for x, y in zip(a.members, b.members)))
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return False
    da, db = a.descriptor, b.descriptor
    if any(getattr(da, f) != getattr(db, f) for f in _DESCRIPTOR_FIELDS):
        return False
    if [(h.size, h.sync_mode) for h in da.buffer_handles] != [
            (h.size, h.sync_mode) for h in db.buffer_handles]:
        return False
    return all(bytes(a.buffer(i)) == bytes(b.buffer(i)) for i in range(a.buffer_count))


def at_page_offset(n, offset, dtype=np.uint8):
    """A zeroed array of n elements of `dtype` whose data starts `offset` bytes past a 4096
    boundary: a zero-copy source whose measured alignment the test chooses (the view keeps
    its allocation alive)."""
    nbytes = n * np.dtype(dtype).itemsize
    raw = np.zeros(nbytes + 8192, dtype=np.uint8)
    start = (-raw.ctypes.data) % 4096 + offset
    return raw[start:start + nbytes].view(dtype)
