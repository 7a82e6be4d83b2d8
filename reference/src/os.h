/* The one operating-system layer of libhurray. Never installed.
 *
 * Every system call libhurray makes lives behind this interface, in one file
 * per platform: os_posix.c (Linux, macOS, the BSDs) and, for Windows, a
 * sibling os_win32.c implementing the same functions. No other file of the
 * library includes an OS header (<unistd.h>, <fcntl.h>, <sys/...>, <poll.h>,
 * <windows.h>): file.c and stream.c speak only this interface.
 *
 * Conventions. Every fallible function returns a hurray status and fills the
 * NULL-tolerant error record; a failing system call is HURRAY_E_IO with the
 * system's message, the path or transport it concerns, and the error number
 * in err->sys_errno (ETIMEDOUT for a timeout, ECANCELED for a read woken by a
 * waker, as the POSIX numbers; the Windows file maps its codes onto these).
 * Interrupted calls (EINTR) are resumed unless the caller's hook says stop. */
#ifndef HURRAY_OS_H
#define HURRAY_OS_H

#include <stddef.h>
#include <stdint.h>

#include "hurray/status.h"

/* A file or transport handle: a POSIX descriptor, or a Windows HANDLE stored
 * as an integer. HRI_OS_NO_FD is "none". */
typedef intptr_t hri_os_fd;
#define HRI_OS_NO_FD ((hri_os_fd)-1)

/* Fills `err` with HURRAY_E_IO for system error `errnum`: "<what> "<path>": <message>"
 * (the path part only when `path` is non-NULL), field `field`, and
 * err->sys_errno = errnum. Returns HURRAY_E_IO. */
int hri_os_fail(struct hurray_error *err, int errnum, const char *field, const char *what,
                const char *path);

/* ---- reading files ---------------------------------------------------------------------
 * Opening never blocks: the path is opened non-blocking and without becoming a
 * controlling terminal, then fstat decides; anything but a regular file (a
 * directory, FIFO, socket, character or block device) is refused with IO
 * naming what it is, before a byte is read. */
int hri_os_open_regular(const char *path, hri_os_fd *fd, uint64_t *size,
                        struct hurray_error *err);
/* The size of an open regular file (refusing any other kind, as above). */
int hri_os_file_size(hri_os_fd fd, const char *path, uint64_t *size, struct hurray_error *err);
/* Reads up to n bytes at offset `off` (pread; EINTR resumed; no change to the
 * file position). *got < n only at the end of the file. */
int hri_os_pread(hri_os_fd fd, void *dst, size_t n, uint64_t off, size_t *got,
                 const char *path, struct hurray_error *err);

/* Reads the byte ranges v[0..count) from consecutive file bytes starting at
 * `off` (preadv where the platform has it, resuming EINTR and short reads;
 * no change to the file position). Every v[k].len > 0 and their sum at most
 * 1 GiB. *got < the sum only at the end of the file. */
struct hri_os_rvec {
    void *base;
    size_t len;
};
int hri_os_preadv(hri_os_fd fd, const struct hri_os_rvec *v, size_t count, uint64_t off,
                  size_t *got, const char *path, struct hurray_error *err);

/* A copy-on-write mapping of [off, off + len) of a file: readable and
 * writable, writes never reach the file (POSIX MAP_PRIVATE, Windows
 * FILE_MAP_COPY). `off` need not be page-aligned: the mapping starts at the
 * page below it and *addr points at byte `off`. len > 0. */
struct hri_os_mapping {
    void *base;  /* what was mapped (page-aligned) */
    size_t len;  /* how much was mapped */
};
int hri_os_map_private(hri_os_fd fd, uint64_t off, uint64_t len, const char *path, void **addr,
                       struct hri_os_mapping *m, struct hurray_error *err);
/* Unmaps; NULL-tolerant, idempotent (m->base is cleared). */
void hri_os_unmap(struct hri_os_mapping *m);
/* The granularity mappings are aligned to (page size; 64 KiB on Windows). */
size_t hri_os_map_granularity(void);

/* ---- reserved memory -------------------------------------------------------------------
 * Address space without memory behind it, committed in steps as it is filled: where a
 * stream reader puts a large buffer, so that a claimed size costs nothing until its bytes
 * arrive and the buffer never moves (stream.md HR-STREAM-16). Reserving costs neither memory
 * nor commit charge (POSIX: mmap with no access and MAP_NORESERVE; Windows: VirtualAlloc
 * MEM_RESERVE); committing makes a range readable and writable (mprotect; MEM_COMMIT), and
 * only the pages written to take memory. */
/* The page size: what commits are rounded to. */
size_t hri_os_page_size(void);
/* Reserves `len` (> 0) bytes of address space at a page-aligned *base; NOMEM when the system
 * refuses (the address space is exhausted, or a 32-bit process asks for more than it has). */
int hri_os_reserve(size_t len, void **base, struct hurray_error *err);
/* Commits [off, off + len) of a reservation of `reserved` bytes at `base`, rounded outward
 * to pages (and clipped to the reservation); committing a committed range again is
 * harmless. NOMEM when the system refuses. */
int hri_os_commit(void *base, size_t reserved, size_t off, size_t len, struct hurray_error *err);
/* Says that the contents of [p, p + len) -- committed, page-aligned -- are no longer
 * needed: the system may take the pages back when it runs short (they then read as
 * zeros) or leave them in place. The range stays committed and writable; writing it
 * again costs no fault for a page the system left (POSIX MADV_FREE, Windows
 * MEM_RESET). A hint: a system without it ignores it. */
void hri_os_discard(void *p, size_t len);
/* Returns a whole reservation, committed or not, to the system. NULL-tolerant. */
void hri_os_release(void *base, size_t len);

/* ---- handles --------------------------------------------------------------------------- */

/* A close-on-exec duplicate, so that closing ours never closes the caller's. */
int hri_os_dup(hri_os_fd fd, hri_os_fd *out, const char *field, struct hurray_error *err);
/* Closes `*fd` and sets it to HRI_OS_NO_FD; NULL-tolerant. Errors are reported
 * only through the return value (IO), for writers that must know. */
int hri_os_close(hri_os_fd *fd, const char *path, struct hurray_error *err);

/* ---- blocking transport I/O ------------------------------------------------------------
 * A waker lets another thread interrupt a blocked read or write at once (a
 * self-pipe on POSIX, an event on Windows). Signalling is async-signal-safe
 * and idempotent; once signalled, every later wait on it returns ECANCELED. */
struct hri_os_waker;
int hri_os_waker_create(struct hri_os_waker **out, struct hurray_error *err);
void hri_os_waker_signal(struct hri_os_waker *w);
void hri_os_waker_destroy(struct hri_os_waker *w); /* NULL-tolerant */

/* With an interrupt hook, a wait for readiness is cut into slices of at most this
 * many milliseconds and the hook runs between them (as after EINTR): a signal that
 * arrives just before a wait begins is seen within one slice (stream.md HR-STREAM-14). */
#define HRI_OS_SIGNAL_SLICE_MS 200

/* How a blocking transport call waits. All fields optional (zero = none):
 * timeout_ms < 0 waits forever, >= 0 bounds each wait for readiness (IO with
 * sys_errno ETIMEDOUT when it passes), on a monotonic clock: a wait interrupted by
 * a signal and resumed keeps its deadline, it does not start again; `on_eintr` runs when a call is
 * interrupted by a signal and returns non-zero to stop (IO with sys_errno
 * EINTR); `waker` interrupts the wait (IO with sys_errno ECANCELED). */
struct hri_os_wait {
    int timeout_ms;
    int (*on_eintr)(void *ctx);
    void *ctx;
    struct hri_os_waker *waker;
};
/* One read of up to `cap` bytes: OK with 1 <= *got <= cap, or *got = 0 at the
 * end of the input. Waits for readiness first (so that a non-blocking
 * descriptor, a socket with a timeout, or a pipe with no writer yet all
 * behave), honouring `w` (NULL: wait forever, resume EINTR). */
int hri_os_read(hri_os_fd fd, void *dst, size_t cap, size_t *got, const struct hri_os_wait *w,
                const char *field, struct hurray_error *err);
/* Writes all n bytes (short writes and EAGAIN resumed; EPIPE is IO). */
int hri_os_write_all(hri_os_fd fd, const void *src, size_t n, const struct hri_os_wait *w,
                     const char *field, struct hurray_error *err);
/* Writes `count` byte ranges in order with as few system calls as the
 * platform allows (writev), resuming partial writes. */
struct hri_os_iovec {
    const void *base;
    size_t len;
};
int hri_os_writev_all(hri_os_fd fd, const struct hri_os_iovec *iov, size_t count,
                      const struct hri_os_wait *w, const char *field, struct hurray_error *err);

/* ---- replacing a file atomically --------------------------------------------------------
 * hri_os_temp_create makes a new file beside `target`, exclusively (nothing is
 * clobbered), named "<target>.hurray-tmp-<host>-<pid>-<unique>" (file-container.md
 * HR-FILE-16: <host> 8 hex digits of FNV-1a of the host name), with the mode the
 * target has if it exists (else 0666 less the umask), writing through a
 * symbolic link to its final target. `tmp` receives the temporary path. */
int hri_os_temp_create(const char *target, char *tmp, size_t cap, hri_os_fd *fd,
                       struct hurray_error *err);
/* Removes the temporary files of `target` (resolved as above) that a process of this
 * host which no longer runs left behind (HR-FILE-16). Best effort: errors are ignored,
 * and a file of another host or of a live process is never touched. */
void hri_os_temp_sweep(const char *target);
/* IO with the system's "operation cancelled" number (ECANCELED): a caller's hook
 * stopped the operation. */
int hri_os_cancelled(struct hurray_error *err, const char *field, const char *what);
/* Sets the length of a file being written (ftruncate / SetFileInformationByHandle's end of
 * file), before it is written: the file system then does not extend it write by write. */
int hri_os_set_size(hri_os_fd fd, uint64_t size, const char *path, struct hurray_error *err);
/* Flushes a written file to stable storage (fsync / FlushFileBuffers). */
int hri_os_sync(hri_os_fd fd, const char *path, struct hurray_error *err);
/* Renames `tmp` over `target` atomically (rename / MoveFileEx with
 * MOVEFILE_REPLACE_EXISTING); a symbolic link `target` is resolved first, so
 * the link keeps pointing at the replaced file. */
int hri_os_replace(const char *tmp, const char *target, struct hurray_error *err);
/* Removes a file; errors ignored (best-effort cleanup). */
void hri_os_remove(const char *path);
/* The process id, for temporary names. */
unsigned long hri_os_pid(void);
/* A value that differs between calls (clock ticks), for temporary names. */
uint64_t hri_os_unique(void);

#endif
