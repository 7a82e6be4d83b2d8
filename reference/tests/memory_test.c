/* Memory follows the input: metadata-heavy inputs, built here, read by
 * libhurray's readers, with the peak resident memory measured.
 *
 * Each case writes its input to a temporary file, then runs this binary again
 * (argv[0] --probe CASE FILE; not /proc/self/exe, which is valgrind's own
 * program under `make valgrind`) as a fresh process, so no memory the test
 * itself allocated and freed can be reused by the reading and hide from the
 * measure. The probe loads what it must into memory (the stream's bytes for the
 * memory and callback readers, the descriptors', a file image, a KV section; a
 * file reader by path reads the file itself, and a descriptor reader reads a
 * pipe that a child process fills), takes VmHWM as its baseline, reads
 * everything, keeping every item or record alive at once, then reports VmHWM
 * and the input size. Every reader is measured: streams over memory, a
 * descriptor and a callback; files by path (copy, mmap), from an image in
 * memory and their KV section alone; standalone descriptors and KV sections.
 * The test asserts
 *
 *     peak - baseline <= 8 x input + 1 MiB
 *
 * under default limits. A descriptor record costs a compact header and one
 * storage block (descriptor.h), an item node one allocation: a hostile input
 * of minimal metadata cannot make a reader hold hundreds of times its size.
 *
 * Under AddressSanitizer (make sanitize) the probes run the same reading, with
 * leak checks, but resident sizes measure the sanitizer's shadow memory and
 * quarantine: the budget is asserted only in the plain build, and the inputs
 * there are 16 times smaller (SCALE_SHIFT; the same shapes, the same refusals,
 * a sixteenth of the instrumented building and reading). `make valgrind` does
 * not run this test: valgrind does not follow the probes, which exec this
 * binary natively, so it would check only the building of the inputs, which
 * file_test and stream_test already run under it. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hurray/hurray.h"
#include "item_builders.h"
#include "test_support.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define SCALE_SHIFT (UNDER_ASAN ? 4 : 0) /* every count below, 16 times smaller under ASan */
#define MEMBERS (65536u >> SCALE_SHIFT)  /* the default max_composite_members */
#define FILE_TENSORS ((1u << 18) >> SCALE_SHIFT)  /* top-level tensors in one file */
#define DESCRIPTORS (65536u >> SCALE_SHIFT)       /* descriptors decoded and kept */
#define STREAM_ITEMS (65536u >> SCALE_SHIFT) /* top-level items of one tensor each in a stream */
#define SMALLEST_ITEMS ((1u << 18) >> SCALE_SHIFT) /* top-level items of the smallest descriptor */
#define BUDGET_FACTOR 8u
#define BUDGET_SLACK ((uint64_t)1 << 20)

/* This binary, to run again as a probe (realpath of argv[0]). */
static char self_path[4096];

/* ---- measuring (probe side) ---------------------------------------------------------- */

static long status_kib(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':') v = strtol(line + n + 1, NULL, 10);
    fclose(f);
    return v;
}

static uint8_t *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return p;
}

static int probe_fail(const char *what, int status, const struct hurray_error *err) {
    fprintf(stderr, "probe: %s: %s: %s\n", what, hurray_status_name(status),
            err ? err->message : "");
    return 2;
}

/* Concatenated descriptors, each decoded into its own record, all kept. */
static int probe_descriptors(const uint8_t *src, size_t len, long *peak) {
    struct hurray_descriptor *d = malloc(DESCRIPTORS * sizeof *d);
    size_t at = 0, n = 0;
    struct hurray_error err;
    if (!d) return probe_fail("records", HURRAY_E_NOMEM, NULL);
    while (at < len && n < DESCRIPTORS) {
        size_t used = 0;
        hurray_descriptor_init(&d[n]);
        int st = hurray_descriptor_decode(src + at, len - at, NULL, &d[n], &used, &err);
        if (st != HURRAY_OK) return probe_fail("decode", st, &err);
        at += used;
        n++;
    }
    *peak = status_kib("VmHWM");
    if (n != DESCRIPTORS || at != len) return probe_fail("count", HURRAY_E_INTERNAL, NULL);
    for (size_t i = 0; i < n; i++) hurray_descriptor_reset(&d[i]);
    free(d);
    return 0;
}

/* What a file probe must have loaded: FILE_TENSORS top-level tensors, or one
 * composite of MEMBERS members. */
static int loaded_as_expected(struct hurray_item **items, size_t n) {
    if (n == FILE_TENSORS) return 1;
    return n == 1 && items[0]->member_count == MEMBERS;
}

/* Every top-level item of an open file loaded and kept; the file is destroyed. */
static int load_everything(struct hurray_file *f, long *peak) {
    struct hurray_error err;
    size_t n = hurray_file_top_level_count(f);
    struct hurray_item **items = calloc(n ? n : 1, sizeof *items);
    if (!items) return probe_fail("items", HURRAY_E_NOMEM, NULL);
    for (size_t k = 0; k < n; k++) {
        int st = hurray_file_load_item(f, hurray_file_top_level_entry(f, k), &items[k], &err);
        if (st != HURRAY_OK) return probe_fail("load", st, &err);
    }
    *peak = status_kib("VmHWM");
    if (!loaded_as_expected(items, n)) return probe_fail("count", HURRAY_E_INTERNAL, NULL);
    for (size_t k = 0; k < n; k++) hurray_item_destroy(items[k]);
    free(items);
    hurray_file_destroy(f);
    return 0;
}

/* A file read by path in copy or mmap mode, every top-level item loaded and kept. */
static int probe_file(const char *path, int mode, long *peak) {
    struct hurray_file *f = NULL;
    struct hurray_file_options opt = {NULL, NULL, mode, HURRAY_FILE_PARTS_ALL};
    struct hurray_error err;
    int st = hurray_file_create_path(path, &opt, &f, &err);
    if (st != HURRAY_OK) return probe_fail("open", st, &err);
    return load_everything(f, peak);
}

/* A file image in memory (hurray_file_create_memory: the image is copied, page-aligned,
 * and the items borrow from the copy), every top-level item loaded and kept. */
static int probe_file_memory(const uint8_t *src, size_t len, long *peak) {
    struct hurray_file *f = NULL;
    struct hurray_error err;
    int st = hurray_file_create_memory(src, len, NULL, &f, &err);
    if (st != HURRAY_OK) return probe_fail("open", st, &err);
    return load_everything(f, peak);
}

/* The KV section of a file, read alone (HURRAY_FILE_PARTS_KV) and kept while the file is
 * open: what load_kv reads. */
static int probe_file_kv(const char *path, long *peak) {
    struct hurray_file *f = NULL;
    struct hurray_file_options opt = {NULL, NULL, HURRAY_FILE_COPY, HURRAY_FILE_PARTS_KV};
    struct hurray_error err;
    int st = hurray_file_create_path(path, &opt, &f, &err);
    if (st != HURRAY_OK) return probe_fail("open", st, &err);
    const struct hurray_kv *kv = hurray_file_kv(f);
    *peak = status_kib("VmHWM");
    if (kv->count == 0) return probe_fail("no kv", HURRAY_E_INTERNAL, NULL);
    hurray_file_destroy(f);
    return 0;
}

/* A standalone KV section decoded into a map (hurray_kv_decode), kept. */
static int probe_kv(const uint8_t *src, size_t len, long *peak) {
    struct hurray_kv kv;
    struct hurray_error err;
    hurray_kv_init(&kv);
    int st = hurray_kv_decode(src, len, NULL, &kv, &err);
    if (st != HURRAY_OK) return probe_fail("decode", st, &err);
    *peak = status_kib("VmHWM");
    if (kv.count == 0) return probe_fail("no entries", HURRAY_E_INTERNAL, NULL);
    hurray_kv_reset(&kv);
    return 0;
}

/* How the reading ended: OK, or LIMIT for an input a reader refuses (printed last). */
static int probe_outcome = HURRAY_OK;

/* What the stream probes expect (set from the case's name, probe_main): one composite of
 * MEMBERS, kept (0); TOP_ITEMS top-level tensors, every one kept until the end ('k'); or the
 * same, each freed as soon as the next is read ('d'). */
#define TOP_ITEMS (65536u >> SCALE_SHIFT)
static int probe_items = 0;

/* Every item of a stream reader, as probe_items says -- or a refusal with LIMIT (the peak
 * measured when it comes: the reader holds the item read so far, and the items kept, until
 * then). */
static int read_composite(struct hurray_stream_reader *r, long *peak) {
    struct hurray_item **items = NULL, *last = NULL;
    size_t n = 0, cap = 0;
    struct hurray_error err;
    int st;
    for (;;) {
        struct hurray_item *it = NULL;
        st = hurray_stream_reader_next(r, &it, &err);
        if (st != HURRAY_OK || !it) break;
        if (probe_items == 'd') { /* the consumer drops what it read */
            hurray_item_destroy(last);
            last = it;
            n++;
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            struct hurray_item **more = realloc(items, cap * sizeof *items);
            if (!more) return probe_fail("realloc", HURRAY_E_NOMEM, NULL);
            items = more;
        }
        items[n++] = it;
    }
    *peak = status_kib("VmHWM");
    if (st == HURRAY_E_LIMIT)
        probe_outcome = st;
    else if (st != HURRAY_OK)
        return probe_fail("next", st, &err);
    else if (probe_items ? n != TOP_ITEMS : n != 1 || items[0]->member_count != MEMBERS)
        return probe_fail("not the items expected", HURRAY_E_INTERNAL, NULL);
    for (size_t i = 0; items && i < n; i++) hurray_item_destroy(items[i]);
    free(items);
    hurray_item_destroy(last);
    hurray_stream_reader_destroy(r);
    return 0;
}

/* Every top-level item of a stream whose bytes are in memory (the memory reader), all kept
 * in one array until the end: STREAM_ITEMS tensors or SMALLEST_ITEMS smallest items. */
static int probe_stream_items(const uint8_t *src, size_t len, long *peak) {
    struct hurray_stream_reader *r = NULL;
    struct hurray_error err;
    int st = hurray_stream_reader_create_memory(src, len, NULL, &r, &err);
    if (st != HURRAY_OK) return probe_fail("create", st, &err);
    struct hurray_item **items = malloc(SMALLEST_ITEMS * sizeof *items);
    size_t n = 0;
    if (!items) return probe_fail("items", HURRAY_E_NOMEM, NULL);
    for (;;) {
        struct hurray_item *it = NULL;
        st = hurray_stream_reader_next(r, &it, &err);
        if (st != HURRAY_OK) return probe_fail("next", st, &err);
        if (!it) break;
        if (n == SMALLEST_ITEMS) return probe_fail("too many items", HURRAY_E_INTERNAL, NULL);
        items[n++] = it;
    }
    *peak = status_kib("VmHWM");
    if (n != STREAM_ITEMS && n != SMALLEST_ITEMS)
        return probe_fail("count", HURRAY_E_INTERNAL, NULL);
    for (size_t i = 0; i < n; i++) hurray_item_destroy(items[i]);
    free(items);
    hurray_stream_reader_destroy(r);
    return 0;
}

/* A stream read from a pipe: a child process (forked before the baseline is taken, so
 * none of its memory is this process's) writes the file into it in 64 KiB writes. */
static int probe_stream_fd(const char *path, long *base, long *peak) {
    int fd[2];
    if (pipe(fd) != 0) return probe_fail("pipe", HURRAY_E_IO, NULL);
    pid_t pid = fork();
    if (pid < 0) return probe_fail("fork", HURRAY_E_IO, NULL);
    if (pid == 0) {
        close(fd[0]);
        signal(SIGPIPE, SIG_IGN); /* a reader that refuses the stream stops reading it */
        FILE *in = fopen(path, "rb");
        static uint8_t chunk[64 * 1024];
        size_t k;
        if (!in) _exit(3);
        while ((k = fread(chunk, 1, sizeof chunk, in)) > 0)
            for (size_t at = 0; at < k;) {
                ssize_t w = write(fd[1], chunk + at, k - at);
                if (w <= 0) _exit(errno == EPIPE ? 5 : 4);
                at += (size_t)w;
            }
        _exit(0);
    }
    close(fd[1]);
    struct hurray_stream_reader *r = NULL;
    struct hurray_error err;
    *base = status_kib("VmHWM");
    int st = hurray_stream_reader_create_fd(fd[0], NULL, &r, &err);
    close(fd[0]); /* the reader reads its own duplicate */
    int rc = st == HURRAY_OK ? read_composite(r, peak) : probe_fail("create", st, &err);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return probe_fail("feeder", HURRAY_E_IO, NULL);
    /* 5: the pipe closed under the feeder, as it does when the reader refused the stream */
    if (WEXITSTATUS(status) != 0 && !(WEXITSTATUS(status) == 5 && probe_outcome != HURRAY_OK))
        return probe_fail("feeder", HURRAY_E_IO, NULL);
    return rc;
}

/* A transport that hands the stream over in short, uneven reads. */
struct short_reads {
    const uint8_t *src;
    size_t len, at;
    unsigned turn;
};

static int short_read(void *ctx, uint8_t *dst, size_t cap, size_t *got,
                      struct hurray_error *err) {
    static const size_t steps[] = {1, 7, 4093, 65536, 13, 777};
    struct short_reads *s = ctx;
    size_t n = steps[s->turn++ % (sizeof steps / sizeof steps[0])];
    (void)err;
    if (n > cap) n = cap;
    if (n > s->len - s->at) n = s->len - s->at;
    memcpy(dst, s->src + s->at, n);
    s->at += n;
    *got = n;
    return HURRAY_OK;
}

/* Every item of a composite stream whose bytes are in memory, all kept until the end: read
 * by the memory reader, or through a read callback over the bytes (`callback`), under
 * `lim` (NULL: the defaults). */
static int probe_stream(const uint8_t *src, size_t len, int callback,
                        const struct hurray_limits *lim, long *peak) {
    struct short_reads s = {src, len, 0, 0};
    struct hurray_stream_reader_options opt;
    struct hurray_stream_reader *r = NULL;
    struct hurray_error err;
    hurray_stream_reader_options_init(&opt);
    opt.limits = lim;
    int st = callback ? hurray_stream_reader_create_callback(short_read, &s, &opt, &r, &err)
                      : hurray_stream_reader_create_memory(src, len, &opt, &r, &err);
    if (st != HURRAY_OK) return probe_fail("create", st, &err);
    return read_composite(r, peak);
}

/* The probes that read the file themselves (by path); the others are given its bytes,
 * loaded before the baseline is taken. */
static int reads_by_path(const char *which) {
    static const char *const by_path[] = {"file", "file-mmap", "file-kv", "stream-fd"};
    for (size_t i = 0; i < sizeof by_path / sizeof by_path[0]; i++)
        if (strcmp(which, by_path[i]) == 0) return 1;
    return 0;
}

/* --probe CASE FILE: prints "input baseline_kib peak_kib outcome". */
static int probe_main(const char *which, const char *path) {
    size_t len = 0;
    uint8_t *src = NULL;
    long base, peak = -1;
    int rc;
    /* "kept-CASE", "dropped-CASE": the stream probes over TOP_ITEMS top-level items */
    if (strncmp(which, "kept-", 5) == 0 || strncmp(which, "dropped-", 8) == 0) {
        probe_items = which[0] == 'k' ? 'k' : 'd';
        which = strchr(which, '-') + 1;
    }
    if (!reads_by_path(which)) {
        src = read_all(path, &len);
        if (!src) return probe_fail("read", HURRAY_E_IO, NULL);
    } else {
        FILE *fp = fopen(path, "rb");
        if (!fp) return probe_fail("open", HURRAY_E_IO, NULL);
        fseek(fp, 0, SEEK_END);
        len = (size_t)ftell(fp);
        fclose(fp);
    }
    struct hurray_limits no_slack_limit;
    hurray_limits_default(&no_slack_limit);
    no_slack_limit.max_alignment_slack = UINT64_MAX; /* HR-LIMIT-2 off */
    base = status_kib("VmHWM");
    if (strcmp(which, "stream") == 0)
        rc = probe_stream(src, len, 0, NULL, &peak);
    else if (strcmp(which, "stream-no-slack-limit") == 0)
        rc = probe_stream(src, len, 0, &no_slack_limit, &peak);
    else if (strcmp(which, "stream-fd") == 0)
        rc = probe_stream_fd(path, &base, &peak);
    else if (strcmp(which, "stream-items") == 0)
        rc = probe_stream_items(src, len, &peak);
    else if (strcmp(which, "stream-callback") == 0)
        rc = probe_stream(src, len, 1, NULL, &peak);
    else if (strcmp(which, "descriptors") == 0)
        rc = probe_descriptors(src, len, &peak);
    else if (strcmp(which, "file") == 0)
        rc = probe_file(path, HURRAY_FILE_COPY, &peak);
    else if (strcmp(which, "file-mmap") == 0)
        rc = probe_file(path, HURRAY_FILE_MMAP, &peak);
    else if (strcmp(which, "file-memory") == 0)
        rc = probe_file_memory(src, len, &peak);
    else if (strcmp(which, "file-kv") == 0)
        rc = probe_file_kv(path, &peak);
    else if (strcmp(which, "kv") == 0)
        rc = probe_kv(src, len, &peak);
    else
        rc = probe_fail("unknown case", HURRAY_E_ARGUMENT, NULL);
    free(src);
    if (rc == 0) printf("%zu %ld %ld %s\n", len, base, peak, hurray_status_name(probe_outcome));
    return rc;
}

/* ---- the inputs (test side) -------------------------------------------------------------- */

static void write_file(const char *path, const uint8_t *p, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* The smallest member: a uint8 tensor of shape [0] with one empty buffer
 * (64 bytes of descriptor, 8 of frame header, no data). */
static struct hurray_item *tiny_tensor(void) {
    return tb_tensor(HURRAY_DTYPE_UINT8, 1, (const uint64_t[]){0}, 0);
}

/* The smallest descriptor there is, as a member: an unknown layout (a reserved
 * tag is carried, HR-LAYOUT-3), rank 0, no buffers: 40 bytes + an 8-byte frame
 * header. */
static struct hurray_item *smallest_member(void) {
    return tb_item(HURRAY_DTYPE_UINT8, 0x40, 0, NULL);
}

/* A group composite of MEMBERS copies of one member (one item, shared by every slot). */
static void make_group_stream(const char *path, struct hurray_item *m) {
    struct hurray_item *head =
        tb_head(HURRAY_RULE_GROUP, HURRAY_COMBINE_NONE, HURRAY_DTYPE_UINT8, 1,
                (const uint64_t[]){0}, MEMBERS);
    for (uint32_t i = 0; i < MEMBERS; i++) head->members[i] = m;
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    const uint8_t *data = NULL;
    size_t len = 0;
    assert_status(hurray_stream_writer_create_memory(NULL, &w, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_write(w, head, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_getvalue(w, &data, &len, &err), HURRAY_OK);
    write_file(path, data, len);
    hurray_stream_writer_destroy(w);
    for (uint32_t i = 0; i < MEMBERS; i++) head->members[i] = NULL;
    hurray_item_destroy(head);
    hurray_item_destroy(m);
}

static void make_stream(const char *path) { make_group_stream(path, tiny_tensor()); }

/* The alignment-slack attack (errors-and-limits.md HR-LIMIT-2): members of one byte, each
 * buffer declaring 4 KiB alignment -- 80 bytes of stream a member (5.0 MiB), a page each to
 * honour the alignment. */
static void make_stream_page_aligned(const char *path) {
    struct hurray_item *m = tb_tensor(HURRAY_DTYPE_UINT8, 1, (const uint64_t[]){1}, 1);
    TEST_PATCH_BUFFER(m->descriptor, 0, alignment_log2, 12);
    make_group_stream(path, m);
}
/* The same attack as TOP_ITEMS top-level items: frames of uint8[1] whose buffer declares
 * 4 KiB alignment, 80 bytes each (5.0 MiB) -- a page each to honour the alignment, with
 * every item its own (errors-and-limits.md HR-LIMIT-2 counts the items a consumer keeps). */
static void make_top_page_aligned(const char *path) {
    struct hurray_item *m = tb_tensor(HURRAY_DTYPE_UINT8, 1, (const uint64_t[]){1}, 1);
    TEST_PATCH_BUFFER(m->descriptor, 0, alignment_log2, 12);
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    const uint8_t *data = NULL;
    size_t len = 0;
    assert_status(hurray_stream_writer_create_memory(NULL, &w, &err), HURRAY_OK);
    for (uint32_t i = 0; i < TOP_ITEMS; i++)
        assert_status(hurray_stream_writer_write(w, m, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_getvalue(w, &data, &len, &err), HURRAY_OK);
    assert_int_equal(len, 80u * TOP_ITEMS);
    write_file(path, data, len);
    hurray_stream_writer_destroy(w);
    hurray_item_destroy(m);
}

static void make_stream_smallest(const char *path) {
    make_group_stream(path, smallest_member());
}

/* DESCRIPTORS descriptors back to back: the 64-byte member descriptor and the
 * 40-byte smallest one (an unknown layout, rank 0, no buffers), alternately. */
static void make_descriptors(const char *path) {
    struct hurray_item *m = tiny_tensor();
    struct hurray_descriptor small;
    uint8_t a[64], b[64];
    size_t na = 0, nb = 0;
    struct hurray_error err;
    hurray_descriptor_init(&small);
    small.dtype = HURRAY_DTYPE_UINT8;
    small.layout.tag = 0x40;
    assert_status(hurray_descriptor_encode(m->descriptor, a, sizeof a, &na, &err), HURRAY_OK);
    assert_status(hurray_descriptor_encode(&small, b, sizeof b, &nb, &err), HURRAY_OK);
    assert_int_equal(na, 64);
    assert_int_equal(nb, HURRAY_DESCRIPTOR_MIN_BYTES);
    size_t cap = (size_t)DESCRIPTORS / 2 * (na + nb), at = 0;
    uint8_t *all = malloc(cap);
    assert_non_null(all);
    for (uint32_t i = 0; i < DESCRIPTORS / 2; i++) {
        memcpy(all + at, a, na);
        memcpy(all + at + na, b, nb);
        at += na + nb;
    }
    write_file(path, all, at);
    free(all);
    hurray_item_destroy(m);
}

/* `count` top-level items of one tensor, `m`, each its own frame (`frame` bytes). */
static void make_item_stream(const char *path, struct hurray_item *m, uint32_t count,
                             size_t frame) {
    struct hurray_stream_writer *w = NULL;
    struct hurray_error err;
    const uint8_t *data = NULL;
    size_t len = 0;
    assert_status(hurray_stream_writer_create_memory(NULL, &w, &err), HURRAY_OK);
    for (uint32_t i = 0; i < count; i++)
        assert_status(hurray_stream_writer_write(w, m, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_getvalue(w, &data, &len, &err), HURRAY_OK);
    assert_int_equal(len, (size_t)count * frame);
    write_file(path, data, len);
    hurray_stream_writer_destroy(w);
    hurray_item_destroy(m);
}

/* STREAM_ITEMS plain uint8 tensors of shape [1]: 80-byte frames (8 of header, a 64-byte
 * descriptor, the byte padded to 8). */
static void make_stream_of_tensors(const char *path) {
    make_item_stream(path, tb_tensor(HURRAY_DTYPE_UINT8, 1, (const uint64_t[]){1}, 1),
                     STREAM_ITEMS, 80);
}

/* SMALLEST_ITEMS of the smallest items there are: 48 bytes each, an 8-byte frame header
 * and the 40-byte descriptor (an unknown layout, rank 0, no buffers). */
static void make_stream_of_smallest(const char *path) {
    make_item_stream(path, smallest_member(), SMALLEST_ITEMS, 48);
}

/* DESCRIPTORS copies of the smallest descriptor there is (40 bytes: an unknown layout, rank
 * 0, no buffers) back to back. */
static void make_smallest_descriptors(const char *path) {
    struct hurray_descriptor small;
    uint8_t b[HURRAY_DESCRIPTOR_MIN_BYTES];
    size_t nb = 0;
    struct hurray_error err;
    hurray_descriptor_init(&small);
    small.dtype = HURRAY_DTYPE_UINT8;
    small.layout.tag = 0x40;
    assert_status(hurray_descriptor_encode(&small, b, sizeof b, &nb, &err), HURRAY_OK);
    assert_int_equal(nb, HURRAY_DESCRIPTOR_MIN_BYTES);
    uint8_t *all = malloc((size_t)DESCRIPTORS * nb);
    assert_non_null(all);
    for (uint32_t i = 0; i < DESCRIPTORS; i++) memcpy(all + (size_t)i * nb, b, nb);
    write_file(path, all, (size_t)DESCRIPTORS * nb);
    free(all);
}

/* FILE_TENSORS top-level entries, each the tensor `m` (destroyed here), named by `fmt` (a
 * "t%05..." format of the entry's index: 6 characters). */
static void write_entries_file(const char *path, struct hurray_item *m, const char *fmt) {
    struct hurray_file_entry *e = calloc(FILE_TENSORS, sizeof *e);
    char *names = malloc((size_t)FILE_TENSORS * 8);
    struct hurray_error err;
    assert_non_null(e);
    assert_non_null(names);
    for (uint32_t i = 0; i < FILE_TENSORS; i++) {
        snprintf(names + 8 * (size_t)i, 8, fmt, (unsigned)i);
        e[i] = (struct hurray_file_entry){names + 8 * (size_t)i, m};
    }
    struct hurray_file_contents c = {e, FILE_TENSORS, NULL, 0};
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);
    free(names);
    free(e);
    hurray_item_destroy(m);
}

/* FILE_TENSORS top-level tiny tensors, each its own entry. */
static void make_file(const char *path) { write_entries_file(path, tiny_tensor(), "t%05x"); }

/* FILE_TENSORS top-level smallest tensors (an unknown layout, rank 0, no buffers) named
 * t00000, t00001, ...: 56 bytes of file an entry (its index record, name and 40-byte
 * descriptor), the most entries a file of this size holds. */
static void make_smallest_file(const char *path) {
    write_entries_file(path, smallest_member(), "t%05u");
}

/* One top-level composite of MEMBERS tiny tensors (every member an index entry of its own). */
static void make_composite_file(const char *path) {
    struct hurray_item *m = tiny_tensor();
    struct hurray_item *head =
        tb_head(HURRAY_RULE_GROUP, HURRAY_COMBINE_NONE, HURRAY_DTYPE_UINT8, 1,
                (const uint64_t[]){0}, MEMBERS);
    struct hurray_error err;
    for (uint32_t i = 0; i < MEMBERS; i++) head->members[i] = m;
    struct hurray_file_entry e = {"c", head};
    struct hurray_file_contents c = {&e, 1, NULL, 0};
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);
    for (uint32_t i = 0; i < MEMBERS; i++) head->members[i] = NULL;
    hurray_item_destroy(head);
    hurray_item_destroy(m);
}

#define KV_ENTRIES (65536u >> SCALE_SHIFT)          /* the default max_kv_entries */
#define KV_LIST_ELEMENTS ((1u << 20) >> SCALE_SHIFT) /* 16 MiB of list elements */

/* KV_ENTRIES of the smallest entries there are (kv.md § Section layout: 8 header bytes, a
 * key of at most 8 bytes, an 8-byte payload: 24 bytes), each an empty list, with 8-byte keys
 * (the longest that fits the 8 bytes; decoded, a key costs its bytes and a NUL). */
static struct hurray_kv_entry *smallest_kv_entries(char **keys) {
    struct hurray_kv_entry *e = calloc(KV_ENTRIES, sizeof *e);
    *keys = malloc((size_t)KV_ENTRIES * 16);
    assert_non_null(e);
    assert_non_null(*keys);
    for (uint32_t i = 0; i < KV_ENTRIES; i++) {
        char *k = *keys + 16 * (size_t)i;
        snprintf(k, 16, "k%07x", (unsigned)i);
        e[i].key = k;
        e[i].key_len = 8;
        e[i].value.type = HURRAY_KV_LIST;
    }
    return e;
}

static void write_kv_file(const char *path, const struct hurray_kv_entry *kv, size_t n) {
    struct hurray_file_contents c = {NULL, 0, kv, n};
    struct hurray_error err;
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);
}

/* A file of no tensors whose KV section holds KV_ENTRIES smallest entries (1.5 MiB). */
static void make_kv_file(const char *path) {
    char *keys = NULL;
    struct hurray_kv_entry *e = smallest_kv_entries(&keys);
    write_kv_file(path, e, KV_ENTRIES);
    free(e);
    free(keys);
}

/* A file whose KV section is one entry: a list of KV_LIST_ELEMENTS empty lists, the
 * smallest list element (16 bytes: tag, reserved, count 0) -- a count the entry limit does
 * not bound. */
static void make_kv_list_file(const char *path) {
    struct hurray_kv_value *items = calloc(KV_LIST_ELEMENTS, sizeof *items);
    assert_non_null(items);
    for (uint32_t i = 0; i < KV_LIST_ELEMENTS; i++) items[i].type = HURRAY_KV_LIST;
    struct hurray_kv_entry e = {"list", 4, {HURRAY_KV_LIST, {.list = {items, KV_LIST_ELEMENTS}}}};
    write_kv_file(path, &e, 1);
    free(items);
}

/* The KV_ENTRIES smallest entries as a standalone section (kv.md), for hurray_kv_decode. */
static void make_kv_section(const char *path) {
    char *keys = NULL;
    struct hurray_kv_entry *e = smallest_kv_entries(&keys);
    struct hurray_error err;
    uint64_t n = 0;
    size_t written = 0;
    assert_status(hurray_kv_encoded_len(e, KV_ENTRIES, NULL, &n, &err), HURRAY_OK);
    uint8_t *buf = malloc((size_t)n);
    assert_non_null(buf);
    assert_status(hurray_kv_encode(e, KV_ENTRIES, NULL, buf, (size_t)n, &written, &err),
                  HURRAY_OK);
    assert_int_equal(written, n);
    assert_int_equal(n, 8 + 24 * (uint64_t)KV_ENTRIES);
    write_file(path, buf, written);
    free(buf);
    free(e);
    free(keys);
}

/* Runs the probe for `which` over `path`; fills input size, growth (bytes). */
static void run_probe(const char *which, const char *path, uint64_t *input, uint64_t *growth,
                      char outcome[32]) {
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execl(self_path, "memory_test", "--probe", which, path, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char out[128] = {0};
    size_t got = 0;
    ssize_t k;
    while (got < sizeof out - 1 && (k = read(fd[0], out + got, sizeof out - 1 - got)) > 0)
        got += (size_t)k;
    close(fd[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    unsigned long long len = 0;
    long base = 0, peak = 0;
    assert_int_equal(sscanf(out, "%llu %ld %ld %31s", &len, &base, &peak, outcome), 4);
    assert_true(base > 0 && peak >= base);
    *input = len;
    *growth = (uint64_t)(peak - base) * 1024u;
}

/* Makes one input, then runs each probe named (a NULL-terminated list) over it in a fresh
 * process, asserts the reading's outcome (`expect`: "OK", or "LIMIT" for a refusal) and its
 * budget. */
static void check_outcome_budgets(void (*make)(const char *), const char *expect, va_list ap) {
    char path[] = "/tmp/hurray-memory-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    make(path);
    for (const char *which; (which = va_arg(ap, const char *)) != NULL;) {
        uint64_t input = 0, growth = 0;
        char outcome[32] = {0};
        run_probe(which, path, &input, &growth, outcome);
        if (strcmp(outcome, expect) != 0) {
            unlink(path);
            fail_msg("%s: the reading ended %s, not %s", which, outcome, expect);
        }
        uint64_t budget = BUDGET_FACTOR * input + BUDGET_SLACK;
        print_message("%s: input %llu bytes, peak growth %llu bytes (%.2fx), budget %llu%s\n",
                      which, (unsigned long long)input, (unsigned long long)growth,
                      (double)growth / (double)input, (unsigned long long)budget,
                      UNDER_ASAN ? " (not asserted under ASan)" : "");
        if (!UNDER_ASAN && growth > budget) {
            unlink(path);
            fail_msg("%s: peak growth %llu bytes over the budget %llu", which,
                     (unsigned long long)growth, (unsigned long long)budget);
        }
    }
    unlink(path);
}

static void check_budgets(void (*make)(const char *), ...) {
    va_list ap;
    va_start(ap, make);
    check_outcome_budgets(make, "OK", ap);
    va_end(ap);
}

/* The same for readers that must refuse the input (LIMIT). */
static void check_refusal_budgets(void (*make)(const char *), ...) {
    va_list ap;
    va_start(ap, make);
    check_outcome_budgets(make, "LIMIT", ap);
    va_end(ap);
}

static void check_budget(const char *which, void (*make)(const char *)) {
    check_budgets(make, which, (const char *)NULL);
}

/* A 65,536-member group composite stream of minimal members, read whole
 * (HR-STREAM-8: the reader holds the composite; its records are compact). */
static void test_HR_STREAM_8_composite_memory_follows_input(void **state) {
    (void)state;
    check_budget("stream", make_stream);
}

/* The same with the smallest members there are: 48 bytes of stream each, an
 * item node of 272 bytes (no storage block: no spans, no buffer table). */
static void test_HR_STREAM_8_smallest_members_memory_follows_input(void **state) {
    (void)state;
    check_budget("stream", make_stream_smallest);
}

/* 65,536 descriptors decoded and kept: a record is a compact header and one
 * exactly-sized storage block (HR-DESC-5 decoding into descriptor.h's record). */
static void test_HR_DESC_5_decoded_records_follow_input(void **state) {
    (void)state;
    check_budget("descriptors", make_descriptors);
}

/* 2^18 top-level tensors loaded from one file in copy mode (the image, the
 * index and one item node per tensor). */
static void test_HR_FILE_memory_follows_input(void **state) {
    (void)state;
    check_budget("file", make_file);
}

/* The two composite streams above read from a pipe (a descriptor reader: read-ahead
 * block, buffer data read straight into the items) and through a read callback that returns
 * short, uneven reads (1 to 65,536 bytes), so frames and descriptors arrive in pieces
 * (HR-STREAM-8: every transport holds the same records). */
static void test_HR_STREAM_8_fd_and_callback_readers_memory_follows_input(void **state) {
    (void)state;
    check_budgets(make_stream, "stream-fd", "stream-callback", (const char *)NULL);
    check_budgets(make_stream_smallest, "stream-fd", "stream-callback", (const char *)NULL);
}

/* 2^18 top-level tensors from a file image in memory (hurray_file_create_memory copies the
 * image, the items borrow from the copy) and from the file in mmap mode, as resident memory
 * (file_test counts the allocations; this counts the pages too) (HR-FILE-13). */
static void test_HR_FILE_13_memory_image_and_mmap_follow_input(void **state) {
    (void)state;
    check_budgets(make_file, "file-memory", "file-mmap", (const char *)NULL);
}

/* A file holding one 65,536-member composite of tiny tensors, every member an index entry of
 * its own, in copy, mmap and memory mode (HR-FILE-13). */
static void test_HR_FILE_13_composite_file_memory_follows_input(void **state) {
    (void)state;
    check_budgets(make_composite_file, "file", "file-mmap", "file-memory", (const char *)NULL);
}

/* A file's KV section read alone (what load_kv reads): 65,536 of the smallest entries, and
 * one list of 2^20 empty lists; the raw section is released once decoded (HR-FILE-13). */
static void test_HR_FILE_13_kv_reader_memory_follows_input(void **state) {
    (void)state;
    check_budget("file-kv", make_kv_file);
    check_budget("file-kv", make_kv_list_file);
}

/* A standalone section of 65,536 smallest entries decoded into one map (HR-KV-9: nothing is
 * allocated before the counts are bounded by the bytes present; the map is one block of
 * exactly its size). */
static void test_HR_KV_9_decoded_map_follows_input(void **state) {
    (void)state;
    check_budget("kv", make_kv_section);
}

/* Metadata-heavy inputs of top-level objects, every one kept (issue: for every reader, 8 x
 * the input + 1 MiB): a stream of 65,536 plain 80-byte uint8[1] frames and one of 2^18 of
 * the smallest items (48 bytes each), read by the memory reader. An item node is the item,
 * its compact descriptor record and a one-buffer table in one block (item.c), the record a
 * header with a pointer, not a record, for each optional section (descriptor.h). */
static void test_HR_STREAM_8_top_level_items_memory_follows_input(void **state) {
    (void)state;
    check_budget("stream-items", make_stream_of_tensors);
    check_budget("stream-items", make_stream_of_smallest);
}

/* A file of 2^18 of the smallest tensors (56 bytes of file each), every one loaded and kept,
 * in copy, mmap and memory mode (HR-FILE-13). */
static void test_HR_FILE_13_smallest_tensors_memory_follows_input(void **state) {
    (void)state;
    check_budgets(make_smallest_file, "file", "file-mmap", "file-memory", (const char *)NULL);
}

/* 65,536 of the smallest descriptors (40 bytes) decoded and kept (HR-DESC-5). */
static void test_HR_DESC_5_smallest_decoded_records_follow_input(void **state) {
    (void)state;
    check_budget("descriptors", make_smallest_descriptors);
}

/* 65,536 one-byte members whose buffers each declare 4 KiB alignment (5.0 MiB): honouring
 * the alignment would cost a page a member, 57 times the stream. Every stream reader refuses
 * it under the default max_alignment_slack (HR-LIMIT-2) once the slack passes the bytes plus
 * 1 MiB, within the budget. With the limit off, the same reading succeeds and passes the
 * budget by far: the input is the hostile one, and the limit is what holds it. */
static void test_HR_LIMIT_2_page_aligned_members_refused_within_budget(void **state) {
    (void)state;
    check_refusal_budgets(make_stream_page_aligned, "stream", "stream-fd", "stream-callback",
                          (const char *)NULL);
    if (UNDER_ASAN) return; /* resident sizes measure the sanitizer there */
    char path[] = "/tmp/hurray-memory-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    make_stream_page_aligned(path);
    uint64_t input = 0, growth = 0;
    char outcome[32] = {0};
    run_probe("stream-no-slack-limit", path, &input, &growth, outcome);
    unlink(path);
    print_message("stream-no-slack-limit: input %llu bytes, peak growth %llu bytes (%.2fx)\n",
                  (unsigned long long)input, (unsigned long long)growth,
                  (double)growth / (double)input);
    assert_string_equal(outcome, "OK");
    assert_true(growth > BUDGET_FACTOR * input + BUDGET_SLACK);
}

/* The same attack as 65,536 top-level items (80 bytes of stream each, 5.0 MiB), every one
 * kept by the consumer: each item's slack is its own, but the reader's budget counts the
 * items still alive (HR-LIMIT-2), so every stream reader refuses the stream within the
 * budget -- and, with the limit off, holds a page an item, far past it (the test can fail). */
static void test_HR_LIMIT_2_kept_page_aligned_items_refused_within_budget(void **state) {
    (void)state;
    check_refusal_budgets(make_top_page_aligned, "kept-stream", "kept-stream-fd",
                          "kept-stream-callback", (const char *)NULL);
    if (UNDER_ASAN) return; /* resident sizes measure the sanitizer there */
    char path[] = "/tmp/hurray-memory-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    make_top_page_aligned(path);
    uint64_t input = 0, growth = 0;
    char outcome[32] = {0};
    run_probe("kept-stream-no-slack-limit", path, &input, &growth, outcome);
    unlink(path);
    print_message("kept-stream-no-slack-limit: input %llu bytes, peak growth %llu bytes "
                  "(%.2fx)\n",
                  (unsigned long long)input, (unsigned long long)growth,
                  (double)growth / (double)input);
    assert_string_equal(outcome, "OK");
    assert_true(growth > BUDGET_FACTOR * input + BUDGET_SLACK);
}

/* A consumer that frees each item once it has the next reads the whole hostile stream, in
 * every stream reader: freed items hand their slack back (HR-LIMIT-2). */
static void test_HR_LIMIT_2_dropped_page_aligned_items_read_whole(void **state) {
    (void)state;
    check_budgets(make_top_page_aligned, "dropped-stream", "dropped-stream-fd",
                  "dropped-stream-callback", (const char *)NULL);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--probe") == 0) return probe_main(argv[2], argv[3]);
    if (argc < 1 || !realpath(argv[0], self_path)) {
        fprintf(stderr, "memory_test: cannot resolve argv[0]\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_STREAM_8_composite_memory_follows_input),
        cmocka_unit_test(test_HR_STREAM_8_smallest_members_memory_follows_input),
        cmocka_unit_test(test_HR_DESC_5_decoded_records_follow_input),
        cmocka_unit_test(test_HR_FILE_memory_follows_input),
        cmocka_unit_test(test_HR_STREAM_8_fd_and_callback_readers_memory_follows_input),
        cmocka_unit_test(test_HR_FILE_13_memory_image_and_mmap_follow_input),
        cmocka_unit_test(test_HR_FILE_13_composite_file_memory_follows_input),
        cmocka_unit_test(test_HR_FILE_13_kv_reader_memory_follows_input),
        cmocka_unit_test(test_HR_KV_9_decoded_map_follows_input),
        cmocka_unit_test(test_HR_LIMIT_2_page_aligned_members_refused_within_budget),
        cmocka_unit_test(test_HR_LIMIT_2_kept_page_aligned_items_refused_within_budget),
        cmocka_unit_test(test_HR_LIMIT_2_dropped_page_aligned_items_read_whole),
        cmocka_unit_test(test_HR_STREAM_8_top_level_items_memory_follows_input),
        cmocka_unit_test(test_HR_FILE_13_smallest_tensors_memory_follows_input),
        cmocka_unit_test(test_HR_DESC_5_smallest_decoded_records_follow_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
