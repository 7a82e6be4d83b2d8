"""The native protocol: Tensor.__hurray__, hurray.from_hurray and the C ABI behind them.

docs/spec/c-abi.md (HR-ABI-1 … HR-ABI-12). Three partners besides the binding itself:
- ctypes reads the structures field by field, as a consumer with no library would;
- native/consumer.c, a C consumer built only against reference/include and libhurray.so;
- native/producer.c, a CPython extension that fills the structures itself and does not link
  libhurray (its undefined symbols are checked), consumed by hurray.from_hurray.
"""
import ctypes
import gc
import importlib.util
import os
import subprocess
import sys
import sysconfig
import textwrap
import weakref
from ctypes import POINTER, Structure, c_char_p, c_int, c_int32, c_size_t, c_uint8, c_uint32
from ctypes import c_uint64, c_void_p, py_object
from pathlib import Path

import numpy as np
import pytest

import hurray
from hurray import Tensor

from catalog import every_composite, every_tensor, rand, u64

ROOT = Path(__file__).resolve().parents[2]
NATIVE = Path(__file__).resolve().parent / "native"
INCLUDE = ROOT / "reference" / "include"


# ---- the C ABI, as ctypes sees it (c-abi.md § Layout) ------------------------------------------


class HurrayBuffer(Structure):
    _fields_ = [("data", c_void_p), ("size", c_uint64), ("flags", c_uint32),
                ("reserved", c_uint32), ("owner", c_void_p), ("release", c_void_p)]


class HurrayBufferList(Structure):
    _fields_ = [("abi_version", c_uint32), ("count", c_uint32),
                ("buffers", POINTER(HurrayBuffer)), ("private_data", c_void_p),
                ("release", c_void_p)]


class HurrayTensorContext(Structure):
    _fields_ = [("abi_version", c_uint32), ("device_id", c_int32), ("descriptor", c_void_p),
                ("descriptor_len", c_uint64), ("owner", c_void_p), ("owner_release", c_void_p),
                ("release", c_void_p), ("private_data", c_void_p)]


_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [py_object, c_char_p]
_api.PyCapsule_GetContext.restype = c_void_p
_api.PyCapsule_GetContext.argtypes = [py_object]
_api.PyCapsule_GetName.restype = c_char_p
_api.PyCapsule_GetName.argtypes = [py_object]
_api.PyCapsule_SetName.restype = c_int
_api.PyCapsule_SetName.argtypes = [py_object, c_char_p]
_api.PyCapsule_New.restype = py_object
_api.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
USED = ctypes.create_string_buffer(b"used_hurray_tensor")  # lives as long as the module
OTHER = ctypes.create_string_buffer(b"not_hurray")


def capsule_name(capsule) -> str:
    return _api.PyCapsule_GetName(capsule).decode()


def read(capsule) -> dict:
    """Every field of an unconsumed capsule's structures, read without the library."""
    assert capsule_name(capsule) == "hurray_tensor"
    lp = _api.PyCapsule_GetPointer(capsule, b"hurray_tensor")
    cp = _api.PyCapsule_GetContext(capsule)
    ctx = HurrayTensorContext.from_address(cp)
    assert ctx.abi_version == hurray._hurray.HURRAY_C_ABI_VERSION  # read first (HR-ABI-4)
    lst = HurrayBufferList.from_address(lp)
    bufs = [lst.buffers[i] for i in range(lst.count)]
    return {
        "abi_version": ctx.abi_version,
        "list_version": lst.abi_version,
        "device_id": ctx.device_id,
        "descriptor": ctypes.string_at(ctx.descriptor, ctx.descriptor_len),
        "buffers": [(b.data or 0, b.size, b.flags) for b in bufs],
        "owner": ctx.owner,
        "owner_release": ctx.owner_release,
    }


def addresses(t: Tensor) -> list:
    """Buffer addresses of a tensor, read through its own capsule (any device)."""
    return [a for a, _, _ in read(t.__hurray__())["buffers"]]


def host_address(mv) -> int:
    return np.frombuffer(mv, np.uint8).ctypes.data if len(mv) else 0


class Foreign:
    """An object with only __hurray__ (a producer that is not a hurray.Tensor)."""

    def __init__(self, make):
        self.make = make
        self.calls = 0

    def __hurray__(self, stream=None):
        self.calls += 1
        return self.make()


# ---- the compiled partners --------------------------------------------------------------------

CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-g", "-fPIC", "-shared",
          f"-I{INCLUDE}"]


@pytest.fixture(scope="session")
def libhurray_so():
    """build/libhurray.so, the shared library a foreign consumer links."""
    subprocess.run(["make", "-s", "build/libhurray.so"], cwd=ROOT, check=True,
                   capture_output=True)
    so = ROOT / "build" / "libhurray.so"
    assert so.exists()
    return so


@pytest.fixture(scope="session")
def consumer(libhurray_so, tmp_path_factory):
    out = tmp_path_factory.mktemp("native") / "libhurray_test_consumer.so"
    subprocess.run(["cc", *CFLAGS, str(NATIVE / "consumer.c"), "-o", str(out),
                    f"-L{libhurray_so.parent}", "-lhurray", f"-Wl,-rpath,{libhurray_so.parent}"],
                   check=True)
    lib = ctypes.CDLL(str(out))
    lib.hc_version.argtypes = [c_void_p]
    lib.hc_check.argtypes = [c_void_p, c_void_p, POINTER(c_uint64), POINTER(c_uint64),
                             POINTER(c_uint32), POINTER(c_uint32), POINTER(c_uint8), c_size_t,
                             POINTER(c_size_t), POINTER(c_int32)]
    lib.hc_release.argtypes = [c_void_p, c_void_p]
    # the functions it calls come from the shared libhurray, not from the binding
    ldd = subprocess.run(["ldd", str(out)], capture_output=True, text=True, check=True).stdout
    assert str(libhurray_so) in ldd or "libhurray.so" in ldd
    return lib


@pytest.fixture(scope="session")
def producer(tmp_path_factory):
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    out = tmp_path_factory.mktemp("native") / f"hurray_test_producer{suffix}"
    subprocess.run(["cc", *CFLAGS, f"-I{sysconfig.get_paths()['include']}",
                    str(NATIVE / "producer.c"), "-o", str(out)], check=True)
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(out)], capture_output=True,
                               text=True, check=True).stdout
    assert "hurray_" not in undefined, undefined  # it links no libhurray at all
    spec = importlib.util.spec_from_file_location("hurray_test_producer", out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def c_consume(consumer, capsule):
    """The C consumer takes the capsule: rename (HR-ABI-8), check, report, destroy once."""
    lp = _api.PyCapsule_GetPointer(capsule, b"hurray_tensor")
    cp = _api.PyCapsule_GetContext(capsule)
    if consumer.hc_version(cp) != hurray._hurray.HURRAY_C_ABI_VERSION:
        return {"rc": "version"}
    assert _api.PyCapsule_SetName(capsule, USED) == 0
    addrs, sizes = (c_uint64 * 255)(), (c_uint64 * 255)()
    flags, count, dev = (c_uint32 * 255)(), c_uint32(), c_int32()
    desc, dlen = (c_uint8 * 65536)(), c_size_t()
    rc = consumer.hc_check(lp, cp, addrs, sizes, flags, ctypes.byref(count), desc, len(desc),
                           ctypes.byref(dlen), ctypes.byref(dev))
    consumer.hc_release(lp, cp)
    n = count.value
    return {"rc": rc, "buffers": [(addrs[i], sizes[i], flags[i]) for i in range(n)],
            "descriptor": bytes(desc[:dlen.value]), "device_id": dev.value}


# ---- catalogues -------------------------------------------------------------------------------

TENSORS = list(every_tensor())

DEVICES = [
    ("cpu", "standard", 0), ("cpu", "host_pinned", 0), ("cuda", "standard", 1),
    ("cuda", "unified", 0), ("cuda", "peer", 2), ("rocm", "standard", 0),
    ("rocm", "unified", 3), ("rocm", "peer", 0), ("metal", "unified", 0),
    (0xF2, "standard", 5), ("cpu", 0xF4, 0), ("cuda", 0xF7, 1),
]


def on_device(kind, mc, device_id, n=16):
    """A tensor declaring another device (host bytes in disguise: nothing here reads them
    through the device)."""
    return Tensor(rand(n * 4), hurray.float32, (n,),
                  device=hurray.Device(kind, memory_class=mc, device_id=device_id))


# ---- HR-ABI-1, HR-ABI-2: the capsule and the structures --------------------------------------


def test_REQ_NATIVE_PROTOCOL_HR_ABI_1_capsule_name_pointer_context():
    t = Tensor(rand(16), hurray.float32, (4,))
    c = t.__hurray__()
    assert type(c).__name__ == "PyCapsule" and capsule_name(c) == "hurray_tensor"
    r = read(c)
    assert r["abi_version"] == r["list_version"] == 1 == hurray._hurray.HURRAY_C_ABI_VERSION
    assert r["descriptor"] == t.descriptor.encode()
    assert r["buffers"] == [(host_address(t.buffer(0)), 16, 0)]
    assert r["owner"] == id(t) and r["owner_release"]  # the strong reference (HR-ABI-6)


def test_REQ_NATIVE_CONTEXT_HR_ABI_2_layout_offsets():
    # c-abi.md § Layout, checked from outside the library
    assert ctypes.sizeof(HurrayBuffer) == 40
    assert ctypes.sizeof(HurrayBufferList) == 32
    assert ctypes.sizeof(HurrayTensorContext) == 56
    assert HurrayBufferList.abi_version.offset == 0 == HurrayTensorContext.abi_version.offset
    assert [HurrayBuffer.size.offset, HurrayBuffer.flags.offset, HurrayBuffer.owner.offset,
            HurrayBuffer.release.offset] == [8, 16, 24, 32]
    assert [HurrayBufferList.count.offset, HurrayBufferList.buffers.offset,
            HurrayBufferList.private_data.offset, HurrayBufferList.release.offset] == [4, 8, 16, 24]
    assert [HurrayTensorContext.device_id.offset, HurrayTensorContext.descriptor.offset,
            HurrayTensorContext.descriptor_len.offset, HurrayTensorContext.owner.offset,
            HurrayTensorContext.owner_release.offset, HurrayTensorContext.release.offset,
            HurrayTensorContext.private_data.offset] == [4, 8, 16, 24, 32, 40, 48]


def test_REQ_NATIVE_CONTEXT_no_python_type_in_the_abi():
    # the context is the C ABI's HurrayTensorContext: the descriptor bytes decode with the
    # public Descriptor.decode, and the only Python object is the opaque owner
    t = Tensor([rand(8), u64(0, 1, 1, 0)], hurray.float32, (2, 2),
               layout=hurray.CooLayout(nnz=2))
    r = read(t.__hurray__())
    assert hurray.Descriptor.decode(r["descriptor"]) == t.descriptor


# ---- HR-ABI-3, HR-ABI-9: every dtype, layout, scheme; zero copy -------------------------------


@pytest.mark.parametrize("name,t", TENSORS, ids=[n for n, _ in TENSORS])
def test_REQ_NATIVE_MULTI_BUFFER_HR_ABI_3_every_tensor_zero_copy(name, t):
    c = t.__hurray__()
    r = read(c)
    assert len(r["buffers"]) == t.buffer_count == len(t.buffer_handles)
    for i, (addr, size, _) in enumerate(r["buffers"]):  # element i is buffer i
        assert size == t.buffer_handles[i].size
        assert addr == host_address(t.buffer(i))
    u = hurray.from_hurray(c)
    assert capsule_name(c) == "used_hurray_tensor"
    assert u.descriptor == t.descriptor
    assert u.buffer_count == t.buffer_count
    assert u.quantization == t.quantization and u.layout == t.layout
    assert addresses(u) == [a for a, _, _ in r["buffers"]]  # the same bytes: no copy
    for i in range(t.buffer_count):
        assert host_address(u.buffer(i)) == host_address(t.buffer(i))
        assert bytes(u.buffer(i)) == bytes(t.buffer(i))


@pytest.mark.parametrize("kind,mc,device_id", DEVICES)
def test_REQ_NATIVE_DEVICES_HR_ABI_9_every_device_and_memory_class(kind, mc, device_id):
    t = on_device(kind, mc, device_id)
    r = read(t.__hurray__())
    assert r["device_id"] == device_id
    u = hurray.from_hurray(t)
    assert u.device == t.device and u.device.device_id == device_id
    assert u.descriptor == t.descriptor
    assert addresses(u) == addresses(t) == [a for a, _, _ in r["buffers"]]


@pytest.mark.parametrize("kind,mc", [("rocm", "unified"), ("cuda", "peer"), (0xF2, "standard")])
def test_REQ_NATIVE_DEVICES_what_dlpack_refuses_travels_natively(kind, mc):
    # the pairs the DLPack error message sends to the native protocol
    t = on_device(kind, mc, 0)
    with pytest.raises(hurray.UnsupportedError):
        t.__dlpack__(max_version=(1, 1))
    assert hurray.from_hurray(t).device == t.device


def test_REQ_NATIVE_MULTI_BUFFER_quantized_message_is_true():
    # "__dlpack__: the tensor is quantized (…) (use buffer(i) or the native protocol)"
    t = Tensor([rand(256), rand(1024)], hurray.int8, (4, 64),
               quantization=hurray.BlockAffine(1, 32))
    with pytest.raises(BufferError, match="native protocol"):
        t.__dlpack__(max_version=(1, 1))
    u = hurray.from_hurray(t)
    assert u.quantization == t.quantization and addresses(u) == addresses(t)


@pytest.mark.parametrize("mode,name", [(2, "event"), (3, "stream")])
def test_REQ_NATIVE_RELAY_not_producer_synced_relayed(mode, name):
    t = hurray._hurray._tensor_with_sync_mode(Tensor([rand(16), rand(64)], hurray.int8, (16,),
                                                     quantization=hurray.PerChannelAffine(0)),
                                              1, mode)
    u = hurray.from_hurray(t)
    assert u.buffer_handles[1].sync_mode == name and u.descriptor == t.descriptor
    assert addresses(u) == addresses(t)
    with pytest.raises(hurray.UnsupportedError, match=name):
        u.buffer(1)


def test_REQ_NATIVE_MULTI_BUFFER_readonly_flag():
    ro = Tensor(rand(16).toreadonly(), hurray.float32, (4,))
    rw = Tensor(rand(16), hurray.float32, (4,))
    assert read(ro.__hurray__())["buffers"][0][2] == 1
    assert read(rw.__hurray__())["buffers"][0][2] == 0
    assert hurray.from_hurray(ro).buffer(0).readonly
    assert not hurray.from_hurray(rw).buffer(0).readonly


# ---- HR-ABI-6, HR-ABI-8: lifetime and refcounts -----------------------------------------------


def test_REQ_NATIVE_REFCOUNT_HR_ABI_8_capsule_and_consume_paths():
    t = Tensor(rand(16), hurray.float32, (4,))
    base = sys.getrefcount(t)
    c = t.__hurray__()
    assert sys.getrefcount(t) == base + 1  # incremented on creation
    del c
    assert sys.getrefcount(t) == base      # the destructor path
    c = t.__hurray__()
    u = hurray.from_hurray(c)
    assert sys.getrefcount(t) == base + 1
    del c
    assert sys.getrefcount(t) == base + 1  # the consumer holds it now
    v = u.buffer(0)
    del u
    assert sys.getrefcount(t) == base + 1  # a view of the consumed tensor keeps it
    del v
    gc.collect()
    assert sys.getrefcount(t) == base      # the consume path


def test_REQ_NATIVE_LIFETIME_HR_ABI_6_source_kept_alive_after_del():
    src = bytearray(rand(64))
    t = Tensor(src, hurray.uint8, (64,))
    ref = weakref.ref(t)
    c = t.__hurray__()
    del t
    gc.collect()
    assert ref() is not None           # the capsule's context owner
    u = hurray.from_hurray(c)
    del c
    gc.collect()
    assert ref() is not None           # the consumer's tensor
    assert bytes(u.buffer(0)) == bytes(src)
    del u
    gc.collect()
    assert ref() is None


def test_REQ_NATIVE_LIFETIME_HR_ABI_8_double_consumption_refused():
    t = Tensor(rand(16), hurray.float32, (4,))
    c = t.__hurray__()
    hurray.from_hurray(c)
    with pytest.raises(hurray.BufferError, match="already been consumed"):
        hurray.from_hurray(c)
    with pytest.raises(hurray.BufferError, match="already been consumed"):
        hurray.from_hurray(Foreign(lambda: c))


def test_REQ_NATIVE_ERRORS_foreign_and_invalid_capsules():
    t = Tensor(rand(16), hurray.float32, (4,))
    with pytest.raises(hurray.BufferError, match="dltensor_versioned"):
        hurray.from_hurray(t.__dlpack__(max_version=(1, 1)))
    with pytest.raises(hurray.BufferError, match="not a 'hurray_tensor' capsule"):
        hurray.from_hurray(Foreign(lambda: 42))
    no_ctx = _api.PyCapsule_New(id(t), b"hurray_tensor", None)  # a capsule with no context
    with pytest.raises(hurray.BufferError, match="no HurrayTensorContext"):
        hurray.from_hurray(no_ctx)
    assert issubclass(hurray.BufferError, BufferError)
    with pytest.raises(TypeError, match="no __hurray__"):
        hurray.from_hurray(object())


# ---- discovery, composites, stream (HR-ABI-10 … HR-ABI-12) ------------------------------------


def test_REQ_NATIVE_DISCOVERY_HR_ABI_12_hasattr_only():
    assert hasattr(Tensor(rand(4), hurray.uint8, (4,)), "__hurray__")
    assert not [n for n in dir(hurray) if "native" in n.lower() or "capab" in n.lower()]
    assert callable(hurray.from_hurray) and "from_hurray" in hurray.__all__


COMPOSITES = list(every_composite())


@pytest.mark.parametrize("name,comp", COMPOSITES, ids=[n for n, _ in COMPOSITES])
def test_REQ_NATIVE_COMPOSITE_HR_ABI_11_no_hurray(name, comp):
    assert not hasattr(comp, "__hurray__")
    with pytest.raises(TypeError, match="no __hurray__"):
        hurray.from_hurray(comp)


def test_REQ_NATIVE_STREAM_HR_ABI_10_dlpack_rules():
    cpu = Tensor(rand(16), hurray.float32, (4,))
    for s in (None, -1):
        hurray.from_hurray(Foreign(lambda s=s: cpu.__hurray__(stream=s)))
    assert capsule_name(cpu.__hurray__(None)) == "hurray_tensor"  # positional
    with pytest.raises(BufferError, match="__hurray__: stream=5 .* no streams"):
        cpu.__hurray__(stream=5)
    with pytest.raises(TypeError, match="stream must be an int"):
        cpu.__hurray__(stream="x")
    cuda = on_device("cuda", "standard", 1)
    for s in (None, -1, 1, 2, 0x7F00_0000_1000):
        cuda.__hurray__(stream=s)
    with pytest.raises(ValueError, match="__hurray__: stream=0 is disallowed on CUDA"):
        cuda.__hurray__(stream=0)
    rocm_unified = on_device("rocm", "unified", 0)  # no DLPack type: ROCm's rules
    rocm_unified.__hurray__(stream=0)
    with pytest.raises(ValueError, match="not a ROCm stream"):
        rocm_unified.__hurray__(stream=1)
    private = on_device(0xF2, "standard", 0)
    private.__hurray__(stream=-1)
    with pytest.raises(BufferError, match="no streams"):
        private.__hurray__(stream=3)


# ---- (a) a C consumer built on the public header and libhurray.so -----------------------------


@pytest.mark.parametrize("name,t", TENSORS, ids=[n for n, _ in TENSORS])
def test_REQ_NATIVE_FOREIGN_c_consumer_reads_every_tensor(consumer, name, t):
    base = sys.getrefcount(t)
    c = t.__hurray__()
    expect = read(c)
    r = c_consume(consumer, c)
    assert r["rc"] == 0
    assert capsule_name(c) == "used_hurray_tensor"
    assert r["descriptor"] == t.descriptor.encode() == expect["descriptor"]
    assert r["buffers"] == expect["buffers"]
    assert [a for a, _, _ in r["buffers"]] == [host_address(t.buffer(i))
                                                for i in range(t.buffer_count)]
    del c
    assert sys.getrefcount(t) == base  # the C consumer destroyed list and context once


def test_REQ_NATIVE_FOREIGN_c_consumer_devices(consumer):
    t = on_device("rocm", "unified", 3)
    r = c_consume(consumer, t.__hurray__())
    assert r["rc"] == 0 and r["device_id"] == 3 and r["descriptor"] == t.descriptor.encode()


def test_REQ_NATIVE_VERSION_HR_ABI_4_c_consumer_refuses_other_version(consumer, producer):
    c = producer.make(Tensor(rand(4), hurray.uint8, (4,)).descriptor.encode(), [b"abcd"],
                      abi_version=2, poison=True)
    assert c_consume(consumer, c) == {"rc": "version"}
    assert capsule_name(c) == "hurray_tensor"


# ---- (b) a producer that does not link libhurray, consumed by from_hurray ---------------------


@pytest.mark.parametrize("name,t", TENSORS, ids=[n for n, _ in TENSORS])
def test_REQ_NATIVE_FROM_HURRAY_foreign_producer_consumed(producer, name, t):
    bufs = [bytearray(t.buffer(i)) for i in range(t.buffer_count)]
    lists0, bufs0, ctx0 = producer.counts()
    obj = Foreign(lambda: producer.make(t.descriptor.encode(), bufs, device_id=0))
    u = hurray.from_hurray(obj)
    assert obj.calls == 1
    assert u.descriptor == t.descriptor
    for i, b in enumerate(bufs):
        assert host_address(u.buffer(i)) == host_address(memoryview(b))  # no copy
        assert bytes(u.buffer(i)) == bytes(t.buffer(i))
    assert producer.counts() == (lists0, bufs0, ctx0)
    del u
    gc.collect()
    # released by the producer's own callbacks, exactly once (HR-ABI-5)
    assert producer.counts() == (lists0 + 1, bufs0 + len(bufs), ctx0 + 1)


def test_REQ_NATIVE_FROM_HURRAY_HR_ABI_9_device_id_from_the_context(producer):
    d = Tensor(bytes(8), hurray.float32, (2,),
               device=hurray.Device("rocm", memory_class="unified", device_id=0)).descriptor
    u = hurray.from_hurray(producer.make(d.encode(), [bytearray(8)], device_id=7))
    assert u.device == hurray.Device("rocm", memory_class="unified", device_id=7)


@pytest.mark.parametrize("extra", [-1, 1])
def test_REQ_NATIVE_COUNT_HR_ABI_3_length_mismatch_rejected(producer, extra):
    t = Tensor([rand(256), rand(1024)], hurray.int8, (4, 64),
               quantization=hurray.BlockAffine(1, 32))
    counts0 = producer.counts()
    c = producer.make(t.descriptor.encode(), [t.buffer(0), t.buffer(1)], extra=extra)
    with pytest.raises(hurray.BufferError, match="holds %d buffers; the descriptor declares 2"
                       % (2 + extra)):
        hurray.from_hurray(c)
    assert capsule_name(c) == "hurray_tensor"  # rejected before taking ownership
    del c
    lists, bufs, ctxs = producer.counts()
    assert (lists, bufs, ctxs) == (counts0[0] + 1, counts0[1] + 2, counts0[2] + 1)


def test_REQ_NATIVE_COUNT_HR_ABI_3_size_mismatch_and_bad_descriptor(producer):
    t = Tensor(rand(16), hurray.float32, (4,))
    c = producer.make(t.descriptor.encode(), [bytearray(12)])
    with pytest.raises(hurray.BufferError, match="buffer 0 .* 12 bytes .* declares 16"):
        hurray.from_hurray(c)
    assert capsule_name(c) == "hurray_tensor"
    with pytest.raises(hurray.BufferError, match="does not decode"):
        hurray.from_hurray(producer.make(b"not a descriptor", []))


# ---- (c) another ABI version: UnsupportedError, the list never dereferenced -------------------


@pytest.mark.parametrize("version", [0, 2, 0xFFFFFFFF])
def test_REQ_NATIVE_VERSION_HR_ABI_4_mismatch_list_poisoned(producer, version):
    # the capsule's pointer is an unmapped address: reading the list would crash the process
    d = Tensor(rand(4), hurray.uint8, (4,)).descriptor.encode()
    counts0 = producer.counts()
    c = producer.make(d, [bytearray(4)], abi_version=version, poison=True)
    with pytest.raises(hurray.UnsupportedError, match=f"C ABI version {version}; this build "
                       "reads version 1"):
        hurray.from_hurray(c)
    assert capsule_name(c) == "hurray_tensor"   # not consumed: the producer's destructor frees
    with pytest.raises(hurray.UnsupportedError):
        hurray.from_hurray(Foreign(lambda: producer.make(d, [], abi_version=version,
                                                         poison=True)))
    del c
    gc.collect()
    assert producer.counts()[2] == counts0[2] + 2  # both contexts released by the producer


# ---- 10^6 cycles: no growth ---------------------------------------------------------------------

LEAK_SCRIPT = """
import gc, os, sys
import hurray
from hurray import Tensor

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

N = {n}
t = Tensor([bytes(1024), bytes(1024)], hurray.int8, (4, 256),
           quantization=hurray.BlockAffine(1, 32))
refs = sys.getrefcount(t)
from_hurray = hurray.from_hurray

def cycle(n):
    for _ in range(n):
        from_hurray(t)           # produce + consume + release
        t.__hurray__()           # never consumed: the destructor releases

cycle(20000)
gc.collect()
rss0 = rss()
cycle(N)
gc.collect()
rss1 = rss()
print(rss1 - rss0, sys.getrefcount(t) == refs)
"""


def test_REQ_NATIVE_LEAK_million_produce_consume_cycles():
    if not sys.platform.startswith("linux"):
        pytest.fail("RSS is read from /proc/self/statm")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(LEAK_SCRIPT.format(n=1_000_000))],
                       capture_output=True, text=True, check=False, timeout=600)
    assert r.returncode == 0, r.stderr
    growth, refs_ok = r.stdout.split()
    print(f"native leak check: RSS growth {growth} B over 10^6 cycles")
    assert refs_ok == "True"
    assert int(growth) < 1 << 20, growth
