/* Reader limits by manifest name (hc_limits.c); shared by the runner and the
 * C testee. */
#ifndef HC_LIMITS_H
#define HC_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "hurray/limit.h"

/* Sets the limit `name` (not NUL-terminated). Returns 0, or -1 for an
 * unknown name. Values above a field's range saturate (the library clamps
 * limits to the format maximum anyway). */
int hc_limit_set(struct hurray_limits *lim, const char *name, size_t name_len, uint64_t value);
/* The i-th limit's name and value; -1 past the last. */
int hc_limit_get(const struct hurray_limits *lim, size_t i, const char **name, uint64_t *value);
size_t hc_limit_count(void);

/* The corpus's consumer keeps every item of a stream alive until the stream's end
 * (errors-and-limits.md HR-LIMIT-2, § Golden corpus: the slack of the items kept counts).
 * hc_keep takes `it` (NULL-tolerant); a table that cannot grow frees it and returns -1
 * (the reading is then not the corpus's). hc_kept_free frees every item kept. */
struct hurray_item;
struct hc_kept {
    struct hurray_item **items;
    size_t n, cap;
};
int hc_keep(struct hc_kept *k, struct hurray_item *it);
void hc_kept_free(struct hc_kept *k);

#endif
