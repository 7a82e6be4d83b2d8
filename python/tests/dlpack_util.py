"""DLPack from the test side, through ctypes: read a capsule without consuming it, and act as
a producer whose every field a test chooses (version, flags, device type, dtype, strides,
byte_offset) and whose deleter counts its calls.

The structures are written here from the published ABI (dmlc/dlpack include/dlpack/dlpack.h),
independently of the binding's dlpack_abi.h, so a test that reads a capsule through them
checks the binding's layout too.
"""
import ctypes
import itertools

import hurray

c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p = (
    ctypes.c_int32, ctypes.c_int64, ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32,
    ctypes.c_uint64, ctypes.c_void_p)

# DLDeviceType values used by the tests (DLPack 1.0).
kDLCPU, kDLCUDA, kDLCUDAHost, kDLOpenCL, kDLVulkan, kDLMetal, kDLVPI = 1, 2, 3, 4, 7, 8, 9
kDLROCM, kDLROCMHost, kDLExtDev, kDLCUDAManaged, kDLOneAPI = 10, 11, 12, 13, 14
kDLWebGPU, kDLHexagon, kDLMAIA, kDLTrn = 15, 16, 17, 18

READ_ONLY, IS_COPIED, SUBBYTE_PADDED = 1, 2, 4


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(c_int64)),
                ("strides", ctypes.POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", c_void_p),
                ("flags", c_uint64), ("dl_tensor", DLTensor)]


api = ctypes.pythonapi
api.PyCapsule_GetName.restype = ctypes.c_char_p
api.PyCapsule_GetName.argtypes = [ctypes.py_object]
api.PyCapsule_GetPointer.restype = c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.restype = ctypes.c_int
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [c_void_p, ctypes.c_char_p, c_void_p]

# Capsule names must outlive the capsules (the capsule keeps the char pointer).
NAMES = {n: ctypes.create_string_buffer(n) for n in
         (b"dltensor", b"dltensor_versioned", b"used_dltensor", b"used_dltensor_versioned",
          b"something_else")}


def capsule_name(capsule) -> str:
    return api.PyCapsule_GetName(capsule).decode()


def _array(values, ctype=c_int64):
    return (ctype * len(values))(*values)


def inspect(capsule) -> dict:
    """Every field of a capsule that has not been consumed, read through the ABI."""
    name = capsule_name(capsule)
    p = api.PyCapsule_GetPointer(capsule, name.encode())
    if name == "dltensor_versioned":
        m = DLManagedTensorVersioned.from_address(p)
        version, flags = (m.version.major, m.version.minor), m.flags
    else:
        assert name == "dltensor", name
        m = DLManagedTensor.from_address(p)
        version, flags = None, None
    t = m.dl_tensor
    n = t.ndim
    return {
        "name": name, "version": version, "flags": flags, "data": t.data or 0,
        "device": (t.device.device_type, t.device.device_id), "ndim": n,
        "dtype": (t.dtype.code, t.dtype.bits, t.dtype.lanes),
        "shape": None if not t.shape else tuple(t.shape[i] for i in range(n)),
        "strides": None if not t.strides else tuple(t.strides[i] for i in range(n)),
        "byte_offset": t.byte_offset, "deleter": m.deleter, "address": p,
    }


def take(capsule):
    """Consume a capsule by hand, as a consumer does: (struct address, deleter address)."""
    info = inspect(capsule)
    used = NAMES[b"used_" + info["name"].encode()]
    assert api.PyCapsule_SetName(capsule, used) == 0
    return info["address"], info["deleter"]


DELETER = ctypes.CFUNCTYPE(None, c_void_p)  # a C call: ctypes releases the GIL around it


def call_deleter(address, deleter):
    DELETER(deleter)(address)


class Producer:
    """A DLPack producer made of ctypes structs over the memory of `source` (any object with
    a buffer address: an ndarray, or an int address with `keep` holding the memory).
    `deleted` counts deleter calls; the structs live until the deleter runs."""

    _live = {}
    _ids = itertools.count(1)
    errors = []  # deleter calls on unknown or already deleted structs

    def __init__(self, source, shape, *, dtype=(2, 32, 1), strides=None, device=(kDLCPU, 0),
                 versioned=True, version=(1, 1), flags=0, byte_offset=0, data=None,
                 keep=None):
        self.deleted = 0
        self.keep = (source, keep)
        if data is None:
            data = source.ctypes.data if hasattr(source, "ctypes") else source
        self.shape = _array(shape)
        self.strides = None if strides is None else _array(strides)
        cls = DLManagedTensorVersioned if versioned else DLManagedTensor
        self.struct = m = cls()
        if versioned:
            m.version.major, m.version.minor = version
            m.flags = flags
        t = m.dl_tensor
        t.data = data
        t.device.device_type, t.device.device_id = device
        t.ndim = len(shape)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = dtype
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(c_int64)) if shape else None
        t.strides = (ctypes.cast(self.strides, ctypes.POINTER(c_int64))
                     if self.strides is not None else None)
        t.byte_offset = byte_offset
        self.id = next(self._ids)
        m.manager_ctx = self.id
        m.deleter = ctypes.cast(_DELETER_FN, c_void_p).value
        self.address = ctypes.addressof(m)
        self.name = b"dltensor_versioned" if versioned else b"dltensor"
        Producer._live[self.id] = self

    def capsule(self, name=None):
        """A capsule over the struct with a DLPack destructor (deleter while unused; none
        where no C compiler could build it, and then an unconsumed capsule leaks)."""
        n = NAMES[name or self.name]
        return api.PyCapsule_New(self.address, n, _DESTRUCTOR_ADDR)

    @property
    def alive(self) -> bool:
        return self.id in Producer._live


def _deleter(address):
    # manager_ctx is at offset 8 (versioned) or 48 (legacy): find the producer by address
    for pid, prod in list(Producer._live.items()):
        if prod.address == address:
            prod.deleted += 1
            del Producer._live[pid]
            return
    Producer.errors.append(f"deleter called on unknown or already deleted struct {address:#x}")


_DELETER_FN = ctypes.CFUNCTYPE(None, c_void_p)(_deleter)


# The capsule destructor is C (a Python callback cannot run while the exception that is
# unwinding past a capsule is pending): a tiny shared object compiled on first import,
# declaring the few CPython functions it calls (resolved in this process).
_DESTRUCTOR_C = r"""
typedef struct _object PyObject;
int PyCapsule_IsValid(PyObject *, const char *);
void *PyCapsule_GetPointer(PyObject *, const char *);
void PyErr_Fetch(PyObject **, PyObject **, PyObject **);
void PyErr_Restore(PyObject *, PyObject *, PyObject *);
typedef void (*deleter_fn)(void *);
void dlpack_test_destructor(PyObject *capsule) {
    PyObject *t, *v, *tb;
    const char *name = 0;
    unsigned long offset = 0; /* of the deleter: 16 versioned, 56 legacy */
    if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        name = "dltensor_versioned";
        offset = 16;
    } else if (PyCapsule_IsValid(capsule, "dltensor")) {
        name = "dltensor";
        offset = 56;
    } else {
        return;
    }
    PyErr_Fetch(&t, &v, &tb);
    char *p = PyCapsule_GetPointer(capsule, name);
    deleter_fn d = *(deleter_fn *)(p + offset);
    if (d) d(p);
    PyErr_Restore(t, v, tb);
}
"""


def _build_destructor():
    import hashlib
    import os
    import subprocess
    import sys
    import tempfile

    key = hashlib.sha256((_DESTRUCTOR_C + sys.version).encode()).hexdigest()[:16]
    d = os.path.join(tempfile.gettempdir(), f"hurray-dlpack-test-{os.getuid()}")
    os.makedirs(d, exist_ok=True)
    so = os.path.join(d, f"destructor-{key}.so")
    if not os.path.exists(so):
        src = so[:-3] + ".c"
        with open(src, "w") as f:
            f.write(_DESTRUCTOR_C)
        tmp = f"{so}.{os.getpid()}"
        r = subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", tmp, src],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None
        os.replace(tmp, so)
    return ctypes.CDLL(so).dlpack_test_destructor


try:
    _DESTRUCTOR = _build_destructor()
except OSError:
    _DESTRUCTOR = None
HAVE_DESTRUCTOR = _DESTRUCTOR is not None
_DESTRUCTOR_ADDR = ctypes.cast(_DESTRUCTOR, c_void_p).value if HAVE_DESTRUCTOR else None


def dl_device_expectations():
    """devices.md § Hurray → DLPack (HR-DEV-5), cell by cell: (kind, memory_class) ->
    DLDeviceType, or None for an Unsupported cell; invalid pairs are absent."""
    table = {
        ("cpu", "standard"): kDLCPU, ("cpu", "host_pinned"): kDLCPU,
        ("cpu", "unified"): kDLCPU,
        ("cuda", "standard"): kDLCUDA, ("cuda", "host_pinned"): kDLCUDAHost,
        ("cuda", "unified"): kDLCUDAManaged, ("cuda", "peer"): None,
        ("rocm", "standard"): kDLROCM, ("rocm", "host_pinned"): kDLROCMHost,
        ("rocm", "unified"): None, ("rocm", "peer"): None,
        ("metal", "standard"): kDLMetal, ("metal", "host_pinned"): kDLMetal,
        ("metal", "unified"): kDLMetal,
        ("vulkan", "standard"): kDLVulkan, ("opencl", "standard"): kDLOpenCL,
        ("oneapi", "standard"): kDLOneAPI, ("oneapi", "host_pinned"): kDLOneAPI,
        ("oneapi", "unified"): kDLOneAPI, ("oneapi", "peer"): None,
        ("webgpu", "standard"): kDLWebGPU, ("hexagon", "standard"): kDLHexagon,
        ("maia", "standard"): kDLMAIA,
    }
    # private device (any class) and any device with a private class: Unsupported
    for mc in ("standard", "host_pinned", "unified", "peer"):
        table[(0xF3, mc)] = None
    for kind in ("cpu", "cuda", "rocm", "metal", "vulkan", "opencl", "oneapi", "webgpu",
                 "hexagon", "maia", 0xF3):
        table[(kind, 0xF7)] = None
    return table


# DLPack -> Hurray (HR-DEV-7)
DL_TO_HURRAY = {
    kDLCPU: ("cpu", "standard"), kDLCUDA: ("cuda", "standard"),
    kDLCUDAHost: ("cuda", "host_pinned"), kDLCUDAManaged: ("cuda", "unified"),
    kDLROCM: ("rocm", "standard"), kDLROCMHost: ("rocm", "host_pinned"),
    kDLMetal: ("metal", "standard"), kDLVulkan: ("vulkan", "standard"),
    kDLOpenCL: ("opencl", "standard"), kDLOneAPI: ("oneapi", "standard"),
    kDLWebGPU: ("webgpu", "standard"), kDLHexagon: ("hexagon", "standard"),
    kDLMAIA: ("maia", "standard"),
}
DL_UNSUPPORTED = (0, 5, 6, kDLVPI, kDLExtDev, kDLTrn, 20, -1)

# Tier 1 element types and their DLPack (code, bits), element-types.md § Partner names.
TIER1_DL = {
    "bool": (6, 8), "int8": (0, 8), "uint8": (1, 8), "int16": (0, 16), "uint16": (1, 16),
    "int32": (0, 32), "uint32": (1, 32), "int64": (0, 64), "uint64": (1, 64),
    "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float64": (2, 64),
    "complex64": (5, 64), "complex128": (5, 128),
}
# DLPack 1.1 codes of the float8/6/4 types
LOWP_DL = {
    "float8_e4m3fn": (10, 8), "float8_e4m3fnuz": (11, 8), "float8_e5m2": (12, 8),
    "float8_e5m2fnuz": (13, 8), "float8_e8m0fnu": (14, 8), "float6_e2m3fn": (15, 6),
    "float6_e3m2fn": (16, 6), "float4_e2m1fn": (17, 4),
}
SUBBYTE_INT = ("int1", "uint1", "int2", "uint2", "int4", "uint4")


def tensor_of(name, shape=(4,)):
    """A CPU row-major tensor of any named type over a zeroed owned buffer."""
    dt = getattr(hurray, name)
    n = 1
    for s in shape:
        n *= s
    nbytes = max(hurray.buffer_size_bytes(dt, n), 1)
    return hurray.Tensor(hurray.zeros((nbytes,), hurray.uint8).buffer(0), dt, shape)
