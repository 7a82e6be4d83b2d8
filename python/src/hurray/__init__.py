"""hurray: the Python binding of the Hurray tensor interchange format.

The object model lives in the C extension ``hurray._hurray`` (over libhurray,
the C reference implementation); this module only re-exports it. Importing
hurray imports neither NumPy nor PyTorch nor SciPy.
"""
from __future__ import annotations

import builtins as _builtins
import contextlib as _contextlib
import importlib as _importlib
import sys as _sys
from collections.abc import Callable as _Callable
from collections.abc import Iterator as _Iterator
from types import ModuleType as _ModuleType
from typing import Any as _Any

from . import _hurray
from ._hurray import (
    FORMAT_VERSION,
    MAX_RANK,
    MIN_BUFFER_ALIGNMENT,
    NF4,
    MX,
    NVFP4,
    PAGE_ALIGNMENT,
    BlockAffine,
    BlockPagedLayout,
    BufferError,
    BufferHandle,
    ColMajorLayout,
    Composite,
    CompositeLayout,
    CooLayout,
    CscLayout,
    CsfLayout,
    CsrLayout,
    Descriptor,
    Device,
    Dtype,
    FileError,
    HilbertLayout,
    HurrayError,
    InternalError,
    InvalidDescriptorError,
    Layout,
    MortonLayout,
    PerChannelAffine,
    PerTensorAffine,
    PrivateExtensionLayout,
    Quantization,
    RowMajorLayout,
    Shard,
    Statistics,
    StreamError,
    StreamTimeoutError,
    StreamItem,
    StreamReader,
    StreamWriter,
    StridedLayout,
    Tensor,
    TiledLayout,
    UnknownLayout,
    UnsupportedError,
    __version__,
    asarray,
    buffer_size_bytes,
    decode_quantization,
    empty,
    from_dlpack,
    from_hurray,
    from_numpy,
    from_scipy,
    from_torch,
    full,
    layout_tag_kind,
    load,
    load_bytes,
    load_kv,
    ones,
    save,
    save_bytes,
    sparse_coo,
    zeros,
)

# FileError subclasses by system error: each is also the built-in of its name, so
# `except FileNotFoundError` and `except hurray.FileError` both catch a missing file. Not
# in __all__: a star import must not shadow the built-ins.
from ._hurray import (  # noqa: E402  (`X as X`: re-exported for type checkers, not starred)
    FileExistsError as FileExistsError,
    FileNotFoundError as FileNotFoundError,
    InterruptedError as InterruptedError,
    IsADirectoryError as IsADirectoryError,
    NotADirectoryError as NotADirectoryError,
    PermissionError as PermissionError,
)

# `import hurray.dtype` / `from hurray.dtype import int4` reach the namespace
# the extension built from the C dtype table.
_sys.modules.setdefault(__name__ + ".dtype", _hurray.dtype)

# Every element type by canonical name and alias at top level:
# hurray.float32 is hurray.dtype.float32 (requirements § Dtype surface). The names are the C
# table's; hurray.dtype's __all__ lists them, so that the star import below re-exports them
# and `__all__ += dtype.__all__` extends ours. Type checkers read the same names from
# dtype.pyi (checked against this list by python/tests/test_typing.py).
setattr(_hurray.dtype, "__all__", [_n for _n in vars(_hurray.dtype) if not _n.startswith("_")])
from . import dtype as dtype  # noqa: E402
from .dtype import *  # noqa: E402,F403

_DTYPE_NAMES = tuple(dtype.__all__)


def _numpy_bridge(who: str) -> _ModuleType:
    """hurray._numpy, the NumPy C-API side of the binding, imported on first use."""
    import numpy

    version = tuple(int(p) for p in numpy.__version__.split(".")[:2] if p.isdigit())
    if version < (1, 22):
        raise UnsupportedError(
            f"{who}: NumPy {numpy.__version__} predates NEP 49 data-memory handlers (1.22)"
        )
    return _importlib.import_module(__name__ + "._numpy")


@_contextlib.contextmanager
def aligned_allocator() -> _Iterator[None]:
    """Allocate NumPy arrays 64-byte aligned for the duration of a ``with`` block.

    Installs a NEP 49 data-memory handler (``PyDataMem_SetHandler``) whose blocks are aligned
    to MIN_BUFFER_ALIGNMENT, so that arrays created inside the block ingest with no copy
    (``hurray.from_numpy(a, copy=False)`` succeeds). The previous handler is restored on
    exit, also when the block raises; blocks nest. Arrays keep the handler that allocated
    them and are freed by it after the block.

    NumPy keeps the handler in a context variable: it applies to the current thread (and
    asyncio task) only. A thread started inside the block does NOT inherit the policy: its
    arrays use NumPy's default allocator. There is deliberately no module-level install.
    Raises hurray.UnsupportedError on NumPy older than 1.22 (before NEP 49).
    """
    bridge = _numpy_bridge("aligned_allocator")
    previous = bridge._aligned_handler_push()
    try:
        yield
    finally:
        bridge._aligned_handler_restore(previous)


def _framework_converter(framework: object) -> _Callable[[Tensor], _Any] | None:
    """The callable hurray.open applies to each tensor it returns, for `framework`."""
    if framework is None:
        return None
    if not isinstance(framework, str):
        raise TypeError(f"open: framework must be a str or None, not {type(framework).__name__}")
    name = framework.lower()
    if name in ("numpy", "np"):
        import numpy

        return numpy.asarray
    if name in ("torch", "pt", "pytorch"):
        return Tensor.to_torch
    if name in ("jax", "flax"):
        import jax.numpy

        return jax.numpy.from_dlpack
    raise ValueError(
        f"open: unknown framework {framework!r}; expected None (hurray.Tensor), "
        "'numpy' / 'np', 'torch' / 'pt' or 'jax' / 'flax'"
    )


def open(  # noqa: A001 (the safetensors name)
    path: _hurray._Path,
    *,
    framework: str | None = None,
    mmap: _builtins.bool = True,  # `bool` is hurray.bool, the element type, in here
    **limits: int | None,
) -> _hurray.File:
    """Open a hurray file for lazy access: ``with hurray.open(path) as f: f.get_tensor("w")``.

    Validates the header, the whole index, every gap and the KV section (what every
    reader checks) and loads nothing: ``keys()`` lists the top-level names in file order,
    ``metadata()`` returns the KV section as a dict, ``descriptor(name)`` the entry's
    Descriptor (no data read), ``get_tensor(name)`` loads one entry (its bytes only, mapped
    copy-on-write with ``mmap=True``, read into memory of its own with ``mmap=False``;
    composite members by their names too), and ``get_slice(name)[key]`` reads only the rows
    a basic index (ints, slices with any step, ``...``) selects of a dense row-major
    tensor, into a new tensor. ``name in f`` and ``len(f)`` work as on a mapping.

    ``framework`` converts each returned tensor: None gives hurray.Tensor (or Composite);
    ``"numpy"``/``"np"`` ``numpy.asarray`` (zero-copy); ``"torch"``/``"pt"``
    ``Tensor.to_torch()`` (zero-copy where safe, its copy rules otherwise); ``"jax"``/
    ``"flax"`` ``jax.numpy.from_dlpack``. A composite is returned as hurray.Composite
    whatever the framework.

    The handle is a context manager and also a plain object with ``close()``; tensors it
    returned stay valid after close, and any access after close raises ValueError. Limits
    (``max_buffer_bytes=...``) are load's. Errors are load's: FileError (an OSError for a
    failed system call) naming the file and the tensor, KeyError for a name not in it.
    """
    return _hurray._open(path, mmap, _framework_converter(framework), **limits)


__all__ = [
    "FORMAT_VERSION",
    "MAX_RANK",
    "MIN_BUFFER_ALIGNMENT",
    "PAGE_ALIGNMENT",
    "__version__",
    # errors
    "HurrayError",
    "InvalidDescriptorError",
    "UnsupportedError",
    "BufferError",
    "InternalError",
    "FileError",
    "StreamError",
    "StreamTimeoutError",
    # element types and devices
    "Dtype",
    "dtype",
    "buffer_size_bytes",
    "Device",
    # layouts
    "Layout",
    "RowMajorLayout",
    "ColMajorLayout",
    "StridedLayout",
    "TiledLayout",
    "MortonLayout",
    "HilbertLayout",
    "CooLayout",
    "CsrLayout",
    "CscLayout",
    "CsfLayout",
    "BlockPagedLayout",
    "CompositeLayout",
    "PrivateExtensionLayout",
    "UnknownLayout",
    "layout_tag_kind",
    # quantization
    "Quantization",
    "PerTensorAffine",
    "PerChannelAffine",
    "BlockAffine",
    "NF4",
    "MX",
    "NVFP4",
    "decode_quantization",
    # sections and descriptors
    "Statistics",
    "Shard",
    "Descriptor",
    "BufferHandle",
    # tensors
    "Tensor",
    "zeros",
    "ones",
    "empty",
    "full",
    # composites, files and streams
    "Composite",
    "save",
    "load",
    "load_kv",
    "open",
    "save_bytes",
    "load_bytes",
    "StreamReader",
    "StreamWriter",
    "StreamItem",
    # NumPy (imported on first use, never by `import hurray`)
    "from_numpy",
    "aligned_allocator",
    # DLPack and PyTorch (torch imported on first use, never by `import hurray`)
    "from_dlpack",
    "from_torch",
    # SciPy sparse and the array-shaped constructors (SciPy imported on first use)
    "from_scipy",
    "sparse_coo",
    # the generic ingest entry point
    "asarray",
    # the native protocol (docs/spec/c-abi.md); discovery is hasattr(obj, "__hurray__")
    "from_hurray",
]
__all__ += dtype.__all__

del _sys
