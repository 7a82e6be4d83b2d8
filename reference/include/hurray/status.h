/* Status codes and the caller-owned error record. docs/spec/errors-and-limits.md
 *
 * Every fallible call returns an int status (0 = HURRAY_OK) and, when given a
 * non-NULL `struct hurray_error *`, fills it with the code, the field the fault
 * concerns and a message naming it. Values are pinned and never reused. */
#ifndef HURRAY_STATUS_H
#define HURRAY_STATUS_H

#include <stdint.h>
#include "hurray/export.h"

HURRAY_EXTERN_C_BEGIN

typedef enum hurray_status {
    HURRAY_OK = 0,
    HURRAY_E_TRUNCATED = 1,
    HURRAY_E_BAD_MAGIC = 2,
    HURRAY_E_VERSION = 3,
    HURRAY_E_RESERVED_NONZERO = 4,
    HURRAY_E_INVALID_TAG = 5,
    HURRAY_E_RESERVED_TAG = 6,
    HURRAY_E_LENGTH = 7,
    HURRAY_E_OVERFLOW = 8,
    HURRAY_E_LIMIT = 9,
    HURRAY_E_RANGE = 10,
    HURRAY_E_CONSTRAINT = 11,
    HURRAY_E_COMBINATION = 12,
    HURRAY_E_BUFFER_COUNT = 13,
    HURRAY_E_BUFFER_SIZE = 14,
    HURRAY_E_ALIGNMENT = 15,
    HURRAY_E_SECTION_ORDER = 16,
    HURRAY_E_INDEX = 17,
    HURRAY_E_DUPLICATE = 18,
    HURRAY_E_UNSUPPORTED = 19,
    HURRAY_E_ARGUMENT = 20,
    HURRAY_E_NOMEM = 21,
    HURRAY_E_IO = 22,
    HURRAY_E_INTERNAL = 23,
    HURRAY_E_OFFSET = 24,
    HURRAY_E_OVERLAP = 25
} hurray_status;

/* One past the largest status value. */
#define HURRAY_STATUS_COUNT 26

#define HURRAY_ERROR_FIELD_MAX 64
#define HURRAY_ERROR_MESSAGE_MAX 256

/* Caller-owned; every API taking one accepts NULL. */
struct hurray_error {
    int code;                              /* a hurray_status */
    int has_offset;                        /* 1 when `offset` is meaningful */
    uint64_t offset;                       /* byte offset in the input, if known */
    char field[HURRAY_ERROR_FIELD_MAX];    /* e.g. "shape[2]", "buffers[1].size" */
    char message[HURRAY_ERROR_MESSAGE_MAX];/* human-readable, names the field */
    int sys_errno;                         /* IO: the system's error number (POSIX
                                              values: ENOENT, EACCES, ETIMEDOUT...);
                                              0 when no system call failed */
};

/* "OK", "TRUNCATED", ... ; "UNKNOWN" for a value outside the table. Never NULL. */
HURRAY_API const char *hurray_status_name(int code);
/* "malformed", "invalid", "limit", "unsupported", "api", "resource",
 * "internal", or "" for OK; "unknown" outside the table. Never NULL. */
HURRAY_API const char *hurray_status_stage(int code);
/* Looks a name up ("TRUNCATED"); returns the code or -1. */
HURRAY_API int hurray_status_from_name(const char *name);
/* Resets a record to code 0, empty strings. NULL-tolerant. */
HURRAY_API void hurray_error_clear(struct hurray_error *err);

HURRAY_EXTERN_C_END

#endif
