"""hurray.Dtype, the hurray.dtype namespace and buffer_size_bytes.

Seed § Dtype surface, § Buffer sizing, § Tier 2 and quantized types;
docs/spec/element-types.md."""
import copy
import math
import pickle

import pytest

import hurray

# element-types.md § Tag table: (tag, name, bits, tier, float, integer, signed, sub_byte)
TABLE = [
    (0x01, "bool", 8, 1, 0, 0, 0, 0),
    (0x02, "int8", 8, 1, 0, 1, 1, 0),
    (0x03, "uint8", 8, 1, 0, 1, 0, 0),
    (0x04, "int16", 16, 1, 0, 1, 1, 0),
    (0x05, "uint16", 16, 1, 0, 1, 0, 0),
    (0x06, "int32", 32, 1, 0, 1, 1, 0),
    (0x07, "uint32", 32, 1, 0, 1, 0, 0),
    (0x08, "int64", 64, 1, 0, 1, 1, 0),
    (0x09, "uint64", 64, 1, 0, 1, 0, 0),
    (0x0A, "float16", 16, 1, 1, 0, 1, 0),
    (0x0B, "bfloat16", 16, 1, 1, 0, 1, 0),
    (0x0C, "float32", 32, 1, 1, 0, 1, 0),
    (0x0D, "float64", 64, 1, 1, 0, 1, 0),
    (0x0E, "complex64", 64, 1, 0, 0, 1, 0),
    (0x0F, "complex128", 128, 1, 0, 0, 1, 0),
    (0x20, "int1", 1, 2, 0, 1, 1, 1),
    (0x21, "uint1", 1, 2, 0, 1, 0, 1),
    (0x22, "int2", 2, 2, 0, 1, 1, 1),
    (0x23, "uint2", 2, 2, 0, 1, 0, 1),
    (0x24, "int4", 4, 2, 0, 1, 1, 1),
    (0x25, "uint4", 4, 2, 0, 1, 0, 1),
    (0x30, "float8_e4m3fn", 8, 2, 1, 0, 1, 0),
    (0x31, "float8_e4m3fnuz", 8, 2, 1, 0, 1, 0),
    (0x32, "float8_e5m2", 8, 2, 1, 0, 1, 0),
    (0x33, "float8_e5m2fnuz", 8, 2, 1, 0, 1, 0),
    (0x34, "float8_e8m0fnu", 8, 2, 1, 0, 0, 0),
    (0x35, "float6_e2m3fn", 6, 2, 1, 0, 1, 1),
    (0x36, "float6_e3m2fn", 6, 2, 1, 0, 1, 1),
    (0x37, "float4_e2m1fn", 4, 2, 1, 0, 1, 1),
]
ALIASES = {
    "float8_e4m3": "float8_e4m3fn",
    "float8_e8m0": "float8_e8m0fnu",
    "float6_e2m3": "float6_e2m3fn",
    "float6_e3m2": "float6_e3m2fn",
    "float4_e2m1": "float4_e2m1fn",
}
NAMED_TAGS = {row[0] for row in TABLE}
PRIVATE_TAGS = range(0xF0, 0xFF)


@pytest.mark.parametrize("row", TABLE, ids=[r[1] for r in TABLE])
def test_REQ_DTYPE_PROPS_table(row):
    tag, name, bits, tier, fl, integer, signed, sub = row
    d = hurray.Dtype.from_tag(tag)
    assert d.tag == tag
    assert d.name == name
    assert d.bit_width == bits
    assert d.tier == tier
    assert d.is_float is bool(fl)
    assert d.is_integer is bool(integer)
    assert d.is_signed is bool(signed)
    assert d.is_sub_byte is bool(sub)
    assert d.is_complex is name.startswith("complex")
    assert repr(d) == f"hurray.{name}"


@pytest.mark.parametrize("row", TABLE, ids=[r[1] for r in TABLE])
def test_REQ_DTYPE_SINGLETON_from_tag_from_name_namespace_toplevel(row):
    tag, name = row[0], row[1]
    d = getattr(hurray.dtype, name)
    assert hurray.Dtype.from_tag(tag) is d
    assert hurray.Dtype.from_name(name) is d
    assert getattr(hurray, name) is d


def test_REQ_DTYPE_SINGLETON_documented_example():
    assert hurray.float32 is hurray.dtype.float32


@pytest.mark.parametrize("alias,canonical", sorted(ALIASES.items()))
def test_REQ_DTYPE_SINGLETON_aliases(alias, canonical):
    d = getattr(hurray.dtype, alias)
    assert d is getattr(hurray.dtype, canonical)
    assert hurray.Dtype.from_name(alias) is d
    assert getattr(hurray, alias) is d
    assert d.name == canonical


def test_REQ_DTYPE_TIER2_NAMESPACE_examples():
    assert hurray.dtype.int4.tier == 2
    assert hurray.dtype.float8_e4m3 is hurray.dtype.float8_e4m3fn
    import hurray.dtype as ns  # importable as a module too

    assert ns.int4 is hurray.dtype.int4


@pytest.mark.parametrize("tag", PRIVATE_TAGS)
def test_REQ_DTYPE_EXT_REPR_private_types(tag):
    d = hurray.Dtype.from_tag(tag)
    assert d is hurray.Dtype.from_tag(tag)  # one singleton per tag
    assert d.name == "extension"
    assert d.bit_width is None
    assert d.tier == 3
    assert not (d.is_float or d.is_integer or d.is_signed or d.is_sub_byte or d.is_complex)
    assert f"0x{tag:02X}" in repr(d)
    assert repr(d) == f"hurray.Dtype(extension, tag=0x{tag:02X})"


def test_REQ_DTYPE_EXT_REPR_distinguishes_two_extension_types():
    a, b = hurray.Dtype.from_tag(0xF0), hurray.Dtype.from_tag(0xF1)
    assert a.name == b.name and repr(a) != repr(b) and a != b


@pytest.mark.parametrize("tag", sorted(set(range(256)) - NAMED_TAGS - set(PRIVATE_TAGS)))
def test_REQ_DTYPE_RESERVED_REFUSED_reserved_and_invalid_tags(tag):
    with pytest.raises(hurray.InvalidDescriptorError) as info:
        hurray.Dtype.from_tag(tag)
    assert info.value.code == ("INVALID_TAG" if tag in (0x00, 0xFF) else "RESERVED_TAG")
    assert f"0x{tag:02X}" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_dtype_from_tag_and_name_argument_errors():
    with pytest.raises(ValueError):
        hurray.Dtype.from_tag(256)
    with pytest.raises(ValueError):
        hurray.Dtype.from_tag(-1)
    with pytest.raises(TypeError):
        hurray.Dtype.from_tag("float32")
    with pytest.raises(ValueError):
        hurray.Dtype.from_name("float128")
    with pytest.raises(ValueError):
        hurray.Dtype.from_name("extension")  # names no single type
    with pytest.raises(TypeError):
        hurray.Dtype.from_name(12)


def test_REQ_DTYPE_IMMUTABLE_not_constructible_not_settable():
    with pytest.raises(TypeError):
        hurray.Dtype()
    with pytest.raises(AttributeError):
        hurray.float32.name = "x"
    with pytest.raises(TypeError):
        hurray.Dtype.extra = 1  # immutable type


def test_dtype_copy_and_pickle_keep_the_singleton():
    for d in (hurray.float32, hurray.dtype.int4, hurray.Dtype.from_tag(0xF7)):
        assert copy.copy(d) is d
        assert copy.deepcopy(d) is d
        assert pickle.loads(pickle.dumps(d)) is d


def test_namespace_lists_every_name_and_alias():
    names = {n for n in vars(hurray.dtype) if not n.startswith("_")}
    assert names == {r[1] for r in TABLE} | set(ALIASES)


# ---- buffer_size_bytes (requirements § Buffer sizing; memory-layout.md HR-PACK-3) -------------

@pytest.mark.parametrize("row", TABLE, ids=[r[1] for r in TABLE])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 5, 7, 8, 9, 1000, 12345])
def test_REQ_BUFSIZE_PACKING_ceil_count_bits(row, count):
    d = hurray.Dtype.from_tag(row[0])
    assert hurray.buffer_size_bytes(d, count) == math.ceil(count * d.bit_width / 8)


def test_REQ_BUFSIZE_PACKING_differs_from_naive_formula_for_sub_byte():
    # count * bit_width // 8 is wrong for every sub-byte type.
    for d in (hurray.int4, hurray.uint1, hurray.int2, hurray.float6_e2m3fn, hurray.float4_e2m1fn):
        assert d.is_sub_byte
        assert hurray.buffer_size_bytes(d, 3) != 3 * d.bit_width // 8
    assert hurray.buffer_size_bytes(hurray.int4, 3) == 2
    assert hurray.buffer_size_bytes(hurray.float6_e2m3fn, 4) == 3
    assert hurray.buffer_size_bytes(hurray.uint1, 9) == 2


def test_REQ_BUFSIZE_EXTENSION_UNSUPPORTED():
    with pytest.raises(hurray.UnsupportedError) as info:
        hurray.buffer_size_bytes(hurray.Dtype.from_tag(0xF2), 4)
    assert info.value.code == "UNSUPPORTED"
    assert "0xF2" in str(info.value)


def test_buffer_size_bytes_arguments():
    with pytest.raises(ValueError):
        hurray.buffer_size_bytes(hurray.float32, -1)
    with pytest.raises(TypeError):
        hurray.buffer_size_bytes(hurray.float32, 1.5)
    with pytest.raises(TypeError):
        hurray.buffer_size_bytes("float32", 1)
    # count * bits is checked against 2^64-1 (HR-PACK-3), not the byte count.
    assert hurray.buffer_size_bytes(dtype=hurray.uint8, count=2**61 - 1) == 2**61 - 1
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.buffer_size_bytes(hurray.uint8, 2**61)
    with pytest.raises(hurray.InvalidDescriptorError) as info:
        hurray.buffer_size_bytes(hurray.float64, 2**62)
    assert info.value.code == "OVERFLOW"
