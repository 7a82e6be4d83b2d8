/* A C consumer of the native protocol, built against the public headers and libhurray.so only
 * (python/tests/test_native.py loads it with ctypes). docs/spec/c-abi.md § Worked example.
 * It never sees a Python object: the test hands it the capsule's pointer and context after
 * renaming the capsule (HR-ABI-8), as a consumer in any language would receive them. */
#include <stdint.h>
#include <string.h>

#include "hurray/hurray.h"

/* hc_check: results. */
enum { HC_OK = 0, HC_VERSION = 1, HC_DECODE = 2, HC_COUNT = 3, HC_SIZE = 4, HC_SPACE = 5 };

int hc_version(const HurrayTensorContext *ctx);
int hc_check(const HurrayBufferList *list, const HurrayTensorContext *ctx, uint64_t *addrs,
             uint64_t *sizes, uint32_t *flags, uint32_t *count, uint8_t *desc_out, size_t cap,
             size_t *desc_len, int32_t *device_id);
void hc_release(HurrayBufferList *list, HurrayTensorContext *ctx);

int hc_version(const HurrayTensorContext *ctx) { return (int)hurray_tensor_context_abi_version(ctx); }

/* HR-ABI-4 first; then the descriptor decoded with this libhurray, the list checked against it
 * (HR-ABI-3) and every buffer reported; the descriptor re-encoded into desc_out. */
int hc_check(const HurrayBufferList *list, const HurrayTensorContext *ctx, uint64_t *addrs,
             uint64_t *sizes, uint32_t *flags, uint32_t *count, uint8_t *desc_out, size_t cap,
             size_t *desc_len, int32_t *device_id) {
    if (hurray_tensor_context_abi_version(ctx) != HURRAY_C_ABI_VERSION) return HC_VERSION;
    size_t len = 0, used = 0;
    const uint8_t *bytes = hurray_tensor_context_descriptor(ctx, &len);
    struct hurray_descriptor d;
    struct hurray_error err;
    hurray_descriptor_init(&d);
    if (bytes == NULL || hurray_descriptor_decode(bytes, len, NULL, &d, &used, &err) != HURRAY_OK)
        return HC_DECODE;
    int rc = HC_OK;
    if (hurray_buffer_list_len(list) != d.buffer_count) {
        rc = HC_COUNT;
        goto done;
    }
    for (size_t i = 0; i < d.buffer_count; i++) {
        const HurrayBuffer *b = hurray_buffer_list_get(list, i); /* borrowed (HR-ABI-7) */
        if (b == NULL || b->size != d.buffers[i].size) {
            rc = HC_SIZE;
            goto done;
        }
        addrs[i] = (uint64_t)(uintptr_t)b->data;
        sizes[i] = b->size;
        flags[i] = b->flags;
    }
    *count = d.buffer_count;
    *device_id = hurray_tensor_context_device_id(ctx);
    if (hurray_descriptor_encode(&d, desc_out, cap, desc_len, &err) != HURRAY_OK) rc = HC_SPACE;
done:
    hurray_descriptor_reset(&d);
    return rc;
}

/* The consumer's exactly-once destroy: the list, then the context (HR-ABI-6, HR-ABI-8). */
void hc_release(HurrayBufferList *list, HurrayTensorContext *ctx) {
    hurray_buffer_list_destroy(list);
    hurray_tensor_context_destroy(ctx);
}
