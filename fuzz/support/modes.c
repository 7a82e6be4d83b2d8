/* HURRAY_FUZZ_ALL_MODES, read once (modes.h). */
#include <stdlib.h>
#include <string.h>

#include "modes.h"

int hurray_fuzz_all_modes(void) {
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("HURRAY_FUZZ_ALL_MODES");
        v = e && *e && strcmp(e, "0") != 0;
    }
    return v;
}
