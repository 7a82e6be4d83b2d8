/* AFL++ persistent-mode driver: runs a libFuzzer target (LLVMFuzzerTestOneInput)
 * under afl-fuzz with the test case in shared memory, so one target source
 * serves both engines (make fuzz-afl).
 *
 * Each test case is copied into a heap block of exactly its size before the
 * call, so that ASan reports a read one byte past the input as it does under
 * libFuzzer (the shared-memory buffer itself is larger than the test case).
 * Outside afl-fuzz (afl-cmin, afl-tmin, a run by hand) the same binary reads one
 * test case from stdin: __AFL_FUZZ_TESTCASE_BUF falls back to it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

__AFL_FUZZ_INIT();

int main(int argc, char **argv) {
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
#ifdef __AFL_HAVE_MANUAL_CONTROL
    __AFL_INIT(); /* deferred fork server: after the one-time set-up */
#endif
    unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF; /* after __AFL_INIT, never inside the loop */
    while (__AFL_LOOP(10000)) {
        size_t len = (size_t)__AFL_FUZZ_TESTCASE_LEN;
        uint8_t *copy = malloc(len ? len : 1);
        if (!copy) abort();
        if (len) memcpy(copy, buf, len);
        LLVMFuzzerTestOneInput(copy, len);
        free(copy);
    }
    return 0;
}
