/* Fuzz target: descriptor decode (the entry point that reads untrusted bytes).
 *
 * Oracle beyond "sanitizers are quiet":
 * whatever decodes must be canonical — encode(decode(b)) == b[:encoded_len] —
 * and decoding the re-encoding must give an equal descriptor. Each input is
 * decoded under the default limits and under two low-limit profiles, so the
 * limit checks are exercised too; the corpus vectors are seeds as they are. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"
#include "structure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static void check(int cond) {
    if (!cond) __builtin_trap(); /* an oracle failure is a finding */
}

static void pick_limits(int profile, struct hurray_limits *lim) {
    hurray_limits_default(lim);
    if (profile == 1) {
        lim->max_rank = 4;
        lim->max_descriptor_bytes = 256;
    } else if (profile == 2) {
        lim->max_buffer_bytes = 1024;
        lim->max_composite_members = 2;
    }
}

static void run_profile(const uint8_t *data, size_t size, int profile) {
    static struct hurray_descriptor d, again;
    struct hurray_limits lim;
    struct hurray_error err;
    pick_limits(profile, &lim);

    struct hurray_decode_options opt = {&lim, NULL};
    size_t consumed = 0;
    hurray_descriptor_init(&d);
    int st = hurray_descriptor_decode(data, size, &opt, &d, &consumed, &err);
    check(st >= 0 && st < HURRAY_STATUS_COUNT);
    if (st != HURRAY_OK) {
        check(err.code == st);
        hurray_descriptor_reset(&d);
        return;
    }
    check(consumed <= size && consumed >= HURRAY_DESCRIPTOR_MIN_BYTES);

    size_t len = 0;
    check(hurray_descriptor_encoded_len(&d, &len, &err) == HURRAY_OK);
    check(len == consumed);
    uint8_t *out = malloc(len);
    if (!out) {
        hurray_descriptor_reset(&d);
        return;
    }
    size_t written = 0;
    check(hurray_descriptor_encode(&d, out, len, &written, &err) == HURRAY_OK);
    check(written == len && memcmp(out, data, len) == 0);

    hurray_descriptor_init(&again);
    check(hurray_descriptor_decode(out, len, &opt, &again, &consumed, &err) == HURRAY_OK);
    check(hurray_descriptor_equal(&d, &again));
    hurray_descriptor_reset(&again);
    hurray_descriptor_reset(&d);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (int profile = 0; profile < 3; profile++) run_profile(data, size, profile);
    return 0;
}

/* Field-level mutation of the descriptors in the input (fuzz/support/structure.c); it
 * may grow or shrink the descriptor (rank, buffer table). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    return hurray_fuzz_mutate(data, size, max_size, seed, 1);
}
