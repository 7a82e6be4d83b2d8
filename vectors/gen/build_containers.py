"""Valid and invalid vectors of kinds kv, file and stream (areas kv, file, stream, comp).

Each invalid vector starts from a valid model (checked valid through its own `y`-builder or
the oracle) and breaks one rule, through the raw record (containers.py) or a byte patch at a
position the serializer reports. The oracle (oracle.py) confirms every expected status.
"""
import itertools
import struct

import containers as C
from builders import D, bufs, composite, paged, private, q_block, q_channel, q_mx, q_nf4, q_nvfp4, \
    q_tensor, shard, stats, tiled, csf
from corpus import fill
from encoder import (F64_INF, F64_NAN, F64_NEG_INF, F64_NEG_ZERO, Buf, encode, serialize, to_raw,
                     u32, u64)
from tables import DEV, MC, SYNC, U64_MAX, I64_MAX

# ------------------------------------------------------------------ refs ---
R_KV_TYPES = ["HR-KV-2", "kv.md#value-types-hr-kv-2"]
R_KV_NAMES = ["HR-KV-6", "kv.md#utf-8-and-names-hr-kv-6"]
R_KV_LAYOUT = ["HR-KV-5", "kv.md#section-layout-hr-kv-5"]
R_KV_ORDER = ["HR-KV-7", "kv.md#order-hr-kv-7"]
R_KV_PAY = ["HR-KV-8", "kv.md#payloads-hr-kv-8"]
R_KV_DEC = ["HR-KV-9", "kv.md#decoding-order-hr-kv-9"]
R_KV_EX = ["HR-KV-1", "kv.md#worked-example-informative"]
R_KV_EQ = ["HR-KV-11", "kv.md#equality-hr-kv-11"]

R_F_HDR = ["HR-FILE-1", "file-container.md#header-hr-file-1-64-bytes"]
R_F_PLACE = ["HR-FILE-4", "file-container.md#placement-hr-file-4"]
R_F_INDEX = ["HR-FILE-2", "file-container.md#index-hr-file-2"]
R_F_RULES = ["HR-FILE-5", "file-container.md#index-hr-file-2"]
R_F_BUF = ["HR-FILE-2", "file-container.md#buffer-placement-hr-file-2"]
R_F_COMP = ["HR-FILE-3", "file-container.md#composites-hr-file-3"]
R_F_DEC = ["HR-FILE-6", "file-container.md#decoding-order-hr-file-6"]
R_F_READ = ["HR-FILE-9", "file-container.md#what-is-read-and-when-hr-file-9"]
R_F_EX = ["file-container.md#worked-example-informative"]

R_S_FRAME = ["HR-STREAM-2", "stream.md#frame-hr-stream-2"]
R_S_ITEMS = ["HR-STREAM-3", "stream.md#items-and-next-item-semantics-hr-stream-3"]
R_S_ENDS = ["HR-STREAM-4", "stream.md#ends-hr-stream-4"]
R_S_CM = ["HR-STREAM-5", "stream.md#cross_machine-hr-stream-5"]
R_S_KIND = ["HR-STREAM-6", "stream.md#frame-kind-hr-stream-6"]
R_S_LIM = ["HR-STREAM-7", "stream.md#reader-limits-hr-stream-7"]
R_S_DEC = ["HR-STREAM-9", "stream.md#decoding-order-hr-stream-9"]
R_S_END = ["HR-STREAM-12", "stream.md#end-frame-hr-stream-12"]
R_S_STATES = ["HR-STREAM-13", "stream.md#end-states-hr-stream-13"]
R_S_REV = ["stream.md#revision-and-compatibility"]
R_S_MEM = ["HR-STREAM-16", "stream.md#memory-committed-as-bytes-arrive-hr-stream-16"]
R_S_ANN = ["HR-STREAM-17", "stream.md#annotation-frame-hr-stream-17"]
R_S_ANNI = ["HR-STREAM-18", "stream.md#annotated-items-hr-stream-18"]
R_S_EX = ["stream.md#worked-example-informative"]
R_SLACK = ["HR-LIMIT-2", "errors-and-limits.md#alignment-slack-hr-limit-2"]

R_C_STRUCT = ["HR-COMP-1", "composite.md#structure-hr-comp-1"]
R_C_RULES = ["HR-COMP-2", "composite.md#rules-hr-comp-2"]
R_C_ROLES = ["HR-COMP-3", "composite.md#roles-hr-comp-3"]
R_C_RES = ["HR-COMP-4", "composite.md#resolved-extents-hr-comp-4"]
R_C_PART = ["HR-COMP-5", "composite.md#partition-members-hr-comp-5"]
R_C_GRID = ["HR-COMP-6", "composite.md#partition-tiling-hr-comp-6"]
R_C_OVER = ["HR-COMP-7", "composite.md#overlay-members-hr-comp-7"]
R_C_GROUP = ["HR-COMP-8", "composite.md#group-members-hr-comp-8"]
R_C_LIM = ["HR-COMP-9", "composite.md#limits-hr-comp-9"]
R_C_ORDER = ["HR-COMP-10", "composite.md#validation-order-hr-comp-10"]
R_C_EX = ["composite.md#example-informative"]


# ------------------------------------------------------------------ helpers ---
def patch(data, pos, new):
    b = bytearray(data)
    b[pos:pos + len(new)] = new
    return bytes(b)


def setb(data, pos, v):
    return patch(data, pos, bytes([v]))


def p64(data, pos, v):
    return patch(data, pos, u64(v))


def p32(data, pos, v):
    return patch(data, pos, u32(v))


def T(dtype, shape, layout="row_major", seed=0, data=None, **kw):
    """A tensor item with exactly the buffers its descriptor requires (unless given)."""
    return C.Tensor(fill(D(dtype, shape, layout, **kw)), data=data, seed=seed)


def head(rule, dtype, shape, n, combine=None, **kw):
    return D(dtype, shape, "composite", params=composite(rule, combine, n), buffers=[], **kw)


def part(dtype, shape, cuts, seed=0, hshard=None, role=None, **kw):
    """A partition of `shape` cut at `cuts` (one list of cut points per dimension, each from 0),
    members in row-major grid order, each placed by a shard section."""
    r = len(shape)
    cells = list(itertools.product(*[range(len(c)) for c in cuts]))
    members = []
    for i, j in enumerate(cells):
        off = [cuts[k][j[k]] for k in range(r)]
        ext = [(cuts[k][j[k] + 1] if j[k] + 1 < len(cuts[k]) else shape[k]) - off[k]
               for k in range(r)]
        members.append(T(dtype, ext, seed=seed + i, shard=shard(i, len(cells), shape, off), **kw))
    return C.Comp(head("partition", dtype, shape, len(cells), shard=hshard, role=role), members)


def over(dtype, shape, combine, corrections, seed=0, base_shard=False, **kw):
    """An overlay: a base spanning `shape`, then corrections [(offset, extent)]."""
    base = T(dtype, shape, seed=seed, role=0x01,
             shard=shard(0, 1, shape, [0] * len(shape)) if base_shard else None, **kw)
    corr = [T(dtype, ext, seed=seed + 1 + i, role=0x02, shard=shard(i, len(corrections), shape, off), **kw)
            for i, (off, ext) in enumerate(corrections)]
    return C.Comp(head("overlay", dtype, shape, 1 + len(corrections), combine), [base] + corr)


def grp(members, dtype="float32", shape=(len,), **kw):
    shape = [len(members)] if shape == (len,) else list(shape)
    return C.Comp(head("group", dtype, shape, len(members), **kw), members)


def w_tensor():
    """descriptor.md § Worked example with the data 1.0 ... 6.0."""
    return C.Tensor(D("float32", [2, 3], buffers=[Buf(24, 6)]), data=[struct.pack("<6f", 1, 2, 3, 4, 5, 6)])


def w_partition():
    """composite.md § Example / stream.md § Worked example: two [1, 3] rows."""
    h = head("partition", "float32", [2, 3], 2)
    m0 = C.Tensor(D("float32", [1, 3], buffers=[Buf(12, 6)], shard=shard(0, 1, [2, 3], [0, 0])),
                  data=[struct.pack("<3f", 1, 2, 3)])
    m1 = C.Tensor(D("float32", [1, 3], buffers=[Buf(12, 6)], shard=shard(0, 1, [2, 3], [1, 0])),
                  data=[struct.pack("<3f", 4, 5, 6)])
    return C.Comp(h, [m0, m1])


def raw_desc(desc, **kw):
    """Descriptor bytes with raw header fields changed."""
    r = to_raw(desc)
    r.update(kw)
    return serialize(r)


# ================================================================== KV ===
KV_WORKED = {"n": ("int64", 42), "tags": ("list", [("bool", True), ("string", "hi")])}
KV_WORKED_HEX = (
    "0200000000000000" "0100000002000000" "6e00000000000000" "2a00000000000000"
    "0400000007000000" "7461677300000000" "0200000000000000" "0100000000000000"
    "0100000000000000" "0500000000000000" "0200000000000000" "6869000000000000")


def _nest(depth, leaf=("int64", 1)):
    v = leaf
    for _ in range(depth):
        v = ("list", [v])
    return v


def build_kv_valid(c):
    data = C.kv_encode(KV_WORKED)
    if data != bytes.fromhex(KV_WORKED_HEX):
        raise AssertionError("kv.md worked example does not reproduce")
    c.ykv("y_kv_worked_example", KV_WORKED,
          "kv.md worked example: {n: 42 (int64), tags: [true, \"hi\"]}, 96 bytes, byte for byte",
          R_KV_EX + R_KV_LAYOUT)
    c.ykv("y_kv_empty", {}, "empty map: entry_count 0, 8 bytes (legal standalone)", R_KV_LAYOUT)
    for name, v in (("false", False), ("true", True)):
        c.ykv(f"y_kv_bool__{name}", {"b": ("bool", v)}, f"bool {name}", R_KV_TYPES + R_KV_PAY)
    for name, v in (("zero", 0), ("neg1", -1), ("min", -(1 << 63)), ("max", I64_MAX)):
        c.ykv(f"y_kv_int64__{name}", {"i": ("int64", v)}, f"int64 {v}", R_KV_TYPES + R_KV_PAY)
    for name, v in (("zero", 0), ("2p63", 1 << 63), ("max", U64_MAX)):
        c.ykv(f"y_kv_uint64__{name}", {"u": ("uint64", v)}, f"uint64 {v}", R_KV_TYPES + R_KV_PAY)
    c.ykv("y_kv_int64_uint64_same_number", {"a": ("int64", 7), "b": ("uint64", 7)},
          "int64 7 and uint64 7: two different values (HR-KV-11), tags kept", R_KV_TYPES + R_KV_EQ)
    floats = (("zero", 0), ("neg_zero", F64_NEG_ZERO), ("one", 0x3FF0000000000000),
              ("inf", F64_INF), ("neg_inf", F64_NEG_INF), ("nan_quiet", F64_NAN),
              ("nan_signaling_payload", 0x7FF0000000000001), ("nan_negative_payload", 0xFFF8000000000ABC),
              ("subnormal_min", 1), ("max", 0x7FEFFFFFFFFFFFFF))
    for name, bits in floats:
        c.ykv(f"y_kv_float64__{name}", {"f": ("float64", bits)},
              f"float64 bit pattern 0x{bits:016X}, kept bit for bit", R_KV_TYPES + R_KV_PAY + R_KV_EQ)
    strings = (("empty", ""), ("len7", "abcdefg"), ("len8", "abcdefgh"), ("len9", "abcdefghi"),
               ("unicode", "h\u00e9llo w\u00f6rld \u2713 \U0001D11E"), ("nul", "a\x00b"),
               ("max_codepoint", "\U0010FFFF"), ("long", "x" * 1000))
    for name, s in strings:
        c.ykv(f"y_kv_string__{name}", {"s": ("string", s)},
              f"string of {len(s.encode())} UTF-8 bytes, zero padding to 8", R_KV_TYPES + R_KV_PAY + R_KV_NAMES)
    for name, b in (("empty", b""), ("len8", bytes(range(8))), ("len13", bytes(range(13))),
                    ("all_256", bytes(range(256))), ("zeros", bytes(5))):
        c.ykv(f"y_kv_bytes__{name}", {"b": ("bytes", b)}, f"bytes of length {len(b)}",
              R_KV_TYPES + R_KV_PAY)
    every = [("bool", False), ("int64", -5), ("uint64", 5), ("float64", F64_NAN), ("string", "s"),
             ("bytes", b"\x00\xff"), ("list", [])]
    c.ykv("y_kv_list__empty", {"l": ("list", [])}, "empty list: count 0", R_KV_TYPES + R_KV_PAY)
    c.ykv("y_kv_list__every_type", {"l": ("list", every)}, "a heterogeneous list holding every type",
          R_KV_TYPES + R_KV_PAY)
    c.ykv("y_kv_list__bools", {"l": ("list", [("bool", i % 2 == 0) for i in range(9)])},
          "a list of nine bools", R_KV_PAY)
    c.ykv("y_kv_list__nested_3", {"l": ("list", [("list", [("list", [("string", "deep")]), ("int64", 1)]), ("list", [])])},
          "lists nested three deep, with an empty list", R_KV_TYPES + R_KV_PAY)
    c.ykv("y_kv_list__depth_at_default_limit", {"l": _nest(16)},
          "16 nested lists (depth 16 = max_composite_depth default)", R_KV_TYPES + ["HR-LIMIT-1"])
    c.ykv("y_kv_list__depth_at_option_limit", {"l": _nest(3)},
          "3 nested lists with max_composite_depth 3", R_KV_TYPES, options={"max_composite_depth": 3})
    c.ykv("y_kv_list__strings_unaligned", {"l": ("list", [("string", "a" * k) for k in range(10)])},
          "strings of length 0..9 in a list: every padding length", R_KV_PAY)
    c.ykv("y_kv_every_type", {"a": ("bool", True), "b": ("int64", -1), "c": ("uint64", U64_MAX),
                              "d": ("float64", 0x400921FB54442D18), "e": ("string", "pi"),
                              "f": ("bytes", b"\x01\x02\x03"), "g": ("list", every)},
          "one entry of each value type", R_KV_TYPES)
    # keys and their order
    c.ykv("y_kv_key__prefix_order", {"ab": ("int64", 2), "b": ("int64", 3), "a": ("int64", 1)},
          "a key that is a prefix of another sorts first: a < ab < b", R_KV_ORDER)
    c.ykv("y_kv_key__bytewise_order", {"a": ("int64", 1), "B": ("int64", 2), "_": ("int64", 3), "~": ("int64", 4)},
          "keys ordered by bytes, not case-folded: B < _ < a < ~", R_KV_ORDER)
    c.ykv("y_kv_key__unicode", {"\u00e9t\u00e9": ("int64", 1), "\u65e5\u672c": ("int64", 2),
                                "z": ("int64", 3), "\U0001F600": ("int64", 4)},
          "multi-byte UTF-8 keys, ordered by their bytes", R_KV_ORDER + R_KV_NAMES)
    c.ykv("y_kv_key__nfc_nfd", {"\u00e9": ("string", "nfc"), "e\u0301": ("string", "nfd")},
          "an NFC key and its NFD spelling are two keys (no normalisation)", R_KV_NAMES + R_KV_ORDER)
    c.ykv("y_kv_key__len8", {"abcdefgh": ("int64", 8)}, "an 8-byte key: no padding", R_KV_LAYOUT)
    c.ykv("y_kv_key__max_name_bytes", {"k" * 1024: ("int64", 1)},
          "a 1024-byte key (max_name_bytes default)", R_KV_NAMES + ["HR-LIMIT-1"])
    c.ykv("y_kv_key__at_option_limit", {"k" * 16: ("int64", 1)}, "a 16-byte key with max_name_bytes 16",
          R_KV_NAMES, options={"max_name_bytes": 16})
    c.ykv("y_kv_key__high_codepoint", {"\U0010FFFF": ("bool", True)}, "key U+10FFFF (4 bytes)", R_KV_NAMES)
    many = {f"key{i:04d}": ("int64", i) for i in range(200)}
    c.ykv("y_kv_entries__200", many, "200 entries", R_KV_LAYOUT + R_KV_ORDER)
    three = {"a": ("int64", 1), "b": ("int64", 2), "c": ("int64", 3)}
    c.ykv("y_kv_entries__at_option_limit", three, "3 entries with max_kv_entries 3", R_KV_DEC,
          options={"max_kv_entries": 3})
    c.ykv("y_kv_bytes_at_option_limit", three, "a 80-byte section with max_kv_bytes 80", R_KV_DEC,
          options={"max_kv_bytes": 80})


def build_kv_invalid(c):
    w = bytes.fromhex(KV_WORKED_HEX)
    n = c.nkv
    n("n_kv_worked_example__bool_2", setb(w, 0x40, 2), "RANGE", "kv.md worked example: byte 0x40 = 02, a bool of 2",
      R_KV_EX + R_KV_PAY)
    n("n_kv_worked_example__tag_08", setb(w, 0x0C, 8), "UNSUPPORTED",
      "kv.md worked example: byte 0x0C = 08, a reserved value tag", R_KV_EX + R_KV_TYPES)
    swapped = w[:8] + w[0x20:0x60] + w[0x08:0x20]
    n("n_kv_worked_example__swapped", swapped, "SECTION_ORDER", "kv.md worked example with its two entries swapped",
      R_KV_EX + R_KV_ORDER)
    for cut in (0, 4, 8, 0x0C, 0x12, 0x20, 0x3C, 0x44, 0x50, 0x5A, 95):
        n(f"n_kv_truncated__{cut}", w[:cut], "TRUNCATED", f"the worked example cut to {cut} bytes (standalone)",
          R_KV_EX + R_KV_DEC)
    # entry_count
    n("n_kv_entry_count__lies_high", p64(w, 0, 3), "TRUNCATED",
      "entry_count 3 over two entries: the third header would cross the end", R_KV_DEC)
    n("n_kv_entry_count__lies_low", p64(w, 0, 1), "LENGTH", "entry_count 1 over two entries: bytes remain",
      R_KV_DEC + R_KV_LAYOUT)
    n("n_kv_entry_count__times24_exceeds", p64(w, 0, 4), "TRUNCATED",
      "entry_count 4: 4 x 24 > the 88 bytes left, refused before any entry", R_KV_DEC)
    n("n_kv_entry_count__huge", p64(w, 0, U64_MAX), "LIMIT", "entry_count 2^64-1 > max_kv_entries", R_KV_DEC)
    n("n_kv_entry_count__over_option_limit", w, "LIMIT", "2 entries with max_kv_entries 1", R_KV_DEC,
      options={"max_kv_entries": 1})
    n("n_kv_bytes__over_option_limit", w, "LIMIT", "a 96-byte section with max_kv_bytes 88", R_KV_DEC,
      options={"max_kv_bytes": 88})
    # entry header
    one = C.kv_encode({"k": ("int64", 5)})  # 8 count | 8 header | 8 key | 8 value
    n("n_kv_key_length__zero", p32(one, 8, 0), "CONSTRAINT", "key_length 0 (a key is a non-empty name)",
      R_KV_NAMES + R_KV_DEC)
    n("n_kv_key_length__huge", p32(one, 8, 0xFFFFFFFF), "LIMIT", "key_length 2^32-1 > max_name_bytes", R_KV_DEC)
    n("n_kv_key_length__lies", p32(one, 8, 1000), "TRUNCATED", "key_length 1000 crosses the section end",
      R_KV_DEC)
    long_key = C.kv_encode({"k" * 1025: ("int64", 1)})
    n("n_kv_key_length__over_default_limit", long_key, "LIMIT", "a 1025-byte key > max_name_bytes 1024",
      R_KV_NAMES + R_KV_DEC)
    n("n_kv_key_length__over_option_limit", C.kv_encode({"abcde": ("int64", 1)}), "LIMIT",
      "a 5-byte key with max_name_bytes 4", R_KV_NAMES, options={"max_name_bytes": 4})
    for tag, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x08, "UNSUPPORTED"),
                     (0x80, "UNSUPPORTED"), (0xF0, "UNSUPPORTED"), (0xFE, "UNSUPPORTED")):
        n(f"n_kv_tag__{tag:02x}", setb(one, 12, tag), err,
          f"value tag 0x{tag:02X} ({'invalid' if err == 'INVALID_TAG' else 'reserved: no private range'})",
          R_KV_TYPES + ["HR-KV-3"])
    for pos in (13, 15):
        n(f"n_kv_entry_reserved__b{pos - 8}", setb(one, pos, 1), "RESERVED_NONZERO",
          f"entry header reserved byte {pos - 8} = 01", R_KV_LAYOUT)
    n("n_kv_key_padding__nonzero", setb(one, 17, 0x20), "RESERVED_NONZERO", "key padding byte = 0x20",
      R_KV_LAYOUT)
    # keys that are not names
    bad_keys = (("invalid_byte_ff", b"\xff"), ("overlong_slash", b"\xc0\xaf"), ("surrogate", b"\xed\xa0\x80"),
                ("above_10ffff", b"\xf4\x90\x80\x80"), ("truncated_sequence", b"a\xe2\x82"),
                ("stray_continuation", b"\x80a"), ("nul", b"a\x00b"), ("only_nul", b"\x00"))
    for name, kb in bad_keys:
        n(f"n_kv_key__{name}", C.kv_serialize(C.kv_raw([(kb, ("int64", 1))])), "CONSTRAINT",
          f"key {kb!r} is not a name (invalid UTF-8 or U+0000)", R_KV_NAMES)
    n("n_kv_key__duplicate", C.kv_serialize(C.kv_raw([("a", ("int64", 1)), ("a", ("int64", 2))], sort=False)),
      "DUPLICATE", "two entries with key 'a'", R_KV_ORDER)
    n("n_kv_key__duplicate_types_differ",
      C.kv_serialize(C.kv_raw([("x", ("int64", 1)), ("x", ("string", "1"))], sort=False)),
      "DUPLICATE", "key 'x' twice with values of different types", R_KV_ORDER)
    n("n_kv_key__unsorted", C.kv_serialize(C.kv_raw([("b", ("int64", 1)), ("a", ("int64", 2))], sort=False)),
      "SECTION_ORDER", "keys b, a: out of order", R_KV_ORDER)
    n("n_kv_key__prefix_after", C.kv_serialize(C.kv_raw([("ab", ("int64", 1)), ("a", ("int64", 2))], sort=False)),
      "SECTION_ORDER", "key 'a' after 'ab' (a prefix sorts first)", R_KV_ORDER)
    n("n_kv_key__nfd_before_nfc_reversed",
      C.kv_serialize(C.kv_raw([("\u00e9", ("int64", 1)), ("e\u0301", ("int64", 2))], sort=False)),
      "SECTION_ORDER", "NFC 'C3 A9' before NFD '65 CC 81': byte order puts 'e' first", R_KV_ORDER + R_KV_NAMES)
    n("n_kv_key__duplicate_after_three",
      C.kv_serialize(C.kv_raw([("a", ("int64", 1)), ("b", ("int64", 1)), ("c", ("int64", 1)), ("c", ("int64", 2))],
                              sort=False)), "DUPLICATE", "the fourth entry repeats the third key", R_KV_ORDER)
    # payloads
    b1 = C.kv_encode({"b": ("bool", True)})  # value byte at 24
    n("n_kv_bool__2", setb(b1, 24, 2), "RANGE", "bool value 2", R_KV_PAY)
    n("n_kv_bool__ff", setb(b1, 24, 0xFF), "RANGE", "bool value 0xFF", R_KV_PAY)
    n("n_kv_bool__reserved", setb(b1, 31, 1), "RESERVED_NONZERO", "bool reserved byte 7 = 01", R_KV_PAY)
    n("n_kv_bool__truncated", b1[:28], "TRUNCATED", "bool payload cut after 4 bytes", R_KV_DEC)
    i1 = C.kv_encode({"i": ("int64", 1)})
    n("n_kv_int64__truncated", i1[:30], "TRUNCATED", "int64 payload cut after 6 bytes", R_KV_DEC)
    s1 = C.kv_encode({"s": ("string", "hello")})  # len at 24, bytes at 32, pad 37..39
    n("n_kv_string__length_lies", p64(s1, 24, 9), "TRUNCATED", "string length 9 over 8 bytes left", R_KV_DEC)
    n("n_kv_string__length_huge", p64(s1, 24, U64_MAX), "TRUNCATED", "string length 2^64-1", R_KV_DEC)
    n("n_kv_string__length_short", p64(s1, 24, 3), "RESERVED_NONZERO",
      "string length 3 over 'hello': 'lo' lands in the padding", R_KV_PAY + R_KV_DEC)
    n("n_kv_string__padding_nonzero", setb(s1, 39, 1), "RESERVED_NONZERO", "string padding byte = 01", R_KV_PAY)
    for name, sb in (("invalid_ff", b"ab\xff"), ("surrogate", b"\xed\xb0\x80"), ("overlong_nul", b"\xc0\x80"),
                     ("truncated", b"\xf0\x9f\x98")):
        n(f"n_kv_string__{name}", C.kv_serialize(C.kv_raw([("s", ("string", sb))])), "CONSTRAINT",
          f"string value {sb!r} is not valid UTF-8", R_KV_NAMES + R_KV_PAY)
    by = C.kv_encode({"b": ("bytes", b"\x01\x02\x03")})
    n("n_kv_bytes_value__length_lies", p64(by, 24, 16), "TRUNCATED", "bytes length 16 over 8 bytes left", R_KV_DEC)
    n("n_kv_bytes_value__padding_nonzero", setb(by, 35, 1), "RESERVED_NONZERO", "bytes padding byte = 01", R_KV_PAY)
    # lists
    ls = C.kv_encode({"l": ("list", [("bool", True), ("int64", 2)])})  # count 24, e0 hdr 32, e0 40, e1 hdr 48, e1 56
    n("n_kv_list__count_lies", p64(ls, 24, 3), "TRUNCATED", "list count 3 over 2 elements: 3 x 16 > 32 left",
      R_KV_DEC)
    n("n_kv_list__count_huge", p64(ls, 24, U64_MAX), "TRUNCATED", "list count 2^64-1, refused before reading",
      R_KV_DEC)
    n("n_kv_list__count_low", p64(ls, 24, 1), "LENGTH", "list count 1 over 2 elements: bytes remain", R_KV_DEC)
    for tag, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x09, "UNSUPPORTED"), (0xF5, "UNSUPPORTED")):
        n(f"n_kv_list__element_tag_{tag:02x}", setb(ls, 48, tag), err, f"list element tag 0x{tag:02X}",
          R_KV_TYPES + ["HR-KV-3"])
    n("n_kv_list__element_reserved", setb(ls, 51, 1), "RESERVED_NONZERO", "list element header reserved byte = 01",
      R_KV_PAY)
    n("n_kv_list__element_bool_2", setb(ls, 40, 2), "RANGE", "a bool element of 2", R_KV_PAY)
    n("n_kv_list__element_string_utf8",
      C.kv_serialize(C.kv_raw([("l", ("list", [("string", "ok"), ("string", b"\xfe")]))])), "CONSTRAINT",
      "a string element that is not UTF-8", R_KV_PAY + R_KV_NAMES)
    n("n_kv_list__depth_over_default", C.kv_encode({"l": _nest(17)}), "LIMIT",
      "17 nested lists > max_composite_depth 16", R_KV_TYPES + R_KV_DEC)
    n("n_kv_list__depth_over_option", C.kv_encode({"l": _nest(4)}), "LIMIT",
      "4 nested lists with max_composite_depth 3", R_KV_TYPES, options={"max_composite_depth": 3})
    deep = C.kv_encode({"l": _nest(3, ("list", [("int64", 1)] * 1000))})
    n("n_kv_list__depth_before_count", p64(deep, 72, U64_MAX), "LIMIT",
      "the 4th-level list's count is 2^64-1, but its depth 4 > 3 is refused before the count is read",
      R_KV_DEC, options={"max_composite_depth": 3})
    n("n_kv_list__nested_truncated", C.kv_encode({"l": _nest(5)})[:-4], "TRUNCATED",
      "five nested lists cut inside the innermost int64", R_KV_DEC)
    # trailing and the section as a whole
    n("n_kv_trailing__1", w + b"\x00", "LENGTH", "one byte after the last entry", R_KV_LAYOUT + R_KV_DEC)
    n("n_kv_trailing__8", w + bytes(8), "LENGTH", "eight zero bytes after the last entry", R_KV_LAYOUT + R_KV_DEC)
    n("n_kv_empty__trailing", C.kv_encode({}) + bytes(8), "LENGTH", "entry_count 0 then 8 more bytes", R_KV_DEC)


# ================================================================== files ===
FILE_WORKED_HEX = (
    "4852525946494c45" "0100000000000000" "4000000000000000" "6800000000000000"
    "a800000000000000" "2000000000000000" "0010000000000000" "4000000000000000"
    "0100000000000000" "0100000001000000" "7700000000000000")
FILE_WORKED_TAIL_HEX = (  # 0x00A0: buffer offset, then the KV section
    "0000000000000000" "0100000000000000" "0100000002000000" "6100000000000000" "0100000000000000")
KV_RICH = {"author": ("string", "hurray"), "epoch": ("int64", 12), "lr": ("float64", 0x3F50624DD2F1A9FC),
           "flags": ("list", [("bool", True), ("uint64", 3), ("bytes", b"\x00\x01")]),
           "nan": ("float64", 0x7FF8DEADBEEF0001), "empty": ("string", "")}


def file_layouts():
    """One tensor per layout / quantization that owns buffers (several multi-buffer)."""
    return [
        ("col_major", T("float64", [3, 4], "col_major")),
        ("strided", T("int16", [4, 3], "strided", params={"strides": [-3, 1]}, byte_offset=18)),
        ("tiled", T("float32", [4, 6], "tiled", params=tiled([2, 3], [12, 6], [3, 1]))),
        ("morton", T("uint8", [4, 4], "morton")),
        ("hilbert", T("int32", [8, 8], "hilbert")),
        ("coo", T("float32", [5, 5], "coo", params={"nnz": 4})),
        ("csr", T("float16", [4, 6], "csr", params={"nnz": 5})),
        ("csc", T("bfloat16", [6, 4], "csc", params={"nnz": 3})),
        ("csf", T("float32", [3, 4, 5], "csf", params=csf(6, [2, 4], [0, 1, 2]))),
        ("block_paged", T("float16", [2, 32, 4], "block_paged", params=paged(16, 5, 2, 4))),
    ]


def file_quants():
    return [
        ("per_tensor_affine", T("int8", [4, 8], quant=q_tensor(0.05, -3))),
        ("per_channel_affine", T("int8", [4, 8], quant=q_channel(0, 1, 2, "float32", "int8"))),
        ("block_affine", T("uint4", [4, 64], quant=q_block(1, 1, 32))),
        ("nf4", T("uint4", [128], quant=q_nf4(64))),
        ("nf4_double_quant", T("uint4", [4096], quant=q_nf4(64, dq=True, nested_block=256))),
        ("mx", T("float8_e4m3fn", [2, 64], quant=q_mx(1, 1))),
        ("nvfp4", T("float4_e2m1fn", [2, 32], quant=q_nvfp4(1, 1))),
    ]


def build_file_valid(c):
    y = c.yfile
    data = y("y_file_worked_example", [("w", w_tensor())],
             "file-container.md worked example: tensor w float32 [2, 3] = 1..6, KV {a: 1}, 4160 bytes",
             R_F_EX + R_F_HDR + R_F_PLACE, kv={"a": ("int64", 1)})
    if (len(data) != 4160 or data[:0x58] != bytes.fromhex(FILE_WORKED_HEX)
            or data[0xA0:0xC8] != bytes.fromhex(FILE_WORKED_TAIL_HEX)
            or data[0x58:0xA0] != encode(w_tensor().desc) or any(data[0xC8:0x1000])
            or data[0x1000:0x1018] != struct.pack("<6f", 1, 2, 3, 4, 5, 6) or any(data[0x1018:])):
        raise AssertionError("file-container.md worked example does not reproduce")
    y("y_file_empty", [], "no entries, no KV: header, an 8-byte index, zero padding to 4096",
      R_F_PLACE + R_F_INDEX)
    y("y_file_kv_only", [], "no entries, a KV section", R_F_PLACE, kv={"only": ("bool", True)})
    y("y_file_one_tensor_no_kv", [("x", T("int32", [3, 5]))], "one tensor, no KV section (kv 0, 0)",
      R_F_HDR + R_F_PLACE)
    y("y_file_dtypes", [(f"t_{n}", T(n, [3, 5], seed=i)) for i, n in enumerate(
        ("bool", "int4", "uint2", "float16", "bfloat16", "complex64", "float8_e5m2", "float6_e2m3fn", "int64"))],
      "nine tensors of different element types (sub-byte sizes rounded up), each at a 64-aligned offset",
      R_F_BUF)
    for name, t in file_layouts():
        y(f"y_file_layout__{name}", [("t", t)], f"a {name} tensor: its {len(t.data)} buffers placed in table order",
          R_F_BUF)
    y("y_file_layout__all", file_layouts(), "every buffered layout in one file, one after another", R_F_BUF)
    for name, t in file_quants():
        y(f"y_file_quant__{name}", [("q", t)], f"a {name} quantized tensor with its {len(t.data)} buffers",
          R_F_BUF + ["HR-QUANT-3"])
    for lg in (0, 3, 7, 8, 10, 12):
        y(f"y_file_align__{1 << lg}", [("a", T("uint8", [40], buffers=[Buf(40, 6)])),
                                       ("b", T("uint8", [100], buffers=[Buf(100, lg)]))],
          f"a 40-byte buffer then one declaring 2^{lg}: placed at {max(64, 1 << lg)}", R_F_BUF)
    y("y_file_align__mixed", [("m", T("float32", [4, 6], "csr", params={"nnz": 5},
                                      buffers=[Buf(20, 12), Buf(40, 3), Buf(40, 9)])),
                              ("n", T("int8", [3], buffers=[Buf(3, 11)]))],
      "buffers declaring 4096, 8, 512, 2048: offsets 0, 64, 512, 2048", R_F_BUF)
    y("y_file_empty_buffer", [("a", T("uint8", [10])), ("z", T("float32", [0, 4])), ("b", T("uint8", [10]))],
      "a [0, 4] tensor's empty buffer (size 0, alignment 1) takes offset 64 and no bytes", R_F_BUF)
    y("y_file_empty_buffer_first", [("z", T("float32", [4, 0])), ("b", T("uint8", [70]))],
      "an empty first buffer at 0; the next at 0 as well (64-rounded end of an empty buffer)", R_F_BUF)
    y("y_file_rank0", [("s", T("float64", []))], "a rank-0 scalar", R_F_INDEX)
    y("y_file_sections", [("s", T("float32", [8, 8], stats=stats(-1.0, 2.0, nan=0),
                                  shard=shard(1, 4, [16, 16], [8, 0]),
                                  unknown=[(0x42, 0, b"carried")]))],
      "a descriptor with statistics, shard and an unknown section, carried in the index", R_F_INDEX)
    y("y_file_private_layout", [("p", T("float32", [4], 0xF3, params=private(9, b"ext-data"),
                                        buffers=[Buf(100, 6), Buf(7, 0)]))],
      "a private layout with two buffers (count not checked)", R_F_BUF + ["HR-LAYOUT-40"])
    y("y_file_extension_dtype", [("e", T(0xF5, [4, 4], buffers=[Buf(33, 4)]))],
      "a private extension element type", R_F_INDEX + ["HR-DTYPE-4"])
    y("y_file_dynamic_extent", [("d", T("float32", [None, 4], buffers=[Buf(64, 6)]))],
      "a tensor with a dynamic extent (nothing in the file rules forbids it)", R_F_INDEX)
    y("y_file_desc_minor", [("m", T("int8", [4], version=(1, 5)))],
      "a descriptor of version 1.5 inside: kept and re-encoded", R_F_INDEX + ["HR-DESC-4"])
    y("y_file_version_minor__1", [("w", w_tensor())],
      "header version 1.1: read (any minor); a 1.0 writer would write 1.0, so roundtrip is false",
      R_F_HDR, vmin=1)
    y("y_file_many_tensors", [(f"t{i:03d}", T("uint8", [i % 7 + 1], seed=i)) for i in range(60)],
      "60 small tensors", R_F_INDEX + R_F_BUF)
    y("y_file_names__unicode", [("\u00e9t\u00e9", T("int8", [2])), ("\u65e5\u672c/\U0001F600", T("int8", [2])),
                                ("a b", T("int8", [2]))], "names with multi-byte UTF-8 and spaces", R_F_INDEX + R_KV_NAMES)
    y("y_file_names__not_sorted", [("zeta", T("int8", [1])), ("alpha", T("int8", [1]))],
      "entries keep the writer's order (names are not sorted)", R_F_INDEX)
    y("y_file_name__max_bytes", [("n" * 1024, T("int8", [2]))], "a 1024-byte name (max_name_bytes default)",
      R_F_INDEX + R_KV_NAMES)
    y("y_file_name__at_option_limit", [("abcdefgh", T("int8", [2]))], "an 8-byte name with max_name_bytes 8",
      R_F_INDEX, options={"max_name_bytes": 8})
    y("y_file_name__len8", [("abcdefgh", T("int8", [2])), ("i", T("int8", [2]))],
      "an 8-byte name (no padding) and a 1-byte name (7 padding)", R_F_INDEX)
    y("y_file_tensors__at_option_limit", [("a", T("int8", [1])), ("b", T("int8", [1])), ("c", T("int8", [1]))],
      "3 entries with max_file_tensors 3", R_F_INDEX, options={"max_file_tensors": 3})
    y("y_file_kv__rich", [("w", w_tensor())], "a KV section of every value type beside a tensor",
      R_F_HDR + R_KV_TYPES, kv=KV_RICH)
    y("y_file_kv__at_option_limits", [("w", w_tensor())], "KV at max_kv_entries 2 and max_kv_bytes 56",
      R_F_PLACE, kv={"a": ("int64", 1), "b": ("int64", 2)}, options={"max_kv_entries": 2, "max_kv_bytes": 56})
    # metadata that ends exactly on a page, and one that spills over it
    pad_to = 4096 - 64 - 8 - 24 - 8  # header, index (count only), KV count, entry header, key pad, len
    y("y_file_meta__exactly_4096", [], "index + KV end exactly at 4096: data_offset 4096, no padding",
      R_F_PLACE, kv={"k": ("string", "s" * pad_to)})
    y("y_file_meta__4104", [], "index + KV end at 4104: data_offset 8192",
      R_F_PLACE, kv={"k": ("string", "s" * (pad_to + 8))})
    y("y_file_data__4096_aligned_big", [("big", T("uint8", [5000], buffers=[Buf(5000, 12)])),
                                        ("next", T("uint8", [1], buffers=[Buf(1, 12)]))],
      "a 5000-byte buffer at 0 and a 1-byte buffer declaring 4096 at 8192; data_length 8256", R_F_BUF)
    y("y_file_buffer_larger_than_required", [("x", T("float32", [2], buffers=[Buf(100, 6)]))],
      "a buffer larger than the layout requires (100 > 8): the declared size is stored", R_F_BUF)


def fser(r):
    return C.file_serialize(r)[0]


def two_uint8(sb=100, lb=6):
    return [("a", T("uint8", [40], buffers=[Buf(40, 6)])), ("b", T("uint8", [sb], buffers=[Buf(sb, lb)]))]


def with_entry(named, i=0, kv=None, **kw):
    """A raw file record whose entry i has fields changed."""
    r = C.file_raw(named, kv)
    r["entries"][i].update(kw)
    return r


def build_file_invalid(c):
    n = c.nfile
    W, wi = C.file_encode([("w", w_tensor())], {"a": ("int64", 1)})
    W0, w0i = C.file_encode([("w", w_tensor())])
    ex = R_F_EX
    n("n_file_worked_example__data_offset_8192", p64(W, 48, 8192), "OFFSET",
      "file-container.md worked example with data_offset 8192", ex + R_F_PLACE)
    n("n_file_worked_example__appended_byte", W + b"\x00", "LENGTH",
      "the worked example with one byte appended (no trailing bytes)", ex + R_F_PLACE)
    n("n_file_worked_example__byte_1018", setb(W, 0x1018, 1), "RESERVED_NONZERO",
      "the worked example with byte 0x1018 (data padding after the buffer) = 01", ex + R_F_BUF)
    for cut in (0, 63, 64, 0x58, 0xA8, 4095, 4096, 4159):
        n(f"n_file_truncated__{cut}", W[:cut], "TRUNCATED", f"the worked example cut to {cut} bytes",
          ex + R_F_DEC)
    # header
    n("n_file_magic__hrryfilf", setb(W, 7, 0x46), "BAD_MAGIC", "magic 'HRRYFILF'", R_F_HDR)
    n("n_file_magic__stream_frame", patch(W, 0, b"HRSF\x01\x00\x00\x00"), "BAD_MAGIC",
      "a stream frame header where the file magic belongs", R_F_HDR)
    n("n_file_magic__lowercase", patch(W, 0, b"hrryfile"), "BAD_MAGIC", "magic in lowercase", R_F_HDR)
    for v in (0, 2, 0xFFFF):
        n(f"n_file_version__major_{v}", patch(W, 8, v.to_bytes(2, "little")), "VERSION",
          f"version_major {v}", R_F_HDR)
    for pos in (12, 15):
        n(f"n_file_reserved__b{pos}", setb(W, pos, 1), "RESERVED_NONZERO", f"header reserved byte {pos} = 01",
          R_F_HDR)
    for v in (0, 72):
        n(f"n_file_index_offset__{v}", p64(W, 16, v), "OFFSET", f"index_offset {v} (must be 64)", R_F_PLACE)
    n("n_file_index_length__0", p64(W, 24, 0), "LENGTH", "index_length 0 (< 8)", R_F_PLACE)
    n("n_file_index_length__4", p64(W, 24, 4), "LENGTH", "index_length 4", R_F_PLACE)
    n("n_file_index_length__not_multiple_of_8", p64(W, 24, 106), "LENGTH", "index_length 106", R_F_PLACE)
    n("n_file_index_length__end_overflow", p64(W, 24, U64_MAX - 7), "OVERFLOW",
      "index_length 2^64-8: 64 + it passes 2^64-1", R_F_PLACE + R_F_DEC)
    n("n_file_index_length__plus_8", p64(W0, 24, 112), "LENGTH",
      "index_length 8 too long (no KV): 8 bytes remain after the last entry", R_F_INDEX + R_F_DEC)
    n("n_file_index_length__minus_8", p64(W0, 24, 96), "LENGTH",
      "index_length 8 too short: the entry's buffer offsets cross the index end", R_F_INDEX + R_F_DEC)
    n("n_file_index_length__plus_8_with_kv", p64(W, 24, 112), "OFFSET",
      "index_length 8 too long with a KV section: kv_offset no longer follows the index", R_F_PLACE)
    # KV placement
    n("n_file_kv_offset__without_section", p64(W0, 32, 168), "OFFSET", "kv_length 0 with kv_offset 168",
      R_F_PLACE)
    n("n_file_kv_offset__after_gap", p64(W, 32, 176), "OFFSET", "kv_offset 176, not the index end 168",
      R_F_PLACE)
    n("n_file_kv_offset__zero", p64(W, 32, 0), "OFFSET", "kv_offset 0 with kv_length 32", R_F_PLACE)
    n("n_file_kv_length__4", p64(W, 40, 4), "LENGTH", "kv_length 4 (< 8)", R_F_PLACE)
    n("n_file_kv_length__36", p64(W, 40, 36), "LENGTH", "kv_length 36 (not a multiple of 8)", R_F_PLACE)
    n("n_file_kv_length__over_option_limit", W, "LIMIT", "kv_length 32 with max_kv_bytes 24", R_F_PLACE,
      options={"max_kv_bytes": 24})
    n("n_file_kv_length__huge", p64(W, 40, 1 << 40), "LIMIT", "kv_length 2^40 > max_kv_bytes", R_F_PLACE)
    n("n_file_kv_length__plus_8", p64(W, 40, 40), "LENGTH",
      "kv_length 40 over a 32-byte section: bytes remain after its last entry", R_F_PLACE + R_KV_DEC)
    n("n_file_kv_length__minus_8", p64(W, 40, 24), "RESERVED_NONZERO",
      "kv_length 24: the section's last 8 bytes now count as padding before data_offset, and are not zero "
      "(step 4 runs before the KV section is read)", R_F_PLACE + R_F_DEC)
    big = p64(p64(p64(W, 24, U64_MAX - 71), 32, U64_MAX - 7), 40, 8)
    n("n_file_kv_length__end_overflow", big, "OVERFLOW",
      "index_length 2^64-72, kv_offset 2^64-8 (the index end), kv_length 8: the KV end passes 2^64-1",
      R_F_PLACE + R_F_DEC)
    n("n_file_data_offset__overflow", p64(W0, 24, U64_MAX - 71), "OVERFLOW",
      "index end 2^64-8 (no KV): rounding it up to 4096 passes 2^64-1", R_F_PLACE + R_F_DEC)
    for v in (0, 168, 4160):
        n(f"n_file_data_offset__{v}", p64(W, 48, v), "OFFSET", f"data_offset {v}, not 4096", R_F_PLACE)
    n("n_file_data_length__63", p64(W, 56, 63), "LENGTH", "data_length 63 (not a multiple of 64)", R_F_PLACE)
    n("n_file_data_length__overflow", p64(W, 56, U64_MAX - 63), "OVERFLOW",
      "data_length 2^64-64: data_offset + data_length passes 2^64-1", R_F_PLACE + R_F_DEC)
    n("n_file_data_length__plus_64", p64(W, 56, 128), "TRUNCATED",
      "data_length 128: the file ends 64 bytes before data_offset + data_length", R_F_PLACE + R_F_DEC)
    n("n_file_data_length__zero", p64(W, 56, 0), "LENGTH",
      "data_length 0: the file is 64 bytes longer than data_offset + data_length", R_F_PLACE + R_F_DEC)
    n("n_file_trailing__4096", W + bytes(4096), "LENGTH", "a page of zeros after the data region", R_F_PLACE)
    n("n_file_trailing__other_file", W + W, "LENGTH", "two files concatenated", R_F_PLACE)
    n("n_file_meta_padding__first", setb(W, 0xC8, 1), "RESERVED_NONZERO",
      "the first padding byte after the KV section = 01", R_F_PLACE)
    n("n_file_meta_padding__last", setb(W, 0xFFF, 0x80), "RESERVED_NONZERO",
      "the last padding byte before data_offset = 0x80", R_F_PLACE)
    # index: entry_count
    F2 = C.file_encode(two_uint8())[0]
    n("n_file_entry_count__huge", p64(W, 64, U64_MAX), "LIMIT", "entry_count 2^64-1 > max_file_tensors",
      R_F_INDEX + R_F_DEC)
    n("n_file_entry_count__over_option_limit", F2, "LIMIT", "2 entries with max_file_tensors 1", R_F_INDEX,
      options={"max_file_tensors": 1})
    n("n_file_entry_count__over_index", p64(W, 64, 2), "LENGTH",
      "entry_count 2 > (index_length - 8) / 56 = 1: refused before any entry", R_F_INDEX + R_F_DEC)
    n("n_file_entry_count__lies_high", p64(F2, 64, 3), "LENGTH",
      "entry_count 3 over two entries (fits the 56-byte bound): the third header crosses the index end",
      R_F_INDEX + R_F_DEC)
    n("n_file_entry_count__lies_low", p64(F2, 64, 1), "LENGTH", "entry_count 1 over two entries: bytes remain",
      R_F_INDEX + R_F_DEC)
    n("n_file_entry_count__zero", p64(W, 64, 0), "LENGTH", "entry_count 0 over one entry", R_F_INDEX)
    # entry header and name
    n("n_file_name_length__zero", p32(W, 0x48, 0), "CONSTRAINT", "name_length 0", R_F_INDEX + R_KV_NAMES)
    n("n_file_name_length__over_default", p32(W, 0x48, 1025), "LIMIT", "name_length 1025 > max_name_bytes",
      R_F_INDEX + R_F_DEC)
    n("n_file_name_length__huge", p32(W, 0x48, 0xFFFFFFFF), "LIMIT", "name_length 2^32-1", R_F_INDEX)
    n("n_file_name_length__over_option_limit", C.file_encode([("weights", w_tensor())])[0], "LIMIT",
      "a 7-byte name with max_name_bytes 6", R_F_INDEX, options={"max_name_bytes": 6})
    n("n_file_name_length__crosses_index", p32(W, 0x48, 1000), "LENGTH",
      "name_length 1000 (within the limit) crosses the index end", R_F_INDEX + R_F_DEC)
    n("n_file_name_length__lies_by_one", p32(W, 0x48, 2), "CONSTRAINT",
      "name_length 2 over 'w': the name 'w\\0' holds U+0000", R_F_INDEX + R_KV_NAMES)
    for k, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x03, "RESERVED_TAG"), (0x7F, "RESERVED_TAG")):
        n(f"n_file_kind__{k:02x}", setb(W, 0x4C, k), err, f"entry kind 0x{k:02X}", R_F_INDEX)
    n("n_file_kind__composite_for_tensor", setb(W, 0x4C, 2), "CONSTRAINT",
      "kind 0x02 (composite head) on a row_major tensor", R_F_RULES)
    for pos in (5, 7):
        n(f"n_file_entry_reserved__b{pos}", setb(W, 0x48 + pos, 1), "RESERVED_NONZERO",
          f"entry reserved byte {pos} = 01", R_F_INDEX)
    for name, nb in (("invalid_ff", b"w\xff"), ("overlong", b"\xc1\xbf"), ("surrogate", b"\xed\xbf\xbf"),
                     ("nul", b"w\x00"), ("truncated_sequence", b"\xe6\x97")):
        n(f"n_file_name__{name}", fser(with_entry([("w", w_tensor())], name=nb)), "CONSTRAINT",
          f"entry name {nb!r} is not a name", R_F_INDEX + R_KV_NAMES)
    n("n_file_name_padding__nonzero", setb(W, 0x51, 1), "RESERVED_NONZERO", "name padding byte = 01", R_F_INDEX)
    n("n_file_name__duplicate", C.file_encode([("a", T("int8", [2])), ("a", T("int8", [3]))])[0], "DUPLICATE",
      "two entries named 'a'", R_F_RULES)
    n("n_file_name__duplicate_nonadjacent",
      C.file_encode([("a", T("int8", [2])), ("b", T("int8", [2])), ("a", T("int8", [2]))])[0], "DUPLICATE",
      "entries a, b, a", R_F_RULES)
    # descriptors in the index
    n("n_file_desc__bad_magic", setb(W, 0x5B, 0x45), "BAD_MAGIC", "the entry's descriptor magic 'HRYE'",
      R_F_INDEX + ["HR-DESC-5"])
    n("n_file_desc__version", setb(W, 0x5C, 2), "VERSION", "the entry's descriptor version 2", R_F_INDEX)
    n("n_file_desc__reserved", setb(W, 0x58 + 23, 1), "RESERVED_NONZERO", "descriptor reserved byte 23 = 01",
      R_F_INDEX)
    n("n_file_desc__crosses_index", p32(W, 0x60, 4000), "LENGTH",
      "descriptor encoded_len 4000 crosses the index end: LENGTH, not TRUNCATED", R_F_INDEX + R_F_DEC)
    n("n_file_desc__encoded_len_plus_8", p32(W, 0x60, 80), "LENGTH",
      "descriptor encoded_len 80 over a 72-byte descriptor (its parts end at 72)", R_F_INDEX + ["HR-DESC-5"])
    n("n_file_desc__over_option_limit", W, "LIMIT", "a 72-byte descriptor with max_descriptor_bytes 64",
      R_F_INDEX, options={"max_descriptor_bytes": 64})
    n("n_file_desc__rank_over_option_limit", W, "LIMIT", "rank 2 with max_rank 1", R_F_INDEX,
      options={"max_rank": 1})
    n("n_file_desc__buffer_over_option_limit", W, "LIMIT", "a 24-byte buffer with max_buffer_bytes 16",
      R_F_INDEX, options={"max_buffer_bytes": 16})
    n("n_file_desc__buffer_count", C.file_encode([("x", C.Tensor(D("float32", [2, 3], buffers=[Buf(24), Buf(8)])))])[0],
      "BUFFER_COUNT", "a row_major tensor with two buffers (offsets for both present)", R_F_INDEX + R_F_BUF)
    n("n_file_desc__buffer_size", C.file_encode([("x", C.Tensor(D("float32", [2, 3], buffers=[Buf(20)])))])[0],
      "BUFFER_SIZE", "a [2, 3] float32 tensor with a 20-byte buffer", R_F_INDEX)
    n("n_file_desc__alignment", C.file_encode([("x", C.Tensor(D("float32", [2, 3], buffers=[Buf(24, 13)])))])[0],
      "ALIGNMENT", "a buffer declaring alignment 2^13 (above the page): the descriptor fails in the index",
      R_F_INDEX + ["HR-BUF-2"])
    # host bytes only
    for name, kw in (("device_cuda", {"device": DEV["cuda"]}), ("device_private", {"device": 0xF0}),
                     ("memory_class_host_pinned", {"memclass": MC["host_pinned"]}),
                     ("memory_class_unified", {"memclass": MC["unified"]}),
                     ("memory_class_private", {"memclass": 0xF4})):
        n(f"n_file_host__{name}", C.file_encode([("x", T("float32", [2, 3], **kw))])[0], "COMBINATION",
          f"an entry with {name.replace('_', ' ')} (a file holds cpu/standard host bytes)", R_F_RULES)
    for sync in ("event", "stream"):
        n(f"n_file_host__sync_{sync}", C.file_encode([("x", T("float32", [2, 3], buffers=[Buf(24, 6, SYNC[sync])]))])[0],
          "COMBINATION", f"a buffer with sync_mode {sync}", R_F_RULES)
    n("n_file_host__sync_second_buffer",
      C.file_encode([("x", T("float32", [4, 4], "coo", params={"nnz": 2},
                             buffers=[Buf(8, 6), Buf(32, 6, SYNC["event"])]))])[0],
      "COMBINATION", "a coo tensor whose second buffer has sync_mode event", R_F_RULES)
    # buffer placement
    fa = two_uint8()
    r = C.file_raw(fa)
    r["entries"][1]["offsets"] = [0]
    n("n_file_buffer__overlap_at_0", fser(r), "OVERLAP", "b's buffer at 0, over a's [0, 40)", R_F_BUF)
    r = C.file_raw(fa)
    r["entries"][1]["offsets"] = [32]
    n("n_file_buffer__overlap_at_32", fser(r), "OVERLAP", "b's buffer at 32 < a's end 40", R_F_BUF)
    r = C.file_raw(two_uint8(100, 8))
    r["entries"][1]["offsets"] = [64]
    n("n_file_buffer__misaligned", fser(r), "OFFSET", "b declares 256 but sits at 64", R_F_BUF)
    r = C.file_raw(fa)
    r["entries"][1]["offsets"] = [128]
    n("n_file_buffer__gap", fser(r), "OFFSET", "b at 128 (64-aligned, but its canonical offset is 64)", R_F_BUF)
    r = C.file_raw(fa)
    r["entries"][0]["offsets"] = [64]
    n("n_file_buffer__first_not_at_0", fser(r), "OFFSET", "the first buffer at 64 instead of 0", R_F_BUF)
    r = C.file_raw(fa)
    r["entries"][1]["offsets"] = [U64_MAX - 63]
    r["entries"][1]["data"] = [b""]
    n("n_file_buffer__offset_huge", fser(r), "OFFSET", "b's offset 2^64-64 (not its canonical offset)", R_F_BUF)
    Fb, fbi = C.file_encode(fa)
    short = p64(Fb, 56, 128)[:4096 + 128]
    n("n_file_buffer__past_data_end", short, "OFFSET",
      "data_length 128 (file cut to match): b's buffer [64, 164) passes it", R_F_BUF + R_F_DEC)
    hb = [("a", T("uint8", [40], buffers=[Buf(40, 6)])),
          ("b", C.Tensor(D("uint8", [100], buffers=[Buf(U64_MAX, 6)]), data=[C.pattern(100, 1)]))]
    n("n_file_buffer__size_overflow", C.file_encode(hb)[0], "OVERFLOW",
      "b's size 2^64-1 at offset 64 (max_buffer_bytes 2^64-1): offset + size passes 2^64-1", R_F_BUF,
      options={"max_buffer_bytes": U64_MAX})
    n("n_file_buffer__gap_nonzero", setb(Fb, 4096 + 50, 1), "RESERVED_NONZERO",
      "a non-zero byte in the gap [40, 64) between two buffers", R_F_BUF)
    n("n_file_buffer__tail_nonzero", setb(Fb, len(Fb) - 1, 1), "RESERVED_NONZERO",
      "the last byte of the data region (padding after the last buffer) = 01", R_F_BUF)
    n("n_file_buffer__data_length_plus_64", p64(Fb, 56, 256) + bytes(64), "LENGTH",
      "data_length one 64-byte block longer than the last buffer's end rounded up (file to match)",
      R_F_BUF + R_F_DEC)
    r = C.file_raw([("a", T("uint8", [10])), ("z", T("float32", [0, 4])), ("b", T("uint8", [10]))])
    r["entries"][1]["offsets"] = [10]
    r["entries"][2]["offsets"] = [64]
    n("n_file_buffer__empty_not_rounded", fser(r), "OFFSET",
      "an empty buffer at 10 (the end of the previous one) instead of 64", R_F_BUF)
    r = C.file_raw([("m", T("float32", [4, 6], "csr", params={"nnz": 5}))])
    o = C.file_serialize(r)[1]["offsets"][0]
    r["entries"][0]["offsets"] = list(reversed(o))
    n("n_file_buffer__reversed_order", fser(r), "OFFSET",
      "a csr tensor's three buffers stored in reverse table order", R_F_BUF)
    # gap bytes are checked when the file is opened, for every entry, and a reader that
    # batches those checks still reports them in decoding order (HR-FILE-9): after the faults
    # of the entry's own fields, before any fault of a later entry, of names or of the KV
    three = two_uint8() + [("c", T("uint8", [8], buffers=[Buf(8, 6)]))]
    F3, f3i = C.file_encode(three, {"k": ("int64", 1)})
    gap = 4096 + 50  # in [40, 64): the gap before b's buffer
    G3 = setb(F3, gap, 1)
    kind_b, kind_c = f3i["entry_start"][1] + 4, f3i["entry_start"][2] + 4
    n("n_file_gap_nonzero__before_later_kind", setb(G3, kind_c, 3), "RESERVED_NONZERO",
      "a non-zero byte in the gap before b's buffer, and c's kind 0x03: the gap comes first",
      R_F_BUF + R_F_DEC + R_F_READ)
    n("n_file_gap_nonzero__after_own_kind", setb(G3, kind_b, 3), "RESERVED_TAG",
      "b's kind 0x03, and a non-zero byte in the gap before b's buffer: b's kind comes first",
      R_F_BUF + R_F_DEC + R_F_READ)
    name_c = f3i["name_start"][2]
    n("n_file_gap_nonzero__before_duplicate", patch(G3, name_c, b"a"), "RESERVED_NONZERO",
      "c renamed a (a duplicate, step 7) and a non-zero gap byte (step 5): the gap comes first",
      R_F_BUF + R_F_DEC + R_F_READ)
    kv_tag = struct.unpack_from("<Q", F3, 32)[0] + 12
    n("n_file_gap_nonzero__before_kv_fault", setb(G3, kv_tag, 0), "RESERVED_NONZERO",
      "a KV value tag 0x00 (step 8) and a non-zero gap byte (step 5): the gap comes first",
      R_F_BUF + R_F_DEC + R_F_READ)
    n("n_file_tail_nonzero__before_kv_fault", setb(setb(F3, len(F3) - 1, 1), kv_tag, 0),
      "RESERVED_NONZERO",
      "a KV value tag 0x00 (step 8) and a non-zero byte after the last buffer (step 6)",
      R_F_BUF + R_F_DEC + R_F_READ)
    # the KV section inside a file: its short status is LENGTH
    def fkv(kvb):
        return fser(C.file_raw([("w", w_tensor())], kv_bytes=kvb))
    n("n_file_kv__empty_section", fkv(u64(0)), "CONSTRAINT",
      "a present KV section with entry_count 0 (an empty map is written as no section)", R_F_PLACE + R_F_DEC)
    kv1 = C.kv_encode({"a": ("int64", 1)})
    n("n_file_kv__count_lies", fkv(p64(kv1, 0, 2)), "LENGTH",
      "KV entry_count 2 over one entry: the short status inside a file is LENGTH", R_KV_DEC + R_F_DEC)
    kvs = C.kv_encode({"s": ("string", "hello")})
    n("n_file_kv__string_length_lies", fkv(p64(kvs, 24, 64)), "LENGTH", "a KV string length crossing the section",
      R_KV_DEC + R_F_DEC)
    n("n_file_kv__duplicate_key",
      fkv(C.kv_serialize(C.kv_raw([("a", ("int64", 1)), ("a", ("int64", 1))], sort=False))),
      "DUPLICATE", "KV key 'a' twice", R_KV_ORDER + R_F_DEC)
    n("n_file_kv__unsorted", fkv(C.kv_serialize(C.kv_raw([("b", ("int64", 1)), ("a", ("int64", 1))], sort=False))),
      "SECTION_ORDER", "KV keys b, a", R_KV_ORDER + R_F_DEC)
    kvb = C.kv_encode({"b": ("bool", False)})
    n("n_file_kv__bool_2", fkv(setb(kvb, 24, 2)), "RANGE", "a KV bool of 2", R_KV_PAY + R_F_DEC)
    n("n_file_kv__tag_unsupported", fkv(setb(kv1, 12, 0x10)), "UNSUPPORTED", "KV value tag 0x10", R_KV_TYPES)
    n("n_file_kv__tag_invalid", fkv(setb(kv1, 12, 0x00)), "INVALID_TAG", "KV value tag 0x00", R_KV_TYPES)
    n("n_file_kv__key_not_utf8", fkv(C.kv_serialize(C.kv_raw([(b"\xfe", ("int64", 1))]))), "CONSTRAINT",
      "KV key 0xFE", R_KV_NAMES)
    n("n_file_kv__reserved", fkv(setb(kv1, 14, 1)), "RESERVED_NONZERO", "KV entry reserved byte = 01", R_KV_LAYOUT)
    n("n_file_kv__entries_over_option_limit", W, "LIMIT", "one KV entry with max_kv_entries 0", R_KV_DEC,
      options={"max_kv_entries": 0})
    n("n_file_kv__depth_over_option_limit",
      C.file_encode([("w", w_tensor())], {"l": _nest(3)})[0], "LIMIT",
      "a KV list 3 deep with max_composite_depth 2", R_KV_TYPES, options={"max_composite_depth": 2})
    n("n_file_kv__key_over_name_limit", C.file_encode([("w", w_tensor())], {"abc": ("int64", 1)})[0], "LIMIT",
      "a 3-byte KV key with max_name_bytes 2 (tensor name 'w' fits)", R_KV_NAMES, options={"max_name_bytes": 2})


# ================================================================== streams ===
STREAM_COMP_HEX = (  # stream.md § Worked example, bytes 0x000-0x0D7 and 0x140-0x167
    "48525346020000004852594401000000" "40000000000000000c01013002000000"
    "00000000000000000200000000000000" "03000000000000000800000000000000"
    "01000000020000004852534601000000" "48525944010000007800000000000000"
    "0c010101020101000000000000000000" "01000000000000000300000000000000"
    "0c000000000000000601000000000000" "00000000000000000300000028000000"
    "00000000010000000200000000000000" "03000000000000000000000000000000"
    "00000000000000000000803f00000040" "0000404000000000")
STREAM_COMP_TAIL_HEX = (
    "03000000000000000100000000000000" "0000000000000000000080400000a040" "0000c04000000000")


def stream_devices():
    return [("cuda", T("float32", [2, 3], device=DEV["cuda"])),
            ("rocm_peer", T("float16", [4], device=DEV["rocm"], memclass=MC["peer"])),
            ("metal_unified", T("int8", [7], device=DEV["metal"], memclass=MC["unified"])),
            ("private", T("uint8", [3], device=0xF2, memclass=0xF1))]


def build_stream_valid(c):
    y = c.ystream
    data = y("y_stream_worked_example", [w_tensor()],
             "stream.md worked example: the descriptor worked example in one 104-byte frame", R_S_EX + R_S_FRAME)
    if (len(data) != 104 or data[:8] != b"HRSF\x01\x00\x00\x00" or data[8:80] != encode(w_tensor().desc)
            or data[80:] != struct.pack("<6f", 1, 2, 3, 4, 5, 6)):
        raise AssertionError("stream.md worked example (tensor) does not reproduce")
    y("y_stream_empty", [], "an empty stream: no frames, the clean end at once", R_S_ENDS)
    y("y_stream_two_tensors", [w_tensor(), T("int8", [5], seed=3)], "two tensor frames", R_S_ITEMS)
    y("y_stream_padding__every_length", [T("uint8", [k], seed=k) for k in range(1, 17)],
      "16 tensors with buffers of 1..16 bytes: every padding length 0..7", R_S_FRAME)
    for name, t in file_layouts():
        y(f"y_stream_layout__{name}", [t], f"a {name} tensor frame: {len(t.data)} buffers in table order, each padded",
          R_S_FRAME)
    for name, t in file_quants():
        y(f"y_stream_quant__{name}", [t], f"a {name} quantized tensor frame", R_S_FRAME + ["HR-QUANT-3"])
    y("y_stream_sync__event", [T("float32", [2, 3], buffers=[Buf(24, 6, SYNC["event"])])],
      "a buffer with sync_mode event, relayed (no cross_machine)", R_S_CM)
    y("y_stream_sync__stream", [T("float32", [2, 3], buffers=[Buf(24, 6, SYNC["stream"])])],
      "a buffer with sync_mode stream, relayed (no cross_machine)", R_S_CM)
    y("y_stream_sync__mixed", [T("float32", [4, 4], "coo", params={"nnz": 2},
                                 buffers=[Buf(8, 6, SYNC["stream"]), Buf(32, 6, SYNC["event"])])],
      "a coo tensor whose buffers have sync modes stream and event", R_S_CM)
    y("y_stream_cross_machine", [w_tensor(), T("int8", [4, 8], quant=q_tensor())],
      "cross_machine set; every buffer producer_synced", R_S_CM, options={"cross_machine": True})
    y("y_stream_cross_machine__no_buffers", [T("float32", [0, 3])],
      "cross_machine set; a tensor with an empty producer_synced buffer", R_S_CM, options={"cross_machine": True})
    for name, t in stream_devices():
        y(f"y_stream_device__{name}", [t], f"a {name.replace('_', ' ')} tensor: a stream relays any device",
          R_S_FRAME)
    y("y_stream_empty_buffer", [T("float32", [0, 4]), T("uint8", [1])],
      "a tensor with an empty buffer (no data, no padding), then a 1-byte one", R_S_FRAME)
    y("y_stream_rank0", [T("float64", [])], "a rank-0 scalar frame", R_S_FRAME)
    y("y_stream_dynamic", [T("float32", [None, 4], buffers=[Buf(40, 6)])],
      "a tensor with a dynamic extent; its 40-byte buffer travels as declared", R_S_FRAME)
    y("y_stream_unknown_layout", [T("float32", [4], 0x60, params={"params": b"abc"}, buffers=[Buf(10, 3)])],
      "a reserved (unknown) layout tag 0x60: kind 0x01, parameters and buffer carried", R_S_KIND)
    y("y_stream_private_layout", [T("float32", [4], 0xF3, params=private(7, b"x"), buffers=[Buf(5, 0), Buf(16, 4)])],
      "a private layout with two buffers: kind 0x01", R_S_KIND)
    y("y_stream_desc_minor", [T("int8", [4], version=(1, 7))], "a descriptor of version 1.7", R_S_FRAME + ["HR-DESC-4"])
    y("y_stream_align_4096", [T("uint8", [10], buffers=[Buf(10, 12)])],
      "a buffer declaring 4096: the frame pads only to 8 (the reader aligns its allocation)", R_S_FRAME)
    y("y_stream_descriptor_at_option_limit", [w_tensor()], "a 72-byte descriptor with max_descriptor_bytes 72",
      R_S_LIM, options={"max_descriptor_bytes": 72})
    y("y_stream_buffer_at_option_limit", [w_tensor()], "a 24-byte buffer with max_buffer_bytes 24", R_S_LIM,
      options={"max_buffer_bytes": 24})
    y("y_stream_sections", [T("float32", [8, 8], stats=stats(-1.0, 2.0, nan=0), shard=shard(1, 4, [16, 16], [8, 0]),
                              unknown=[(0x42, 0, b"carried")])],
      "a descriptor with statistics, shard and an unknown section", R_S_FRAME)
    y("y_stream_extension_dtype", [T(0xF5, [4, 4], buffers=[Buf(33, 4)])], "a private extension element type",
      R_S_FRAME)
    y("y_stream_large_buffer", [T("uint8", [5000])], "a 5000-byte buffer", R_S_FRAME)
    # ---- the end frame (stream.md HR-STREAM-12, HR-STREAM-13)
    data = y("y_stream_end__worked_example", [w_tensor()],
             "the worked example finished: its 104-byte frame, then the end frame (112 bytes)",
             R_S_END + R_S_EX, end=True)
    if len(data) != 112 or data[104:] != bytes.fromhex("4852534603000000"):
        raise AssertionError("stream.md worked example (finished) does not reproduce")
    y("y_stream_end__only", [], "a finished empty stream: the end frame alone", R_S_END + R_S_STATES, end=True)
    y("y_stream_end__two_items", [w_tensor(), T("int8", [5], seed=3)], "two tensor frames, then the end frame",
      R_S_END + R_S_ITEMS, end=True)
    y("y_stream_end__trailing_garbage", [w_tensor()], "eight bytes of garbage after the end frame: not read",
      R_S_END, end=True, trailing=b"garbage!")
    y("y_stream_end__trailing_partial_frame", [w_tensor()],
      "three bytes after the end frame (TRUNCATED were they read): not read", R_S_END, end=True, trailing=b"HRS")
    S, _ = C.stream_encode([w_tensor()])
    y("y_stream_end__trailing_frame", [w_tensor()], "a whole tensor frame after the end frame: one item, not two",
      R_S_END, end=True, trailing=S)
    y("y_stream_end__trailing_bad_end_frame", [w_tensor()],
      "a second end frame with a non-zero reserved byte after the end frame: not read", R_S_END, end=True,
      trailing=bytes.fromhex("4852534603010000"))
    y("y_stream_end__kind_03_before_a_descriptor", [],
      "the worked example with its kind set to 0x03: an end frame, and a descriptor after it that is not read "
      "(revision 1 refused this kind as reserved)", R_S_END + R_S_REV, end=True, trailing=S[8:])
    y("y_stream_end__required_present", [w_tensor()], "require_end_frame set and the end frame present",
      R_S_STATES, options={"require_end_frame": True}, end=True)


def build_stream_invalid(c):
    n = c.nstream
    S, _ = C.stream_encode([w_tensor()])
    S12, _ = C.stream_encode([T("float32", [3])])  # 8 + 64 + 12 + 4 = 88
    S2, s2i = C.stream_encode([w_tensor(), T("int8", [5], seed=3)])
    for cut, what in ((1, "frame header"), (4, "frame header"), (7, "frame header"), (8, "before the descriptor"),
                      (15, "descriptor's first 16 bytes"), (20, "descriptor"), (79, "descriptor"),
                      (80, "before the buffer"), (90, "buffer"), (103, "buffer's last byte")):
        n(f"n_stream_truncated__{cut}", S[:cut], "TRUNCATED", 0,
          f"the worked example cut to {cut} bytes (inside the {what})", R_S_ENDS + R_S_DEC)
    n("n_stream_truncated__padding_first", S12[:84], "TRUNCATED", 0, "cut after the 12-byte buffer, before its padding",
      R_S_ENDS + R_S_DEC)
    n("n_stream_truncated__padding_last", S12[:87], "TRUNCATED", 0, "cut one byte before the padding ends",
      R_S_ENDS + R_S_DEC)
    st = s2i["frame_start"][1]
    for off, what in ((3, "header"), (8, "descriptor_start"), (30, "descriptor"), (64 + 8 + 2, "buffer"),
                      (64 + 8 + 5 + 1, "padding")):
        n(f"n_stream_truncated__second_item_{what}", S2[:st + off], "TRUNCATED", 1,
          f"two tensors, cut inside the second one's {what.replace('_', ' ')}: one item, then TRUNCATED", R_S_ENDS + R_S_DEC)
    n("n_stream_magic__hrsg", setb(S, 3, 0x47), "BAD_MAGIC", 0, "frame magic 'HRSG'", R_S_FRAME)
    n("n_stream_magic__bare_descriptor", encode(w_tensor().desc) + struct.pack("<6f", 1, 2, 3, 4, 5, 6), "BAD_MAGIC",
      0, "a descriptor and its data with no frame header", R_S_FRAME)
    n("n_stream_magic__second_frame", setb(S2, st, 0x68), "BAD_MAGIC", 1, "the second frame's magic 'hRSF'",
      R_S_FRAME + R_S_DEC)
    for k, err in ((0x00, "INVALID_TAG"), (0xFF, "INVALID_TAG"), (0x05, "RESERVED_TAG"), (0x80, "RESERVED_TAG"),
                   (0xF0, "RESERVED_TAG")):  # 0x03: the end frame (HR-STREAM-12); 0x04: annotation (-17)
        n(f"n_stream_kind__{k:02x}", setb(S, 4, k), err, 0, f"frame kind 0x{k:02X}", R_S_FRAME)
    n("n_stream_kind__second_frame_00", setb(S2, st + 4, 0), "INVALID_TAG", 1, "the second frame's kind 0x00",
      R_S_FRAME)
    for pos in (5, 6, 7):
        n(f"n_stream_reserved__b{pos}", setb(S, pos, 1), "RESERVED_NONZERO", 0, f"frame reserved byte {pos} = 01",
          R_S_FRAME)
    n("n_stream_kind__composite_for_tensor", setb(S, 4, 2), "CONSTRAINT", 0, "kind 0x02 on a row_major tensor",
      R_S_KIND)
    P, _ = C.stream_encode([w_partition()])
    n("n_stream_kind__tensor_for_composite", setb(P, 4, 1), "CONSTRAINT", 0,
      "kind 0x01 on the worked example's composite head", R_S_KIND + R_S_ITEMS)
    Pl, _ = C.stream_encode([T("float32", [4], 0xF3, params=private(7, b"x"), buffers=[Buf(5, 0)])])
    n("n_stream_kind__composite_for_private_layout", setb(Pl, 4, 2), "CONSTRAINT", 0,
      "kind 0x02 on a private layout", R_S_KIND)
    Ul, _ = C.stream_encode([T("float32", [4], 0x60, params={"params": b"abc"}, buffers=[Buf(10, 3)])])
    n("n_stream_kind__composite_for_unknown_layout", setb(Ul, 4, 2), "CONSTRAINT", 0,
      "kind 0x02 on an unknown layout 0x60", R_S_KIND)
    n("n_stream_padding__first_byte", setb(S12, 84, 1), "RESERVED_NONZERO", 0, "buffer padding byte 0 = 01",
      R_S_FRAME + R_S_DEC)
    n("n_stream_padding__last_byte", setb(S12, 87, 0x80), "RESERVED_NONZERO", 0, "buffer padding byte 3 = 0x80",
      R_S_FRAME + R_S_DEC)
    n("n_stream_padding__second_item", setb(S2, len(S2) - 1, 1), "RESERVED_NONZERO", 1,
      "the second tensor's padding", R_S_FRAME)
    n("n_stream_desc__bad_magic", setb(S, 11, 0x45), "BAD_MAGIC", 0, "descriptor magic 'HRYE' inside a frame",
      R_S_DEC + ["HR-DESC-5"])
    n("n_stream_desc__version", setb(S, 12, 2), "VERSION", 0, "descriptor version 2", R_S_DEC)
    n("n_stream_desc__reserved", setb(S, 8 + 23, 1), "RESERVED_NONZERO", 0, "descriptor reserved byte 23",
      R_S_DEC)
    n("n_stream_desc__encoded_len_plus_8", p32(S, 16, 80), "LENGTH", 0,
      "encoded_len 80 over a 72-byte descriptor: the buffer's first bytes would count as descriptor",
      R_S_DEC + ["HR-DESC-5"])
    n("n_stream_desc__encoded_len_huge", p32(S, 16, 0xFFFFFFF8), "LIMIT", 0,
      "encoded_len 2^32-8 > max_descriptor_bytes: refused before the rest is read", R_S_LIM + R_S_DEC)
    n("n_stream_desc__encoded_len_past_end", p32(S, 16, 4096), "TRUNCATED", 0,
      "encoded_len 4096 (within the limit) passes the end of the stream", R_S_DEC)
    n("n_stream_desc__over_option_limit", S, "LIMIT", 0, "a 72-byte descriptor with max_descriptor_bytes 64",
      R_S_LIM, options={"max_descriptor_bytes": 64})
    n("n_stream_desc__rank_over_option_limit", S, "LIMIT", 0, "rank 2 with max_rank 1", R_S_LIM,
      options={"max_rank": 1})
    n("n_stream_desc__buffer_count", C.stream_encode([C.Tensor(D("float32", [2, 3], buffers=[Buf(24), Buf(8)]))])[0],
      "BUFFER_COUNT", 0, "a row_major tensor with two buffers", R_S_DEC)
    n("n_stream_desc__buffer_size", C.stream_encode([C.Tensor(D("float32", [2, 3], buffers=[Buf(20)]))])[0],
      "BUFFER_SIZE", 0, "a [2, 3] float32 tensor with a 20-byte buffer", R_S_DEC)
    n("n_stream_buffer__over_option_limit", S, "LIMIT", 0, "a 24-byte buffer with max_buffer_bytes 16", R_S_LIM,
      options={"max_buffer_bytes": 16})
    # Every status of the descriptor decoder can end a stream (stream.md § Decoding order: a
    # frame's descriptor is decoded and validated whole): the ones no frame above produces,
    # each in the second frame, after one whole item.
    def second(desc, data):
        frames = C.stream_frames([w_tensor()])
        frames.append({"magic": C.FRAME_MAGIC, "kind": 0x01, "res": bytes(3), "desc": desc,
                       "data": data, "pads": None, "top": 1})
        return C.stream_serialize(frames)[0]

    sect = to_raw(D("float32", [4, 4], stats=stats(1.0, 2.0), shard=shard(0, 1, [4, 4], [0, 0]),
                    buffers=[Buf(64)]))
    sect["sections"].reverse()
    for name, desc, data, err, what in (
            ("overflow", encode(D("float32", [1 << 62, 4], buffers=[Buf(64)])), [bytes(64)], "OVERFLOW",
             "shape [2^62, 4] float32: the element count overflows"),
            ("range", encode(D("uint8", [1 << 63], buffers=[Buf(64)])), [bytes(64)], "RANGE",
             "extent 2^63"),
            ("alignment", encode(D("float32", [2, 3], buffers=[Buf(24, 13)])), [bytes(24)], "ALIGNMENT",
             "a buffer declaring alignment 2^13"),
            ("section_order", serialize(sect), [bytes(64)], "SECTION_ORDER",
             "shard (0x03) before statistics (0x02)"),
            ("must_understand", encode(D("float32", [2, 3], buffers=[Buf(24)], unknown=[(0x42, 1, b"new")])),
             [bytes(24)], "UNSUPPORTED", "an unknown section 0x42 with must_understand 1")):
        n(f"n_stream_desc__second_{name}", second(desc, data), err, 1,
          f"one whole item, then a frame whose descriptor fails: {what}", R_S_DEC + ["HR-DESC-5"])
    huge = C.Tensor(D("uint8", [100], buffers=[Buf(1 << 40, 6)]), data=[C.pattern(100, 0)])
    Sh, _ = C.stream_encode([huge])
    n("n_stream_buffer__over_default_limit", Sh, "LIMIT", 0,
      "a buffer declaring 2^40 bytes > max_buffer_bytes 2^34, refused before allocating", R_S_LIM)
    # Within the limit a reader commits memory only as bytes arrive (stream.md HR-STREAM-16):
    # a claim costs nothing until its data comes, so the outcome is the truncation.
    mid = C.Tensor(D("uint8", [100], buffers=[Buf(1 << 24, 6)]), data=[C.pattern(100, 0)])
    Sm, _ = C.stream_encode([mid])
    n("n_stream_buffer__allowed_but_missing", Sm, "TRUNCATED", 0,
      "a 2^24-byte buffer under max_buffer_bytes 2^24: the stream ends 100 bytes into it", R_S_LIM + R_S_ENDS,
      options={"max_buffer_bytes": 1 << 24})
    cm = {"cross_machine": True}
    n("n_stream_cross_machine__event", C.stream_encode([T("float32", [2, 3], buffers=[Buf(24, 6, SYNC["event"])])])[0],
      "COMBINATION", 0, "cross_machine with a buffer of sync_mode event", R_S_CM, options=cm)
    n("n_stream_cross_machine__stream", C.stream_encode([T("float32", [2, 3], buffers=[Buf(24, 6, SYNC["stream"])])])[0],
      "COMBINATION", 0, "cross_machine with a buffer of sync_mode stream", R_S_CM, options=cm)
    n("n_stream_cross_machine__second_buffer",
      C.stream_encode([T("float32", [4, 4], "coo", params={"nnz": 2}, buffers=[Buf(8, 6), Buf(32, 6, SYNC["event"])])])[0],
      "COMBINATION", 0, "cross_machine; a coo tensor's second buffer has sync_mode event", R_S_CM, options=cm)
    ev = C.stream_encode([w_tensor(), T("float32", [2, 3], buffers=[Buf(24, 6, SYNC["event"])])])[0]
    n("n_stream_cross_machine__after_item", ev, "COMBINATION", 1,
      "cross_machine; the second tensor has an event buffer: one item, then COMBINATION", R_S_CM, options=cm)
    n("n_stream_cross_machine__before_buffers", ev[:s2i["frame_start"][1] + 80], "COMBINATION", 1,
      "as after_item but cut before the buffer: the sync mode is refused after the descriptor", R_S_CM + R_S_DEC,
      options=cm)
    claim = C.Tensor(D("uint8", [24], buffers=[Buf(1 << 34, 6)]), data=[C.pattern(24, 0)])
    Sc, _ = C.stream_encode([claim])
    if len(Sc) != 96:
        raise AssertionError("the 16 GiB claim is not 96 bytes")
    n("n_stream_buffer__claim_at_default_limit", Sc, "TRUNCATED", 0,
      "96 bytes declaring a 2^34-byte (16 GiB) buffer, at the default max_buffer_bytes: no memory is committed "
      "before the bytes arrive, so the stream ends TRUNCATED 24 bytes into it", R_S_MEM + R_S_LIM + R_S_ENDS)
    n("n_stream_trailing__3_bytes", S + b"HRS", "TRUNCATED", 1, "three bytes after a whole item", R_S_ENDS + R_S_DEC)
    n("n_stream_trailing__8_zero_bytes", S + bytes(8), "BAD_MAGIC", 1, "eight zero bytes after a whole item",
      R_S_DEC)
    n("n_stream_trailing__frame_header_only", S + b"HRSF\x01\x00\x00\x00", "TRUNCATED", 1,
      "a frame header with no descriptor after a whole item", R_S_ENDS + R_S_DEC)
    # ---- the end frame (stream.md HR-STREAM-12, HR-STREAM-13)
    E, _ = C.stream_encode([w_tensor()], end=True)
    for pos in (5, 6, 7):
        n(f"n_stream_end__reserved_b{pos}", setb(E, 104 + pos, 1), "RESERVED_NONZERO", 1,
          f"the end frame's reserved byte {pos} = 01", R_S_END + R_S_DEC)
    for k in (1, 4, 7):
        n(f"n_stream_end__cut_{k}", E[:104 + k], "TRUNCATED", 1, f"the first {k} bytes of the end frame",
          R_S_END + R_S_ENDS)
    P, _ = C.stream_encode([w_partition()])
    end = C.END_FRAME
    n("n_stream_end__inside_composite_member_0", P[:72] + end + P[72:], "CONSTRAINT", 0,
      "an end frame after a composite head, where member 0 is due", R_S_END + R_S_DEC + R_S_ITEMS)
    n("n_stream_end__inside_composite_member_1", P[:216] + end + P[216:], "CONSTRAINT", 0,
      "an end frame between the two members of a composite", R_S_END + R_S_DEC + R_S_ITEMS)
    n("n_stream_end__inside_composite_at_end", P[:72] + end, "CONSTRAINT", 0,
      "a composite head and then the end frame, nothing after it", R_S_END + R_S_DEC)
    req = {"require_end_frame": True}
    n("n_stream_end__required_missing", S, "TRUNCATED", 1,
      "require_end_frame; one whole item and the end of input without an end frame (a sender that died)",
      R_S_STATES + R_S_ENDS, options=req)
    n("n_stream_end__required_empty", b"", "TRUNCATED", 0, "require_end_frame; no byte at all", R_S_STATES,
      options=req)
    n("n_stream_end__required_cut_end_frame", E[:108], "TRUNCATED", 1,
      "require_end_frame; the end frame cut after 4 bytes", R_S_STATES + R_S_END, options=req)


# ---- annotations (stream.md HR-STREAM-17, HR-STREAM-18; revision 3) ----------------------------
ANN_MD = {"unit": ("string", "m")}
EVERY_KV = {"b": ("bool", True), "i": ("int64", -5), "u": ("uint64", U64_MAX), "f": ("float64", F64_NAN),
            "s": ("string", "h\u00e9"), "y": ("bytes", b"\x00\x01\x02"),
            "l": ("list", [("int64", 1), ("string", "x"), ("list", [])])}


def build_stream_annot_valid(c):
    y = c.ystream
    data = y("y_stream_annot__worked_example", [C.Ann(w_tensor(), "w", ANN_MD)],
             "stream.md § Annotation frame worked example: 'w', {'unit': 'm'}: a 72-byte annotation frame, "
             "then the 104-byte tensor frame", R_S_ANN + R_S_ANNI)
    want = bytes.fromhex("4852534604000000" "0100000000000000" "2800000000000000" "7700000000000000"
                         "0100000000000000" "0400000005000000" "756e697400000000" "0100000000000000"
                         "6d00000000000000")
    if len(data) != 176 or data[:72] != want or data[72:] != C.stream_encode([w_tensor()])[0]:
        raise AssertionError("stream.md annotation worked example does not reproduce")
    y("y_stream_annot__name_only", [C.Ann(w_tensor(), "layer.0.weight")], "a name and no metadata (kv_length 0)",
      R_S_ANN)
    y("y_stream_annot__metadata_only", [C.Ann(w_tensor(), None, ANN_MD)], "metadata and no name (name_length 0)",
      R_S_ANN)
    for k in (7, 8, 9):
        y(f"y_stream_annot__name_{k}_bytes", [C.Ann(T("int8", [3], seed=k), "n" * k)],
          f"a {k}-byte name: {8 - k % 8 if k % 8 else 0} bytes of padding", R_S_ANN)
    y("y_stream_annot__utf8_name", [C.Ann(w_tensor(), "\u00e9t\u00e9/\u4e2d\u6587/\U0001F600")],
      "a name of 2-, 3- and 4-byte UTF-8 sequences", R_S_ANN)
    y("y_stream_annot__every_kv_type", [C.Ann(w_tensor(), "t", EVERY_KV)],
      "metadata with a value of every KV type (a NaN float64 kept by bits)", R_S_ANN + ["HR-KV-2"])
    y("y_stream_annot__composite", [C.Ann(w_partition(), "grid", {"rows": ("int64", 2)})],
      "an annotated composite: the annotation, then the head and its members, one item", R_S_ANNI + R_S_ITEMS)
    y("y_stream_annot__mixed", [C.Ann(w_tensor(), "a"), T("int8", [5], seed=3), C.Ann(w_partition(), None, ANN_MD),
                                w_tensor()],
      "annotated and plain items alternating; each annotated item starts at its annotation frame",
      R_S_ANNI, end=True)
    y("y_stream_annot__same_name_twice", [C.Ann(w_tensor(), "x"), C.Ann(T("int8", [5], seed=3), "x")],
      "two items named alike: names need not be unique", R_S_ANNI, end=True)
    y("y_stream_annot__name_at_option_limit", [C.Ann(w_tensor(), "abcdefgh")],
      "an 8-byte name with max_name_bytes 8", R_S_ANN + R_S_LIM, options={"max_name_bytes": 8})
    kv = C.kv_encode(ANN_MD)
    y("y_stream_annot__kv_at_option_limit", [C.Ann(w_tensor(), "w", ANN_MD)],
      f"a {len(kv)}-byte section with max_kv_bytes {len(kv)}", R_S_ANN + R_S_LIM,
      options={"max_kv_bytes": len(kv)})
    y("y_stream_annot__cross_machine", [C.Ann(w_tensor(), "w")], "an annotated item with cross_machine set",
      R_S_ANN + R_S_CM, options={"cross_machine": True})


def build_stream_annot_invalid(c):
    n = c.nstream
    S, _ = C.stream_encode([w_tensor()])
    A, _ = C.stream_encode([C.Ann(w_tensor(), "w", ANN_MD)])  # 72 + 104
    AN = A[:72]
    kvlen = len(C.kv_encode(ANN_MD))

    def ann(body, item=S):
        return C.FRAME_MAGIC + bytes([0x04, 0, 0, 0]) + body + item

    for cut, what in ((5, "frame header"), (8, "head"), (23, "head"), (24, "name"), (31, "name padding"),
                      (32, "section"), (71, "section")):
        n(f"n_stream_annot__cut_{cut}", A[:cut], "TRUNCATED", 0, f"the worked example cut to {cut} bytes "
          f"(inside the annotation's {what})", R_S_ANN + R_S_ENDS)
    n("n_stream_annot__cut_before_item", AN, "TRUNCATED", 0,
      "an annotation frame and then the end of input: the item it annotates is missing", R_S_ANNI + R_S_ENDS)
    n("n_stream_annot__cut_item_header", A[:76], "TRUNCATED", 0, "cut 4 bytes into the annotated item's frame",
      R_S_ANNI + R_S_ENDS)
    n("n_stream_annot__before_end_frame", AN + C.END_FRAME, "CONSTRAINT", 0,
      "an annotation frame and then the end frame", R_S_ANNI + R_S_END)
    n("n_stream_annot__twice", AN + A, "CONSTRAINT", 0, "two annotation frames before one item", R_S_ANNI)
    P, pi = C.stream_encode([w_partition()])
    n("n_stream_annot__inside_composite_member_0", P[:72] + AN + P[72:], "CONSTRAINT", 0,
      "an annotation frame where member 0 of a composite is due", R_S_ANNI + R_S_ITEMS)
    n("n_stream_annot__inside_composite_member_1", P[:216] + AN + P[216:], "CONSTRAINT", 0,
      "an annotation frame between the two members of a composite", R_S_ANNI + R_S_ITEMS)
    n("n_stream_annot__after_item", S + ann(C.annotation_body("w", None, res=b"\x00\x00\x01\x00")),
      "RESERVED_NONZERO", 1, "one whole item, then an annotation with a non-zero reserved byte", R_S_ANN)
    for pos in (12, 13, 14, 15):
        n(f"n_stream_annot__reserved_b{pos}", setb(A, pos, 1), "RESERVED_NONZERO", 0,
          f"annotation reserved byte {pos} = 01", R_S_ANN)
    for pos in (5, 6, 7):
        n(f"n_stream_annot__frame_reserved_b{pos}", setb(A, pos, 1), "RESERVED_NONZERO", 0,
          f"the annotation frame's header reserved byte {pos} = 01", R_S_ANN + R_S_FRAME)
    n("n_stream_annot__name_length_over_default_limit", ann(C.annotation_body("x" * 1025)), "LIMIT", 0,
      "a 1025-byte name > max_name_bytes 1024", R_S_ANN + R_S_LIM)
    n("n_stream_annot__name_length_huge", p32(A, 8, 0xFFFFFFFF), "LIMIT", 0,
      "name_length 2^32-1 in a 176-byte stream: refused before anything is read or allocated", R_S_ANN + R_S_LIM)
    n("n_stream_annot__name_over_option_limit", ann(C.annotation_body("abcdefghi")), "LIMIT", 0,
      "a 9-byte name with max_name_bytes 8", R_S_ANN + R_S_LIM, options={"max_name_bytes": 8})
    n("n_stream_annot__kv_length_not_multiple_of_8", p64(A, 16, kvlen + 4), "LENGTH", 0,
      f"kv_length {kvlen + 4}: not a multiple of 8", R_S_ANN)
    n("n_stream_annot__kv_length_over_default_limit", p64(A, 16, 1 << 40), "LIMIT", 0,
      "kv_length 2^40 > max_kv_bytes 64 MiB, refused before the section is read", R_S_ANN + R_S_LIM)
    n("n_stream_annot__kv_over_option_limit", A, "LIMIT", 0, f"a {kvlen}-byte section with max_kv_bytes 32",
      R_S_ANN + R_S_LIM, options={"max_kv_bytes": 32})
    n("n_stream_annot__kv_claim_at_default_limit", ann(C.annotation_body(None, None, kv_len=64 << 20), b""),
      "TRUNCATED", 0, "a 24-byte annotation declaring a 64 MiB section (max_kv_bytes) and nothing after it: "
      "committed as it arrives, so the outcome is the truncation", R_S_ANN + R_S_LIM + R_S_ENDS)
    n("n_stream_annot__kv_entries_over_option_limit", ann(C.annotation_body("w", EVERY_KV)), "LIMIT", 0,
      "seven entries with max_kv_entries 6", R_S_ANN + R_S_LIM, options={"max_kv_entries": 6})
    n("n_stream_annot__neither", ann(C.annotation_body()), "CONSTRAINT", 0,
      "name_length 0 and kv_length 0: an annotation of nothing", R_S_ANN)
    n("n_stream_annot__name_invalid_utf8", ann(C.annotation_body(b"\xff\xfe")), "CONSTRAINT", 0,
      "a name that is not UTF-8", R_S_ANN + ["HR-KV-6"])
    n("n_stream_annot__name_nul", ann(C.annotation_body(b"a\x00b")), "CONSTRAINT", 0, "a name holding U+0000",
      R_S_ANN + ["HR-KV-6"])
    n("n_stream_annot__name_surrogate", ann(C.annotation_body(b"\xed\xa0\x80")), "CONSTRAINT", 0,
      "a name holding an encoded surrogate (U+D800)", R_S_ANN + ["HR-KV-6"])
    n("n_stream_annot__name_padding", setb(A, 25, 1), "RESERVED_NONZERO", 0, "the name's padding byte 1 = 01",
      R_S_ANN)
    n("n_stream_annot__kv_empty_map", ann(C.annotation_body("w", None, kv=bytes(8))), "CONSTRAINT", 0,
      "an 8-byte section with entry_count 0: an empty map is written as no section", R_S_ANN)
    n("n_stream_annot__kv_string_length_lies", p64(A, 56, 9), "LENGTH", 0,
      "the string's length 9 crosses the section's declared end: LENGTH, since kv_length declared it",
      R_S_ANN + ["HR-KV-9"])
    n("n_stream_annot__kv_bytes_left", ann(C.annotation_body("w", None, kv=C.kv_encode(ANN_MD) + bytes(8))),
      "LENGTH", 0, "8 zero bytes after the section's last entry", R_S_ANN + ["HR-KV-9"])
    dup = C.kv_serialize(C.kv_raw([("a", ("int64", 1)), ("a", ("int64", 2))], sort=False))
    n("n_stream_annot__kv_duplicate_key", ann(C.annotation_body("w", None, kv=dup)), "DUPLICATE", 0,
      "the key 'a' twice", R_S_ANN + ["HR-KV-7"])
    uns = C.kv_serialize(C.kv_raw([("b", ("int64", 1)), ("a", ("int64", 2))], sort=False))
    n("n_stream_annot__kv_unsorted", ann(C.annotation_body("w", None, kv=uns)), "SECTION_ORDER", 0,
      "keys 'b' then 'a'", R_S_ANN + ["HR-KV-7"])
    n("n_stream_annot__kv_bad_tag", setb(A, 44, 0x08), "UNSUPPORTED", 0, "a reserved value tag 0x08",
      R_S_ANN + ["HR-KV-3"])
    n("n_stream_annot__item_fails", AN + setb(S, 4, 2), "CONSTRAINT", 0,
      "a valid annotation before a frame whose kind disagrees with its layout: the item fails", R_S_ANNI + R_S_KIND)


# ================================================================== composites ===
def wide_over_narrow():
    """composite.md HR-COMP-6: a tiling that is not a grid, written as nested partitions:
    [4, 6] = a [2, 6] tile above a [2, 6] partition of two [2, 3] tiles."""
    inner = part("float32", [2, 6], [[0], [0, 3]], seed=20, hshard=shard(1, 2, [4, 6], [2, 0]))
    top = T("float32", [2, 6], seed=10, shard=shard(0, 2, [4, 6], [0, 0]))
    return C.Comp(head("partition", "float32", [4, 6], 2), [top, inner])


def mixed_group():
    return grp([T("int8", [3], seed=1), T("float32", [2, 2], seed=2), T("bfloat16", [5], "strided",
                                                                          params={"strides": [2]}, seed=3)])


def deep_groups(depth, leaf=None):
    it = leaf or T("int8", [2])
    for _ in range(depth):
        it = grp([it])
    return it


def comp_items():
    """(name, item, description) of valid composites, used in streams and files."""
    return [
        ("partition_rank1", part("float32", [10], [[0, 3, 7]]), "a rank-1 partition, uneven cuts 0|3|7"),
        ("partition_grid_2x3", part("int16", [5, 7], [[0, 2], [0, 3, 5]]), "a 2 x 3 grid on [5, 7], uneven cuts"),
        ("partition_rank3", part("uint8", [2, 2, 2], [[0, 1], [0, 1], [0, 1]]), "a 2 x 2 x 2 grid of unit cubes"),
        ("partition_single", part("float64", [3, 3], [[0], [0]]), "a partition of one member covering the head"),
        ("partition_rank0", C.Comp(head("partition", "float32", [], 1), [T("float32", [], shard=shard(0, 1, [], []))]),
         "a rank-0 partition: one member"),
        ("partition_zero_extent", part("float32", [0, 4], [[0], [0, 2]]),
         "a [0, 4] head cut along dim 1: two [0, 2] members with empty buffers"),
        ("partition_nested", wide_over_narrow(), "a non-grid tiling as nested partitions (wide tile over two)"),
        ("overlay_add", over("float32", [4, 4], "add", [([0, 0], [2, 2]), ([1, 1], [3, 3])]),
         "an overlay (add): base, then two overlapping corrections"),
        ("overlay_replace", over("int32", [6], "replace", [([2], [1])]), "an overlay (replace) with one correction"),
        ("overlay_max_base_shard", over("float16", [2, 3], "max", [([0, 1], [2, 2])], base_shard=True),
         "an overlay (max) whose base carries a zero-offset shard section"),
        ("overlay_min_base_only", over("float32", [3], "min", []), "an overlay (min) of the base alone"),
        ("overlay_partition_base", C.Comp(head("overlay", "float32", [2, 3], 2, "add"),
                                          [part("float32", [2, 3], [[0, 1], [0]], role=0x01),
                                           T("float32", [1, 1], role=0x02, shard=shard(0, 1, [2, 3], [1, 2]))]),
         "an overlay whose base is a partition composite (role base on its head)"),
        ("group_mixed", mixed_group(), "a group of three unrelated tensors (dtypes, layouts)"),
        ("group_dynamic", grp([T("float32", [None, 4], buffers=[Buf(64, 6)]), T("int8", [3])], shape=[None]),
         "a group with a dynamic head and a dynamic member (allowed in groups)"),
        ("group_of_composites", grp([part("float32", [4], [[0, 2]]), over("float32", [2], "max", [([1], [1])]),
                                     T("int8", [1])]), "a group holding a partition, an overlay and a tensor"),
        ("depth_3", deep_groups(2, part("float32", [2], [[0, 1]])), "group > group > partition: depth 3"),
    ]


def build_comp_valid(c):
    data = c.ystream("y_comp_stream_worked_example", [w_partition()],
                     "stream.md worked example: the [2, 3] partition of two rows, 360 bytes", R_S_EX + R_C_EX + R_S_ITEMS)
    if (len(data) != 360 or data[:0xD8] != bytes.fromhex(STREAM_COMP_HEX)
            or data[0x140:] != bytes.fromhex(STREAM_COMP_TAIL_HEX)):
        raise AssertionError("stream.md worked example (partition) does not reproduce")
    c.yfile("y_comp_file_worked_example", [("w", w_partition())],
            "the composite example as file entry w with members w.0, w.1", R_F_COMP + R_C_EX)
    for name, it, desc in comp_items():
        refs = {"p": R_C_PART + R_C_GRID, "o": R_C_OVER + R_C_ROLES, "g": R_C_GROUP, "d": R_C_STRUCT}[name[0]]
        c.ystream(f"y_comp_stream_{name}", [it], f"stream: {desc}", R_S_ITEMS + refs)
        c.yfile(f"y_comp_file_{name}", [("c", it)], f"file: {desc}, members named c.0, c.1, ...", R_F_COMP + refs)
    data = c.ystream("y_comp_stream_worked_example_finished", [w_partition()],
                     "stream.md worked example: the [2, 3] partition, then the end frame (368 bytes)",
                     R_S_EX + R_S_END + R_S_ITEMS, end=True)
    if len(data) != 368 or data[:360] != C.stream_encode([w_partition()])[0]:
        raise AssertionError("stream.md worked example (partition, finished) does not reproduce")
    c.ystream("y_comp_stream_mixed", [w_tensor(), w_partition(), T("int8", [3]), mixed_group()],
              "tensor, composite, tensor, composite: four items", R_S_ITEMS)
    c.ystream("y_comp_stream_cross_machine", [w_partition(), mixed_group()], "composites under cross_machine",
              R_S_CM + R_S_ITEMS, options={"cross_machine": True})
    c.ystream("y_comp_stream_member_devices", [grp([T("float32", [2], device=DEV["cuda"]),
                                                    T("float32", [2], buffers=[Buf(8, 6, SYNC["event"])])])],
              "a group whose members are a cuda tensor and an event-synced buffer (relayed)", R_S_CM + R_C_GROUP)
    c.ystream("y_comp_stream_depth_at_option_limit", [deep_groups(3)], "groups nested 3 deep, max_composite_depth 3",
              R_C_LIM + R_S_LIM, options={"max_composite_depth": 3})
    c.ystream("y_comp_stream_depth_at_default_limit", [deep_groups(16)], "groups nested 16 deep (the default limit)",
              R_C_LIM)
    tot6 = grp([part("float32", [4], [[0, 2]]), part("float32", [4], [[0, 1]])])
    c.ystream("y_comp_stream_members_at_option_limit", [tot6], "member total 2 + 2 + 2 = 6, max_composite_members 6",
              R_C_LIM, options={"max_composite_members": 6})
    c.ystream("y_comp_stream_members_reset_per_item", [tot6, tot6],
              "two items of member total 6 each under max_composite_members 6 (the total is per top-level item)",
              R_C_LIM, options={"max_composite_members": 6})
    c.yfile("y_comp_file_several", [("a", T("int8", [3])), ("w", w_partition()), ("b", T("int8", [2])),
                                    ("g", mixed_group())],
            "tensors and composites interleaved; top_level a, w, b, g", R_F_COMP)
    c.yfile("y_comp_file_with_kv", [("w", w_partition())], "a composite and a KV section", R_F_COMP,
            kv={"rule": ("string", "partition")})
    c.yfile("y_comp_file_name__not_generated", [("w", w_partition()), ("w.2", T("int8", [1])),
                                                ("w.00", T("int8", [1])), ("w.x", T("int8", [1]))],
            "user names w.2, w.00, w.x beside a 2-member w: none is a generated member name", R_F_COMP)
    c.yfile("y_comp_file_depth_at_option_limit", [("d", deep_groups(3))], "groups 3 deep, max_composite_depth 3",
            R_F_COMP + R_C_LIM, options={"max_composite_depth": 3})
    c.yfile("y_comp_file_members_at_option_limit", [("t", tot6), ("u", tot6)],
            "two composites of member total 6 each, max_composite_members 6", R_F_COMP + R_C_LIM,
            options={"max_composite_members": 6})
    c.yfile("y_comp_file_nested_names", [("n", grp([T("int8", [1]), grp([T("int8", [1]), T("int8", [1])]),
                                                    T("int8", [1])]))],
            "pre-order member names n.0, n.1, n.1.0, n.1.1, n.2", R_F_COMP)
    c.yfile("y_comp_file_eleven_members", [("g", grp([T("int8", [1], seed=i) for i in range(11)]))],
            "a group of 11: members g.0 ... g.10 (decimal, no leading zeros)", R_F_COMP)


def bad_part(members, shape=(4,), dtype="float32"):
    return C.Comp(head("partition", dtype, list(shape), len(members)), members)


def pm(shape, off, gshape, dtype="float32", **kw):
    return T(dtype, shape, shard=shard(0, 1, gshape, off), **kw)


def build_comp_invalid(c):
    ns = c.nstream
    P, pi = C.stream_encode([w_partition()])
    ns("n_comp_stream_worked_example__cut_72", P[:72], "TRUNCATED", 0,
       "the composite example cut after its head frame (a boundary inside the composite)", R_S_EX + R_S_ENDS)
    ns("n_comp_stream_worked_example__cut_216", P[:216], "TRUNCATED", 0,
       "the composite example cut after member 0 (a boundary inside the composite)", R_S_EX + R_S_ENDS)
    for cut in (40, 150, 359):
        ns(f"n_comp_stream_worked_example__cut_{cut}", P[:cut], "TRUNCATED", 0,
           f"the composite example cut to {cut} bytes", R_S_EX + R_S_ENDS)
    sw = P[:72] + P[216:] + P[72:216]
    ns("n_comp_stream_worked_example__swapped", sw, "CONSTRAINT", 0,
       "the composite example with its member frames swapped (member 0 must sit at the origin)", R_S_EX + R_C_GRID)
    ns("n_comp_stream_worked_example__overlap", setb(P, 0x148, 0), "CONSTRAINT", 0,
       "the composite example with member 1's global_offset[0] = 0 (the rows overlap)", R_S_EX + R_C_GRID)
    one = C.Comp(head("partition", "float32", [2, 3], 1), [w_partition().members[0]])
    ns("n_comp_stream_partition__uncovered", C.stream_encode([one])[0], "CONSTRAINT", 0,
       "composite.md example: a single [1, 3] member leaves row 1 uncovered", R_C_EX + R_C_GRID)
    ns("n_comp_stream_after_item", C.stream_encode([w_tensor(), C.Comp(w_partition().desc,
                                                                        list(reversed(w_partition().members)))])[0],
       "CONSTRAINT", 1, "a tensor, then a partition with its members out of order: one item, then CONSTRAINT",
       R_S_DEC + R_C_GRID)
    g3 = C.Comp(head("group", "int8", [3], 3), [T("int8", [1]), T("int8", [1])])
    ns("n_comp_stream_members__stream_ends", C.stream_encode([g3])[0], "TRUNCATED", 0,
       "a group head announcing 3 members, and the stream ends after 2", R_S_ENDS + R_C_STRUCT)
    ns("n_comp_stream_members__stream_ends_nested", C.stream_encode([grp([T("int8", [1]), g3])])[0], "TRUNCATED", 0,
       "an inner group announcing 3 members ends the stream after 2", R_S_ENDS + R_C_STRUCT)
    nested = C.stream_encode([w_tensor(), wide_over_narrow()])
    ns("n_comp_stream_nested__cut_inner", nested[0][:nested[1]["frame_start"][3] + 8], "TRUNCATED", 1,
       "a tensor, then nested partitions cut inside the inner partition's first member", R_S_ENDS)
    # partition members
    parts = [
        ("not_grid", C.Comp(head("partition", "float32", [4, 6], 3),
                            [pm([2, 6], [0, 0], [4, 6]), pm([2, 3], [2, 0], [4, 6]), pm([2, 3], [2, 3], [4, 6])]),
         "CONSTRAINT", "a wide tile above two narrow ones as one partition (not a grid)", R_C_GRID),
        ("gap", bad_part([pm([1], [0], [4]), pm([2], [2], [4])]), "CONSTRAINT",
         "[4] as [0,1) and [2,4): a gap", R_C_GRID),
        ("overlap", bad_part([pm([3], [0], [4]), pm([2], [2], [4])]), "CONSTRAINT",
         "[4] as [0,3) and [2,4): overlapping", R_C_GRID),
        ("past_head", bad_part([pm([2], [0], [4]), pm([1], [2], [4])]), "CONSTRAINT",
         "[4] as [0,2) and [2,3): the last cell stops short of the head", R_C_GRID),
        ("col_major_order", C.Comp(head("partition", "float32", [2, 2], 4),
                                   [pm([1, 1], [0, 0], [2, 2]), pm([1, 1], [1, 0], [2, 2]),
                                    pm([1, 1], [0, 1], [2, 2]), pm([1, 1], [1, 1], [2, 2])]),
         "CONSTRAINT", "a 2 x 2 grid listed in column-major order", R_C_GRID),
        ("missing_cell", C.Comp(head("partition", "float32", [2, 2], 3),
                                [pm([1, 1], [0, 0], [2, 2]), pm([1, 1], [0, 1], [2, 2]), pm([1, 1], [1, 0], [2, 2])]),
         "CONSTRAINT", "a 2 x 2 grid with its last cell missing (3 members)", R_C_GRID),
        ("dtype", bad_part([pm([2], [0], [4]), pm([2], [2], [4], dtype="float16")]), "COMBINATION",
         "member 1 is float16 in a float32 partition", R_C_PART),
        ("rank", bad_part([pm([2], [0], [4]), T("float32", [2, 1], shard=shard(0, 1, [4, 1], [2, 0]))]), "CONSTRAINT",
         "member 1 has rank 2 in a rank-1 partition", R_C_PART),
        ("no_shard", bad_part([pm([2], [0], [4]), T("float32", [2])]), "CONSTRAINT",
         "member 1 has no shard section", R_C_PART),
        ("global_shape", bad_part([pm([2], [0], [4]), pm([2], [2], [5])]), "CONSTRAINT",
         "member 1's global_shape [5] is not the head's [4]", R_C_PART),
        ("role", bad_part([pm([2], [0], [4]), pm([2], [2], [4], role=0x02)]), "CONSTRAINT",
         "a partition member with a role section", R_C_ROLES),
        ("dynamic_member", bad_part([pm([2], [0], [4]), T("float32", [None], buffers=[Buf(8, 6)],
                                                          shard=shard(0, 1, [4], [2]))]), "CONSTRAINT",
         "a partition member with a dynamic extent", R_C_RES + R_C_PART),
        ("dynamic_head", C.Comp(head("partition", "float32", [None], 2), [pm([2], [0], [4]), pm([2], [2], [4])]),
         "CONSTRAINT", "a partition head with a dynamic extent", R_C_RES),
        ("nested_inner_global_shape",
         C.Comp(head("partition", "float32", [4, 6], 2),
                [T("float32", [2, 6], shard=shard(0, 2, [4, 6], [0, 0])),
                 C.Comp(head("partition", "float32", [2, 6], 2, shard=shard(1, 2, [4, 6], [2, 0])),
                        [pm([2, 3], [0, 0], [4, 6]), pm([2, 3], [0, 3], [4, 6])])]),
         "CONSTRAINT", "nested partition whose members give the outer head's shape as global_shape", R_C_PART + R_C_GRID),
    ]
    ovs = [
        ("role_missing_base", C.Comp(head("overlay", "float32", [4], 2, "add"),
                                     [T("float32", [4]), T("float32", [2], role=2, shard=shard(0, 1, [4], [0]))]),
         "CONSTRAINT", "an overlay base with no role section", R_C_ROLES + R_C_OVER),
        ("role_missing_correction", C.Comp(head("overlay", "float32", [4], 2, "add"),
                                           [T("float32", [4], role=1), T("float32", [2], shard=shard(0, 1, [4], [0]))]),
         "CONSTRAINT", "an overlay correction with no role section", R_C_ROLES),
        ("base_role_correction", C.Comp(head("overlay", "float32", [4], 2, "add"),
                                        [T("float32", [4], role=2), T("float32", [2], role=2, shard=shard(0, 1, [4], [0]))]),
         "CONSTRAINT", "member 0 says correction", R_C_ROLES),
        ("correction_role_base", C.Comp(head("overlay", "float32", [4], 2, "add"),
                                        [T("float32", [4], role=1), T("float32", [2], role=1, shard=shard(0, 1, [4], [0]))]),
         "CONSTRAINT", "member 1 says base", R_C_ROLES),
        ("base_shape", C.Comp(head("overlay", "float32", [4], 2, "add"),
                              [T("float32", [3], role=1), T("float32", [2], role=2, shard=shard(0, 1, [4], [0]))]),
         "CONSTRAINT", "an overlay base of [3] under a [4] head", R_C_OVER),
        ("base_shard_offset", C.Comp(head("overlay", "float32", [4], 2, "add"),
                                     [T("float32", [4], role=1, shard=shard(0, 1, [8], [4])),
                                      T("float32", [2], role=2, shard=shard(0, 1, [4], [0]))]),
         "CONSTRAINT", "an overlay base placed at offset 4 of an [8] global shape", R_C_OVER),
        ("correction_no_shard", C.Comp(head("overlay", "float32", [4], 2, "add"),
                                       [T("float32", [4], role=1), T("float32", [2], role=2)]),
         "CONSTRAINT", "an overlay correction with no shard section", R_C_OVER),
        ("correction_global_shape", C.Comp(head("overlay", "float32", [4], 2, "add"),
                                           [T("float32", [4], role=1), T("float32", [2], role=2, shard=shard(0, 1, [6], [0]))]),
         "CONSTRAINT", "an overlay correction whose global_shape [6] is not the head's", R_C_OVER),
        ("dtype", C.Comp(head("overlay", "float32", [4], 2, "add"),
                         [T("float32", [4], role=1), T("int32", [2], role=2, shard=shard(0, 1, [4], [0]))]),
         "COMBINATION", "an int32 correction in a float32 overlay", R_C_OVER),
        ("rank", C.Comp(head("overlay", "float32", [4], 2, "add"),
                        [T("float32", [4], role=1), T("float32", [2, 1], role=2, shard=shard(0, 1, [4, 1], [0, 0]))]),
         "CONSTRAINT", "a rank-2 correction in a rank-1 overlay", R_C_OVER),
        ("dynamic_head", C.Comp(head("overlay", "float32", [None], 1, "add"), [T("float32", [4], role=1)]),
         "CONSTRAINT", "an overlay head with a dynamic extent", R_C_RES),
    ]
    others = [
        ("group_role", grp([T("int8", [1]), T("int8", [1], role=2)]), "CONSTRAINT", "a group member with a role section",
         R_C_ROLES + R_C_GROUP),
        ("top_level_role_tensor", T("int8", [1], role=1), "CONSTRAINT", "a top-level tensor with a role section",
         R_C_ROLES + R_C_ORDER),
        ("top_level_role_composite", C.Comp(head("group", "int8", [1], 1, role=1), [T("int8", [1])]), "CONSTRAINT",
         "a top-level composite head with a role section", R_C_ROLES + R_C_ORDER),
        ("nested_group_role", grp([grp([T("int8", [1], role=1)])]), "CONSTRAINT",
         "a role section on a member of a nested group", R_C_ROLES),
    ]
    for name, it, err, desc, refs in parts + ovs + others:
        tag = ("partition__" if any(it is p[1] for p in parts) else
               "overlay__" if any(it is o[1] for o in ovs) else "")
        ns(f"n_comp_stream_{tag}{name}", C.stream_encode([it])[0], err, 0, f"stream: {desc}", R_S_DEC + refs)
        c.nfile(f"n_comp_file_{tag}{name}", C.file_encode([("c", it)])[0], err, f"file: {desc}", R_F_DEC + refs)
    ns("n_comp_stream_overlay__role_03", C.stream_encode([C.Comp(head("overlay", "float32", [4], 1, "add"),
                                                                 [T("float32", [4], role=3)])])[0],
       "RESERVED_TAG", 0, "an overlay base with role byte 0x03", R_C_ROLES + ["HR-ROLE-1"])
    ns("n_comp_stream_overlay__role_00", C.stream_encode([C.Comp(head("overlay", "float32", [4], 1, "add"),
                                                                 [T("float32", [4], role=0)])])[0],
       "INVALID_TAG", 0, "an overlay base with role byte 0x00", R_C_ROLES + ["HR-ROLE-1"])
    # limits
    ns("n_comp_stream_depth__over_option", C.stream_encode([deep_groups(3)])[0], "LIMIT", 0,
       "groups 3 deep with max_composite_depth 2", R_C_LIM + R_S_LIM, options={"max_composite_depth": 2})
    ns("n_comp_stream_depth__over_default", C.stream_encode([deep_groups(17)])[0], "LIMIT", 0,
       "groups 17 deep (default max_composite_depth 16)", R_C_LIM)
    deep_cut = C.stream_encode([deep_groups(17)])
    ns("n_comp_stream_depth__before_members", deep_cut[0][:deep_cut[1]["frame_start"][16] + 64], "LIMIT", 0,
       "groups 17 deep cut after the 17th head: the depth is refused before its members are read", R_C_LIM + R_S_LIM)
    tot6 = grp([part("float32", [4], [[0, 2]]), part("float32", [4], [[0, 1]])])
    ns("n_comp_stream_members__total_over_option", C.stream_encode([tot6])[0], "LIMIT", 0,
       "member total 2 + 2 + 2 = 6 with max_composite_members 5 (each head alone is within it)", R_C_LIM,
       options={"max_composite_members": 5})
    ns("n_comp_stream_members__head_over_option", C.stream_encode([mixed_group()])[0], "LIMIT", 0,
       "a head of 3 members with max_composite_members 2 (the descriptor's own check)", R_C_LIM,
       options={"max_composite_members": 2})
    huge = C.Comp(head("group", "int8", [1], 0xFFFFFFFF), [])
    ns("n_comp_stream_members__huge_count", C.stream_encode([huge])[0], "LIMIT", 0,
       "a head announcing 2^32-1 members (> 65536), refused before any member", R_C_LIM + R_S_LIM)
    big = C.Comp(head("group", "int8", [1], 65536), [])
    ns("n_comp_stream_members__at_default_then_ends", C.stream_encode([big])[0], "TRUNCATED", 0,
       "a head announcing 65536 members (the default limit) and no member frames", R_C_LIM + R_S_ENDS)
    ns("n_comp_stream_cross_machine_member",
       C.stream_encode([grp([T("int8", [1]), T("float32", [2], buffers=[Buf(8, 6, SYNC["event"])])])])[0],
       "COMBINATION", 0, "cross_machine; a group member has an event buffer", R_S_CM, options={"cross_machine": True})
    ns("n_comp_stream_member_kind_tensor_for_composite",
       setb(C.stream_encode([tot6])[0], C.stream_encode([tot6])[1]["frame_start"][1] + 4, 1), "CONSTRAINT", 0,
       "an inner partition head framed as kind 0x01", R_S_KIND)
    # files: names, structure, limits
    nf = c.nfile
    for name, idx, new, desc in (("wrong_index", 1, b"w.2", "member 1 named w.2"),
                                 ("leading_zero", 1, b"w.01", "member 1 named w.01"),
                                 ("first_is_1", 0, b"w.1", "member 0 named w.1"),
                                 ("other_head", 1, b"v.1", "member 1 named v.1"),
                                 ("no_dot", 1, b"w1", "member 1 named w1")):
        r = C.file_raw([("w", w_partition())])
        r["entries"][idx + 1]["name"] = new
        nf(f"n_comp_file_member_name__{name}", fser(r), "CONSTRAINT", f"{desc} (must be w.{idx})", R_F_COMP)
    r = C.file_raw([("n", grp([T("int8", [1]), grp([T("int8", [1]), T("int8", [1])])]))])
    r["entries"][3]["name"] = b"n.2"
    nf("n_comp_file_member_name__nested", fser(r), "CONSTRAINT", "nested member n.1.0 named n.2", R_F_COMP)
    r = C.file_raw([("n", grp([T("int8", [1]), grp([T("int8", [1]), T("int8", [1])])]))])
    r["entries"][4]["name"] = b"n.1.0"
    nf("n_comp_file_member_name__nested_repeat", fser(r), "CONSTRAINT", "nested member n.1.1 named n.1.0", R_F_COMP)
    nf("n_comp_file_unfinished", C.file_encode([("g", g3)])[0], "CONSTRAINT",
       "a group announcing 3 members and the index ends after 2", R_F_COMP + R_F_DEC)
    nf("n_comp_file_unfinished_next_entry", C.file_encode([("g", g3), ("b", T("int8", [1]))])[0], "CONSTRAINT",
       "a group announcing 3 members, 2 given, then top-level b: b stands where g.2 must", R_F_COMP)
    nf("n_comp_file_collision__user_before", C.file_encode([("w.0", T("int8", [1])), ("w", w_partition())])[0],
       "DUPLICATE", "a user tensor w.0 before composite w (whose member 0 is w.0)", R_F_RULES + R_F_COMP)
    nf("n_comp_file_collision__user_after", C.file_encode([("w", w_partition()), ("w.1", T("int8", [1]))])[0],
       "DUPLICATE", "a user tensor w.1 after composite w", R_F_RULES + R_F_COMP)
    nf("n_comp_file_collision__nested", C.file_encode([("n", grp([T("int8", [1]), grp([T("int8", [1])])])),
                                                       ("n.1.0", T("int8", [1]))])[0],
       "DUPLICATE", "a user tensor n.1.0 beside nested member n.1.0", R_F_RULES + R_F_COMP)
    nf("n_comp_file_collision__two_composites", C.file_encode([("w", w_partition()), ("w", w_partition())])[0],
       "DUPLICATE", "two composites named w (members w.0, w.1 twice)", R_F_RULES)
    r = C.file_raw([("w", w_partition())])
    r["entries"][0]["kind"] = 0x01
    nf("n_comp_file_kind__tensor_for_head", fser(r), "CONSTRAINT", "a composite head indexed as kind 0x01", R_F_RULES)
    r = C.file_raw([("w", w_partition())])
    r["entries"][1]["kind"] = 0x02
    nf("n_comp_file_kind__composite_for_member", fser(r), "CONSTRAINT", "a tensor member indexed as kind 0x02",
       R_F_RULES)
    nf("n_comp_file_depth__over_option", C.file_encode([("d", deep_groups(3))])[0], "LIMIT",
       "groups 3 deep with max_composite_depth 2", R_F_COMP + R_C_LIM, options={"max_composite_depth": 2})
    nf("n_comp_file_depth__over_default", C.file_encode([("d", deep_groups(17))])[0], "LIMIT",
       "groups 17 deep (default max_composite_depth 16)", R_F_COMP + R_C_LIM)
    nf("n_comp_file_members__total_over_option", C.file_encode([("t", tot6)])[0], "LIMIT",
       "member total 6 with max_composite_members 5", R_F_COMP + R_C_LIM, options={"max_composite_members": 5})
    nf("n_comp_file_member_device", C.file_encode([("g", grp([T("int8", [1]), T("int8", [1], device=DEV["cuda"])]))])[0],
       "COMBINATION", "a group member on cuda (a file holds host bytes)", R_F_RULES)
    nf("n_comp_file_member_sync", C.file_encode([("g", grp([T("float32", [2], buffers=[Buf(8, 6, SYNC["event"])])]))])[0],
       "COMBINATION", "a group member with an event buffer", R_F_RULES)
    r = C.file_raw([("w", w_partition())])
    off = C.file_serialize(r)[1]["offsets"]
    r["entries"][2]["offsets"] = [off[2][0] + 64]
    nf("n_comp_file_member_buffer_gap", fser(r), "OFFSET", "member w.1's buffer 64 bytes past its canonical offset",
       R_F_BUF + R_F_COMP)


def build_comp(c):
    build_comp_valid(c)
    build_comp_invalid(c)


def build_stream_impl(c):
    """Implementation-defined streams (vectors/SCHEMA.md § Classes)."""
    # stream.md HR-STREAM-7: a buffer within max_buffer_bytes is allocated at its declared
    # size when its data is about to be read. At the default limit, 2^34 bytes (16 GiB),
    # whether that allocation succeeds is the machine's and the allocator's business: a
    # reader either gets the memory and then finds the stream ends (TRUNCATED) or does not
    # get it (NOMEM). Both are conforming; n_stream_buffer__allowed_but_missing is the same
    # input with a claim every machine can allocate.
    big = C.Tensor(D("uint8", [100], buffers=[Buf(1 << 34, 6)]), data=[C.pattern(100, 0)])
    c.i("i_stream_buffer__at_default_limit_missing", "stream", C.stream_encode([big])[0],
        ["TRUNCATED", "NOMEM"],
        "a 2^34-byte buffer (max_buffer_bytes, 16 GiB) of which 100 bytes arrive: TRUNCATED if "
        "the reader can allocate the claim, NOMEM if it cannot",
        R_S_LIM + R_S_ENDS + ["errors-and-limits.md#status-codes-hr-err-1"])


def build_stream_align_slack(c):
    """errors-and-limits.md HR-LIMIT-2 (stream.md HR-STREAM-9 step 8): the alignment slack
    (2^alignment_log2 - 64 for each non-empty buffer declaring more than 64) of the items a
    reader yielded that are still alive -- the corpus's consumer keeps every item until the
    stream's end -- and of the item being read may exceed their buffer bytes by at most
    max_alignment_slack (1 MiB by default)."""
    y, n = c.ystream, c.nstream

    def paged(k, size=1):  # k members of `size` bytes, each buffer declaring 4096
        return grp([T("uint8", [size], seed=i, buffers=[Buf(size, 12)]) for i in range(k)],
                   dtype="uint8", shape=[0])

    refs = R_SLACK + R_S_LIM + R_S_DEC
    two = paged(2)
    y("y_stream_align_slack__at_option_limit", [two],
      "2 one-byte members declaring 4096: slack 2 x 4032 = 8064 = 2 bytes + max_alignment_slack 8062",
      refs, options={"max_alignment_slack": 8062})
    n("n_stream_align_slack__over_option_limit", C.stream_encode([two])[0], "LIMIT", 0,
      "2 one-byte members declaring 4096: slack 8064 > 2 bytes + max_alignment_slack 8061", refs,
      options={"max_alignment_slack": 8061})
    y("y_stream_align_slack__page_sized_members", [paged(4, 4096)],
      "4 members of 4096 bytes declaring 4096: their bytes pay for their slack (max_alignment_slack 0)",
      refs, options={"max_alignment_slack": 0})
    y("y_stream_align_slack__minimum_alignment", [grp([T("uint8", [1], seed=i, buffers=[Buf(1, a)])
                                                     for i, a in enumerate((0, 3, 6))], dtype="uint8",
                                                    shape=[0])],
      "one-byte members declaring 1, 8 and 64: no slack (the minimum 64 is not counted; "
      "max_alignment_slack 0)", refs, options={"max_alignment_slack": 0})
    one = T("uint8", [1], buffers=[Buf(1, 12)])
    # the sums run over the items kept (y_stream_align_slack__per_item, withdrawn, read three
    # such items with 4031 when each item had an allowance of its own)
    y("y_stream_align_slack__kept_items_at_limit", [one, one, one],
      "three top-level one-byte tensors declaring 4096, all kept: slack 3 x 4032 = 12096 = 3 "
      "bytes + max_alignment_slack 12093", refs, options={"max_alignment_slack": 12093})
    n("n_stream_align_slack__kept_items_over_limit", C.stream_encode([one, one, one])[0],
      "LIMIT", 2,
      "three top-level one-byte tensors declaring 4096, all kept: the third passes 3 bytes + "
      "max_alignment_slack 12092 (two items yielded)", refs,
      options={"max_alignment_slack": 12092})
    n("n_stream_align_slack__kept_items_one_each", C.stream_encode([one, one])[0], "LIMIT", 1,
      "two top-level one-byte tensors declaring 4096 with max_alignment_slack 4031: enough for "
      "either alone, not for both kept", refs, options={"max_alignment_slack": 4031})
    big = T("uint8", [4096], seed=5, buffers=[Buf(4096, 6)])
    y("y_stream_align_slack__kept_bytes_pay", [big, one],
      "a kept 4096-byte tensor declaring 64, then a one-byte tensor declaring 4096: slack 4032 "
      "<= 4097 bytes held (max_alignment_slack 0)", refs, options={"max_alignment_slack": 0})
    kept = 261  # top-level items: 261 x 4032 > 261 + 2^20, as k members below
    n("n_stream_align_slack__kept_items_over_default", C.stream_encode([one] * kept)[0], "LIMIT",
      kept - 1,
      f"{kept} top-level one-byte tensors declaring 4096, all kept: item {kept - 1} passes "
      f"{kept} bytes + 1 MiB (the default); 65,536 such items kept would hold a page each, 57x "
      "the stream", refs)
    y("y_stream_align_slack__empty_buffer", [T("uint8", [0], buffers=[Buf(0, 0)])],
      "an empty buffer has no slack (max_alignment_slack 0)", refs, options={"max_alignment_slack": 0})
    # the hostile class: one-byte members that each declare a page, under the default limit
    k = 261  # the first member count whose slack passes the bytes + 1 MiB: 261 x 4032 > 261 + 2^20
    hostile, info = C.stream_encode([paged(k)])
    n("n_stream_align_slack__over_default", hostile, "LIMIT", 0,
      f"{k} one-byte members declaring 4096: slack {k} x 4032 > {k} bytes + 1 MiB (the default); "
      "a composite of 65,536 such members would hold a page each, 57x the stream", refs)
    def bufs(m):  # a private-layout tensor of m one-byte buffers, each declaring 4096
        return T("uint8", [1], 0xF3, params=private(7, b"x"), buffers=[Buf(1, 12)] * m)

    # at the default with two frames (a sweep of hundreds of member frames is slow to oracles)
    y("y_stream_align_slack__at_default", [grp([bufs(255), bufs(5)], dtype="uint8", shape=[0])],
      "a group of two private-layout members with 255 and 5 one-byte buffers declaring 4096: "
      "slack 260 x 4032 = 1048320 <= 260 bytes + 1 MiB (the default; a sixth buffer would pass it)",
      refs)
    last = info["frame_start"][k]  # member k-1's frame: the head is frame 0
    n("n_stream_align_slack__before_buffers", hostile[:last + 8 + 64], "LIMIT", 0,
      f"the {k}-member stream cut after member {k - 1}'s descriptor: refused before its buffer "
      "is read or set aside", refs)


def build_all(c):
    build_kv_valid(c)
    build_kv_invalid(c)
    build_file_valid(c)
    build_file_invalid(c)
    build_stream_valid(c)
    build_stream_invalid(c)
    build_stream_annot_valid(c)
    build_stream_annot_invalid(c)
    build_stream_align_slack(c)
    build_stream_impl(c)
    build_comp(c)
