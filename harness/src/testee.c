/* The testee process and its framed pipe (docs/conformance/testee-protocol.md
 * § 1): start, hello, one request -> one response with a deadline, kill and
 * restart after a timeout, a crash or garbage, give up after too many
 * failures in a row. protocol.c builds the requests and judges the answers.
 *
 * The runner never blocks without a deadline: both pipe ends are
 * non-blocking and every read and write waits in poll() for at most what is
 * left of the request's timeout. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cborw.h"
#include "harness.h"

#define HC_FRAME_MAX ((uint32_t)1 << 30) /* exclusive: L <= 2^30 - 1 */
#define HC_RESPONSE_DEPTH 512u

struct hc_testee {
    char *cmd;
    unsigned timeout_ms;
    unsigned give_up_after;
    uint8_t *hello;
    size_t hello_len;
    pid_t pid;   /* 0: not running */
    int to_fd;   /* its stdin */
    int from_fd; /* its stdout */
    unsigned failures_in_a_row;
    int gave_up;
    char gave_up_why[HC_MSG_MAX];
    char name[128], version[64];
    struct hc_testee_stats stats;
};

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct hc_testee *hc_testee_new(const char *cmd, unsigned timeout_ms, unsigned give_up_after) {
    struct hc_testee *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    size_t n = strlen(cmd) + 1;
    t->cmd = malloc(n);
    if (!t->cmd) {
        free(t);
        return NULL;
    }
    memcpy(t->cmd, cmd, n);
    t->timeout_ms = timeout_ms;
    t->give_up_after = give_up_after ? give_up_after : 1;
    t->to_fd = t->from_fd = -1;
    snprintf(t->name, sizeof t->name, "?");
    snprintf(t->version, sizeof t->version, "?");
    return t;
}

int hc_testee_set_hello(struct hc_testee *t, const uint8_t *req, size_t len) {
    free(t->hello);
    t->hello = malloc(len ? len : 1);
    if (!t->hello) return -1;
    memcpy(t->hello, req, len);
    t->hello_len = len;
    return 0;
}

const struct hc_testee_stats *hc_testee_stats(const struct hc_testee *t) { return &t->stats; }
const char *hc_testee_name(const struct hc_testee *t) { return t->name; }
const char *hc_testee_version(const struct hc_testee *t) { return t->version; }
const char *hc_testee_command(const struct hc_testee *t) { return t->cmd; }

/* "exited with status 3" / "crashed (signal 11)" */
static void describe_exit(int status, char *buf, size_t cap) {
    if (WIFSIGNALED(status))
        snprintf(buf, cap, "crashed (signal %d)", WTERMSIG(status));
    else if (WIFEXITED(status))
        snprintf(buf, cap, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(buf, cap, "stopped (wait status %d)", status);
}

static void close_fds(struct hc_testee *t) {
    if (t->to_fd >= 0) close(t->to_fd);
    if (t->from_fd >= 0) close(t->from_fd);
    t->to_fd = t->from_fd = -1;
}

/* Waits up to `ms` for the child to exit on its own; returns 1 and the wait
 * status when it did. */
static int reap_within(struct hc_testee *t, unsigned ms, int *status) {
    uint64_t end = now_ms() + ms;
    for (;;) {
        pid_t r = waitpid(t->pid, status, WNOHANG);
        if (r == t->pid || (r < 0 && errno == ECHILD)) return 1;
        if (now_ms() >= end) return 0;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void kill_testee(struct hc_testee *t) {
    if (!t->pid) return;
    close_fds(t);
    kill(-t->pid, SIGKILL); /* its process group: a shell's children too */
    kill(t->pid, SIGKILL);
    int status;
    while (waitpid(t->pid, &status, 0) < 0 && errno == EINTR) {
    }
    t->pid = 0;
}

/* Ends a testee that has (probably) died: reaps it and describes how. */
static void reap_dead(struct hc_testee *t, char *how, size_t cap) {
    int status = 0;
    close_fds(t);
    if (reap_within(t, 2000, &status)) {
        describe_exit(status, how, cap);
        t->pid = 0;
    } else {
        snprintf(how, cap, "closed its output but did not exit (killed)");
        kill_testee(t);
    }
}

void hc_testee_free(struct hc_testee *t) {
    if (!t) return;
    if (t->pid) {
        int status;
        close_fds(t); /* end of input: the testee exits */
        if (!reap_within(t, 2000, &status)) kill_testee(t);
        t->pid = 0;
    }
    free(t->hello);
    free(t->cmd);
    free(t);
}

static int set_nonblock_cloexec(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return -1;
    int fd_flags = fcntl(fd, F_GETFD);
    if (fd_flags < 0 || fcntl(fd, F_SETFD, fd_flags | FD_CLOEXEC) < 0) return -1;
    return 0;
}

static int spawn(struct hc_testee *t, char *why, size_t cap) {
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    if (pipe(in) != 0 || pipe(out) != 0) {
        snprintf(why, cap, "cannot create pipes: %s", strerror(errno));
        goto fail;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, cap, "cannot fork: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGPIPE, SIG_DFL);
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        size_t n = strlen(t->cmd) + 6;
        char *line = malloc(n);
        if (!line) _exit(127);
        snprintf(line, n, "exec %s", t->cmd);
        execl("/bin/sh", "sh", "-c", line, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid); /* also in the parent: no race with a kill of the group */
    close(in[0]);
    close(out[1]);
    t->pid = pid;
    t->to_fd = in[1];
    t->from_fd = out[0];
    if (set_nonblock_cloexec(t->to_fd) || set_nonblock_cloexec(t->from_fd)) {
        snprintf(why, cap, "cannot set up the pipes: %s", strerror(errno));
        kill_testee(t);
        return -1;
    }
    t->stats.starts++;
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0) close(in[i]);
        if (out[i] >= 0) close(out[i]);
    }
    return -1;
}

enum io { IO_OK, IO_TIMEOUT, IO_DEAD, IO_GARBAGE };

static enum io write_all(struct hc_testee *t, const uint8_t *p, size_t n, uint64_t deadline) {
    while (n > 0) {
        uint64_t now = now_ms();
        if (now >= deadline) return IO_TIMEOUT;
        struct pollfd pf = {t->to_fd, POLLOUT, 0};
        int r = poll(&pf, 1, (int)(deadline - now));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return IO_DEAD;
        if (r == 0) return IO_TIMEOUT;
        if (pf.revents & (POLLERR | POLLHUP | POLLNVAL)) return IO_DEAD;
        ssize_t w = write(t->to_fd, p, n);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (w <= 0) return IO_DEAD;
        p += w;
        n -= (size_t)w;
    }
    return IO_OK;
}

/* Reads exactly n bytes; *got counts what arrived (for the message). */
static enum io read_all(struct hc_testee *t, uint8_t *p, size_t n, uint64_t deadline,
                        size_t *got) {
    *got = 0;
    while (*got < n) {
        uint64_t now = now_ms();
        if (now >= deadline) return IO_TIMEOUT;
        struct pollfd pf = {t->from_fd, POLLIN, 0};
        int r = poll(&pf, 1, (int)(deadline - now));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return IO_DEAD;
        if (r == 0) return IO_TIMEOUT;
        ssize_t k = read(t->from_fd, p + *got, n - *got);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (k <= 0) return IO_DEAD;
        *got += (size_t)k;
    }
    return IO_OK;
}

/* Bytes the testee wrote that nobody asked for: -1 none, else the count
 * seen (0 with *eof set when it closed its output). */
static long pending_bytes(struct hc_testee *t, int *eof) {
    uint8_t junk[256];
    long n = 0;
    *eof = 0;
    for (;;) {
        struct pollfd pf = {t->from_fd, POLLIN, 0};
        if (poll(&pf, 1, 0) <= 0 || !(pf.revents & (POLLIN | POLLHUP))) break;
        ssize_t k = read(t->from_fd, junk, sizeof junk);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) break;
        if (k == 0) {
            *eof = 1;
            break;
        }
        n += k;
        if (n > 1 << 20) break;
    }
    return n ? n : -1;
}

/* One exchange on a running testee. On IO_OK *resp is the parsed map. */
static enum io exchange(struct hc_testee *t, const uint8_t *req, size_t len, cbor_item_t **resp,
                        char *why, size_t cap) {
    uint64_t deadline = now_ms() + t->timeout_ms;
    uint8_t hdr[4];
    int eof = 0;
    *resp = NULL;
    long stale = pending_bytes(t, &eof);
    if (stale > 0) {
        snprintf(why, cap, "%ld bytes on its output after its previous answer", stale);
        return IO_GARBAGE;
    }
    if (eof) {
        snprintf(why, cap, "closed its output after its previous answer");
        return IO_DEAD;
    }
    if (len >= HC_FRAME_MAX) {
        snprintf(why, cap, "the request is too large for a frame (%zu bytes)", len);
        return IO_GARBAGE;
    }
    for (int i = 0; i < 4; i++) hdr[i] = (uint8_t)(len >> (8 * i));
    enum io r = write_all(t, hdr, 4, deadline);
    if (r == IO_OK) r = write_all(t, req, len, deadline);
    if (r == IO_TIMEOUT) {
        snprintf(why, cap, "timed out after %u s (it did not read the request)",
                 (t->timeout_ms + 999) / 1000);
        return r;
    }
    if (r != IO_OK) {
        snprintf(why, cap, "it stopped reading its input");
        return r;
    }
    size_t got = 0;
    r = read_all(t, hdr, 4, deadline, &got);
    if (r == IO_TIMEOUT) {
        snprintf(why, cap, "timed out after %u s%s", (t->timeout_ms + 999) / 1000,
                 got ? " (inside the answer's length prefix)" : "");
        return r;
    }
    if (r != IO_OK) {
        snprintf(why, cap, got ? "its output ended inside a length prefix" : "no answer");
        return r;
    }
    uint32_t n = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
                 (uint32_t)hdr[3] << 24;
    if (n == 0 || n >= HC_FRAME_MAX) {
        snprintf(why, cap, "a frame length of %" PRIu32 " bytes (allowed: 1 .. 2^30 - 1; "
                 "prefix %02x %02x %02x %02x)", n, hdr[0], hdr[1], hdr[2], hdr[3]);
        return IO_GARBAGE;
    }
    uint8_t *body = malloc(n);
    if (!body) {
        snprintf(why, cap, "out of memory for a %" PRIu32 "-byte answer", n);
        return IO_GARBAGE;
    }
    r = read_all(t, body, n, deadline, &got);
    if (r != IO_OK) {
        free(body);
        if (r == IO_TIMEOUT)
            snprintf(why, cap, "timed out after %u s (the answer's frame is incomplete: %zu of "
                     "%" PRIu32 " bytes)", (t->timeout_ms + 999) / 1000, got, n);
        else
            snprintf(why, cap, "its output ended inside a frame (%zu of %" PRIu32 " bytes)", got, n);
        return r;
    }
    stale = pending_bytes(t, &eof);
    if (stale > 0) {
        free(body);
        snprintf(why, cap, "%ld bytes after the %" PRIu32 "-byte frame (a wrong length prefix?)",
                 stale, n);
        return IO_GARBAGE;
    }
    char msg[HC_MSG_MAX];
    if (hc_cbor_check(body, n, HC_RESPONSE_DEPTH, msg, sizeof msg)) {
        char hex[3 * 16 + 1] = "";
        for (uint32_t i = 0; i < n && i < 16; i++) snprintf(hex + 3 * i, 4, "%02x ", body[i]);
        free(body);
        snprintf(why, cap, "not one CBOR item: %.300s (frame of %" PRIu32 " bytes: %s%s)", msg, n, hex,
                 n > 16 ? "..." : "");
        return IO_GARBAGE;
    }
    struct cbor_load_result res;
    cbor_item_t *item = cbor_load(body, n, &res);
    free(body);
    if (!item || res.error.code != CBOR_ERR_NONE || res.read != n) {
        if (item) cbor_decref(&item);
        snprintf(why, cap, "libcbor cannot load the answer (error %d at byte %zu)",
                 (int)res.error.code, res.error.position);
        return IO_GARBAGE;
    }
    if (!cbor_isa_map(item)) {
        snprintf(why, cap, "the answer is a CBOR %s, not a map", hc_cbor_type_name(item));
        cbor_decref(&item);
        return IO_GARBAGE;
    }
    (void)eof; /* it answered, then closed its output: the next request finds it gone */
    *resp = item;
    return IO_OK;
}

static const cbor_item_t *map_get(const cbor_item_t *map, const char *key) {
    size_t n = cbor_map_size(map);
    struct cbor_pair *pairs = cbor_map_handle(map);
    for (size_t i = 0; i < n; i++)
        if (hc_tstr_equals(pairs[i].key, key) == 0) return pairs[i].value;
    return NULL;
}

static void copy_text(char *dst, size_t cap, const cbor_item_t *item) {
    if (item && cbor_isa_string(item) && cbor_string_is_definite(item))
        hc_printable(dst, cap, (const char *)cbor_string_handle(item), cbor_string_length(item));
}

/* Starts the testee and says hello. 0, or -1 with a reason. */
static int start(struct hc_testee *t, char *why, size_t cap) {
    char msg[HC_MSG_MAX];
    if (spawn(t, why, cap)) return -1;
    cbor_item_t *resp = NULL;
    enum io r = exchange(t, t->hello, t->hello_len, &resp, msg, sizeof msg);
    if (r != IO_OK) {
        if (r == IO_DEAD) {
            char how[128];
            reap_dead(t, how, sizeof how);
            snprintf(why, cap, "testee %s at hello (%.400s)", how, msg);
        } else {
            kill_testee(t);
            if (r == IO_GARBAGE) snprintf(why, cap, "testee answered garbage to hello: %.600s", msg);
            else snprintf(why, cap, "testee %.600s at hello", msg);
        }
        return -1;
    }
    const cbor_item_t *proto = map_get(resp, "protocol");
    if (!proto || !cbor_isa_uint(proto) || cbor_get_int(proto) != HC_PROTOCOL_VERSION) {
        snprintf(why, cap, "testee speaks protocol %s%" PRIu64 ", this runner %u",
                 proto && cbor_isa_uint(proto) ? "" : "(none) ",
                 proto && cbor_isa_uint(proto) ? (uint64_t)cbor_get_int(proto) : 0,
                 HC_PROTOCOL_VERSION);
        t->gave_up = 1; /* it will not change its mind */
        snprintf(t->gave_up_why, sizeof t->gave_up_why, "%s", why);
        cbor_decref(&resp);
        kill_testee(t);
        return -1;
    }
    copy_text(t->name, sizeof t->name, map_get(resp, "name"));
    copy_text(t->version, sizeof t->version, map_get(resp, "version"));
    cbor_decref(&resp);
    return 0;
}

static void count_failure(struct hc_testee *t, const char *why) {
    if (++t->failures_in_a_row >= t->give_up_after && !t->gave_up) {
        t->gave_up = 1;
        snprintf(t->gave_up_why, sizeof t->gave_up_why, "the testee failed %u times in a row "
                 "(last: %.500s)", t->failures_in_a_row, why);
    }
}

int hc_testee_call(struct hc_testee *t, const uint8_t *req, size_t len, const char *what,
                   cbor_item_t **resp, char *why, size_t cap) {
    char msg[HC_MSG_MAX], how[128];
    *resp = NULL;
    if (t->gave_up) {
        snprintf(why, cap, "not run: %s", t->gave_up_why);
        return -1;
    }
    if (!t->pid) {
        if (start(t, msg, sizeof msg)) {
            t->stats.failed_starts++;
            snprintf(why, cap, "%s", msg);
            count_failure(t, msg);
            return -1;
        }
    }
    enum io r = exchange(t, req, len, resp, msg, sizeof msg);
    switch (r) {
    case IO_OK:
        t->failures_in_a_row = 0;
        return 0;
    case IO_TIMEOUT:
        t->stats.timeouts++;
        kill_testee(t);
        snprintf(why, cap, "testee %s (%s; killed, restarted for the next request)", msg, what);
        break;
    case IO_DEAD:
        t->stats.crashes++;
        reap_dead(t, how, sizeof how);
        snprintf(why, cap, "testee %s (%s: %s)", how, what, msg);
        break;
    case IO_GARBAGE:
        t->stats.garbage++;
        kill_testee(t);
        snprintf(why, cap, "testee answered garbage: %s (%s; killed, restarted for the next "
                 "request)", msg, what);
        break;
    }
    count_failure(t, why);
    return -1;
}
