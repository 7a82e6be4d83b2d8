/* Encoding real values as floating-point elements, and decoding them.
 * docs/spec/element-types.md § Encoding values (HR-DTYPE-6 … 8).
 *
 * The one place the rounding, overflow and special-value rules of every
 * floating-point element type live: hurray_float_encode turns a binary64
 * value into an element code, hurray_float_decode a code into its exact
 * binary64 value (every code of every type has one). Bindings (Python's
 * ones/full) call these and keep no rule of their own.
 *
 * Rounding is done here in integer arithmetic on an exactly scaled value, so
 * the result does not depend on the floating-point environment's rounding
 * mode. */
#include <math.h>

#include "internal.h"

/* What a code with every exponent bit set means (HR-DTYPE-7 § Field layout). */
enum special {
    SPECIAL_IEEE = 1, /* exponent all ones: Inf (fraction 0) or NaN */
    SPECIAL_FN = 2,   /* magnitude all ones is NaN; no Inf (float8_e4m3fn) */
    SPECIAL_FNUZ = 3, /* the code 1000…0 is the one NaN; no Inf, no -0 */
    SPECIAL_NONE = 4  /* every code is finite (float6, float4) */
};

struct float_format {
    uint8_t tag;
    uint8_t bits;        /* element width */
    uint8_t ebits;       /* exponent field */
    uint8_t mbits;       /* fraction field */
    int16_t bias;
    uint8_t special;     /* enum special */
    uint8_t saturate;    /* 1: a finite overflow saturates; 0: refused (RANGE) */
    uint64_t max_finite; /* the largest finite magnitude code */
};

/* element-types.md § Tag table (bias, widths) and § Encoding values (the rest). */
static const struct float_format formats[] = {
    {HURRAY_DTYPE_FLOAT16, 16, 5, 10, 15, SPECIAL_IEEE, 0, 0x7BFFu},
    {HURRAY_DTYPE_BFLOAT16, 16, 8, 7, 127, SPECIAL_IEEE, 0, 0x7F7Fu},
    {HURRAY_DTYPE_FLOAT32, 32, 8, 23, 127, SPECIAL_IEEE, 0, 0x7F7FFFFFu},
    {HURRAY_DTYPE_FLOAT8_E4M3FN, 8, 4, 3, 7, SPECIAL_FN, 0, 0x7Eu},
    {HURRAY_DTYPE_FLOAT8_E4M3FNUZ, 8, 4, 3, 8, SPECIAL_FNUZ, 0, 0x7Fu},
    {HURRAY_DTYPE_FLOAT8_E5M2, 8, 5, 2, 15, SPECIAL_IEEE, 0, 0x7Bu},
    {HURRAY_DTYPE_FLOAT8_E5M2FNUZ, 8, 5, 2, 16, SPECIAL_FNUZ, 0, 0x7Fu},
    {HURRAY_DTYPE_FLOAT6_E2M3FN, 6, 2, 3, 1, SPECIAL_NONE, 1, 0x1Fu},
    {HURRAY_DTYPE_FLOAT6_E3M2FN, 6, 3, 2, 3, SPECIAL_NONE, 1, 0x1Fu},
    {HURRAY_DTYPE_FLOAT4_E2M1FN, 4, 2, 1, 1, SPECIAL_NONE, 1, 0x7u},
};

#define FORMAT_COUNT (sizeof formats / sizeof formats[0])

#define E8M0_BIAS 127
#define E8M0_NAN 0xFFu

static const struct float_format *format_of(uint8_t tag) {
    for (size_t i = 0; i < FORMAT_COUNT; i++)
        if (formats[i].tag == tag) return &formats[i];
    return NULL;
}

static int not_float(uint8_t tag, struct hurray_error *err) {
    const struct hurray_dtype_info *info = hurray_dtype_info(tag);
    if (info == NULL)
        return hri_fail(err, HURRAY_E_ARGUMENT, "dtype",
                        "dtype: tag 0x%02X is not a named element type", tag);
    return hri_fail(err, HURRAY_E_ARGUMENT, "dtype",
                    "dtype: %s is not a floating-point element type", info->name);
}

/* ---- decoding ------------------------------------------------------------------------------ */

/* Magnitude code -> value for a sign/exponent/fraction format (no specials). */
static double finite_value(const struct float_format *f, uint64_t mag) {
    uint64_t e = mag >> f->mbits, m = mag & ((UINT64_C(1) << f->mbits) - 1u);
    if (e == 0) return ldexp((double)m, 1 - f->bias - f->mbits);
    return ldexp((double)(m | (UINT64_C(1) << f->mbits)), (int)e - f->bias - f->mbits);
}

int hurray_float_decode(uint8_t dtype, uint64_t code, double *value, struct hurray_error *err) {
    HR_FAIL_IF(value == NULL, err, HURRAY_E_ARGUMENT, "value", "value: NULL output");
    if (dtype == HURRAY_DTYPE_FLOAT64) {
        memcpy(value, &code, sizeof *value);
        return HURRAY_OK;
    }
    if (dtype == HURRAY_DTYPE_FLOAT8_E8M0FNU) {
        HR_FAIL_IF(code > 0xFFu, err, HURRAY_E_ARGUMENT, "code",
                   "code: 0x%llX has bits beyond float8_e8m0fnu's 8", (unsigned long long)code);
        *value = code == E8M0_NAN ? (double)NAN : ldexp(1.0, (int)code - E8M0_BIAS);
        return HURRAY_OK;
    }
    const struct float_format *f = format_of(dtype);
    if (f == NULL) return not_float(dtype, err);
    HR_FAIL_IF(code >> f->bits, err, HURRAY_E_ARGUMENT, "code",
               "code: 0x%llX has bits beyond %s's %u", (unsigned long long)code,
               hurray_dtype_info(dtype)->name, (unsigned)f->bits);
    uint64_t sign_bit = UINT64_C(1) << (f->bits - 1), mag = code & (sign_bit - 1u);
    uint64_t exp_ones = ((UINT64_C(1) << f->ebits) - 1u) << f->mbits;
    double v;
    if (f->special == SPECIAL_IEEE && (mag & exp_ones) == exp_ones)
        v = mag == exp_ones ? (double)INFINITY : (double)NAN;
    else if (f->special == SPECIAL_FN && mag == sign_bit - 1u)
        v = (double)NAN;
    else if (f->special == SPECIAL_FNUZ && code == sign_bit)
        v = (double)NAN;
    else
        v = finite_value(f, mag);
    *value = (code & sign_bit) ? -v : v;
    return HURRAY_OK;
}

/* ---- encoding ------------------------------------------------------------------------------ */

/* The largest finite value of a format, for messages. */
static double largest(const struct float_format *f) { return finite_value(f, f->max_finite); }

/* y >= 0 an exact binary64 value below 2^53: rounded to an integer, ties to even. */
static uint64_t round_half_even(double y) {
    double fl = floor(y), frac = y - fl; /* both exact */
    uint64_t r = (uint64_t)fl;
    if (frac > 0.5 || (frac == 0.5 && (r & 1u))) r++;
    return r;
}

/* float8_e8m0fnu (HR-DTYPE-8): positive values only, ties up, 2^-127 … 2^127. */
static int encode_e8m0(double x, uint64_t *code, struct hurray_error *err) {
    if (isnan(x)) {
        *code = E8M0_NAN;
        return HURRAY_OK;
    }
    HR_FAIL_IF(x == 0.0 || signbit(x), err, HURRAY_E_ARGUMENT, "value",
               "value: %g has no encoding in float8_e8m0fnu, whose values are the positive "
               "powers of two 2^-127 ... 2^127 (no zero, no sign)",
               x);
    HR_FAIL_IF(isinf(x), err, HURRAY_E_ARGUMENT, "value",
               "value: inf has no encoding in float8_e8m0fnu (no infinity)");
    int k = 0;
    double m = frexp(x, &k); /* x = m * 2^k, m in [0.5, 1): x in [2^(k-1), 2^k) */
    k -= 1;
    if (m >= 0.75) k += 1; /* x >= 1.5 * 2^(k-1): the upper power, ties included */
    HR_FAIL_IF(k < -E8M0_BIAS || k > E8M0_BIAS, err, HURRAY_E_RANGE, "value",
               "value: %g rounds to 2^%d, outside float8_e8m0fnu's range 2^-127 ... 2^127", x,
               k);
    *code = (uint64_t)(k + E8M0_BIAS);
    return HURRAY_OK;
}

int hurray_float_encode(uint8_t dtype, double x, uint64_t *code, struct hurray_error *err) {
    HR_FAIL_IF(code == NULL, err, HURRAY_E_ARGUMENT, "code", "code: NULL output");
    if (dtype == HURRAY_DTYPE_FLOAT64) { /* the value's own bits */
        memcpy(code, &x, sizeof x);
        return HURRAY_OK;
    }
    if (dtype == HURRAY_DTYPE_FLOAT8_E8M0FNU) return encode_e8m0(x, code, err);
    const struct float_format *f = format_of(dtype);
    if (f == NULL) return not_float(dtype, err);
    const char *name = hurray_dtype_info(dtype)->name;
    uint64_t sign = signbit(x) ? UINT64_C(1) << (f->bits - 1) : 0;
    uint64_t exp_ones = ((UINT64_C(1) << f->ebits) - 1u) << f->mbits;
    if (isnan(x)) {
        switch (f->special) {
        case SPECIAL_IEEE: /* quiet: the top fraction bit */
            *code = sign | exp_ones | (UINT64_C(1) << (f->mbits - 1));
            return HURRAY_OK;
        case SPECIAL_FN: *code = sign | exp_ones | ((UINT64_C(1) << f->mbits) - 1u); return HURRAY_OK;
        case SPECIAL_FNUZ: *code = UINT64_C(1) << (f->bits - 1); return HURRAY_OK;
        default:
            return hri_fail(err, HURRAY_E_ARGUMENT, "value",
                            "value: nan has no encoding in %s (no NaN)", name);
        }
    }
    if (isinf(x)) {
        HR_FAIL_IF(f->special != SPECIAL_IEEE, err, HURRAY_E_ARGUMENT, "value",
                   "value: %sinf has no encoding in %s (no infinity)", sign ? "-" : "", name);
        *code = sign | exp_ones;
        return HURRAY_OK;
    }
    double a = fabs(x);
    uint64_t mag = 0;
    if (a != 0.0) {
        int k = 0;
        (void)frexp(a, &k);
        int e = k - 1; /* a in [2^e, 2^(e+1)) */
        int emin = 1 - f->bias, emax_field = (1 << f->ebits) - 1;
        if (e + f->bias > emax_field) {
            mag = UINT64_MAX; /* past every exponent the field has: overflow */
        } else {
            int q = (e < emin ? emin : e) - f->mbits; /* the quantum at a's binade */
            uint64_t r = round_half_even(ldexp(a, -q)); /* exact scaling, then one rounding */
            /* subnormal: r is the code (2^mbits: the smallest normal's); normal: r in
             * [2^mbits, 2^(mbits+1)], and a carry moves into the exponent field */
            mag = e < emin ? r
                           : ((uint64_t)(e + f->bias) << f->mbits) + r - (UINT64_C(1) << f->mbits);
        }
    }
    if (mag > f->max_finite) {
        if (!f->saturate)
            return hri_fail(err, HURRAY_E_RANGE, "value",
                            "value: %g is out of range for %s (largest finite %g)", x, name,
                            largest(f));
        mag = f->max_finite; /* HR-DTYPE-7: float6 and float4 saturate */
    }
    if (mag == 0 && f->special == SPECIAL_FNUZ) sign = 0; /* no -0: the code is the NaN */
    *code = sign | mag;
    return HURRAY_OK;
}
