/* The native-protocol C ABI: readers and the default allocators.
 * docs/spec/c-abi.md. The readers never assume that a structure was made by
 * this library: they read the fixed-layout fields (§ Layout) and check the
 * version first (HR-ABI-4); destruction goes through the structure's own
 * release callback (HR-ABI-5), so a list or context made by another build, or
 * another language, is released by the code that made it. */
#include "hurray/ffi.h"

#include <stdlib.h>
#include <string.h>

#include "hurray/limit.h"
#include "hurray/status.h"

/* c-abi.md § Layout (HR-ABI-2): the offsets a foreign consumer reads. */
_Static_assert(offsetof(HurrayBufferList, abi_version) == 0, "HR-ABI-2");
_Static_assert(offsetof(HurrayTensorContext, abi_version) == 0, "HR-ABI-2");
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(HurrayBuffer) == 40 && offsetof(HurrayBuffer, size) == 8 &&
                   offsetof(HurrayBuffer, flags) == 16 && offsetof(HurrayBuffer, owner) == 24 &&
                   offsetof(HurrayBuffer, release) == 32,
               "HR-ABI-2: HurrayBuffer layout (64-bit)");
_Static_assert(sizeof(HurrayBufferList) == 32 && offsetof(HurrayBufferList, count) == 4 &&
                   offsetof(HurrayBufferList, buffers) == 8 &&
                   offsetof(HurrayBufferList, private_data) == 16 &&
                   offsetof(HurrayBufferList, release) == 24,
               "HR-ABI-2: HurrayBufferList layout (64-bit)");
_Static_assert(sizeof(HurrayTensorContext) == 56 &&
                   offsetof(HurrayTensorContext, device_id) == 4 &&
                   offsetof(HurrayTensorContext, descriptor) == 8 &&
                   offsetof(HurrayTensorContext, descriptor_len) == 16 &&
                   offsetof(HurrayTensorContext, owner) == 24 &&
                   offsetof(HurrayTensorContext, owner_release) == 32 &&
                   offsetof(HurrayTensorContext, release) == 40 &&
                   offsetof(HurrayTensorContext, private_data) == 48,
               "HR-ABI-2: HurrayTensorContext layout (64-bit)");
#endif

uint32_t hurray_tensor_context_abi_version(const HurrayTensorContext *ctx) {
    return ctx == NULL ? 0u : ctx->abi_version;
}

const uint8_t *hurray_tensor_context_descriptor(const HurrayTensorContext *ctx, size_t *len) {
    if (len != NULL) *len = 0;
    if (ctx == NULL || ctx->abi_version != HURRAY_C_ABI_VERSION) return NULL;
    if (ctx->descriptor_len > SIZE_MAX) return NULL;
    if (len != NULL) *len = (size_t)ctx->descriptor_len;
    return ctx->descriptor;
}

int32_t hurray_tensor_context_device_id(const HurrayTensorContext *ctx) {
    if (ctx == NULL || ctx->abi_version != HURRAY_C_ABI_VERSION) return 0;
    return ctx->device_id;
}

void hurray_tensor_context_destroy(HurrayTensorContext *ctx) {
    if (ctx != NULL && ctx->release != NULL) ctx->release(ctx);
}

uint32_t hurray_buffer_list_abi_version(const HurrayBufferList *list) {
    return list == NULL ? 0u : list->abi_version;
}

size_t hurray_buffer_list_len(const HurrayBufferList *list) {
    if (list == NULL || list->abi_version != HURRAY_C_ABI_VERSION) return 0;
    return list->count;
}

const HurrayBuffer *hurray_buffer_list_get(const HurrayBufferList *list, size_t i) {
    if (list == NULL || list->abi_version != HURRAY_C_ABI_VERSION || i >= list->count ||
        list->buffers == NULL)
        return NULL;
    return &list->buffers[i];
}

void hurray_buffer_list_destroy(HurrayBufferList *list) {
    if (list != NULL && list->release != NULL) list->release(list);
}

/* ---- default allocators ------------------------------------------------------------------- */

/* The list and its buffers are one block: the buffers follow the header. */
struct list_block {
    HurrayBufferList list;
    HurrayBuffer buffers[];
};

static void list_release(HurrayBufferList *list) {
    for (uint32_t i = 0; i < list->count; i++) {
        HurrayBuffer *b = &list->buffers[i];
        void (*rel)(HurrayBuffer *) = b->release;
        b->release = NULL; /* once (HR-ABI-5) */
        if (rel != NULL) rel(b);
    }
    list->release = NULL;
    free(list);
}

int hurray_buffer_list_create(uint32_t count, HurrayBufferList **out) {
    if (out == NULL) return HURRAY_E_ARGUMENT;
    *out = NULL;
    if (count > HURRAY_MAX_BUFFERS) return HURRAY_E_LIMIT;
    /* count <= 255: no overflow */
    struct list_block *b = calloc(1, sizeof *b + (size_t)count * sizeof(HurrayBuffer));
    if (b == NULL) return HURRAY_E_NOMEM;
    b->list.abi_version = HURRAY_C_ABI_VERSION;
    b->list.count = count;
    b->list.buffers = count > 0 ? b->buffers : NULL;
    b->list.release = list_release;
    *out = &b->list;
    return HURRAY_OK;
}

struct ctx_block {
    HurrayTensorContext ctx;
    uint8_t bytes[];
};

static void ctx_release(HurrayTensorContext *ctx) {
    void (*rel)(void *) = ctx->owner_release;
    void *owner = ctx->owner;
    ctx->owner_release = NULL;
    ctx->release = NULL;
    free(ctx);
    if (rel != NULL) rel(owner);
}

int hurray_tensor_context_create(const uint8_t *desc, size_t len, int32_t device_id, void *owner,
                                 void (*owner_release)(void *), HurrayTensorContext **out) {
    if (out == NULL) return HURRAY_E_ARGUMENT;
    *out = NULL;
    if (desc == NULL && len > 0) return HURRAY_E_ARGUMENT;
    if (len > SIZE_MAX - sizeof(struct ctx_block)) return HURRAY_E_LIMIT;
    struct ctx_block *b = malloc(sizeof *b + len);
    if (b == NULL) return HURRAY_E_NOMEM;
    memset(&b->ctx, 0, sizeof b->ctx);
    if (len > 0) memcpy(b->bytes, desc, len);
    b->ctx.abi_version = HURRAY_C_ABI_VERSION;
    b->ctx.device_id = device_id;
    b->ctx.descriptor = len > 0 ? b->bytes : NULL;
    b->ctx.descriptor_len = len;
    b->ctx.owner = owner;
    b->ctx.owner_release = owner_release;
    b->ctx.release = ctx_release;
    *out = &b->ctx;
    return HURRAY_OK;
}
