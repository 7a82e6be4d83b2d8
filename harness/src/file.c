/* Kind "file" (schema 2): an HRRYFILE image (docs/spec/file-container.md).
 *
 *   every expectation: hurray_file_create_memory under the vector's limits;
 *            hurray_file_create_path on the vector file itself, in copy and in
 *            mmap mode, must give the same status (README: "from memory or
 *            from a path (the outcome is the same)");
 *   valid:   OK, and through the public API, entry by entry (index order,
 *            members included): name, kind, the parent (member_of: derived
 *            from the library's kinds and member counts, and
 *            hurray_file_entry_is_member), hurray_file_find(name) == i, the
 *            descriptor (hurray_file_entry_descriptor, the descriptor
 *            comparison of kind descriptor), and hurray_file_load_item(i):
 *            its descriptor equal to the entry's, each buffer's size, its
 *            SHA-256, its address a multiple of its declared alignment, its
 *            bytes those of the input at data_offset + offset, and buffer
 *            addresses placed as their offsets say (address - offset is the
 *            same for every buffer of one loaded tree: each loaded item holds
 *            its own byte range, file-container.md HR-FILE-8); a
 *            composite entry loads its whole member tree, each node checked
 *            against the oracle entry it stands for. Then top_level (count
 *            and names, hurray_file_top_level_*), the KV map (hurray_file_kv,
 *            null = empty), the header fields (version, data_offset,
 *            data_length) against the input's header and the re-encoding's,
 *            and the re-encoding (hurray_file_encode of the top-level items
 *            and the KV map): the input byte for byte where roundtrip, else
 *            the input with bytes 10-11 (version_minor) zero. Finally every
 *            prefix 0..size-1 fails with TRUNCATED (sampled above 8 KiB);
 *   invalid: exactly "error". Nothing may stay allocated after close. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define HC_FILE_MAX_ENTRIES 65536u /* oracle entries the harness parses */
#define HC_FILE_SWEEP_FULL 8192u
#define HC_FILE_MAX_DEPTH 80u      /* deeper trees are refused by any reader */

/* ------------------------------------------------------------ decoded --- */

static int get_text(struct hc_log *log, const char *path, const cbor_item_t *item,
                    struct hc_text *t) {
    return hc_get_tstr(log, path, item, &t->s, &t->len);
}

static int buffers_parse(struct hc_log *log, const char *base, const cbor_item_t *item,
                         struct hc_file_entry_exp *e) {
    static const struct hc_key keys[] = {
        {"offset", HC_KEY_REQUIRED}, {"size", HC_KEY_REQUIRED}, {"sha256", HC_KEY_REQUIRED}};
    cbor_item_t **items;
    size_t n;
    char path[HC_PATH_MAX];
    if (hc_get_array(log, hc_pathf(path, "%s.buffers", base), item, HURRAY_MAX_BUFFERS, &items,
                     &n))
        return -1;
    e->buffers = calloc(n ? n : 1, sizeof *e->buffers);
    if (!e->buffers) return hc_schema_fail(log, path, "out of memory");
    e->buffer_count = n;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const cbor_item_t *f[3];
        char b[HC_PATH_MAX], p[HC_PATH_MAX];
        hc_pathf(b, "%s.buffers[%zu]", base, i);
        if (hc_map_fields(log, b, items[i], keys, 3, f)) {
            bad = 1;
            continue;
        }
        struct hc_file_buffer_exp *x = &e->buffers[i];
        size_t len = 0;
        bad |= hc_get_uint(log, hc_pathf(p, "%s.offset", b), f[0], &x->offset);
        bad |= hc_get_uint(log, hc_pathf(p, "%s.size", b), f[1], &x->size);
        if (!hc_get_bstr(log, hc_pathf(p, "%s.sha256", b), f[2], &x->sha256, &len) && len != 32)
            bad = hc_schema_fail(log, p, "expected 32 bytes, got %zu", len);
    }
    return bad ? -1 : 0;
}

static int entry_parse(struct hc_log *log, const char *base, const cbor_item_t *item,
                       struct hc_file_entry_exp *e) {
    static const struct hc_key keys[] = {{"name", HC_KEY_REQUIRED},
                                         {"kind", HC_KEY_REQUIRED},
                                         {"member_of", HC_KEY_REQUIRED},
                                         {"descriptor", HC_KEY_REQUIRED},
                                         {"buffers", HC_KEY_REQUIRED}};
    const cbor_item_t *f[5];
    char p[HC_PATH_MAX];
    if (hc_map_fields(log, base, item, keys, 5, f)) return -1;
    int bad = get_text(log, hc_pathf(p, "%s.name", base), f[0], &e->name);
    if (hc_tstr_equals(f[1], "tensor") == 0) e->kind = HURRAY_FILE_KIND_TENSOR;
    else if (hc_tstr_equals(f[1], "composite") == 0) e->kind = HURRAY_FILE_KIND_COMPOSITE;
    else bad = hc_schema_fail(log, hc_pathf(p, "%s.kind", base),
                              "expected \"tensor\" or \"composite\", got %s",
                              hc_cbor_type_name(f[1]));
    e->member_of_null = hc_is_null(f[2]);
    if (!e->member_of_null) bad |= get_text(log, hc_pathf(p, "%s.member_of", base), f[2], &e->member_of);
    e->desc = calloc(1, sizeof *e->desc);
    if (!e->desc) return hc_schema_fail(log, base, "out of memory");
    bad |= hc_desc_parse(log, hc_pathf(p, "%s.descriptor", base), f[3], e->desc);
    bad |= buffers_parse(log, base, f[4], e);
    return bad ? -1 : 0;
}

int hc_file_decoded_parse(struct hc_log *log, const cbor_item_t *item, struct hc_vector *v) {
    enum { FK_VERSION, FK_DATA_OFFSET, FK_DATA_LENGTH, FK_ENTRIES, FK_TOP, FK_KV, FK_COUNT };
    static const struct hc_key keys[FK_COUNT] = {
        [FK_VERSION] = {"version", HC_KEY_REQUIRED},
        [FK_DATA_OFFSET] = {"data_offset", HC_KEY_REQUIRED},
        [FK_DATA_LENGTH] = {"data_length", HC_KEY_REQUIRED},
        [FK_ENTRIES] = {"entries", HC_KEY_REQUIRED},
        [FK_TOP] = {"top_level", HC_KEY_REQUIRED},
        [FK_KV] = {"kv", HC_KEY_REQUIRED}};
    const cbor_item_t *f[FK_COUNT];
    struct hc_file_exp *x = v->file = calloc(1, sizeof *v->file);
    if (!x) return hc_schema_fail(log, "decoded", "out of memory");
    if (hc_map_fields(log, "decoded", item, keys, FK_COUNT, f)) return -1;
    cbor_item_t **items;
    size_t n;
    int bad = 0;
    if (!hc_get_array(log, "decoded.version", f[FK_VERSION], 2, &items, &n)) {
        if (n != 2)
            bad = hc_schema_fail(log, "decoded.version", "expected [major, minor], got %zu entries", n);
        else {
            bad |= hc_get_uint(log, "decoded.version[0]", items[0], &x->version_major);
            bad |= hc_get_uint(log, "decoded.version[1]", items[1], &x->version_minor);
        }
    } else {
        bad = 1;
    }
    bad |= hc_get_uint(log, "decoded.data_offset", f[FK_DATA_OFFSET], &x->data_offset);
    bad |= hc_get_uint(log, "decoded.data_length", f[FK_DATA_LENGTH], &x->data_length);
    if (!hc_get_array(log, "decoded.entries", f[FK_ENTRIES], HC_FILE_MAX_ENTRIES, &items, &n)) {
        x->entries = calloc(n ? n : 1, sizeof *x->entries);
        if (!x->entries) return hc_schema_fail(log, "decoded.entries", "out of memory");
        x->entry_count = n;
        for (size_t i = 0; i < n; i++) {
            char b[HC_PATH_MAX];
            bad |= entry_parse(log, hc_pathf(b, "decoded.entries[%zu]", i), items[i],
                               &x->entries[i]);
        }
    } else {
        bad = 1;
    }
    if (!hc_get_array(log, "decoded.top_level", f[FK_TOP], HC_FILE_MAX_ENTRIES, &items, &n)) {
        x->top = calloc(n ? n : 1, sizeof *x->top);
        if (!x->top) return hc_schema_fail(log, "decoded.top_level", "out of memory");
        x->top_count = n;
        for (size_t i = 0; i < n; i++) {
            char p[HC_PATH_MAX];
            bad |= get_text(log, hc_pathf(p, "decoded.top_level[%zu]", i), items[i], &x->top[i]);
        }
    } else {
        bad = 1;
    }
    if (!hc_is_null(f[FK_KV])) {
        if (hc_kv_map_parse(log, "decoded.kv", f[FK_KV])) bad = 1;
        else x->kv = f[FK_KV];
    }
    return bad ? -1 : 0;
}

void hc_file_exp_free(struct hc_file_exp *x) {
    for (size_t i = 0; i < x->entry_count; i++) {
        free(x->entries[i].desc);
        free(x->entries[i].buffers);
    }
    free(x->entries);
    free(x->top);
    x->entries = NULL;
    x->top = NULL;
    x->entry_count = x->top_count = 0;
}

/* -------------------------------------------------------------- check --- */

static uint64_t le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

struct file_run {
    struct hc_log *log;
    const struct hc_vector *v;
    const struct hc_file_exp *x;
    const uint8_t *data;
    struct hurray_file *f;
    struct hurray_descriptor *d; /* scratch */
    /* derived tree: parent[i] (SIZE_MAX top level) and the children of each
     * entry as a CSR list */
    size_t *parent;
    size_t *child_start, *children;
    /* buffer placement within one loaded tree: the address of data-relative
     * byte 0, from its first non-empty buffer (reset for each load) */
    int members_too; /* check_node: recurse into the members of the root */
    int have_base;
    uintptr_t base;
    size_t base_entry, base_buffer;
};

static const char *kind_name(int kind) {
    return kind == HURRAY_FILE_KIND_TENSOR ? "tensor"
           : kind == HURRAY_FILE_KIND_COMPOSITE ? "composite" : NULL;
}

/* The parent of every entry, from the library's kinds and member counts in
 * pre-order (file-container.md § Composites). */
static int derive_tree(struct file_run *r, size_t n) {
    size_t *stack_entry = calloc(n ? n : 1, sizeof *stack_entry);
    uint64_t *stack_left = calloc(n ? n : 1, sizeof *stack_left);
    size_t *count = calloc(n + 1, sizeof *count);
    r->parent = calloc(n ? n : 1, sizeof *r->parent);
    r->child_start = calloc(n + 1, sizeof *r->child_start);
    r->children = calloc(n ? n : 1, sizeof *r->children);
    int rc = -1;
    if (!stack_entry || !stack_left || !count || !r->parent || !r->child_start || !r->children) {
        hc_fail(r->log, "out of memory");
        goto done;
    }
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        while (depth && stack_left[depth - 1] == 0) depth--;
        r->parent[i] = depth ? stack_entry[depth - 1] : SIZE_MAX;
        if (depth) {
            stack_left[depth - 1]--;
            count[stack_entry[depth - 1]]++;
        }
        if (hurray_file_entry_kind(r->f, i) != HURRAY_FILE_KIND_COMPOSITE) continue;
        struct hurray_error err;
        if (hurray_file_entry_descriptor(r->f, i, r->d, &err) != HURRAY_OK) continue;
        uint64_t members = r->d->layout.member_count;
        hurray_descriptor_reset(r->d);
        stack_entry[depth] = i;
        stack_left[depth] = members;
        depth++;
    }
    for (size_t i = 0; i < n; i++) r->child_start[i + 1] = r->child_start[i] + count[i];
    memset(count, 0, (n + 1) * sizeof *count);
    for (size_t i = 0; i < n; i++)
        if (r->parent[i] != SIZE_MAX) {
            size_t p = r->parent[i];
            r->children[r->child_start[p] + count[p]++] = i;
        }
    rc = 0;
done:
    free(stack_entry);
    free(stack_left);
    free(count);
    return rc;
}

/* One buffer of a loaded tree against oracle entry e, buffer b. `quiet`
 * collects differences for a node reached through another entry. */
static void check_buffer(struct file_run *r, struct hc_log *log, const char *base, size_t e,
                         size_t b, const struct hurray_item *it) {
    const struct hc_file_buffer_exp *w = &r->x->entries[e].buffers[b];
    const struct hurray_item_buffer *got = &it->buffers[b];
    const struct hurray_buffer_desc *bd = &it->descriptor->buffers[b];
    char p[HC_PATH_MAX];
    hc_cmp_u64(log, hc_pathf(p, "%s.buffers[%zu].size", base, b), w->size, got->size);
    if (got->size && !got->data) {
        hc_fail(log, "%s.buffers[%zu]: library gives NULL data for %" PRIu64 " bytes", base, b,
                got->size);
        return;
    }
    if (w->size != got->size) return;
    static const uint8_t none[1] = {0};
    const uint8_t *bytes = got->data ? got->data : none;
    hc_cmp_sha256(log, hc_pathf(p, "%s.buffers[%zu].sha256", base, b), w->sha256, bytes,
                  (size_t)got->size);
    uint64_t align = (uint64_t)1 << (bd->alignment_log2 & 63);
    if (got->data && (uintptr_t)got->data % align != 0)
        hc_fail(log, "%s.buffers[%zu]: loaded at an address that is not a multiple of its "
                     "declared alignment %" PRIu64 " (HR-FILE-8)",
                base, b, align);
    /* the bytes at data_offset + offset of the input */
    uint64_t at = r->x->data_offset + w->offset;
    if (at < w->offset || at > r->v->size || got->size > r->v->size - at)
        hc_fail(log, "%s.buffers[%zu].offset: data_offset + %" PRIu64 " + %" PRIu64
                     " bytes lies outside the %" PRIu64 "-byte file",
                base, b, w->offset, got->size, r->v->size);
    else if (got->size && memcmp(r->data + at, got->data, (size_t)got->size) != 0)
        hc_fail(log, "%s.buffers[%zu].offset: the loaded bytes are not the file's bytes at "
                     "data_offset + %" PRIu64,
                base, b, w->offset);
    /* placement: one base for every buffer of the loaded tree */
    if (!got->data || !got->size) return;
    uintptr_t addr = (uintptr_t)got->data;
    if (!r->have_base) {
        r->have_base = 1;
        r->base = addr - (uintptr_t)w->offset;
        r->base_entry = e;
        r->base_buffer = b;
    } else if (addr - r->base != (uintptr_t)w->offset) {
        hc_fail(log, "%s.buffers[%zu].offset: loaded %" PRIdPTR " bytes from where the data "
                     "region starts by entries[%zu].buffers[%zu], expected %" PRIu64,
                base, b, (intptr_t)(addr - r->base), r->base_entry, r->base_buffer, w->offset);
    }
}

/* A loaded tree against the oracle entries it stands for: node = entry e.
 * The root's descriptor was compared through hurray_file_entry_descriptor
 * (and found equal to the loaded one); members are compared here, into a
 * quiet log, and reported as one line for the root. */
static void check_node(struct file_run *r, struct hc_log *log, const char *base, size_t e,
                       const struct hurray_item *it, unsigned depth) {
    const struct hc_file_entry_exp *w = &r->x->entries[e];
    char p[HC_PATH_MAX];
    if (!it || !it->descriptor) {
        hc_fail(log, "%s: library gives a NULL item or descriptor", base);
        return;
    }
    if (depth > 0) {
        size_t len = 0;
        struct hurray_error err;
        if (hurray_descriptor_encoded_len(it->descriptor, &len, &err) != HURRAY_OK) len = 0;
        hc_compare_descriptor_at(log, hc_pathf(p, "%s.descriptor", base), w->desc, it->descriptor,
                                 len);
    }
    int composite = hurray_item_is_composite(it);
    hc_cmp_str(log, hc_pathf(p, "%s.kind (loaded item)", base), kind_name(w->kind),
               composite ? "composite" : "tensor");
    if (!composite) {
        if (it->member_count)
            hc_fail(log, "%s: a tensor item with %u members", base, it->member_count);
        hc_cmp_u64(log, hc_pathf(p, "%s.buffers (length)", base), w->buffer_count,
                   it->descriptor->buffer_count);
        if (it->descriptor->buffer_count && !it->buffers) {
            hc_fail(log, "%s: library gives NULL buffers", base);
            return;
        }
        for (size_t b = 0; b < w->buffer_count && b < it->descriptor->buffer_count; b++)
            check_buffer(r, log, base, e, b, it);
        return;
    }
    size_t first = r->child_start[e], n = r->child_start[e + 1] - first;
    hc_cmp_u64(log, hc_pathf(p, "%s (members of the loaded item)", base), n, it->member_count);
    if (depth >= HC_FILE_MAX_DEPTH || (depth == 0 && !r->members_too)) return;
    for (size_t k = 0; k < n && k < it->member_count && it->members; k++) {
        size_t c = r->children[first + k];
        char cb[HC_PATH_MAX];
        check_node(r, log, hc_pathf(cb, "decoded.entries[%zu]", c), c, it->members[k], depth + 1);
    }
}

/* The member tree of composite entry e as hurray_file_load_item(e) gives
 * it, each node against the oracle entry it stands for: one line (or every
 * field, verbose) after the entries' own checks. */
static void check_member_tree(struct file_run *r, size_t e, const struct hurray_item *it) {
    struct hc_log quiet;
    char base[HC_PATH_MAX];
    hc_log_init(&quiet, NULL);
    hc_pathf(base, "decoded.entries[%zu]", e);
    r->members_too = 1;
    check_node(r, r->log->out ? r->log : &quiet, base, e, it, 0);
    r->members_too = 0;
    if (quiet.failures)
        hc_fail(r->log, "%s: the member tree hurray_file_load_item gives: %s%s", base, quiet.first,
                quiet.failures > 1 ? " (+more)" : "");
}

/* Entry i: API answers against the oracle; the loaded item (or NULL) is
 * handed back in *loaded. */
static void check_entry(struct file_run *r, size_t i, struct hurray_item **loaded) {
    struct hc_log *log = r->log;
    const struct hc_file_entry_exp *w = &r->x->entries[i];
    char base[HC_PATH_MAX], p[HC_PATH_MAX], msg[HC_MSG_MAX];
    hc_pathf(base, "decoded.entries[%zu]", i);
    const char *name = hurray_file_entry_name(r->f, i);
    hc_cmp_text(log, hc_pathf(p, "%s.name", base), w->name.s, w->name.len, name,
                name ? strlen(name) : 0);
    hc_cmp_str(log, hc_pathf(p, "%s.kind", base), kind_name(w->kind),
               kind_name(hurray_file_entry_kind(r->f, i)));
    size_t parent = r->parent[i];
    const char *pname = parent == SIZE_MAX ? NULL : hurray_file_entry_name(r->f, parent);
    hc_cmp_text(log, hc_pathf(p, "%s.member_of", base), w->member_of_null ? NULL : w->member_of.s,
                w->member_of.len, pname, pname ? strlen(pname) : 0);
    hc_cmp_bool(log, hc_pathf(p, "%s.member_of (hurray_file_entry_is_member)", base),
                !w->member_of_null, hurray_file_entry_is_member(r->f, i));
    /* lookup by the oracle's name */
    if (!memchr(w->name.s, '\0', w->name.len)) {
        char *cname = malloc(w->name.len + 1);
        if (cname) {
            memcpy(cname, w->name.s, w->name.len);
            cname[w->name.len] = '\0';
            size_t at = SIZE_MAX;
            int found = hurray_file_find(r->f, cname, &at);
            if (!found) hc_fail(log, "%s.name: hurray_file_find does not find it", base);
            else hc_cmp_u64(log, hc_pathf(p, "%s.name (hurray_file_find index)", base), i, at);
            free(cname);
        }
    }
    struct hurray_error err;
    hurray_error_clear(&err);
    int st = hurray_file_entry_descriptor(r->f, i, r->d, &err);
    if (st != HURRAY_OK) {
        hc_fail(log, "%s: hurray_file_entry_descriptor failed: %s", base,
                hc_describe(msg, sizeof msg, st, &err));
    } else {
        size_t len = 0;
        hurray_error_clear(&err);
        st = hurray_descriptor_encoded_len(r->d, &len, &err);
        if (st != HURRAY_OK)
            hc_fail(log, "%s.descriptor: hurray_descriptor_encoded_len failed: %s", base,
                    hc_describe(msg, sizeof msg, st, &err));
        hc_compare_descriptor_at(log, hc_pathf(p, "%s.descriptor", base), w->desc, r->d, len);
    }
    struct hurray_item *it = NULL;
    hurray_error_clear(&err);
    r->have_base = 0;
    int lst = hurray_file_load_item(r->f, i, &it, &err);
    if (lst != HURRAY_OK) {
        hc_fail(log, "%s: hurray_file_load_item failed: %s", base,
                hc_describe(msg, sizeof msg, lst, &err));
    } else {
        if (st == HURRAY_OK && it && it->descriptor && !hurray_descriptor_equal(it->descriptor, r->d))
            hc_fail(log, "%s: the loaded item's descriptor differs from "
                         "hurray_file_entry_descriptor's", base);
        check_node(r, log, base, i, it, 0);
    }
    hurray_descriptor_reset(r->d);
    *loaded = it;
}

static void check_header_field(struct hc_log *log, const char *path, const char *where,
                               uint64_t want, uint64_t got) {
    char p[HC_PATH_MAX];
    hc_cmp_u64(log, hc_pathf(p, "%s (%s)", path, where), want, got);
}

/* The re-encoding of the top-level items and the KV map. */
static void check_reencoding(struct file_run *r, struct hurray_item **top, size_t ntop) {
    struct hc_log *log = r->log;
    struct hurray_error err;
    char msg[HC_MSG_MAX];
    struct hurray_file_entry *entries = calloc(ntop ? ntop : 1, sizeof *entries);
    if (!entries) {
        hc_fail(log, "roundtrip: out of memory");
        return;
    }
    for (size_t k = 0; k < ntop; k++) {
        entries[k].name = hurray_file_entry_name(r->f, hurray_file_top_level_entry(r->f, k));
        entries[k].item = top[k];
        if (!top[k] || !entries[k].name) {
            hc_note(log, "roundtrip: skipped, top-level entry %zu did not load", k);
            free(entries);
            return;
        }
    }
    const struct hurray_kv *kv = hurray_file_kv(r->f);
    struct hurray_file_contents c = {entries, ntop, kv ? kv->entries : NULL, kv ? kv->count : 0};
    uint64_t len = 0;
    hurray_error_clear(&err);
    int st = hurray_file_encoded_len(&c, NULL, &len, &err);
    if (st != HURRAY_OK) {
        hc_fail(log, "roundtrip: hurray_file_encoded_len failed: %s",
                hc_describe(msg, sizeof msg, st, &err));
        free(entries);
        return;
    }
    hc_cmp_u64(log, "roundtrip: hurray_file_encoded_len", r->v->size, len);
    if (len > HC_VECTOR_MAX_BYTES) {
        free(entries);
        return;
    }
    uint8_t *out = malloc(len ? (size_t)len : 1);
    size_t written = 0;
    if (!out) {
        hc_fail(log, "roundtrip: out of memory");
        free(entries);
        return;
    }
    hurray_error_clear(&err);
    st = hurray_file_encode(&c, NULL, out, (size_t)len, &written, &err);
    if (st != HURRAY_OK) {
        hc_fail(log, "roundtrip: hurray_file_encode failed: %s", hc_describe(msg, sizeof msg, st, &err));
    } else {
        if (written >= HURRAY_FILE_HEADER_BYTES) {
            check_header_field(log, "decoded.version[0]", "re-encoding", r->x->version_major,
                               le16(out + 8));
            check_header_field(log, "decoded.data_offset", "re-encoding", r->x->data_offset,
                               le64(out + 48));
            check_header_field(log, "decoded.data_length", "re-encoding", r->x->data_length,
                               le64(out + 56));
            hc_cmp_u64(log, "roundtrip: version_minor written (a 1.0 writer writes 0)", 0,
                       le16(out + 10));
        }
        size_t size = (size_t)r->v->size;
        if (r->v->roundtrip) {
            hc_cmp_bytes(log, "roundtrip: encoded bytes", r->data, size, out, written);
        } else {
            uint8_t *want = hc_file_expected_encoding(r->v, r->data);
            if (want) {
                hc_cmp_bytes(log, "re-encoding (version_minor written as 0)", want, size, out,
                             written);
                free(want);
            }
        }
    }
    free(out);
    free(entries);
}

uint8_t *hc_file_expected_encoding(const struct hc_vector *v, const uint8_t *data) {
    size_t size = (size_t)v->size;
    uint8_t *want = malloc(size ? size : 1);
    if (!want) return NULL;
    memcpy(want, data, size);
    /* vectors/SCHEMA.md: only the minor version may differ */
    if (!v->roundtrip && size >= 12) want[10] = want[11] = 0;
    return want;
}

static void check_valid_file(struct file_run *r) {
    struct hc_log *log = r->log;
    const struct hc_file_exp *x = r->x;
    size_t n = hurray_file_entry_count(r->f);
    hc_cmp_u64(log, "decoded.entries (length)", x->entry_count, n);
    /* the input's header, which the oracle describes */
    if (r->v->size >= HURRAY_FILE_HEADER_BYTES) {
        check_header_field(log, "decoded.version[0]", "file header", x->version_major,
                           le16(r->data + 8));
        check_header_field(log, "decoded.version[1]", "file header", x->version_minor,
                           le16(r->data + 10));
        check_header_field(log, "decoded.data_offset", "file header", x->data_offset,
                           le64(r->data + 48));
        check_header_field(log, "decoded.data_length", "file header", x->data_length,
                           le64(r->data + 56));
    }
    if (derive_tree(r, n)) return;
    size_t ntop = hurray_file_top_level_count(r->f);
    struct hurray_item **top = calloc(ntop ? ntop : 1, sizeof *top);
    struct hurray_item **loaded = calloc(n ? n : 1, sizeof *loaded);
    if (!top || !loaded) {
        hc_fail(log, "out of memory");
        free(top);
        free(loaded);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < n && i < x->entry_count; i++) {
        check_entry(r, i, &loaded[i]);
        if (r->parent[i] != SIZE_MAX) continue;
        if (k < ntop) top[k] = loaded[i];
        if (hurray_file_top_level_entry(r->f, k) != i)
            hc_fail(log, "decoded.entries[%zu]: top-level entry %zu is entry %zu for "
                         "hurray_file_top_level_entry, expected %zu",
                    i, k, hurray_file_top_level_entry(r->f, k), i);
        k++;
    }
    for (size_t i = 0; i < n && i < x->entry_count; i++)
        if (loaded[i] && hurray_item_is_composite(loaded[i])) check_member_tree(r, i, loaded[i]);
    hc_cmp_u64(log, "decoded.top_level (length)", x->top_count, ntop);
    for (size_t t = 0; t < x->top_count && t < ntop; t++) {
        char p[HC_PATH_MAX];
        const char *name = hurray_file_entry_name(r->f, hurray_file_top_level_entry(r->f, t));
        hc_cmp_text(log, hc_pathf(p, "decoded.top_level[%zu]", t), x->top[t].s, x->top[t].len,
                    name, name ? strlen(name) : 0);
    }
    const struct hurray_kv *kv = hurray_file_kv(r->f);
    if (!kv) hc_fail(log, "decoded.kv: hurray_file_kv returned NULL");
    else hc_kv_compare(log, "decoded.kv", x->kv, kv);
    if (k == ntop && n == x->entry_count) check_reencoding(r, top, ntop);
    for (size_t i = 0; i < n && i < x->entry_count; i++) hurray_item_destroy(loaded[i]);
    free(loaded);
    free(top);
}

static int open_memory(const uint8_t *data, size_t size, const struct hc_vector *v,
                       const struct hurray_allocator *a, struct hurray_file **f,
                       struct hurray_error *err) {
    struct hurray_file_options o;
    memset(&o, 0, sizeof o);
    o.limits = &v->limits;
    o.allocator = a;
    o.mode = HURRAY_FILE_COPY;
    *f = NULL;
    hurray_error_clear(err);
    return hurray_file_create_memory(data, size, &o, f, err);
}

/* The vector file opened by path, copied and mapped: the same status; for a
 * valid file, every entry loads with the oracle's buffer contents. */
static void check_paths(struct hc_log *log, const struct hc_vector *v, const char *dir,
                        const uint8_t *data, int want_status) {
    size_t plen = strlen(dir) + strlen(v->path) + 2;
    char *path = malloc(plen);
    char msg[HC_MSG_MAX];
    if (!path) {
        hc_fail(log, "out of memory");
        return;
    }
    snprintf(path, plen, "%s/%s", dir, v->path);
    static const char *modes[] = {"copy", "mmap"};
    for (int mode = HURRAY_FILE_COPY; mode <= HURRAY_FILE_MMAP; mode++) {
        struct hc_alloc_stats stats;
        struct hurray_allocator a;
        struct hurray_file_options o;
        struct hurray_file *f = NULL;
        struct hurray_error err;
        hc_counting_allocator(&a, &stats);
        memset(&o, 0, sizeof o);
        o.limits = &v->limits;
        o.allocator = &a;
        o.mode = mode;
        hurray_error_clear(&err);
        int st = hurray_file_create_path(path, &o, &f, &err);
        if (st != want_status) {
            hc_fail(log, "hurray_file_create_path (%s mode): %s, but open_memory gave %s",
                    modes[mode], hc_describe(msg, sizeof msg, st, &err),
                    hc_status_str(want_status));
        } else if (st == HURRAY_OK && v->file) {
            struct hc_log quiet;
            struct file_run r;
            hc_log_init(&quiet, NULL);
            memset(&r, 0, sizeof r);
            r.log = &quiet;
            r.v = v;
            r.x = v->file;
            r.data = data;
            r.f = f;
            r.d = malloc(sizeof *r.d);
            size_t n = hurray_file_entry_count(f);
            if (r.d && n == v->file->entry_count) {
                hurray_descriptor_init(r.d);
                if (!derive_tree(&r, n))
                    for (size_t i = 0; i < n; i++) {
                        struct hurray_item *it = NULL;
                        if (hurray_file_load_item(f, i, &it, &err) != HURRAY_OK) {
                            hc_fail(&quiet, "entry %zu does not load", i);
                            continue;
                        }
                        char b[HC_PATH_MAX];
                        r.members_too = 1;
                        r.have_base = 0;
                        check_node(&r, &quiet, hc_pathf(b, "decoded.entries[%zu]", i), i, it, 0);
                        hurray_item_destroy(it);
                    }
            } else {
                hc_fail(&quiet, "%zu entries", n);
            }
            if (quiet.failures)
                hc_fail(log, "hurray_file_create_path (%s mode): %s%s", modes[mode], quiet.first,
                        quiet.failures > 1 ? " (+more)" : "");
            free(r.d);
            free(r.parent);
            free(r.child_start);
            free(r.children);
        }
        hurray_file_destroy(f);
        char when[48];
        snprintf(when, sizeof when, "open_path (%s mode)", modes[mode]);
        hc_check_allocations(log, &stats, when);
    }
    free(path);
}

/* Every prefix of a valid file fails with TRUNCATED (file-container.md §
 * Decoding order: step 1 below 64 bytes, step 3 after the header). */
size_t *hc_file_sweep_plan(const struct hc_vector *v, const uint8_t *data, size_t *n,
                           int *sampled) {
    size_t size = (size_t)v->size, nm = 0;
    const struct hc_file_exp *x = v->file;
    size_t cap = 8;
    for (size_t i = 0; i < x->entry_count; i++) cap += 2 * x->entries[i].buffer_count;
    uint64_t *marks = malloc(cap * sizeof *marks);
    if (!marks) return NULL;
    marks[nm++] = HURRAY_FILE_HEADER_BYTES;
    if (size >= HURRAY_FILE_HEADER_BYTES) {
        uint64_t index_end = le64(data + 16) + le64(data + 24);
        marks[nm++] = index_end;
        marks[nm++] = le64(data + 32) + le64(data + 40);
    }
    marks[nm++] = x->data_offset;
    marks[nm++] = x->data_offset + x->data_length;
    for (size_t i = 0; i < x->entry_count; i++)
        for (size_t b = 0; b < x->entries[i].buffer_count; b++) {
            marks[nm++] = x->data_offset + x->entries[i].buffers[b].offset;
            marks[nm++] = x->data_offset + x->entries[i].buffers[b].offset +
                          x->entries[i].buffers[b].size;
        }
    size_t *plan = hc_sweep_plan(size, HC_FILE_SWEEP_FULL, marks, nm, n, sampled);
    free(marks);
    return plan;
}

static void file_sweep(struct hc_log *log, const struct hc_vector *v, const uint8_t *data,
                       struct hc_result *res) {
    size_t size = (size_t)v->size, n = 0;
    int sampled = 0;
    size_t *plan = hc_file_sweep_plan(v, data, &n, &sampled);
    uint8_t *buf = malloc(size ? size : 1);
    if (!plan || !buf) {
        hc_fail(log, "truncation sweep: out of memory");
        free(plan);
        free(buf);
        return;
    }
    res->sweep_sampled = sampled;
    struct hc_alloc_stats stats;
    struct hurray_allocator a;
    hc_counting_allocator(&a, &stats);
    unsigned bad = 0;
    size_t first_bad = 0;
    int first_status = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = plan[i];
        uint8_t *tail = buf + (size - k);
        if (k) memcpy(tail, data, k);
        struct hurray_file *f = NULL;
        struct hurray_error err;
        int st = open_memory(tail, k, v, &a, &f, &err);
        hurray_file_destroy(f);
        res->prefixes++;
        if (st == HURRAY_E_TRUNCATED) continue;
        if (bad++ == 0) {
            first_bad = k;
            first_status = st;
        }
        if (bad <= 16) hc_note(log, "DIFF truncation: prefix %zu -> %s", k, hc_status_str(st));
    }
    res->prefixes_bad += bad;
    hc_check_allocations(log, &stats, "truncation sweep");
    if (bad)
        hc_fail(log, "truncation sweep: %u of %zu prefixes did not fail with TRUNCATED (first: "
                     "prefix of %zu bytes -> %s)",
                bad, n, first_bad, hc_status_str(first_status));
    else
        hc_note(log, "ok   truncation sweep: %zu prefixes%s, all TRUNCATED", n,
                sampled ? " (sampled)" : "");
    free(plan);
    free(buf);
}

void hc_check_file(struct hc_log *log, const struct hc_vector *v, const char *dir,
                   const uint8_t *data, struct hc_result *res) {
    struct hc_alloc_stats stats;
    struct hurray_allocator a;
    struct hurray_file *f = NULL;
    struct hurray_error err;
    char msg[HC_MSG_MAX];
    hc_counting_allocator(&a, &stats);
    int st = open_memory(data, (size_t)v->size, v, &a, &f, &err);
    if (v->expect != HC_EXPECT_VALID) {
        if (st == HURRAY_OK) hurray_file_destroy(f);
        hc_check_allocations(log, &stats, "open/close");
        hc_check_failure_status(log, v, st, &err, res);
        check_paths(log, v, dir, data, st);
        return;
    }
    if (st != HURRAY_OK) {
        hc_fail(log, "expected a valid file, open failed: %s", hc_describe(msg, sizeof msg, st, &err));
        hc_check_allocations(log, &stats, "open");
    } else {
        struct file_run r;
        memset(&r, 0, sizeof r);
        r.log = log;
        r.v = v;
        r.x = v->file;
        r.data = data;
        r.f = f;
        r.d = malloc(sizeof *r.d);
        if (!r.d) {
            hc_fail(log, "out of memory");
        } else {
            hurray_descriptor_init(r.d);
            check_valid_file(&r);
            hurray_descriptor_reset(r.d);
        }
        free(r.d);
        free(r.parent);
        free(r.child_start);
        free(r.children);
        hurray_file_destroy(f);
        hc_check_allocations(log, &stats, "close (file and every loaded item)");
    }
    check_paths(log, v, dir, data, st == HURRAY_OK ? HURRAY_OK : st);
    file_sweep(log, v, data, res);
}
