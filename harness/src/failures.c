/* Failure lists (docs/conformance/testee-protocol.md § 6): the vectors an
 * implementation is known to fail, one id a line; '#' starts a comment,
 * surrounding blanks and blank lines are ignored. Kept sorted for lookup. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define HC_FAILURE_LIST_MAX_BYTES (64u * 1024u * 1024u)

struct hc_failure_list {
    char **ids;
    size_t n;
    char *text; /* the file, NUL-terminated; ids point into it */
};

static int cmp_ids(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void hc_failure_list_free(struct hc_failure_list *fl) {
    if (!fl) return;
    free(fl->ids);
    free(fl->text);
    free(fl);
}

int hc_failure_list_load(const char *path, struct hc_failure_list **out, char *msg, size_t cap) {
    uint8_t *data = NULL;
    size_t len = 0;
    *out = NULL;
    if (hc_read_file(path, HC_FAILURE_LIST_MAX_BYTES, &data, &len, msg, cap)) return -1;
    struct hc_failure_list *fl = calloc(1, sizeof *fl);
    char *text = malloc(len + 1);
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += data[i] == '\n';
    char **ids = calloc(lines, sizeof *ids);
    if (!fl || !text || !ids) {
        snprintf(msg, cap, "%s: out of memory", path);
        goto fail;
    }
    memcpy(text, data, len);
    text[len] = '\0';
    free(data);
    data = NULL;
    size_t n = 0, lineno = 0;
    for (char *line = text; line && *line;) {
        char *next = strchr(line, '\n');
        if (next) *next++ = '\0';
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        while (*line == ' ' || *line == '\t' || *line == '\r') line++;
        size_t l = strlen(line);
        while (l && (line[l - 1] == ' ' || line[l - 1] == '\t' || line[l - 1] == '\r')) line[--l] = '\0';
        if (l) {
            if (strpbrk(line, " \t") || l >= HC_ID_MAX) {
                snprintf(msg, cap, "%s:%zu: not one vector id", path, lineno);
                goto fail;
            }
            ids[n++] = line;
        }
        line = next;
    }
    qsort(ids, n, sizeof *ids, cmp_ids);
    for (size_t i = 1; i < n; i++)
        if (strcmp(ids[i - 1], ids[i]) == 0) {
            snprintf(msg, cap, "%s: %s is listed twice", path, ids[i]);
            goto fail;
        }
    fl->ids = ids;
    fl->n = n;
    fl->text = text;
    *out = fl;
    return 0;
fail:
    free(data);
    free(ids);
    free(text);
    free(fl);
    return -1;
}

int hc_failure_list_has(const struct hc_failure_list *fl, const char *id) {
    if (!fl || !fl->n) return 0;
    const char *key = id;
    return bsearch(&key, fl->ids, fl->n, sizeof *fl->ids, cmp_ids) != NULL;
}

size_t hc_failure_list_count(const struct hc_failure_list *fl) { return fl ? fl->n : 0; }

const char *hc_failure_list_id(const struct hc_failure_list *fl, size_t i) {
    return fl && i < fl->n ? fl->ids[i] : NULL;
}
