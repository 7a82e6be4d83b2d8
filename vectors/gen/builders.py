"""Valid vectors (y_*), area by area. Sizes in comments are worked out by hand from the spec;
`fill` computes the exact required sizes where a vector does not state them and the self-check
decoder re-derives every requirement independently of the builder's intent."""
from encoder import (F64_INF, F64_NEG_INF, F64_NEG_ZERO, Buf, Desc, encode, f32bits, f64bits)
from tables import (COMB, DEV, DEVICE_CLASS_VALID, DEVICES, DT, DTYPES, I64_MAX, LAY, MC,
                    MEMORY_CLASSES, RULE, SYNC, U64_MAX)

P = "producer_synced"
ABS = 0xFF


def T(x):
    return DT[x] if isinstance(x, str) else x


def L(x):
    return LAY[x] if isinstance(x, str) else x


def D(dtype, shape, layout="row_major", **kw):
    return Desc(T(dtype), shape, L(layout), **kw)


def bufs(*sizes, align=6, sync=0x01):
    return [Buf(s, 0 if s == 0 else align, sync) for s in sizes]


# ------------------------------------------------------------------ quant models ---
def q_tensor(scale=0.05, zp=0, bits=None):
    return {"scheme": 1, "scale": f64bits(scale) if bits is None else bits, "zero_point": zp}


def q_channel(axis, sidx, zidx=ABS, sdt="float32", zdt=None):
    return {"scheme": 2, "axis": axis, "scale_idx": sidx, "zp_idx": zidx, "scale_dtype": T(sdt),
            "zp_dtype": 0 if zdt is None else T(zdt)}


def q_block(axis, sidx, block, zidx=ABS, sdt="float16", zdt=None):
    q = q_channel(axis, sidx, zidx, sdt, zdt)
    q["scheme"] = 3
    q["block_size"] = block
    return q


def q_nf4(block=64, absmax=1, dq=False, nested_block=256, nested_offset=0.5):
    if dq:
        return {"scheme": 4, "flags": 1, "absmax_idx": absmax, "nested_idx": absmax + 1,
                "qmap_idx": absmax + 2, "block_size": block, "nested_block_size": nested_block,
                "nested_offset": f32bits(nested_offset)}
    return {"scheme": 4, "flags": 0, "absmax_idx": absmax, "nested_idx": ABS, "qmap_idx": ABS,
            "block_size": block, "nested_block_size": 0, "nested_offset": 0}


def q_mx(axis, sidx, block=32):
    return {"scheme": 5, "axis": axis, "scale_idx": sidx, "block_size": block}


def q_nvfp4(axis, sidx, block=16, tensor_scale=1.5):
    return {"scheme": 6, "axis": axis, "scale_idx": sidx, "block_size": block,
            "tensor_scale": f32bits(tensor_scale)}


def stats(mn=None, mx=None, nan=None, mn_bits=None, mx_bits=None):
    st = {"flags": 0, "min": 0, "max": 0, "nan_count": 0}
    if mn is not None or mn_bits is not None:
        st["flags"] |= 1
        st["min"] = f64bits(mn) if mn_bits is None else mn_bits
        st["max"] = f64bits(mx) if mx_bits is None else mx_bits
    if nan is not None:
        st["flags"] |= 2
        st["nan_count"] = nan
    return st


def shard(index, count, gshape, goff):
    return {"index": index, "count": count, "global_shape": list(gshape), "global_offset": list(goff)}


def composite(rule, combine=None, members=2):
    return {"rule": RULE[rule], "combine": 0 if combine is None else COMB[combine],
            "member_count": members}


def private(ext_id, data=b""):
    return {"extension_layout_id": ext_id, "extension_data": data}


def csf(nnz, fc, mo):
    return {"nnz": nnz, "fiber_counts": list(fc), "mode_order": list(mo)}


def paged(page_size, num_pages, num_seqs, num_blocks):
    return {"page_size": page_size, "num_pages": num_pages, "num_seqs": num_seqs,
            "num_blocks": num_blocks}


def tiled(t, o, i):
    return {"tile_shape": list(t), "outer_strides": list(o), "inner_strides": list(i)}


# ------------------------------------------------------------------ refs ---
R_DTYPE = ["HR-DTYPE-1", "element-types.md#tag-table-hr-dtype-1"]
R_PACK = ["HR-PACK-1", "HR-PACK-3", "memory-layout.md#sub-byte-packing-hr-pack-1--3"]
R_DESC = ["HR-DESC-2", "descriptor.md#layout-of-the-bytes-hr-desc-2"]
R_ORDER = ["HR-DESC-5", "descriptor.md#decoding-order-hr-desc-5"]
R_SHAPE = ["HR-SHAPE-1", "memory-layout.md#shape-and-dynamic-dimensions-hr-shape-1--4"]
R_DEV = ["HR-DEV-4", "devices.md#validity-table-hr-dev-4"]
R_BUF = ["HR-BUF-1", "buffer-protocol.md#buffer-table-entry-hr-buf-1"]
R_TIERS = ["HR-BUF-9", "buffer-protocol.md#validation-tiers-hr-buf-9--11"]
R_SECT = ["HR-SECT-1", "sections.md#optional-sections"]
R_STAT = ["HR-STAT-1", "sections.md#statistics-hr-stat-1"]
R_SHARD = ["HR-SHARD-1", "sections.md#shard-hr-shard-1"]
R_ROLE = ["HR-ROLE-1", "sections.md#member-role-hr-role-1"]
R_QUANT = ["HR-QUANT-3", "quantization.md#scheme-tags-hr-quant-2"]
R_QCOMPAT = ["HR-QUANT-20", "quantization.md#layout-compatibility-hr-quant-20"]
R_LAYOUT = {
    "row_major": ["HR-LAYOUT-10", "memory-layout.md#row-major-and-column-major-hr-layout-10"],
    "col_major": ["HR-LAYOUT-10", "memory-layout.md#row-major-and-column-major-hr-layout-10"],
    "strided": ["HR-LAYOUT-11", "memory-layout.md#strided-hr-layout-11"],
    "tiled": ["HR-LAYOUT-12", "memory-layout.md#tiled-hr-layout-12"],
    "morton": ["HR-LAYOUT-13", "memory-layout.md#morton-hr-layout-13"],
    "hilbert": ["HR-LAYOUT-14", "memory-layout.md#hilbert-hr-layout-14"],
    "coo": ["HR-LAYOUT-20", "memory-layout.md#coo-hr-layout-20"],
    "csr": ["HR-LAYOUT-21", "memory-layout.md#csr-and-csc-hr-layout-21-hr-layout-22"],
    "csc": ["HR-LAYOUT-22", "memory-layout.md#csr-and-csc-hr-layout-21-hr-layout-22"],
    "csf": ["HR-LAYOUT-23", "memory-layout.md#csf-hr-layout-23"],
    "block_paged": ["HR-PAGED-1", "HR-PAGED-2", "block-paged.md#storage-hr-paged-2"],
    "composite": ["HR-LAYOUT-30", "memory-layout.md#composite-head-hr-layout-30"],
    "private": ["HR-LAYOUT-40", "memory-layout.md#private-extension-layout-hr-layout-40"],
    "unknown": ["HR-LAYOUT-3", "HR-LAYOUT-41", "memory-layout.md#unknown-layout-hr-layout-41"],
}
R_SCHEME = {
    "per_tensor_affine": ["HR-QUANT-10", "quantization.md#per_tensor_affine-hr-quant-10"],
    "per_channel_affine": ["HR-QUANT-11", "quantization.md#per_channel_affine-hr-quant-11"],
    "block_affine": ["HR-QUANT-12", "quantization.md#block_affine-hr-quant-12"],
    "nf4": ["HR-QUANT-13", "quantization.md#nf4-hr-quant-13"],
    "mx": ["HR-QUANT-14", "quantization.md#mx-hr-quant-14"],
    "nvfp4": ["HR-QUANT-15", "quantization.md#nvfp4-hr-quant-15"],
}


# ================================================================== dtype ===
def build_dtype(c):
    for tag, (name, bits, tier, *_r) in sorted(DTYPES.items()):
        c.y(f"y_dtype_{name}", D(tag, [3, 5]),
            f"element type {name} (0x{tag:02X}, {bits} bits, tier {tier}), row_major [3, 5], exact buffer",
            R_DTYPE + R_LAYOUT["row_major"])
    # odd element counts of sub-byte types: ceil(count*bits/8), never floor
    odd = [("int1", 9, 2), ("uint1", 13, 2), ("int2", 5, 2), ("uint2", 7, 2), ("int4", 3, 2),
           ("uint4", 1, 1), ("float6_e2m3fn", 3, 3), ("float6_e3m2fn", 5, 4),
           ("float4_e2m1fn", 7, 4)]
    for name, n, size in odd:
        c.y(f"y_dtype_{name}__odd_count", D(name, [n], buffers=bufs(size)),
            f"{name} x{n} needs ceil({n}*{DTYPES[DT[name]][1]}/8) = {size} bytes (last byte partly padding)",
            R_PACK)
    c.y("y_dtype_int4__byte_offset_3", D("int4", [5], byte_offset=3, buffers=bufs(6)),
        "sub-byte type: byte_offset 3 is legal (no element-width rule); buffer 3 + ceil(20/8) = 6",
        R_PACK + ["HR-DESC-3"])
    c.y("y_dtype_float6_e3m2fn__rank3", D("float6_e3m2fn", [3, 3, 3], buffers=bufs(21)),
        "float6 27 elements = 162 bits -> 21 bytes", R_PACK)
    for name, off in (("complex128", 16), ("float64", 8), ("int16", 2), ("complex64", 24)):
        E = DTYPES[DT[name]][1] // 8
        c.y(f"y_dtype_{name}__byte_offset_{off}", D(name, [2, 2], byte_offset=off),
            f"{name}: byte_offset {off} is a multiple of the element width {E}",
            ["HR-DESC-3"] + R_LAYOUT["row_major"])
    for tag in (0xF0, 0xF7, 0xFE):
        c.y(f"y_dtype_extension__{tag:02x}", D(tag, [4, 4], buffers=bufs(64)),
            f"private extension element type 0x{tag:02X}: width unknown, buffer size not checked",
            ["HR-DTYPE-4", "element-types.md#private-extension-types-hr-dtype-4"] + R_TIERS)
    c.y("y_dtype_extension__empty_buffer", D(0xF3, [16], buffers=bufs(0)),
        "extension element type: the values-buffer requirement depends on the width and is skipped",
        ["HR-DTYPE-4"] + R_TIERS)
    c.y("y_dtype_extension__byte_offset_3", D(0xF1, [4], byte_offset=3, buffers=bufs(64)),
        "extension element type is not byte-addressable: byte_offset 3 has no width rule",
        ["HR-DTYPE-4", "HR-DESC-3"])
    c.y("y_dtype_extension__coo", D(0xF2, [4, 4], "coo", params={"nnz": 3}, buffers=bufs(0, 48)),
        "extension element type with coo: values unchecked, indices 8*2*3 = 48 still checked",
        ["HR-DTYPE-4"] + R_LAYOUT["coo"])
    c.y("y_dtype_extension__composite", D(0xFE, [8], "composite", params=composite("group")),
        "extension element type on a composite head", ["HR-DTYPE-4"] + R_LAYOUT["composite"])
    c.y("y_dtype_bool__rank0", D("bool", []), "bool scalar: rank 0, one byte", R_DTYPE)
    # N*bits at the top of u64 (HR-SHAPE-3) and ceil without overflow (HR-PACK-3)
    big = {"max_buffer_bytes": U64_MAX}
    c.y("y_dtype_int1__count_bits_max",
        D("int1", [(1 << 32) + 1, (1 << 32) - 1], buffers=bufs(1 << 61)),
        "int1 [2^32+1, 2^32-1]: N = N*bits = 2^64-1 fits; buffer ceil((2^64-1)/8) = 2^61 without overflow",
        R_PACK + ["HR-SHAPE-3"], options=big)
    c.y("y_dtype_uint8__count_bits_max", D("uint8", [(1 << 61) - 1], buffers=bufs((1 << 61) - 1)),
        "uint8 [2^61-1]: N*8 = 2^64-8 fits", R_PACK + ["HR-SHAPE-3"], options=big)


# ================================================================== device ===
def build_device(c):
    devs = sorted(DEVICES.items()) + [(0xF0, "private")]
    classes = sorted(MEMORY_CLASSES.items()) + [(0xF0, "private")]
    for dtag, dname in devs:
        for ctag, cname in classes:
            ok = dname == "private" or cname == "private" or cname in DEVICE_CLASS_VALID[dname]
            if ok:
                c.y(f"y_device_{dname}_{cname}",
                    D("float32", [2, 3], device=dtag, memclass=ctag),
                    f"device {dname} (0x{dtag:02X}) with memory class {cname} (0x{ctag:02X}) is allowed",
                    R_DEV + ["HR-DEV-1", "HR-DEV-3"])
    c.y("y_device_private__fe_fe", D("uint8", [4], device=0xFE, memclass=0xFE),
        "private device 0xFE with private memory class 0xFE", R_DEV)
    c.y("y_device_private__f7_peer", D("uint8", [4], device=0xF7, memclass=MC["peer"]),
        "private device 0xF7 with peer memory", R_DEV)
    c.y("y_device_cuda_private__fe", D("uint8", [4], device=DEV["cuda"], memclass=0xFE),
        "cuda with private memory class 0xFE", R_DEV)
    c.y("y_device_maia_private__f5", D("uint8", [4], device=DEV["maia"], memclass=0xF5),
        "maia (standard only among named classes) with a private class", R_DEV)
    c.y("y_device_cuda_standard__csr", D("float16", [4, 4], "csr", params={"nnz": 3},
                                         device=DEV["cuda"], memclass=MC["standard"]),
        "every buffer shares the descriptor's device (one pair per descriptor)",
        ["HR-BUF-7"] + R_DEV)


# ================================================================== layout ===
def build_layout(c):
    R = R_LAYOUT
    # -- row / col major
    c.y("y_layout_row_major__rank0", D("float32", []), "rank-0 scalar, one 4-byte buffer", R["row_major"])
    c.y("y_layout_row_major__rank1", D("int64", [7]), "int64 [7]: 56 bytes", R["row_major"])
    c.y("y_layout_row_major__rank3", D("int32", [2, 3, 4], buffers=bufs(96)), "int32 [2,3,4]: 96 bytes",
        R["row_major"])
    c.y("y_layout_row_major__zero_extent", D("float32", [3, 0, 5], buffers=bufs(0)),
        "a zero extent: N = 0, an empty buffer declaring alignment 1", R["row_major"] + ["HR-SHAPE-3", "HR-BUF-2"])
    c.y("y_layout_row_major__zero_extent_offset", D("float32", [0], byte_offset=16, buffers=bufs(16)),
        "N = 0 with byte_offset 16: buffer needs off + bs(0) = 16", R["row_major"] + ["HR-DESC-3"])
    c.y("y_layout_row_major__byte_offset", D("float32", [4], byte_offset=64, buffers=bufs(80)),
        "byte_offset 64: buffer needs 64 + 16 = 80", R["row_major"] + ["HR-DESC-3"])
    c.y("y_layout_row_major__oversized_buffer", D("uint16", [3, 3], buffers=bufs(4096, align=12)),
        "a buffer larger than required is permitted", R["row_major"] + R_TIERS)
    c.y("y_layout_row_major__dynamic", D("float32", [None, 4], buffers=bufs(256)),
        "dynamic leading extent: the size requirement cannot be evaluated and is skipped",
        R["row_major"] + ["HR-SHAPE-2", "HR-SHAPE-4"])
    c.y("y_layout_row_major__dynamic_all", D("int8", [None, None, None], buffers=bufs(0)),
        "every extent dynamic, empty buffer", R["row_major"] + ["HR-SHAPE-2", "HR-SHAPE-4"])
    c.y("y_layout_col_major__rank2", D("float64", [3, 4]), "col_major float64 [3,4]: 96 bytes", R["col_major"])
    c.y("y_layout_col_major__rank0", D("int8", [], "col_major"), "col_major scalar", R["col_major"])
    c.y("y_layout_col_major__rank4", D("uint4", [3, 1, 2, 3], "col_major", buffers=bufs(9)),
        "col_major uint4 x18: 9 bytes", R["col_major"] + R_PACK)
    # -- strided (float32 unless stated: E = 4)
    S = lambda dt, shape, strides, **kw: D(dt, shape, "strided", params={"strides": strides}, **kw)
    c.y("y_layout_strided", S("float32", [3, 4], [4, 1], buffers=bufs(48)),
        "strided, C-contiguous strides [4,1]: hi = 11, (11+1)*4 = 48", R["strided"])
    c.y("y_layout_strided__fortran", S("float32", [3, 4], [1, 3], buffers=bufs(48)),
        "strided, F-contiguous strides [1,3]", R["strided"])
    c.y("y_layout_strided__negative", S("float32", [4], [-1], byte_offset=12, buffers=bufs(16)),
        "negative stride: off/E = 3, lo = -3 >= -3, hi = 0: needs (3+0+1)*4 = 16", R["strided"])
    c.y("y_layout_strided__negative_2d", S("float32", [3, 4], [-4, 1], byte_offset=32, buffers=bufs(48)),
        "flipped rows: off/E = 8, lo = -8, hi = 3: needs (8+3+1)*4 = 48", R["strided"])
    c.y("y_layout_strided__zero_stride", S("float32", [3, 4], [0, 1], buffers=bufs(16)),
        "broadcast row (stride 0): hi = 3, needs 16", R["strided"])
    c.y("y_layout_strided__all_zero", S("int16", [5, 5], [0, 0], buffers=bufs(2)),
        "every stride 0: one element, 2 bytes", R["strided"])
    c.y("y_layout_strided__padded_rows", S("float32", [3, 4], [8, 1], buffers=bufs(80)),
        "row pitch 8: hi = 16+3 = 19, needs 80", R["strided"])
    c.y("y_layout_strided__overlapping", S("uint8", [3, 3], [1, 1], buffers=bufs(5)),
        "overlapping (aliasing) strides are not forbidden: hi = 4, needs 5", R["strided"])
    c.y("y_layout_strided__rank0", S("float64", [], [], buffers=bufs(8)),
        "rank-0 strided: no parameters, one element", R["strided"])
    c.y("y_layout_strided__zero_extent", S("float32", [0, 4], [4, 1], byte_offset=8, buffers=bufs(8)),
        "N = 0: buffer 0 needs off = 8 bytes", R["strided"])
    c.y("y_layout_strided__dynamic", S("float32", [None, 4], [-4, 1], byte_offset=0, buffers=bufs(16)),
        "dynamic extent: both bound checks depend on every extent and are skipped", R["strided"] + ["HR-SHAPE-4"])
    c.y("y_layout_strided__complex128", S("complex128", [2, 2], [2, 1], buffers=bufs(64)),
        "complex128 (E = 16): hi = 3, needs 64", R["strided"])
    c.y("y_layout_strided__bool", S("bool", [2, 3], [1, 2], buffers=bufs(6)), "bool strided", R["strided"])
    c.y("y_layout_strided__float8", S("float8_e5m2", [4, 2], [2, 1], byte_offset=1, buffers=bufs(9)),
        "float8 is byte-addressable: strided allowed; off 1 + 8 bytes", R["strided"])
    # -- tiled
    Ti = lambda dt, shape, t, o, i, **kw: D(dt, shape, "tiled", params=tiled(t, o, i), **kw)
    c.y("y_layout_tiled", Ti("float32", [4, 6], [2, 3], [12, 6], [3, 1], buffers=bufs(96)),
        "2x3 tiles in a 2x2 grid: hi = 12+6+3+2 = 23, needs 96", R["tiled"])
    c.y("y_layout_tiled__partial_tiles", Ti("float32", [5, 7], [2, 3], [18, 6], [3, 1], buffers=bufs(216)),
        "edge tiles partly outside: grid 3x3, hi = 36+12+3+2 = 53, needs 216", R["tiled"])
    c.y("y_layout_tiled__rank1", Ti("int16", [10], [4], [4], [1], buffers=bufs(24)),
        "rank 1, 3 tiles of 4: hi = 8+3 = 11, needs 24", R["tiled"])
    c.y("y_layout_tiled__rank3", Ti("uint8", [2, 4, 4], [1, 2, 2], [16, 8, 4], [4, 2, 1], buffers=bufs(32)),
        "rank 3: hi = 16+8+4+0+2+1 = 31, needs 32", R["tiled"])
    c.y("y_layout_tiled__tile_exceeds_extent", Ti("float32", [3, 3], [4, 4], [16, 16], [4, 1], buffers=bufs(44)),
        "tile larger than the tensor: grid term 0, in-tile min(4,3)-1: hi = 8+2 = 10, needs 44", R["tiled"])
    c.y("y_layout_tiled__negative_outer", Ti("float32", [4, 4], [2, 2], [-8, 4], [2, 1], byte_offset=32,
                                             buffers=bufs(64)),
        "tile rows stored bottom-up: lo = -8, off/E = 8, hi = 4+2+1 = 7, needs (8+7+1)*4 = 64", R["tiled"])
    # -- morton / hilbert
    c.y("y_layout_morton__2d", D("float16", [4, 8], "morton"), "Z-order [4,8]: 64 bytes", R["morton"])
    c.y("y_layout_morton__3d", D("uint8", [2, 4, 8], "morton"), "Z-order [2,4,8]", R["morton"])
    c.y("y_layout_morton__extent_one", D("float32", [1, 8], "morton"), "extent 1 = 2^0 is a power of two",
        R["morton"])
    c.y("y_layout_morton__int4", D("int4", [8, 8], "morton", buffers=bufs(32)), "any element type: int4 64 x 4 bits",
        R["morton"])
    c.y("y_layout_morton__dynamic", D("float32", [None, 4], "morton", buffers=bufs(64)),
        "a dynamic extent never violates the power-of-two rule", R["morton"] + ["HR-LAYOUT-50"])
    c.y("y_layout_hilbert__8x8", D("float32", [8, 8], "hilbert"), "Hilbert 8x8: 256 bytes", R["hilbert"])
    c.y("y_layout_hilbert__1x1", D("float32", [1, 1], "hilbert"), "Hilbert side 1", R["hilbert"])
    c.y("y_layout_hilbert__2x2", D("int2", [2, 2], "hilbert", buffers=bufs(1)), "Hilbert int2 2x2: 1 byte",
        R["hilbert"])
    c.y("y_layout_hilbert__dynamic", D("float32", [None, 16], "hilbert", buffers=bufs(1024)),
        "n_0 dynamic: squareness cannot be evaluated", R["hilbert"] + ["HR-LAYOUT-50"])
    # -- coo
    c.y("y_layout_coo", D("float32", [4, 5], "coo", params={"nnz": 3}, buffers=bufs(12, 48)),
        "coo nnz 3: values 12, indices 8*2*3 = 48", R["coo"])
    c.y("y_layout_coo__rank1", D("float64", [100], "coo", params={"nnz": 10}, buffers=bufs(80, 80)),
        "coo rank 1", R["coo"])
    c.y("y_layout_coo__rank3", D("int32", [4, 4, 4], "coo", params={"nnz": 5}, buffers=bufs(20, 120)),
        "coo rank 3: indices 8*3*5 = 120", R["coo"])
    c.y("y_layout_coo__nnz0", D("float32", [4, 5], "coo", params={"nnz": 0}, buffers=bufs(0, 0)),
        "coo with no entries: two empty buffers", R["coo"])
    c.y("y_layout_coo__nnz_full", D("uint8", [2, 3], "coo", params={"nnz": 6}, buffers=bufs(6, 96)),
        "nnz = N is allowed", R["coo"])
    c.y("y_layout_coo__zero_extent", D("float32", [0, 5], "coo", params={"nnz": 0}, buffers=bufs(0, 0)),
        "N = 0 with nnz 0", R["coo"])
    c.y("y_layout_coo__dynamic", D("float32", [None, 5], "coo", params={"nnz": 100}, buffers=bufs(400, 1600)),
        "nnz <= N is not checked with a dynamic extent; buffers from nnz still are", R["coo"] + ["HR-SHAPE-4"])
    c.y("y_layout_coo__int4", D("int4", [3, 3], "coo", params={"nnz": 3}, buffers=bufs(2, 48)),
        "sub-byte values: bs(3) = 2", R["coo"] + R_PACK)
    c.y("y_layout_coo__byte_offset", D("float32", [4, 5], "coo", params={"nnz": 3}, byte_offset=16,
                                       buffers=bufs(28, 48)),
        "values off + bs(nnz) = 16 + 12", R["coo"] + ["HR-DESC-3"])
    # -- csr / csc
    c.y("y_layout_csr", D("float32", [3, 4], "csr", params={"nnz": 5}, buffers=bufs(20, 40, 32)),
        "csr: values 20, col_indices 40, row_ptr 8*(3+1) = 32", R["csr"])
    c.y("y_layout_csr__nnz0", D("float32", [3, 4], "csr", params={"nnz": 0}, buffers=bufs(0, 0, 32)),
        "csr with no entries: row_ptr still n_0+1", R["csr"])
    c.y("y_layout_csr__byte_offset", D("float32", [3, 4], "csr", params={"nnz": 5}, byte_offset=8,
                                       buffers=bufs(28, 40, 32)),
        "values off + bs(nnz) = 8 + 20", R["csr"])
    c.y("y_layout_csr__dynamic_rows", D("int8", [None, 4], "csr", params={"nnz": 5}, buffers=bufs(5, 40, 8)),
        "row_ptr depends on the dynamic n_0 and is skipped; values and col_indices are checked",
        R["csr"] + ["HR-SHAPE-4"])
    c.y("y_layout_csr__bool", D("bool", [2, 2], "csr", params={"nnz": 4}, buffers=bufs(4, 32, 24)), "bool csr",
        R["csr"])
    c.y("y_layout_csc", D("float32", [5, 2], "csc", params={"nnz": 4}, buffers=bufs(16, 32, 24)),
        "csc: col_ptr is 8*(n_1+1) = 24 (not n_0)", R["csc"])
    c.y("y_layout_csc__dynamic_cols", D("float64", [3, None], "csc", params={"nnz": 2}, buffers=bufs(16, 16, 0)),
        "col_ptr depends on the dynamic n_1 and is skipped", R["csc"] + ["HR-SHAPE-4"])
    # -- csf
    c.y("y_layout_csf__rank1", D("float32", [10], "csf", params=csf(4, [], [0]), buffers=bufs(16, 16, 32)),
        "csf rank 1 (params 9 bytes): values 16, ptr_0 2 entries, idx_0 4 entries", R["csf"])
    c.y("y_layout_csf__rank2", D("float32", [3, 4], "csf", params=csf(5, [2], [0, 1]),
                                 buffers=bufs(20, 16, 16, 24, 40)),
        "csf rank 2: c = [2, 5]; ptr_0 2, idx_0 2, ptr_1 3, idx_1 5 entries", R["csf"])
    c.y("y_layout_csf__rank2_mode_1_0", D("float32", [3, 4], "csf", params=csf(5, [3], [1, 0])),
        "csf rank 2 compressed by columns first: c_0 = 3 <= n_1 = 4, nnz 5 <= 3*n_0", R["csf"])
    c.y("y_layout_csf__rank3", D("float64", [2, 3, 4], "csf", params=csf(5, [2, 3], [0, 1, 2]),
                                 buffers=bufs(40, 16, 16, 24, 24, 32, 40)),
        "csf rank 3: c = [2, 3, 5], 7 buffers", R["csf"])
    c.y("y_layout_csf__rank5", D("float32", [2, 3, 2, 4, 5], "csf", params=csf(7, [3, 4, 5, 6], [4, 2, 0, 1, 3])),
        "csf rank 5, mode_order [4,2,0,1,3], 11 buffers, params 45 bytes", R["csf"])
    c.y("y_layout_csf__rank9", D("uint8", [2] * 9, "csf", params=csf(9, [1, 2, 3, 4, 5, 6, 7, 8],
                                                                    [8, 7, 6, 5, 4, 3, 2, 1, 0])),
        "csf rank 9: params 81 bytes (padded to 88 by the block), 19 buffers", R["csf"])
    c.y("y_layout_csf__empty", D("float32", [2, 3, 4], "csf", params=csf(0, [0, 0], [0, 1, 2])),
        "every count 0: an empty csf tensor (ptr_0 still 2 entries)", R["csf"])
    c.y("y_layout_csf__dynamic", D("float32", [None, 4], "csf", params=csf(6, [3], [0, 1])),
        "c_0 <= n_0 is not checked for a dynamic n_0", R["csf"] + ["HR-SHAPE-4"])
    c.y("y_layout_csf__int2", D("int2", [4, 4], "csf", params=csf(5, [3], [1, 0])),
        "csf sub-byte values: bs(5) = 2", R["csf"] + R_PACK)
    # -- block_paged
    c.y("y_layout_block_paged", D("float16", [2, 10, 4, 8], "block_paged", params=paged(4, 6, 2, 6),
                                  buffers=bufs(1536, 24, 48)),
        "KV cache: 6 pages of 4 tokens x [4,8] float16 = 1536 bytes; seq_ptr 3 entries; block_table 6",
        R["block_paged"])
    c.y("y_layout_block_paged__rank2", D("int8", [3, 100], "block_paged", params=paged(16, 20, 3, 21)),
        "rank 2 (no inner dims): pages 20*16 = 320 bytes", R["block_paged"])
    c.y("y_layout_block_paged__aliasing", D("bfloat16", [4, 32, 16], "block_paged", params=paged(8, 5, 4, 16)),
        "16 block-table entries over 5 pages: aliasing is legal", R["block_paged"])
    c.y("y_layout_block_paged__dynamic_seqs", D("float32", [None, 64, 8], "block_paged",
                                                params=paged(16, 10, 4, 10)),
        "num_seqs is compared with shape[0] only when resolved", R["block_paged"] + ["HR-SHAPE-4"])
    c.y("y_layout_block_paged__dynamic_inner", D("float32", [2, 32, None], "block_paged",
                                                 params=paged(16, 4, 2, 4), buffers=bufs(0, 24, 32)),
        "an inner dynamic extent: the pages requirement is skipped, index buffers checked",
        R["block_paged"] + ["HR-SHAPE-4"])
    c.y("y_layout_block_paged__dynamic_max_seq_len", D("float32", [2, None, 8], "block_paged",
                                                       params=paged(16, 4, 2, 4), buffers=bufs(2048, 24, 32)),
        "max_seq_len dynamic: the pages requirement does not depend on it and is checked (4*16*8*4)",
        R["block_paged"] + ["HR-SHAPE-4"])
    c.y("y_layout_block_paged__uint4", D("uint4", [1, 33, 3], "block_paged", params=paged(32, 2, 1, 2),
                                         buffers=bufs(96, 16, 16)),
        "sub-byte pages: 2*32*3 = 192 elements -> 96 bytes", R["block_paged"] + R_PACK)
    # -- composite
    c.y("y_layout_composite__partition", D("float32", [8, 8], "composite", params=composite("partition", None, 4)),
        "composite head, rule partition, combine not applicable, 4 members", R["composite"] + ["HR-COMP-1"])
    for comb in ("replace", "add", "max", "min"):
        c.y(f"y_layout_composite__overlay_{comb}",
            D("bfloat16", [16, 4], "composite", params=composite("overlay", comb, 2)),
            f"composite head, rule overlay, combine {comb}", R["composite"] + ["HR-COMP-2"])
    c.y("y_layout_composite__group", D("int8", [3], "composite", params=composite("group", None, 3)),
        "composite head, rule group", R["composite"])
    c.y("y_layout_composite__rank0", D("float64", [], "composite", params=composite("group", None, 1)),
        "composite head of any rank, 0 included; one member", R["composite"])
    c.y("y_layout_composite__dynamic", D("float32", [None, 8], "composite", params=composite("partition", None, 2)),
        "composite head with a dynamic extent", R["composite"])
    c.y("y_layout_composite__max_members", D("float32", [4], "composite", params=composite("group", None, 65536)),
        "member_count = max_composite_members (default 65536)", R["composite"] + ["HR-LIMIT-1"])
    c.y("y_layout_composite__members_at_option_limit",
        D("float32", [4], "composite", params=composite("overlay", "add", 4)),
        "member_count 4 with max_composite_members = 4", R["composite"] + ["HR-LIMIT-1"],
        options={"max_composite_members": 4})
    # -- private extension layouts
    c.y("y_layout_private__f0", D("float32", [16], 0xF0, params=private(1), buffers=bufs(64)),
        "private layout 0xF0, id 1, no extension data, one buffer", R["private"])
    c.y("y_layout_private__fe_data", D("float32", [4, 4], 0xFE, params=private(0xCAFE, b"hello, hurray"),
                                       buffers=bufs(64)),
        "private layout 0xFE with 13 bytes of extension data (params 21, padded to 24)", R["private"])
    c.y("y_layout_private__data_8", D("uint8", [8], 0xF5, params=private(7, bytes(range(1, 9))),
                                      buffers=bufs(8)),
        "private layout with 8 bytes of extension data (no padding)", R["private"])
    c.y("y_layout_private__no_buffers", D("int8", [3, 3], 0xF1, params=private(2)),
        "private layout without buffers (buffer count unknown: tier 1 does not run)", R["private"])
    c.y("y_layout_private__many_buffers", D("float16", [10], 0xF2, params=private(3, b"\x01"),
                                            buffers=bufs(1, 0, 4096, 7, 65)),
        "private layout with 5 buffers of arbitrary sizes (tier 2 does not run)", R["private"])
    c.y("y_layout_private__id_max", D("float32", [2], 0xF9, params=private(0xFFFFFFFF, b"\xff" * 3),
                                      buffers=bufs(1)),
        "extension_layout_id 0xFFFFFFFF, data ff ff ff", R["private"])
    c.y("y_layout_private__rank0", D("complex64", [], 0xF3, params=private(9)), "private layout, rank 0",
        R["private"])
    c.y("y_layout_private__byte_offset", D("float32", [4], 0xF4, params=private(4), byte_offset=4,
                                           buffers=bufs(20)),
        "private layout with a byte_offset that is a multiple of E", R["private"] + ["HR-DESC-3"])
    # -- unknown (reserved-tag) layouts
    for tag, pl, nb in ((0x07, b"", 0), (0x14, b"\x01\x02\x03", 1), (0x21, bytes(range(8)), 2),
                        (0x31, bytes(range(100, 117)), 0), (0x40, b"\xaa" * 64, 3), (0xEF, b"", 1)):
        c.y(f"y_layout_unknown__{tag:02x}_params{len(pl)}",
            D("float32", [4, 4], tag, params={"params": pl}, buffers=bufs(*([64] * nb))),
            f"reserved layout tag 0x{tag:02X} is carried: {len(pl)} opaque parameter bytes, {nb} buffers",
            R["unknown"])


# ================================================================== quant ===
def build_quant(c):
    RS = R_SCHEME
    pt = RS["per_tensor_affine"]
    # -- per_tensor_affine over element types and zero-point extremes
    for name, zp in (("int8", 0), ("uint8", 128), ("int16", -32768), ("uint16", 65535), ("int32", -5),
                     ("uint32", (1 << 32) - 1), ("int64", -(1 << 63)), ("uint64", I64_MAX),
                     ("int1", -1), ("uint1", 1), ("int2", -2), ("uint2", 3), ("int4", -8), ("uint4", 15),
                     ("float8_e4m3fn", 0), ("float8_e4m3fnuz", 0), ("float8_e5m2", 0),
                     ("float8_e5m2fnuz", 0)):
        c.y(f"y_quant_per_tensor_affine__{name}", D(name, [4, 8], quant=q_tensor(0.125, zp)),
            f"per_tensor_affine over {name}, zero_point {zp}", pt + R_QUANT)
    c.y("y_quant_per_tensor_affine__scale_subnormal", D("int8", [4], quant=q_tensor(bits=1)),
        "scale = smallest positive subnormal f64: finite and > 0", pt)
    c.y("y_quant_per_tensor_affine__scale_max", D("int8", [4], quant=q_tensor(bits=0x7FEFFFFFFFFFFFFF)),
        "scale = largest finite f64", pt)
    for lay, kw in (("col_major", {}), ("strided", {"params": {"strides": [1, 4]}}),
                    ("tiled", {"params": tiled([2, 2], [8, 4], [2, 1])}), ("morton", {}), ("hilbert", {}),
                    ("coo", {"params": {"nnz": 3}}), ("csr", {"params": {"nnz": 3}}),
                    ("csc", {"params": {"nnz": 3}}), ("csf", {"params": csf(3, [2], [0, 1])})):
        c.y(f"y_quant_per_tensor_affine__{lay}", D("int8", [4, 4], lay, quant=q_tensor(0.5, 3), **kw),
            f"per_tensor_affine on {lay}" + (" (applies to the values buffer)" if lay in ("coo", "csr", "csc", "csf") else ""),
            pt + R_QCOMPAT)
    c.y("y_quant_per_tensor_affine__block_paged", D("int8", [2, 16, 4], "block_paged", params=paged(8, 4, 2, 4),
                                                    quant=q_tensor(0.5, 0)),
        "per_tensor_affine on block_paged", pt + ["HR-PAGED-3"])
    c.y("y_quant_per_tensor_affine__private_layout", D("uint8", [8], 0xF0, params=private(1), buffers=bufs(8),
                                                       quant=q_tensor(2.0, 7)),
        "per_tensor_affine on a private layout", pt + R_QCOMPAT)
    c.y("y_quant_per_tensor_affine__unknown_layout", D("int4", [8], 0x15, params={"params": b"\x09"},
                                                       buffers=bufs(4), quant=q_tensor(2.0, -3)),
        "per_tensor_affine on an unknown layout", pt + R_QCOMPAT)
    c.y("y_quant_per_tensor_affine__dynamic", D("int8", [None, 16], quant=q_tensor(0.01, -1), buffers=bufs(64)),
        "per_tensor_affine with a dynamic extent", pt)
    # -- per_channel_affine; int8 [4,8] values = 32 bytes
    pc = RS["per_channel_affine"]
    c.y("y_quant_per_channel_affine", D("int8", [4, 8], quant=q_channel(0, 1), buffers=bufs(32, 16)),
        "symmetric per-channel along axis 0: scale buffer 1 = 4 float32", pc + R_QUANT)
    c.y("y_quant_per_channel_affine__zero_point", D("uint8", [4, 8], quant=q_channel(1, 1, 2, "float32", "uint8"),
                                                    buffers=bufs(32, 32, 8)),
        "asymmetric per-channel along axis 1: scale 8 float32, zero points 8 uint8", pc + R_QUANT)
    for sdt, size in (("float16", 8), ("bfloat16", 8), ("float64", 32)):
        c.y(f"y_quant_per_channel_affine__scale_{sdt}", D("int8", [4, 8], quant=q_channel(0, 1, sdt=sdt),
                                                          buffers=bufs(32, size)),
            f"scale_dtype {sdt}", pc)
    for zdt in ("int8", "int32", "uint64", "float16", "bfloat16", "float32"):
        c.y(f"y_quant_per_channel_affine__zp_{zdt}", D("int8", [4, 8], quant=q_channel(0, 1, 2, "float32", zdt)),
            f"zero_point_dtype {zdt}", pc)
    c.y("y_quant_per_channel_affine__int4", D("int4", [3, 5], quant=q_channel(0, 1, 2, "float16", "int8"),
                                              buffers=bufs(8, 6, 3)),
        "sub-byte codes int4 x15 = 8 bytes; 3 float16 scales, 3 int8 zero points", pc + R_PACK)
    c.y("y_quant_per_channel_affine__float8", D("float8_e4m3fn", [4, 8], quant=q_channel(1, 1, sdt="bfloat16")),
        "per-channel over float8_e4m3fn codes", pc)
    for lay, kw in (("col_major", {}), ("strided", {"params": {"strides": [1, 4]}}),
                    ("tiled", {"params": tiled([2, 2], [8, 4], [2, 1])}), ("morton", {}), ("hilbert", {})):
        c.y(f"y_quant_per_channel_affine__{lay}", D("int8", [4, 4], lay, quant=q_channel(1, 1), **kw),
            f"per_channel_affine on the dense layout {lay}", pc + R_QCOMPAT)
    c.y("y_quant_per_channel_affine__block_paged_axis2",
        D("int8", [2, 16, 4], "block_paged", params=paged(8, 4, 2, 4), quant=q_channel(2, 3, 4, "float32", "int8"),
          buffers=bufs(128, 24, 32, 16, 4)),
        "per-channel along inner axis 2 of block_paged: scale index L = 3", pc + ["HR-PAGED-3"])
    c.y("y_quant_per_channel_affine__private_layout",
        D("int8", [4, 8], 0xF6, params=private(5), quant=q_channel(0, 2, 1, "float32", "int8"),
          buffers=bufs(32, 4, 16)),
        "private layout: L unknown, indices only distinct and < buffer_count (scale 2, zp 1)",
        pc + R_QCOMPAT)
    c.y("y_quant_per_channel_affine__dynamic_axis", D("int8", [None, 8], quant=q_channel(0, 1), buffers=bufs(64, 4)),
        "the channel extent is dynamic: the scale-buffer requirement is skipped", pc + ["HR-SHAPE-4"])
    c.y("y_quant_per_channel_affine__zero_extent", D("int8", [0, 8], quant=q_channel(0, 1, 2, "float32", "int8"),
                                                     buffers=bufs(0, 0, 0)),
        "channel extent 0: every buffer empty", pc)
    # -- block_affine
    ba = RS["block_affine"]
    c.y("y_quant_block_affine", D("uint4", [4, 64], quant=q_block(1, 1, 32, 2, "float16", "uint8"),
                                  buffers=bufs(128, 16, 8)),
        "groups of 32 along axis 1: scale shape [4,2] float16 = 16 bytes, zero points 8 bytes", ba + R_QUANT)
    c.y("y_quant_block_affine__no_zp", D("int8", [4, 64], quant=q_block(1, 1, 32)),
        "symmetric block_affine", ba)
    c.y("y_quant_block_affine__partial_block", D("int8", [3, 100], quant=q_block(1, 1, 32, sdt="float32"),
                                                 buffers=bufs(300, 48)),
        "ceil(100/32) = 4 blocks per row: 12 float32 scales", ba)
    c.y("y_quant_block_affine__axis0", D("int4", [128, 3], quant=q_block(0, 1, 64, 2, "bfloat16", "int8"),
                                         buffers=bufs(192, 12, 6)),
        "blocks along axis 0: scale shape [2,3]", ba)
    c.y("y_quant_block_affine__block1", D("uint8", [2, 3], quant=q_block(1, 1, 1, sdt="float64"),
                                          buffers=bufs(6, 48)),
        "block_size 1 (one scale per element)", ba)
    c.y("y_quant_block_affine__zero_extent", D("int8", [0, 64], quant=q_block(1, 1, 32), buffers=bufs(0, 0)),
        "N = 0: the scale array has 0 elements", ba)
    c.y("y_quant_block_affine__rank3", D("uint4", [2, 3, 40], quant=q_block(2, 1, 16, 2, "float32", "float16"),
                                         buffers=bufs(120, 72, 36)),
        "rank 3 along the last axis: 2*3*ceil(40/16) = 18 scales", ba)
    # -- nf4
    nf = RS["nf4"]
    c.y("y_quant_nf4", D("uint4", [128], quant=q_nf4(64), buffers=bufs(64, 8)),
        "nf4 block 64: 2 blocks, absmax 2 float32", nf + R_QUANT)
    c.y("y_quant_nf4__double_quant", D("uint4", [4096], quant=q_nf4(64, dq=True, nested_block=256),
                                       buffers=bufs(2048, 64, 4, 1024)),
        "nf4 double quant: 64 absmax codes, ceil(64/256) = 1 nested float32, 256-entry quant map", nf)
    c.y("y_quant_nf4__block32", D("uint4", [100], quant=q_nf4(32), buffers=bufs(50, 16)),
        "block 32: ceil(100/32) = 4 blocks", nf)
    c.y("y_quant_nf4__block4096", D("uint4", [8192], quant=q_nf4(4096)), "block 4096: 2 blocks", nf)
    c.y("y_quant_nf4__2d", D("uint4", [16, 16], quant=q_nf4(64)), "nf4 blocks run over the row-major order", nf)
    c.y("y_quant_nf4__double_quant_nested32",
        D("uint4", [64, 64], quant=q_nf4(64, dq=True, nested_block=32, nested_offset=-0.25)),
        "double quant with nested_block_size 32: 64 blocks -> 2 nested scales", nf)
    c.y("y_quant_nf4__private_layout", D("uint4", [64], 0xF8, params=private(8), quant=q_nf4(64, absmax=3),
                                         buffers=bufs(32, 1, 1, 4)),
        "nf4 on a private layout: absmax index 3 < buffer_count", nf + R_QCOMPAT)
    # -- mx
    mx = RS["mx"]
    for name, data in (("float8_e4m3fn", 128), ("float8_e5m2", 128), ("float6_e2m3fn", 96), ("float6_e3m2fn", 96),
                       ("float4_e2m1fn", 64), ("int8", 128)):
        c.y(f"y_quant_mx__{name}", D(name, [2, 64], quant=q_mx(1, 1), buffers=bufs(data, 4)),
            f"MX over {name}: 2 rows x 2 blocks of 32 -> 4 E8M0 scale bytes", mx + R_QUANT)
    c.y("y_quant_mx__axis0", D("float8_e4m3fn", [64, 3], quant=q_mx(0, 1), buffers=bufs(192, 6)),
        "MX blocks along axis 0: scale shape [2,3]", mx)
    c.y("y_quant_mx__partial_block", D("float4_e2m1fn", [2, 40], quant=q_mx(1, 1), buffers=bufs(40, 4)),
        "ceil(40/32) = 2 blocks per row: 4 scales", mx)
    c.y("y_quant_mx__col_major", D("float8_e5m2", [32, 2], "col_major", quant=q_mx(0, 1)),
        "MX on col_major", mx + R_QCOMPAT)
    # -- nvfp4
    nv = RS["nvfp4"]
    c.y("y_quant_nvfp4", D("float4_e2m1fn", [2, 48], quant=q_nvfp4(1, 1), buffers=bufs(48, 6)),
        "NVFP4: 2 x 3 blocks of 16 -> 6 e4m3 scales, tensor_scale 1.5", nv + R_QUANT)
    c.y("y_quant_nvfp4__partial_block", D("float4_e2m1fn", [3, 20], quant=q_nvfp4(1, 1, tensor_scale=0.001),
                                          buffers=bufs(30, 6)),
        "ceil(20/16) = 2 blocks per row", nv)
    c.y("y_quant_nvfp4__axis0", D("float4_e2m1fn", [32, 5], quant=q_nvfp4(0, 1), buffers=bufs(80, 10)),
        "blocks along axis 0", nv)
    c.y("y_quant_nvfp4__morton", D("float4_e2m1fn", [4, 32], "morton", quant=q_nvfp4(1, 1)),
        "NVFP4 on morton (a dense layout)", nv + R_QCOMPAT)
    # -- standalone payloads (kind "quantization")
    R1 = ["HR-QUANT-1"]
    c.yq("y_quant_standalone_per_tensor_affine", q_tensor(0.05, -3), "standalone per_tensor_affine, 24 bytes",
         R1 + pt)
    c.yq("y_quant_standalone_per_tensor_affine__zp_min", q_tensor(1e-300, -(1 << 63)),
         "standalone per_tensor_affine, zero_point -2^63", R1 + pt)
    c.yq("y_quant_standalone_per_channel_affine", q_channel(1, 1), "standalone per_channel_affine, symmetric",
         R1 + pc)
    c.yq("y_quant_standalone_per_channel_affine__zero_point", q_channel(0, 1, 2, "bfloat16", "int32"),
         "standalone per_channel_affine with zero points", R1 + pc)
    c.yq("y_quant_standalone_block_affine", q_block(1, 1, 128, 2, "float16", "uint8"),
         "standalone block_affine", R1 + ba)
    c.yq("y_quant_standalone_nf4", q_nf4(64), "standalone nf4", R1 + nf)
    c.yq("y_quant_standalone_nf4__double_quant", q_nf4(64, dq=True, nested_block=256, nested_offset=0.0078125),
         "standalone nf4 with double quant", R1 + nf)
    c.yq("y_quant_standalone_mx", q_mx(1, 1), "standalone mx", R1 + mx)
    c.yq("y_quant_standalone_nvfp4", q_nvfp4(0, 1, tensor_scale=448.0), "standalone nvfp4", R1 + nv)


# ================================================================== sect ===
def build_sect(c):
    f = lambda **kw: D("float32", [4, 4], **kw)
    c.y("y_sect_statistics__min_max", f(stats=stats(-1.5, 2.25)), "statistics with min/max", R_STAT)
    c.y("y_sect_statistics__nan_count", f(stats=stats(nan=3)), "statistics with nan_count only", R_STAT)
    c.y("y_sect_statistics__both", f(stats=stats(-7.0, 7.0, nan=0)), "statistics with both fields", R_STAT)
    c.y("y_sect_statistics__equal", f(stats=stats(0.5, 0.5)), "min = max", R_STAT)
    c.y("y_sect_statistics__neg_zero_min", f(stats=stats(mn_bits=F64_NEG_ZERO, mx_bits=0)),
        "min -0.0, max +0.0: equal by value", R_STAT)
    c.y("y_sect_statistics__infinite", f(stats=stats(mn_bits=F64_NEG_INF, mx_bits=F64_INF)),
        "min -inf, max +inf: only NaN is refused", R_STAT)
    c.y("y_sect_statistics__nan_count_eq_n", f(stats=stats(nan=16)), "nan_count = N", R_STAT)
    c.y("y_sect_statistics__int32", D("int32", [10], stats=stats(-2147483648.0, 2147483647.0)),
        "integer statistics widened to f64", R_STAT)
    c.y("y_sect_statistics__dynamic", D("float32", [None, 4], buffers=bufs(64), stats=stats(nan=1000)),
        "nan_count <= N is not checked with a dynamic extent", R_STAT + ["HR-SHAPE-4"])
    c.y("y_sect_statistics__composite", D("float32", [8], "composite", params=composite("group", None, 2),
                                          stats=stats(0.0, 1.0)),
        "statistics on a composite head", R_STAT)
    c.y("y_sect_shard", f(shard=shard(2, 4, [8, 8], [4, 0])), "shard 2 of 4 at [4,0] in [8,8]", R_SHARD)
    c.y("y_sect_shard__rank0", D("float64", [], shard=shard(0, 1, [], [])), "rank-0 shard: 8-byte payload",
        R_SHARD)
    c.y("y_sect_shard__whole", f(shard=shard(0, 1, [4, 4], [0, 0])), "one shard covering the global tensor",
        R_SHARD)
    c.y("y_sect_shard__touching_edge", D("int8", [3, 5], shard=shard(5, 6, [6, 10], [3, 5])),
        "box ending exactly at the global edge", R_SHARD)
    c.y("y_sect_shard__dynamic_local", D("float32", [None, 4], buffers=bufs(64),
                                         shard=shard(1, 2, [100, 4], [99, 0])),
        "a dynamic local extent: its containment is not checked", R_SHARD + ["HR-SHAPE-4"])
    c.y("y_sect_shard__max_index", D("int8", [1], shard=shard(0xFFFFFFFE, 0xFFFFFFFF, [I64_MAX], [I64_MAX - 1])),
        "shard_index 2^32-2 of 2^32-1, global extent 2^63-1", R_SHARD)
    c.y("y_sect_shard__composite", D("float32", [4, 8], "composite", params=composite("partition", None, 2),
                                     shard=shard(1, 2, [8, 8], [4, 0])),
        "a nested composite placed by a shard section", R_SHARD + ["HR-COMP-2"])
    c.y("y_sect_role__base", f(role=0x01), "member role base", R_ROLE + ["HR-COMP-3"])
    c.y("y_sect_role__correction", f(role=0x02, shard=shard(0, 1, [8, 8], [2, 2])),
        "member role correction with its box", R_ROLE + ["HR-COMP-3"])
    c.y("y_sect_role__composite", D("float32", [8, 8], "composite", params=composite("overlay", "add", 2), role=0x02),
        "a composite overlay correction that is itself composite", R_ROLE)
    c.y("y_sect_all_known", D("int8", [4, 4], quant=q_tensor(0.5, 1), stats=stats(-128.0, 127.0, nan=0),
                              shard=shard(0, 2, [8, 4], [0, 0]), role=0x01),
        "quantization, statistics, shard and role in ascending type order", R_SECT)
    U = "HR-SECT-3"
    c.y("y_sect_unknown__reserved_05", f(unknown=[(0x05, 0, b"abc")]),
        "reserved section type 0x05, must_understand 0: carried verbatim (3 bytes + 5 padding)", R_SECT + [U])
    c.y("y_sect_unknown__reserved_ef_empty", f(unknown=[(0xEF, 0, b"")]), "reserved type 0xEF, empty payload",
        R_SECT + [U])
    c.y("y_sect_unknown__private_f0", f(unknown=[(0xF0, 0, bytes(range(16)))]),
        "private section type 0xF0, 16 bytes", R_SECT + [U])
    c.y("y_sect_unknown__private_fe", f(unknown=[(0xFE, 0, b"\xff")]), "private type 0xFE, one 0xFF byte",
        R_SECT + [U])
    c.y("y_sect_unknown__multiple", f(unknown=[(0x05, 0, b"x"), (0x10, 0, b"\x00" * 9), (0xF3, 0, b"hurray")]),
        "three unknown sections in ascending order", R_SECT + [U])
    c.y("y_sect_unknown__interleaved", f(stats=stats(1.0, 2.0), unknown=[(0x05, 0, b"\x01\x02"),
                                                                          (0xF0, 0, b"\x03")]),
        "statistics (0x02) then unknown 0x05 and 0xF0", R_SECT + [U])
    c.y("y_sect_unknown__after_known", D("int8", [4, 4], quant=q_tensor(0.5, 1), stats=stats(nan=0),
                                         shard=shard(0, 1, [4, 4], [0, 0]), role=0x02,
                                         unknown=[(0x05, 0, b"\x01"), (0xFE, 0, bytes(40))]),
        "all four known sections then two unknown ones", R_SECT + [U])
    c.y("y_sect_unknown__zero_tail", f(unknown=[(0x99, 0, b"\x07\x00\x00")]),
        "an unknown payload whose last bytes are zero: its length is kept, not trimmed", R_SECT + [U])


# ================================================================== desc ===
# descriptor.md § Worked example (informative): the bytes as the spec prints them
WORKED_EXAMPLE = bytes.fromhex(
    "48525944010000004800000000000000"
    "0c010101020100000000000000000000"
    "02000000000000000300000000000000"
    "18000000000000000601000000000000"
    "0000000000000000")
WORKED_STATS = bytes.fromhex(
    "0200000020000000"      # section header: statistics, must_understand 0, length 32
    "0100000000000000"      # flags has_min_max, reserved
    "000000000000f8bf"      # min -1.5
    "0000000000000040"      # max 2.0
    "0000000000000000")     # nan_count (absent)


def build_desc(c):
    d = c.y("y_desc_worked_example", D("float32", [2, 3]),
            "the worked example of descriptor.md: float32 [2,3] row_major on the CPU, 72 bytes", R_DESC)
    if encode(d) != WORKED_EXAMPLE:
        raise AssertionError("encoder disagrees with descriptor.md § Worked example")
    d = c.y("y_desc_worked_example__statistics", D("float32", [2, 3], stats=stats(-1.5, 2.0)),
            "the worked example with its statistics section (min -1.5, max 2.0): 112 bytes", R_DESC + R_STAT)
    ex = bytearray(WORKED_EXAMPLE + WORKED_STATS)
    ex[22] = 1
    ex[8:12] = (112).to_bytes(4, "little")
    if encode(d) != bytes(ex):
        raise AssertionError("encoder disagrees with descriptor.md § Worked example (statistics)")
    c.y("y_desc_minimal", D("float32", [], 0x07, params={"params": b""}),
        "the smallest descriptor: 40 bytes (rank 0, unknown layout, no buffers, no parameters, no sections)", R_DESC)
    c.y("y_desc_rank0_row_major", D("uint8", []), "rank 0 row_major: 56 bytes", R_DESC)
    shape64 = [1] * 54 + [2] * 10
    c.y("y_desc_rank64", D("float32", shape64, buffers=bufs(4096)), "rank 64 (the format maximum)",
        R_DESC + R_SHAPE)
    c.y("y_desc_rank64__strided", D("int8", shape64, "strided", params={"strides": [0] * 54 + [1 << k for k in range(10)]},
                                    buffers=bufs(1024)),
        "rank 64 strided: 512 parameter bytes", R_DESC + R_LAYOUT["strided"])
    c.y("y_desc_rank64__dynamic", D("float32", [None] * 64, buffers=bufs(64)), "rank 64, every extent dynamic",
        R_DESC + R_SHAPE)
    c.y("y_desc_rank64__shard", D("int8", [1] * 64, shard=shard(0, 1, [1] * 64, [0] * 64)),
        "rank-64 shard section: 8 + 16*64 bytes", R_SHARD)
    c.y("y_desc_rank_at_option_limit", D("int8", [2] * 8), "rank 8 with max_rank 8", R_ORDER + ["HR-LIMIT-1"],
        options={"max_rank": 8})
    for minor in (1, 255):
        c.y(f"y_desc_version_minor__{minor}", D("float32", [2], version=(1, minor)),
            f"version 1.{minor}: a 1.x reader accepts every minor and re-encodes it", ["HR-DESC-4"])
    c.y("y_desc_trailing_bytes__1", D("float32", [2]), "one trailing byte after encoded_len is ignored",
        ["HR-DESC-1"], trailing=b"\xa5")
    c.y("y_desc_trailing_bytes__garbage", D("int8", [3, 3]), "100 trailing bytes after encoded_len",
        ["HR-DESC-1"], trailing=bytes((i * 37 + 11) & 0xFF for i in range(100)))
    c.y("y_desc_trailing_bytes__next_descriptor", D("int8", [3]), "a second descriptor follows: only the first is read",
        ["HR-DESC-1"], trailing=bytes.fromhex("48525944010000002800000000000000"
                                              "0c01010700000000" "0000000000000000" "0000000000000000"))
    c.y("y_desc_len_at_option_limit", D("float32", [2]), "encoded_len 64 = max_descriptor_bytes 64",
        R_ORDER + ["HR-LIMIT-1"], options={"max_descriptor_bytes": 64})
    c.y("y_desc_buffer_at_limit", D("uint8", [None], buffers=bufs(1 << 34)),
        "buffer size 2^34 = max_buffer_bytes (default)", R_BUF + ["HR-LIMIT-1"])
    c.y("y_desc_buffer_at_option_limit", D("uint8", [1024], buffers=bufs(1024)),
        "buffer size 1024 with max_buffer_bytes 1024", R_BUF + ["HR-LIMIT-1"], options={"max_buffer_bytes": 1024})
    c.y("y_desc_extent_max", D("uint1", [I64_MAX], buffers=bufs(1 << 60)),
        "extent 2^63-1, the largest resolved (uint1 so that N*bits fits): buffer ceil((2^63-1)/8) = 2^60",
        R_SHAPE, options={"max_buffer_bytes": U64_MAX})
    c.y("y_desc_buffer_size_u64_max", D("uint8", [16], buffers=bufs(U64_MAX)),
        "buffer size 2^64-1 with max_buffer_bytes at its format maximum", R_BUF + ["HR-LIMIT-1"],
        options={"max_buffer_bytes": U64_MAX})
    c.y("y_desc_max_alignment", D("float32", [8], buffers=bufs(4096, align=12)),
        "alignment_log2 12 (4096 bytes), the largest expressible", R_BUF + ["HR-BUF-3"])
    c.y("y_desc_alignment_1", D("float32", [8], buffers=bufs(32, align=0)), "a non-empty buffer declaring 1",
        R_BUF)
    c.y("y_desc_alignment_each", D("uint8", [13], 0xF0, params=private(1),
                                   buffers=[Buf(13, a) for a in range(13)]),
        "13 buffers declaring every alignment 1 ... 4096", R_BUF)
    c.y("y_desc_sync_event", D("float32", [8], device=DEV["cuda"], buffers=bufs(32, sync=SYNC["event"])),
        "sync mode event", ["HR-BUF-5"])
    c.y("y_desc_sync_stream", D("float32", [8], device=DEV["rocm"], buffers=bufs(32, sync=SYNC["stream"])),
        "sync mode stream", ["HR-BUF-5"])
    c.y("y_desc_sync_mixed", D("float32", [3, 4], "csr", params={"nnz": 5}, device=DEV["cuda"],
                               buffers=[Buf(20, 6, 1), Buf(40, 6, 2), Buf(32, 6, 3)]),
        "one buffer per sync mode", ["HR-BUF-5"])
    c.y("y_desc_max_buffers", D("uint8", [255], 0xFD, params=private(255),
                                buffers=[Buf(i, 0 if i == 0 else i % 13) for i in range(255)]),
        "255 buffers (the largest buffer_count) under a private layout", R_DESC + R_BUF)
    c.y("y_desc_max_sections", D("int8", [2], quant=q_tensor(1.0, 0), stats=stats(0.0, 1.0), shard=shard(0, 1, [2], [0]),
                                 role=0x01, unknown=[(t, 0, bytes([t])) for t in range(0x05, 0xFF)]),
        "254 sections: every type 0x01-0xFE once, ascending", R_SECT + R_DESC)
    c.y("y_desc_large_private_data", D("float32", [4], 0xF0, params=private(42, bytes((i * 7) & 0xFF for i in range(4093))),
                                       buffers=bufs(16)),
        "4093 bytes of private layout data (params 4101, padded)", R_LAYOUT["private"] + R_DESC)
    c.y("y_desc_shape_zero_with_huge__zero_first", D("float32", [0, 1 << 62, 4], buffers=bufs(0)),
        "N = 0 because one extent is 0; the other extents multiply past 2^64 but N is 0, not OVERFLOW",
        R_SHAPE + ["HR-SHAPE-3"])
    c.y("y_desc_shape_zero_with_huge__zero_last", D("float32", [1 << 62, 4, 0], buffers=bufs(0)),
        "as zero_first with the zero extent last (a left-to-right multiply must not overflow first)",
        R_SHAPE + ["HR-SHAPE-3"])
    c.y("y_desc_dynamic_with_large", D("uint8", [None, 1 << 30, 1 << 20], buffers=bufs(64)),
        "resolved extents multiply to 2^50 (x8 bits fits) next to a dynamic one", R_SHAPE + ["HR-SHAPE-3"])
    c.y("y_desc_everything", D("int8", [4, 8], "strided", params={"strides": [-8, 1]}, byte_offset=24,
                               device=DEV["cuda"], memclass=MC["unified"], version=(1, 3),
                               quant=q_channel(1, 1, 2, "float16", "int8"), stats=stats(-3.0, 5.0, nan=0),
                               shard=shard(1, 2, [8, 8], [4, 0]), role=0x02,
                               unknown=[(0x77, 0, b"later-minor"), (0xF4, 0, b"private")],
                               buffers=[Buf(32, 6, 1), Buf(16, 6, 1), Buf(8, 4, 2)]),
        "every part at once: strided with a negative stride, quantization, all sections, unknown sections",
        R_DESC + R_SECT)


def build_all(c):
    build_dtype(c)
    build_device(c)
    build_layout(c)
    build_quant(c)
    build_sect(c)
    build_desc(c)
