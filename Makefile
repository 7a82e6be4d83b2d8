# hurray — the one entry point. See README.md.
#   make conformance   build what is needed, run the corpus through C (and Python), print the report
#   make test          everything CI checks
SHELL := /bin/bash
.DEFAULT_GOAL := all

BUILD   ?= build
CC      ?= cc
PYTHON  ?= python3
VENV    ?= .venv

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
define lib_rules # $(1)=build dir, $(2)=extra cflags, $(3)=extra ldflags
$(1)/obj/%.o: reference/src/%.c $(LIB_HDR) | $(1)/obj
	$$(CC) $$(CPPFLAGS_LIB) $$(CFLAGS_LIB) $(2) -c $$< -o $$@
$(1)/libhurray.a: $(patsubst reference/src/%.c,$(1)/obj/%.o,$(LIB_SRC))
	rm -f $$@ && ar rcs $$@ $$^
$(1)/libhurray.so: $(patsubst reference/src/%.c,$(1)/obj/%.o,$(LIB_SRC))
	$$(CC) -shared $(2) -o $$@ $$^ $(3)
$(1)/tests/%_test: reference/tests/%_test.c $(TEST_SUPPORT) $(1)/libhurray.a $(LIB_HDR) | $(1)/tests
	$$(CC) $$(CSTD) $$(WARN) $$(OPT) $(2) -Ireference/include -Ireference/src -Ireference/tests \
	  $$< $(TEST_SUPPORT) $(1)/libhurray.a -lcmocka -lm $(3) -o $$@
$(1)/obj $(1)/tests:
	mkdir -p $$@
endef

SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
$(eval $(call lib_rules,$(BUILD),,))
$(eval $(call lib_rules,$(BUILD)/asan,$(SAN_FLAGS),$(SAN_FLAGS)))

TESTS      := $(patsubst reference/tests/%_test.c,$(BUILD)/tests/%_test,$(TEST_SRC))
ASAN_TESTS := $(patsubst reference/tests/%_test.c,$(BUILD)/asan/tests/%_test,$(TEST_SRC))

.PHONY: all lib deps test test-c sanitize valgrind conformance bench fuzz-smoke clean
all: lib
lib: $(BUILD)/libhurray.a $(BUILD)/libhurray.so

deps:
	bash ci/bootstrap

# C unit tests (cmocka), each binary on its own.
test-c: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; $$t; done

# The same tests under ASan+UBSan.
sanitize: $(ASAN_TESTS)
	@set -e; for t in $(ASAN_TESTS); do echo "== $$t (asan+ubsan)"; \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 $$t; done

# The plain tests under valgrind: no leaks, no invalid reads.
valgrind: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t (valgrind)"; \
	  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	    $$t >/dev/null; done; echo "valgrind: clean"

test: deps test-c sanitize valgrind

clean:
	rm -rf $(BUILD)
