/* The Windows OS layer (reference/src/os_win32.c) exercised on Windows.
 *
 * Built by `make cross-windows` with mingw-w64 against the cross-built library and run
 * under Wine where it is installed (the same checks reference/tests/os_test.c makes of
 * os_posix.c, in Win32 terms). Plain C, no test framework: each CHECK prints what failed;
 * the last line is "N passed, N failed" and the exit status is non-zero on any failure. */
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "os.h"

static int passed, failed;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (cond) {                                                                            \
            passed++;                                                                          \
        } else {                                                                               \
            failed++;                                                                          \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                             \
        }                                                                                      \
    } while (0)

static char dir[MAX_PATH];

static void path_in(char *out, size_t cap, const char *name) {
    snprintf(out, cap, "%s\\%s", dir, name);
}

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, n, f);
    fclose(f);
}

static void test_open_refuses_special_files(void) {
    hri_os_fd fd = HRI_OS_NO_FD;
    uint64_t size = 0;
    struct hurray_error e;
    /* a directory */
    CHECK(hri_os_open_regular(dir, &fd, &size, &e) == HURRAY_E_IO);
    CHECK(e.sys_errno == EISDIR);
    CHECK(strstr(e.message, "a directory") != NULL);
    /* missing */
    char p[MAX_PATH + 32];
    path_in(p, sizeof p, "missing.bin");
    CHECK(hri_os_open_regular(p, &fd, &size, &e) == HURRAY_E_IO);
    CHECK(e.sys_errno == ENOENT);
    CHECK(strstr(e.message, "missing.bin") != NULL);
    /* a character device (the console's NUL) */
    CHECK(hri_os_open_regular("NUL", &fd, &size, &e) == HURRAY_E_IO);
    CHECK(strstr(e.message, "not a regular file") != NULL);
    /* not UTF-8 */
    CHECK(hri_os_open_regular("bad\xff.bin", &fd, &size, &e) == HURRAY_E_ARGUMENT);
}

static void test_pread_map_unicode_path(void) {
    char p[MAX_PATH + 32];
    path_in(p, sizeof p, "\xc3\xa9t\xc3\xa9-\xe6\x95\xb0.bin"); /* "été-数.bin" in UTF-8 */
    size_t len = 200000;                                         /* > 64 KiB granularity */
    uint8_t *data = malloc(len), *back = malloc(len);
    for (size_t i = 0; i < len; i++) data[i] = (uint8_t)(i * 7 + 3);
    hri_os_fd fd = HRI_OS_NO_FD;
    uint64_t size = 0;
    struct hurray_error e;
    /* fopen cannot name the file in UTF-8; create it with the layer (temp + replace). */
    char tmp[MAX_PATH + 128];
    CHECK(hri_os_temp_create(p, tmp, sizeof tmp, &fd, &e) == HURRAY_OK);
    CHECK(hri_os_write_all(fd, data, len, NULL, "file", &e) == HURRAY_OK);
    CHECK(hri_os_sync(fd, tmp, &e) == HURRAY_OK);
    CHECK(hri_os_close(&fd, tmp, &e) == HURRAY_OK);
    CHECK(hri_os_replace(tmp, p, &e) == HURRAY_OK);

    CHECK(hri_os_open_regular(p, &fd, &size, &e) == HURRAY_OK);
    CHECK(size == len);
    size_t got = 0;
    CHECK(hri_os_pread(fd, back, 1000, 150000, &got, p, &e) == HURRAY_OK);
    CHECK(got == 1000 && memcmp(back, data + 150000, 1000) == 0);
    CHECK(hri_os_pread(fd, back, 1000, len - 10, &got, p, &e) == HURRAY_OK);
    CHECK(got == 10); /* short only at the end of the file */
    /* copy-on-write at an offset that is not granularity-aligned */
    CHECK(hri_os_map_granularity() >= 4096);
    void *addr = NULL;
    struct hri_os_mapping m = {0};
    CHECK(hri_os_map_private(fd, 70001, 50000, p, &addr, &m, &e) == HURRAY_OK);
    if (addr) {
        CHECK(memcmp(addr, data + 70001, 50000) == 0);
        ((uint8_t *)addr)[0] ^= 0xFF; /* writable, never reaches the file */
    }
    hri_os_unmap(&m);
    hri_os_unmap(&m); /* idempotent */
    CHECK(hri_os_pread(fd, back, 1, 70001, &got, p, &e) == HURRAY_OK && back[0] == data[70001]);
    CHECK(hri_os_map_private(fd, 0, 0, p, &addr, &m, &e) == HURRAY_E_ARGUMENT);
    hri_os_fd d = HRI_OS_NO_FD;
    CHECK(hri_os_dup(fd, &d, "fd", &e) == HURRAY_OK);
    CHECK(hri_os_close(&fd, p, &e) == HURRAY_OK && fd == HRI_OS_NO_FD);
    CHECK(hri_os_pread(d, back, 4, 0, &got, p, &e) == HURRAY_OK && got == 4); /* dup lives on */
    CHECK(hri_os_close(&d, p, &e) == HURRAY_OK);
    CHECK(hri_os_close(&d, p, &e) == HURRAY_OK); /* NO_FD: nothing to do */
    hri_os_remove(p);
    CHECK(hri_os_open_regular(p, &fd, &size, &e) == HURRAY_E_IO && e.sys_errno == ENOENT);
    free(data);
    free(back);
}

static void test_replace_over_open_reader(void) {
    char p[MAX_PATH + 32], tmp[MAX_PATH + 128];
    path_in(p, sizeof p, "r.bin");
    write_file(p, "old!", 4);
    hri_os_fd r = HRI_OS_NO_FD, w = HRI_OS_NO_FD;
    uint64_t size = 0;
    struct hurray_error e;
    CHECK(hri_os_open_regular(p, &r, &size, &e) == HURRAY_OK && size == 4);
    CHECK(hri_os_temp_create(p, tmp, sizeof tmp, &w, &e) == HURRAY_OK);
    CHECK(strstr(tmp, ".hurray-tmp-") != NULL);
    CHECK(hri_os_write_all(w, "new data", 8, NULL, "file", &e) == HURRAY_OK);
    CHECK(hri_os_close(&w, tmp, &e) == HURRAY_OK);
    /* With POSIX rename semantics (Windows 10 1809+, NTFS) a reader holding the old file
     * (opened with FILE_SHARE_DELETE) does not block the replace and keeps the old bytes.
     * Without them (older Windows, FAT, Wine) the replace is refused with EACCES, the old
     * file intact, as os_win32.c documents; once the reader is gone it goes through. */
    uint8_t b[8];
    size_t got = 0;
    if (hri_os_replace(tmp, p, &e) == HURRAY_OK) {
        printf("replace over an open reader: POSIX semantics\n");
        CHECK(hri_os_pread(r, b, 4, 0, &got, p, &e) == HURRAY_OK && got == 4 &&
              memcmp(b, "old!", 4) == 0);
        CHECK(hri_os_close(&r, p, &e) == HURRAY_OK);
    } else {
        printf("replace over an open reader: refused (no POSIX rename semantics here)\n");
        CHECK(e.code == HURRAY_E_IO && e.sys_errno == EACCES);
        CHECK(strstr(e.message, "r.bin") != NULL);
        CHECK(hri_os_pread(r, b, 4, 0, &got, p, &e) == HURRAY_OK && got == 4 &&
              memcmp(b, "old!", 4) == 0);
        CHECK(hri_os_close(&r, p, &e) == HURRAY_OK);
        CHECK(hri_os_replace(tmp, p, &e) == HURRAY_OK);
    }
    CHECK(hri_os_open_regular(p, &r, &size, &e) == HURRAY_OK && size == 8);
    CHECK(hri_os_close(&r, p, &e) == HURRAY_OK);
    hri_os_remove(p);
}

static void test_pipe_read_timeout_and_eof(void) {
    HANDLE rd, wr;
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, FALSE};
    CHECK(CreatePipe(&rd, &wr, &sa, 0));
    uint8_t b[4];
    size_t got = 99;
    struct hurray_error e;
    struct hri_os_wait w = {.timeout_ms = 50};
    CHECK(hri_os_read((hri_os_fd)rd, b, sizeof b, &got, &w, "transport", &e) == HURRAY_E_IO);
    CHECK(e.sys_errno == ETIMEDOUT);
    DWORD n = 0;
    CHECK(WriteFile(wr, "ab", 2, &n, NULL) && n == 2);
    CloseHandle(wr);
    CHECK(hri_os_read((hri_os_fd)rd, b, sizeof b, &got, &w, "transport", &e) == HURRAY_OK);
    CHECK(got == 2 && memcmp(b, "ab", 2) == 0);
    CHECK(hri_os_read((hri_os_fd)rd, b, sizeof b, &got, &w, "transport", &e) == HURRAY_OK);
    CHECK(got == 0); /* the writer is gone: end of input */
    CloseHandle(rd);
}

static DWORD WINAPI wake_later(LPVOID arg) {
    Sleep(20);
    hri_os_waker_signal((struct hri_os_waker *)arg);
    return 0;
}

static void test_waker_interrupts_blocked_read(void) {
    HANDLE rd, wr;
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, FALSE};
    CHECK(CreatePipe(&rd, &wr, &sa, 0));
    struct hri_os_waker *wk = NULL;
    struct hurray_error e;
    CHECK(hri_os_waker_create(&wk, &e) == HURRAY_OK);
    HANDLE t = CreateThread(NULL, 0, wake_later, wk, 0, NULL);
    uint8_t b[4];
    size_t got = 0;
    struct hri_os_wait w = {.timeout_ms = -1, .waker = wk};
    CHECK(hri_os_read((hri_os_fd)rd, b, sizeof b, &got, &w, "transport", &e) == HURRAY_E_IO);
    CHECK(e.sys_errno == ECANCELED);
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
    /* stays signalled */
    CHECK(hri_os_read((hri_os_fd)rd, b, sizeof b, &got, &w, "transport", &e) == HURRAY_E_IO);
    hri_os_waker_signal(wk); /* idempotent */
    hri_os_waker_destroy(wk);
    hri_os_waker_destroy(NULL);
    CloseHandle(rd);
    CloseHandle(wr);
}

static void test_writev_all_to_pipe_and_file(void) {
    HANDLE rd, wr;
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, FALSE};
    CHECK(CreatePipe(&rd, &wr, &sa, 1 << 16));
    struct hri_os_iovec v[3] = {{"abc", 3}, {"", 0}, {"defgh", 5}};
    struct hurray_error e;
    CHECK(hri_os_writev_all((hri_os_fd)wr, v, 3, NULL, "transport", &e) == HURRAY_OK);
    char b[16] = {0};
    DWORD n = 0;
    CHECK(ReadFile(rd, b, sizeof b, &n, NULL) && n == 8 && memcmp(b, "abcdefgh", 8) == 0);
    /* the reader gone: EPIPE */
    CloseHandle(rd);
    CHECK(hri_os_write_all((hri_os_fd)wr, "x", 1, NULL, "transport", &e) == HURRAY_E_IO);
    CHECK(e.sys_errno == EPIPE);
    CloseHandle(wr);
}

/* A reservation costs nothing until committed; committed pages are writable and a
 * second commit of the same range is harmless (stream.md HR-STREAM-16). */
static void test_reserve_commit_release(void) {
    struct hurray_error e;
    void *b = NULL;
    size_t page = hri_os_page_size(), len = (size_t)1 << 30; /* 1 GiB of address space */
    CHECK(page >= 4096);
    CHECK(hri_os_reserve(len, &b, &e) == HURRAY_OK);
    CHECK(b != NULL && (uintptr_t)b % page == 0);
    CHECK(hri_os_commit(b, len, 10, 3 * page, &e) == HURRAY_OK);
    memset(b, 0x5A, 3 * page + 10);
    CHECK(((uint8_t *)b)[3 * page + 9] == 0x5A);
    CHECK(hri_os_commit(b, len, 0, page, &e) == HURRAY_OK); /* again: harmless */
    CHECK(((uint8_t *)b)[0] == 0x5A);
    CHECK(hri_os_commit(b, len, len - 1, 100, &e) == HURRAY_OK); /* clipped to the end */
    ((uint8_t *)b)[len - 1] = 1;
    hri_os_release(b, len);
    hri_os_release(NULL, 0);
    CHECK(hri_os_reserve(0, &b, &e) == HURRAY_E_ARGUMENT);
}

int main(void) {
    char base[MAX_PATH];
    DWORD n = GetTempPathA(sizeof base, base);
    if (n == 0 || n >= sizeof base) return 2;
    snprintf(dir, sizeof dir, "%shurray-os-%lu", base, (unsigned long)GetCurrentProcessId());
    CreateDirectoryA(dir, NULL);
    test_open_refuses_special_files();
    test_pread_map_unicode_path();
    test_replace_over_open_reader();
    test_pipe_read_timeout_and_eof();
    test_waker_interrupts_blocked_read();
    test_writev_all_to_pipe_and_file();
    test_reserve_commit_release();
    RemoveDirectoryA(dir);
    printf("os_win32_check: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
