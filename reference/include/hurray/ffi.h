/* The native-protocol C ABI: HurrayBuffer, HurrayBufferList, HurrayTensorContext.
 * docs/spec/c-abi.md (HR-ABI-1 ... HR-ABI-12).
 *
 * The three structures have a fixed layout (c-abi.md § Layout): a consumer in
 * another language, or a C consumer that does not link this copy of libhurray,
 * reads the fields directly. The version is the first field of the list and of
 * the context; releasing goes through the callbacks stored in the structures,
 * never through a function of the library that produced them. The functions
 * below are thin readers and a default producer-side allocator; they never
 * assume that the structure was made by this library. */
#ifndef HURRAY_FFI_H
#define HURRAY_FFI_H

#include <stddef.h>
#include <stdint.h>

#include "hurray/export.h"
#include "hurray/version.h"

HURRAY_EXTERN_C_BEGIN

/* HurrayBuffer.flags (c-abi.md § HurrayBuffer). Every other bit is reserved: 0. */
#define HURRAY_BUFFER_READONLY 1u

/* One buffer: bytes [data, data + size). `owner`/`release` may be NULL when the
 * context's owner keeps the bytes alive (c-abi.md HR-ABI-6). 40 bytes on 64-bit targets. */
typedef struct HurrayBuffer {
    void *data;                                /* 0: first byte (NULL when size is 0) */
    uint64_t size;                             /* 8: bytes */
    uint32_t flags;                            /* 16: HURRAY_BUFFER_READONLY */
    uint32_t reserved;                         /* 20: 0 */
    void *owner;                               /* 24: opaque to consumers */
    void (*release)(struct HurrayBuffer *self); /* 32: NULL, or drops `owner`; once */
} HurrayBuffer;

/* The buffers of one tensor, element i = buffer i of the descriptor's table
 * (HR-ABI-3). 32 bytes on 64-bit targets. */
typedef struct HurrayBufferList {
    uint32_t abi_version;                           /* 0: HURRAY_C_ABI_VERSION of the producer */
    uint32_t count;                                 /* 4: number of buffers */
    HurrayBuffer *buffers;                          /* 8: `count` buffers (NULL when 0) */
    void *private_data;                             /* 16: the producer's */
    void (*release)(struct HurrayBufferList *self); /* 24: releases every buffer, frees the list */
} HurrayBufferList;

/* What the buffers are: the encoded descriptor, the runtime device id, and the
 * strong reference that keeps the source alive. 56 bytes on 64-bit targets. */
typedef struct HurrayTensorContext {
    uint32_t abi_version;                              /* 0: read first (HR-ABI-4) */
    int32_t device_id;                                 /* 4: runtime device index (0: first) */
    const uint8_t *descriptor;                         /* 8: canonical descriptor bytes */
    uint64_t descriptor_len;                           /* 16 */
    void *owner;                                       /* 24: keeps the source alive */
    void (*owner_release)(void *owner);                /* 32: drops `owner`; NULL if none */
    void (*release)(struct HurrayTensorContext *self); /* 40: owner_release(owner), frees */
    void *private_data;                                /* 48: the producer's */
} HurrayTensorContext;

/* PyCapsule names (HR-ABI-1, HR-ABI-8). */
#define HURRAY_CAPSULE_NAME "hurray_tensor"
#define HURRAY_CAPSULE_USED_NAME "used_hurray_tensor"

/* ---- readers (consumer side) ----------------------------------------------------------- */
/* abi_version of a context; 0 for NULL. Reads offset 0 only (HR-ABI-4). */
HURRAY_API uint32_t hurray_tensor_context_abi_version(const HurrayTensorContext *ctx);
/* The encoded descriptor (borrowed, valid while the context lives); *len its length.
 * NULL (and *len 0) for NULL or a context of another ABI version. */
HURRAY_API const uint8_t *hurray_tensor_context_descriptor(const HurrayTensorContext *ctx,
                                                           size_t *len);
/* device_id of a context (0 for NULL or another ABI version). */
HURRAY_API int32_t hurray_tensor_context_device_id(const HurrayTensorContext *ctx);
/* Calls ctx->release(ctx) once; NULL is a no-op. */
HURRAY_API void hurray_tensor_context_destroy(HurrayTensorContext *ctx);

/* abi_version of a list; 0 for NULL. */
HURRAY_API uint32_t hurray_buffer_list_abi_version(const HurrayBufferList *list);
/* Number of buffers (0 for NULL or another ABI version). */
HURRAY_API size_t hurray_buffer_list_len(const HurrayBufferList *list);
/* Buffer i, borrowed: valid until the list is destroyed; never destroyed by itself
 * (HR-ABI-7). NULL when i is out of range or the version differs. */
HURRAY_API const HurrayBuffer *hurray_buffer_list_get(const HurrayBufferList *list, size_t i);
/* Calls list->release(list) once, which releases every buffer; NULL is a no-op. */
HURRAY_API void hurray_buffer_list_destroy(HurrayBufferList *list);

/* ---- default allocators (producer side) ------------------------------------------------ */
/* A list of `count` zeroed buffers in one malloc block, abi_version and count set,
 * release = one that calls each buffer's release (when not NULL) and frees the block.
 * ARGUMENT for out == NULL, LIMIT for count > HURRAY_MAX_BUFFERS, NOMEM. */
HURRAY_API HURRAY_NODISCARD int hurray_buffer_list_create(uint32_t count,
                                                          HurrayBufferList **out);
/* A context carrying a copy of the descriptor bytes (one malloc block), `owner` and
 * `owner_release` (called once by release). ARGUMENT for out == NULL or desc == NULL
 * with len > 0, NOMEM. On failure owner_release is NOT called: the caller keeps owner. */
HURRAY_API HURRAY_NODISCARD int hurray_tensor_context_create(const uint8_t *desc, size_t len,
                                                             int32_t device_id, void *owner,
                                                             void (*owner_release)(void *),
                                                             HurrayTensorContext **out);

HURRAY_EXTERN_C_END

#endif
