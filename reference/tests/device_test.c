/* Devices, memory classes, validity and the DLPack mapping (device.c).
 * devices.md */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "hurray/hurray.h"
#include "test_support.h"

/* devices.md § Device tags and § Memory classes, transcribed independently. */
static const char *const spec_devices[] = {
    NULL, "cpu", "cuda", "rocm", "metal", "vulkan", "opencl", "oneapi", "webgpu", "hexagon",
    "maia",
};
#define SPEC_DEVICE_LAST 0x0A
static const char *const spec_classes[] = {NULL, "standard", "host_pinned", "unified", "peer"};
#define SPEC_CLASS_LAST 0x04

/* devices.md § Validity table (HR-DEV-4): rows cpu..maia then private device;
 * columns standard, host_pinned, unified, peer, private class. */
static const char *const spec_validity[11] = {
    /* cpu     */ "YYY-Y",
    /* cuda    */ "YYYYY",
    /* rocm    */ "YYYYY",
    /* metal   */ "YYY-Y",
    /* vulkan  */ "Y---Y",
    /* opencl  */ "Y---Y",
    /* oneapi  */ "YYYYY",
    /* webgpu  */ "Y---Y",
    /* hexagon */ "Y---Y",
    /* maia    */ "Y---Y",
    /* private */ "YYYYY",
};

/* devices.md § Hurray → DLPack (HR-DEV-5): a DLDeviceType, or 0 for an
 * invalid pair, or a negative note number for an Unsupported cell. */
#define INV 0
#define N5 (-5) /* kDLROCMManaged does not exist */
#define N6 (-6) /* DLPack has no peer memory */
#define N7 (-7) /* no mapping fabricated for private values */
static const int spec_dlpack[11][5] = {
    /* cpu     */ {1, 1, 1, INV, N7},
    /* cuda    */ {2, 3, 13, N6, N7},
    /* rocm    */ {10, 11, N5, N6, N7},
    /* metal   */ {8, 8, 8, INV, N7},
    /* vulkan  */ {7, INV, INV, INV, N7},
    /* opencl  */ {4, INV, INV, INV, N7},
    /* oneapi  */ {14, 14, 14, N6, N7},
    /* webgpu  */ {15, INV, INV, INV, N7},
    /* hexagon */ {16, INV, INV, INV, N7},
    /* maia    */ {17, INV, INV, INV, N7},
    /* private */ {N7, N7, N7, N7, N7},
};

static const char *note_phrase(int note) {
    switch (note) {
    case N5: return "kDLROCMManaged does not exist";
    case N6: return "DLPack has no peer memory";
    default: return "no DLPack mapping is fabricated for private values";
    }
}

/* Private tags to stand for the private row/column: both ends and a middle. */
static const uint8_t private_samples[] = {0xF0, 0xF7, 0xFE};
#define PRIVATE_SAMPLE_COUNT (sizeof private_samples / sizeof private_samples[0])

static int device_row(uint8_t d) { return d >= 0xF0 ? 10 : d - 1; }
static int class_col(uint8_t c) { return c >= 0xF0 ? 4 : c - 1; }

static int expected_kind(int b, int last_named) {
    if (b == 0x00 || b == 0xFF) return HURRAY_TAG_INVALID;
    if (b >= 0x01 && b <= last_named) return HURRAY_TAG_NAMED;
    if (b >= 0xF0 && b <= 0xFE) return HURRAY_TAG_PRIVATE;
    return HURRAY_TAG_RESERVED;
}

static void assert_hex_in(const char *message, uint8_t byte) {
    char hex[8];
    snprintf(hex, sizeof hex, "0x%02X", byte);
    assert_non_null(strstr(message, hex));
}

/* ---- tags and names (HR-DEV-1, HR-DEV-3) ------------------------------------- */

static void test_HR_DEV_1_device_enum_values(void **state) {
    (void)state;
    const int e[] = {0, HURRAY_DEVICE_CPU, HURRAY_DEVICE_CUDA, HURRAY_DEVICE_ROCM,
                     HURRAY_DEVICE_METAL, HURRAY_DEVICE_VULKAN, HURRAY_DEVICE_OPENCL,
                     HURRAY_DEVICE_ONEAPI, HURRAY_DEVICE_WEBGPU, HURRAY_DEVICE_HEXAGON,
                     HURRAY_DEVICE_MAIA};
    for (int i = 1; i <= SPEC_DEVICE_LAST; i++) assert_int_equal(e[i], i);
    const int m[] = {0, HURRAY_MEM_STANDARD, HURRAY_MEM_HOST_PINNED, HURRAY_MEM_UNIFIED,
                     HURRAY_MEM_PEER};
    for (int i = 1; i <= SPEC_CLASS_LAST; i++) assert_int_equal(m[i], i);
}

/* conventions.md § Tag spaces: all 256 bytes of both spaces, one kind each. */
static void test_HR_DEV_2_tag_kinds_all_bytes(void **state) {
    (void)state;
    int dev_counts[5] = {0}, cls_counts[5] = {0};
    for (int b = 0; b < 256; b++) {
        int dk = hurray_device_tag_kind((uint8_t)b);
        int ck = hurray_memory_class_tag_kind((uint8_t)b);
        assert_int_equal(dk, expected_kind(b, SPEC_DEVICE_LAST));
        assert_int_equal(ck, expected_kind(b, SPEC_CLASS_LAST));
        dev_counts[dk]++;
        cls_counts[ck]++;
    }
    assert_int_equal(dev_counts[HURRAY_TAG_NAMED], 10);
    assert_int_equal(dev_counts[HURRAY_TAG_PRIVATE], 15);
    assert_int_equal(dev_counts[HURRAY_TAG_INVALID], 2);
    assert_int_equal(dev_counts[HURRAY_TAG_RESERVED], 256 - 27);
    assert_int_equal(cls_counts[HURRAY_TAG_NAMED], 4);
    assert_int_equal(cls_counts[HURRAY_TAG_RESERVED], 256 - 21);
}

static void test_HR_DEV_1_names(void **state) {
    (void)state;
    for (int b = 0; b < 256; b++) {
        const char *dn = hurray_device_name((uint8_t)b);
        const char *cn = hurray_memory_class_name((uint8_t)b);
        int dk = expected_kind(b, SPEC_DEVICE_LAST);
        int ck = expected_kind(b, SPEC_CLASS_LAST);
        if (dk == HURRAY_TAG_NAMED) assert_string_equal(dn, spec_devices[b]);
        else if (dk == HURRAY_TAG_PRIVATE) assert_string_equal(dn, "private");
        else assert_null(dn);
        if (ck == HURRAY_TAG_NAMED) assert_string_equal(cn, spec_classes[b]);
        else if (ck == HURRAY_TAG_PRIVATE) assert_string_equal(cn, "private");
        else assert_null(cn);
    }
}

static void test_HR_DEV_1_from_name(void **state) {
    (void)state;
    for (int i = 1; i <= SPEC_DEVICE_LAST; i++) {
        uint8_t tag = 0;
        assert_status(hurray_device_from_name(spec_devices[i], strlen(spec_devices[i]), &tag),
                      HURRAY_OK);
        assert_int_equal(tag, i);
    }
    for (int i = 1; i <= SPEC_CLASS_LAST; i++) {
        uint8_t tag = 0;
        assert_status(
            hurray_memory_class_from_name(spec_classes[i], strlen(spec_classes[i]), &tag),
            HURRAY_OK);
        assert_int_equal(tag, i);
    }
    /* not NUL-terminated: only len bytes count */
    uint8_t tag = 0;
    assert_status(hurray_device_from_name("cudax", 4, &tag), HURRAY_OK);
    assert_int_equal(tag, HURRAY_DEVICE_CUDA);
    assert_status(hurray_memory_class_from_name("peerless", 4, &tag), HURRAY_OK);
    assert_int_equal(tag, HURRAY_MEM_PEER);
}

static void test_HR_DEV_1_from_name_unknown(void **state) {
    (void)state;
    const char *bad[] = {"private", "", "CPU", "cpu ", "cud", "gpu", "standard", "kDLCPU",
                         "host-pinned", "pinned"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t tag = 0x77;
        assert_status(hurray_device_from_name(bad[i], strlen(bad[i]), &tag), HURRAY_E_ARGUMENT);
        assert_int_equal(tag, 0x77);
    }
    const char *bad_cls[] = {"private", "", "Standard", "host_pinned ", "cpu", "managed"};
    for (size_t i = 0; i < sizeof bad_cls / sizeof bad_cls[0]; i++) {
        uint8_t tag = 0x77;
        assert_status(hurray_memory_class_from_name(bad_cls[i], strlen(bad_cls[i]), &tag),
                      HURRAY_E_ARGUMENT);
        assert_int_equal(tag, 0x77);
    }
    uint8_t tag = 0;
    assert_status(hurray_device_from_name(NULL, 0, &tag), HURRAY_E_ARGUMENT);
    assert_status(hurray_device_from_name("cpu", 3, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_memory_class_from_name(NULL, 3, &tag), HURRAY_E_ARGUMENT);
    assert_status(hurray_memory_class_from_name("peer", 4, NULL), HURRAY_E_ARGUMENT);
}

/* ---- device_check (HR-DEV-2, HR-DEV-4) ---------------------------------------- */

/* One cell of the validity table, checked for a concrete pair. */
static void check_validity_cell(uint8_t device, uint8_t cls) {
    int valid = spec_validity[device_row(device)][class_col(cls)] == 'Y';
    struct hurray_error err;
    test_error_poison(&err);
    int st = hurray_device_check(device, cls, &err);
    assert_status(hurray_device_check(device, cls, NULL), st);
    if (valid) {
        assert_status(st, HURRAY_OK);
        return;
    }
    assert_status(st, HURRAY_E_COMBINATION);
    assert_hurray_error(&err, HURRAY_E_COMBINATION, "memory_class");
    /* the message names both values */
    assert_non_null(strstr(err.message, hurray_device_name(device)));
    assert_non_null(strstr(err.message, hurray_memory_class_name(cls)));
    assert_hex_in(err.message, device);
    assert_hex_in(err.message, cls);
}

/* HR-DEV-4: every cell of the 11 x 5 table. */
static void test_HR_DEV_4_validity_table(void **state) {
    (void)state;
    for (int d = 1; d <= SPEC_DEVICE_LAST; d++) {
        for (int c = 1; c <= SPEC_CLASS_LAST; c++) check_validity_cell((uint8_t)d, (uint8_t)c);
        for (size_t p = 0; p < PRIVATE_SAMPLE_COUNT; p++)
            check_validity_cell((uint8_t)d, private_samples[p]);
    }
    for (size_t p = 0; p < PRIVATE_SAMPLE_COUNT; p++) {
        for (int c = 1; c <= SPEC_CLASS_LAST; c++)
            check_validity_cell(private_samples[p], (uint8_t)c);
        for (size_t q = 0; q < PRIVATE_SAMPLE_COUNT; q++)
            check_validity_cell(private_samples[p], private_samples[q]);
    }
    /* 17 "—" cells: cpu/peer, metal/peer, and three each for five devices */
    int invalid = 0;
    for (int r = 0; r < 11; r++)
        for (int c = 0; c < 5; c++) invalid += spec_validity[r][c] == '-';
    assert_int_equal(invalid, 17);
}

/* HR-DEV-2: every byte pair; reserved and invalid bytes are refused, never
 * taken as private; the device byte is judged before the class byte. */
static void test_HR_DEV_2_all_byte_pairs(void **state) {
    (void)state;
    for (int d = 0; d < 256; d++) {
        int dk = expected_kind(d, SPEC_DEVICE_LAST);
        for (int c = 0; c < 256; c++) {
            int ck = expected_kind(c, SPEC_CLASS_LAST);
            struct hurray_error err;
            test_error_poison(&err);
            int st = hurray_device_check((uint8_t)d, (uint8_t)c, &err);
            const char *field = NULL;
            uint8_t byte = 0;
            int want;
            if (dk == HURRAY_TAG_INVALID || dk == HURRAY_TAG_RESERVED) {
                want = dk == HURRAY_TAG_INVALID ? HURRAY_E_INVALID_TAG : HURRAY_E_RESERVED_TAG;
                field = "device";
                byte = (uint8_t)d;
            } else if (ck == HURRAY_TAG_INVALID || ck == HURRAY_TAG_RESERVED) {
                want = ck == HURRAY_TAG_INVALID ? HURRAY_E_INVALID_TAG : HURRAY_E_RESERVED_TAG;
                field = "memory_class";
                byte = (uint8_t)c;
            } else {
                want = spec_validity[device_row((uint8_t)d)][class_col((uint8_t)c)] == 'Y'
                           ? HURRAY_OK
                           : HURRAY_E_COMBINATION;
            }
            assert_status(st, want);
            if (field) {
                assert_hurray_error(&err, want, field);
                assert_hex_in(err.message, byte);
            }
        }
    }
}

static void test_HR_DEV_2_examples(void **state) {
    (void)state;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_device_check(0x0B, HURRAY_MEM_STANDARD, &err), HURRAY_E_RESERVED_TAG);
    assert_hurray_error(&err, HURRAY_E_RESERVED_TAG, "device");
    assert_non_null(strstr(err.message, "0x0B"));
    assert_status(hurray_device_check(0xEF, HURRAY_MEM_STANDARD, &err), HURRAY_E_RESERVED_TAG);
    assert_status(hurray_device_check(0x00, HURRAY_MEM_STANDARD, &err), HURRAY_E_INVALID_TAG);
    assert_status(hurray_device_check(0xFF, HURRAY_MEM_STANDARD, &err), HURRAY_E_INVALID_TAG);
    assert_status(hurray_device_check(HURRAY_DEVICE_CPU, 0x05, &err), HURRAY_E_RESERVED_TAG);
    assert_hurray_error(&err, HURRAY_E_RESERVED_TAG, "memory_class");
    assert_non_null(strstr(err.message, "0x05"));
    assert_status(hurray_device_check(HURRAY_DEVICE_CPU, 0xFF, &err), HURRAY_E_INVALID_TAG);
    assert_hurray_error(&err, HURRAY_E_INVALID_TAG, "memory_class");
    assert_status(hurray_device_check(HURRAY_DEVICE_CPU, HURRAY_MEM_PEER, &err),
                  HURRAY_E_COMBINATION);
    assert_non_null(strstr(err.message, "cpu"));
    assert_non_null(strstr(err.message, "peer"));
}

/* ---- DLPack (HR-DEV-5, HR-DEV-7) -------------------------------------------- */

static void check_dlpack_cell(uint8_t device, uint8_t cls) {
    int want = spec_dlpack[device_row(device)][class_col(cls)];
    struct hurray_error err;
    test_error_poison(&err);
    int32_t dl = 0x5A5A;
    int st = hurray_device_to_dlpack(device, cls, &dl, &err);
    int32_t dl2 = 0;
    assert_status(hurray_device_to_dlpack(device, cls, &dl2, NULL), st);
    if (want > 0) {
        assert_status(st, HURRAY_OK);
        assert_int_equal(dl, want);
        return;
    }
    assert_int_equal(dl, 0x5A5A); /* untouched on failure */
    if (want == INV) {
        assert_status(st, HURRAY_E_COMBINATION);
        assert_hurray_error(&err, HURRAY_E_COMBINATION, NULL);
        return;
    }
    assert_status(st, HURRAY_E_UNSUPPORTED);
    assert_hurray_error(&err, HURRAY_E_UNSUPPORTED, NULL);
    assert_non_null(strstr(err.message, note_phrase(want)));
    char pair[64];
    snprintf(pair, sizeof pair, "%s/%s has no DLPack device type", hurray_device_name(device),
             hurray_memory_class_name(cls));
    assert_non_null(strstr(err.message, pair));
}

/* HR-DEV-5: every cell of § Hurray → DLPack, Unsupported ones included. */
static void test_HR_DEV_5_dlpack_table(void **state) {
    (void)state;
    for (int d = 1; d <= SPEC_DEVICE_LAST; d++) {
        for (int c = 1; c <= SPEC_CLASS_LAST; c++) check_dlpack_cell((uint8_t)d, (uint8_t)c);
        for (size_t p = 0; p < PRIVATE_SAMPLE_COUNT; p++)
            check_dlpack_cell((uint8_t)d, private_samples[p]);
    }
    for (size_t p = 0; p < PRIVATE_SAMPLE_COUNT; p++) {
        for (int c = 1; c <= SPEC_CLASS_LAST; c++)
            check_dlpack_cell(private_samples[p], (uint8_t)c);
        for (size_t q = 0; q < PRIVATE_SAMPLE_COUNT; q++)
            check_dlpack_cell(private_samples[p], private_samples[q]);
    }
    /* The two tables agree: invalid in one exactly where "—" in the other. */
    for (int r = 0; r < 11; r++)
        for (int c = 0; c < 5; c++)
            assert_int_equal(spec_dlpack[r][c] == INV, spec_validity[r][c] == '-');
}

static void test_HR_DEV_5_rocm_unified_message(void **state) {
    (void)state;
    struct hurray_error err;
    test_error_poison(&err);
    int32_t dl = 0;
    assert_status(hurray_device_to_dlpack(HURRAY_DEVICE_ROCM, HURRAY_MEM_UNIFIED, &dl, &err),
                  HURRAY_E_UNSUPPORTED);
    assert_non_null(strstr(err.message,
                           "rocm/unified has no DLPack device type "
                           "(kDLROCMManaged does not exist"));
}

/* Invalid and reserved bytes get device_check's status, not UNSUPPORTED. */
static void test_HR_DEV_5_bad_tags_before_table(void **state) {
    (void)state;
    struct hurray_error err;
    int32_t dl = 0;
    test_error_poison(&err);
    assert_status(hurray_device_to_dlpack(0x00, HURRAY_MEM_STANDARD, &dl, &err),
                  HURRAY_E_INVALID_TAG);
    assert_hurray_error(&err, HURRAY_E_INVALID_TAG, "device");
    assert_status(hurray_device_to_dlpack(0x20, HURRAY_MEM_STANDARD, &dl, &err),
                  HURRAY_E_RESERVED_TAG);
    assert_status(hurray_device_to_dlpack(HURRAY_DEVICE_CUDA, 0xFF, &dl, &err),
                  HURRAY_E_INVALID_TAG);
    assert_hurray_error(&err, HURRAY_E_INVALID_TAG, "memory_class");
    assert_status(hurray_device_to_dlpack(HURRAY_DEVICE_CUDA, 0x10, &dl, &err),
                  HURRAY_E_RESERVED_TAG);
    assert_status(hurray_device_to_dlpack(HURRAY_DEVICE_VULKAN, HURRAY_MEM_UNIFIED, &dl, &err),
                  HURRAY_E_COMBINATION);
    assert_status(hurray_device_to_dlpack(HURRAY_DEVICE_CPU, HURRAY_MEM_STANDARD, NULL, &err),
                  HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, NULL);
}

/* HR-DEV-7: § DLPack → Hurray, in full. */
static void test_HR_DEV_7_from_dlpack(void **state) {
    (void)state;
    const struct {
        int32_t dl;
        uint8_t device, cls;
    } spec_import[] = {
        {HURRAY_DL_CPU, HURRAY_DEVICE_CPU, HURRAY_MEM_STANDARD},
        {HURRAY_DL_CUDA, HURRAY_DEVICE_CUDA, HURRAY_MEM_STANDARD},
        {HURRAY_DL_CUDA_HOST, HURRAY_DEVICE_CUDA, HURRAY_MEM_HOST_PINNED},
        {HURRAY_DL_CUDA_MANAGED, HURRAY_DEVICE_CUDA, HURRAY_MEM_UNIFIED},
        {HURRAY_DL_ROCM, HURRAY_DEVICE_ROCM, HURRAY_MEM_STANDARD},
        {HURRAY_DL_ROCM_HOST, HURRAY_DEVICE_ROCM, HURRAY_MEM_HOST_PINNED},
        {HURRAY_DL_METAL, HURRAY_DEVICE_METAL, HURRAY_MEM_STANDARD},
        {HURRAY_DL_VULKAN, HURRAY_DEVICE_VULKAN, HURRAY_MEM_STANDARD},
        {HURRAY_DL_OPENCL, HURRAY_DEVICE_OPENCL, HURRAY_MEM_STANDARD},
        {HURRAY_DL_ONEAPI, HURRAY_DEVICE_ONEAPI, HURRAY_MEM_STANDARD},
        {HURRAY_DL_WEBGPU, HURRAY_DEVICE_WEBGPU, HURRAY_MEM_STANDARD},
        {HURRAY_DL_HEXAGON, HURRAY_DEVICE_HEXAGON, HURRAY_MEM_STANDARD},
        {HURRAY_DL_MAIA, HURRAY_DEVICE_MAIA, HURRAY_MEM_STANDARD},
    };
    const size_t n = sizeof spec_import / sizeof spec_import[0];
    for (int32_t dl = -300; dl <= 300; dl++) {
        size_t hit = n;
        for (size_t i = 0; i < n; i++)
            if (spec_import[i].dl == dl) hit = i;
        uint8_t device = 0x77, cls = 0x77;
        struct hurray_error err;
        test_error_poison(&err);
        int st = hurray_device_from_dlpack(dl, &device, &cls, &err);
        if (hit < n) {
            assert_status(st, HURRAY_OK);
            assert_int_equal(device, spec_import[hit].device);
            assert_int_equal(cls, spec_import[hit].cls);
        } else {
            assert_status(st, HURRAY_E_UNSUPPORTED);
            assert_hurray_error(&err, HURRAY_E_UNSUPPORTED, "dl_device_type");
            assert_int_equal(device, 0x77);
            assert_int_equal(cls, 0x77);
            assert_status(hurray_device_from_dlpack(dl, &device, &cls, NULL),
                          HURRAY_E_UNSUPPORTED);
        }
    }
    /* DLPack values Hurray has no device for: kDLVPI (9), kDLExtDev (12). */
    uint8_t device, cls;
    assert_status(hurray_device_from_dlpack(HURRAY_DL_VPI, &device, &cls, NULL),
                  HURRAY_E_UNSUPPORTED);
    assert_status(hurray_device_from_dlpack(HURRAY_DL_EXT_DEV, &device, &cls, NULL),
                  HURRAY_E_UNSUPPORTED);
    assert_status(hurray_device_from_dlpack(INT32_MIN, &device, &cls, NULL),
                  HURRAY_E_UNSUPPORTED);
    assert_status(hurray_device_from_dlpack(INT32_MAX, &device, &cls, NULL),
                  HURRAY_E_UNSUPPORTED);
    assert_status(hurray_device_from_dlpack(HURRAY_DL_CPU, NULL, &cls, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_device_from_dlpack(HURRAY_DL_CPU, &device, NULL, NULL),
                  HURRAY_E_ARGUMENT);
}

/* from_dlpack then to_dlpack is the identity on every importable type, and
 * every exportable cell imports back to a pair with the same DLPack type. */
static void test_HR_DEV_7_round_trip(void **state) {
    (void)state;
    for (int32_t dl = 0; dl <= 32; dl++) {
        uint8_t device, cls;
        if (hurray_device_from_dlpack(dl, &device, &cls, NULL) != HURRAY_OK) continue;
        assert_status(hurray_device_check(device, cls, NULL), HURRAY_OK);
        int32_t back = -1;
        assert_status(hurray_device_to_dlpack(device, cls, &back, NULL), HURRAY_OK);
        assert_int_equal(back, dl);
    }
    for (int d = 1; d <= SPEC_DEVICE_LAST; d++) {
        for (int c = 1; c <= SPEC_CLASS_LAST; c++) {
            int32_t dl = 0;
            if (hurray_device_to_dlpack((uint8_t)d, (uint8_t)c, &dl, NULL) != HURRAY_OK)
                continue;
            uint8_t device = 0, cls = 0;
            assert_status(hurray_device_from_dlpack(dl, &device, &cls, NULL), HURRAY_OK);
            assert_int_equal(device, d); /* the device family survives */
            int32_t again = 0;
            assert_status(hurray_device_to_dlpack(device, cls, &again, NULL), HURRAY_OK);
            assert_int_equal(again, dl);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_DEV_1_device_enum_values),
        cmocka_unit_test(test_HR_DEV_2_tag_kinds_all_bytes),
        cmocka_unit_test(test_HR_DEV_1_names),
        cmocka_unit_test(test_HR_DEV_1_from_name),
        cmocka_unit_test(test_HR_DEV_1_from_name_unknown),
        cmocka_unit_test(test_HR_DEV_4_validity_table),
        cmocka_unit_test(test_HR_DEV_2_all_byte_pairs),
        cmocka_unit_test(test_HR_DEV_2_examples),
        cmocka_unit_test(test_HR_DEV_5_dlpack_table),
        cmocka_unit_test(test_HR_DEV_5_rocm_unified_message),
        cmocka_unit_test(test_HR_DEV_5_bad_tags_before_table),
        cmocka_unit_test(test_HR_DEV_7_from_dlpack),
        cmocka_unit_test(test_HR_DEV_7_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
