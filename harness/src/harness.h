/* hurray-conformance: the golden-vector harness. Internal header shared by
 * the harness sources (never installed). See harness/README.md.
 *
 * Flow: main.c parses arguments; manifest.c loads vectors/manifest.cbor and
 * checks the top level; schema.c is the typed, path-reporting access to the
 * CBOR tree; expect.c turns one vector map (and its "decoded" oracle) into
 * plain C structs; check.c runs one vector against libhurray; compare.c
 * compares libhurray's structs with the oracle; kv.c, file.c and stream.c
 * parse, run and compare the schema-2 kinds; report.c collects results
 * and prints the table, the failures and the final line; sha256.c hashes
 * the vector files.
 *
 * With --testee CMD (docs/conformance/testee-protocol.md) the vectors run
 * through another program instead: testee.c owns its process and the framed
 * pipe, protocol.c builds the requests and judges the answers,
 * cbor_compare.c compares decoded values, cborw.c writes CBOR, failures.c
 * reads failure lists. */
#ifndef HC_HARNESS_H
#define HC_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cbor.h>

#include "hurray/hurray.h"
#include "hc_limits.h"
#include "sha256.h"

#if defined(__GNUC__) || defined(__clang__)
#define HC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HC_PRINTF(f, a)
#endif

/* Bounds the harness enforces on its own inputs. */
#define HC_MANIFEST_MAX_BYTES (256u * 1024u * 1024u) /* manifest.cbor */
#define HC_VECTOR_MAX_BYTES (256u * 1024u * 1024u)   /* one vector file */
#define HC_NAME_MAX 64                                /* names: dtype, layout, ... */
#define HC_ID_MAX 256                                 /* vector ids */
#define HC_MSG_MAX 768                                /* one failure message */
#define HC_PATH_MAX 192                               /* a key path like decoded.shape[3] */

/* ------------------------------------------------------------ report.c --- */

/* What one vector's checks say: every comparison goes through a log, which
 * counts differences, keeps the first as the one-line failure message and,
 * when verbose, prints every compared field. */
struct hc_log {
    FILE *out;            /* verbose output; NULL when quiet */
    unsigned failures;    /* differences and errors recorded */
    char first[HC_MSG_MAX];
};

void hc_log_init(struct hc_log *log, FILE *verbose_out);
/* A failure that is not a field comparison (decode status, schema, I/O). */
void hc_fail(struct hc_log *log, const char *fmt, ...) HC_PRINTF(2, 3);
/* Verbose-only note. */
void hc_note(struct hc_log *log, const char *fmt, ...) HC_PRINTF(2, 3);

/* Field comparisons. `path` names the field (decoded.shape[2]). A NULL string
 * stands for CBOR null / "no name". */
void hc_cmp_u64(struct hc_log *log, const char *path, uint64_t want, uint64_t got);
/* A field whose two sides the caller has already formatted and compared. */
void hc_cmp_field(struct hc_log *log, const char *path, int same, const char *want,
                  const char *got);
void hc_cmp_i64(struct hc_log *log, const char *path, int64_t want, int64_t got);
void hc_cmp_bool(struct hc_log *log, const char *path, int want, int got);
void hc_cmp_str(struct hc_log *log, const char *path, const char *want, const char *got);
/* uint-or-null: *_null != 0 means null. */
void hc_cmp_opt_u64(struct hc_log *log, const char *path, int want_null, uint64_t want,
                    int got_null, uint64_t got);
void hc_cmp_f64bits(struct hc_log *log, const char *path, uint64_t want, uint64_t got);
void hc_cmp_f32bits(struct hc_log *log, const char *path, uint32_t want, uint32_t got);
/* Byte strings: on a difference, the first differing offset and a hex window. */
void hc_cmp_bytes(struct hc_log *log, const char *path, const uint8_t *want, size_t want_len,
                  const uint8_t *got, size_t got_len);
/* Text that may be long or hold any byte (names, keys): printable, quoted,
 * shortened in the message; NULL = null. */
void hc_cmp_text(struct hc_log *log, const char *path, const char *want, size_t want_len,
                 const char *got, size_t got_len);
/* SHA-256 of got[0..len) against a 32-byte digest (hex in the message). */
void hc_cmp_sha256(struct hc_log *log, const char *path, const uint8_t *want,
                   const uint8_t *got, size_t len);
/* Present-or-null sections: want_present / got_present. */
void hc_cmp_presence(struct hc_log *log, const char *path, int want_present, int got_present);

/* Prints `n` bytes around offset `at` of both strings, marking `at`. */
void hc_hex_window(FILE *out, const char *indent, const uint8_t *want, size_t want_len,
                   const uint8_t *got, size_t got_len, size_t at);
/* Writes a printable, escaped copy of s[0..len) into buf. */
const char *hc_printable(char *buf, size_t cap, const char *s, size_t len);

/* Kinds: schema 1 has descriptor and quantization; schema 2 adds kv, file
 * and stream. UNKNOWN collects vectors whose kind could not be parsed. */
enum hc_kind { HC_KIND_DESCRIPTOR = 0, HC_KIND_QUANT, HC_KIND_KV, HC_KIND_FILE, HC_KIND_STREAM,
               HC_KIND_UNKNOWN, HC_KIND_COUNT };
/* "descriptor", ..., "stream"; "?" for UNKNOWN. */
const char *hc_kind_name(enum hc_kind k);
/* Name -> kind; HC_KIND_UNKNOWN if no kind has that name. */
enum hc_kind hc_kind_from_name(const char *name);
/* The first manifest schema_version that has the kind. */
unsigned hc_kind_min_schema(enum hc_kind k);
#define HC_SCHEMA_MIN 1u
#define HC_SCHEMA_MAX 5u
enum hc_expect { HC_EXPECT_VALID = 0, HC_EXPECT_INVALID = 1, HC_EXPECT_IMPL = 2,
                 HC_EXPECT_UNKNOWN = 3, HC_EXPECT_COUNT };

/* The outcome of one vector, as the report needs it. */
struct hc_result {
    enum hc_kind kind;
    enum hc_expect expect;
    int passed;
    int impl_outcome;        /* status the library returned (impl-defined) */
    unsigned prefixes;       /* truncation / prefix sweep: prefixes tried */
    unsigned prefixes_bad;   /* ... that did not answer as the spec says */
    int sweep_sampled;       /* the sweep tried a sample of the prefixes, not all */
    char impl_note[160];     /* implementation-defined: "OUTCOME (allowed: ...)" */
    char id[HC_ID_MAX];      /* printable id, or vectors[i] */
    char message[HC_MSG_MAX];
};

struct hc_report;
struct hc_report *hc_report_create(void);
void hc_report_free(struct hc_report *r);
/* Records a result (copies it). Returns 0, or -1 when out of memory. */
int hc_report_add(struct hc_report *r, const struct hc_result *res);
/* A failure of the manifest itself (counts as one failed item). */
int hc_report_manifest_failure(struct hc_report *r, const char *fmt, ...) HC_PRINTF(2, 3);
/* Table, failure lines, final "N passed, N failed". Returns the exit status. */
int hc_report_print(const struct hc_report *r, FILE *out);

/* Failure lists (failures.c; testee-protocol.md § 6): ids, one a line, '#'
 * comments. */
struct hc_failure_list;
/* Returns 0, or -1 with a message (unreadable file, a bad line). */
int hc_failure_list_load(const char *path, struct hc_failure_list **out, char *msg, size_t cap);
void hc_failure_list_free(struct hc_failure_list *fl);
int hc_failure_list_has(const struct hc_failure_list *fl, const char *id);
size_t hc_failure_list_count(const struct hc_failure_list *fl);
const char *hc_failure_list_id(const struct hc_failure_list *fl, size_t i);
/* A problem of the list itself (an id that names no vector): one failed item. */
int hc_report_list_failure(struct hc_report *r, const char *fmt, ...) HC_PRINTF(2, 3);
struct hc_report_options {
    const struct hc_failure_list *failure_list; /* NULL: every failure counts */
    int verbose;                                /* print XFAIL lines */
};
/* hc_report_print with a failure list: exit 0 only when the failing vectors
 * are exactly the listed ones that ran. */
int hc_report_print_opts(const struct hc_report *r, FILE *out, const struct hc_report_options *o);
/* Writes the ids of the failed vectors, sorted, one a line. 0 or -1. */
int hc_report_write_failures(const struct hc_report *r, const char *path, const char *header);

/* ------------------------------------------------------------ schema.c --- */

/* Typed, path-reporting access to libcbor items. Every getter reports a
 * schema failure to the log ("schema: <path>: expected uint, got tstr") and
 * returns -1 on a type or range error, 0 on success. */
#define HC_KEY_REQUIRED 1u

struct hc_key {
    const char *name;
    unsigned flags; /* HC_KEY_REQUIRED */
};

const char *hc_cbor_type_name(const cbor_item_t *item);
int hc_schema_fail(struct hc_log *log, const char *path, const char *fmt, ...) HC_PRINTF(3, 4);
/* Checks `map` is a map with text keys, none repeated, each one of `keys`
 * and every required one present; found[i] receives the value of keys[i] or
 * NULL. Reports every problem; returns -1 if there was any. */
int hc_map_fields(struct hc_log *log, const char *path, const cbor_item_t *map,
                  const struct hc_key *keys, size_t nkeys, const cbor_item_t **found);
/* Checks that a map has text keys and no key twice (for maps whose keys are
 * data, like error_codes). */
int hc_map_check_keys(struct hc_log *log, const char *path, const cbor_item_t *map);
int hc_is_null(const cbor_item_t *item);
int hc_get_uint(struct hc_log *log, const char *path, const cbor_item_t *item, uint64_t *out);
int hc_get_int(struct hc_log *log, const char *path, const cbor_item_t *item, int64_t *out);
int hc_get_bool(struct hc_log *log, const char *path, const cbor_item_t *item, int *out);
/* A definite text string, borrowed (not NUL-terminated). */
int hc_get_tstr(struct hc_log *log, const char *path, const cbor_item_t *item, const char **s,
                size_t *len);
/* A text string copied into buf (NUL-terminated); too long or containing NUL
 * is a schema failure. */
int hc_get_name(struct hc_log *log, const char *path, const cbor_item_t *item, char *buf,
                size_t cap);
/* A definite byte string, borrowed. */
int hc_get_bstr(struct hc_log *log, const char *path, const cbor_item_t *item,
                const uint8_t **p, size_t *len);
/* An array of at most `max` items; *items borrowed. */
int hc_get_array(struct hc_log *log, const char *path, const cbor_item_t *item, size_t max,
                 cbor_item_t ***items, size_t *n);
/* {"f64": uint} / {"f32": uint} bit patterns. */
int hc_get_f64bits(struct hc_log *log, const char *path, const cbor_item_t *item, uint64_t *out);
int hc_get_f32bits(struct hc_log *log, const char *path, const cbor_item_t *item, uint32_t *out);
/* Compares a text item with a C string (0 = equal). */
int hc_tstr_equals(const cbor_item_t *item, const char *s);
/* snprintf helper for paths. */
const char *hc_pathf(char buf[HC_PATH_MAX], const char *fmt, ...) HC_PRINTF(2, 3);

/* ------------------------------------------------------------ expect.c --- */

struct hc_opt_u64 {
    int null;
    uint64_t v;
};

struct hc_bytes {
    const uint8_t *p; /* borrowed from the manifest tree */
    size_t len;
};

/* Quantization schemes the spec names (quantization.md § Scheme tags); the
 * harness knows them to decide which keys a qmap must carry. */
enum hc_scheme { HC_SCHEME_PER_TENSOR = 1, HC_SCHEME_PER_CHANNEL, HC_SCHEME_BLOCK, HC_SCHEME_NF4,
                 HC_SCHEME_MX, HC_SCHEME_NVFP4 };

struct hc_qmap {
    char scheme[HC_NAME_MAX];
    enum hc_scheme kind;
    uint64_t axis;
    uint64_t scale_buffer_index;
    struct hc_opt_u64 zero_point_buffer_index;
    char scale_dtype[HC_NAME_MAX];
    int zero_point_dtype_null;
    char zero_point_dtype[HC_NAME_MAX];
    uint64_t block_size;
    uint64_t scale_bits;       /* per_tensor: f64 */
    int64_t zero_point;        /* per_tensor */
    int double_quant;          /* nf4 */
    uint64_t absmax_buffer_index;
    struct hc_opt_u64 nested_absmax_buffer_index;
    struct hc_opt_u64 quant_map_buffer_index;
    uint64_t nested_block_size;
    uint32_t nested_offset_bits; /* f32 */
    uint32_t tensor_scale_bits;  /* f32 */
};

/* Layout parameter keys (a bit each); which ones a layout carries is fixed by
 * its tag (memory-layout.md § Layout tags). */
enum hc_lkey {
    HC_LK_STRIDES = 1u << 0,
    HC_LK_TILE_SHAPE = 1u << 1,
    HC_LK_OUTER_STRIDES = 1u << 2,
    HC_LK_INNER_STRIDES = 1u << 3,
    HC_LK_NNZ = 1u << 4,
    HC_LK_FIBER_COUNTS = 1u << 5,
    HC_LK_MODE_ORDER = 1u << 6,
    HC_LK_PAGED = 1u << 7, /* page_size, num_pages, num_seqs, num_blocks */
    HC_LK_COMPOSITE = 1u << 8, /* rule, combine, member_count */
    HC_LK_EXTENSION = 1u << 9, /* extension_layout_id, extension_data */
    HC_LK_PARAMS = 1u << 10
};

/* Arrays sized by rank hold at most HURRAY_MAX_RANK entries. */
struct hc_ilist {
    size_t n;
    int64_t v[HURRAY_MAX_RANK];
};
struct hc_ulist {
    size_t n;
    uint64_t v[HURRAY_MAX_RANK];
};

struct hc_layout_exp {
    uint64_t tag;
    char name[HC_NAME_MAX];
    unsigned keys; /* hc_lkey bits this layout carries */
    struct hc_ilist strides, outer_strides, inner_strides;
    struct hc_ulist tile_shape, fiber_counts, mode_order;
    uint64_t nnz, page_size, num_pages, num_seqs, num_blocks;
    char rule[HC_NAME_MAX];
    int combine_null;
    char combine[HC_NAME_MAX];
    uint64_t member_count;
    uint64_t extension_layout_id;
    struct hc_bytes extension_data;
    struct hc_bytes params;
};

struct hc_buffer_exp {
    uint64_t size;
    uint64_t alignment;
    char sync_mode[HC_NAME_MAX];
};

struct hc_stats_exp {
    int has_min_max, has_nan_count;
    int min_null, max_null, nan_count_null;
    uint64_t min_bits, max_bits, nan_count;
};

struct hc_shard_exp {
    uint64_t shard_index, shard_count;
    struct hc_ulist global_shape, global_offset;
};

struct hc_section_exp {
    uint64_t type, flags;
    struct hc_bytes data;
};

struct hc_desc_exp {
    uint64_t encoded_len;
    uint64_t version_major, version_minor;
    char dtype[HC_NAME_MAX];
    uint64_t dtype_tag;
    char device[HC_NAME_MAX];
    uint64_t device_tag;
    char memory_class[HC_NAME_MAX];
    uint64_t memory_class_tag;
    size_t rank;
    struct hc_opt_u64 shape[HURRAY_MAX_RANK];
    uint64_t byte_offset;
    size_t buffer_count;
    struct hc_buffer_exp buffers[HURRAY_MAX_BUFFERS];
    struct hc_layout_exp layout;
    int has_quant;
    struct hc_qmap quant;
    int has_stats;
    struct hc_stats_exp stats;
    int has_shard;
    struct hc_shard_exp shard;
    int role_null;
    char role[HC_NAME_MAX];
    size_t section_count;
    struct hc_section_exp sections[HURRAY_MAX_SECTIONS];
};

#define HC_MAX_OUTCOMES 32

/* A text string borrowed from the manifest tree (not NUL-terminated). */
struct hc_text {
    const char *s;
    size_t len;
};

/* ---- kind kv (schema 2) ---- */
struct hc_kv_exp {
    const cbor_item_t *entries; /* the oracle's kv map, schema-checked, borrowed */
    uint64_t encoded_len;
};

/* ---- kind file (schema 2) ---- */
struct hc_file_buffer_exp {
    uint64_t offset; /* relative to data_offset */
    uint64_t size;
    const uint8_t *sha256; /* 32 bytes, borrowed */
};

struct hc_file_entry_exp {
    struct hc_text name;
    int kind;                 /* HURRAY_FILE_KIND_TENSOR / _COMPOSITE */
    int member_of_null;
    struct hc_text member_of; /* the head's name when a member */
    struct hc_desc_exp *desc; /* heap */
    size_t buffer_count;
    struct hc_file_buffer_exp *buffers; /* heap */
};

struct hc_file_exp {
    uint64_t version_major, version_minor; /* the header's, as read */
    uint64_t data_offset, data_length;
    size_t entry_count;
    struct hc_file_entry_exp *entries; /* heap */
    size_t top_count;
    struct hc_text *top; /* heap */
    const cbor_item_t *kv; /* kv map, or NULL for null */
};

/* ---- kind stream (schema 2) ---- */
struct hc_stream_buffer_exp {
    uint64_t size;
    const uint8_t *sha256; /* borrowed */
};

struct hc_item_exp {
    int composite;
    struct hc_desc_exp *desc; /* heap */
    size_t buffer_count;                  /* tensor */
    struct hc_stream_buffer_exp *buffers; /* heap */
    size_t member_count;                  /* composite */
    struct hc_item_exp *members;          /* heap, member_count */
    /* schema 5, top-level items (stream.md HR-STREAM-18): the name (borrowed, not
     * NUL-terminated; NULL when the item has none) and the metadata map (borrowed,
     * schema-checked; NULL when none) */
    const char *name;
    size_t name_len;
    const cbor_item_t *metadata;
};

struct hc_stream_exp {
    size_t item_count;
    struct hc_item_exp *items; /* heap */
    size_t frame_count;      /* item_count + 1 */
    uint64_t *frame_offsets; /* heap: each item's first byte, then where the items end */
    int end;                 /* schema 4 "end": a hurray_stream_end (earlier: EOF) */
};

/* One manifest vector, parsed. Strings are copies; byte strings borrowed. */
struct hc_vector {
    char id[HC_ID_MAX];
    uint64_t tcid;
    enum hc_kind kind;
    char path[1024];
    uint64_t size;
    const uint8_t *sha256; /* 32 bytes, borrowed */
    enum hc_expect expect;
    int error;             /* status value (invalid) */
    char error_name[HC_NAME_MAX];
    int roundtrip;
    struct hurray_limits limits; /* defaults overridden by "options" */
    size_t n_outcomes;
    int outcomes[HC_MAX_OUTCOMES]; /* 0 = "ok" */
    int cross_machine;             /* options.cross_machine (stream) */
    int require_end_frame;         /* options.require_end_frame (stream, schema 4) */
    unsigned schema_version;       /* the manifest's */
    int has_error_after_items;
    uint64_t error_after_items;    /* invalid stream: items yielded before the error */
    struct hc_desc_exp *desc;      /* kind descriptor, expect valid (heap) */
    struct hc_qmap *qmap;          /* kind quantization, expect valid (heap) */
    struct hc_kv_exp *kv;          /* kind kv, expect valid (heap) */
    struct hc_file_exp *file;      /* kind file, expect valid (heap) */
    struct hc_stream_exp *stream;  /* kind stream, expect valid (heap) */
    const cbor_item_t *decoded_item; /* "decoded" as in the manifest (borrowed), or NULL */
};

/* Parses vector map `item` of a manifest of `schema_version` into `v` (zeroed
 * first). Returns 0, or -1 after logging schema failures. On any return,
 * free with hc_vector_free. */
int hc_vector_parse(struct hc_log *log, const cbor_item_t *item, unsigned schema_version,
                    struct hc_vector *v);
/* A descriptor map (schema 1 "decoded" of a descriptor) at key path `base`. */
int hc_desc_parse(struct hc_log *log, const char *base, const cbor_item_t *item,
                  struct hc_desc_exp *d);
void hc_vector_free(struct hc_vector *v);
/* Parses a qmap (shared by descriptor "quantization" and quantization vectors). */
int hc_qmap_parse(struct hc_log *log, const char *path, const cbor_item_t *item,
                  struct hc_qmap *q);
/* The limit names of default_limits / options: hc_limits.h. */
/* Status name -> value through the library table; -1 if unknown. */
int hc_status_value(const char *name, size_t len);

/* ----------------------------------------------------------- manifest.c --- */

struct hc_manifest {
    unsigned schema_version;
    uint8_t *bytes;      /* the file */
    size_t size;
    cbor_item_t *root;   /* owns the tree */
    cbor_item_t **vectors;
    size_t nvectors;
};

/* Reads (bounded by HC_MANIFEST_MAX_BYTES) and decodes DIR/manifest.cbor,
 * checks the top level, reporting manifest failures to the report.
 * Returns 0 if the vectors can be run, -1 when the manifest is unusable (a
 * message has been printed to `err`). */
int hc_manifest_load(struct hc_manifest *m, const char *dir, struct hc_report *report, FILE *err);
void hc_manifest_free(struct hc_manifest *m);
/* Reads a whole file, at most `max` bytes; *len receives its size. 0 on
 * success; -1 with errno-style message in msg. */
int hc_read_file(const char *path, size_t max, uint8_t **data, size_t *len, char *msg,
                 size_t msgcap);

/* ------------------------------------------------------------ compare.c --- */

/* Compares a decoded descriptor (rank etc. from `d`) with the oracle. */
void hc_compare_descriptor(struct hc_log *log, const struct hc_desc_exp *want,
                           const struct hurray_descriptor *d, size_t consumed);
/* The same at key path `base` (a descriptor inside a file entry or stream item). */
void hc_compare_descriptor_at(struct hc_log *log, const char *base, const struct hc_desc_exp *want,
                              const struct hurray_descriptor *d, size_t consumed);
void hc_compare_qmap(struct hc_log *log, const char *path, const struct hc_qmap *want,
                     const struct hurray_quant *q);
/* Names as the library spells them: dtype name or "extension" for the
 * private range; NULL when the library has no name. */
const char *hc_dtype_name(uint8_t tag);

/* -------------------------------------------------------------- check.c --- */

struct hc_options {
    unsigned schema_version; /* the manifest's */
    const char *dir;
    const char *only_id;  /* --id */
    int only_kind;        /* -1: all */
    int verbose;
    int isolate;          /* --isolate: fork per vector */
    struct hc_testee *testee; /* --testee: run the vectors through it (protocol.c) */
};

/* Runs one vector (the item at `index` of the manifest's list). */
void hc_check_vector(const struct hc_options *opt, const cbor_item_t *item, size_t index,
                     struct hc_result *res);

/* Shared by the kinds (check.c). A counting allocator: live blocks and bytes,
 * and frees whose size differs from the allocation's. */
struct hc_alloc_stats {
    size_t live_blocks;
    size_t live_bytes;
    unsigned size_mismatches;
    unsigned refused; /* requests above HC_ALLOC_MAX */
};
/* The largest single allocation the counting allocator grants (1 GiB). */
#define HC_ALLOC_MAX ((size_t)1 << 30)
void hc_counting_allocator(struct hurray_allocator *a, struct hc_alloc_stats *st);
/* Fails the vector if anything is still allocated or a free had a wrong size. */
void hc_check_allocations(struct hc_log *log, struct hc_alloc_stats *st, const char *when);
/* "LENGTH (field "x": message)" */
const char *hc_describe(char *buf, size_t cap, int code, const struct hurray_error *err);
const char *hc_status_str(int code); /* "ok" for 0 */
/* invalid: exactly `error`; implementation-defined: one of i_outcomes (0 = ok). */
void hc_check_failure_status(struct hc_log *log, const struct hc_vector *v, int st,
                             const struct hurray_error *err, struct hc_result *res);

/* Which prefixes a sweep tries: every length 0..size-1 when size <= full_max,
 * else a sample (documented in harness/README.md): lengths 0..255, each mark
 * and its neighbours, evenly spaced lengths and the last 64. Returns a sorted,
 * deduplicated heap array (free it) of *n lengths, all < size; NULL on OOM. */
size_t *hc_sweep_plan(size_t size, size_t full_max, const uint64_t *marks, size_t nmarks,
                      size_t *n, int *sampled);
/* The prefix lengths each kind's sweep tries (the same for the built-in run
 * and a testee): kv.c, file.c (marks from the header and the oracle's
 * buffers), stream.c (marks from the oracle's frames). NULL on OOM. */
size_t *hc_kv_sweep_plan(const struct hc_vector *v, size_t *n, int *sampled);
size_t *hc_file_sweep_plan(const struct hc_vector *v, const uint8_t *data, size_t *n,
                           int *sampled);
size_t *hc_stream_sweep_plan(const struct hc_vector *v, size_t *n, int *sampled);
/* Valid stream vector v: where the stream ends (past its end frame, or at
 * its size), and the end state prefix p of it must give -- HURRAY_STREAM_*:
 * END_FRAME from the end frame's end on, EOF at a cut point of
 * frame_offsets (not with require_end_frame), else NOT_ENDED (TRUNCATED).
 * *cut (start at 0, p increasing) becomes the items the prefix yields. */
uint64_t hc_stream_stop(const struct hc_vector *v);
int hc_stream_prefix_end(const struct hc_vector *v, size_t p, size_t *cut);
/* "end_frame", "eof", or "(not ended)". */
const char *hc_stream_end_name(int end);
/* What re-encoding valid file vector v must give: the file, or where
 * "roundtrip" is false the file with version_minor (bytes 10-11) zero.
 * A heap copy of v->size bytes; NULL on OOM. */
uint8_t *hc_file_expected_encoding(const struct hc_vector *v, const uint8_t *data);

/* The schema-2 kinds (kv.c, file.c, stream.c): parse "decoded", run the vector. */
int hc_kv_map_parse(struct hc_log *log, const char *path, const cbor_item_t *item);
void hc_kv_compare(struct hc_log *log, const char *path, const cbor_item_t *want,
                   const struct hurray_kv *got);
int hc_kv_decoded_parse(struct hc_log *log, const cbor_item_t *item, struct hc_vector *v);
int hc_file_decoded_parse(struct hc_log *log, const cbor_item_t *item, struct hc_vector *v);
int hc_stream_decoded_parse(struct hc_log *log, const cbor_item_t *item, struct hc_vector *v);
void hc_file_exp_free(struct hc_file_exp *f);
void hc_stream_exp_free(struct hc_stream_exp *s);
void hc_check_kv(struct hc_log *log, const struct hc_vector *v, const uint8_t *data,
                 struct hc_result *res);
void hc_check_file(struct hc_log *log, const struct hc_vector *v, const char *dir,
                   const uint8_t *data, struct hc_result *res);
void hc_check_stream(struct hc_log *log, const struct hc_vector *v, const uint8_t *data,
                     struct hc_result *res);

/* ------------------------------------------ testee.c, protocol.c -------- */

#define HC_PROTOCOL_VERSION 2u

struct hc_testee_stats {
    unsigned starts, failed_starts;      /* processes started; those whose hello failed */
    unsigned timeouts, crashes, garbage; /* transport failures, each failed a vector */
};

struct hc_testee;
struct hc_buf;
/* The testee `cmd` (run by /bin/sh), with a per-request timeout; after
 * `give_up_after` transport failures in a row no request is sent. */
struct hc_testee *hc_testee_new(const char *cmd, unsigned timeout_ms, unsigned give_up_after);
/* The hello request sent after every start. 0 or -1 (OOM). */
int hc_testee_set_hello(struct hc_testee *t, const uint8_t *req, size_t len);
/* Ends the testee (end of its input, then a kill) and frees. */
void hc_testee_free(struct hc_testee *t);
/* One request -> one response map (*resp: free with cbor_decref). Starts
 * the testee first when it is not running. 0, or -1 with why: a timeout,
 * crash, garbage or "not run" (the testee is then killed or given up).
 * `what` names the request in messages. */
int hc_testee_call(struct hc_testee *t, const uint8_t *req, size_t len, const char *what,
                   cbor_item_t **resp, char *why, size_t cap);
const struct hc_testee_stats *hc_testee_stats(const struct hc_testee *t);
const char *hc_testee_name(const struct hc_testee *t);
const char *hc_testee_version(const struct hc_testee *t);
const char *hc_testee_command(const struct hc_testee *t);
/* The hello request for a corpus (its spec_version and corpus_version). */
int hc_protocol_hello(const cbor_item_t *manifest_root, struct hc_buf *b);
/* One parsed vector through the testee (decode, judgement, sweep). */
void hc_protocol_run(struct hc_log *log, const struct hc_options *opt, const struct hc_vector *v,
                     const uint8_t *data, struct hc_result *res);
/* want (the manifest's value) against got (a testee's), every difference
 * logged with its key path under `path`. */
void hc_cbor_compare(struct hc_log *log, const char *path, const cbor_item_t *want,
                     const cbor_item_t *got);

#endif
