"""JAX through DLPack on CPU: jax.numpy.from_dlpack / jax.dlpack.from_dlpack of a hurray tensor
and hurray.from_dlpack of a jax.Array, every Tier 1 type, zero-copy (buffer pointers
compared). JAX asks for no max_version, so it gets (and gives) the legacy `dltensor` capsule
(docs/spec/dlpack.md HR-DLPACK-1).

Seed § DLPack Interoperability; COMPAT-MATRIX.md records the partner versions.
"""
import numpy as np
import pytest

import hurray

import dlpack_util as dl
from dlpack_util import inspect

import jax  # noqa: E402  (a pinned dev dependency: missing jax must fail, not skip)
import jax.dlpack  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)  # int64/float64 stay 64-bit (no silent cast)

JAX_TIER1 = {
    "bool": jnp.bool_, "int8": jnp.int8, "uint8": jnp.uint8, "int16": jnp.int16,
    "uint16": jnp.uint16, "int32": jnp.int32, "uint32": jnp.uint32, "int64": jnp.int64,
    "uint64": jnp.uint64, "float16": jnp.float16, "bfloat16": jnp.bfloat16,
    "float32": jnp.float32, "float64": jnp.float64, "complex64": jnp.complex64,
    "complex128": jnp.complex128,
}
SHAPES = [(), (0,), (2, 0), (5,), (2, 3, 4)]


def ptr(t) -> int:
    return inspect(t.__dlpack__(max_version=(1, 1)))["data"]


def values(name, shape):
    n = int(np.prod(shape))
    if name == "bool":
        v = np.arange(n) % 3 == 0
    elif name.startswith("complex"):
        v = np.arange(n) * (1 + 2j)
    else:
        v = np.arange(n) % 50
    return jnp.asarray(v, dtype=JAX_TIER1[name]).reshape(shape)


@pytest.mark.parametrize("name", list(JAX_TIER1))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_REQ_JAX_ROUNDTRIP_every_tier1_type(name, shape):
    j = values(name, shape)
    t = hurray.from_dlpack(j)  # JAX's legacy capsule
    assert t.dtype is getattr(hurray, name) and t.shape == shape
    assert not t.buffer(0).readonly  # a legacy capsule has no flag (JAX: do not write)
    if j.size:
        assert ptr(t) == j.unsafe_buffer_pointer()  # no copy
    for convert in (jnp.from_dlpack, jax.dlpack.from_dlpack):
        back = convert(hurray.from_dlpack(values(name, shape)))
        assert back.dtype == j.dtype and back.shape == shape
        assert bool(jnp.all(back == j))
    # a writable hurray tensor into JAX and back
    w = dl.tensor_of(name, shape)  # an owned, aligned buffer with j's bytes
    raw = np.asarray(j).tobytes()
    w.buffer(0)[: len(raw)] = raw
    k = jnp.from_dlpack(w)
    assert k.dtype == j.dtype and bool(jnp.all(k == j))
    if j.size:
        assert k.unsafe_buffer_pointer() == ptr(w)  # JAX aliases our aligned buffer


def test_REQ_JAX_ROUNDTRIP_large_zero_copy():
    with hurray.aligned_allocator():
        a = np.ones((2048, 4096), np.float32)  # 32 MiB
    t = hurray.from_numpy(a)
    j = jnp.from_dlpack(t)
    assert j.unsafe_buffer_pointer() == a.ctypes.data
    u = hurray.from_dlpack(j)
    assert ptr(u) == a.ctypes.data and float(j[2047, 4095]) == 1.0


def test_REQ_JAX_ROUNDTRIP_float8_from_jax():
    j = jnp.arange(8, dtype=jnp.float32).astype(jnp.float8_e4m3fn)
    t = hurray.from_dlpack(j)  # code 10 in a legacy capsule: accepted on import
    assert t.dtype is hurray.float8_e4m3fn and ptr(t) == j.unsafe_buffer_pointer()


def test_REQ_JAX_TIER2_buffererror_not_a_crash():
    # JAX asks on the legacy path: float8 is 1.1-only, sub-byte integers have no code
    for name in ("float8_e4m3fn", "int4", "uint2"):
        with pytest.raises(BufferError):
            jnp.from_dlpack(dl.tensor_of(name, (8,)))
    ro = np.arange(4, dtype=np.float32)
    with hurray.aligned_allocator():
        ro = ro.copy()
    ro.flags.writeable = False
    with pytest.raises(BufferError, match="read-only"):
        jnp.from_dlpack(hurray.from_numpy(ro))
