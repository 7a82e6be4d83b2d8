"""Invalid vectors (n_*). Most start from a valid base descriptor (checked valid first) and
change one wire field through the raw record; the rest are descriptors whose model breaks a
single semantic rule. The self-check decoder confirms the expected (first) status of each."""
from builders import (D, bufs, composite, csf, paged, private, q_block, q_channel, q_mx,
                      q_nf4, q_nvfp4, q_tensor, shard, stats, tiled, R_BUF, R_DESC, R_DEV,
                      R_LAYOUT, R_ORDER, R_QCOMPAT, R_QUANT, R_ROLE, R_SCHEME, R_SECT, R_SHAPE,
                      R_SHARD, R_STAT, R_TIERS, R_PACK)
from encoder import (F32_INF, F32_NAN, F32_NEG_ZERO, F64_INF, F64_NAN, F64_NEG_INF, F64_NEG_ZERO,
                     encode, encode_quant, f32bits, f64bits, u32, u64)
from corpus import fill
from tables import DEVICE_CLASS_VALID, DEVICES, DT, DYNAMIC, I64_MAX, MEMORY_CLASSES, U64_MAX

R_TAGS = ["conventions.md#tag-spaces"]
R_RES = ["conventions.md#reserved-fields"]
R_PAD = ["conventions.md#byte-order-and-integers"]


def setb(b, i, v):
    b = bytearray(b)
    b[i] = v
    return bytes(b)


def sets(**kw):
    """mutate: set raw header fields."""
    def m(r):
        r.update(kw)
    return m


def buf_field(i, **kw):
    def m(r):
        r["buffers"][i].update(kw)
    return m


def sec_field(i, **kw):
    def m(r):
        r["sections"][i].update(kw)
    return m


def payload_byte(i, pos, val):
    def m(r):
        r["sections"][i]["payload"] = setb(r["sections"][i]["payload"], pos, val)
    return m


def payload_set(i, pos, data):
    def m(r):
        p = bytearray(r["sections"][i]["payload"])
        p[pos:pos + len(data)] = data
        r["sections"][i]["payload"] = bytes(p)
    return m


def params_byte(pos, val):
    def m(r):
        r["params"] = setb(r["params"], pos, val)
    return m


def chain(*ms):
    def m(r):
        for f in ms:
            f(r)
    return m


def base72():
    """float32 [2,3] row_major, one 24-byte buffer: 72 bytes."""
    return fill(D("float32", [2, 3]))


# ================================================================== desc ===
def mutate_desc(c):
    b = encode(base72())
    assert len(b) == 72
    for n in (0, 1, 8, 15):
        c.n_bytes(f"n_desc_truncated__{n}", b[:n], "TRUNCATED",
                  f"first {n} bytes of a 72-byte descriptor: fewer than 16 bytes", R_ORDER)
    for n in (16, 39, 40, 64, 71):
        c.n_bytes(f"n_desc_truncated__{n}", b[:n], "TRUNCATED",
                  f"first {n} bytes of a 72-byte descriptor: fewer than encoded_len", R_ORDER)
    big = D("int8", [4, 8], "strided", params={"strides": [-8, 1]}, byte_offset=24, quant=q_channel(1, 1),
            stats=stats(-3.0, 5.0, nan=0), unknown=[(0x77, 0, b"xyz")], buffers=bufs(32, 32))
    bb = encode(fill(big))
    for n in (len(bb) // 2, len(bb) - 8, len(bb) - 1):
        c.n_bytes(f"n_desc_truncated__sections_{n}", bb[:n], "TRUNCATED",
                  f"a {len(bb)}-byte descriptor with sections cut to {n} bytes", R_ORDER)
    # magic, version
    for name, m in (("hryx", b"HRYX"), ("lowercase", b"hryd"), ("zero", b"\0\0\0\0"), ("file", b"HRRY"),
                    ("stream", b"HRSF"), ("swapped", b"DYRH")):
        c.n("n_desc_magic__" + name, base72(), sets(magic=m), "BAD_MAGIC", f"magic {m!r}", R_DESC)
    for v in (0, 2, 255):
        c.n(f"n_desc_version__{v}", base72(), sets(vmaj=v), "VERSION", f"version_major {v}",
            R_DESC + ["HR-DESC-4"])
    # reserved header bytes
    for pos in (6, 7):
        c.n(f"n_desc_reserved__b{pos}", base72(), sets(res6=setb(bytes(2), pos - 6, 1)), "RESERVED_NONZERO",
            f"reserved header byte {pos} = 01", R_DESC + R_RES)
    for pos in (12, 13, 14, 15):
        c.n(f"n_desc_reserved__b{pos}", base72(), sets(res12=setb(bytes(4), pos - 12, 0x80)), "RESERVED_NONZERO",
            f"reserved header byte {pos} = 80", R_DESC + R_RES)
    c.n("n_desc_reserved__b23", base72(), sets(res23=1), "RESERVED_NONZERO", "reserved header byte 23 = 01",
        R_DESC + R_RES)
    # encoded_len (step 3, 4, 10)
    for v in (0, 8, 32, 39):
        c.n(f"n_desc_encoded_len__{v}", base72(), sets(elen=v), "LENGTH", f"encoded_len {v} < 40", R_ORDER)
    for v in (41, 76):
        c.n(f"n_desc_encoded_len__{v}", base72(), sets(elen=v), "LENGTH", f"encoded_len {v} not a multiple of 8",
            R_ORDER)
    c.n("n_desc_encoded_len__2p32m1", base72(), sets(elen=0xFFFFFFFF), "LENGTH",
        "encoded_len 2^32-1: not a multiple of 8, which step 3 checks before the limit", R_ORDER)
    c.n("n_desc_encoded_len__over_default_limit", base72(), sets(elen=1048584), "LIMIT",
        "encoded_len 1 MiB + 8 in a 72-byte input: the limit is checked before the input length", R_ORDER + ["HR-LIMIT-1"])
    c.n("n_desc_encoded_len__2p32m8", base72(), sets(elen=(1 << 32) - 8), "LIMIT",
        "encoded_len 2^32-8 in a 72-byte input: LIMIT before TRUNCATED", R_ORDER + ["HR-LIMIT-1"])
    c.n("n_desc_encoded_len__at_limit_truncated", base72(), sets(elen=1048576), "TRUNCATED",
        "encoded_len = max_descriptor_bytes in a 72-byte input: passes the limit, then TRUNCATED", R_ORDER)
    c.n("n_desc_encoded_len__gt_input", base72(), sets(elen=80), "TRUNCATED",
        "encoded_len 80 on a 72-byte input", R_ORDER)
    c.n("n_desc_encoded_len__over_option_limit", base72(), None, "LIMIT",
        "a valid 72-byte descriptor with max_descriptor_bytes 64", R_ORDER + ["HR-LIMIT-1"],
        options={"max_descriptor_bytes": 64})
    c.n("n_desc_encoded_len__option_limit_below_min", D("float32", [], 0x07, params={"params": b""}), None, "LIMIT",
        "the 40-byte minimal descriptor with max_descriptor_bytes 32", R_ORDER + ["HR-LIMIT-1"],
        options={"max_descriptor_bytes": 32})
    c.n("n_desc_encoded_len__short_content", base72(), sets(elen=64, truncate=64), "LENGTH",
        "encoded_len 64 but the layout block starts at 64: a read would cross encoded_len", R_ORDER + R_DESC)
    c.n("n_desc_encoded_len__shape_crosses", D("float32", [], 0x07, params={"params": b""}),
        sets(rank=2), "LENGTH", "rank 2 in a 40-byte descriptor: the shape read (bytes 32-47) crosses encoded_len",
        R_ORDER)
    c.n("n_desc_encoded_len__long_content", base72(), sets(elen=80, trailing=bytes(8)), "LENGTH",
        "encoded_len 80 with 8 zero bytes after the last part: end != encoded_len", R_ORDER + R_DESC)
    # rank
    c.n("n_desc_rank__65", D("int8", [1] * 65), None, "LIMIT", "rank 65 > 64", R_DESC + ["HR-LIMIT-1"])
    c.n("n_desc_rank__255", D("int8", [1] * 255), None, "LIMIT", "rank 255", R_DESC + ["HR-LIMIT-1"])
    c.n("n_desc_rank__option_9", D("int8", [2] * 9), None, "LIMIT", "rank 9 with max_rank 8", R_DESC + ["HR-LIMIT-1"],
        options={"max_rank": 8})
    c.n("n_desc_rank__option_0", D("int8", [2]), None, "LIMIT", "rank 1 with max_rank 0", R_DESC + ["HR-LIMIT-1"],
        options={"max_rank": 0})
    # extents and element count
    B = lambda: bufs(64)
    c.n("n_desc_extent__2p63", D("uint8", [1 << 63], buffers=B()), None, "RANGE", "extent 2^63", R_SHAPE)
    c.n("n_desc_extent__2p64m2", D("uint8", [2, U64_MAX - 1], buffers=B()), None, "RANGE",
        "extent 2^64-2 (not the dynamic sentinel) in dimension 1", R_SHAPE)
    c.n("n_desc_shape_overflow__2p62x4", D("float32", [1 << 62, 4], buffers=B()), None, "OVERFLOW",
        "[2^62, 4]: the element count is 2^64", R_SHAPE + ["HR-SHAPE-3"])
    c.n("n_desc_shape_overflow__2p32p1x2p32m1", D("float32", [(1 << 32) + 1, (1 << 32) - 1], buffers=B()), None,
        "OVERFLOW", "[2^32+1, 2^32-1] float32: N = 2^64-1 fits but N*32 does not", R_SHAPE + ["HR-SHAPE-3"])
    c.n("n_desc_shape_overflow__dynamic", D("float32", [1 << 62, None, 4], buffers=B()), None, "OVERFLOW",
        "resolved extents overflow even next to a dynamic one", R_SHAPE + ["HR-SHAPE-3"])
    c.n("n_desc_shape_overflow__bits", D("uint8", [1 << 61], buffers=B()), None, "OVERFLOW",
        "uint8 [2^61]: N fits, N*8 = 2^64 does not", R_SHAPE + ["HR-SHAPE-3", "HR-PACK-3"])
    c.n("n_desc_shape_overflow__int1", D("int1", [I64_MAX, 3], buffers=B()), None, "OVERFLOW",
        "int1 [2^63-1, 3]: the product exceeds 2^64-1", R_SHAPE + ["HR-SHAPE-3"])
    c.n("n_desc_shape_overflow__complex128", D("complex128", [1 << 57], buffers=B()), None, "OVERFLOW",
        "complex128 [2^57]: N*128 = 2^64", R_SHAPE + ["HR-SHAPE-3"])
    # buffer table entries (base72: the buffer entry is at offset 48)
    for pos in range(10, 16):
        c.n(f"n_desc_buffer_reserved__b{pos}", base72(), buf_field(0, res=setb(bytes(6), pos - 10, 1)),
            "RESERVED_NONZERO", f"buffer entry reserved byte {pos} = 01", R_BUF + R_RES)
    for a in (13, 64, 255):
        c.n(f"n_desc_buffer_alignment__{a}", base72(), buf_field(0, align=a), "ALIGNMENT",
            f"alignment_log2 {a} > 12", R_BUF)
    c.n("n_desc_buffer_empty_alignment__64", D("float32", [0, 3], buffers=bufs(0)), buf_field(0, align=6),
        "ALIGNMENT", "an empty buffer declaring alignment 64", ["HR-BUF-2"])
    c.n("n_desc_buffer_empty_alignment__2", D("float32", [0, 3], buffers=bufs(0)), buf_field(0, align=1),
        "ALIGNMENT", "an empty buffer declaring alignment 2", ["HR-BUF-2"])
    for v, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x04, "RESERVED_TAG"), (0xEF, "RESERVED_TAG"),
                   (0xF0, "RESERVED_TAG")):
        c.n(f"n_desc_buffer_sync__{v:02x}", base72(), buf_field(0, sync=v), err,
            f"sync_mode 0x{v:02X} ({'invalid' if err == 'INVALID_TAG' else 'reserved: no private range'})",
            ["HR-BUF-5"] + R_TAGS)
    c.n("n_desc_buffer_size__over_limit", D("uint8", [None], buffers=bufs(1 << 34)),
        buf_field(0, size=(1 << 34) + 1), "LIMIT", "buffer size 2^34+1 > max_buffer_bytes", R_BUF + ["HR-LIMIT-1"])
    c.n("n_desc_buffer_size__u64_max", D("uint8", [None], buffers=bufs(1 << 34)), buf_field(0, size=U64_MAX),
        "LIMIT", "buffer size 2^64-1 with the default limit", R_BUF + ["HR-LIMIT-1"])
    c.n("n_desc_buffer_size__option", D("uint8", [1025]), None, "LIMIT",
        "a valid 1025-byte buffer with max_buffer_bytes 1024", R_BUF + ["HR-LIMIT-1"],
        options={"max_buffer_bytes": 1024})
    c.n("n_desc_buffer_table_crosses", base72(), sets(buffer_count=2), "LENGTH",
        "buffer_count 2 with one entry: the second entry crosses encoded_len", R_ORDER)
    # layout block
    for pos in range(4, 8):
        c.n(f"n_desc_layout_block_reserved__b{pos}", base72(), sets(lres=setb(bytes(4), pos - 4, 1)),
            "RESERVED_NONZERO", f"layout block reserved byte {pos} = 01", R_DESC + R_RES)
    c.n("n_desc_param_length__past_end", base72(), sets(param_length=8), "LENGTH",
        "param_length 8 with no bytes left before encoded_len", R_ORDER)
    c.n("n_desc_param_length__u32_max", base72(), sets(param_length=0xFFFFFFFF), "LENGTH",
        "param_length 2^32-1", R_ORDER)
    c.n("n_desc_section_count__over", D("float32", [4, 4], stats=stats(1.0, 2.0)), sets(section_count=2), "LENGTH",
        "section_count 2 with one section: the second header crosses encoded_len", R_ORDER + R_SECT)
    c.n("n_desc_section_count__under", D("float32", [4, 4], stats=stats(1.0, 2.0)), sets(section_count=0),
        "LENGTH", "section_count 0 with a section present: end != encoded_len", R_ORDER + R_SECT)
    c.n("n_desc_padding__private_params", D("float32", [4], 0xF0, params=private(1, b"\x05"), buffers=bufs(16)),
        sets(ppad=b"\x00\x00\x00\x00\x00\x00\x01"), "RESERVED_NONZERO",
        "private layout with 9 parameter bytes; the last padding byte is 01", R_PAD + R_DESC)
    c.n("n_desc_padding__unknown_params", D("float32", [4], 0x14, params={"params": b"\x01\x02\x03"},
                                             buffers=bufs(16)),
        sets(ppad=b"\x80\x00\x00\x00\x00"), "RESERVED_NONZERO",
        "unknown layout with 3 parameter bytes; the first padding byte is 80", R_PAD + R_DESC)


# ================================================================== dtype / device ===
def mutate_dtype_device(c):
    for v, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x10, "RESERVED_TAG"), (0x1F, "RESERVED_TAG"),
                   (0x26, "RESERVED_TAG"), (0x2F, "RESERVED_TAG"), (0x38, "RESERVED_TAG"), (0x80, "RESERVED_TAG"),
                   (0xEF, "RESERVED_TAG")):
        c.n(f"n_dtype_tag__{v:02x}", base72(), sets(dtype=v), err, f"element type tag 0x{v:02X}",
            ["HR-DTYPE-2"] + R_TAGS)
    for name, n, size in (("int4", 3, 1), ("int1", 9, 1), ("float6_e2m3fn", 3, 2), ("uint2", 7, 1),
                          ("float4_e2m1fn", 7, 3)):
        c.n(f"n_dtype_subbyte_buffer_small__{name}", D(name, [n], buffers=bufs(size)), None, "BUFFER_SIZE",
            f"{name} x{n} in {size} bytes: floor(count*bits/8) is one byte short", R_PACK)
    for name, off in (("float32", 2), ("complex128", 8), ("int16", 1), ("float64", 4)):
        c.n(f"n_dtype_byte_offset_misaligned__{name}", D(name, [2], byte_offset=off, buffers=bufs(64)), None,
            "CONSTRAINT", f"{name} with byte_offset {off}: not a multiple of the element width", ["HR-DESC-3"])
    for v, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x0B, "RESERVED_TAG"), (0x42, "RESERVED_TAG"),
                   (0xEF, "RESERVED_TAG")):
        c.n(f"n_device_tag__{v:02x}", base72(), sets(device=v), err, f"device tag 0x{v:02X}",
            ["HR-DEV-2"] + R_TAGS)
    for v, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x05, "RESERVED_TAG"), (0xEF, "RESERVED_TAG")):
        c.n(f"n_device_memory_class_tag__{v:02x}", base72(), sets(memclass=v), err, f"memory class tag 0x{v:02X}",
            ["HR-DEV-3"] + R_TAGS)
    for dtag, dname in sorted(DEVICES.items()):
        for ctag, cname in sorted(MEMORY_CLASSES.items()):
            if cname not in DEVICE_CLASS_VALID[dname]:
                c.n(f"n_device_pair__{dname}_{cname}", base72(), sets(device=dtag, memclass=ctag), "COMBINATION",
                    f"device {dname} with memory class {cname} is marked - in the validity table", R_DEV)


# ================================================================== layout ===
def mutate_layout(c):
    R = R_LAYOUT
    for v in (0x00, 0xFF):
        c.n(f"n_layout_tag__{v:02x}", base72(), sets(layout=v), "INVALID_TAG", f"layout tag 0x{v:02X}",
            ["HR-LAYOUT-1", "HR-LAYOUT-3"])
    # row / col major
    c.n("n_layout_row_major_buffer_count__zero", D("float32", [2, 3], buffers=[]), None, "BUFFER_COUNT",
        "row_major without its values buffer", R["row_major"] + R_TIERS)
    c.n("n_layout_row_major_buffer_count__two", D("float32", [2, 3], buffers=bufs(24, 24)), None, "BUFFER_COUNT",
        "row_major with two buffers", R["row_major"] + R_TIERS)
    c.n("n_layout_row_major_buffer_small", D("float32", [3, 5], buffers=bufs(59)), None, "BUFFER_SIZE",
        "float32 [3,5] in 59 bytes", R["row_major"] + R_TIERS)
    c.n("n_layout_row_major_buffer_small__byte_offset", D("float32", [3, 5], byte_offset=8, buffers=bufs(67)), None,
        "BUFFER_SIZE", "byte_offset 8 + 60 bytes of values in 67", R["row_major"] + ["HR-DESC-3"])
    c.n("n_layout_row_major_buffer_small__empty", D("float32", [1], buffers=bufs(0)), None, "BUFFER_SIZE",
        "one float32 in an empty buffer", R["row_major"])
    c.n("n_layout_row_major_param_length__8", base72(), sets(params=bytes(8)), "LENGTH",
        "row_major with 8 parameter bytes (it takes 0)", R["row_major"] + R_ORDER)
    c.n("n_layout_col_major_buffer_small", D("int16", [4, 4], "col_major", buffers=bufs(31)), None, "BUFFER_SIZE",
        "col_major int16 [4,4] in 31 bytes", R["col_major"])
    # strided
    S = lambda dt, shape, st, **kw: D(dt, shape, "strided", params={"strides": st}, **kw)
    c.n("n_layout_strided_escape_below", S("float32", [4], [-1], buffers=bufs(16)), None, "CONSTRAINT",
        "negative stride with byte_offset 0: the lowest element precedes the buffer", R["strided"])
    c.n("n_layout_strided_escape_below__2d", S("float32", [3, 4], [-4, 1], byte_offset=28, buffers=bufs(48)), None,
        "CONSTRAINT", "off/E = 7 but lo = -8", R["strided"])
    for name in ("int4", "float6_e2m3fn", "uint1", "float4_e2m1fn"):
        c.n(f"n_layout_strided_dtype__{name}", S(name, [4], [1], buffers=bufs(4)), None, "COMBINATION",
            f"strided with the sub-byte type {name}", R["strided"])
    c.n("n_layout_strided_dtype__extension", S(0xF0, [4], [1], buffers=bufs(64)), None, "COMBINATION",
        "strided with an extension type (width unknown)", R["strided"])
    c.n("n_layout_strided_buffer_small", S("float32", [3, 4], [4, 1], buffers=bufs(47)), None, "BUFFER_SIZE",
        "strided needs 48 bytes, has 47", R["strided"])
    c.n("n_layout_strided_buffer_small__negative", S("float32", [4], [-1], byte_offset=12, buffers=bufs(15)), None,
        "BUFFER_SIZE", "negative stride: needs (3+0+1)*4 = 16", R["strided"])
    c.n("n_layout_strided_buffer_small__zero_extent", S("float32", [0, 4], [4, 1], byte_offset=8, buffers=bufs(4)),
        None, "BUFFER_SIZE", "N = 0 still needs off = 8 bytes", R["strided"])
    c.n("n_layout_strided_buffer_small__padded", S("float32", [3, 4], [8, 1], buffers=bufs(79)), None,
        "BUFFER_SIZE", "row pitch 8: needs 80", R["strided"])
    c.n("n_layout_strided_byte_offset_misaligned", S("float32", [4], [1], byte_offset=2, buffers=bufs(18)), None,
        "CONSTRAINT", "strided float32 with byte_offset 2", R["strided"] + ["HR-DESC-3"])
    c.n("n_layout_strided_param_length__short", S("float32", [3, 4], [4, 1], buffers=bufs(48)),
        lambda r: r.update(params=r["params"][:8]), "LENGTH", "rank 2 strided with 8 parameter bytes (needs 16)",
        R["strided"] + R_ORDER)
    c.n("n_layout_strided_param_length__long", S("float32", [3, 4], [4, 1], buffers=bufs(48)),
        lambda r: r.update(params=r["params"] + bytes(8)), "LENGTH", "rank 2 strided with 24 parameter bytes",
        R["strided"] + R_ORDER)
    c.n("n_layout_strided_bounds_overflow__hi", S("float32", [5], [1 << 62], buffers=bufs(64)), None, "OVERFLOW",
        "stride 2^62 x (5-1) = 2^64", R["strided"])
    c.n("n_layout_strided_bounds_overflow__lo", S("float32", [5], [-(1 << 62)], buffers=bufs(64)), None,
        "OVERFLOW", "stride -2^62 x (5-1) = -2^64", R["strided"])
    c.n("n_layout_strided_bounds_overflow__size", S("float32", [2, 2], [1 << 62, 1 << 62], buffers=bufs(64)), None,
        "OVERFLOW", "hi = 2^63: (hi + 1) x 4 exceeds 2^64", R["strided"])
    # tiled
    Ti = lambda dt, shape, t, o, i, **kw: D(dt, shape, "tiled", params=tiled(t, o, i), **kw)
    c.n("n_layout_tiled_rank0", Ti("float32", [], [], [], [], buffers=bufs(4)), None, "CONSTRAINT",
        "tiled at rank 0", R["tiled"])
    c.n("n_layout_tiled_tile_zero", Ti("float32", [4, 6], [0, 3], [12, 6], [3, 1], buffers=bufs(96)), None,
        "CONSTRAINT", "tile extent 0", R["tiled"])
    c.n("n_layout_tiled_tile_too_big", Ti("float32", [4, 6], [1 << 63, 3], [12, 6], [3, 1], buffers=bufs(96)),
        None, "CONSTRAINT", "tile extent 2^63", R["tiled"])
    c.n("n_layout_tiled_dtype__uint4", Ti("uint4", [4, 6], [2, 3], [12, 6], [3, 1], buffers=bufs(96)), None,
        "COMBINATION", "tiled with a sub-byte type", R["tiled"])
    c.n("n_layout_tiled_buffer_small", Ti("float32", [4, 6], [2, 3], [12, 6], [3, 1], buffers=bufs(95)), None,
        "BUFFER_SIZE", "tiled needs 96 bytes, has 95", R["tiled"])
    c.n("n_layout_tiled_buffer_small__partial", Ti("float32", [5, 7], [2, 3], [18, 6], [3, 1], buffers=bufs(212)),
        None, "BUFFER_SIZE", "edge tiles: needs 216 bytes, has 212", R["tiled"])
    c.n("n_layout_tiled_escape_below", Ti("float32", [4, 4], [2, 2], [-8, 4], [2, 1], byte_offset=28,
                                          buffers=bufs(64)),
        None, "CONSTRAINT", "negative outer stride: off/E = 7, lo = -8", R["tiled"])
    c.n("n_layout_tiled_param_length", Ti("float32", [4, 6], [2, 3], [12, 6], [3, 1], buffers=bufs(96)),
        lambda r: r.update(params=r["params"][:32]), "LENGTH", "rank 2 tiled with 32 parameter bytes (needs 48)",
        R["tiled"] + R_ORDER)
    # morton / hilbert
    for vid, shape, text in (("non_pow2", [4, 6], "extent 6"), ("zero_extent", [0, 4], "extent 0 (not >= 1)"),
                             ("rank1", [8], "rank 1"), ("rank4", [2, 2, 2, 2], "rank 4")):
        c.n(f"n_layout_morton_{vid}", D("float32", shape, "morton", buffers=bufs(256)), None, "CONSTRAINT",
            f"morton with {text}", R["morton"])
    c.n("n_layout_morton_buffer_small", D("float16", [4, 8], "morton", buffers=bufs(63)), None, "BUFFER_SIZE",
        "morton [4,8] float16 in 63 bytes", R["morton"])
    c.n("n_layout_morton_param_length", D("float16", [4, 8], "morton"), sets(params=bytes(8)), "LENGTH",
        "morton with 8 parameter bytes", R["morton"] + R_ORDER)
    for vid, shape, text in (("non_square", [4, 8], "[4,8]"), ("non_pow2", [6, 6], "[6,6]"),
                             ("rank3", [2, 2, 2], "rank 3"), ("rank1", [4], "rank 1"), ("zero", [0, 0], "[0,0]")):
        c.n(f"n_layout_hilbert_{vid}", D("float32", shape, "hilbert", buffers=bufs(256)), None, "CONSTRAINT",
            f"hilbert {text}", R["hilbert"])
    c.n("n_layout_hilbert_buffer_small", D("float32", [8, 8], "hilbert", buffers=bufs(255)), None, "BUFFER_SIZE",
        "hilbert 8x8 float32 in 255 bytes", R["hilbert"])
    # coo
    C = lambda dt, shape, nnz, *sz, **kw: D(dt, shape, "coo", params={"nnz": nnz}, buffers=bufs(*sz), **kw)
    c.n("n_layout_coo_nnz_gt_n", C("float32", [2, 2], 5, 20, 80), None, "CONSTRAINT", "nnz 5 > N = 4", R["coo"])
    c.n("n_layout_coo_rank0", C("float32", [], 0, 0, 0), None, "CONSTRAINT", "coo at rank 0 (rank >= 1)", R["coo"])
    c.n("n_layout_coo_values_small", C("float32", [4, 4], 4, 8, 64), None, "BUFFER_SIZE",
        "the spec's example: nnz 4 with a 2-element values buffer is neither corrected nor accepted",
        R["coo"] + R_TIERS)
    c.n("n_layout_coo_indices_small", C("float32", [4, 4], 4, 16, 63), None, "BUFFER_SIZE",
        "indices need 8*2*4 = 64 bytes, has 63", R["coo"])
    c.n("n_layout_coo_buffer_count__one", C("float32", [4, 4], 4, 16), None, "BUFFER_COUNT", "coo with one buffer",
        R["coo"] + R_TIERS)
    c.n("n_layout_coo_buffer_count__three", C("float32", [4, 4], 4, 16, 64, 64), None, "BUFFER_COUNT",
        "coo with three buffers", R["coo"] + R_TIERS)
    c.n("n_layout_coo_param_length__16", C("float32", [4, 4], 4, 16, 64),
        lambda r: r.update(params=r["params"] + bytes(8)), "LENGTH", "coo with 16 parameter bytes (takes 8)",
        R["coo"] + R_ORDER)
    c.n("n_layout_coo_index_size_overflow", C("int1", [1 << 62], 1 << 62, 1 << 59, U64_MAX), None, "OVERFLOW",
        "int1 [2^62], nnz 2^62: values fit (2^59 bytes) but indices 8*1*2^62 overflow",
        R["coo"], options={"max_buffer_bytes": U64_MAX})
    # csr / csc
    CS = lambda lay, dt, shape, nnz, *sz: D(dt, shape, lay, params={"nnz": nnz}, buffers=bufs(*sz))
    c.n("n_layout_csr_rank3", CS("csr", "float32", [2, 3, 4], 5, 20, 40, 24), None, "CONSTRAINT", "csr at rank 3",
        R["csr"])
    c.n("n_layout_csr_rank1", CS("csr", "float32", [4], 2, 8, 16, 40), None, "CONSTRAINT", "csr at rank 1",
        R["csr"])
    c.n("n_layout_csr_nnz_gt_n", CS("csr", "float32", [2, 2], 5, 20, 40, 24), None, "CONSTRAINT", "nnz 5 > N = 4",
        R["csr"])
    c.n("n_layout_csr_values_small", CS("csr", "float32", [3, 4], 5, 19, 40, 32), None, "BUFFER_SIZE",
        "values 19 < 20", R["csr"])
    c.n("n_layout_csr_col_indices_small", CS("csr", "float32", [3, 4], 5, 20, 39, 32), None, "BUFFER_SIZE",
        "col_indices 39 < 40", R["csr"])
    c.n("n_layout_csr_row_ptr_small", CS("csr", "float32", [3, 4], 5, 20, 40, 31), None, "BUFFER_SIZE",
        "row_ptr 31 < 8*(3+1)", R["csr"])
    c.n("n_layout_csr_buffer_count__two", CS("csr", "float32", [3, 4], 5, 20, 40), None, "BUFFER_COUNT",
        "csr with two buffers", R["csr"] + R_TIERS)
    c.n("n_layout_csr_dynamic_col_indices_small", CS("csr", "int8", [None, 4], 5, 5, 39, 8), None, "BUFFER_SIZE",
        "dynamic n_0 skips row_ptr only: col_indices 39 < 40 still fails", R["csr"] + ["HR-SHAPE-4"])
    c.n("n_layout_csc_col_ptr_small", CS("csc", "float32", [2, 5], 4, 16, 32, 40), None, "BUFFER_SIZE",
        "csc col_ptr needs 8*(n_1+1) = 48 (40 would do for n_0)", R["csc"])
    c.n("n_layout_csc_rank3", CS("csc", "float32", [2, 2, 2], 2, 8, 16, 24), None, "CONSTRAINT", "csc at rank 3",
        R["csc"])
    # csf (base: [2,3,4] c = [2,3,5])
    F = lambda nnz, fc, mo, shape=(2, 3, 4), **kw: D("float32", list(shape), "csf", params=csf(nnz, fc, mo), **kw)
    big_bufs = lambda: bufs(64, 64, 64, 64, 64, 64, 64)
    for vid, base, text in (
            ("mode_order_duplicate", F(5, [2, 3], [0, 0, 2], buffers=big_bufs()), "mode_order [0,0,2]"),
            ("mode_order_range", F(5, [2, 3], [0, 1, 3], buffers=big_bufs()), "mode_order [0,1,3]"),
            ("fiber_decreasing", F(4, [3, 2], [0, 1, 2], shape=(4, 4, 4), buffers=big_bufs()),
             "fiber counts [3,2], nnz 4: c_0 > c_1"),
            ("nnz_below_fiber", F(2, [2, 3], [0, 1, 2], buffers=big_bufs()), "fiber counts [2,3], nnz 2"),
            ("empty_first_level", F(3, [0, 2], [0, 1, 2], buffers=big_bufs()),
             "c_0 = 0 with later counts non-zero"),
            ("c0_gt_extent", F(5, [3, 3], [0, 1, 2], buffers=big_bufs()), "c_0 = 3 > n_0 = 2"),
            ("level_gt_product", F(7, [2, 7], [0, 1, 2], buffers=big_bufs()), "c_1 = 7 > c_0 * n_1 = 6")):
        c.n(f"n_layout_csf_{vid}", base, None, "CONSTRAINT", f"csf {text}", R["csf"])
    c.n("n_layout_csf_param_length", F(5, [2, 3], [0, 1, 2]), lambda r: r.update(params=r["params"][:24]), "LENGTH",
        "rank 3 csf with 24 parameter bytes (needs 27)", R["csf"] + R_ORDER)
    c.n("n_layout_csf_padding_nonzero", F(5, [2, 3], [0, 1, 2]), lambda r: r.update(ppad=bytes([0, 0, 0, 0, 1])),
        "RESERVED_NONZERO", "a non-zero byte in the block padding after mode_order", R["csf"] + R_PAD)
    c.n("n_layout_csf_buffer_count", F(5, [2, 3], [0, 1, 2], buffers=bufs(20, 16, 16, 24, 24, 32)), None,
        "BUFFER_COUNT", "rank 3 csf with 6 buffers (needs 7)", R["csf"] + R_TIERS)
    c.n("n_layout_csf_ptr_small", F(5, [2, 3], [0, 1, 2], buffers=bufs(20, 16, 16, 23, 24, 32, 40)), None,
        "BUFFER_SIZE", "ptr_1 needs 8*(c_0+1) = 24, has 23", R["csf"])
    c.n("n_layout_csf_idx_small", F(5, [2, 3], [0, 1, 2], buffers=bufs(20, 16, 16, 24, 24, 32, 39)), None,
        "BUFFER_SIZE", "idx_2 needs 8*nnz = 40, has 39", R["csf"])
    c.n("n_layout_csf_ptr0_small", F(4, [], [0], shape=(10,), buffers=bufs(16, 8, 32)), None, "BUFFER_SIZE",
        "ptr_0 always has c_{-1}+1 = 2 entries", R["csf"])
    # block_paged (base [2,10,4,8] float16 page 4, pages 6, seqs 2, blocks 6)
    BP = lambda p, shape=(2, 10, 4, 8), **kw: D("float16", list(shape), "block_paged", params=p, **kw)
    c.n("n_layout_block_paged_num_seqs", BP(paged(4, 6, 3, 6), buffers=bufs(1536, 32, 48)), None, "CONSTRAINT",
        "num_seqs 3 != shape[0] = 2", R["block_paged"] + ["HR-PAGED-1"])
    c.n("n_layout_block_paged_page_size_zero", BP(paged(0, 6, 2, 6), buffers=bufs(1536, 24, 48)), None,
        "CONSTRAINT", "page_size 0", R["block_paged"] + ["HR-PAGED-1"])
    c.n("n_layout_block_paged_rank1", BP(paged(4, 6, 2, 6), shape=(2,), buffers=bufs(1536, 24, 48)), None,
        "CONSTRAINT", "block_paged at rank 1", R["block_paged"] + ["HR-PAGED-1"])
    c.n("n_layout_block_paged_pages_small", BP(paged(4, 6, 2, 6), buffers=bufs(1535, 24, 48)), None,
        "BUFFER_SIZE", "pages need 1536 bytes", R["block_paged"])
    c.n("n_layout_block_paged_seq_ptr_small", BP(paged(4, 6, 2, 6), buffers=bufs(1536, 16, 48)), None,
        "BUFFER_SIZE", "seq_ptr shorter than num_seqs+1 entries", R["block_paged"])
    c.n("n_layout_block_paged_block_table_small", BP(paged(4, 6, 2, 6), buffers=bufs(1536, 24, 40)), None,
        "BUFFER_SIZE", "block_table shorter than num_blocks entries", R["block_paged"])
    c.n("n_layout_block_paged_param_length", BP(paged(4, 6, 2, 6)), lambda r: r.update(params=r["params"][:24]),
        "LENGTH", "block_paged with 24 parameter bytes (takes 32)", R["block_paged"] + R_ORDER)
    c.n("n_layout_block_paged_buffer_count", BP(paged(4, 6, 2, 6), buffers=bufs(1536, 24)), None,
        "BUFFER_COUNT", "block_paged with two buffers", R["block_paged"] + R_TIERS)
    # composite
    CO = lambda p, **kw: D("float32", [8, 8], "composite", params=p, **kw)
    c.n("n_layout_composite_member_count_zero", CO(composite("group", None, 0)), None, "CONSTRAINT",
        "member_count 0", R["composite"])
    c.n("n_layout_composite_members_over_limit", CO(composite("group", None, 65537)), None, "LIMIT",
        "member_count 65537 > max_composite_members", R["composite"] + ["HR-LIMIT-1"])
    c.n("n_layout_composite_members_over_option_limit", CO(composite("partition", None, 5)), None, "LIMIT",
        "member_count 5 with max_composite_members 4", R["composite"] + ["HR-LIMIT-1"],
        options={"max_composite_members": 4})
    c.n("n_layout_composite_with_buffer", CO(composite("group", None, 2), buffers=bufs(256)), None, "BUFFER_COUNT",
        "a composite head owns no buffers", R["composite"] + R_TIERS)
    c.n("n_layout_composite_byte_offset", CO(composite("group", None, 2), byte_offset=8), None, "CONSTRAINT",
        "a composite head with byte_offset 8", R["composite"] + ["HR-DESC-3"])
    grp = composite("group", None, 2)
    ovl = composite("overlay", "add", 2)
    for v, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x04, "RESERVED_TAG"), (0xF0, "RESERVED_TAG")):
        c.n(f"n_layout_composite_rule__{v:02x}", CO(grp), params_byte(0, v), err, f"composite rule 0x{v:02X}",
            R["composite"] + R_TAGS)
    for vid, p, v, err in (("overlay_00", ovl, 0x00, "INVALID_TAG"), ("overlay_ff", ovl, 0xFF, "INVALID_TAG"),
                           ("group_ff", grp, 0xFF, "INVALID_TAG"), ("overlay_05", ovl, 0x05, "RESERVED_TAG"),
                           ("overlay_f0", ovl, 0xF0, "RESERVED_TAG"), ("group_07", grp, 0x07, "RESERVED_TAG"),
                           ("partition_02", composite("partition", None, 2), 0x02, "COMBINATION"),
                           ("group_01", grp, 0x01, "COMBINATION")):
        c.n(f"n_layout_composite_combine__{vid}", CO(p), params_byte(1, v), err,
            f"composite {vid.split('_')[0]} with combine 0x{v:02X}", R["composite"] + R_TAGS)
    for pos in (2, 3):
        c.n(f"n_layout_composite_reserved__b{pos}", CO(grp), params_byte(pos, 1), "RESERVED_NONZERO",
            f"composite parameter reserved byte {pos}", R["composite"] + R_RES)
    c.n("n_layout_composite_param_length", CO(grp), lambda r: r.update(params=r["params"] + bytes(8)), "LENGTH",
        "composite with 16 parameter bytes (takes 8)", R["composite"] + R_ORDER)
    # private / unknown
    PR = lambda **kw: D("float32", [4], 0xF0, params=private(1, b"abc"), buffers=bufs(16), **kw)
    for n in (0, 4, 7):
        c.n(f"n_layout_private_param_length__{n}", PR(), lambda r, n=n: r.update(params=r["params"][:n]), "LENGTH",
            f"private layout with {n} parameter bytes (at least 8)", R["private"])
    for pos in range(4, 8):
        c.n(f"n_layout_private_reserved__b{pos}", PR(), params_byte(pos, 1), "RESERVED_NONZERO",
            f"private layout reserved parameter byte {pos}", R["private"] + R_RES)
    c.n("n_layout_private_byte_offset_no_buffers", D("float32", [4], 0xF0, params=private(1), byte_offset=8), None,
        "CONSTRAINT", "no buffers but byte_offset 8", R["private"] + ["HR-DESC-3"])
    c.n("n_layout_private_byte_offset_misaligned", D("float32", [4], 0xF0, params=private(1), byte_offset=2,
                                                     buffers=bufs(18)), None,
        "CONSTRAINT", "private layout, float32 with byte_offset 2", R["private"] + ["HR-DESC-3"])
    c.n("n_layout_unknown_param_length_past_end", D("float32", [4], 0x21, params={"params": bytes(8)}),
        sets(param_length=16), "LENGTH", "unknown layout whose param_length exceeds encoded_len", R["unknown"])
    c.n("n_layout_unknown_byte_offset_no_buffers", D("float32", [4], 0x21, params={"params": bytes(8)},
                                                     byte_offset=4), None,
        "CONSTRAINT", "unknown layout without buffers but byte_offset 4", R["unknown"] + ["HR-DESC-3"])


# ================================================================== quant ===
def mutate_quant(c):
    RS = R_SCHEME
    pt, pc, ba, nf, mx, nv = (RS[k] for k in ("per_tensor_affine", "per_channel_affine", "block_affine", "nf4",
                                              "mx", "nvfp4"))
    PT = lambda **kw: D("int8", [4, 8], quant=q_tensor(0.125, 0), **kw)
    scale_bits = (("nan", F64_NAN), ("snan", 0x7FF0000000000001), ("neg_nan", 0xFFF8000000000000),
                  ("neg_zero", F64_NEG_ZERO), ("zero", 0), ("inf", F64_INF), ("neg_inf", F64_NEG_INF),
                  ("negative", f64bits(-0.5)))
    for vid, bits in scale_bits:
        c.n(f"n_quant_per_tensor_affine_scale__{vid}", PT(), payload_set(0, 8, u64(bits)), "CONSTRAINT",
            f"per_tensor_affine scale {vid} (bits {bits:016x})", pt + R_QUANT)
    for name, zp in (("int8", 128), ("int8", -129), ("uint8", -1), ("uint4", 16), ("int4", -9), ("uint1", 2),
                     ("int2", 2), ("uint64", -1), ("float8_e4m3fn", 1), ("float8_e5m2fnuz", -1)):
        c.n(f"n_quant_per_tensor_affine_zero_point__{name}_{'m' if zp < 0 else ''}{abs(zp)}",
            D(name, [4, 8], quant=q_tensor(0.125, zp)), None, "RANGE",
            f"zero_point {zp} outside {name}'s range" if not name.startswith("float") else
            f"zero_point {zp} for {name} (must be 0)", pt)
    for name in ("float32", "bool", "float8_e8m0fnu", "complex64", "float16", 0xF0):
        label = name if isinstance(name, str) else "extension"
        c.n(f"n_quant_per_tensor_affine_dtype__{label}", D(name, [4, 8], quant=q_tensor(0.125, 0),
                                                           buffers=bufs(512)), None,
            "COMBINATION", f"per_tensor_affine over {label}", pt)
    c.n("n_quant_per_tensor_affine_composite", D("int8", [4], "composite", params=composite("group", None, 2),
                                                 quant=q_tensor(0.5, 0)), None,
        "COMBINATION", "no quantization section on a composite head", R_QCOMPAT + R_LAYOUT["composite"])
    c.n("n_quant_per_tensor_affine_buffer_count", PT(buffers=bufs(32, 4)), None, "BUFFER_COUNT",
        "per_tensor_affine owns no buffer: row_major + 0 = 1, has 2", pt + R_TIERS)
    # -- per_channel
    PC = lambda **kw: D("int8", [4, 8], quant=q_channel(1, 1, 2, "float32", "int8"), **kw)
    c.n("n_quant_per_channel_affine_axis_range", D("int8", [4, 8], quant=q_channel(2, 1), buffers=bufs(32, 32)),
        None, "RANGE", "axis 2 on a rank-2 tensor", pc)
    c.n("n_quant_per_channel_affine_axis_range__rank0", D("int8", [], quant=q_channel(0, 1), buffers=bufs(1, 4)),
        None, "RANGE", "axis 0 on a rank-0 tensor", pc)
    c.n("n_quant_per_channel_affine_dtype__float32", D("float32", [4, 8], quant=q_channel(1, 1)), None,
        "COMBINATION", "per_channel_affine over float32", pc)
    for vid, v, err in (("int8", DT["int8"], "COMBINATION"), ("float8_e4m3fn", DT["float8_e4m3fn"], "COMBINATION"),
                        ("extension", 0xF0, "COMBINATION"), ("00", 0x00, "INVALID_TAG"), ("ff", 0xFF, "INVALID_TAG"),
                        ("reserved_10", 0x10, "RESERVED_TAG")):
        c.n(f"n_quant_per_channel_affine_scale_dtype__{vid}", PC(), payload_byte(0, 4, v), err,
            f"scale_dtype 0x{v:02X}", pc)
    for vid, v, err in (("bool", DT["bool"], "COMBINATION"), ("float64", DT["float64"], "COMBINATION"),
                        ("int4", DT["int4"], "COMBINATION"), ("float8_e5m2", DT["float8_e5m2"], "COMBINATION"),
                        ("00", 0x00, "INVALID_TAG"), ("ff", 0xFF, "INVALID_TAG"),
                        ("reserved_11", 0x11, "RESERVED_TAG")):
        c.n(f"n_quant_per_channel_affine_zero_point_dtype__{vid}", PC(), payload_byte(0, 5, v), err,
            f"zero_point_dtype 0x{v:02X} with a zero-point buffer", pc)
    c.n("n_quant_per_channel_affine_scale_index", D("int8", [4, 8], quant=q_channel(1, 2), buffers=bufs(32, 32)),
        None, "CONSTRAINT", "scale_buffer_index 2, must be L = 1", pc + R_QUANT)
    c.n("n_quant_per_channel_affine_zero_point_index", D("int8", [4, 8], quant=q_channel(1, 1, 3, "float32", "int8"),
                                                         buffers=bufs(32, 32, 8)),
        None, "CONSTRAINT", "zero_point_buffer_index 3, must be L+1 = 2", pc + R_QUANT)
    c.n("n_quant_per_channel_affine_indices_swapped", D("int8", [4, 8], quant=q_channel(1, 2, 1, "float32", "int8"),
                                                        buffers=bufs(32, 32, 32)),
        None, "CONSTRAINT", "scale 2 / zero point 1: positions are fixed", pc + R_QUANT)
    c.n("n_quant_per_channel_affine_buffer_count__missing", D("int8", [4, 8], quant=q_channel(1, 1),
                                                              buffers=bufs(32)),
        None, "BUFFER_COUNT", "no scale buffer", pc + R_TIERS)
    c.n("n_quant_per_channel_affine_buffer_count__extra", D("int8", [4, 8], quant=q_channel(1, 1),
                                                            buffers=bufs(32, 32, 8)),
        None, "BUFFER_COUNT", "symmetric per-channel with three buffers", pc + R_TIERS)
    c.n("n_quant_per_channel_affine_scale_small", D("int8", [4, 8], quant=q_channel(1, 1), buffers=bufs(32, 31)),
        None, "BUFFER_SIZE", "scale buffer needs 8 float32 = 32 bytes", pc)
    c.n("n_quant_per_channel_affine_zero_point_small", PC(buffers=bufs(32, 32, 7)), None, "BUFFER_SIZE",
        "zero-point buffer needs 8 int8", pc)
    for lay, p, L in (("csr", {"nnz": 3}, 3), ("coo", {"nnz": 3}, 2), ("csf", csf(3, [2], [0, 1]), 5)):
        c.n(f"n_quant_per_channel_affine_layout__{lay}", D("int8", [4, 4], lay, params=p, quant=q_channel(0, L)),
            None, "COMBINATION", f"per_channel_affine on the sparse layout {lay}", pc + R_QCOMPAT)
    c.n("n_quant_per_channel_affine_private_index_collision",
        D("int8", [4, 8], 0xF6, params=private(5), quant=q_channel(0, 1, 1, "float32", "int8"), buffers=bufs(32, 16, 4)),
        None, "CONSTRAINT", "private layout: scale and zero-point indices must be distinct", pc + R_QCOMPAT)
    c.n("n_quant_per_channel_affine_private_index_range",
        D("int8", [4, 8], 0xF6, params=private(5), quant=q_channel(0, 3), buffers=bufs(32, 16, 4)),
        None, "CONSTRAINT", "private layout: scale index 3 >= buffer_count 3", pc + R_QCOMPAT)
    c.n("n_quant_per_channel_affine_block_paged_axis1",
        D("int8", [2, 16, 4], "block_paged", params=paged(8, 4, 2, 4), quant=q_channel(1, 3), buffers=bufs(128, 24, 32, 64)),
        None, "COMBINATION", "per-channel along the token axis of block_paged", pc + ["HR-PAGED-3"])
    c.n("n_quant_per_channel_affine_block_paged_axis0",
        D("int8", [2, 16, 4], "block_paged", params=paged(8, 4, 2, 4), quant=q_channel(0, 3), buffers=bufs(128, 24, 32, 8)),
        None, "COMBINATION", "per-channel along the sequence axis of block_paged", pc + ["HR-PAGED-3"])
    # -- block_affine
    BA = lambda **kw: D("uint4", [4, 64], quant=q_block(1, 1, 32, 2, "float16", "uint8"), **kw)
    c.n("n_quant_block_affine_block_zero", BA(buffers=bufs(128, 16, 8)), payload_set(0, 8, u32(0)), "CONSTRAINT",
        "block_size 0", ba)
    c.n("n_quant_block_affine_axis_range", D("uint4", [4, 64], quant=q_block(2, 1, 32), buffers=bufs(128, 64)), None,
        "RANGE", "axis 2 on a rank-2 tensor", ba)
    c.n("n_quant_block_affine_scale_small__partial", D("int8", [3, 100], quant=q_block(1, 1, 32, sdt="float32"),
                                                       buffers=bufs(300, 36)),
        None, "BUFFER_SIZE", "ceil(100/32) = 4 blocks per row: 48 bytes needed, 36 (floor) given", ba)
    c.n("n_quant_block_affine_layout__csc", D("int8", [4, 4], "csc", params={"nnz": 3}, quant=q_block(0, 3, 2)),
        None, "COMBINATION", "block_affine on csc", ba + R_QCOMPAT)
    c.n("n_quant_block_affine_block_paged", D("int8", [2, 16, 4], "block_paged", params=paged(8, 4, 2, 4),
                                              quant=q_block(2, 3, 2), buffers=bufs(128, 24, 32, 64)),
        None, "COMBINATION", "block_affine is never compatible with block_paged", ba + ["HR-PAGED-3"])
    # -- nf4
    NF = lambda **kw: D("uint4", [128], quant=q_nf4(64), **kw)
    for b in (48, 16, 8192, 0):
        c.n(f"n_quant_nf4_block__{b}", NF(buffers=bufs(64, 64)), payload_set(0, 8, u32(b)), "CONSTRAINT",
            f"nf4 block_size {b}: not a power of two in [32, 4096]", nf)
    DQ = lambda **kw: D("uint4", [4096], quant=q_nf4(64, dq=True, nested_block=256), **kw)
    for b in (48, 0, 8192):
        c.n(f"n_quant_nf4_nested_block__{b}", DQ(), payload_set(0, 12, u32(b)), "CONSTRAINT",
            f"double quant with nested_block_size {b}", nf)
    c.n("n_quant_nf4_nested_offset__nan", DQ(), payload_set(0, 16, u32(F32_NAN)), "CONSTRAINT",
        "double quant with a NaN nested_offset", nf)
    c.n("n_quant_nf4_nested_offset__inf", DQ(), payload_set(0, 16, u32(F32_INF)), "CONSTRAINT",
        "double quant with an infinite nested_offset", nf)
    c.n("n_quant_nf4_nested_block_without_dq", NF(), payload_set(0, 12, u32(256)), "CONSTRAINT",
        "nested_block_size 256 without double quant (must be 0)", nf)
    c.n("n_quant_nf4_nested_offset_without_dq", NF(), payload_set(0, 16, u32(f32bits(1.0))), "CONSTRAINT",
        "nested_offset 1.0 without double quant (must be 0)", nf)
    c.n("n_quant_nf4_dtype__int4", D("int4", [128], quant=q_nf4(64), buffers=bufs(64, 8)), None, "COMBINATION",
        "nf4 codes must be uint4", nf)
    c.n("n_quant_nf4_dtype__uint8", D("uint8", [128], quant=q_nf4(64), buffers=bufs(128, 8)), None, "COMBINATION",
        "nf4 codes must be uint4", nf)
    for lay in ("col_major", "morton", "hilbert"):
        c.n(f"n_quant_nf4_layout__{lay}", D("uint4", [8, 8], lay, quant=q_nf4(64)), None, "COMBINATION",
            f"nf4 on {lay} (blocks run over the row-major order)", nf + R_QCOMPAT)
    c.n("n_quant_nf4_absmax_index", NF(buffers=bufs(64, 8)), payload_byte(0, 2, 0), "CONSTRAINT",
        "absmax_buffer_index 0, must be L = 1", nf + R_QUANT)
    c.n("n_quant_nf4_nested_index", DQ(), payload_byte(0, 3, 4), "CONSTRAINT",
        "nested_absmax_buffer_index 4, must be L+1 = 2", nf + R_QUANT)
    c.n("n_quant_nf4_double_quant_buffer_count", DQ(buffers=bufs(2048, 64, 4)), None, "BUFFER_COUNT",
        "double quant with two extra buffers (needs three)", nf + R_TIERS)
    c.n("n_quant_nf4_absmax_small", NF(buffers=bufs(64, 7)), None, "BUFFER_SIZE", "absmax needs 2 float32", nf)
    c.n("n_quant_nf4_absmax_small__partial", D("uint4", [100], quant=q_nf4(32), buffers=bufs(50, 12)), None,
        "BUFFER_SIZE", "ceil(100/32) = 4 blocks need 16 bytes; 12 (floor) given", nf)
    c.n("n_quant_nf4_quant_map_small", DQ(buffers=bufs(2048, 64, 4, 1023)), None, "BUFFER_SIZE",
        "the quant map needs 256 float32 = 1024 bytes", nf)
    c.n("n_quant_nf4_nested_small", DQ(buffers=bufs(2048, 64, 3, 1024)), None, "BUFFER_SIZE",
        "nested absmax needs 4 bytes", nf)
    c.n("n_quant_nf4_block_paged", D("uint4", [2, 64, 2], "block_paged", params=paged(64, 2, 2, 2), quant=q_nf4(64, 3),
                                     buffers=bufs(128, 24, 16, 16)),
        None, "COMBINATION", "nf4 on block_paged", nf + ["HR-PAGED-3"])
    # -- mx
    MX = lambda name="float8_e4m3fn", **kw: D(name, [2, 64], quant=q_mx(1, 1), **kw)
    for b in (16, 64, 0):
        c.n(f"n_quant_mx_block__{b}", MX(), payload_set(0, 4, u32(b)), "CONSTRAINT", f"mx block_size {b} (must be 32)",
            mx)
    for name in ("float16", "uint4", "float8_e4m3fnuz", "int16", "float8_e8m0fnu"):
        c.n(f"n_quant_mx_dtype__{name}", MX(name, buffers=bufs(512, 4)), None, "COMBINATION", f"mx over {name}", mx)
    c.n("n_quant_mx_axis_range", D("float8_e4m3fn", [2, 64], quant=q_mx(2, 1), buffers=bufs(128, 4)), None, "RANGE",
        "mx axis 2 on rank 2", mx)
    c.n("n_quant_mx_scale_index", MX(buffers=bufs(128, 4)), payload_byte(0, 2, 0xFF), "CONSTRAINT",
        "mx scale_buffer_index 0xFF (the scale buffer is not optional)", mx + R_QUANT)
    c.n("n_quant_mx_scale_small__partial", D("float4_e2m1fn", [2, 40], quant=q_mx(1, 1), buffers=bufs(40, 2)), None,
        "BUFFER_SIZE", "2 rows x ceil(40/32) = 4 scales needed, 2 given", mx)
    c.n("n_quant_mx_layout__csf", D("float8_e4m3fn", [4, 4], "csf", params=csf(3, [2], [0, 1]), quant=q_mx(0, 5)),
        None, "COMBINATION", "mx on csf", mx + R_QCOMPAT)
    c.n("n_quant_mx_block_paged", D("float8_e4m3fn", [2, 64, 32], "block_paged", params=paged(64, 2, 2, 2),
                                    quant=q_mx(2, 3), buffers=bufs(4096, 24, 16, 128)),
        None, "COMBINATION", "mx on block_paged", mx + ["HR-PAGED-3"])
    # -- nvfp4
    NV = lambda **kw: D("float4_e2m1fn", [2, 48], quant=q_nvfp4(1, 1), **kw)
    for b in (32, 8):
        c.n(f"n_quant_nvfp4_block__{b}", NV(), payload_set(0, 4, u32(b)), "CONSTRAINT", f"nvfp4 block_size {b}", nv)
    for vid, bits in (("nan", F32_NAN), ("zero", 0), ("neg_zero", F32_NEG_ZERO), ("inf", F32_INF),
                      ("negative", f32bits(-1.0))):
        c.n(f"n_quant_nvfp4_tensor_scale__{vid}", NV(), payload_set(0, 8, u32(bits)), "CONSTRAINT",
            f"nvfp4 tensor_scale {vid}", nv)
    for name in ("float8_e4m3fn", "uint4", "float6_e2m3fn"):
        c.n(f"n_quant_nvfp4_dtype__{name}", D(name, [2, 48], quant=q_nvfp4(1, 1), buffers=bufs(96, 6)), None,
            "COMBINATION", f"nvfp4 over {name}", nv)
    c.n("n_quant_nvfp4_axis_range", D("float4_e2m1fn", [2, 48], quant=q_nvfp4(5, 1), buffers=bufs(48, 6)), None,
        "RANGE", "nvfp4 axis 5 on rank 2", nv)
    c.n("n_quant_nvfp4_scale_small__partial", D("float4_e2m1fn", [3, 20], quant=q_nvfp4(1, 1), buffers=bufs(30, 3)),
        None, "BUFFER_SIZE", "3 rows x ceil(20/16) = 6 scales needed, 3 given", nv)
    c.n("n_quant_nvfp4_layout__coo", D("float4_e2m1fn", [4, 4], "coo", params={"nnz": 3}, quant=q_nvfp4(0, 2)), None,
        "COMBINATION", "nvfp4 on coo", nv + R_QCOMPAT)
    # -- section-level: scheme tag, length, must_understand
    for v, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x07, "RESERVED_TAG"), (0xF0, "RESERVED_TAG"),
                   (0x80, "RESERVED_TAG")):
        c.n(f"n_quant_scheme__{v:02x}", PT(), payload_byte(0, 0, v), err, f"quantization scheme 0x{v:02X}",
            ["HR-QUANT-2"] + R_TAGS)
    c.n("n_quant_section_length__16", PT(), lambda r: r["sections"][0].update(payload=r["sections"][0]["payload"][:16]),
        "LENGTH",
        "per_tensor_affine payload of 16 bytes (needs 24)", ["HR-QUANT-2", "HR-SECT-2"])
    c.n("n_quant_section_length__32", PT(), lambda r: r["sections"][0].update(payload=r["sections"][0]["payload"] + bytes(8)),
        "LENGTH", "per_tensor_affine payload of 32 bytes", ["HR-QUANT-2", "HR-SECT-2"])
    c.n("n_quant_section_length__0", PT(), lambda r: r["sections"][0].update(payload=b""), "LENGTH",
        "empty quantization payload", ["HR-QUANT-2", "HR-SECT-2"])
    c.n("n_quant_section_length__per_channel_24", D("int8", [4, 8], quant=q_channel(1, 1), buffers=bufs(32, 32)),
        lambda r: r["sections"][0].update(payload=r["sections"][0]["payload"] + bytes(8)), "LENGTH",
        "per_channel_affine payload of 24 bytes (needs 16)", ["HR-QUANT-2", "HR-SECT-2"])
    c.n("n_quant_must_understand_clear", PT(), sec_field(0, flags=0), "CONSTRAINT",
        "a quantization section with must_understand 0", ["HR-SECT-2"])
    # -- reserved bytes of every scheme, every position
    bases = {
        "per_tensor_affine": (PT, list(range(1, 8))),
        "per_channel_affine": (PC, list(range(6, 16))),
        "block_affine": (lambda: BA(buffers=bufs(128, 16, 8)), [6, 7] + list(range(12, 24))),
        "nf4": (lambda: NF(buffers=bufs(64, 8)), [5, 6, 7, 20, 21, 22, 23]),
        "mx": (MX, [3] + list(range(8, 16))),
        "nvfp4": (NV, [3, 12, 13, 14, 15]),
    }
    for scheme, (mk, positions) in bases.items():
        for pos in positions:
            c.n(f"n_quant_{scheme}_reserved__b{pos}", mk(), payload_byte(0, pos, 1), "RESERVED_NONZERO",
                f"{scheme} reserved payload byte {pos} = 01", RS[scheme] + R_RES)
    for bit in range(1, 8):
        c.n(f"n_quant_nf4_flags__bit{bit}", NF(buffers=bufs(64, 8)), payload_byte(0, 1, 1 << bit), "RESERVED_NONZERO",
            f"nf4 reserved flag bit {bit}", nf + R_RES)
    # -- standalone payloads
    SA = {"per_tensor_affine": q_tensor(0.05, 3), "per_channel_affine": q_channel(1, 1, 2, "float32", "int8"),
          "block_affine": q_block(1, 1, 32, 2, "float16", "uint8"), "nf4": q_nf4(64), "mx": q_mx(1, 1),
          "nvfp4": q_nvfp4(1, 1)}
    R1 = ["HR-QUANT-1"]
    for scheme, q in SA.items():
        p = encode_quant(q)
        c.nq(f"n_quant_standalone_length__{scheme}_short", p[:-1], "LENGTH",
             f"standalone {scheme} one byte short ({len(p) - 1} bytes)", R1 + RS[scheme])
        c.nq(f"n_quant_standalone_length__{scheme}_long", p + b"\0", "LENGTH",
             f"standalone {scheme} with one extra byte", R1 + RS[scheme])
    c.nq("n_quant_standalone_length__empty", b"", "LENGTH", "an empty standalone payload", R1)
    c.nq("n_quant_standalone_length__per_tensor_16", encode_quant(SA["per_tensor_affine"])[:16], "LENGTH",
         "per_tensor_affine in 16 bytes (another scheme's length)", R1)
    p16 = encode_quant(SA["mx"])
    for v, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x07, "RESERVED_TAG"), (0xF0, "RESERVED_TAG")):
        c.nq(f"n_quant_standalone_scheme__{v:02x}", setb(p16, 0, v), err, f"standalone scheme byte 0x{v:02X}",
             R1 + ["HR-QUANT-2"])
    pt_p = encode_quant(SA["per_tensor_affine"])
    for vid, bits in (("nan", F64_NAN), ("zero", 0), ("neg_zero", F64_NEG_ZERO), ("inf", F64_INF),
                      ("negative", f64bits(-2.0))):
        c.nq(f"n_quant_standalone_per_tensor_affine_scale__{vid}", pt_p[:8] + u64(bits) + pt_p[16:], "CONSTRAINT",
             f"standalone per_tensor_affine with scale {vid}", R1 + pt)
    for scheme, positions in (("per_tensor_affine", (1, 7)), ("per_channel_affine", (6, 15)),
                              ("block_affine", (6, 12, 16, 23)), ("nf4", (5, 20)), ("mx", (3, 8, 15)),
                              ("nvfp4", (3, 12, 15))):
        for pos in positions:
            c.nq(f"n_quant_standalone_{scheme}_reserved__b{pos}", setb(encode_quant(SA[scheme]), pos, 0x40),
                 "RESERVED_NONZERO", f"standalone {scheme}, reserved byte {pos} = 40", R1 + RS[scheme])
    c.nq("n_quant_standalone_nf4_flags__bit1", setb(encode_quant(SA["nf4"]), 1, 2), "RESERVED_NONZERO",
         "standalone nf4 with reserved flag bit 1", R1 + nf)
    c.nq("n_quant_standalone_mx_block__16", setb(encode_quant(SA["mx"]), 4, 16), "CONSTRAINT",
         "standalone mx with block_size 16", R1 + mx)
    c.nq("n_quant_standalone_nvfp4_block__32", setb(encode_quant(SA["nvfp4"]), 4, 32), "CONSTRAINT",
         "standalone nvfp4 with block_size 32", R1 + nv)
    c.nq("n_quant_standalone_nf4_block__48", setb(encode_quant(SA["nf4"]), 8, 48), "CONSTRAINT",
         "standalone nf4 with block_size 48", R1 + nf)
    c.nq("n_quant_standalone_block_affine_block__0", encode_quant(dict(SA["block_affine"], block_size=0)),
         "CONSTRAINT", "standalone block_affine with block_size 0", R1 + ba)
    c.nq("n_quant_standalone_nvfp4_tensor_scale__nan", encode_quant(dict(SA["nvfp4"], tensor_scale=F32_NAN)),
         "CONSTRAINT", "standalone nvfp4 with a NaN tensor_scale", R1 + nv)
    c.nq("n_quant_standalone_nf4_nested_without_dq", encode_quant(dict(SA["nf4"], nested_block_size=64)),
         "CONSTRAINT", "standalone nf4: nested_block_size without double quant", R1 + nf)
    for vid, v, err in (("int8", DT["int8"], "COMBINATION"), ("ff", 0xFF, "INVALID_TAG"),
                        ("reserved_10", 0x10, "RESERVED_TAG")):
        c.nq(f"n_quant_standalone_per_channel_affine_scale_dtype__{vid}",
             setb(encode_quant(SA["per_channel_affine"]), 4, v), err, f"standalone per_channel scale_dtype 0x{v:02X}",
             R1 + pc)


# ================================================================== sect ===
def mutate_sect(c):
    ST = lambda: D("float32", [4, 4], stats=stats(1.0, 2.0))
    for v in (0x00, 0xFF):
        c.n(f"n_sect_type__{v:02x}", ST(), sec_field(0, type=v, flags=0), "INVALID_TAG", f"section type 0x{v:02X}",
            ["HR-SECT-4"])
    c.n("n_sect_order__duplicate_statistics", ST(), lambda r: r["sections"].append(dict(r["sections"][0])),
        "SECTION_ORDER", "two statistics sections", ["HR-SECT-1"])
    c.n("n_sect_order__shard_then_statistics", D("float32", [4, 4], stats=stats(1.0, 2.0), shard=shard(0, 1, [4, 4], [0, 0])),
        lambda r: r["sections"].reverse(), "SECTION_ORDER", "shard (0x03) before statistics (0x02)", ["HR-SECT-1"])
    c.n("n_sect_order__unknown_before_known", D("float32", [4, 4], stats=stats(1.0, 2.0), unknown=[(0x05, 0, b"x")]),
        lambda r: r["sections"].reverse(), "SECTION_ORDER", "unknown 0x05 before statistics 0x02", ["HR-SECT-1"])
    c.n("n_sect_order__duplicate_unknown", D("float32", [4, 4], unknown=[(0x10, 0, b"ab")]),
        lambda r: r["sections"].append(dict(r["sections"][0])), "SECTION_ORDER", "unknown type 0x10 twice",
        ["HR-SECT-1"])
    c.n("n_sect_order__role_then_quant", D("int8", [4, 4], quant=q_tensor(0.5, 0), role=0x01),
        lambda r: r["sections"].reverse(), "SECTION_ORDER", "member role (0x04) before quantization (0x01)",
        ["HR-SECT-1"])
    for bit in range(1, 8):
        c.n(f"n_sect_flags__bit{bit}", ST(), sec_field(0, flags=1 << bit), "RESERVED_NONZERO",
            f"section flags bit {bit} (reserved)", R_SECT + R_RES)
    for pos in (2, 3):
        c.n(f"n_sect_reserved__b{pos}", ST(), sec_field(0, res=setb(bytes(2), pos - 2, 1)), "RESERVED_NONZERO",
            f"section header reserved byte {pos}", R_SECT + R_RES)
    for t in (0x05, 0x42, 0xEF, 0xF0, 0xFE):
        c.n(f"n_sect_unknown_must_understand__{t:02x}", D("float32", [4, 4], unknown=[(t, 0, b"new")]),
            sec_field(0, flags=1), "UNSUPPORTED", f"unknown section type 0x{t:02X} with must_understand 1",
            ["HR-SECT-3"])
    c.n("n_sect_must_understand__statistics", ST(), sec_field(0, flags=1), "CONSTRAINT",
        "statistics with must_understand 1", ["HR-SECT-2"])
    c.n("n_sect_must_understand__shard", D("float32", [4, 4], shard=shard(0, 1, [4, 4], [0, 0])), sec_field(0, flags=1),
        "CONSTRAINT", "shard with must_understand 1", ["HR-SECT-2"])
    c.n("n_sect_must_understand__role", D("float32", [4, 4], role=1), sec_field(0, flags=0), "CONSTRAINT",
        "member role with must_understand 0", ["HR-SECT-2"])
    trim = lambda n: (lambda r: r["sections"][0].update(payload=r["sections"][0]["payload"][:n]))
    grow = lambda n: (lambda r: r["sections"][0].update(payload=r["sections"][0]["payload"] + bytes(n)))
    c.n("n_sect_length__statistics_31", ST(), trim(31), "LENGTH", "statistics payload of 31 bytes", ["HR-SECT-2"])
    c.n("n_sect_length__statistics_40", ST(), grow(8), "LENGTH", "statistics payload of 40 bytes", ["HR-SECT-2"])
    c.n("n_sect_length__shard_rank_mismatch", D("float32", [4, 4], shard=shard(0, 1, [4, 4], [0, 0])), trim(24),
        "LENGTH", "shard payload for rank 1 on a rank-2 tensor", ["HR-SECT-2"] + R_SHARD)
    c.n("n_sect_length__role_16", D("float32", [4, 4], role=1), grow(8), "LENGTH", "member role payload of 16 bytes",
        ["HR-SECT-2"])
    c.n("n_sect_length__role_0", D("float32", [4, 4], role=1), trim(0), "LENGTH", "empty member role payload",
        ["HR-SECT-2"])
    c.n("n_sect_length__past_end", D("float32", [4, 4], unknown=[(0x30, 0, bytes(8))]), sec_field(0, length=1000),
        "LENGTH", "unknown section claiming 1000 payload bytes", R_ORDER + R_SECT)
    c.n("n_sect_length__statistics_past_end", ST(), sec_field(0, length=0xFFFFFFFF), "LENGTH",
        "statistics length 2^32-1", R_ORDER + R_SECT)
    c.n("n_sect_padding__b0", D("float32", [4, 4], unknown=[(0x30, 0, b"abc")]), sec_field(0, pad=b"\x01" + bytes(4)),
        "RESERVED_NONZERO", "first padding byte after a 3-byte payload is 01", R_PAD + R_SECT)
    c.n("n_sect_padding__last", D("float32", [4, 4], unknown=[(0xF1, 0, b"abc")]), sec_field(0, pad=bytes(4) + b"\x80"),
        "RESERVED_NONZERO", "last padding byte after a 3-byte payload is 80", R_PAD + R_SECT)
    c.n("n_sect_trailing_bytes_inside", ST(), lambda r: r.update(elen=len(encode(fill(ST()))) + 8, trailing=bytes(8)),
        "LENGTH",
        "8 zero bytes after the last section, inside encoded_len", R_ORDER)
    # statistics
    c.n("n_sect_statistics_min_gt_max", D("float32", [4, 4], stats=stats(2.0, 1.0)), None, "CONSTRAINT",
        "min 2.0 > max 1.0", R_STAT)
    for vid, mn, mx in (("nan_min", F64_NAN, f64bits(1.0)), ("nan_max", f64bits(1.0), 0xFFF8000000000001),
                        ("snan_min", 0x7FF0000000000001, f64bits(1.0))):
        c.n(f"n_sect_statistics_{vid}", D("float32", [4, 4], stats=stats(mn_bits=mn, mx_bits=mx)), None, "CONSTRAINT",
            f"statistics {vid.replace('_', ' ')}", R_STAT)
    c.n("n_sect_statistics_flags_zero", ST(), payload_set(0, 0, bytes(32)), "CONSTRAINT",
        "statistics with flags 0 (omit the section instead)", R_STAT)
    for bit in range(2, 8):
        c.n(f"n_sect_statistics_flags__bit{bit}", ST(), payload_byte(0, 0, 1 | (1 << bit)), "RESERVED_NONZERO",
            f"statistics reserved flag bit {bit}", R_STAT + R_RES)
    for pos in range(1, 8):
        c.n(f"n_sect_statistics_reserved__b{pos}", ST(), payload_byte(0, pos, 1), "RESERVED_NONZERO",
            f"statistics reserved byte {pos}", R_STAT + R_RES)
    c.n("n_sect_statistics_absent_min", D("float32", [4, 4], stats=stats(nan=1)), payload_set(0, 8, u64(f64bits(1.0))),
        "RESERVED_NONZERO", "min non-zero while has_min_max is clear", R_STAT)
    c.n("n_sect_statistics_absent_max", D("float32", [4, 4], stats=stats(nan=1)), payload_byte(0, 23, 0x80),
        "RESERVED_NONZERO", "max = -0.0 bytes while has_min_max is clear (must be all-zero bytes)", R_STAT)
    c.n("n_sect_statistics_absent_nan_count", ST(), payload_set(0, 24, u64(5)), "RESERVED_NONZERO",
        "nan_count 5 while has_nan_count is clear", R_STAT)
    c.n("n_sect_statistics_nan_count_gt_n", D("float32", [4, 4], stats=stats(nan=17)), None, "CONSTRAINT",
        "nan_count 17 > N = 16", R_STAT)
    # shard
    SH = lambda sh, shape=(4, 4): D("float32", list(shape), shard=sh)
    c.n("n_sect_shard_index_ge_count", SH(shard(2, 2, [8, 8], [0, 0])), None, "CONSTRAINT", "shard_index 2 of 2",
        R_SHARD)
    c.n("n_sect_shard_count_zero", SH(shard(0, 0, [8, 8], [0, 0])), None, "CONSTRAINT", "shard_count 0", R_SHARD)
    c.n("n_sect_shard_box_outside", SH(shard(0, 2, [8, 8], [6, 0])), None, "CONSTRAINT",
        "offset 6 + extent 4 > global 8", R_SHARD)
    c.n("n_sect_shard_box_outside__rank1", SH(shard(0, 2, [3], [0]), shape=(4,)), None, "CONSTRAINT",
        "local extent 4 > global extent 3", R_SHARD)
    c.n("n_sect_shard_offset_overflow", SH(shard(0, 2, [8, 8], [U64_MAX - 1, 0])), None, "CONSTRAINT",
        "offset 2^64-2 + 4 wraps: the checked add fails", R_SHARD)
    c.n("n_sect_shard_global_dynamic", SH(shard(0, 2, [DYNAMIC, 8], [0, 0])), None, "RANGE",
        "a dynamic global extent", R_SHARD)
    c.n("n_sect_shard_global_too_big", SH(shard(0, 2, [1 << 63, 8], [0, 0])), None, "RANGE",
        "global extent 2^63", R_SHARD)
    # role
    RO = lambda: D("float32", [4, 4], role=1)
    for v, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x03, "RESERVED_TAG"), (0xF0, "RESERVED_TAG")):
        c.n(f"n_sect_role__{v:02x}", RO(), payload_byte(0, 0, v), err, f"member role byte 0x{v:02X}", R_ROLE + R_TAGS)
    for pos in range(1, 8):
        c.n(f"n_sect_role_reserved__b{pos}", RO(), payload_byte(0, pos, 1), "RESERVED_NONZERO",
            f"member role reserved byte {pos}", R_ROLE + R_RES)


def mutate_all(c):
    mutate_desc(c)
    mutate_dtype_device(c)
    mutate_layout(c)
    mutate_quant(c)
    mutate_sect(c)
