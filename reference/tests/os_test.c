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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_refuses_special_files),
        cmocka_unit_test(test_pread_and_size),
        cmocka_unit_test(test_map_private_is_copy_on_write),
        cmocka_unit_test(test_read_timeout),
        cmocka_unit_test(test_waker_interrupts_blocked_read),
        cmocka_unit_test(test_writev_all),
        cmocka_unit_test(test_temp_keeps_mode_and_follows_links),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
