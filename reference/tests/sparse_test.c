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
    /* extents at and past 2^63 (the check's two forms): the bound is exact either side */
    const uint64_t top = UINT64_C(1) << 63;
    const uint64_t at63[] = {top};
    const uint64_t below63[] = {top - 1, 0, top - 1, top - 1, 5, 0, 0, 0, top - 1};
    assert_status(coo(1, at63, below63, 9, &err), HURRAY_OK);
    const uint64_t over63[] = {0, 1, 2, 3, 4, 5, 6, 7, top};
    expect_index(coo(1, at63, over63, 9, &err), &err, "indices[0][8]",
                 "9223372036854775808 (-9223372036854775808 as int64) is not below");
    const uint64_t past[] = {top + 5};
    const uint64_t in_past[] = {top + 4, top, 0, UINT64_MAX - 1};
    expect_index(coo(1, past, in_past, 4, &err), &err, "indices[0][3]",
                 "18446744073709551614 (-2 as int64) is not below shape[0] = 9223372036854775813");
    assert_status(coo(1, past, in_past, 3, &err), HURRAY_OK);
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


/* ---- import (HR-LAYOUT-25): the same check over int32 / int64 / uint32 arrays, widened ---- */

/* `n` values in `encoding` (host order) into `out`; returns the bytes written. */
static size_t encode(uint8_t *out, const int64_t *v, size_t n, uint8_t encoding) {
    for (size_t i = 0; i < n; i++) {
        if (encoding == HURRAY_INDEX_I32) {
            int32_t x = (int32_t)v[i];
            memcpy(out + i * 4, &x, 4);
        } else if (encoding == HURRAY_INDEX_U32) {
            uint32_t x = (uint32_t)v[i];
            memcpy(out + i * 4, &x, 4);
        } else if (encoding == HURRAY_INDEX_I64) {
            memcpy(out + i * 8, &v[i], 8);
        } else {
            le(out + i * 8, (const uint64_t *)&v[i], 1);
        }
    }
    return n * (encoding == HURRAY_INDEX_I32 || encoding == HURRAY_INDEX_U32 ? 4 : 8);
}

static const uint8_t ENCODINGS[] = {HURRAY_INDEX_U64LE, HURRAY_INDEX_I64, HURRAY_INDEX_I32,
                                    HURRAY_INDEX_U32};

/* CSR/CSC through import (pointers and indices in `encoding`, written out) and through
 * validate (the widened values): the same status, field and message; on success the outputs
 * are the widened values. */
static void import_agrees(uint8_t tag, uint64_t rows, uint64_t cols, const int64_t *ptr,
                          size_t nptr, const int64_t *idx, size_t nnz, uint8_t encoding) {
    uint8_t pin[MAXV * 8], iin[MAXV * 8], pout[MAXV * 8], iout[MAXV * 8], pw[MAXV * 8],
        iw[MAXV * 8];
    size_t pb = encode(pin, ptr, nptr, encoding), ib = encode(iin, idx, nnz, encoding);
    for (size_t i = 0; i < nptr; i++) { /* the widened value: sign-extended from its width */
        int64_t v = encoding == HURRAY_INDEX_I32   ? (int64_t)(int32_t)ptr[i]
                    : encoding == HURRAY_INDEX_U32 ? (int64_t)(uint32_t)ptr[i]
                                                   : ptr[i];
        le(pw + i * 8, (const uint64_t *)&v, 1);
    }
    for (size_t i = 0; i < nnz; i++) {
        int64_t v = encoding == HURRAY_INDEX_I32   ? (int64_t)(int32_t)idx[i]
                    : encoding == HURRAY_INDEX_U32 ? (int64_t)(uint32_t)idx[i]
                                                   : idx[i];
        le(iw + i * 8, (const uint64_t *)&v, 1);
    }
    struct hurray_layout l = sparse_layout(tag, nnz);
    uint64_t shape[2] = {rows, cols};
    struct hurray_error e1, e2;
    test_error_poison(&e1);
    test_error_poison(&e2);
    int want = hurray_sparse_validate_index_buffers(&l, 2, shape, iw, nnz * 8, pw, nptr * 8, &e1);
    memset(pout, 0xAB, sizeof pout);
    memset(iout, 0xAB, sizeof iout);
    const struct hurray_index_array ia = {iin, ib, encoding, iout, sizeof iout};
    const struct hurray_index_array pa = {pin, pb, encoding, pout, sizeof pout};
    int got = hurray_sparse_import_index_buffers(&l, 2, shape, &ia, &pa, &e2);
    assert_status(got, want);
    if (want != HURRAY_OK) {
        assert_string_equal(e2.field, e1.field);
        assert_string_equal(e2.message, e1.message);
        return;
    }
    assert_memory_equal(pout, pw, nptr * 8);
    assert_memory_equal(iout, iw, nnz * 8);
    /* check only (no output) gives the same answer */
    const struct hurray_index_array ia0 = {iin, ib, encoding, NULL, 0};
    const struct hurray_index_array pa0 = {pin, pb, encoding, NULL, 0};
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &ia0, &pa0, NULL), HURRAY_OK);
}

static void test_HR_LAYOUT_25_import_agrees_with_validate(void **state) {
    (void)state;
    for (size_t e = 0; e < sizeof ENCODINGS; e++) {
        const uint8_t enc = ENCODINGS[e];
        const int64_t ptr[] = {0, 3, 3, 4}, idx[] = {3, 0, 3, 1};
        import_agrees(HURRAY_LAYOUT_CSR, 3, 4, ptr, 4, idx, 4, enc);
        import_agrees(HURRAY_LAYOUT_CSC, 4, 3, ptr, 4, idx, 4, enc);
        const int64_t zeros[] = {0, 0, 0};
        import_agrees(HURRAY_LAYOUT_CSR, 2, 5, zeros, 3, NULL, 0, enc);
        /* faults, in the check's order: start, decrease, end, index */
        const int64_t ok_idx[] = {0, 1, 2, 0};
        const int64_t start[] = {1, 2, 4}, decrease[] = {0, 3, 2, 4}, end[] = {0, 2, 3};
        import_agrees(HURRAY_LAYOUT_CSR, 2, 3, start, 3, ok_idx, 4, enc);
        import_agrees(HURRAY_LAYOUT_CSR, 3, 3, decrease, 4, ok_idx, 4, enc);
        import_agrees(HURRAY_LAYOUT_CSC, 3, 2, end, 3, ok_idx, 4, enc);
        const int64_t ptr4[] = {0, 2, 4}, out[] = {0, 1, 2, 3}, neg[] = {0, -1, 0, 0};
        const int64_t neg_ptr[] = {0, -2, 4};
        import_agrees(HURRAY_LAYOUT_CSR, 2, 3, ptr4, 3, out, 4, enc);
        import_agrees(HURRAY_LAYOUT_CSR, 2, 3, ptr4, 3, neg, 4, enc);
        import_agrees(HURRAY_LAYOUT_CSR, 2, 3, neg_ptr, 3, ok_idx, 4, enc);
        /* long enough to run the unrolled pass and its tail: the fault in each part */
        int64_t lp[2] = {0, 19}, li[19];
        for (int pos = 0; pos < 19; pos++) {
            for (int j = 0; j < 19; j++) li[j] = j % 7;
            li[pos] = 7;
            import_agrees(HURRAY_LAYOUT_CSR, 1, 7, lp, 2, li, 19, enc);
            li[pos] = -1;
            import_agrees(HURRAY_LAYOUT_CSR, 1, 7, lp, 2, li, 19, enc);
        }
    }
    /* int32's most negative value and uint32's largest: widened, then the bound */
    const int64_t p2[] = {0, 2}, extremes[] = {INT32_MIN, INT32_MAX};
    import_agrees(HURRAY_LAYOUT_CSR, 1, 3, p2, 2, extremes, 2, HURRAY_INDEX_I32);
    const int64_t u32max[] = {0, UINT32_MAX};
    import_agrees(HURRAY_LAYOUT_CSR, 1, UINT64_C(1) << 33, p2, 2, u32max, 2, HURRAY_INDEX_U32);
    struct hurray_error err;
    test_error_poison(&err);
    uint8_t pin[16], iin[8], pout[16], iout[16];
    encode(pin, p2, 2, HURRAY_INDEX_I32);
    encode(iin, extremes, 2, HURRAY_INDEX_I32);
    struct hurray_layout l = sparse_layout(HURRAY_LAYOUT_CSR, 2);
    uint64_t shape[2] = {1, 3};
    const struct hurray_index_array ia = {iin, 8, HURRAY_INDEX_I32, iout, 16};
    const struct hurray_index_array pa = {pin, 8, HURRAY_INDEX_I32, pout, 16};
    expect_index(hurray_sparse_import_index_buffers(&l, 2, shape, &ia, &pa, &err), &err,
                 "col_indices[0]", "(-2147483648 as int64) is not below shape[1] = 3");
}

static void test_HR_LAYOUT_25_import_coo_rows(void **state) {
    (void)state;
    const uint64_t shape[] = {2, 3, 4};
    const int64_t d0[] = {1, 0, 1}, d1[] = {2, 2, 2}, d2[] = {3, 0, 3};
    uint8_t in[3][24], out[3 * 3 * 8];
    struct hurray_index_array rows[3];
    const int64_t *src[3] = {d0, d1, d2};
    const uint8_t enc[3] = {HURRAY_INDEX_I32, HURRAY_INDEX_I64, HURRAY_INDEX_U32}; /* per row */
    for (int d = 0; d < 3; d++) {
        size_t b = encode(in[d], src[d], 3, enc[d]);
        rows[d] = (struct hurray_index_array){in[d], b, enc[d], out + d * 24, 24};
    }
    struct hurray_layout l = sparse_layout(HURRAY_LAYOUT_COO, 3);
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_sparse_import_index_buffers(&l, 3, shape, rows, NULL, &err), HURRAY_OK);
    const uint64_t want[] = {1, 0, 1, 2, 2, 2, 3, 0, 3};
    uint8_t wb[9 * 8];
    le(wb, want, 9);
    assert_memory_equal(out, wb, sizeof wb);
    /* the same fault as validate names: indices[d][j] */
    const int64_t bad[] = {0, 3, 0};
    encode(in[1], bad, 3, HURRAY_INDEX_I64);
    test_error_poison(&err);
    expect_index(hurray_sparse_import_index_buffers(&l, 3, shape, rows, NULL, &err), &err,
                 "indices[1][1]", "indices[1][1] = 3 is not below shape[1] = 3");
    const int64_t neg[] = {0, 0, -5};
    encode(in[2], neg, 3, HURRAY_INDEX_U32); /* 2^32 - 5 as uint32: not negative, too big */
    encode(in[1], d1, 3, HURRAY_INDEX_I64);
    test_error_poison(&err);
    expect_index(hurray_sparse_import_index_buffers(&l, 3, shape, rows, NULL, &err), &err,
                 "indices[2][2]", "indices[2][2] = 4294967291 is not below shape[2] = 4");
    /* a short row names it */
    rows[0].bytes = 11;
    test_error_poison(&err);
    assert_status(hurray_sparse_import_index_buffers(&l, 3, shape, rows, NULL, &err),
                  HURRAY_E_BUFFER_SIZE);
    assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, "indices[0]");
}

static void test_HR_LAYOUT_25_import_sizes_outputs_and_arguments(void **state) {
    (void)state;
    struct hurray_error err;
    uint8_t b[64] = {0}, o[64];
    const int64_t ptr[] = {0, 1, 2, 2};
    encode(b + 32, ptr, 4, HURRAY_INDEX_I32);
    uint64_t shape[2] = {3, 3};
    struct hurray_layout l = sparse_layout(HURRAY_LAYOUT_CSR, 2);
    /* int32 minor indices need 8 bytes in, 16 out; int32 pointers 16 in, 32 out */
    struct hurray_index_array ia = {b, 7, HURRAY_INDEX_I32, NULL, 0};
    struct hurray_index_array pa = {b + 32, 16, HURRAY_INDEX_I32, NULL, 0};
    test_error_poison(&err);
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &ia, &pa, &err),
                  HURRAY_E_BUFFER_SIZE);
    assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, "col_indices");
    ia.bytes = 8;
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &ia, &pa, NULL), HURRAY_OK);
    ia.out = o;
    ia.out_bytes = 15;
    test_error_poison(&err);
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &ia, &pa, &err),
                  HURRAY_E_BUFFER_SIZE);
    assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, "col_indices");
    assert_non_null(strstr(err.message, "the output holds 15 bytes"));
    ia.out_bytes = 16;
    pa.bytes = 15;
    test_error_poison(&err);
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &ia, &pa, &err),
                  HURRAY_E_BUFFER_SIZE);
    assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, "row_ptr");
    pa.bytes = 16;
    /* an output overlapping its input: refused, unless it is the input with 8-byte entries */
    ia.out = b + 4;
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &ia, &pa, NULL),
                  HURRAY_E_ARGUMENT);
    ia.out = b;
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &ia, &pa, NULL),
                  HURRAY_E_ARGUMENT);
    struct hurray_index_array same = {b, 16, HURRAY_INDEX_I64, b, 16};
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &same, &pa, NULL), HURRAY_OK);
    ia.out = o;
    ia.encoding = 4; /* not an encoding */
    test_error_poison(&err);
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &ia, &pa, &err),
                  HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "col_indices");
    ia.encoding = HURRAY_INDEX_I32;
    struct hurray_index_array nul = {NULL, 8, HURRAY_INDEX_I32, NULL, 0};
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &nul, &pa, NULL),
                  HURRAY_E_ARGUMENT);
    struct hurray_index_array nulout = {b, 8, HURRAY_INDEX_I32, NULL, 16};
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &nulout, &pa, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &ia, NULL, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, NULL, &pa, NULL),
                  HURRAY_E_ARGUMENT);
    struct hurray_layout dense = sparse_layout(HURRAY_LAYOUT_ROW_MAJOR, 0);
    assert_status(hurray_sparse_import_index_buffers(&dense, 2, shape, &ia, &pa, NULL),
                  HURRAY_E_ARGUMENT);
    shape[0] = HURRAY_DYNAMIC_DIM;
    test_error_poison(&err);
    assert_status(hurray_sparse_import_index_buffers(&l, 2, shape, &ia, &pa, &err),
                  HURRAY_E_UNSUPPORTED);
    assert_hurray_error(&err, HURRAY_E_UNSUPPORTED, "shape[0]");
    shape[0] = 3;
    struct hurray_layout lc = sparse_layout(HURRAY_LAYOUT_COO, UINT64_MAX);
    struct hurray_index_array r2[2] = {{b, 64, HURRAY_INDEX_I64, NULL, 0},
                                       {b, 64, HURRAY_INDEX_I64, NULL, 0}};
    assert_status(hurray_sparse_import_index_buffers(&lc, 2, shape, r2, NULL, NULL),
                  HURRAY_E_OVERFLOW);
    struct hurray_layout l0 = sparse_layout(HURRAY_LAYOUT_COO, 0);
    assert_status(hurray_sparse_import_index_buffers(&l0, 0, shape, r2, NULL, NULL),
                  HURRAY_E_CONSTRAINT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_LAYOUT_24_valid_contents),
        cmocka_unit_test(test_HR_LAYOUT_24_pointer_faults),
        cmocka_unit_test(test_HR_LAYOUT_24_index_faults),
        cmocka_unit_test(test_HR_LAYOUT_24_sizes_dynamic_and_arguments),
        cmocka_unit_test(test_HR_LAYOUT_25_import_agrees_with_validate),
        cmocka_unit_test(test_HR_LAYOUT_25_import_coo_rows),
        cmocka_unit_test(test_HR_LAYOUT_25_import_sizes_outputs_and_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
