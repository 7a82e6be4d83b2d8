/* ci/install_check.c: a C program that knows libhurray only as installed (make install-check,
 * ci/install_check.sh): compiled with `pkg-config --cflags hurray`, linked with
 * `pkg-config --libs hurray` (the shared library) and against the archive. It checks that the
 * header and the library it runs with are the same version, then builds, encodes, decodes and
 * compares a descriptor (a 2 x 3 float32 tensor in one 24-byte buffer). Prints one line;
 * exit status 0 when every step agrees. */
#include <hurray/hurray.h>

#include <stdio.h>
#include <string.h>

static int fail(const char *what, int status, const struct hurray_error *err) {
    fprintf(stderr, "install_check: %s: %s (%s)\n", what, hurray_status_name(status),
            err ? err->message : "");
    return 1;
}

int main(void) {
    if (strcmp(hurray_version_string(), HURRAY_VERSION_STRING) != 0) {
        fprintf(stderr, "install_check: header %s, library %s\n", HURRAY_VERSION_STRING,
                hurray_version_string());
        return 1;
    }
    struct hurray_error err;
    hurray_error_clear(&err);
    struct hurray_descriptor d, back;
    hurray_descriptor_init(&d);
    hurray_descriptor_init(&back);
    const uint64_t shape[2] = {2, 3};
    const struct hurray_buffer_desc buf = {24, 2, HURRAY_SYNC_PRODUCER_SYNCED};
    uint8_t bytes[512];
    size_t written = 0, consumed = 0;
    int rc = 1, st;
    d.dtype = HURRAY_DTYPE_FLOAT32;
    if ((st = hurray_descriptor_set_shape(&d, 2, shape, &err)) != HURRAY_OK) {
        fail("set_shape", st, &err);
    } else if ((st = hurray_descriptor_set_buffers(&d, 1, &buf, &err)) != HURRAY_OK) {
        fail("set_buffers", st, &err);
    } else if ((st = hurray_descriptor_encode(&d, bytes, sizeof bytes, &written, &err)) !=
               HURRAY_OK) {
        fail("encode", st, &err);
    } else if ((st = hurray_descriptor_decode(bytes, written, NULL, &back, &consumed, &err)) !=
               HURRAY_OK) {
        fail("decode", st, &err);
    } else if (consumed != written || !hurray_descriptor_equal(&d, &back)) {
        fprintf(stderr, "install_check: the decoded descriptor differs\n");
    } else {
        printf("install_check: libhurray %s, a %zu-byte descriptor encoded and decoded\n",
               hurray_version_string(), written);
        rc = 0;
    }
    hurray_descriptor_reset(&back);
    hurray_descriptor_reset(&d);
    return rc;
}
