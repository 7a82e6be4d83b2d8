/* Devices, memory classes, their validity table and the DLPack mapping.
 * docs/spec/devices.md */
#include "internal.h"

/* ---- tags and names (HR-DEV-1, HR-DEV-3) ---------------------------------- */

#define DEVICE_NAMED_COUNT 10 /* 0x01 cpu ... 0x0A maia */
#define CLASS_NAMED_COUNT 4   /* 0x01 standard ... 0x04 peer */

static const char *const device_names[DEVICE_NAMED_COUNT] = {
    "cpu", "cuda", "rocm", "metal", "vulkan", "opencl", "oneapi", "webgpu", "hexagon", "maia",
};

static const char *const class_names[CLASS_NAMED_COUNT] = {
    "standard", "host_pinned", "unified", "peer",
};

static int device_is_named(uint8_t tag) { return tag >= 1 && tag <= DEVICE_NAMED_COUNT; }
static int class_is_named(uint8_t tag) { return tag >= 1 && tag <= CLASS_NAMED_COUNT; }

/* conventions.md § Tag spaces: both spaces have a private range. */
int hurray_device_tag_kind(uint8_t tag) {
    return hri_tag_kind_with_private(tag, device_is_named(tag));
}

int hurray_memory_class_tag_kind(uint8_t tag) {
    return hri_tag_kind_with_private(tag, class_is_named(tag));
}

const char *hurray_device_name(uint8_t tag) {
    if (device_is_named(tag)) return device_names[tag - 1];
    return hurray_device_tag_kind(tag) == HURRAY_TAG_PRIVATE ? "private" : NULL;
}

const char *hurray_memory_class_name(uint8_t tag) {
    if (class_is_named(tag)) return class_names[tag - 1];
    return hurray_memory_class_tag_kind(tag) == HURRAY_TAG_PRIVATE ? "private" : NULL;
}

static int lookup_name(const char *const *names, size_t count, const char *name, size_t len,
                       uint8_t *tag) {
    if (!name || !tag) return HURRAY_E_ARGUMENT;
    for (size_t i = 0; i < count; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) {
            *tag = (uint8_t)(i + 1);
            return HURRAY_OK;
        }
    }
    return HURRAY_E_ARGUMENT;
}

int hurray_device_from_name(const char *name, size_t len, uint8_t *tag) {
    return lookup_name(device_names, DEVICE_NAMED_COUNT, name, len, tag);
}

int hurray_memory_class_from_name(const char *name, size_t len, uint8_t *tag) {
    return lookup_name(class_names, CLASS_NAMED_COUNT, name, len, tag);
}

/* ---- the pair table (HR-DEV-4 validity, HR-DEV-5 DLPack) -------------------
 * One cell per (device, memory class): rows are the ten named devices in tag
 * order then "private device"; columns the four named classes in tag order
 * then "private class". A cell is invalid ("—" in § Validity table), valid
 * with a DLDeviceType, or valid but Unsupported in DLPack (with the note of
 * § Hurray → DLPack that says why). */

enum dl_note {
    NOTE_NONE = 0,
    NOTE_ROCM_MANAGED, /* note 5 */
    NOTE_PEER,         /* note 6 */
    NOTE_PRIVATE       /* note 7 */
};

static const char *const note_text[] = {
    [NOTE_NONE] = "",
    [NOTE_ROCM_MANAGED] = "kDLROCMManaged does not exist",
    [NOTE_PEER] = "DLPack has no peer memory",
    [NOTE_PRIVATE] = "no DLPack mapping is fabricated for private values",
};

struct pair_cell {
    uint8_t valid;
    uint8_t dl_type; /* DLDeviceType; 0 (no such DLPack value) = Unsupported */
    uint8_t note;    /* enum dl_note, for Unsupported cells */
};

#define X {0, 0, NOTE_NONE}          /* invalid pair: COMBINATION */
#define D(t) {1, HURRAY_DL_##t, NOTE_NONE} /* valid, maps to DLPack */
#define U(n) {1, 0, NOTE_##n}        /* valid, Unsupported in DLPack */

#define PAIR_ROWS (DEVICE_NAMED_COUNT + 1)
#define PAIR_COLS (CLASS_NAMED_COUNT + 1)

static const struct pair_cell pair_table[PAIR_ROWS][PAIR_COLS] = {
    /*            standard    host_pinned     unified            peer         private class */
    /* cpu     */ {D(CPU),     D(CPU),         D(CPU),            X,           U(PRIVATE)},
    /* cuda    */ {D(CUDA),    D(CUDA_HOST),   D(CUDA_MANAGED),   U(PEER),     U(PRIVATE)},
    /* rocm    */ {D(ROCM),    D(ROCM_HOST),   U(ROCM_MANAGED),   U(PEER),     U(PRIVATE)},
    /* metal   */ {D(METAL),   D(METAL),       D(METAL),          X,           U(PRIVATE)},
    /* vulkan  */ {D(VULKAN),  X,              X,                 X,           U(PRIVATE)},
    /* opencl  */ {D(OPENCL),  X,              X,                 X,           U(PRIVATE)},
    /* oneapi  */ {D(ONEAPI),  D(ONEAPI),      D(ONEAPI),         U(PEER),     U(PRIVATE)},
    /* webgpu  */ {D(WEBGPU),  X,              X,                 X,           U(PRIVATE)},
    /* hexagon */ {D(HEXAGON), X,              X,                 X,           U(PRIVATE)},
    /* maia    */ {D(MAIA),    X,              X,                 X,           U(PRIVATE)},
    /* private */ {U(PRIVATE), U(PRIVATE),     U(PRIVATE),        U(PRIVATE),  U(PRIVATE)},
};

#undef X
#undef D
#undef U

/* Row/column of a named or private tag (callers check the kind first). */
static size_t pair_row(uint8_t device) {
    return device_is_named(device) ? (size_t)device - 1 : PAIR_ROWS - 1;
}
static size_t pair_col(uint8_t memory_class) {
    return class_is_named(memory_class) ? (size_t)memory_class - 1 : PAIR_COLS - 1;
}

/* Name for messages; the pair functions only call it for named and private tags. */
static const char *device_label(uint8_t tag) {
    const char *name = hurray_device_name(tag);
    return name ? name : "?";
}
static const char *class_label(uint8_t tag) {
    const char *name = hurray_memory_class_name(tag);
    return name ? name : "?";
}

/* HR-DEV-2: a reserved or invalid byte is refused, never taken as private;
 * HR-DEV-4: the pair must be allowed by § Validity table. */
int hurray_device_check(uint8_t device, uint8_t memory_class, struct hurray_error *err) {
    /* Named tags pass their kind check: the table decides. */
    if (device_is_named(device) && class_is_named(memory_class) &&
        pair_table[pair_row(device)][pair_col(memory_class)].valid)
        return HURRAY_OK;
    HR_TRY(hri_check_tag_kind(hurray_device_tag_kind(device), device, 1, "device", err));
    HR_TRY(hri_check_tag_kind(hurray_memory_class_tag_kind(memory_class), memory_class, 1,
                              "memory_class", err));
    if (pair_table[pair_row(device)][pair_col(memory_class)].valid) return HURRAY_OK;
    return hri_fail(err, HURRAY_E_COMBINATION, "memory_class",
                    "memory_class %s (0x%02X) is not valid with device %s (0x%02X) "
                    "(devices.md, Validity table)",
                    class_label(memory_class), memory_class, device_label(device), device);
}

/* HR-DEV-5: § Hurray → DLPack. */
int hurray_device_to_dlpack(uint8_t device, uint8_t memory_class, int32_t *dl_device_type,
                            struct hurray_error *err) {
    HR_FAIL_IF(!dl_device_type, err, HURRAY_E_ARGUMENT, "dl_device_type",
               "device_to_dlpack: dl_device_type is NULL");
    HR_TRY(hurray_device_check(device, memory_class, err));
    const struct pair_cell *cell = &pair_table[pair_row(device)][pair_col(memory_class)];
    if (cell->dl_type != 0) {
        *dl_device_type = cell->dl_type;
        return HURRAY_OK;
    }
    return hri_fail(err, HURRAY_E_UNSUPPORTED, "device",
                    "%s/%s has no DLPack device type (%s; device 0x%02X, memory_class 0x%02X)",
                    device_label(device), class_label(memory_class), note_text[cell->note],
                    device, memory_class);
}

/* HR-DEV-7: § DLPack → Hurray. The import mapping is the inverse of the
 * pair table, taking for each DLDeviceType its first cell in table order
 * (devices by tag, then classes by tag): that is the named device with the
 * standard class, except kDLCUDAHost, kDLCUDAManaged and kDLROCMHost, which
 * only one cell produces. Private rows and columns never map. */
int hurray_device_from_dlpack(int32_t dl_device_type, uint8_t *device, uint8_t *memory_class,
                              struct hurray_error *err) {
    HR_FAIL_IF(!device || !memory_class, err, HURRAY_E_ARGUMENT, "device",
               "device_from_dlpack: device and memory_class must not be NULL");
    for (size_t r = 0; r < DEVICE_NAMED_COUNT && dl_device_type > 0; r++) {
        for (size_t c = 0; c < CLASS_NAMED_COUNT; c++) {
            if (pair_table[r][c].dl_type != dl_device_type) continue;
            *device = (uint8_t)(r + 1);
            *memory_class = (uint8_t)(c + 1);
            return HURRAY_OK;
        }
    }
    return hri_fail(err, HURRAY_E_UNSUPPORTED, "dl_device_type",
                    "dl_device_type: DLPack device type %ld has no Hurray device",
                    (long)dl_device_type);
}
