/* Structure-aware mutation for the fuzz targets (fuzz/README.md § Structure-aware inputs):
 * a libFuzzer custom mutator that finds the descriptors in an input (their "HRYD" magic),
 * parses one by its wire layout (descriptor.md § Layout of the bytes) and changes one field to
 * a value the format gives meaning to -- a named tag of the library's own tables, a boundary
 * size, a rank or buffer table one longer or shorter -- then writes the record back with its
 * derived fields (encoded_len, rank, buffer_count) kept consistent; otherwise, or one time in
 * three, libFuzzer's own byte-level mutation (LLVMFuzzerMutate). */
#ifndef HURRAY_FUZZ_STRUCTURE_H
#define HURRAY_FUZZ_STRUCTURE_H

#include <stddef.h>
#include <stdint.h>

/* One mutation of data[0, size) in place (capacity max_size); returns the new size.
 * resize = 0 keeps every descriptor's length (inputs whose other parts point at byte
 * offsets: files, streams); resize = 1 may grow or shrink one (standalone descriptors). */
size_t hurray_fuzz_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed,
                          int resize);

/* The field-level part alone: 0 if the input holds no descriptor it can parse. */
size_t hurray_fuzz_mutate_descriptor(uint8_t *data, size_t size, size_t max_size,
                                     uint64_t *rng, int resize);

#endif
