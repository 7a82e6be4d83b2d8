/* Allocator hook. Every allocation libhurray makes goes through one of these;
 * NULL anywhere an allocator is accepted means the default (malloc/free). */
#ifndef HURRAY_ALLOC_H
#define HURRAY_ALLOC_H

#include <stddef.h>
#include "hurray/export.h"

HURRAY_EXTERN_C_BEGIN

struct hurray_allocator {
    void *(*alloc)(void *ctx, size_t size);          /* NULL on failure */
    void (*free)(void *ctx, void *ptr, size_t size); /* ptr may be NULL */
    void *ctx;
};

HURRAY_API const struct hurray_allocator *hurray_default_allocator(void);

HURRAY_EXTERN_C_END

#endif
