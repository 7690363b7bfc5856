# luthier - build, test, benchmark.  `make test`, `make demo`, `make bench`; see README.md.
CC      ?= cc
CXX     ?= c++
OPT     ?= -O2
WARN    := -Wall -Wextra -Wpedantic -Werror
CFLAGS  ?=
LDLIBS  := -lpthread -lm
BUILD   := build
HEADERS := luthier.h luthier_gemm.h luthier_kernels_x86.h luthier_kernels_neon.h luthier_ops.h luthier_graph.h luthier_zoo.h luthier_gbt.h luthier_tune.h luthier_onnx.h luthier_int8.h

# AArch64 cross toolchain + qemu (optional: NEON tests are skipped without them)
CROSS_CC ?= aarch64-linux-gnu-gcc
QEMU     ?= qemu-aarch64
QEMU_LD  ?= /usr/aarch64-linux-gnu
HAVE_CROSS := $(shell command -v $(CROSS_CC) >/dev/null 2>&1 && command -v $(QEMU) >/dev/null 2>&1 && test -d $(QEMU_LD) && echo yes)

# Optional anchors / reference libraries, detected by trying to link them.
HAVE_OPENBLAS := $(shell printf '\043include <cblas.h>\nint main(void){cblas_sgemm(CblasRowMajor,CblasNoTrans,CblasNoTrans,1,1,1,1,0,1,0,1,0,0,1);return 0;}' | $(CC) -x c - -o /dev/null -lopenblas >/dev/null 2>&1 && echo yes)
HAVE_DNNL     := $(shell printf '\043include <dnnl.h>\nint main(void){return (int)dnnl_sgemm(0,0,0,0,0,0,0,0,0,0,0,0,0);}' | $(CC) -x c - -o /dev/null -ldnnl >/dev/null 2>&1 && echo yes)
ifeq ($(HAVE_OPENBLAS),yes)
ANCHOR_CFLAGS += -DLUTHIER_HAVE_OPENBLAS
ANCHOR_LIBS   += -lopenblas
endif
ifeq ($(HAVE_DNNL),yes)
ANCHOR_CFLAGS += -DLUTHIER_HAVE_DNNL
ANCHOR_LIBS   += -ldnnl
endif

# Rebuild when the compiler or the detected options change.
FLAGS_STAMP := $(BUILD)/.flags-$(shell echo '$(CC) $(OPT) $(CFLAGS) $(ANCHOR_CFLAGS) $(ANCHOR_LIBS)' | cksum | cut -d' ' -f1)
$(FLAGS_STAMP): | $(BUILD)
	@rm -f $(BUILD)/.flags-*; touch $@

TEST_SRC  := $(wildcard tests/*.c tests/*.h) $(FLAGS_STAMP)
BENCH_SRC := $(wildcard bench/*.c bench/*.h) $(FLAGS_STAMP)

.PHONY: all test test-x86 test-neon test-compile test-nothreads sanitize tsan bench demo examples run-examples test-cmake cross fuzz fuzz-build fuzz-one fuzz-regress onnx-torchvision clean

all: $(BUILD)/test_luthier $(BUILD)/luthier-bench examples

$(BUILD):
	@mkdir -p $(BUILD)

# ---- tests --------------------------------------------------------------------------------------
$(BUILD)/test_luthier: $(TEST_SRC) $(HEADERS) | $(BUILD)
	$(CC) -std=c99 $(OPT) -g $(WARN) $(CFLAGS) $(ANCHOR_CFLAGS) -I. tests/test_main.c -o $@ $(ANCHOR_LIBS) $(LDLIBS)

$(BUILD)/test_luthier.arm64: $(TEST_SRC) $(HEADERS) | $(BUILD)
	$(CROSS_CC) -std=c99 $(OPT) -g $(WARN) -I. tests/test_main.c -o $@ -static $(LDLIBS)

test-x86: $(BUILD)/test_luthier
	$(BUILD)/test_luthier

test-neon:
ifeq ($(HAVE_CROSS),yes)
	@$(MAKE) --no-print-directory $(BUILD)/test_luthier.arm64
	QEMU_CPU=cortex-a72 $(QEMU) -L $(QEMU_LD) $(BUILD)/test_luthier.arm64 --small-models
	QEMU_CPU=neoverse-n1 $(QEMU) -L $(QEMU_LD) $(BUILD)/test_luthier.arm64 --quick --filter int8
	QEMU_CPU=neoverse-n1 $(QEMU) -L $(QEMU_LD) $(BUILD)/test_luthier.arm64 --quick --filter fp16
	QEMU_CPU=neoverse-n1 $(QEMU) -L $(QEMU_LD) $(BUILD)/test_luthier.arm64 --quick --filter wino16
	QEMU_CPU=neoverse-n1 $(QEMU) -L $(QEMU_LD) $(BUILD)/test_luthier.arm64 --quick --filter ukernels_all
	QEMU_CPU=max $(QEMU) -L $(QEMU_LD) $(BUILD)/test_luthier.arm64 --quick --filter int8
else
	@echo "test-neon: SKIPPED - needs $(CROSS_CC) and $(QEMU): apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"
endif

# Headers compile warning-free as C99, C11 and C++ (x86-64 and, when present, AArch64).
test-compile: | $(BUILD)
	@printf '#define LUTHIER_IMPLEMENTATION\n#include "luthier.h"\nint main(void){return luthier_kernel_count() > 0 ? 0 : 1;}\n' > $(BUILD)/tu.c
	@printf '#define LUTHIER_IMPLEMENTATION\n#include "luthier.h"\n#include "luthier_gemm.h"\n#include "luthier_kernels_x86.h"\n#include "luthier_kernels_neon.h"\n#include "luthier_ops.h"\n#include "luthier_graph.h"\n#include "luthier_zoo.h"\n#include "luthier_onnx.h"\n#include "luthier_int8.h"\nint main(void){return 0;}\n' > $(BUILD)/tu_all.c
	$(CC)  -std=c99   $(WARN) -Wstrict-prototypes -fsyntax-only -I. $(BUILD)/tu.c
	$(CC)  -std=c99   $(WARN) -fsyntax-only -I. $(BUILD)/tu_all.c
	$(CXX) -x c++ -std=c++11 $(WARN) -fsyntax-only -I. $(BUILD)/tu_all.c
	$(CC)  -std=c11   $(WARN) -Wstrict-prototypes -fsyntax-only -I. $(BUILD)/tu.c
	$(CC)  -std=c99   $(WARN) -DLUTHIER_STATIC -DLUTHIER_NO_X86_KERNELS -fsyntax-only -I. $(BUILD)/tu.c
	$(CC)  -std=c99   $(WARN) -DLUTHIER_NO_THREADS -fsyntax-only -I. $(BUILD)/tu.c
	$(CXX) -x c++ -std=c++11 $(WARN) -fsyntax-only -I. $(BUILD)/tu.c
	$(CXX) -x c++ -std=c++17 $(WARN) -fsyntax-only -I. $(BUILD)/tu.c
	$(CC)  -std=c99   $(WARN) -O0 -c -o $(BUILD)/tu_O0.o -I. $(BUILD)/tu.c # (debug builds: code generation at -O0)
ifeq ($(HAVE_CROSS),yes)
	$(CROSS_CC) -std=c99 $(WARN) -Wstrict-prototypes -fsyntax-only -I. $(BUILD)/tu.c
	$(CROSS_CC) -std=c99 $(WARN) -fsyntax-only -I. $(BUILD)/tu_all.c
	$(CROSS_CC) -std=c11 $(WARN) -DLUTHIER_NO_NEON_KERNELS -fsyntax-only -I. $(BUILD)/tu.c
	-command -v aarch64-linux-gnu-g++ >/dev/null && aarch64-linux-gnu-g++ -x c++ -std=c++11 $(WARN) -fsyntax-only -I. $(BUILD)/tu.c
else
	@echo "test-compile: AArch64 compile checks SKIPPED (no $(CROSS_CC))"
endif

# The test command of the README: everything that can run on this machine. The test programs
# are compiled first, JOBS at a time (the suite's compiles take most of its time on one core),
# then the suites run one after the other.
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
TEST_BINS  = $(BUILD)/test_luthier $(BUILD)/test_luthier_nothreads $(EXAMPLES) $(if $(HAVE_CROSS),$(BUILD)/test_luthier.arm64)
test:
	@$(MAKE) --no-print-directory -j$(JOBS) $(TEST_BINS)
	@$(MAKE) --no-print-directory test-compile test-x86 test-nothreads test-neon run-examples test-cmake
	@echo "make test: all suites passed"

# ThreadSanitizer on the suite (quick sizes), and the suite built without threads.
$(BUILD)/test_luthier_tsan: $(TEST_SRC) $(HEADERS) | $(BUILD)
	$(CC) -std=c99 -O1 -g -fsanitize=thread $(WARN) -I. tests/test_main.c -o $@ $(LDLIBS)

tsan: $(BUILD)/test_luthier_tsan
	TSAN_OPTIONS=halt_on_error=1 $(BUILD)/test_luthier_tsan --quick

$(BUILD)/test_luthier_nothreads: $(TEST_SRC) $(HEADERS) | $(BUILD)
	$(CC) -std=c99 $(OPT) -g $(WARN) -DLUTHIER_NO_THREADS -I. tests/test_main.c -o $@ -lm

test-nothreads: $(BUILD)/test_luthier_nothreads
	$(BUILD)/test_luthier_nothreads --quick

# ASan + UBSan run of the whole suite (part of CI). allocator_may_return_null: a failed allocation
# (a hostile model describing a 100+ GB network) must reach the library as NULL, which it reports
# as OUT_OF_MEMORY, instead of aborting the sanitizer run.
$(BUILD)/test_luthier_asan: $(TEST_SRC) $(HEADERS) | $(BUILD)
	$(CC) -std=c99 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer $(WARN) $(ANCHOR_CFLAGS) -I. tests/test_main.c -o $@ $(ANCHOR_LIBS) $(LDLIBS)

sanitize: $(BUILD)/test_luthier_asan
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 $(BUILD)/test_luthier_asan --quick

# ---- benchmarks, demo, examples -------------------------------------------------------------------
$(BUILD)/luthier-bench: $(BENCH_SRC) $(HEADERS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(ANCHOR_CFLAGS) -I. bench/luthier_bench.c -o $@ $(ANCHOR_LIBS) $(LDLIBS)

bench: $(BUILD)/luthier-bench
	@echo "built $(BUILD)/luthier-bench: try '$(BUILD)/luthier-bench gemm' or '$(BUILD)/luthier-bench --help'"

EXAMPLES := $(patsubst examples/%.c,$(BUILD)/example_%,$(wildcard examples/*.c))
$(BUILD)/example_%: examples/%.c $(HEADERS) $(FLAGS_STAMP) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

examples: $(EXAMPLES)

# Every example runs and must succeed (each checks its own results; part of `make test`).
run-examples: examples
	$(BUILD)/example_gemm_basic
	$(BUILD)/example_gemm_demo
	$(BUILD)/example_layer_table 32 14 32 3 1
	$(BUILD)/example_onnx_run tests/data/onnx/resnet18_small.onnx --tune 2 --records $(BUILD)/resnet18_small.records \
	    --input tests/data/onnx/resnet18_small/input_0.pb --expect tests/data/onnx/resnet18_small/output_0.pb
	$(BUILD)/example_onnx_run tests/data/onnx/resnet18_small.onnx --records $(BUILD)/resnet18_small.records \
	    --input tests/data/onnx/resnet18_small/input_0.pb --expect tests/data/onnx/resnet18_small/output_0.pb
	$(BUILD)/example_firmware --tune $(BUILD)/kws.records 2
	$(BUILD)/example_firmware $(BUILD)/kws.records
	$(BUILD)/example_resnet18_demo 4 $(BUILD)

# Cross-compiled for an AArch64 board (static: copy and run, no libraries needed there).
CROSS_PROGRAMS := $(BUILD)/arm64/luthier-bench $(patsubst examples/%.c,$(BUILD)/arm64/example_%,$(wildcard examples/*.c))
cross: $(CROSS_PROGRAMS)
	@echo "built $(CROSS_PROGRAMS)"
$(BUILD)/arm64/luthier-bench: $(BENCH_SRC) $(HEADERS)
	@mkdir -p $(BUILD)/arm64
	$(CROSS_CC) -std=c99 $(OPT) $(WARN) -I. bench/luthier_bench.c -o $@ -static $(LDLIBS)
$(BUILD)/arm64/example_%: examples/%.c $(HEADERS)
	@mkdir -p $(BUILD)/arm64
	$(CROSS_CC) -std=c99 $(OPT) $(WARN) -I. $< -o $@ -static $(LDLIBS)
# the plan an AArch64 board makes, per step (work and shapes), for bench/rk3399_estimate.py
$(BUILD)/arm64/plan_steps: bench/plan_steps.c $(HEADERS) luthier_zoo.h
	@mkdir -p $(BUILD)/arm64
	$(CROSS_CC) -std=c99 $(OPT) $(WARN) -I. bench/plan_steps.c -o $@ -static $(LDLIBS)
# a zoo network's fp16 plan against its fp32 plan: conversions, fp16 steps, arenas, cosine
$(BUILD)/arm64/h16_steps: bench/h16_steps.c $(HEADERS) luthier_zoo.h
	@mkdir -p $(BUILD)/arm64
	$(CROSS_CC) -std=c99 $(OPT) $(WARN) -I. bench/h16_steps.c -o $@ -static $(LDLIBS)

# CMake: a project consumes luthier::luthier (header-only) and luthier::impl (luthier.c).
test-cmake: | $(BUILD)
	@if command -v cmake >/dev/null; then \
	  cmake -S tests/cmake -B $(BUILD)/cmake -DLUTHIER_DIR=$(CURDIR) -DCMAKE_BUILD_TYPE=Release >/dev/null && \
	  cmake --build $(BUILD)/cmake >/dev/null && $(BUILD)/cmake/uses_impl && $(BUILD)/cmake/header_only; \
	else echo "test-cmake: SKIPPED - needs cmake (apt-get install cmake)"; fi

# The main job: detect the clusters, tune ResNet-18 (DEMO_BUDGET seconds), run it, report.
DEMO_BUDGET ?= 60
demo: $(BUILD)/example_resnet18_demo
	$(BUILD)/example_resnet18_demo $(DEMO_BUDGET) $(BUILD)

# ---- fuzzing (clang + libFuzzer; not part of `make test`) ------------------------------------------
# Targets tests/fuzz_<T>.c: onnx (loader, then plan + run), graph (graph API + engine), records
# (tuner records reader), calib (calibration reader + int8 plan), clusters (LUTHIER_CLUSTERS).
# The engine is compiled once, instrumented (ASan + UBSan + coverage), into build/fuzz/engine.o,
# and every target links it. By default without the x86/NEON microkernels (the scalar ones run:
# the engine's logic is all there, and it compiles in about a minute); FUZZ_SIMD=1 keeps them
# (instrumented they take ~25 CPU minutes to compile) in build/fuzz/engine_simd.o and *_simd
# binaries. Each run starts from a corpus in build/fuzz/ seeded from tests/data/fuzz/<T>/ (and
# tests/data/onnx for onnx); what it finds lands in build/fuzz/artifacts_<T>/.
#   make fuzz FUZZ_TIME=30                    every target FUZZ_TIME seconds, one after the other
#   make fuzz-one T=records FUZZ_TIME=600     one of them
#   make fuzz-regress                         each target once over its seeds and the fixed
#                                             reproducers (tests/data/fuzz/<T>/crashes/)
# FUZZ_NICE="nice -n 10" shares a busy machine; FUZZ_ARGS adds libFuzzer options.
FUZZ_TIME    ?= 60
FUZZ_CC      ?= clang
FUZZ_NICE    ?=
FUZZ_ARGS    ?=
FUZZ_SIMD    ?= 0
FUZZ_TARGETS := onnx graph records calib clusters gbt
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_SFX     := $(if $(filter 1,$(FUZZ_SIMD)),_simd)
FUZZ_ENGINE  := $(FUZZ_DIR)/engine$(FUZZ_SFX).o
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c99 -O1 -gline-tables-only $(WARN) $(FUZZ_SAN)
FUZZ_BINS    := $(patsubst %,$(FUZZ_DIR)/fuzz_%$(FUZZ_SFX),$(FUZZ_TARGETS))
HAVE_FUZZ_CC := $(shell command -v $(FUZZ_CC) >/dev/null 2>&1 && echo yes)

$(FUZZ_ENGINE): $(filter-out luthier_onnx.h,$(HEADERS))
	@mkdir -p $(FUZZ_DIR)
	@printf '#define LUTHIER_IMPLEMENTATION\n$(if $(FUZZ_SFX),,#define LUTHIER_NO_X86_KERNELS\n#define LUTHIER_NO_NEON_KERNELS\n)#include "luthier.h"\n' > $(FUZZ_DIR)/engine$(FUZZ_SFX).c
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -I. -c $(FUZZ_DIR)/engine$(FUZZ_SFX).c -o $@

$(FUZZ_DIR)/fuzz_%$(FUZZ_SFX): tests/fuzz_%.c tests/fuzz_common.h luthier_onnx.h $(FUZZ_ENGINE)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -DFUZZ_SEPARATE_IMPL -I. $< $(FUZZ_ENGINE) -o $@ -lpthread -lm

fuzz-build:
ifeq ($(HAVE_FUZZ_CC),yes)
	@$(MAKE) --no-print-directory $(FUZZ_BINS)
else
	@echo "fuzz: SKIPPED - needs $(FUZZ_CC) with libFuzzer (apt-get install clang)"
endif

fuzz: fuzz-build
ifeq ($(HAVE_FUZZ_CC),yes)
	@for t in $(FUZZ_TARGETS); do $(MAKE) --no-print-directory fuzz-one T=$$t || exit 1; done
endif

fuzz-one:
ifeq ($(HAVE_FUZZ_CC),yes)
	@test -n "$(T)" && test -f tests/fuzz_$(T).c || { echo "fuzz-one: T=<one of: $(FUZZ_TARGETS)>"; exit 2; }
	@$(MAKE) --no-print-directory $(FUZZ_DIR)/fuzz_$(T)$(FUZZ_SFX)
	@mkdir -p $(FUZZ_DIR)/corpus_$(T) $(FUZZ_DIR)/artifacts_$(T)
	@find tests/data/fuzz/$(T) -maxdepth 1 -type f -exec cp {} $(FUZZ_DIR)/corpus_$(T)/ \; 2>/dev/null; \
	 if [ "$(T)" = onnx ]; then find tests/data/onnx -name '*.onnx' -o -name '*.pb' | xargs -I{} cp {} $(FUZZ_DIR)/corpus_$(T)/; fi
	$(FUZZ_NICE) $(FUZZ_DIR)/fuzz_$(T)$(FUZZ_SFX) -max_total_time=$(FUZZ_TIME) -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_DIR)/artifacts_$(T)/ $(FUZZ_ARGS) $(FUZZ_DIR)/corpus_$(T)
else
	@echo "fuzz: SKIPPED - needs $(FUZZ_CC) with libFuzzer (apt-get install clang)"
endif

fuzz-regress: fuzz-build
ifeq ($(HAVE_FUZZ_CC),yes)
	@for t in $(FUZZ_TARGETS); do \
	  files=$$(find tests/data/fuzz/$$t -maxdepth 1 -type f 2>/dev/null; find tests/data/fuzz/$$t/crashes -type f 2>/dev/null); \
	  if [ $$t = onnx ]; then files="$$files $$(find tests/data/onnx -name '*.onnx')"; fi; \
	  test -z "$$files" || $(FUZZ_DIR)/fuzz_$$t$(FUZZ_SFX) -runs=1 $$files >$(FUZZ_DIR)/regress_$$t.log 2>&1 || \
	    { tail -40 $(FUZZ_DIR)/regress_$$t.log; echo "fuzz-regress: $$t FAILED"; exit 1; }; \
	  echo "fuzz-regress: $$t ok"; done
endif

# On demand, not part of `make test` (needs Debian's python3-torch and python3-torchvision, takes
# minutes): torchvision networks and BERT-like encoders exported from PyTorch to ONNX (opsets 13
# and 17, files under $(BUILD)/onnx_torchvision), loaded, planned and run by tests/onnx_check.c and
# compared with PyTorch. ONNX_ARGS: e.g. --models resnet50,bert --loads 7 (see the script).
ONNX_PY   ?= /usr/bin/python3
ONNX_ARGS ?=
$(BUILD)/onnx_check: tests/onnx_check.c $(HEADERS) $(FLAGS_STAMP) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) -I. tests/onnx_check.c -o $@ $(LDLIBS)

onnx-torchvision: $(BUILD)/onnx_check
	@$(ONNX_PY) -c 'import torch' 2>/dev/null || { echo "onnx-torchvision: SKIPPED - needs PyTorch for $(ONNX_PY) (apt-get install python3-torch python3-torchvision)"; exit 0; }; \
	$(ONNX_PY) tests/onnx_torchvision.py --checker $(BUILD)/onnx_check --out $(BUILD)/onnx_torchvision $(ONNX_ARGS)

clean:
	rm -rf $(BUILD)
