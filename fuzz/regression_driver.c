/* Replays files (or every file in the directories) given on the command line
 * through a fuzz target without libFuzzer, so crashes found once stay fixed and
 * the corpus runs under valgrind / sanitizers in plain builds
 * (zstd's regression driver is the model).
 *
 * A replay is where a target is exhaustive: HURRAY_FUZZ_ALL_MODES=1 (unless the
 * environment already sets it) makes a target that samples some of its ways in
 * while fuzzing run all of them on every input (fuzz_file). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return 1; }
    long n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) { fclose(f); return 1; }
    uint8_t *buf = malloc((size_t)n + 1); /* +1: a zero-length input still gets a pointer */
    if (!buf) { fclose(f); return 1; }
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    if (got != (size_t)n) { free(buf); return 1; }
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    return 0;
}

static int run_path(const char *path, unsigned *count) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "cannot stat %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return run_file(path);
    }
    DIR *dir = opendir(path);
    if (!dir) return 1;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.') continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *child = malloc(len);
        if (!child) { rc = 1; break; }
        snprintf(child, len, "%s/%s", path, e->d_name);
        rc |= run_path(child, count);
        free(child);
    }
    closedir(dir);
    return rc;
}

int main(int argc, char **argv) {
    unsigned count = 0;
    int rc = 0;
    if (setenv("HURRAY_FUZZ_ALL_MODES", "1", 0) != 0) return 1;
    for (int i = 1; i < argc; i++) rc |= run_path(argv[i], &count);
    printf("replayed %u inputs\n", count);
    return rc;
}
