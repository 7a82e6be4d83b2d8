/* Key-value metadata (kv.c). kv.md
 *
 * Round trips of every value type (nested lists, NaN payloads, empty and
 * NUL-bearing strings), the worked example byte for byte, and hostile
 * sections: each patch of a valid encoding gets the one status the decoding
 * order (HR-KV-9) gives it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"
#include "test_support.h"

#define CAP 4096

/* ==== helpers ================================================================ */

static struct hurray_kv_value v_bool(uint8_t b) {
    struct hurray_kv_value v;
    memset(&v, 0, sizeof v);
    v.type = HURRAY_KV_BOOL;
    v.v.boolean = b;
    return v;
}
static struct hurray_kv_value v_i64(int64_t i) {
    struct hurray_kv_value v;
    memset(&v, 0, sizeof v);
    v.type = HURRAY_KV_INT64;
    v.v.i64 = i;
    return v;
}
static struct hurray_kv_value v_u64(uint64_t u) {
    struct hurray_kv_value v;
    memset(&v, 0, sizeof v);
    v.type = HURRAY_KV_UINT64;
    v.v.u64 = u;
    return v;
}
static struct hurray_kv_value v_f64_bits(uint64_t bits) {
    struct hurray_kv_value v;
    memset(&v, 0, sizeof v);
    v.type = HURRAY_KV_FLOAT64;
    memcpy(&v.v.f64, &bits, 8);
    return v;
}
static struct hurray_kv_value v_blob(uint8_t type, const void *p, size_t n) {
    struct hurray_kv_value v;
    memset(&v, 0, sizeof v);
    v.type = type;
    v.v.bytes.data = p;
    v.v.bytes.len = n;
    return v;
}
static struct hurray_kv_value v_str(const char *s) {
    return v_blob(HURRAY_KV_STRING, s, strlen(s));
}
static struct hurray_kv_value v_list(const struct hurray_kv_value *items, size_t n) {
    struct hurray_kv_value v;
    memset(&v, 0, sizeof v);
    v.type = HURRAY_KV_LIST;
    v.v.list.items = items;
    v.v.list.count = n;
    return v;
}
static struct hurray_kv_entry entry(const char *key, struct hurray_kv_value v) {
    struct hurray_kv_entry e;
    e.key = key;
    e.key_len = (uint32_t)strlen(key);
    e.value = v;
    return e;
}

static size_t encode_ok(const struct hurray_kv_entry *e, size_t n, uint8_t *buf) {
    struct hurray_error err;
    size_t written = 0;
    uint64_t len = 0;
    int st = hurray_kv_encode(e, n, NULL, buf, CAP, &written, &err);
    if (st != HURRAY_OK) print_error("encode: %s: %s\n", hurray_status_name(st), err.message);
    assert_status(st, HURRAY_OK);
    assert_status(hurray_kv_encoded_len(e, n, NULL, &len, &err), HURRAY_OK);
    assert_int_equal(len, written);
    assert_int_equal(written % 8, 0);
    return written;
}

/* Decodes a copy of exactly len bytes in its own allocation, so a read past
 * the end is caught by ASan/valgrind. */
/* ---- hurray_kv_decode_each against hurray_kv_decode (HR-KV-12) ---------------- */

/* What the callback saw: each entry compared with the map's entry of the same index. */
struct each_seen {
    const struct hurray_kv *map; /* NULL: compare nothing */
    size_t calls;
    size_t stop_at; /* SIZE_MAX: never stop */
};

static int each_check(void *ctx, const struct hurray_kv_entry *e, size_t index, size_t count) {
    struct each_seen *s = ctx;
    assert_int_equal(index, s->calls);
    s->calls++;
    if (s->map) {
        assert_int_equal(count, s->map->count);
        assert_true(index < s->map->count);
        assert_true(hurray_kv_entries_equal(e, 1, &s->map->entries[index], 1));
        assert_int_equal(e->key[e->key_len], 0); /* keys NUL-terminated, as in a map */
    }
    return index == s->stop_at ? HURRAY_E_ARGUMENT : HURRAY_OK;
}

/* HR-KV-12: decode_each of the same bytes gives decode's status, error record (field,
 * offset, message) and, on success, its entries one at a time, in order; on failure it
 * hands nothing over. */
static void check_each_matches(const uint8_t *src, size_t len, const struct hurray_limits *lim,
                               int st, const struct hurray_kv *map,
                               const struct hurray_error *err) {
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    if (len) memcpy(copy, src, len);
    struct test_alloc ta;
    test_alloc_init(&ta, 0);
    struct hurray_decode_options opt = {lim, test_alloc_get(&ta)};
    struct each_seen seen = {st == HURRAY_OK ? map : NULL, 0, SIZE_MAX};
    struct hurray_error e2;
    test_error_poison(&e2);
    int st2 = hurray_kv_decode_each(copy, len, &opt, each_check, &seen, &e2);
    free(copy);
    assert_alloc_clean(&ta);
    assert_int_equal(st2, st);
    if (st != HURRAY_OK) {
        assert_int_equal(seen.calls, 0);
        assert_int_equal(e2.code, err->code);
        assert_int_equal(e2.has_offset, err->has_offset);
        if (err->has_offset) assert_int_equal(e2.offset, err->offset);
        assert_string_equal(e2.field, err->field);
        assert_string_equal(e2.message, err->message);
    } else {
        assert_int_equal(seen.calls, map->count);
    }
}

static int decode_exact(const uint8_t *src, size_t len, const struct hurray_limits *lim,
                        struct hurray_kv *kv, struct hurray_error *err) {
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    if (len) memcpy(copy, src, len);
    struct hurray_decode_options opt = {lim, NULL};
    struct hurray_error own;
    if (!err) err = &own;
    hurray_kv_init(kv);
    int st = hurray_kv_decode(copy, len, &opt, kv, err);
    free(copy);
    if (st != HURRAY_OK) {
        assert_int_equal(kv->count, 0);
        assert_null(kv->storage);
    }
    /* every input a test decodes is also decoded entry by entry, with the same outcome */
    check_each_matches(src, len, lim, st, kv, err);
    return st;
}

static void expect_decode(const uint8_t *src, size_t len, const struct hurray_limits *lim,
                          int code) {
    struct hurray_kv kv;
    struct hurray_error err;
    test_error_poison(&err);
    int st = decode_exact(src, len, lim, &kv, &err);
    if (st != code) print_error("decode: got %s (%s), want %s\n", hurray_status_name(st),
                                st ? err.message : "", hurray_status_name(code));
    assert_status(st, code);
    if (code != HURRAY_OK) assert_hurray_error(&err, code, NULL);
    hurray_kv_reset(&kv);
}

/* Decode, compare with the entries sorted, re-encode byte-identically. */
static void round_trip(const struct hurray_kv_entry *e, size_t n) {
    uint8_t buf[CAP], again[CAP];
    struct hurray_kv kv;
    struct hurray_error err;
    size_t len = encode_ok(e, n, buf);
    assert_status(decode_exact(buf, len, NULL, &kv, &err), HURRAY_OK);
    assert_int_equal(kv.count, n);
    for (size_t i = 0; i < n; i++) {
        ptrdiff_t k = hurray_kv_find(&kv, e[i].key, e[i].key_len);
        assert_true(k >= 0);
        assert_true(hurray_kv_value_equal(&kv.entries[k].value, &e[i].value));
        assert_int_equal(kv.entries[k].key[e[i].key_len], 0); /* NUL-terminated */
    }
    size_t len2 = encode_ok(kv.entries, kv.count, again);
    assert_bytes_equal(again, len2, buf, len);
    /* _move hands the block over and leaves the source initialised. */
    struct hurray_kv moved;
    hurray_kv_init(&moved);
    const void *block = kv.storage;
    hurray_kv_move(&moved, &kv);
    assert_ptr_equal(moved.storage, block);
    assert_int_equal(moved.count, n);
    assert_null(kv.storage);
    assert_int_equal(kv.count, 0);
    hurray_kv_move(&moved, &moved);
    hurray_kv_move(NULL, &moved);
    assert_int_equal(moved.count, n);
    hurray_kv_reset(&moved);
    hurray_kv_reset(&kv);
}

/* kv.md § Worked example. */
static const uint8_t WORKED[] = {
    0x02, 0, 0, 0, 0, 0, 0, 0,
    0x01, 0, 0, 0, 0x02, 0, 0, 0,
    'n', 0, 0, 0, 0, 0, 0, 0,
    0x2A, 0, 0, 0, 0, 0, 0, 0,
    0x04, 0, 0, 0, 0x07, 0, 0, 0,
    't', 'a', 'g', 's', 0, 0, 0, 0,
    0x02, 0, 0, 0, 0, 0, 0, 0,
    0x01, 0, 0, 0, 0, 0, 0, 0,
    0x01, 0, 0, 0, 0, 0, 0, 0,
    0x05, 0, 0, 0, 0, 0, 0, 0,
    0x02, 0, 0, 0, 0, 0, 0, 0,
    'h', 'i', 0, 0, 0, 0, 0, 0,
};

static void patched(size_t at, uint8_t byte, int code) {
    uint8_t b[sizeof WORKED];
    memcpy(b, WORKED, sizeof b);
    b[at] = byte;
    expect_decode(b, sizeof b, NULL, code);
}

/* ==== tests ==================================================================== */

static void test_HR_KV_5_worked_example_bytes(void **state) {
    (void)state;
    struct hurray_kv_value tags[2] = {v_bool(1), v_str("hi")};
    /* given out of order: the writer sorts (HR-KV-7, HR-KV-10) */
    struct hurray_kv_entry e[2] = {entry("tags", v_list(tags, 2)), entry("n", v_i64(42))};
    uint8_t buf[CAP];
    size_t len = encode_ok(e, 2, buf);
    assert_bytes_equal(buf, len, WORKED, sizeof WORKED);
    round_trip(e, 2);
}

static void test_HR_KV_1_round_trip_every_type(void **state) {
    (void)state;
    static const uint8_t blob[] = {0, 1, 2, 0xFF, 0, 7, 8, 9, 10};
    static const char nul_str[] = {'a', 0, 'b'};
    struct hurray_kv_value inner2[2] = {v_i64(-1), v_blob(HURRAY_KV_BYTES, blob, 3)};
    struct hurray_kv_value inner1[3] = {v_list(inner2, 2), v_str(""), v_list(NULL, 0)};
    struct hurray_kv_value outer[4] = {v_list(inner1, 3), v_u64(UINT64_MAX),
                                       v_f64_bits(0x3FF0000000000000ull), v_bool(0)};
    struct hurray_kv_entry e[] = {
        entry("bool.true", v_bool(1)),
        entry("bool.false", v_bool(0)),
        entry("int.min", v_i64(INT64_MIN)),
        entry("int.max", v_i64(INT64_MAX)),
        entry("int.zero", v_i64(0)),
        entry("uint.max", v_u64(UINT64_MAX)),
        entry("float.one", v_f64_bits(0x3FF0000000000000ull)),
        entry("float.negzero", v_f64_bits(0x8000000000000000ull)),
        entry("float.inf", v_f64_bits(0x7FF0000000000000ull)),
        entry("float.subnormal", v_f64_bits(1)),
        entry("string", v_str("h\xC3\xA9llo \xF0\x9D\x84\x9E")),
        entry("string.empty", v_str("")),
        entry("string.nul", v_blob(HURRAY_KV_STRING, nul_str, 3)),
        entry("string.eight", v_str("12345678")),
        entry("bytes", v_blob(HURRAY_KV_BYTES, blob, sizeof blob)),
        entry("bytes.empty", v_blob(HURRAY_KV_BYTES, NULL, 0)),
        entry("list.empty", v_list(NULL, 0)),
        entry("list.nested", v_list(outer, 4)),
        entry("\xC3\xA9t\xC3\xA9", v_i64(1)), /* non-ASCII key */
    };
    round_trip(e, sizeof e / sizeof e[0]);
}

static void test_HR_KV_11_nan_payload_bits_preserved(void **state) {
    (void)state;
    static const uint64_t nans[] = {0x7FF8000000000000ull, 0x7FF0000000000001ull,
                                    0xFFF8DEADBEEF0001ull, 0x7FFFFFFFFFFFFFFFull};
    for (size_t k = 0; k < sizeof nans / sizeof nans[0]; k++) {
        struct hurray_kv_entry e = entry("x", v_f64_bits(nans[k]));
        struct hurray_kv kv;
        struct hurray_error err;
        uint8_t buf[CAP];
        size_t len = encode_ok(&e, 1, buf);
        assert_status(decode_exact(buf, len, NULL, &kv, &err), HURRAY_OK);
        uint64_t bits;
        memcpy(&bits, &kv.entries[0].value.v.f64, 8);
        assert_int_equal(bits, nans[k]);
        assert_true(hurray_kv_value_equal(&kv.entries[0].value, &e.value)); /* by bits */
        hurray_kv_reset(&kv);
    }
    struct hurray_kv_value a = v_f64_bits(0), b = v_f64_bits(0x8000000000000000ull);
    assert_false(hurray_kv_value_equal(&a, &b)); /* 0.0 and -0.0 differ (HR-KV-11) */
}

static void test_HR_KV_5_empty_map(void **state) {
    (void)state;
    uint8_t buf[CAP];
    struct hurray_kv kv;
    struct hurray_error err;
    size_t len = encode_ok(NULL, 0, buf);
    assert_int_equal(len, 8);
    static const uint8_t zero[8] = {0};
    assert_bytes_equal(buf, len, zero, 8);
    assert_status(decode_exact(buf, len, NULL, &kv, &err), HURRAY_OK);
    assert_int_equal(kv.count, 0);
    assert_int_equal(hurray_kv_find(&kv, "a", 1), -1);
    hurray_kv_reset(&kv);
}

static void test_HR_KV_2_type_names(void **state) {
    (void)state;
    assert_string_equal(hurray_kv_type_name(HURRAY_KV_BOOL), "bool");
    assert_string_equal(hurray_kv_type_name(HURRAY_KV_INT64), "int64");
    assert_string_equal(hurray_kv_type_name(HURRAY_KV_UINT64), "uint64");
    assert_string_equal(hurray_kv_type_name(HURRAY_KV_FLOAT64), "float64");
    assert_string_equal(hurray_kv_type_name(HURRAY_KV_STRING), "string");
    assert_string_equal(hurray_kv_type_name(HURRAY_KV_BYTES), "bytes");
    assert_string_equal(hurray_kv_type_name(HURRAY_KV_LIST), "list");
    for (unsigned t = 0; t < 256; t++)
        if (t == 0 || t > 7) assert_null(hurray_kv_type_name((uint8_t)t));
}

/* HR-KV-4: int64 and uint64 decode with their own tags (Python reads both as int). */
static void test_HR_KV_4_integer_tags_kept(void **state) {
    (void)state;
    struct hurray_kv_entry e[2] = {entry("a", v_i64(5)), entry("b", v_u64(5))};
    uint8_t buf[CAP];
    struct hurray_kv kv;
    struct hurray_error err;
    size_t len = encode_ok(e, 2, buf);
    assert_status(decode_exact(buf, len, NULL, &kv, &err), HURRAY_OK);
    assert_int_equal(kv.entries[0].value.type, HURRAY_KV_INT64);
    assert_int_equal(kv.entries[1].value.type, HURRAY_KV_UINT64);
    assert_false(hurray_kv_value_equal(&kv.entries[0].value, &kv.entries[1].value));
    hurray_kv_reset(&kv);
}

static void test_HR_KV_7_order_and_duplicates(void **state) {
    (void)state;
    struct hurray_error err;
    uint8_t buf[CAP];
    size_t written = 0;
    /* writer: duplicates refused whatever the order */
    struct hurray_kv_entry dup[3] = {entry("b", v_i64(1)), entry("a", v_i64(2)),
                                     entry("b", v_bool(1))};
    assert_status(hurray_kv_encode(dup, 3, NULL, buf, CAP, &written, &err), HURRAY_E_DUPLICATE);
    assert_hurray_error(&err, HURRAY_E_DUPLICATE, "key");
    /* a prefix sorts first */
    struct hurray_kv_entry pre[3] = {entry("ab", v_i64(1)), entry("b", v_i64(2)),
                                     entry("a", v_i64(3))};
    size_t len = encode_ok(pre, 3, buf);
    assert_int_equal(buf[16], 'a');
    assert_int_equal(buf[16 + 24], 'a');
    assert_int_equal(buf[16 + 24 + 1], 'b');
    /* reader: swap the two entries of the worked example -> SECTION_ORDER */
    uint8_t sw[sizeof WORKED];
    memcpy(sw, WORKED, 8);
    memcpy(sw + 8, WORKED + 32, sizeof WORKED - 32);
    memcpy(sw + 8 + (sizeof WORKED - 32), WORKED + 8, 24);
    expect_decode(sw, sizeof sw, NULL, HURRAY_E_SECTION_ORDER);
    /* two equal keys -> DUPLICATE */
    uint8_t two[8 + 48];
    memcpy(two, WORKED, 8);
    memcpy(two + 8, WORKED + 8, 24);
    memcpy(two + 32, WORKED + 8, 24);
    expect_decode(two, sizeof two, NULL, HURRAY_E_DUPLICATE);
    (void)len;
}

static void test_HR_KV_6_names_and_utf8(void **state) {
    (void)state;
    static const char *bad[] = {
        "\xC0\x80",         /* overlong NUL */
        "\xC1\xBF",         /* overlong */
        "\xE0\x80\xAF",     /* overlong '/' */
        "\xED\xA0\x80",     /* surrogate */
        "\xF4\x90\x80\x80", /* above U+10FFFF */
        "\xE2\x82",         /* truncated */
        "\x80",             /* stray continuation */
        "\xFF",
        "a\xF0\x9D\x84",
    };
    struct hurray_error err;
    uint8_t buf[CAP];
    size_t written = 0;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        struct hurray_kv_entry e = entry(bad[k], v_i64(1));
        assert_status(hurray_kv_encode(&e, 1, NULL, buf, CAP, &written, &err),
                      HURRAY_E_CONSTRAINT);
        struct hurray_kv_entry s = entry("k", v_str(bad[k]));
        assert_status(hurray_kv_encode(&s, 1, NULL, buf, CAP, &written, &err),
                      HURRAY_E_CONSTRAINT);
        /* the reader: the same bytes patched into a valid section */
        struct hurray_kv_entry good = entry("kkkk", v_str("ssss"));
        size_t len = encode_ok(&good, 1, buf);
        size_t n = strlen(bad[k]);
        if (n <= 4) {
            uint8_t key[CAP];
            memcpy(key, buf, len);
            memset(key + 16, 'k', 4);
            memcpy(key + 16, bad[k], n);
            expect_decode(key, len, NULL, HURRAY_E_CONSTRAINT);
            memcpy(key, buf, len);
            memcpy(key + 32, bad[k], n);
            expect_decode(key, len, NULL, HURRAY_E_CONSTRAINT);
        }
    }
    /* U+0000 in a key: CONSTRAINT; in a string value: fine */
    static const char nul_key[] = {'a', 0, 'b'};
    struct hurray_kv_entry e = {nul_key, 3, v_i64(1)};
    assert_status(hurray_kv_encode(&e, 1, NULL, buf, CAP, &written, &err), HURRAY_E_CONSTRAINT);
    /* empty key: CONSTRAINT (writer and reader) */
    struct hurray_kv_entry empty = {"", 0, v_i64(1)};
    assert_status(hurray_kv_encode(&empty, 1, NULL, buf, CAP, &written, &err),
                  HURRAY_E_CONSTRAINT);
    patched(8, 0x00, HURRAY_E_CONSTRAINT);
    /* NFC and NFD spellings are two keys (compared as bytes) */
    struct hurray_kv_entry nf[2] = {entry("\xC3\xA9", v_i64(1)), entry("e\xCC\x81", v_i64(2))};
    round_trip(nf, 2);
}

static void test_HR_KV_3_unknown_value_tags_refused(void **state) {
    (void)state;
    /* entry value tag at 12, list element tags at 56 and 72 */
    for (unsigned t = 0x08; t < 0xFF; t++) {
        patched(12, (uint8_t)t, HURRAY_E_UNSUPPORTED);
        patched(56, (uint8_t)t, HURRAY_E_UNSUPPORTED);
        patched(72, (uint8_t)t, HURRAY_E_UNSUPPORTED);
    }
    patched(12, 0x00, HURRAY_E_INVALID_TAG);
    patched(12, 0xFF, HURRAY_E_INVALID_TAG);
    patched(56, 0x00, HURRAY_E_INVALID_TAG);
    patched(72, 0xFF, HURRAY_E_INVALID_TAG);
    struct hurray_error err;
    uint8_t buf[CAP];
    size_t written = 0;
    struct hurray_kv_value odd;
    memset(&odd, 0, sizeof odd);
    odd.type = 0x08;
    struct hurray_kv_entry e = entry("x", odd);
    assert_status(hurray_kv_encode(&e, 1, NULL, buf, CAP, &written, &err), HURRAY_E_UNSUPPORTED);
}

static void test_HR_KV_8_payload_rules(void **state) {
    (void)state;
    patched(64, 2, HURRAY_E_RANGE);    /* bool byte 2 */
    patched(64, 0xFF, HURRAY_E_RANGE);
    patched(65, 1, HURRAY_E_RESERVED_NONZERO); /* bool reserved */
    patched(13, 1, HURRAY_E_RESERVED_NONZERO); /* entry reserved */
    patched(17, 1, HURRAY_E_RESERVED_NONZERO); /* key padding */
    patched(57, 1, HURRAY_E_RESERVED_NONZERO); /* element reserved */
    patched(90, 1, HURRAY_E_RESERVED_NONZERO); /* string padding */
    struct hurray_error err;
    uint8_t buf[CAP];
    size_t written = 0;
    struct hurray_kv_entry b = entry("x", v_bool(2));
    assert_status(hurray_kv_encode(&b, 1, NULL, buf, CAP, &written, &err), HURRAY_E_RANGE);
}

static void test_HR_KV_9_truncation_and_trailing(void **state) {
    (void)state;
    for (size_t n = 0; n < sizeof WORKED; n++) expect_decode(WORKED, n, NULL, HURRAY_E_TRUNCATED);
    uint8_t longer[sizeof WORKED + 8];
    memcpy(longer, WORKED, sizeof WORKED);
    memset(longer + sizeof WORKED, 0, 8);
    expect_decode(longer, sizeof longer, NULL, HURRAY_E_LENGTH);
    /* lengths and counts that lie: TRUNCATED standalone, before any allocation */
    uint8_t b[sizeof WORKED];
    memcpy(b, WORKED, sizeof b);
    b[0] = 0xFF; b[1] = 0xFF; /* entry_count 65535 <= max_kv_entries */
    expect_decode(b, sizeof b, NULL, HURRAY_E_TRUNCATED);
    memcpy(b, WORKED, sizeof b);
    b[0x55] = 0x80; /* string length 2^40+2 */
    expect_decode(b, sizeof b, NULL, HURRAY_E_TRUNCATED);
    memcpy(b, WORKED, sizeof b);
    b[0x37] = 0x10; /* list count 2^60+2 */
    expect_decode(b, sizeof b, NULL, HURRAY_E_TRUNCATED);
    memcpy(b, WORKED, sizeof b);
    b[0x20] = 0x40; /* key length 64: crosses the end */
    expect_decode(b, sizeof b, NULL, HURRAY_E_TRUNCATED);
}

static void test_HR_KV_9_limits(void **state) {
    (void)state;
    struct hurray_limits lim;
    hurray_limits_default(&lim);
    lim.max_kv_entries = 1;
    expect_decode(WORKED, sizeof WORKED, &lim, HURRAY_E_LIMIT);
    hurray_limits_default(&lim);
    lim.max_kv_bytes = sizeof WORKED - 8;
    expect_decode(WORKED, sizeof WORKED, &lim, HURRAY_E_LIMIT);
    lim.max_kv_bytes = sizeof WORKED;
    expect_decode(WORKED, sizeof WORKED, &lim, HURRAY_OK);
    hurray_limits_default(&lim);
    lim.max_name_bytes = 3;
    expect_decode(WORKED, sizeof WORKED, &lim, HURRAY_E_LIMIT);
    uint8_t b[sizeof WORKED];
    memcpy(b, WORKED, sizeof b);
    b[0] = 0x01; b[1] = 0x00; b[2] = 0x01; /* 65537 entries > 65536 */
    expect_decode(b, sizeof b, NULL, HURRAY_E_LIMIT);

    /* list depth: max_composite_depth */
    struct hurray_kv_value chain[70];
    chain[69] = v_i64(7);
    for (int k = 68; k >= 0; k--) chain[k] = v_list(&chain[k + 1], 1);
    /* chain[69-d] is a list of depth d */
    struct hurray_kv_entry e = entry("deep", chain[69 - 3]);
    uint8_t buf[CAP];
    size_t len = encode_ok(&e, 1, buf);
    hurray_limits_default(&lim);
    lim.max_composite_depth = 3;
    expect_decode(buf, len, &lim, HURRAY_OK);
    lim.max_composite_depth = 2;
    expect_decode(buf, len, &lim, HURRAY_E_LIMIT);
    /* writer: 64 is the format maximum */
    e = entry("deep", chain[69 - 64]);
    len = encode_ok(&e, 1, buf);
    hurray_limits_default(&lim);
    expect_decode(buf, len, &lim, HURRAY_E_LIMIT); /* default reader: 16 */
    lim.max_composite_depth = 64;
    expect_decode(buf, len, &lim, HURRAY_OK);
    e = entry("deep", chain[69 - 65]);
    struct hurray_error err;
    size_t written = 0;
    assert_status(hurray_kv_encode(&e, 1, NULL, buf, CAP, &written, &err), HURRAY_E_LIMIT);
}

static void test_HR_KV_10_encoder_refusals(void **state) {
    (void)state;
    struct hurray_error err;
    uint8_t buf[CAP];
    size_t written = 0;
    uint64_t len = 0;
    struct hurray_kv_entry e = entry("k", v_str("value"));
    assert_status(hurray_kv_encode(&e, 1, NULL, buf, 8, &written, &err), HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "cap");
    struct hurray_kv_entry nul = entry("k", v_blob(HURRAY_KV_BYTES, NULL, 3));
    assert_status(hurray_kv_encode(&nul, 1, NULL, buf, CAP, &written, &err), HURRAY_E_ARGUMENT);
    struct hurray_kv_entry nl = entry("k", v_list(NULL, 2));
    assert_status(hurray_kv_encoded_len(&nl, 1, NULL, &len, &err), HURRAY_E_ARGUMENT);
    char *big = malloc(65537);
    assert_non_null(big);
    memset(big, 'a', 65536);
    big[65536] = 0;
    struct hurray_kv_entry lk = entry(big, v_i64(1));
    assert_status(hurray_kv_encoded_len(&lk, 1, NULL, &len, &err), HURRAY_E_LIMIT);
    big[65535] = 0; /* 65535 bytes: the format maximum */
    lk = entry(big, v_i64(1));
    assert_status(hurray_kv_encoded_len(&lk, 1, NULL, &len, &err), HURRAY_OK);
    assert_int_equal(len, 8 + 8 + 65536 + 8);
    free(big);
    assert_status(hurray_kv_encoded_len(NULL, 1, NULL, &len, &err), HURRAY_E_ARGUMENT);
}

/* Every single-byte change of valid sections either fails with a status or
 * decodes to a map that re-encodes to exactly the changed bytes. */
static void test_HR_KV_9_mutations_are_canonical_or_refused(void **state) {
    (void)state;
    static const uint8_t vals[] = {0x00, 0x01, 0x02, 0x07, 0x08, 0x30, 0x7F, 0x80, 0xC3, 0xFF};
    uint8_t b[sizeof WORKED], again[CAP];
    for (size_t at = 0; at < sizeof WORKED; at++) {
        for (size_t k = 0; k < sizeof vals; k++) {
            struct hurray_kv kv;
            struct hurray_error err;
            memcpy(b, WORKED, sizeof b);
            b[at] = vals[k];
            int st = decode_exact(b, sizeof b, NULL, &kv, &err);
            assert_true(st >= 0 && st < HURRAY_STATUS_COUNT);
            if (st == HURRAY_OK) {
                size_t n = 0;
                assert_status(hurray_kv_encode(kv.entries, kv.count, NULL, again, CAP, &n, &err),
                              HURRAY_OK);
                assert_bytes_equal(again, n, b, sizeof b);
            } else {
                assert_int_equal(err.code, st);
            }
            hurray_kv_reset(&kv);
        }
    }
}

static int sweep_decode(const struct hurray_allocator *a, void *state) {
    (void)state;
    struct hurray_decode_options opt = {NULL, a};
    struct hurray_kv kv;
    hurray_kv_init(&kv);
    int st = hurray_kv_decode(WORKED, sizeof WORKED, &opt, &kv, NULL);
    hurray_kv_reset(&kv);
    return st;
}

static int sweep_encode(const struct hurray_allocator *a, void *state) {
    (void)state;
    struct hurray_kv_value tags[2] = {v_bool(1), v_str("hi")};
    struct hurray_kv_entry e[2] = {entry("tags", v_list(tags, 2)), entry("n", v_i64(42))};
    uint8_t buf[CAP];
    size_t n = 0;
    uint64_t len = 0;
    int st = hurray_kv_encoded_len(e, 2, a, &len, NULL);
    if (st != HURRAY_OK) return st;
    return hurray_kv_encode(e, 2, a, buf, CAP, &n, NULL);
}

static void test_HR_KV_9_nomem_without_leaks(void **state) {
    (void)state;
    assert_true(test_alloc_sweep(sweep_decode, NULL) >= 1);
    assert_true(test_alloc_sweep(sweep_encode, NULL) >= 1);
}

/* HR-KV-12: a status other than OK from the callback stops the walk and is returned; the
 * scratch block is freed; NULL arguments are ARGUMENT. */
static void test_HR_KV_12_each_callback_stops_the_walk(void **state) {
    (void)state;
    struct hurray_kv kv;
    struct hurray_error err;
    assert_status(decode_exact(WORKED, sizeof WORKED, NULL, &kv, &err), HURRAY_OK);
    assert_true(kv.count >= 2);
    struct test_alloc ta;
    test_alloc_init(&ta, 0);
    struct hurray_decode_options opt = {NULL, test_alloc_get(&ta)};
    struct each_seen seen = {&kv, 0, 0};
    assert_status(hurray_kv_decode_each(WORKED, sizeof WORKED, &opt, each_check, &seen, &err),
                  HURRAY_E_ARGUMENT);
    assert_int_equal(seen.calls, 1);
    assert_alloc_clean(&ta);
    assert_status(hurray_kv_decode_each(WORKED, sizeof WORKED, NULL, NULL, NULL, &err),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_kv_decode_each(NULL, 8, NULL, each_check, &seen, &err),
                  HURRAY_E_ARGUMENT);
    hurray_kv_reset(&kv);
}

/* HR-KV-12: what decode_each holds is one entry's values, never the map's: 4,096 entries
 * of a 64-element list each (a 4.3 MB map) are handed over with at most one entry's block
 * live, while hurray_kv_decode's one block holds them all. */
static void test_HR_KV_12_each_holds_one_entry(void **state) {
    (void)state;
    enum { N = 4096, ELEMS = 64 };
    struct hurray_kv_value elems[ELEMS];
    for (unsigned k = 0; k < ELEMS; k++) elems[k] = v_i64((int64_t)k);
    struct hurray_kv_entry *e = calloc(N, sizeof *e);
    char (*keys)[16] = calloc(N, sizeof *keys);
    assert_non_null(e);
    assert_non_null(keys);
    for (unsigned i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "k%07u", i);
        e[i] = entry(keys[i], v_list(elems, ELEMS));
    }
    uint64_t len = 0;
    struct hurray_error err;
    assert_status(hurray_kv_encoded_len(e, N, NULL, &len, &err), HURRAY_OK);
    uint8_t *buf = malloc((size_t)len);
    size_t n = 0;
    assert_non_null(buf);
    assert_status(hurray_kv_encode(e, N, NULL, buf, (size_t)len, &n, &err), HURRAY_OK);
    struct hurray_limits lim;
    hurray_limits_default(&lim);
    struct test_alloc whole, each;
    test_alloc_init(&whole, 0);
    test_alloc_init(&each, 0);
    struct hurray_decode_options opt = {&lim, test_alloc_get(&whole)};
    struct hurray_kv kv;
    hurray_kv_init(&kv);
    assert_status(hurray_kv_decode(buf, n, &opt, &kv, &err), HURRAY_OK);
    opt.allocator = test_alloc_get(&each);
    struct each_seen seen = {&kv, 0, SIZE_MAX};
    assert_status(hurray_kv_decode_each(buf, n, &opt, each_check, &seen, &err), HURRAY_OK);
    assert_int_equal(seen.calls, N);
    size_t one = ELEMS * sizeof(struct hurray_kv_value) + 16; /* the elements, key and NUL */
    assert_true(whole.peak_bytes >= (size_t)N * one);
    assert_true(each.peak_bytes <= one);
    assert_true(each.calls <= 2); /* one scratch block, reused */
    assert_alloc_clean(&each);
    hurray_kv_reset(&kv);
    free(buf);
    free(keys);
    free(e);
}

static int sweep_decode_each(const struct hurray_allocator *a, void *state) {
    (void)state;
    struct hurray_decode_options opt = {NULL, a};
    struct each_seen seen = {NULL, 0, SIZE_MAX};
    return hurray_kv_decode_each(WORKED, sizeof WORKED, &opt, each_check, &seen, NULL);
}

static void test_HR_KV_12_each_nomem_without_leaks(void **state) {
    (void)state;
    assert_true(test_alloc_sweep(sweep_decode_each, NULL) >= 1);
}

static void test_kv_find_and_arguments(void **state) {
    (void)state;
    struct hurray_kv kv;
    struct hurray_error err;
    assert_status(decode_exact(WORKED, sizeof WORKED, NULL, &kv, &err), HURRAY_OK);
    assert_int_equal(hurray_kv_find(&kv, "n", 1), 0);
    assert_int_equal(hurray_kv_find(&kv, "tags", 4), 1);
    assert_int_equal(hurray_kv_find(&kv, "tag", 3), -1);
    assert_int_equal(hurray_kv_find(&kv, "z", 1), -1);
    assert_int_equal(hurray_kv_find(NULL, "n", 1), -1);
    const struct hurray_kv_value *tags = &kv.entries[1].value;
    assert_int_equal(tags->type, HURRAY_KV_LIST);
    assert_int_equal(tags->v.list.count, 2);
    assert_int_equal(tags->v.list.items[0].v.boolean, 1);
    assert_int_equal(tags->v.list.items[1].v.bytes.len, 2);
    assert_memory_equal(tags->v.list.items[1].v.bytes.data, "hi", 2);
    hurray_kv_reset(&kv);
    hurray_kv_reset(NULL);
    assert_status(hurray_kv_decode(WORKED, sizeof WORKED, NULL, NULL, &err), HURRAY_E_ARGUMENT);
}


/* Equality (HR-KV-11): maps by keys (bytes) and values; values by tag, then
 * payload. A tag this library does not know has no payload it could compare:
 * such a value (a caller's own struct) equals nothing, not even itself. */
static void test_HR_KV_11_equality_keys_and_tags(void **state) {
    (void)state;
    struct hurray_kv_entry a[2], b[2];
    memset(a, 0, sizeof a);
    a[0].key = "alpha";
    a[0].key_len = 5;
    a[0].value.type = HURRAY_KV_INT64;
    a[0].value.v.i64 = -3;
    a[1].key = "beta";
    a[1].key_len = 4;
    a[1].value.type = HURRAY_KV_BOOL;
    a[1].value.v.boolean = 1;
    memcpy(b, a, sizeof a);
    assert_true(hurray_kv_entries_equal(a, 2, b, 2));
    assert_false(hurray_kv_entries_equal(a, 2, b, 1));
    b[1].key = "betA"; /* same length, other bytes */
    assert_false(hurray_kv_entries_equal(a, 2, b, 2));
    b[1].key = "bet";
    b[1].key_len = 3;
    assert_false(hurray_kv_entries_equal(a, 2, b, 2));
    memcpy(b, a, sizeof a);
    b[0].value.v.i64 = 3;
    assert_false(hurray_kv_entries_equal(a, 2, b, 2));
    b[0].value.type = HURRAY_KV_UINT64; /* same bits, other tag */
    b[0].value.v.i64 = -3;
    assert_false(hurray_kv_entries_equal(a, 2, b, 2));
    struct hurray_kv_value u, v;
    memset(&u, 0, sizeof u);
    u.type = 0x7E;
    v = u;
    assert_false(hurray_kv_value_equal(&u, &v));
    assert_false(hurray_kv_value_equal(&u, &u));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_KV_5_worked_example_bytes),
        cmocka_unit_test(test_HR_KV_1_round_trip_every_type),
        cmocka_unit_test(test_HR_KV_11_nan_payload_bits_preserved),
        cmocka_unit_test(test_HR_KV_11_equality_keys_and_tags),
        cmocka_unit_test(test_HR_KV_5_empty_map),
        cmocka_unit_test(test_HR_KV_2_type_names),
        cmocka_unit_test(test_HR_KV_4_integer_tags_kept),
        cmocka_unit_test(test_HR_KV_7_order_and_duplicates),
        cmocka_unit_test(test_HR_KV_6_names_and_utf8),
        cmocka_unit_test(test_HR_KV_3_unknown_value_tags_refused),
        cmocka_unit_test(test_HR_KV_8_payload_rules),
        cmocka_unit_test(test_HR_KV_9_truncation_and_trailing),
        cmocka_unit_test(test_HR_KV_9_limits),
        cmocka_unit_test(test_HR_KV_10_encoder_refusals),
        cmocka_unit_test(test_HR_KV_9_mutations_are_canonical_or_refused),
        cmocka_unit_test(test_HR_KV_9_nomem_without_leaks),
        cmocka_unit_test(test_HR_KV_12_each_callback_stops_the_walk),
        cmocka_unit_test(test_HR_KV_12_each_holds_one_entry),
        cmocka_unit_test(test_HR_KV_12_each_nomem_without_leaks),
        cmocka_unit_test(test_kv_find_and_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
