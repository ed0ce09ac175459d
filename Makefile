# arenac — an offline memory planner compiler for ONNX models.
#
#   make demo     install missing packages, build, plan testdata/lenet.onnx
#   make check    install missing packages, build, run every test
#   make bench    planner benchmarks (arena vs. lower bound, times)
#   make sanitize the test suite under ASan+UBSan in $(ASAN_BUILD)
#   make fuzz     libFuzzer over the whole pipeline for FUZZ_SECONDS
#   make examples build examples/ against headers arenac writes for them
#   make install  PREFIX=/usr/local: arenac, its man page, the reference
#                 runtime (libarenac_rt.a, arenac_rt.h, arenac_rt.pc)
#   make uninstall the same PREFIX (and DESTDIR) removes them
#
# BUILD selects the build folder, so several builds (e.g. sanitizers) can
# live side by side.

BUILD   ?= build
PREFIX  ?= /usr/local
CC      ?= cc
PYTHON  ?= /usr/bin/python3
VERSION := 0.1.0
ONNX_PROTO ?= /usr/include/onnx/onnx.proto

PKGS    := libcgraph libgvc libprotobuf-c
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# arenac loads Graphviz only when it draws a picture (codegen/gvload.c), by
# the soname of the libgvc it was built against; the tests link Graphviz
# to read the pictures back.
GV_LIBS    = $(shell pkg-config --libs libcgraph libgvc 2>/dev/null)
GVC_SONAME = $(shell objdump -p $$($(CC) -print-file-name=libgvc.so) \
		2>/dev/null | awk '$$1 == "SONAME" {print $$2}')

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
OPT     ?= -O2 -g
CFLAGS  ?=
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN) $(SANFLAGS) \
	-DARENAC_VERSION='"$(VERSION)"' -Ifrontend -Iops -Itrain -Iplanner -Icodegen \
	-I$(BUILD)/gen $(PKG_CFLAGS) $(CFLAGS)
LDLIBS  = $(shell pkg-config --libs libprotobuf-c 2>/dev/null) -lm -ldl

LIB_SRCS  := $(sort $(wildcard frontend/*.c ops/*.c train/*.c planner/*.c \
		codegen/*.c))
CLI_SRCS  := $(sort $(wildcard cli/*.c))
TEST_SRCS := $(sort $(wildcard tests/test_*.c))
GEN_C     := $(BUILD)/gen/onnx.pb-c.c
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/onnx.pb-c.o
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
LIB       := $(BUILD)/libarenac.a
ARENAC    := $(BUILD)/arenac
# The reference runtime: a library of its own, never linked into arenac.
RT_SRCS   := $(sort $(wildcard runtime/*.c))
RT_OBJS   := $(RT_SRCS:%.c=$(BUILD)/obj/%.o)
RT_LIB    := $(BUILD)/libarenac_rt.a
RT_DEPS   := $(RT_LIB) $(BUILD)/obj/tests/pbread.o

.PHONY: all deps demo check test test-build test-runtime target-runtime runtime firmware examples sanitize \
	fuzz bench install uninstall clean

# Sanitizer and fuzzing builds live in their own folders, so that their
# objects never mix with the plain build's.
ASAN_BUILD   ?= build-asan
FUZZ_BUILD   ?= build-fuzz
SAN_COMMON   := -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SECONDS ?= 60
CHECK_FUZZ_SECONDS ?= 60
# Builds and test suites run this many at a time (tests/run.sh).
NPROC := $(shell nproc 2>/dev/null || echo 1)

all: $(ARENAC)

deps:
	@sh scripts/deps.sh

$(GEN_C): $(ONNX_PROTO)
	@mkdir -p $(BUILD)/gen
	cp $(ONNX_PROTO) $(BUILD)/gen/onnx.proto
	cd $(BUILD)/gen && protoc-c --c_out=. onnx.proto

$(BUILD)/gen/onnx.pb-c.h: $(GEN_C)

$(BUILD)/obj/gen/onnx.pb-c.o: $(GEN_C)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(OPT) $(SANFLAGS) $(PKG_CFLAGS) -I$(BUILD)/gen -c $< -o $@

$(BUILD)/obj/%.o: %.c $(BUILD)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/codegen/gvload.o: ALL_CFLAGS += -DAR_GVC_SONAME='"$(GVC_SONAME)"'

$(LIB): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(ARENAC): $(CLI_OBJS) $(LIB)
	$(CC) $(SANFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS)

# GCC's -O2 cost model leaves the kernels' inner loops scalar.  The
# runtime also builds warning-free under -Wconversion, as for a target.
$(RT_OBJS): ALL_CFLAGS += -fvect-cost-model=dynamic -Wconversion

# The runtime alone, for a microcontroller, by a cross compiler:
#   make runtime CROSS=arm-none-eabi- CPU=cortex-m4
# builds $(XBUILD)/libarenac_rt.a from runtime/*.c only (no protoc-c, no
# onnx.proto, no pkg-config: nothing of the host's); each function and
# table in a section of its own, so that the firmware's link
# (--gc-sections) keeps only the kernels its model reaches.  CPU_FLAGS_x
# are the ABI flags of the common Cortex-M cores (the hard-float ones
# with their FPU); without CROSS the host's compiler builds it the same
# way.
CROSS ?=
CPU   ?=
XBUILD := $(BUILD)/rt-$(if $(CROSS),$(CROSS:%-=%),host)$(if $(CPU),-$(CPU))
XCC    := $(if $(CROSS),$(CROSS)gcc,$(CC))
XAR    := $(if $(CROSS),$(CROSS)ar,$(AR))
CPU_FLAGS_cortex-m0 := -mthumb
CPU_FLAGS_cortex-m0plus := -mthumb
CPU_FLAGS_cortex-m3 := -mthumb
CPU_FLAGS_cortex-m4 := -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16
CPU_FLAGS_cortex-m7 := -mthumb -mfloat-abi=hard -mfpu=fpv5-d16
CPU_FLAGS_cortex-m33 := -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16
XFLAGS := -std=c11 -Os -g $(WARN) -Wconversion -Wtype-limits -Wformat \
	-ffunction-sections -fdata-sections \
	$(if $(CPU),-mcpu=$(CPU) $(CPU_FLAGS_$(CPU))) $(XCFLAGS)
XRT_OBJS := $(RT_SRCS:runtime/%.c=$(XBUILD)/obj/%.o)

runtime: $(XBUILD)/libarenac_rt.a

$(XBUILD)/obj/%.o: runtime/%.c
	@mkdir -p $(dir $@)
	$(XCC) $(XFLAGS) -MMD -MP -c $< -o $@

$(XBUILD)/libarenac_rt.a: $(XRT_OBJS)
	rm -f $@
	$(XAR) rcs $@ $^

$(RT_LIB): $(RT_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# Unit tests may also check the planner against the reference runtime.
$(BUILD)/tests/%: tests/%.c $(LIB) $(RT_LIB) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -Iruntime -o $@ $< $(LIB) $(RT_LIB) \
		$(LDLIBS) $(GV_LIBS) -lcmocka

# Built with SANFLAGS holding -fsanitize=fuzzer-no-link,... (see fuzz:).
$(BUILD)/fuzz/%: fuzz/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $< $(LIB) $(LDLIBS)

# examples/lenet.c against LeNet's header and weights file, once per layout
# of the inputs and outputs (in the arena, in the program's buffers), each
# in a folder of its own; the weights go to their own section, as a
# firmware's linker script would place them in flash.
EX_BUILD := $(BUILD)/examples
EX_OPTS_arena :=
EX_OPTS_io_separate := --io separate

examples: $(EX_BUILD)/arena/lenet $(EX_BUILD)/io_separate/lenet

$(EX_BUILD)/%/lenet: examples/lenet.c testdata/lenet.onnx runtime/arenac_rt.h \
		$(ARENAC) $(RT_LIB)
	@mkdir -p $(@D)
	$(ARENAC) -q --dim N=1 $(EX_OPTS_$*) -o $(@D)/lenet_arena.h \
		--weights $(@D)/lenet_weights.c testdata/lenet.onnx
	$(CC) $(SANFLAGS) -std=c99 -pedantic $(OPT) $(WARN) -Werror \
		'-DLENET_WEIGHTS_SECTION=__attribute__((section(".rodata.lenet")))' \
		-Iruntime -I$(@D) -o $@ examples/lenet.c $(@D)/lenet_weights.c \
		$(RT_LIB) -lm

# One model to a Cortex-M4 firmware run in QEMU (scripts/firmware.sh):
#   make firmware MODEL=m.onnx FLAGS="arenac options" INPUTS="in0.pb ..." \
#        OUTPUTS="out0.pb ..."
MODEL ?=
FLAGS ?=
INPUTS ?=
OUTPUTS ?=
HOST_IO := $(BUILD)/host_io

$(HOST_IO): firmware/host_io.c $(RT_DEPS) $(BUILD)/obj/gen/onnx.pb-c.o
	$(CC) $(ALL_CFLAGS) -Itests -Iruntime -o $@ $< \
		$(BUILD)/obj/tests/pbread.o $(BUILD)/obj/gen/onnx.pb-c.o \
		$(RT_LIB) $(LDLIBS)

firmware: $(ARENAC) $(HOST_IO) $(RT_LIB)
	@[ -n "$(MODEL)" ] || { echo "make firmware: MODEL=FILE.onnx" \
		"is needed" >&2; exit 2; }
	@$(MAKE) --no-print-directory runtime CROSS=arm-none-eabi- \
		CPU=cortex-m4
	@sh scripts/firmware.sh $(BUILD) "$(MODEL)" "$(FLAGS)" "$(INPUTS)" \
		"$(OUTPUTS)"

demo: deps
	@$(MAKE) --no-print-directory $(ARENAC) $(RT_DEPS)
	@sh scripts/demo.sh $(BUILD)

# CC carries SANFLAGS for the scripts that link programs against the
# (then instrumented) libraries.
test:
	@$(MAKE) --no-print-directory -j$(NPROC) test-build
	@BUILD=$(BUILD) PYTHON=$(PYTHON) CC="$(CC) $(SANFLAGS)" \
		JOBS=$(NPROC) sh tests/run.sh

# What the suites run.  With Arm's compiler (and no sanitizers: the
# target build is not instrumented) also the Cortex-M4 runtime the
# firmware suites link, built here so that no suite builds it beside
# another one reading it; -Werror keeps it warning-free.
ARM_GCC := $(shell command -v arm-none-eabi-gcc 2>/dev/null)
test-build: $(ARENAC) $(TEST_BINS) $(RT_DEPS) $(HOST_IO) \
	$(if $(ARM_GCC),$(if $(SANFLAGS),,target-runtime))

target-runtime:
	@$(MAKE) --no-print-directory runtime CROSS=arm-none-eabi- \
		CPU=cortex-m4 XCFLAGS=-Werror

# Just the reference runtime's end-to-end tests.
test-runtime: $(ARENAC) $(RT_DEPS)
	@BUILD=$(BUILD) PYTHON=$(PYTHON) CC="$(CC) $(SANFLAGS)" sh tests/e2e_runtime.sh
	@BUILD=$(BUILD) CC="$(CC) $(SANFLAGS)" $(PYTHON) tests/e2e_node_runtime.py

check: deps
	@$(MAKE) --no-print-directory test
	@$(MAKE) --no-print-directory sanitize
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS)

# Every finding aborts (no recovery), so the suite fails on the first one.
# ARENAC_SANITIZE tells the e2e scripts to skip their slowest runs, where
# the sanitizers add nothing to what make test checks: each sanitized
# process costs ~0.1 s of CPU before it does any work (shadow memory, the
# leak scan at exit), so a suite of hundreds of small arenac runs pays for
# process starts.  Such a suite runs a stated subset here (e2e_nodesuite:
# every 4th node test and each op's first, 333 of 932; e2e_node_runtime:
# every test, arenac's runs without the leak scan), and all of it in
# make test; make fuzz seeds its libFuzzer run (ASan, UBSan, leaks) with
# every node model besides.  Each script's header says what it skips.
sanitize:
	@ARENAC_SANITIZE=1 UBSAN_OPTIONS=print_stacktrace=1 \
		LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp \
		$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) \
		OPT="-O1 -g" SANFLAGS="-fsanitize=address,undefined $(SAN_COMMON)" \
		test

fuzz:
	@$(MAKE) --no-print-directory -j$(NPROC) BUILD=$(FUZZ_BUILD) CC=clang \
		OPT="-O1 -g" \
		SANFLAGS="-fsanitize=fuzzer-no-link,address,undefined $(SAN_COMMON)" \
		$(FUZZ_BUILD)/fuzz/fuzz_pipeline
	@sh scripts/fuzz.sh $(FUZZ_BUILD)/fuzz/fuzz_pipeline $(FUZZ_SECONDS)

bench: deps
	@$(MAKE) --no-print-directory $(ARENAC) $(RT_DEPS)
	@BUILD=$(BUILD) PYTHON=$(PYTHON) sh scripts/bench.sh

# What install puts where (uninstall removes exactly these).
INSTALLED := bin/arenac share/man/man1/arenac.1 lib/libarenac_rt.a \
	include/arenac_rt.h lib/pkgconfig/arenac_rt.pc

# The runtime's pkg-config file, for `cc $(pkg-config --cflags --libs
# arenac_rt)`, written for this PREFIX (pkg-config --define-prefix
# relocates it).
install: $(ARENAC) $(RT_LIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 755 $(ARENAC) $(DESTDIR)$(PREFIX)/bin/arenac
	install -m 644 doc/arenac.1 $(DESTDIR)$(PREFIX)/share/man/man1/arenac.1
	install -m 644 $(RT_LIB) $(DESTDIR)$(PREFIX)/lib/libarenac_rt.a
	install -m 644 runtime/arenac_rt.h $(DESTDIR)$(PREFIX)/include/arenac_rt.h
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' \
		'includedir=$${prefix}/include' '' 'Name: arenac_rt' \
		'Description: reference runtime that runs arenac memory plans' \
		'Version: $(VERSION)' 'Cflags: -I$${includedir}' \
		'Libs: -L$${libdir} -larenac_rt -lm' \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/arenac_rt.pc

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(RT_OBJS:.o=.d) $(XRT_OBJS:.o=.d)
