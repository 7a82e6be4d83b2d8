/* Status names, error records, limits and version. errors-and-limits.md */
#include <stdio.h>

#include "internal.h"

/* The one status table: name and stage per pinned value (HR-ERR-1). */
static const struct {
    const char *name;
    const char *stage;
} status_table[HURRAY_STATUS_COUNT] = {
    [HURRAY_OK] = {"OK", ""},
    [HURRAY_E_TRUNCATED] = {"TRUNCATED", "malformed"},
    [HURRAY_E_BAD_MAGIC] = {"BAD_MAGIC", "malformed"},
    [HURRAY_E_VERSION] = {"VERSION", "unsupported"},
    [HURRAY_E_RESERVED_NONZERO] = {"RESERVED_NONZERO", "malformed"},
    [HURRAY_E_INVALID_TAG] = {"INVALID_TAG", "malformed"},
    [HURRAY_E_RESERVED_TAG] = {"RESERVED_TAG", "unsupported"},
    [HURRAY_E_LENGTH] = {"LENGTH", "malformed"},
    [HURRAY_E_OVERFLOW] = {"OVERFLOW", "invalid"},
    [HURRAY_E_LIMIT] = {"LIMIT", "limit"},
    [HURRAY_E_RANGE] = {"RANGE", "invalid"},
    [HURRAY_E_CONSTRAINT] = {"CONSTRAINT", "invalid"},
    [HURRAY_E_COMBINATION] = {"COMBINATION", "invalid"},
    [HURRAY_E_BUFFER_COUNT] = {"BUFFER_COUNT", "invalid"},
    [HURRAY_E_BUFFER_SIZE] = {"BUFFER_SIZE", "invalid"},
    [HURRAY_E_ALIGNMENT] = {"ALIGNMENT", "invalid"},
    [HURRAY_E_SECTION_ORDER] = {"SECTION_ORDER", "malformed"},
    [HURRAY_E_INDEX] = {"INDEX", "invalid"},
    [HURRAY_E_DUPLICATE] = {"DUPLICATE", "invalid"},
    [HURRAY_E_UNSUPPORTED] = {"UNSUPPORTED", "unsupported"},
    [HURRAY_E_ARGUMENT] = {"ARGUMENT", "api"},
    [HURRAY_E_NOMEM] = {"NOMEM", "resource"},
    [HURRAY_E_IO] = {"IO", "resource"},
    [HURRAY_E_INTERNAL] = {"INTERNAL", "internal"},
    [HURRAY_E_OFFSET] = {"OFFSET", "invalid"},
    [HURRAY_E_OVERLAP] = {"OVERLAP", "invalid"},
};

const char *hurray_status_name(int code) {
    if (code < 0 || code >= HURRAY_STATUS_COUNT) return "UNKNOWN";
    return status_table[code].name;
}

const char *hurray_status_stage(int code) {
    if (code < 0 || code >= HURRAY_STATUS_COUNT) return "unknown";
    return status_table[code].stage;
}

int hurray_status_from_name(const char *name) {
    if (!name) return -1;
    for (int i = 0; i < HURRAY_STATUS_COUNT; i++)
        if (strcmp(status_table[i].name, name) == 0) return i;
    return -1;
}

void hurray_error_clear(struct hurray_error *err) {
    if (!err) return;
    err->code = HURRAY_OK;
    err->has_offset = 0;
    err->offset = 0;
    err->field[0] = '\0';
    err->message[0] = '\0';
    err->sys_errno = 0;
}

static void fill(struct hurray_error *err, int code, const char *field, const char *fmt,
                 va_list ap) {
    err->code = code;
    err->sys_errno = 0;
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

int hri_fail(struct hurray_error *err, int code, const char *field, const char *fmt, ...) {
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    fill(err, code, field, fmt, ap);
    va_end(ap);
    err->has_offset = 0;
    err->offset = 0;
    return code;
}

int hri_fail_at(struct hurray_error *err, int code, uint64_t offset, const char *field,
                const char *fmt, ...) {
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    fill(err, code, field, fmt, ap);
    va_end(ap);
    err->has_offset = 1;
    err->offset = offset;
    return code;
}

const char *hri_fieldf(char buf[HURRAY_ERROR_FIELD_MAX], const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, HURRAY_ERROR_FIELD_MAX, fmt, ap);
    va_end(ap);
    return buf;
}

int hri_check_tag_kind(int kind, uint8_t tag, int allow_private, const char *field,
                       struct hurray_error *err) {
    switch (kind) {
    case HURRAY_TAG_NAMED:
        return HURRAY_OK;
    case HURRAY_TAG_PRIVATE:
        if (allow_private) return HURRAY_OK;
        return hri_fail(err, HURRAY_E_RESERVED_TAG, field, "%s: tag 0x%02X is not allowed here",
                        field, tag);
    case HURRAY_TAG_RESERVED:
        return hri_fail(err, HURRAY_E_RESERVED_TAG, field, "%s: tag 0x%02X is reserved", field,
                        tag);
    default:
        return hri_fail(err, HURRAY_E_INVALID_TAG, field, "%s: tag 0x%02X is invalid", field,
                        tag);
    }
}

/* ---- limits ------------------------------------------------------------ */

void hurray_limits_default(struct hurray_limits *out) {
    if (!out) return;
    out->max_descriptor_bytes = HURRAY_DEFAULT_MAX_DESCRIPTOR_BYTES;
    out->max_buffer_bytes = HURRAY_DEFAULT_MAX_BUFFER_BYTES;
    out->max_rank = HURRAY_DEFAULT_MAX_RANK;
    out->max_composite_depth = HURRAY_DEFAULT_MAX_COMPOSITE_DEPTH;
    out->max_composite_members = HURRAY_DEFAULT_MAX_COMPOSITE_MEMBERS;
    out->max_kv_entries = HURRAY_DEFAULT_MAX_KV_ENTRIES;
    out->max_kv_bytes = HURRAY_DEFAULT_MAX_KV_BYTES;
    out->max_name_bytes = HURRAY_DEFAULT_MAX_NAME_BYTES;
    out->max_file_tensors = HURRAY_DEFAULT_MAX_FILE_TENSORS;
    out->max_alignment_slack = HURRAY_DEFAULT_MAX_ALIGNMENT_SLACK;
}

#define CLAMP(field, max)                                                                      \
    do {                                                                                       \
        if (lim->field > (max)) lim->field = (max);                                            \
    } while (0)

void hurray_limits_clamp(struct hurray_limits *lim) {
    if (!lim) return;
    CLAMP(max_descriptor_bytes, HURRAY_MAX_DESCRIPTOR_BYTES_FORMAT);
    CLAMP(max_rank, HURRAY_MAX_RANK);
    CLAMP(max_composite_depth, HURRAY_MAX_COMPOSITE_DEPTH_FORMAT);
    CLAMP(max_composite_members, UINT32_MAX);
    CLAMP(max_kv_entries, UINT32_MAX);
    CLAMP(max_kv_bytes, (uint64_t)INT64_MAX);
    CLAMP(max_name_bytes, UINT16_MAX);
    CLAMP(max_file_tensors, UINT32_MAX);
}

void hri_limits_effective(const struct hurray_limits *in, struct hurray_limits *out) {
    if (in)
        *out = *in;
    else
        hurray_limits_default(out);
    hurray_limits_clamp(out);
}

void hri_limits_format_max(struct hurray_limits *out) {
    out->max_descriptor_bytes = UINT64_MAX;
    out->max_buffer_bytes = UINT64_MAX;
    out->max_rank = UINT32_MAX;
    out->max_composite_depth = UINT32_MAX;
    out->max_composite_members = UINT64_MAX;
    out->max_kv_entries = UINT64_MAX;
    out->max_kv_bytes = UINT64_MAX;
    out->max_name_bytes = UINT32_MAX;
    out->max_file_tensors = UINT64_MAX;
    out->max_alignment_slack = UINT64_MAX;
    hurray_limits_clamp(out);
}

const char *hurray_version_string(void) { return HURRAY_VERSION_STRING; }
