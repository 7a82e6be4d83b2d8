"""hurray.Device. Seed § Private device tags and memory classes, § Device ID,
§ Device and Memory Class Mapping; docs/spec/devices.md."""
import pytest

import hurray

DEVICES = ["cpu", "cuda", "rocm", "metal", "vulkan", "opencl", "oneapi", "webgpu", "hexagon",
           "maia"]
CLASSES = ["standard", "host_pinned", "unified", "peer"]
PRIVATE = range(0xF0, 0xFF)
# devices.md § Validity table: the invalid (device, class) pairs.
INVALID_PAIRS = {("cpu", "peer"), ("metal", "peer")} | {
    (d, c) for d in ("vulkan", "opencl", "webgpu", "hexagon", "maia")
    for c in ("host_pinned", "unified", "peer")
}
# devices.md § Hurray -> DLPack, DLPack 1.0 integers; None = Unsupported.
DLPACK = {
    ("cpu", "standard"): 1, ("cpu", "host_pinned"): 1, ("cpu", "unified"): 1,
    ("cuda", "standard"): 2, ("cuda", "host_pinned"): 3, ("cuda", "unified"): 13,
    ("cuda", "peer"): None,
    ("rocm", "standard"): 10, ("rocm", "host_pinned"): 11, ("rocm", "unified"): None,
    ("rocm", "peer"): None,
    ("metal", "standard"): 8, ("metal", "host_pinned"): 8, ("metal", "unified"): 8,
    ("vulkan", "standard"): 7, ("opencl", "standard"): 4,
    ("oneapi", "standard"): 14, ("oneapi", "host_pinned"): 14, ("oneapi", "unified"): 14,
    ("oneapi", "peer"): None,
    ("webgpu", "standard"): 15, ("hexagon", "standard"): 16, ("maia", "standard"): 17,
}


@pytest.mark.parametrize("tag,name", list(enumerate(DEVICES, start=1)))
def test_REQ_DEVICE_NAME_OR_BYTE_kind(tag, name):
    a, b = hurray.Device(name), hurray.Device(tag)
    assert a == b and hash(a) == hash(b)
    assert a.kind == name and a.tag == tag
    assert a.memory_class == "standard" and a.memory_class_tag == 1
    assert not a.is_private


@pytest.mark.parametrize("tag,name", list(enumerate(CLASSES, start=1)))
def test_REQ_DEVICE_NAME_OR_BYTE_memory_class(tag, name):
    a, b = hurray.Device("cuda", name), hurray.Device("cuda", tag)
    assert a == b
    assert a.memory_class == name and a.memory_class_tag == tag


@pytest.mark.parametrize("tag", PRIVATE)
def test_REQ_DEVICE_PRIVATE_NAME_private_device(tag):
    d = hurray.Device(tag)
    assert d.kind == "private"
    assert d.tag == tag
    assert d.is_private
    assert f"tag=0x{tag:02X}" in repr(d)


@pytest.mark.parametrize("tag", PRIVATE)
def test_REQ_DEVICE_PRIVATE_NAME_private_memory_class(tag):
    d = hurray.Device("cuda", tag)
    assert d.memory_class == "private"
    assert d.memory_class_tag == tag
    assert not d.is_private  # is_private is about the device tag
    assert f"memory_class_tag=0x{tag:02X}" in repr(d)


def test_REQ_DEVICE_REPR_TAG_two_private_devices_print_differently():
    a, b = hurray.Device(0xF0), hurray.Device(0xF1)
    assert a.kind == b.kind == "private"
    assert repr(a) != repr(b)
    assert "0x01" in repr(hurray.Device("cpu"))


RESERVED_DEVICE = [b for b in range(0x0B, 0xF0)]


@pytest.mark.parametrize("byte", [0x00, 0xFF] + RESERVED_DEVICE[::17] + [0x0B, 0xEF])
def test_REQ_DEVICE_RESERVED_REFUSED_device_byte(byte):
    with pytest.raises(hurray.InvalidDescriptorError) as info:
        hurray.Device(byte)
    assert info.value.code == ("INVALID_TAG" if byte in (0, 0xFF) else "RESERVED_TAG")
    assert f"0x{byte:02X}" in str(info.value)
    assert info.value.field == "device"


@pytest.mark.parametrize("byte", [0x00, 0xFF, 0x05, 0x10, 0xEF])
def test_REQ_DEVICE_RESERVED_REFUSED_memory_class_byte(byte):
    with pytest.raises(hurray.InvalidDescriptorError) as info:
        hurray.Device("cpu", byte)
    assert info.value.code == ("INVALID_TAG" if byte in (0, 0xFF) else "RESERVED_TAG")
    assert f"0x{byte:02X}" in str(info.value)
    assert info.value.field == "memory_class"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("memory_class", CLASSES)
def test_REQ_DEVICE_VALIDITY_pairs(device, memory_class):
    if (device, memory_class) in INVALID_PAIRS:
        with pytest.raises(hurray.InvalidDescriptorError) as info:
            hurray.Device(device, memory_class)
        assert info.value.code == "COMBINATION"
    else:
        hurray.Device(device, memory_class)


def test_device_unknown_names_and_bad_types():
    with pytest.raises(ValueError):
        hurray.Device("tpu")
    with pytest.raises(ValueError):
        hurray.Device("private")  # the byte is how a private value is reached
    with pytest.raises(ValueError):
        hurray.Device("cpu", "shared")
    with pytest.raises(ValueError):
        hurray.Device(256)
    with pytest.raises(TypeError):
        hurray.Device(1.0)
    with pytest.raises(TypeError):
        hurray.Device()


def test_REQ_DEVICE_ID_DEFAULT_HR_DEV_6_zero_and_runtime():
    assert hurray.Device("cuda").device_id == 0
    d = hurray.Device("cuda", device_id=3)
    assert d.device_id == 3
    assert d != hurray.Device("cuda")
    with pytest.raises(ValueError):
        hurray.Device("cuda", device_id=-1)
    with pytest.raises(ValueError):
        hurray.Device("cuda", device_id=2**31)


def test_device_value_semantics():
    a = hurray.Device("cuda", "unified", 1)
    b = hurray.Device(2, 3, 1)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != hurray.Device("cuda", "standard", 1)
    assert a != "cuda"
    with pytest.raises(AttributeError):
        a.kind = "cpu"


@pytest.mark.parametrize("pair,expected", sorted(DLPACK.items()))
def test_REQ_DEVICE_DLPACK_MAP_table(pair, expected):
    d = hurray.Device(*pair)
    if expected is None:
        with pytest.raises(hurray.UnsupportedError) as info:
            d.dlpack_device_type()
        assert info.value.code == "UNSUPPORTED"
    else:
        t = d.dlpack_device_type()
        assert t == expected
        # Note 1/2: never the raw Hurray tag (they differ except where the table says).
        if pair[0] not in ("cpu", "cuda"):
            assert t != d.tag


@pytest.mark.parametrize("tag", [0xF0, 0xF8, 0xFE])
def test_REQ_DEVICE_DLPACK_UNSUPPORTED_private_values(tag):
    # Note 7: no DLPack mapping is fabricated for private values.
    with pytest.raises(hurray.UnsupportedError):
        hurray.Device(tag).dlpack_device_type()
    with pytest.raises(hurray.UnsupportedError):
        hurray.Device("cpu", tag).dlpack_device_type()


def test_REQ_DEVICE_DLPACK_UNSUPPORTED_rocm_unified_and_peer():
    with pytest.raises(hurray.UnsupportedError):  # note 5
        hurray.Device("rocm", "unified").dlpack_device_type()
    for dev in ("cuda", "rocm", "oneapi"):  # note 6
        with pytest.raises(hurray.UnsupportedError):
            hurray.Device(dev, "peer").dlpack_device_type()


@pytest.mark.parametrize(
    "dl,pair",
    [(1, ("cpu", "standard")), (2, ("cuda", "standard")), (3, ("cuda", "host_pinned")),
     (13, ("cuda", "unified")), (10, ("rocm", "standard")), (11, ("rocm", "host_pinned")),
     (8, ("metal", "standard")), (7, ("vulkan", "standard")), (4, ("opencl", "standard")),
     (14, ("oneapi", "standard")), (15, ("webgpu", "standard")), (16, ("hexagon", "standard")),
     (17, ("maia", "standard"))],
)
def test_device_from_dlpack(dl, pair):
    d = hurray.Device.from_dlpack(dl, 2)
    assert (d.kind, d.memory_class, d.device_id) == (*pair, 2)


@pytest.mark.parametrize("dl", [0, 5, 6, 9, 12, 18, 20, -1, 2**40])
def test_device_from_dlpack_unsupported(dl):
    with pytest.raises(hurray.UnsupportedError):
        hurray.Device.from_dlpack(dl)
