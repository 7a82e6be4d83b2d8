/* hurray-testee: libhurray behind the testee protocol
 * (docs/conformance/testee-protocol.md). Internal header.
 *
 * main.c reads requests, runs libhurray and writes answers; decoded.c
 * writes libhurray's decoded structs as the manifest's "decoded" maps
 * (vectors/SCHEMA.md), through the library's own name functions. */
#ifndef HT_TESTEE_H
#define HT_TESTEE_H

#include <stddef.h>
#include <stdint.h>

#include "cborw.h"
#include "hurray/hurray.h"

/* A descriptor map: `encoded_len` is the bytes the decoder consumed (or
 * hurray_descriptor_encoded_len for a descriptor inside a file or stream). */
void ht_put_descriptor(struct hc_buf *b, const struct hurray_descriptor *d, size_t encoded_len);
/* A quantization map (a descriptor's section, or a standalone payload). */
void ht_put_quant(struct hc_buf *b, const struct hurray_quant *q);
/* A KV map {key: {type: value}}. */
void ht_put_kv(struct hc_buf *b, const struct hurray_kv_entry *entries, size_t count);
/* A stream item map (tensor: descriptor and buffers; composite: members). */
int ht_put_item(struct hc_buf *b, const struct hurray_item *it, unsigned depth);
/* A top-level stream item map with its "name" and "metadata" when it has them
 * (schema 5, stream.md HR-STREAM-18). */
int ht_put_stream_item(struct hc_buf *b, const struct hurray_item *it,
                       const struct hurray_stream_annotation *a);
/* {"size": n, "sha256": h'..'} and the file variant with an offset. */
void ht_put_buffer(struct hc_buf *b, const uint8_t *data, uint64_t size, int with_offset,
                   uint64_t offset);

#endif
