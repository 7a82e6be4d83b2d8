/* Descriptor encode/decode micro-benchmark, on the public API only
 * (reference/include/hurray/hurray.h).
 *
 * Cases (docs/spec/descriptor.md for the byte layout):
 *   small  float32, rank 2, row_major, 1 buffer, no sections          (72 bytes)
 *   large  int8, rank 8, strided (8·rank bytes of parameters), 2 buffers,
 *          every known optional section that fits a dense tensor:
 *          quantization per_channel_affine (scale buffer → buffer_count 2),
 *          statistics (min/max + nan_count), shard                  (408 bytes)
 *
 * "encode" is hurray_descriptor_encode into a caller buffer (it validates first,
 * as the API promises). "decode" is hurray_descriptor_decode (full strict
 * validation, default limits) followed by hurray_descriptor_reset, i.e. what a
 * caller pays per descriptor read.
 *
 * Each case and operation is warmed up, then timed with CLOCK_MONOTONIC in
 * batches until at least MIN_SECONDS (default 0.5, or argv[1]) have elapsed.
 * Exit status 1 if any call fails or the round trip is not exact. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hurray/hurray.h"

#define ENCODE_CAP 4096u

static double min_seconds = 0.5;

/* Sinks the optimiser cannot see through. */
static volatile size_t sink_size;

struct bench_case {
    const char *name;
    const char *what;
    struct hurray_descriptor *desc;
    uint8_t bytes[ENCODE_CAP];
    size_t len;
};

struct result {
    uint64_t iterations;
    double seconds;
};

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fail(const char *what, const char *case_name, int status,
                 const struct hurray_error *err) {
    fprintf(stderr, "descriptor_bench: %s (%s) failed: %s: %s\n", what, case_name,
            hurray_status_name(status), err->message);
    exit(1);
}

/* ---- the two descriptors ------------------------------------------------ */

static void setter(int st, const char *what) {
    if (st != HURRAY_OK) {
        fprintf(stderr, "descriptor_bench: %s failed: %s\n", what, hurray_status_name(st));
        exit(1);
    }
}

static void build_small(struct hurray_descriptor *d) {
    static const uint64_t shape[2] = {1024, 768};
    /* alignment 64 = MIN_BUFFER_ALIGNMENT */
    static const struct hurray_buffer_desc buf = {UINT64_C(1024) * 768 * 4, 6,
                                                  HURRAY_SYNC_PRODUCER_SYNCED};
    hurray_descriptor_init(d);
    d->dtype = HURRAY_DTYPE_FLOAT32;
    d->device = HURRAY_DEVICE_CPU;
    d->memory_class = HURRAY_MEM_STANDARD;
    d->layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
    setter(hurray_descriptor_set_shape(d, 2, shape, NULL), "set_shape");
    setter(hurray_descriptor_set_buffers(d, 1, &buf, NULL), "set_buffers");
}

static void build_large(struct hurray_descriptor *d) {
    static const uint64_t shape[8] = {2, 3, 4, 5, 6, 7, 8, 9};
    int64_t strides[8];
    uint64_t global_shape[8], global_offset[8], n = 1;
    hurray_descriptor_init(d);
    d->dtype = HURRAY_DTYPE_INT8; /* per_channel_affine needs integer codes */
    d->device = HURRAY_DEVICE_CPU;
    d->memory_class = HURRAY_MEM_STANDARD;
    setter(hurray_descriptor_set_shape(d, 8, shape, NULL), "set_shape");
    /* C-contiguous strides in logical elements, written out as parameters. */
    for (int k = 7; k >= 0; k--) {
        strides[k] = (int64_t)n;
        n *= shape[k];
    }
    struct hurray_layout layout = {.tag = HURRAY_LAYOUT_STRIDED, .strides = strides};
    setter(hurray_descriptor_set_layout(d, &layout, NULL), "set_layout");
    /* Buffer 0: the int8 codes; buffer 1: the per-channel float32 scales
     * (64 >= bs(float32, shape[axis]) = 12). */
    const struct hurray_buffer_desc bufs[2] = {{n, 6, HURRAY_SYNC_PRODUCER_SYNCED},
                                               {64, 6, HURRAY_SYNC_PRODUCER_SYNCED}};
    setter(hurray_descriptor_set_buffers(d, 2, bufs, NULL), "set_buffers");

    struct hurray_quant q = {0};
    q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
    q.axis = 1;
    q.scale_buffer = 1; /* = L */
    q.zero_point_buffer = HURRAY_NO_BUFFER; /* symmetric */
    q.scale_dtype = HURRAY_DTYPE_FLOAT32;
    q.zero_point_dtype = 0;
    q.absmax_buffer = HURRAY_NO_BUFFER;
    q.nested_absmax_buffer = HURRAY_NO_BUFFER;
    q.quant_map_buffer = HURRAY_NO_BUFFER;
    setter(hurray_descriptor_set_quant(d, &q, NULL), "set_quant");

    const struct hurray_statistics st = {HURRAY_STATS_HAS_MIN_MAX | HURRAY_STATS_HAS_NAN_COUNT,
                                         -128.0, 127.0, 0};
    setter(hurray_descriptor_set_statistics(d, &st, NULL), "set_statistics");

    for (int k = 0; k < 8; k++) {
        global_shape[k] = shape[k];
        global_offset[k] = 0;
    }
    global_shape[0] = shape[0] * 4; /* sharded along dim 0 */
    global_offset[0] = shape[0] * 1;
    const struct hurray_shard shard = {1, 4, global_shape, global_offset};
    setter(hurray_descriptor_set_shard(d, &shard, NULL), "set_shard");
}

/* Encodes once, decodes back and checks the round trip (HR-DESC-6, HR-DESC-7). */
static void prepare(struct bench_case *c) {
    struct hurray_error err;
    struct hurray_descriptor *back = malloc(sizeof *back);
    size_t len = 0, consumed = 0;
    int st;
    if (!back) {
        fprintf(stderr, "descriptor_bench: out of memory\n");
        exit(1);
    }
    hurray_error_clear(&err);
    st = hurray_descriptor_encoded_len(c->desc, &len, &err);
    if (st != HURRAY_OK) fail("encoded_len", c->name, st, &err);
    st = hurray_descriptor_encode(c->desc, c->bytes, sizeof c->bytes, &c->len, &err);
    if (st != HURRAY_OK) fail("encode", c->name, st, &err);
    if (c->len != len) {
        fprintf(stderr, "descriptor_bench: %s: encoded_len %zu != written %zu\n", c->name, len,
                c->len);
        exit(1);
    }
    hurray_descriptor_init(back);
    st = hurray_descriptor_decode(c->bytes, c->len, NULL, back, &consumed, &err);
    if (st != HURRAY_OK) fail("decode", c->name, st, &err);
    if (consumed != c->len || !hurray_descriptor_equal(c->desc, back)) {
        fprintf(stderr, "descriptor_bench: %s: decode(encode(d)) != d\n", c->name);
        exit(1);
    }
    hurray_descriptor_reset(back);
    free(back);
}

/* ---- timing loops ------------------------------------------------------- */

static void run_encode(const struct bench_case *c, uint64_t n) {
    uint8_t out[ENCODE_CAP];
    size_t written = 0;
    for (uint64_t i = 0; i < n; i++) {
        int st = hurray_descriptor_encode(c->desc, out, sizeof out, &written, NULL);
        if (st != HURRAY_OK) {
            struct hurray_error err;
            hurray_error_clear(&err);
            fail("encode", c->name, hurray_descriptor_encode(c->desc, out, sizeof out, &written,
                                                             &err), &err);
        }
        sink_size += written + out[written - 1];
    }
}

static void run_decode(const struct bench_case *c, uint64_t n, struct hurray_descriptor *d) {
    size_t consumed = 0;
    for (uint64_t i = 0; i < n; i++) {
        int st = hurray_descriptor_decode(c->bytes, c->len, NULL, d, &consumed, NULL);
        if (st != HURRAY_OK) {
            struct hurray_error err;
            hurray_error_clear(&err);
            fail("decode", c->name,
                 hurray_descriptor_decode(c->bytes, c->len, NULL, d, &consumed, &err), &err);
        }
        sink_size += consumed + d->rank;
        hurray_descriptor_reset(d);
    }
}

static void run_op(int decode, const struct bench_case *c, uint64_t n,
                   struct hurray_descriptor *scratch) {
    if (decode)
        run_decode(c, n, scratch);
    else
        run_encode(c, n);
}

/* Warm-up (~10% of the budget, at least 1000 calls), then batches of about
 * 10 ms until min_seconds have been measured. */
static struct result measure(int decode, const struct bench_case *c,
                             struct hurray_descriptor *scratch) {
    struct result r = {0, 0.0};
    uint64_t batch = 1000;
    double t0 = now_seconds(), warm_until = t0 + min_seconds * 0.1;
    while (now_seconds() < warm_until) run_op(decode, c, batch, scratch);

    /* Size a batch to roughly 10 ms. */
    t0 = now_seconds();
    run_op(decode, c, batch, scratch);
    double dt = now_seconds() - t0;
    if (dt > 0) {
        double want = (double)batch * 0.010 / dt;
        batch = want < 1.0 ? 1 : (uint64_t)want;
    }
    while (r.seconds < min_seconds) {
        t0 = now_seconds();
        run_op(decode, c, batch, scratch);
        r.seconds += now_seconds() - t0;
        r.iterations += batch;
    }
    return r;
}

static void report(const struct bench_case *c, const char *op, struct result r) {
    double per_s = (double)r.iterations / r.seconds;
    printf("%-6s %-6s %7zu %12llu %9.3f %11.1f %14.0f %10.1f\n", c->name, op, c->len,
           (unsigned long long)r.iterations, r.seconds, 1e9 / per_s, per_s,
           per_s * (double)c->len / 1e6);
}

int main(int argc, char **argv) {
    struct bench_case cases[2] = {
        {"small", "float32 rank 2 row_major, 1 buffer, no sections", NULL, {0}, 0},
        {"large", "int8 rank 8 strided, 2 buffers, quantization (per_channel_affine) + "
                  "statistics + shard", NULL, {0}, 0},
    };
    struct hurray_descriptor *scratch = malloc(sizeof *scratch);
    if (argc > 1) {
        min_seconds = strtod(argv[1], NULL);
        if (!(min_seconds > 0)) {
            fprintf(stderr, "usage: %s [min-seconds-per-measurement]\n", argv[0]);
            return 2;
        }
    }
    for (size_t i = 0; i < 2; i++) {
        cases[i].desc = malloc(sizeof *cases[i].desc);
        if (!cases[i].desc || !scratch) {
            fprintf(stderr, "descriptor_bench: out of memory\n");
            return 1;
        }
    }
    build_small(cases[0].desc);
    build_large(cases[1].desc);
    hurray_descriptor_init(scratch);

    printf("libhurray %s, descriptor format %d.%d; >= %.2f s per measurement after warm-up\n",
           hurray_version_string(), HURRAY_FORMAT_MAJOR, HURRAY_FORMAT_MINOR, min_seconds);
    for (size_t i = 0; i < 2; i++) {
        prepare(&cases[i]);
        printf("  %-6s %zu bytes encoded: %s\n", cases[i].name, cases[i].len, cases[i].what);
    }
    printf("\n%-6s %-6s %7s %12s %9s %11s %14s %10s\n", "case", "op", "bytes", "iterations",
           "seconds", "ns/desc", "desc/s", "MB/s");
    for (size_t i = 0; i < 2; i++) {
        report(&cases[i], "encode", measure(0, &cases[i], scratch));
        report(&cases[i], "decode", measure(1, &cases[i], scratch));
    }
    printf("(decode = hurray_descriptor_decode + hurray_descriptor_reset; MB/s counts encoded "
           "bytes, 1 MB = 10^6 B)\n");

    for (size_t i = 0; i < 2; i++) {
        hurray_descriptor_reset(cases[i].desc);
        free(cases[i].desc);
    }
    hurray_descriptor_reset(scratch);
    free(scratch);
    return 0;
}
