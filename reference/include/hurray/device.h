/* Devices, memory classes and the DLPack mapping. docs/spec/devices.md */
#ifndef HURRAY_DEVICE_H
#define HURRAY_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include "hurray/export.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

enum hurray_device_tag {
    HURRAY_DEVICE_CPU = 0x01,
    HURRAY_DEVICE_CUDA = 0x02,
    HURRAY_DEVICE_ROCM = 0x03,
    HURRAY_DEVICE_METAL = 0x04,
    HURRAY_DEVICE_VULKAN = 0x05,
    HURRAY_DEVICE_OPENCL = 0x06,
    HURRAY_DEVICE_ONEAPI = 0x07,
    HURRAY_DEVICE_WEBGPU = 0x08,
    HURRAY_DEVICE_HEXAGON = 0x09,
    HURRAY_DEVICE_MAIA = 0x0A
};

enum hurray_memory_class {
    HURRAY_MEM_STANDARD = 0x01,
    HURRAY_MEM_HOST_PINNED = 0x02,
    HURRAY_MEM_UNIFIED = 0x03,
    HURRAY_MEM_PEER = 0x04
};

/* DLPack 1.0 DLDeviceType values (a fact of the DLPack ABI). */
enum hurray_dl_device_type {
    HURRAY_DL_CPU = 1,
    HURRAY_DL_CUDA = 2,
    HURRAY_DL_CUDA_HOST = 3,
    HURRAY_DL_OPENCL = 4,
    HURRAY_DL_VULKAN = 7,
    HURRAY_DL_METAL = 8,
    HURRAY_DL_VPI = 9,
    HURRAY_DL_ROCM = 10,
    HURRAY_DL_ROCM_HOST = 11,
    HURRAY_DL_EXT_DEV = 12,
    HURRAY_DL_CUDA_MANAGED = 13,
    HURRAY_DL_ONEAPI = 14,
    HURRAY_DL_WEBGPU = 15,
    HURRAY_DL_HEXAGON = 16,
    HURRAY_DL_MAIA = 17
};

/* hurray_tag_kind (dtype.h) of a device / memory-class byte. */
HURRAY_API int hurray_device_tag_kind(uint8_t tag);
HURRAY_API int hurray_memory_class_tag_kind(uint8_t tag);
/* Names: the spec's name for a named tag, "private" for the private range,
 * NULL for reserved and invalid bytes. */
HURRAY_API const char *hurray_device_name(uint8_t tag);
HURRAY_API const char *hurray_memory_class_name(uint8_t tag);
/* Name -> tag; "private" is not a lookup name (use the byte). ARGUMENT if unknown. */
HURRAY_API HURRAY_NODISCARD int hurray_device_from_name(const char *name, size_t len,
                                                        uint8_t *tag);
HURRAY_API HURRAY_NODISCARD int hurray_memory_class_from_name(const char *name, size_t len,
                                                              uint8_t *tag);
/* Both tags named or private, and the pair allowed by the validity table
 * (HR-DEV-2, HR-DEV-4): INVALID_TAG, RESERVED_TAG or COMBINATION otherwise. */
HURRAY_API HURRAY_NODISCARD int hurray_device_check(uint8_t device, uint8_t memory_class,
                                                    struct hurray_error *err);
/* Hurray -> DLDeviceType (HR-DEV-5). UNSUPPORTED for the table's Unsupported
 * cells, the device_check status for invalid pairs. */
HURRAY_API HURRAY_NODISCARD int hurray_device_to_dlpack(uint8_t device, uint8_t memory_class,
                                                        int32_t *dl_device_type,
                                                        struct hurray_error *err);
/* DLDeviceType -> Hurray (HR-DEV-7). UNSUPPORTED for anything else. */
HURRAY_API HURRAY_NODISCARD int hurray_device_from_dlpack(int32_t dl_device_type,
                                                          uint8_t *device,
                                                          uint8_t *memory_class,
                                                          struct hurray_error *err);

HURRAY_EXTERN_C_END

#endif
