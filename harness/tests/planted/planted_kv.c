/* A throw-away fuzz target for harness/tests/test_fuzz_promote.py: fuzz_kv with a planted
 * bug. Any input that holds the bytes "PLANT" traps, whatever else it holds; everything else
 * runs the real fuzz_kv target. It gives the crash-to-vector loop a failing input to
 * minimise, classify and promote without a real bug in the library. Never part of a build
 * other than that test's. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LLVMFuzzerTestOneInput real_fuzz_kv_one_input
#include "../../../fuzz/targets/fuzz_kv.c"
#undef LLVMFuzzerTestOneInput

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (size_t i = 0; i + 5 <= size; i++)
        if (memcmp(data + i, "PLANT", 5) == 0) __builtin_trap();
    return real_fuzz_kv_one_input(data, size);
}
