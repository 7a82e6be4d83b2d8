/* Streams (stream.c). stream.md, composite.md
 *
 * Items round-trip through memory, a pipe (writer thread) and a socketpair;
 * every prefix of a multi-frame stream ends cleanly exactly at the frame
 * boundaries outside composites and is TRUNCATED everywhere else; hostile
 * frames are byte patches of writer output, each with the status the
 * decoding order (HR-STREAM-9) gives it; limits hold before allocation
 * (checked with the counting allocator); every allocation failure is NOMEM
 * without a leak. */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hurray/hurray.h"
#include "item_builders.h"
#include "test_support.h"

#define F32 HURRAY_DTYPE_FLOAT32
#define MAX_ITEMS 512

static const uint64_t S23[2] = {2, 3};

/* ==== helpers ================================================================ */

struct bytes {
    uint8_t *p;
    size_t n;
};

/* Writes items with a memory writer and returns a copy of its bytes. */
static struct bytes write_items(struct hurray_item *const *items, size_t n,
                                const struct hurray_stream_writer_options *opt) {
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    const uint8_t *data = NULL;
    struct bytes b = {NULL, 0};
    assert_status(hurray_stream_writer_create_memory(opt, &w, &err), HURRAY_OK);
    for (size_t i = 0; i < n; i++) {
        int st = hurray_stream_writer_write(w, items[i], &err);
        if (st != HURRAY_OK) print_error("write item %zu: %s\n", i, err.message);
        assert_status(st, HURRAY_OK);
    }
    assert_status(hurray_stream_writer_getvalue(w, &data, &b.n, &err), HURRAY_OK);
    b.p = tb_calloc(b.n);
    memcpy(b.p, data, b.n);
    hurray_stream_writer_destroy(w);
    return b;
}

struct readout {
    struct hurray_item *items[MAX_ITEMS];
    size_t n;
    int status;
    struct hurray_error err;
    uint64_t offsets[MAX_ITEMS]; /* reader offset after each item */
};

/* Reads until the clean end or a failure. */
static void read_all(struct hurray_stream_reader *r, struct readout *o) {
    o->n = 0;
    for (;;) {
        struct hurray_item *it = NULL;
        o->status = hurray_stream_reader_next(r, &it, &o->err);
        if (o->status != HURRAY_OK) {
            assert_null(it);
            return;
        }
        if (!it) return;
        assert_true(o->n < MAX_ITEMS);
        o->offsets[o->n] = hurray_stream_reader_offset(r);
        o->items[o->n++] = it;
    }
}

static void read_memory(const uint8_t *p, size_t n, const struct hurray_stream_reader_options *opt,
                        struct readout *o) {
    struct hurray_stream_reader *r = NULL;
    struct hurray_error err;
    assert_status(hurray_stream_reader_create_memory(p, n, opt, &r, &err), HURRAY_OK);
    read_all(r, o);
    hurray_stream_reader_destroy(r);
}

static void readout_free(struct readout *o) {
    for (size_t i = 0; i < o->n; i++) hurray_item_destroy(o->items[i]);
    o->n = 0;
}

static void free_items(struct hurray_item **items, size_t n) {
    for (size_t i = 0; i < n; i++) hurray_item_destroy(items[i]);
}

/* A float32 [2, 3] partition into two [1, 3] rows. */
static struct hurray_item *two_rows(void) {
    const uint64_t rows[2] = {0, 1}, cols[1] = {0};
    return tb_grid2(2, 3, rows, 2, cols, 1);
}

static struct hurray_item *overlay3(void) {
    const uint64_t s44[2] = {4, 4}, s22[2] = {2, 2}, s13[2] = {1, 3};
    const uint64_t o11[2] = {1, 1}, o21[2] = {2, 1};
    struct hurray_item *h = tb_head(HURRAY_RULE_OVERLAY, HURRAY_COMBINE_ADD, F32, 2, s44, 3);
    h->members[0] = tb_tensor(F32, 2, s44, 1);
    h->members[1] = tb_piece(F32, 2, s22, s44, o11, 2);
    h->members[2] = tb_piece(F32, 2, s13, s44, o21, 3);
    assert_status(hurray_composite_assign_roles(h, NULL), HURRAY_OK);
    return h;
}

static struct hurray_item *nested_groups(uint32_t depth) {
    const uint64_t s1[1] = {2};
    struct hurray_item *root = tb_head(HURRAY_RULE_GROUP, 0, F32, 1, s1, 1), *h = root;
    for (uint32_t d = 1; d < depth; d++) {
        h->members[0] = tb_head(HURRAY_RULE_GROUP, 0, F32, 1, s1, 1);
        h = h->members[0];
    }
    h->members[0] = tb_tensor(F32, 1, s1, 7);
    return root;
}

/* The multi-frame stream of the truncation and NOMEM tests: a tensor, a
 * partition, an overlay, a uint8 [5] tensor (3 bytes of padding), a nested
 * group. */
#define MIXED_COUNT 5
static void mixed_items(struct hurray_item **items) {
    const uint64_t s5[1] = {5};
    items[0] = tb_tensor(F32, 2, S23, 10);
    items[1] = two_rows();
    items[2] = overlay3();
    items[3] = tb_tensor(HURRAY_DTYPE_UINT8, 1, s5, 20);
    items[4] = nested_groups(3);
}

/* Offset of the n-th occurrence (0-based) of needle in hay, or SIZE_MAX. */
static size_t find_nth(const struct bytes *hay, const uint8_t *needle, size_t len, unsigned n) {
    for (size_t i = 0; i + len <= hay->n; i++)
        if (memcmp(hay->p + i, needle, len) == 0 && n-- == 0) return i;
    return SIZE_MAX;
}

/* ==== frames (HR-STREAM-2) ======================================================= */

static const uint8_t worked_frame[104] = {
    0x48, 0x52, 0x53, 0x46, 0x01, 0x00, 0x00, 0x00, /* "HRSF", tensor */
    0x48, 0x52, 0x59, 0x44, 0x01, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x0C, 0x01, 0x01, 0x01, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x40,
    0x00, 0x00, 0xA0, 0x40, 0x00, 0x00, 0xC0, 0x40};

static void test_HR_STREAM_2_worked_example(void **state) {
    (void)state;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    const float v[6] = {1, 2, 3, 4, 5, 6};
    memcpy(t->buffers[0].data, v, sizeof v); /* little-endian host */
    struct bytes b = write_items(&t, 1, NULL);
    assert_bytes_equal(b.p, b.n, worked_frame, sizeof worked_frame);
    struct readout o;
    read_memory(worked_frame, sizeof worked_frame, NULL, &o);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 1);
    assert_true(tb_item_equal(o.items[0], t));
    assert_int_equal(o.offsets[0], sizeof worked_frame);
    readout_free(&o);
    hurray_item_destroy(t);
    free(b.p);
}

static void test_HR_STREAM_2_padding(void **state) {
    (void)state;
    const uint64_t s5[1] = {5};
    struct hurray_item *t = tb_tensor(HURRAY_DTYPE_UINT8, 1, s5, 1);
    struct bytes b = write_items(&t, 1, NULL);
    assert_int_equal(b.n % 8, 0);
    assert_memory_equal(b.p + b.n - 3, "\0\0\0", 3);
    for (size_t i = b.n - 3; i < b.n; i++) {
        struct readout o;
        b.p[i] = 0x01;
        read_memory(b.p, b.n, NULL, &o);
        assert_status(o.status, HURRAY_E_RESERVED_NONZERO);
        assert_hurray_error(&o.err, HURRAY_E_RESERVED_NONZERO, "buffers[0].padding");
        assert_true(o.err.has_offset);
        assert_int_equal(o.err.offset, i);
        b.p[i] = 0x00;
    }
    hurray_item_destroy(t);
    free(b.p);
}

static void expect_patch(struct bytes *b, size_t at, uint8_t value, int code, const char *field) {
    struct readout o;
    uint8_t old = b->p[at];
    b->p[at] = value;
    read_memory(b->p, b->n, NULL, &o);
    assert_status(o.status, code);
    assert_hurray_error(&o.err, code, field);
    readout_free(&o);
    b->p[at] = old;
}

static void test_HR_STREAM_2_frame_header(void **state) {
    (void)state;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    struct bytes b = write_items(&t, 1, NULL);
    expect_patch(&b, 0, 'X', HURRAY_E_BAD_MAGIC, "frame.magic");
    expect_patch(&b, 3, 'G', HURRAY_E_BAD_MAGIC, "frame.magic");
    expect_patch(&b, 4, 0x00, HURRAY_E_INVALID_TAG, "frame.kind");
    expect_patch(&b, 4, 0xFF, HURRAY_E_INVALID_TAG, "frame.kind");
    /* 0x03: the end frame; 0x04: the annotation frame (its head then fails) */
    expect_patch(&b, 4, 0x05, HURRAY_E_RESERVED_TAG, "frame.kind");
    expect_patch(&b, 4, 0x04, HURRAY_E_LIMIT, "annotation.name_length");
    expect_patch(&b, 4, 0xF0, HURRAY_E_RESERVED_TAG, "frame.kind");
    for (size_t i = 5; i < 8; i++) expect_patch(&b, i, 0x01, HURRAY_E_RESERVED_NONZERO, "frame");
    /* the descriptor's own failures come through with stream offsets */
    struct readout o;
    b.p[8] = 'X';
    read_memory(b.p, b.n, NULL, &o);
    assert_status(o.status, HURRAY_E_BAD_MAGIC);
    assert_int_equal(o.err.offset, 8);
    b.p[8] = 'H';
    b.p[8 + 8] = 0x41; /* encoded_len 65: not a multiple of 8 */
    read_memory(b.p, b.n, NULL, &o);
    assert_status(o.status, HURRAY_E_LENGTH);
    assert_int_equal(o.err.offset, 16);
    hurray_item_destroy(t);
    free(b.p);
}

static void test_HR_STREAM_6_frame_kind_agrees(void **state) {
    (void)state;
    struct hurray_item *items[2] = {tb_tensor(F32, 2, S23, 0), two_rows()};
    struct bytes b = write_items(items, 2, NULL);
    size_t head = 8 + 72 + 24; /* the partition's head frame */
    assert_int_equal(b.p[head + 4], HURRAY_FRAME_COMPOSITE);
    expect_patch(&b, 4, HURRAY_FRAME_COMPOSITE, HURRAY_E_CONSTRAINT, "frame.kind");
    expect_patch(&b, head + 4, HURRAY_FRAME_TENSOR, HURRAY_E_CONSTRAINT, "frame.kind");
    free_items(items, 2);
    free(b.p);
}

/* ==== items (HR-STREAM-3) ========================================================= */

static void test_HR_STREAM_3_composite_is_one_item(void **state) {
    (void)state;
    struct hurray_item *items[3] = {two_rows(), overlay3(), nested_groups(4)};
    struct bytes b = write_items(items, 3, NULL);
    struct readout o;
    read_memory(b.p, b.n, NULL, &o);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_true(hurray_item_is_composite(o.items[i]));
        assert_true(tb_item_equal(o.items[i], items[i]));
        assert_status(hurray_composite_validate(o.items[i], NULL, NULL), HURRAY_OK);
    }
    assert_int_equal(o.items[1]->member_count, 3);
    assert_int_equal(o.items[1]->members[2]->descriptor->role, HURRAY_ROLE_CORRECTION);
    assert_int_equal(o.offsets[2], b.n);
    readout_free(&o);
    free_items(items, 3);
    free(b.p);
}

/* Buffers from a reader honour their declared alignment (HR-BUF-3). */
static void test_HR_STREAM_3_read_buffers_aligned(void **state) {
    (void)state;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    TEST_PATCH_BUFFER(t->descriptor, 0, alignment_log2, 12);
    struct bytes b = write_items(&t, 1, NULL);
    struct readout o;
    read_memory(b.p, b.n, NULL, &o);
    assert_int_equal(o.n, 1);
    assert_int_equal((uintptr_t)o.items[0]->buffers[0].data % 4096, 0);
    assert_int_equal(o.items[0]->owns_buffers, HURRAY_ITEM_OWNS_ALIGNED);
    readout_free(&o);
    hurray_item_destroy(t);
    free(b.p);
}

/* ==== the corpus: every layout and quantization scheme ============================ */

struct corpus {
    struct hurray_item *items[MAX_ITEMS];
    size_t n;
    uint8_t layouts[256];
    uint8_t schemes[256];
};

/* Every valid corpus descriptor that is not a composite head, has no role
 * section (roles belong to overlay members) and declares at most 1 MiB of
 * buffers, as an item with patterned buffers. */
static void corpus_item(struct corpus *c, const uint8_t *p, size_t n) {
    struct hurray_descriptor *d = tb_calloc(sizeof *d);
    struct hurray_limits lim;
    hurray_limits_default(&lim);
    lim.max_buffer_bytes = UINT64_MAX;
    struct hurray_decode_options opt = {&lim, NULL};
    size_t used = 0;
    uint64_t total = 0;
    hurray_descriptor_init(d);
    int ok = hurray_descriptor_decode(p, n, &opt, d, &used, NULL) == HURRAY_OK &&
             d->layout.tag != HURRAY_LAYOUT_COMPOSITE && !d->has_role;
    for (unsigned i = 0; ok && i < d->buffer_count; i++) {
        total += d->buffers[i].size;
        ok = d->buffers[i].size <= (1u << 20) && total <= (1u << 20);
    }
    if (!ok || c->n == MAX_ITEMS) {
        hurray_descriptor_reset(d);
        free(d);
        return;
    }
    struct hurray_item *it = tb_calloc(sizeof *it);
    it->descriptor = d;
    it->owns_buffers = HURRAY_ITEM_OWNS_BUFFERS;
    if (d->buffer_count) it->buffers = tb_calloc(d->buffer_count * sizeof *it->buffers);
    for (unsigned i = 0; i < d->buffer_count; i++) {
        it->buffers[i].size = d->buffers[i].size;
        it->buffers[i].data = d->buffers[i].size ? tb_calloc((size_t)d->buffers[i].size) : NULL;
        for (uint64_t k = 0; k < d->buffers[i].size; k++)
            it->buffers[i].data[k] = (uint8_t)(c->n + i + k * 7u);
    }
    c->layouts[d->layout.tag] = 1;
    if (d->quant) c->schemes[d->quant->scheme] = 1;
    c->items[c->n++] = it;
}

static void corpus_load(struct corpus *c) {
    static const char *const dirs[] = {"vectors/valid/desc", "vectors/valid/layout",
                                       "vectors/valid/quant", "vectors/valid/sect",
                                       "vectors/valid/dtype", "vectors/valid/device"};
    static uint8_t buf[1 << 20];
    memset(c, 0, sizeof *c);
    for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        DIR *dir = opendir(dirs[k]);
        if (!dir) {
            print_error("cannot open %s (run from the repository root)\n", dirs[k]);
            fail();
        }
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
            char path[1024];
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", dirs[k], e->d_name);
            FILE *f = fopen(path, "rb");
            assert_non_null(f);
            size_t n = fread(buf, 1, sizeof buf, f);
            fclose(f);
            corpus_item(c, buf, n);
        }
        closedir(dir);
    }
    /* every named layout but the composite head, every quantization scheme */
    static const uint8_t named[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                                    0x10, 0x11, 0x12, 0x13, 0x20};
    for (size_t i = 0; i < sizeof named; i++) assert_true(c->layouts[named[i]]);
    for (uint8_t s = 1; s <= 6; s++) assert_true(c->schemes[s]);
    assert_true(c->n > 200);
}

/* The corpus's descriptors declare alignments up to 4 KiB on buffers of a few bytes: kept all
 * at once, as these round trips keep them, their slack passes the default budget
 * (errors-and-limits.md HR-LIMIT-2 counts the items still alive), so they read with the
 * limit off. */
static const struct hurray_stream_reader_options *corpus_options(void) {
    static struct hurray_stream_reader_options ro;
    static struct hurray_limits lim;
    hurray_limits_default(&lim);
    lim.max_alignment_slack = UINT64_MAX;
    hurray_stream_reader_options_init(&ro);
    ro.limits = &lim;
    return &ro;
}

static void corpus_check(const struct corpus *c, struct readout *o) {
    assert_status(o->status, HURRAY_OK);
    assert_int_equal(o->n, c->n);
    for (size_t i = 0; i < c->n; i++) assert_true(tb_item_equal(o->items[i], c->items[i]));
}

static void test_HR_STREAM_1_corpus_round_trip_memory(void **state) {
    (void)state;
    static struct corpus c;
    static struct readout o;
    corpus_load(&c);
    struct bytes b = write_items(c.items, c.n, NULL);
    read_memory(b.p, b.n, corpus_options(), &o);
    corpus_check(&c, &o);
    /* canonical: writing what was read reproduces the stream (HR-STREAM-10) */
    struct bytes again = write_items(o.items, o.n, NULL);
    assert_bytes_equal(again.p, again.n, b.p, b.n);
    readout_free(&o);
    free_items(c.items, c.n);
    free(b.p);
    free(again.p);
}

struct writer_job {
    int fd;
    struct hurray_item *const *items;
    size_t n;
    int status;
    int close_fd;
};

static void *writer_thread(void *arg) {
    struct writer_job *job = arg;
    struct hurray_stream_writer *w = NULL;
    job->status = hurray_stream_writer_create_fd(job->fd, NULL, &w, NULL);
    for (size_t i = 0; job->status == HURRAY_OK && i < job->n; i++)
        job->status = hurray_stream_writer_write(w, job->items[i], NULL);
    int fin = hurray_stream_writer_finish(w, NULL);
    if (job->status == HURRAY_OK) job->status = fin;
    hurray_stream_writer_destroy(w);
    if (job->close_fd) close(job->fd);
    return NULL;
}

/* Streams items through fds[1] from a thread while reading fds[0]. */
static void through_fds(int fds[2], struct hurray_item *const *items, size_t n,
                        struct readout *o) {
    struct writer_job job = {fds[1], items, n, -1, 1};
    pthread_t th;
    struct hurray_stream_reader *r = NULL;
    assert_int_equal(pthread_create(&th, NULL, writer_thread, &job), 0);
    assert_status(hurray_stream_reader_create_fd(fds[0], corpus_options(), &r, NULL), HURRAY_OK);
    read_all(r, o);
    hurray_stream_reader_destroy(r);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_status(job.status, HURRAY_OK);
    close(fds[0]);
}

static void test_HR_STREAM_1_corpus_round_trip_pipe(void **state) {
    (void)state;
    static struct corpus c;
    static struct readout o;
    int fds[2];
    corpus_load(&c);
    assert_int_equal(pipe(fds), 0);
    through_fds(fds, c.items, c.n, &o);
    corpus_check(&c, &o);
    readout_free(&o);
    free_items(c.items, c.n);
}

static void test_HR_STREAM_11_socketpair(void **state) {
    (void)state;
    struct hurray_item *items[MIXED_COUNT];
    static struct readout o;
    int fds[2];
    mixed_items(items);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    through_fds(fds, items, MIXED_COUNT, &o);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, MIXED_COUNT);
    for (size_t i = 0; i < MIXED_COUNT; i++) assert_true(tb_item_equal(o.items[i], items[i]));
    readout_free(&o);
    free_items(items, MIXED_COUNT);
}

/* A large buffer through a pipe: read straight into the item's buffer. */
static void test_HR_STREAM_8_large_buffer_pipe(void **state) {
    (void)state;
    const uint64_t big[1] = {3u << 20}; /* 12 MiB of float32 */
    struct hurray_item *t = tb_tensor(F32, 1, big, 5);
    static struct readout o;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    through_fds(fds, &t, 1, &o);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 1);
    assert_true(tb_item_equal(o.items[0], t));
    readout_free(&o);
    hurray_item_destroy(t);
}

/* ==== ends (HR-STREAM-4) ============================================================ */

/* Every prefix: a clean end with k items exactly at the boundary after item k,
 * TRUNCATED everywhere else (inside frames, and between the frames of a
 * composite), after yielding the items that are whole. */
static void test_HR_STREAM_4_truncation_at_every_byte(void **state) {
    (void)state;
    struct hurray_item *items[MIXED_COUNT];
    static struct readout full, o;
    mixed_items(items);
    struct bytes b = write_items(items, MIXED_COUNT, NULL);
    read_memory(b.p, b.n, NULL, &full);
    assert_status(full.status, HURRAY_OK);
    assert_int_equal(full.n, MIXED_COUNT);
    assert_int_equal(full.offsets[MIXED_COUNT - 1], b.n);
    for (size_t len = 0; len <= b.n; len++) {
        size_t whole = 0;
        while (whole < MIXED_COUNT && full.offsets[whole] <= len) whole++;
        int boundary = len == 0 || (whole > 0 && full.offsets[whole - 1] == len);
        read_memory(b.p, len, NULL, &o);
        if (o.n != whole || o.status != (boundary ? HURRAY_OK : HURRAY_E_TRUNCATED))
            print_error("prefix %zu: %zu items, %s; want %zu, %s\n", len, o.n,
                        hurray_status_name(o.status), whole, boundary ? "OK" : "TRUNCATED");
        assert_int_equal(o.n, whole);
        assert_status(o.status, boundary ? HURRAY_OK : HURRAY_E_TRUNCATED);
        if (!boundary) {
            assert_true(o.err.has_offset);
            assert_int_equal(o.err.offset, len);
        }
        for (size_t i = 0; i < o.n; i++) assert_true(tb_item_equal(o.items[i], items[i]));
        readout_free(&o);
    }
    readout_free(&full);
    free_items(items, MIXED_COUNT);
    free(b.p);
}

/* Frame boundaries inside a composite are not ends. */
static void test_HR_STREAM_4_composite_boundary_truncated(void **state) {
    (void)state;
    struct hurray_item *p = two_rows();
    struct bytes b = write_items(&p, 1, NULL);
    struct readout o;
    read_memory(b.p, 72, NULL, &o); /* the head frame alone */
    assert_status(o.status, HURRAY_E_TRUNCATED);
    assert_hurray_error(&o.err, HURRAY_E_TRUNCATED, "members[0]");
    read_memory(b.p, 72 + 144, NULL, &o); /* head and member 0 */
    assert_status(o.status, HURRAY_E_TRUNCATED);
    assert_hurray_error(&o.err, HURRAY_E_TRUNCATED, "members[1]");
    assert_int_equal(o.n, 0);
    assert_int_equal(b.n, 360);
    hurray_item_destroy(p);
    free(b.p);
}

static void test_HR_STREAM_4_clean_end_repeats(void **state) {
    (void)state;
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = (struct hurray_item *)1;
    assert_status(hurray_stream_reader_create_memory(NULL, 0, NULL, &r, NULL), HURRAY_OK);
    for (int i = 0; i < 3; i++) {
        assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_OK);
        assert_null(it);
    }
    hurray_stream_reader_destroy(r);
}

/* ==== cross_machine (HR-STREAM-5) ======================================================= */

static void test_HR_STREAM_5_cross_machine_writer(void **state) {
    (void)state;
    struct hurray_stream_writer_options wo;
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    const uint8_t *data;
    size_t n = 1;
    hurray_stream_writer_options_init(&wo);
    wo.cross_machine = 1;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0), *o = overlay3();
    TEST_PATCH_BUFFER(t->descriptor, 0, sync_mode, HURRAY_SYNC_EVENT);
    TEST_PATCH_BUFFER(o->members[2]->descriptor, 0, sync_mode, HURRAY_SYNC_STREAM);
    assert_status(hurray_stream_writer_create_memory(&wo, &w, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_E_COMBINATION);
    assert_hurray_error(&err, HURRAY_E_COMBINATION, "buffers[0].sync_mode");
    assert_status(hurray_stream_writer_write(w, o, &err), HURRAY_E_COMBINATION);
    assert_status(hurray_stream_writer_getvalue(w, &data, &n, &err), HURRAY_OK);
    assert_int_equal(n, 0); /* nothing of either item was written */
    TEST_PATCH_BUFFER(t->descriptor, 0, sync_mode, HURRAY_SYNC_PRODUCER_SYNCED);
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_OK); /* still usable */
    hurray_stream_writer_destroy(w);
    hurray_item_destroy(t);
    hurray_item_destroy(o);
}

static void test_HR_STREAM_5_cross_machine_reader(void **state) {
    (void)state;
    struct hurray_stream_reader_options ro;
    struct hurray_item *items[2] = {tb_tensor(F32, 2, S23, 0), overlay3()};
    TEST_PATCH_BUFFER(items[1]->members[1]->descriptor, 0, sync_mode, HURRAY_SYNC_EVENT);
    struct bytes b = write_items(items, 2, NULL); /* relayed unchanged without the option */
    struct readout o;
    read_memory(b.p, b.n, NULL, &o);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 2);
    readout_free(&o);
    hurray_stream_reader_options_init(&ro);
    ro.cross_machine = 1;
    read_memory(b.p, b.n, &ro, &o);
    assert_status(o.status, HURRAY_E_COMBINATION);
    assert_hurray_error(&o.err, HURRAY_E_COMBINATION, "buffers[0].sync_mode");
    assert_int_equal(o.n, 1);
    readout_free(&o);
    free_items(items, 2);
    free(b.p);
}

/* ==== limits (HR-STREAM-7) ============================================================== */

/* A frame whose descriptor claims a `size`-byte buffer, followed by 64 bytes. */
static struct bytes huge_claim(uint64_t size) {
    const uint64_t shape[1] = {size};
    struct hurray_descriptor *d = tb_calloc(sizeof *d);
    hurray_descriptor_init(d);
    d->dtype = HURRAY_DTYPE_UINT8;
    test_set_shape(d, 1, shape);
    test_set_buffer_count(d, 1);
    test_set_buffer_entry(d, 0, size, 6, HURRAY_SYNC_PRODUCER_SYNCED);
    struct bytes b = {tb_calloc(8 + 256 + 64), 0};
    size_t n = 0;
    memcpy(b.p, "HRSF\x01\0\0\0", 8);
    assert_status(hurray_descriptor_encode(d, b.p + 8, 256, &n, NULL), HURRAY_OK);
    b.n = 8 + n + 64;
    hurray_descriptor_reset(d);
    free(d);
    return b;
}

static void test_HR_STREAM_7_buffer_limit_before_allocation(void **state) {
    (void)state;
    struct test_alloc ta;
    struct hurray_stream_reader_options ro;
    struct hurray_limits lim;
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = NULL;
    struct hurray_error err;
    struct bytes b = huge_claim(UINT64_C(1) << 30);
    hurray_limits_default(&lim);
    lim.max_buffer_bytes = 1u << 20;
    hurray_stream_reader_options_init(&ro);
    ro.limits = &lim;
    test_alloc_init(&ta, 0);
    ro.allocator = test_alloc_get(&ta);
    assert_status(hurray_stream_reader_create_memory(b.p, b.n, &ro, &r, &err), HURRAY_OK);
    assert_status(hurray_stream_reader_next(r, &it, &err), HURRAY_E_LIMIT);
    assert_hurray_error(&err, HURRAY_E_LIMIT, "buffers[0].size");
    assert_true(ta.peak_bytes < (1u << 20)); /* the 1 GiB was never asked for */
    hurray_stream_reader_destroy(r);
    assert_alloc_clean(&ta);
    free(b.p);
}

/* A lying length: the frame claims more than the stream holds. */
static void test_HR_STREAM_7_lying_lengths(void **state) {
    (void)state;
    struct hurray_stream_reader_options ro;
    struct hurray_limits lim;
    struct readout o;
    struct bytes b = huge_claim(16u << 20);
    hurray_limits_default(&lim);
    lim.max_buffer_bytes = 16u << 20;
    hurray_stream_reader_options_init(&ro);
    ro.limits = &lim;
    read_memory(b.p, b.n, &ro, &o); /* the buffer is set aside, then the input ends */
    assert_status(o.status, HURRAY_E_TRUNCATED);
    assert_hurray_error(&o.err, HURRAY_E_TRUNCATED, "buffers[0]");
    free(b.p);

    /* encoded_len claims 8 bytes more than the descriptor: the buffer's bytes
     * are read as descriptor bytes and the structure ends early (LENGTH) */
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    b = write_items(&t, 1, NULL);
    b.p[16] = 72 + 8;
    read_memory(b.p, b.n, NULL, &o);
    assert_status(o.status, HURRAY_E_LENGTH);
    b.p[16] = 0xF8; /* 248 > the 104 bytes there are */
    read_memory(b.p, b.n, NULL, &o);
    assert_status(o.status, HURRAY_E_TRUNCATED);
    assert_hurray_error(&o.err, HURRAY_E_TRUNCATED, "descriptor");
    hurray_item_destroy(t);
    free(b.p);
}

static void test_HR_STREAM_7_descriptor_limit_before_allocation(void **state) {
    (void)state;
    struct test_alloc ta;
    struct hurray_stream_reader_options ro;
    struct hurray_limits lim;
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = NULL;
    struct hurray_error err;
    /* a 4 KiB descriptor: a tensor carrying a 4000-byte unknown section */
    static uint8_t payload[4000];
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    test_add_opaque(t->descriptor, 0x80, 0, payload, sizeof payload);
    struct bytes b = write_items(&t, 1, NULL);
    hurray_descriptor_clear_opaque_sections(t->descriptor);
    hurray_limits_default(&lim);
    lim.max_descriptor_bytes = 1024;
    hurray_stream_reader_options_init(&ro);
    ro.limits = &lim;
    test_alloc_init(&ta, 0);
    ro.allocator = test_alloc_get(&ta);
    assert_status(hurray_stream_reader_create_memory(b.p, b.n, &ro, &r, &err), HURRAY_OK);
    size_t base = ta.live_bytes;
    assert_status(hurray_stream_reader_next(r, &it, &err), HURRAY_E_LIMIT);
    assert_hurray_error(&err, HURRAY_E_LIMIT, "encoded_len");
    assert_int_equal(err.offset, 16);
    assert_true(ta.peak_bytes - base < 1024);
    hurray_stream_reader_destroy(r);
    assert_alloc_clean(&ta);
    hurray_item_destroy(t);
    free(b.p);
}

static void test_HR_STREAM_7_composite_depth(void **state) {
    (void)state;
    struct hurray_item *items[2] = {nested_groups(HURRAY_DEFAULT_MAX_COMPOSITE_DEPTH),
                                    nested_groups(HURRAY_DEFAULT_MAX_COMPOSITE_DEPTH + 1)};
    struct bytes b = write_items(items, 2, NULL); /* a writer is bound by the format: 64 */
    struct readout o;
    read_memory(b.p, b.n, NULL, &o);
    assert_int_equal(o.n, 1);
    assert_status(o.status, HURRAY_E_LIMIT);
    assert_hurray_error(&o.err, HURRAY_E_LIMIT, "depth");
    readout_free(&o);
    free(b.p);
    free_items(items, 2);

    /* 64 deep is writable and readable with the limit raised; 65 is not writable */
    struct hurray_stream_reader_options ro;
    struct hurray_limits lim;
    struct hurray_item *deep = nested_groups(64), *deeper = nested_groups(65);
    b = write_items(&deep, 1, NULL);
    hurray_limits_default(&lim);
    lim.max_composite_depth = 64;
    hurray_stream_reader_options_init(&ro);
    ro.limits = &lim;
    read_memory(b.p, b.n, &ro, &o);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 1);
    assert_true(tb_item_equal(o.items[0], deep));
    readout_free(&o);
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    assert_status(hurray_stream_writer_create_memory(NULL, &w, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_write(w, deeper, &err), HURRAY_E_LIMIT);
    hurray_stream_writer_destroy(w);
    hurray_item_destroy(deep);
    hurray_item_destroy(deeper);
    free(b.p);
}

static void test_HR_STREAM_7_member_total(void **state) {
    (void)state;
    struct hurray_stream_reader_options ro;
    struct hurray_limits lim;
    struct hurray_item *g = nested_groups(4);
    struct bytes b = write_items(&g, 1, NULL);
    struct readout o;
    hurray_limits_default(&lim);
    lim.max_composite_members = 3;
    hurray_stream_reader_options_init(&ro);
    ro.limits = &lim;
    read_memory(b.p, b.n, &ro, &o);
    assert_status(o.status, HURRAY_E_LIMIT);
    assert_hurray_error(&o.err, HURRAY_E_LIMIT, "member_count");
    hurray_item_destroy(g);
    free(b.p);
}

/* ==== alignment slack (errors-and-limits.md HR-LIMIT-2, HR-STREAM-9 step 8) ============= */

/* The bytes of a group composite of `n` members, each uint8[size] with one buffer declaring
 * 2^log2 alignment (one member item shared by every slot). */
static struct bytes aligned_group(uint32_t n, uint64_t size, uint8_t log2) {
    struct hurray_item *m = tb_tensor(HURRAY_DTYPE_UINT8, 1, (const uint64_t[]){size}, 7);
    TEST_PATCH_BUFFER(m->descriptor, 0, alignment_log2, log2);
    struct hurray_item *g = tb_head(HURRAY_RULE_GROUP, HURRAY_COMBINE_NONE, HURRAY_DTYPE_UINT8,
                                    1, (const uint64_t[]){0}, n);
    for (uint32_t i = 0; i < n; i++) g->members[i] = m;
    struct bytes b = write_items(&g, 1, NULL);
    for (uint32_t i = 0; i < n; i++) g->members[i] = NULL;
    hurray_item_destroy(g);
    hurray_item_destroy(m);
    return b;
}

/* Reads `b` with max_alignment_slack = `slack` (UINT64_MAX - 1: the default) and returns the
 * status; on success checks the one composite of `members` with every buffer aligned to
 * 2^log2. */
static int read_slack(struct bytes b, uint64_t slack, uint32_t members, uint8_t log2,
                      struct readout *o) {
    struct hurray_stream_reader_options ro;
    struct hurray_limits lim;
    hurray_limits_default(&lim);
    if (slack != UINT64_MAX - 1) lim.max_alignment_slack = slack;
    hurray_stream_reader_options_init(&ro);
    ro.limits = &lim;
    read_memory(b.p, b.n, &ro, o);
    if (o->status == HURRAY_OK) {
        assert_int_equal(o->n, 1);
        assert_int_equal(o->items[0]->member_count, members);
        for (uint32_t i = 0; i < members; i++)
            assert_int_equal((uintptr_t)o->items[0]->members[i]->buffers[0].data %
                                 ((uintptr_t)1 << log2),
                             0);
    }
    readout_free(o);
    return o->status;
}

/* 300 one-byte buffers each declaring 4 KiB alignment: 300 x 4032 bytes of slack against 300
 * bytes of data. Refused under the default limit (1 MiB) as member 260's descriptor is decoded,
 * before its buffer is set aside -- the first where the slack passes the bytes plus 1 MiB
 * (261 x 4032 > 261 + 2^20) -- and read whole, every buffer page-aligned, once the caller
 * raises the limit. */
static void test_HR_LIMIT_2_alignment_slack_refused_at_default(void **state) {
    (void)state;
    struct bytes b = aligned_group(300, 1, 12);
    struct readout o;
    assert_status(read_slack(b, UINT64_MAX - 1, 300, 12, &o), HURRAY_E_LIMIT);
    assert_hurray_error(&o.err, HURRAY_E_LIMIT, "buffers");
    assert_non_null(strstr(o.err.message, "max_alignment_slack"));
    assert_true(o.err.has_offset);
    /* member 260's descriptor: its frame is the 262nd (head, then 260 members before it) */
    uint64_t member_frame = 0;
    size_t frame = 0;
    for (size_t at = 0; at + 4 <= b.n; at += 8)
        if (memcmp(b.p + at, "HRSF", 4) == 0 && frame++ == 261) {
            member_frame = at;
            break;
        }
    assert_int_equal(o.err.offset, member_frame + 8);
    assert_status(read_slack(b, 2u << 20, 300, 12, &o), HURRAY_OK);
    assert_status(read_slack(b, UINT64_MAX, 300, 12, &o), HURRAY_OK);
    free(b.p);
}

/* The boundary, exactly: two one-byte page-aligned buffers need 2 x 4032 bytes of slack
 * against 2 bytes, so 8062 is enough and 8061 is not. */
static void test_HR_LIMIT_2_alignment_slack_boundary(void **state) {
    (void)state;
    struct bytes b = aligned_group(2, 1, 12);
    struct readout o;
    assert_status(read_slack(b, 8062, 2, 12, &o), HURRAY_OK);
    assert_status(read_slack(b, 8061, 2, 12, &o), HURRAY_E_LIMIT);
    assert_hurray_error(&o.err, HURRAY_E_LIMIT, "buffers");
    free(b.p);
    /* 2^11: 2 x 1984 against 2 bytes */
    b = aligned_group(2, 1, 11);
    assert_status(read_slack(b, 3966, 2, 11, &o), HURRAY_OK);
    assert_status(read_slack(b, 3965, 2, 11, &o), HURRAY_E_LIMIT);
    free(b.p);
}

/* What legitimate items declare never needs the limit: buffers of 4 KiB or more that are
 * page-aligned pay for their slack, and the minimum alignment (64, or less declared) is not
 * slack -- thousands of members of either read with max_alignment_slack 0. */
static void test_HR_LIMIT_2_legitimate_items_need_no_slack(void **state) {
    (void)state;
    struct readout o;
    struct bytes b = aligned_group(64, 4096, 12);
    assert_status(read_slack(b, 0, 64, 12, &o), HURRAY_OK);
    free(b.p);
    b = aligned_group(4096, 1, 6);
    assert_status(read_slack(b, 0, 4096, 6, &o), HURRAY_OK);
    free(b.p);
    b = aligned_group(4096, 1, 0);
    assert_status(read_slack(b, 0, 4096, 0, &o), HURRAY_OK);
    free(b.p);
}

/* Top-level tensors uint8[1] whose buffer declares 4 KiB: `n` of them, written. */
static struct bytes page_aligned_tensors(size_t n) {
    struct hurray_item *t = tb_tensor(HURRAY_DTYPE_UINT8, 1, (const uint64_t[]){1}, 3);
    TEST_PATCH_BUFFER(t->descriptor, 0, alignment_log2, 12);
    struct hurray_item *items[8];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) items[i] = t;
    struct bytes b = write_items(items, n, NULL);
    hurray_item_destroy(t);
    return b;
}

static struct hurray_stream_reader *slack_reader(struct bytes b, uint64_t slack) {
    struct hurray_stream_reader_options ro;
    struct hurray_limits lim;
    struct hurray_stream_reader *r = NULL;
    hurray_limits_default(&lim);
    lim.max_alignment_slack = slack;
    hurray_stream_reader_options_init(&ro);
    ro.limits = &lim;
    assert_status(hurray_stream_reader_create_memory(b.p, b.n, &ro, &r, NULL), HURRAY_OK);
    return r;
}

/* The sums run over the items the reader yielded that are still alive: each of two
 * top-level tensors needs 4032 bytes of slack against its 1 byte. Kept together they need
 * 8064 against 2 bytes: 8062 is enough, 8061 refuses the second item -- the record names it
 * (item 1) and its buffer. A consumer that frees each item before the next reads any number
 * of them with 4031. */
static void test_HR_LIMIT_2_alignment_slack_counts_kept_items(void **state) {
    (void)state;
    struct bytes b = page_aligned_tensors(2);
    struct readout o;
    struct hurray_stream_reader *r = slack_reader(b, 8062);
    read_all(r, &o);
    hurray_stream_reader_destroy(r);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 2);
    readout_free(&o);
    r = slack_reader(b, 8061);
    read_all(r, &o);
    hurray_stream_reader_destroy(r);
    assert_status(o.status, HURRAY_E_LIMIT);
    assert_int_equal(o.n, 1);
    assert_hurray_error(&o.err, HURRAY_E_LIMIT, "buffers[0]");
    assert_non_null(strstr(o.err.message, "item 1, buffers[0]"));
    assert_non_null(strstr(o.err.message, "max_alignment_slack 8061"));
    assert_int_equal(o.err.offset, 80 + 8); /* the second frame's descriptor */
    readout_free(&o);
    free(b.p);
    b = page_aligned_tensors(8);
    r = slack_reader(b, 4031);
    size_t n = 0;
    for (struct hurray_item *it = NULL;; n++) {
        assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_OK);
        if (!it) break;
        hurray_item_destroy(it); /* hands its 4032 bytes back */
    }
    assert_int_equal(n, 8);
    hurray_stream_reader_destroy(r);
    free(b.p);
    /* a descriptor that sets nothing aside is not checked: an empty tensor after a kept item
     * that used the whole budget (and after a freed one that paid for another's slack) */
    struct hurray_item *items[3];
    items[0] = tb_tensor(HURRAY_DTYPE_UINT8, 1, (const uint64_t[]){1}, 3);
    TEST_PATCH_BUFFER(items[0]->descriptor, 0, alignment_log2, 12);
    items[1] = tb_tensor(HURRAY_DTYPE_UINT8, 1, (const uint64_t[]){0}, 0);
    items[2] = items[1];
    b = write_items(items, 3, NULL);
    r = slack_reader(b, 4031);
    read_all(r, &o);
    hurray_stream_reader_destroy(r);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 3);
    readout_free(&o);
    hurray_item_destroy(items[0]);
    hurray_item_destroy(items[1]);
    free(b.p);
}

/* Inside a composite the refusal names the item, the member's path and its buffer: a group
 * whose member 0 holds 8 bytes declaring 64 (no slack) and member 1 one byte declaring
 * 4 KiB: 4032 bytes of slack against 9 bytes -- read with 4023 or more, refused at member
 * 1's buffer with 4022. */
static void test_HR_LIMIT_2_refusal_names_member_and_buffer(void **state) {
    (void)state;
    struct hurray_item *g = tb_head(HURRAY_RULE_GROUP, HURRAY_COMBINE_NONE, HURRAY_DTYPE_UINT8,
                                    1, (const uint64_t[]){0}, 2);
    g->members[0] = tb_tensor(HURRAY_DTYPE_UINT8, 1, (const uint64_t[]){8}, 1);
    g->members[1] = tb_tensor(HURRAY_DTYPE_UINT8, 1, (const uint64_t[]){1}, 2);
    TEST_PATCH_BUFFER(g->members[1]->descriptor, 0, alignment_log2, 12);
    struct bytes b = write_items(&g, 1, NULL);
    hurray_item_destroy(g);
    struct readout o;
    struct hurray_stream_reader *r = slack_reader(b, 4023); /* 4032 <= 9 + 4023 */
    read_all(r, &o);
    hurray_stream_reader_destroy(r);
    assert_status(o.status, HURRAY_OK);
    readout_free(&o);
    r = slack_reader(b, 4022);
    read_all(r, &o);
    hurray_stream_reader_destroy(r);
    assert_status(o.status, HURRAY_E_LIMIT);
    assert_hurray_error(&o.err, HURRAY_E_LIMIT, "buffers[0]");
    assert_non_null(strstr(o.err.message, "item 0, members[1], buffers[0]"));
    readout_free(&o);
    free(b.p);
}

/* Items outlive their reader and are freed on other threads: each hands its share back to
 * the reader's budget, which the last of them frees (ASan/valgrind: no leak, no use after
 * free). With the reader alive, what threads freed is free again for the next item. */
struct free_job {
    struct hurray_item **items;
    size_t from, to;
};

static void *free_items_thread(void *arg) {
    struct free_job *j = arg;
    for (size_t i = j->from; i < j->to; i++) hurray_item_destroy(j->items[i]);
    return NULL;
}

static void free_on_threads(struct hurray_item **items, size_t n) {
    pthread_t th[2];
    struct free_job jobs[2] = {{items, 0, n / 2}, {items, n / 2, n}};
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&th[k], NULL, free_items_thread, &jobs[k]), 0);
    for (int k = 0; k < 2; k++) assert_int_equal(pthread_join(th[k], NULL), 0);
}

static void test_HR_LIMIT_2_slack_handed_back_across_threads(void **state) {
    (void)state;
    struct bytes b = page_aligned_tensors(8);
    struct hurray_item *items[8];
    /* budget for 4 kept items: 4 x 4032 <= 4 + 16124 */
    struct hurray_stream_reader *r = slack_reader(b, 16124);
    for (size_t i = 0; i < 4; i++) {
        assert_status(hurray_stream_reader_next(r, &items[i], NULL), HURRAY_OK);
        assert_non_null(items[i]);
    }
    free_on_threads(items, 4); /* all four handed back on two other threads */
    for (size_t i = 0; i < 4; i++) {
        assert_status(hurray_stream_reader_next(r, &items[i], NULL), HURRAY_OK);
        assert_non_null(items[i]);
    }
    hurray_stream_reader_destroy(r); /* the items keep the budget */
    free_on_threads(items, 4);
    free(b.p);
}

/* ==== composite rules while reading (HR-STREAM-9 step 6) ================================ */

static void test_HR_STREAM_9_member_rules_while_reading(void **state) {
    (void)state;
    struct hurray_item *o3 = overlay3();
    struct bytes b = write_items(&o3, 1, NULL);
    static const uint8_t role_hdr[8] = {0x04, 0x01, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00};
    size_t at = find_nth(&b, role_hdr, 8, 1); /* member 1's role section */
    assert_true(at != SIZE_MAX);
    assert_int_equal(b.p[at + 8], HURRAY_ROLE_CORRECTION);
    expect_patch(&b, at + 8, HURRAY_ROLE_BASE, HURRAY_E_CONSTRAINT, "members[1].member_role");

    /* The same broken tree in memory: the validator gives the same answer. */
    o3->members[1]->descriptor->role = HURRAY_ROLE_BASE;
    struct hurray_error err;
    assert_status(hurray_composite_validate(o3, NULL, &err), HURRAY_E_CONSTRAINT);
    assert_hurray_error(&err, HURRAY_E_CONSTRAINT, "members[1].member_role");
    hurray_item_destroy(o3);
    free(b.p);

    /* a group turned into a partition by its rule byte: members lack shards */
    struct hurray_item *g = nested_groups(1);
    b = write_items(&g, 1, NULL);
    size_t rule = 8 + 32 + 8 * 1 + 8; /* frame header, fixed, shape, layout block header */
    assert_int_equal(b.p[rule], HURRAY_RULE_GROUP);
    expect_patch(&b, rule, HURRAY_RULE_PARTITION, HURRAY_E_CONSTRAINT, "members[0].shard");
    g->descriptor->layout.rule = HURRAY_RULE_PARTITION;
    assert_status(hurray_composite_validate(g, NULL, &err), HURRAY_E_CONSTRAINT);
    assert_hurray_error(&err, HURRAY_E_CONSTRAINT, "members[0].shard");
    hurray_item_destroy(g);
    free(b.p);
}

static void test_HR_STREAM_9_partition_grid_while_reading(void **state) {
    (void)state;
    struct hurray_item *p = two_rows();
    struct bytes b = write_items(&p, 1, NULL);
    /* member 1's global_offset[0] (1 -> 0): the shard section's offset table */
    static const uint8_t shard_hdr[8] = {0x03, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00};
    size_t at = find_nth(&b, shard_hdr, 8, 1);
    assert_true(at != SIZE_MAX);
    size_t off0 = at + 8 + 8 + 16; /* index, count, global_shape[2] */
    assert_int_equal(b.p[off0], 1);
    expect_patch(&b, off0, 0, HURRAY_E_CONSTRAINT, "members");
    hurray_item_destroy(p);
    free(b.p);
}

/* ==== reader state (HR-STREAM-9) ========================================================= */

static void test_HR_STREAM_9_failure_is_sticky(void **state) {
    (void)state;
    struct hurray_item *items[2] = {tb_tensor(F32, 2, S23, 0), tb_tensor(F32, 2, S23, 1)};
    struct bytes b = write_items(items, 2, NULL);
    b.p[104 + 5] = 1; /* the second frame's reserved byte */
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = NULL;
    struct hurray_error e1, e2;
    assert_status(hurray_stream_reader_create_memory(b.p, b.n, NULL, &r, NULL), HURRAY_OK);
    assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_OK);
    assert_non_null(it);
    hurray_item_destroy(it);
    assert_status(hurray_stream_reader_next(r, &it, &e1), HURRAY_E_RESERVED_NONZERO);
    assert_null(it);
    assert_int_equal(e1.offset, 104);
    test_error_poison(&e2);
    assert_status(hurray_stream_reader_next(r, &it, &e2), HURRAY_E_RESERVED_NONZERO);
    assert_int_equal(e2.code, e1.code);
    assert_int_equal(e2.offset, e1.offset);
    assert_string_equal(e2.field, e1.field);
    assert_string_equal(e2.message, e1.message);
    assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_E_RESERVED_NONZERO);
    hurray_stream_reader_close(r); /* closed: exhausted, not failed */
    assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_OK);
    assert_null(it);
    hurray_stream_reader_close(r);
    hurray_stream_reader_destroy(r);
    hurray_stream_reader_destroy(NULL);
    free_items(items, 2);
    free(b.p);
}

static void test_HR_STREAM_9_close_mid_item(void **state) {
    (void)state;
    struct test_alloc ta;
    struct hurray_stream_reader_options ro;
    struct hurray_item *p = two_rows();
    struct bytes b = write_items(&p, 1, NULL);
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = NULL;
    hurray_stream_reader_options_init(&ro);
    test_alloc_init(&ta, 0);
    ro.allocator = test_alloc_get(&ta);
    /* truncated inside member 1: the partial composite is dropped */
    assert_status(hurray_stream_reader_create_memory(b.p, b.n - 4, &ro, &r, NULL), HURRAY_OK);
    assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_E_TRUNCATED);
    hurray_stream_reader_destroy(r);
    assert_alloc_clean(&ta);
    hurray_item_destroy(p);
    free(b.p);
}

/* A read callback that delivers one byte at a time: every stage resumes. */
struct trickle {
    const uint8_t *p;
    size_t n, pos;
};

static int trickle_read(void *ctx, uint8_t *dst, size_t cap, size_t *got,
                        struct hurray_error *err) {
    struct trickle *t = ctx;
    (void)err;
    *got = 0;
    if (t->pos < t->n && cap > 0) {
        *dst = t->p[t->pos++];
        *got = 1;
    }
    return HURRAY_OK;
}

static int failing_read(void *ctx, uint8_t *dst, size_t cap, size_t *got,
                        struct hurray_error *err) {
    (void)ctx;
    (void)dst;
    (void)cap;
    *got = 0;
    if (err) {
        hurray_error_clear(err);
        err->code = HURRAY_E_IO;
        snprintf(err->message, sizeof err->message, "test transport: broken");
    }
    return HURRAY_E_IO;
}

static void test_HR_STREAM_11_callback_reader(void **state) {
    (void)state;
    struct hurray_item *items[MIXED_COUNT];
    static struct readout o;
    mixed_items(items);
    struct bytes b = write_items(items, MIXED_COUNT, NULL);
    struct trickle t = {b.p, b.n, 0};
    struct hurray_stream_reader *r = NULL;
    assert_status(hurray_stream_reader_create_callback(trickle_read, &t, NULL, &r, NULL),
                  HURRAY_OK);
    read_all(r, &o);
    hurray_stream_reader_destroy(r);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, MIXED_COUNT);
    for (size_t i = 0; i < MIXED_COUNT; i++) assert_true(tb_item_equal(o.items[i], items[i]));
    readout_free(&o);
    assert_status(hurray_stream_reader_create_callback(failing_read, NULL, NULL, &r, NULL),
                  HURRAY_OK);
    read_all(r, &o);
    assert_status(o.status, HURRAY_E_IO);
    hurray_stream_reader_destroy(r);
    assert_status(hurray_stream_reader_create_callback(NULL, NULL, NULL, &r, NULL),
                  HURRAY_E_ARGUMENT);
    free_items(items, MIXED_COUNT);
    free(b.p);
}

/* ==== transports (HR-STREAM-11) ============================================================ */

static void test_HR_STREAM_11_fd_is_duplicated(void **state) {
    (void)state;
    int fds[2];
    struct hurray_stream_reader *r = NULL;
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    assert_int_equal(pipe(fds), 0);
    assert_status(hurray_stream_reader_create_fd(fds[0], NULL, &r, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_create_fd(fds[1], NULL, &w, &err), HURRAY_OK);
    hurray_stream_reader_close(r);
    hurray_stream_reader_destroy(r);
    assert_status(hurray_stream_writer_finish(w, &err), HURRAY_OK);
    hurray_stream_writer_destroy(w);
    assert_true(fcntl(fds[0], F_GETFD) != -1); /* the caller's fds are still open */
    assert_true(fcntl(fds[1], F_GETFD) != -1);
    /* and still work: the writer's duplicate is closed, the caller's is not */
    assert_int_equal(write(fds[1], "x", 1), 1);
    char c = 0;
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);
    close(fds[1]);
    assert_status(hurray_stream_reader_create_fd(-1, NULL, &r, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_stream_reader_create_fd(fds[0], NULL, &r, &err), HURRAY_E_IO);
    assert_hurray_error(&err, HURRAY_E_IO, "transport");
    assert_int_equal(err.sys_errno, EBADF);
    assert_null(r);
    assert_status(hurray_stream_writer_create_fd(fds[1], NULL, &w, &err), HURRAY_E_IO);
    assert_null(w);
}

static void test_HR_STREAM_11_epipe_is_io(void **state) {
    (void)state;
    int fds[2];
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    assert_int_equal(pipe(fds), 0);
    close(fds[0]);
    assert_status(hurray_stream_writer_create_fd(fds[1], NULL, &w, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_E_IO);
    assert_hurray_error(&err, HURRAY_E_IO, "transport");
    assert_non_null(strstr(err.message, "pipe"));
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_E_IO); /* failed for good */
    assert_status(hurray_stream_writer_finish(w, &err), HURRAY_E_IO);
    assert_status(hurray_stream_writer_finish(w, &err), HURRAY_OK);
    hurray_stream_writer_destroy(w);
    close(fds[1]);
    signal(SIGPIPE, old);
    hurray_item_destroy(t);
}

/* ==== writer (HR-STREAM-10) ================================================================= */

static void test_HR_STREAM_10_getvalue_finish_write_after(void **state) {
    (void)state;
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    const uint8_t *d1, *d2;
    size_t n1, n2;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    assert_status(hurray_stream_writer_create_memory(NULL, &w, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_getvalue(w, &d1, &n1, &err), HURRAY_OK);
    assert_int_equal(n1, 0);
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_getvalue(w, &d1, &n1, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_getvalue(w, &d2, &n2, &err), HURRAY_OK);
    assert_int_equal(n1, 104);
    assert_ptr_equal(d1, d2);
    assert_int_equal(n1, n2);
    assert_int_equal(hurray_stream_writer_offset(w), 104);
    assert_status(hurray_stream_writer_finish(w, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_finish(w, &err), HURRAY_OK); /* idempotent */
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "writer");
    assert_status(hurray_stream_writer_getvalue(w, &d2, &n2, &err), HURRAY_OK);
    assert_int_equal(n2, 104 + 8); /* the bytes outlive finish, with the end frame */
    assert_bytes_equal(d2 + 104, 8, (const uint8_t *)"HRSF\x03\0\0\0", 8);
    assert_status(hurray_stream_writer_getvalue(w, &d1, &n1, &err), HURRAY_OK);
    assert_int_equal(n1, n2); /* repeatable */
    assert_int_equal(hurray_stream_writer_offset(w), 112);
    hurray_stream_writer_destroy(w);
    hurray_stream_writer_destroy(NULL);

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_status(hurray_stream_writer_create_fd(fds[1], NULL, &w, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_getvalue(w, &d1, &n1, &err), HURRAY_E_ARGUMENT);
    hurray_stream_writer_destroy(w);
    close(fds[0]);
    close(fds[1]);
    hurray_item_destroy(t);
}

static void test_HR_STREAM_10_refused_items_write_nothing(void **state) {
    (void)state;
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    const uint8_t *d;
    size_t n = 0;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0), *p = two_rows();
    assert_status(hurray_stream_writer_create_memory(NULL, &w, &err), HURRAY_OK);
    t->buffers[0].size = 20; /* holds less than the table declares */
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "buffers[0]");
    t->buffers[0].size = 24;
    TEST_PATCH_BUFFER(t->descriptor, 0, size, 20); /* the descriptor itself is invalid */
    t->buffers[0].size = 20;
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_E_BUFFER_SIZE);
    TEST_PATCH_BUFFER(t->descriptor, 0, size, 24);
    t->buffers[0].size = 24;
    p->members[1]->descriptor->shard = NULL; /* a composite rule (the record stays in the block) */
    assert_status(hurray_stream_writer_write(w, p, &err), HURRAY_E_CONSTRAINT);
    assert_hurray_error(&err, HURRAY_E_CONSTRAINT, "members[1].shard");
    tb_role(t, HURRAY_ROLE_BASE); /* a role outside an overlay */
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_E_CONSTRAINT);
    tb_role(t, 0);
    assert_status(hurray_stream_writer_write(w, NULL, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_stream_writer_getvalue(w, &d, &n, &err), HURRAY_OK);
    assert_int_equal(n, 0);
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_OK);
    hurray_stream_writer_destroy(w);
    hurray_item_destroy(t);
    hurray_item_destroy(p);
}

struct sink {
    uint8_t *p;
    size_t n, cap;
    size_t calls;
};

static int sink_write(void *ctx, const uint8_t *src, size_t len, struct hurray_error *err) {
    struct sink *s = ctx;
    (void)err;
    if (s->n + len > s->cap) {
        s->cap = (s->n + len) * 2;
        s->p = realloc(s->p, s->cap);
        assert_non_null(s->p);
    }
    memcpy(s->p + s->n, src, len);
    s->n += len;
    s->calls++;
    return HURRAY_OK;
}

static void test_HR_STREAM_10_callback_writer_same_bytes(void **state) {
    (void)state;
    struct hurray_item *items[MIXED_COUNT];
    struct sink s = {NULL, 0, 0, 0};
    struct hurray_stream_writer *w = NULL;
    mixed_items(items);
    struct bytes b = write_items(items, MIXED_COUNT, NULL);
    assert_status(hurray_stream_writer_create_callback(sink_write, &s, NULL, &w, NULL), HURRAY_OK);
    for (size_t i = 0; i < MIXED_COUNT; i++) {
        assert_status(hurray_stream_writer_write(w, items[i], NULL), HURRAY_OK);
        assert_int_equal(s.n, hurray_stream_writer_offset(w)); /* each item is out at once */
    }
    assert_status(hurray_stream_writer_finish(w, NULL), HURRAY_OK);
    hurray_stream_writer_destroy(w);
    /* the memory writer's bytes before finish, then the end frame (HR-STREAM-12) */
    assert_int_equal(s.n, b.n + HURRAY_STREAM_END_FRAME_BYTES);
    assert_bytes_equal(s.p, b.n, b.p, b.n);
    assert_bytes_equal(s.p + b.n, 8, (const uint8_t *)"HRSF\x03\0\0\0", 8);
    assert_status(hurray_stream_writer_create_callback(NULL, NULL, NULL, &w, NULL),
                  HURRAY_E_ARGUMENT);
    free(s.p);
    free(b.p);
    free_items(items, MIXED_COUNT);
}

/* ==== the end frame and end states (HR-STREAM-12, HR-STREAM-13) ========================= */

static const uint8_t END_FRAME[8] = {'H', 'R', 'S', 'F', 0x03, 0, 0, 0};

/* Items, finished: the stream with its end frame. */
static struct bytes write_finished(struct hurray_item *const *items, size_t n) {
    struct hurray_stream_writer *w = NULL;
    const uint8_t *data = NULL;
    struct bytes b = {NULL, 0};
    assert_status(hurray_stream_writer_create_memory(NULL, &w, NULL), HURRAY_OK);
    for (size_t i = 0; i < n; i++) assert_status(hurray_stream_writer_write(w, items[i], NULL), HURRAY_OK);
    assert_status(hurray_stream_writer_finish(w, NULL), HURRAY_OK);
    assert_status(hurray_stream_writer_getvalue(w, &data, &b.n, NULL), HURRAY_OK);
    b.p = tb_calloc(b.n + 256); /* room for trailing bytes */
    memcpy(b.p, data, b.n);
    hurray_stream_writer_destroy(w);
    return b;
}

/* Reads a memory stream to its end: the items, the status, the end state. */
static int read_end(const uint8_t *p, size_t n, const struct hurray_stream_reader_options *opt,
                    struct readout *o, uint64_t *offset) {
    struct hurray_stream_reader *r = NULL;
    assert_status(hurray_stream_reader_create_memory(p, n, opt, &r, NULL), HURRAY_OK);
    assert_int_equal(hurray_stream_reader_end(r), HURRAY_STREAM_NOT_ENDED);
    read_all(r, o);
    int end = hurray_stream_reader_end(r);
    if (offset) *offset = hurray_stream_reader_offset(r);
    struct hurray_item *it = (struct hurray_item *)1;
    if (o->status == HURRAY_OK) { /* the end repeats, and so does its state */
        assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_OK);
        assert_null(it);
        assert_int_equal(hurray_stream_reader_end(r), end);
    }
    hurray_stream_reader_destroy(r);
    return end;
}

static void test_HR_STREAM_12_end_frame_written_and_read(void **state) {
    (void)state;
    struct hurray_item *items[MIXED_COUNT];
    static struct readout o;
    uint64_t off = 0;
    mixed_items(items);
    struct bytes open_ = write_items(items, MIXED_COUNT, NULL);
    struct bytes done = write_finished(items, MIXED_COUNT);
    /* the finished stream is the unfinished one and the 8-byte end frame */
    assert_int_equal(done.n, open_.n + 8);
    assert_bytes_equal(done.p, open_.n, open_.p, open_.n);
    assert_bytes_equal(done.p + open_.n, 8, END_FRAME, 8);
    assert_int_equal(read_end(done.p, done.n, NULL, &o, &off), HURRAY_STREAM_END_FRAME);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, MIXED_COUNT);
    assert_int_equal(o.offsets[MIXED_COUNT - 1], open_.n); /* an item ends before the end frame */
    assert_int_equal(off, done.n);                         /* the end is past it */
    for (size_t i = 0; i < MIXED_COUNT; i++) assert_true(tb_item_equal(o.items[i], items[i]));
    /* rewritten and finished: the same bytes (HR-STREAM-10) */
    struct bytes again = write_finished(o.items, o.n);
    assert_bytes_equal(again.p, again.n, done.p, done.n);
    readout_free(&o);
    /* the same stream without its end frame (revision 1, or a sender that died) */
    assert_int_equal(read_end(open_.p, open_.n, NULL, &o, &off), HURRAY_STREAM_END_EOF);
    assert_int_equal(o.n, MIXED_COUNT);
    readout_free(&o);
    /* an empty stream: the end frame alone, or nothing */
    assert_int_equal(read_end(END_FRAME, 8, NULL, &o, &off), HURRAY_STREAM_END_FRAME);
    assert_int_equal(o.n, 0);
    assert_int_equal(off, 8);
    assert_int_equal(read_end(NULL, 0, NULL, &o, &off), HURRAY_STREAM_END_EOF);
    free_items(items, MIXED_COUNT);
    free(open_.p);
    free(done.p);
    free(again.p);
}

/* Bytes after the end frame are not read: garbage, a partial frame, a whole
 * frame -- the reader ends at the end frame, with the same items. */
static void test_HR_STREAM_12_bytes_after_the_end_are_not_read(void **state) {
    (void)state;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 3);
    struct bytes one = write_items(&t, 1, NULL);
    struct bytes b = write_finished(&t, 1);
    static struct readout o;
    uint64_t off = 0;
    const uint8_t *tails[3] = {(const uint8_t *)"garbage!", (const uint8_t *)"HRS", one.p};
    const size_t lens[3] = {8, 3, one.n};
    for (int k = 0; k < 3; k++) {
        assert_true(lens[k] <= 256);
        memcpy(b.p + 112, tails[k], lens[k]);
        assert_int_equal(read_end(b.p, 112 + lens[k], NULL, &o, &off), HURRAY_STREAM_END_FRAME);
        assert_status(o.status, HURRAY_OK);
        assert_int_equal(o.n, 1);
        assert_int_equal(off, 112);
        readout_free(&o);
    }
    hurray_item_destroy(t);
    free(one.p);
    free(b.p);
}

struct keep_open_job {
    int fd;
    struct hurray_item *item;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int reader_done;
    int status;
};

/* Writes one item and finishes, then keeps the pipe open until the reader says
 * it has ended: a peer that stays connected after a stream. */
static void *keep_open_writer(void *arg) {
    struct keep_open_job *j = arg;
    struct hurray_stream_writer *w = NULL;
    j->status = hurray_stream_writer_create_fd(j->fd, NULL, &w, NULL);
    if (j->status == HURRAY_OK) j->status = hurray_stream_writer_write(w, j->item, NULL);
    if (j->status == HURRAY_OK) j->status = hurray_stream_writer_finish(w, NULL);
    hurray_stream_writer_destroy(w);
    pthread_mutex_lock(&j->mu);
    while (!j->reader_done) pthread_cond_wait(&j->cv, &j->mu);
    pthread_mutex_unlock(&j->mu);
    close(j->fd); /* only now is there an end of input */
    return NULL;
}

/* The end frame ends a stream over a pipe whose writer keeps it open: the
 * reader does not wait for the end of input (a reader that did would time
 * out here, after 20 s, instead of ending). */
static void test_HR_STREAM_12_end_frame_needs_no_eof(void **state) {
    (void)state;
    int fds[2];
    struct keep_open_job j = {0, tb_tensor(F32, 2, S23, 1), PTHREAD_MUTEX_INITIALIZER,
                              PTHREAD_COND_INITIALIZER, 0, -1};
    struct hurray_stream_reader_options ro;
    struct hurray_stream_reader *r = NULL;
    static struct readout o;
    pthread_t th;
    assert_int_equal(pipe(fds), 0);
    j.fd = fds[1];
    hurray_stream_reader_options_init(&ro);
    ro.timeout_ms = 20000;
    assert_status(hurray_stream_reader_create_fd(fds[0], &ro, &r, NULL), HURRAY_OK);
    assert_int_equal(pthread_create(&th, NULL, keep_open_writer, &j), 0);
    read_all(r, &o);
    pthread_mutex_lock(&j.mu);
    j.reader_done = 1;
    pthread_cond_signal(&j.cv);
    pthread_mutex_unlock(&j.mu);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_status(j.status, HURRAY_OK);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 1);
    assert_int_equal(hurray_stream_reader_end(r), HURRAY_STREAM_END_FRAME);
    hurray_stream_reader_destroy(r);
    readout_free(&o);
    hurray_item_destroy(j.item);
    close(fds[0]);
}

static void test_HR_STREAM_12_end_frame_checks(void **state) {
    (void)state;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0), *p = two_rows();
    struct bytes b = write_finished(&t, 1);
    static struct readout o;
    /* its reserved bytes are checked like any frame's */
    for (size_t i = 5; i < 8; i++) {
        b.p[104 + i] = 0x01;
        assert_int_equal(read_end(b.p, b.n, NULL, &o, NULL), HURRAY_STREAM_NOT_ENDED);
        assert_status(o.status, HURRAY_E_RESERVED_NONZERO);
        assert_hurray_error(&o.err, HURRAY_E_RESERVED_NONZERO, "frame.reserved");
        assert_int_equal(o.err.offset, 104);
        assert_int_equal(o.n, 1);
        readout_free(&o);
        b.p[104 + i] = 0;
    }
    /* an end frame cut short is TRUNCATED, like any frame header */
    for (size_t k = 1; k < 8; k++) {
        assert_int_equal(read_end(b.p, 104 + k, NULL, &o, NULL), HURRAY_STREAM_NOT_ENDED);
        assert_status(o.status, HURRAY_E_TRUNCATED);
        assert_int_equal(o.n, 1);
        readout_free(&o);
    }
    free(b.p);
    /* inside a composite, where a member is due: CONSTRAINT at the kind */
    struct bytes c = write_items(&p, 1, NULL); /* head 72 | member 144 | member 144 */
    size_t cuts[2] = {72, 72 + 144};
    for (int k = 0; k < 2; k++) {
        uint8_t *q = tb_calloc(cuts[k] + 8 + 144);
        memcpy(q, c.p, cuts[k]);
        memcpy(q + cuts[k], END_FRAME, 8);
        memcpy(q + cuts[k] + 8, c.p + cuts[k], 144); /* the member after it changes nothing */
        assert_int_equal(read_end(q, cuts[k] + 8 + 144, NULL, &o, NULL), HURRAY_STREAM_NOT_ENDED);
        assert_status(o.status, HURRAY_E_CONSTRAINT);
        assert_hurray_error(&o.err, HURRAY_E_CONSTRAINT, "frame.kind");
        assert_int_equal(o.err.offset, cuts[k] + 4);
        assert_int_equal(o.n, 0);
        free(q);
    }
    hurray_item_destroy(t);
    hurray_item_destroy(p);
    free(c.p);
}

static void test_HR_STREAM_13_require_end_frame(void **state) {
    (void)state;
    struct hurray_stream_reader_options ro;
    struct hurray_item *items[2] = {tb_tensor(F32, 2, S23, 0), two_rows()};
    struct bytes done = write_finished(items, 2), open_ = write_items(items, 2, NULL);
    static struct readout o;
    hurray_stream_reader_options_init(&ro);
    ro.require_end_frame = 1;
    assert_int_equal(read_end(done.p, done.n, &ro, &o, NULL), HURRAY_STREAM_END_FRAME);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 2);
    readout_free(&o);
    /* a sender that died between items: every whole item, then TRUNCATED */
    assert_int_equal(read_end(open_.p, open_.n, &ro, &o, NULL), HURRAY_STREAM_NOT_ENDED);
    assert_status(o.status, HURRAY_E_TRUNCATED);
    assert_hurray_error(&o.err, HURRAY_E_TRUNCATED, "end");
    assert_int_equal(o.err.offset, open_.n);
    assert_int_equal(o.n, 2);
    readout_free(&o);
    assert_int_equal(read_end(open_.p, 104, &ro, &o, NULL), HURRAY_STREAM_NOT_ENDED);
    assert_status(o.status, HURRAY_E_TRUNCATED);
    assert_int_equal(o.n, 1);
    readout_free(&o);
    assert_int_equal(read_end(NULL, 0, &ro, &o, NULL), HURRAY_STREAM_NOT_ENDED);
    assert_status(o.status, HURRAY_E_TRUNCATED);
    free_items(items, 2);
    free(done.p);
    free(open_.p);
}

static int failing_write_calls;
static int failing_write(void *ctx, const uint8_t *src, size_t len, struct hurray_error *err) {
    (void)ctx;
    (void)src;
    (void)len;
    failing_write_calls++;
    if (err) {
        hurray_error_clear(err);
        err->code = HURRAY_E_IO;
        snprintf(err->message, sizeof err->message, "test transport: broken");
    }
    return HURRAY_E_IO;
}

/* A writer dropped unfinished writes no end frame: abandon, free, a failed transport. */
static void test_HR_STREAM_10_abandon_writes_no_end_frame(void **state) {
    (void)state;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    const uint8_t *d;
    size_t n;
    static struct readout o;
    assert_status(hurray_stream_writer_create_memory(NULL, &w, NULL), HURRAY_OK);
    assert_status(hurray_stream_writer_write(w, t, NULL), HURRAY_OK);
    hurray_stream_writer_abandon(w);
    hurray_stream_writer_abandon(w); /* idempotent */
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_E_ARGUMENT);
    assert_non_null(strstr(err.message, "abandoned"));
    assert_status(hurray_stream_writer_finish(w, &err), HURRAY_OK); /* does nothing */
    assert_status(hurray_stream_writer_getvalue(w, &d, &n, NULL), HURRAY_OK);
    assert_int_equal(n, 104);
    assert_int_equal(read_end(d, n, NULL, &o, NULL), HURRAY_STREAM_END_EOF);
    readout_free(&o);
    hurray_stream_writer_destroy(w);
    hurray_stream_writer_abandon(NULL);

    /* freed unfinished, over a pipe: the reader sees eof, not an end frame */
    int fds[2];
    struct hurray_stream_reader *r = NULL;
    assert_int_equal(pipe(fds), 0);
    assert_status(hurray_stream_writer_create_fd(fds[1], NULL, &w, NULL), HURRAY_OK);
    assert_status(hurray_stream_writer_write(w, t, NULL), HURRAY_OK);
    hurray_stream_writer_destroy(w);
    close(fds[1]);
    assert_status(hurray_stream_reader_create_fd(fds[0], NULL, &r, NULL), HURRAY_OK);
    read_all(r, &o);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 1);
    assert_int_equal(hurray_stream_reader_end(r), HURRAY_STREAM_END_EOF);
    hurray_stream_reader_destroy(r);
    readout_free(&o);
    close(fds[0]);

    /* a writer whose transport failed writes no end frame at finish */
    assert_status(hurray_stream_writer_create_callback(failing_write, NULL, NULL, &w, NULL),
                  HURRAY_OK);
    assert_status(hurray_stream_writer_write(w, t, NULL), HURRAY_E_IO);
    assert_status(hurray_stream_writer_finish(w, &err), HURRAY_E_IO);
    assert_int_equal(failing_write_calls, 1); /* the item's one attempt, no end frame */
    hurray_stream_writer_destroy(w);
    hurray_item_destroy(t);
}

/* ==== timeouts and interruption (HR-STREAM-14) ============================================== */

static void test_HR_STREAM_14_reader_timeout(void **state) {
    (void)state;
    int fds[2];
    struct hurray_stream_reader_options ro;
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = NULL, *t = tb_tensor(F32, 2, S23, 0);
    struct hurray_error err, again;
    struct bytes b = write_items(&t, 1, NULL);
    hurray_stream_reader_options_init(&ro);
    ro.timeout_ms = -1;
    assert_int_equal(pipe(fds), 0);
    assert_status(hurray_stream_reader_create_fd(fds[0], &ro, &r, &err), HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "timeout_ms");
    ro.timeout_ms = 30;
    /* silent before the first item */
    assert_status(hurray_stream_reader_create_fd(fds[0], &ro, &r, NULL), HURRAY_OK);
    assert_status(hurray_stream_reader_next(r, &it, &err), HURRAY_E_IO);
    assert_int_equal(err.sys_errno, ETIMEDOUT);
    assert_non_null(strstr(err.message, "timeout"));
    assert_status(hurray_stream_reader_next(r, &it, &again), HURRAY_E_IO); /* sticky */
    assert_int_equal(again.sys_errno, ETIMEDOUT);
    assert_int_equal(hurray_stream_reader_end(r), HURRAY_STREAM_NOT_ENDED);
    hurray_stream_reader_destroy(r);
    /* silent in the middle of an item's buffer: the partial item is dropped */
    struct test_alloc ta;
    test_alloc_init(&ta, 0);
    ro.allocator = test_alloc_get(&ta);
    assert_status(hurray_stream_reader_create_fd(fds[0], &ro, &r, NULL), HURRAY_OK);
    assert_int_equal(write(fds[1], b.p, 90), 90);
    assert_status(hurray_stream_reader_next(r, &it, &err), HURRAY_E_IO);
    assert_int_equal(err.sys_errno, ETIMEDOUT);
    assert_int_equal(hurray_stream_reader_offset(r), 90);
    hurray_stream_reader_destroy(r);
    assert_alloc_clean(&ta);
    close(fds[0]);
    close(fds[1]);
    hurray_item_destroy(t);
    free(b.p);
}

static void test_HR_STREAM_14_writer_timeout(void **state) {
    (void)state;
    int fds[2];
    struct hurray_stream_writer_options wo;
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    const uint64_t big[1] = {1u << 20}; /* 4 MiB: more than a pipe holds */
    struct hurray_item *t = tb_tensor(F32, 1, big, 2);
    hurray_stream_writer_options_init(&wo);
    wo.timeout_ms = -5;
    assert_int_equal(pipe(fds), 0);
    assert_status(hurray_stream_writer_create_fd(fds[1], &wo, &w, &err), HURRAY_E_ARGUMENT);
    wo.timeout_ms = 30;
    assert_status(hurray_stream_writer_create_fd(fds[1], &wo, &w, NULL), HURRAY_OK);
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_E_IO); /* nobody reads */
    assert_int_equal(err.sys_errno, ETIMEDOUT);
    assert_non_null(strstr(err.message, "timeout"));
    assert_status(hurray_stream_writer_write(w, t, &err), HURRAY_E_IO); /* failed for good */
    assert_status(hurray_stream_writer_finish(w, &err), HURRAY_E_IO);
    hurray_stream_writer_destroy(w);
    close(fds[0]);
    close(fds[1]);
    hurray_item_destroy(t);
}

static volatile sig_atomic_t alarm_count;
static void count_alarm(int sig) {
    (void)sig;
    alarm_count++;
}
static int stop_on_second(void *ctx) {
    int *calls = ctx;
    return ++*calls >= 2;
}

/* A signal during a blocked read runs the hook; the hook decides whether the
 * read resumes or stops (IO, EINTR, sticky). */
static void test_HR_STREAM_14_interrupt_hook(void **state) {
    (void)state;
    int fds[2];
    struct hurray_stream_reader_options ro;
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = NULL;
    struct hurray_error err;
    struct sigaction sa, old;
    int calls = 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = count_alarm; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    struct itimerval every = {{0, 20000}, {0, 20000}}, off = {{0, 0}, {0, 0}};
    assert_int_equal(pipe(fds), 0);
    hurray_stream_reader_options_init(&ro);
    ro.on_interrupt = stop_on_second;
    ro.interrupt_ctx = &calls;
    ro.timeout_ms = 20000; /* a hook that is never called would fail, not hang */
    assert_status(hurray_stream_reader_create_fd(fds[0], &ro, &r, NULL), HURRAY_OK);
    assert_int_equal(setitimer(ITIMER_REAL, &every, NULL), 0);
    int st = hurray_stream_reader_next(r, &it, &err);
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    assert_status(st, HURRAY_E_IO);
    assert_int_equal(err.sys_errno, EINTR);
    assert_int_equal(calls, 2); /* resumed after the first, stopped at the second */
    assert_true(alarm_count >= 2);
    assert_status(hurray_stream_reader_next(r, &it, &err), HURRAY_E_IO);
    assert_int_equal(err.sys_errno, EINTR);
    hurray_stream_reader_destroy(r);
    close(fds[0]);
    close(fds[1]);
}

/* A signal that landed before the wait began interrupts no system call: the hook
 * still runs within one slice of the wait, so a pending Ctrl-C is not lost while
 * the peer stays silent (no signal is sent here at all: the flag stands for the
 * handler's "pending" mark, set before the read). */
static int stop_if_pending(void *ctx) {
    int *pending = ctx;
    if (*pending < 0) return ++*pending == 0; /* resume once, then stop: a slice resumed */
    return *pending;
}

static void test_HR_STREAM_14_hook_runs_without_a_signal(void **state) {
    (void)state;
    int fds[2];
    struct hurray_stream_reader_options ro;
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = NULL;
    struct hurray_error err;
    int pending = 1;
    assert_int_equal(pipe(fds), 0);
    hurray_stream_reader_options_init(&ro);
    ro.on_interrupt = stop_if_pending;
    ro.interrupt_ctx = &pending;
    assert_status(hurray_stream_reader_create_fd(fds[0], &ro, &r, NULL), HURRAY_OK);
    assert_status(hurray_stream_reader_next(r, &it, &err), HURRAY_E_IO);
    assert_int_equal(err.sys_errno, EINTR);
    hurray_stream_reader_destroy(r);
    pending = -2; /* the hook resumes after the first slice and stops at the second */
    assert_status(hurray_stream_reader_create_fd(fds[0], &ro, &r, NULL), HURRAY_OK);
    assert_status(hurray_stream_reader_next(r, &it, &err), HURRAY_E_IO);
    assert_int_equal(err.sys_errno, EINTR);
    assert_int_equal(pending, 0);
    hurray_stream_reader_destroy(r);
    close(fds[0]);
    close(fds[1]);
}

/* ==== close from another thread (HR-STREAM-15) ============================================= */

struct blocked_job {
    struct hurray_stream_reader *r;
    int status;
    struct hurray_item *item;
    struct hurray_error err;
    atomic_int entered;
};

static void *blocked_next(void *arg) {
    struct blocked_job *j = arg;
    atomic_store(&j->entered, 1);
    j->status = hurray_stream_reader_next(j->r, &j->item, &j->err);
    return NULL;
}

/* A next blocked on a silent pipe -- before any byte, or in the middle of an
 * item -- is woken by a close from another thread: it returns "no more
 * items", the partial item is dropped, the offset is readable meanwhile. The
 * reader's 20 s timeout turns a close that does not wake it into a failure
 * rather than a hang. */
static void test_HR_STREAM_15_close_wakes_a_blocked_next(void **state) {
    (void)state;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 4);
    struct bytes b = write_items(&t, 1, NULL);
    for (int partial = 0; partial < 2; partial++) {
        int fds[2];
        struct test_alloc ta;
        struct hurray_stream_reader_options ro;
        struct blocked_job j;
        pthread_t th;
        memset(&j, 0, sizeof j);
        atomic_init(&j.entered, 0);
        assert_int_equal(pipe(fds), 0);
        test_alloc_init(&ta, 0);
        hurray_stream_reader_options_init(&ro);
        ro.allocator = test_alloc_get(&ta);
        ro.timeout_ms = 20000;
        assert_status(hurray_stream_reader_create_fd(fds[0], &ro, &j.r, NULL), HURRAY_OK);
        if (partial) assert_int_equal(write(fds[1], b.p, 90), 90);
        assert_int_equal(pthread_create(&th, NULL, blocked_next, &j), 0);
        while (!atomic_load(&j.entered)) sched_yield();
        /* the offset from this thread, whenever (a single atomic value) */
        uint64_t seen = hurray_stream_reader_offset(j.r);
        assert_true(seen <= (partial ? 90u : 0u));
        struct timespec pause = {0, 20 * 1000 * 1000}; /* very likely blocked by now */
        nanosleep(&pause, NULL);
        hurray_stream_reader_close(j.r); /* returns at once: it does not wait */
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_status(j.status, HURRAY_OK); /* woken: no more items, not a timeout */
        assert_null(j.item);
        assert_int_equal(hurray_stream_reader_end(j.r), HURRAY_STREAM_NOT_ENDED);
        struct hurray_item *it = (struct hurray_item *)1;
        assert_status(hurray_stream_reader_next(j.r, &it, NULL), HURRAY_OK); /* exhausted */
        assert_null(it);
        hurray_stream_reader_close(j.r); /* idempotent */
        hurray_stream_reader_destroy(j.r);
        assert_alloc_clean(&ta); /* the partial item went with the close */
        close(fds[0]);
        close(fds[1]);
    }
    hurray_item_destroy(t);
    free(b.p);
}

struct race_job {
    struct hurray_stream_reader *r;
    size_t items;
    int status;
};

static void *drain(void *arg) {
    struct race_job *j = arg;
    for (;;) {
        struct hurray_item *it = NULL;
        j->status = hurray_stream_reader_next(j->r, &it, NULL);
        if (j->status != HURRAY_OK || !it) return NULL;
        hurray_item_destroy(it);
        j->items++;
    }
}

static void *close_it(void *arg) {
    hurray_stream_reader_close(arg);
    return NULL;
}

/* Close at any moment of a read in progress -- before, during, after, from
 * two threads at once: no crash, no leak, the reader ends as exhausted with a
 * prefix of the items. Run under TSan and ASan (make sanitize, tsan below). */
static void test_HR_STREAM_15_close_races(void **state) {
    (void)state;
    struct hurray_item *items[MIXED_COUNT];
    mixed_items(items);
    struct bytes b = write_finished(items, MIXED_COUNT);
    for (unsigned round = 0; round < 200; round++) {
        struct test_alloc ta;
        struct hurray_stream_reader_options ro;
        struct race_job j = {NULL, 0, -1};
        pthread_t reader, closers[2];
        test_alloc_init(&ta, 0);
        hurray_stream_reader_options_init(&ro);
        ro.allocator = test_alloc_get(&ta);
        assert_status(hurray_stream_reader_create_memory(b.p, b.n, &ro, &j.r, NULL), HURRAY_OK);
        assert_int_equal(pthread_create(&reader, NULL, drain, &j), 0);
        for (unsigned k = 0; k < round % 50; k++) sched_yield();
        assert_int_equal(pthread_create(&closers[0], NULL, close_it, j.r), 0);
        assert_int_equal(pthread_create(&closers[1], NULL, close_it, j.r), 0);
        (void)hurray_stream_reader_offset(j.r);
        (void)hurray_stream_reader_end(j.r);
        for (int c = 0; c < 2; c++) assert_int_equal(pthread_join(closers[c], NULL), 0);
        assert_int_equal(pthread_join(reader, NULL), 0);
        assert_status(j.status, HURRAY_OK);
        assert_true(j.items <= MIXED_COUNT);
        hurray_stream_reader_destroy(j.r);
        assert_alloc_clean(&ta);
    }
    free_items(items, MIXED_COUNT);
    free(b.p);
}

/* A read function that waits until released: a next stays inside it. */
struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int inside, open;
};

static int gated_read(void *ctx, uint8_t *dst, size_t cap, size_t *got, struct hurray_error *err) {
    struct gate *g = ctx;
    (void)dst;
    (void)cap;
    (void)err;
    pthread_mutex_lock(&g->mu);
    g->inside = 1;
    pthread_cond_broadcast(&g->cv);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    *got = 0; /* then the end of input */
    return HURRAY_OK;
}

/* Two nexts at once are refused (ARGUMENT), not raced; a close while a
 * callback read is inside the caller's function takes effect when it returns. */
static void test_HR_STREAM_15_second_next_refused(void **state) {
    (void)state;
    struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    struct blocked_job j;
    struct hurray_item *it = NULL;
    struct hurray_error err;
    pthread_t th;
    memset(&j, 0, sizeof j);
    atomic_init(&j.entered, 0);
    assert_status(hurray_stream_reader_create_callback(gated_read, &g, NULL, &j.r, NULL),
                  HURRAY_OK);
    assert_int_equal(pthread_create(&th, NULL, blocked_next, &j), 0);
    pthread_mutex_lock(&g.mu);
    while (!g.inside) pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
    assert_status(hurray_stream_reader_next(j.r, &it, &err), HURRAY_E_ARGUMENT);
    assert_non_null(strstr(err.message, "another thread"));
    hurray_stream_reader_close(j.r);
    pthread_mutex_lock(&g.mu);
    g.open = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_status(j.status, HURRAY_OK);
    assert_null(j.item);
    /* closed before the end of input was seen: no end state */
    assert_int_equal(hurray_stream_reader_end(j.r), HURRAY_STREAM_NOT_ENDED);
    hurray_stream_reader_destroy(j.r);
}

/* ==== memory committed as bytes arrive (HR-STREAM-16) ======================================== */

/* Sanitizers map memory of their own (shadow, quarantine): a data limit breaks
 * them and their resident size is not the reader's. Their builds check the
 * outcomes here; the plain build (make test-c) checks the bounds too. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                     \
    __has_feature(memory_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

/* Whether this build and run measures memory as the reader uses it (not under a sanitizer
 * or valgrind: their shadow memory is in the resident size). */
static int measures_memory(void) { return !UNDER_SANITIZER && !test_under_valgrind(); }

/* Linux: /proc/self/status fields in bytes, -1 where unknown. */
static long long status_bytes(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long v = -1;
    size_t k = strlen(key);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, k) == 0 && line[k] == ':') v = strtoll(line + k + 1, NULL, 10) * 1024;
    fclose(f);
    return v;
}

/* Resets the peak (VmHWM) to the current resident size; 0 on success. */
static int reset_peak(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

struct child_report {
    int status;
    size_t items;
    long long peak_over_baseline; /* bytes; -1 unknown */
    uint64_t checksum;
    int data_limited;             /* RLIMIT_DATA was set */
};

static uint64_t fnv(const uint8_t *p, uint64_t n) {
    uint64_t h = 1469598103934665603u;
    for (uint64_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211u;
    return h;
}

/* Forks a child that reads a stream from in_fd under a data limit far below
 * the claims (RLIMIT_DATA counts private writable memory: commits, not
 * reservations) and reports its items, status, a checksum of the buffers and
 * its peak resident memory over its baseline. *rep receives the report pipe. */
static pid_t spawn_reader(int in_fd, int wr_end, const struct hurray_limits *lim, int *rep) {
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct child_report c;
        struct hurray_stream_reader_options ro;
        struct hurray_stream_reader *r = NULL;
        memset(&c, 0, sizeof c); /* padding too: the report is written whole */
        c.status = -1;
        c.peak_over_baseline = -1;
        close(p[0]);
        if (wr_end >= 0) close(wr_end);
        if (measures_memory()) { /* sanitizers and valgrind map their own memory */
            struct rlimit rl = {256u << 20, 256u << 20};
            c.data_limited = setrlimit(RLIMIT_DATA, &rl) == 0;
        }
        hurray_stream_reader_options_init(&ro);
        ro.limits = lim;
        long long base = reset_peak() == 0 ? status_bytes("VmRSS") : -1;
        c.status = hurray_stream_reader_create_fd(in_fd, &ro, &r, NULL);
        for (;;) {
            struct hurray_item *it = NULL;
            if (c.status == HURRAY_OK) c.status = hurray_stream_reader_next(r, &it, NULL);
            if (c.status != HURRAY_OK || !it) break;
            c.items++;
            for (unsigned i = 0; i < it->descriptor->buffer_count; i++)
                c.checksum ^= fnv(it->buffers[i].data, it->buffers[i].size);
            hurray_item_destroy(it);
        }
        long long peak = status_bytes("VmHWM");
        c.peak_over_baseline = base >= 0 && peak >= 0 ? peak - base : -1;
        hurray_stream_reader_destroy(r);
        ssize_t wrote = write(p[1], &c, sizeof c);
        _exit(wrote == (ssize_t)sizeof c ? 0 : 1);
    }
    close(p[1]);
    *rep = p[0];
    return pid;
}

static struct child_report collect(pid_t pid, int rep) {
    struct child_report c = {-1, 0, -1, 0, 0};
    int ws = 0;
    assert_int_equal(read(rep, &c, sizeof c), (ssize_t)sizeof c);
    close(rep);
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    return c;
}

/* 96 bytes that declare a 16 GiB buffer (at the default max_buffer_bytes):
 * TRUNCATED, having committed nothing near the claim -- under a 256 MiB data
 * limit, which a reader that allocated the claim would hit (NOMEM), and at a
 * peak resident size within 1 MiB of the baseline. */
static void test_HR_STREAM_16_claim_commits_nothing(void **state) {
    (void)state;
    if (sizeof(size_t) < 8) skip(); /* a 32-bit process cannot reserve 16 GiB */
    struct bytes b = huge_claim(UINT64_C(1) << 34);
    b.n = 8 + 72 + 16;
    assert_int_equal(b.n, 96);
    int fds[2], rep;
    assert_int_equal(pipe(fds), 0);
    pid_t pid = spawn_reader(fds[0], fds[1], NULL, &rep);
    close(fds[0]);
    assert_int_equal(write(fds[1], b.p, b.n), (ssize_t)b.n);
    close(fds[1]);
    struct child_report c = collect(pid, rep);
    assert_status(c.status, HURRAY_E_TRUNCATED);
    assert_int_equal(c.items, 0);
    print_message("    96-byte claim of 16 GiB: peak %lld bytes over baseline%s\n",
                  c.peak_over_baseline, c.data_limited ? ", under a 256 MiB data limit" : "");
    if (measures_memory()) {
        assert_true(c.data_limited);
        assert_true(c.peak_over_baseline >= 0 && c.peak_over_baseline <= (1 << 20));
    }
    free(b.p);
}

/* A 64 MiB frame through a pipe peaks at its size plus at most 1 MiB: read into
 * place, no second copy, no growth by reallocation. */
static void test_HR_STREAM_16_large_frame_peak(void **state) {
    (void)state;
    int fds[2], rep;
    assert_int_equal(pipe(fds), 0);
    pid_t pid = spawn_reader(fds[0], fds[1], NULL, &rep); /* before the item exists here */
    close(fds[0]);
    const uint64_t n[1] = {16u << 20}; /* float32: 64 MiB */
    struct hurray_item *t = tb_tensor(F32, 1, n, 9);
    struct hurray_stream_writer *w = NULL;
    assert_status(hurray_stream_writer_create_fd(fds[1], NULL, &w, NULL), HURRAY_OK);
    assert_status(hurray_stream_writer_write(w, t, NULL), HURRAY_OK);
    assert_status(hurray_stream_writer_finish(w, NULL), HURRAY_OK);
    hurray_stream_writer_destroy(w);
    close(fds[1]);
    struct child_report c = collect(pid, rep);
    assert_status(c.status, HURRAY_OK);
    assert_int_equal(c.items, 1);
    assert_true(c.checksum == fnv(t->buffers[0].data, t->buffers[0].size));
    print_message("    64 MiB frame: peak %lld bytes over baseline (%+lld beyond the frame)\n",
                  c.peak_over_baseline, c.peak_over_baseline - (64ll << 20));
    if (measures_memory()) {
        /* the kernel's RSS counters are approximate (batched per CPU): a few
         * hundred KiB either way, so the frame shows as 64 MiB give or take */
        assert_true(c.peak_over_baseline >= (63ll << 20));
        assert_true(c.peak_over_baseline <= (65ll << 20));
    }
    hurray_item_destroy(t);
}

/* Large buffers are reserved and committed step by step: their address is
 * fixed and aligned, their bytes right, across every step boundary, and they
 * free without the allocator. */
static void test_HR_STREAM_16_reserved_buffers(void **state) {
    (void)state;
    struct test_alloc ta;
    struct hurray_stream_reader_options ro;
    const uint64_t n[1] = {(3u << 20) + 5}; /* uint8: three steps and a bit */
    struct hurray_item *t = tb_tensor(HURRAY_DTYPE_UINT8, 1, n, 6);
    TEST_PATCH_BUFFER(t->descriptor, 0, alignment_log2, 12);
    struct bytes b = write_items(&t, 1, NULL);
    static struct readout o;
    test_alloc_init(&ta, 0);
    hurray_stream_reader_options_init(&ro);
    ro.allocator = test_alloc_get(&ta);
    /* one byte at a time through a callback: every commit boundary is crossed mid-read */
    struct trickle tr = {b.p, b.n, 0};
    struct hurray_stream_reader *r = NULL;
    assert_status(hurray_stream_reader_create_callback(trickle_read, &tr, &ro, &r, NULL), HURRAY_OK);
    read_all(r, &o);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 1);
    assert_true(tb_item_equal(o.items[0], t));
    assert_int_equal((uintptr_t)o.items[0]->buffers[0].data % 4096, 0);
    assert_true(ta.peak_bytes < (1u << 20)); /* the 3 MiB did not come from the allocator */
    hurray_stream_reader_destroy(r);
    readout_free(&o);
    assert_alloc_clean(&ta);
    hurray_item_destroy(t);
    free(b.p);
}

/* A reservation its reader's consumer released is reused for the next buffer of
 * the same size and alignment (stream.md HR-STREAM-16, informative): the same
 * address, every byte the new item's (nothing of the old one shows through),
 * also when the item before failed partway; a buffer of another size gets a
 * block of its own. */
static void reservation_reused(uint64_t size) {
    const uint64_t n[1] = {size}, m[1] = {(1u << 20) + 9};
    struct hurray_item *t[4] = {tb_tensor(HURRAY_DTYPE_UINT8, 1, n, 21),
                                tb_tensor(HURRAY_DTYPE_UINT8, 1, n, 22),
                                tb_tensor(HURRAY_DTYPE_UINT8, 1, n, 23),
                                tb_tensor(HURRAY_DTYPE_UINT8, 1, m, 24)};
    struct bytes b[4];
    for (int i = 0; i < 4; i++) b[i] = write_items(&t[i], 1, NULL);
    struct hurray_item *it = NULL;
    struct hurray_stream_reader *r = NULL;
    assert_status(hurray_stream_reader_create_memory(b[0].p, b[0].n, NULL, &r, NULL), HURRAY_OK);
    assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_OK);
    assert_true(tb_item_equal(it, t[0]));
    const uint8_t *first = it->buffers[0].data;
    hurray_item_destroy(it); /* released: kept for the next of its size */
    hurray_stream_reader_destroy(r);
    /* a second reader, a truncated frame of the same size: fails, its block kept again */
    assert_status(hurray_stream_reader_create_memory(b[1].p, b[1].n - 4096, NULL, &r, NULL),
                  HURRAY_OK);
    assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_E_TRUNCATED);
    hurray_stream_reader_destroy(r);
    assert_status(hurray_stream_reader_create_memory(b[2].p, b[2].n, NULL, &r, NULL), HURRAY_OK);
    assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_OK);
    assert_ptr_equal(it->buffers[0].data, first);
    assert_true(tb_item_equal(it, t[2]));
    assert_false(tb_item_equal(it, t[0]));
    struct hurray_item *kept = it; /* held: the next block is a fresh one */
    hurray_stream_reader_destroy(r);
    assert_status(hurray_stream_reader_create_memory(b[3].p, b[3].n, NULL, &r, NULL), HURRAY_OK);
    assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_OK);
    assert_true(it->buffers[0].data != first);
    assert_true(tb_item_equal(it, t[3]));
    hurray_stream_reader_destroy(r);
    hurray_item_destroy(it);
    hurray_item_destroy(kept);
    for (int i = 0; i < 4; i++) {
        hurray_item_destroy(t[i]);
        free(b[i].p);
    }
}

/* Both kinds of kept block: one of at most 2 MiB keeps its pages as they are
 * (HRI_KEEP_RESIDENT_BYTES); a larger one's pages are given up (MADV_FREE). */
static void test_HR_STREAM_16_released_reservation_reused(void **state) {
    (void)state;
    reservation_reused((2u << 20) + 3);
    reservation_reused((3u << 20) + 3);
}

/* HR-STREAM-15: a read that finds its bytes waiting never waits, so a close
 * must be seen between reads too -- here made from inside the transport while
 * a large buffer streams in: the item is dropped, "no more items", no error. */
struct closing_read {
    struct trickle t;
    struct hurray_stream_reader *r;
    size_t calls;
};

static int closing_read(void *ctx, uint8_t *dst, size_t cap, size_t *got,
                        struct hurray_error *err) {
    struct closing_read *c = ctx;
    (void)err;
    if (++c->calls == 3) hurray_stream_reader_close(c->r);
    size_t k = c->t.n - c->t.pos < cap ? c->t.n - c->t.pos : cap;
    if (k > 4096) k = 4096;
    memcpy(dst, c->t.p + c->t.pos, k);
    c->t.pos += k;
    *got = k;
    return HURRAY_OK;
}

static void test_HR_STREAM_15_close_seen_between_reads(void **state) {
    (void)state;
    const uint64_t n[1] = {1u << 20};
    struct hurray_item *t = tb_tensor(HURRAY_DTYPE_UINT8, 1, n, 31), *it = NULL;
    struct bytes b = write_items(&t, 1, NULL);
    struct closing_read c = {{b.p, b.n, 0}, NULL, 0};
    struct hurray_error err;
    assert_status(hurray_stream_reader_create_callback(closing_read, &c, NULL, &c.r, NULL),
                  HURRAY_OK);
    assert_status(hurray_stream_reader_next(c.r, &it, &err), HURRAY_OK);
    assert_null(it);
    assert_int_equal(c.calls, 3); /* not one read more after the close */
    assert_true(c.t.pos < b.n);
    assert_status(hurray_stream_reader_next(c.r, &it, &err), HURRAY_OK);
    assert_null(it);
    assert_int_equal(hurray_stream_reader_end(c.r), HURRAY_STREAM_NOT_ENDED);
    hurray_stream_reader_destroy(c.r);
    hurray_item_destroy(t);
    free(b.p);
}

/* ==== allocation failure ======================================================================= */

struct sweep_state {
    struct bytes b;
    struct hurray_item **items;
};

static int read_sweep_body(const struct hurray_allocator *a, void *arg) {
    struct sweep_state *s = arg;
    struct hurray_stream_reader_options ro;
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = NULL;
    size_t n = 0;
    hurray_stream_reader_options_init(&ro);
    ro.allocator = a;
    int st = hurray_stream_reader_create_memory(s->b.p, s->b.n, &ro, &r, NULL);
    while (st == HURRAY_OK) {
        st = hurray_stream_reader_next(r, &it, NULL);
        if (st != HURRAY_OK || !it) break;
        assert_true(tb_item_equal(it, s->items[n++]));
        hurray_item_destroy(it);
    }
    if (st == HURRAY_OK) assert_int_equal(n, MIXED_COUNT);
    hurray_stream_reader_destroy(r);
    return st;
}

static int write_sweep_body(const struct hurray_allocator *a, void *arg) {
    struct sweep_state *s = arg;
    struct hurray_stream_writer_options wo;
    struct hurray_stream_writer *w = NULL;
    const uint8_t *d;
    size_t n;
    hurray_stream_writer_options_init(&wo);
    wo.allocator = a;
    int st = hurray_stream_writer_create_memory(&wo, &w, NULL);
    for (size_t i = 0; st == HURRAY_OK && i < MIXED_COUNT; i++)
        st = hurray_stream_writer_write(w, s->items[i], NULL);
    if (st == HURRAY_OK) {
        assert_status(hurray_stream_writer_getvalue(w, &d, &n, NULL), HURRAY_OK);
        assert_bytes_equal(d, n, s->b.p, s->b.n);
    }
    hurray_stream_writer_destroy(w);
    return st;
}

static void test_HR_STREAM_7_nomem_everywhere(void **state) {
    (void)state;
    struct hurray_item *items[MIXED_COUNT];
    mixed_items(items);
    struct sweep_state s = {write_items(items, MIXED_COUNT, NULL), items};
    unsigned long reads = test_alloc_sweep(read_sweep_body, &s);
    unsigned long writes = test_alloc_sweep(write_sweep_body, &s);
    assert_true(reads > 20);
    assert_true(writes >= 2);
    free(s.b.p);
    free_items(items, MIXED_COUNT);
}

static void test_HR_STREAM_11_argument_checks(void **state) {
    (void)state;
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = NULL;
    assert_status(hurray_stream_reader_create_memory(NULL, 5, NULL, &r, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_stream_reader_create_memory(NULL, 0, NULL, NULL, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_stream_reader_next(NULL, &it, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_stream_writer_create_memory(NULL, NULL, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_stream_writer_finish(NULL, NULL), HURRAY_E_ARGUMENT);
    assert_int_equal(hurray_stream_reader_offset(NULL), 0);
    assert_int_equal(hurray_stream_writer_offset(NULL), 0);
}


/* ==== annotations (HR-STREAM-17, HR-STREAM-18) ================================ */

static struct hurray_kv_value kv_str(const char *s) {
    struct hurray_kv_value v;
    memset(&v, 0, sizeof v);
    v.type = HURRAY_KV_STRING;
    v.v.bytes.data = (const uint8_t *)s;
    v.v.bytes.len = strlen(s);
    return v;
}
static struct hurray_kv_value kv_i64(int64_t x) {
    struct hurray_kv_value v;
    memset(&v, 0, sizeof v);
    v.type = HURRAY_KV_INT64;
    v.v.i64 = x;
    return v;
}
static struct hurray_kv_entry kv_entry(const char *key, struct hurray_kv_value v) {
    struct hurray_kv_entry e;
    e.key = key;
    e.key_len = (uint32_t)strlen(key);
    e.value = v;
    return e;
}
static struct hurray_stream_annotation ann(const char *name, const struct hurray_kv_entry *md,
                                           size_t n) {
    struct hurray_stream_annotation a;
    a.name = name;
    a.name_len = name ? (uint32_t)strlen(name) : 0;
    a.metadata = md;
    a.metadata_count = n;
    return a;
}

/* Writes items, item i with anns[i] (NULL: none); finished or not. */
static struct bytes write_annotated(struct hurray_item *const *items,
                                    const struct hurray_stream_annotation *const *anns, size_t n,
                                    int finish) {
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    const uint8_t *data = NULL;
    struct bytes b = {NULL, 0};
    assert_status(hurray_stream_writer_create_memory(NULL, &w, &err), HURRAY_OK);
    for (size_t i = 0; i < n; i++) {
        int st = hurray_stream_writer_write_annotated(w, items[i], anns[i], &err);
        if (st != HURRAY_OK) print_error("write item %zu: %s\n", i, err.message);
        assert_status(st, HURRAY_OK);
    }
    if (finish) assert_status(hurray_stream_writer_finish(w, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_getvalue(w, &data, &b.n, &err), HURRAY_OK);
    b.p = tb_calloc(b.n + 64);
    memcpy(b.p, data, b.n);
    hurray_stream_writer_destroy(w);
    return b;
}

static const uint8_t ANN_EXAMPLE[72] = {
    0x48, 0x52, 0x53, 0x46, 0x04, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0,
    0x28, 0, 0, 0, 0, 0, 0, 0, 0x77, 0, 0, 0, 0, 0, 0, 0,
    0x01, 0, 0, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0x05, 0, 0, 0,
    0x75, 0x6E, 0x69, 0x74, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0,
    0x6D, 0, 0, 0, 0, 0, 0, 0};

/* stream.md § Annotation frame, worked example: "w", {"unit": "m"}: a 72-byte
 * annotation frame, then the tensor frame exactly as without it. */
static void test_HR_STREAM_17_worked_example(void **state) {
    (void)state;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    struct hurray_kv_entry md[1] = {kv_entry("unit", kv_str("m"))};
    struct hurray_stream_annotation a = ann("w", md, 1);
    const struct hurray_stream_annotation *anns[1] = {&a};
    struct bytes plain = write_items(&t, 1, NULL);
    struct bytes b = write_annotated(&t, anns, 1, 0);
    assert_int_equal(b.n, 72 + plain.n);
    assert_bytes_equal(b.p, 72, ANN_EXAMPLE, 72);
    assert_bytes_equal(b.p + 72, plain.n, plain.p, plain.n);
    /* read back: the item with its name and metadata */
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = NULL;
    struct hurray_stream_annotation got;
    assert_status(hurray_stream_reader_create_memory(b.p, b.n, NULL, &r, NULL), HURRAY_OK);
    assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_OK);
    assert_non_null(it);
    assert_true(tb_item_equal(it, t));
    assert_int_equal(hurray_stream_reader_offset(r), b.n);
    hurray_stream_reader_annotation(r, &got);
    assert_int_equal(got.name_len, 1);
    assert_memory_equal(got.name, "w", 1);
    assert_true(hurray_kv_entries_equal(got.metadata, got.metadata_count, md, 1));
    hurray_item_destroy(it);
    /* at the end: no item, no annotation */
    assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_OK);
    assert_null(it);
    hurray_stream_reader_annotation(r, &got);
    assert_int_equal(got.name_len, 0);
    assert_null(got.name);
    assert_int_equal(got.metadata_count, 0);
    hurray_stream_reader_destroy(r);
    /* neither a name nor metadata (or an empty map): no annotation frame */
    struct hurray_stream_annotation none = ann(NULL, NULL, 0);
    const struct hurray_stream_annotation *nones[1] = {&none};
    struct bytes c = write_annotated(&t, nones, 1, 0);
    assert_bytes_equal(c.p, c.n, plain.p, plain.n);
    hurray_item_destroy(t);
    free(plain.p);
    free(b.p);
    free(c.p);
}

/* Mixed items, some named, some with metadata, a composite annotated: read
 * back with their annotations (none for the others), the offsets of the items,
 * and rewritten byte for byte (HR-STREAM-10); truncation at every byte is the
 * clean end exactly at item boundaries (HR-STREAM-4, HR-STREAM-18). */
static void test_HR_STREAM_18_round_trip_and_truncation(void **state) {
    (void)state;
    struct hurray_item *items[MIXED_COUNT];
    mixed_items(items);
    /* given sorted: hurray_kv_entries_equal compares in order */
    struct hurray_kv_entry md0[2] = {kv_entry("a", kv_str("x")), kv_entry("step", kv_i64(-7))};
    struct hurray_kv_entry md1[1] = {kv_entry("layer", kv_i64(3))};
    struct hurray_stream_annotation a0 = ann("weights.0", md0, 2), a1 = ann(NULL, md1, 1),
                                    a3 = ann("\xC3\xA9t\xC3\xA9", NULL, 0);
    const struct hurray_stream_annotation *anns[MIXED_COUNT] = {&a0, &a1, NULL, &a3, NULL};
    struct bytes b = write_annotated(items, anns, MIXED_COUNT, 1);
    struct hurray_stream_reader *r = NULL;
    struct hurray_stream_writer *w = NULL;
    const uint8_t *again = NULL;
    size_t again_n = 0, k = 0;
    uint64_t ends[MIXED_COUNT];
    assert_status(hurray_stream_reader_create_memory(b.p, b.n, NULL, &r, NULL), HURRAY_OK);
    assert_status(hurray_stream_writer_create_memory(NULL, &w, NULL), HURRAY_OK);
    for (;;) {
        struct hurray_item *it = NULL;
        struct hurray_stream_annotation got;
        assert_status(hurray_stream_reader_next(r, &it, NULL), HURRAY_OK);
        if (!it) break;
        assert_true(tb_item_equal(it, items[k]));
        hurray_stream_reader_annotation(r, &got);
        const struct hurray_stream_annotation *want = anns[k];
        assert_int_equal(got.name_len, want ? want->name_len : 0);
        if (got.name_len) assert_memory_equal(got.name, want->name, got.name_len);
        assert_int_equal(got.metadata_count, want ? want->metadata_count : 0);
        if (got.metadata_count)
            assert_true(hurray_kv_entries_equal(got.metadata, got.metadata_count, want->metadata,
                                                want->metadata_count));
        assert_status(hurray_stream_writer_write_annotated(w, it, &got, NULL), HURRAY_OK);
        ends[k++] = hurray_stream_reader_offset(r);
        hurray_item_destroy(it);
    }
    assert_int_equal(k, MIXED_COUNT);
    assert_int_equal(hurray_stream_reader_end(r), HURRAY_STREAM_END_FRAME);
    assert_status(hurray_stream_writer_finish(w, NULL), HURRAY_OK);
    assert_status(hurray_stream_writer_getvalue(w, &again, &again_n, NULL), HURRAY_OK);
    assert_bytes_equal(again, again_n, b.p, b.n);
    hurray_stream_writer_destroy(w);
    hurray_stream_reader_destroy(r);
    /* every prefix: OK (end state eof) exactly at 0 and the item ends */
    for (size_t cut = 0; cut < b.n - 8; cut++) {
        struct readout o;
        size_t whole = 0;
        int boundary = cut == 0;
        for (size_t i = 0; i < MIXED_COUNT; i++) {
            if (ends[i] <= cut) whole++;
            if (ends[i] == cut) boundary = 1;
        }
        read_memory(b.p, cut, NULL, &o);
        assert_status(o.status, boundary ? HURRAY_OK : HURRAY_E_TRUNCATED);
        assert_int_equal(o.n, whole);
        readout_free(&o);
    }
    free_items(items, MIXED_COUNT);
    free(b.p);
}

static void expect_bytes(const uint8_t *p, size_t n, const struct hurray_stream_reader_options *opt,
                         int code, const char *field, size_t items) {
    struct readout o;
    read_memory(p, n, opt, &o);
    if (o.status != code) print_error("%s\n", o.err.message);
    assert_status(o.status, code);
    if (code != HURRAY_OK) assert_hurray_error(&o.err, code, field);
    assert_int_equal(o.n, items);
    readout_free(&o);
}

/* Every rule of the annotation frame and its place, in the decoding order. */
static void test_HR_STREAM_17_annotation_checks(void **state) {
    (void)state;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    struct hurray_item *p = two_rows();
    struct bytes plain = write_items(&t, 1, NULL);     /* 104 bytes */
    struct bytes comp = write_items(&p, 1, NULL);      /* head 72, members */
    size_t n = 72 + plain.n;
    uint8_t *buf = tb_calloc(2 * n + comp.n + 256);
    memcpy(buf, ANN_EXAMPLE, 72);
    memcpy(buf + 72, plain.p, plain.n);
    expect_bytes(buf, n, NULL, HURRAY_OK, NULL, 1);
    /* the head: reserved, name_length, kv_length, both zero */
    for (size_t i = 12; i < 16; i++) {
        buf[i] = 1;
        expect_bytes(buf, n, NULL, HURRAY_E_RESERVED_NONZERO, "annotation.reserved", 0);
        buf[i] = 0;
    }
    struct hurray_limits lim;
    hurray_limits_default(&lim);
    struct hurray_stream_reader_options ro;
    hurray_stream_reader_options_init(&ro);
    ro.limits = &lim;
    buf[8] = 0x01;
    buf[9] = 0x04; /* name_length 1025 > max_name_bytes 1024 */
    expect_bytes(buf, n, NULL, HURRAY_E_LIMIT, "annotation.name_length", 0);
    buf[9] = 0;
    buf[16] = 0x29; /* kv_length 41 */
    expect_bytes(buf, n, NULL, HURRAY_E_LENGTH, "annotation.kv_length", 0);
    buf[16] = 0x28;
    lim.max_kv_bytes = 32;
    expect_bytes(buf, n, &ro, HURRAY_E_LIMIT, "annotation.kv_length", 0);
    lim.max_kv_bytes = 40;
    expect_bytes(buf, n, &ro, HURRAY_OK, NULL, 1);
    lim.max_kv_entries = 0;
    expect_bytes(buf, n, &ro, HURRAY_E_LIMIT, "entry_count", 0);
    hurray_limits_default(&lim);
    buf[8] = 0;
    buf[16] = 0; /* neither: CONSTRAINT */
    expect_bytes(buf, n, NULL, HURRAY_E_CONSTRAINT, "annotation", 0);
    buf[8] = 1;
    buf[16] = 0x28;
    /* the name: padding, UTF-8, NUL */
    buf[25] = 1;
    expect_bytes(buf, n, NULL, HURRAY_E_RESERVED_NONZERO, "annotation.name.padding", 0);
    buf[25] = 0;
    buf[24] = 0xFF;
    expect_bytes(buf, n, NULL, HURRAY_E_CONSTRAINT, "annotation.name", 0);
    buf[24] = 0x00;
    expect_bytes(buf, n, NULL, HURRAY_E_CONSTRAINT, "annotation.name", 0);
    buf[24] = 0x77;
    /* the section: an entry_count of 0 with the same length is LENGTH (bytes left);
     * a lying string length is LENGTH (the section's length was declared) */
    buf[56] = 9;
    expect_bytes(buf, n, NULL, HURRAY_E_LENGTH, "entries[0].value", 0);
    buf[56] = 1;
    /* an empty map: an 8-byte section with entry_count 0 */
    {
        uint8_t e[8 + 24 + 8 + 104];
        memcpy(e, ANN_EXAMPLE, 24);
        e[16] = 8;
        memcpy(e + 24, "w\0\0\0\0\0\0\0", 8);
        memset(e + 32, 0, 8);
        memcpy(e + 40, plain.p, 104);
        expect_bytes(e, 144, NULL, HURRAY_E_CONSTRAINT, "annotation.metadata", 0);
    }
    /* its place: before an end frame, another annotation, nothing; inside a composite */
    static const uint8_t endf[8] = {'H', 'R', 'S', 'F', 0x03, 0, 0, 0};
    memcpy(buf + 72, endf, 8);
    expect_bytes(buf, 80, NULL, HURRAY_E_CONSTRAINT, "frame.kind", 0);
    memcpy(buf + 72, ANN_EXAMPLE, 72);
    memcpy(buf + 144, plain.p, plain.n);
    expect_bytes(buf, 144 + plain.n, NULL, HURRAY_E_CONSTRAINT, "frame.kind", 0);
    expect_bytes(buf, 72, NULL, HURRAY_E_TRUNCATED, "item", 0);
    memcpy(buf, comp.p, 72);
    memcpy(buf + 72, ANN_EXAMPLE, 72);
    memcpy(buf + 144, comp.p + 72, comp.n - 72);
    expect_bytes(buf, comp.n + 72, NULL, HURRAY_E_CONSTRAINT, "frame.kind", 0);
    /* an annotated composite reads as one item */
    memcpy(buf, ANN_EXAMPLE, 72);
    memcpy(buf + 72, comp.p, comp.n);
    expect_bytes(buf, comp.n + 72, NULL, HURRAY_OK, NULL, 1);
    hurray_item_destroy(t);
    hurray_item_destroy(p);
    free(plain.p);
    free(comp.p);
    free(buf);
}

/* A 24-byte annotation head declaring a 64 MiB section (max_kv_bytes) costs
 * the reader its first step, not 64 MiB (HR-STREAM-17); a long section is
 * committed as it arrives, and every allocation failure is NOMEM, clean. */
static void test_HR_STREAM_17_section_committed_as_it_arrives(void **state) {
    (void)state;
    uint8_t head[24 + 8] = {'H', 'R', 'S', 'F', 0x04, 0, 0, 0};
    struct test_alloc ta;
    struct hurray_stream_reader_options ro;
    struct readout o;
    head[16 + 3] = 0x04; /* kv_length 64 MiB = 0x04000000 */
    test_alloc_init(&ta, 0);
    hurray_stream_reader_options_init(&ro);
    ro.allocator = test_alloc_get(&ta);
    read_memory(head, sizeof head, &ro, &o);
    assert_status(o.status, HURRAY_E_TRUNCATED);
    assert_hurray_error(&o.err, HURRAY_E_TRUNCATED, "annotation.metadata");
    assert_true(ta.peak_bytes < (size_t)256 * 1024);
    assert_alloc_clean(&ta);
    /* 300 entries of 1 KiB strings: a section of ~330 KiB, read whole */
    enum { N = 300 };
    static char keys[N][8];
    static char val[1024];
    struct hurray_kv_entry md[N];
    memset(val, 'v', sizeof val - 1);
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "k%03d", i);
        md[i] = kv_entry(keys[i], kv_str(val));
    }
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    struct hurray_stream_annotation a = ann("big", md, N);
    const struct hurray_stream_annotation *anns[1] = {&a};
    struct bytes b = write_annotated(&t, anns, 1, 1);
    test_alloc_init(&ta, 0);
    read_memory(b.p, b.n, &ro, &o);
    assert_status(o.status, HURRAY_OK);
    assert_int_equal(o.n, 1);
    readout_free(&o);
    assert_alloc_clean(&ta);
    hurray_item_destroy(t);
    free(b.p);
}

static int ann_read_sweep_body(const struct hurray_allocator *a, void *arg) {
    struct bytes *b = arg;
    struct hurray_stream_reader_options ro;
    struct hurray_stream_reader *r = NULL;
    struct hurray_item *it = NULL;
    struct hurray_stream_annotation got;
    hurray_stream_reader_options_init(&ro);
    ro.allocator = a;
    int st = hurray_stream_reader_create_memory(b->p, b->n, &ro, &r, NULL);
    while (st == HURRAY_OK) {
        st = hurray_stream_reader_next(r, &it, NULL);
        if (st != HURRAY_OK || !it) break;
        hurray_stream_reader_annotation(r, &got);
        hurray_item_destroy(it);
    }
    hurray_stream_reader_destroy(r);
    return st;
}

static void test_HR_STREAM_17_nomem(void **state) {
    (void)state;
    struct hurray_item *items[MIXED_COUNT];
    mixed_items(items);
    struct hurray_kv_entry md[1] = {kv_entry("layer", kv_i64(3))};
    struct hurray_stream_annotation a0 = ann("w", md, 1), a2 = ann("o", NULL, 0);
    const struct hurray_stream_annotation *anns[MIXED_COUNT] = {&a0, NULL, &a2, &a0, NULL};
    struct bytes b = write_annotated(items, anns, MIXED_COUNT, 1);
    assert_true(test_alloc_sweep(ann_read_sweep_body, &b) > 20);
    free_items(items, MIXED_COUNT);
    free(b.p);
}

/* The writer refuses a bad name or map before writing anything, and stays
 * usable (HR-STREAM-10). */
static void test_HR_STREAM_10_annotation_refused(void **state) {
    (void)state;
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    const uint8_t *d = NULL;
    size_t n = 0;
    struct hurray_kv_entry dup[2] = {kv_entry("a", kv_i64(1)), kv_entry("a", kv_i64(2))};
    struct hurray_stream_annotation bad_utf8 = ann("\xFF", NULL, 0), dupes = ann("x", dup, 2),
                                    nul = {"a\0b", 3, NULL, 0}, null_name = {NULL, 3, NULL, 0};
    static char longname[70000];
    memset(longname, 'n', sizeof longname - 1);
    struct hurray_stream_annotation too_long = ann(longname, NULL, 0);
    assert_status(hurray_stream_writer_create_memory(NULL, &w, NULL), HURRAY_OK);
    assert_status(hurray_stream_writer_write_annotated(w, t, &bad_utf8, &err), HURRAY_E_CONSTRAINT);
    assert_status(hurray_stream_writer_write_annotated(w, t, &nul, &err), HURRAY_E_CONSTRAINT);
    assert_status(hurray_stream_writer_write_annotated(w, t, &dupes, &err), HURRAY_E_DUPLICATE);
    assert_status(hurray_stream_writer_write_annotated(w, t, &too_long, &err), HURRAY_E_LIMIT);
    assert_status(hurray_stream_writer_write_annotated(w, t, &null_name, &err), HURRAY_E_ARGUMENT);
    struct hurray_stream_annotation empty = {"", 0, NULL, 0};
    assert_status(hurray_stream_writer_write_annotated(w, t, &empty, &err), HURRAY_E_CONSTRAINT);
    assert_status(hurray_stream_writer_getvalue(w, &d, &n, NULL), HURRAY_OK);
    assert_int_equal(n, 0);
    assert_int_equal(hurray_stream_writer_offset(w), 0);
    struct hurray_stream_annotation ok = ann("fine", NULL, 0);
    assert_status(hurray_stream_writer_write_annotated(w, t, &ok, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_getvalue(w, &d, &n, NULL), HURRAY_OK);
    assert_int_equal(n, 24 + 8 + 104);
    hurray_stream_writer_destroy(w);
    hurray_item_destroy(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_STREAM_2_worked_example),
        cmocka_unit_test(test_HR_STREAM_2_padding),
        cmocka_unit_test(test_HR_STREAM_2_frame_header),
        cmocka_unit_test(test_HR_STREAM_6_frame_kind_agrees),
        cmocka_unit_test(test_HR_STREAM_3_composite_is_one_item),
        cmocka_unit_test(test_HR_STREAM_3_read_buffers_aligned),
        cmocka_unit_test(test_HR_STREAM_1_corpus_round_trip_memory),
        cmocka_unit_test(test_HR_STREAM_1_corpus_round_trip_pipe),
        cmocka_unit_test(test_HR_STREAM_11_socketpair),
        cmocka_unit_test(test_HR_STREAM_8_large_buffer_pipe),
        cmocka_unit_test(test_HR_STREAM_4_truncation_at_every_byte),
        cmocka_unit_test(test_HR_STREAM_4_composite_boundary_truncated),
        cmocka_unit_test(test_HR_STREAM_4_clean_end_repeats),
        cmocka_unit_test(test_HR_STREAM_5_cross_machine_writer),
        cmocka_unit_test(test_HR_STREAM_5_cross_machine_reader),
        cmocka_unit_test(test_HR_STREAM_7_buffer_limit_before_allocation),
        cmocka_unit_test(test_HR_STREAM_7_lying_lengths),
        cmocka_unit_test(test_HR_STREAM_7_descriptor_limit_before_allocation),
        cmocka_unit_test(test_HR_STREAM_7_composite_depth),
        cmocka_unit_test(test_HR_STREAM_7_member_total),
        cmocka_unit_test(test_HR_LIMIT_2_alignment_slack_refused_at_default),
        cmocka_unit_test(test_HR_LIMIT_2_alignment_slack_boundary),
        cmocka_unit_test(test_HR_LIMIT_2_legitimate_items_need_no_slack),
        cmocka_unit_test(test_HR_LIMIT_2_alignment_slack_counts_kept_items),
        cmocka_unit_test(test_HR_LIMIT_2_refusal_names_member_and_buffer),
        cmocka_unit_test(test_HR_LIMIT_2_slack_handed_back_across_threads),
        cmocka_unit_test(test_HR_STREAM_9_member_rules_while_reading),
        cmocka_unit_test(test_HR_STREAM_9_partition_grid_while_reading),
        cmocka_unit_test(test_HR_STREAM_9_failure_is_sticky),
        cmocka_unit_test(test_HR_STREAM_9_close_mid_item),
        cmocka_unit_test(test_HR_STREAM_11_callback_reader),
        cmocka_unit_test(test_HR_STREAM_11_fd_is_duplicated),
        cmocka_unit_test(test_HR_STREAM_11_epipe_is_io),
        cmocka_unit_test(test_HR_STREAM_10_getvalue_finish_write_after),
        cmocka_unit_test(test_HR_STREAM_10_refused_items_write_nothing),
        cmocka_unit_test(test_HR_STREAM_10_callback_writer_same_bytes),
        cmocka_unit_test(test_HR_STREAM_7_nomem_everywhere),
        cmocka_unit_test(test_HR_STREAM_11_argument_checks),
        cmocka_unit_test(test_HR_STREAM_12_end_frame_written_and_read),
        cmocka_unit_test(test_HR_STREAM_12_bytes_after_the_end_are_not_read),
        cmocka_unit_test(test_HR_STREAM_12_end_frame_needs_no_eof),
        cmocka_unit_test(test_HR_STREAM_12_end_frame_checks),
        cmocka_unit_test(test_HR_STREAM_13_require_end_frame),
        cmocka_unit_test(test_HR_STREAM_10_abandon_writes_no_end_frame),
        cmocka_unit_test(test_HR_STREAM_14_reader_timeout),
        cmocka_unit_test(test_HR_STREAM_14_writer_timeout),
        cmocka_unit_test(test_HR_STREAM_14_interrupt_hook),
        cmocka_unit_test(test_HR_STREAM_14_hook_runs_without_a_signal),
        cmocka_unit_test(test_HR_STREAM_15_close_wakes_a_blocked_next),
        cmocka_unit_test(test_HR_STREAM_15_close_races),
        cmocka_unit_test(test_HR_STREAM_15_second_next_refused),
        cmocka_unit_test(test_HR_STREAM_16_claim_commits_nothing),
        cmocka_unit_test(test_HR_STREAM_16_large_frame_peak),
        cmocka_unit_test(test_HR_STREAM_16_reserved_buffers),
        cmocka_unit_test(test_HR_STREAM_16_released_reservation_reused),
        cmocka_unit_test(test_HR_STREAM_15_close_seen_between_reads),
        cmocka_unit_test(test_HR_STREAM_17_worked_example),
        cmocka_unit_test(test_HR_STREAM_18_round_trip_and_truncation),
        cmocka_unit_test(test_HR_STREAM_17_annotation_checks),
        cmocka_unit_test(test_HR_STREAM_17_section_committed_as_it_arrives),
        cmocka_unit_test(test_HR_STREAM_17_nomem),
        cmocka_unit_test(test_HR_STREAM_10_annotation_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
