# contactlab — build, test, demo, figures, bench, sanitize, install.
# `make demo` and `make test` are the two commands a new user needs (see README.md).

PREFIX   ?= /usr/local
BUILD    ?= build
CC       ?= cc
OPT      ?= -O2
THREADS  ?=

SUITESPARSE_INC ?= /usr/include/suitesparse
PKGS := hdf5 jansson gsl lapacke

# Dependency check: pkg-config for the libraries that ship a .pc file, the CHOLMOD header
# for SuiteSparse (Debian's libsuitesparse-dev has no .pc file).
DEPS_OK := $(shell pkg-config --exists $(PKGS) check 2>/dev/null && test -f $(SUITESPARSE_INC)/cholmod.h && echo yes)
ifneq ($(DEPS_OK),yes)
  ifneq ($(filter-out clean help,$(MAKECMDGOALS)),)
    NEED_DEPS := 1
  endif
  ifeq ($(MAKECMDGOALS),)
    NEED_DEPS := 1
  endif
endif
# The packages the tests, the demo, the figures and the gallery use besides the libraries
# (python3-h5py, python3-jsonschema, gnuplot, ...): as a normal user, their checks fail and say
# what is missing.
ifneq ($(filter test demo figures gallery,$(MAKECMDGOALS)),)
  ifneq ($(shell command -v dpkg-query >/dev/null && bash scripts/install-deps.sh --check >/dev/null 2>&1 || echo missing),)
    NEED_TOOLS := 1
  endif
endif
ifneq ($(NEED_DEPS)$(NEED_TOOLS),)
  ifeq ($(shell id -u),0)
    $(info contactlab: some Debian packages are missing: running scripts/install-deps.sh)
    DEPS_RC := $(shell bash scripts/install-deps.sh >&2; echo $$?)
    ifneq ($(DEPS_RC),0)
      $(error scripts/install-deps.sh failed (exit $(DEPS_RC)))
    endif
  else ifdef NEED_DEPS
    $(error missing dependencies; as root run: $(shell bash scripts/install-deps.sh --print))
  else
    $(warning some packages are missing; as root run: $(shell bash scripts/install-deps.sh --print))
  endif
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs-only-L --libs-only-other hdf5 2>/dev/null) -lhdf5 -ljansson -lgsl \
              -lcholmod -lsuitesparseconfig -llapacke -llapack -lblas -lm
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

GIT_DESCRIBE := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
WARN    := -Wall -Wextra -Wpedantic -Wmissing-prototypes
CFLAGS  ?= $(OPT) -g
# The contact kernels (core/contact: distances, barrier Hessians, the collision-set build, CCD) at
# -O3 when the build is at the default -O2: vectorised loops, the same IEEE arithmetic (ISO C mode,
# no floating-point contraction or reassociation), so the same bits; on the bench's slabs the
# exact contact Hessian takes 19 % less time and a set build 9 % less (bench/README.md).
HOT_OPT := $(if $(filter -O2,$(OPT)),-O3)
ALL_CFLAGS := -std=c17 -D_POSIX_C_SOURCE=200809L $(WARN) $(CFLAGS) -fopenmp -Icore/include -Icore \
              -I$(SUITESPARSE_INC) $(PKG_CFLAGS) -DCT_GIT_DESCRIBE='"$(GIT_DESCRIBE)"' $(EXTRA_CFLAGS)
LDFLAGS_ALL := -fopenmp $(LDFLAGS) $(EXTRA_LDFLAGS)

CORE_SRC   := $(sort $(wildcard core/*/*.c))
# models/<name>/*.c, and the test models of tests/models/ (registered too, to run through the CLI)
MODEL_SRC  := $(sort $(wildcard models/*/*.c) $(wildcard tests/models/*.c) models/registry.c)
LIB_SRC    := $(filter-out core/io/main.c,$(CORE_SRC)) $(filter-out models/registry.c,$(MODEL_SRC)) models/registry.c
LIB_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(sort $(LIB_SRC)))
LIB        := $(BUILD)/libcontactlab.a
CLI        := $(BUILD)/contactlab
TEST_SRC   := $(sort $(wildcard tests/check_*.c))
TEST_BIN   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TEST_UTIL  := $(BUILD)/tests/ct_test_util.o
BENCH_BIN  := $(BUILD)/bench/ct_bench
PEER_BIN   := $(BUILD)/bench/peer/cl_driver
# Experiment drivers written in C (experiments/<name>/<prog>.c -> build/experiments/<name>/<prog>)
EXP_SRC    := $(sort $(wildcard experiments/*/*.c))
EXP_BIN    := $(patsubst %.c,$(BUILD)/%,$(EXP_SRC))

DEP_FILES  := $(LIB_OBJ:.o=.d) $(BUILD)/core/io/main.d $(TEST_UTIL:.o=.d) $(TEST_BIN:=.d) $(EXP_BIN:=.d) $(BENCH_BIN).d $(PEER_BIN).d
.DEFAULT_GOAL := all
-include $(DEP_FILES)

.PHONY: all test demo figures bench bench-fclib bench-peer sanitize install clean help deps check-layers newton-table gallery fuzz
all: $(LIB) $(CLI) $(EXP_BIN) $(PEER_BIN)

help:
	@echo "make [all|test|demo|figures|gallery|fuzz|bench|bench-fclib|bench-peer|sanitize|install|clean|check-layers]  (PREFIX=$(PREFIX))"

deps:
	bash scripts/install-deps.sh

# Header dependencies are tracked by the compiler (-MMD -MP: one .d file per object).
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(if $(filter core/contact/%,$<),$(HOT_OPT)) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(CLI): $(BUILD)/core/io/main.o $(LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIB) $(PKG_LIBS)

$(TEST_UTIL): tests/ct_test_util.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -Itests -c $< -o $@

$(BUILD)/tests/%: tests/%.c $(TEST_UTIL) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -Itests $(LDFLAGS_ALL) -o $@ $< $(TEST_UTIL) $(LIB) $(CHECK_LIBS) $(PKG_LIBS)

$(BUILD)/experiments/%: experiments/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP $(LDFLAGS_ALL) -o $@ $< $(LIB) $(PKG_LIBS)

# The include layering of core/ and models/ (base < fem < contact < sim < io; models above sim).
check-layers:
	@python3 scripts/check_layers.py

# The layering check, every Check suite, then the command-line tests (malformed-input corpus,
# end-to-end runs).
test: check-layers all $(TEST_BIN)
	@CT_BUILD=$(BUILD) bash tests/run_tests.sh $(TEST_BIN)

sanitize:
	$(MAKE) BUILD=build-san OPT=-O1 EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	        EXTRA_LDFLAGS="-fsanitize=address,undefined" test

$(BENCH_BIN): bench/ct_bench.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP $(LDFLAGS_ALL) -o $@ $< $(LIB) $(PKG_LIBS)

BENCH_CSV := bench/results/$(shell hostname).csv
# Both scenes (elastic cube, contact slabs), one process per thread count; BENCH_ARGS is passed
# last (e.g. BENCH_ARGS="--scene contact --sizes 20,50"). Passive OpenMP waiting: idle threads
# sleep instead of spinning, which keeps 2-thread timings stable when other jobs share the cores.
# Then the adhesion overhead (issue 4): the contact scene at n = 50 over 6 steps, with and without
# Fang et al. adhesion (eps_c = 1e-3, mu_a = 1), mu = 0 and 0.3 (BENCH_ADH_ARGS appended).
bench: $(BENCH_BIN)
	@mkdir -p bench/results && rm -f $(BENCH_CSV)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive $(BENCH_BIN) --out $(BENCH_CSV) --append --threads 1 --scene elastic,contact $(BENCH_ARGS)
	OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive $(BENCH_BIN) --out $(BENCH_CSV) --append --threads 2 --scene elastic,contact $(BENCH_ARGS)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive $(BENCH_BIN) --out $(BENCH_CSV) --append --threads 1 --scene contact --contact-sizes 50 --steps 6 --mu 0,0.3 $(BENCH_ADH_ARGS)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive $(BENCH_BIN) --out $(BENCH_CSV) --append --threads 1 --scene contact --contact-sizes 50 --steps 6 --mu 0,0.3 --adhesion 1e-3:1 $(BENCH_ADH_ARGS)

# FCLIB: the block PGS against Siconos numerics' fc3d NSGS at equal residual (issue 16; bench/README.md,
# "FCLIB: block PGS against Siconos NSGS"). Bench only: Siconos (Debian libsiconos-numerics-dev) is
# installed by scripts/install-deps.sh libsiconos-numerics-dev when missing and is needed by nothing else; make test / make
# demo never build bench/fclib_siconos.c. FCLIB_ARGS is passed last (e.g. FCLIB_ARGS="--runs 3").
SICONOS_INC  ?= /usr/include/siconos
SICONOS_LIBS ?= -lsiconos_numerics
FCLIB_BIN    := $(BUILD)/bench/fclib_siconos
FCLIB_CSV    := bench/results/fclib_$(shell hostname).csv
-include $(FCLIB_BIN).d

$(FCLIB_BIN): bench/fclib_siconos.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -isystem $(SICONOS_INC) -isystem $(SICONOS_INC)/numerics -MMD -MP $(LDFLAGS_ALL) -o $@ $< \
	    $(LIB) $(SICONOS_LIBS) $(PKG_LIBS)

bench-fclib:
	bash scripts/install-deps.sh libsiconos-numerics-dev
	$(MAKE) $(FCLIB_BIN)
	@mkdir -p bench/results
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive $(FCLIB_BIN) --out $(FCLIB_CSV) $(FCLIB_ARGS)

# The contact kernels side by side with ipc-toolkit (issue 20; bench/peer/README.md). contactlab's
# driver is built with every build (it follows the library's API); ipc-toolkit is built from a folder
# of git mirrors (PEER_MIRROR, nothing downloaded) into bench/peer/work by bench/peer/build.sh, never by
# make test or make demo. PEER_ARGS: environment for bench/peer/run.sh (e.g. PEER_ARGS="SIZES=20 ROUNDS=1").
$(PEER_BIN): bench/peer/cl_driver.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP $(LDFLAGS_ALL) -o $@ $< $(LIB) $(PKG_LIBS)

bench-peer: $(PEER_BIN)
	MIRROR=$(PEER_MIRROR) bash bench/peer/build.sh
	env $(PEER_ARGS) CL_DRIVER=$(PEER_BIN) bash bench/peer/run.sh

# Every Newton regression scene of issue 15 (box-on-box impacts included, ~3 min, one thread) with
# the acceptance checks, the table in tests/newton_table.md (tests/README.md quotes it).
newton-table: all
	CONTACTLAB=$(CLI) bash tests/newton_regression.sh tests/newton_table.md

demo: all
	bash scripts/demo.sh

figures: all
	bash scripts/figures.sh

# docs/gallery.md and docs/gallery/*.png: every experiment's scene at t = 0, one picture and one line each
# (scripts/gallery.py, ~15 s; GALLERY_ARGS="--only NAME" redraws one experiment; scripts/gallery.py --check:
# is it up to date?). The Debian python (h5py, matplotlib) when there is one, as experiments/common.sh.
gallery: all
	@PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3; CT_BUILD=$(BUILD) $$PY scripts/gallery.py $(GALLERY_ARGS)

# libFuzzer on the scene loader, the --set overrides and the mesh readers (clang, ASan + UBSan + LSan;
# tests/fuzz/README.md): FUZZ_SECONDS per target (default 300); exit 1 on any finding.
FUZZ_SECONDS ?= 300
fuzz:
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/contactlab \
	           $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/contactlab
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libcontactlab.a
	install -m 644 core/include/contactlab/*.h $(DESTDIR)$(PREFIX)/include/contactlab/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@SUITESPARSE_INC@|$(SUITESPARSE_INC)|g' \
	    -e 's|@EXTRA_LDFLAGS@|$(EXTRA_LDFLAGS)|g' contactlab.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/contactlab.pc

clean:
	rm -rf build build-san build-fuzz plots/out
