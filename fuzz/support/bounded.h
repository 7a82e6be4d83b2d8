/* A counting allocator with a ceiling, shared by the stream fuzz targets: an
 * allocation that would take the live total past `cap` is a finding
 * (__builtin_trap), so memory amplification is reported, not suffered. */
#ifndef HURRAY_FUZZ_BOUNDED_H
#define HURRAY_FUZZ_BOUNDED_H

#include <stddef.h>

struct bounded {
    size_t live;
    size_t cap;
};

void *bounded_alloc(void *ctx, size_t n);
void bounded_free(void *ctx, void *p, size_t n);

#endif
