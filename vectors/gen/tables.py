"""Tag tables of the Hurray 1.0 format, typed in from docs/spec/ (and nothing else).

Every constant here cites the spec page it comes from. The generator's encoder, builders,
mutators and its self-check decoder (oracle.py) all read these tables.
"""

U64_MAX = (1 << 64) - 1
I64_MAX = (1 << 63) - 1
I64_MIN = -(1 << 63)
DYNAMIC = U64_MAX  # memory-layout.md § Shape and dynamic dimensions (HR-SHAPE-2)
MAGIC = b"HRYD"  # descriptor.md § Layout of the bytes
HEADER_BYTES = 32  # fixed part before the shape
MIN_DESCRIPTOR_BYTES = 40  # descriptor.md: the smallest descriptor
MAX_RANK_FORMAT = 64
MAX_ALIGNMENT_LOG2 = 12  # buffer-protocol.md § Buffer table entry (PAGE_ALIGNMENT 4096)

# ---------------------------------------------------------------- status codes ---
# errors-and-limits.md § Status codes (HR-ERR-1)
ERROR_CODES = {
    "OK": 0,
    "TRUNCATED": 1,
    "BAD_MAGIC": 2,
    "VERSION": 3,
    "RESERVED_NONZERO": 4,
    "INVALID_TAG": 5,
    "RESERVED_TAG": 6,
    "LENGTH": 7,
    "OVERFLOW": 8,
    "LIMIT": 9,
    "RANGE": 10,
    "CONSTRAINT": 11,
    "COMBINATION": 12,
    "BUFFER_COUNT": 13,
    "BUFFER_SIZE": 14,
    "ALIGNMENT": 15,
    "SECTION_ORDER": 16,
    "INDEX": 17,
    "DUPLICATE": 18,
    "UNSUPPORTED": 19,
    "ARGUMENT": 20,
    "NOMEM": 21,
    "IO": 22,
    "INTERNAL": 23,
    "OFFSET": 24,
    "OVERLAP": 25,
}

# errors-and-limits.md § Default limits (HR-LIMIT-1): name -> (default, format maximum)
LIMITS = {
    "max_descriptor_bytes": (1048576, (1 << 32) - 8),
    "max_rank": (64, 64),
    "max_buffer_bytes": (1 << 34, U64_MAX),
    "max_composite_depth": (16, 64),
    "max_composite_members": (65536, (1 << 32) - 1),
    "max_kv_entries": (65536, (1 << 32) - 1),
    "max_kv_bytes": (64 * 1024 * 1024, I64_MAX),
    "max_name_bytes": (1024, (1 << 16) - 1),
    "max_file_tensors": (1048576, (1 << 32) - 1),
    "max_alignment_slack": (1048576, U64_MAX),  # HR-LIMIT-2: stream readers
}
DEFAULT_LIMITS = {k: v[0] for k, v in LIMITS.items()}


def effective_limits(options=None):
    """Defaults overridden by a vector's options, each clamped to its format maximum."""
    lim = dict(DEFAULT_LIMITS)
    for k, v in (options or {}).items():
        lim[k] = min(v, LIMITS[k][1])
    return lim


# ---------------------------------------------------------------- tag spaces ---
# conventions.md § Tag spaces: 0x00 and 0xFF invalid; 0xF0-0xFE private only in the
# element-type, device, memory-class, layout and section-type spaces.
def is_invalid_tag(b):
    return b == 0x00 or b == 0xFF


def is_private_tag(b):
    return 0xF0 <= b <= 0xFE


# ---------------------------------------------------------------- element types ---
# element-types.md § Tag table (HR-DTYPE-1): tag -> (name, bits, tier, float, integer, signed)
DTYPES = {
    0x01: ("bool", 8, 1, False, False, False),
    0x02: ("int8", 8, 1, False, True, True),
    0x03: ("uint8", 8, 1, False, True, False),
    0x04: ("int16", 16, 1, False, True, True),
    0x05: ("uint16", 16, 1, False, True, False),
    0x06: ("int32", 32, 1, False, True, True),
    0x07: ("uint32", 32, 1, False, True, False),
    0x08: ("int64", 64, 1, False, True, True),
    0x09: ("uint64", 64, 1, False, True, False),
    0x0A: ("float16", 16, 1, True, False, True),
    0x0B: ("bfloat16", 16, 1, True, False, True),
    0x0C: ("float32", 32, 1, True, False, True),
    0x0D: ("float64", 64, 1, True, False, True),
    0x0E: ("complex64", 64, 1, False, False, True),
    0x0F: ("complex128", 128, 1, False, False, True),
    0x20: ("int1", 1, 2, False, True, True),
    0x21: ("uint1", 1, 2, False, True, False),
    0x22: ("int2", 2, 2, False, True, True),
    0x23: ("uint2", 2, 2, False, True, False),
    0x24: ("int4", 4, 2, False, True, True),
    0x25: ("uint4", 4, 2, False, True, False),
    0x30: ("float8_e4m3fn", 8, 2, True, False, True),
    0x31: ("float8_e4m3fnuz", 8, 2, True, False, True),
    0x32: ("float8_e5m2", 8, 2, True, False, True),
    0x33: ("float8_e5m2fnuz", 8, 2, True, False, True),
    0x34: ("float8_e8m0fnu", 8, 2, True, False, False),
    0x35: ("float6_e2m3fn", 6, 2, True, False, True),
    0x36: ("float6_e3m2fn", 6, 2, True, False, True),
    0x37: ("float4_e2m1fn", 4, 2, True, False, True),
}
DT = {v[0]: k for k, v in DTYPES.items()}  # name -> tag

# integer ranges (element-types.md "format" column): name -> (lo, hi)
INT_RANGE = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "uint8": (0, (1 << 8) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
    "uint64": (0, (1 << 64) - 1),
    "int1": (-1, 0),
    "uint1": (0, 1),
    "int2": (-2, 1),
    "uint2": (0, 3),
    "int4": (-8, 7),
    "uint4": (0, 15),
}


def dtype_kind(tag):
    """'named', 'private', 'reserved' or 'invalid' (HR-DTYPE-2, HR-DTYPE-4)."""
    if is_invalid_tag(tag):
        return "invalid"
    if tag in DTYPES:
        return "named"
    if is_private_tag(tag):
        return "private"
    return "reserved"


def dtype_name(tag):
    return DTYPES[tag][0] if tag in DTYPES else "extension"


def dtype_bits(tag):
    """Bit width, or None for an extension type (width not stated by the format)."""
    return DTYPES[tag][1] if tag in DTYPES else None


def byte_addressable(tag):
    b = dtype_bits(tag)
    return b is not None and b % 8 == 0


def is_integer(tag):
    return tag in DTYPES and DTYPES[tag][4]


TIER1_INTEGERS = [t for t, v in DTYPES.items() if v[2] == 1 and v[4]]

# ---------------------------------------------------------------- devices ---
# devices.md § Device tags (HR-DEV-1)
DEVICES = {
    0x01: "cpu",
    0x02: "cuda",
    0x03: "rocm",
    0x04: "metal",
    0x05: "vulkan",
    0x06: "opencl",
    0x07: "oneapi",
    0x08: "webgpu",
    0x09: "hexagon",
    0x0A: "maia",
}
DEV = {v: k for k, v in DEVICES.items()}
# devices.md § Memory classes (HR-DEV-3)
MEMORY_CLASSES = {0x01: "standard", 0x02: "host_pinned", 0x03: "unified", 0x04: "peer"}
MC = {v: k for k, v in MEMORY_CLASSES.items()}

# devices.md § Validity table (HR-DEV-4): device name -> set of allowed named classes.
# "private class" is allowed for every device; "private device" allows every class.
_ALL = {"standard", "host_pinned", "unified", "peer"}
DEVICE_CLASS_VALID = {
    "cpu": {"standard", "host_pinned", "unified"},
    "cuda": set(_ALL),
    "rocm": set(_ALL),
    "metal": {"standard", "host_pinned", "unified"},
    "vulkan": {"standard"},
    "opencl": {"standard"},
    "oneapi": set(_ALL),
    "webgpu": {"standard"},
    "hexagon": {"standard"},
    "maia": {"standard"},
}


def simple_kind(tag, named):
    if is_invalid_tag(tag):
        return "invalid"
    if tag in named:
        return "named"
    if is_private_tag(tag):
        return "private"
    return "reserved"


def pair_valid(device, memclass):
    """Both tags already known to be named or private."""
    if is_private_tag(device) or is_private_tag(memclass):
        return True
    return MEMORY_CLASSES[memclass] in DEVICE_CLASS_VALID[DEVICES[device]]


def device_name(tag):
    return DEVICES.get(tag, "private")


def memclass_name(tag):
    return MEMORY_CLASSES.get(tag, "private")


# ---------------------------------------------------------------- layouts ---
# memory-layout.md § Layout tags (HR-LAYOUT-1)
ROW_MAJOR, COL_MAJOR, STRIDED, TILED, MORTON, HILBERT = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
COO, CSR, CSC, CSF = 0x10, 0x11, 0x12, 0x13
BLOCK_PAGED = 0x20
COMPOSITE = 0x30
LAYOUTS = {
    ROW_MAJOR: "row_major",
    COL_MAJOR: "col_major",
    STRIDED: "strided",
    TILED: "tiled",
    MORTON: "morton",
    HILBERT: "hilbert",
    COO: "coo",
    CSR: "csr",
    CSC: "csc",
    CSF: "csf",
    BLOCK_PAGED: "block_paged",
    COMPOSITE: "composite",
}
LAY = {v: k for k, v in LAYOUTS.items()}
DENSE_LAYOUTS = {ROW_MAJOR, COL_MAJOR, STRIDED, TILED, MORTON, HILBERT}
SPARSE_LAYOUTS = {COO, CSR, CSC, CSF}


def layout_kind(tag):
    """HR-LAYOUT-2: named / reserved / private / invalid."""
    if is_invalid_tag(tag):
        return "invalid"
    if tag in LAYOUTS:
        return "named"
    if is_private_tag(tag):
        return "private"
    return "reserved"


def layout_name(tag):
    return LAYOUTS.get(tag, "extension")


def pad8(n):
    return (n + 7) // 8 * 8


def layout_param_length(tag, rank):
    """Exact parameter bytes of a named layout (memory-layout.md § Layout tags)."""
    return {
        ROW_MAJOR: 0,
        COL_MAJOR: 0,
        STRIDED: 8 * rank,
        TILED: 24 * rank,
        MORTON: 0,
        HILBERT: 0,
        COO: 8,
        CSR: 8,
        CSC: 8,
        CSF: 9 * rank,  # nnz, fiber_counts[rank-1], mode_order[rank]; block padding is generic
        BLOCK_PAGED: 32,
        COMPOSITE: 8,
    }[tag]


def layout_buffer_count(tag, rank):
    return {
        ROW_MAJOR: 1,
        COL_MAJOR: 1,
        STRIDED: 1,
        TILED: 1,
        MORTON: 1,
        HILBERT: 1,
        COO: 2,
        CSR: 3,
        CSC: 3,
        CSF: 2 * rank + 1,
        BLOCK_PAGED: 3,
        COMPOSITE: 0,
    }[tag]


# memory-layout.md § Composite head
RULES = {0x01: "partition", 0x02: "overlay", 0x03: "group"}
RULE = {v: k for k, v in RULES.items()}
COMBINES = {0x01: "replace", 0x02: "add", 0x03: "max", 0x04: "min"}
COMB = {v: k for k, v in COMBINES.items()}

# ---------------------------------------------------------------- buffers ---
# buffer-protocol.md § Sync modes (HR-BUF-5)
SYNC_MODES = {0x01: "producer_synced", 0x02: "event", 0x03: "stream"}
SYNC = {v: k for k, v in SYNC_MODES.items()}

# ---------------------------------------------------------------- quantization ---
# quantization.md § Scheme tags (HR-QUANT-2): tag -> (name, payload bytes)
SCHEMES = {
    0x01: ("per_tensor_affine", 24),
    0x02: ("per_channel_affine", 16),
    0x03: ("block_affine", 24),
    0x04: ("nf4", 24),
    0x05: ("mx", 16),
    0x06: ("nvfp4", 16),
}
SCH = {v[0]: k for k, v in SCHEMES.items()}
ABSENT_INDEX = 0xFF
SCALE_DTYPES = {DT["float16"], DT["bfloat16"], DT["float32"], DT["float64"]}
ZP_DTYPES = set(TIER1_INTEGERS) | {DT["float16"], DT["bfloat16"], DT["float32"]}
AFFINE_FLOAT8 = {DT["float8_e4m3fn"], DT["float8_e4m3fnuz"], DT["float8_e5m2"], DT["float8_e5m2fnuz"]}
MX_DTYPES = {DT["float8_e4m3fn"], DT["float8_e5m2"], DT["float6_e2m3fn"], DT["float6_e3m2fn"],
             DT["float4_e2m1fn"], DT["int8"]}


def affine_dtype_ok(tag):
    """per_tensor/per_channel/block_affine element types (HR-QUANT-10)."""
    return is_integer(tag) or tag in AFFINE_FLOAT8


# ---------------------------------------------------------------- sections ---
# sections.md: type -> (name, must_understand)
SECT_QUANT, SECT_STATS, SECT_SHARD, SECT_ROLE = 0x01, 0x02, 0x03, 0x04
SECTIONS = {
    SECT_QUANT: ("quantization", 1),
    SECT_STATS: ("statistics", 0),
    SECT_SHARD: ("shard", 0),
    SECT_ROLE: ("member_role", 1),
}
ROLES = {0x01: "base", 0x02: "correction"}
ROLE = {v: k for k, v in ROLES.items()}
