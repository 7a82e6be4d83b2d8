# fuzz/fuzz.mk -- the fuzzing campaign machinery, included at the end of the Makefile (which
# defines FUZZ_NAMES, FUZZ_SUPPORT, FUZZ_HDR, FUZZ_WARN, FUZZ_DICT, FUZZ_SEEDS, FUZZ_SECONDS,
# FUZZ_MALLOC_MB, FUZZ_RSS_MB and the libFuzzer build $(BUILD)/fuzz/bin/<target>).
# fuzz/README.md describes every target below.
#
#   make fuzz-afl TARGET=fuzz_x [FUZZ_SECONDS=n]   AFL++ on one target (persistent mode,
#                                                  shared-memory test cases, CMPLOG)
#   make fuzz-campaign [FUZZ_SECONDS=n] [TARGETS=...]  libFuzzer then AFL++ per target, the
#                                                  corpora merged into fuzz/corpus/<target>/,
#                                                  the executions added to fuzz/campaign.json
#   make fuzz-promote ARTIFACT=path [TARGET=fuzz_x] a finding: minimised, classified by the
#                                                  generator's oracle, added to the vectors
#   make fuzz-coverage [TARGETS=...]                each target's line coverage of reference/src
#                                                  (its seeds and corpus, the coverage build)
#   make fuzz-msan-replay                          every corpus through the MSan replay build
#   make fuzz-python [FUZZ_SECONDS=n]              Atheris over the Python binding's readers

.PHONY: fuzz-afl fuzz-afl-build fuzz-fast-build fuzz-campaign fuzz-coverage fuzz-promote fuzz-msan-replay fuzz-python

# ------------------------------------------------------------------- AFL++ ---
# Two builds of every target with afl-clang-fast (Debian afl++; afl-clang-lto needs lld, which
# is not installed): $(BUILD)/afl (ASan+UBSan, the one afl-fuzz runs) and $(BUILD)/afl-cmplog
# (AFL_LLVM_CMPLOG, no sanitizers: afl-fuzz -c runs it to solve magic numbers and tags by
# comparing operands, e.g. "HRYD", "HRRYFILE", the frame kinds). Each links the target with
# fuzz/afl/afl_driver.c, a persistent-mode main() reading the test case from shared memory.
AFL_CC     ?= afl-clang-fast
AFL_FUZZ   ?= afl-fuzz
AFL_LIB_SRC := $(sort $(wildcard reference/src/*.c))
AFL_LIB_HDR := $(wildcard reference/include/hurray/*.h) $(wildcard reference/src/*.h)
AFL_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
AFL_CFLAGS := $(CSTD) $(WARN) -O2 -g
AFL_ENV    := AFL_QUIET=1
# -c (CMPLOG) on every target by default; AFL_CMPLOG= turns it off.
AFL_CMPLOG ?= 1

define afl_flavour # $(1)=build dir, $(2)=extra flags, $(3)=environment of the compiler
$(1)/obj/%.o: reference/src/%.c $(AFL_LIB_HDR)
	@mkdir -p $$(@D)
	$(AFL_ENV) $(3) $$(AFL_CC) $$(AFL_CFLAGS) $(2) -Ireference/include -Ireference/src \
	  -DHURRAY_BUILDING -c $$< -o $$@
$(1)/libhurray.a: $(patsubst reference/src/%.c,$(1)/obj/%.o,$(AFL_LIB_SRC))
	rm -f $$@ && ar rcs $$@ $$^
$(1)/driver.o: fuzz/afl/afl_driver.c
	@mkdir -p $$(@D)
	$(AFL_ENV) $(3) $$(AFL_CC) $$(CSTD) -O2 -g $(2) -c $$< -o $$@
$(1)/bin/%: fuzz/targets/%.c $(1)/driver.o $$(FUZZ_SUPPORT) $$(FUZZ_HDR) $(1)/libhurray.a $(AFL_LIB_HDR)
	@mkdir -p $$(@D)
	$(AFL_ENV) $(3) $$(AFL_CC) $$(CSTD) $$(FUZZ_WARN) -O2 -g $(2) -Ireference/include -Ifuzz \
	  -Ifuzz/support $$< $$(FUZZ_SUPPORT) $(1)/driver.o $(1)/libhurray.a -lm -o $$@
endef
$(eval $(call afl_flavour,$(BUILD)/afl,$(AFL_SAN),))
$(eval $(call afl_flavour,$(BUILD)/afl-cmplog,,AFL_LLVM_CMPLOG=1))
# The campaign's AFL++ build: no sanitizers (about 10x the executions of $(BUILD)/afl); what it
# finds is replayed under ASan+UBSan (see FUZZ_FAST below). AFL_FLAVOUR=afl-fast selects it.
$(eval $(call afl_flavour,$(BUILD)/afl-fast,,))
AFL_FLAVOUR ?= afl

AFL_BINS := $(patsubst %,$(BUILD)/afl/bin/%,$(FUZZ_NAMES)) \
            $(patsubst %,$(BUILD)/afl-cmplog/bin/%,$(FUZZ_NAMES))
fuzz-afl-build: $(AFL_BINS)

# ------------------------------------------------------- fast libFuzzer build ---
# $(BUILD)/fuzz-fast: every target under libFuzzer with coverage instrumentation and nothing
# else, -O2 (30-60x the executions of the ASan+UBSan build $(BUILD)/fuzz on the same core).
# The campaign fuzzes with it and then replays everything it kept through the ASan+UBSan build
# (fuzz/campaign.py), the usual split between a fast engine and a sanitizing replay. The
# targets' own checks (the bounded allocator's ceiling, the invariants they assert with
# __builtin_trap) hold in both builds.
$(eval $(call lib_rules,$(BUILD)/fuzz-fast,-fsanitize=fuzzer-no-link,-fsanitize=fuzzer-no-link,$(FUZZ_CC),-Db_lundef=false))
FUZZ_FAST_SUPPORT := $(patsubst fuzz/support/%.c,$(BUILD)/fuzz-fast/support/%.o,$(FUZZ_SUPPORT))
FUZZ_FAST_BINS    := $(patsubst %,$(BUILD)/fuzz-fast/bin/%,$(FUZZ_NAMES))
.PRECIOUS: $(BUILD)/fuzz-fast/support/%.o
$(BUILD)/fuzz-fast/support/%.o: fuzz/support/%.c $(FUZZ_HDR) $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CSTD) $(FUZZ_WARN) -O2 -g -Ireference/include -Ifuzz -Ifuzz/support -c $< -o $@
$(BUILD)/fuzz-fast/bin/%: fuzz/targets/%.c $(FUZZ_FAST_SUPPORT) $(FUZZ_HDR) \
                          $(BUILD)/fuzz-fast/libhurray.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CSTD) $(FUZZ_WARN) -O2 -g -fsanitize=fuzzer -Ireference/include -Ifuzz \
	  -Ifuzz/support $< $(FUZZ_FAST_SUPPORT) $(BUILD)/fuzz-fast/libhurray.a -lm -o $@
fuzz-fast-build: $(FUZZ_FAST_BINS)

# AFL++ wants ASan to abort (not exit) and not to symbolize; the allocation and RSS ceilings
# are libFuzzer's -malloc_limit_mb/-rss_limit_mb of fuzz-smoke, for the same reason
# (amplification is a finding). -m none: ASan reserves terabytes of address space.
AFL_RUN_ENV := AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
  AFL_NO_AFFINITY=1 AFL_AUTORESUME=1 AFL_QUIET=1 AFL_SKIP_CRASHES=1 \
  ASAN_OPTIONS=abort_on_error=1:symbolize=0:detect_leaks=1:allocator_may_return_null=0:max_allocation_size_mb=$(FUZZ_MALLOC_MB):hard_rss_limit_mb=$(FUZZ_RSS_MB) \
  UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:symbolize=0
AFL_OUT ?= $(BUILD)/afl/out

# The vector areas that feed each target (the others are refused at the first check).
FUZZ_AREAS_fuzz_quant      := quant
FUZZ_AREAS_fuzz_kv         := kv
FUZZ_AREAS_fuzz_file       := file comp
FUZZ_AREAS_fuzz_stream     := stream comp
FUZZ_AREAS_fuzz_stream_fd  := stream comp
FUZZ_AREAS_fuzz_descriptor := dtype device layout quant sect desc
FUZZ_AREAS_fuzz_alloc_fail := none
fuzz_area_dirs = $(if $(FUZZ_AREAS_$(1)),$(wildcard $(foreach a,$(FUZZ_AREAS_$(1)),$(foreach c,valid invalid,$(VECTORS)/$(c)/$(a)))),$(FUZZ_SEEDS))

# The seeds of one target for AFL++ (one flat directory, files up to 64 KiB): its committed
# corpus fuzz/corpus/<target>/ and fuzz/regress/<target>/, else its areas of the vectors.
define afl_seed_dir # $(1)=target, $(2)=directory to fill
rm -rf $(2) && mkdir -p $(2) && \
  src="$$(ls -d fuzz/corpus/$(1) fuzz/regress/$(1) 2>/dev/null)"; \
  [ -n "$$src" ] && [ -n "$$(find $$src -type f | head -n 1)" ] || src="$(call fuzz_area_dirs,$(1))"; \
  find $$src -type f -size -65k | while read -r f; do cp "$$f" $(2)/$$(sha1sum "$$f" | cut -c1-16); done
endef

# afl-fuzz 4.04c can leave a CMPLOG fork-server child stopped (state T, parent 1) when -V ends;
# it still holds the output directory's lock, so the next resume would fail with "is in use".
# Every process with a file open in this target's output directory was started by this run:
# they are killed by pid once afl-fuzz has returned.
define afl_reap # $(1)=output directory of the target
out=$$(realpath $(1)); for p in /proc/[0-9]*; do \
  ls -l $$p/fd 2>/dev/null | grep -q -- "-> $$out/" && kill -KILL $${p#/proc/} 2>/dev/null; \
done; true
endef

fuzz-afl: $(BUILD)/$(AFL_FLAVOUR)/bin/$(TARGET) $(if $(AFL_CMPLOG),$(BUILD)/afl-cmplog/bin/$(TARGET))
	@[ -n "$(TARGET)" ] || { echo "fuzz-afl: TARGET=<one of $(FUZZ_NAMES)>" >&2; exit 1; }
	@$(call afl_seed_dir,$(TARGET),$(BUILD)/afl/in/$(TARGET))
	@mkdir -p $(AFL_OUT)/$(TARGET); echo "== afl-fuzz $(TARGET) ($(FUZZ_SECONDS) s)"; \
	$(AFL_RUN_ENV) $(AFL_FUZZ) -V $(FUZZ_SECONDS) -m none -t 10000 \
	  -i $(BUILD)/afl/in/$(TARGET) -o $(AFL_OUT)/$(TARGET) $(if $(FUZZ_DICT),-x $(FUZZ_DICT)) \
	  $(if $(AFL_CMPLOG),-c $(BUILD)/afl-cmplog/bin/$(TARGET)) \
	  -- $(BUILD)/$(AFL_FLAVOUR)/bin/$(TARGET) >$(AFL_OUT)/$(TARGET).log 2>&1; rc=$$?; \
	$(call afl_reap,$(AFL_OUT)/$(TARGET)/default); \
	[ $$rc -eq 0 ] || { tail -n 40 $(AFL_OUT)/$(TARGET).log; exit 1; }; \
	grep -E '^(execs_done|execs_per_sec|corpus_count|saved_crashes|saved_hangs) ' \
	  $(AFL_OUT)/$(TARGET)/default/fuzzer_stats

# ---------------------------------------------------------------- campaign ---
# fuzz/campaign.py: per target FUZZ_SECONDS in all, AFL_SHARE of it to AFL++ (0.5: half each;
# the fast builds of fuzz-fast-build and afl-fast, with nice), then an ASan+UBSan replay; the
# working corpora kept under $(BUILD) so that the next run resumes, the result merged
# (libFuzzer -merge=1) into fuzz/corpus/<target>/ and the executions added to
# fuzz/campaign.json, whose table fuzz/README.md shows. TARGETS= restricts it to some targets.
TARGETS ?=
AFL_SHARE ?= 0.5
fuzz-campaign: $(FUZZ_BINS) $(FUZZ_FAST_BINS) $(patsubst %,$(BUILD)/afl-fast/bin/%,$(FUZZ_NAMES)) \
               $(patsubst %,$(BUILD)/afl-cmplog/bin/%,$(FUZZ_NAMES))
	$(PYTHON) fuzz/campaign.py --seconds $(FUZZ_SECONDS) --build $(BUILD) --afl-share $(AFL_SHARE) \
	  --malloc-mb $(FUZZ_MALLOC_MB) --rss-mb $(FUZZ_RSS_MB) $(if $(TARGETS),--targets $(TARGETS))

# Each target's own line coverage of reference/src: its seeds and committed corpus replayed
# through the coverage build (the Makefile's COV_DIR/replay), counted against all of
# reference/src (every coverage binary's mapping), into campaign.json and the table.
fuzz-coverage: $(COV_BINS)
	$(PYTHON) fuzz/campaign.py --coverage --build $(BUILD) --llvm-cov $(LLVM_COV) \
	  --llvm-profdata $(LLVM_PROFDATA) --sources $(LIB_SRC) --objects $(COV_BINS) \
	  $(if $(TARGETS),--targets $(TARGETS))

print-fuzz-seeds-%:
	@echo $(call fuzz_area_dirs,$*)

# ----------------------------------------------------------------- promote ---
# A finding into the golden corpus (fuzz/promote.py): minimised if it still fails its target,
# classified by the generator's own oracle (vectors/gen/promoted.py reads only the bytes),
# stored under vectors/gen/promoted/, the corpus regenerated with a new test-case id, and the
# raw input kept as fuzz/regress/<target>/<id>. TARGET= when the path does not name it;
# PROMOTE_ARGS= passes more (--vectors DIR --regress DIR: another corpus, as the test does).
fuzz-promote: $(FUZZ_BINS)
	@[ -n "$(ARTIFACT)" ] || { echo "fuzz-promote: ARTIFACT=<path> [TARGET=fuzz_x]" >&2; exit 1; }
	$(VENV)/bin/python fuzz/promote.py --artifact $(ARTIFACT) --build $(BUILD) \
	  $(if $(TARGET),--target $(TARGET)) $(PROMOTE_ARGS)

# ------------------------------------------------------------- MemorySanitizer ---
# The library, every target and the replay driver under clang's MSan (uninitialised reads that
# ASan does not see; -fsanitize-memory-track-origins=2 names where the bytes came from). The
# library and the targets use libc alone, which MSan intercepts, so no instrumented system
# library is needed. Replays the vectors (all three classes), fuzz/regress/<target>/ and
# fuzz/corpus/<target>/ through every target; part of make test.
MSAN_CC    ?= $(FUZZ_CC)
MSAN_FLAGS := -fsanitize=memory -fsanitize-memory-track-origins=2 -fno-omit-frame-pointer \
              -fno-sanitize-recover=all
MSAN_BINS  := $(patsubst %,$(BUILD)/msan/replay/%,$(FUZZ_NAMES))
MSAN_SEEDS := $(wildcard $(VECTORS)/valid $(VECTORS)/invalid $(VECTORS)/implementation-defined)

$(BUILD)/msan/obj/%.o: reference/src/%.c $(AFL_LIB_HDR)
	@mkdir -p $(@D)
	$(MSAN_CC) $(CSTD) $(WARN) -O1 -g $(MSAN_FLAGS) -Ireference/include -Ireference/src \
	  -DHURRAY_BUILDING -c $< -o $@
$(BUILD)/msan/libhurray.a: $(patsubst reference/src/%.c,$(BUILD)/msan/obj/%.o,$(AFL_LIB_SRC))
	rm -f $@ && ar rcs $@ $^
$(BUILD)/msan/replay/%: fuzz/targets/%.c fuzz/regression_driver.c $(FUZZ_SUPPORT) $(FUZZ_HDR) \
                        $(BUILD)/msan/libhurray.a $(AFL_LIB_HDR)
	@mkdir -p $(@D)
	$(MSAN_CC) $(CSTD) $(FUZZ_WARN) -O1 -g $(MSAN_FLAGS) -Ireference/include -Ifuzz -Ifuzz/support \
	  $< fuzz/regression_driver.c $(FUZZ_SUPPORT) $(BUILD)/msan/libhurray.a -lm -o $@

fuzz-msan-replay: $(MSAN_BINS)
	@set -e; for n in $(FUZZ_NAMES); do echo "== msan replay $$n"; \
	  MSAN_OPTIONS=halt_on_error=1 $(BUILD)/msan/replay/$$n $(MSAN_SEEDS) \
	    $$(ls -d fuzz/regress/$$n fuzz/corpus/$$n 2>/dev/null); \
	done; echo "fuzz-msan-replay: clean"

TEST_STEPS += $(if $(FUZZ_TARGETS),fuzz-msan-replay)

# ------------------------------------------------------------------ Atheris ---
# The Python binding's readers (Descriptor.decode, decode_quantization, StreamReader over bytes
# and over a pipe, load in copy and mmap mode, load_kv) under Atheris (PyPI atheris, pinned in
# ci/requirements-dev.txt), for FUZZ_SECONDS, seeded from the vectors and the campaign's
# corpora (fuzz/python/fuzz_python.py --make-seeds). New inputs go to $(BUILD)/fuzz/python/
# corpus (the first corpus directory), findings to $(BUILD)/fuzz/python/artifacts/. The
# memory limits are fuzz-smoke's plus the interpreter's own footprint.
# The binding runs as a build of its own, $(FUZZ_PY_SITE) (pip --target, never the venv's):
# the extension and the libhurray it embeds compiled with ASan+UBSan and clang's coverage
# callbacks (inline 8-bit counters, PC table, comparison tracing; not -fsanitize=fuzzer-no-link,
# whose stack-depth tracing needs __sancov_lowest_stack, which Atheris' libFuzzer lacks), and
# the interpreter started with the atheris wheel's asan_with_fuzzer.so preloaded (libFuzzer and
# the ASan runtime in one library, so the extension's callbacks resolve globally). libFuzzer so
# sees the C code's coverage, not only the Python side's, and ASan+UBSan check the binding's
# C as well as the library. LeakSanitizer is off: the interpreter keeps memory until exit.
FUZZ_PY_RSS_MB ?= 1024
FUZZ_PY_SITE   := $(BUILD)/fuzz/python/site
FUZZ_PY_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
                  -fsanitize-coverage=inline-8bit-counters,pc-table,trace-cmp
FUZZ_PY_SRC    := $(shell find python/src python/meson.build python/pyproject.toml reference/src \
                    reference/include reference/meson.build -type f 2>/dev/null)
$(FUZZ_PY_SITE)/.stamp: $(FUZZ_PY_SRC) | deps
	rm -rf $(FUZZ_PY_SITE) $(BUILD)/fuzz/python/pybuild
	CC="$(FUZZ_CC)" CFLAGS="$(FUZZ_PY_CFLAGS)" LDFLAGS="-fsanitize=address,undefined" \
	  $(VENV)/bin/python -m pip install -q --no-build-isolation --no-deps --target $(FUZZ_PY_SITE) \
	  -Cbuild-dir=$(abspath $(BUILD))/fuzz/python/pybuild -Csetup-args=-Db_lundef=false ./python
	touch $@
fuzz-python: $(FUZZ_PY_SITE)/.stamp
	@mkdir -p $(BUILD)/fuzz/python/corpus $(BUILD)/fuzz/python/artifacts
	@rm -rf $(BUILD)/fuzz/python/seeds
	$(VENV)/bin/python fuzz/python/fuzz_python.py --make-seeds $(BUILD)/fuzz/python/seeds $(VECTORS) fuzz/corpus
	HURRAY_FUZZ_SITE=$(abspath $(FUZZ_PY_SITE)) PYTHONPATH=$(abspath $(FUZZ_PY_SITE)) \
	  LD_PRELOAD="$$($(VENV)/bin/python -c 'import atheris; print(atheris.path())')/asan_with_fuzzer.so" \
	  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(VENV)/bin/python fuzz/python/fuzz_python.py -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	  -rss_limit_mb=$(FUZZ_PY_RSS_MB) -malloc_limit_mb=$(FUZZ_MALLOC_MB) -print_final_stats=1 \
	  -artifact_prefix=$(BUILD)/fuzz/python/artifacts/ $(if $(FUZZ_DICT),-dict=$(FUZZ_DICT)) \
	  $(BUILD)/fuzz/python/corpus $(BUILD)/fuzz/python/seeds

# fuzz/dict/hurray.dict is what fuzz/dict/make_dict.py writes from the generator's model.
.PHONY: fuzz-dict-check
fuzz-dict-check:
	$(PYTHON) fuzz/dict/make_dict.py --check && echo "fuzz-dict-check: hurray.dict is current"
TEST_STEPS += fuzz-dict-check
