/* Fuzz target: standalone quantization section decode (decode_quantization).
 * Oracle: an accepted payload re-encodes to the same bytes and decodes equal
 * (floats compared by bits, since NaN is refused by validation anyway). */
#include <stdint.h>
#include <string.h>

#include "hurray/hurray.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond) {
    if (!cond) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct hurray_quant q, again;
    struct hurray_error err;
    memset(&q, 0, sizeof q);
    int st = hurray_quant_decode(data, size, &q, &err);
    check(st >= 0 && st < HURRAY_STATUS_COUNT);
    if (st != HURRAY_OK) {
        check(err.code == st);
        return 0;
    }
    uint8_t out[64];
    size_t written = 0;
    check(hurray_quant_encode(&q, out, sizeof out, &written, &err) == HURRAY_OK);
    check(written == size && memcmp(out, data, size) == 0);
    memset(&again, 0, sizeof again);
    check(hurray_quant_decode(out, written, &again, &err) == HURRAY_OK);
    check(hurray_quant_equal(&q, &again));
    return 0;
}
