"""hurray.Tensor: construction, the descriptor it builds, byte access, sparse views.

Seed § Tensor Surface, § Dynamic dimensions, § Authoring, § sync_mode, § Alignment is
measured, § Buffer Handles, § Layouts and Sparse Tensor Support, § Multi-buffer tensors;
docs/spec/buffer-protocol.md, memory-layout.md. Test names carry requirement ids
(docs/requirements/python-binding.md). These tests use no NumPy.
"""
import gc
import struct
import sys
import weakref

import pytest

import hurray
from hurray import (
    BlockPagedLayout,
    ColMajorLayout,
    CooLayout,
    CscLayout,
    CsfLayout,
    CsrLayout,
    HilbertLayout,
    MortonLayout,
    PrivateExtensionLayout,
    RowMajorLayout,
    StridedLayout,
    Tensor,
    TiledLayout,
    UnknownLayout,
)

PAGE = 4096


def owned(data: bytes) -> memoryview:
    """The bytes in a buffer hurray allocated (64-byte aligned): shared without a copy."""
    return Tensor(data, hurray.uint8, (len(data),), copy=True).buffer(0)


def page_buffer(n: int = 1 << 20) -> memoryview:
    """A writable page-aligned (>= 1 MiB owned) buffer of n zero bytes."""
    mv = hurray.zeros((n,), hurray.uint8).buffer(0)
    assert hurray.zeros((n,), hurray.uint8).buffer_handles[0].alignment == PAGE
    return mv


def u64(*values: int) -> memoryview:
    return owned(struct.pack(f"<{len(values)}Q", *values))


def f32(*values: float) -> memoryview:
    return owned(struct.pack(f"<{len(values)}f", *values))


def dense(shape=(2, 3), dtype=hurray.float32, **kw) -> Tensor:
    n = 1
    for e in shape:
        n *= e if e is not None else 1
    return Tensor(owned(bytes(n * max(1, dtype.bit_width // 8))), dtype, shape, **kw)


# ---- one class, no compute ----------------------------------------------------------------------


def test_REQ_TENSOR_ONE_CLASS_every_layout_is_a_tensor(coo, csr):
    assert type(coo) is Tensor and type(csr) is Tensor and type(dense()) is Tensor
    with pytest.raises(TypeError):

        class Sub(Tensor):  # noqa: F841 - no subclass per layout family
            pass


def test_REQ_TENSOR_NO_ARRAY_NAMESPACE_and_no_operators():
    t = dense()
    assert not hasattr(t, "__array_namespace__")
    for op in ("__add__", "__mul__", "__getitem__", "__setitem__", "__len__", "__iter__",
               "__matmul__", "__neg__", "sum", "reshape"):
        assert not hasattr(t, op), op
    with pytest.raises(TypeError):
        t + t
    with pytest.raises(TypeError):
        t[0]


def test_REQ_TENSOR_EQUALITY_identity():
    a = dense()
    b = Tensor(a.buffer(0), a.dtype, a.shape)
    assert a == a and a != b and hash(a) == hash(a)
    assert a.descriptor == b.descriptor  # declarations compare by value


# ---- constructor --------------------------------------------------------------------------------


def test_REQ_TENSOR_CONSTRUCTOR_properties():
    t = Tensor(f32(1, 2, 3, 4, 5, 6), hurray.float32, [2, 3])
    assert t.dtype is hurray.float32
    assert t.shape == (2, 3) and t.ndim == 2 and t.size == 6
    assert t.layout == RowMajorLayout() and isinstance(t.layout, hurray.Layout)
    assert t.quantization is None and t.statistics is None and t.shard is None
    assert t.buffer_count == 1 and t.byte_offset == 0
    assert t.sync_mode == "producer_synced"
    assert t.device == hurray.Device("cpu") and t.device_id == 0
    assert t.itemsize == 4 and t.nbytes == 24
    assert isinstance(t.descriptor, hurray.Descriptor)


def test_REQ_TENSOR_CONSTRUCTOR_single_object_or_sequence():
    b = f32(1, 2)
    assert Tensor(b, hurray.float32, (2,)).buffer_count == 1
    assert Tensor([b], hurray.float32, (2,)).buffer_count == 1
    assert Tensor((b,), hurray.float32, (2,)).buffer_count == 1
    with pytest.raises(TypeError, match="buffer"):
        Tensor("abc", hurray.float32, (1,))
    with pytest.raises(TypeError, match=r"buffers\[0\]"):
        Tensor([1, 2], hurray.float32, (1,))


def test_REQ_TENSOR_CONSTRUCTOR_keyword_only_and_types():
    b = f32(1)
    with pytest.raises(TypeError):
        Tensor(b, hurray.float32, (1,), RowMajorLayout())  # layout is keyword-only
    with pytest.raises(TypeError, match="Dtype"):
        Tensor(b, "float32", (1,))
    with pytest.raises(TypeError, match="Quantization"):
        Tensor(b, hurray.int8, (4,), quantization="per_tensor")
    with pytest.raises(TypeError, match="Statistics"):
        Tensor(b, hurray.float32, (1,), statistics={"min": 0})
    with pytest.raises(TypeError, match="Shard"):
        Tensor(b, hurray.float32, (1,), shard=(0, 1))
    with pytest.raises(TypeError, match="copy"):
        Tensor(b, hurray.float32, (1,), copy=1)


def test_REQ_TENSOR_LAYOUT_DEFAULT_ROW_MAJOR():
    assert dense().layout == RowMajorLayout()
    assert dense(layout=None).layout == RowMajorLayout()


@pytest.mark.parametrize("bad", ["row_major", "csr", b"row_major", 1, RowMajorLayout])
def test_REQ_TENSOR_LAYOUT_TYPEERROR_non_layout_and_no_string(bad):
    with pytest.raises(TypeError, match="hurray.Layout"):
        Tensor(f32(1, 2), hurray.float32, (2,), layout=bad)


def test_REQ_TENSOR_COMPOSITE_UNSUPPORTED():
    with pytest.raises(hurray.UnsupportedError, match="composite"):
        Tensor([], hurray.float32, (4,), layout=hurray.CompositeLayout("group", member_count=2))


def test_REQ_TENSOR_LAYOUT_RANK_must_match_parameters():
    with pytest.raises(hurray.InvalidDescriptorError, match="rank"):
        Tensor(owned(bytes(64)), hurray.float32, (4,), layout=StridedLayout([1, 4]))


# ---- the three tiers; nothing inferred or corrected ---------------------------------------------


def test_REQ_TENSOR_NO_INFERENCE_coo_nnz4_with_two_values():
    # Requirements: "CooLayout(nnz=4) supplied with a two-element values buffer MUST raise".
    with pytest.raises(hurray.InvalidDescriptorError) as e:
        Tensor([f32(1, 2), u64(*range(8))], hurray.float32, (4, 4), layout=CooLayout(nnz=4))
    assert e.value.code == "BUFFER_SIZE" and e.value.field == "buffers[0].size"


def test_REQ_TENSOR_THREE_TIERS_buffer_count():
    with pytest.raises(hurray.InvalidDescriptorError) as e:
        Tensor([f32(1, 2)], hurray.float32, (4, 4), layout=CsrLayout(nnz=2))
    assert e.value.code == "BUFFER_COUNT"
    with pytest.raises(hurray.InvalidDescriptorError) as e:
        Tensor([f32(1), f32(1)], hurray.float32, (1,))
    assert e.value.code == "BUFFER_COUNT"


def test_REQ_TENSOR_THREE_TIERS_layout_against_shape():
    with pytest.raises(hurray.InvalidDescriptorError) as e:
        Tensor([f32(1), u64(0), u64(0, 0)], hurray.float32, (4,), layout=CsrLayout(nnz=1))
    assert e.value.code == "CONSTRAINT"  # csr needs rank 2
    with pytest.raises(hurray.InvalidDescriptorError) as e:
        Tensor(owned(bytes(64)), hurray.float32, (3, 4), layout=MortonLayout())
    assert e.value.code == "CONSTRAINT"  # extents must be powers of two


def test_REQ_TENSOR_THREE_TIERS_sizes_and_byte_offset():
    with pytest.raises(hurray.InvalidDescriptorError) as e:
        Tensor(f32(1, 2, 3), hurray.float32, (2, 2))
    assert e.value.code == "BUFFER_SIZE"
    with pytest.raises(hurray.InvalidDescriptorError) as e:
        Tensor(f32(1, 2, 3, 4), hurray.float32, (2,), byte_offset=2)
    assert e.value.code == "CONSTRAINT"
    t = Tensor(f32(1, 2, 3, 4), hurray.float32, (2,), byte_offset=8)
    assert t.byte_offset == 8


def test_REQ_TENSOR_OVERSIZED_OK():
    t = Tensor(owned(bytes(1000)), hurray.float32, (2, 3))
    assert t.buffer_handles[0].size == 1000
    t = Tensor([owned(bytes(100)), u64(*range(40))], hurray.float32, (4, 4),
               layout=CooLayout(nnz=4))
    assert t.buffer_handles[1].size == 320


def test_REQ_TENSOR_SHARD_rank_must_match():
    with pytest.raises(hurray.InvalidDescriptorError, match="shard"):
        Tensor(f32(1, 2), hurray.float32, (2,), shard=hurray.Shard(0, 2, [4, 4], [0, 0]))
    with pytest.raises(hurray.InvalidDescriptorError):
        Tensor(f32(1, 2), hurray.float32, (2,), shard=hurray.Shard(0, 2, [3], [2]))
    t = Tensor(f32(1, 2), hurray.float32, (2,), shard=hurray.Shard(1, 2, [4], [2]))
    assert t.shard == hurray.Shard(1, 2, [4], [2])


def test_REQ_TENSOR_STATISTICS_checked():
    with pytest.raises(hurray.InvalidDescriptorError):
        Tensor(f32(1, 2), hurray.float32, (2,), statistics=hurray.Statistics(nan_count=3))
    t = Tensor(f32(1, 2), hurray.float32, (2,), statistics=hurray.Statistics(min=1, max=2))
    assert t.statistics == hurray.Statistics(min=1.0, max=2.0)


# ---- dynamic dimensions -------------------------------------------------------------------------


def test_REQ_SHAPE_DYNAMIC_NONE_tensor_shape_roundtrip():
    t = Tensor(owned(bytes(64)), hurray.float32, (None, 4))
    assert t.shape == (None, 4) and t.size is None
    again = Tensor(t.buffer(0), t.dtype, t.shape)
    assert again.descriptor == t.descriptor
    assert Tensor(owned(bytes(0)), hurray.float32, (0, None)).size == 0


def test_REQ_SHAPE_DYNAMIC_NO_REPR_DATA():
    pytest.importorskip("numpy")  # imported: repr would render data if it were allowed to
    t = Tensor(f32(1, 2, 3, 4), hurray.float32, (None, 2))
    for text in (repr(t), str(t)):
        assert "1." not in text and "[" not in text.split("shape=")[0]
        assert "shape=(None, 2)" in text
    resolved = Tensor(f32(1, 2, 3, 4), hurray.float32, (2, 2))
    assert "[[1., 2.]" in repr(resolved)


# ---- alignment is measured ----------------------------------------------------------------------


def test_REQ_ALIGN_EMPTY_ONE():
    t = Tensor(b"", hurray.float32, (0,))
    assert t.buffer_handles[0].alignment == 1 and t.buffer_handles[0].size == 0
    assert hurray.zeros((0,)).buffer_handles[0].alignment == 1


@pytest.mark.parametrize("offset,expected", [(0, PAGE), (64, 64), (128, 128), (192, 64),
                                             (512, 512), (2048, 2048), (8192, PAGE)])
def test_REQ_ALIGN_MEASURED_borrowed(offset, expected):
    base = page_buffer()
    t = Tensor(base[offset:offset + 256], hurray.uint8, (256,))
    assert t.buffer_handles[0].alignment == expected
    assert t.buffer(0).obj.owner is t  # shared: buffer(0) views the tensor's memory


def test_REQ_ALIGN_OWNED_declares_what_it_allocated():
    small, large = hurray.zeros((10,)), hurray.zeros((1 << 18,))  # 40 B, 1 MiB
    assert small.buffer_handles[0].alignment == hurray.MIN_BUFFER_ALIGNMENT
    assert large.buffer_handles[0].alignment == hurray.PAGE_ALIGNMENT
    copied = Tensor(b"\x00" * 8, hurray.float32, (2,), copy=True)
    assert copied.buffer_handles[0].alignment == 64


def test_REQ_ALIGN_NO_SETTABLE_alignment():
    with pytest.raises(TypeError, match="alignment"):
        Tensor(f32(1), hurray.float32, (1,), alignment=4096)


# ---- copy on ingest (the constructor applies the same rule) -------------------------------------


def test_REQ_COPY_ON_INGEST_constructor_per_buffer():
    base = page_buffer()
    aligned_vals, unaligned_idx = base[0:16], base[4104:4104 + 64]  # 4104 % 64 == 8
    layout = CooLayout(nnz=4)
    t = Tensor([aligned_vals, unaligned_idx], hurray.float32, (4, 4), layout=layout)
    assert t.buffer_handles[0].alignment == PAGE  # shared as it is
    assert t.buffer_handles[1].alignment == 64  # copied into an owned buffer
    base[0] = 7
    base[4104] = 9
    assert t.buffer(0)[0] == 7 and t.buffer(1)[0] == 0  # the copy does not see the write
    with pytest.raises(ValueError, match="copy=False"):
        Tensor([aligned_vals, unaligned_idx], hurray.float32, (4, 4), layout=layout,
               copy=False)
    t = Tensor([aligned_vals, base[4096:4160]], hurray.float32, (4, 4), layout=layout,
               copy=False)
    assert t.buffer(0)[0] == 7
    t = Tensor([aligned_vals, base[4096:4160]], hurray.float32, (4, 4), layout=layout,
               copy=True)
    base[0] = 1
    assert t.buffer(0)[0] == 7


# ---- buffer handles -----------------------------------------------------------------------------


def test_REQ_BUFHANDLE_ONE_PER_ENTRY_tensor(csr):
    handles = csr.buffer_handles
    assert isinstance(handles, tuple) and len(handles) == csr.buffer_count == 3
    assert [h.index for h in handles] == [0, 1, 2]
    assert [h.size for h in handles] == [12, 24, 32]
    assert all(h.sync_mode == "producer_synced" for h in handles)
    assert handles == csr.descriptor.buffer_handles


def test_REQ_BUFHANDLE_DEVICE_SAME_tensor():
    t = Tensor(f32(1, 2), hurray.float32, (2,), device="cuda", device_id=3)
    assert all(h.device is t.device for h in t.buffer_handles)
    assert t.descriptor.device is t.device
    assert t.device_id == 3 and t.device.kind == "cuda"


def test_REQ_BUFHANDLE_NO_REFERENCE_tensor_handles_pin_nothing():
    t = Tensor(f32(1, 2), hurray.float32, (2,))
    ref = weakref.ref(t)
    handles = t.buffer_handles
    del t
    gc.collect()
    assert ref() is None and handles[0].size == 8


def test_REQ_BUFHANDLE_EVERY_LAYOUT_AND_DEVICE(coo):
    for t in (coo, Tensor(f32(1), hurray.float32, (1,), device=hurray.Device(0xF3))):
        assert len(t.buffer_handles) == t.buffer_count


# ---- device -------------------------------------------------------------------------------------


def test_REQ_DEVICE_ID_DEFAULT_tensor():
    t = dense()
    assert t.device_id == 0 and t.device.device_id == 0
    d = hurray.Device("cuda", device_id=2)
    t = Tensor(f32(1), hurray.float32, (1,), device=d)
    assert t.device is d and t.device_id == 2
    assert Tensor(f32(1), hurray.float32, (1,), device=d, device_id=2).device is d
    with pytest.raises(ValueError, match="device_id"):
        Tensor(f32(1), hurray.float32, (1,), device=d, device_id=1)
    with pytest.raises(hurray.InvalidDescriptorError):
        Tensor(f32(1), hurray.float32, (1,), device=0x70)  # reserved device byte


def test_REQ_TENSOR_DEVICE_bytes_not_addressable():
    t = Tensor(f32(1, 2), hurray.float32, (2,), device="cuda")
    with pytest.raises(hurray.UnsupportedError, match="cuda"):
        t.buffer(0)
    assert t.buffer_handles[0].size == 8  # the metadata question still has an answer


# ---- sync_mode ----------------------------------------------------------------------------------


def test_REQ_SYNC_READONLY_no_constructor_accepts_it():
    t = dense()
    with pytest.raises(TypeError, match="sync_mode"):
        Tensor(f32(1), hurray.float32, (1,), sync_mode="event")
    with pytest.raises(AttributeError):
        t.sync_mode = "event"
    for factory in (hurray.zeros, hurray.ones, hurray.empty):
        with pytest.raises(TypeError):
            factory((2,), sync_mode="event")


def with_sync(t, index, mode):
    return hurray._hurray._tensor_with_sync_mode(t, index, mode)


@pytest.mark.parametrize("mode,name", [(2, "event"), (3, "stream")])
def test_REQ_SYNC_REFUSE_BYTES(coo, mode, name):
    t = with_sync(coo, 1, mode)
    assert t.sync_mode == name and t.buffer_handles[1].sync_mode == name
    assert t.buffer_handles[0].sync_mode == "producer_synced"
    for path in (lambda: t.buffer(0), lambda: t.buffer(1), lambda: t.values,
                 lambda: t.indices):
        with pytest.raises(hurray.UnsupportedError, match=name):
            path()
    d = with_sync(dense(), 0, mode)
    for path in (lambda: d.__array_interface__, lambda: d.buffer(0)):
        with pytest.raises(hurray.UnsupportedError, match=name):
            path()
    # relaying a declaration is not reading a byte: metadata still answers
    assert t.descriptor.buffer_handles[1].sync_mode == name and t.nnz == 4


# ---- buffer(i) ----------------------------------------------------------------------------------


def test_REQ_BUFFER_ACCESSOR_uint8_view_of_declared_size(csr):
    for i, h in enumerate(csr.buffer_handles):
        mv = csr.buffer(i)
        assert isinstance(mv, memoryview)
        assert mv.format == "B" and mv.ndim == 1 and mv.itemsize == 1
        assert mv.nbytes == h.size
    assert bytes(csr.buffer(2)) == struct.pack("<4Q", 0, 1, 2, 3)
    for bad in (3, 255, -1):
        with pytest.raises(IndexError):
            csr.buffer(bad)
    with pytest.raises(TypeError):
        csr.buffer("0")


def test_REQ_BUFFER_ACCESSOR_oversized_source_declared_size():
    t = Tensor(owned(bytes(100)), hurray.float32, (2,))
    assert len(t.buffer(0)) == 100  # the declared size is the buffer's length


def test_REQ_BUFFER_ACCESSOR_readonly_follows_source():
    base = page_buffer()
    writable = Tensor(base[:64], hurray.uint8, (64,))
    assert not writable.buffer(0).readonly
    writable.buffer(0)[3] = 5
    assert base[3] == 5
    readonly = Tensor(base[:64].toreadonly(), hurray.uint8, (64,))
    assert readonly.buffer(0).readonly
    with pytest.raises(TypeError):
        readonly.buffer(0)[0] = 1


def test_REQ_BUFFER_ACCESSOR_keeps_tensor_alive():
    t = dense()
    ref = weakref.ref(t)
    mv = t.buffer(0)
    del t
    gc.collect()
    assert ref() is not None
    mv.release()
    del mv
    gc.collect()
    assert ref() is None


def test_REQ_TENSOR_SOURCE_LIFETIME_export_held():
    # The exporter stays alive (and exported) for the tensor's lifetime.
    buf = page_buffer()
    source = buf.obj.owner  # the tensor behind the page buffer
    ref = weakref.ref(source)
    t = Tensor(buf[:64], hurray.uint8, (64,))
    del buf, source
    gc.collect()
    assert ref() is not None
    del t
    gc.collect()
    assert ref() is None


def test_REQ_TENSOR_SOURCE_LIFETIME_bytearray_locked():
    # A shared bytearray is exported for the tensor's lifetime, so it cannot be resized
    # (and its pointer cannot move) under the tensor.
    keep = []  # live, so that each try gets a new address
    for n in range(1024):
        ba = bytearray(600 + n)
        keep.append(ba)
        try:
            t = Tensor(ba, hurray.uint8, (256,), copy=False)
        except ValueError:  # not 64-byte aligned this time
            continue
        with pytest.raises(BufferError):
            ba.extend(b"x")
        del t
        ba.extend(b"x")
        return
    pytest.skip("no 64-byte-aligned bytearray in 1024 tries")


# ---- sparse accessors ---------------------------------------------------------------------------


@pytest.fixture
def coo():
    return Tensor([f32(1, 2, 3, 4), u64(0, 1, 2, 3, 3, 2, 1, 0)], hurray.float32, (4, 4),
                  layout=CooLayout(nnz=4))


@pytest.fixture
def csr():
    return Tensor([f32(1, 2, 3), u64(0, 1, 2), u64(0, 1, 2, 3)], hurray.float32, (3, 3),
                  layout=CsrLayout(nnz=3))


@pytest.fixture
def csc():
    return Tensor([f32(1, 2), u64(1, 0), u64(0, 1, 2)], hurray.float32, (2, 2),
                  layout=CscLayout(nnz=2))


SPARSE_ACCESSORS = ("values", "indices", "col_indices", "row_ptr", "row_indices", "col_ptr",
                    "nnz")
APPLIES = {
    "coo": {"values", "indices", "nnz"},
    "csr": {"values", "col_indices", "row_ptr", "nnz"},
    "csc": {"values", "row_indices", "col_ptr", "nnz"},
    "dense": set(),
}


def test_REQ_SPARSE_ATTRIBUTEERROR_hasattr_tells(coo, csr, csc):
    for name, t in (("coo", coo), ("csr", csr), ("csc", csc), ("dense", dense())):
        for attr in SPARSE_ACCESSORS:
            assert hasattr(t, attr) == (attr in APPLIES[name]), (name, attr)
            if attr not in APPLIES[name]:
                with pytest.raises(AttributeError, match=attr) as e:
                    getattr(t, attr)
                assert not isinstance(e.value, hurray.UnsupportedError)


def test_REQ_SPARSE_ACCESSORS_coo(coo):
    assert coo.nnz == 4
    v, i = coo.values, coo.indices
    assert type(v) is Tensor and type(i) is Tensor
    assert v.dtype is hurray.float32 and v.shape == (4,) and v.layout == RowMajorLayout()
    assert i.dtype is hurray.uint64 and i.shape == (2, 4)  # the (ndim, nnz) array
    assert bytes(v.buffer(0)) == bytes(coo.buffer(0))
    assert struct.unpack("<8Q", bytes(i.buffer(0))) == (0, 1, 2, 3, 3, 2, 1, 0)


def test_REQ_SPARSE_ACCESSORS_csr_csc(csr, csc):
    assert csr.col_indices.shape == (3,) and csr.row_ptr.shape == (4,)
    assert csr.col_indices.dtype is hurray.uint64 and csr.values.shape == (3,)
    assert csc.row_indices.shape == (2,) and csc.col_ptr.shape == (3,)
    assert struct.unpack("<3Q", bytes(csc.col_ptr.buffer(0))) == (0, 1, 2)
    dyn = Tensor([f32(1), u64(0), u64(0, 1)], hurray.float32, (None, 4),
                 layout=CsrLayout(nnz=1))
    assert dyn.row_ptr.shape == (None,)


def test_REQ_SPARSE_ACCESSORS_share_memory(coo):
    base = page_buffer()
    t = Tensor([base[:16], base[4096:4096 + 64]], hurray.float32, (4, 4),
               layout=CooLayout(nnz=4))
    base[0:4] = struct.pack("<f", 2.5)
    assert struct.unpack("<f", bytes(t.values.buffer(0)[:4]))[0] == 2.5


def test_REQ_SPARSE_VIEWS_KEEP_ALIVE():
    coo = Tensor([f32(1, 2), u64(0, 1, 1, 0)], hurray.float32, (2, 2), layout=CooLayout(nnz=2))
    ref = weakref.ref(coo)
    values, indices = coo.values, coo.indices
    del coo
    gc.collect()
    assert ref() is not None
    assert struct.unpack("<2f", bytes(values.buffer(0))) == (1.0, 2.0)
    del values
    gc.collect()
    assert ref() is not None  # indices still holds it
    del indices
    gc.collect()
    assert ref() is None


def test_REQ_SPARSE_ACCESSORS_csf_and_block_paged_use_buffer():
    csf = Tensor([f32(1, 2), u64(0, 1), u64(1), u64(0, 2), u64(0, 1)], hurray.float32,
                 (2, 2), layout=CsfLayout(nnz=2, fiber_counts=[1]))
    assert csf.buffer_count == 5 and csf.nnz == 2 and csf.values.shape == (2,)
    assert not hasattr(csf, "indices")
    paged = block_paged()
    assert paged.buffer_count == 3 and not hasattr(paged, "values")
    assert not hasattr(paged, "nnz")
    assert len(paged.buffer(1)) == 8 * 3


def test_REQ_SPARSE_VALUES_carry_per_tensor_quantization():
    q = hurray.PerTensorAffine(scale=0.5, zero_point=1)
    t = Tensor([owned(bytes(4)), u64(0, 1, 2, 3, 0, 1, 2, 3)], hurray.int8, (4, 4),
               layout=CooLayout(nnz=4), quantization=q)
    assert t.values.quantization == q and t.indices.quantization is None


# ---- sections, quantization and the rebuild round trip ------------------------------------------


def test_REQ_TENSOR_SECTIONS_READABLE_quantization_same_class():
    q = hurray.PerChannelAffine(axis=0, zero_point_dtype=hurray.int8)
    t = Tensor([owned(bytes(16)), f32(1, 2, 3, 4), owned(bytes(4))], hurray.int8, (4, 4),
               quantization=q)
    assert type(t.quantization) is hurray.PerChannelAffine and t.quantization == q
    assert t.buffer_count == 3


def test_REQ_TENSOR_QUANT_REUSE_indices_rederived_from_layout():
    pc = hurray.PerChannelAffine(axis=2)  # first_buffer_index=1: the dense layouts' L
    assert pc.scale_buffer_index == 1
    paged = Tensor([owned(bytes(4 * 8 * 4)), u64(0, 2), u64(0, 1), f32(1, 2, 3, 4)],
                   hurray.int8, (1, 16, 4),
                   layout=BlockPagedLayout(page_size=8, num_pages=4, num_seqs=1, num_blocks=2),
                   quantization=pc)
    assert paged.quantization.scale_buffer_index == 3  # L = 3 for block_paged
    assert paged.quantization == hurray.PerChannelAffine(axis=2, first_buffer_index=3)
    assert type(paged.quantization) is hurray.PerChannelAffine
    # the scheme read off one tensor builds another (another layout) without conversion
    dense_q = Tensor([owned(bytes(64)), f32(1, 2, 3, 4)], hurray.int8, (1, 16, 4),
                     quantization=paged.quantization)
    assert dense_q.quantization == pc
    nf4 = hurray.NF4(double_quant=True, first_buffer_index=5)
    t = Tensor([owned(bytes(32)), owned(bytes(4)), owned(bytes(4)), owned(bytes(1024))],
               hurray.uint4, (64,), quantization=nf4)
    assert (t.quantization.absmax_buffer_index, t.quantization.nested_absmax_buffer_index,
            t.quantization.quant_map_buffer_index) == (1, 2, 3)
    q = hurray.PerTensorAffine(scale=2.0, zero_point=0)
    assert Tensor(owned(bytes(4)), hurray.int8, (4,), quantization=q).quantization == q


def block_paged():
    return Tensor([owned(bytes(4 * 8 * 4)), u64(0, 1, 3), u64(0, 2, 1)], hurray.float32,
                  (2, 16), layout=BlockPagedLayout(page_size=8, num_pages=4, num_seqs=2,
                                                   num_blocks=3))


def constructible_tensors():
    f = hurray.float32
    yield "row_major", Tensor(f32(*range(6)), f, (2, 3))
    yield "col_major", Tensor(f32(*range(6)), f, (2, 3), layout=ColMajorLayout())
    yield "strided", Tensor(f32(*range(12)), f, (2, 3), layout=StridedLayout([1, 4]),
                            byte_offset=4)
    yield "tiled", Tensor(f32(*range(16)), f, (4, 4),
                          layout=TiledLayout([2, 2], [8, 2], [2, 1]))
    yield "morton", Tensor(f32(*range(16)), f, (4, 4), layout=MortonLayout())
    yield "hilbert", Tensor(f32(*range(16)), f, (4, 4), layout=HilbertLayout())
    yield "coo", Tensor([f32(1, 2), u64(0, 1, 1, 0)], f, (2, 2), layout=CooLayout(nnz=2))
    yield "csr", Tensor([f32(1), u64(1), u64(0, 1, 1)], f, (2, 2), layout=CsrLayout(nnz=1))
    yield "csc", Tensor([f32(1), u64(1), u64(0, 0, 1)], f, (2, 2), layout=CscLayout(nnz=1))
    yield "csf", Tensor([f32(1, 2), u64(0, 1), u64(1), u64(0, 2), u64(0, 1)], f, (2, 2),
                        layout=CsfLayout(nnz=2, fiber_counts=[1]))
    yield "block_paged", block_paged()
    yield "private", Tensor([f32(1), f32(2, 3)], f, (3,),
                            layout=PrivateExtensionLayout(0xF3, 7, b"abc"))
    yield "unknown", Tensor([f32(1)], f, (1,), layout=UnknownLayout(0x40, b"\x01\x02"))
    yield "sections", Tensor(
        [owned(bytes(16)), f32(1, 2, 3, 4)], hurray.int8, (4, 4),
        quantization=hurray.PerChannelAffine(axis=1),
        statistics=hurray.Statistics(min=-1.0, max=3.0, nan_count=0),
        shard=hurray.Shard(0, 2, [8, 4], [0, 0]))
    yield "dynamic", Tensor(owned(bytes(64)), f, (None, 4))
    yield "device", Tensor(f32(1), f, (1,), device="cuda", device_id=1)


@pytest.mark.parametrize("name,t", list(constructible_tensors()), ids=lambda x: x
                         if isinstance(x, str) else "")
def test_REQ_TENSOR_REBUILD_EQUAL(name, t):
    rebuilt = Tensor([memoryview(bytes(h.size)) if t.device.kind != "cpu" else t.buffer(i)
                      for i, h in enumerate(t.buffer_handles)],
                     t.dtype, t.shape, layout=t.layout, quantization=t.quantization,
                     statistics=t.statistics, shard=t.shard, device=t.device,
                     byte_offset=t.byte_offset, copy=True)
    # alignment is exempt (a copy may honestly declare less): compare the rest
    a, b = t.descriptor, rebuilt.descriptor
    assert [h.size for h in a.buffer_handles] == [h.size for h in b.buffer_handles]
    shared = Tensor([t.buffer(i) for i in range(t.buffer_count)] if t.device.kind == "cpu"
                    else [memoryview(bytes(h.size)) for h in t.buffer_handles],
                    t.dtype, t.shape, layout=t.layout, quantization=t.quantization,
                    statistics=t.statistics, shard=t.shard, device=t.device,
                    byte_offset=t.byte_offset)
    if t.device.kind == "cpu":
        assert shared.descriptor == t.descriptor
    assert (b.dtype, b.shape, b.layout, b.quantization, b.statistics, b.shard, b.device,
            b.byte_offset) == (a.dtype, a.shape, a.layout, a.quantization, a.statistics,
                               a.shard, a.device, a.byte_offset)
    assert rebuilt.layout == t.layout and type(rebuilt.layout) is type(t.layout)


def test_REQ_TENSOR_DESCRIPTOR_agrees_and_encodes():
    for _, t in constructible_tensors():
        d = t.descriptor
        assert d == t.descriptor  # equal each time
        for attr in ("dtype", "shape", "ndim", "size", "layout", "buffer_handles",
                     "buffer_count", "device", "quantization", "shard", "statistics",
                     "byte_offset"):
            assert getattr(d, attr) == getattr(t, attr), attr
        assert hurray.Descriptor.decode(d.encode()) == d  # device_id is not on the wire
        assert len(d.encode()) == d.encoded_len


def test_REQ_TENSOR_SOURCE_LIFETIME_refcounts_balance():
    b = owned(bytes(64))
    before = sys.getrefcount(b)
    ts = [Tensor(b, hurray.float32, (4,)) for _ in range(100)]
    assert sys.getrefcount(b) == before + 100  # each tensor holds one export of it
    del ts
    assert sys.getrefcount(b) == before
    for _ in range(100):  # failed constructions release what they took
        with pytest.raises(hurray.InvalidDescriptorError):
            Tensor(b, hurray.float32, (40,))
    assert sys.getrefcount(b) == before


def test_REQ_TENSOR_REPR_shows_declaration():
    t = Tensor([f32(1, 2), u64(0, 1, 1, 0)], hurray.float32, (2, 2), layout=CooLayout(nnz=2),
               device="cuda", device_id=1)
    text = repr(t)
    for part in ("hurray.Tensor(", "dtype=hurray.float32", "shape=(2, 2)",
                 "layout=CooLayout(nnz=2)", "device='cuda:1'"):
        assert part in text
    q = Tensor(owned(bytes(4)), hurray.int8, (4,),
               quantization=hurray.PerTensorAffine(scale=0.5, zero_point=0))
    assert "quantization=PerTensorAffine(" in repr(q)
    assert str(t) == repr(t)
