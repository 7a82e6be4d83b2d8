/* Symbol visibility for libhurray. Everything not marked HURRAY_API is hidden
 * (the library is built with -fvisibility=hidden). */
#ifndef HURRAY_EXPORT_H
#define HURRAY_EXPORT_H

#if defined(HURRAY_STATIC_DEFINE)
#define HURRAY_API
#elif defined(_WIN32)
#ifdef HURRAY_BUILDING
#define HURRAY_API __declspec(dllexport)
#else
#define HURRAY_API __declspec(dllimport)
#endif
#else
#define HURRAY_API __attribute__((visibility("default")))
#endif

#if defined(__GNUC__) || defined(__clang__)
#define HURRAY_NODISCARD __attribute__((warn_unused_result))
#else
#define HURRAY_NODISCARD
#endif

#ifdef __cplusplus
#define HURRAY_EXTERN_C_BEGIN extern "C" {
#define HURRAY_EXTERN_C_END }
#else
#define HURRAY_EXTERN_C_BEGIN
#define HURRAY_EXTERN_C_END
#endif

#endif
