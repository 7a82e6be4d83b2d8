/* Optional sections (sections.c). docs/spec/sections.md */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "internal.h"
#include "test_support.h"

#define DYN HURRAY_DYNAMIC_DIM

/* ---- section types (HR-SECT-1 … 4) ------------------------------------------- */

static void test_HR_SECT_4_type_kinds(void **state) {
    (void)state;
    static const char *const names[] = {NULL, "quantization", "statistics", "shard",
                                        "member_role"};
    int counts[5] = {0};
    for (unsigned t = 0; t < 256; t++) {
        int kind = hurray_section_type_kind((uint8_t)t);
        counts[kind]++;
        if (t == 0 || t == 0xFF) {
            assert_int_equal(kind, HURRAY_TAG_INVALID);
            assert_null(hurray_section_name((uint8_t)t));
        } else if (t <= 4) {
            assert_int_equal(kind, HURRAY_TAG_NAMED);
            assert_string_equal(hurray_section_name((uint8_t)t), names[t]);
        } else if (t >= 0xF0) {
            assert_int_equal(kind, HURRAY_TAG_PRIVATE);
            assert_null(hurray_section_name((uint8_t)t));
        } else {
            assert_int_equal(kind, HURRAY_TAG_RESERVED);
            assert_null(hurray_section_name((uint8_t)t));
        }
    }
    assert_int_equal(counts[HURRAY_TAG_NAMED], 4);
    assert_int_equal(counts[HURRAY_TAG_PRIVATE], 15);
    assert_int_equal(counts[HURRAY_TAG_RESERVED], 256 - 4 - 15 - 2);
}

static void test_HR_SECT_2_payload_lengths(void **state) {
    (void)state;
    assert_int_equal(hri_statistics_length(), 32);
    assert_int_equal(hri_role_length(), 8);
    for (unsigned rank = 0; rank <= 255; rank++)
        assert_int_equal(hri_shard_length((uint8_t)rank), 8 + 16 * rank);
}

/* ---- member role (HR-ROLE-1) ------------------------------------------------- */

static int read_role(const uint8_t *p, size_t n, uint8_t *role, struct hurray_error *err) {
    struct hri_cursor c;
    hri_cursor_init(&c, p, n, HURRAY_E_LENGTH);
    return hri_role_read(&c, role, err);
}

static void test_HR_ROLE_1_tags(void **state) {
    (void)state;
    assert_string_equal(hurray_member_role_name(1), "base");
    assert_string_equal(hurray_member_role_name(2), "correction");
    for (unsigned t = 0; t < 256; t++) {
        int want = (t == 1 || t == 2)          ? HURRAY_OK
                   : (t == 0x00 || t == 0xFF) ? HURRAY_E_INVALID_TAG
                                              : HURRAY_E_RESERVED_TAG; /* no private range */
        struct hurray_error err;
        test_error_poison(&err);
        assert_status(hurray_member_role_check((uint8_t)t, &err), want);
        if (want != HURRAY_OK) {
            assert_hurray_error(&err, want, "member_role.role");
            assert_null(hurray_member_role_name((uint8_t)t));
        }
        uint8_t b[8] = {(uint8_t)t, 0, 0, 0, 0, 0, 0, 0};
        uint8_t role = 0;
        assert_status(read_role(b, 8, &role, NULL), want);
    }
}

static void test_HR_ROLE_1_bytes(void **state) {
    (void)state;
    for (uint8_t r = 1; r <= 2; r++) {
        uint8_t out[8];
        struct hri_writer w;
        hri_writer_init(&w, out, sizeof out);
        hri_role_write(&w, r);
        const uint8_t want[8] = {r, 0, 0, 0, 0, 0, 0, 0};
        assert_bytes_equal(out, w.pos, want, 8);
        uint8_t back = 0;
        assert_status(read_role(out, 8, &back, NULL), HURRAY_OK);
        assert_int_equal(back, r);
    }
    for (int pos = 1; pos < 8; pos++) {
        uint8_t b[8] = {1, 0, 0, 0, 0, 0, 0, 0};
        b[pos] = 0x40;
        uint8_t role;
        struct hurray_error err;
        test_error_poison(&err);
        assert_status(read_role(b, 8, &role, &err), HURRAY_E_RESERVED_NONZERO);
        assert_hurray_error(&err, HURRAY_E_RESERVED_NONZERO, "member_role.reserved");
        assert_true(err.offset == (uint64_t)pos);
    }
    uint8_t b[16] = {1};
    uint8_t role;
    for (size_t n = 0; n < sizeof b; n++) {
        struct hurray_error err;
        test_error_poison(&err);
        int st = read_role(b, n, &role, &err);
        if (n == 8) {
            assert_status(st, HURRAY_OK);
        } else {
            assert_status(st, HURRAY_E_LENGTH);
            assert_hurray_error(&err, HURRAY_E_LENGTH, "member_role.length");
        }
    }
}

/* ---- statistics (HR-STAT-1) -------------------------------------------------- */

static struct hurray_statistics stats(uint8_t flags, double min, double max, uint64_t nans) {
    struct hurray_statistics s;
    memset(&s, 0, sizeof s);
    s.flags = flags;
    s.min = min;
    s.max = max;
    s.nan_count = nans;
    return s;
}

static size_t write_stats(const struct hurray_statistics *s, uint8_t out[32]) {
    struct hri_writer w;
    hri_writer_init(&w, out, 32);
    hri_statistics_write(&w, s);
    assert_false(w.overflowed);
    return w.pos;
}

static int read_stats(const uint8_t *p, size_t n, struct hurray_statistics *out,
                      struct hurray_error *err) {
    struct hri_cursor c;
    hri_cursor_init(&c, p, n, HURRAY_E_LENGTH);
    return hri_statistics_read(&c, out, err);
}

static void expect_stats(const struct hurray_statistics *s, uint64_t n, int code,
                         const char *field) {
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_statistics_check(s, n, &err), code);
    if (code != HURRAY_OK) assert_hurray_error(&err, code, field);
}

/* descriptor.md § Worked example: min −1.5, max 2.0. */
static void test_HR_STAT_1_bytes(void **state) {
    (void)state;
    struct hurray_statistics s = stats(HURRAY_STATS_HAS_MIN_MAX, -1.5, 2.0, 0);
    const uint8_t want[32] = {0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xF8, 0xBF,
                              0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0};
    uint8_t out[32];
    size_t n = write_stats(&s, out);
    assert_bytes_equal(out, n, want, sizeof want);
    struct hurray_statistics back;
    assert_status(read_stats(out, n, &back, NULL), HURRAY_OK);
    assert_true(hurray_statistics_equal(&s, &back));
    assert_status(hurray_statistics_check(&back, 6, NULL), HURRAY_OK);
}

static void test_HR_STAT_1_round_trips(void **state) {
    (void)state;
    const struct hurray_statistics cases[] = {
        stats(1, -INFINITY, INFINITY, 0), stats(1, 3.0, 3.0, 0), stats(2, 0, 0, 0),
        stats(2, 0, 0, UINT64_MAX), stats(3, -0.0, 0.0, 7), stats(3, 1e-300, 1e300, 1),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t a[32], b[32];
        size_t n = write_stats(&cases[i], a);
        assert_int_equal(n, 32);
        struct hurray_statistics back;
        assert_status(read_stats(a, n, &back, NULL), HURRAY_OK);
        assert_true(hurray_statistics_equal(&cases[i], &back));
        size_t m = write_stats(&back, b);
        assert_bytes_equal(b, m, a, n);
        assert_status(hurray_statistics_check(&back, UINT64_MAX, NULL), HURRAY_OK);
    }
}

static void test_HR_STAT_1_length(void **state) {
    (void)state;
    uint8_t b[40] = {1};
    for (size_t n = 0; n < sizeof b; n++) {
        struct hurray_statistics s;
        struct hurray_error err;
        test_error_poison(&err);
        int st = read_stats(b, n, &s, &err);
        if (n == 32) {
            assert_status(st, HURRAY_OK);
        } else {
            assert_status(st, HURRAY_E_LENGTH);
            assert_hurray_error(&err, HURRAY_E_LENGTH, "statistics.length");
        }
    }
}

static void test_HR_STAT_1_reserved(void **state) {
    (void)state;
    for (unsigned bit = 2; bit < 8; bit++) {
        struct hurray_statistics s = stats((uint8_t)(1u | (1u << bit)), 0, 1, 0);
        expect_stats(&s, 10, HURRAY_E_RESERVED_NONZERO, "statistics.flags");
        uint8_t b[32];
        write_stats(&s, b);
        struct hurray_statistics back;
        assert_status(read_stats(b, 32, &back, NULL), HURRAY_E_RESERVED_NONZERO);
    }
    struct hurray_statistics s = stats(1, 0, 1, 0);
    uint8_t good[32];
    write_stats(&s, good);
    for (int pos = 1; pos < 8; pos++) {
        uint8_t b[32];
        memcpy(b, good, 32);
        b[pos] = 1;
        struct hurray_statistics back;
        struct hurray_error err;
        test_error_poison(&err);
        assert_status(read_stats(b, 32, &back, &err), HURRAY_E_RESERVED_NONZERO);
        assert_hurray_error(&err, HURRAY_E_RESERVED_NONZERO, "statistics.reserved");
        assert_true(err.offset == (uint64_t)pos);
    }
}

/* A field whose flag is clear MUST be all-zero bytes (−0.0 is not). */
static void test_HR_STAT_1_absent_fields_zero(void **state) {
    (void)state;
    const struct {
        struct hurray_statistics s;
        const char *field;
    } cases[] = {
        {stats(2, -0.0, 0, 0), "statistics.min"},
        {stats(2, 0, 1.0, 0), "statistics.max"},
        {stats(2, 0, NAN, 0), "statistics.max"},
        {stats(1, 0, 1, 1), "statistics.nan_count"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        expect_stats(&cases[i].s, 10, HURRAY_E_RESERVED_NONZERO, cases[i].field);
        uint8_t b[32];
        write_stats(&cases[i].s, b);
        struct hurray_statistics back;
        struct hurray_error err;
        test_error_poison(&err);
        assert_status(read_stats(b, 32, &back, &err), HURRAY_E_RESERVED_NONZERO);
        assert_hurray_error(&err, HURRAY_E_RESERVED_NONZERO, cases[i].field);
    }
}

static void test_HR_STAT_1_values(void **state) {
    (void)state;
    struct hurray_statistics s = stats(0, 0, 0, 0);
    expect_stats(&s, 10, HURRAY_E_CONSTRAINT, "statistics.flags");
    /* flags = 0 reads (it is a value rule, checked with N). */
    uint8_t b[32];
    write_stats(&s, b);
    struct hurray_statistics back;
    assert_status(read_stats(b, 32, &back, NULL), HURRAY_OK);
    s = stats(1, NAN, 1, 0);
    expect_stats(&s, 10, HURRAY_E_CONSTRAINT, "statistics.min");
    s = stats(1, 0, -NAN, 0);
    expect_stats(&s, 10, HURRAY_E_CONSTRAINT, "statistics.max");
    s = stats(1, 2, 1, 0);
    expect_stats(&s, 10, HURRAY_E_CONSTRAINT, "statistics.min");
    s = stats(1, INFINITY, -INFINITY, 0);
    expect_stats(&s, 10, HURRAY_E_CONSTRAINT, "statistics.min");
    s = stats(1, -0.0, 0.0, 0); /* equal by value */
    expect_stats(&s, 10, HURRAY_OK, NULL);
    s = stats(2, 0, 0, 10);
    expect_stats(&s, 10, HURRAY_OK, NULL);
    s = stats(2, 0, 0, 11);
    expect_stats(&s, 10, HURRAY_E_CONSTRAINT, "statistics.nan_count");
    expect_stats(&s, 0, HURRAY_E_CONSTRAINT, "statistics.nan_count");
    expect_stats(&s, UINT64_MAX, HURRAY_OK, NULL); /* N unknown */
    assert_status(hurray_statistics_check(NULL, 0, NULL), HURRAY_E_ARGUMENT);
}

static void test_HR_STAT_1_equality(void **state) {
    (void)state;
    struct hurray_statistics a = stats(3, -1, 1, 2), b = stats(3, -1, 1, 2);
    assert_true(hurray_statistics_equal(&a, &b));
    b.nan_count = 3;
    assert_false(hurray_statistics_equal(&a, &b));
    b = a;
    b.max = 2;
    assert_false(hurray_statistics_equal(&a, &b));
    b = a;
    b.flags = 1;
    assert_false(hurray_statistics_equal(&a, &b));
    a.min = b.min = NAN;
    assert_false(hurray_statistics_equal(&a, &a));
    a = stats(1, 0.0, 1, 0);
    b = stats(1, -0.0, 1, 0);
    assert_true(hurray_statistics_equal(&a, &b)); /* floats by value */
    assert_false(hurray_statistics_equal(&a, NULL));
}

/* ---- shard (HR-SHARD-1) ------------------------------------------------------- */

/* A caller-built shard borrows its two spans from the caller's arrays. Here
 * shard() points them at zeroed arrays from a pool the test owns (reused
 * round-robin), which the tests fill through W_U64(span): the test's own
 * memory, seen as the shard's read-only span. */
#define POOL_SLOTS 64
static uint64_t pool[POOL_SLOTS][2][HURRAY_MAX_RANK];
static unsigned pool_next;

static uint64_t (*pool_slot(void))[HURRAY_MAX_RANK] {
    uint64_t(*a)[HURRAY_MAX_RANK] = pool[pool_next++ % POOL_SLOTS];
    memset(a, 0, sizeof pool[0]);
    return a;
}

#define W_U64(span) ((uint64_t *)(uintptr_t)(span))

static struct hurray_shard shard(uint32_t index, uint32_t count) {
    struct hurray_shard s;
    uint64_t(*a)[HURRAY_MAX_RANK] = pool_slot();
    memset(&s, 0, sizeof s);
    s.shard_index = index;
    s.shard_count = count;
    s.global_shape = a[0];
    s.global_offset = a[1];
    return s;
}

static int read_shard(const uint8_t *p, size_t n, uint8_t rank, struct hurray_shard *out,
                      struct hurray_error *err) {
    struct hri_cursor c;
    uint64_t(*a)[HURRAY_MAX_RANK] = pool_slot();
    hri_cursor_init(&c, p, n, HURRAY_E_LENGTH);
    return hri_shard_read(&c, rank, out, a[0], a[1], err);
}

static size_t write_shard(const struct hurray_shard *s, uint8_t rank, uint8_t *out, size_t cap) {
    struct hri_writer w;
    hri_writer_init(&w, out, cap);
    hri_shard_write(&w, s, rank);
    assert_false(w.overflowed);
    return w.pos;
}

static void expect_shard(const struct hurray_shard *s, uint8_t rank, const uint64_t *shape,
                         int code, const char *field) {
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_shard_check(s, rank, shape, &err), code);
    if (code != HURRAY_OK) assert_hurray_error(&err, code, field);
}

static void test_HR_SHARD_1_bytes(void **state) {
    (void)state;
    struct hurray_shard s = shard(1, 4);
    W_U64(s.global_shape)[0] = 8;
    W_U64(s.global_shape)[1] = 3;
    W_U64(s.global_offset)[0] = 2;
    const uint8_t want[40] = {1, 0, 0, 0, 4, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0,
                              0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    uint8_t out[64];
    size_t n = write_shard(&s, 2, out, sizeof out);
    assert_bytes_equal(out, n, want, sizeof want);
}

static void test_HR_SHARD_1_round_trips(void **state) {
    (void)state;
    for (unsigned rank = 0; rank <= HURRAY_MAX_RANK; rank++) {
        struct hurray_shard s = shard(rank, rank + 1);
        for (unsigned k = 0; k < rank; k++) {
            W_U64(s.global_shape)[k] = (uint64_t)k * 1000003u + 7;
            W_U64(s.global_offset)[k] = k;
        }
        uint8_t a[8 + 16 * 64], b[8 + 16 * 64];
        size_t n = write_shard(&s, (uint8_t)rank, a, sizeof a);
        assert_int_equal(n, hri_shard_length((uint8_t)rank));
        struct hurray_shard back;
        assert_status(read_shard(a, n, (uint8_t)rank, &back, NULL), HURRAY_OK);
        assert_true(hurray_shard_equal(&s, &back, (uint8_t)rank));
        size_t m = write_shard(&back, (uint8_t)rank, b, sizeof b);
        assert_bytes_equal(b, m, a, n);
        struct hurray_error err;
        test_error_poison(&err);
        assert_status(read_shard(a, n - 1, (uint8_t)rank, &back, &err), HURRAY_E_LENGTH);
        assert_hurray_error(&err, HURRAY_E_LENGTH, "shard.length");
        assert_status(read_shard(a, n + (n < sizeof a ? 1 : 0), (uint8_t)rank, &back, NULL),
                      n < sizeof a ? HURRAY_E_LENGTH : HURRAY_OK);
    }
    uint8_t z[8] = {0};
    struct hurray_shard back;
    assert_status(read_shard(z, 8, 65, &back, NULL), HURRAY_E_LIMIT);
    struct hri_writer w;
    uint8_t out[8];
    hri_writer_init(&w, out, sizeof out);
    struct hurray_shard s = shard(0, 1);
    hri_shard_write(&w, &s, 65);
    assert_true(w.overflowed);
}

static void test_HR_SHARD_1_index_and_count(void **state) {
    (void)state;
    const uint64_t shape[1] = {4};
    struct hurray_shard s = shard(0, 0);
    W_U64(s.global_shape)[0] = 8;
    expect_shard(&s, 1, shape, HURRAY_E_CONSTRAINT, "shard.shard_count");
    s.shard_count = 2;
    expect_shard(&s, 1, shape, HURRAY_OK, NULL);
    s.shard_index = 1;
    expect_shard(&s, 1, shape, HURRAY_OK, NULL);
    s.shard_index = 2;
    expect_shard(&s, 1, shape, HURRAY_E_CONSTRAINT, "shard.shard_index");
    s.shard_index = UINT32_MAX;
    s.shard_count = UINT32_MAX;
    expect_shard(&s, 1, shape, HURRAY_E_CONSTRAINT, "shard.shard_index");
    struct hurray_shard r = shard(0, 1);
    expect_shard(&r, 0, NULL, HURRAY_OK, NULL);
}

static void test_HR_SHARD_1_global_shape(void **state) {
    (void)state;
    const uint64_t shape[2] = {4, 4};
    struct hurray_shard s = shard(0, 1);
    W_U64(s.global_shape)[0] = 8;
    W_U64(s.global_shape)[1] = DYN;
    expect_shard(&s, 2, shape, HURRAY_E_RANGE, "shard.global_shape[1]");
    W_U64(s.global_shape)[1] = (uint64_t)INT64_MAX + 1;
    expect_shard(&s, 2, shape, HURRAY_E_RANGE, "shard.global_shape[1]");
    W_U64(s.global_shape)[1] = INT64_MAX;
    expect_shard(&s, 2, shape, HURRAY_OK, NULL);
    /* Global extents beyond the rank are not looked at. */
    W_U64(s.global_shape)[2] = DYN;
    expect_shard(&s, 2, shape, HURRAY_OK, NULL);
}

static void test_HR_SHARD_1_box(void **state) {
    (void)state;
    uint64_t shape[2] = {4, 3};
    /* The spans must be there for the rank: NULL is refused, never read. */
    struct hurray_shard none = {0, 1, NULL, NULL};
    expect_shard(&none, 2, shape, HURRAY_E_ARGUMENT, "shard");
    expect_shard(&none, 0, NULL, HURRAY_OK, NULL);
    assert_false(hurray_shard_equal(&none, &none, 2));
    assert_true(hurray_shard_equal(&none, &none, 0));
    struct hurray_shard s = shard(0, 1);
    W_U64(s.global_shape)[0] = 8;
    W_U64(s.global_shape)[1] = 3;
    W_U64(s.global_offset)[0] = 4;
    expect_shard(&s, 2, shape, HURRAY_OK, NULL); /* exact fit */
    W_U64(s.global_offset)[0] = 5;
    expect_shard(&s, 2, shape, HURRAY_E_CONSTRAINT, "shard.global_offset[0]");
    W_U64(s.global_offset)[0] = 0;
    W_U64(s.global_offset)[1] = 1;
    expect_shard(&s, 2, shape, HURRAY_E_CONSTRAINT, "shard.global_offset[1]");
    /* offset + extent beyond 2^64-1: checked add. */
    W_U64(s.global_offset)[1] = UINT64_MAX - 1;
    expect_shard(&s, 2, shape, HURRAY_E_CONSTRAINT, "shard.global_offset[1]");
    /* A dynamic local extent skips its dimension. */
    shape[1] = DYN;
    expect_shard(&s, 2, shape, HURRAY_OK, NULL);
    /* Zero extents. */
    shape[1] = 0;
    W_U64(s.global_offset)[1] = 3;
    expect_shard(&s, 2, shape, HURRAY_OK, NULL);
    W_U64(s.global_offset)[1] = 4;
    expect_shard(&s, 2, shape, HURRAY_E_CONSTRAINT, "shard.global_offset[1]");
    /* Order: index/count, then every global extent, then the box. */
    W_U64(s.global_shape)[1] = DYN;
    expect_shard(&s, 2, shape, HURRAY_E_RANGE, "shard.global_shape[1]");
    s.shard_count = 0;
    expect_shard(&s, 2, shape, HURRAY_E_CONSTRAINT, "shard.shard_count");
    assert_status(hurray_shard_check(NULL, 0, NULL, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_shard_check(&s, 2, NULL, NULL), HURRAY_E_ARGUMENT);
    uint64_t big[65] = {0};
    struct hurray_shard t = shard(0, 1);
    assert_status(hurray_shard_check(&t, 65, big, NULL), HURRAY_E_LIMIT);
}

static void test_HR_SHARD_1_equality(void **state) {
    (void)state;
    struct hurray_shard a = shard(1, 2), b = shard(1, 2);
    W_U64(a.global_shape)[0] = W_U64(b.global_shape)[0] = 5;
    W_U64(a.global_shape)[3] = 9; /* beyond rank 1 */
    assert_true(hurray_shard_equal(&a, &b, 1));
    assert_false(hurray_shard_equal(&a, &b, 4));
    W_U64(b.global_offset)[0] = 1;
    assert_false(hurray_shard_equal(&a, &b, 1));
    b = a;
    b.shard_count = 3;
    assert_false(hurray_shard_equal(&a, &b, 0));
    b = a;
    b.shard_index = 0;
    assert_false(hurray_shard_equal(&a, &b, 0));
    assert_true(hurray_shard_equal(&a, &a, 255)); /* clamped, never out of bounds */
    assert_false(hurray_shard_equal(&a, NULL, 0));
}

/* ---- robustness -------------------------------------------------------------------- */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Conventions § Canonical form on random payloads: whatever reads OK writes
 * back byte-identically; reads stay inside their exact-size buffer. */
static void test_HR_SECT_2_random_payloads_canonical(void **state) {
    (void)state;
    int ok[3] = {0, 0, 0};
    for (int iter = 0; iter < 30000; iter++) {
        int kind = iter % 3;
        uint8_t rank = (uint8_t)(rng() % 6);
        size_t want = kind == 0 ? 32 : kind == 1 ? hri_shard_length(rank) : 8;
        size_t n = rng() % 8 ? want : rng() % 120;
        uint8_t *b = test_malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rng();
            b[i] = (uint8_t)(r % 4 ? 0 : (r % 3 ? (r >> 8) % 4 : r >> 16));
        }
        if (n && kind != 1) b[0] = (uint8_t)(rng() % 16 ? rng() % 4 : rng());
        uint8_t out[8 + 16 * 64];
        struct hri_writer w;
        hri_writer_init(&w, out, sizeof out);
        struct hri_cursor c;
        hri_cursor_init(&c, b, n, HURRAY_E_LENGTH);
        struct hurray_error err;
        int st;
        if (kind == 0) {
            struct hurray_statistics s;
            st = hri_statistics_read(&c, &s, &err);
            if (st == HURRAY_OK) {
                hri_statistics_write(&w, &s);
                int v = hurray_statistics_check(&s, rng() % 3 ? rng() % 8 : UINT64_MAX, NULL);
                assert_true(v >= 0 && v < HURRAY_STATUS_COUNT);
            }
        } else if (kind == 1) {
            struct hurray_shard s;
            st = hri_shard_read(&c, rank, &s, pool_slot()[0], pool_slot()[1], &err);
            if (st == HURRAY_OK) {
                hri_shard_write(&w, &s, rank);
                uint64_t shape[5] = {rng() % 4, DYN, rng() % 9, 1, 0};
                int v = hurray_shard_check(&s, rank, shape, NULL);
                assert_true(v >= 0 && v < HURRAY_STATUS_COUNT);
            }
        } else {
            uint8_t role;
            st = hri_role_read(&c, &role, &err);
            if (st == HURRAY_OK) hri_role_write(&w, role);
        }
        if (st == HURRAY_OK) {
            ok[kind]++;
            assert_bytes_equal(out, w.pos, b, n);
        } else {
            assert_true(err.message[0] != '\0');
        }
        test_free(b);
    }
    assert_true(ok[0] > 100 && ok[1] > 100 && ok[2] > 100);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_SECT_4_type_kinds),
        cmocka_unit_test(test_HR_SECT_2_payload_lengths),
        cmocka_unit_test(test_HR_ROLE_1_tags),
        cmocka_unit_test(test_HR_ROLE_1_bytes),
        cmocka_unit_test(test_HR_STAT_1_bytes),
        cmocka_unit_test(test_HR_STAT_1_round_trips),
        cmocka_unit_test(test_HR_STAT_1_length),
        cmocka_unit_test(test_HR_STAT_1_reserved),
        cmocka_unit_test(test_HR_STAT_1_absent_fields_zero),
        cmocka_unit_test(test_HR_STAT_1_values),
        cmocka_unit_test(test_HR_STAT_1_equality),
        cmocka_unit_test(test_HR_SHARD_1_bytes),
        cmocka_unit_test(test_HR_SHARD_1_round_trips),
        cmocka_unit_test(test_HR_SHARD_1_index_and_count),
        cmocka_unit_test(test_HR_SHARD_1_global_shape),
        cmocka_unit_test(test_HR_SHARD_1_box),
        cmocka_unit_test(test_HR_SHARD_1_equality),
        cmocka_unit_test(test_HR_SECT_2_random_payloads_canonical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
