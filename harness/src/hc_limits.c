/* The reader limits by their manifest names (errors-and-limits.md § Default
 * limits; vectors/SCHEMA.md "default_limits" and "options"), mapped onto
 * struct hurray_limits. One table for the runner (manifest options, testee
 * requests) and the C testee (requests back into a struct). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"
#include "hc_limits.h"

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
    const char *name;
    size_t offset;
    size_t width;
} limit_table[] = {
    {"max_descriptor_bytes", offsetof(struct hurray_limits, max_descriptor_bytes), 8},
    {"max_buffer_bytes", offsetof(struct hurray_limits, max_buffer_bytes), 8},
    {"max_rank", offsetof(struct hurray_limits, max_rank), 4},
    {"max_composite_depth", offsetof(struct hurray_limits, max_composite_depth), 4},
    {"max_composite_members", offsetof(struct hurray_limits, max_composite_members), 8},
    {"max_kv_entries", offsetof(struct hurray_limits, max_kv_entries), 8},
    {"max_kv_bytes", offsetof(struct hurray_limits, max_kv_bytes), 8},
    {"max_name_bytes", offsetof(struct hurray_limits, max_name_bytes), 4},
    {"max_file_tensors", offsetof(struct hurray_limits, max_file_tensors), 8},
    {"max_alignment_slack", offsetof(struct hurray_limits, max_alignment_slack), 8},
};

size_t hc_limit_count(void) { return NKEYS(limit_table); }

int hc_limit_get(const struct hurray_limits *lim, size_t i, const char **name, uint64_t *value) {
    if (i >= NKEYS(limit_table)) return -1;
    const unsigned char *base = (const unsigned char *)lim + limit_table[i].offset;
    *name = limit_table[i].name;
    if (limit_table[i].width == 4) {
        uint32_t v;
        memcpy(&v, base, 4);
        *value = v;
    } else {
        memcpy(value, base, 8);
    }
    return 0;
}

int hc_limit_set(struct hurray_limits *lim, const char *name, size_t name_len, uint64_t value) {
    for (size_t i = 0; i < NKEYS(limit_table); i++) {
        if (strlen(limit_table[i].name) != name_len ||
            memcmp(limit_table[i].name, name, name_len) != 0)
            continue;
        unsigned char *base = (unsigned char *)lim + limit_table[i].offset;
        if (limit_table[i].width == 4) {
            uint32_t v = value > UINT32_MAX ? UINT32_MAX : (uint32_t)value;
            memcpy(base, &v, 4);
        } else {
            memcpy(base, &value, 8);
        }
        return 0;
    }
    return -1;
}


int hc_keep(struct hc_kept *k, struct hurray_item *it) {
    if (!it) return 0;
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 64;
        struct hurray_item **more = realloc(k->items, cap * sizeof *more);
        if (!more) {
            hurray_item_destroy(it);
            return -1;
        }
        k->items = more;
        k->cap = cap;
    }
    k->items[k->n++] = it;
    return 0;
}

void hc_kept_free(struct hc_kept *k) {
    for (size_t i = 0; i < k->n; i++) hurray_item_destroy(k->items[i]);
    free(k->items);
    k->items = NULL;
    k->n = k->cap = 0;
}
