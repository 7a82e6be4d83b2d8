/* The binary descriptor: decode, validate, encode. docs/spec/descriptor.md
 *
 * One decoding core (STYLE 6, 7). The parse_* readers follow descriptor.md
 * § Decoding order step by step and handle what the bytes alone can show:
 * magic, lengths, reserved bytes, padding, section order (the layout and
 * section payload readers of layout.c, quant.c and sections.c check their
 * own tags and reserved fields as they read). Every rule on a value lives in
 * exactly one check_* function; the parser calls it at its step of the
 * decoding order, so the first failure in that order wins and every input has
 * one status, and hurray_descriptor_validate, which decode runs as step 11 and
 * encode runs first, calls the same functions in the same order before the
 * three validation tiers. Encoding has one writer code path; every length it
 * writes (encoded_len, param_length, section lengths) is summed from the
 * parts' length functions, the ones the decoder checks lengths against, and
 * encode refuses (INTERNAL) a writer that emits a different count. */
#include "internal.h"

/* Marks "no input offset" for the shared value rules when they run on a
 * descriptor built in memory rather than parsed from bytes. */
#define NO_OFFSET UINT64_MAX

/* Offsets of the fixed header fields (descriptor.md § Layout of the bytes). */
enum {
    OFF_VERSION_MAJOR = 4,
    OFF_ENCODED_LEN = 8,
    OFF_FIXED = 16,
    OFF_DTYPE = 16,
    OFF_DEVICE = 17,
    OFF_LAYOUT = 19,
    OFF_RANK = 20,
    OFF_SHAPE = 32,
    HEADER_PREFIX_BYTES = 16, /* what peek needs: magic .. reserved 12-15 */
    FIXED_FIELD_BYTES = 16,
    SECTION_HEADER_BYTES = 8
};

/* Adds the input offset to an error record a value rule filled without one. */
static int at_offset(int status, uint64_t offset, struct hurray_error *err) {
    if (status != HURRAY_OK && err && !err->has_offset && offset != NO_OFFSET) {
        err->has_offset = 1;
        err->offset = offset;
    }
    return status;
}

static uint64_t offset_plus(uint64_t base, uint64_t k) {
    return base == NO_OFFSET ? NO_OFFSET : base + k;
}

/* ---- lifetime ------------------------------------------------------------ */

static const struct hurray_descriptor initial = {
    .version_major = HURRAY_FORMAT_MAJOR,
    .version_minor = HURRAY_FORMAT_MINOR,
    .device = HURRAY_DEVICE_CPU,
    .memory_class = HURRAY_MEM_STANDARD,
    .layout = {.tag = HURRAY_LAYOUT_ROW_MAJOR},
};

void hurray_descriptor_init(struct hurray_descriptor *d) {
    if (!d) return;
    *d = initial;
}

void hurray_descriptor_reset(struct hurray_descriptor *d) {
    if (!d) return;
    const struct hurray_allocator *a = d->allocator;
    hri_free(a, d->storage, d->storage_len);
    *d = initial;
    d->allocator = a;
}

void hurray_descriptor_move(struct hurray_descriptor *dst, struct hurray_descriptor *src) {
    if (!dst || !src || dst == src) return;
    hurray_descriptor_reset(dst);
    *dst = *src;
    *src = initial;
}

/* ---- sync modes (buffer-protocol.md § Sync modes, HR-BUF-5) --------------- */

const char *hurray_sync_mode_name(uint8_t mode) {
    switch (mode) {
    case HURRAY_SYNC_PRODUCER_SYNCED: return "producer_synced";
    case HURRAY_SYNC_EVENT: return "event";
    case HURRAY_SYNC_STREAM: return "stream";
    default: return NULL;
    }
}

/* No private range: 0xF0-0xFE are reserved here (conventions.md § Tag spaces). */
int hurray_sync_mode_tag_kind(uint8_t mode) {
    return hri_tag_kind_plain(mode, hurray_sync_mode_name(mode) != NULL);
}

/* ---- section types (sections.md) ----------------------------------------- */

/* must_understand of a known section type (HR-SECT-2), -1 for unknown types. */
static int known_must_understand(uint8_t type) {
    switch (type) {
    case HURRAY_SECTION_QUANTIZATION: return 1;
    case HURRAY_SECTION_STATISTICS: return 0;
    case HURRAY_SECTION_SHARD: return 0;
    case HURRAY_SECTION_ROLE: return 1;
    default: return -1;
    }
}

static int has_known_section(const struct hurray_descriptor *d, uint8_t type) {
    switch (type) {
    case HURRAY_SECTION_QUANTIZATION: return d->quant != NULL;
    case HURRAY_SECTION_STATISTICS: return d->statistics != NULL;
    case HURRAY_SECTION_SHARD: return d->shard != NULL;
    case HURRAY_SECTION_ROLE: return d->has_role != 0;
    default: return 0;
    }
}

static unsigned known_section_count(const struct hurray_descriptor *d) {
    return (unsigned)(d->quant != NULL) + (d->statistics != NULL) + (d->shard != NULL) +
           (d->has_role != 0);
}

/* ---- shape (memory-layout.md § Shape and dynamic dimensions) -------------- */

/* HR-SHAPE-1, HR-SHAPE-2: a resolved extent is at most 2^63-1, else it must
 * be the dynamic sentinel. */
static int check_extent_value(uint64_t e, unsigned k, struct hurray_error *err) {
    if (e <= HURRAY_MAX_EXTENT || e == HURRAY_DYNAMIC_DIM) return HURRAY_OK;
    char f[HURRAY_ERROR_FIELD_MAX];
    return hri_fail(err, HURRAY_E_RANGE, hri_fieldf(f, "shape[%u]", k),
                    "shape[%u]: extent %llu exceeds 2^63-1 and is not the dynamic sentinel "
                    "(HR-SHAPE-1)",
                    k, (unsigned long long)e);
}

/* HR-SHAPE-3 on extents already checked (HR-SHAPE-1, -2): N is 1 for rank 0,
 * 0 if any resolved extent is 0, otherwise the checked product of the
 * resolved extents. *resolved is 1 when every extent is resolved (no dynamic
 * dimension). */
static int shape_product(uint8_t rank, const uint64_t *shape, uint64_t *count, int *resolved,
                         struct hurray_error *err) {
    int all = 1, zero = 0;
    for (unsigned k = 0; k < rank; k++) {
        all &= shape[k] != HURRAY_DYNAMIC_DIM;
        zero |= shape[k] == 0;
    }
    uint64_t n = zero ? 0 : 1;
    for (unsigned k = 0; k < rank && !zero; k++) {
        if (shape[k] == HURRAY_DYNAMIC_DIM) continue;
        HR_FAIL_IF(hri_mul_u64(n, shape[k], &n), err, HURRAY_E_OVERFLOW, "shape",
                   "shape: the product of the resolved extents exceeds 2^64-1 (HR-SHAPE-3)");
    }
    *count = n;
    *resolved = all;
    return HURRAY_OK;
}

int hurray_shape_element_count(uint8_t rank, const uint64_t *shape, uint64_t *count,
                               int *resolved, struct hurray_error *err) {
    HR_FAIL_IF(!count || !resolved || (rank > 0 && !shape), err, HURRAY_E_ARGUMENT, "shape",
               "shape_element_count: NULL argument");
    HR_FAIL_IF(rank > HURRAY_MAX_RANK, err, HURRAY_E_LIMIT, "rank",
               "rank: %u exceeds the format maximum %d (memory-layout.md § Shape)",
               (unsigned)rank, HURRAY_MAX_RANK);
    for (unsigned k = 0; k < rank; k++) HR_TRY(check_extent_value(shape[k], k, err));
    return shape_product(rank, shape, count, resolved, err);
}

/* ==== value rules, in decoding order (descriptor.md § Decoding order) ===== */

/* Step 2: a reader of major 1 accepts every minor (HR-DESC-4). */
static int check_version(uint8_t major, uint64_t offset, struct hurray_error *err) {
    if (major == HURRAY_FORMAT_MAJOR) return HURRAY_OK;
    return at_offset(hri_fail(err, HURRAY_E_VERSION, "version_major",
                              "version_major: %u is not supported; this reader reads major %d "
                              "(HR-DESC-4)",
                              (unsigned)major, HURRAY_FORMAT_MAJOR),
                     offset, err);
}

/* Step 5, layout tag: a reserved tag is accepted as an unknown layout
 * (HR-LAYOUT-3); only invalid ones are refused. */
static int check_layout_tag(uint8_t tag, struct hurray_error *err) {
    if (hurray_layout_tag_kind(tag) != HURRAY_TAG_INVALID) return HURRAY_OK;
    return hri_fail(err, HURRAY_E_INVALID_TAG, "layout",
                    "layout: tag 0x%02X is invalid (memory-layout.md § Layout tags)", tag);
}

static int check_rank(uint8_t rank, const struct hurray_limits *lim, struct hurray_error *err) {
    if (rank <= lim->max_rank) return HURRAY_OK;
    return hri_fail(err, HURRAY_E_LIMIT, "rank",
                    "rank: %u exceeds max_rank %u (descriptor.md § Layout of the bytes)",
                    (unsigned)rank, (unsigned)lim->max_rank);
}

/* Step 5: dtype tag (HR-DTYPE-2); device and memory-class tags and their
 * pair (HR-DEV-2, HR-DEV-4); layout tag; rank. `base` is the offset of the
 * fixed fields in the input, or NO_OFFSET. */
static int check_fixed_fields(const struct hurray_descriptor *d, const struct hurray_limits *lim,
                              uint64_t base, struct hurray_error *err) {
    HR_TRY(at_offset(hurray_dtype_check_tag(d->dtype, "dtype", err),
                     offset_plus(base, OFF_DTYPE - OFF_FIXED), err));
    HR_TRY(at_offset(hurray_device_check(d->device, d->memory_class, err),
                     offset_plus(base, OFF_DEVICE - OFF_FIXED), err));
    HR_TRY(at_offset(check_layout_tag(d->layout.tag, err),
                     offset_plus(base, OFF_LAYOUT - OFF_FIXED), err));
    return at_offset(check_rank(d->rank, lim, err), offset_plus(base, OFF_RANK - OFF_FIXED),
                     err);
}

/* Step 6: each extent in order (RANGE). */
static int check_extent(const struct hurray_descriptor *d, unsigned k, uint64_t offset,
                        struct hurray_error *err) {
    return at_offset(check_extent_value(d->shape[k], k, err), offset, err);
}

/* Step 6: N, and N x bits, fit 64 bits even where a dynamic extent leaves N
 * unknown (HR-SHAPE-3). An extension type's width is unknown: only N counts.
 * Runs after step 5 (rank) and each extent's check (check_extent). */
static int check_element_count(const struct hurray_descriptor *d, uint64_t offset,
                               struct hurray_error *err) {
    uint64_t n = 0, bits_total = 0;
    int resolved = 0;
    HR_TRY(at_offset(shape_product(d->rank, d->shape, &n, &resolved, err), offset, err));
    uint16_t bits = hurray_dtype_bits(d->dtype);
    if (!hri_mul_u64(n, bits, &bits_total)) return HURRAY_OK;
    return at_offset(hri_fail(err, HURRAY_E_OVERFLOW, "shape",
                              "shape: %llu elements of %u bits exceed 2^64-1 bits (HR-SHAPE-3)",
                              (unsigned long long)n, (unsigned)bits),
                     offset, err);
}

/* Step 7, after the entry's reserved bytes: alignment_log2 <= 12 (HR-BUF-1),
 * an empty buffer declares 1 (HR-BUF-2), sync_mode tag (HR-BUF-5), size
 * against max_buffer_bytes. `base` is the entry's offset, or NO_OFFSET. */
static int check_buffer_entry(const struct hurray_descriptor *d, unsigned i,
                              const struct hurray_limits *lim, uint64_t base,
                              struct hurray_error *err) {
    const struct hurray_buffer_desc *b = &d->buffers[i];
    char f[HURRAY_ERROR_FIELD_MAX];
    if (b->alignment_log2 > HURRAY_MAX_ALIGNMENT_LOG2)
        return at_offset(hri_fail(err, HURRAY_E_ALIGNMENT,
                                  hri_fieldf(f, "buffers[%u].alignment_log2", i),
                                  "buffers[%u].alignment_log2: %u exceeds 12 (HR-BUF-1)", i,
                                  (unsigned)b->alignment_log2),
                         offset_plus(base, 8), err);
    if (b->size == 0 && b->alignment_log2 != 0)
        return at_offset(hri_fail(err, HURRAY_E_ALIGNMENT,
                                  hri_fieldf(f, "buffers[%u].alignment_log2", i),
                                  "buffers[%u].alignment_log2: an empty buffer must declare "
                                  "alignment 1, not 2^%u (HR-BUF-2)",
                                  i, (unsigned)b->alignment_log2),
                         offset_plus(base, 8), err);
    if (!hurray_sync_mode_name(b->sync_mode))
        return at_offset(hri_check_tag_kind(hurray_sync_mode_tag_kind(b->sync_mode),
                                            b->sync_mode, 0,
                                            hri_fieldf(f, "buffers[%u].sync_mode", i), err),
                         offset_plus(base, 9), err);
    if (b->size <= lim->max_buffer_bytes) return HURRAY_OK;
    return at_offset(hri_fail(err, HURRAY_E_LIMIT, hri_fieldf(f, "buffers[%u].size", i),
                              "buffers[%u].size: %llu bytes exceed max_buffer_bytes %llu", i,
                              (unsigned long long)b->size,
                              (unsigned long long)lim->max_buffer_bytes),
                     base, err);
}

/* Step 8 on values, for a descriptor built in memory: the parameters' tags
 * and opaque bytes and their value rules (hurray_layout_check_params, whose
 * tag, rank and span checks check_spans and check_fixed_fields have already
 * made: only its last step runs here), and struct hurray_layout's convention
 * that only private and unknown layouts carry opaque bytes ("the rest are
 * zero"). The parser's reader checks the tags inline. */
static int check_layout_params(const struct hurray_descriptor *d,
                               const struct hurray_limits *lim, struct hurray_error *err) {
    const struct hurray_layout *l = &d->layout;
    int named = hurray_layout_tag_kind(l->tag) == HURRAY_TAG_NAMED;
    HR_FAIL_IF(named && (l->opaque || l->opaque_len), err, HURRAY_E_ARGUMENT, "layout.opaque",
               "layout.opaque: the named layout %s carries no opaque bytes",
               hurray_layout_name(l->tag));
    return hri_layout_check_param_values(l, d->rank, lim, err);
}

/* Step 9: type tag (HR-SECT-4), then strictly ascending order (HR-SECT-1). */
static int check_section_type(uint8_t type, uint8_t prev, unsigned index,
                              struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    if (type != 0x00 && type != 0xFF && type > prev) return HURRAY_OK;
    hri_fieldf(f, "sections[%u].type", index);
    HR_FAIL_IF(type == 0x00 || type == 0xFF, err, HURRAY_E_INVALID_TAG, f,
               "%s: section type 0x%02X is invalid (HR-SECT-4)", f, type);
    return hri_fail(err, HURRAY_E_SECTION_ORDER, f, /* type <= prev */
                    "%s: section type 0x%02X follows 0x%02X; types must be strictly ascending "
                    "(HR-SECT-1)",
                    f, type, prev);
}

/* Step 9: flags bits 1-7 are reserved (sections.md). */
static int check_section_flags(uint8_t flags, unsigned index, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    if (!(flags & ~HURRAY_SECTION_MUST_UNDERSTAND)) return HURRAY_OK;
    hri_fieldf(f, "sections[%u].flags", index);
    return hri_fail(err, HURRAY_E_RESERVED_NONZERO, f, "%s: reserved flag bits 0x%02X are set", f,
                    (unsigned)(flags & ~HURRAY_SECTION_MUST_UNDERSTAND));
}

/* Step 9: a known type carries the table's must_understand (HR-SECT-2); an
 * unknown one with must_understand is refused (HR-SECT-3). */
static int check_section_must_understand(uint8_t type, uint8_t flags, unsigned index,
                                         struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    int mu = flags & HURRAY_SECTION_MUST_UNDERSTAND;
    int want = known_must_understand(type);
    if (want >= 0 ? mu == want : !mu) return HURRAY_OK;
    hri_fieldf(f, "sections[%u].flags", index);
    HR_FAIL_IF(want >= 0 && mu != want, err, HURRAY_E_CONSTRAINT, f,
               "%s: the %s section must have must_understand = %d (HR-SECT-2)", f,
               hurray_section_name(type), want);
    return hri_fail(err, HURRAY_E_UNSUPPORTED, f, /* want < 0 && mu */
                    "%s: unknown section type 0x%02X is must-understand (HR-SECT-3)", f, type);
}

/* Step 9: the exact payload length of a known section (HR-SECT-2). The
 * quantization length depends on its scheme, the payload's first byte. */
static int check_section_length(const struct hri_cursor *payload, uint8_t type, uint8_t rank,
                                unsigned index, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    uint32_t len = (uint32_t)hri_cursor_left(payload), want = len;
    switch (type) {
    case HURRAY_SECTION_QUANTIZATION:
        HR_TRY(hri_need(payload, 1, "quantization.scheme", err));
        HR_TRY(at_offset(hurray_quant_payload_length(payload->src[payload->pos], &want, err),
                         hri_cursor_offset(payload), err));
        break;
    case HURRAY_SECTION_STATISTICS: want = hri_statistics_length(); break;
    case HURRAY_SECTION_SHARD: want = hri_shard_length(rank); break;
    case HURRAY_SECTION_ROLE: want = hri_role_length(); break;
    default: break; /* unknown: any length, carried verbatim */
    }
    if (len == want) return HURRAY_OK;
    hri_fieldf(f, "sections[%u].length", index);
    return hri_fail_at(err, HURRAY_E_LENGTH, hri_cursor_offset(payload) - 4, f,
                       "%s: the %s payload is %u bytes, not %u (sections.md)", f,
                       hurray_section_name(type), (unsigned)len, (unsigned)want);
}

/* ==== parsing: decoding-order steps 1-10 ================================== */

struct header {
    uint8_t version_major;
    uint8_t version_minor;
    uint32_t encoded_len;
};

/* Where the parser writes the spans before the decode copies exactly what it
 * read into the descriptor's one storage block. Lives on the decoder's stack
 * and is never zeroed: only the entries read are used. */
struct scratch {
    uint64_t shape[HURRAY_MAX_RANK];
    struct hurray_buffer_desc buffers[HURRAY_MAX_BUFFERS];
    struct hri_layout_arrays layout;
    uint64_t global_shape[HURRAY_MAX_RANK];
    uint64_t global_offset[HURRAY_MAX_RANK];
    struct hurray_opaque_section opaque[HURRAY_MAX_SECTIONS];
    struct hurray_quant quant;
    struct hurray_statistics statistics;
    struct hurray_shard shard;
};

/* Steps 1-3 (HR-DESC-5): enough bytes for the length, magic, major version,
 * reserved bytes 6-7 and 12-15, then encoded_len itself. */
static int parse_header(const uint8_t *src, size_t len, const struct hurray_limits *lim,
                        struct header *h, struct hurray_error *err) {
    struct hri_cursor c;
    const uint8_t *magic;
    hri_cursor_init(&c, src, len, HURRAY_E_TRUNCATED);
    HR_TRY(hri_need(&c, HEADER_PREFIX_BYTES, "header", err));
    HR_TRY(hri_read_bytes(&c, 4, &magic, "magic", err));
    HR_FAIL_IF(memcmp(magic, HURRAY_DESCRIPTOR_MAGIC, 4) != 0, err, HURRAY_E_BAD_MAGIC, "magic",
               "magic: %02X %02X %02X %02X is not \"HRYD\" (descriptor.md § Layout of the bytes)",
               magic[0], magic[1], magic[2], magic[3]);
    HR_TRY(hri_read_u8(&c, &h->version_major, "version_major", err));
    HR_TRY(check_version(h->version_major, OFF_VERSION_MAJOR, err));
    HR_TRY(hri_read_u8(&c, &h->version_minor, "version_minor", err));
    HR_TRY(hri_read_reserved(&c, 2, "reserved[6..7]", err));
    HR_TRY(hri_read_u32(&c, &h->encoded_len, "encoded_len", err));
    HR_TRY(hri_read_reserved(&c, 4, "reserved[12..15]", err));
    if (h->encoded_len < HURRAY_DESCRIPTOR_MIN_BYTES || h->encoded_len % 8 != 0)
        return hri_fail_at(err, HURRAY_E_LENGTH, OFF_ENCODED_LEN, "encoded_len",
                           "encoded_len: %lu is below 40 or not a multiple of 8",
                           (unsigned long)h->encoded_len);
    if (h->encoded_len <= lim->max_descriptor_bytes) return HURRAY_OK;
    return hri_fail_at(err, HURRAY_E_LIMIT, OFF_ENCODED_LEN, "encoded_len",
                       "encoded_len: %lu exceeds max_descriptor_bytes %llu",
                       (unsigned long)h->encoded_len,
                       (unsigned long long)lim->max_descriptor_bytes);
}

/* Step 5: bytes 16-31. Reserved byte 23 first, then the value rules. */
static int parse_fixed_fields(struct hri_cursor *c, const struct hurray_limits *lim,
                              struct hurray_descriptor *d, uint8_t *section_count,
                              struct hurray_error *err) {
    uint64_t base = hri_cursor_offset(c);
    HR_TRY(hri_need(c, FIXED_FIELD_BYTES, "header", err));
    HR_TRY(hri_read_u8(c, &d->dtype, "dtype", err));
    HR_TRY(hri_read_u8(c, &d->device, "device", err));
    HR_TRY(hri_read_u8(c, &d->memory_class, "memory_class", err));
    HR_TRY(hri_read_u8(c, &d->layout.tag, "layout", err));
    HR_TRY(hri_read_u8(c, &d->rank, "rank", err));
    HR_TRY(hri_read_u8(c, &d->buffer_count, "buffer_count", err));
    HR_TRY(hri_read_u8(c, section_count, "section_count", err));
    HR_TRY(hri_read_reserved(c, 1, "reserved[23]", err));
    HR_TRY(hri_read_u64(c, &d->byte_offset, "byte_offset", err));
    return check_fixed_fields(d, lim, base, err);
}

/* Step 6: extents in order (RANGE), then the element count (OVERFLOW). */
static int parse_shape(struct hri_cursor *c, struct hurray_descriptor *d, struct scratch *s,
                       struct hurray_error *err) {
    d->shape = s->shape;
    for (unsigned k = 0; k < d->rank; k++) {
        uint64_t at = hri_cursor_offset(c);
        HR_TRY(hri_read_u64_i(c, &s->shape[k], "shape[%u]", k, err));
        HR_TRY(check_extent(d, k, at, err));
    }
    return check_element_count(d, OFF_SHAPE, err);
}

/* Step 7, one entry (HR-BUF-1): size u64, alignment_log2 u8, sync_mode u8,
 * reserved u8[6]; the reserved bytes are checked before the values. */
static int parse_buffer_entry(struct hri_cursor *c, const struct hurray_limits *lim,
                              struct hurray_descriptor *d, struct scratch *s, unsigned i,
                              struct hurray_error *err) {
    struct hurray_buffer_desc *b = &s->buffers[i];
    uint64_t base = hri_cursor_offset(c);
    HR_TRY(hri_need_i(c, HURRAY_BUFFER_ENTRY_BYTES, "buffers[%u]", i, err));
    HR_TRY(hri_read_u64(c, &b->size, "size", err));
    HR_TRY(hri_read_u8(c, &b->alignment_log2, "alignment_log2", err));
    HR_TRY(hri_read_u8(c, &b->sync_mode, "sync_mode", err));
    HR_TRY(hri_read_reserved_i(c, 6, "buffers[%u].reserved", i, err));
    return check_buffer_entry(d, i, lim, base, err);
}

static int parse_buffer_table(struct hri_cursor *c, const struct hurray_limits *lim,
                              struct hurray_descriptor *d, struct scratch *s,
                              struct hurray_error *err) {
    d->buffers = s->buffers;
    for (unsigned i = 0; i < d->buffer_count; i++)
        HR_TRY(parse_buffer_entry(c, lim, d, s, i, err));
    return HURRAY_OK;
}

/* A cursor over the next `n` bytes of `c` (same source, same offsets). */
static struct hri_cursor sub_cursor(const struct hri_cursor *c, size_t n) {
    struct hri_cursor s = *c;
    s.end = s.pos + n;
    return s;
}

/* The reader of a length-prefixed part must consume exactly its length. */
static int check_consumed(const struct hri_cursor *s, const char *field,
                          struct hurray_error *err) {
    if (s->pos == s->end) return HURRAY_OK;
    return hri_fail_at(err, HURRAY_E_LENGTH, hri_cursor_offset(s), field,
                       "%s: %zu bytes left unread by the part's reader", field,
                       hri_cursor_left(s));
}

/* Step 8: layout block header (param_length u32, reserved u32), the
 * parameters (memory-layout.md; layout.c's reader checks their exact length,
 * then their own tags and reserved fields as it reads them), then zero
 * padding to 8. Parameter constraints (tile extents, member_count) are
 * tier 3's (HR-LAYOUT-50), not step 8's. */
static int parse_layout_block(struct hri_cursor *c, const struct hurray_limits *lim,
                              struct hurray_descriptor *d, struct scratch *s,
                              struct hurray_error *err) {
    uint32_t len;
    uint64_t at = hri_cursor_offset(c);
    uint8_t tag = d->layout.tag;
    HR_TRY(hri_read_u32(c, &len, "layout.param_length", err));
    HR_TRY(hri_read_reserved(c, 4, "layout.reserved", err));
    if (len > hri_cursor_left(c))
        return hri_fail_at(err, HURRAY_E_LENGTH, at, "layout.param_length",
                           "layout.param_length: %lu bytes, but only %zu remain before "
                           "encoded_len",
                           (unsigned long)len, hri_cursor_left(c));
    struct hri_cursor p = sub_cursor(c, len);
    HR_TRY(hri_layout_params_read(&p, tag, d->rank, lim, &d->layout, &s->layout, err));
    d->layout.tag = tag;
    HR_TRY(check_consumed(&p, "layout.param_length", err));
    c->pos = p.end;
    return hri_read_reserved(c, hri_pad8(len), "layout.padding", err);
}

/* An unknown section with must_understand = 0: carried verbatim (HR-SECT-3).
 * `data` borrows the input until the decode adopts it. */
static int read_opaque_section(struct hri_cursor *p, uint8_t type, uint8_t flags,
                               struct hurray_descriptor *d, struct scratch *s,
                               struct hurray_error *err) {
    struct hurray_opaque_section *o = &s->opaque[d->opaque_count++];
    d->opaque = s->opaque;
    o->type = type;
    o->flags = flags;
    o->length = (uint32_t)hri_cursor_left(p);
    o->data = NULL;
    if (o->length == 0) return HURRAY_OK;
    return hri_read_bytes(p, o->length, &o->data, "section.payload", err);
}

/* Step 9, a payload: its tags and reserved fields, by the section's reader. */
static int read_section_payload(struct hri_cursor *p, uint8_t type, uint8_t flags,
                                struct hurray_descriptor *d, struct scratch *s,
                                struct hurray_error *err) {
    switch (type) {
    case HURRAY_SECTION_QUANTIZATION:
        d->quant = &s->quant;
        return hri_quant_read(p, &s->quant, err);
    case HURRAY_SECTION_STATISTICS:
        d->statistics = &s->statistics;
        return hri_statistics_read(p, &s->statistics, err);
    case HURRAY_SECTION_SHARD:
        d->shard = &s->shard;
        return hri_shard_read(p, d->rank, &s->shard, s->global_shape, s->global_offset, err);
    case HURRAY_SECTION_ROLE:
        d->has_role = 1;
        return hri_role_read(p, &d->role, err);
    default:
        return read_opaque_section(p, type, flags, d, s, err);
    }
}

/* Step 9, the section header (sections.md): header fits, type tag, order,
 * reserved bits (flags, then the u16), must_understand. */
static int parse_section_header(struct hri_cursor *c, unsigned i, uint8_t *prev, uint8_t *type,
                                uint8_t *flags, uint32_t *length, struct hurray_error *err) {
    uint64_t at = hri_cursor_offset(c);
    HR_TRY(hri_need_i(c, SECTION_HEADER_BYTES, "sections[%u]", i, err));
    HR_TRY(hri_read_u8(c, type, "section.type", err));
    HR_TRY(at_offset(check_section_type(*type, *prev, i, err), at, err));
    *prev = *type;
    HR_TRY(hri_read_u8(c, flags, "section.flags", err));
    HR_TRY(at_offset(check_section_flags(*flags, i, err), at + 1, err));
    HR_TRY(hri_read_reserved_i(c, 2, "sections[%u].reserved", i, err));
    HR_TRY(at_offset(check_section_must_understand(*type, *flags, i, err), at + 1, err));
    return hri_read_u32(c, length, "section.length", err);
}

/* Step 9, one section: header, payload length fits and is exact, payload,
 * padding. */
static int parse_section(struct hri_cursor *c, unsigned i, uint8_t *prev,
                         struct hurray_descriptor *d, struct scratch *s,
                         struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    uint8_t type, flags;
    uint32_t len;
    HR_TRY(parse_section_header(c, i, prev, &type, &flags, &len, err));
    if (len > hri_cursor_left(c))
        return hri_fail_at(err, HURRAY_E_LENGTH, hri_cursor_offset(c) - 4,
                           hri_fieldf(f, "sections[%u].length", i),
                           "%s: %lu payload bytes, but only %zu remain before encoded_len", f,
                           (unsigned long)len, hri_cursor_left(c));
    struct hri_cursor p = sub_cursor(c, len);
    HR_TRY(check_section_length(&p, type, d->rank, i, err));
    HR_TRY(read_section_payload(&p, type, flags, d, s, err));
    if (p.pos != p.end) HR_TRY(check_consumed(&p, hri_fieldf(f, "sections[%u].length", i), err));
    c->pos = p.end;
    return hri_read_reserved_i(c, hri_pad8(len), "sections[%u].padding", i, err);
}

static int parse_sections(struct hri_cursor *c, uint8_t count, struct hurray_descriptor *d,
                          struct scratch *s, struct hurray_error *err) {
    uint8_t prev = 0;
    for (unsigned i = 0; i < count; i++) HR_TRY(parse_section(c, i, &prev, d, s, err));
    return HURRAY_OK;
}

/* Step 10: the last part ends exactly at encoded_len. */
static int parse_end(const struct hri_cursor *c, struct hurray_error *err) {
    if (c->pos == c->end) return HURRAY_OK;
    return hri_fail_at(err, HURRAY_E_LENGTH, OFF_ENCODED_LEN, "encoded_len",
                       "encoded_len: the descriptor's parts end at %zu, not at %zu", c->pos,
                       c->end);
}

/* Steps 4-10 after the header: the structure, with each part's value rules
 * at their place in the order. The spans point into `s` and the opaque bytes
 * still borrow `src`. */
static int parse_body(const uint8_t *src, size_t len, const struct header *h,
                      const struct hurray_limits *lim, struct hurray_descriptor *d,
                      struct scratch *s, struct hurray_error *err) {
    struct hri_cursor c;
    uint8_t section_count = 0;
    if (len < h->encoded_len)
        return hri_fail_at(err, HURRAY_E_TRUNCATED, len, "encoded_len",
                           "encoded_len: %lu bytes declared, %zu available",
                           (unsigned long)h->encoded_len, len);
    hri_cursor_init(&c, src, h->encoded_len, HURRAY_E_LENGTH);
    c.pos = HEADER_PREFIX_BYTES;
    d->version_major = h->version_major;
    d->version_minor = h->version_minor;
    HR_TRY(parse_fixed_fields(&c, lim, d, &section_count, err));
    HR_TRY(parse_shape(&c, d, s, err));
    HR_TRY(parse_buffer_table(&c, lim, d, s, err));
    HR_TRY(parse_layout_block(&c, lim, d, s, err));
    HR_TRY(parse_sections(&c, section_count, d, s, err));
    return parse_end(&c, err);
}

/* ==== validation (step 11 and everything before it, on values) ============ */

/* Unknown sections in a descriptor built in memory: the rules of step 9 on
 * their values, plus the representation's own conventions. */
static int check_opaque_section(const struct hurray_descriptor *d, unsigned i, unsigned index,
                                uint8_t *prev, struct hurray_error *err) {
    const struct hurray_opaque_section *o = &d->opaque[i];
    char f[HURRAY_ERROR_FIELD_MAX]; /* formatted only on failure */
    HR_TRY(check_section_type(o->type, *prev, index, err));
    HR_FAIL_IF(known_must_understand(o->type) >= 0, err, HURRAY_E_ARGUMENT,
               hri_fieldf(f, "sections[%u]", index),
               "%s: the %s section is carried in its own fields, not as an opaque section", f,
               hurray_section_name(o->type));
    *prev = o->type;
    HR_TRY(check_section_flags(o->flags, index, err));
    HR_TRY(check_section_must_understand(o->type, o->flags, index, err));
    HR_FAIL_IF(o->length && !o->data, err, HURRAY_E_ARGUMENT,
               hri_fieldf(f, "sections[%u]", index), "%s: data is NULL, length %lu", f,
               (unsigned long)o->length);
    return HURRAY_OK;
}

/* Step 9 on values: section count fits its byte, the role tag (HR-ROLE-1),
 * unknown sections. Quantization, statistics and shard values are tier 3. */
static int check_sections(const struct hurray_descriptor *d, struct hurray_error *err) {
    unsigned known = known_section_count(d);
    uint8_t prev = 0;
    HR_FAIL_IF(known + d->opaque_count > HURRAY_MAX_SECTIONS, err, HURRAY_E_ARGUMENT,
               "section_count", "section_count: %u sections do not fit the u8 field",
               known + d->opaque_count);
    if (d->has_role) HR_TRY(hurray_member_role_check(d->role, err));
    for (uint8_t t = HURRAY_SECTION_QUANTIZATION; t <= HURRAY_SECTION_ROLE && d->opaque_count; t++)
        if (has_known_section(d, t)) prev = t; /* what the unknown sections follow */
    for (unsigned i = 0; i < d->opaque_count; i++)
        HR_TRY(check_opaque_section(d, i, known + i, &prev, err));
    return HURRAY_OK;
}

/* Steps 2 and 5-9 on values, in decoding order. */
static int check_spans(const struct hurray_descriptor *d, struct hurray_error *err);

static int check_structure(const struct hurray_descriptor *d, const struct hurray_limits *lim,
                           struct hurray_error *err) {
    HR_TRY(check_spans(d, err));
    HR_TRY(check_version(d->version_major, NO_OFFSET, err));
    HR_TRY(check_fixed_fields(d, lim, NO_OFFSET, err));
    for (unsigned k = 0; k < d->rank; k++) HR_TRY(check_extent(d, k, NO_OFFSET, err));
    HR_TRY(check_element_count(d, NO_OFFSET, err));
    for (unsigned i = 0; i < d->buffer_count; i++)
        HR_TRY(check_buffer_entry(d, i, lim, NO_OFFSET, err));
    HR_TRY(check_layout_params(d, lim, err));
    return check_sections(d, err);
}

/* HR-DESC-3: a descriptor with no buffers has byte_offset 0. (The element
 * width and composite rules depend on the layout: hri_layout_check_dtype.) */
static int check_byte_offset(const struct hurray_descriptor *d, struct hurray_error *err) {
    HR_TRY(hri_layout_check_dtype(&d->layout, d->dtype, d->byte_offset, err));
    HR_FAIL_IF(d->buffer_count == 0 && d->byte_offset != 0, err, HURRAY_E_CONSTRAINT,
               "byte_offset", "byte_offset: %llu, but a descriptor with no buffers has 0 "
               "(HR-DESC-3)",
               (unsigned long long)d->byte_offset);
    return HURRAY_OK;
}

/* Tier 3, layout against shape (HR-LAYOUT-50): named layouts only; private
 * and unknown layouts only check the sections (buffer-protocol.md). What
 * hurray_layout_validate_against_shape checks first (rank, extents, element
 * count) steps 5 and 6 have checked; the parameters' own rules
 * (hurray_layout_check_params) check_structure has checked when
 * `params_checked`, else (a decode) they are checked here. */
static int check_layout_against_shape(const struct hurray_descriptor *d,
                                      const struct hurray_limits *lim, int params_checked,
                                      struct hurray_error *err) {
    if (hurray_layout_tag_kind(d->layout.tag) != HURRAY_TAG_NAMED) return HURRAY_OK;
    if (!params_checked) HR_TRY(hurray_layout_check_params(&d->layout, d->rank, lim, err));
    return hri_layout_check_against_shape(&d->layout, d->rank, d->shape, err);
}

/* Tier 3, the quantization section against dtype, shape and layout
 * (quantization.md), after its context-free rules. */
static int check_quant_section(const struct hurray_descriptor *d, struct hurray_error *err) {
    int layout_buffers = -1;
    if (!d->quant) return HURRAY_OK;
    HR_TRY(hurray_quant_check(d->quant, err));
    HR_TRY(hurray_layout_buffer_count(d->layout.tag, d->rank, &layout_buffers, err));
    return hurray_quant_validate(d->quant, d->dtype, &d->layout, d->rank, d->shape,
                                 layout_buffers, d->buffer_count, err);
}

/* Tier 3, statistics (HR-STAT-1): nan_count <= N only when N is known. */
static int check_statistics_section(const struct hurray_descriptor *d,
                                    struct hurray_error *err) {
    uint64_t n = 0;
    int resolved = 0;
    if (!d->statistics) return HURRAY_OK;
    HR_TRY(hurray_shape_element_count(d->rank, d->shape, &n, &resolved, err));
    return hurray_statistics_check(d->statistics, resolved ? n : UINT64_MAX, err);
}

/* Tier 3 (buffer-protocol.md § Validation tiers): layout against shape, the
 * layout's dtype and byte_offset rules, quantization, statistics, shard. */
static int check_tier3(const struct hurray_descriptor *d, const struct hurray_limits *lim,
                       int params_checked, struct hurray_error *err) {
    HR_TRY(check_layout_against_shape(d, lim, params_checked, err));
    HR_TRY(check_byte_offset(d, err));
    HR_TRY(check_quant_section(d, err));
    HR_TRY(check_statistics_section(d, err));
    if (d->shard) HR_TRY(hurray_shard_check(d->shard, d->rank, d->shape, err));
    return HURRAY_OK;
}

/* L (-1 when the layout's count is unknowable) and Q (HR-BUF-8). */
struct buffer_counts {
    int layout;
    int quant;
};

static int buffer_counts(const struct hurray_descriptor *d, struct buffer_counts *c,
                         struct hurray_error *err) {
    c->layout = -1;
    c->quant = 0;
    HR_TRY(hurray_layout_buffer_count(d->layout.tag, d->rank, &c->layout, err));
    if (d->quant) HR_TRY(hurray_quant_buffer_count(d->quant, &c->quant, err));
    return HURRAY_OK;
}

static int expected_count(const struct buffer_counts *c) {
    return c->layout < 0 ? -1 : c->layout + c->quant;
}

/* L + Q (HR-BUF-8); -1 when the layout's count is unknowable. */
int hurray_descriptor_expected_buffer_count(const struct hurray_descriptor *d, int *count,
                                            struct hurray_error *err) {
    struct buffer_counts c;
    HR_FAIL_IF(!d || !count, err, HURRAY_E_ARGUMENT, "descriptor",
               "expected_buffer_count: NULL argument");
    HR_TRY(buffer_counts(d, &c, err));
    *count = expected_count(&c);
    return HURRAY_OK;
}

/* Tier 1: buffer_count = L + Q for named layouts (HR-BUF-9). `c`: the
 * descriptor's buffer_counts. */
static int check_tier1(const struct hurray_descriptor *d, const struct buffer_counts *c,
                       struct hurray_error *err) {
    int want = expected_count(c);
    if (want < 0 || want == d->buffer_count) return HURRAY_OK;
    return hri_fail(err, HURRAY_E_BUFFER_COUNT, "buffer_count",
                    "buffer_count: %u, but the %s layout with %s needs %d (HR-BUF-8)",
                    (unsigned)d->buffer_count, hurray_layout_name(d->layout.tag),
                    d->quant ? "its quantization section" : "no quantization", want);
}

/* Tier 2 inputs: the layout's L requirements, then the quantization
 * section's Q, at buffer indices L, L+1, ... (HR-BUF-8). `c`: the
 * descriptor's buffer_counts. */
static int compute_required_sizes(const struct hurray_descriptor *d,
                                  const struct buffer_counts *c, uint64_t *sizes, uint8_t *known,
                                  unsigned cap, struct hurray_error *err) {
    int layout_buffers = c->layout, quant_buffers = c->quant;
    uint64_t qs[3] = {0, 0, 0};
    uint8_t qk[3] = {0, 0, 0};
    for (unsigned i = 0; i < cap; i++) { /* cap <= HURRAY_MAX_BUFFERS: no memset call */
        sizes[i] = 0;
        known[i] = 0;
    }
    if (layout_buffers < 0) return HURRAY_OK; /* private/unknown: not evaluable */
    HR_FAIL_IF(layout_buffers + quant_buffers > (int)cap || quant_buffers > 3, err,
               HURRAY_E_INTERNAL, "buffer_count", "buffer_count: L %d + Q %d out of range",
               layout_buffers, quant_buffers);
    HR_TRY(hri_layout_required_sizes(&d->layout, d->dtype, d->rank, d->shape, d->byte_offset,
                                     sizes, known, err));
    if (!d->quant) return HURRAY_OK;
    HR_TRY(hurray_quant_required_sizes(d->quant, d->rank, d->shape, qs, qk, err));
    for (int j = 0; j < quant_buffers; j++) {
        sizes[layout_buffers + j] = qs[j];
        known[layout_buffers + j] = qk[j];
    }
    return HURRAY_OK;
}

/* Tier 2: each buffer at least its requirement, in buffer order (HR-BUF-9);
 * over-sized buffers are permitted. */
static int check_tier2(const struct hurray_descriptor *d, const struct buffer_counts *c,
                       struct hurray_error *err) {
    uint64_t sizes[HURRAY_MAX_BUFFERS];
    uint8_t known[HURRAY_MAX_BUFFERS];
    /* Tier 1 held: the table has exactly L + Q entries, or L is unknown. */
    HR_TRY(compute_required_sizes(d, c, sizes, known, d->buffer_count, err));
    for (unsigned i = 0; i < d->buffer_count; i++) {
        char f[HURRAY_ERROR_FIELD_MAX];
        HR_FAIL_IF(known[i] && d->buffers[i].size < sizes[i], err, HURRAY_E_BUFFER_SIZE,
                   hri_fieldf(f, "buffers[%u].size", i),
                   "buffers[%u].size: %llu bytes, the %s layout needs at least %llu", i,
                   (unsigned long long)d->buffers[i].size, hurray_layout_name(d->layout.tag),
                   (unsigned long long)sizes[i]);
    }
    return HURRAY_OK;
}

static int check_encoded_size(const struct hurray_descriptor *d,
                              const struct hurray_limits *lim, size_t *len,
                              struct hurray_error *err);

/* The three tiers, in the order of buffer-protocol.md § Validation tiers.
 * `params_checked`: check_structure ran (check_layout_against_shape). */
static int check_tiers(const struct hurray_descriptor *d, const struct hurray_limits *lim,
                       int params_checked, struct hurray_error *err) {
    struct buffer_counts c;
    HR_TRY(check_tier3(d, lim, params_checked, err));
    HR_TRY(buffer_counts(d, &c, err));
    HR_TRY(check_tier1(d, &c, err));
    return check_tier2(d, &c, err);
}

/* The whole validation under `lim` (already effective): the structure, the three tiers, and
 * last the encoded size, whose count *len receives (the canonical length the encoder
 * writes), so a caller that needs both validates and counts once. */
static int validate_counted(const struct hurray_descriptor *d, const struct hurray_limits *lim,
                            size_t *len, struct hurray_error *err) {
    HR_TRY(check_structure(d, lim, err));
    HR_TRY(check_tiers(d, lim, 1, err));
    return check_encoded_size(d, lim, len, err);
}

int hurray_descriptor_validate(const struct hurray_descriptor *d,
                               const struct hurray_limits *limits, struct hurray_error *err) {
    struct hurray_limits lim;
    size_t len;
    HR_FAIL_IF(!d, err, HURRAY_E_ARGUMENT, "descriptor", "validate: descriptor is NULL");
    hri_limits_effective(limits, &lim);
    return validate_counted(d, &lim, &len, err);
}

int hurray_descriptor_required_sizes(const struct hurray_descriptor *d,
                                     uint64_t sizes[HURRAY_MAX_BUFFERS],
                                     uint8_t known[HURRAY_MAX_BUFFERS],
                                     struct hurray_error *err) {
    struct hurray_limits lim;
    HR_FAIL_IF(!d || !sizes || !known, err, HURRAY_E_ARGUMENT, "descriptor",
               "required_sizes: NULL argument");
    hri_limits_format_max(&lim);
    struct buffer_counts c;
    HR_TRY(check_structure(d, &lim, err));
    HR_TRY(check_tier3(d, &lim, 1, err));
    HR_TRY(buffer_counts(d, &c, err));
    HR_TRY(check_tier1(d, &c, err));
    return compute_required_sizes(d, &c, sizes, known, HURRAY_MAX_BUFFERS, err);
}

/* ==== storage: every span in one block ==================================== */

/* Zeros a rank change puts in the rank-sized spans (hurray_descriptor_set_shape). */
static const int64_t zero_i64[HURRAY_MAX_RANK];
static const uint64_t zero_u64[HURRAY_MAX_RANK];
static const uint8_t zero_u8[HURRAY_MAX_RANK];

/* Which rank-sized layout spans a tag uses (memory-layout.md, per layout). */
enum {
    USES_STRIDES = 1,
    USES_TILED = 2, /* tile_shape, inner_strides (and strides) */
    USES_CSF = 4,   /* fiber_counts, mode_order */
    USES_OPAQUE = 8
};

static unsigned layout_uses(uint8_t tag) {
    switch (tag) {
    case HURRAY_LAYOUT_STRIDED: return USES_STRIDES;
    case HURRAY_LAYOUT_TILED: return USES_STRIDES | USES_TILED;
    case HURRAY_LAYOUT_CSF: return USES_CSF;
    default: break;
    }
    int kind = hurray_layout_tag_kind(tag);
    return kind == HURRAY_TAG_NAMED || kind == HURRAY_TAG_INVALID ? 0u : USES_OPAQUE;
}

/* Every span of non-zero length exists. A caller may point spans anywhere;
 * a NULL one is a programming error, refused before anything reads it. */
static int check_spans(const struct hurray_descriptor *d, struct hurray_error *err) {
    HR_FAIL_IF(d->rank && !d->shape, err, HURRAY_E_ARGUMENT, "shape",
               "shape: NULL span for rank %u", (unsigned)d->rank);
    HR_FAIL_IF(d->buffer_count && !d->buffers, err, HURRAY_E_ARGUMENT, "buffers",
               "buffers: NULL span for buffer_count %u", (unsigned)d->buffer_count);
    HR_FAIL_IF(d->opaque_count && !d->opaque, err, HURRAY_E_ARGUMENT, "opaque",
               "opaque: NULL span for opaque_count %u", (unsigned)d->opaque_count);
    HR_TRY(hri_layout_check_spans(&d->layout, d->rank, err));
    HR_FAIL_IF(d->shard && d->rank && (!d->shard->global_shape || !d->shard->global_offset),
               err, HURRAY_E_ARGUMENT, "shard",
               "shard: NULL global_shape or global_offset span for rank %u", (unsigned)d->rank);
    for (unsigned i = 0; i < d->opaque_count; i++) {
        char f[HURRAY_ERROR_FIELD_MAX];
        HR_FAIL_IF(d->opaque[i].length && !d->opaque[i].data, err, HURRAY_E_ARGUMENT,
                   hri_fieldf(f, "opaque[%u].data", i), "opaque[%u].data: NULL, length %lu",
                   i, (unsigned long)d->opaque[i].length);
    }
    return HURRAY_OK;
}

/* Offsets of each span in the block: the 8-aligned arrays first, then bytes. */
struct storage_plan {
    size_t quant, statistics, shard;
    size_t shape, buffers, strides, inner, tile, fiber, gshape, goffset, records;
    size_t mode, lopaque, sections, total;
};

/* The section records are multiples of 8 bytes long: the spans after them stay aligned. */
_Static_assert(sizeof(struct hurray_quant) % 8 == 0 && sizeof(struct hurray_statistics) % 8 == 0 &&
                   sizeof(struct hurray_shard) % 8 == 0,
               "section records keep the block's 8-byte alignment");

static size_t plan_take(size_t *at, size_t n) {
    size_t p = *at;
    *at += n;
    return p;
}

static int plan_storage(const struct hurray_descriptor *d, struct storage_plan *p,
                        struct hurray_error *err) {
    size_t r = d->rank, at = 0;
    unsigned uses = layout_uses(d->layout.tag);
    uint64_t bytes = 0;
    if (d->quant || d->statistics || d->shard) { /* most descriptors have none */
        p->quant = plan_take(&at, d->quant ? sizeof *d->quant : 0);
        p->statistics = plan_take(&at, d->statistics ? sizeof *d->statistics : 0);
        p->shard = plan_take(&at, d->shard ? sizeof *d->shard : 0);
    }
    p->shape = plan_take(&at, r * 8);
    p->buffers = plan_take(&at, d->buffer_count * sizeof *d->buffers);
    p->strides = plan_take(&at, uses & USES_STRIDES ? r * 8 : 0);
    p->inner = plan_take(&at, uses & USES_TILED ? r * 8 : 0);
    p->tile = plan_take(&at, uses & USES_TILED ? r * 8 : 0);
    p->fiber = plan_take(&at, uses & USES_CSF && r ? (r - 1) * 8 : 0);
    p->gshape = plan_take(&at, d->shard ? r * 8 : 0);
    p->goffset = plan_take(&at, d->shard ? r * 8 : 0);
    p->records = plan_take(&at, d->opaque_count * sizeof *d->opaque);
    p->mode = plan_take(&at, uses & USES_CSF ? r : 0);
    p->lopaque = at;
    bytes = uses & USES_OPAQUE ? d->layout.opaque_len : 0;
    for (unsigned i = 0; i < d->opaque_count; i++)
        bytes += d->opaque[i].length; /* at most 256 u32s: no u64 overflow */
    HR_FAIL_IF(bytes > SIZE_MAX - at, err, HURRAY_E_NOMEM, "descriptor",
               "descriptor: %llu opaque bytes exceed the address space",
               (unsigned long long)bytes);
    p->sections = at + (uses & USES_OPAQUE ? d->layout.opaque_len : 0);
    p->total = at + (size_t)bytes;
    return HURRAY_OK;
}

/* n bytes of src at block + off, as a span; NULL when n == 0 (an empty span
 * is NULL in a descriptor libhurray built: never pass one to memcpy). */
static const void *place(uint8_t *block, size_t off, const void *src, size_t n) {
    if (n == 0) return NULL;
    memcpy(block + off, src, n);
    return block + off;
}

/* Copies every span `d` points at (wherever it points: the parser's scratch,
 * the input, a caller's arrays, d's own block) into ONE new block from `a`,
 * exactly sized, and points `d` into it: d->storage becomes the new block.
 * The old block is not freed (the caller does, after). Spans the layout's tag
 * does not use become NULL; the section records present are copied with the
 * spans (the shard's spans into the block too). On
 * failure `d` is unchanged. Every span it copies exists: check_spans passed,
 * or the parser set them. */
static int build_storage(struct hurray_descriptor *d, const struct hurray_allocator *a,
                         struct hurray_error *err) {
    struct storage_plan p = {0};
    size_t r = d->rank;
    unsigned uses = layout_uses(d->layout.tag);
    struct hurray_layout *l = &d->layout;
    HR_TRY(plan_storage(d, &p, err));
    uint8_t *block = p.total ? hri_alloc(a, p.total) : NULL;
    HR_FAIL_IF(p.total && !block, err, HURRAY_E_NOMEM, "descriptor",
               "descriptor: cannot allocate %zu bytes for its spans", p.total);
    d->shape = place(block, p.shape, d->shape, r * 8);
    d->buffers = place(block, p.buffers, d->buffers, d->buffer_count * sizeof *d->buffers);
    l->strides = uses & USES_STRIDES ? place(block, p.strides, l->strides, r * 8) : NULL;
    l->inner_strides =
        uses & USES_TILED ? place(block, p.inner, l->inner_strides, r * 8) : NULL;
    l->tile_shape = uses & USES_TILED ? place(block, p.tile, l->tile_shape, r * 8)
                                      : NULL;
    l->fiber_counts = uses & USES_CSF
                          ? place(block, p.fiber, l->fiber_counts, r ? (r - 1) * 8 : 0)
                          : NULL;
    l->mode_order = uses & USES_CSF ? place(block, p.mode, l->mode_order, r) : NULL;
    l->opaque = uses & USES_OPAQUE && l->opaque_len
                    ? place(block, p.lopaque, l->opaque, l->opaque_len)
                    : NULL;
    if (d->quant) d->quant = place(block, p.quant, d->quant, sizeof *d->quant);
    if (d->statistics)
        d->statistics = place(block, p.statistics, d->statistics, sizeof *d->statistics);
    if (d->shard) {
        /* d's own block: writable, whatever the pointer's const says */
        struct hurray_shard *sh =
            (struct hurray_shard *)(uintptr_t)place(block, p.shard, d->shard, sizeof *d->shard);
        sh->global_shape = place(block, p.gshape, sh->global_shape, r * 8);
        sh->global_offset = place(block, p.goffset, sh->global_offset, r * 8);
        d->shard = sh;
    }
    struct hurray_opaque_section *rec =
        (struct hurray_opaque_section *)(void *)(block ? block + p.records : NULL);
    size_t at = p.sections;
    for (unsigned i = 0; i < d->opaque_count; i++) {
        rec[i] = d->opaque[i];
        rec[i].data = place(block, at, d->opaque[i].data, d->opaque[i].length);
        at += d->opaque[i].length;
    }
    d->opaque = d->opaque_count ? rec : NULL;
    d->storage = block;
    d->storage_len = p.total;
    d->allocator = a;
    return HURRAY_OK;
}

/* Makes `t` (d's header with some spans replaced) d's new state: builds t's
 * block with d's allocator, then frees d's old one. On failure d is unchanged. */
static int commit(struct hurray_descriptor *d, struct hurray_descriptor *t,
                  struct hurray_error *err) {
    void *old = d->storage;
    size_t old_len = d->storage_len;
    HR_TRY(check_spans(t, err));
    HR_TRY(build_storage(t, d->allocator, err));
    *d = *t;
    hri_free(d->allocator, old, old_len);
    return HURRAY_OK;
}

static int in_storage(const struct hurray_descriptor *d, const void *p) {
    uintptr_t b = (uintptr_t)d->storage, q = (uintptr_t)p;
    return d->storage && q >= b && q < b + d->storage_len;
}

/* ---- setters -------------------------------------------------------------- */

int hurray_descriptor_set_shape(struct hurray_descriptor *d, uint8_t rank,
                                const uint64_t *shape, struct hurray_error *err) {
    HR_FAIL_IF(!d, err, HURRAY_E_ARGUMENT, "descriptor", "set_shape: descriptor is NULL");
    HR_FAIL_IF(rank > HURRAY_MAX_RANK, err, HURRAY_E_ARGUMENT, "rank",
               "rank: %u exceeds the format maximum %d", (unsigned)rank, HURRAY_MAX_RANK);
    HR_FAIL_IF(rank && !shape, err, HURRAY_E_ARGUMENT, "shape",
               "set_shape: shape is NULL for rank %u", (unsigned)rank);
    struct hurray_descriptor t = *d;
    struct hurray_shard sh;
    t.rank = rank;
    t.shape = rank ? shape : NULL;
    if (rank != d->rank) {
        /* The rank-sized spans restart at zero for the new rank (descriptor.h). */
        struct hurray_layout *l = &t.layout;
        unsigned uses = layout_uses(l->tag);
        if (uses & USES_STRIDES) l->strides = zero_i64;
        if (uses & USES_TILED) {
            l->inner_strides = zero_i64;
            l->tile_shape = zero_u64;
        }
        if (uses & USES_CSF) {
            l->fiber_counts = zero_u64;
            l->mode_order = zero_u8;
        }
        if (t.shard) {
            sh = *t.shard;
            sh.global_shape = zero_u64;
            sh.global_offset = zero_u64;
            t.shard = &sh;
        }
    }
    return commit(d, &t, err);
}

int hurray_descriptor_set_buffers(struct hurray_descriptor *d, uint8_t count,
                                  const struct hurray_buffer_desc *bufs,
                                  struct hurray_error *err) {
    HR_FAIL_IF(!d || (count && !bufs), err, HURRAY_E_ARGUMENT, "buffers",
               "set_buffers: NULL argument");
    struct hurray_descriptor t = *d;
    t.buffer_count = count;
    t.buffers = count ? bufs : NULL;
    return commit(d, &t, err);
}

int hurray_descriptor_set_buffer(struct hurray_descriptor *d, uint8_t i,
                                 const struct hurray_buffer_desc *b, struct hurray_error *err) {
    HR_FAIL_IF(!d || !b, err, HURRAY_E_ARGUMENT, "buffers", "set_buffer: NULL argument");
    HR_FAIL_IF(i >= d->buffer_count, err, HURRAY_E_ARGUMENT, "buffers",
               "set_buffer: index %u is not below buffer_count %u", (unsigned)i,
               (unsigned)d->buffer_count);
    if (!in_storage(d, d->buffers)) {
        struct hurray_descriptor t = *d;
        HR_TRY(commit(d, &t, err));
    }
    /* d's own block: writable, whatever the span's const says. */
    struct hurray_buffer_desc *own = (struct hurray_buffer_desc *)(uintptr_t)d->buffers;
    own[i] = *b;
    return HURRAY_OK;
}

int hurray_descriptor_set_layout(struct hurray_descriptor *d, const struct hurray_layout *layout,
                                 struct hurray_error *err) {
    HR_FAIL_IF(!d || !layout, err, HURRAY_E_ARGUMENT, "layout", "set_layout: NULL argument");
    unsigned uses = layout_uses(layout->tag);
    HR_FAIL_IF(!(uses & USES_OPAQUE) && (layout->opaque || layout->opaque_len), err,
               HURRAY_E_ARGUMENT, "layout.opaque",
               "layout.opaque: the layout 0x%02X carries no opaque bytes", layout->tag);
    HR_TRY(hri_layout_check_spans(layout, d->rank, err));
    struct hurray_descriptor t = *d;
    t.layout = *layout;
    return commit(d, &t, err);
}

int hurray_descriptor_set_quant(struct hurray_descriptor *d, const struct hurray_quant *q,
                                struct hurray_error *err) {
    HR_FAIL_IF(!d, err, HURRAY_E_ARGUMENT, "quant", "set_quant: descriptor is NULL");
    struct hurray_descriptor t = *d;
    t.quant = q;
    if (!q) { /* the block keeps the bytes until the next rebuild */
        d->quant = NULL;
        return HURRAY_OK;
    }
    return commit(d, &t, err);
}

int hurray_descriptor_set_statistics(struct hurray_descriptor *d,
                                     const struct hurray_statistics *s,
                                     struct hurray_error *err) {
    HR_FAIL_IF(!d, err, HURRAY_E_ARGUMENT, "statistics", "set_statistics: descriptor is NULL");
    struct hurray_descriptor t = *d;
    t.statistics = s;
    if (!s) { /* likewise */
        d->statistics = NULL;
        return HURRAY_OK;
    }
    return commit(d, &t, err);
}

int hurray_descriptor_set_shard(struct hurray_descriptor *d, const struct hurray_shard *s,
                                struct hurray_error *err) {
    HR_FAIL_IF(!d, err, HURRAY_E_ARGUMENT, "shard", "set_shard: descriptor is NULL");
    if (!s) { /* the block keeps the bytes until the next rebuild */
        d->shard = NULL;
        return HURRAY_OK;
    }
    HR_FAIL_IF(d->rank && (!s->global_shape || !s->global_offset), err, HURRAY_E_ARGUMENT,
               "shard", "set_shard: NULL global_shape or global_offset for rank %u",
               (unsigned)d->rank);
    struct hurray_descriptor t = *d;
    t.shard = s;
    return commit(d, &t, err);
}

void hurray_descriptor_set_role(struct hurray_descriptor *d, uint8_t role) {
    if (!d) return;
    d->has_role = 1;
    d->role = role;
}

void hurray_descriptor_clear_role(struct hurray_descriptor *d) {
    if (!d) return;
    d->has_role = 0;
    d->role = 0;
}

int hurray_descriptor_add_opaque_section(struct hurray_descriptor *d, uint8_t type,
                                         uint8_t flags, const uint8_t *data, uint32_t length,
                                         struct hurray_error *err) {
    struct hurray_opaque_section recs[HURRAY_MAX_SECTIONS];
    HR_FAIL_IF(!d || (length && !data), err, HURRAY_E_ARGUMENT, "opaque",
               "add_opaque_section: NULL argument");
    HR_FAIL_IF(d->opaque_count >= HURRAY_MAX_SECTIONS, err, HURRAY_E_ARGUMENT, "opaque",
               "add_opaque_section: %u sections are already there", (unsigned)d->opaque_count);
    HR_FAIL_IF(d->opaque_count && !d->opaque, err, HURRAY_E_ARGUMENT, "opaque",
               "opaque: NULL span for opaque_count %u", (unsigned)d->opaque_count);
    if (d->opaque_count) memcpy(recs, d->opaque, d->opaque_count * sizeof recs[0]);
    recs[d->opaque_count].type = type;
    recs[d->opaque_count].flags = flags;
    recs[d->opaque_count].data = length ? data : NULL;
    recs[d->opaque_count].length = length;
    struct hurray_descriptor t = *d;
    t.opaque = recs;
    t.opaque_count = (uint8_t)(d->opaque_count + 1u);
    return commit(d, &t, err);
}

void hurray_descriptor_clear_opaque_sections(struct hurray_descriptor *d) {
    if (!d) return; /* the block keeps the bytes until the next rebuild */
    d->opaque_count = 0;
    d->opaque = NULL;
}

/* ==== public decoding ======================================================= */

int hurray_descriptor_peek_length(const uint8_t *src, size_t len,
                                  const struct hurray_limits *limits, uint32_t *encoded_len,
                                  struct hurray_error *err) {
    struct hurray_limits lim;
    struct header h;
    HR_FAIL_IF(!encoded_len || (!src && len), err, HURRAY_E_ARGUMENT, "src",
               "peek_length: NULL argument");
    hri_limits_effective(limits, &lim);
    HR_TRY(parse_header(src, len, &lim, &h, err));
    *encoded_len = h.encoded_len;
    return HURRAY_OK;
}

/* Steps 1-11, then the one storage block, sized from what was parsed. */
static int decode_into(const uint8_t *src, size_t len, const struct hurray_limits *lim,
                       const struct hurray_allocator *a, struct hurray_descriptor *d,
                       size_t *consumed, struct hurray_error *err) {
    struct header h;
    struct scratch s; /* not zeroed: the parser writes what it reads */
    HR_TRY(parse_header(src, len, lim, &h, err));
    HR_TRY(parse_body(src, len, &h, lim, d, &s, err));
    /* Step 11. The parser already applied check_structure's rules at their
     * steps, and encoded_len (the canonical length, or the parse would have
     * failed) was checked against the limit in step 3: only the tiers remain.
     * hurray_layout_validate_against_shape applies the parameter value rules. */
    HR_TRY(check_tiers(d, lim, 0, err));
    /* The parser points every span it read at scratch or the input: no
     * check_spans (which commit and copy run on spans a caller set). */
    HR_TRY(build_storage(d, a, err));
    *consumed = h.encoded_len;
    return HURRAY_OK;
}

int hurray_descriptor_decode(const uint8_t *src, size_t len,
                             const struct hurray_decode_options *opt,
                             struct hurray_descriptor *out, size_t *consumed,
                             struct hurray_error *err) {
    struct hurray_limits lim;
    size_t used = 0;
    if (consumed) *consumed = 0;
    HR_FAIL_IF(!out || (!src && len), err, HURRAY_E_ARGUMENT, "src", "decode: NULL argument");
    hurray_descriptor_reset(out);
    hri_limits_effective(opt ? opt->limits : NULL, &lim);
    int status = decode_into(src, len, &lim, opt ? opt->allocator : NULL, out, &used, err);
    if (status != HURRAY_OK) {
        hurray_descriptor_reset(out);
        return status;
    }
    if (consumed) *consumed = used;
    return HURRAY_OK;
}

/* ==== encoding (HR-DESC-6): one writer, into a destination of the counted length ==== */

/* Header, fixed fields, shape and buffer table (descriptor.md § Layout of the bytes): one
 * room check, then stores at known offsets. These bytes are most of a plain tensor's
 * descriptor, written for every entry of a file: a checked write per field was a fifth of
 * saving a small tensor. */
static void write_prefix(struct hri_writer *w, const struct hurray_descriptor *d,
                         uint32_t encoded_len) {
    uint8_t *p = hri_w_reserve(w, HEADER_PREFIX_BYTES + FIXED_FIELD_BYTES + 8u * (size_t)d->rank +
                                      (size_t)HURRAY_BUFFER_ENTRY_BYTES * d->buffer_count);
    if (!p) return; /* hri_descriptor_write checked the room: INTERNAL there */
    memcpy(p, HURRAY_DESCRIPTOR_MAGIC, 4);
    p[4] = d->version_major;
    p[5] = d->version_minor;
    p[6] = p[7] = 0;
    hri_store_u32le(p + 8, encoded_len);
    hri_store_u32le(p + 12, 0);
    p += HEADER_PREFIX_BYTES;
    p[0] = d->dtype;
    p[1] = d->device;
    p[2] = d->memory_class;
    p[3] = d->layout.tag;
    p[4] = d->rank;
    p[5] = d->buffer_count;
    p[6] = (uint8_t)(known_section_count(d) + d->opaque_count);
    p[7] = 0;
    hri_store_u64le(p + 8, d->byte_offset);
    p += FIXED_FIELD_BYTES;
    for (unsigned k = 0; k < d->rank; k++, p += 8) hri_store_u64le(p, d->shape[k]);
    for (unsigned i = 0; i < d->buffer_count; i++, p += HURRAY_BUFFER_ENTRY_BYTES) {
        hri_store_u64le(p, d->buffers[i].size);
        p[8] = d->buffers[i].alignment_log2;
        p[9] = d->buffers[i].sync_mode;
        memset(p + 10, 0, 6);
    }
}

/* The parameter bytes of d's layout (memory-layout.md: the table's fixed +
 * per-rank counts, or an extension's head and opaque bytes): exactly what
 * hri_layout_params_write emits. Only for a validated descriptor, whose tag
 * and rank the length function accepts. */
static uint32_t layout_param_length(const struct hurray_descriptor *d) {
    uint32_t len = 0;
    return hurray_layout_param_length(&d->layout, d->rank, &len, NULL) == HURRAY_OK ? len : 0;
}

static void write_layout_block(struct hri_writer *w, const struct hurray_descriptor *d) {
    hri_w_u32(w, layout_param_length(d));
    hri_w_zero(w, 4);
    hri_layout_params_write(w, &d->layout, d->rank);
    hri_w_pad8(w);
}

/* A known section's payload by type, else unknown section `index`. */
static void write_section_payload(struct hri_writer *w, const struct hurray_descriptor *d,
                                  uint8_t type, unsigned index) {
    switch (type) {
    case HURRAY_SECTION_QUANTIZATION: hri_quant_write(w, d->quant); break;
    case HURRAY_SECTION_STATISTICS: hri_statistics_write(w, d->statistics); break;
    case HURRAY_SECTION_SHARD: hri_shard_write(w, d->shard, d->rank); break;
    case HURRAY_SECTION_ROLE: hri_role_write(w, d->role); break;
    default: hri_w_bytes(w, d->opaque[index].data, d->opaque[index].length); break;
    }
}

/* The payload length of a known section (its payload length functions, the
 * ones the decoder checks against: sections.md), else of unknown section
 * `index`. Only for a validated descriptor (its quantization scheme is known). */
static uint32_t section_payload_length(const struct hurray_descriptor *d, uint8_t type,
                                       unsigned index) {
    uint32_t len = 0;
    switch (type) {
    case HURRAY_SECTION_QUANTIZATION:
        return hurray_quant_payload_length(d->quant->scheme, &len, NULL) == HURRAY_OK ? len : 0;
    case HURRAY_SECTION_STATISTICS: return hri_statistics_length();
    case HURRAY_SECTION_SHARD: return hri_shard_length(d->rank);
    case HURRAY_SECTION_ROLE: return hri_role_length();
    default: return d->opaque[index].length;
    }
}

static void write_section(struct hri_writer *w, const struct hurray_descriptor *d, uint8_t type,
                          uint8_t flags, unsigned index) {
    hri_w_u8(w, type);
    hri_w_u8(w, flags);
    hri_w_zero(w, 2);
    hri_w_u32(w, section_payload_length(d, type, index));
    write_section_payload(w, d, type, index);
    hri_w_pad8(w);
}

/* Sections ascending by type: the known ones (0x01-0x04) precede every
 * unknown one (0x05-0xFE), which are kept ascending (HR-SECT-1). */
static void write_sections(struct hri_writer *w, const struct hurray_descriptor *d) {
    for (uint8_t t = HURRAY_SECTION_QUANTIZATION; t <= HURRAY_SECTION_ROLE; t++)
        if (has_known_section(d, t))
            write_section(w, d, t, (uint8_t)known_must_understand(t), 0);
    for (unsigned i = 0; i < d->opaque_count; i++)
        write_section(w, d, d->opaque[i].type, d->opaque[i].flags, i);
}

static void write_descriptor(struct hri_writer *w, const struct hurray_descriptor *d,
                             uint32_t encoded_len) {
    write_prefix(w, d, encoded_len);
    write_layout_block(w, d);
    write_sections(w, d);
}

/* One part of the encoding with its zero padding to 8 (descriptor.md). */
static uint64_t padded8(uint64_t n) { return n + hri_pad8((size_t)(n & 7)); }

/* The canonical length (descriptor.md § Layout of the bytes), summed from the
 * parts' lengths: header and fixed fields, 8 bytes per extent, one entry per
 * buffer, the layout block, each section's header and padded payload. Only
 * for a validated descriptor. encode checks that the writer emitted exactly
 * this many bytes (INTERNAL otherwise). SIZE_MAX if it does not fit size_t. */
static size_t count_descriptor(const struct hurray_descriptor *d) {
    uint64_t n = HEADER_PREFIX_BYTES + FIXED_FIELD_BYTES + 8u * (uint64_t)d->rank +
                 (uint64_t)HURRAY_BUFFER_ENTRY_BYTES * d->buffer_count + 8u +
                 padded8(layout_param_length(d));
    /* At most 255 sections of at most 2^32-1 bytes each: no u64 overflow. */
    for (uint8_t t = HURRAY_SECTION_QUANTIZATION; t <= HURRAY_SECTION_ROLE; t++)
        if (has_known_section(d, t))
            n += SECTION_HEADER_BYTES + padded8(section_payload_length(d, t, 0));
    for (unsigned i = 0; i < d->opaque_count; i++)
        n += SECTION_HEADER_BYTES + padded8(d->opaque[i].length);
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

/* Step 3 for a descriptor built in memory: its encoding fits encoded_len's
 * bound (max_descriptor_bytes, at most 2^32-8). Runs last, once every field
 * the writer reads is known to be in range. */
static int check_encoded_size(const struct hurray_descriptor *d,
                              const struct hurray_limits *lim, size_t *len,
                              struct hurray_error *err) {
    size_t n = count_descriptor(d);
    *len = n;
    if (n <= lim->max_descriptor_bytes) return HURRAY_OK;
    return hri_fail(err, HURRAY_E_LIMIT, "encoded_len",
                    "encoded_len: the encoding takes %zu bytes, above max_descriptor_bytes %llu",
                    n, (unsigned long long)lim->max_descriptor_bytes);
}

/* Validates under the format maxima and returns the canonical length. */
static int encodable_length(const struct hurray_descriptor *d, size_t *len,
                            struct hurray_error *err) {
    struct hurray_limits lim;
    hri_limits_format_max(&lim);
    return validate_counted(d, &lim, len, err);
}

/* Under `limits` already clamped to the format maxima (hurray_limits_clamp), or the format
 * maxima themselves: every limit is then at most its format maximum and every rule that
 * reads a limit refuses only values above it, so a descriptor valid under them is valid
 * under the format maxima too: one validation proves both (HR-FILE-15). The caller clamps
 * once for all its descriptors. */
int hri_descriptor_measure(const struct hurray_descriptor *d, const struct hurray_limits *limits,
                           size_t *len, struct hurray_error *err) {
    return validate_counted(d, limits, len, err);
}

int hri_descriptor_write(struct hri_writer *w, const struct hurray_descriptor *d, size_t len,
                         struct hurray_error *err) {
    size_t start = w->pos;
    HR_FAIL_IF(w->overflowed || w->cap - w->pos < len, err, HURRAY_E_INTERNAL, "encoded_len",
               "encode: %zu bytes of room for a descriptor of %zu", w->cap - w->pos, len);
    write_descriptor(w, d, (uint32_t)len);
    HR_FAIL_IF(w->overflowed || w->pos - start != len, err, HURRAY_E_INTERNAL, "encoded_len",
               "encode: wrote %zu bytes, counted %zu", w->pos - start, len);
    return HURRAY_OK;
}

int hurray_descriptor_encoded_len(const struct hurray_descriptor *d, size_t *len,
                                  struct hurray_error *err) {
    HR_FAIL_IF(!d || !len, err, HURRAY_E_ARGUMENT, "descriptor", "encoded_len: NULL argument");
    return encodable_length(d, len, err);
}

int hurray_descriptor_encode(const struct hurray_descriptor *d, uint8_t *dst, size_t cap,
                             size_t *written, struct hurray_error *err) {
    size_t n = 0;
    struct hri_writer w;
    if (written) *written = 0;
    HR_FAIL_IF(!d, err, HURRAY_E_ARGUMENT, "descriptor", "encode: descriptor is NULL");
    HR_TRY(encodable_length(d, &n, err));
    if (!dst || cap < n) {
        if (written) *written = n; /* the length needed: the caller grows by it, no re-check */
        return hri_fail(err, HURRAY_E_ARGUMENT, "cap",
                        "encode: the descriptor takes %zu bytes, the output holds %zu", n,
                        dst ? cap : 0);
    }
    hri_writer_init(&w, dst, cap);
    HR_TRY(hri_descriptor_write(&w, d, n, err));
    if (written) *written = n;
    return HURRAY_OK;
}

/* ==== copy and equality (HR-DESC-7) ======================================== */

int hurray_descriptor_copy(struct hurray_descriptor *dst, const struct hurray_descriptor *src,
                           const struct hurray_allocator *allocator,
                           struct hurray_error *err) {
    HR_FAIL_IF(!dst || !src, err, HURRAY_E_ARGUMENT, "descriptor", "copy: NULL argument");
    if (dst == src) return HURRAY_OK;
    struct hurray_descriptor t = *src;
    int status = check_spans(&t, err);
    if (status == HURRAY_OK) status = build_storage(&t, allocator, err);
    hurray_descriptor_reset(dst);
    if (status != HURRAY_OK) return status;
    *dst = t;
    return HURRAY_OK;
}

static int bytes_equal(const uint8_t *a, const uint8_t *b, size_t n) {
    return n == 0 || (a && b && memcmp(a, b, n) == 0);
}

static int fixed_fields_equal(const struct hurray_descriptor *a,
                              const struct hurray_descriptor *b) {
    return a->version_major == b->version_major && a->version_minor == b->version_minor &&
           a->dtype == b->dtype && a->device == b->device &&
           a->memory_class == b->memory_class && a->rank == b->rank &&
           a->buffer_count == b->buffer_count && a->byte_offset == b->byte_offset;
}

static int shape_and_buffers_equal(const struct hurray_descriptor *a,
                                   const struct hurray_descriptor *b, unsigned rank) {
    if (check_spans(a, NULL) != HURRAY_OK || check_spans(b, NULL) != HURRAY_OK) return 0;
    for (unsigned k = 0; k < rank; k++)
        if (a->shape[k] != b->shape[k]) return 0;
    for (unsigned i = 0; i < a->buffer_count; i++) {
        const struct hurray_buffer_desc *x = &a->buffers[i], *y = &b->buffers[i];
        if (x->size != y->size || x->alignment_log2 != y->alignment_log2 ||
            x->sync_mode != y->sync_mode)
            return 0;
    }
    return 1;
}

/* Known sections by presence, then value (floats by value, in their own
 * equality functions); unknown sections byte for byte. */
static int sections_equal(const struct hurray_descriptor *a, const struct hurray_descriptor *b,
                          uint8_t rank) {
    for (uint8_t t = HURRAY_SECTION_QUANTIZATION; t <= HURRAY_SECTION_ROLE; t++)
        if (has_known_section(a, t) != has_known_section(b, t)) return 0;
    if (a->quant && !hurray_quant_equal(a->quant, b->quant)) return 0;
    if (a->statistics && !hurray_statistics_equal(a->statistics, b->statistics)) return 0;
    if (a->shard && !hurray_shard_equal(a->shard, b->shard, rank)) return 0;
    if (a->has_role && a->role != b->role) return 0;
    if (a->opaque_count != b->opaque_count) return 0;
    for (unsigned i = 0; i < a->opaque_count; i++) {
        const struct hurray_opaque_section *x = &a->opaque[i], *y = &b->opaque[i];
        if (x->type != y->type || x->flags != y->flags || x->length != y->length ||
            !bytes_equal(x->data, y->data, x->length))
            return 0;
    }
    return 1;
}

int hurray_descriptor_equal(const struct hurray_descriptor *a,
                            const struct hurray_descriptor *b) {
    if (a == b) return 1;
    if (!a || !b || !fixed_fields_equal(a, b)) return 0;
    uint8_t rank = a->rank > HURRAY_MAX_RANK ? HURRAY_MAX_RANK : a->rank;
    return shape_and_buffers_equal(a, b, rank) && hurray_layout_equal(&a->layout, &b->layout, rank) &&
           sections_equal(a, b, rank);
}
