/* Stream throughput and memory benchmark, on the public API only
 * (reference/include/hurray/hurray.h). Not part of `make test`.
 *
 * A writer thread streams GIB GiB of uint8 tensors of MIB MiB each through a
 * pipe (hurray_stream_writer_create_fd); the main thread reads them
 * (hurray_stream_reader_create_fd), touches and frees each item. Reported:
 *   - throughput in GiB/s of tensor data;
 *   - the reader's peak RSS increase over the baseline (the writer's source
 *     buffer is allocated and resident before the peak is reset), against
 *     the largest frame (stream.md § Reader limits: the reader holds one
 *     item, so its peak should be one frame plus a small constant);
 *   - the anchor: the same bytes through a pipe with raw write()/read() into
 *     one reused buffer, and the ratio stream / raw;
 *   - the same stream read with a caller allocator that keeps the last freed
 *     block for the next item of the same size: what is left of the gap is
 *     the page faults of a fresh 64 MiB buffer per item (glibc maps blocks
 *     this large afresh on every malloc), not the parsing.
 * Usage: stream_bench [GIB [MIB]], or HURRAY_BENCH_GIB / HURRAY_BENCH_MIB
 * (defaults 4 and 64). Exit status 1 if any call fails or data is wrong. */
#define _POSIX_C_SOURCE 200809L
#define _GNU_SOURCE /* F_SETPIPE_SZ */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hurray/hurray.h"

#define PIPE_BYTES (1 << 20)

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int status, const struct hurray_error *err) {
    fprintf(stderr, "stream_bench: %s failed: %s: %s\n", what, hurray_status_name(status),
            err ? err->message : "");
    exit(1);
}

/* VmRSS or VmHWM from /proc/self/status, in bytes (0 if unavailable). */
static uint64_t proc_status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kb = 0;
    size_t klen = strlen(key);
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0) kb = strtoull(line + klen + 1, NULL, 10);
    fclose(f);
    return kb * 1024;
}

/* Resets VmHWM to the current RSS (Linux >= 4.0); 0 on success. */
static int reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static void make_pipe(int fds[2]) {
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(1);
    }
#ifdef F_SETPIPE_SZ
    fcntl(fds[1], F_SETPIPE_SZ, PIPE_BYTES); /* best effort, same for both runs */
#endif
}

/* ---- the stream run ----------------------------------------------------------- */

struct job {
    int fd;
    const struct hurray_item *item;
    uint64_t count;
    uint8_t *raw; /* raw run: the source bytes */
    size_t raw_len;
};

static void *stream_writer(void *arg) {
    struct job *j = arg;
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    int st = hurray_stream_writer_create_fd(j->fd, NULL, &w, &err);
    if (st != HURRAY_OK) die("writer create", st, &err);
    for (uint64_t i = 0; i < j->count; i++) {
        st = hurray_stream_writer_write(w, j->item, &err);
        if (st != HURRAY_OK) die("write", st, &err);
    }
    st = hurray_stream_writer_finish(w, &err);
    if (st != HURRAY_OK) die("finish", st, &err);
    hurray_stream_writer_destroy(w);
    close(j->fd);
    return NULL;
}

/* A caller allocator that recycles one block: the last one freed. */
struct recycler {
    void *block;
    size_t size;
};

static void *recycle_alloc(void *ctx, size_t n) {
    struct recycler *rc = ctx;
    if (rc->block && rc->size == n) {
        void *p = rc->block;
        rc->block = NULL;
        return p;
    }
    return malloc(n ? n : 1);
}

static void recycle_free(void *ctx, void *p, size_t n) {
    struct recycler *rc = ctx;
    if (!p) return;
    if (!rc->block && n >= (1u << 20)) {
        rc->block = p;
        rc->size = n;
        return;
    }
    free(p);
}

static double run_stream(struct job *j, size_t tensor_bytes,
                         const struct hurray_allocator *allocator) {
    struct hurray_stream_reader_options ro;
    int fds[2];
    pthread_t th;
    struct hurray_stream_reader *r = NULL;
    struct hurray_error err;
    uint64_t got = 0;
    make_pipe(fds);
    j->fd = fds[1];
    double t0 = now_seconds();
    if (pthread_create(&th, NULL, stream_writer, j) != 0) die("pthread_create", 0, NULL);
    hurray_stream_reader_options_init(&ro);
    ro.allocator = allocator;
    int st = hurray_stream_reader_create_fd(fds[0], &ro, &r, &err);
    if (st != HURRAY_OK) die("reader create", st, &err);
    for (;;) {
        struct hurray_item *it = NULL;
        st = hurray_stream_reader_next(r, &it, &err);
        if (st != HURRAY_OK) die("next", st, &err);
        if (!it) break;
        const struct hurray_item_buffer *b = &it->buffers[0];
        if (b->size != tensor_bytes || b->data[0] != 0x5A || b->data[b->size - 1] != 0xA5)
            die("data check", 0, NULL);
        hurray_item_destroy(it);
        got++;
    }
    double t1 = now_seconds();
    hurray_stream_reader_destroy(r);
    pthread_join(th, NULL);
    close(fds[0]);
    if (got != j->count) die("item count", 0, NULL);
    return t1 - t0;
}

/* ---- the raw anchor --------------------------------------------------------------- */

static void write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) die("raw write", 0, NULL);
        p += k;
        n -= (size_t)k;
    }
}

static void *raw_writer(void *arg) {
    struct job *j = arg;
    for (uint64_t i = 0; i < j->count; i++) write_all(j->fd, j->raw, j->raw_len);
    close(j->fd);
    return NULL;
}

static double run_raw(struct job *j) {
    int fds[2];
    pthread_t th;
    uint8_t *dst = malloc(j->raw_len);
    uint64_t total = 0;
    if (!dst) die("malloc", 0, NULL);
    memset(dst, 0, j->raw_len);
    make_pipe(fds);
    j->fd = fds[1];
    double t0 = now_seconds();
    if (pthread_create(&th, NULL, raw_writer, j) != 0) die("pthread_create", 0, NULL);
    for (;;) {
        size_t at = (size_t)(total % j->raw_len);
        ssize_t k = read(fds[0], dst + at, j->raw_len - at);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) die("raw read", 0, NULL);
        if (k == 0) break;
        total += (uint64_t)k;
    }
    double t1 = now_seconds();
    pthread_join(th, NULL);
    close(fds[0]);
    if (total != j->count * j->raw_len || dst[0] != 0x5A) die("raw byte count", 0, NULL);
    free(dst);
    return t1 - t0;
}

/* ---- setup ---------------------------------------------------------------------------- */

static uint64_t arg_or_env(int argc, char **argv, int i, const char *env, uint64_t dflt) {
    const char *s = argc > i ? argv[i] : getenv(env);
    uint64_t v = s ? strtoull(s, NULL, 10) : dflt;
    return v ? v : dflt;
}

/* A uint8 [bytes] row-major tensor over `data` (borrowed). */
static struct hurray_item *make_tensor(uint8_t *data, size_t bytes) {
    static struct hurray_descriptor d;
    static struct hurray_item_buffer buf;
    static struct hurray_item it;
    const uint64_t shape[1] = {bytes};
    const struct hurray_buffer_desc table[1] = {{bytes, 6, HURRAY_SYNC_PRODUCER_SYNCED}};
    struct hurray_error err;
    hurray_descriptor_init(&d);
    d.dtype = HURRAY_DTYPE_UINT8;
    int st = hurray_descriptor_set_shape(&d, 1, shape, &err);
    if (st == HURRAY_OK) st = hurray_descriptor_set_buffers(&d, 1, table, &err);
    if (st != HURRAY_OK) die("descriptor", st, &err);
    buf.data = data;
    buf.size = bytes;
    it.descriptor = &d;
    it.buffers = &buf;
    return &it;
}

int main(int argc, char **argv) {
    uint64_t gib = arg_or_env(argc, argv, 1, "HURRAY_BENCH_GIB", 4);
    uint64_t mib = arg_or_env(argc, argv, 2, "HURRAY_BENCH_MIB", 64);
    size_t bytes = (size_t)(mib << 20);
    uint64_t count = (gib << 30) / bytes;
    uint8_t *src = malloc(bytes);
    size_t desc_len = 0;
    struct hurray_error err;
    if (!src || count == 0) die("setup", 0, NULL);
    signal(SIGPIPE, SIG_IGN);
    for (size_t i = 0; i < bytes; i++) src[i] = (uint8_t)(i * 131u);
    src[0] = 0x5A;
    src[bytes - 1] = 0xA5;
    struct hurray_item *t = make_tensor(src, bytes);
    int st = hurray_descriptor_encoded_len(t->descriptor, &desc_len, &err);
    if (st != HURRAY_OK) die("encoded_len", st, &err);
    uint64_t frame = HURRAY_STREAM_FRAME_HEADER_BYTES + desc_len + bytes + ((8 - bytes % 8) % 8);
    struct job j = {-1, t, count, src, bytes};

    double raw_s = run_raw(&j);
    uint64_t base = proc_status_kb("VmRSS:");
    int reset = reset_peak_rss();
    double stream_s = run_stream(&j, bytes, NULL);
    uint64_t hwm = proc_status_kb("VmHWM:");
    struct recycler rc = {NULL, 0};
    struct hurray_allocator recycling = {recycle_alloc, recycle_free, &rc};
    double recycled_s = run_stream(&j, bytes, &recycling);
    free(rc.block);
    double data_gib = (double)(count * bytes) / (double)(1u << 30);

    printf("stream_bench: %llu tensors of %llu MiB (%.2f GiB) through a pipe (%d KiB buffer)\n",
           (unsigned long long)count, (unsigned long long)mib, data_gib, PIPE_BYTES >> 10);
    printf("  hurray stream   %8.3f s  %6.2f GiB/s\n", stream_s, data_gib / stream_s);
    printf("  raw write/read  %8.3f s  %6.2f GiB/s\n", raw_s, data_gib / raw_s);
    printf("  ratio stream/raw throughput: %.2f\n", raw_s / stream_s);
    printf("  hurray stream, recycling allocator %8.3f s  %6.2f GiB/s  (ratio to raw %.2f)\n",
           recycled_s, data_gib / recycled_s, raw_s / recycled_s);
    printf("  largest frame: %llu bytes (%.2f MiB)\n", (unsigned long long)frame,
           (double)frame / (1 << 20));
    if (reset == 0 && hwm >= base)
        printf("  reader peak RSS over baseline: %.2f MiB (%.2f MiB above the largest frame)\n",
               (double)(hwm - base) / (1 << 20),
               ((double)(hwm - base) - (double)frame) / (1 << 20));
    else
        printf("  peak RSS (process, VmHWM): %.2f MiB, baseline %.2f MiB (peak reset "
               "unavailable)\n",
               (double)hwm / (1 << 20), (double)base / (1 << 20));
    free(src);
    return 0;
}
