"""hurray.Descriptor, hurray.BufferHandle, hurray.Statistics, hurray.Shard.
Seed § Descriptor Encoding, § Buffer Handles, § Multi-buffer tensors (optional
sections); docs/spec/descriptor.md, buffer-protocol.md, sections.md."""
import gc
import struct
import sys
import weakref

import pytest

import hurray as H
import wire
from wire import descriptor, float32_matrix, section

SURFACE = ("dtype", "shape", "ndim", "size", "layout", "buffer_handles", "buffer_count",
           "device", "quantization", "shard", "statistics", "byte_offset", "version",
           "encoded_len")


def rich():
    """int8 CSR with dynamic rows, per-tensor quantization, statistics, shard and an
    unknown section."""
    return descriptor(
        dtype=0x02,
        shape=(None, 4),
        layout=0x11,
        params=struct.pack("<Q", 3),
        buffers=[(3, 6, 1), (24, 3, 1), (40, 3, 1)],
        sections=[
            section(0x01, wire.per_tensor(0.5, 1), flags=1),
            section(0x02, wire.statistics(-1.0, 2.0, 0)),
            section(0x03, wire.shard(1, 2, (8, 4), (4, 0))),
            section(0x40, b"carried verbatim"),
        ],
    )


def test_REQ_DESC_SURFACE_exposes_every_property():
    d = H.Descriptor.decode(float32_matrix())
    for name in SURFACE:
        assert hasattr(d, name), name
    assert d.dtype is H.float32
    assert d.shape == (2, 3) and d.ndim == 2 and d.size == 6
    assert d.layout == H.RowMajorLayout()
    assert d.buffer_count == 1 and len(d.buffer_handles) == 1
    assert d.device == H.Device("cpu")
    assert d.quantization is None and d.shard is None and d.statistics is None
    assert d.byte_offset == 0 and d.version == (1, 0)
    assert d.role is None and d.unknown_sections == ()


def test_REQ_DESC_SURFACE_sections():
    d = H.Descriptor.decode(rich())
    assert d.dtype is H.int8
    assert d.shape == (None, 4) and d.size is None  # dynamic: count unknown
    assert d.layout == H.CsrLayout(3)
    assert d.quantization == H.PerTensorAffine(0.5, 1)
    assert type(d.quantization) is H.PerTensorAffine  # the class the constructor accepts
    assert d.statistics == H.Statistics(min=-1.0, max=2.0, nan_count=0)
    assert d.shard == H.Shard(1, 2, (8, 4), (4, 0))
    assert d.unknown_sections == ((0x40, 0, b"carried verbatim"),)
    assert [h.size for h in d.buffer_handles] == [3, 24, 40]


def test_REQ_DESC_NOT_CONSTRUCTIBLE():
    with pytest.raises(TypeError):
        H.Descriptor()
    with pytest.raises(TypeError):
        H.Descriptor(H.float32, (2, 3))


def test_REQ_DESC_DECODE_RETURNS_DESCRIPTOR():
    d = H.Descriptor.decode(float32_matrix())
    assert type(d) is H.Descriptor
    assert not hasattr(d, "buffer") and not hasattr(d, "__dlpack__")


@pytest.mark.parametrize("make", [float32_matrix, rich])
def test_REQ_DESC_ROUNDTRIP_encode_is_the_wire_bytes(make):
    data = make()
    d = H.Descriptor.decode(data)
    assert d.encode() == data
    assert H.Descriptor.decode(d.encode()) == d


def test_REQ_DESC_TRAILING_BYTES_ignored():
    data = float32_matrix()
    d = H.Descriptor.decode(data + b"\xAB" * 100)
    assert d == H.Descriptor.decode(data)
    assert d.encode() == data
    d = H.Descriptor.decode(memoryview(bytearray(data + b"xyz")))
    assert d.encoded_len == len(data)
    # an input of 4 KiB or more is decoded with the GIL released (a short one keeps it):
    # the same descriptor, the same errors
    long = H.Descriptor.decode(data + b"\xAB" * 8192)
    assert long == d and long.encode() == data
    with pytest.raises(H.InvalidDescriptorError):
        H.Descriptor.decode(b"HRYX" + data[4:] + bytes(8192))


@pytest.mark.parametrize("make", [float32_matrix, rich])
def test_REQ_DESC_ENCODED_LEN_is_len_encode(make):
    d = H.Descriptor.decode(make())
    assert d.encoded_len == len(d.encode()) == len(make())


def test_descriptor_equality():
    a, b = H.Descriptor.decode(rich()), H.Descriptor.decode(rich())
    assert a == b and not (a != b)
    assert a != H.Descriptor.decode(float32_matrix())
    assert H.Descriptor.decode(float32_matrix(align_log2=6)) != \
        H.Descriptor.decode(float32_matrix(align_log2=7))
    assert a != "descriptor"
    with pytest.raises(TypeError):
        hash(a)  # sections may carry floats
    with pytest.raises(AttributeError):
        a.shape = (1,)


def test_descriptor_decode_errors_carry_code_and_field():
    data = float32_matrix()
    cases = [
        (data[:10], "TRUNCATED"),
        (b"HRYX" + data[4:], "BAD_MAGIC"),
        (data[:-8], "TRUNCATED"),
        (descriptor(shape=(2, 3), buffers=[(23, 6, 1)]), "BUFFER_SIZE"),
        (descriptor(shape=(2, 3), buffers=[(24, 6, 1), (8, 6, 1)]), "BUFFER_COUNT"),
        (descriptor(shape=(2, 3), buffers=[(24, 13, 1)]), "ALIGNMENT"),
        (descriptor(shape=(2, 3), buffers=[(24, 6, 9)]), "RESERVED_TAG"),
        (descriptor(device=0x01, memory_class=0x04), "COMBINATION"),
        (descriptor(shape=(2**63,)), "RANGE"),
    ]
    for blob, code in cases:
        with pytest.raises(H.InvalidDescriptorError) as info:
            H.Descriptor.decode(blob)
        assert info.value.code == code, (code, str(info.value))
        assert info.value.field


def test_descriptor_decode_limits_are_keywords():
    data = float32_matrix()
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.Descriptor.decode(data, max_descriptor_bytes=64)
    assert info.value.code == "LIMIT"
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.Descriptor.decode(data, max_rank=1)
    assert info.value.code == "LIMIT"
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.Descriptor.decode(data, max_buffer_bytes=16)
    assert info.value.code == "LIMIT"
    H.Descriptor.decode(data, max_descriptor_bytes=72, max_rank=2, max_buffer_bytes=24,
                        max_composite_members=None)
    with pytest.raises(TypeError):
        H.Descriptor.decode(data, 64)  # limits are keyword-only
    with pytest.raises(TypeError):
        H.Descriptor.decode(data, max_depth=3)
    with pytest.raises(TypeError):
        H.Descriptor.decode("HRYD")


def test_composite_member_limit():
    head = descriptor(layout=0x30, params=struct.pack("<BBHI", 3, 0, 0, 5), shape=(2,))
    assert H.Descriptor.decode(head).layout == H.CompositeLayout("group", member_count=5)
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.Descriptor.decode(head, max_composite_members=4)
    assert info.value.code == "LIMIT"


def test_private_device_descriptor():
    d = H.Descriptor.decode(descriptor(device=0xF4, memory_class=0xF9, buffers=[(4, 6, 1)]))
    assert d.device.is_private and d.device.kind == "private"
    assert d.device.tag == 0xF4 and d.device.memory_class_tag == 0xF9


# ---- BufferHandle (requirements § Buffer Handles; buffer-protocol.md HR-BUF-1) ------------------------

def test_REQ_BUFHANDLE_ONE_PER_ENTRY_in_descriptor_order():
    d = H.Descriptor.decode(rich())
    hs = d.buffer_handles
    assert type(hs) is tuple and len(hs) == d.buffer_count == 3
    assert [h.index for h in hs] == [0, 1, 2]
    assert [(h.size, h.alignment, h.sync_mode) for h in hs] == \
        [(3, 64, "producer_synced"), (24, 8, "producer_synced"), (40, 8, "producer_synced")]


def test_REQ_BUFHANDLE_DEVICE_SAME_object_as_descriptor_device():
    d = H.Descriptor.decode(rich())
    for h in d.buffer_handles:
        assert h.device is d.device


def test_REQ_BUFHANDLE_IMMUTABLE_and_REQ_BUFHANDLE_SYNC_READONLY():
    h = H.Descriptor.decode(float32_matrix()).buffer_handles[0]
    for attr in ("index", "size", "alignment", "sync_mode", "device"):
        with pytest.raises(AttributeError):
            setattr(h, attr, 0)
    with pytest.raises(AttributeError):
        h.extra = 1


def test_REQ_BUFHANDLE_NOT_CONSTRUCTIBLE():
    with pytest.raises(TypeError):
        H.BufferHandle()
    with pytest.raises(TypeError):
        H.BufferHandle(0, 64, 64, "producer_synced", H.Device("cpu"))


def test_REQ_BUFHANDLE_VALUE_EQ_HASH():
    a = H.Descriptor.decode(float32_matrix()).buffer_handles[0]
    b = H.Descriptor.decode(float32_matrix()).buffer_handles[0]
    assert a is not b and a == b and hash(a) == hash(b) and len({a, b}) == 1
    c = H.Descriptor.decode(float32_matrix(align_log2=7)).buffer_handles[0]
    assert a != c
    e = H.Descriptor.decode(descriptor(shape=(2, 3), buffers=[(24, 6, 2)])).buffer_handles[0]
    assert e.sync_mode == "event" and a != e
    s = H.Descriptor.decode(descriptor(shape=(2, 3), buffers=[(24, 6, 3)])).buffer_handles[0]
    assert s.sync_mode == "stream"
    g = H.Descriptor.decode(descriptor(device=2, shape=(2, 3), buffers=[(24, 6, 1)]))
    assert g.buffer_handles[0] != a  # device differs
    assert a != (0, 24, 64)


def test_REQ_BUFHANDLE_NO_REFERENCE_to_tensor_or_buffer():
    data = bytearray(float32_matrix())
    d = H.Descriptor.decode(data)
    h = d.buffer_handles[0]
    referents = gc.get_referents(h)
    assert all(isinstance(r, (H.Device, type)) for r in referents), referents
    ref = weakref.ref(d) if hasattr(type(d), "__weakref__") else None
    refcount = sys.getrefcount(data)
    del d
    gc.collect()
    assert ref is None or ref() is None
    assert sys.getrefcount(data) == refcount  # no buffer pinned
    assert h.size == 24  # the handle stands on its own
    data.extend(b"x")  # resizable: no export is held on the input


def test_empty_buffer_declares_alignment_one():
    d = H.Descriptor.decode(descriptor(shape=(0, 3), buffers=[(0, 0, 1)]))
    assert d.buffer_handles[0].alignment == 1 and d.size == 0
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.Descriptor.decode(descriptor(shape=(0, 3), buffers=[(0, 6, 1)]))
    assert info.value.code == "ALIGNMENT"


# ---- Statistics and Shard value objects ------------------------------------------------------

def test_statistics_values():
    s = H.Statistics(min=-1.5, max=3.0)
    assert (s.min, s.max, s.nan_count) == (-1.5, 3.0, None)
    assert H.Statistics(nan_count=4).min is None
    assert H.Statistics.__hash__ is None
    assert s == H.Statistics(-1.5, 3.0) and s != H.Statistics(-1.5, 3.0, 0)
    assert repr(s) == "Statistics(min=-1.5, max=3.0, nan_count=None)"
    with pytest.raises(ValueError):
        H.Statistics(min=1.0)
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.Statistics()
    assert info.value.code == "CONSTRAINT"  # omit the section instead
    with pytest.raises(H.InvalidDescriptorError):
        H.Statistics(2.0, 1.0)
    with pytest.raises(H.InvalidDescriptorError):
        H.Statistics(float("nan"), 1.0)


def test_shard_values():
    s = H.Shard(1, 4, [8, 8], [0, 4])
    assert (s.shard_index, s.shard_count, s.global_shape, s.global_offset) == \
        (1, 4, (8, 8), (0, 4))
    assert s == H.Shard(1, 4, (8, 8), (0, 4)) and hash(s) == hash(H.Shard(1, 4, (8, 8), (0, 4)))
    assert s != H.Shard(1, 4, (8, 8, 1), (0, 4, 0))
    with pytest.raises(H.InvalidDescriptorError):
        H.Shard(4, 4, [8], [0])
    with pytest.raises(H.InvalidDescriptorError):
        H.Shard(0, 0, [8], [0])
    with pytest.raises(ValueError):
        H.Shard(0, 1, [8, 8], [0])
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.Shard(0, 1, [2**63], [0])
    assert info.value.code == "RANGE"


def test_role_section():
    d = H.Descriptor.decode(descriptor(shape=(2,), buffers=[(8, 6, 1)],
                                       sections=[section(0x04, bytes([2]) + b"\0" * 7, 1)]))
    assert d.role == "correction"


def test_REQ_SHAPE_DYNAMIC_NONE_read_back_and_passed_back():
    d = H.Descriptor.decode(rich())
    assert d.shape == (None, 4)
    d.layout.validate_against_shape(d.shape)  # a shape read can be passed back as is
    assert all(e is None or isinstance(e, int) for e in d.shape)


def test_REQ_SECTIONS_READABLE_same_classes_the_constructors_accept():
    d = H.Descriptor.decode(rich())
    q, s, sh = d.quantization, d.statistics, d.shard
    assert H.PerTensorAffine(q.scale, q.zero_point) == q
    assert H.Statistics(s.min, s.max, s.nan_count) == s
    assert H.Shard(sh.shard_index, sh.shard_count, sh.global_shape, sh.global_offset) == sh
    assert d.buffer_count == 3
    assert eval(repr(d.layout), vars(H)) == d.layout
