# kprof — hand-written Makefile (uftrace style).
#   make [O=build/] [V=1] [DEBUG=1] [ASAN=1] [COVERAGE=1]
#   make check | install [PREFIX=/usr/local DESTDIR=] | clean | man | hdrcheck | golden-update
#   make format | format-check   (clang-format 19, not part of check)

PREFIX    ?= /usr/local
DESTDIR   ?=
O         ?= build
CUDA_HOME ?= /usr/local/cuda
CC        ?= cc

VERSION := 0.1.0

CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Iinclude -I$(O) -DKPROF_VERSION='"$(VERSION)"'
ifeq ($(DEBUG),1)
  OPT := -O0 -g
else
  OPT := -O2 -g
endif
ifeq ($(ASAN),1)
  # UBSan reports are fatal, so a unit test that reaches undefined behaviour fails
  OPT += -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
  LDASAN := -fsanitize=address,undefined
endif
ifeq ($(COVERAGE),1)
  OPT += --coverage
  LDASAN += --coverage
endif
CFLAGS  := $(CFLAGS_BASE) $(OPT) $(EXTRA_CFLAGS)
# libyaml (capture --config only) is linked statically: kprof must start where libyaml-0.so.2
# is not installed (the GPU machines, users' hosts); Debian's libyaml-dev ships libyaml.a.
YAML_LIB := -Wl,-Bstatic -lyaml -Wl,-Bdynamic
# libzstd (.json.zst traces) likewise: Debian's libzstd-dev ships libzstd.a, and kprof needs
# only libz, libm and libc at run time (tests/golden/build-runtime-libs)
ZSTD_LIB := -Wl,-Bstatic -lzstd -Wl,-Bdynamic
# ISA-L (fast gzip inflate) is not linked: Debian ships no libisal.a, so src/ingest/input.c includes
# <isa-l/igzip_lib.h> (libisal-dev) and dlopen()s libisal.so.2, falling back to zlib without it
LDLIBS  := -lz $(ZSTD_LIB) $(YAML_LIB) -lm -lpthread -ldl

# CUPTI: capture/ is compiled against CUDA only when the toolkit is present.
# Never link the libcuda stub: cudart/cupti/cublas load libcuda at run time.
HAVE_CUPTI := $(shell test -f $(CUDA_HOME)/include/cupti.h && echo 1)
ifeq ($(HAVE_CUPTI),1)
  CUDA_LIBDIR := $(CUDA_HOME)/lib64
  CUPTI_LIBDIR := $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/lib64) $(CUDA_LIBDIR))
  CAPTURE_CFLAGS := -DKPROF_HAVE_CUPTI -I$(CUDA_HOME)/include -I$(CUDA_HOME)/extras/CUPTI/include
  CAPTURE_SO := $(O)/kprof-capture.so
  CAPTURE_LDLIBS := -L$(CUDA_LIBDIR) -L$(CUPTI_LIBDIR) -Wl,-rpath,$(CUDA_LIBDIR) \
	-Wl,-rpath,$(CUPTI_LIBDIR) -lcupti -lcublasLt -lcublas -lcudart -lstdc++
  # capture/kernels/*.cu: kprof's own kernels (softmax, im2col, membound-*), compiled by nvcc into
  # kprof-capture.so (each a translation unit; the .cuh files are included by them)
  NVCC ?= $(CUDA_HOME)/bin/nvcc
  NVCC_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90
  CAP_CU_OBJS := $(patsubst capture/%.cu,$(O)/capture/%.cu.o,$(wildcard capture/kernels/*.cu))
endif

ifneq ($(V),1)
  Q := @
  quiet = @printf '  %-4s %s\n' $(1) $(2);
else
  Q :=
  quiet =
endif

# src/ by layer (base, ingest, model, analysis, report, cli), capture/ by role (record, intercept,
# workloads, kernels, suites): each folder's files, one level down
LIB_SRCS  := $(filter-out src/cli/main.c,$(wildcard src/*/*.c))
CAP_SRCS  := $(wildcard capture/*.c capture/*/*.c)
CAP_HDRS  := $(wildcard capture/*/*.h)
LIB_OBJS  := $(patsubst %.c,$(O)/%.o,$(LIB_SRCS)) $(O)/src/devdb-builtin.o
CAP_OBJS  := $(patsubst %.c,$(O)/%.o,$(CAP_SRCS))
# kprof-capture.so: the library again, position-independent, with CUPTI compiled in; not the
# command wiring (cmd-*.c) nor the suite parser (suite.c, libyaml): kprof parses the options and
# the suite file, kprof-capture.so runs the cases
SO_SRCS   := $(filter-out src/cli/%.c,$(LIB_SRCS)) $(filter-out capture/suites/suite.c,$(CAP_SRCS))
SO_OBJS   := $(patsubst %.c,$(O)/pic/%.o,$(SO_SRCS)) $(O)/pic/src/devdb-builtin.o
UNIT_SRCS := $(shell find tests/unit -name 'test-*.c' | LC_ALL=C sort)
UNIT_BINS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRCS))
HDRS      := $(wildcard include/kprof/*.h)

all: $(O)/kprof $(CAPTURE_SO)

# kprof itself never links CUDA: analyze and diff start in milliseconds with a few MB of
# memory.  `kprof capture` dlopen()s kprof-capture.so, which links CUPTI, cuBLAS and cudart.
$(O)/kprof: $(O)/src/cli/main.o $(O)/libkprof.a
	$(call quiet,LINK,$@)$(CC) $(LDASAN) -o $@ $^ $(LDLIBS)

$(O)/kprof-capture.so: $(SO_OBJS) $(CAP_CU_OBJS)
	$(call quiet,LINK,$@)$(CC) $(LDASAN) -shared -Wl,-Bsymbolic -o $@ $^ $(CAPTURE_LDLIBS) $(LDLIBS)

$(O)/pic/src/%.o: src/%.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS) -fPIC -DKPROF_CAPTURE_SO -c -o $@ $<

$(O)/pic/src/devdb-builtin.o: $(O)/src/devdb-builtin.c
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS) -fPIC -c -o $@ $<

$(O)/pic/capture/%.o: capture/%.c $(HDRS) $(CAP_HDRS) Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS) -fPIC $(CAPTURE_CFLAGS) -Icapture -c -o $@ $<

$(O)/libkprof.a: $(LIB_OBJS) $(CAP_OBJS)
	$(call quiet,AR,$@)rm -f $@ && ar rcs $@ $^

$(O)/src/%.o: src/%.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS) $(EXTRA_DEFS) -c -o $@ $<

$(O)/capture/%.o: capture/%.c $(HDRS) $(CAP_HDRS) Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS) -Icapture -c -o $@ $<

ifeq ($(HAVE_CUPTI),1)
# cupti_profiler_host.h includes <string> (C++) and uses none of it: an empty one for C
$(O)/pic/capture/record/metrics.o: CAPTURE_CFLAGS += -Icapture/record/cshim
$(O)/src/cli/cmd-capture.o: EXTRA_DEFS := -DKPROF_CAPTURE_DL -DKPROF_LIBDIR='"$(PREFIX)/lib/kprof"'
$(O)/capture/%.cu.o: capture/%.cu $(CAP_HDRS) $(wildcard capture/kernels/*.cuh) Makefile
	@mkdir -p $(dir $@)
	$(call quiet,NVCC,$<)$(NVCC) -O3 -std=c++17 $(NVCC_ARCH) -Xcompiler -fPIC -Icapture -c -o $@ $<

# kprof-inject.so: the CUDA injection library of `kprof capture -- <cmd>` (CUDA_INJECTION64_PATH).
# Only InitializeInjection is exported.  No sanitizers or coverage: it is loaded into the
# traced program, where their runtimes are not first in the process.
INJECT_OBJS := $(patsubst capture/%.c,$(O)/inject/%.o,capture/intercept/inject.c \
	capture/record/recorder.c capture/record/ctrace.c capture/record/kmetrics.c capture/record/recfile.c capture/record/metrics.c capture/record/cmem.c) \
	$(O)/inject/src/base/jsonw.o $(O)/inject/src/base/utf8.o $(O)/inject/src/base/hmap.o \
	$(O)/inject/src/base/arena.o
$(O)/inject/record/metrics.o: CAPTURE_CFLAGS += -Icapture/record/cshim
all: $(O)/kprof-inject.so
$(O)/kprof-inject.so: $(INJECT_OBJS)
	$(call quiet,LINK,$@)$(CC) -shared -o $@ $^ -L$(CUPTI_LIBDIR) -Wl,-rpath,$(CUPTI_LIBDIR) \
	  -lcupti -lstdc++ -lpthread -ldl -lm
# kprof-shim.so: LD_PRELOAD'ed into the command (and its NVTX_INJECTION64_PATH): cuBLAS and
# cuBLASLt GEMM wrappers and the NVTX callbacks.  No DT_NEEDED on any CUDA library: the real
# functions are looked up in whatever copy the program loaded (doc/capture-any.md §1.3).
SHIM_OBJS := $(O)/shim/intercept/shim.o $(O)/shim/intercept/ltshape.o \
	$(O)/shim/intercept/cudnnrec.o $(O)/shim/src/base/hmap.o $(O)/shim/src/base/arena.o
all: $(O)/kprof-shim.so
$(O)/kprof-shim.so: $(SHIM_OBJS)
	$(call quiet,LINK,$@)$(CC) -shared -o $@ $^ -lpthread -ldl
# kprof's Python start-up hook (--torch): beside kprof in the build tree, as the libraries are
# (and the op observer's C++ source, which the hook compiles against torch's headers)
PYHOOK := $(patsubst capture/intercept/python/%,$(O)/python/%,$(wildcard capture/intercept/python/*.py \
	capture/intercept/python/*.cpp))
all: $(PYHOOK)
$(O)/python/%: capture/intercept/python/%
	@mkdir -p $(dir $@)
	$(call quiet,CP,$<)cp $< $@
$(O)/shim/%.o: capture/%.c $(CAP_HDRS) Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS_BASE) -O2 -g $(EXTRA_CFLAGS) -fPIC -fvisibility=hidden \
	  -isystem $(CUDA_HOME)/include -DKPROF_SHIM -Icapture -c -o $@ $<
$(O)/shim/src/%.o: src/%.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS_BASE) -O2 -g $(EXTRA_CFLAGS) -fPIC -fvisibility=hidden \
	  -c -o $@ $<
# test-shim: kprof-shim.so against a fake libcublas.so.13 (tests/unit/fake/)
# and a fake libcudnn.so.9 (the graph API)
$(O)/tests/capture/intercept/test-shim: $(O)/kprof-shim.so $(O)/tests/fake/libcublas.so.13 \
	$(O)/tests/fake/libcudnn.so.9 $(O)/tests/fake/libcudart.so.13
# (and NVTX ranges through nvtx3's header-only loader: the CUDA include path)
ifeq ($(HAVE_CUPTI),1)
$(O)/tests/capture/intercept/test-shim: CFLAGS += -DKPROF_TEST_NVTX -I$(CUDA_HOME)/include
endif
$(O)/tests/fake/libcublas.so.13: tests/unit/fake/fake-cublas.c Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS_BASE) -O2 -fPIC -shared -Wl,-soname,libcublas.so.13 -o $@ $<
$(O)/tests/fake/libcudart.so.13: tests/unit/fake/fake-cudart.c Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS_BASE) -O2 -fPIC -shared -Wl,-soname,libcudart.so.13 -o $@ $<
$(O)/tests/fake/libcudnn.so.9: tests/unit/fake/fake-cudnn.c Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS_BASE) -O2 -fPIC -shared -Wl,-soname,libcudnn.so.9 -o $@ $<

# tests/gpu/gemm_prog, conv_prog: plain CUDA programs calling cuBLAS / cuBLASLt and cuDNN
# (tests/gpu/capture_any.sh)
# tests/gpu/dram_ceiling: the copy / read-2-write-1 / read bandwidth a plain kernel reaches
# (tests/gpu/workloads_vs_torch.py prints it beside the memory-bound workloads)
all: $(O)/gemm_prog $(O)/conv_prog $(O)/metrics_prog $(O)/dram_ceiling
$(O)/dram_ceiling: tests/gpu/dram_ceiling.cu Makefile
	$(call quiet,NVCC,$<)$(NVCC) -O3 $(NVCC_ARCH) -o $@ $< -Xlinker -rpath=$(CUDA_LIBDIR)
$(O)/metrics_prog: tests/gpu/metrics_prog.cu Makefile
	$(call quiet,NVCC,$<)$(NVCC) -O2 $(NVCC_ARCH) -o $@ $< -L$(CUDA_LIBDIR) -lcublas \
	  -Xlinker -rpath=$(CUDA_LIBDIR)
$(O)/conv_prog: tests/gpu/conv_prog.cu Makefile
	$(call quiet,NVCC,$<)$(NVCC) -O2 $(NVCC_ARCH) -o $@ $< -L$(CUDA_LIBDIR) -lcudnn \
	  -Xlinker -rpath=$(CUDA_LIBDIR)
$(O)/gemm_prog: tests/gpu/gemm_prog.cu Makefile
	$(call quiet,NVCC,$<)$(NVCC) -O2 $(NVCC_ARCH) -o $@ $< -L$(CUDA_LIBDIR) -lcublasLt -lcublas \
	  -Xlinker -rpath=$(CUDA_LIBDIR)
$(O)/inject/%.o: capture/%.c $(HDRS) $(CAP_HDRS) Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS_BASE) -O2 -g $(EXTRA_CFLAGS) -fPIC -fvisibility=hidden \
	  $(CAPTURE_CFLAGS) -DKPROF_INJECT -Icapture -c -o $@ $<
$(O)/inject/src/%.o: src/%.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS_BASE) -O2 -g $(EXTRA_CFLAGS) -fPIC -fvisibility=hidden \
	  -DKPROF_INJECT -c -o $@ $<
endif

# device_db/*.txt compiled into the binary as one string.
$(O)/src/devdb-builtin.c: $(sort $(wildcard device_db/*.txt)) Makefile
	@mkdir -p $(dir $@)
	$(call quiet,GEN,$@){ echo '/* generated from device_db/ by make */'; \
	  echo '#include "kprof/devdb.h"'; \
	  echo 'const char devdb_builtin_text[] = '; \
	  cat $(sort $(wildcard device_db/*.txt)) | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/'; \
	  echo ';'; } > $@

$(O)/src/devdb-builtin.o: $(O)/src/devdb-builtin.c
	$(call quiet,CC,$<)$(CC) $(CFLAGS) -Wno-missing-variable-declarations -c -o $@ $<

$(O)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h tests/unit/*/*.h) $(O)/libkprof.a
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS) -Icapture -Itests/unit -Wno-missing-prototypes -o $@ $< \
	  $(O)/libkprof.a $(LDASAN) -lcmocka $(LDLIBS)

unit: $(UNIT_BINS)
	@fail=0; for t in $(UNIT_BINS); do \
	  t=$$(cd $$(dirname $$t) && pwd)/$$(basename $$t); \
	  (cd tests/unit && KPROF_TESTDATA=../../testdata $$t >$$t.log 2>&1) \
	    || { echo "FAIL $$t (see $$t.log)"; tail -30 $$t.log; fail=1; }; \
	done; test $$fail = 0 && echo "  unit: $(words $(UNIT_BINS)) suites passed"

# all, not only kprof: capture-installed installs kprof-capture.so, and with -j a .so still
# being relinked was installed stale beside a new kprof (a crash in capture_run_cmd)
golden: all
	$(Q)KPROF=$(abspath $(O)/kprof) tests/golden/run.sh

golden-update: all
	$(Q)KPROF=$(abspath $(O)/kprof) tests/golden/run.sh --update

# html/svg reports: well-formed, self-contained, under 2 MB (tests/tools/xmlcheck.c)
$(O)/tests/xmlcheck: tests/tools/xmlcheck.c
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS) -o $@ $< $(LDASAN)

html: $(O)/kprof $(O)/tests/xmlcheck
	$(Q)KPROF=$(abspath $(O)/kprof) XMLCHECK=$(abspath $(O)/tests/xmlcheck) tests/html/check.sh

$(O)/tests/augcheck: tests/tools/augcheck.c
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(CFLAGS) -o $@ $< $(LDASAN)

augment: $(O)/kprof $(O)/tests/augcheck
	$(Q)KPROF=$(abspath $(O)/kprof) AUGCHECK=$(abspath $(O)/tests/augcheck) tests/augment/check.sh

# every text output of every command over hostile names: escaped, tables intact, no formula
# cells, well-formed html/svg, json that parses (tests/hostile/check.py)
hostile: $(O)/kprof $(O)/tests/xmlcheck
	$(Q)KPROF=$(abspath $(O)/kprof) XMLCHECK=$(abspath $(O)/tests/xmlcheck) tests/hostile/check.py

# every `$ ...` example of README.md, run as written on the bundled traces
readme: $(O)/kprof
	$(Q)KPROF=$(abspath $(O)/kprof) tests/readme/check.sh

# the pages in a headless browser (Debian chromium, installed here when missing)
# --jobs 1 and --jobs N: identical output, warnings, errors (tests/jobs/check.sh)
jobs: $(O)/kprof
	$(Q)KPROF=$(abspath $(O)/kprof) tests/jobs/check.sh

# skipped values cost constant memory: a 50 MB string under 32 MB of RSS (tests/bounds/check.py)
bounds: $(O)/kprof
	$(Q)KPROF=$(abspath $(O)/kprof) python3 tests/bounds/check.py $(O)/tests

check-html: $(O)/kprof $(O)/tests/xmlcheck
	$(Q)KPROF=$(abspath $(O)/kprof) XMLCHECK=$(abspath $(O)/tests/xmlcheck) tests/html/browser.sh

hdrcheck:
	$(Q)for h in $(HDRS); do \
	  echo "#include \"$${h#include/}\"" | $(CC) $(CFLAGS) -x c -fsyntax-only - || exit 1; done; \
	  echo "  hdrcheck: $(words $(HDRS)) headers self-contained"

check-man:
	$(Q)for m in man/*.1; do groff -man -ww -z $$m 2>&1 | grep . && exit 1; done; true

# the libFuzzer harnesses (tests/fuzz/) built, not run: a harness that no longer links protects
# nothing.  Needs clang with libFuzzer (scripts/install-deps.sh installs clang and
# libclang-rt-14-dev); run them with tests/fuzz/run.sh.
fuzz-build: $(O)/src/devdb-builtin.c
	$(Q)O=$(O) LDLIBS='$(LDLIBS)' tests/fuzz/run.sh -b

# circular dependencies between the files of src/ and capture/ (a file using a symbol another
# defines, by nm on the objects), and arrows up the folders' layers (tests/tools/depcheck.py)
# (none allowed: issue 29)
depcheck: all
	$(Q)python3 tests/tools/depcheck.py --strict --objdir $(O) $(if $(CAPTURE_SO),--objdir $(O)/pic)

# no function of 120 lines or more in src/ and capture/, CUDA kernels included (issue 29;
# scripts/funclen.py --max lists each one and fails)
funclen:
	$(Q)python3 scripts/funclen.py --max 120 $(sort $(wildcard src/*/*.c capture/*.c capture/*/*.c \
	  capture/kernels/*.cu))

# the link libraries, for tests/fuzz/run.sh (one list: the fuzzers link what kprof links)
print-ldlibs:
	@echo '$(LDLIBS)'

# kprof's torch hook without torch: sitecustomize chaining, KPROF_TORCH, module names, stepping
# aside, against a stand-in torch (tests/pyhook/test_torch_hook.py)
pyhook:
	$(Q)python3 tests/pyhook/test_torch_hook.py

# kprof's op observer (C++, compiled by the torch hook against torch's headers) against a
# stand-in of those headers: its range messages as written and as nvtxmsg.c parses them
CXX ?= g++
OBS_T := $(O)/tests/obs
$(OBS_T)/test-obs: tests/obs/test-obs.cpp capture/intercept/python/kprof_torch_obs.cpp \
		tests/obs/mock/ATen/record_function.h capture/intercept/nvtxmsg.c \
		capture/intercept/hostops.h
	@mkdir -p $(OBS_T)
	$(call quiet,CXX,$@)$(CXX) -std=c++17 -O1 -DNDEBUG -Wall -Wextra -Werror -Itests/obs/mock \
		-c capture/intercept/python/kprof_torch_obs.cpp -o $(OBS_T)/obs.o
	$(Q)$(CC) $(CFLAGS) -Icapture -c capture/intercept/nvtxmsg.c -o $(OBS_T)/nvtxmsg.o
	$(Q)$(CXX) -std=c++17 -Wall -Wextra -Werror -Itests/obs/mock -Icapture -Iinclude \
		tests/obs/test-obs.cpp $(OBS_T)/obs.o $(OBS_T)/nvtxmsg.o -rdynamic -ldl -o $@
obs-check: $(OBS_T)/test-obs
	$(Q)$(OBS_T)/test-obs

# -g module / -g source on real H200 traces against an independent computation (issue 24)
modules: $(O)/kprof
	$(Q)python3 tests/tools/module-check.py $(O)/kprof testdata/torch211-h200/*.json.gz

# kprof analyze --memory against the [memory] events recomputed in Python (issue 25)
memory-check: $(O)/kprof
	$(Q)python3 tests/tools/memory-check.py $(O)/kprof testdata/torch211-h200/*_mem.json.gz

# kprof diff --memory against each side's kprof analyze --memory (issue 25)
MEMDIFF_T = testdata/torch211-h200
memdiff-check: $(O)/kprof
	$(Q)python3 tests/tools/memdiff-check.py $(O)/kprof $(MEMDIFF_T)/llama_eager_b4_mem.json.gz:$(MEMDIFF_T)/llama_eager_b8_mem.json.gz \
		$(MEMDIFF_T)/llama_eager_mem.json.gz:$(MEMDIFF_T)/llama_wide_mem.json.gz $(MEMDIFF_T)/bert_eager_mem.json.gz:$(MEMDIFF_T)/bert_eager_mem.json.gz

# contrib/dask/kprof_dask.py on a LocalCluster of 4 worker processes: 64 ranks merged in trees of
# fan-in 8 and 2 give kprof analyze --ranks's json bytes, a malformed rank its located error and
# status 3 (issue 26; tests/dask/check.py).  Debian's python3, which has python3-distributed
# (scripts/install-deps.sh); a python3 without it says SKIP.
DASK_PYTHON ?= /usr/bin/python3
dask-check: $(O)/kprof
	$(Q)$(DASK_PYTHON) tests/dask/check.py $(O)/kprof

check: all unit golden html augment hostile jobs bounds hdrcheck readme fuzz-build depcheck funclen \
	pyhook obs-check modules memory-check memdiff-check dask-check

# clang-format 19 only (Debian 12: clang-format-19): .clang-format needs 16 or later, and each
# version lays some lines out differently, so one version keeps `make format-check` stable.
# Not part of check: CI and contributors may lack it.  Every C/CUDA file of ours; none is
# third-party.
CLANG_FORMAT ?= $(shell command -v clang-format-19 2>/dev/null || \
	{ clang-format --version 2>/dev/null | grep -q 'version 19\.' && command -v clang-format; })
FORMAT_SRCS := $(sort $(wildcard src/*/*.c include/kprof/*.h capture/*.c capture/*/*.c \
	capture/*/*.h capture/*/*.cu \
	$(UNIT_SRCS) tests/unit/*.h tests/unit/*/*.h tests/unit/fake/*.c tests/tools/*.c tests/fuzz/*.c tests/fuzz/*.h \
	tests/gpu/*.cu))

format:
	$(Q)if [ -z "$(CLANG_FORMAT)" ]; then \
	  echo "kprof: error: clang-format 19 not found (apt-get install clang-format-19)" >&2; exit 4; fi; \
	$(CLANG_FORMAT) -i --style=file $(FORMAT_SRCS) && echo "  format: $(words $(FORMAT_SRCS)) files"

format-check:
	$(Q)if [ -z "$(CLANG_FORMAT)" ]; then \
	  echo "  format-check: skipped, clang-format 19 not found (apt-get install clang-format-19)"; \
	  exit 0; fi; \
	bad=0; for f in $(FORMAT_SRCS); do \
	  $(CLANG_FORMAT) --style=file $$f | cmp -s - $$f || { echo "  not formatted: $$f"; bad=1; }; \
	done; \
	[ $$bad = 0 ] && echo "  format-check: $(words $(FORMAT_SRCS)) files formatted"; \
	[ $$bad = 0 ] || { echo "kprof: error: run 'make format'" >&2; exit 1; }

deps:
	$(Q)scripts/install-deps.sh

demo: all
	$(Q)scripts/demo.sh $(O)/kprof

man:
	$(Q)for m in man/*.1; do groff -man -ww -z $$m || exit 1; done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(O)/kprof $(DESTDIR)$(PREFIX)/bin/kprof
ifeq ($(HAVE_CUPTI),1)
	install -d $(DESTDIR)$(PREFIX)/lib/kprof
	install -m 755 $(O)/kprof-capture.so $(DESTDIR)$(PREFIX)/lib/kprof/kprof-capture.so
	install -m 755 $(O)/kprof-inject.so $(DESTDIR)$(PREFIX)/lib/kprof/kprof-inject.so
	install -m 755 $(O)/kprof-shim.so $(DESTDIR)$(PREFIX)/lib/kprof/kprof-shim.so
	install -d $(DESTDIR)$(PREFIX)/lib/kprof/python
	install -m 644 capture/intercept/python/*.py capture/intercept/python/*.cpp \
		$(DESTDIR)$(PREFIX)/lib/kprof/python/
endif
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/

clean:
	rm -rf $(O)

.PHONY: obs-check dask-check modules memory-check memdiff-check pyhook deps demo all unit golden golden-update html augment hostile jobs bounds readme check-html hdrcheck depcheck funclen check check-man man install clean \
	format format-check fuzz-build print-ldlibs
.SUFFIXES:
