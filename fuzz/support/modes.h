/* Which paths a fuzz target runs on an input (fuzz/README.md): while fuzzing, the costly ones
 * on a deterministic share of the inputs; on a replay, every one. */
#ifndef HURRAY_FUZZ_MODES_H
#define HURRAY_FUZZ_MODES_H

/* 1 when HURRAY_FUZZ_ALL_MODES is set and not "0" (the regression driver, the campaign's
 * sanitizer replay, fuzz-promote and fuzz-smoke set it): every input takes every path. Read
 * once per process. */
int hurray_fuzz_all_modes(void);

#endif
