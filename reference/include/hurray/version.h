/* Library, format and C ABI versions. docs/spec/descriptor.md, c-abi.md */
#ifndef HURRAY_VERSION_H
#define HURRAY_VERSION_H

#include "hurray/export.h"

#define HURRAY_VERSION_MAJOR 0
#define HURRAY_VERSION_MINOR 1
#define HURRAY_VERSION_PATCH 0
#define HURRAY_VERSION_STRING "0.1.0"

/* The descriptor format this build writes (and the only major it reads). */
#define HURRAY_FORMAT_MAJOR 1
#define HURRAY_FORMAT_MINOR 0

/* Version of the native-protocol C ABI (c-abi.md). */
#define HURRAY_C_ABI_VERSION 1u

HURRAY_EXTERN_C_BEGIN
HURRAY_API const char *hurray_version_string(void);
HURRAY_EXTERN_C_END

#endif
