/* Encoding and decoding floating-point element values (minifloat.c).
 * element-types.md § Encoding values (HR-DTYPE-6 … 8).
 *
 * The expected values are transcribed from the spec page independently of
 * minifloat.c: each format's field widths, bias and special codes, the
 * largest finite value the tag table states, and the overflow / special
 * value table. Python's test_minifloat.py checks the same encoder against
 * ml_dtypes for every code. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "hurray/hurray.h"
#include "test_support.h"

enum overflow { REFUSE, SATURATE };

/* element-types.md: widths, bias, the largest finite value (tag table), what
 * overflow, infinities, NaN and -0 become (§ Encoding values). inf_code and
 * nan_code are for the positive sign; 0 means "refused (ARGUMENT)". */
struct spec_format {
    uint8_t tag;
    unsigned bits, ebits, mbits;
    int bias;
    double max;
    enum overflow overflow;
    uint64_t inf_code, nan_code;
    int has_neg_zero;
};

static const struct spec_format spec[] = {
    {HURRAY_DTYPE_FLOAT16, 16, 5, 10, 15, 65504.0, REFUSE, 0x7C00, 0x7E00, 1},
    {HURRAY_DTYPE_BFLOAT16, 16, 8, 7, 127, 3.3895313892515355e38, REFUSE, 0x7F80, 0x7FC0, 1},
    {HURRAY_DTYPE_FLOAT8_E4M3FN, 8, 4, 3, 7, 448.0, REFUSE, 0, 0x7F, 1},
    {HURRAY_DTYPE_FLOAT8_E4M3FNUZ, 8, 4, 3, 8, 240.0, REFUSE, 0, 0x80, 0},
    {HURRAY_DTYPE_FLOAT8_E5M2, 8, 5, 2, 15, 57344.0, REFUSE, 0x7C, 0x7E, 1},
    {HURRAY_DTYPE_FLOAT8_E5M2FNUZ, 8, 5, 2, 16, 57344.0, REFUSE, 0, 0x80, 0},
    {HURRAY_DTYPE_FLOAT6_E2M3FN, 6, 2, 3, 1, 7.5, SATURATE, 0, 0, 1},
    {HURRAY_DTYPE_FLOAT6_E3M2FN, 6, 3, 2, 3, 28.0, SATURATE, 0, 0, 1},
    {HURRAY_DTYPE_FLOAT4_E2M1FN, 4, 2, 1, 1, 6.0, SATURATE, 0, 0, 1},
};
#define SPEC_COUNT (sizeof spec / sizeof spec[0])

static uint64_t enc(uint8_t tag, double x) {
    uint64_t code = 0xDEAD;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_float_encode(tag, x, &code, &err), HURRAY_OK);
    return code;
}

static double dec(uint8_t tag, uint64_t code) {
    double v = -12345.0;
    assert_status(hurray_float_decode(tag, code, &v, NULL), HURRAY_OK);
    return v;
}

/* The value of a code from the field layout of § Encoding values, written out again. */
static double spec_value(const struct spec_format *f, uint64_t code) {
    uint64_t sign = code >> (f->bits - 1), mag = code & ((UINT64_C(1) << (f->bits - 1)) - 1);
    uint64_t e = mag >> f->mbits, m = mag & ((UINT64_C(1) << f->mbits) - 1);
    double v = e == 0 ? ldexp((double)m, 1 - f->bias - (int)f->mbits)
                      : ldexp(1.0 + ldexp((double)m, -(int)f->mbits), (int)e - f->bias);
    return sign ? -v : v;
}

static int is_nan_code(const struct spec_format *f, uint64_t code) {
    uint64_t mag = code & ((UINT64_C(1) << (f->bits - 1)) - 1);
    uint64_t exp_ones = ((UINT64_C(1) << f->ebits) - 1) << f->mbits;
    if (f->inf_code != 0) return (mag & exp_ones) == exp_ones && mag != exp_ones; /* IEEE */
    if (f->nan_code == 0x80) return code == 0x80;                               /* fnuz */
    if (f->nan_code == 0x7F) return mag == 0x7F;                                /* fn */
    return 0;
}

static int is_inf_code(const struct spec_format *f, uint64_t code) {
    return f->inf_code != 0 && (code & ((UINT64_C(1) << (f->bits - 1)) - 1)) == f->inf_code;
}

/* Every code decodes to its spec value, and that value encodes back to the code (NaN codes
 * to the canonical NaN of their sign). */
static void test_HR_DTYPE_6_every_code_round_trips(void **state) {
    (void)state;
    for (size_t i = 0; i < SPEC_COUNT; i++) {
        const struct spec_format *f = &spec[i];
        uint64_t sign_bit = UINT64_C(1) << (f->bits - 1);
        for (uint64_t c = 0; c < (UINT64_C(1) << f->bits); c++) {
            double v = dec(f->tag, c);
            if (is_nan_code(f, c)) {
                assert_true(isnan(v));
                uint64_t want = f->nan_code == 0x80 ? 0x80 : f->nan_code | (c & sign_bit);
                assert_int_equal(enc(f->tag, v), want);
                continue;
            }
            if (is_inf_code(f, c)) {
                assert_true(isinf(v));
                assert_int_equal(enc(f->tag, v), c);
                continue;
            }
            assert_true(v == spec_value(f, c));
            assert_int_equal(signbit(v) != 0, (c & sign_bit) != 0);
            assert_int_equal(enc(f->tag, v), c);
        }
    }
}

/* The largest finite value is the one the tag table states. */
static void test_HR_DTYPE_1_largest_finite_values(void **state) {
    (void)state;
    for (size_t i = 0; i < SPEC_COUNT; i++) {
        const struct spec_format *f = &spec[i];
        uint64_t top = 0;
        double best = 0.0;
        for (uint64_t c = 0; c < (UINT64_C(1) << (f->bits - 1)); c++) {
            double v = dec(f->tag, c);
            if (isfinite(v) && v > best) best = v, top = c;
        }
        assert_true(best == f->max);
        assert_int_equal(enc(f->tag, f->max), top);
        assert_int_equal(enc(f->tag, -f->max), top | (UINT64_C(1) << (f->bits - 1)));
    }
}

/* Halfway between two neighbouring finite values goes to the code with an even fraction;
 * the next binary64 value on either side goes to the nearer one. */
static void test_HR_DTYPE_6_ties_to_even(void **state) {
    (void)state;
    for (size_t i = 0; i < SPEC_COUNT; i++) {
        const struct spec_format *f = &spec[i];
        uint64_t sign_bit = UINT64_C(1) << (f->bits - 1);
        for (uint64_t c = 0; c + 1 < sign_bit; c++) {
            double lo = dec(f->tag, c), hi = dec(f->tag, c + 1);
            if (!isfinite(lo) || !isfinite(hi)) continue;
            double mid = lo + (hi - lo) / 2; /* exact: a few bits wide */
            uint64_t even = (c & 1) ? c + 1 : c;
            assert_int_equal(enc(f->tag, mid), even);
            assert_int_equal(enc(f->tag, nextafter(mid, 0.0)), c);
            assert_int_equal(enc(f->tag, nextafter(mid, INFINITY)), c + 1);
            uint64_t neg_even = even == 0 && !f->has_neg_zero ? 0 : even | sign_bit;
            assert_int_equal(enc(f->tag, -mid), neg_even);
        }
    }
    /* float16 and bfloat16 against well-known codes */
    assert_int_equal(enc(HURRAY_DTYPE_FLOAT16, 1.0 + ldexp(1.0, -11)), 0x3C00);
    assert_int_equal(enc(HURRAY_DTYPE_FLOAT16, 1.0 + 3 * ldexp(1.0, -11)), 0x3C02);
    assert_int_equal(enc(HURRAY_DTYPE_BFLOAT16, 3.141592653589793), 0x4049);
    assert_int_equal(enc(HURRAY_DTYPE_FLOAT32, 0.1), 0x3DCCCCCD);
    assert_int_equal(enc(HURRAY_DTYPE_FLOAT32, ldexp(1.0, -149)), 1);
    assert_int_equal(enc(HURRAY_DTYPE_FLOAT32, ldexp(1.0, -150)), 0);           /* tie to 0 */
    assert_int_equal(enc(HURRAY_DTYPE_FLOAT32, 3 * ldexp(1.0, -150)), 2);       /* tie to 2 */
}

/* Below the smallest subnormal's half: +-0 (the fnuz types: +0 only). */
static void test_HR_DTYPE_6_underflow_to_zero(void **state) {
    (void)state;
    for (size_t i = 0; i < SPEC_COUNT; i++) {
        const struct spec_format *f = &spec[i];
        double tiny = dec(f->tag, 1) / 2; /* a tie: goes to the even code 0 */
        assert_int_equal(enc(f->tag, tiny), 0);
        assert_int_equal(enc(f->tag, 1e-300), 0);
        assert_int_equal(enc(f->tag, 0.0), 0);
        uint64_t neg_zero = f->has_neg_zero ? UINT64_C(1) << (f->bits - 1) : 0;
        assert_int_equal(enc(f->tag, -0.0), neg_zero);
        assert_int_equal(enc(f->tag, -1e-300), neg_zero);
    }
}

static void expect_refused(uint8_t tag, double x, int code) {
    uint64_t out = 0x77;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_float_encode(tag, x, &out, &err), code);
    assert_hurray_error(&err, code, "value");
    assert_int_equal(out, 0x77); /* nothing written */
}

/* The table of § Encoding values: overflow refused or saturated, infinities and NaN. */
static void test_HR_DTYPE_7_out_of_range_and_specials(void **state) {
    (void)state;
    for (size_t i = 0; i < SPEC_COUNT; i++) {
        const struct spec_format *f = &spec[i];
        uint64_t sign_bit = UINT64_C(1) << (f->bits - 1);
        /* past the largest finite value: anything above half an ulp over it rounds up;
         * the tie itself goes to the even fraction (float8_e4m3fn's 448 is even, 1.110b,
         * because 1.111b is its NaN; the others' largest fractions are all ones) */
        uint64_t top = enc(f->tag, f->max);
        double ulp = f->max - dec(f->tag, top - 1), tie = f->max + ulp / 2;
        double over[] = {nextafter(tie, INFINITY), f->max * 4, 1e300, tie};
        size_t n_over = sizeof over / sizeof over[0] - ((top & 1) ? 0 : 1);
        if (!(top & 1)) assert_int_equal(enc(f->tag, tie), top);
        for (size_t k = 0; k < n_over; k++) {
            if (f->overflow == REFUSE) {
                expect_refused(f->tag, over[k], HURRAY_E_RANGE);
                expect_refused(f->tag, -over[k], HURRAY_E_RANGE);
            } else {
                assert_int_equal(enc(f->tag, over[k]), top);
                assert_int_equal(enc(f->tag, -over[k]), top | sign_bit);
            }
        }
        assert_int_equal(enc(f->tag, nextafter(tie, 0.0)), top);
        if (f->inf_code != 0) {
            assert_int_equal(enc(f->tag, INFINITY), f->inf_code);
            assert_int_equal(enc(f->tag, -INFINITY), f->inf_code | sign_bit);
        } else {
            expect_refused(f->tag, INFINITY, HURRAY_E_ARGUMENT);
            expect_refused(f->tag, -INFINITY, HURRAY_E_ARGUMENT);
        }
        if (f->nan_code != 0) {
            assert_int_equal(enc(f->tag, NAN), f->nan_code);
            uint64_t neg = f->nan_code == 0x80 ? 0x80 : f->nan_code | sign_bit;
            assert_int_equal(enc(f->tag, -NAN), neg);
        } else {
            expect_refused(f->tag, NAN, HURRAY_E_ARGUMENT);
        }
    }
    expect_refused(HURRAY_DTYPE_FLOAT32, 1e39, HURRAY_E_RANGE);
    assert_int_equal(enc(HURRAY_DTYPE_FLOAT32, 3.4028234663852886e38), 0x7F7FFFFF);
    expect_refused(HURRAY_DTYPE_FLOAT32, 3.4028235677973366e38, HURRAY_E_RANGE); /* the tie: odd */
    assert_int_equal(enc(HURRAY_DTYPE_FLOAT32, -INFINITY), 0xFF800000u);
    assert_int_equal(enc(HURRAY_DTYPE_FLOAT32, NAN), 0x7FC00000u);
}

/* float8_e8m0fnu: powers of two 2^-127 … 2^127, ties up, 0xFF NaN, no zero or sign. */
static void test_HR_DTYPE_8_e8m0(void **state) {
    (void)state;
    const uint8_t t = HURRAY_DTYPE_FLOAT8_E8M0FNU;
    for (uint64_t c = 0; c < 255; c++) {
        double v = dec(t, c);
        assert_true(v == ldexp(1.0, (int)c - 127));
        assert_int_equal(enc(t, v), c);
        if (c < 254) {
            double mid = v * 1.5; /* halfway between 2^k and 2^(k+1): up */
            assert_int_equal(enc(t, mid), c + 1);
            assert_int_equal(enc(t, nextafter(mid, 0.0)), c);
        }
    }
    assert_true(isnan(dec(t, 0xFF)));
    assert_int_equal(enc(t, NAN), 0xFF);
    assert_int_equal(enc(t, 1.0), 0x7F);
    assert_int_equal(enc(t, 0.75), 0x7F); /* tie: up to 1 */
    assert_int_equal(enc(t, 1.5 * ldexp(1.0, -128)), 0x00);
    expect_refused(t, nextafter(1.5 * ldexp(1.0, -128), 0.0), HURRAY_E_RANGE);
    expect_refused(t, 1e-300, HURRAY_E_RANGE);
    expect_refused(t, 1.5 * ldexp(1.0, 127), HURRAY_E_RANGE);
    assert_int_equal(enc(t, nextafter(1.5 * ldexp(1.0, 127), 0.0)), 0xFE);
    expect_refused(t, 1e300, HURRAY_E_RANGE);
    expect_refused(t, 0.0, HURRAY_E_ARGUMENT);
    expect_refused(t, -0.0, HURRAY_E_ARGUMENT);
    expect_refused(t, -1.0, HURRAY_E_ARGUMENT);
    expect_refused(t, INFINITY, HURRAY_E_ARGUMENT);
    expect_refused(t, -INFINITY, HURRAY_E_ARGUMENT);
}

/* float64 is the value's own bits; float32 rounds like a C conversion (nearest even). */
static void test_HR_DTYPE_6_float32_and_float64(void **state) {
    (void)state;
    const double xs[] = {0.1, -2.5, 1e-40, 3.4e38, ldexp(1.0, -126), 16777217.0, -0.0};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        float f = (float)xs[i];
        uint32_t bits;
        memcpy(&bits, &f, 4);
        assert_int_equal(enc(HURRAY_DTYPE_FLOAT32, xs[i]), bits);
        assert_true(dec(HURRAY_DTYPE_FLOAT32, bits) == (double)f);
        uint64_t b64;
        memcpy(&b64, &xs[i], 8);
        assert_int_equal(enc(HURRAY_DTYPE_FLOAT64, xs[i]), b64);
        assert_true(dec(HURRAY_DTYPE_FLOAT64, b64) == xs[i]);
    }
}

static void test_HR_DTYPE_6_arguments(void **state) {
    (void)state;
    struct hurray_error err;
    uint64_t code = 0;
    double v = 0;
    const uint8_t not_float[] = {HURRAY_DTYPE_INT8, HURRAY_DTYPE_BOOL, HURRAY_DTYPE_COMPLEX64,
                                 HURRAY_DTYPE_INT4, 0x00, 0x10, 0xF3, 0xFF};
    for (size_t i = 0; i < sizeof not_float; i++) {
        test_error_poison(&err);
        assert_status(hurray_float_encode(not_float[i], 1.0, &code, &err), HURRAY_E_ARGUMENT);
        assert_hurray_error(&err, HURRAY_E_ARGUMENT, "dtype");
        test_error_poison(&err);
        assert_status(hurray_float_decode(not_float[i], 0, &v, &err), HURRAY_E_ARGUMENT);
        assert_hurray_error(&err, HURRAY_E_ARGUMENT, "dtype");
    }
    assert_status(hurray_float_encode(HURRAY_DTYPE_FLOAT16, 1.0, NULL, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_float_decode(HURRAY_DTYPE_FLOAT16, 0, NULL, NULL), HURRAY_E_ARGUMENT);
    test_error_poison(&err);
    assert_status(hurray_float_decode(HURRAY_DTYPE_FLOAT4_E2M1FN, 0x10, &v, &err),
                  HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "code");
    assert_status(hurray_float_decode(HURRAY_DTYPE_FLOAT6_E2M3FN, 0x40, &v, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_float_decode(HURRAY_DTYPE_FLOAT8_E8M0FNU, 0x100, &v, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_float_decode(HURRAY_DTYPE_FLOAT16, 0x10000, &v, NULL),
                  HURRAY_E_ARGUMENT);
    /* a refused value names it in the message */
    test_error_poison(&err);
    assert_status(hurray_float_encode(HURRAY_DTYPE_FLOAT8_E4M3FN, 1000.0, &code, &err),
                  HURRAY_E_RANGE);
    assert_non_null(strstr(err.message, "1000"));
    assert_non_null(strstr(err.message, "float8_e4m3fn"));
    assert_non_null(strstr(err.message, "448"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_DTYPE_6_every_code_round_trips),
        cmocka_unit_test(test_HR_DTYPE_1_largest_finite_values),
        cmocka_unit_test(test_HR_DTYPE_6_ties_to_even),
        cmocka_unit_test(test_HR_DTYPE_6_underflow_to_zero),
        cmocka_unit_test(test_HR_DTYPE_7_out_of_range_and_specials),
        cmocka_unit_test(test_HR_DTYPE_8_e8m0),
        cmocka_unit_test(test_HR_DTYPE_6_float32_and_float64),
        cmocka_unit_test(test_HR_DTYPE_6_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
