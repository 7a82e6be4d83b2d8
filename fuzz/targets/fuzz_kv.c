/* Fuzz target: the KV section decoder (kv.md), standalone.
 *
 * Oracle beyond "sanitizers are quiet": a
 * failure is a defined status with a matching record and nothing allocated;
 * an accepted section is canonical (encode(decode(s)) == s, floats by bits),
 * its keys strictly ascending (so never a duplicate), and decoding the
 * re-encoding gives an equal map. Two limit profiles. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond) {
    if (!cond) __builtin_trap(); /* an oracle failure is a finding */
}

static void pick_limits(int profile, struct hurray_limits *lim) {
    hurray_limits_default(lim);
    if (profile == 1) {
        lim->max_kv_entries = 4;
        lim->max_kv_bytes = 512;
        lim->max_name_bytes = 8;
        lim->max_composite_depth = 2;
    }
}

static int key_less(const struct hurray_kv_entry *a, const struct hurray_kv_entry *b) {
    size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = memcmp(a->key, b->key, n);
    return c < 0 || (c == 0 && a->key_len < b->key_len);
}

static void run_profile(const uint8_t *data, size_t size, int profile) {
    struct hurray_limits lim;
    struct hurray_decode_options opt = {&lim, NULL};
    struct hurray_kv kv, again;
    struct hurray_error err;
    pick_limits(profile, &lim);
    hurray_kv_init(&kv);
    int st = hurray_kv_decode(data, size, &opt, &kv, &err);
    check(st >= 0 && st < HURRAY_STATUS_COUNT);
    if (st != HURRAY_OK) {
        check(err.code == st && kv.count == 0 && kv.storage == NULL);
        return;
    }
    for (size_t i = 1; i < kv.count; i++) check(key_less(&kv.entries[i - 1], &kv.entries[i]));
    uint64_t len = 0;
    check(hurray_kv_encoded_len(kv.entries, kv.count, NULL, &len, &err) == HURRAY_OK);
    check(len == size);
    uint8_t *out = malloc(size ? size : 1);
    if (out) {
        size_t written = 0;
        check(hurray_kv_encode(kv.entries, kv.count, NULL, out, size, &written, &err) ==
              HURRAY_OK);
        check(written == size && memcmp(out, data, size) == 0);
        hurray_kv_init(&again);
        check(hurray_kv_decode(out, size, &opt, &again, &err) == HURRAY_OK);
        check(hurray_kv_entries_equal(kv.entries, kv.count, again.entries, again.count));
        hurray_kv_reset(&again);
        free(out);
    }
    hurray_kv_reset(&kv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (int profile = 0; profile < 2; profile++) run_profile(data, size, profile);
    return 0;
}
