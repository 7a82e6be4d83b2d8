/* Status codes, error records, limits (status.c). errors-and-limits.md */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>

#include "internal.h"
#include "test_support.h"

/* errors-and-limits.md § Status codes, transcribed independently. */
static const struct {
    int value;
    const char *name;
    const char *stage;
} spec_status[] = {
    {0, "OK", ""},
    {1, "TRUNCATED", "malformed"},
    {2, "BAD_MAGIC", "malformed"},
    {3, "VERSION", "unsupported"},
    {4, "RESERVED_NONZERO", "malformed"},
    {5, "INVALID_TAG", "malformed"},
    {6, "RESERVED_TAG", "unsupported"},
    {7, "LENGTH", "malformed"},
    {8, "OVERFLOW", "invalid"},
    {9, "LIMIT", "limit"},
    {10, "RANGE", "invalid"},
    {11, "CONSTRAINT", "invalid"},
    {12, "COMBINATION", "invalid"},
    {13, "BUFFER_COUNT", "invalid"},
    {14, "BUFFER_SIZE", "invalid"},
    {15, "ALIGNMENT", "invalid"},
    {16, "SECTION_ORDER", "malformed"},
    {17, "INDEX", "invalid"},
    {18, "DUPLICATE", "invalid"},
    {19, "UNSUPPORTED", "unsupported"},
    {20, "ARGUMENT", "api"},
    {21, "NOMEM", "resource"},
    {22, "IO", "resource"},
    {23, "INTERNAL", "internal"},
    {24, "OFFSET", "invalid"},
    {25, "OVERLAP", "invalid"},
};
#define SPEC_STATUS_COUNT (sizeof spec_status / sizeof spec_status[0])

/* HR-ERR-1: every pinned value has the spec's name and stage. */
static void test_HR_ERR_1_status_table(void **state) {
    (void)state;
    assert_int_equal(SPEC_STATUS_COUNT, HURRAY_STATUS_COUNT);
    for (size_t i = 0; i < SPEC_STATUS_COUNT; i++) {
        assert_int_equal(spec_status[i].value, (int)i);
        assert_string_equal(hurray_status_name(spec_status[i].value), spec_status[i].name);
        assert_string_equal(hurray_status_stage(spec_status[i].value), spec_status[i].stage);
    }
}

/* The enum constants carry the pinned values. */
static void test_HR_ERR_1_enum_values_pinned(void **state) {
    (void)state;
    const int values[] = {
        HURRAY_OK, HURRAY_E_TRUNCATED, HURRAY_E_BAD_MAGIC, HURRAY_E_VERSION,
        HURRAY_E_RESERVED_NONZERO, HURRAY_E_INVALID_TAG, HURRAY_E_RESERVED_TAG,
        HURRAY_E_LENGTH, HURRAY_E_OVERFLOW, HURRAY_E_LIMIT, HURRAY_E_RANGE,
        HURRAY_E_CONSTRAINT, HURRAY_E_COMBINATION, HURRAY_E_BUFFER_COUNT,
        HURRAY_E_BUFFER_SIZE, HURRAY_E_ALIGNMENT, HURRAY_E_SECTION_ORDER, HURRAY_E_INDEX,
        HURRAY_E_DUPLICATE, HURRAY_E_UNSUPPORTED, HURRAY_E_ARGUMENT, HURRAY_E_NOMEM,
        HURRAY_E_IO, HURRAY_E_INTERNAL, HURRAY_E_OFFSET, HURRAY_E_OVERLAP,
    };
    assert_int_equal(sizeof values / sizeof values[0], HURRAY_STATUS_COUNT);
    for (int i = 0; i < HURRAY_STATUS_COUNT; i++) {
        assert_int_equal(values[i], i);
        assert_string_equal(hurray_status_name(values[i]), spec_status[i].name);
    }
}

static void test_status_names_unique(void **state) {
    (void)state;
    for (int i = 0; i < HURRAY_STATUS_COUNT; i++)
        for (int j = i + 1; j < HURRAY_STATUS_COUNT; j++)
            assert_string_not_equal(hurray_status_name(i), hurray_status_name(j));
}

static void test_status_from_name_is_inverse(void **state) {
    (void)state;
    for (int i = 0; i < HURRAY_STATUS_COUNT; i++)
        assert_int_equal(hurray_status_from_name(hurray_status_name(i)), i);
}

static void test_status_from_name_unknown(void **state) {
    (void)state;
    assert_int_equal(hurray_status_from_name(NULL), -1);
    assert_int_equal(hurray_status_from_name(""), -1);
    assert_int_equal(hurray_status_from_name("UNKNOWN"), -1);
    assert_int_equal(hurray_status_from_name("ok"), -1);          /* case-sensitive */
    assert_int_equal(hurray_status_from_name("TRUNCATED "), -1);  /* exact */
    assert_int_equal(hurray_status_from_name("TRUNCATE"), -1);
    assert_int_equal(hurray_status_from_name("HURRAY_E_TRUNCATED"), -1);
}

static void test_status_name_out_of_range(void **state) {
    (void)state;
    const int bad[] = {-1, HURRAY_STATUS_COUNT, HURRAY_STATUS_COUNT + 1, 1000, INT_MAX,
                       INT_MIN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_string_equal(hurray_status_name(bad[i]), "UNKNOWN");
        assert_string_equal(hurray_status_stage(bad[i]), "unknown");
    }
}

/* Only OK has the empty stage; every failure has one of the named stages. */
static void test_status_stages_known(void **state) {
    (void)state;
    static const char *const stages[] = {"malformed", "invalid", "limit", "unsupported",
                                         "api", "resource", "internal"};
    assert_string_equal(hurray_status_stage(HURRAY_OK), "");
    for (int i = 1; i < HURRAY_STATUS_COUNT; i++) {
        int found = 0;
        for (size_t s = 0; s < sizeof stages / sizeof stages[0]; s++)
            found |= strcmp(hurray_status_stage(i), stages[s]) == 0;
        assert_true(found);
    }
}

/* ---- error records --------------------------------------------------------- */

static void test_error_clear(void **state) {
    (void)state;
    struct hurray_error err;
    test_error_poison(&err);
    err.has_offset = 1;
    hurray_error_clear(&err);
    assert_int_equal(err.code, HURRAY_OK);
    assert_int_equal(err.has_offset, 0);
    assert_true(err.offset == 0);
    assert_string_equal(err.field, "");
    assert_string_equal(err.message, "");
    hurray_error_clear(NULL); /* NULL-tolerant */
}

static void test_error_fail_fills_record(void **state) {
    (void)state;
    struct hurray_error err;
    test_error_poison(&err);
    int st = hri_fail(&err, HURRAY_E_RANGE, "shape[2]", "shape[2]: %d is too large", 7);
    assert_status(st, HURRAY_E_RANGE);
    assert_hurray_error(&err, HURRAY_E_RANGE, "shape[2]");
    assert_string_equal(err.field, "shape[2]");
    assert_string_equal(err.message, "shape[2]: 7 is too large");
    assert_int_equal(err.has_offset, 0);
}

static void test_error_fail_at_records_offset(void **state) {
    (void)state;
    struct hurray_error err;
    test_error_poison(&err);
    int st = hri_fail_at(&err, HURRAY_E_LENGTH, UINT64_C(0x123456789), "buffers[1].size",
                         "buffers[1].size: bad");
    assert_status(st, HURRAY_E_LENGTH);
    assert_hurray_error(&err, HURRAY_E_LENGTH, "buffers[1].size");
    assert_int_equal(err.has_offset, 1);
    assert_true(err.offset == UINT64_C(0x123456789));
    /* A later hri_fail clears the offset again. */
    (void)hri_fail(&err, HURRAY_E_RANGE, "x", "x");
    assert_int_equal(err.has_offset, 0);
    assert_true(err.offset == 0);
}

static void test_error_null_record_tolerated(void **state) {
    (void)state;
    assert_status(hri_fail(NULL, HURRAY_E_LIMIT, "f", "m %d", 1), HURRAY_E_LIMIT);
    assert_status(hri_fail_at(NULL, HURRAY_E_OFFSET, 9, "f", "m"), HURRAY_E_OFFSET);
    assert_status(hri_check_tag_kind(HURRAY_TAG_INVALID, 0x00, 1, "dtype", NULL),
                  HURRAY_E_INVALID_TAG);
}

static void test_error_null_field_is_empty(void **state) {
    (void)state;
    struct hurray_error err;
    test_error_poison(&err);
    (void)hri_fail(&err, HURRAY_E_INTERNAL, NULL, "message");
    assert_string_equal(err.field, "");
    assert_string_equal(err.message, "message");
}

/* Over-long fields and messages are truncated, always NUL-terminated. */
static void test_error_truncates_long_text(void **state) {
    (void)state;
    char longtext[1024];
    memset(longtext, 'a', sizeof longtext - 1);
    longtext[sizeof longtext - 1] = '\0';
    struct hurray_error err;
    test_error_poison(&err);
    (void)hri_fail(&err, HURRAY_E_RANGE, longtext, "%s", longtext);
    assert_int_equal(strlen(err.field), HURRAY_ERROR_FIELD_MAX - 1);
    assert_int_equal(strlen(err.message), HURRAY_ERROR_MESSAGE_MAX - 1);

    char buf[HURRAY_ERROR_FIELD_MAX];
    const char *f = hri_fieldf(buf, "%s", longtext);
    assert_ptr_equal(f, buf);
    assert_int_equal(strlen(buf), HURRAY_ERROR_FIELD_MAX - 1);
    assert_string_equal(hri_fieldf(buf, "shape[%d]", 3), "shape[3]");
}

/* conventions.md § Tag spaces: the shared tag-kind check names field and byte. */
static void test_check_tag_kind(void **state) {
    (void)state;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hri_check_tag_kind(HURRAY_TAG_NAMED, 0x01, 0, "layout", &err), HURRAY_OK);
    assert_status(hri_check_tag_kind(HURRAY_TAG_PRIVATE, 0xF3, 1, "layout", &err), HURRAY_OK);

    assert_status(hri_check_tag_kind(HURRAY_TAG_PRIVATE, 0xF3, 0, "sync_mode", &err),
                  HURRAY_E_RESERVED_TAG);
    assert_hurray_error(&err, HURRAY_E_RESERVED_TAG, "sync_mode");
    assert_non_null(strstr(err.message, "0xF3"));
    assert_non_null(strstr(err.message, "sync_mode"));

    assert_status(hri_check_tag_kind(HURRAY_TAG_RESERVED, 0x42, 1, "dtype", &err),
                  HURRAY_E_RESERVED_TAG);
    assert_hurray_error(&err, HURRAY_E_RESERVED_TAG, "dtype");
    assert_non_null(strstr(err.message, "0x42"));

    assert_status(hri_check_tag_kind(HURRAY_TAG_INVALID, 0xFF, 1, "device", &err),
                  HURRAY_E_INVALID_TAG);
    assert_hurray_error(&err, HURRAY_E_INVALID_TAG, "device");
    assert_non_null(strstr(err.message, "0xFF"));
}

static void test_tag_kind_helpers(void **state) {
    (void)state;
    for (int b = 0; b < 256; b++) {
        uint8_t t = (uint8_t)b;
        int with_private = hri_tag_kind_with_private(t, 0);
        int plain = hri_tag_kind_plain(t, 0);
        if (b == 0x00 || b == 0xFF) {
            assert_int_equal(with_private, HURRAY_TAG_INVALID);
            assert_int_equal(plain, HURRAY_TAG_INVALID);
            assert_int_equal(hri_tag_kind_with_private(t, 1), HURRAY_TAG_INVALID);
        } else {
            assert_int_equal(with_private,
                             b >= 0xF0 ? HURRAY_TAG_PRIVATE : HURRAY_TAG_RESERVED);
            assert_int_equal(plain, HURRAY_TAG_RESERVED);
            assert_int_equal(hri_tag_kind_with_private(t, 1), HURRAY_TAG_NAMED);
            assert_int_equal(hri_tag_kind_plain(t, 1), HURRAY_TAG_NAMED);
        }
    }
}

/* ---- limits (HR-LIMIT-1) ----------------------------------------------------- */

static void test_HR_LIMIT_1_defaults(void **state) {
    (void)state;
    struct hurray_limits lim;
    memset(&lim, 0xA5, sizeof lim);
    hurray_limits_default(&lim);
    assert_true(lim.max_descriptor_bytes == 1048576u);
    assert_true(lim.max_rank == 64u);
    assert_true(lim.max_buffer_bytes == (UINT64_C(1) << 34));
    assert_true(lim.max_composite_depth == 16u);
    assert_true(lim.max_composite_members == 65536u);
    assert_true(lim.max_kv_entries == 65536u);
    assert_true(lim.max_kv_bytes == (UINT64_C(64) << 20));
    assert_true(lim.max_name_bytes == 1024u);
    assert_true(lim.max_file_tensors == 1048576u);
    assert_true(lim.max_alignment_slack == 1048576u); /* HR-LIMIT-2 */
    hurray_limits_default(NULL);
}

static void test_HR_LIMIT_1_clamp(void **state) {
    (void)state;
    struct hurray_limits lim;
    memset(&lim, 0xFF, sizeof lim);
    hurray_limits_clamp(&lim);
    assert_true(lim.max_descriptor_bytes == UINT32_MAX - 7u);
    assert_true(lim.max_rank == 64u);
    assert_true(lim.max_buffer_bytes == UINT64_MAX);
    assert_true(lim.max_composite_depth == 64u);
    assert_true(lim.max_composite_members == UINT32_MAX);
    assert_true(lim.max_kv_entries == UINT32_MAX);
    assert_true(lim.max_kv_bytes == (uint64_t)INT64_MAX);
    assert_true(lim.max_name_bytes == UINT16_MAX);
    assert_true(lim.max_file_tensors == UINT32_MAX);
    assert_true(lim.max_alignment_slack == UINT64_MAX); /* 2^64 - 1: the check off */
    /* Defaults are within the maxima: clamping leaves them alone. */
    struct hurray_limits def, clamped;
    memset(&def, 0, sizeof def); /* defined padding, so memcmp is meaningful */
    hurray_limits_default(&def);
    memcpy(&clamped, &def, sizeof def);
    hurray_limits_clamp(&clamped);
    assert_memory_equal(&def, &clamped, sizeof def);
    hurray_limits_clamp(NULL);
}

static void test_version_string(void **state) {
    (void)state;
    assert_string_equal(hurray_version_string(), HURRAY_VERSION_STRING);
}

/* ---- test support self-checks (shared by every test binary) ------------------- */

static void test_support_alloc_counts_and_fails(void **state) {
    (void)state;
    struct test_alloc ta;
    test_alloc_init(&ta, 2);
    const struct hurray_allocator *a = test_alloc_get(&ta);
    void *p = hri_alloc(a, 10);
    assert_non_null(p);
    assert_null(hri_alloc(a, 20)); /* the 2nd call fails */
    void *q = hri_alloc(a, 0);
    assert_non_null(q);
    assert_int_equal(ta.calls, 3);
    assert_int_equal(ta.failures, 1);
    assert_int_equal(ta.live_allocs, 2);
    assert_int_equal(ta.live_bytes, 10);
    hri_free(a, p, 10);
    hri_free(a, q, 0);
    hri_free(a, NULL, 5);
    assert_alloc_clean(&ta);
    assert_int_equal(ta.peak_bytes, 10);

    test_alloc_init(&ta, 1);
    ta.fail_after = 1;
    assert_null(hri_alloc(a, 1));
    assert_null(hri_alloc(a, 1));
    assert_int_equal(ta.failures, 2);

    test_alloc_init(&ta, 0);
    p = hri_alloc(a, 8);
    hri_free(a, p, 7); /* wrong size is recorded */
    assert_int_equal(ta.bad_frees, 1);
}

struct sweep_state {
    int allocs;
};

/* Allocates n blocks, freeing them all, NOMEM on the first failure. */
static int sweep_body(const struct hurray_allocator *a, void *vstate) {
    const struct sweep_state *s = vstate;
    void *blocks[8] = {0};
    int st = HURRAY_OK;
    for (int i = 0; i < s->allocs; i++) {
        blocks[i] = hri_alloc(a, (size_t)i + 1);
        if (!blocks[i]) {
            st = HURRAY_E_NOMEM;
            break;
        }
    }
    for (int i = 0; i < s->allocs; i++) hri_free(a, blocks[i], (size_t)i + 1);
    return st;
}

static void test_support_alloc_sweep(void **state) {
    (void)state;
    struct sweep_state s = {5};
    assert_int_equal(test_alloc_sweep(sweep_body, &s), 5);
    s.allocs = 0;
    assert_int_equal(test_alloc_sweep(sweep_body, &s), 0);
}

static void test_support_bytes_equal(void **state) {
    (void)state;
    const uint8_t a[] = {1, 2, 3};
    assert_bytes_equal(a, sizeof a, a, sizeof a);
    assert_bytes_equal(a, 0, a + 1, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_ERR_1_status_table),
        cmocka_unit_test(test_HR_ERR_1_enum_values_pinned),
        cmocka_unit_test(test_status_names_unique),
        cmocka_unit_test(test_status_from_name_is_inverse),
        cmocka_unit_test(test_status_from_name_unknown),
        cmocka_unit_test(test_status_name_out_of_range),
        cmocka_unit_test(test_status_stages_known),
        cmocka_unit_test(test_error_clear),
        cmocka_unit_test(test_error_fail_fills_record),
        cmocka_unit_test(test_error_fail_at_records_offset),
        cmocka_unit_test(test_error_null_record_tolerated),
        cmocka_unit_test(test_error_null_field_is_empty),
        cmocka_unit_test(test_error_truncates_long_text),
        cmocka_unit_test(test_check_tag_kind),
        cmocka_unit_test(test_tag_kind_helpers),
        cmocka_unit_test(test_HR_LIMIT_1_defaults),
        cmocka_unit_test(test_HR_LIMIT_1_clamp),
        cmocka_unit_test(test_version_string),
        cmocka_unit_test(test_support_alloc_counts_and_fails),
        cmocka_unit_test(test_support_alloc_sweep),
        cmocka_unit_test(test_support_bytes_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
