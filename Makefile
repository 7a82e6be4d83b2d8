# hurray — the one entry point. See README.md; `make help` lists every target, one line each.
#   make lib           libhurray.a/.so in $(BUILD), from its one build description (reference/meson.build)
#   make conformance   build what is needed, run the corpus through C and Python, print the report
#   make test          everything CI checks (.ci/run calls exactly this): every step of TEST_STEPS
#   make install       libhurray, its headers and hurray.pc into PREFIX (DESTDIR honoured)
#
# Variables worth knowing: BUILD, CC, SAN_CC, FUZZ_CC, OPT, VECTORS, FUZZ_SECONDS, PREFIX,
# LIBDIR, DESTDIR, VENV, PYTHON, MESON, NINJA.
SHELL := /bin/bash
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:

BUILD   ?= build
CC      ?= cc
PYTHON  ?= python3
VENV    ?= .venv
VECTORS ?= vectors

# The sanitizer build prefers clang (its UBSan/ASan runtimes and diagnostics), else $(CC).
# Fuzzing needs clang (libFuzzer). Found at parse time: `make test` runs `deps` first and then
# a fresh make, so a clang that bootstrap just installed is seen.
CLANG   := $(shell command -v clang 2>/dev/null)
SAN_CC  ?= $(if $(CLANG),$(CLANG),$(CC))
FUZZ_CC ?= $(if $(CLANG),$(CLANG),clang)

# The warning list: reference/warnings.txt, the project's one list (meson reads it for
# libhurray and the Python extension), plus -Werror: every C file this Makefile compiles.
HASH    := \#
WARN    := $(strip $(shell sed -e 's/$(HASH).*//' reference/warnings.txt)) -Werror
CSTD    := -std=c11
OPT     ?= -O2 -g
# Independent test programs and fuzz targets run this many at a time (one per CPU).
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
# pytest-xdist's workers for the Python suites (test-python, harness-test, wheel-test): one per
# TEST_JOBS; none (a plain pytest run) when TEST_JOBS is 1.
PYTEST_JOBS = $(if $(filter-out 0 1,$(TEST_JOBS)),-n $(TEST_JOBS))

LIB_SRC  := $(sort $(wildcard reference/src/*.c))
LIB_HDR  := $(wildcard reference/include/hurray/*.h) $(wildcard reference/src/*.h)
TEST_SRC := $(sort $(wildcard reference/tests/*_test.c))
TEST_SUPPORT := $(filter-out $(TEST_SRC),$(wildcard reference/tests/*.c))

# ---------------------------------------------------------------- library ---
# libhurray has one build description, reference/meson.build (sources, warnings, visibility,
# HURRAY_BUILDING, the static and shared library, headers, hurray.pc). make configures it once
# per flavour, each flavour a meson build directory holding libhurray.a and libhurray.so:
#   $(BUILD)        plain: $(CC), $(OPT)
#   $(BUILD)/asan   ASan+UBSan: $(SAN_CC), $(OPT) $(SAN_FLAGS)
#   $(BUILD)/fuzz   libFuzzer-instrumented: $(FUZZ_CC), $(OPT) $(FUZZ_LIB_FLAGS)
# always -Werror (-Dwerror=true), asserts on, and lets ninja build it (ninja knows when to
# rebuild, and reconfigures itself after reference/meson.build changes; a new CC or OPT needs
# `make clean`). The unit tests (below), the harness, the fuzz targets and the benchmarks are
# linked against those archives, compiled with the same warning list.
MESON ?= $(VENV)/bin/meson
NINJA ?= $(VENV)/bin/ninja
MESON_SETUP := --buildtype=plain -Dwerror=true -Db_ndebug=false -Db_colorout=auto
# ninja in the build directory $(1), without its jobserver chatter (it takes its share of
# make's -j: the recipes that call it are marked +).
ninja_in = set -o pipefail; $(NINJA) -C $(1) 2>&1 \
  | { grep -v '^ninja: \(no work to do\|Jobserver mode detected\|warning: Jobserver\)' || true; }
# A reference/src/*.c that reference/meson.build does not name would silently not be built.
LIB_UNLISTED = $(shell for f in $(notdir $(LIB_SRC)); do \
                 grep -qF "'src/$$f'" reference/meson.build || echo "reference/src/$$f"; done)

# meson and ninja come pinned in the venv (ci/requirements-dev.txt).
$(VENV)/bin/meson $(VENV)/bin/ninja:
	bash ci/bootstrap

define lib_rules # $(1)=build dir, $(2)=extra cflags, $(3)=extra ldflags, $(4)=compiler, $(5)=meson options
$(1)/build.ninja: | $(filter $(VENV)/%,$(MESON) $(NINJA))
	$$(if $$(LIB_UNLISTED),$$(error reference/meson.build does not list $$(LIB_UNLISTED)))
	@mkdir -p $(1) && echo "meson setup $(1) ($(4), $$(strip $$(OPT) $(2)))"
	@CC="$(4)" CFLAGS="$$(OPT) $(2)" LDFLAGS="$(3)" $$(MESON) setup $(1) reference \
	  $$(if $$(wildcard $(1)/meson-private/coredata.dat),--reconfigure) $$(MESON_SETUP) \
	  --prefix=$$(abspath $$(PREFIX)) --libdir=$$(LIBDIR) $(5) >$(1)/meson-setup.log 2>&1 \
	  || { cat $(1)/meson-setup.log; exit 1; }
# ninja owns these (and meson the libhurray.so link, made at setup): make never deletes them.
.PRECIOUS: $(1)/libhurray.a $(1)/libhurray.so
$(1)/libhurray.a $(1)/libhurray.so &: $(1)/build.ninja FORCE
	$$(if $$(LIB_UNLISTED),$$(error reference/meson.build does not list $$(LIB_UNLISTED)))
	+@$$(call ninja_in,$(1))
$(1)/tests/%_test: reference/tests/%_test.c $(TEST_SUPPORT) $(1)/libhurray.a $(LIB_HDR) | $(1)/tests
	$(4) $$(CSTD) $$(WARN) $$(OPT) $(2) -Ireference/include -Ireference/src -Ireference/tests \
	  $$< $(TEST_SUPPORT) $(1)/libhurray.a -lcmocka -lm -pthread $(3) -o $$@
$(1)/tests:
	mkdir -p $$@
endef

.PHONY: FORCE
FORCE:

SAN_FLAGS      := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_LIB_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_FLAGS     := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The sanitizer flavours' libhurray.so leaves the sanitizer runtime to the program that loads
# it (b_lundef=false: no -Wl,--no-undefined).
$(eval $(call lib_rules,$(BUILD),,,$(CC)))
$(eval $(call lib_rules,$(BUILD)/asan,$(SAN_FLAGS),$(SAN_FLAGS),$(SAN_CC),-Db_lundef=false))
$(eval $(call lib_rules,$(BUILD)/fuzz,$(FUZZ_LIB_FLAGS),$(FUZZ_LIB_FLAGS),$(FUZZ_CC),-Db_lundef=false))

TESTS      := $(patsubst reference/tests/%_test.c,$(BUILD)/tests/%_test,$(TEST_SRC))
ASAN_TESTS := $(patsubst reference/tests/%_test.c,$(BUILD)/asan/tests/%_test,$(TEST_SRC))
ASAN_ENV   := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1

# ---------------------------------------------------------------- harness ---
# The golden-vector runner: harness/src/*.c (+ its own headers there), linked against the
# static library and libcbor (manifests). Built plain and with sanitizers.
HARNESS_SRC := $(sort $(wildcard harness/src/*.c))
HARNESS_HDR := $(wildcard harness/src/*.h)
HARNESS_CPPFLAGS ?= -Ireference/include -Iharness/src
HARNESS_ARGS ?= --vectors $(VECTORS)
CBOR_CFLAGS := $(shell pkg-config --cflags libcbor 2>/dev/null)
CBOR_LIBS   := $(or $(shell pkg-config --libs libcbor 2>/dev/null),-lcbor)
HARNESS      := $(BUILD)/harness/hurray-conformance
ASAN_HARNESS := $(BUILD)/asan/harness/hurray-conformance
# The C testee: libhurray behind the testee protocol (docs/conformance/testee-protocol.md),
# harness/testee/*.c plus the harness's CBOR writer, SHA-256 and limit-name table.
TESTEE_SRC  := $(sort $(wildcard harness/testee/*.c)) harness/src/cborw.c harness/src/sha256.c \
               harness/src/hc_limits.c
TESTEE_HDR  := $(wildcard harness/testee/*.h) harness/src/cborw.h harness/src/sha256.h \
               harness/src/hc_limits.h
TESTEE      := $(BUILD)/harness/hurray-testee

define harness_rule # $(1)=build dir, $(2)=compiler, $(3)=extra flags
$(1)/harness/hurray-conformance: $(HARNESS_SRC) $(HARNESS_HDR) $(1)/libhurray.a $(LIB_HDR)
	@mkdir -p $$(@D)
	$(2) $$(CSTD) $$(WARN) $$(OPT) $(3) $$(HARNESS_CPPFLAGS) $$(CBOR_CFLAGS) \
	  $(HARNESS_SRC) $(1)/libhurray.a $$(CBOR_LIBS) -lm -o $$@
$(1)/harness/hurray-testee: $(TESTEE_SRC) $(TESTEE_HDR) $(1)/libhurray.a $(LIB_HDR)
	@mkdir -p $$(@D)
	$(2) $$(CSTD) $$(WARN) $$(OPT) $(3) $$(HARNESS_CPPFLAGS) -Iharness/testee $$(CBOR_CFLAGS) \
	  $(TESTEE_SRC) $(1)/libhurray.a $$(CBOR_LIBS) -lm -o $$@
endef
$(eval $(call harness_rule,$(BUILD),$(CC),))
$(eval $(call harness_rule,$(BUILD)/asan,$(SAN_CC),$(SAN_FLAGS)))

# ------------------------------------------------------------------- fuzz ---
# Every fuzz/targets/fuzz_*.c is one libFuzzer target (LLVMFuzzerTestOneInput). Shared helper
# sources go in fuzz/support/*.c. Seeds (read-only): the campaign's minimised corpus
# fuzz/corpus/<name>/, the vectors and fuzz/regress/<name>/; what libFuzzer finds goes to
# $(BUILD)/fuzz/corpus/<name>/ (always its FIRST corpus directory) and crashes to
# $(BUILD)/fuzz/artifacts/. AFL++, the campaign, promotion, MSan: fuzz/fuzz.mk (end of file).
# FUZZ_SECONDS: 20 s x 7 targets, two at a time (TEST_JOBS), keeps fuzz-smoke under 2 minutes on
# 2 cores; the campaign (make fuzz-campaign) is where the fuzzing happens.
FUZZ_SECONDS ?= 20
FUZZ_TARGETS := $(sort $(wildcard fuzz/targets/fuzz_*.c))
FUZZ_NAMES   := $(patsubst fuzz/targets/%.c,%,$(FUZZ_TARGETS))
FUZZ_SUPPORT := $(sort $(wildcard fuzz/support/*.c))
FUZZ_HDR     := $(wildcard fuzz/*.h fuzz/support/*.h fuzz/targets/*.h)
FUZZ_SEEDS   ?= $(wildcard $(VECTORS)/valid $(VECTORS)/invalid)
FUZZ_DICT    := $(wildcard fuzz/dict/hurray.dict)
FUZZ_WARN    := $(filter-out -Wmissing-prototypes,$(WARN))
FUZZ_BINS    := $(patsubst %,$(BUILD)/fuzz/bin/%,$(FUZZ_NAMES))
REPLAY_BINS  := $(patsubst %,$(BUILD)/fuzz/replay/%,$(FUZZ_NAMES))
# The replay build runs under valgrind where it is installed (uninitialised reads ASan misses).
comma := ,
REPLAY_RUNNER ?= $(if $(shell command -v valgrind 2>/dev/null),valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite$(comma)indirect)

# fuzz/support/ (the custom mutator, the counting allocator) is compiled apart, with the
# sanitizers but without coverage instrumentation: its branches are not the library's, so
# they must not count as new coverage, and the mutator then runs at full speed.
FUZZ_SUPPORT_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
.PRECIOUS: $(BUILD)/fuzz/support/%.o
$(BUILD)/fuzz/support/%.o: fuzz/support/%.c $(FUZZ_HDR) $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CSTD) $(FUZZ_WARN) -O1 -g $(FUZZ_SUPPORT_SAN) -Ireference/include -Ifuzz \
	  -Ifuzz/support -c $< -o $@
$(BUILD)/fuzz/bin/%: fuzz/targets/%.c $(patsubst fuzz/support/%.c,$(BUILD)/fuzz/support/%.o,$(FUZZ_SUPPORT)) \
                     $(FUZZ_HDR) $(BUILD)/fuzz/libhurray.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CSTD) $(FUZZ_WARN) -O1 -g $(FUZZ_FLAGS) -Ireference/include -Ifuzz -Ifuzz/support \
	  $< $(patsubst fuzz/support/%.c,$(BUILD)/fuzz/support/%.o,$(FUZZ_SUPPORT)) \
	  $(BUILD)/fuzz/libhurray.a -lm -o $@

# Replay build: the same target with fuzz/regression_driver.c as main(), plain compiler.
$(BUILD)/fuzz/replay/%: fuzz/targets/%.c fuzz/regression_driver.c $(FUZZ_SUPPORT) $(FUZZ_HDR) \
                        $(BUILD)/libhurray.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(FUZZ_WARN) $(OPT) -Ireference/include -Ifuzz -Ifuzz/support \
	  $< fuzz/regression_driver.c $(FUZZ_SUPPORT) $(BUILD)/libhurray.a -lm -o $@

# ------------------------------------------------------------------ bench ---
# bench/c/<name>.c → $(BUILD)/bench/<name>: C micro-benchmarks on the public API only.
BENCH_SRC  := $(sort $(wildcard bench/c/*.c))
BENCH_BINS := $(patsubst bench/c/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

$(BUILD)/bench/%: bench/c/%.c $(BUILD)/libhurray.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) -O2 -g -DNDEBUG -Ireference/include $< $(BUILD)/libhurray.a -lm -pthread -o $@

# ---------------------------------------------------------------- targets ---
.PHONY: all lib deps test test-steps vectors-check trace harness-test python-install test-c sanitize valgrind harness conformance \
        conformance-sanitize conformance-testees corpus-release fuzz-smoke fuzz-replay fuzz-build bench \
        test-python clean distclean
all: lib
lib: $(BUILD)/libhurray.a $(BUILD)/libhurray.so

# Debian packages and the .venv (ci/requirements-dev.txt); fast when already there.
deps:
	bash ci/bootstrap

# C unit tests (cmocka), each binary on its own.
test-c: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; $$t; done

# The same tests under ASan+UBSan.
sanitize: $(ASAN_TESTS)
	@set -e; for t in $(ASAN_TESTS); do echo "== $$t (asan+ubsan)"; \
	  $(ASAN_ENV) $$t; done

# The plain tests under valgrind: no leaks, no invalid reads.
# The test programs run TEST_JOBS at a time under valgrind (each one's errors printed as a block).
# memory_test is left out: its probes exec the binary afresh, natively (valgrind does not follow
# them), so under valgrind it would check only the building of its inputs, which the writers'
# own tests already run there; test-c and sanitize run it.
VALGRIND_TESTS := $(filter-out %/memory_test,$(TESTS))
valgrind: $(VALGRIND_TESTS)
	@printf '%s\n' $(VALGRIND_TESTS) | xargs -P $(TEST_JOBS) -I{} sh -c 'out=$$(valgrind -q --error-exitcode=99 \
	    --leak-check=full --errors-for-leak-kinds=definite,indirect {} 2>&1 >/dev/null); rc=$$?; \
	  echo "== {} (valgrind)"; [ -z "$$out" ] || printf "%s\n" "$$out"; exit $$rc' \
	  && echo "valgrind: clean"

ifneq ($(HARNESS_SRC),)
harness: $(HARNESS) $(TESTEE)

# Every vector of the corpus through the C reference, linked into the harness and then as a
# testee over the protocol (docs/conformance/testee-protocol.md); the harness prints the report
# of each. Then every vector of every kind through the Python binding (descriptor and
# quantization: test_conformance.py; kv, file, stream: test_conformance_containers.py). deps
# first: on a fresh machine this is the first command a reader runs.
conformance: deps harness
	@echo "=== C reference (libhurray) over the corpus"
	$(HARNESS) $(HARNESS_ARGS)
	@echo "=== C reference (libhurray) over the corpus, as a testee ($(TESTEE))"
	$(HARNESS) $(HARNESS_ARGS) --testee $(TESTEE)
ifneq ($(wildcard python/pyproject.toml),)
	@echo "=== Python binding (hurray) over the corpus"
	@$(MAKE) --no-print-directory python-install
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider python/tests/test_conformance.py \
	  python/tests/test_conformance_containers.py
endif

# The same run with the library and harness under ASan+UBSan.
conformance-sanitize: $(ASAN_HARNESS)
	$(ASAN_ENV) $(ASAN_HARNESS) $(HARNESS_ARGS) >/dev/null && echo "conformance-sanitize: clean"

# Every testee of the repository through the protocol, one report each (testee-protocol.md):
# libhurray (C), the generator's oracle (Python, an independent implementation) and the
# minimal descriptor-header testee of docs/conformance/ (with its failure list). Runs them all,
# then fails if any failed. The oracle gets 60 s a request instead of the protocol's default 10:
# it is a plain-Python decoder, and a sweep batch of the 260-buffer stream vectors
# (y_stream_align_slack__*) took over 10 s on this 2-core machine under load.
TESTEES := "libhurray (C)|$(TESTEE)|" \
           "the generator's oracle (Python)|$(abspath $(VENV))/bin/python vectors/gen/testee.py|--timeout 60" \
           "the minimal testee (Python, descriptor headers only)|$(abspath $(VENV))/bin/python docs/conformance/minimal_testee.py|--kind descriptor --failure-list docs/conformance/minimal_testee.failures"
conformance-testees: harness
	@fail=0; for t in $(TESTEES); do \
	  IFS='|' read -r name cmd extra <<< "$$t"; \
	  echo "=== testee: $$name"; \
	  $(HARNESS) $(HARNESS_ARGS) --testee "$$cmd" $$extra || fail=$$((fail + 1)); \
	done; [ $$fail -eq 0 ] || { echo "conformance-testees: $$fail testee run(s) failed"; exit 1; }

# The harness's own tests: schema and hostile-manifest handling on its test corpus, the proof
# that it can fail (a perturbed manifest value and vector byte are reported, exactly), the
# testee protocol against deliberately broken testees, failure lists, the corpus release.
harness-test: deps harness
	HURRAY_HARNESS=$(abspath $(HARNESS)) HURRAY_TESTEE=$(abspath $(TESTEE)) \
	  HURRAY_VECTORS=$(abspath vectors) $(VENV)/bin/python -m pytest -q $(PYTEST_JOBS) harness/tests
else
harness conformance conformance-sanitize conformance-testees:
	@echo "$@: no harness sources (harness/src/*.c) in this tree" >&2; exit 1
endif

fuzz-build: $(FUZZ_BINS) $(REPLAY_BINS)

# Replays the vectors, fuzz/regress/<target>/ and fuzz/corpus/<target>/ through every target,
# no libFuzzer.
fuzz-replay: $(REPLAY_BINS)
	@set -e; for n in $(FUZZ_NAMES); do echo "== replay $$n"; \
	  $(REPLAY_RUNNER) $(BUILD)/fuzz/replay/$$n $(FUZZ_SEEDS) $$(ls -d fuzz/regress/$$n fuzz/corpus/$$n 2>/dev/null); \
	done

# Replay, then each target under libFuzzer for FUZZ_SECONDS, seeded from the campaign's corpus
# and the vectors (every seed runs once under ASan+UBSan before the fuzzing starts; with
# HURRAY_FUZZ_ALL_MODES=1, so fuzz_file runs every way in on them, not a sample). The full
# fuzzer log goes to $(BUILD)/fuzz/<target>.log; its tail is printed. The memory limits are low
# on purpose: a single allocation of FUZZ_MALLOC_MB or more, or a resident size over FUZZ_RSS_MB,
# is a finding -- an input that makes a reader commit far more than it holds (amplification;
# stream.md HR-STREAM-16). The corpus and the regression inputs pass under them.
FUZZ_MALLOC_MB ?= 256
FUZZ_RSS_MB    ?= 512
# The targets run TEST_JOBS at a time (default: one per CPU), each printing its lines when done.
fuzz-smoke: fuzz-replay $(FUZZ_BINS)
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) $(patsubst %,fuzz-smoke-one-%,$(FUZZ_NAMES)) \
	  && echo "fuzz-smoke: $(words $(FUZZ_NAMES)) target(s) clean"
# One target (not in `make help`: fuzz-smoke runs them).
fuzz-smoke-one-%: $(BUILD)/fuzz/bin/%
	@n=$*; corpus=$(BUILD)/fuzz/corpus/$$n; art=$(BUILD)/fuzz/artifacts/$$n; log=$(BUILD)/fuzz/$$n.log; \
	  mkdir -p $$corpus $$art; \
	  if HURRAY_FUZZ_ALL_MODES=1 $(BUILD)/fuzz/bin/$$n -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=$(FUZZ_RSS_MB) -malloc_limit_mb=$(FUZZ_MALLOC_MB) \
	       -print_final_stats=1 -artifact_prefix=$$art/ $(if $(FUZZ_DICT),-dict=$(FUZZ_DICT)) \
	       $$corpus $$(ls -d fuzz/corpus/$$n 2>/dev/null) $(FUZZ_SEEDS) $$(ls -d fuzz/regress/$$n 2>/dev/null) >$$log 2>&1; then \
	    { echo "== fuzz $$n ($(FUZZ_SECONDS) s)"; \
	      grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ *DONE)' $$log || tail -n 3 $$log; }; \
	  else { echo "== fuzz $$n ($(FUZZ_SECONDS) s)"; tail -n 80 $$log; \
	         echo "fuzz $$n: FAILED (log $$log, artifacts $$art)"; }; exit 1; fi

# C micro-benchmarks. Not part of `make test`.
bench: $(BENCH_BINS)
	@set -e; for b in $(BENCH_BINS); do echo "== $$b"; $$b; done

# Our own builds of the binding turn warnings into errors (meson's werror option, off by
# default so that users' compilers never fail an install on a new warning).
PY_DEV_SETUP ?= -Csetup-args=-Dwerror=true

# Python binding: builds the extension into the venv and runs its tests. Joins `make test`
# once python/pyproject.toml exists.
python-install: deps
	$(VENV)/bin/python -m pip install -q --no-build-isolation $(PY_DEV_SETUP) ./python

test-python: python-install
	$(VENV)/bin/python -m pytest -q $(PYTEST_JOBS) python/tests

# ------------------------------------------------------------------- test ---
# What CI runs. deps first, then a fresh make (so tools deps just installed are seen) runs
# every step, carrying on past a failure, and closes with one summary line.
TEST_STEPS := test-c sanitize valgrind vectors-check trace \
              $(if $(HARNESS_SRC),conformance conformance-sanitize conformance-testees harness-test) \
              $(if $(FUZZ_TARGETS),fuzz-smoke) \
              $(if $(wildcard python/pyproject.toml),test-python)

# Steps that run after every other one, whatever later sections add to TEST_STEPS: the speed
# guard, which prints warnings and cannot fail (bench-compare's recipe always succeeds).
TEST_STEPS_LAST := bench-compare

test: deps
	@$(MAKE) --no-print-directory test-steps

# Every requirement id traced to tests; docs/conformance/requirements.md current.
trace: deps
	$(VENV)/bin/python docs/conformance/trace.py --check

# The released corpus: $(BUILD)/hurray-conformance-vectors-<format>-<corpus>.tar.gz (vectors,
# manifest, SCHEMA.md, the testee protocol, the spec, SHA256SUMS, a README), reproducible
# byte for byte (vectors/release.py).
corpus-release: deps
	$(VENV)/bin/python vectors/release.py --vectors $(VECTORS) --out $(BUILD)

# The committed corpus must be exactly what the independent generator writes.
vectors-check:
	PYTHON=$(abspath $(VENV))/bin/python bash vectors/gen/check_determinism.sh && echo "vectors: corpus matches the generator"

test-steps:
	@pass=0; fail=0; report=""; \
	for s in $(TEST_STEPS) $(TEST_STEPS_LAST); do \
	  echo "=== make $$s"; start=$$SECONDS; \
	  if $(MAKE) --no-print-directory $$s; then pass=$$((pass + 1)); r="ok    "; \
	  else fail=$$((fail + 1)); r="FAILED"; fi; \
	  report+=$$(printf '\n  %s  %-22s %4d s' "$$r" "$$s" $$((SECONDS - start))); \
	done; \
	echo; echo "=== make test summary$$report"; \
	echo "steps: $$pass passed, $$fail failed"; \
	[ $$fail -eq 0 ]

clean:
	rm -rf $(BUILD)

distclean: clean
	rm -rf $(VENV)

# ---------------------------------------------------------- bench-python ---
# Python benchmarks (pytest-benchmark, bench/python/): hurray's NumPy round trip against
# np.asarray and np.from_dlpack in the same run, with ratio lines at the end. Not part of
# `make test`; `make bench` runs them too (as a prerequisite, before the C micro-benchmarks).
.PHONY: bench-python
bench-python: python-install
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider bench/python --benchmark-only \
	  --benchmark-columns=min,mean,stddev,rounds

bench: bench-python

# The speed guard (bench/compare.py): a short subset (benchmarks marked `guard`) compared with
# bench/baselines/python-native-<machine>.json; one `WARNING: <bench> regressed N% ...` line per
# benchmark still > 10 % slower after re-runs. Never fails: `make test` runs it last.
# bench-baseline rewrites this machine kind's baseline (commit it).
.PHONY: bench-compare bench-baseline
bench-compare:
	@$(MAKE) --no-print-directory python-install >/dev/null && \
	  $(VENV)/bin/python bench/compare.py compare || \
	  echo "bench-compare: could not run (see above); not a build failure"

bench-baseline: python-install
	$(VENV)/bin/python bench/compare.py baseline

# -------------------------------------------------------------- portability ---
# One OS layer (reference/src/os.h): reference/src/os_posix.c and os_win32.c are the only files
# that include operating-system headers or make system calls. ci/check_os_headers.py enforces
# it over reference/src and python/src/hurray; the cross builds compile the library for the
# other platforms with their own headers and -Werror, and link it (every system function
# named must exist there).
#   cross-windows  libhurray from reference/meson.build (its sources with os_win32.c, the
#                  warning list, -Werror), mingw-w64 (x86_64-w64-mingw32-gcc, Debian
#                  gcc-mingw-w64-x86-64): libhurray.a and libhurray-<soversion>.dll; then the
#                  OS layer's Windows check (reference/tests/win32/) run under Wine (Debian wine64)
#   cross-macos    the same description with os_posix.c, `zig cc` (PyPI ziglang, in .venv) for
#                  x86_64-macos 10.13 and arm64-macos 11.0: libhurray.a and libhurray.dylib
# Each is a meson cross build in $(BUILD)/cross/<target>/, its cross file written there from
# MINGW_CC / ZIG. (meson runs in that directory: its probes of zig's linker leave an a.o in
# the current directory.)
# OS_PORT_PENDING: files still being moved onto the OS layer. The header check lists them
# instead of failing (and fails once one is clean, so that it leaves this list). owned.c and
# pycomposite.c still call madvise (Linux only). (A libhurray file cannot be pending: the
# cross builds compile every source reference/meson.build names.)
OS_PORT_PENDING ?= python/src/hurray/_hurray/owned.c python/src/hurray/_hurray/pycomposite.c
MINGW_CC     ?= x86_64-w64-mingw32-gcc
MINGW_AR     ?= $(patsubst %gcc,%ar,$(MINGW_CC))
ZIG          ?= $(abspath $(VENV))/bin/python -m ziglang
WIN_DIR      := $(BUILD)/cross/windows-x86_64
MACOS_TARGETS := x86_64-macos.10.13 aarch64-macos.11.0

# The command $(1) runnable from another directory (a path made absolute; a bare name kept).
abscmd = $(if $(findstring /,$(firstword $(1))),$(abspath $(firstword $(1))) $(wordlist 2,$(words $(1)),$(1)),$(1))
# A meson list of the words of $(1): ['a', 'b'].
space := $(subst ,, )
meson_list = [$(subst $(space),$(comma)$(space),$(patsubst %,'%',$(strip $(1))))]
define cross_rules # $(1)=build dir, $(2)=C compiler, $(3)=archiver, $(4)=system, $(5)=cpu family
$(1)/cross.ini:
	@mkdir -p $$(@D)
	@printf '%s\n' '[binaries]' "c = $$(call meson_list,$(2))" "ar = $$(call meson_list,$(3))" \
	  '[built-in options]' "c_args = ['-O2']" \
	  '[host_machine]' "system = '$(4)'" "cpu_family = '$(5)'" "cpu = '$(5)'" \
	  "endian = 'little'" >$$@
$(1)/build.ninja: $(1)/cross.ini | $(filter $(VENV)/%,$(MESON) $(NINJA))
	@echo "meson setup $(1) (cross: $$(strip $(2)))"
	@cd $(1) && $$(call abscmd,$$(MESON)) setup . $$(CURDIR)/reference --cross-file cross.ini \
	  $$(if $$(wildcard $(1)/meson-private/coredata.dat),--reconfigure) $$(MESON_SETUP) \
	  >meson-setup.log 2>&1 || { cat meson-setup.log; exit 1; }
.PRECIOUS: $(1)/libhurray.a
$(1)/libhurray.a: $(1)/build.ninja FORCE
	$$(if $$(LIB_UNLISTED),$$(error reference/meson.build does not list $$(LIB_UNLISTED)))
	+@$$(call ninja_in,$(1))
endef
$(eval $(call cross_rules,$(WIN_DIR),$(MINGW_CC),$(MINGW_AR),windows,x86_64))
$(foreach t,$(MACOS_TARGETS),$(eval $(call cross_rules,$(BUILD)/cross/$(t),$(ZIG) cc -target $(t),$(ZIG) ar,darwin,$(firstword $(subst -, ,$(t))))))

# reference/tests/win32/os_win32_check.c: os_win32.c's behaviour on Windows (files, paths in
# UTF-8, copy-on-write maps, pipes with timeouts and wakers, replace), run under Wine. It calls
# the library's internal OS layer, so it links the archive.
WINE ?= $(or $(shell command -v wine64 2>/dev/null),$(wildcard /usr/lib/wine/wine64))
$(WIN_DIR)/os_win32_check.exe: reference/tests/win32/os_win32_check.c $(WIN_DIR)/libhurray.a $(LIB_HDR)
	$(MINGW_CC) $(CSTD) $(WARN) -O2 -DHURRAY_BUILDING -D__USE_MINGW_ANSI_STDIO=1 \
	  -Ireference/include -Ireference/src $< $(WIN_DIR)/libhurray.a -o $@

.PHONY: portability-check cross-windows cross-macos
portability-check:
	$(PYTHON) ci/check_os_headers.py --pending $(OS_PORT_PENDING)

cross-windows: $(WIN_DIR)/libhurray.a $(WIN_DIR)/os_win32_check.exe
	@test -n "$(WINE)" || { echo "cross-windows: no wine64 (Debian wine64) to run the check" >&2; exit 1; }
	WINEDEBUG=-all WINEPREFIX=$(abspath $(WIN_DIR))/wineprefix $(WINE) $(WIN_DIR)/os_win32_check.exe
	@echo "cross-windows: libhurray (reference/meson.build) built for Windows x86_64 and linked:" \
	  $(notdir $(wildcard $(WIN_DIR)/libhurray.a $(WIN_DIR)/libhurray*.dll))

cross-macos: $(foreach t,$(MACOS_TARGETS),$(BUILD)/cross/$(t)/libhurray.a)
	@echo "cross-macos: libhurray (reference/meson.build) built and linked for $(MACOS_TARGETS)"

TEST_STEPS += portability-check cross-windows cross-macos

# --------------------------------------------------------------- packaging ---
# The Python package as users get it (README.md § Installing):
#   sdist        $(DIST)/hurray-<version>.tar.gz: python/ plus libhurray's sources and the
#                LICENSE (meson dist + python/tools/dist_vendor.py). Made from the committed
#                tree (meson dist archives HEAD): commit first.
#   wheel        a manylinux_2_17 x86_64 wheel for .venv's CPython, built from that sdist
#                without containers: `zig cc` targeting glibc 2.17, then auditwheel repair
#                (which also proves the tag: it refuses a wheel that needs a newer glibc).
#   sdist-test   the sdist installed in a fresh venv whose PATH has a C compiler and nothing
#                else (meson, ninja, NumPy come from the index), then a smoke test
#   wheel-test   the wheel installed with --no-index into a fresh venv with no compiler on
#                PATH, a smoke test, then the binding's tests against it
#   packaging-check  static checks: one version, LICENSE, werror, cibuildwheel's selection
# Version: HURRAY_VERSION_STRING in reference/include/hurray/version.h, nowhere else.
DIST        ?= $(BUILD)/dist
PKG_VERSION := $(shell $(PYTHON) python/tools/version.py reference 2>/dev/null)
SDIST       := $(DIST)/hurray-$(PKG_VERSION).tar.gz
WHEEL_GLIBC ?= 2.17
WHEEL_PLAT  ?= manylinux_$(subst .,_,$(WHEEL_GLIBC))_x86_64
WHEEL_WORK  := $(BUILD)/wheel

.PHONY: sdist wheel sdist-test wheel-test packaging-check
sdist: deps
	rm -f $(DIST)/hurray-*.tar.gz
	$(VENV)/bin/python -m build --sdist --no-isolation --outdir $(DIST) python
	@test -f $(SDIST) && echo "sdist: $(SDIST)"

wheel: sdist
	rm -rf $(WHEEL_WORK) $(DIST)/hurray-*.whl && mkdir -p $(WHEEL_WORK)
	tar xzf $(SDIST) -C $(WHEEL_WORK)
	CC="$(ZIG) cc -target x86_64-linux-gnu.$(WHEEL_GLIBC)" AR="$(ZIG) ar" \
	  $(VENV)/bin/python -m pip wheel -q --no-build-isolation --no-deps \
	  -Csetup-args=-Dwerror=true -Cbuild-dir=$(abspath $(WHEEL_WORK))/build \
	  -w $(WHEEL_WORK)/raw $(WHEEL_WORK)/hurray-$(PKG_VERSION)
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/python -m auditwheel repair \
	  --plat $(WHEEL_PLAT) -w $(DIST) $(WHEEL_WORK)/raw/hurray-*.whl
	$(VENV)/bin/python -m auditwheel show $(DIST)/hurray-$(PKG_VERSION)-*.whl
	@ls $(DIST)/hurray-$(PKG_VERSION)-*.whl

sdist-test: sdist
	bash ci/test_install.sh sdist $(SDIST)

wheel-test: wheel
	PYTEST_JOBS="$(PYTEST_JOBS)" bash ci/test_install.sh wheel $(DIST)

packaging-check: deps
	$(VENV)/bin/python ci/check_packaging.py

TEST_STEPS += packaging-check sdist-test wheel-test

# The binding built with ASan+UBSan (gcc's runtimes preloaded into the interpreter; ci/asan_python.sh)
# running the native protocol's and DLPack's tests: the capsules, lists and deleters that cross
# into other libraries, checked for invalid reads, writes, frees and undefined behaviour.
.PHONY: python-asan
python-asan: deps
	bash ci/asan_python.sh python/tests/test_native.py python/tests/test_dlpack.py
TEST_STEPS += python-asan

# ------------------------------------------------------------------- docs ---
# Docs that tell the truth: no dangling or outside-the-repository paths or links, no unknown
# spec section / HR / REQ ids, no citation of private documents, and no `pip install` of
# hurray that could reach the unrelated public project (ci/check_docs.py says each rule).
.PHONY: docs-check
docs-check:
	$(PYTHON) ci/check_docs.py

TEST_STEPS += docs-check

# --------------------------------------------------------------- coverage ---
# Line coverage of libhurray (reference/src) from everything that exercises it: the C unit
# tests, the conformance harness over the corpus (linked in, and the C testee over the
# protocol), and every fuzz target's replay driver over the corpus, fuzz/regress/<target>/
# and fuzz/corpus/<target>/. clang source-based coverage (-fprofile-instr-generate
# -fcoverage-mapping, llvm-profdata, llvm-cov), in its own flavour dir $(BUILD)/cov with its
# own compile rules (the other flavours' rules are not involved).
#   make coverage        build, run, print the per-file summary of reference/src, write
#                        $(COV_DIR)/html/index.html and $(COV_DIR)/summary.txt
#   make coverage-check  the same, then fail if line coverage of reference/src is below
#                        COV_MIN percent; lists every line not covered
#                        (docs/conformance/coverage.md explains the ones left)
COV_DIR       := $(BUILD)/cov
COV_CC        ?= $(if $(CLANG),$(CLANG),clang)
LLVM_PROFDATA ?= $(or $(shell command -v llvm-profdata-14 2>/dev/null),$(shell command -v llvm-profdata 2>/dev/null),llvm-profdata)
LLVM_COV      ?= $(or $(shell command -v llvm-cov-14 2>/dev/null),$(shell command -v llvm-cov 2>/dev/null),llvm-cov)
COV_MIN       ?= 95
COV_FLAGS     := -fprofile-instr-generate -fcoverage-mapping
COV_OPT       := -O1 -g
COV_OBJS      := $(patsubst reference/src/%.c,$(COV_DIR)/obj/%.o,$(LIB_SRC))
COV_TESTS     := $(patsubst reference/tests/%_test.c,$(COV_DIR)/tests/%_test,$(TEST_SRC))
COV_REPLAY    := $(patsubst %,$(COV_DIR)/replay/%,$(FUZZ_NAMES))
COV_HARNESS   := $(if $(HARNESS_SRC),$(COV_DIR)/harness/hurray-conformance $(COV_DIR)/harness/hurray-testee)
COV_BINS      := $(COV_TESTS) $(COV_REPLAY) $(COV_HARNESS)
COV_PROFDATA  := $(COV_DIR)/hurray.profdata
# llvm-cov: the first binary, then -object for each other one; only reference/src is reported.
COV_OBJECTS   = $(firstword $(COV_BINS)) $(addprefix -object ,$(wordlist 2,$(words $(COV_BINS)),$(COV_BINS)))
COV_REPORT    = $(LLVM_COV) report $(COV_OBJECTS) -instr-profile=$(COV_PROFDATA) $(LIB_SRC)

$(COV_DIR)/obj/%.o: reference/src/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(COV_CC) -Ireference/include -Ireference/src -DHURRAY_BUILDING $(CSTD) $(WARN) $(COV_OPT) $(COV_FLAGS) -c $< -o $@
$(COV_DIR)/libhurray.a: $(COV_OBJS)
	rm -f $@ && ar rcs $@ $^
$(COV_DIR)/tests/%_test: reference/tests/%_test.c $(TEST_SUPPORT) $(COV_DIR)/libhurray.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(COV_CC) $(CSTD) $(WARN) $(COV_OPT) $(COV_FLAGS) -Ireference/include -Ireference/src \
	  -Ireference/tests $< $(TEST_SUPPORT) $(COV_DIR)/libhurray.a -lcmocka -lm -pthread -o $@
$(COV_DIR)/replay/%: fuzz/targets/%.c fuzz/regression_driver.c $(FUZZ_SUPPORT) $(FUZZ_HDR) \
                     $(COV_DIR)/libhurray.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(COV_CC) $(CSTD) $(FUZZ_WARN) $(COV_OPT) $(COV_FLAGS) -Ireference/include -Ifuzz \
	  -Ifuzz/support $< fuzz/regression_driver.c $(FUZZ_SUPPORT) $(COV_DIR)/libhurray.a -lm -o $@
$(COV_DIR)/harness/hurray-conformance: $(HARNESS_SRC) $(HARNESS_HDR) $(COV_DIR)/libhurray.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(COV_CC) $(CSTD) $(WARN) $(COV_OPT) $(COV_FLAGS) $(HARNESS_CPPFLAGS) $(CBOR_CFLAGS) \
	  $(HARNESS_SRC) $(COV_DIR)/libhurray.a $(CBOR_LIBS) -lm -o $@
$(COV_DIR)/harness/hurray-testee: $(TESTEE_SRC) $(TESTEE_HDR) $(COV_DIR)/libhurray.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(COV_CC) $(CSTD) $(WARN) $(COV_OPT) $(COV_FLAGS) $(HARNESS_CPPFLAGS) -Iharness/testee \
	  $(CBOR_CFLAGS) $(TESTEE_SRC) $(COV_DIR)/libhurray.a $(CBOR_LIBS) -lm -o $@

.PHONY: coverage coverage-run coverage-check
# Runs everything with a fresh profile directory; a failing test fails the run (coverage of a
# broken build would measure the wrong thing). %p: one raw profile per process (the harness
# forks, the testee is its own process), merged afterwards.
coverage-run: $(COV_BINS)
	@rm -rf $(COV_DIR)/profraw $(COV_PROFDATA) && mkdir -p $(COV_DIR)/profraw
	@set -e; export LLVM_PROFILE_FILE=$(abspath $(COV_DIR))/profraw/%p-%m.profraw; \
	for t in $(COV_TESTS); do echo "== $$t"; $$t >$(COV_DIR)/last.log 2>&1 || { cat $(COV_DIR)/last.log; exit 1; }; done; \
	for n in $(FUZZ_NAMES); do echo "== replay $$n"; \
	  $(COV_DIR)/replay/$$n $(FUZZ_SEEDS) $$(ls -d fuzz/regress/$$n fuzz/corpus/$$n 2>/dev/null); done; \
	$(if $(COV_HARNESS),echo "== harness (linked in)"; \
	  $(COV_DIR)/harness/hurray-conformance $(HARNESS_ARGS) >$(COV_DIR)/last.log || { tail -n 40 $(COV_DIR)/last.log; exit 1; }; \
	  echo "== harness (C testee)"; \
	  $(COV_DIR)/harness/hurray-conformance $(HARNESS_ARGS) --testee $(COV_DIR)/harness/hurray-testee >$(COV_DIR)/last.log || { tail -n 40 $(COV_DIR)/last.log; exit 1; };)
	$(LLVM_PROFDATA) merge -sparse -o $(COV_PROFDATA) $(COV_DIR)/profraw/*.profraw

coverage: coverage-run
	@$(COV_REPORT) | tee $(COV_DIR)/summary.txt
	@rm -rf $(COV_DIR)/html
	@$(LLVM_COV) show $(COV_OBJECTS) -instr-profile=$(COV_PROFDATA) -format=html \
	  -show-line-counts-or-regions -output-dir=$(COV_DIR)/html $(LIB_SRC)
	@$(LLVM_COV) export $(COV_OBJECTS) -instr-profile=$(COV_PROFDATA) -format=lcov $(LIB_SRC) \
	  >$(COV_DIR)/lcov.info
	@echo "coverage: $(COV_DIR)/summary.txt, $(COV_DIR)/html/index.html, $(COV_DIR)/lcov.info"

coverage-check: coverage
	$(PYTHON) ci/coverage_check.py --lcov $(COV_DIR)/lcov.info --min $(COV_MIN) \
	  --explained docs/conformance/coverage.md

# About 60 s of CPU from a clean build dir (build, tests, corpus, replays); fails below COV_MIN
# or on a line no run reaches that docs/conformance/coverage.md does not explain.
TEST_STEPS += coverage-check
# -------------------------------------------------------------- typecheck ---
# The type stubs as users meet them: mypy --strict over python/src/hurray (the .pyi files and
# __init__.py), then mypy --strict and pyright over the user guide's examples
# (docs/guide/*.md, one module per page), against the stubs (ci/typecheck.py). The guide's
# examples also run, in test-python (python/tests/test_guide.py).
.PHONY: typecheck
typecheck: deps
	$(VENV)/bin/python ci/typecheck.py

TEST_STEPS += typecheck
# ------------------------------------------------------------ fuzz campaign ---
# AFL++, the campaign, crash promotion, MSan replay, Atheris: fuzz/fuzz.mk.
include fuzz/fuzz.mk

# ---------------------------------------------------------------- install ---
# libhurray for C users, from the plain build ($(BUILD), reference/meson.build): libhurray.a,
# libhurray.so (soname libhurray.so.<major>.<minor> while 0.x), the public headers in
# include/hurray/, and lib/pkgconfig/hurray.pc (`pkg-config --cflags --libs hurray`).
# PREFIX (absolute once resolved), LIBDIR (relative to PREFIX) and DESTDIR (a staging root) as
# usual. install-check (ci/install_check.sh) installs into a scratch prefix and builds and runs
# a C program through pkg-config, against the shared library and the archive.
PREFIX ?= /usr/local
LIBDIR ?= lib
DESTDIR ?=

.PHONY: install install-check
install: $(BUILD)/libhurray.a $(BUILD)/libhurray.so
	@{ $(MESON) configure $(BUILD) -Dprefix=$(abspath $(PREFIX)) -Dlibdir=$(LIBDIR) \
	  && $(NINJA) -C $(BUILD); } >$(BUILD)/meson-configure.log 2>&1 \
	  || { cat $(BUILD)/meson-configure.log; exit 1; }
	$(MESON) install -C $(BUILD) $(if $(DESTDIR),--destdir $(abspath $(DESTDIR)))

install-check: $(BUILD)/libhurray.a $(BUILD)/libhurray.so
	MAKE="$(MAKE)" BUILD="$(BUILD)" CC="$(CC)" WARN="$(WARN)" LIBDIR="$(LIBDIR)" \
	  bash ci/install_check.sh

TEST_STEPS += install-check

# ------------------------------------------------------------------- help ---
# `make help`: every target, one line each. help-check (a `make test` step) fails when a
# .PHONY target of this Makefile is not in the list.
define HELP_TEXT
Build (under BUILD=$(BUILD)):
  all, lib              libhurray.a, libhurray.so ($(BUILD); reference/meson.build)
  harness               the conformance harness and the C testee ($(BUILD)/harness/)
  fuzz-build            the libFuzzer targets and their replay builds ($(BUILD)/fuzz/)
  python-install        the Python binding into $(VENV), a -Werror build
  sdist                 the self-contained sdist ($(DIST)/hurray-<version>.tar.gz)
  wheel                 a manylinux x86_64 wheel built from that sdist ($(DIST)/)
  corpus-release        the released conformance corpus tarball ($(BUILD)/)
  install               libhurray, headers, hurray.pc into PREFIX=$(PREFIX) (LIBDIR, DESTDIR)
Tests (`make test` runs each step of TEST_STEPS and prints a summary):
  test                  deps, then every step below but bench and the builds above
  test-c                the C unit tests (cmocka): $(BUILD)/tests/*_test
  sanitize              the C unit tests under ASan+UBSan ($(BUILD)/asan/)
  valgrind              the C unit tests under valgrind
  vectors-check         the committed corpus is what vectors/gen/ writes
  trace                 every requirement id traced to tests (docs/conformance/)
  conformance           the corpus through libhurray (linked, and as a testee) and the binding
  conformance-sanitize  the linked-in corpus run under ASan+UBSan
  conformance-testees   every testee of the repository through the testee protocol
  harness-test          the harness's own tests (harness/tests)
  fuzz-replay           the corpus and fuzz/regress/ through every fuzz target, no libFuzzer
  fuzz-smoke            fuzz-replay, then each target under libFuzzer for FUZZ_SECONDS
  test-python           the binding's tests (python/tests)
  python-asan           the native-protocol and DLPack tests against an ASan+UBSan build of the binding
  portability-check     operating-system headers only in the OS layer
  cross-windows         libhurray for Windows x86_64 (mingw-w64), its OS-layer check under Wine
  cross-macos           libhurray for macOS x86_64 and arm64 (zig cc)
  packaging-check       one version, LICENSE, werror defaults, cibuildwheel's selection
  sdist-test            the sdist installed in a fresh venv with only a C compiler
  wheel-test            the wheel installed with no compiler on PATH, the binding's tests
  docs-check            links, paths and ids in the docs
  install-check         make install into a scratch prefix; a C program through pkg-config
  help-check            every target of this Makefile is in this list
  coverage-check        line coverage of reference/src >= COV_MIN, the rest explained
  typecheck             mypy --strict and pyright over the stubs and the user guide
  fuzz-msan-replay      the corpora through every fuzz target under MemorySanitizer
  fuzz-dict-check       fuzz/dict/hurray.dict is what fuzz/dict/make_dict.py writes
  bench-compare         (last, never fails) a benchmark subset against bench/baselines/
Other:
  bench                 the C micro-benchmarks (and bench-python); not part of `make test`
  bench-python          the Python benchmarks (pytest-benchmark)
  bench-baseline        rewrite bench/baselines/<machine kind>.json
  coverage              line coverage report: $(BUILD)/cov/summary.txt, html/, lcov.info
  coverage-run          build the coverage flavour and run everything (coverage's first half)
  fuzz-afl              one target under AFL++ (TARGET=fuzz_x, FUZZ_SECONDS)
  fuzz-afl-build        the AFL++ and CMPLOG builds of every target
  fuzz-fast-build       the campaign's libFuzzer build of every target (no sanitizers, -O2)
  fuzz-campaign         libFuzzer + AFL++ per target, corpora minimised into fuzz/corpus/
  fuzz-coverage         each target's line coverage of reference/src (seeds + corpus)
  fuzz-promote          a finding (ARTIFACT=...) minimised, classified, added to the corpus
  fuzz-python           the binding's readers under Atheris
  deps                  Debian packages and the .venv (ci/bootstrap)
  test-steps            what `make test` runs after deps
  clean                 remove $(BUILD)
  distclean             clean, and remove $(VENV)
  help                  this list
endef

.PHONY: help help-check
help:
	@: $(info $(HELP_TEXT))

help-check:
	@listed=$$($(MAKE) --no-print-directory -s -f $(firstword $(MAKEFILE_LIST)) help | sed -n 's/^  \([a-z][a-z0-9, -]*[a-z0-9]\)  .*/\1/p' \
	    | tr ',\n' '  '); \
	phony=$$($(MAKE) --no-print-directory -pRrq -f $(firstword $(MAKEFILE_LIST)) : 2>/dev/null \
	    | sed -n 's/^\.PHONY: //p'); \
	missing=$$(for t in $$phony; do case " $$listed " in *" $$t "*) ;; *) \
	    [ "$$t" = FORCE ] || echo "$$t";; esac; done); \
	if [ -n "$$missing" ]; then echo "help-check: not in \`make help\`:" $$missing >&2; exit 1; fi; \
	echo "help-check: $$(echo $$phony | wc -w) targets, each in \`make help\`"

TEST_STEPS += help-check
