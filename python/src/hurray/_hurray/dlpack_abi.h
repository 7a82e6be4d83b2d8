/* The DLPack C ABI, as the binding uses it: our own definitions, written from
 * the published ABI (dmlc/dlpack include/dlpack/dlpack.h, v0.8 legacy struct
 * and v1.0/1.1 versioned struct; docs/source/python_spec.rst for the capsule
 * names), not a copy of that header. Every name carries the HRDL_/hrdl_
 * prefix, so that a translation unit may include the real dlpack.h beside it
 * (python/tests/test_dlpack_abi.py does exactly that, with the header shipped
 * in the PyTorch wheel, and compares every offset and size).
 *
 * Facts used (DLPack's, not ours):
 *   - DLPackVersion {uint32 major, minor}; a consumer refuses a major it does
 *     not know but may always call the deleter: every field up to and
 *     including `flags` of the versioned struct is ABI-stable.
 *   - DLDevice {int32 device_type, int32 device_id} (DLDeviceType is an int32
 *     enum; its values are in reference/include/hurray/device.h, the one
 *     mapping table, so none are repeated here).
 *   - DLDataType {uint8 code, uint8 bits, uint16 lanes}; the codes live in the
 *     element-type table of libhurray (hurray_dtype_info: dlpack_code,
 *     dlpack_bits, dlpack_minor), so none are repeated here either.
 *   - DLTensor: data, device, ndim, dtype, shape, strides (elements; NULL
 *     means compact row-major before 1.2), byte_offset.
 *   - DLManagedTensor (legacy, 0.8): dl_tensor first, then manager_ctx and
 *     deleter. DLManagedTensorVersioned (1.x): version, manager_ctx, deleter,
 *     flags, then dl_tensor -- the two are not layout compatible.
 *   - Flags (versioned only): READ_ONLY 1, IS_COPIED 2, IS_SUBBYTE_TYPE_PADDED
 *     4 (1.1; sub-byte data is packed, little bit-endian, unless it is set). */
#ifndef HRPY_DLPACK_ABI_H
#define HRPY_DLPACK_ABI_H

#include <stddef.h>
#include <stdint.h>

/* The newest DLPack version this binding produces and reads. */
#define HRDL_MAJOR 1u
#define HRDL_MINOR 1u

#define HRDL_FLAG_READ_ONLY UINT64_C(1)
#define HRDL_FLAG_IS_COPIED UINT64_C(2)
#define HRDL_FLAG_SUBBYTE_PADDED UINT64_C(4)

/* Capsule names (Python specification for DLPack). */
#define HRDL_CAPSULE_LEGACY "dltensor"
#define HRDL_CAPSULE_LEGACY_USED "used_dltensor"
#define HRDL_CAPSULE_VERSIONED "dltensor_versioned"
#define HRDL_CAPSULE_VERSIONED_USED "used_dltensor_versioned"

typedef struct {
    uint32_t major;
    uint32_t minor;
} hrdl_version;

typedef struct {
    int32_t device_type; /* DLDeviceType */
    int32_t device_id;
} hrdl_device;

typedef struct {
    uint8_t code; /* DLDataTypeCode */
    uint8_t bits;
    uint16_t lanes;
} hrdl_dtype;

typedef struct {
    void *data;
    hrdl_device device;
    int32_t ndim;
    hrdl_dtype dtype;
    int64_t *shape;
    int64_t *strides; /* elements; NULL: compact row-major */
    uint64_t byte_offset;
} hrdl_tensor;

typedef struct hrdl_managed {
    hrdl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct hrdl_managed *self);
} hrdl_managed;

typedef struct hrdl_managed_versioned {
    hrdl_version version;
    void *manager_ctx;
    void (*deleter)(struct hrdl_managed_versioned *self);
    uint64_t flags;
    hrdl_tensor dl_tensor;
} hrdl_managed_versioned;

/* The LP64/LLP64 layouts the ABI fixes (every platform the wheels target
 * has 8-byte pointers). The test compares them with the real header too. */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(hrdl_version) == 8, "DLPackVersion is 8 bytes");
_Static_assert(sizeof(hrdl_device) == 8, "DLDevice is 8 bytes");
_Static_assert(sizeof(hrdl_dtype) == 4, "DLDataType is 4 bytes");
_Static_assert(offsetof(hrdl_tensor, device) == 8, "DLTensor.device");
_Static_assert(offsetof(hrdl_tensor, ndim) == 16, "DLTensor.ndim");
_Static_assert(offsetof(hrdl_tensor, dtype) == 20, "DLTensor.dtype");
_Static_assert(offsetof(hrdl_tensor, shape) == 24, "DLTensor.shape");
_Static_assert(offsetof(hrdl_tensor, strides) == 32, "DLTensor.strides");
_Static_assert(offsetof(hrdl_tensor, byte_offset) == 40, "DLTensor.byte_offset");
_Static_assert(sizeof(hrdl_tensor) == 48, "DLTensor is 48 bytes");
_Static_assert(offsetof(hrdl_managed, manager_ctx) == 48, "DLManagedTensor.manager_ctx");
_Static_assert(offsetof(hrdl_managed, deleter) == 56, "DLManagedTensor.deleter");
_Static_assert(sizeof(hrdl_managed) == 64, "DLManagedTensor is 64 bytes");
_Static_assert(offsetof(hrdl_managed_versioned, manager_ctx) == 8, "manager_ctx");
_Static_assert(offsetof(hrdl_managed_versioned, deleter) == 16, "deleter");
_Static_assert(offsetof(hrdl_managed_versioned, flags) == 24, "flags");
_Static_assert(offsetof(hrdl_managed_versioned, dl_tensor) == 32, "dl_tensor");
_Static_assert(sizeof(hrdl_managed_versioned) == 80, "DLManagedTensorVersioned is 80 bytes");
#endif

#endif
