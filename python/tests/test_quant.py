"""Quantization classes. Seed § Standalone quantization sections, § Multi-buffer
tensors (buffer indices); docs/spec/quantization.md."""
import math
import struct

import pytest

import hurray as H
from wire import per_channel, per_tensor


def examples():
    return [
        H.PerTensorAffine(0.5, 3),
        H.PerChannelAffine(0),
        H.PerChannelAffine(1, H.float16, H.int8),
        H.BlockAffine(1, 128),
        H.BlockAffine(0, 32, H.bfloat16, H.uint8, first_buffer_index=3),
        H.NF4(),
        H.NF4(block_size=128, double_quant=True, nested_offset=0.25),
        H.MX(1),
        H.NVFP4(1, 2.5),
    ]


CLASSES = {
    "per_tensor_affine": H.PerTensorAffine, "per_channel_affine": H.PerChannelAffine,
    "block_affine": H.BlockAffine, "nf4": H.NF4, "mx": H.MX, "nvfp4": H.NVFP4,
}


def test_REQ_QUANT_ENCODE_every_class_encodes_and_decodes_to_its_class():
    for q in examples():
        data = q.encode()
        assert isinstance(data, bytes)
        back = H.decode_quantization(data)
        assert type(back) is type(q)
        assert back == q
        assert back.encode() == data
        assert CLASSES[q.scheme] is type(q)


def test_REQ_QUANT_DECODE_DISPATCH_from_scheme_byte():
    q = H.decode_quantization(per_tensor(0.25, -3))
    assert type(q) is H.PerTensorAffine and (q.scale, q.zero_point) == (0.25, -3)
    q = H.decode_quantization(per_channel(2, 1, 2, 0x0C, 0x02))
    assert type(q) is H.PerChannelAffine
    assert (q.axis, q.scale_dtype, q.zero_point_dtype) == (2, H.float32, H.int8)
    assert (q.scale_buffer_index, q.zero_point_buffer_index) == (1, 2)
    q = H.decode_quantization(bytearray(struct.pack("<BBBxI8x", 0x05, 3, 1, 32)))
    assert type(q) is H.MX and q.axis == 3 and q.block_size == 32


def test_REQ_QUANT_ENCODE_known_bytes():
    assert H.PerTensorAffine(0.5, 3).encode() == per_tensor(0.5, 3)
    assert H.PerChannelAffine(1, H.float16, H.int8).encode() == per_channel(1, 1, 2, 0x0A, 0x02)
    assert H.NVFP4(1, 2.0).encode() == struct.pack("<BBBxIfI", 6, 1, 1, 16, 2.0, 0)
    assert H.NF4().encode() == struct.pack("<BBBBB3xIIfI", 4, 0, 1, 0xFF, 0xFF, 64, 0, 0.0, 0)


def test_decode_quantization_errors():
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.decode_quantization(per_tensor(0.5) + b"\0")  # exactly the scheme's length
    assert info.value.code == "LENGTH"
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.decode_quantization(b"\x09" + b"\0" * 15)
    assert info.value.code == "RESERVED_TAG"
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.decode_quantization(per_tensor(0.0))
    assert info.value.code == "CONSTRAINT"
    with pytest.raises(H.InvalidDescriptorError):
        H.decode_quantization(b"")
    with pytest.raises(TypeError):
        H.decode_quantization("per_tensor")


def test_REQ_QUANT_VALUE_EQ_compare_by_value():
    for a, b in zip(examples(), examples()):
        assert a is not b and a == b and not (a != b)
    assert H.PerTensorAffine(0.5) != H.PerTensorAffine(0.25)
    assert H.PerTensorAffine(0.5, 1) != H.PerTensorAffine(0.5, 2)
    assert H.PerChannelAffine(0) != H.PerChannelAffine(1)
    assert H.PerChannelAffine(0) != H.PerChannelAffine(0, first_buffer_index=3)
    assert H.MX(1) != H.NVFP4(1, 1.0)
    assert H.PerChannelAffine(0) != "per_channel_affine"
    assert H.PerChannelAffine(0).__eq__(0x02) is NotImplemented


@pytest.mark.parametrize("cls", [H.PerTensorAffine, H.NF4, H.NVFP4])
def test_REQ_QUANT_FLOAT_UNHASHABLE(cls):
    assert cls.__hash__ is None
    obj = next(q for q in examples() if type(q) is cls)
    with pytest.raises(TypeError):
        hash(obj)


@pytest.mark.parametrize("cls", [H.PerChannelAffine, H.BlockAffine, H.MX])
def test_REQ_QUANT_VALUE_EQ_integer_classes_hash_by_value(cls):
    objs = [q for q in examples() if type(q) is cls]
    for a, b in zip(objs, [q for q in examples() if type(q) is cls]):
        assert hash(a) == hash(b)
    assert len(set(objs) | {q for q in examples() if type(q) is cls}) == len(objs)


def test_quant_immutable_and_base_not_constructible():
    with pytest.raises(TypeError):
        H.Quantization()
    q = H.PerChannelAffine(0)
    with pytest.raises(AttributeError):
        q.axis = 1
    with pytest.raises(AttributeError):
        q.extra = 1


def test_buffer_indices_are_positional():
    # HR-QUANT-3: buffers L, L+1, ...; constructed objects default to L = 1.
    q = H.PerChannelAffine(0, H.float32, H.int8)
    assert (q.first_buffer_index, q.scale_buffer_index, q.zero_point_buffer_index) == (1, 1, 2)
    assert q.buffer_count == 2
    q = H.PerChannelAffine(0)
    assert (q.scale_buffer_index, q.zero_point_buffer_index, q.buffer_count) == (1, None, 1)
    q = H.BlockAffine(0, 32, zero_point_dtype=H.uint8, first_buffer_index=3)
    assert (q.scale_buffer_index, q.zero_point_buffer_index) == (3, 4)
    n = H.NF4(double_quant=True, first_buffer_index=2)
    assert (n.absmax_buffer_index, n.nested_absmax_buffer_index, n.quant_map_buffer_index) == \
        (2, 3, 4)
    assert n.buffer_count == 3
    n = H.NF4()
    assert (n.absmax_buffer_index, n.nested_absmax_buffer_index, n.quant_map_buffer_index) == \
        (1, None, None)
    assert H.MX(0).scale_buffer_index == 1 and H.NVFP4(0, 1.0).scale_buffer_index == 1
    assert H.PerTensorAffine(1.0).buffer_count == 0
    with pytest.raises(ValueError):
        H.NF4(double_quant=True, first_buffer_index=253)  # 253..255 would hit 0xFF


def test_per_tensor_affine():
    q = H.PerTensorAffine(scale=0.125, zero_point=-7)
    assert (q.scheme, q.scale, q.zero_point) == ("per_tensor_affine", 0.125, -7)
    assert repr(q) == "PerTensorAffine(scale=0.125, zero_point=-7)"
    assert H.PerTensorAffine(2).scale == 2.0
    for bad in (0.0, -1.0, math.inf, math.nan, -0.0):
        with pytest.raises(H.InvalidDescriptorError) as info:
            H.PerTensorAffine(bad)
        assert info.value.code == "CONSTRAINT"
    with pytest.raises(TypeError):
        H.PerTensorAffine("1")


def test_per_channel_and_block_affine():
    q = H.PerChannelAffine(2, scale_dtype=H.float64, zero_point_dtype=H.float32)
    assert (q.axis, q.scale_dtype, q.zero_point_dtype) == (2, H.float64, H.float32)
    assert repr(q) == ("PerChannelAffine(axis=2, scale_dtype=hurray.float64, "
                       "zero_point_dtype=hurray.float32)")
    assert H.PerChannelAffine(0).scale_dtype is H.float32
    with pytest.raises(H.InvalidDescriptorError) as info:
        H.PerChannelAffine(0, scale_dtype=H.int8)
    assert info.value.code == "COMBINATION"
    with pytest.raises(H.InvalidDescriptorError):
        H.PerChannelAffine(0, zero_point_dtype=H.float64)
    with pytest.raises(TypeError):
        H.PerChannelAffine(0, scale_dtype="float32")
    b = H.BlockAffine(1, 64)
    assert (b.axis, b.block_size, b.scheme) == (1, 64, "block_affine")
    with pytest.raises(H.InvalidDescriptorError):
        H.BlockAffine(1, 0)
    with pytest.raises(TypeError):
        H.BlockAffine(1)
    assert eval(repr(H.BlockAffine(0, 32, H.bfloat16, H.uint8, first_buffer_index=3)),
                {"BlockAffine": H.BlockAffine, "hurray": H}) == \
        H.BlockAffine(0, 32, H.bfloat16, H.uint8, first_buffer_index=3)


def test_nf4():
    n = H.NF4()
    assert (n.block_size, n.double_quant, n.nested_block_size, n.nested_offset) == \
        (64, False, None, None)
    d = H.NF4(double_quant=True)
    assert (d.nested_block_size, d.nested_offset) == (256, 0.0)
    d = H.NF4(128, True, 512, 0.1)
    assert d.nested_offset == struct.unpack("<f", struct.pack("<f", 0.1))[0]  # float32 field
    for bad in (16, 48, 8192):
        with pytest.raises(H.InvalidDescriptorError):
            H.NF4(block_size=bad)
    with pytest.raises(H.InvalidDescriptorError):
        H.NF4(double_quant=True, nested_block_size=100)
    with pytest.raises(H.InvalidDescriptorError):
        H.NF4(nested_offset=0.5)  # nested fields without double quant
    with pytest.raises(H.InvalidDescriptorError):
        H.NF4(double_quant=True, nested_offset=math.inf)


def test_mx_and_nvfp4():
    assert H.MX(3).block_size == 32
    with pytest.raises(H.InvalidDescriptorError):
        H.MX(0, block_size=16)
    v = H.NVFP4(axis=0, tensor_scale=0.5)
    assert (v.axis, v.tensor_scale, v.block_size) == (0, 0.5, 16)
    with pytest.raises(H.InvalidDescriptorError):
        H.NVFP4(0, 1.0, block_size=32)
    for bad in (0.0, -2.0, math.nan):
        with pytest.raises(H.InvalidDescriptorError):
            H.NVFP4(0, bad)
    with pytest.raises(ValueError):
        H.MX(256)
