/* SHA-256 (FIPS 180-4), for the vector files and buffer digests (sha256.c).
 * Shared by the runner and the C testee. */
#ifndef HC_SHA256_H
#define HC_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct hc_sha256 {
    uint32_t h[8];
    uint64_t bits;
    uint8_t buf[64];
    size_t fill;
};

void hc_sha256_init(struct hc_sha256 *s);
void hc_sha256_update(struct hc_sha256 *s, const uint8_t *p, size_t n);
void hc_sha256_final(struct hc_sha256 *s, uint8_t out[32]);
void hc_sha256(const uint8_t *p, size_t n, uint8_t out[32]);

#endif
