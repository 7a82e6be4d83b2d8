"""The layout hierarchy. Seed § Layout Descriptor Classes; docs/spec/memory-layout.md,
block-paged.md."""
import array
import struct

import pytest

import hurray
from wire import descriptor

H = hurray
NAMED = {  # memory-layout.md § Layout tags: tag -> (name, class, dense, virtual)
    0x01: ("row_major", H.RowMajorLayout, True, False),
    0x02: ("col_major", H.ColMajorLayout, True, False),
    0x03: ("strided", H.StridedLayout, True, False),
    0x04: ("tiled", H.TiledLayout, True, False),
    0x05: ("morton", H.MortonLayout, True, False),
    0x06: ("hilbert", H.HilbertLayout, True, False),
    0x10: ("coo", H.CooLayout, False, False),
    0x11: ("csr", H.CsrLayout, False, False),
    0x12: ("csc", H.CscLayout, False, False),
    0x13: ("csf", H.CsfLayout, False, False),
    0x20: ("block_paged", H.BlockPagedLayout, False, False),
    0x30: ("composite", H.CompositeLayout, False, True),
}
FROZEN_NAMES = {"row_major", "col_major", "strided", "tiled", "morton", "hilbert", "coo", "csr",
                "csc", "csf", "block_paged", "composite", "extension"}


def examples():
    """One instance of every constructible class (rank 2 where rank matters)."""
    return [
        H.RowMajorLayout(), H.ColMajorLayout(), H.StridedLayout([3, 1]),
        H.TiledLayout([2, 2], [8, 2], [2, 1]), H.MortonLayout(), H.HilbertLayout(),
        H.CooLayout(4), H.CsrLayout(nnz=4), H.CscLayout(nnz=4),
        H.CsfLayout(5, [2]), H.BlockPagedLayout(16, 8, 2, 5),
        H.CompositeLayout("overlay", "add", member_count=2),
        H.PrivateExtensionLayout(0xF3, 7, b"\x01\x02"), H.UnknownLayout(0x40, b"abc"),
    ]


# ---- hierarchy and base ---------------------------------------------------------------

def test_REQ_LAYOUT_HIERARCHY_every_class_is_a_layout():
    for layout in examples():
        assert isinstance(layout, H.Layout)
    classes = [c for (_, c, _, _) in NAMED.values()] + [H.PrivateExtensionLayout, H.UnknownLayout]
    assert len(set(classes)) == 14
    for cls in classes:
        assert cls.__bases__ == (H.Layout,)


def test_REQ_LAYOUT_BASE_NOT_CONSTRUCTIBLE():
    with pytest.raises(TypeError):
        H.Layout()

    class Sub(H.Layout):  # a Python subclass cannot manufacture one either
        pass

    with pytest.raises(TypeError):
        Sub()


def test_REQ_LAYOUT_BASE_ONCE_base_implements_shared_properties():
    for attr in ("tag", "name", "buffer_count", "is_dense", "is_virtual",
                 "validate_against_shape"):
        assert attr in vars(H.Layout), attr
        for layout in examples():
            assert attr not in vars(type(layout)), (type(layout), attr)


@pytest.mark.parametrize("tag", sorted(NAMED))
def test_REQ_LAYOUT_NAMES_frozen_names_dense_virtual(tag):
    name, cls, dense, virtual = NAMED[tag]
    layout = next(x for x in examples() if type(x) is cls)
    assert layout.tag == tag
    assert layout.name == name and name in FROZEN_NAMES
    assert layout.is_dense is dense
    assert layout.is_virtual is virtual


def test_REQ_LAYOUT_PRIVATE_UNKNOWN_DISTINCT_share_name_differ_by_class():
    p = H.PrivateExtensionLayout(0xF0, 1)
    u = H.UnknownLayout(0x07)
    assert p.name == u.name == "extension"
    assert type(p) is not type(u)
    assert not isinstance(p, H.UnknownLayout) and not isinstance(u, H.PrivateExtensionLayout)


def test_REQ_LAYOUT_BUFFER_COUNT():
    counts = {
        H.RowMajorLayout(): 1, H.StridedLayout([1]): 1, H.CooLayout(1): 2, H.CsrLayout(1): 3,
        H.CscLayout(1): 3, H.BlockPagedLayout(1, 1, 1, 1): 3,
        H.CsfLayout(3, []): 3, H.CsfLayout(3, [1, 2]): 7,  # 2*rank+1
    }
    for layout, n in counts.items():
        assert layout.buffer_count == n, layout
    assert H.CompositeLayout("group", member_count=1).buffer_count == 0  # a known zero
    assert H.PrivateExtensionLayout(0xF1, 0).buffer_count is None  # unknowable
    assert H.UnknownLayout(0x44).buffer_count is None


# ---- value semantics ---------------------------------------------------------------------

def test_REQ_LAYOUT_VALUE_SEMANTICS_equal_by_value_and_hash():
    for a, b in zip(examples(), examples()):
        assert a is not b
        assert a == b and not (a != b)
        assert hash(a) == hash(b)
    assert len(set(examples()) | set(examples())) == 14
    assert H.CsrLayout(4) != H.CsrLayout(5)
    assert H.CsrLayout(4) != H.CscLayout(4)
    assert H.StridedLayout([1, 2]) != H.StridedLayout([1, 2, 3])
    assert H.StridedLayout([1, 2]) != H.StridedLayout([2, 1])
    assert H.PrivateExtensionLayout(0xF1, 1, b"a") != H.PrivateExtensionLayout(0xF1, 2, b"a")
    assert H.PrivateExtensionLayout(0xF1, 1, b"a") != H.PrivateExtensionLayout(0xF1, 1, b"b")
    assert H.PrivateExtensionLayout(0xF1, 1, b"a") != H.PrivateExtensionLayout(0xF2, 1, b"a")
    assert H.UnknownLayout(0x40, b"x") != H.UnknownLayout(0x41, b"x")


def test_REQ_LAYOUT_VALUE_SEMANTICS_immutable():
    layout = H.CsrLayout(4)
    for attr in ("nnz", "tag", "name", "buffer_count"):
        with pytest.raises(AttributeError):
            setattr(layout, attr, 1)
    with pytest.raises(AttributeError):
        layout.extra = 1
    with pytest.raises(TypeError):
        H.CsrLayout.nnz = 3


def test_REQ_LAYOUT_NO_STR_EQ():
    assert (H.CsrLayout(4) == "csr") is False
    assert H.CsrLayout(4) != "csr"
    assert H.CsrLayout(4).__eq__("csr") is NotImplemented
    assert (H.RowMajorLayout() == "row_major") is False


def test_REQ_LAYOUT_REPR_forms():
    assert repr(H.CsrLayout(nnz=4)) == "CsrLayout(nnz=4)"
    assert repr(H.CooLayout(0)) == "CooLayout(nnz=0)"
    assert repr(H.RowMajorLayout()) == "RowMajorLayout()"
    assert repr(H.StridedLayout([3, -1])) == "StridedLayout(strides=(3, -1))"
    assert repr(H.CompositeLayout("partition", member_count=4)) == \
        "CompositeLayout(rule='partition', combine=None, member_count=4)"
    assert repr(H.PrivateExtensionLayout(0xF3, 7, b"x")) == \
        "PrivateExtensionLayout(tag=0xF3, extension_layout_id=7, extension_data=b'x')"
    assert repr(H.UnknownLayout(0x40, b"")) == "UnknownLayout(tag=0x40, params=b'')"
    for layout in examples():  # every repr evaluates back to an equal layout
        assert eval(repr(layout), vars(H)) == layout


# ---- parameters ---------------------------------------------------------------------------

def test_REQ_LAYOUT_STRIDES_ELEMENTS_signed_zero_negative():
    s = H.StridedLayout([-4, 0, 1])
    assert s.strides == (-4, 0, 1)
    t = H.TiledLayout([2, 3], [-6, 0], [3, -1])
    assert (t.tile_shape, t.outer_strides, t.inner_strides) == ((2, 3), (-6, 0), (3, -1))
    assert H.StridedLayout([]).strides == ()
    with pytest.raises(ValueError):
        H.StridedLayout([2**63])
    with pytest.raises(TypeError):
        H.StridedLayout("12")


def test_REQ_LAYOUT_NNZ_REQUIRED_on_sparse_constructors():
    for cls in (H.CooLayout, H.CsrLayout, H.CscLayout):
        with pytest.raises(TypeError):
            cls()
        assert cls(nnz=7).nnz == 7
    with pytest.raises(TypeError):
        H.CsfLayout(fiber_counts=[1])
    with pytest.raises(ValueError):
        H.CooLayout(-1)


def test_tiled_parameters_checked():
    with pytest.raises(ValueError):
        H.TiledLayout([2], [1, 1], [1])
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.TiledLayout([0, 2], [1, 1], [1, 1])
    assert info.value.code == "CONSTRAINT" and info.value.field == "layout.tile_shape[0]"
    with pytest.raises(H.InvalidDescriptorError):
        H.TiledLayout([], [], [])  # rank >= 1


def test_csf_parameters():
    c = H.CsfLayout(6, [2, 4])
    assert c.mode_order == (0, 1, 2) and c.fiber_counts == (2, 4) and c.nnz == 6
    assert c.ndim == 3
    assert H.CsfLayout(6, [2, 4], [2, 0, 1]).mode_order == (2, 0, 1)
    with pytest.raises(ValueError):
        H.CsfLayout(6, [2, 4], [0, 1])
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.CsfLayout(6, [2, 4], [0, 1, 1])
    assert info.value.code == "CONSTRAINT"
    with pytest.raises(H.InvalidDescriptorError):
        H.CsfLayout(1, [2])  # a level below the previous one: an empty fiber
    assert H.CsfLayout(0, [0, 0]).buffer_count == 7


def test_block_paged_parameters():
    b = H.BlockPagedLayout(page_size=16, num_pages=8, num_seqs=2, num_blocks=5)
    assert (b.page_size, b.num_pages, b.num_seqs, b.num_blocks) == (16, 8, 2, 5)
    assert repr(b) == "BlockPagedLayout(page_size=16, num_pages=8, num_seqs=2, num_blocks=5)"
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.BlockPagedLayout(0, 8, 2, 5)
    assert info.value.field == "layout.page_size"


def test_REQ_LAYOUT_COMPOSITE_READABLE_rule_combine_enumerations():
    o = H.CompositeLayout("overlay", "max", member_count=3)
    assert (o.rule, o.combine, o.member_count) == ("overlay", "max", 3)
    for rule in ("partition", "group"):
        c = H.CompositeLayout(rule, member_count=2)
        assert c.rule == rule and c.combine is None  # no raw "not applicable" byte
        with pytest.raises(H.InvalidDescriptorError) as info:
            H.CompositeLayout(rule, "add", member_count=2)
        assert info.value.code == "COMBINATION"
    for op in ("replace", "add", "max", "min"):
        assert H.CompositeLayout("overlay", op, member_count=1).combine == op
    with pytest.raises(H.InvalidDescriptorError):
        H.CompositeLayout("overlay", member_count=2)  # combine required for overlay
    with pytest.raises(ValueError):
        H.CompositeLayout("stack", member_count=2)
    with pytest.raises(ValueError):
        H.CompositeLayout("overlay", "mul", member_count=2)
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.CompositeLayout("group", member_count=0)
    assert info.value.code == "CONSTRAINT"
    with pytest.raises(TypeError):
        H.CompositeLayout("group")  # member_count is required
    assert not hasattr(o, "combine_tag") and not hasattr(o, "rule_tag")


def test_REQ_LAYOUT_PRIVATE_FIELDS():
    p = H.PrivateExtensionLayout(0xFE, 2**32 - 1, bytearray(b"data"))
    assert (p.tag, p.extension_layout_id, p.extension_data) == (0xFE, 2**32 - 1, b"data")
    assert type(p.extension_data) is bytes
    assert H.PrivateExtensionLayout(0xF0, 0).extension_data == b""
    for bad in (0x11, 0x40):
        with pytest.raises(ValueError):
            H.PrivateExtensionLayout(bad, 0)
    with pytest.raises(H.InvalidDescriptorError):
        H.PrivateExtensionLayout(0xFF, 0)
    with pytest.raises(ValueError):
        H.PrivateExtensionLayout(0xF0, 2**32)


@pytest.mark.parametrize("tag", sorted(NAMED))
def test_REQ_LAYOUT_UNKNOWN_CONSTRUCTIBLE_rejects_named_tags(tag):
    with pytest.raises(ValueError) as info:
        H.UnknownLayout(tag, b"")
    assert NAMED[tag][0] in str(info.value)


def test_REQ_LAYOUT_UNKNOWN_CONSTRUCTIBLE_reserved_only():
    u = H.UnknownLayout(0x07, b"\x00" * 3)
    assert (u.tag, u.params, u.name) == (0x07, b"\x00" * 3, "extension")
    for tag in (0xF0, 0xFE):
        with pytest.raises(ValueError):
            H.UnknownLayout(tag)
    for tag in (0x00, 0xFF):
        with pytest.raises(H.InvalidDescriptorError) as info:
            H.UnknownLayout(tag)
        assert info.value.code == "INVALID_TAG"


# ---- tag classification (HR-LAYOUT-2) --------------------------------------------------------

def test_REQ_LAYOUT_TAG_KIND_partitions_the_byte_space():
    kinds = {t: H.layout_tag_kind(t) for t in range(256)}
    assert set(kinds.values()) == {"named", "reserved", "private", "invalid"}
    assert {t for t, k in kinds.items() if k == "named"} == set(NAMED)
    assert {t for t, k in kinds.items() if k == "private"} == set(range(0xF0, 0xFF))
    assert {t for t, k in kinds.items() if k == "invalid"} == {0x00, 0xFF}
    with pytest.raises(ValueError):
        H.layout_tag_kind(256)
    with pytest.raises(TypeError):
        H.layout_tag_kind("csr")


# ---- validate_against_shape (HR-LAYOUT-50) ----------------------------------------------------

def test_REQ_LAYOUT_VALIDATE_SHAPE_rank_and_extents():
    H.CsrLayout(4).validate_against_shape([3, 3])
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.CsrLayout(4).validate_against_shape([3, 3, 3])
    assert info.value.code == "CONSTRAINT"
    with pytest.raises(H.InvalidDescriptorError):
        H.CsrLayout(10).validate_against_shape([3, 3])  # nnz > N
    H.MortonLayout().validate_against_shape((4, 8))
    with pytest.raises(H.InvalidDescriptorError):
        H.MortonLayout().validate_against_shape((4, 6))
    with pytest.raises(H.InvalidDescriptorError):
        H.HilbertLayout().validate_against_shape((4, 8))
    H.RowMajorLayout().validate_against_shape(())
    with pytest.raises(H.InvalidDescriptorError):
        H.StridedLayout([1, 1]).validate_against_shape([2])  # parameters for rank 2
    with pytest.raises(H.InvalidDescriptorError):
        H.BlockPagedLayout(4, 4, 2, 2).validate_against_shape([3, 8])  # num_seqs != shape[0]


def test_REQ_LAYOUT_VALIDATE_SHAPE_dynamic_dimension_never_violates():
    H.CsrLayout(10**9).validate_against_shape([None, 3])
    H.MortonLayout().validate_against_shape([None, 8])
    H.HilbertLayout().validate_against_shape([None, 8])
    H.BlockPagedLayout(4, 4, 2, 2).validate_against_shape([None, None, 3])
    H.CsfLayout(100, [10], [1, 0]).validate_against_shape([None, None])


def test_validate_against_shape_rejects_bad_shapes():
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.RowMajorLayout().validate_against_shape([-1])
    assert info.value.code == "RANGE" and info.value.field == "shape[0]"
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.RowMajorLayout().validate_against_shape([2**63])
    assert info.value.code == "RANGE"
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.RowMajorLayout().validate_against_shape([1] * 65)
    assert info.value.code == "LIMIT"
    with pytest.raises(TypeError):
        H.RowMajorLayout().validate_against_shape(["a"])
    with pytest.raises(TypeError):
        H.RowMajorLayout().validate_against_shape(3)


# ---- block-paged checks (HR-PAGED-2, -3) ------------------------------------------------------

def u64(*values):
    return struct.pack(f"<{len(values)}Q", *values)


def test_REQ_PAGED_INDEX_BUFFERS_valid_and_aliasing():
    b = H.BlockPagedLayout(page_size=4, num_pages=3, num_seqs=2, num_blocks=4)
    b.validate_index_buffers(u64(0, 2, 4), u64(0, 1, 0, 2))  # page 0 shared: aliasing
    b.validate_index_buffers(bytearray(u64(0, 2, 4)), memoryview(u64(0, 1, 0, 2)))
    b.validate_index_buffers(array.array("Q", [0, 2, 4]), array.array("Q", [2, 2, 2, 2]))


@pytest.mark.parametrize(
    "seq_ptr,table,code",
    [
        (u64(1, 2, 4), u64(0, 1, 0, 2), "INDEX"),  # 1: seq_ptr[0] = 0
        (u64(0, 3, 2, 4)[:24], u64(0, 1, 0, 2), "INDEX"),  # 2: non-decreasing
        (u64(0, 2, 3), u64(0, 1, 0, 2), "INDEX"),  # 3: seq_ptr[num_seqs] = num_blocks
        (u64(0, 2, 4), u64(0, 1, 3, 2), "INDEX"),  # 4: block_table[j] < num_pages
        (u64(0, 2), u64(0, 1, 0, 2), "BUFFER_SIZE"),
        (u64(0, 2, 4), u64(0, 1, 0), "BUFFER_SIZE"),
    ],
)
def test_REQ_PAGED_INDEX_BUFFERS_invariants(seq_ptr, table, code):
    b = H.BlockPagedLayout(page_size=4, num_pages=3, num_seqs=2, num_blocks=4)
    with pytest.raises(H.InvalidDescriptorError) as info:
        b.validate_index_buffers(seq_ptr, table)
    assert info.value.code == code


def test_validate_index_buffers_needs_buffers():
    b = H.BlockPagedLayout(4, 3, 2, 4)
    with pytest.raises(TypeError):
        b.validate_index_buffers([0, 2, 4], [0, 1, 0, 2])
    with pytest.raises(TypeError):
        b.validate_index_buffers(u64(0, 2, 4))


def test_REQ_PAGED_QUANT_COMPAT_takes_the_object():
    b = H.BlockPagedLayout(4, 3, 2, 4)
    b.validate_quantization_compatibility(H.PerTensorAffine(0.5))
    b.validate_quantization_compatibility(H.PerChannelAffine(2, first_buffer_index=3))
    b.validate_quantization_compatibility(H.PerChannelAffine(3), ndim=4)
    for q in (H.PerChannelAffine(1), H.BlockAffine(2, 32), H.NF4(), H.MX(2),
              H.NVFP4(2, 1.0)):
        with pytest.raises(H.InvalidDescriptorError) as info:
            b.validate_quantization_compatibility(q)
        assert info.value.code == "COMBINATION"
    with pytest.raises(H.InvalidDescriptorError) as info:
        b.validate_quantization_compatibility(H.PerChannelAffine(3), ndim=3)
    assert info.value.code == "RANGE"
    with pytest.raises(TypeError):
        b.validate_quantization_compatibility(0x01)  # not a scheme tag
    with pytest.raises(TypeError):
        b.validate_quantization_compatibility("per_tensor_affine")


# ---- layouts read from descriptors --------------------------------------------------------------

def _decode_layout(layout, params, shape, buffers, dtype=0x0C):
    return H.Descriptor.decode(
        descriptor(dtype=dtype, layout=layout, params=params, shape=shape, buffers=buffers)
    ).layout


def test_layouts_from_descriptors_map_to_their_classes():
    csr = _decode_layout(0x11, u64(2), (3, 3), [(8, 6, 1), (16, 3, 1), (32, 3, 1)])
    assert type(csr) is H.CsrLayout and csr == H.CsrLayout(2)
    st = _decode_layout(0x03, struct.pack("<2q", 3, 1), (2, 3), [(24, 6, 1)])
    assert st == H.StridedLayout([3, 1]) and hash(st) == hash(H.StridedLayout([3, 1]))
    csf = _decode_layout(0x13, u64(3, 2) + bytes([1, 0]), (2, 2),
                         [(12, 6, 1), (16, 3, 1), (16, 3, 1), (24, 3, 1), (24, 3, 1)])
    assert csf == H.CsfLayout(3, [2], [1, 0]) and csf.buffer_count == 5
    priv = _decode_layout(0xF5, struct.pack("<II", 9, 0) + b"xyz", (2,), [])
    assert type(priv) is H.PrivateExtensionLayout
    assert priv == H.PrivateExtensionLayout(0xF5, 9, b"xyz")
    unk = _decode_layout(0x50, b"opaque!", (2,), [])
    assert type(unk) is H.UnknownLayout and unk == H.UnknownLayout(0x50, b"opaque!")
    assert unk.buffer_count is None


def test_layout_may_be_fresh_per_access_but_equal():
    d = H.Descriptor.decode(descriptor(layout=0x10, params=u64(1), shape=(4,),
                                       buffers=[(4, 6, 1), (8, 3, 1)]))
    assert d.layout == d.layout
    assert hash(d.layout) == hash(d.layout)
