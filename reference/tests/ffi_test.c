/* The native-protocol C ABI (ffi.c). docs/spec/c-abi.md */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"

/* c-abi.md § Layout, transcribed: the offsets a consumer with no library reads. */
static void test_HR_ABI_2_layout(void **state) {
    (void)state;
    assert_int_equal(offsetof(HurrayBufferList, abi_version), 0);
    assert_int_equal(offsetof(HurrayTensorContext, abi_version), 0);
    assert_int_equal(sizeof(void *), 8); /* version 1 specifies 64-bit targets */
    assert_int_equal(sizeof(HurrayBuffer), 40);
    assert_int_equal(offsetof(HurrayBuffer, data), 0);
    assert_int_equal(offsetof(HurrayBuffer, size), 8);
    assert_int_equal(offsetof(HurrayBuffer, flags), 16);
    assert_int_equal(offsetof(HurrayBuffer, reserved), 20);
    assert_int_equal(offsetof(HurrayBuffer, owner), 24);
    assert_int_equal(offsetof(HurrayBuffer, release), 32);
    assert_int_equal(sizeof(HurrayBufferList), 32);
    assert_int_equal(offsetof(HurrayBufferList, count), 4);
    assert_int_equal(offsetof(HurrayBufferList, buffers), 8);
    assert_int_equal(offsetof(HurrayBufferList, private_data), 16);
    assert_int_equal(offsetof(HurrayBufferList, release), 24);
    assert_int_equal(sizeof(HurrayTensorContext), 56);
    assert_int_equal(offsetof(HurrayTensorContext, device_id), 4);
    assert_int_equal(offsetof(HurrayTensorContext, descriptor), 8);
    assert_int_equal(offsetof(HurrayTensorContext, descriptor_len), 16);
    assert_int_equal(offsetof(HurrayTensorContext, owner), 24);
    assert_int_equal(offsetof(HurrayTensorContext, owner_release), 32);
    assert_int_equal(offsetof(HurrayTensorContext, release), 40);
    assert_int_equal(offsetof(HurrayTensorContext, private_data), 48);
    assert_int_equal(HURRAY_C_ABI_VERSION, 1);
    assert_string_equal(HURRAY_CAPSULE_NAME, "hurray_tensor");
    assert_string_equal(HURRAY_CAPSULE_USED_NAME, "used_hurray_tensor");
}

static int buffer_releases, owner_releases;
static void count_buffer_release(HurrayBuffer *b) {
    assert_non_null(b->owner);
    buffer_releases++;
}
static void count_owner_release(void *owner) {
    assert_ptr_equal(owner, &owner_releases);
    owner_releases++;
}

/* HR-ABI-5: destroy goes through the stored callbacks, each exactly once. */
static void test_HR_ABI_5_release_once(void **state) {
    (void)state;
    buffer_releases = owner_releases = 0;
    HurrayBufferList *list = NULL;
    assert_int_equal(hurray_buffer_list_create(3, &list), HURRAY_OK);
    assert_int_equal(list->abi_version, HURRAY_C_ABI_VERSION);
    assert_int_equal(list->count, 3);
    for (unsigned i = 0; i < 3; i++) {
        list->buffers[i].owner = list;
        list->buffers[i].release = i == 1 ? NULL : count_buffer_release; /* NULL: allowed */
    }
    hurray_buffer_list_destroy(list);
    assert_int_equal(buffer_releases, 2);

    HurrayTensorContext *ctx = NULL;
    const uint8_t bytes[3] = {1, 2, 3};
    assert_int_equal(hurray_tensor_context_create(bytes, 3, 7, &owner_releases,
                                                  count_owner_release, &ctx),
                     HURRAY_OK);
    assert_int_equal(owner_releases, 0);
    hurray_tensor_context_destroy(ctx);
    assert_int_equal(owner_releases, 1);
    hurray_buffer_list_destroy(NULL);    /* no-ops */
    hurray_tensor_context_destroy(NULL);
}

static int foreign_list_released, foreign_ctx_released;
static void foreign_list_release(HurrayBufferList *l) {
    foreign_list_released++;
    l->release = NULL;
}
static void foreign_ctx_release(HurrayTensorContext *c) {
    foreign_ctx_released++;
    c->release = NULL;
}

/* HR-ABI-5: a structure made elsewhere (not by this library's allocators) is released by its
 * maker's callback; the readers only read the fixed fields. */
static void test_HR_ABI_5_foreign_structures(void **state) {
    (void)state;
    foreign_list_released = foreign_ctx_released = 0;
    HurrayBuffer bufs[2] = {{(void *)bufs, 8, HURRAY_BUFFER_READONLY, 0, NULL, NULL},
                            {NULL, 0, 0, 0, NULL, NULL}};
    HurrayBufferList list = {HURRAY_C_ABI_VERSION, 2, bufs, NULL, foreign_list_release};
    const uint8_t desc[4] = {9, 9, 9, 9};
    HurrayTensorContext ctx = {HURRAY_C_ABI_VERSION, 3, desc, 4, NULL, NULL,
                               foreign_ctx_release, NULL};
    size_t len = 0;
    assert_ptr_equal(hurray_tensor_context_descriptor(&ctx, &len), desc);
    assert_int_equal(len, 4);
    assert_int_equal(hurray_tensor_context_device_id(&ctx), 3);
    assert_int_equal(hurray_buffer_list_len(&list), 2);
    assert_ptr_equal(hurray_buffer_list_get(&list, 0), &bufs[0]);
    assert_ptr_equal(hurray_buffer_list_get(&list, 1), &bufs[1]);
    assert_null(hurray_buffer_list_get(&list, 2));
    hurray_buffer_list_destroy(&list);
    hurray_tensor_context_destroy(&ctx);
    assert_int_equal(foreign_list_released, 1);
    assert_int_equal(foreign_ctx_released, 1);
}

/* HR-ABI-4: another version: the version reader reads offset 0 only; every other reader
 * refuses, so nothing past offset 0 is interpreted. The rest of the struct is poison. */
static void test_HR_ABI_4_other_version(void **state) {
    (void)state;
    unsigned char ctx_bytes[sizeof(HurrayTensorContext)];
    unsigned char list_bytes[sizeof(HurrayBufferList)];
    memset(ctx_bytes, 0xA5, sizeof ctx_bytes);
    memset(list_bytes, 0xA5, sizeof list_bytes);
    uint32_t v2 = HURRAY_C_ABI_VERSION + 1;
    memcpy(ctx_bytes, &v2, sizeof v2);
    memcpy(list_bytes, &v2, sizeof v2);
    HurrayTensorContext ctx;
    HurrayBufferList list;
    memcpy(&ctx, ctx_bytes, sizeof ctx);
    memcpy(&list, list_bytes, sizeof list);
    assert_int_equal(hurray_tensor_context_abi_version(&ctx), 2);
    size_t len = 99;
    assert_null(hurray_tensor_context_descriptor(&ctx, &len));
    assert_int_equal(len, 0);
    assert_int_equal(hurray_tensor_context_device_id(&ctx), 0);
    assert_int_equal(hurray_buffer_list_abi_version(&list), 2);
    assert_int_equal(hurray_buffer_list_len(&list), 0);
    assert_null(hurray_buffer_list_get(&list, 0));
    assert_int_equal(hurray_tensor_context_abi_version(NULL), 0);
    assert_int_equal(hurray_buffer_list_abi_version(NULL), 0);
}

/* HR-ABI-3, HR-ABI-7: a producer on libhurray and a consumer: element i is buffer i, sizes
 * agree, the descriptor bytes decode to the producer's descriptor; handles are borrowed. */
static void test_HR_ABI_3_roundtrip(void **state) {
    (void)state;
    struct hurray_error err;
    struct hurray_descriptor d, back;
    hurray_descriptor_init(&d);
    hurray_descriptor_init(&back);
    uint64_t shape[1] = {4};
    struct hurray_buffer_desc bd = {16, 6, HURRAY_SYNC_PRODUCER_SYNCED};
    d.dtype = HURRAY_DTYPE_FLOAT32;
    assert_int_equal(hurray_descriptor_set_shape(&d, 1, shape, &err), HURRAY_OK);
    assert_int_equal(hurray_descriptor_set_buffers(&d, 1, &bd, &err), HURRAY_OK);
    size_t n = 0, written = 0;
    assert_int_equal(hurray_descriptor_encoded_len(&d, &n, &err), HURRAY_OK);
    uint8_t *bytes = malloc(n);
    assert_non_null(bytes);
    assert_int_equal(hurray_descriptor_encode(&d, bytes, n, &written, &err), HURRAY_OK);
    float data[4] = {1, 2, 3, 4};

    HurrayBufferList *list = NULL;
    HurrayTensorContext *ctx = NULL;
    assert_int_equal(hurray_buffer_list_create(d.buffer_count, &list), HURRAY_OK);
    list->buffers[0].data = data;
    list->buffers[0].size = sizeof data;
    assert_int_equal(hurray_tensor_context_create(bytes, written, 0, NULL, NULL, &ctx), HURRAY_OK);
    free(bytes); /* the context holds its own copy */

    assert_int_equal(hurray_tensor_context_abi_version(ctx), HURRAY_C_ABI_VERSION);
    size_t len = 0, used = 0;
    const uint8_t *got = hurray_tensor_context_descriptor(ctx, &len);
    assert_int_equal(hurray_descriptor_decode(got, len, NULL, &back, &used, &err), HURRAY_OK);
    assert_int_equal(used, len);
    assert_true(hurray_descriptor_equal(&d, &back));
    assert_int_equal(hurray_buffer_list_len(list), back.buffer_count);
    for (size_t i = 0; i < back.buffer_count; i++) {
        const HurrayBuffer *b = hurray_buffer_list_get(list, i);
        assert_int_equal(b->size, back.buffers[i].size);
        assert_ptr_equal(b->data, data);
    }
    hurray_descriptor_reset(&back);
    hurray_descriptor_reset(&d);
    hurray_buffer_list_destroy(list);
    hurray_tensor_context_destroy(ctx);
}

/* HR-ABI-7: a handle from get is a pointer into the list's own storage, valid until the list is
 * destroyed; destroying the list releases it (no per-handle destroy exists). */
static void test_HR_ABI_7_borrowed_handles(void **state) {
    (void)state;
    buffer_releases = 0;
    HurrayBufferList *list = NULL;
    assert_int_equal(hurray_buffer_list_create(2, &list), HURRAY_OK);
    for (unsigned i = 0; i < 2; i++) {
        list->buffers[i].owner = list;
        list->buffers[i].release = count_buffer_release;
    }
    const HurrayBuffer *a = hurray_buffer_list_get(list, 0);
    const HurrayBuffer *b = hurray_buffer_list_get(list, 1);
    assert_ptr_equal(a, &list->buffers[0]);
    assert_ptr_equal(b, &list->buffers[1]);
    assert_ptr_equal(hurray_buffer_list_get(list, 0), a); /* the same handle every time */
    assert_null(hurray_buffer_list_get(list, 2));
    assert_null(hurray_buffer_list_get(NULL, 0));
    assert_int_equal(buffer_releases, 0);
    hurray_buffer_list_destroy(list);
    assert_int_equal(buffer_releases, 2);
}

static void test_HR_ABI_5_create_arguments(void **state) {
    (void)state;
    HurrayBufferList *list = (HurrayBufferList *)1;
    assert_int_equal(hurray_buffer_list_create(256, &list), HURRAY_E_LIMIT);
    assert_null(list);
    assert_int_equal(hurray_buffer_list_create(1, NULL), HURRAY_E_ARGUMENT);
    assert_int_equal(hurray_buffer_list_create(0, &list), HURRAY_OK);
    assert_int_equal(list->count, 0);
    assert_null(list->buffers);
    hurray_buffer_list_destroy(list);
    HurrayTensorContext *ctx = NULL;
    assert_int_equal(hurray_tensor_context_create(NULL, 1, 0, NULL, NULL, &ctx),
                     HURRAY_E_ARGUMENT);
    assert_int_equal(hurray_tensor_context_create(NULL, 0, 0, NULL, NULL, NULL),
                     HURRAY_E_ARGUMENT);
    assert_int_equal(hurray_tensor_context_create(NULL, 0, -1, NULL, NULL, &ctx), HURRAY_OK);
    size_t len = 5;
    assert_null(hurray_tensor_context_descriptor(ctx, &len));
    assert_int_equal(len, 0);
    assert_int_equal(hurray_tensor_context_device_id(ctx), -1);
    hurray_tensor_context_destroy(ctx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_ABI_2_layout),
        cmocka_unit_test(test_HR_ABI_5_release_once),
        cmocka_unit_test(test_HR_ABI_5_foreign_structures),
        cmocka_unit_test(test_HR_ABI_4_other_version),
        cmocka_unit_test(test_HR_ABI_3_roundtrip),
        cmocka_unit_test(test_HR_ABI_5_create_arguments),
        cmocka_unit_test(test_HR_ABI_7_borrowed_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
