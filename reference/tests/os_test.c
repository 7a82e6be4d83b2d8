/* The OS layer (os.h, os_posix.c): what file.c and stream.c rely on. These
 * tests use POSIX calls themselves to build fixtures (FIFOs, pipes, links). */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "os.h"
#include "test_support.h"

static char dir[256];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hurray-os-test-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *path_in(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s/%s", dir, name);
    return buf;
}

static void write_file(const char *path, const void *data, size_t n, mode_t mode) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, n), (ssize_t)n);
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

/* Anything but a regular file is refused at open, before a byte is read, and
 * a FIFO with no writer does not block the open. */
static void test_open_refuses_special_files(void **state) {
    (void)state;
    char p[300];
    hri_os_fd fd = HRI_OS_NO_FD;
    uint64_t size = 0;
    struct hurray_error e;

    assert_int_equal(hri_os_open_regular(dir, &fd, &size, &e), HURRAY_E_IO);
    assert_int_equal(e.sys_errno, EISDIR);
    assert_non_null(strstr(e.message, "directory"));

    path_in(p, sizeof p, "fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    assert_int_equal(hri_os_open_regular(p, &fd, &size, &e), HURRAY_E_IO);
    assert_non_null(strstr(e.message, "FIFO"));
    assert_non_null(strstr(e.message, p));

    assert_int_equal(hri_os_open_regular("/dev/null", &fd, &size, &e), HURRAY_E_IO);
    assert_non_null(strstr(e.message, "character device"));

    /* a socket cannot even be opened (ENXIO): the message still says what it is */
    path_in(p, sizeof p, "sock");
    int sk = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(sk >= 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    assert_true(strlen(p) < sizeof sa.sun_path);
    strcpy(sa.sun_path, p);
    assert_int_equal(bind(sk, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(hri_os_open_regular(p, &fd, &size, &e), HURRAY_E_IO);
    assert_non_null(strstr(e.message, "socket"));
    assert_non_null(strstr(e.message, p));
    assert_true(e.sys_errno != 0);
    close(sk);

    path_in(p, sizeof p, "missing");
    assert_int_equal(hri_os_open_regular(p, &fd, &size, &e), HURRAY_E_IO);
    assert_int_equal(e.sys_errno, ENOENT);
    assert_int_equal(fd, HRI_OS_NO_FD);
}

static void test_pread_and_size(void **state) {
    (void)state;
    char p[300];
    uint8_t data[10000], got[10000];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7);
    write_file(path_in(p, sizeof p, "f"), data, sizeof data, 0644);
    hri_os_fd fd = HRI_OS_NO_FD;
    uint64_t size = 0;
    size_t n = 0;
    struct hurray_error e;
    assert_int_equal(hri_os_open_regular(p, &fd, &size, &e), HURRAY_OK);
    assert_int_equal(size, sizeof data);
    assert_int_equal(hri_os_pread(fd, got, 100, 5000, &n, p, &e), HURRAY_OK);
    assert_int_equal(n, 100);
    assert_memory_equal(got, data + 5000, 100);
    /* short at the end of the file */
    assert_int_equal(hri_os_pread(fd, got, 100, 9950, &n, p, &e), HURRAY_OK);
    assert_int_equal(n, 50);
    assert_int_equal(hri_os_pread(fd, got, 10, UINT64_MAX - 5, &n, p, &e), HURRAY_E_OVERFLOW);
    assert_int_equal(hri_os_close(&fd, p, &e), HURRAY_OK);
    assert_int_equal(fd, HRI_OS_NO_FD);
    assert_int_equal(hri_os_close(&fd, p, &e), HURRAY_OK); /* idempotent */
}

/* Scatter reads: more ranges than one system call takes (RVEC_BATCH), each filled from
 * consecutive file bytes; short at the end of the file; empty ranges and offsets past
 * the largest are refused. */
static void test_preadv_scatter(void **state) {
    (void)state;
    char p[300];
    enum { N = 700, L = 13 };
    static uint8_t data[N * L], got[N][L];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 31 + 7);
    write_file(path_in(p, sizeof p, "v"), data, sizeof data, 0644);
    hri_os_fd fd = HRI_OS_NO_FD;
    uint64_t size = 0;
    size_t n = 0;
    struct hurray_error e;
    struct hri_os_rvec v[N];
    assert_int_equal(hri_os_open_regular(p, &fd, &size, &e), HURRAY_OK);
    for (size_t k = 0; k < N; k++) v[k] = (struct hri_os_rvec){got[k], L};
    memset(got, 0, sizeof got);
    assert_int_equal(hri_os_preadv(fd, v, N, 0, &n, p, &e), HURRAY_OK);
    assert_int_equal(n, sizeof data);
    assert_memory_equal(got, data, sizeof data);
    /* from an offset: the last ranges run past the end */
    memset(got, 0, sizeof got);
    assert_int_equal(hri_os_preadv(fd, v, N, 100, &n, p, &e), HURRAY_OK);
    assert_int_equal(n, sizeof data - 100);
    assert_memory_equal(got, data + 100, sizeof data - 100);
    v[3].len = 0;
    assert_int_equal(hri_os_preadv(fd, v, N, 0, &n, p, &e), HURRAY_E_INTERNAL);
    v[3].len = L;
    assert_int_equal(hri_os_preadv(fd, v, 2, UINT64_MAX - 5, &n, p, &e), HURRAY_E_OVERFLOW);
    assert_int_equal(hri_os_close(&fd, p, &e), HURRAY_OK);
}

/* A private mapping is writable and copy-on-write: the file never changes. */
static void test_map_private_is_copy_on_write(void **state) {
    (void)state;
    char p[300];
    size_t g = hri_os_map_granularity();
    size_t len = 3 * g;
    uint8_t *data = malloc(len), *back = malloc(len);
    assert_non_null(data);
    assert_non_null(back);
    for (size_t i = 0; i < len; i++) data[i] = (uint8_t)i;
    write_file(path_in(p, sizeof p, "m"), data, len, 0644);
    hri_os_fd fd = HRI_OS_NO_FD;
    uint64_t size = 0;
    struct hurray_error e;
    assert_int_equal(hri_os_open_regular(p, &fd, &size, &e), HURRAY_OK);
    struct hri_os_mapping m = {0};
    void *addr = NULL;
    /* an offset that is not page-aligned */
    assert_int_equal(hri_os_map_private(fd, g + 10, 100, p, &addr, &m, &e), HURRAY_OK);
    assert_memory_equal(addr, data + g + 10, 100);
    memset(addr, 0xAB, 100); /* must not fault, must not reach the file */
    hri_os_unmap(&m);
    assert_null(m.base);
    hri_os_unmap(&m);
    size_t n = 0;
    assert_int_equal(hri_os_pread(fd, back, len, 0, &n, p, &e), HURRAY_OK);
    assert_int_equal(n, len);
    assert_memory_equal(back, data, len);
    assert_int_equal(hri_os_map_private(fd, 0, 0, p, &addr, &m, &e), HURRAY_E_ARGUMENT);
    assert_int_equal(hri_os_close(&fd, p, &e), HURRAY_OK);
    free(data);
    free(back);
}

/* A read with a timeout on a pipe nobody writes to ends with ETIMEDOUT. */
static void test_read_timeout(void **state) {
    (void)state;
    int pf[2];
    assert_int_equal(pipe(pf), 0);
    uint8_t b[4];
    size_t got = 99;
    struct hurray_error e;
    struct hri_os_wait w = {.timeout_ms = 50};
    assert_int_equal(hri_os_read(pf[0], b, sizeof b, &got, &w, "transport", &e), HURRAY_E_IO);
    assert_int_equal(e.sys_errno, ETIMEDOUT);
    /* data, then end of input once the writer is gone */
    assert_int_equal(write(pf[1], "ab", 2), 2);
    close(pf[1]);
    assert_int_equal(hri_os_read(pf[0], b, sizeof b, &got, &w, "transport", &e), HURRAY_OK);
    assert_int_equal(got, 2);
    assert_int_equal(hri_os_read(pf[0], b, sizeof b, &got, &w, "transport", &e), HURRAY_OK);
    assert_int_equal(got, 0);
    close(pf[0]);
}

struct wake_arg {
    struct hri_os_waker *w;
};

static void *wake_later(void *arg) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    hri_os_waker_signal(((struct wake_arg *)arg)->w);
    return NULL;
}

/* Another thread's waker ends a read blocked forever at once. */
static void test_waker_interrupts_blocked_read(void **state) {
    (void)state;
    int pf[2];
    assert_int_equal(pipe(pf), 0);
    struct hri_os_waker *wk = NULL;
    struct hurray_error e;
    assert_int_equal(hri_os_waker_create(&wk, &e), HURRAY_OK);
    struct wake_arg a = {wk};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wake_later, &a), 0);
    uint8_t b[4];
    size_t got = 0;
    struct hri_os_wait w = {.timeout_ms = -1, .waker = wk};
    assert_int_equal(hri_os_read(pf[0], b, sizeof b, &got, &w, "transport", &e), HURRAY_E_IO);
    assert_int_equal(e.sys_errno, ECANCELED);
    pthread_join(t, NULL);
    /* stays signalled */
    assert_int_equal(hri_os_read(pf[0], b, sizeof b, &got, &w, "transport", &e), HURRAY_E_IO);
    hri_os_waker_signal(wk); /* idempotent */
    hri_os_waker_destroy(wk);
    hri_os_waker_destroy(NULL);
    close(pf[0]);
    close(pf[1]);
}

/* A write with a timeout never blocks inside the call: into a pipe or a socket
 * nobody reads, it fills what room there is and then ends with ETIMEDOUT (a
 * plain blocking write of more than the room would wait forever). */
static void test_write_timeout_pipe_and_socket(void **state) {
    (void)state;
    static uint8_t big[4 << 20];
    struct hurray_error e;
    struct hri_os_wait w = {.timeout_ms = 50};
    int pf[2];
    assert_int_equal(pipe(pf), 0);
    assert_int_equal(hri_os_write_all(pf[1], big, sizeof big, &w, "transport", &e), HURRAY_E_IO);
    assert_int_equal(e.sys_errno, ETIMEDOUT);
    close(pf[0]);
    close(pf[1]);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pf), 0);
    assert_int_equal(hri_os_write_all(pf[1], big, sizeof big, &w, "transport", &e), HURRAY_E_IO);
    assert_int_equal(e.sys_errno, ETIMEDOUT);
    close(pf[0]);
    close(pf[1]);
}

/* A timeout survives signals: with SIGALRM arriving every 2 ms, a 100 ms wait on a
 * silent pipe still ends with ETIMEDOUT (a wait that restarted its timeout at each
 * EINTR would never end; the hook stops it after 5000 interruptions so the test
 * fails instead of hanging). stream.md HR-STREAM-14. */
static volatile sig_atomic_t alarms;
static void on_alarm(int sig) {
    (void)sig;
    alarms++;
}
static int eintr_hook(void *ctx) {
    int *n = ctx;
    return ++*n >= 5000; /* 5000 x 2 ms = 10 s: far past the 100 ms deadline */
}

static void test_timeout_keeps_its_deadline_across_signals(void **state) {
    (void)state;
    int pf[2];
    assert_int_equal(pipe(pf), 0);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: poll fails with EINTR */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    struct itimerval it = {{0, 2000}, {0, 2000}}, off = {{0, 0}, {0, 0}};
    assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
    int hooks = 0;
    struct hri_os_wait w = {.timeout_ms = 100, .on_eintr = eintr_hook, .ctx = &hooks};
    uint8_t b[4];
    size_t got = 0;
    struct hurray_error e;
    int st = hri_os_read(pf[0], b, sizeof b, &got, &w, "transport", &e);
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    assert_int_equal(st, HURRAY_E_IO);
    assert_int_equal(e.sys_errno, ETIMEDOUT);
    assert_true(hooks > 0 && hooks < 5000); /* interrupted, resumed, and still timed out */
    close(pf[0]);
    close(pf[1]);
}

/* Resident memory of this process in bytes (Linux /proc), or -1 where unknown. */
static long long rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long long size = 0, res = 0;
    if (!f) return -1;
    int n = fscanf(f, "%lld %lld", &size, &res);
    fclose(f);
    return n == 2 ? res * (long long)sysconf(_SC_PAGESIZE) : -1;
}

/* A reservation costs nothing until committed and written; commits are rounded to
 * pages, repeatable, and the address never moves. stream.md HR-STREAM-16. */
static void test_reserve_commit_release(void **state) {
    (void)state;
    struct hurray_error e;
    size_t page = hri_os_page_size();
    assert_true(page >= 4096 && (page & (page - 1)) == 0);
    size_t len = sizeof(size_t) >= 8 ? (size_t)16 << 30 : (size_t)256 << 20; /* 16 GiB */
    void *base = NULL;
    long long before = rss_bytes();
    assert_int_equal(hri_os_reserve(len, &base, &e), HURRAY_OK);
    assert_non_null(base);
    assert_int_equal((uintptr_t)base % page, 0);
    long long reserved = rss_bytes();
    if (before >= 0) assert_true(reserved - before < (1 << 20)); /* no memory behind it */
    /* commit a range that straddles pages; write every committed byte */
    assert_int_equal(hri_os_commit(base, len, 100, 3 * page, &e), HURRAY_OK);
    memset((uint8_t *)base + 100, 0xA5, 3 * page);
    assert_int_equal(hri_os_commit(base, len, 0, page, &e), HURRAY_OK); /* again: harmless */
    assert_int_equal(((uint8_t *)base)[100], 0xA5);                     /* and keeps the bytes */
    /* the last bytes of the reservation, and a range past it (clipped, ignored) */
    assert_int_equal(hri_os_commit(base, len, len - 10, 100, &e), HURRAY_OK);
    ((uint8_t *)base)[len - 1] = 7;
    assert_int_equal(hri_os_commit(base, len, len, 100, &e), HURRAY_OK);
    long long touched = rss_bytes();
    if (before >= 0) assert_true(touched - before < (2 << 20)); /* five pages, not 16 GiB */
    hri_os_release(base, len);
    hri_os_release(NULL, 0);
    assert_int_equal(hri_os_reserve(0, &base, &e), HURRAY_E_ARGUMENT);
    /* more address space than exists: NOMEM, not a crash */
    assert_int_equal(hri_os_reserve(SIZE_MAX - page, &base, &e), HURRAY_E_NOMEM);
    assert_int_equal(e.code, HURRAY_E_NOMEM);
}

/* writev_all writes every range in order, across partial writes. */
static void test_writev_all(void **state) {
    (void)state;
    char p[300];
    path_in(p, sizeof p, "v");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    static uint8_t big[3000 * 100];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 13);
    static struct hri_os_iovec v[3000];
    size_t total = 0;
    for (int i = 0; i < 3000; i++) { /* more ranges than one writev takes, some empty */
        v[i].base = big + total;
        v[i].len = (size_t)(i % 5 == 0 ? 0 : (i % 7) * 19);
        total += v[i].len;
    }
    struct hurray_error e;
    assert_int_equal(hri_os_writev_all(fd, v, 3000, NULL, "file", &e), HURRAY_OK);
    close(fd);
    uint8_t *back = malloc(total);
    fd = open(p, O_RDONLY);
    assert_int_equal(read(fd, back, total), (ssize_t)total);
    close(fd);
    assert_memory_equal(back, big, total);
    free(back);
}

/* The temporary file takes the target's mode; a replace through a symbolic
 * link replaces the link's target and keeps the link. */
static void test_temp_keeps_mode_and_follows_links(void **state) {
    (void)state;
    char target[300], link[300], tmp[4096];
    path_in(target, sizeof target, "t");
    path_in(link, sizeof link, "l");
    write_file(target, "old", 3, 0600);
    assert_int_equal(symlink(target, link), 0);
    hri_os_fd fd = HRI_OS_NO_FD;
    struct hurray_error e;
    assert_int_equal(hri_os_temp_create(link, tmp, sizeof tmp, &fd, &e), HURRAY_OK);
    assert_non_null(strstr(tmp, ".hurray-tmp-"));
    assert_int_equal(strncmp(tmp, target, strlen(target)), 0); /* beside the real file */
    assert_int_equal(hri_os_write_all(fd, "new!", 4, NULL, "file", &e), HURRAY_OK);
    assert_int_equal(hri_os_sync(fd, tmp, &e), HURRAY_OK);
    assert_int_equal(hri_os_close(&fd, tmp, &e), HURRAY_OK);
    assert_int_equal(hri_os_replace(tmp, link, &e), HURRAY_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(st.st_size, 4);
    hri_os_remove(tmp); /* already gone: ignored */
}


/* ---- failures of the system calls themselves ------------------------------------------- */

/* A commit of address space the process does not hold fails with NOMEM and the
 * system's errno (ENOMEM from mprotect), not a crash: a reservation made and
 * released again is such a range. stream.md HR-STREAM-16. */
static void test_commit_failure_is_nomem(void **state) {
    (void)state;
    struct hurray_error e;
    size_t page = hri_os_page_size();
    void *base = NULL;
    assert_int_equal(hri_os_reserve(4 * page, &base, &e), HURRAY_OK);
    hri_os_release(base, 4 * page);
    test_error_poison(&e);
    assert_int_equal(hri_os_commit(base, 4 * page, 0, page, &e), HURRAY_E_NOMEM);
    assert_hurray_error(&e, HURRAY_E_NOMEM, "buffer");
    assert_int_equal(e.sys_errno, ENOMEM);
}

/* The lowest descriptor number not in use. */
static int lowest_free_fd(void) {
    int fd = dup(0);
    assert_true(fd >= 0);
    close(fd);
    return fd;
}

/* A waker needs a pipe: with no descriptor left (RLIMIT_NOFILE), creating one
 * fails with the system's EMFILE and frees what it took. */
static void test_waker_without_descriptors(void **state) {
    (void)state;
    struct rlimit old, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    low = old;
    low.rlim_cur = (rlim_t)lowest_free_fd(); /* every descriptor below it is in use */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    struct hri_os_waker *wk = NULL;
    struct hurray_error e;
    int st = hri_os_waker_create(&wk, &e);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_int_equal(st, HURRAY_E_IO);
    assert_hurray_error(&e, HURRAY_E_IO, "waker");
    assert_int_equal(e.sys_errno, EMFILE);
}

/* Reading a descriptor that cannot be read (the write end of a pipe) is IO with
 * the system's errno; so is syncing a descriptor that is not open. */
static void test_HR_STREAM_11_os_errors_are_io(void **state) {
    (void)state;
    int pf[2];
    assert_int_equal(pipe(pf), 0);
    uint8_t b[4];
    size_t got = 99;
    struct hurray_error e;
    assert_int_equal(hri_os_read(pf[1], b, sizeof b, &got, NULL, "transport", &e), HURRAY_E_IO);
    assert_hurray_error(&e, HURRAY_E_IO, "transport");
    assert_int_equal(e.sys_errno, EBADF);
    close(pf[0]);
    close(pf[1]);
    int closed = lowest_free_fd();
    assert_int_equal(hri_os_sync(closed, "gone", &e), HURRAY_E_IO);
    assert_int_equal(e.sys_errno, EBADF);
    assert_non_null(strstr(e.message, "gone"));
    int sp[2]; /* a pipe cannot sync: not an error */
    assert_int_equal(pipe(sp), 0);
    assert_int_equal(hri_os_sync(sp[1], NULL, &e), HURRAY_OK);
    close(sp[0]);
    close(sp[1]);
}

/* Interrupted calls without a timeout (os.h): a read or write blocked in the
 * call itself, or in the wait for readiness after EAGAIN on a non-blocking
 * descriptor, is resumed when the EINTR hook says so and ends with EINTR when it
 * says stop. SIGALRM every 2 ms interrupts; the hook makes the progress the call
 * waits for (a byte to read, room to write), so nothing depends on timing. */
struct hook_ctx {
    int fd;        /* what the hook acts on */
    int resume;    /* calls that resume before the hook says stop (-1: always resume) */
    int act;       /* 1: write a byte into fd; 2: drain fd */
    int calls;
};

static int pipe_hook(void *ctx) {
    struct hook_ctx *h = ctx;
    h->calls++;
    if (h->act == 1) assert_int_equal(write(h->fd, "z", 1), 1);
    if (h->act == 2) {
        static uint8_t sink[1 << 16];
        while (read(h->fd, sink, sizeof sink) > 0) {
        }
    }
    h->act = 0; /* once */
    return h->resume >= 0 && h->calls > h->resume;
}

static void alarm_every_2ms(struct sigaction *old) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: blocked calls fail with EINTR */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, old), 0);
    struct itimerval it = {{0, 2000}, {0, 2000}};
    assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
}

static void alarm_off(const struct sigaction *old) {
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, old, NULL);
}

static void set_nonblocking(int fd) {
    int fl = fcntl(fd, F_GETFL);
    assert_true(fl >= 0);
    assert_int_equal(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
}

/* Fills a non-blocking pipe to the brim. */
static void fill_pipe(int wr) {
    static uint8_t chunk[4096];
    while (write(wr, chunk, sizeof chunk) > 0) {
    }
    while (write(wr, chunk, 1) > 0) {
    }
}

static void test_HR_STREAM_11_read_resumes_after_eintr_and_eagain(void **state) {
    (void)state;
    struct sigaction old;
    int pf[2];
    uint8_t b[4];
    size_t got = 0;
    struct hurray_error e;
    assert_int_equal(pipe(pf), 0);
    alarm_every_2ms(&old);
    /* blocked in read(): the hook supplies a byte and resumes; the read returns it */
    struct hook_ctx h = {pf[1], -1, 1, 0};
    struct hri_os_wait w = {.timeout_ms = -1, .on_eintr = pipe_hook, .ctx = &h};
    int st1 = hri_os_read(pf[0], b, sizeof b, &got, &w, "transport", &e);
    size_t got1 = got;
    /* blocked in read(): the hook says stop */
    struct hook_ctx stop = {pf[1], 0, 0, 0};
    w.ctx = &stop;
    int st2 = hri_os_read(pf[0], b, sizeof b, &got, &w, "transport", &e);
    int errno2 = e.sys_errno;
    /* non-blocking: EAGAIN, then the wait for readiness; interrupted there, the
     * hook supplies a byte and resumes; the read after the wait returns it */
    set_nonblocking(pf[0]);
    struct hook_ctx h3 = {pf[1], -1, 1, 0};
    w.ctx = &h3;
    int st3 = hri_os_read(pf[0], b, sizeof b, &got, &w, "transport", &e);
    size_t got3 = got;
    alarm_off(&old);
    assert_int_equal(st1, HURRAY_OK);
    assert_int_equal(got1, 1);
    assert_true(h.calls >= 1);
    assert_int_equal(st2, HURRAY_E_IO);
    assert_int_equal(errno2, EINTR);
    assert_int_equal(stop.calls, 1);
    assert_int_equal(st3, HURRAY_OK);
    assert_int_equal(got3, 1);
    assert_true(h3.calls >= 1);
    close(pf[0]);
    close(pf[1]);
}

static void test_HR_STREAM_11_write_resumes_after_eintr_and_eagain(void **state) {
    (void)state;
    struct sigaction old;
    int pf[2];
    struct hurray_error e;
    assert_int_equal(pipe(pf), 0);
    set_nonblocking(pf[0]);
    set_nonblocking(pf[1]);
    fill_pipe(pf[1]);
    alarm_every_2ms(&old);
    /* non-blocking and full: EAGAIN, the wait for room is interrupted, the hook
     * drains the pipe and resumes; the write then completes */
    struct hook_ctx h = {pf[0], -1, 2, 0};
    struct hri_os_wait w = {.timeout_ms = -1, .on_eintr = pipe_hook, .ctx = &h};
    int st1 = hri_os_write_all(pf[1], "abc", 3, &w, "transport", &e);
    /* blocking and full: blocked in writev(); the hook resumes once, then stops */
    fill_pipe(pf[1]);
    int fl = fcntl(pf[1], F_GETFL);
    assert_int_equal(fcntl(pf[1], F_SETFL, fl & ~O_NONBLOCK), 0);
    struct hook_ctx stop = {pf[0], 1, 0, 0};
    w.ctx = &stop;
    int st2 = hri_os_write_all(pf[1], "abc", 3, &w, "transport", &e);
    int errno2 = e.sys_errno;
    alarm_off(&old);
    assert_int_equal(st1, HURRAY_OK);
    assert_true(h.calls >= 1);
    assert_int_equal(st2, HURRAY_E_IO);
    assert_int_equal(errno2, EINTR);
    assert_int_equal(stop.calls, 2);
    close(pf[0]);
    close(pf[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_refuses_special_files),
        cmocka_unit_test(test_pread_and_size),
        cmocka_unit_test(test_preadv_scatter),
        cmocka_unit_test(test_map_private_is_copy_on_write),
        cmocka_unit_test(test_read_timeout),
        cmocka_unit_test(test_waker_interrupts_blocked_read),
        cmocka_unit_test(test_write_timeout_pipe_and_socket),
        cmocka_unit_test(test_timeout_keeps_its_deadline_across_signals),
        cmocka_unit_test(test_reserve_commit_release),
        cmocka_unit_test(test_writev_all),
        cmocka_unit_test(test_temp_keeps_mode_and_follows_links),
        cmocka_unit_test(test_commit_failure_is_nomem),
        cmocka_unit_test(test_waker_without_descriptors),
        cmocka_unit_test(test_HR_STREAM_11_os_errors_are_io),
        cmocka_unit_test(test_HR_STREAM_11_read_resumes_after_eintr_and_eagain),
        cmocka_unit_test(test_HR_STREAM_11_write_resumes_after_eintr_and_eagain),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
