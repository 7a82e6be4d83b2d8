"""hurray.load_kv and save(kv=...) (requirements § File metadata; docs/spec/kv.md HR-KV-1 … 11).

Test names carry requirement ids (docs/requirements/python-binding.md).
"""
import math
import struct

import pytest

import hurray
from catalog import f32
from hurray import Tensor

T = {"t": None}


@pytest.fixture
def tensors():
    return {"t": Tensor(f32(1, 2), hurray.float32, (2,))}


def roundtrip(tmp_path, tensors, kv):
    path = tmp_path / "kv.hurray"
    hurray.save(path, tensors, kv=kv)
    return hurray.load_kv(path)


def kv_region(path):
    data = path.read_bytes()
    off, length = struct.unpack_from("<QQ", data, 32)
    return data, off, length


def test_REQ_KV_INVERSE_HR_KV_1(tmp_path, tensors):
    kv = {
        "flag": True,
        "off": False,
        "n": 42,
        "neg": -(2**63),
        "max": 2**63 - 1,
        "pi": 3.141592653589793,
        "inf": float("-inf"),
        "name": "héllo\0wörld",
        "blob": b"\x00\xff" * 5,
        "empty_str": "",
        "empty_bytes": b"",
        "empty_list": [],
        "list": [1, "two", 3.0, True, b"four", [5, [6, []]]],
        "ünïcode key": 1,
    }
    back = roundtrip(tmp_path, tensors, kv)
    assert back == kv
    assert list(back) == sorted(kv, key=lambda k: k.encode())  # canonical order (HR-KV-7)


def test_REQ_KV_EMPTY_no_section_reads_empty(tmp_path, tensors):
    assert roundtrip(tmp_path, tensors, None) == {}
    assert roundtrip(tmp_path, tensors, {}) == {}
    path = tmp_path / "kv.hurray"
    hurray.save(path, tensors)
    data, off, length = kv_region(path)
    assert (off, length) == (0, 0)  # an empty map is written as no section


def test_REQ_KV_SEPARATE_CALL_load_does_not_return_it(tmp_path, tensors):
    path = tmp_path / "kv.hurray"
    hurray.save(path, tensors, kv={"a": 1})
    assert list(hurray.load(path)) == ["t"]
    assert hurray.load_kv(path) == {"a": 1}
    hurray.save(path, {}, kv={"only": "metadata"})  # a file with no tensors at all
    assert hurray.load(path) == {} and hurray.load_kv(path) == {"only": "metadata"}


def test_REQ_KV_BOOL_BEFORE_INT_both_directions(tmp_path, tensors):
    back = roundtrip(tmp_path, tensors, {"b": True, "i": 1, "z": 0, "f": False})
    assert type(back["b"]) is bool and type(back["f"]) is bool
    assert type(back["i"]) is int and type(back["z"]) is int
    data, off, _ = kv_region(tmp_path / "kv.hurray")
    tags = {}
    pos = off + 8
    for _ in range(4):  # entries sorted: b, f, i, z; each 8 + 8 (key) + 8 (payload)
        klen, tag = struct.unpack_from("<IB", data, pos)
        tags[data[pos + 8:pos + 8 + klen].decode()] = tag
        pos += 24
    assert tags == {"b": 0x01, "f": 0x01, "i": 0x02, "z": 0x02}


def test_REQ_KV_INT64_python_ints(tmp_path, tensors):
    with pytest.raises(OverflowError):
        roundtrip(tmp_path, tensors, {"big": 2**63})
    with pytest.raises(OverflowError):
        roundtrip(tmp_path, tensors, {"l": [1, -(2**63) - 1]})
    np = pytest.importorskip("numpy")
    back = roundtrip(tmp_path, tensors, {"np": np.int16(-7), "npf": np.float64(0.5)})
    assert back == {"np": -7, "npf": 0.5} and type(back["np"]) is int


def patch_single_value(tmp_path, tensors, tag, payload):
    """A file whose single KV entry "k" has value tag `tag` and 8-byte `payload`, as
    another producer could write it."""
    path = tmp_path / "kv.hurray"
    hurray.save(path, tensors, kv={"k": 1})
    data, off, _ = kv_region(path)
    data = bytearray(data)
    assert data[off + 12] == 0x02  # entry: key_length u32, value_tag u8
    data[off + 12] = tag
    data[off + 24:off + 32] = payload
    path.write_bytes(bytes(data))
    return path


def test_REQ_KV_UINT64_READ_AS_INT_HR_KV_4(tmp_path, tensors):
    path = patch_single_value(tmp_path, tensors, 0x03, struct.pack("<Q", 2**64 - 1))
    back = hurray.load_kv(path)
    assert back == {"k": 2**64 - 1} and type(back["k"]) is int
    assert list(hurray.load(path)) == ["t"]


def test_REQ_KV_UNKNOWN_VARIANT_RAISES_HR_KV_3(tmp_path, tensors):
    path = patch_single_value(tmp_path, tensors, 0x08, bytes(8))
    with pytest.raises(hurray.UnsupportedError) as info:
        hurray.load_kv(path)  # never a silent hole
    assert info.value.code == "UNSUPPORTED"
    path = patch_single_value(tmp_path, tensors, 0x00, bytes(8))
    with pytest.raises(hurray.FileError) as info:
        hurray.load_kv(path)
    assert info.value.code == "INVALID_TAG"


def test_REQ_KV_FLOAT_BITS_HR_KV_8(tmp_path, tensors):
    nan = struct.unpack("<d", struct.pack("<Q", 0x7FF8_0000_DEAD_BEEF))[0]
    back = roundtrip(tmp_path, tensors, {"nan": nan, "negzero": -0.0, "tiny": 5e-324})
    assert struct.pack("<d", back["nan"]) == struct.pack("<d", nan)  # payload kept
    assert math.copysign(1.0, back["negzero"]) == -1.0 and back["tiny"] == 5e-324
    data, off, length = kv_region(tmp_path / "kv.hurray")
    assert struct.pack("<Q", 0x7FF8_0000_DEAD_BEEF) in data[off:off + length]


def test_REQ_KV_TYPES_refused_with_the_key(tmp_path, tensors):
    for bad in (None, (1, 2), {"nested": 1}, {1, 2}, 1j, object()):
        with pytest.raises(TypeError, match="'k'"):
            roundtrip(tmp_path, tensors, {"k": bad})
    with pytest.raises(TypeError):
        roundtrip(tmp_path, tensors, {1: "int key"})
    with pytest.raises(TypeError):
        roundtrip(tmp_path, tensors, [("k", 1)])
    for bad_key, code in (("", "CONSTRAINT"), ("a\0b", "CONSTRAINT"), ("x" * 70000, "LIMIT")):
        with pytest.raises(hurray.InvalidDescriptorError) as info:
            roundtrip(tmp_path, tensors, {bad_key: 1})
        assert info.value.code == code
    with pytest.raises(UnicodeEncodeError):
        roundtrip(tmp_path, tensors, {"k": "\ud800"})
    deep = []
    for _ in range(70):
        deep = [deep]
    with pytest.raises(hurray.InvalidDescriptorError) as info:
        roundtrip(tmp_path, tensors, {"deep": deep})
    assert info.value.code == "LIMIT"


def test_REQ_KV_BYTES_LIKE_read_back_as_bytes(tmp_path, tensors):
    back = roundtrip(tmp_path, tensors, {"ba": bytearray(b"xy"), "mv": memoryview(b"z")})
    assert back == {"ba": b"xy", "mv": b"z"} and type(back["ba"]) is bytes


def test_REQ_KV_LIMITS_on_load(tmp_path, tensors):
    path = tmp_path / "kv.hurray"
    hurray.save(path, tensors, kv={str(i): i for i in range(10)})
    with pytest.raises(hurray.FileError) as info:
        hurray.load_kv(path, max_kv_entries=5)
    assert info.value.code == "LIMIT"
    assert len(hurray.load_kv(path, max_kv_entries=10)) == 10
