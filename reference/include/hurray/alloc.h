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
/* malloc/free, except that blocks of 1 MiB and more are mapped from the system and unmapped
 * when freed, so they leave the process's memory at once (a freed heap block can stay
 * resident below later allocations): for a reader whose large blocks are transient, such as
 * a file's index. Every block must come back to `free` with the size it was allocated at.
 * Under AddressSanitizer or MemorySanitizer it is the default allocator. */
HURRAY_API const struct hurray_allocator *hurray_system_allocator(void);

HURRAY_EXTERN_C_END

#endif
