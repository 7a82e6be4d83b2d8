/* hurray-conformance: runs the golden-vector corpus through libhurray, or
 * through any program that speaks the testee protocol
 * (docs/conformance/testee-protocol.md).
 *
 *   hurray-conformance --vectors DIR [--id ID] [--kind K] [--verbose] [--isolate]
 *                      [--testee CMD [--timeout S] [--give-up-after N]]
 *                      [--failure-list FILE] [--write-failure-list FILE]
 *
 * Exit status: 0 iff no vector (and nothing in the manifest) failed and at
 * least one vector ran; 1 otherwise; 2 for a usage error or an --id that
 * names no vector. See harness/README.md. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#define HC_HAVE_FORK 1
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "cborw.h"
#include "harness.h"

struct cli {
    const char *testee;
    unsigned timeout_s;
    unsigned give_up_after;
    const char *failure_list;
    const char *write_failures;
};

static void usage(FILE *out) {
    fprintf(out,
            "usage: hurray-conformance --vectors DIR [--id ID]\n"
            "                          [--kind descriptor|quantization|kv|file|stream]\n"
            "                          [--verbose] [--isolate]\n"
            "                          [--testee CMD [--timeout S] [--give-up-after N]]\n"
            "                          [--failure-list FILE] [--write-failure-list FILE]\n"
            "  --vectors DIR  corpus directory holding manifest.cbor\n"
            "  --id ID        run only this vector\n"
            "  --kind K       run only vectors of this kind\n"
            "  --verbose      print every compared field (expected vs got)\n"
            "  --isolate      run each vector in a child process (a crash fails one vector)\n"
            "  --testee CMD   run the vectors through CMD (a shell command) over the testee\n"
            "                 protocol (docs/conformance/testee-protocol.md) instead of libhurray\n"
            "  --timeout S    seconds a testee has for each request (default 10)\n"
            "  --give-up-after N  stop starting a testee after N failures in a row (default 5)\n"
            "  --failure-list FILE  vectors known to fail: exit 0 iff exactly these fail\n"
            "  --write-failure-list FILE  write the ids of the vectors that failed\n");
}

/* A positive decimal number. */
static int parse_count(const char *s, unsigned max, unsigned *out) {
    char *end = NULL;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v == 0 || v > max) return -1;
    *out = (unsigned)v;
    return 0;
}

/* Accepts "--opt VALUE" and "--opt=VALUE". */
static const char *option_value(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    if (!argv[*i] || strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

static int parse_args(int argc, char **argv, struct hc_options *opt, struct cli *cli) {
    memset(opt, 0, sizeof *opt);
    memset(cli, 0, sizeof *cli);
    cli->timeout_s = 10;
    cli->give_up_after = 5;
    opt->only_kind = -1;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
            opt->verbose = 1;
        } else if (strcmp(argv[i], "--isolate") == 0) {
            opt->isolate = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if ((v = option_value(argc, argv, &i, "--vectors")) != NULL) {
            opt->dir = v;
        } else if ((v = option_value(argc, argv, &i, "--id")) != NULL) {
            opt->only_id = v;
        } else if ((v = option_value(argc, argv, &i, "--testee")) != NULL) {
            if (!*v) {
                fprintf(stderr, "hurray-conformance: --testee needs a command\n");
                return -1;
            }
            cli->testee = v;
        } else if ((v = option_value(argc, argv, &i, "--timeout")) != NULL) {
            if (parse_count(v, 86400, &cli->timeout_s)) {
                fprintf(stderr, "hurray-conformance: --timeout wants 1..86400 seconds\n");
                return -1;
            }
        } else if ((v = option_value(argc, argv, &i, "--give-up-after")) != NULL) {
            if (parse_count(v, 1000000, &cli->give_up_after)) {
                fprintf(stderr, "hurray-conformance: --give-up-after wants a positive count\n");
                return -1;
            }
        } else if ((v = option_value(argc, argv, &i, "--failure-list")) != NULL) {
            cli->failure_list = v;
        } else if ((v = option_value(argc, argv, &i, "--write-failure-list")) != NULL) {
            cli->write_failures = v;
        } else if ((v = option_value(argc, argv, &i, "--kind")) != NULL) {
            enum hc_kind k = hc_kind_from_name(v);
            if (k != HC_KIND_UNKNOWN) opt->only_kind = (int)k;
            else {
                fprintf(stderr, "hurray-conformance: unknown kind \"%s\"\n", v);
                return -1;
            }
        } else {
            fprintf(stderr, "hurray-conformance: unexpected argument \"%s\"\n", argv[i]);
            return -1;
        }
    }
    if (!opt->dir) {
        fprintf(stderr, "hurray-conformance: --vectors DIR is required\n");
        return -1;
    }
    if (cli->testee && opt->isolate) {
        fprintf(stderr, "hurray-conformance: --isolate runs libhurray in a child; a testee is "
                        "one already\n");
        return -1;
    }
    return 0;
}

/* Ids of the failure list that name no vector of the corpus at all. */
static void check_list_ids(const struct hc_failure_list *fl, const struct hc_manifest *m,
                           struct hc_report *report) {
    for (size_t i = 0; i < hc_failure_list_count(fl); i++) {
        const char *id = hc_failure_list_id(fl, i);
        int found = 0;
        for (size_t k = 0; k < m->nvectors && !found; k++) {
            const cbor_item_t *item = m->vectors[k];
            if (!cbor_isa_map(item)) continue;
            size_t n = cbor_map_size(item);
            struct cbor_pair *pairs = cbor_map_handle(item);
            for (size_t j = 0; j < n && !found; j++)
                found = hc_tstr_equals(pairs[j].key, "id") == 0 &&
                        hc_tstr_equals(pairs[j].value, id) == 0;
        }
        if (!found) hc_report_list_failure(report, "\"%s\" names no vector of the corpus", id);
    }
}

static void print_testee(const struct hc_testee *t, FILE *out) {
    const struct hc_testee_stats *s = hc_testee_stats(t);
    fprintf(out, "testee: %s %s (%s): %u start%s (%u failed), %u timeout%s, %u crash%s, "
                 "%u garbage answer%s\n",
            hc_testee_name(t), hc_testee_version(t), hc_testee_command(t), s->starts,
            s->starts == 1 ? "" : "s", s->failed_starts, s->timeouts, s->timeouts == 1 ? "" : "s",
            s->crashes, s->crashes == 1 ? "" : "es", s->garbage, s->garbage == 1 ? "" : "s");
}

/* The filters look at the raw id and kind, before the vector is parsed. */
static int selected(const struct hc_options *opt, const cbor_item_t *item) {
    if (!opt->only_id && opt->only_kind < 0) return 1;
    const cbor_item_t *id = NULL, *kind = NULL;
    if (!cbor_isa_map(item)) return 0;
    size_t n = cbor_map_size(item);
    struct cbor_pair *pairs = cbor_map_handle(item);
    for (size_t i = 0; i < n; i++) {
        if (hc_tstr_equals(pairs[i].key, "id") == 0) id = pairs[i].value;
        if (hc_tstr_equals(pairs[i].key, "kind") == 0) kind = pairs[i].value;
    }
    if (opt->only_id && hc_tstr_equals(id, opt->only_id) != 0) return 0;
    if (opt->only_kind >= 0 && hc_tstr_equals(kind, hc_kind_name((enum hc_kind)opt->only_kind)))
        return 0;
    return 1;
}

#ifdef HC_HAVE_FORK
/* Runs the vector in a child; a crash or sanitizer abort fails this vector
 * only. The child sends its result struct through a pipe. */
static void run_isolated(const struct hc_options *opt, const cbor_item_t *item, size_t index,
                         struct hc_result *res) {
    int fds[2];
    fflush(stdout);
    fflush(stderr);
    if (pipe(fds) != 0) {
        hc_check_vector(opt, item, index, res);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        hc_check_vector(opt, item, index, res);
        fflush(stdout);
        const char *p = (const char *)res;
        size_t left = sizeof *res;
        while (left > 0) {
            ssize_t w = write(fds[1], p, left);
            if (w <= 0) break;
            p += w;
            left -= (size_t)w;
        }
        _exit(left == 0 ? 0 : 3);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        hc_check_vector(opt, item, index, res);
        return;
    }
    struct hc_result got;
    char *p = (char *)&got;
    size_t have = 0;
    while (have < sizeof got) {
        ssize_t r = read(fds[0], p + have, sizeof got - have);
        if (r <= 0) break;
        have += (size_t)r;
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (have == sizeof got && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        *res = got;
        return;
    }
    /* The child died: label the vector from the manifest, report how. */
    memset(res, 0, sizeof *res);
    snprintf(res->id, sizeof res->id, "vectors[%zu]", index);
    struct hc_log quiet;
    hc_log_init(&quiet, NULL);
    struct hc_vector v;
    hc_vector_parse(&quiet, item, opt->schema_version, &v);
    res->kind = v.kind;
    res->expect = v.expect;
    if (v.id[0]) hc_printable(res->id, sizeof res->id, v.id, strlen(v.id));
    hc_vector_free(&v);
    res->passed = 0;
    if (WIFSIGNALED(status))
        snprintf(res->message, sizeof res->message, "crashed: signal %d", WTERMSIG(status));
    else
        snprintf(res->message, sizeof res->message, "child exited with status %d%s",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                 " (sanitizer report on stderr?)");
}
#endif

static void run_one(const struct hc_options *opt, const cbor_item_t *item, size_t index,
                    struct hc_result *res) {
#ifdef HC_HAVE_FORK
    if (opt->isolate) {
        run_isolated(opt, item, index, res);
        return;
    }
#endif
    hc_check_vector(opt, item, index, res);
}

int main(int argc, char **argv) {
    struct hc_options opt;
    struct cli cli;
    struct hc_failure_list *fl = NULL;
    if (parse_args(argc, argv, &opt, &cli)) {
        usage(stderr);
        return 2;
    }
    if (cli.failure_list) {
        char msg[HC_MSG_MAX];
        if (hc_failure_list_load(cli.failure_list, &fl, msg, sizeof msg)) {
            fprintf(stderr, "hurray-conformance: failure list: %s\n", msg);
            return 2;
        }
    }
    if (cli.testee) {
        signal(SIGPIPE, SIG_IGN); /* a testee that dies is a failed vector, not our end */
        opt.testee = hc_testee_new(cli.testee, cli.timeout_s * 1000u, cli.give_up_after);
        if (!opt.testee) {
            fprintf(stderr, "hurray-conformance: out of memory\n");
            hc_failure_list_free(fl);
            return 2;
        }
    }
    struct hc_report *report = hc_report_create();
    struct hc_result *res = malloc(sizeof *res);
    if (!report || !res) {
        fprintf(stderr, "hurray-conformance: out of memory\n");
        hc_report_free(report);
        free(res);
        return 2;
    }
    struct hc_manifest m;
    int exit_code = 1;
    size_t ran = 0;
    if (hc_manifest_load(&m, opt.dir, report, stderr) == 0) {
        opt.schema_version = m.schema_version;
        if (fl) check_list_ids(fl, &m, report);
        if (opt.testee) {
            struct hc_buf hello;
            hc_buf_init(&hello);
            if (hc_protocol_hello(m.root, &hello) || hc_testee_set_hello(opt.testee, hello.p, hello.len)) {
                fprintf(stderr, "hurray-conformance: out of memory\n");
                hc_buf_free(&hello);
                hc_manifest_free(&m);
                hc_testee_free(opt.testee);
                hc_report_free(report);
                hc_failure_list_free(fl);
                free(res);
                return 2;
            }
            hc_buf_free(&hello);
        }
        for (size_t i = 0; i < m.nvectors; i++) {
            if (!selected(&opt, m.vectors[i])) continue;
            run_one(&opt, m.vectors[i], i, res);
            ran++;
            if (hc_report_add(report, res)) {
                fprintf(stderr, "hurray-conformance: out of memory\n");
                break;
            }
        }
    }
    if (opt.only_id && ran == 0 && m.root) {
        fprintf(stderr, "hurray-conformance: no vector with id \"%s\"\n", opt.only_id);
        exit_code = 2;
    } else {
        struct hc_report_options ro = {fl, opt.verbose};
        fflush(stdout);
        if (opt.testee) print_testee(opt.testee, stdout);
        exit_code = hc_report_print_opts(report, stdout, &ro);
        if (cli.write_failures) {
            char header[256];
            snprintf(header, sizeof header, "vectors that failed in this run (hurray-conformance%s%s)",
                     opt.testee ? ", testee " : "", opt.testee ? hc_testee_name(opt.testee) : "");
            if (hc_report_write_failures(report, cli.write_failures, header)) {
                fprintf(stderr, "hurray-conformance: cannot write %s\n", cli.write_failures);
                exit_code = exit_code ? exit_code : 1;
            }
        }
    }
    hc_testee_free(opt.testee);
    hc_failure_list_free(fl);
    hc_manifest_free(&m);
    hc_report_free(report);
    free(res);
    return exit_code;
}
