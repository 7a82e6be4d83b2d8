/* CBOR writer and well-formedness check (cborw.h). */
#include "cborw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hc_buf_init(struct hc_buf *b) { memset(b, 0, sizeof *b); }

void hc_buf_free(struct hc_buf *b) {
    free(b->p);
    hc_buf_init(b);
}

void hc_buf_put(struct hc_buf *b, const void *p, size_t n) {
    if (b->oom || n == 0) return;
    if (n > SIZE_MAX / 2 - b->len) {
        b->oom = 1;
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void hc_cbor_head(struct hc_buf *b, unsigned major, uint64_t v) {
    uint8_t h[9];
    size_t n;
    uint8_t m = (uint8_t)(major << 5);
    if (v < 24) {
        h[0] = (uint8_t)(m | v);
        n = 1;
    } else if (v <= 0xFF) {
        h[0] = m | 24;
        h[1] = (uint8_t)v;
        n = 2;
    } else if (v <= 0xFFFF) {
        h[0] = m | 25;
        h[1] = (uint8_t)(v >> 8);
        h[2] = (uint8_t)v;
        n = 3;
    } else if (v <= 0xFFFFFFFFu) {
        h[0] = m | 26;
        for (int i = 0; i < 4; i++) h[1 + i] = (uint8_t)(v >> (24 - 8 * i));
        n = 5;
    } else {
        h[0] = m | 27;
        for (int i = 0; i < 8; i++) h[1 + i] = (uint8_t)(v >> (56 - 8 * i));
        n = 9;
    }
    hc_buf_put(b, h, n);
}

void hc_cbor_uint(struct hc_buf *b, uint64_t v) { hc_cbor_head(b, 0, v); }

void hc_cbor_int(struct hc_buf *b, int64_t v) {
    if (v >= 0) hc_cbor_head(b, 0, (uint64_t)v);
    else hc_cbor_head(b, 1, (uint64_t)(-(v + 1)));
}

void hc_cbor_bool(struct hc_buf *b, int v) {
    uint8_t c = v ? 0xF5 : 0xF4;
    hc_buf_put(b, &c, 1);
}

void hc_cbor_null(struct hc_buf *b) {
    uint8_t c = 0xF6;
    hc_buf_put(b, &c, 1);
}

void hc_cbor_bstr(struct hc_buf *b, const void *p, size_t n) {
    hc_cbor_head(b, 2, n);
    hc_buf_put(b, p, n);
}

void hc_cbor_tstrn(struct hc_buf *b, const char *s, size_t n) {
    hc_cbor_head(b, 3, n);
    hc_buf_put(b, s, n);
}

void hc_cbor_tstr(struct hc_buf *b, const char *s) { hc_cbor_tstrn(b, s, strlen(s)); }
void hc_cbor_array(struct hc_buf *b, size_t n) { hc_cbor_head(b, 4, n); }
void hc_cbor_map(struct hc_buf *b, size_t n) { hc_cbor_head(b, 5, n); }

/* ------------------------------------------------------------- check --- */

/* One open container: items still expected (UINT64_MAX for indefinite),
 * and for an indefinite string the major type its chunks must have. */
struct open_item {
    uint64_t left;
    int indefinite;
    int chunk_major; /* -1 unless an indefinite byte/text string */
};

int hc_cbor_check(const uint8_t *p, size_t len, unsigned max_depth, char *msg, size_t cap) {
    struct open_item *stack = calloc((size_t)max_depth + 1, sizeof *stack);
    size_t depth = 0, at = 0;
    int rc = -1;
    if (!stack) {
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    /* the root: one item */
    stack[0].left = 1;
    stack[0].indefinite = 0;
    stack[0].chunk_major = -1;
    for (;;) {
        /* close finished definite containers */
        while (!stack[depth].indefinite && stack[depth].left == 0) {
            if (depth == 0) {
                if (at != len) {
                    snprintf(msg, cap, "%zu bytes after the CBOR item", len - at);
                    goto done;
                }
                rc = 0;
                goto done;
            }
            depth--;
        }
        if (at >= len) {
            snprintf(msg, cap, "the CBOR item ends early (at byte %zu)", at);
            goto done;
        }
        uint8_t ib = p[at++];
        unsigned major = ib >> 5, ai = ib & 31;
        if (ib == 0xFF) {
            if (!stack[depth].indefinite) {
                snprintf(msg, cap, "a break code outside an indefinite-length item (byte %zu)", at - 1);
                goto done;
            }
            if (stack[depth].left != UINT64_MAX && (stack[depth].left & 1) == 1) {
                snprintf(msg, cap, "an indefinite map ends after a key (byte %zu)", at - 1);
                goto done;
            }
            depth--;
            continue;
        }
        /* the item counts against its container */
        struct open_item *top = &stack[depth];
        if (top->chunk_major >= 0 && (major != (unsigned)top->chunk_major || ai == 31)) {
            snprintf(msg, cap, "a chunk of the wrong type in an indefinite string (byte %zu)", at - 1);
            goto done;
        }
        if (!top->indefinite) top->left--;
        else if (top->left != UINT64_MAX) top->left ^= 1; /* map: key/value parity */
        uint64_t arg = 0;
        if (ai < 24) {
            arg = ai;
        } else if (ai <= 27) {
            size_t n = (size_t)1 << (ai - 24);
            if (len - at < n) {
                snprintf(msg, cap, "the CBOR item ends early (at byte %zu)", at);
                goto done;
            }
            for (size_t i = 0; i < n; i++) arg = (arg << 8) | p[at++];
        } else if (ai == 31) {
            if (major < 2 || major == 6 || major == 7) {
                snprintf(msg, cap, "indefinite length on major type %u (byte %zu)", major, at - 1);
                goto done;
            }
        } else {
            snprintf(msg, cap, "reserved additional information %u (byte %zu)", ai, at - 1);
            goto done;
        }
        switch (major) {
        case 0:
        case 1:
            break;
        case 2:
        case 3:
            if (ai == 31) {
                if (depth + 1 > max_depth) goto too_deep;
                stack[++depth] = (struct open_item){0, 1, (int)major};
                stack[depth].left = UINT64_MAX;
            } else {
                if (arg > len - at) {
                    snprintf(msg, cap, "a string of %llu bytes crosses the end (byte %zu)",
                             (unsigned long long)arg, at);
                    goto done;
                }
                at += (size_t)arg;
            }
            break;
        case 4:
        case 5:
            if (depth + 1 > max_depth) goto too_deep;
            if (ai == 31) {
                /* arrays: UINT64_MAX (no parity); maps: 0 = expecting a key */
                stack[++depth] = (struct open_item){major == 4 ? UINT64_MAX : 0, 1, -1};
            } else {
                uint64_t n = arg;
                if (major == 5) {
                    if (n > UINT64_MAX / 2) {
                        snprintf(msg, cap, "a map of %llu pairs", (unsigned long long)n);
                        goto done;
                    }
                    n *= 2;
                }
                if (n > len - at) { /* every item takes at least a byte */
                    snprintf(msg, cap, "a container of %llu items crosses the end (byte %zu)",
                             (unsigned long long)n, at);
                    goto done;
                }
                stack[++depth] = (struct open_item){n, 0, -1};
            }
            break;
        case 6:
            if (depth + 1 > max_depth) goto too_deep;
            stack[++depth] = (struct open_item){1, 0, -1}; /* the tagged item */
            break;
        case 7:
            if (ai == 24 && arg < 32) {
                snprintf(msg, cap, "a two-byte simple value below 32 (byte %zu)", at - 2);
                goto done;
            }
            break;
        }
    }
too_deep:
    snprintf(msg, cap, "nested deeper than %u levels", max_depth);
done:
    free(stack);
    return rc;
}
