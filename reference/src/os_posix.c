/* The operating-system layer for POSIX systems (Linux, macOS, the BSDs).
 * See os.h: this is the only file of libhurray that makes system calls.
 *
 * macOS (reviewed): everything used here is POSIX.1-2008 and present since
 * macOS 10.7 (O_CLOEXEC, F_DUPFD_CLOEXEC) or 10.12 (clock_gettime); wheels
 * target 10.13 or later. No pipe2 (pipe + fcntl), no fdatasync, no MAP_*
 * beyond MAP_PRIVATE, no Linux-only flags. Darwin refuses read/write/writev
 * requests above INT_MAX bytes: IO_CHUNK (1 GiB) keeps every request below
 * it. hri_os_sync uses F_FULLFSYNC where it exists (fsync alone does not
 * flush the drive's cache there). */
#if !defined(_WIN32)

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#if defined(__APPLE__) && !defined(_DARWIN_C_SOURCE)
#define _DARWIN_C_SOURCE 1
#endif
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE 1 /* realpath, MAP_* on older glibc */
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "internal.h"
#include "os.h"

/* MemorySanitizer intercepts the libc calls, not a raw syscall(): what the kernel writes
 * through one (preadv2's buffers, pipe2's descriptors) is marked written by hand. */
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#include <sanitizer/msan_interface.h>
#define HRI_KERNEL_WROTE(p, n) __msan_unpoison((p), (n))
#endif
#endif
#ifndef HRI_KERNEL_WROTE
#define HRI_KERNEL_WROTE(p, n) ((void)(p), (void)(n))
#endif

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif
#ifndef O_NOCTTY
#define O_NOCTTY 0
#endif

/* Largest single read/write request: well below SSIZE_MAX everywhere, and
 * below the 2 GiB - 4 KiB Linux caps a transfer at anyway. */
#define IO_CHUNK ((size_t)1 << 30)
/* Ranges per writev: IOV_MAX where the system says (1024 on Linux and macOS),
 * so that a file of thousands of buffers is a handful of calls. */
#if defined(IOV_MAX) && IOV_MAX < 1024
#define IOV_BATCH IOV_MAX
#else
#define IOV_BATCH 1024
#endif

int hri_os_fail(struct hurray_error *err, int errnum, const char *field, const char *what,
                const char *path) {
    char msg[128];
    if (strerror_r(errnum, msg, sizeof msg) != 0) snprintf(msg, sizeof msg, "errno %d", errnum);
    int st = path ? hri_fail(err, HURRAY_E_IO, field, "%s \"%.200s\": %s", what, path, msg)
                  : hri_fail(err, HURRAY_E_IO, field, "%s: %s", what, msg);
    if (err) err->sys_errno = errnum;
    return st;
}

/* ---- reading files ---------------------------------------------------------------------- */

static const char *kind_name(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    return "not a regular file";
}

int hri_os_file_size(hri_os_fd fd, const char *path, uint64_t *size, struct hurray_error *err) {
    struct stat st;
    if (fstat((int)fd, &st) != 0) return hri_os_fail(err, errno, "file", "cannot stat", path);
    if (!S_ISREG(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        int s = hri_fail(err, HURRAY_E_IO, "file",
                         "\"%.200s\" is %s, not a regular file: refused before reading", path,
                         kind_name(st.st_mode));
        if (err) err->sys_errno = e;
        return s;
    }
    *size = st.st_size < 0 ? 0 : (uint64_t)st.st_size;
    return HURRAY_OK;
}

int hri_os_open_regular(const char *path, hri_os_fd *fd, uint64_t *size,
                        struct hurray_error *err) {
    int f;
    HR_FAIL_IF(!path || !fd || !size, err, HURRAY_E_ARGUMENT, "path", "open: NULL argument");
    /* Non-blocking: opening a FIFO with no writer must not wait. */
    do {
        f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    } while (f < 0 && errno == EINTR);
    if (f < 0) {
        int e = errno;
        struct stat sb;
        /* a socket cannot be opened at all (ENXIO): still say what it is */
        if (e == ENXIO && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
            int s = hri_fail(err, HURRAY_E_IO, "file",
                             "\"%.200s\" is %s, not a regular file: refused before reading", path,
                             kind_name(sb.st_mode));
            if (err) err->sys_errno = e;
            return s;
        }
        return hri_os_fail(err, e, "file", "cannot open", path);
    }
    int st = hri_os_file_size((hri_os_fd)f, path, size, err);
    if (st == HURRAY_OK) {
        int fl = fcntl(f, F_GETFL);
        if (fl < 0 || fcntl(f, F_SETFL, fl & ~O_NONBLOCK) < 0)
            st = hri_os_fail(err, errno, "file", "cannot configure", path);
    }
    if (st != HURRAY_OK) {
        close(f);
        return st;
    }
    *fd = (hri_os_fd)f;
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
        size_t chunk = n - done > IO_CHUNK ? IO_CHUNK : n - done;
        ssize_t r = pread((int)fd, p + done, chunk, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return hri_os_fail(err, errno, "file", "cannot read", path);
        if (r == 0) break;
        done += (size_t)r;
    }
    *got = done;
    return HURRAY_OK;
}

/* iovecs per preadv call: within every platform's IOV_MAX (>= 1024 on Linux, the BSDs and
 * macOS); longer lists take several calls. */
#define RVEC_BATCH 256

/* One scatter read at `off`. macOS has preadv only from 11.0, and wheels target older
 * releases: there, the first range alone (a short read, which the caller's loop resumes). */
static ssize_t scatter_pread(int fd, const struct iovec *iov, int n, off_t off) {
#if defined(__APPLE__)
    (void)n;
    return pread(fd, iov[0].iov_base, iov[0].iov_len, off);
#else
    return preadv(fd, iov, n, off);
#endif
}

int hri_os_preadv(hri_os_fd fd, const struct hri_os_rvec *v, size_t count, uint64_t off,
                  size_t *got, const char *path, struct hurray_error *err) {
    size_t total = 0, done = 0, k = 0, skip = 0; /* v[k] is read up to `skip` bytes */
    for (size_t j = 0; j < count; j++) {
        HR_FAIL_IF(v[j].len == 0 || v[j].len > IO_CHUNK - total, err, HURRAY_E_INTERNAL, "file",
                   "preadv: empty range or more than 1 GiB in one call");
        total += v[j].len;
    }
    HR_FAIL_IF(off > (uint64_t)INT64_MAX || total > (uint64_t)INT64_MAX - off, err,
               HURRAY_E_OVERFLOW, "file", "read of %zu bytes at %llu: past the largest file offset",
               total, (unsigned long long)off);
    while (k < count) {
        struct iovec iov[RVEC_BATCH];
        int n = 0;
        for (size_t j = k; j < count && n < RVEC_BATCH; j++, n++) {
            size_t s = j == k ? skip : 0;
            iov[n].iov_base = (uint8_t *)v[j].base + s;
            iov[n].iov_len = v[j].len - s;
        }
        ssize_t r = scatter_pread((int)fd, iov, n, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return hri_os_fail(err, errno, "file", "cannot read", path);
        if (r == 0) break;
        done += (size_t)r;
        size_t left = (size_t)r;
        while (k < count && left >= v[k].len - skip) {
            left -= v[k].len - skip;
            skip = 0;
            k++;
        }
        skip += left;
    }
    *got = done;
    return HURRAY_OK;
}

size_t hri_os_map_granularity(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096u;
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
    /* Copy-on-write: writable pages that never reach the file. */
    void *b = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_PRIVATE, (int)fd,
                   (off_t)start);
    if (b == MAP_FAILED) return hri_os_fail(err, errno, "file", "cannot map", path);
    m->base = b;
    m->len = (size_t)total;
    *addr = (uint8_t *)b + (off - start);
    return HURRAY_OK;
}

void hri_os_unmap(struct hri_os_mapping *m) {
    if (!m || !m->base) return;
    munmap(m->base, m->len);
    m->base = NULL;
    m->len = 0;
}

/* ---- reserved memory ---------------------------------------------------------------------- */

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif
#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif

size_t hri_os_page_size(void) { return hri_os_map_granularity(); }

int hri_os_reserve(size_t len, void **base, struct hurray_error *err) {
    HR_FAIL_IF(len == 0, err, HURRAY_E_ARGUMENT, "buffer", "reserve: empty range");
    void *b = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (b == MAP_FAILED) {
        int e = errno;
        int st = hri_fail(err, HURRAY_E_NOMEM, "buffer",
                          "buffer: cannot reserve %zu bytes of address space (errno %d)", len, e);
        if (err) err->sys_errno = e;
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
    if (mprotect((uint8_t *)base + lo, hi - lo, PROT_READ | PROT_WRITE) != 0) {
        int e = errno;
        int st = hri_fail(err, HURRAY_E_NOMEM, "buffer",
                          "buffer: cannot commit %zu bytes (errno %d)", hi - lo, e);
        if (err) err->sys_errno = e;
        return st;
    }
    return HURRAY_OK;
}

void hri_os_discard(void *p, size_t len) {
#if defined(MADV_FREE)
    if (p && len) (void)madvise(p, len, MADV_FREE); /* EINVAL before Linux 4.5: a hint */
#else
    (void)p, (void)len;
#endif
}

void hri_os_release(void *base, size_t len) {
    if (base && len) munmap(base, len);
}

/* ---- handles ----------------------------------------------------------------------------- */

int hri_os_dup(hri_os_fd fd, hri_os_fd *out, const char *field, struct hurray_error *err) {
    HR_FAIL_IF(fd < 0 || fd > INT_MAX, err, HURRAY_E_ARGUMENT, field, "%s: %lld is not a descriptor",
               field, (long long)fd);
    int d = fcntl((int)fd, F_DUPFD_CLOEXEC, 0);
    if (d < 0) return hri_os_fail(err, errno, field, "dup", NULL);
    *out = (hri_os_fd)d;
    return HURRAY_OK;
}

int hri_os_close(hri_os_fd *fd, const char *path, struct hurray_error *err) {
    if (!fd || *fd == HRI_OS_NO_FD) return HURRAY_OK;
    int r = close((int)*fd); /* POSIX: never retry close, even after EINTR */
    *fd = HRI_OS_NO_FD;
    if (r != 0 && errno != EINTR) return hri_os_fail(err, errno, "file", "cannot close", path);
    return HURRAY_OK;
}

/* ---- wakers ------------------------------------------------------------------------------ */

struct hri_os_waker {
    int rd, wr; /* a self-pipe: readable once signalled */
};

int hri_os_waker_create(struct hri_os_waker **out, struct hurray_error *err) {
    int p[2];
    struct hri_os_waker *w = malloc(sizeof *w);
    HR_FAIL_IF(!w, err, HURRAY_E_NOMEM, "waker", "waker: out of memory");
#if defined(__linux__) && defined(SYS_pipe2)
    /* one call, both flags set from the start (pipe2 needs _GNU_SOURCE as a function) */
    if (syscall(SYS_pipe2, p, O_CLOEXEC | O_NONBLOCK) != 0) {
        int e = errno;
        free(w);
        return hri_os_fail(err, e, "waker", "pipe", NULL);
    }
    HRI_KERNEL_WROTE(p, sizeof p);
#else
    if (pipe(p) != 0) {
        int e = errno;
        free(w);
        return hri_os_fail(err, e, "waker", "pipe", NULL);
    }
    for (int i = 0; i < 2; i++) {
        fcntl(p[i], F_SETFD, FD_CLOEXEC);
        fcntl(p[i], F_SETFL, fcntl(p[i], F_GETFL) | O_NONBLOCK);
    }
#endif
    w->rd = p[0];
    w->wr = p[1];
    *out = w;
    return HURRAY_OK;
}

void hri_os_waker_signal(struct hri_os_waker *w) {
    if (!w) return;
    static const char one = 1;
    ssize_t r;
    do {
        r = write(w->wr, &one, 1); /* a full pipe is already signalled */
    } while (r < 0 && errno == EINTR);
}

void hri_os_waker_destroy(struct hri_os_waker *w) {
    if (!w) return;
    close(w->rd);
    close(w->wr);
    free(w);
}

/* ---- blocking transport I/O -------------------------------------------------------------- */

/* Waits until `fd` is ready for `events`, honouring the timeout, the EINTR
 * hook and the waker. The timeout bounds each wait for readiness: a peer that
 * keeps sending, however slowly, is not cut off. */
static int64_t monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_ready(int fd, short events, const struct hri_os_wait *w, const char *field,
                      const char *what, struct hurray_error *err) {
    struct pollfd p[2] = {{fd, events, 0}, {-1, POLLIN, 0}};
    nfds_t n = 1;
    int timeout = w ? w->timeout_ms : -1;
    /* The deadline survives EINTR: a resumed wait gets what is left, not a new timeout. */
    int64_t deadline = timeout >= 0 ? monotonic_ms() + timeout : 0;
    if (w && w->waker) {
        p[1].fd = w->waker->rd;
        n = 2;
    }
    const int hook = w && w->on_eintr;
    for (;;) {
        int left = -1;
        if (timeout >= 0) {
            int64_t now = monotonic_ms();
            left = now >= deadline ? 0 : (int)(deadline - now);
        }
        /* stream.md HR-STREAM-14: a signal that lands after the caller last looked and
         * before poll() starts interrupts nothing; with a hook, the wait is cut into
         * slices and the hook runs between them, so such a signal is seen within one. */
        int slice = left;
        if (hook && (slice < 0 || slice > HRI_OS_SIGNAL_SLICE_MS)) slice = HRI_OS_SIGNAL_SLICE_MS;
        int r = poll(p, n, slice);
        if (r > 0) break;
        if (r == 0) {
            if (slice == left) return hri_os_fail(err, ETIMEDOUT, field, what, NULL);
            if (w->on_eintr(w->ctx) != 0) return hri_os_fail(err, EINTR, field, what, NULL);
            continue;
        }
        if (errno != EINTR) return hri_os_fail(err, errno, field, "poll", NULL);
        if (hook && w->on_eintr(w->ctx) != 0) return hri_os_fail(err, EINTR, field, what, NULL);
    }
    if (n == 2 && p[1].revents) return hri_os_fail(err, ECANCELED, field, what, NULL);
    return HURRAY_OK;
}

static int is_would_block(int e) { return e == EAGAIN || e == EWOULDBLOCK; }

/* Whether a wait for readiness must come before the call: a timeout, a waker
 * or an interrupt hook (its slices) needs poll to run first; otherwise the
 * call itself blocks. */
static int must_poll_first(const struct hri_os_wait *w) {
    return w && (w->timeout_ms >= 0 || w->waker || w->on_eintr);
}

/* Linux: a read or write that never blocks, whatever the descriptor's own
 * flags say (RWF_NOWAIT is a flag of the call, not of the open file the caller
 * shares with us). A stream tries one before it polls: while the peer keeps up
 * the transfer costs one system call, not a poll and a call, and a write moves
 * as much as the pipe has room for, not PIPE_BUF. -1 with EAGAIN when it would
 * block; -1 with another errno (ENOSYS elsewhere, EOPNOTSUPP for a kernel or
 * descriptor without it) sends the caller to the wait-first path. */
#if defined(__linux__) && defined(SYS_preadv2) && defined(SYS_pwritev2)
#define HRI_RWF_NOWAIT 0x00000008 /* linux/fs.h */
static ssize_t nowait_readv(int fd, const struct iovec *v, int k) {
    /* offset -1 (both halves): the descriptor's own position, as read() */
    ssize_t r = (ssize_t)syscall(SYS_preadv2, fd, v, k, -1L, -1L, HRI_RWF_NOWAIT);
    for (size_t left = r > 0 ? (size_t)r : 0, i = 0; left > 0 && i < (size_t)k; i++) {
        size_t n = v[i].iov_len < left ? v[i].iov_len : left;
        HRI_KERNEL_WROTE(v[i].iov_base, n);
        left -= n;
    }
    return r;
}
static ssize_t nowait_writev(int fd, const struct iovec *v, int k) {
    return (ssize_t)syscall(SYS_pwritev2, fd, v, k, -1L, -1L, HRI_RWF_NOWAIT);
}
#else
static ssize_t nowait_readv(int fd, const struct iovec *v, int k) {
    (void)fd, (void)v, (void)k;
    errno = ENOSYS;
    return -1;
}
static ssize_t nowait_writev(int fd, const struct iovec *v, int k) {
    return nowait_readv(fd, v, k);
}
#endif

int hri_os_read(hri_os_fd fd, void *dst, size_t cap, size_t *got, const struct hri_os_wait *w,
                const char *field, struct hurray_error *err) {
    if (cap > IO_CHUNK) cap = IO_CHUNK;
    if (must_poll_first(w)) {
        /* Bytes already there are taken without a wait. Nothing yet, an end
         * (which may be a FIFO with no writer yet) or no RWF_NOWAIT: the wait
         * decides, as it always did. */
        struct iovec v = {dst, cap};
        ssize_t n = nowait_readv((int)fd, &v, 1);
        if (n > 0) {
            *got = (size_t)n;
            return HURRAY_OK;
        }
        HR_TRY(wait_ready((int)fd, POLLIN, w, field, "stream read", err));
    }
    for (;;) {
        ssize_t n = read((int)fd, dst, cap);
        if (n >= 0) {
            *got = (size_t)n;
            return HURRAY_OK;
        }
        int e = errno;
        if (e == EINTR) {
            if (w && w->on_eintr && w->on_eintr(w->ctx) != 0)
                return hri_os_fail(err, EINTR, field, "stream read", NULL);
        } else if (is_would_block(e)) {
            HR_TRY(wait_ready((int)fd, POLLIN, w, field, "stream read", err));
        } else {
            return hri_os_fail(err, e, field, "stream read", NULL);
        }
    }
}

/* How a write with a deadline avoids blocking inside the call: after poll says
 * there is room, a blocking write() of more than the room waits for the rest
 * -- past any timeout. A socket is written with MSG_DONTWAIT; a pipe or
 * character device in PIPE_BUF-sized pieces (POSIX: a pipe reported writable
 * takes that many without blocking); a regular file never waits. */
enum write_kind { WK_PLAIN, WK_SOCKET, WK_PIECES };

static enum write_kind timed_write_kind(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return WK_PIECES; /* the write reports the error */
    if (S_ISSOCK(st.st_mode)) return WK_SOCKET;
    if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) return WK_PLAIN;
    return WK_PIECES;
}

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* macOS: SIGPIPE as for write(); callers ignore it (stream.md) */
#endif

/* Whether a failed non-blocking attempt leaves the wait-first path to decide:
 * no room yet, or no RWF_NOWAIT here (a real error is reported by that path). */
static int try_again_waiting(int e) {
    return is_would_block(e) || e == ENOSYS || e == EOPNOTSUPP || e == EINVAL;
}

int hri_os_writev_all(hri_os_fd fd, const struct hri_os_iovec *iov, size_t count,
                      const struct hri_os_wait *w, const char *field, struct hurray_error *err) {
    struct iovec v[IOV_BATCH];
    size_t i = 0, skip = 0; /* iov[i] is next, its first `skip` bytes already written */
    int timed = must_poll_first(w);
    enum write_kind kind = timed ? timed_write_kind((int)fd) : WK_PLAIN;
    size_t cap = kind == WK_PIECES ? (size_t)PIPE_BUF : IO_CHUNK;
    /* Timed, to a socket or a pipe: each batch is first tried whole without
     * blocking (MSG_DONTWAIT, RWF_NOWAIT); only when that would block does the
     * wait run, followed by one call that cannot block (a PIPE_BUF piece).
     * TRY_NEVER: no try (untimed, a regular file, or no RWF_NOWAIT here);
     * TRY_FIRST: the next batch is tried whole; TRY_WAITED: the try would have
     * blocked, so wait and write a piece, then TRY_FIRST again. */
    enum { TRY_NEVER, TRY_FIRST, TRY_WAITED } attempt =
        timed && kind != WK_PLAIN ? TRY_FIRST : TRY_NEVER;
    while (i < count) {
        const int eager = attempt == TRY_FIRST;
        int k = 0;
        size_t total = 0, lim = eager ? IO_CHUNK : cap;
        for (size_t j = i; j < count && k < IOV_BATCH && total < lim; j++) {
            size_t off = j == i ? skip : 0;
            size_t len = iov[j].len - off;
            if (len > lim - total) len = lim - total;
            if (len == 0) continue;
            v[k].iov_base = (void *)((const uint8_t *)iov[j].base + off);
            v[k].iov_len = len;
            total += len;
            k++;
        }
        if (k == 0) break; /* only empty ranges left */
        if (timed && !eager) HR_TRY(wait_ready((int)fd, POLLOUT, w, field, "write", err));
        ssize_t r;
        if (kind == WK_SOCKET) {
            struct msghdr msg;
            memset(&msg, 0, sizeof msg);
            msg.msg_iov = v;
            msg.msg_iovlen = k;
            r = sendmsg((int)fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
        } else if (eager) {
            r = nowait_writev((int)fd, v, k);
        } else {
            r = writev((int)fd, v, k);
        }
        if (r < 0 && eager && try_again_waiting(errno)) {
            /* would block: wait this once; EINVAL, ENOSYS, EOPNOTSUPP: no RWF_NOWAIT
             * here, wait first from now on */
            attempt = kind != WK_SOCKET && !is_would_block(errno) ? TRY_NEVER : TRY_WAITED;
            continue;
        }
        if (r < 0) {
            int e = errno;
            if (e == EINTR) {
                if (w && w->on_eintr && w->on_eintr(w->ctx) != 0)
                    return hri_os_fail(err, EINTR, field, "write", NULL);
                continue;
            }
            if (is_would_block(e)) {
                if (!timed) HR_TRY(wait_ready((int)fd, POLLOUT, w, field, "write", err));
                continue; /* timed: the loop waits before the next try */
            }
            return hri_os_fail(err, e, field, "write", NULL); /* EPIPE: the reader is gone */
        }
        if (r == 0) return hri_os_fail(err, EIO, field, "write (no progress)", NULL);
        if (attempt == TRY_WAITED) attempt = TRY_FIRST;
        size_t left = (size_t)r;
        while (i < count && left >= iov[i].len - skip) {
            left -= iov[i].len - skip;
            skip = 0;
            i++;
        }
        skip += left;
    }
    return HURRAY_OK;
}

int hri_os_write_all(hri_os_fd fd, const void *src, size_t n, const struct hri_os_wait *w,
                     const char *field, struct hurray_error *err) {
    struct hri_os_iovec one = {src, n};
    return hri_os_writev_all(fd, &one, 1, w, field, err);
}

/* ---- replacing a file atomically --------------------------------------------------------- */

unsigned long hri_os_pid(void) { return (unsigned long)getpid(); }

uint64_t hri_os_unique(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The path a write to `target` should replace: a symbolic link's final
 * target (so the link survives), else `target` itself. */
static const char *resolve_target(const char *target, char *buf, size_t cap) {
    struct stat st;
    if (lstat(target, &st) != 0 || !S_ISLNK(st.st_mode)) return target;
    char *r = realpath(target, NULL);
    if (!r) return target; /* dangling: replace the link itself */
    int n = snprintf(buf, cap, "%s", r);
    free(r);
    return n > 0 && (size_t)n < cap ? buf : target;
}

/* FNV-1a of the host name: the <host> of temporary names (file-container.md HR-FILE-16). */
static uint32_t host_hash(void) {
    char name[256];
    uint32_t h = 2166136261u;
    if (gethostname(name, sizeof name) != 0) name[0] = 0;
    name[sizeof name - 1] = 0;
    for (const char *c = name; *c; c++) h = (h ^ (uint8_t)*c) * 16777619u;
    return h;
}

int hri_os_cancelled(struct hurray_error *err, const char *field, const char *what) {
    return hri_os_fail(err, ECANCELED, field, what, NULL);
}

void hri_os_temp_sweep(const char *target) {
    char real[4096], dir[4096], prefix[4096 + 32], path[8192];
    const char *dest = resolve_target(target, real, sizeof real);
    const char *slash = strrchr(dest, '/');
    const char *base = slash ? slash + 1 : dest;
    size_t dlen = slash ? (size_t)(slash - dest) + 1 : 0;
    if (dlen >= sizeof dir) return;
    memcpy(dir, dest, dlen);
    dir[dlen] = 0;
    int plen = snprintf(prefix, sizeof prefix, "%s.hurray-tmp-%08lx-", base,
                        (unsigned long)host_hash());
    if (plen < 0 || (size_t)plen >= sizeof prefix) return;
    DIR *d = opendir(dlen ? dir : ".");
    if (!d) return;
    unsigned long self = hri_os_pid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0) continue;
        const char *at = e->d_name + plen;
        char *end = NULL;
        errno = 0;
        unsigned long pid = strtoul(at, &end, 10);
        if (end == at || *end != '-' || errno != 0 || pid == 0 || pid == self ||
            pid > (unsigned long)INT_MAX)
            continue;
        /* a process that exists (or that we may not signal) is left alone */
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        int n = snprintf(path, sizeof path, "%s%s", dir, e->d_name);
        if (n > 0 && (size_t)n < sizeof path) unlink(path);
    }
    closedir(d);
}

int hri_os_temp_create(const char *target, char *tmp, size_t cap, hri_os_fd *fd,
                       struct hurray_error *err) {
    char real[4096];
    const char *dest = resolve_target(target, real, sizeof real);
    struct stat st;
    mode_t mode = 0666;
    int keep_mode = stat(dest, &st) == 0 && S_ISREG(st.st_mode);
    if (keep_mode) mode = st.st_mode & 07777;
    uint64_t u = hri_os_unique();
    unsigned long host = (unsigned long)host_hash();
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        int n = snprintf(tmp, cap, "%s.hurray-tmp-%08lx-%lu-%llx%02x", dest, host, hri_os_pid(),
                         (unsigned long long)u, attempt);
        HR_FAIL_IF(n < 0 || (size_t)n >= cap, err, HURRAY_E_ARGUMENT, "path",
                   "path: too long (%zu bytes)", strlen(dest));
        int f;
        do {
            f = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, keep_mode ? 0600 : mode);
        } while (f < 0 && errno == EINTR);
        if (f >= 0) {
            /* The target's own mode, exactly (open applied the umask). */
            if (keep_mode && fchmod(f, mode) != 0) {
                int e = errno;
                close(f);
                unlink(tmp);
                return hri_os_fail(err, e, "path", "cannot set the mode of", tmp);
            }
            *fd = (hri_os_fd)f;
            return HURRAY_OK;
        }
        if (errno != EEXIST)
            return hri_os_fail(err, errno, "path", "cannot create a file beside", dest);
    }
    return hri_fail(err, HURRAY_E_IO, "path", "cannot create a temporary file beside \"%.200s\"",
                    dest);
}

int hri_os_set_size(hri_os_fd fd, uint64_t size, const char *path, struct hurray_error *err) {
    int r;
    if (size > (uint64_t)INT64_MAX) return hri_os_fail(err, EFBIG, "file", "cannot size", path);
    do {
        r = ftruncate((int)fd, (off_t)size);
    } while (r != 0 && errno == EINTR);
    if (r != 0) return hri_os_fail(err, errno, "file", "cannot size", path);
    return HURRAY_OK;
}

int hri_os_sync(hri_os_fd fd, const char *path, struct hurray_error *err) {
    int r;
#if defined(F_FULLFSYNC)
    /* macOS: fsync only hands the data to the drive, whose cache may lose it;
     * F_FULLFSYNC flushes the cache too. File systems that cannot (network,
     * some FUSE) refuse it: fsync below is then the best there is. */
    do {
        r = fcntl((int)fd, F_FULLFSYNC);
    } while (r != 0 && errno == EINTR);
    if (r == 0) return HURRAY_OK;
#endif
    do {
        r = fsync((int)fd);
    } while (r != 0 && errno == EINTR);
    /* Pipes, sockets and some file systems cannot sync: not an error. */
    if (r != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP)
        return hri_os_fail(err, errno, "file", "cannot sync", path);
    return HURRAY_OK;
}

int hri_os_replace(const char *tmp, const char *target, struct hurray_error *err) {
    char real[4096];
    const char *dest = resolve_target(target, real, sizeof real);
    if (rename(tmp, dest) != 0) return hri_os_fail(err, errno, "path", "cannot replace", dest);
    return HURRAY_OK;
}

void hri_os_remove(const char *path) {
    if (path) unlink(path);
}

#else
/* Windows builds compile os_win32.c instead. ISO C forbids an empty unit. */
typedef int hri_os_posix_unused;
#endif
