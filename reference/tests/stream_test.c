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
#include <string.h>
#include <sys/socket.h>
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
    expect_patch(&b, 4, 0x03, HURRAY_E_RESERVED_TAG, "frame.kind");
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
    if (d->has_quant) c->schemes[d->quant.scheme] = 1;
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
    read_memory(b.p, b.n, NULL, &o);
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
    assert_status(hurray_stream_reader_create_fd(fds[0], NULL, &r, NULL), HURRAY_OK);
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
    read_memory(b.p, b.n, &ro, &o); /* the buffer is allocated, then the input ends */
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
    assert_int_equal(n2, 104); /* the bytes outlive finish */
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
    p->members[1]->descriptor->has_shard = 0; /* a composite rule */
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
    assert_bytes_equal(s.p, s.n, b.p, b.n);
    assert_status(hurray_stream_writer_create_callback(NULL, NULL, NULL, &w, NULL),
                  HURRAY_E_ARGUMENT);
    free(s.p);
    free(b.p);
    free_items(items, MIXED_COUNT);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
