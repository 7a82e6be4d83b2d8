/* Index contents of COO, CSR and CSC (sparse.c). memory-layout.md § Index contents
 * (HR-LAYOUT-24): pointers start at 0, never decrease and end at nnz; every index is below
 * its extent; order and repetition are free. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "hurray/hurray.h"
#include "test_support.h"

#define MAXV 32

/* Little-endian uint64 bytes of `n` values, written byte by byte (host order independent). */
static void le(uint8_t *out, const uint64_t *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++) out[i * 8 + (size_t)b] = (uint8_t)(v[i] >> (8 * b));
}

static struct hurray_layout sparse_layout(uint8_t tag, uint64_t nnz) {
    struct hurray_layout l;
    memset(&l, 0, sizeof l);
    l.tag = tag;
    l.nnz = nnz;
    return l;
}

/* CSR/CSC with the given pointers and minor indices; returns the status, err filled. */
static int compressed(uint8_t tag, uint64_t rows, uint64_t cols, const uint64_t *ptr,
                      size_t nptr, const uint64_t *idx, size_t nnz, struct hurray_error *err) {
    uint8_t pb[MAXV * 8], ib[MAXV * 8];
    le(pb, ptr, nptr);
    le(ib, idx, nnz);
    struct hurray_layout l = sparse_layout(tag, nnz);
    uint64_t shape[2] = {rows, cols};
    test_error_poison(err);
    return hurray_sparse_validate_index_buffers(&l, 2, shape, ib, nnz * 8, pb, nptr * 8, err);
}

static int coo(uint8_t rank, const uint64_t *shape, const uint64_t *idx, size_t nnz,
               struct hurray_error *err) {
    uint8_t ib[MAXV * 8];
    le(ib, idx, rank * nnz);
    struct hurray_layout l = sparse_layout(HURRAY_LAYOUT_COO, nnz);
    test_error_poison(err);
    return hurray_sparse_validate_index_buffers(&l, rank, shape, ib, rank * nnz * 8, NULL, 0, err);
}

static void test_HR_LAYOUT_24_valid_contents(void **state) {
    (void)state;
    struct hurray_error err;
    /* 3x4 CSR: row 0 unsorted with a duplicate, row 1 empty, row 2 one entry */
    const uint64_t ptr[] = {0, 3, 3, 4}, idx[] = {3, 0, 3, 1};
    assert_status(compressed(HURRAY_LAYOUT_CSR, 3, 4, ptr, 4, idx, 4, &err), HURRAY_OK);
    /* the same arrays as a 4x3 CSC (pointers over the 3 columns, rows < 4) */
    assert_status(compressed(HURRAY_LAYOUT_CSC, 4, 3, ptr, 4, idx, 4, &err), HURRAY_OK);
    /* nnz 0, and a 0-row matrix (one pointer) */
    const uint64_t zeros[] = {0, 0, 0};
    assert_status(compressed(HURRAY_LAYOUT_CSR, 2, 5, zeros, 3, NULL, 0, &err), HURRAY_OK);
    assert_status(compressed(HURRAY_LAYOUT_CSR, 0, 5, zeros, 1, NULL, 0, &err), HURRAY_OK);
    /* COO rank 3: unsorted, duplicated entries */
    const uint64_t shape3[] = {2, 3, 4};
    const uint64_t c3[] = {1, 0, 1, /* dim 0 */ 2, 2, 2, /* dim 1 */ 3, 0, 3 /* dim 2 */};
    assert_status(coo(3, shape3, c3, 3, &err), HURRAY_OK);
    const uint64_t shape1[] = {5};
    assert_status(coo(1, shape1, NULL, 0, &err), HURRAY_OK);
    /* oversized buffers are fine: only the first nnz entries are read */
    uint8_t ib[8 * 8] = {0}, pb[3 * 8];
    const uint64_t p2[] = {0, 1, 1};
    le(pb, p2, 3);
    memset(ib + 8, 0xFF, 56); /* garbage past nnz = 1 */
    struct hurray_layout l = sparse_layout(HURRAY_LAYOUT_CSR, 1);
    const uint64_t shape2[] = {2, 2};
    assert_status(hurray_sparse_validate_index_buffers(&l, 2, shape2, ib, sizeof ib, pb, 24, &err),
                  HURRAY_OK);
}

static void expect_index(int status, const struct hurray_error *err, const char *field,
                         const char *text) {
    assert_status(status, HURRAY_E_INDEX);
    assert_hurray_error(err, HURRAY_E_INDEX, field);
    assert_string_equal(err->field, field);
    assert_non_null(strstr(err->message, text));
}

static void test_HR_LAYOUT_24_pointer_faults(void **state) {
    (void)state;
    struct hurray_error err;
    const uint64_t idx[] = {0, 1, 2, 0};
    const uint64_t start[] = {1, 2, 4};
    expect_index(compressed(HURRAY_LAYOUT_CSR, 2, 3, start, 3, idx, 4, &err), &err, "row_ptr[0]",
                 "start at 0");
    const uint64_t decrease[] = {0, 3, 2, 4};
    expect_index(compressed(HURRAY_LAYOUT_CSR, 3, 3, decrease, 4, idx, 4, &err), &err,
                 "row_ptr[2]", "never decrease");
    const uint64_t end[] = {0, 2, 3};
    expect_index(compressed(HURRAY_LAYOUT_CSC, 3, 2, end, 3, idx, 4, &err), &err, "col_ptr[2]",
                 "nnz = 4");
    const uint64_t huge[] = {0, UINT64_C(1) << 63, 4};
    expect_index(compressed(HURRAY_LAYOUT_CSR, 2, 3, huge, 3, idx, 4, &err), &err, "row_ptr[2]",
                 "never decrease");
}

static void test_HR_LAYOUT_24_index_faults(void **state) {
    (void)state;
    struct hurray_error err;
    const uint64_t ptr[] = {0, 2, 4};
    const uint64_t out[] = {0, 1, 2, 3};
    expect_index(compressed(HURRAY_LAYOUT_CSR, 2, 3, ptr, 3, out, 4, &err), &err,
                 "col_indices[3]", "not below shape[1] = 3");
    expect_index(compressed(HURRAY_LAYOUT_CSC, 2, 2, ptr, 3, out, 4, &err), &err,
                 "row_indices[2]", "not below shape[0] = 2");
    const uint64_t neg[] = {0, UINT64_MAX, 0, 0}; /* an int64 -1 */
    expect_index(compressed(HURRAY_LAYOUT_CSR, 2, 3, ptr, 3, neg, 4, &err), &err,
                 "col_indices[1]", "18446744073709551615 (-1 as int64)");
    const uint64_t shape[] = {2, 3};
    const uint64_t c[] = {0, 1, 1, /* dim 1: */ 2, 3, 0};
    expect_index(coo(2, shape, c, 3, &err), &err, "indices[1][1]", "not below shape[1] = 3");
    const uint64_t c0[] = {0, 2, 1, 0, 0, 0};
    expect_index(coo(2, shape, c0, 3, &err), &err, "indices[0][1]", "not below shape[0] = 2");
}

static void test_HR_LAYOUT_24_sizes_dynamic_and_arguments(void **state) {
    (void)state;
    struct hurray_error err;
    uint8_t b[64] = {0};
    uint64_t shape[2] = {3, 3};
    struct hurray_layout l = sparse_layout(HURRAY_LAYOUT_CSR, 2);
    /* minor indices need 16 bytes, pointers 32 */
    test_error_poison(&err);
    assert_status(hurray_sparse_validate_index_buffers(&l, 2, shape, b, 15, b, 32, &err),
                  HURRAY_E_BUFFER_SIZE);
    assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, "col_indices");
    test_error_poison(&err);
    assert_status(hurray_sparse_validate_index_buffers(&l, 2, shape, b, 16, b, 31, &err),
                  HURRAY_E_BUFFER_SIZE);
    assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, "row_ptr");
    struct hurray_layout lc = sparse_layout(HURRAY_LAYOUT_COO, 4);
    assert_status(hurray_sparse_validate_index_buffers(&lc, 2, shape, b, 63, NULL, 0, NULL),
                  HURRAY_E_BUFFER_SIZE);
    lc.nnz = UINT64_MAX;
    assert_status(hurray_sparse_validate_index_buffers(&lc, 2, shape, b, 64, NULL, 0, NULL),
                  HURRAY_E_OVERFLOW);
    shape[1] = HURRAY_DYNAMIC_DIM;
    test_error_poison(&err);
    assert_status(hurray_sparse_validate_index_buffers(&l, 2, shape, b, 16, b, 32, &err),
                  HURRAY_E_UNSUPPORTED);
    assert_hurray_error(&err, HURRAY_E_UNSUPPORTED, "shape[1]");
    shape[1] = 3;
    struct hurray_layout dense = sparse_layout(HURRAY_LAYOUT_ROW_MAJOR, 0);
    assert_status(hurray_sparse_validate_index_buffers(&dense, 2, shape, b, 16, b, 32, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_sparse_validate_index_buffers(NULL, 2, shape, b, 16, b, 32, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_sparse_validate_index_buffers(&l, 2, shape, NULL, 16, b, 32, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_sparse_validate_index_buffers(&l, 2, NULL, b, 16, b, 32, NULL),
                  HURRAY_E_ARGUMENT);
    const uint64_t shape3[3] = {3, 3, 3};
    assert_status(hurray_sparse_validate_index_buffers(&l, 3, shape3, b, 16, b, 32, NULL),
                  HURRAY_E_CONSTRAINT);
    struct hurray_layout l0 = sparse_layout(HURRAY_LAYOUT_COO, 0);
    assert_status(hurray_sparse_validate_index_buffers(&l0, 0, shape, NULL, 0, NULL, 0, NULL),
                  HURRAY_E_CONSTRAINT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_LAYOUT_24_valid_contents),
        cmocka_unit_test(test_HR_LAYOUT_24_pointer_faults),
        cmocka_unit_test(test_HR_LAYOUT_24_index_faults),
        cmocka_unit_test(test_HR_LAYOUT_24_sizes_dynamic_and_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
