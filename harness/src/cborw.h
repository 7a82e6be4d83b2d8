/* A small CBOR writer (RFC 8949: definite lengths, shortest integer heads)
 * for the testee protocol (docs/conformance/testee-protocol.md). Shared by
 * the runner (requests) and the C testee (responses); no libcbor, so that a
 * request or response of any size is one growing buffer.
 *
 * Every put appends to `b`; after an allocation failure the buffer is marked
 * `oom` and further puts do nothing (check once at the end). */
#ifndef HC_CBORW_H
#define HC_CBORW_H

#include <stddef.h>
#include <stdint.h>

struct hc_buf {
    uint8_t *p;
    size_t len, cap;
    int oom;
};

void hc_buf_init(struct hc_buf *b);
void hc_buf_free(struct hc_buf *b);
void hc_buf_put(struct hc_buf *b, const void *p, size_t n);

/* A head: major type 0..7 and its argument, shortest form. */
void hc_cbor_head(struct hc_buf *b, unsigned major, uint64_t v);
void hc_cbor_uint(struct hc_buf *b, uint64_t v);
void hc_cbor_int(struct hc_buf *b, int64_t v);
void hc_cbor_bool(struct hc_buf *b, int v);
void hc_cbor_null(struct hc_buf *b);
void hc_cbor_bstr(struct hc_buf *b, const void *p, size_t n);
void hc_cbor_tstrn(struct hc_buf *b, const char *s, size_t n);
void hc_cbor_tstr(struct hc_buf *b, const char *s); /* NUL-terminated */
void hc_cbor_array(struct hc_buf *b, size_t n);
void hc_cbor_map(struct hc_buf *b, size_t n);

/* Checks that p[0..len) is exactly one well-formed CBOR data item nested at
 * most `max_depth` deep (definite or indefinite lengths; no reserved
 * additional-information values, break codes only where they belong).
 * Iterative: a hostile item cannot exhaust the stack. Returns 0, or -1 with
 * a reason in msg. Run it before libcbor's cbor_load, whose release of a
 * deeply nested tree recurses. */
int hc_cbor_check(const uint8_t *p, size_t len, unsigned max_depth, char *msg, size_t cap);

#endif
