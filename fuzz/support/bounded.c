/* The bounded, counting allocator of the stream fuzz targets (bounded.h). */
#include <stdlib.h>

#include "bounded.h"

void *bounded_alloc(void *ctx, size_t n) {
    struct bounded *b = ctx;
    if (n > b->cap || b->live > b->cap - n) __builtin_trap(); /* memory beyond the bound */
    void *p = malloc(n ? n : 1);
    if (p) b->live += n;
    return p;
}

void bounded_free(void *ctx, void *p, size_t n) {
    struct bounded *b = ctx;
    if (!p) return;
    b->live -= n;
    free(p);
}
