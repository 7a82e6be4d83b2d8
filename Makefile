# hurray — the one entry point. See README.md.
#   make conformance   build what is needed, run the corpus through C (and Python), print the report
#   make test          everything CI checks (.ci/run calls exactly this)
#
# Other targets: all/lib, deps, test-c, sanitize, valgrind, harness, conformance-sanitize,
# fuzz-smoke, fuzz-replay, bench, bench-compare, bench-baseline, clean, distclean. Variables
# worth knowing: BUILD, CC, SAN_CC, FUZZ_CC, FUZZ_SECONDS, VECTORS, OPT.
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

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla -pedantic
CSTD    := -std=c11
OPT     ?= -O2 -g
CPPFLAGS_LIB := -Ireference/include -Ireference/src -DHURRAY_BUILDING
CFLAGS_LIB   := $(CSTD) $(WARN) $(OPT) -fPIC -fvisibility=hidden

LIB_SRC  := $(sort $(wildcard reference/src/*.c))
LIB_HDR  := $(wildcard reference/include/hurray/*.h) $(wildcard reference/src/*.h)
TEST_SRC := $(sort $(wildcard reference/tests/*_test.c))
TEST_SUPPORT := $(filter-out $(TEST_SRC),$(wildcard reference/tests/*.c))

# ---------------------------------------------------------------- library ---
# One instance per build flavour: plain ($(BUILD)), sanitizers ($(BUILD)/asan),
# libFuzzer-instrumented ($(BUILD)/fuzz).
define lib_rules # $(1)=build dir, $(2)=extra cflags, $(3)=extra ldflags, $(4)=compiler
$(1)/obj/%.o: reference/src/%.c $(LIB_HDR) | $(1)/obj
	$(4) $$(CPPFLAGS_LIB) $$(CFLAGS_LIB) $(2) -c $$< -o $$@
$(1)/libhurray.a: $(patsubst reference/src/%.c,$(1)/obj/%.o,$(LIB_SRC))
	rm -f $$@ && ar rcs $$@ $$^
$(1)/libhurray.so: $(patsubst reference/src/%.c,$(1)/obj/%.o,$(LIB_SRC))
	$(4) -shared $(2) -o $$@ $$^ $(3)
$(1)/tests/%_test: reference/tests/%_test.c $(TEST_SUPPORT) $(1)/libhurray.a $(LIB_HDR) | $(1)/tests
	$(4) $$(CSTD) $$(WARN) $$(OPT) $(2) -Ireference/include -Ireference/src -Ireference/tests \
	  $$< $(TEST_SUPPORT) $(1)/libhurray.a -lcmocka -lm -pthread $(3) -o $$@
$(1)/obj $(1)/tests:
	mkdir -p $$@
endef

SAN_FLAGS      := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_LIB_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_FLAGS     := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
$(eval $(call lib_rules,$(BUILD),,,$(CC)))
$(eval $(call lib_rules,$(BUILD)/asan,$(SAN_FLAGS),$(SAN_FLAGS),$(SAN_CC)))
$(eval $(call lib_rules,$(BUILD)/fuzz,$(FUZZ_LIB_FLAGS),$(FUZZ_LIB_FLAGS),$(FUZZ_CC)))

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
# FUZZ_SECONDS: 45 s x 7 targets keeps fuzz-smoke near 6 minutes on 2 cores.
FUZZ_SECONDS ?= 45
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

$(BUILD)/fuzz/bin/%: fuzz/targets/%.c $(FUZZ_SUPPORT) $(FUZZ_HDR) $(BUILD)/fuzz/libhurray.a $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CSTD) $(FUZZ_WARN) -O1 -g $(FUZZ_FLAGS) -Ireference/include -Ifuzz -Ifuzz/support \
	  $< $(FUZZ_SUPPORT) $(BUILD)/fuzz/libhurray.a -lm -o $@

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
valgrind: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t (valgrind)"; \
	  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	    $$t >/dev/null; done; echo "valgrind: clean"

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
# then fails if any failed.
TESTEES := "libhurray (C)|$(TESTEE)|" \
           "the generator's oracle (Python)|$(abspath $(VENV))/bin/python vectors/gen/testee.py|" \
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
	  HURRAY_VECTORS=$(abspath vectors) $(VENV)/bin/python -m pytest -q harness/tests
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
# and the vectors (every seed runs once under ASan+UBSan before the fuzzing starts). The full
# fuzzer log goes to $(BUILD)/fuzz/<target>.log; its tail is printed. The memory limits are low
# on purpose: a single allocation of FUZZ_MALLOC_MB or more, or a resident size over FUZZ_RSS_MB,
# is a finding -- an input that makes a reader commit far more than it holds (amplification;
# stream.md HR-STREAM-16). The corpus and the regression inputs pass under them.
FUZZ_MALLOC_MB ?= 256
FUZZ_RSS_MB    ?= 512
fuzz-smoke: fuzz-replay $(FUZZ_BINS)
	@set -e; for n in $(FUZZ_NAMES); do \
	  corpus=$(BUILD)/fuzz/corpus/$$n; art=$(BUILD)/fuzz/artifacts/$$n; log=$(BUILD)/fuzz/$$n.log; \
	  mkdir -p $$corpus $$art; echo "== fuzz $$n ($(FUZZ_SECONDS) s)"; \
	  if $(BUILD)/fuzz/bin/$$n -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=$(FUZZ_RSS_MB) -malloc_limit_mb=$(FUZZ_MALLOC_MB) \
	       -print_final_stats=1 -artifact_prefix=$$art/ $(if $(FUZZ_DICT),-dict=$(FUZZ_DICT)) \
	       $$corpus $$(ls -d fuzz/corpus/$$n 2>/dev/null) $(FUZZ_SEEDS) $$(ls -d fuzz/regress/$$n 2>/dev/null) >$$log 2>&1; then \
	    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ *DONE)' $$log || tail -n 3 $$log; \
	  else tail -n 80 $$log; echo "fuzz $$n: FAILED (log $$log, artifacts $$art)"; exit 1; fi; \
	done; echo "fuzz-smoke: $(words $(FUZZ_NAMES)) target(s) clean"

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
	$(VENV)/bin/python -m pytest -q python/tests

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
#   cross-windows  every reference/src/*.c but os_posix.c, mingw-w64 (x86_64-w64-mingw32-gcc,
#                  Debian gcc-mingw-w64-x86-64), linked into hurray.dll; then the OS layer's
#                  Windows check (reference/tests/win32/) run under Wine (Debian wine64)
#   cross-macos    every reference/src/*.c, `zig cc` (PyPI ziglang, in .venv) for
#                  x86_64-macos 10.13 and arm64-macos 11.0, linked into libhurray.dylib
# OS_PORT_PENDING: files still being moved onto the OS layer. The header check lists them
# instead of failing (and fails once one is clean, so that it leaves this list), and
# cross-windows leaves them out. owned.c and pycomposite.c still call madvise (Linux only).
OS_PORT_PENDING ?= python/src/hurray/_hurray/owned.c python/src/hurray/_hurray/pycomposite.c
MINGW_CC     ?= x86_64-w64-mingw32-gcc
ZIG          ?= $(abspath $(VENV))/bin/python -m ziglang
CROSS_CFLAGS := $(CSTD) $(WARN) -O2 -DHURRAY_BUILDING -Ireference/include -Ireference/src
WIN_SRC      := $(filter-out reference/src/os_posix.c $(OS_PORT_PENDING),$(LIB_SRC))
WIN_DIR      := $(BUILD)/cross/windows-x86_64
MACOS_TARGETS := x86_64-macos.10.13 aarch64-macos.11.0

# __USE_MINGW_ANSI_STDIO: mingw-w64's C99 printf family (%zu, %llu), as MSVC's UCRT has.
$(WIN_DIR)/%.o: reference/src/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(MINGW_CC) $(CROSS_CFLAGS) -D__USE_MINGW_ANSI_STDIO=1 -c $< -o $@
$(WIN_DIR)/hurray.dll: $(patsubst reference/src/%.c,$(WIN_DIR)/%.o,$(WIN_SRC))
	$(MINGW_CC) -shared -o $@ $^ -Wl,--out-implib,$(WIN_DIR)/libhurray.dll.a
# reference/tests/win32/os_win32_check.c: os_win32.c's behaviour on Windows (files, paths in
# UTF-8, copy-on-write maps, pipes with timeouts and wakers, replace), run under Wine.
WINE ?= $(or $(shell command -v wine64 2>/dev/null),$(wildcard /usr/lib/wine/wine64))
$(WIN_DIR)/os_win32_check.exe: reference/tests/win32/os_win32_check.c $(WIN_DIR)/hurray.dll
	$(MINGW_CC) $(CROSS_CFLAGS) -D__USE_MINGW_ANSI_STDIO=1 $< \
	  $(patsubst reference/src/%.c,$(WIN_DIR)/%.o,$(WIN_SRC)) -o $@

define macos_rules # $(1) = zig target
$(BUILD)/cross/$(1)/%.o: reference/src/%.c $(LIB_HDR)
	@mkdir -p $$(@D)
	$(ZIG) cc -target $(1) $(CROSS_CFLAGS) -fvisibility=hidden -c $$< -o $$@
$(BUILD)/cross/$(1)/libhurray.dylib: $(patsubst reference/src/%.c,$(BUILD)/cross/$(1)/%.o,$(LIB_SRC))
	$(ZIG) cc -target $(1) -shared -o $$@ $$^
endef
$(foreach t,$(MACOS_TARGETS),$(eval $(call macos_rules,$(t))))

.PHONY: portability-check cross-windows cross-macos
portability-check:
	$(PYTHON) ci/check_os_headers.py --pending $(OS_PORT_PENDING)

cross-windows: $(WIN_DIR)/hurray.dll $(WIN_DIR)/os_win32_check.exe
	@test -n "$(WINE)" || { echo "cross-windows: no wine64 (Debian wine64) to run the check" >&2; exit 1; }
	WINEDEBUG=-all WINEPREFIX=$(abspath $(WIN_DIR))/wineprefix $(WINE) $(WIN_DIR)/os_win32_check.exe
	@echo "cross-windows: $(words $(WIN_SRC)) of $(words $(LIB_SRC)) libhurray sources built for" \
	  "Windows x86_64 and linked; not yet portable: $(or $(filter reference/src/%,$(OS_PORT_PENDING)),none)"

cross-macos: $(foreach t,$(MACOS_TARGETS),$(BUILD)/cross/$(t)/libhurray.dylib)
	@echo "cross-macos: all $(words $(LIB_SRC)) libhurray sources built and linked for $(MACOS_TARGETS)"

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
	bash ci/test_install.sh wheel $(DIST)

packaging-check: deps
	$(VENV)/bin/python ci/check_packaging.py

TEST_STEPS += packaging-check sdist-test wheel-test

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
	$(COV_CC) $(CPPFLAGS_LIB) $(CSTD) $(WARN) $(COV_OPT) $(COV_FLAGS) -c $< -o $@
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
