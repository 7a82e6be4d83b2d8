"""hurray: the Python binding of the Hurray tensor interchange format.

The object model lives in the C extension ``hurray._hurray`` (over libhurray,
the C reference implementation); this module only re-exports it. Importing
hurray imports neither NumPy nor PyTorch nor SciPy.
"""
import sys as _sys

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
    StridedLayout,
    TiledLayout,
    UnknownLayout,
    UnsupportedError,
    __version__,
    buffer_size_bytes,
    decode_quantization,
    dtype,
    layout_tag_kind,
)

# `import hurray.dtype` / `from hurray.dtype import int4` reach the namespace
# the extension built from the C dtype table.
_sys.modules.setdefault(__name__ + ".dtype", dtype)

# Every element type by canonical name and alias at top level:
# hurray.float32 is hurray.dtype.float32 (seed § Dtype surface).
_DTYPE_NAMES = tuple(n for n in vars(dtype) if not n.startswith("_"))
globals().update({_n: getattr(dtype, _n) for _n in _DTYPE_NAMES})

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
    *_DTYPE_NAMES,
]

del _sys
