"""PyTorch through DLPack: hurray.from_torch, Tensor.to_torch, torch.from_dlpack(t) and
torch.utils.dlpack.from_dlpack(t), against the real torch 2.13.0 (CPU wheel; the CUDA tests
skip without a GPU). Zero copy is proven by comparing data pointers.

Seed § PyTorch Interoperability ("from_torch … MUST call tensor.__dlpack__() and wrap the
result … without copying"; "to_torch … MUST call self.__dlpack__() and construct a
torch.Tensor via torch.utils.dlpack.from_dlpack without copying"), § DLPack Interoperability,
§ sync_mode, § copy on ingest, § Packaging (lazy imports).
"""
import gc
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hurray
from hurray import Tensor

import dlpack_util as dl
from dlpack_util import inspect

import torch  # noqa: E402  (a pinned dev dependency: missing torch must fail, not skip)
import torch.utils.dlpack  # noqa: E402

TORCH_TIER1 = {
    "bool": torch.bool, "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16,
    "uint16": torch.uint16, "int32": torch.int32, "uint32": torch.uint32,
    "int64": torch.int64, "uint64": torch.uint64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
    "complex64": torch.complex64, "complex128": torch.complex128,
}
TORCH_FLOAT8 = {
    "float8_e4m3fn": torch.float8_e4m3fn, "float8_e4m3fnuz": torch.float8_e4m3fnuz,
    "float8_e5m2": torch.float8_e5m2, "float8_e5m2fnuz": torch.float8_e5m2fnuz,
    "float8_e8m0fnu": torch.float8_e8m0fnu,
}
SHAPES = [(), (0,), (2, 0), (5,), (2, 3, 4)]
CUDA = torch.cuda.is_available()


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, check=False, timeout=600)


def patterned(name, shape):
    """A hurray tensor of `name` whose bytes are a pattern (0..250 repeating)."""
    t = dl.tensor_of(name, shape)
    b = t.buffer(0)
    b[:] = bytes(i % 251 for i in range(len(b)))
    return t


def torch_bytes(x) -> bytes:
    x = x.contiguous()
    if x.numel() == 0:
        return b""
    return x.reshape(-1).view(torch.uint8).numpy().tobytes()


def hurray_bytes(t) -> bytes:
    return bytes(t.buffer(0))[: hurray.buffer_size_bytes(t.dtype, t.size)]


def ptr(t) -> int:
    return inspect(t.__dlpack__(max_version=(1, 1)))["data"]


# ---- hurray -> torch ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(TORCH_TIER1))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_REQ_TORCH_DTYPES_every_tier1_type_to_torch(name, shape):
    t = patterned(name, shape)
    for convert in (lambda: t.to_torch(), lambda: torch.from_dlpack(t),
                    lambda: torch.utils.dlpack.from_dlpack(t)):
        x = convert()
        assert x.dtype is TORCH_TIER1[name] and tuple(x.shape) == shape
        assert x.device.type == "cpu"
        if x.numel():
            assert x.data_ptr() == ptr(t)  # the same memory: no copy
        if name not in ("bool",):  # bool bytes other than 0/1 are not canonical in torch
            assert torch_bytes(x) == hurray_bytes(t)


@pytest.mark.parametrize("name", list(TORCH_TIER1))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_REQ_TORCH_FROM_TORCH_every_tier1_type(name, shape):
    x = torch.zeros(shape, dtype=TORCH_TIER1[name])
    if x.numel():
        x.view(-1).view(torch.uint8)[:] = torch.arange(x.numel() * x.element_size()) % 7 \
            if name != "bool" else 1
    for convert in (hurray.from_torch, hurray.from_dlpack):
        t = convert(x)
        assert t.dtype is getattr(hurray, name) and t.shape == shape
        if x.numel():
            assert ptr(t) == x.data_ptr()  # no copy
            assert hurray_bytes(t) == torch_bytes(x)
        back = t.to_torch()
        assert back.dtype is x.dtype and tuple(back.shape) == shape
        if x.numel():
            assert back.data_ptr() == x.data_ptr()


def test_REQ_TORCH_ZERO_COPY_large_and_writes_are_shared():
    x = torch.zeros((4096, 4096), dtype=torch.float32)  # 64 MiB
    t = hurray.from_torch(x)
    assert ptr(t) == x.data_ptr() and t.nbytes == 64 << 20
    y = t.to_torch()
    assert y.data_ptr() == x.data_ptr()
    y[4095, 4095] = 7.0
    assert x[4095, 4095] == 7.0 and np.asarray(t)[4095, 4095] == 7.0


def test_REQ_TORCH_ZERO_COPY_layouts():
    x = torch.arange(24, dtype=torch.int64).reshape(4, 6)
    cases = {"row_major": x, "col_major": x.t(), "strided": x[:, ::2]}
    for layout, v in cases.items():
        t = hurray.from_torch(v)
        assert t.layout.name == layout
        assert np.array_equal(np.asarray(t), v.numpy())
        assert ptr(t) == v.data_ptr()
        back = t.to_torch()
        assert back.data_ptr() == v.data_ptr() and back.stride() == v.stride()
        assert torch.equal(back, v)


def test_REQ_TORCH_COPY_ON_INGEST_misaligned_slices():
    x = torch.arange(17, dtype=torch.float32)
    assert x.data_ptr() % 64 == 0
    s = x[1:]  # 4 bytes past an aligned address
    t = hurray.from_torch(s)
    assert ptr(t) != s.data_ptr() and ptr(t) % 64 == 0
    assert np.asarray(t).tolist() == list(range(1, 17))
    with pytest.raises(ValueError, match="copy=False"):
        hurray.from_torch(s, copy=False)
    t = hurray.from_torch(x, copy=True)
    assert ptr(t) != x.data_ptr() and np.asarray(t).tolist() == list(range(17))
    assert ptr(hurray.from_torch(x, copy=False)) == x.data_ptr()


# ---- float8 / float4 ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(TORCH_FLOAT8))
def test_REQ_TORCH_FLOAT8_zero_copy_both_ways(name):
    t = patterned(name, (4, 8))
    x = t.to_torch()  # asks max_version (1, 1) on torch's behalf
    assert x.dtype is TORCH_FLOAT8[name] and tuple(x.shape) == (4, 8)
    assert x.data_ptr() == ptr(t) and torch_bytes(x) == hurray_bytes(t)
    u = hurray.from_torch(x)
    assert u.dtype is t.dtype and ptr(u) == x.data_ptr()
    # torch.from_dlpack asks for (1, 0): the 1.1 codes are not promised to it
    with pytest.raises(BufferError, match=r"only from DLPack 1\.1"):
        torch.from_dlpack(t)
    # a capsule made for a 1.1 consumer goes through torch's own from_dlpack
    y = torch.utils.dlpack.from_dlpack(t.__dlpack__(max_version=(1, 1)))
    assert y.dtype is TORCH_FLOAT8[name] and y.data_ptr() == ptr(t)


def test_REQ_TORCH_FLOAT4_as_float4_e2m1fn_x2():
    t = patterned("float4_e2m1fn", (3, 8))
    x = t.to_torch()  # torch has float4 only as two values a byte
    assert x.dtype is torch.float4_e2m1fn_x2 and tuple(x.shape) == (3, 4)
    assert x.data_ptr() == ptr(t) and torch_bytes(x) == hurray_bytes(t)
    u = hurray.from_torch(x)  # (17, 4, lanes 2) -> float4_e2m1fn, last extent doubled
    assert u.dtype is hurray.float4_e2m1fn and u.shape == (3, 8) and ptr(u) == x.data_ptr()
    assert hurray_bytes(u) == hurray_bytes(t)
    # DLPack 1.1's own description is what __dlpack__ gives every consumer
    assert inspect(t.__dlpack__(max_version=(1, 1)))["dtype"] == (17, 4, 1)
    with pytest.raises(BufferError, match="Unsupported kDLFloat4_e2m1fn lanes 1"):
        torch.utils.dlpack.from_dlpack(t.__dlpack__(max_version=(1, 1)))
    with pytest.raises(BufferError, match="last extent is even"):
        patterned("float4_e2m1fn", (3,)).to_torch()


# ---- refusals --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*dl.SUBBYTE_INT, "float6_e2m3fn", "float6_e3m2fn"])
def test_REQ_TORCH_TIER2_buffererror_not_a_crash(name):
    t = dl.tensor_of(name, (8,))
    for convert in (t.to_torch, lambda: torch.from_dlpack(t),
                    lambda: torch.utils.dlpack.from_dlpack(t)):
        with pytest.raises(BufferError):
            convert()
    gc.collect()
    assert sys.getrefcount(t) == 2  # every refused capsule released the tensor


def test_REQ_TORCH_TIER2_quantized_and_nondense():
    q = Tensor([hurray.zeros((16,), hurray.uint8).buffer(0), hurray.ones((4,)).buffer(0)],
               hurray.int8, (4, 4), quantization=hurray.PerChannelAffine(axis=0))
    with pytest.raises(BufferError, match="quantized"):
        q.to_torch()
    coo = Tensor([hurray.zeros((8,), hurray.uint8).buffer(0),
                  hurray.zeros((32,), hurray.uint8).buffer(0)],
                 hurray.float32, (2, 2), layout=hurray.CooLayout(nnz=2))
    for convert in (coo.to_torch, lambda: torch.from_dlpack(coo)):
        with pytest.raises(BufferError, match="the coo layout"):
            convert()


@pytest.mark.parametrize("mode,name", [(2, "event"), (3, "stream")])
def test_REQ_TORCH_SYNC_to_torch_refuses_unsynced_with_unsupportederror(mode, name):
    t = hurray._hurray._tensor_with_sync_mode(hurray.zeros((4,)), 0, mode)
    with pytest.raises(hurray.UnsupportedError, match=f"sync_mode '{name}'"):
        t.to_torch()
    with pytest.raises(BufferError, match=f"sync_mode '{name}'"):  # __dlpack__: built-in
        torch.from_dlpack(t)


def test_REQ_TORCH_FROM_TORCH_refusals():
    with pytest.raises(TypeError, match="expected a torch.Tensor"):
        hurray.from_torch(np.zeros(3))
    x = torch.zeros(3, requires_grad=True)
    with pytest.raises(BufferError, match="require gradient"):  # torch's own refusal
        hurray.from_torch(x)
    assert hurray.from_torch(x.detach()).shape == (3,)
    with pytest.raises(TypeError, match="copy must be"):
        hurray.from_torch(torch.zeros(3), copy=1)


# ---- capsules through torch -------------------------------------------------------------------------


def test_REQ_TORCH_CAPSULE_refcount_and_single_consumption():
    t = hurray.from_numpy(np.arange(8, dtype=np.float32))
    base = sys.getrefcount(t)
    c = t.__dlpack__(max_version=(1, 1))
    assert sys.getrefcount(t) == base + 1
    x = torch.utils.dlpack.from_dlpack(c)
    assert dl.capsule_name(c) == "used_dltensor_versioned"
    with pytest.raises(Exception):
        torch.utils.dlpack.from_dlpack(c)
    with pytest.raises(hurray.BufferError, match="already consumed"):
        hurray.from_dlpack(c)
    del c
    gc.collect()
    assert sys.getrefcount(t) == base + 1  # torch holds it
    del x
    gc.collect()
    assert sys.getrefcount(t) == base
    legacy = t.__dlpack__()
    y = torch.utils.dlpack.from_dlpack(legacy)
    assert y.data_ptr() == ptr(t)
    del y, legacy
    gc.collect()
    assert sys.getrefcount(t) == base


def test_REQ_TORCH_CAPSULE_torch_capsules_of_both_names():
    x = torch.arange(6, dtype=torch.int32)
    for capsule in (x.__dlpack__(max_version=(1, 0)), torch.utils.dlpack.to_dlpack(x)):
        t = hurray.from_dlpack(capsule)
        assert ptr(t) == x.data_ptr() and np.asarray(t).tolist() == list(range(6))
    assert not hurray.from_dlpack(x.__dlpack__(max_version=(1, 0))).buffer(0).readonly
    assert not hurray.from_dlpack(torch.utils.dlpack.to_dlpack(x)).buffer(0).readonly


def test_REQ_TORCH_CAPSULE_source_lifetime():
    x = torch.arange(1000, dtype=torch.float64)
    p = x.data_ptr()
    t = hurray.from_torch(x)
    del x
    gc.collect()
    a = np.asarray(t)
    assert a.ctypes.data == p and a[999] == 999.0
    y = t.to_torch()
    del t, a
    gc.collect()
    assert y.data_ptr() == p and y[999] == 999.0


TORCH_LEAK = """
import gc, os, sys
import numpy as np, torch, torch.utils.dlpack, hurray

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

x = torch.ones(16)
t = hurray.from_torch(x)
refs = sys.getrefcount(t)

def cycle(n):
    for _ in range(n):
        hurray.from_torch(x)
        t.to_torch()
        torch.from_dlpack(t)

cycle(20000)
gc.collect()
r0 = rss()
cycle({n})
gc.collect()
print(rss() - r0, sys.getrefcount(t) == refs)
"""


def test_REQ_TORCH_LEAK_cycles():
    if not sys.platform.startswith("linux"):
        pytest.skip("RSS is read from /proc/self/statm")
    r = run(TORCH_LEAK.format(n=200_000))
    assert r.returncode == 0, r.stderr
    growth, refs_ok = r.stdout.split()
    print(f"torch leak check: RSS growth {growth} B over 6 x 10^5 exchanges")
    assert refs_ok == "True" and int(growth) < 1 << 20


def test_REQ_TORCH_IMPORTERROR_without_torch():
    r = run("""
        import sys
        sys.modules["torch"] = None          # import torch -> ImportError
        sys.modules["torch.utils.dlpack"] = None
        import hurray
        t = hurray.zeros((2,))
        for call in (lambda: hurray.from_torch(object()), t.to_torch):
            try:
                call()
            except ImportError as e:
                print("ImportError")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ImportError", "ImportError"]


# ---- CUDA (skipped without a GPU) -------------------------------------------------------------------


@pytest.mark.skipif(not CUDA, reason="no CUDA device")
@pytest.mark.parametrize("name", ["float32", "bfloat16", "int64", "float8_e4m3fn"])
def test_REQ_TORCH_GPU_cuda_roundtrip_zero_copy(name):
    dev = torch.device("cuda", torch.cuda.current_device())
    dt = {**TORCH_TIER1, **TORCH_FLOAT8}[name]
    x = torch.zeros((64, 33), dtype=torch.float32, device=dev).to(dt)
    t = hurray.from_torch(x)
    assert t.device.kind == "cuda" and t.device.memory_class == "standard"
    assert t.device_id == dev.index and t.__dlpack_device__() == (dl.kDLCUDA, dev.index)
    assert ptr(t) == x.data_ptr()
    y = t.to_torch()
    assert y.device == x.device and y.data_ptr() == x.data_ptr()
    if name != "float8_e4m3fn":
        z = torch.from_dlpack(t)  # torch passes its current stream
        assert z.data_ptr() == x.data_ptr()
    with pytest.raises(hurray.UnsupportedError, match="cuda"):
        np.asarray(t)


@pytest.mark.skipif(not CUDA, reason="no CUDA device")
def test_REQ_TORCH_GPU_stream_argument_honoured():
    x = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    t = hurray.from_torch(x)  # synchronised: producer_synced
    s = torch.cuda.Stream()
    for stream in (None, -1, 1, 2, s.cuda_stream):
        c = t.__dlpack__(stream=stream, max_version=(1, 1))
        assert inspect(c)["device"][0] == dl.kDLCUDA
    with pytest.raises(ValueError, match="stream=0"):
        t.__dlpack__(stream=0, max_version=(1, 1))
    with torch.cuda.stream(s):
        y = torch.from_dlpack(t)
        assert float(y[-1]) == float((1 << 20) - 1)


@pytest.mark.skipif(not CUDA, reason="no CUDA device")
def test_REQ_TORCH_GPU_cupy_takes_it_zero_copy():
    cupy = pytest.importorskip("cupy")
    x = torch.arange(100, dtype=torch.float32, device="cuda")
    t = hurray.from_torch(x)
    c = cupy.from_dlpack(t)
    assert c.data.ptr == x.data_ptr() and float(c[99]) == 99.0
    u = hurray.from_dlpack(c)
    assert ptr(u) == x.data_ptr() and u.device.kind == "cuda"
