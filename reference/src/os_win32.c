/* The operating-system layer for Windows. See os.h: this file and os_posix.c
 * are the only files of libhurray that make system calls; each implements
 * every function of os.h, and a build compiles exactly one of them (the
 * other reduces to an empty unit).
 *
 * Handles. An hri_os_fd here is a Win32 HANDLE stored as an integer
 * (HRI_OS_NO_FD is INVALID_HANDLE_VALUE). A caller holding a C runtime
 * descriptor converts it with _get_osfhandle before passing it in.
 *
 * Paths are UTF-8 (the library's convention everywhere) and are converted to
 * UTF-16 for the wide ("W") API, so any file name Windows can hold can be
 * named. Error numbers: every Win32 error is mapped onto the POSIX errno value
 * os.h promises (ENOENT, EACCES, ETIMEDOUT, ECANCELED, EPIPE, ...); the
 * message keeps the system's own text and the Windows error code.
 *
 * Differences from POSIX that callers may observe (documented, not hidden):
 * - hri_os_pread uses ReadFile with an OVERLAPPED offset on a synchronous
 *   handle, which also moves the handle's file pointer (POSIX pread does
 *   not); libhurray never relies on the pointer of a file it preads.
 * - There is no EINTR on Windows: `on_eintr` is never called. A blocked
 *   transport call is interrupted by the waker (an event) or the timeout.
 * - Readiness: a disk file is always ready; an anonymous pipe (which cannot be
 *   waited on) is polled with PeekNamedPipe, in slices of at most 16 ms, while
 *   waiting on the waker; sockets and overlapped named pipes are read and
 *   written with overlapped I/O and WaitForMultipleObjects on (I/O event,
 *   waker) with the timeout, cancelled with CancelIoEx. A write to a full
 *   anonymous pipe blocks until the reader drains it (no readiness test
 *   exists for writing).
 * - Replacing a file: with POSIX rename semantics where Windows has them
 *   (Windows 10 1809+ on NTFS), an open reader or mapping of the old file, if
 *   it shares delete access as this layer's readers do, keeps the old bytes
 *   and does not block the replace; elsewhere (MoveFileEx) any open handle of
 *   the target makes the replace fail with EACCES. */
#if defined(_WIN32)

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "os.h"

/* POSIX numbers MSVC and mingw-w64 both define (errno.h); the fallbacks are
 * their values, for a C library that lacks one. */
#ifndef ECANCELED
#define ECANCELED 105
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT 138
#endif
#ifndef ENOTSUP
#define ENOTSUP 129
#endif
#ifndef EISDIR
#define EISDIR 21
#endif

/* Largest single ReadFile/WriteFile request (a DWORD count; well below 4 GiB). */
#define IO_CHUNK ((DWORD)1 << 30)

static HANDLE as_handle(hri_os_fd fd) { return (HANDLE)fd; }

/* ---- errors ------------------------------------------------------------------------------- */

/* The POSIX errno value for a Win32 error code. */
static int map_error(DWORD code) {
    switch (code) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_BAD_NETPATH:
    case ERROR_BAD_NET_NAME:
    case ERROR_INVALID_NAME:
    case ERROR_BAD_PATHNAME:
        return ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
    case ERROR_WRITE_PROTECT:
    case ERROR_CURRENT_DIRECTORY:
    case ERROR_NETWORK_ACCESS_DENIED:
        return EACCES;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
        return EEXIST;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_COMMITMENT_LIMIT:
        return ENOMEM;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
        return ENOSPC;
    case ERROR_BROKEN_PIPE:
    case ERROR_NO_DATA:
    case ERROR_PIPE_NOT_CONNECTED:
        return EPIPE;
    case ERROR_INVALID_HANDLE:
        return EBADF;
    case ERROR_TOO_MANY_OPEN_FILES:
        return EMFILE;
    case ERROR_DIRECTORY:
        return ENOTDIR;
    case ERROR_DIR_NOT_EMPTY:
        return ENOTEMPTY;
    case ERROR_FILENAME_EXCED_RANGE:
        return ENAMETOOLONG;
    case ERROR_NOT_SAME_DEVICE:
        return EXDEV;
    case ERROR_OPERATION_ABORTED:
        return ECANCELED;
    case ERROR_SEM_TIMEOUT:
    case WAIT_TIMEOUT:
        return ETIMEDOUT;
    case ERROR_NOT_SUPPORTED:
        return ENOTSUP;
    case ERROR_INVALID_PARAMETER:
    case ERROR_INVALID_FUNCTION:
    case ERROR_NEGATIVE_SEEK:
    case ERROR_SEEK:
        return EINVAL;
    default:
        return EIO;
    }
}

/* Texts for the numbers the layer itself reports (the C runtime's strerror
 * does not know all of them). */
static const char *errno_text(int errnum) {
    switch (errnum) {
    case ETIMEDOUT: return "Connection timed out";
    case ECANCELED: return "Operation canceled";
    case EINTR: return "Interrupted function call";
    case EISDIR: return "Is a directory";
    case EPIPE: return "Broken pipe";
    case ENOENT: return "No such file or directory";
    case EACCES: return "Permission denied";
    case EINVAL: return "Invalid argument";
    case EIO: return "Input/output error";
    default: return NULL;
    }
}

int hri_os_fail(struct hurray_error *err, int errnum, const char *field, const char *what,
                const char *path) {
    char msg[64];
    const char *text = errno_text(errnum);
    if (!text) {
        snprintf(msg, sizeof msg, "errno %d", errnum);
        text = msg;
    }
    int st = path ? hri_fail(err, HURRAY_E_IO, field, "%s \"%.200s\": %s", what, path, text)
                  : hri_fail(err, HURRAY_E_IO, field, "%s: %s", what, text);
    if (err) err->sys_errno = errnum;
    return st;
}

/* Like hri_os_fail for a Win32 error code: the system's message (UTF-8, no
 * trailing newline or full stop) and the code itself, errno mapped. */
static int win_fail(struct hurray_error *err, DWORD code, const char *field, const char *what,
                    const char *path) {
    wchar_t wmsg[160];
    char msg[200];
    DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
                             code, 0, wmsg, (DWORD)(sizeof wmsg / sizeof wmsg[0]), NULL);
    while (n > 0 && (wmsg[n - 1] == L'\r' || wmsg[n - 1] == L'\n' || wmsg[n - 1] == L'.' ||
                     wmsg[n - 1] == L' '))
        n--;
    int m = n > 0 ? WideCharToMultiByte(CP_UTF8, 0, wmsg, (int)n, msg, (int)sizeof msg - 1, NULL,
                                        NULL)
                  : 0;
    if (m <= 0) m = snprintf(msg, sizeof msg, "system error");
    msg[m < (int)sizeof msg ? m : (int)sizeof msg - 1] = '\0';
    int e = map_error(code);
    int st = path ? hri_fail(err, HURRAY_E_IO, field, "%s \"%.200s\": %s (Windows error %lu)",
                             what, path, msg, (unsigned long)code)
                  : hri_fail(err, HURRAY_E_IO, field, "%s: %s (Windows error %lu)", what, msg,
                             (unsigned long)code);
    if (err) err->sys_errno = e;
    return st;
}

/* ---- paths -------------------------------------------------------------------------------- */

/* A malloc'ed UTF-16 copy of the UTF-8 `path` in *out (ARGUMENT when it is
 * not UTF-8, NOMEM). */
static int widen(const char *path, const char *field, wchar_t **out, struct hurray_error *err) {
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
    HR_FAIL_IF(n <= 0, err, HURRAY_E_ARGUMENT, field, "path \"%.200s\" is not valid UTF-8", path);
    wchar_t *w = malloc((size_t)n * sizeof *w);
    HR_FAIL_IF(!w, err, HURRAY_E_NOMEM, field, "path: out of memory");
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n) != n) {
        free(w);
        return hri_fail(err, HURRAY_E_ARGUMENT, field, "path \"%.200s\" is not valid UTF-8", path);
    }
    *out = w;
    return HURRAY_OK;
}

/* ---- reading files ------------------------------------------------------------------------ */

/* Checks that `h` is a regular disk file and gives its size; anything else is
 * refused (IO) naming what it is, before a byte is read. */
static int regular_size(HANDLE h, const char *path, uint64_t *size, struct hurray_error *err) {
    DWORD type = GetFileType(h);
    const char *kind = NULL;
    int e = EINVAL;
    if (type == FILE_TYPE_UNKNOWN && GetLastError() != NO_ERROR)
        return win_fail(err, GetLastError(), "file", "cannot stat", path);
    if (type == FILE_TYPE_PIPE) kind = "a pipe or socket";
    else if (type == FILE_TYPE_CHAR) kind = "a character device";
    else if (type != FILE_TYPE_DISK) kind = "not a regular file";
    BY_HANDLE_FILE_INFORMATION info;
    if (!kind) {
        if (!GetFileInformationByHandle(h, &info))
            return win_fail(err, GetLastError(), "file", "cannot stat", path);
        if (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
            kind = "a directory";
            e = EISDIR;
        } else if (info.dwFileAttributes & FILE_ATTRIBUTE_DEVICE) {
            kind = "a device";
        }
    }
    if (kind) {
        int s = hri_fail(err, HURRAY_E_IO, "file",
                         "\"%.200s\" is %s, not a regular file: refused before reading",
                         path ? path : "", kind);
        if (err) err->sys_errno = e;
        return s;
    }
    *size = ((uint64_t)info.nFileSizeHigh << 32) | info.nFileSizeLow;
    return HURRAY_OK;
}

int hri_os_file_size(hri_os_fd fd, const char *path, uint64_t *size, struct hurray_error *err) {
    return regular_size(as_handle(fd), path, size, err);
}

int hri_os_open_regular(const char *path, hri_os_fd *fd, uint64_t *size,
                        struct hurray_error *err) {
    HR_FAIL_IF(!path || !fd || !size, err, HURRAY_E_ARGUMENT, "path", "open: NULL argument");
    wchar_t *w = NULL;
    HR_TRY(widen(path, "path", &w, err));
    /* FILE_FLAG_BACKUP_SEMANTICS opens a directory too, so that it is named
     * as one below rather than as "access denied". Sharing delete lets a
     * writer replace the file while it is read (or mapped). Not inherited. */
    HANDLE h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS,
                           NULL);
    DWORD code = GetLastError();
    free(w);
    if (h == INVALID_HANDLE_VALUE) return win_fail(err, code, "file", "cannot open", path);
    int st = regular_size(h, path, size, err);
    if (st != HURRAY_OK) {
        CloseHandle(h);
        return st;
    }
    *fd = (hri_os_fd)h;
    return HURRAY_OK;
}

int hri_os_pread(hri_os_fd fd, void *dst, size_t n, uint64_t off, size_t *got,
                 const char *path, struct hurray_error *err) {
    size_t done = 0;
    uint8_t *p = dst;
    HR_FAIL_IF(off > (uint64_t)INT64_MAX || n > (uint64_t)INT64_MAX - off, err, HURRAY_E_OVERFLOW,
               "file", "read of %zu bytes at %llu: past the largest file offset", n,
               (unsigned long long)off);
    while (done < n) {
        DWORD chunk = n - done > IO_CHUNK ? IO_CHUNK : (DWORD)(n - done), r = 0;
        uint64_t at = off + done;
        OVERLAPPED ov;
        memset(&ov, 0, sizeof ov);
        ov.Offset = (DWORD)(at & 0xFFFFFFFFu);
        ov.OffsetHigh = (DWORD)(at >> 32);
        if (!ReadFile(as_handle(fd), p + done, chunk, &r, &ov)) {
            DWORD code = GetLastError();
            if (code == ERROR_HANDLE_EOF) break;
            return win_fail(err, code, "file", "cannot read", path);
        }
        if (r == 0) break;
        done += r;
    }
    *got = done;
    return HURRAY_OK;
}

/* Windows has no positioned scatter read on a plain handle (ReadFileScatter needs
 * page-sized, unbuffered I/O): one positioned read per range. */
int hri_os_preadv(hri_os_fd fd, const struct hri_os_rvec *v, size_t count, uint64_t off,
                  size_t *got, const char *path, struct hurray_error *err) {
    size_t done = 0;
    for (size_t k = 0; k < count; k++) {
        size_t g = 0;
        HR_TRY(hri_os_pread(fd, v[k].base, v[k].len, off + done, &g, path, err));
        done += g;
        if (g < v[k].len) break;
    }
    *got = done;
    return HURRAY_OK;
}

size_t hri_os_map_granularity(void) {
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwAllocationGranularity > 0 ? (size_t)si.dwAllocationGranularity : 65536u;
}

int hri_os_map_private(hri_os_fd fd, uint64_t off, uint64_t len, const char *path, void **addr,
                       struct hri_os_mapping *m, struct hurray_error *err) {
    uint64_t g = hri_os_map_granularity();
    uint64_t start = off - off % g, total;
    HR_FAIL_IF(len == 0, err, HURRAY_E_ARGUMENT, "file", "map: empty range");
    HR_FAIL_IF(hri_add_u64(off - start, len, &total) || total > SIZE_MAX ||
                   start > (uint64_t)INT64_MAX,
               err, HURRAY_E_NOMEM, "file", "map \"%.200s\": %llu bytes at %llu cannot be mapped",
               path ? path : "", (unsigned long long)len, (unsigned long long)off);
    /* Copy-on-write: PAGE_WRITECOPY section, FILE_MAP_COPY view. The view
     * keeps the section alive, so its handle is closed at once. */
    HANDLE sec = CreateFileMappingW(as_handle(fd), NULL, PAGE_WRITECOPY, 0, 0, NULL);
    if (!sec) return win_fail(err, GetLastError(), "file", "cannot map", path);
    void *b = MapViewOfFile(sec, FILE_MAP_COPY, (DWORD)(start >> 32),
                            (DWORD)(start & 0xFFFFFFFFu), (SIZE_T)total);
    DWORD code = GetLastError();
    CloseHandle(sec);
    if (!b) return win_fail(err, code, "file", "cannot map", path);
    m->base = b;
    m->len = (size_t)total;
    *addr = (uint8_t *)b + (off - start);
    return HURRAY_OK;
}

void hri_os_unmap(struct hri_os_mapping *m) {
    if (!m || !m->base) return;
    UnmapViewOfFile(m->base);
    m->base = NULL;
    m->len = 0;
}

/* ---- reserved memory --------------------------------------------------------------------- */

size_t hri_os_page_size(void) {
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwPageSize > 0 ? (size_t)si.dwPageSize : 4096u;
}

/* MEM_RESERVE: address space only, no commit charge until committed. */
int hri_os_reserve(size_t len, void **base, struct hurray_error *err) {
    HR_FAIL_IF(len == 0, err, HURRAY_E_ARGUMENT, "buffer", "reserve: empty range");
    void *b = VirtualAlloc(NULL, len, MEM_RESERVE, PAGE_NOACCESS);
    if (!b) {
        DWORD e = GetLastError();
        int st = hri_fail(err, HURRAY_E_NOMEM, "buffer",
                          "buffer: cannot reserve %zu bytes of address space (Windows error %lu)",
                          len, (unsigned long)e);
        if (err) err->sys_errno = ENOMEM;
        return st;
    }
    *base = b;
    return HURRAY_OK;
}

int hri_os_commit(void *base, size_t reserved, size_t off, size_t len, struct hurray_error *err) {
    size_t page = hri_os_page_size();
    if (off >= reserved || len == 0) return HURRAY_OK;
    if (len > reserved - off) len = reserved - off;
    size_t lo = off - off % page;
    size_t end = off + len; /* <= reserved */
    size_t hi = end % page ? end + (page - end % page) : end;
    if (hi > reserved || hi < end) hi = reserved; /* the system rounds the last page itself */
    /* Committing committed pages again is allowed and changes nothing. */
    if (!VirtualAlloc((uint8_t *)base + lo, hi - lo, MEM_COMMIT, PAGE_READWRITE)) {
        DWORD e = GetLastError();
        int st = hri_fail(err, HURRAY_E_NOMEM, "buffer",
                          "buffer: cannot commit %zu bytes (Windows error %lu)", hi - lo,
                          (unsigned long)e);
        if (err) err->sys_errno = ENOMEM;
        return st;
    }
    return HURRAY_OK;
}

void hri_os_discard(void *p, size_t len) {
    /* MEM_RESET: the contents are not wanted, the pages stay committed. A hint. */
    if (p && len) (void)VirtualAlloc(p, len, MEM_RESET, PAGE_READWRITE);
}

void hri_os_release(void *base, size_t len) {
    (void)len; /* MEM_RELEASE frees the whole reservation: its size must be 0 */
    if (base) VirtualFree(base, 0, MEM_RELEASE);
}

/* ---- handles ------------------------------------------------------------------------------ */

int hri_os_dup(hri_os_fd fd, hri_os_fd *out, const char *field, struct hurray_error *err) {
    HANDLE d = NULL;
    HR_FAIL_IF(fd == HRI_OS_NO_FD || fd == 0, err, HURRAY_E_ARGUMENT, field,
               "%s: %lld is not a handle", field, (long long)fd);
    /* Not inheritable: the Windows form of close-on-exec. */
    if (!DuplicateHandle(GetCurrentProcess(), as_handle(fd), GetCurrentProcess(), &d, 0, FALSE,
                         DUPLICATE_SAME_ACCESS))
        return win_fail(err, GetLastError(), field, "dup", NULL);
    *out = (hri_os_fd)d;
    return HURRAY_OK;
}

int hri_os_close(hri_os_fd *fd, const char *path, struct hurray_error *err) {
    if (!fd || *fd == HRI_OS_NO_FD) return HURRAY_OK;
    HANDLE h = as_handle(*fd);
    *fd = HRI_OS_NO_FD;
    if (!CloseHandle(h)) return win_fail(err, GetLastError(), "file", "cannot close", path);
    return HURRAY_OK;
}

/* ---- wakers ------------------------------------------------------------------------------- */

struct hri_os_waker {
    HANDLE ev; /* a manual-reset event: stays signalled once set */
};

int hri_os_waker_create(struct hri_os_waker **out, struct hurray_error *err) {
    struct hri_os_waker *w = malloc(sizeof *w);
    HR_FAIL_IF(!w, err, HURRAY_E_NOMEM, "waker", "waker: out of memory");
    w->ev = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (!w->ev) {
        DWORD code = GetLastError();
        free(w);
        return win_fail(err, code, "waker", "CreateEvent", NULL);
    }
    *out = w;
    return HURRAY_OK;
}

void hri_os_waker_signal(struct hri_os_waker *w) {
    if (w) SetEvent(w->ev);
}

void hri_os_waker_destroy(struct hri_os_waker *w) {
    if (!w) return;
    CloseHandle(w->ev);
    free(w);
}

/* ---- blocking transport I/O --------------------------------------------------------------- */

static int waker_set(const struct hri_os_wait *w) {
    return w && w->waker && WaitForSingleObject(w->waker->ev, 0) == WAIT_OBJECT_0;
}

/* Milliseconds left of a timeout that started at `t0` (INFINITE: none). */
static DWORD time_left(const struct hri_os_wait *w, ULONGLONG t0) {
    if (!w || w->timeout_ms < 0) return INFINITE;
    ULONGLONG spent = GetTickCount64() - t0;
    return spent >= (ULONGLONG)w->timeout_ms ? 0 : (DWORD)((ULONGLONG)w->timeout_ms - spent);
}

/* An anonymous pipe cannot be waited on: polls PeekNamedPipe until data (or
 * the writer's end) is there, the timeout passes or the waker is set.
 * Returns OK when a read will not block, or 1 when `h` is no pipe Peek knows
 * (a socket): the caller then waits with overlapped I/O. */
static int pipe_wait_readable(HANDLE h, const struct hri_os_wait *w, const char *field,
                              const char *what, struct hurray_error *err) {
    ULONGLONG t0 = GetTickCount64();
    DWORD slice = 1;
    for (;;) {
        DWORD avail = 0;
        if (!PeekNamedPipe(h, NULL, 0, NULL, &avail, NULL)) {
            DWORD code = GetLastError();
            if (code == ERROR_BROKEN_PIPE || code == ERROR_PIPE_NOT_CONNECTED) return HURRAY_OK;
            return 1;
        }
        if (avail > 0) return HURRAY_OK;
        if (waker_set(w)) return hri_os_fail(err, ECANCELED, field, what, NULL);
        DWORD left = time_left(w, t0);
        if (left == 0) return hri_os_fail(err, ETIMEDOUT, field, what, NULL);
        DWORD d = left < slice ? left : slice;
        if (w && w->waker) WaitForSingleObject(w->waker->ev, d);
        else Sleep(d);
        if (slice < 16) slice *= 2;
    }
}

/* One ReadFile or WriteFile of up to `n` bytes on a pipe or socket with
 * overlapped I/O, waiting on (I/O event, waker) with the timeout. On a
 * handle opened for synchronous I/O the call completes before it returns,
 * which is why readers of anonymous pipes wait with pipe_wait_readable first. */
static int overlapped_io(HANDLE h, int writing, void *buf, DWORD n, DWORD *done,
                         const struct hri_os_wait *w, const char *field, const char *what,
                         struct hurray_error *err) {
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    if (waker_set(w)) return hri_os_fail(err, ECANCELED, field, what, NULL);
    ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (!ov.hEvent) return win_fail(err, GetLastError(), field, what, NULL);
    BOOL ok = writing ? WriteFile(h, buf, n, NULL, &ov) : ReadFile(h, buf, n, NULL, &ov);
    DWORD code = ok ? NO_ERROR : GetLastError();
    int st = HURRAY_OK;
    if (!ok && code == ERROR_IO_PENDING) {
        HANDLE hs[2] = {ov.hEvent, w && w->waker ? w->waker->ev : NULL};
        DWORD count = hs[1] ? 2 : 1;
        DWORD r = WaitForMultipleObjects(count, hs, FALSE, time_left(w, GetTickCount64()));
        if (r != WAIT_OBJECT_0) {
            /* Timed out or woken: cancel, then wait for the cancellation (the
             * buffer must not be written after we return). */
            CancelIoEx(h, &ov);
            st = r == WAIT_TIMEOUT ? hri_os_fail(err, ETIMEDOUT, field, what, NULL)
               : r == WAIT_OBJECT_0 + 1 ? hri_os_fail(err, ECANCELED, field, what, NULL)
                                        : win_fail(err, GetLastError(), field, what, NULL);
        }
        ok = GetOverlappedResult(h, &ov, done, TRUE);
        code = ok ? NO_ERROR : GetLastError();
        /* Completed before the cancellation took: the transfer stands. */
        if (st != HURRAY_OK && ok && *done > 0) st = HURRAY_OK;
        if (st != HURRAY_OK) {
            CloseHandle(ov.hEvent);
            return st;
        }
    } else if (ok) {
        ok = GetOverlappedResult(h, &ov, done, TRUE);
        code = ok ? NO_ERROR : GetLastError();
    }
    CloseHandle(ov.hEvent);
    if (ok) return HURRAY_OK;
    /* The far end is gone: end of input for a reader, EPIPE for a writer. */
    if (!writing && (code == ERROR_BROKEN_PIPE || code == ERROR_HANDLE_EOF ||
                     code == ERROR_PIPE_NOT_CONNECTED)) {
        *done = 0;
        return HURRAY_OK;
    }
    return win_fail(err, code, field, what, NULL);
}

/* Whether the transport call must be able to stop early (a timeout or a waker). */
static int must_wait(const struct hri_os_wait *w) {
    return w && (w->timeout_ms >= 0 || w->waker);
}

int hri_os_read(hri_os_fd fd, void *dst, size_t cap, size_t *got, const struct hri_os_wait *w,
                const char *field, struct hurray_error *err) {
    HANDLE h = as_handle(fd);
    DWORD n = cap > IO_CHUNK ? IO_CHUNK : (DWORD)cap, r = 0;
    if (GetFileType(h) == FILE_TYPE_PIPE) {
        if (must_wait(w)) {
            int s = pipe_wait_readable(h, w, field, "stream read", err);
            if (s != HURRAY_OK && s != 1) return s;
        }
        HR_TRY(overlapped_io(h, 0, dst, n, &r, w, field, "stream read", err));
        *got = r;
        return HURRAY_OK;
    }
    /* A disk file (or a console) is read where its file pointer is. */
    if (waker_set(w)) return hri_os_fail(err, ECANCELED, field, "stream read", NULL);
    if (!ReadFile(h, dst, n, &r, NULL)) {
        DWORD code = GetLastError();
        if (code != ERROR_HANDLE_EOF && code != ERROR_BROKEN_PIPE)
            return win_fail(err, code, field, "stream read", NULL);
        r = 0;
    }
    *got = r;
    return HURRAY_OK;
}

/* Writes all n bytes of one range. */
static int write_range(HANDLE h, int is_pipe, const uint8_t *src, size_t n,
                       const struct hri_os_wait *w, const char *field, struct hurray_error *err) {
    while (n > 0) {
        DWORD chunk = n > IO_CHUNK ? IO_CHUNK : (DWORD)n, r = 0;
        if (is_pipe) {
            HR_TRY(overlapped_io(h, 1, (void *)src, chunk, &r, w, field, "write", err));
        } else {
            if (waker_set(w)) return hri_os_fail(err, ECANCELED, field, "write", NULL);
            if (!WriteFile(h, src, chunk, &r, NULL))
                return win_fail(err, GetLastError(), field, "write", NULL);
        }
        if (r == 0) return hri_os_fail(err, EIO, field, "write (no progress)", NULL);
        src += r;
        n -= r;
    }
    return HURRAY_OK;
}

int hri_os_writev_all(hri_os_fd fd, const struct hri_os_iovec *iov, size_t count,
                      const struct hri_os_wait *w, const char *field, struct hurray_error *err) {
    /* WriteFile has no gather form for pipes and ordinary files (WriteFileGather
     * needs page-sized unbuffered I/O): one call per range, in order. */
    HANDLE h = as_handle(fd);
    int is_pipe = GetFileType(h) == FILE_TYPE_PIPE;
    for (size_t i = 0; i < count; i++)
        HR_TRY(write_range(h, is_pipe, iov[i].base, iov[i].len, w, field, err));
    return HURRAY_OK;
}

int hri_os_write_all(hri_os_fd fd, const void *src, size_t n, const struct hri_os_wait *w,
                     const char *field, struct hurray_error *err) {
    struct hri_os_iovec one = {src, n};
    return hri_os_writev_all(fd, &one, 1, w, field, err);
}

/* ---- replacing a file atomically ---------------------------------------------------------- */

unsigned long hri_os_pid(void) { return (unsigned long)GetCurrentProcessId(); }

uint64_t hri_os_unique(void) {
    LARGE_INTEGER c;
    FILETIME ft;
    QueryPerformanceCounter(&c);
    GetSystemTimeAsFileTime(&ft);
    return ((uint64_t)ft.dwHighDateTime << 32 | ft.dwLowDateTime) ^ (uint64_t)c.QuadPart;
}

/* The path a write to `target` should replace: a symbolic link's final
 * target (so the link survives), else `target` itself. `buf` receives the
 * resolved UTF-8 path ("\\?\" dropped before a drive letter). */
static const char *resolve_target(const char *target, char *buf, size_t cap) {
    wchar_t *w = NULL;
    if (widen(target, "path", &w, NULL) != HURRAY_OK) return target;
    DWORD attr = GetFileAttributesW(w);
    if (attr == INVALID_FILE_ATTRIBUTES || !(attr & FILE_ATTRIBUTE_REPARSE_POINT)) {
        free(w);
        return target;
    }
    /* Opening without FILE_FLAG_OPEN_REPARSE_POINT follows the link. */
    HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE) return target; /* dangling: replace the link itself */
    wchar_t final[MAX_PATH * 4];
    DWORD n = GetFinalPathNameByHandleW(h, final, (DWORD)(sizeof final / sizeof final[0]),
                                        FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    CloseHandle(h);
    if (n == 0 || n >= sizeof final / sizeof final[0]) return target;
    const wchar_t *f = final;
    if (n >= 6 && f[0] == L'\\' && f[1] == L'\\' && f[2] == L'?' && f[3] == L'\\' &&
        f[5] == L':')
        f += 4;
    int m = WideCharToMultiByte(CP_UTF8, 0, f, -1, buf, (int)(cap > INT_MAX ? INT_MAX : cap),
                                NULL, NULL);
    return m > 0 ? buf : target;
}

/* FNV-1a of the host name: the <host> of temporary names (file-container.md HR-FILE-16). */
static uint32_t host_hash(void) {
    char name[MAX_COMPUTERNAME_LENGTH + 1];
    DWORD n = (DWORD)sizeof name;
    uint32_t h = 2166136261u;
    if (!GetComputerNameA(name, &n)) n = 0;
    for (DWORD i = 0; i < n && i < sizeof name; i++) h = (h ^ (uint8_t)name[i]) * 16777619u;
    return h;
}

int hri_os_cancelled(struct hurray_error *err, const char *field, const char *what) {
    return hri_os_fail(err, ECANCELED, field, what, NULL);
}

/* 1 unless the process is known to have ended. */
static int process_alive(unsigned long pid) {
    HANDLE p = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
    if (p == NULL) return GetLastError() != ERROR_INVALID_PARAMETER; /* no such process */
    DWORD code = 0;
    BOOL ok = GetExitCodeProcess(p, &code);
    CloseHandle(p);
    return !ok || code == STILL_ACTIVE;
}

void hri_os_temp_sweep(const char *target) {
    char real[4096], pattern[4096 + 48], path[8192];
    const char *dest = resolve_target(target, real, sizeof real);
    const char *sep = dest;
    for (const char *c = dest; *c; c++)
        if (*c == '/' || *c == '\\' || *c == ':') sep = c + 1;
    size_t dlen = (size_t)(sep - dest);
    int n = snprintf(pattern, sizeof pattern, "%s.hurray-tmp-%08lx-*", dest,
                     (unsigned long)host_hash());
    if (n < 0 || (size_t)n >= sizeof pattern) return;
    wchar_t *w = NULL;
    if (widen(pattern, "path", &w, NULL) != HURRAY_OK) return;
    WIN32_FIND_DATAW fd;
    HANDLE h = FindFirstFileW(w, &fd);
    free(w);
    if (h == INVALID_HANDLE_VALUE) return;
    unsigned long self = hri_os_pid();
    do {
        char name[1024];
        if (WideCharToMultiByte(CP_UTF8, 0, fd.cFileName, -1, name, (int)sizeof name, NULL,
                                NULL) <= 0)
            continue;
        /* "...-<pid>-<unique>": the pid sits between the last two '-' */
        char *last = strrchr(name, '-');
        if (!last || last == name) continue;
        *last = 0;
        char *dash = strrchr(name, '-');
        *last = '-';
        if (!dash) continue;
        char *end = NULL;
        unsigned long pid = strtoul(dash + 1, &end, 10);
        if (end != last || pid == 0 || pid == self || process_alive(pid)) continue;
        n = snprintf(path, sizeof path, "%.*s%s", (int)dlen, dest, name);
        wchar_t *wp = NULL;
        if (n > 0 && (size_t)n < sizeof path && widen(path, "path", &wp, NULL) == HURRAY_OK)
            DeleteFileW(wp);
        free(wp);
    } while (FindNextFileW(h, &fd));
    FindClose(h);
}

int hri_os_temp_create(const char *target, char *tmp, size_t cap, hri_os_fd *fd,
                       struct hurray_error *err) {
    char real[4096];
    const char *dest = resolve_target(target, real, sizeof real);
    uint64_t u = hri_os_unique();
    unsigned long host = (unsigned long)host_hash();
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        int n = snprintf(tmp, cap, "%s.hurray-tmp-%08lx-%lu-%llx%02x", dest, host, hri_os_pid(),
                         (unsigned long long)u, attempt);
        HR_FAIL_IF(n < 0 || (size_t)n >= cap, err, HURRAY_E_ARGUMENT, "path",
                   "path: too long (%zu bytes)", strlen(dest));
        wchar_t *w = NULL;
        HR_TRY(widen(tmp, "path", &w, err));
        /* CREATE_NEW: exclusive, nothing is clobbered. Windows files carry no
         * POSIX mode; the new file gets the directory's inherited ACL, as
         * any file created there would. */
        HANDLE h = CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL,
                               CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
        DWORD code = GetLastError();
        free(w);
        if (h != INVALID_HANDLE_VALUE) {
            *fd = (hri_os_fd)h;
            return HURRAY_OK;
        }
        if (code != ERROR_FILE_EXISTS && code != ERROR_ALREADY_EXISTS)
            return win_fail(err, code, "path", "cannot create a file beside", dest);
    }
    return hri_fail(err, HURRAY_E_IO, "path", "cannot create a temporary file beside \"%.200s\"",
                    dest);
}

int hri_os_set_size(hri_os_fd fd, uint64_t size, const char *path, struct hurray_error *err) {
    FILE_END_OF_FILE_INFO eof;
    if (size > (uint64_t)INT64_MAX)
        return win_fail(err, ERROR_FILE_TOO_LARGE, "file", "cannot size", path);
    eof.EndOfFile.QuadPart = (LONGLONG)size;
    if (SetFileInformationByHandle(as_handle(fd), FileEndOfFileInfo, &eof, sizeof eof))
        return HURRAY_OK;
    return win_fail(err, GetLastError(), "file", "cannot size", path);
}

int hri_os_sync(hri_os_fd fd, const char *path, struct hurray_error *err) {
    if (FlushFileBuffers(as_handle(fd))) return HURRAY_OK;
    DWORD code = GetLastError();
    /* Pipes and consoles cannot be flushed to storage: not an error. */
    if (code == ERROR_INVALID_HANDLE || code == ERROR_INVALID_FUNCTION ||
        code == ERROR_NOT_SUPPORTED)
        return HURRAY_OK;
    return win_fail(err, code, "file", "cannot sync", path);
}

/* FILE_RENAME_INFO as Windows 10 (1607+) lays it out (Flags shares the first field with
 * ReplaceIfExists) and FileRenameInfoEx (22): declared here because SDKs gate both on the
 * targeted Windows version, while this file decides at run time. */
struct rename_info_ex {
    DWORD Flags;
    HANDLE RootDirectory;
    DWORD FileNameLength;
    WCHAR FileName[1];
};
#define RENAME_INFO_EX_CLASS ((FILE_INFO_BY_HANDLE_CLASS)22)
#define RENAME_REPLACE_IF_EXISTS 0x1u
#define RENAME_POSIX_SEMANTICS 0x2u

/* Renames with POSIX semantics (Windows 10 1809+, NTFS): the target is replaced even
 * while another handle has it open with FILE_SHARE_DELETE (a reader, a mapping), which
 * keeps the old file's bytes, as on POSIX. FALSE where the system or file system cannot. */
static BOOL rename_posix(const wchar_t *from, const wchar_t *to) {
    wchar_t full[MAX_PATH * 4];
    DWORD n = GetFullPathNameW(to, (DWORD)(sizeof full / sizeof full[0]), full, NULL);
    if (n == 0 || n >= sizeof full / sizeof full[0]) return FALSE;
    HANDLE h = CreateFileW(from, DELETE | SYNCHRONIZE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    if (h == INVALID_HANDLE_VALUE) return FALSE;
    size_t size = offsetof(struct rename_info_ex, FileName) + ((size_t)n + 1) * sizeof(WCHAR);
    struct rename_info_ex *ri = calloc(1, size);
    BOOL ok = FALSE;
    if (ri) {
        ri->Flags = RENAME_REPLACE_IF_EXISTS | RENAME_POSIX_SEMANTICS;
        ri->FileNameLength = n * (DWORD)sizeof(WCHAR);
        memcpy(ri->FileName, full, ((size_t)n + 1) * sizeof(WCHAR));
        ok = SetFileInformationByHandle(h, RENAME_INFO_EX_CLASS, ri, (DWORD)size);
    }
    free(ri);
    CloseHandle(h);
    return ok;
}

int hri_os_replace(const char *tmp, const char *target, struct hurray_error *err) {
    char real[4096];
    const char *dest = resolve_target(target, real, sizeof real);
    wchar_t *wt = NULL, *wd = NULL;
    HR_TRY(widen(tmp, "path", &wt, err));
    int st = widen(dest, "path", &wd, err);
    if (st != HURRAY_OK) {
        free(wt);
        return st;
    }
    /* Atomic on one volume. POSIX semantics first (an open reader of the old file does
     * not block it); else MoveFileEx, whose WRITE_THROUGH returns once the rename is on
     * disk (older Windows, FAT, Wine: there an open reader of the target blocks it). */
    BOOL ok = rename_posix(wt, wd);
    if (!ok) ok = MoveFileExW(wt, wd, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
    DWORD code = GetLastError();
    free(wt);
    free(wd);
    if (!ok) return win_fail(err, code, "path", "cannot replace", dest);
    return HURRAY_OK;
}

void hri_os_remove(const char *path) {
    if (!path) return;
    wchar_t *w = NULL;
    if (widen(path, "path", &w, NULL) != HURRAY_OK) return;
    DeleteFileW(w);
    free(w);
}

#else
/* POSIX builds compile os_posix.c instead. ISO C forbids an empty unit. */
typedef int hri_os_win32_unused;
#endif
