/* Allocator hook. Every allocation libhurray makes goes through one of these;
 * NULL anywhere an allocator is accepted means the default: malloc/free, except that
 * blocks of 1 MiB and more are mapped from the system and unmapped when freed (so they
 * leave the process's memory at once); every block must come back with its size. */
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
