"""No path through hurray crashes a partner or lies to it (docs/spec/dlpack.md HR-DLPACK-3 … 6).

Against the real torch 2.13.0 (CPU wheel) and NumPy. Every input that once aborted the
interpreter inside PyTorch (a `c10::Error` thrown where it cannot be caught, a double free,
SIGSEGV/SIGBUS on a write to read-only memory) is run here in a subprocess, so that a
regression is observed as a failed test, not suffered as a dead test run; each asserts a
clean exception (or a correct tensor) and exit status 0.

  REQ_PARTNER_NO_CRASH      nothing reaching torch.from_dlpack, torch.utils.dlpack.from_dlpack
                            or to_torch from hurray aborts: every layout, element type,
                            device type and capsule version (HR-DLPACK-3, HR-DLPACK-6)
  REQ_PARTNER_TO_TORCH_COPY to_torch(copy=None/True/False) (HR-DLPACK-4)
  REQ_PARTNER_READONLY_COW  read-only data never reaches torch writable (HR-DLPACK-4)
  REQ_PARTNER_NEG_CONJ      torch's lazy negation and conjugation bits never give wrong values
                            (HR-DLPACK-5)
"""
import builtins
import gc
import mmap
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

import hurray
from hurray import StridedLayout, Tensor

import dlpack_util as dl
from dlpack_util import Producer, inspect

import torch  # noqa: E402  (a pinned dev dependency: missing torch must fail, not skip)
import torch.utils.dlpack  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# The four ways a hurray tensor reaches PyTorch.
CONSUMERS = """
import torch, torch.utils.dlpack as tud
CONSUMERS = {
    "to_torch": lambda t: t.to_torch(),
    "torch.from_dlpack": lambda t: torch.from_dlpack(t),
    "torch.from_dlpack(copy=True)": lambda t: torch.from_dlpack(t, copy=True),
    "tud(legacy)": lambda t: tud.from_dlpack(t.__dlpack__()),
    "tud(1.1)": lambda t: tud.from_dlpack(t.__dlpack__(max_version=(1, 1))),
}
"""


def run(*parts: str, timeout=600) -> subprocess.CompletedProcess:
    """The code `parts` (each dedented) in a fresh interpreter, the tests' helpers importable."""
    src = f"import sys; sys.path.insert(0, {HERE!r})\n" + "".join(
        textwrap.dedent(p) for p in parts)
    return subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                          check=False, timeout=timeout)


def assert_clean(r: subprocess.CompletedProcess):
    """Exit status 0: no abort (134/-6), no SIGSEGV (-11), no SIGBUS (-7), no double free."""
    assert r.returncode == 0, (
        f"exit status {r.returncode}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n"
        f"{r.stderr[-3000:]}")
    assert "terminate called" not in r.stderr and "double free" not in r.stderr, r.stderr
    return dict(line.split(" => ", 1) for line in r.stdout.splitlines() if " => " in line)


def aligned(a) -> np.ndarray:
    with hurray.aligned_allocator():
        out = np.array(a, copy=True, order="K")
    assert out.ctypes.data % 64 == 0
    return out


def ptr(x) -> int:
    return inspect(x.__dlpack__(max_version=(1, 1)))["data"]


# ---- HR-DLPACK-3: negative strides --------------------------------------------------------------

NEG_CASES = """
import numpy as np, hurray
from hurray import Tensor, StridedLayout
base = np.arange(60, dtype=np.float64)

def neg(dtype, shape, strides):
    '''A hurray strided tensor over `base` cast to dtype, and its NumPy twin.'''
    a = base.astype(dtype)
    item = a.itemsize
    span_lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    off = -span_lo
    t = Tensor(bytearray(a.tobytes()), getattr(hurray, np.dtype(dtype).name), shape,
               layout=StridedLayout(strides), byte_offset=off * item)
    ref = np.lib.stride_tricks.as_strided(a[off:], shape, [s * item for s in strides])
    return t, ref

CASES = {
    "1d (-1)": ("float32", (5,), (-1,)),
    "2d (4, -1)": ("float32", (3, 4), (4, -1)),
    "2d (-4, 1)": ("int64", (3, 4), (-4, 1)),
    "2d (-1, -3)": ("float64", (3, 4), (-1, -3)),
    "3d (-12, 0, 2)": ("int16", (3, 5, 2), (-12, 0, 2)),
    "3d (1, -2, 6) complex": ("complex128", (2, 3, 4), (1, -2, 6)),
    "bool (-2,)": ("bool", (4,), (-2,)),
    "uint8 (-1, 8)": ("uint8", (6, 3), (-1, 8)),
}
"""


def test_REQ_PARTNER_NO_CRASH_HR_DLPACK_3_negative_strides_every_consumer():
    r = run(NEG_CASES, CONSUMERS, """
    for name, (dtype, shape, strides) in CASES.items():
        for how, consume in CONSUMERS.items():
            t, ref = neg(dtype, shape, strides)
            try:
                x = consume(t)
            except Exception as e:
                print(f"{name} | {how} => {type(e).__name__}: {e}")
                continue
            ok = (tuple(x.shape) == shape and min(x.stride(), default=0) >= 0
                  and np.array_equal(x.numpy(), ref) and x.is_contiguous())
            x.view(-1)[:1] = 0  # a write: never reaches the source
            print(f"{name} | {how} => {'ok' if ok else 'WRONG'} "
                  f"{'unchanged' if np.array_equal(np.asarray(t), ref) else 'CHANGED'}")
    """)
    out = assert_clean(r)
    assert len(out) == 8 * 5, r.stdout
    for key, value in out.items():
        assert value == "ok unchanged", (key, value)


def test_REQ_PARTNER_NO_CRASH_HR_DLPACK_3_copy_false_refuses_naming_the_dimension():
    r = run(NEG_CASES, """
    import torch
    t, ref = neg("float32", (3, 4), (4, -1))
    for how, call in {
        "to_torch": lambda: t.to_torch(copy=False),
        "torch.from_dlpack": lambda: torch.from_dlpack(t, copy=False),
        "__dlpack__": lambda: t.__dlpack__(max_version=(1, 1), copy=False),
    }.items():
        try:
            call()
            print(how, "=> shared")
        except BufferError as e:
            print(how, "=>", type(e).__module__, type(e).__name__, "|", e)
    """)
    out = assert_clean(r)
    assert set(out) == {"to_torch", "torch.from_dlpack", "__dlpack__"}, r.stdout
    for how, value in out.items():
        assert value.startswith("hurray BufferError |"), (how, value)
        assert "negative stride in dimension 1" in value and "copy=False" in value


def test_REQ_PARTNER_NO_CRASH_HR_DLPACK_3_capsule_never_carries_a_negative_stride():
    """No torch here: the capsules themselves, read through ctypes."""
    base = aligned(np.arange(24, dtype=np.float32))
    t = hurray.from_numpy(base.reshape(4, 6)[::-1, ::2])
    assert t.layout == StridedLayout((-6, 2))
    refs = sys.getrefcount(t)
    for max_version in (None, (1, 0), (1, 1)):
        for copy in (None, True):
            c = t.__dlpack__(max_version=max_version, copy=copy)
            info = inspect(c)
            assert info["strides"] == (3, 1) and info["data"] != base.ctypes.data
            if max_version:
                assert info["flags"] == dl.IS_COPIED
            assert np.array_equal(np.from_dlpack(hurray.from_dlpack(c)), np.asarray(t))
            assert sys.getrefcount(t) == refs  # the copy does not hold the tensor
    with pytest.raises(BufferError, match=r"negative stride in dimension 0 \(-6 elements\)") as e:
        t.__dlpack__(max_version=(1, 1), copy=False)
    assert issubclass(e.type, builtins.BufferError)
    # a negative stride no element is reached through: written as 0, shared, no copy
    one = Tensor(bytearray(48), hurray.float32, (1, 4), layout=StridedLayout((-4, 1)))
    info = inspect(one.__dlpack__(max_version=(1, 1), copy=False))
    assert info["strides"] == (0, 1) and info["flags"] == 0
    empty = Tensor(bytearray(16), hurray.float32, (0, 4), layout=StridedLayout((4, -1)),
                   byte_offset=12)
    info = inspect(empty.__dlpack__(copy=False))
    assert info["strides"] == (4, 0)
    # zero (broadcast) strides are not negative: shared as they are
    bcast = Tensor(bytearray(16), hurray.float32, (3, 4), layout=StridedLayout((0, 1)))
    assert inspect(bcast.__dlpack__(copy=False))["strides"] == (0, 1)


def test_REQ_PARTNER_NO_CRASH_HR_DLPACK_3_the_abort_itself_is_torchs():
    """The input that aborted: NumPy's own export of a negative stride still aborts torch
    2.13 (so the rule is needed, and this test notices when PyTorch fixes it)."""
    r = run("""
        import numpy as np, torch
        torch.from_dlpack(np.arange(6.0)[::-1])
    """)
    assert r.returncode != 0 and "Storage size calculation overflowed" in r.stderr


# ---- HR-DLPACK-6: the deleter after PyTorch gave up ----------------------------------------------


def test_REQ_PARTNER_NO_CRASH_HR_DLPACK_6_opencl_capsule_no_double_free():
    r = run(CONSUMERS, """
    import gc, numpy as np, hurray, dlpack_util as dl
    with hurray.aligned_allocator():
        a = np.arange(16, dtype=np.float32)
    p = dl.Producer(a, (16,), device=(dl.kDLOpenCL, 0))
    t = hurray.from_dlpack(p.capsule())
    print("device =>", t.device.kind)
    for how, consume in CONSUMERS.items():
        try:
            consume(t)
            print(how, "=> a tensor")
        except Exception as e:
            print(how, "=>", type(e).__name__)
        gc.collect()
    refs = sys.getrefcount(t)
    del t
    gc.collect()
    print("producer deleter calls =>", p.deleted, dl.Producer.errors)
    """)
    out = assert_clean(r)
    assert out.pop("device") == "opencl"
    assert out.pop("producer deleter calls") == "1 []"
    assert out == {
        "to_torch": "RuntimeError",  # torch: "grandfathered Caffe2 device type opencl"
        "torch.from_dlpack": "RuntimeError",
        "torch.from_dlpack(copy=True)": "BufferError",  # ours: OpenCL memory is not copied
        "tud(legacy)": "RuntimeError",
        "tud(1.1)": "RuntimeError",
    }


DOUBLE_DELETE = """
import gc, sys, numpy as np, hurray, dlpack_util as dl
t = hurray.from_numpy(np.arange(8, dtype=np.float32))
base = sys.getrefcount(t)
for max_version in (None, (1, 1)):
    c = t.__dlpack__(max_version=max_version)
    info = dl.inspect(c)
    assert sys.getrefcount(t) == base + 1
    # what PyTorch does when its import fails late: the deleter is called, the
    # capsule is left under its unused name
    dl.call_deleter(info["address"], info["deleter"])
    assert sys.getrefcount(t) == base, "the first call releases the tensor"
    dl.call_deleter(info["address"], info["deleter"])  # again, while the capsule lives
    assert sys.getrefcount(t) == base, "later calls release nothing"
    assert dl.capsule_name(c) in ("dltensor", "dltensor_versioned")
    del c  # the destructor: the deleter already ran, nothing is released twice
    gc.collect()
    assert sys.getrefcount(t) == base
    print(max_version, "=> ok")
"""


def test_REQ_PARTNER_NO_CRASH_HR_DLPACK_6_deleter_idempotent_while_capsule_lives():
    out = assert_clean(run(DOUBLE_DELETE))
    assert out == {"None": "ok", "(1, 1)": "ok"}


def test_REQ_PARTNER_NO_CRASH_HR_DLPACK_6_capsule_lifetimes_unchanged():
    """The ordinary orders still release exactly once: consumer first, capsule first."""
    t = hurray.from_numpy(np.arange(8, dtype=np.float32))
    base = sys.getrefcount(t)
    c = t.__dlpack__(max_version=(1, 1))
    address, deleter = dl.take(c)  # renamed: the consumer holds the obligation
    del c
    gc.collect()
    assert sys.getrefcount(t) == base + 1  # the capsule is gone, the consumer is not
    dl.call_deleter(address, deleter)
    assert sys.getrefcount(t) == base
    c = t.__dlpack__()
    address, deleter = dl.take(c)
    dl.call_deleter(address, deleter)  # consumer done before the capsule is collected
    assert sys.getrefcount(t) == base
    del c
    gc.collect()
    assert sys.getrefcount(t) == base
    del t  # the unconsumed-capsule path is REQ_DLPACK_CAPSULE_DISCIPLINE's


# ---- every device type, element type and layout, through every consumer --------------------------


def test_REQ_PARTNER_NO_CRASH_every_dlpack_device_type():
    r = run(CONSUMERS, """
    import gc, numpy as np, hurray, dlpack_util as dl
    producers = []
    for code in sorted(dl.DL_TO_HURRAY):
        with hurray.aligned_allocator():
            a = np.arange(16, dtype=np.float32)
        p = dl.Producer(a, (16,), device=(code, 0))
        producers.append(p)
        t = hurray.from_dlpack(p.capsule())
        for how, consume in CONSUMERS.items():
            try:
                x = consume(t)
                print(f"{code} | {how} => torch tensor on {x.device.type}")
                del x
            except Exception as e:
                print(f"{code} | {how} => {type(e).__name__}")
            gc.collect()
        del t
        gc.collect()
    print("deleter calls =>", [p.deleted for p in producers], dl.Producer.errors)
    """)
    out = assert_clean(r)
    calls = out.pop("deleter calls")
    assert calls == str([1] * len(dl.DL_TO_HURRAY)) + " []", calls
    assert len(out) == len(dl.DL_TO_HURRAY) * 5
    cpu = {k: v for k, v in out.items() if k.startswith(f"{dl.kDLCPU} |")}
    assert set(cpu.values()) == {"torch tensor on cpu"}, cpu
    # every other device: a clean exception or a torch tensor of that device, never a crash
    print("\n".join(f"{k} => {v}" for k, v in out.items()))


GRID = CONSUMERS + """
import numpy as np, hurray
from hurray import Tensor, StridedLayout, ColMajorLayout
import dlpack_util as dl

TYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
         "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"]
TORCH = {n: getattr(torch, n) for n in TYPES}

def layouts(item):
    # (name, shape, layout, byte_offset in elements, buffer elements)
    return [
        ("row (3, 4)", (3, 4), None, 0, 12),
        ("col (3, 4)", (3, 4), ColMajorLayout(), 0, 12),
        ("0-d", (), None, 0, 1),
        ("0-d offset", (), None, 3, 4),
        ("offset (2, 2)", (2, 2), None, 5, 9),
        ("size-0 (0, 5)", (0, 5), None, 0, 0),
        ("size-0 strided (5, 0) (-7, 3)", (5, 0), StridedLayout((-7, 3)), 0, 1),
        ("strided gaps (3, 2) (4, 2)", (3, 2), StridedLayout((4, 2)), 0, 12),
        ("broadcast (4, 3) (0, 1)", (4, 3), StridedLayout((0, 1)), 0, 3),
        ("broadcast huge (2**40,) (0,)", (1 << 40,), StridedLayout((0,)), 0, 1),
        ("overlap (3, 3) (1, 1)", (3, 3), StridedLayout((1, 1)), 0, 5),
        ("extent-1 negative (1, 4) (-9, 1)", (1, 4), StridedLayout((-9, 1)), 0, 4),
        ("negative (3, 4) (4, -1)", (3, 4), StridedLayout((4, -1)), 3, 12),
        ("rank 64", (1,) * 63 + (2,), None, 0, 2),
    ]

def elements(raw, item, shape, strides, off):
    # the elements' bytes in C order, read from the raw buffer (the reference)
    v = np.frombuffer(bytes(raw), dtype=f"V{item}")
    return np.lib.stride_tricks.as_strided(v[off:], shape, [s * item for s in strides]).tobytes()

def c_strides(shape):
    out, s = [], 1
    for n in reversed(shape):
        out.append(s)
        s *= n
    return tuple(reversed(out))

for name in TYPES:
    dt = getattr(hurray, name)
    item = dt.bit_width // 8
    for lname, shape, layout, off, n in layouts(item):
        raw = bytearray((i * 37 + 11) % 256 for i in range(max(n, 1) * item))
        if name == "bool":
            raw = bytearray(b % 2 for b in raw)
        kw = {} if layout is None else {"layout": layout}
        t = Tensor(raw, dt, shape, byte_offset=off * item, **kw)
        strides = (layout.strides if isinstance(layout, StridedLayout)
                   else tuple(reversed(c_strides(tuple(reversed(shape)))))
                   if isinstance(layout, ColMajorLayout) else c_strides(shape))
        for how, consume in CONSUMERS.items():
            try:
                x = consume(t)
            except Exception as e:
                print(f"{name} | {lname} | {how} => {type(e).__name__}: {str(e)[:80]}")
                continue
            if x.dtype != TORCH[name] or tuple(x.shape) != shape:
                verdict = "WRONG type/shape"
            elif x.numel() > (1 << 20):
                verdict = "ok (broadcast: not compared)"
            else:
                got = x.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
                want = b"" if 0 in shape else elements(raw, item, shape, strides, off)
                verdict = "ok" if got == want else "WRONG values"
            print(f"{name} | {lname} | {how} => {verdict}")
"""


def test_REQ_PARTNER_NO_CRASH_every_type_and_layout_through_every_consumer():
    """The systematic search, kept: 20 element types x 14 layouts x 5 consumers in one
    interpreter (any abort fails the test, naming the last case printed)."""
    r = run(GRID, timeout=900)
    out = assert_clean(r)
    assert len(out) == 20 * 14 * 5, (len(out), r.stdout[-2000:])
    wrong = {k: v for k, v in out.items() if "WRONG" in v}
    assert not wrong, wrong
    refused = {k: v for k, v in out.items() if not v.startswith("ok")}
    for key, value in refused.items():
        name, _, how = key.split(" | ")
        # float8 has DLPack codes only from 1.1: torch.from_dlpack asks (1, 0), legacy 0.8
        assert name.startswith("float8") and how in (
            "torch.from_dlpack", "torch.from_dlpack(copy=True)", "tud(legacy)"), (key, value)
        assert value.startswith("BufferError: __dlpack__: float8"), (key, value)


# ---- HR-DLPACK-4: read-only data and to_torch's copy ---------------------------------------------


def read_only_sources(tmp_path):
    """(name, tensor, read the source's current values) for every kind of read-only buffer
    the binding holds, each over 16 float32 values."""
    values = np.arange(16, dtype=np.float32)
    out = []
    # a bytes object, borrowed where its data is 64-byte aligned (no copy on ingest)
    b = bytes(64) + values.tobytes()
    k = -np.frombuffer(b, np.uint8).ctypes.data % 64
    view = memoryview(b)[k:k + 64]
    out.append(("bytes", Tensor(view, hurray.float32, (16,), copy=False),
                lambda view=view: np.frombuffer(view, np.float32)))
    ba = bytearray(64) + bytearray(values.tobytes())
    k = -np.frombuffer(ba, np.uint8).ctypes.data % 64
    mv = memoryview(ba)[k:k + 64]
    mv[:] = values.tobytes()
    mv = mv.toreadonly()
    out.append(("read-only memoryview", Tensor(mv, hurray.float32, (16,), copy=False),
                lambda mv=mv: np.frombuffer(mv, np.float32)))
    a = aligned(values)
    a.flags.writeable = False
    out.append(("non-writeable ndarray", hurray.from_numpy(a), lambda a=a: a.copy()))
    path = tmp_path / "values.bin"
    values.tofile(path)
    m = np.memmap(path, dtype=np.float32, mode="r")
    out.append(("numpy.memmap mode 'r'", hurray.from_numpy(m),
                lambda path=path: np.fromfile(path, np.float32)))
    raw = tmp_path / "values.raw"
    values.tofile(raw)
    with open(raw, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # a write would be SIGSEGV
    out.append(("mmap.mmap ACCESS_READ", Tensor(mm, hurray.float32, (16,), copy=False),
                lambda mm=mm: np.frombuffer(mm, np.float32).copy()))
    # (hurray.load(mmap=True) is not among them: its mappings are copy-on-write and writable,
    # HR-FILE-11; test_file_reading.py writes through them and checks the file is unchanged.)
    pa = aligned(values)
    out.append(("READ_ONLY DLPack producer",
                hurray.from_dlpack(Producer(pa, (16,), flags=dl.READ_ONLY).capsule()),
                lambda pa=pa: pa.copy()))
    na = aligned(values)
    na.flags.writeable = False
    out.append(("NumPy's read-only capsule", hurray.from_dlpack(na), lambda na=na: na.copy()))
    view_src = out[0][1]
    out.append(("a tensor over a read-only tensor's buffer",
                Tensor(view_src.buffer(0), hurray.float32, (4, 4)),
                out[0][2]))
    return out


def test_REQ_PARTNER_READONLY_COW_HR_DLPACK_4_every_source_copied_never_written(tmp_path):
    sources = read_only_sources(tmp_path)
    assert len(sources) == 8
    for name, t, current in sources:
        assert t.buffer(0).readonly, name
        before = current().copy()
        x = t.to_torch()
        assert x.data_ptr() != ptr(t), name  # a copy
        assert np.array_equal(x.reshape(-1).numpy(), before), name
        x.add_(1)  # torch lets it be written: it is ours
        x.view(-1)[0] = 100.0
        assert np.array_equal(current(), before), name  # the source never changes
        assert np.array_equal(np.asarray(t).reshape(-1), before), name
        with pytest.raises(BufferError, match="read-only.*copy=False forbids it") as e:
            t.to_torch(copy=False)
        assert isinstance(e.value, hurray.BufferError), name
        y = t.to_torch(copy=True)
        assert y.data_ptr() != ptr(t) and np.array_equal(y.reshape(-1).numpy(), before)
        # __dlpack__ cannot know its consumer: READ_ONLY on a versioned capsule,
        # the legacy capsule refused (dlpack.md § copy and read-only)
        assert inspect(t.__dlpack__(max_version=(1, 1)))["flags"] == dl.READ_ONLY, name
        with pytest.raises(BufferError, match="read-only"):
            t.__dlpack__()


MMAP_WRITE = """
import numpy as np, hurray, torch, sys
path = sys.argv[1]
values = np.arange(1 << 16, dtype=np.float32)
hurray.save(path + ".hry", {"w": hurray.from_numpy(values)})
t = hurray.load(path + ".hry", mmap=True)["w"]
x = t.to_torch()
x.add_(1)                                   # the former SIGSEGV / SIGBUS
print("to_torch add_ =>", float(x[5]), float(np.asarray(t)[5]))
# load_state_dict(assign=True) and one optimizer step: the tester's report
m = torch.nn.Linear(256, 256, bias=False)
w = hurray.load(path + ".hry", mmap=True)["w"]
sd = {"weight": hurray.Tensor(w.buffer(0), hurray.float32, (256, 256)).to_torch()}
m.load_state_dict(sd, assign=True)
opt = torch.optim.SGD(m.parameters(), lr=0.5)
m(torch.ones(1, 256)).sum().backward()
opt.step()
on_disk = np.asarray(hurray.load(path + ".hry")["w"])
print("optimizer step =>", float(np.asarray(w)[5]), float(on_disk[5]))
values.tofile(path + ".bin")
mm = np.memmap(path + ".bin", dtype=np.float32, mode="r")
y = hurray.from_numpy(mm).to_torch()
y.mul_(0)
print("memmap mul_ =>", float(mm[5]), float(y[5]))
"""


def test_REQ_PARTNER_READONLY_COW_HR_DLPACK_4_mapped_files_written_through_torch(tmp_path):
    r = subprocess.run([sys.executable, "-c", MMAP_WRITE, str(tmp_path / "w")],
                       capture_output=True, text=True, check=False, timeout=600)
    out = assert_clean(r)
    # load(mmap=True) maps copy-on-write (HR-FILE-11): torch shares the private pages (the
    # tensor sees the write), the file on disk never changes; a read-only memmap is copied.
    assert out == {"to_torch add_": "6.0 6.0", "optimizer step": "4.5 5.0",
                   "memmap mul_": "5.0 0.0"}


def test_REQ_PARTNER_READONLY_COW_HR_DLPACK_4_writable_and_empty_are_shared():
    a = aligned(np.arange(16, dtype=np.float32))
    t = hurray.from_numpy(a)
    for copy in (None, False):
        x = t.to_torch(copy=copy)
        assert x.data_ptr() == a.ctypes.data
        x[0] = 42.0
        assert a[0] == 42.0  # shared: writes are visible
    # a read-only tensor without elements has nothing to write: shared, copy=False works
    for empty in (Tensor(b"", hurray.float32, (0,)), Tensor(b"", hurray.float32, (4, 0))):
        assert empty.buffer(0).readonly
        assert tuple(empty.to_torch(copy=False).shape) == empty.shape
        assert inspect(empty.__dlpack__())["name"] == "dltensor"  # legacy: not refused


def test_REQ_PARTNER_TO_TORCH_COPY_HR_DLPACK_4_semantics_and_lifetimes():
    a = aligned(np.arange(12, dtype=np.float64).reshape(3, 4))
    t = hurray.from_numpy(a)
    # copy=True: always a copy, writable, not aliased, holding neither t nor a
    x = t.to_torch(copy=True)
    assert x.data_ptr() != a.ctypes.data and x.data_ptr() % 64 == 0
    assert np.array_equal(x.numpy(), a) and x.stride() == (4, 1)
    x[0, 0] = -1.0
    assert a[0, 0] == 0.0
    ref_a, ref_t = weakref.ref(a), weakref.ref(t)
    del a, t
    gc.collect()
    assert ref_a() is None and ref_t() is None  # the copy pins no source
    assert x[2, 3] == 11.0
    # copy=None (writable, non-negative strides): zero copy, pins the tensor and the array
    a = aligned(np.arange(12, dtype=np.float64).reshape(3, 4))
    t = hurray.from_numpy(a)
    y = t.to_torch()
    ref_a, ref_t = weakref.ref(a), weakref.ref(t)
    del a, t
    gc.collect()
    assert ref_a() is not None and ref_t() is not None
    del y
    gc.collect()
    assert ref_a() is None and ref_t() is None
    # a read-only source: the copy pins nothing either
    b = aligned(np.arange(8, dtype=np.int32))
    b.flags.writeable = False
    u = hurray.from_numpy(b)
    z = u.to_torch()
    ref_b, ref_u = weakref.ref(b), weakref.ref(u)
    del b, u
    gc.collect()
    assert ref_b() is None and ref_u() is None and z.tolist() == list(range(8))
    # the argument
    t = hurray.zeros((2,))
    with pytest.raises(TypeError, match="copy must be None, True or False"):
        t.to_torch(copy=1)
    with pytest.raises(TypeError):
        t.to_torch(True)  # keyword-only


def test_REQ_PARTNER_TO_TORCH_COPY_negative_strides_copied_and_refused():
    r = run(NEG_CASES, """
    import gc, weakref
    t, ref = neg("float32", (3, 4), (4, -1))
    for copy in (None, True):
        x = t.to_torch(copy=copy)
        print(f"copy={copy} =>", x.stride(), np.array_equal(x.numpy(), ref))
    w = weakref.ref(t)
    del t
    gc.collect()
    print("pins the source =>", w() is not None)
    """)
    out = assert_clean(r)
    assert out == {"copy=None": "(4, 1) True", "copy=True": "(4, 1) True",
                   "pins the source": "False"}


# ---- HR-DLPACK-5: PyTorch's lazy negation and conjugation ----------------------------------------


def lazy_views():
    """(name, view, bit) for every way torch makes a lazy view whose memory lies."""
    r = torch.arange(1.0, 7.0).reshape(2, 3)
    z = torch.tensor([[1 + 2j, 3 + 4j, 5 + 6j], [7 + 8j, 9 + 10j, 11 + 12j]],
                     dtype=torch.complex128)
    return [
        ("torch._neg_view(float)", torch._neg_view(r), "negation"),
        ("torch._neg_view(int)", torch._neg_view(torch.arange(6).reshape(2, 3)), "negation"),
        ("conj().imag", z.conj().imag, "negation"),
        ("conj().imag.t()", z.conj().imag.t(), "negation"),
        ("conj() complex128", z.conj(), "conjugation"),
        ("conj() complex64", z.to(torch.complex64).conj(), "conjugation"),
        ("conj()[:, ::2]", z.conj()[:, ::2], "conjugation"),
        ("_neg_view(conj())", torch._neg_view(z.conj()), "conjugation"),
    ]


@pytest.mark.parametrize("convert", [hurray.from_torch, hurray.from_dlpack],
                         ids=["from_torch", "from_dlpack"])
def test_REQ_PARTNER_NEG_CONJ_HR_DLPACK_5_true_values_never_the_raw_memory(convert):
    for name, v, bit in lazy_views():
        assert v.is_neg() or v.is_conj(), name
        truth = v.resolve_conj().resolve_neg().numpy()
        for copy in (None, True):
            t = convert(v, copy=copy)
            got = np.asarray(t)
            assert got.dtype == truth.dtype and np.array_equal(got, truth), (name, got, truth)
            assert ptr(t) != v.data_ptr()  # resolved: a copy
        with pytest.raises(ValueError, match=f"lazy {bit} bit.*copy=False forbids it"):
            convert(v, copy=False)
    # no bit: zero copy as before (copy=False works)
    x = torch.arange(6.0)
    assert ptr(convert(x, copy=False)) == x.data_ptr()
    assert ptr(convert(x.conj(), copy=False)) == x.data_ptr()  # conj of real: no bit


def test_REQ_PARTNER_NEG_CONJ_HR_DLPACK_5_lifetimes():
    x = torch.arange(1.0, 5.0)
    v = torch._neg_view(x)
    t = hurray.from_torch(v)
    ref_x, ref_v = weakref.ref(x), weakref.ref(v)
    del x, v
    gc.collect()
    assert ref_x() is None and ref_v() is None  # the resolved copy pins no source
    assert np.asarray(t).tolist() == [-1.0, -2.0, -3.0, -4.0]
    # the zero-copy path pins its source
    x = torch.arange(1.0, 5.0)
    t = hurray.from_torch(x)
    ref_x = weakref.ref(x)
    del x
    gc.collect()
    assert ref_x() is not None
    del t
    gc.collect()
    assert ref_x() is None


def test_REQ_PARTNER_NEG_CONJ_HR_DLPACK_5_torch_own_export_recorded():
    """Why the binding resolves: torch refuses a conjugated tensor and exports a negated one
    as its raw memory; a capsule made by torch keeps the lie (documented, not fixable)."""
    z = torch.tensor([1 + 2j])
    with pytest.raises(BufferError, match="conjugate bit"):
        z.conj().__dlpack__(max_version=(1, 0))
    v = torch._neg_view(torch.tensor([1.0, 2.0]))
    raw = hurray.from_dlpack(torch.utils.dlpack.to_dlpack(v))  # a capsule: nothing to see
    assert np.asarray(raw).tolist() == [1.0, 2.0] and v.tolist() == [-1.0, -2.0]
    assert np.asarray(hurray.from_dlpack(v)).tolist() == [-1.0, -2.0]  # the object: resolved
