# The two commands of the README:
#   make demo   set up .venv with what the demo needs (requirements/demo.lock: TensorFlow, numpy,
#               the build's tools), build and install the package, run examples/demo.py
#   make test   set up .venv with the whole development environment (requirements/dev.lock: the
#               demo's pins plus the test, kernel and benchmark tools), then the whole test suite
# Both share one .venv: `make test` after `make demo` adds what the tests need, `make demo` after
# `make test` finds everything there. Each step is redone only when what it reads changed (stamps
# under .venv/: the locks, the package's sources, the build's variables), so a second `make demo`
# with nothing changed only runs the demo; a rebuild takes unchanged objects from
# build/object-cache/ (tf_ge_custom/_build/object_cache.py).
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
PIP     = $(PY) -m pip --disable-pip-version-check
PYTEST_ARGS ?=
# PyPI triton for the kernel interpreter tests (see requirements/triton-interp.txt)
TRITON_INTERP ?= .cache/triton-interp
STEP    = @printf '==> %s\n'
# pip install showing what it installs and the build's own lines; the installed build's record
MAKE_REPORT = $(PY) tf_ge_custom/_build/make_report.py

# What the package's build reads (setup.py and its steps, the sources they compile or copy,
# the packages they install): a change to any of them, tracked or new, reinstalls the package.
# README.md (only the package's long description) is left out on purpose.
PACKAGE_SOURCES := $(wildcard $(shell git ls-files --cached --others --exclude-standard -- \
  setup.py pyproject.toml MANIFEST.in tf_ge_custom kernels tf_ops ge_ops framework 2>/dev/null))
ifeq ($(PACKAGE_SOURCES),)
PACKAGE_SOURCES := $(shell find setup.py pyproject.toml MANIFEST.in tf_ge_custom kernels tf_ops \
  ge_ops framework -type f -not -name '*.py[co]' -not -path 'tf_ge_custom/_lib/*' \
  -not -path 'tf_ge_custom/opp/*' -not -name build_info.json 2>/dev/null)
endif
# The variables the build reads from the environment (docs/install.md), and the list of sources
# (a removed file changes no file's time): .venv/.build-inputs is rewritten when they change,
# which reinstalls.
BUILD_ENV := $(strip $(shell env | LC_ALL=C grep -E \
  '^(ASCEND_HOME_PATH|CXX|TF_GE_CUSTOM_(XLA|KERNELS_DIR|REQUIRE_GE|PYTHON|BUILD_CACHE|BUILD_JOBS))=' \
  | LC_ALL=C sort))
BUILD_INPUTS = $(BUILD_ENV) $(PACKAGE_SOURCES)
BUILD_INPUTS_FILE = $(VENV)/.build-inputs
ifneq ($(wildcard $(VENV)/.created),)
ifneq ($(strip $(BUILD_INPUTS)),$(strip $(file < $(BUILD_INPUTS_FILE))))
$(file > $(BUILD_INPUTS_FILE),$(BUILD_INPUTS))
endif
endif

# The host's CPU (uname -m). TensorFlow's aarch64 wheels are another project at another version
# (requirements/demo-aarch64.in), so an aarch64 host's demo installs requirements/demo-aarch64.lock.
# The development tools (requirements/dev.lock: tensorflow-cpu, the CPU torch, triton-ascend) are
# pinned for x86_64 only: `make test` says so on another host (docs/install.md, "Hosts").
HOST_ARCH ?= $(shell uname -m)
ON_AARCH64 = $(filter aarch64 arm64,$(HOST_ARCH))
DEMO_LOCK = $(if $(ON_AARCH64),requirements/demo-aarch64.lock,requirements/demo.lock)
NO_TEST_ON_AARCH64 = echo "error: make test's tools (requirements/dev.lock: tensorflow-cpu, torch, triton-ascend) are pinned for x86_64 only, and this host is $(HOST_ARCH); make demo builds and runs the package here (docs/install.md, Hosts)"; exit 1

# Python 3.7: a pyenv install if there is one, else python3.7 on PATH
PYTHON37 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.7*/bin/python3.7) python3.7)
# TF Adapter's TensorFlows (requirements/compat-<name>-py3.7.lock): the package is built and
# tested against each of them too, on Python 3.7.
COMPAT  = tf1.15 tf2.6

.PHONY: all demo test test-quick test-compat install venv demo-venv bench lock lock-aarch64 check-aarch64 clean distclean triton-interp
all: test

$(VENV)/.created:
	$(STEP) "set-up: a virtual environment in $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q pip==26.3
	touch $@

# What the demo and the package's build need, nothing else.
$(VENV)/.demo-deps: $(DEMO_LOCK) $(VENV)/.created
	$(STEP) "set-up: $(DEMO_LOCK) (TensorFlow, numpy, the build's tools) into $(VENV)"
	$(MAKE_REPORT) pip install -r $(DEMO_LOCK)
	$(PIP) check
	touch $@

demo-venv: $(VENV)/.demo-deps

# The development environment: the demo's pins plus the test, kernel and benchmark tools.
$(VENV)/.deps: requirements/dev.lock $(VENV)/.demo-deps
	$(if $(ON_AARCH64),@$(NO_TEST_ON_AARCH64))
	$(STEP) "set-up: requirements/dev.lock (the demo's, plus the test, kernel and benchmark tools) into $(VENV)"
	$(MAKE_REPORT) pip install -r requirements/dev.lock
	touch $@

venv: $(VENV)/.deps

$(TRITON_INTERP)/.deps: requirements/triton-interp.txt $(VENV)/.deps
	rm -rf $(TRITON_INTERP)
	$(PIP) install -q --no-deps --target $(TRITON_INTERP) -r requirements/triton-interp.txt
	touch $@

triton-interp: $(TRITON_INTERP)/.deps

# (make -n of a fresh checkout has no .venv to write into)
$(BUILD_INPUTS_FILE): | $(VENV)/.created
	$(if $(wildcard $(VENV)/.created),$(file > $@,$(BUILD_INPUTS)))

# Built against the venv's TensorFlow, as a user's `pip install .` would be; pip's build lines
# (tf-ge-custom build: ...) are shown as they come, the rest of its output on a failure.
$(VENV)/.installed: $(VENV)/.demo-deps $(PACKAGE_SOURCES) $(BUILD_INPUTS_FILE)
	$(STEP) "build: the package against $(VENV)'s TensorFlow (pip install .)"
	$(MAKE_REPORT) pip install --no-deps --force-reinstall --no-build-isolation .
	touch $@

install: $(VENV)/.installed

demo: install
	@$(MAKE_REPORT) summary
	$(STEP) "run: examples/demo.py"
	$(PY) examples/demo.py

# The suite as parts (pytest processes over disjoint paths) taken longest first by two workers
# where there are 2 cores (tests/run_suite.py; TEST_JOBS=1: one process); PYTEST_ARGS naming
# paths: those only.
TEST_JOBS ?=
test: venv install triton-interp
	TF_GE_CUSTOM_TRITON_INTERP=$(abspath $(TRITON_INTERP)) $(VENV)/bin/python tests/run_suite.py $(if $(TEST_JOBS),--jobs $(TEST_JOBS)) -- $(PYTEST_ARGS)
	@if command -v $(PYTHON37) >/dev/null 2>&1; then $(MAKE) test-compat; \
	elif [ "$$TF_GE_CUSTOM_STRICT_SKIPS" = 1 ]; then \
	  echo "error: no Python 3.7 ($(PYTHON37)) for the TF 1.15 / 2.6.5 compat run"; exit 1; \
	else echo "note: no Python 3.7 ($(PYTHON37)): skipped the TF 1.15 / 2.6.5 compat run (make test-compat)"; fi

# make test-quick: the quick tier, by rule (tests/quick_tier.py): the whole of tests/, each test
# skipping the moment it would start a process (so nothing is compiled and no TensorFlow starts
# but this pytest's own), except the smoke runs of each console command (tests marked smoke).
# A subset by design, so not strict: make test is the check.
test-quick: venv install triton-interp
	TF_GE_CUSTOM_STRICT_SKIPS= TF_GE_CUSTOM_QUICK=1 TF_GE_CUSTOM_TRITON_INTERP=$(abspath $(TRITON_INTERP)) \
	  $(VENV)/bin/pytest -q tests $(PYTEST_ARGS)

.venv-%/.deps: requirements/compat-%-py3.7.lock
	$(PYTHON37) -m venv .venv-$*
	.venv-$*/bin/python -m pip install -q --disable-pip-version-check pip==23.3.2 setuptools==68.0.0 wheel==0.42.0
	.venv-$*/bin/python -m pip install -q --disable-pip-version-check -r $<
	touch $@

test-compat: $(foreach c,$(COMPAT),.venv-$(c)/.deps)
	set -e; for c in $(COMPAT); do \
	  .venv-$$c/bin/python -m pip install -q --disable-pip-version-check --no-deps --force-reinstall --no-build-isolation . ; \
	  .venv-$$c/bin/pytest tests/compat/test_*.py tests/compat/adapter_user_commands.py $(PYTEST_ARGS); \
	done

# Every benchmark, then benchmarks/results/README.md + throughput.png (benchmarks/run_all.py);
# BENCH_QUICK=1: a brief run of each (CI checks the files); BENCH_OUT: another folder;
# BENCH_MAX_ROUNDS=N: cap the throughput benchmarks' rounds (a noisy machine).
BENCH_OUT ?= benchmarks/results
bench: venv install
	$(PY) benchmarks/run_all.py --out $(BENCH_OUT) $(if $(filter 1 yes true,$(BENCH_QUICK)),--quick) \
	  $(if $(BENCH_MAX_ROUNDS),--max-rounds $(BENCH_MAX_ROUNDS))

# dev.lock: the venv as it is (with its build tools); demo.lock: what requirements/demo.in needs,
# as pip resolves it at dev.lock's versions (tests/package/test_locks.py holds the two together).
# A lock whose text does not change keeps its time, so nothing is reinstalled for it.
lock: venv
	{ head -2 requirements/dev.lock; $(PIP) freeze --all --exclude pip --exclude-editable \
	  | grep -v '^tf-ge-custom'; } > requirements/dev.lock.new
	cmp -s requirements/dev.lock.new requirements/dev.lock || mv requirements/dev.lock.new requirements/dev.lock
	rm -f requirements/dev.lock.new
	mkdir -p build
	$(PIP) install -q --dry-run --ignore-installed --report build/demo-lock.json \
	  -r requirements/demo.in -c requirements/dev.lock
	{ head -2 requirements/demo.lock; $(PY) -c 'import json, sys; print("\n".join(sorted( \
	  ("%s==%s" % (i["metadata"]["name"], i["metadata"]["version"]) \
	   for i in json.load(open(sys.argv[1]))["install"]), key=str.lower)))' build/demo-lock.json; \
	} > requirements/demo.lock.new
	cmp -s requirements/demo.lock.new requirements/demo.lock || mv requirements/demo.lock.new requirements/demo.lock
	rm -f requirements/demo.lock.new

# demo-aarch64.lock: requirements/demo-aarch64.in as pip resolves it for an aarch64 host's wheels and
# Python 3.11, from any host (pip's --platform; nothing is installed).
AARCH64_WHEELS = --only-binary=:all: --implementation cp --python-version 3.11 \
  --platform manylinux2014_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux_2_28_aarch64
lock-aarch64: venv
	mkdir -p build
	$(PIP) install -q --dry-run --ignore-installed $(AARCH64_WHEELS) --target build/lock-aarch64 \
	  --report build/demo-aarch64-lock.json -r requirements/demo-aarch64.in
	{ head -2 requirements/demo-aarch64.lock; $(PY) -c 'import json, sys; print("\n".join(sorted( \
	  ("%s==%s" % (i["metadata"]["name"], i["metadata"]["version"]) \
	   for i in json.load(open(sys.argv[1]))["install"]), key=str.lower)))' build/demo-aarch64-lock.json; \
	} > requirements/demo-aarch64.lock.new
	cmp -s requirements/demo-aarch64.lock.new requirements/demo-aarch64.lock || mv requirements/demo-aarch64.lock.new requirements/demo-aarch64.lock
	rm -f requirements/demo-aarch64.lock.new
	$(PIP) install -q --dry-run --ignore-installed $(AARCH64_WHEELS) --target build/lock-aarch64 \
	  --report build/check-aarch64-lock.json -r requirements/demo-aarch64.in -r requirements/check-aarch64.in
	{ head -2 requirements/check-aarch64.lock; $(PY) -c 'import json, sys; demo = set(open(sys.argv[2]).read().split()); \
	  print("\n".join(sorted(set("%s==%s" % (i["metadata"]["name"], i["metadata"]["version"]) \
	   for i in json.load(open(sys.argv[1]))["install"]) - demo, key=str.lower)))' \
	  build/check-aarch64-lock.json requirements/demo-aarch64.lock; } > requirements/check-aarch64.lock.new
	cmp -s requirements/check-aarch64.lock.new requirements/check-aarch64.lock || mv requirements/check-aarch64.lock.new requirements/check-aarch64.lock
	rm -f requirements/check-aarch64.lock.new

# make check-aarch64: on an x86_64 machine, as root, the package built and its numbers checked
# on aarch64 under qemu user-mode emulation (.ci/check-aarch64: a Debian bookworm arm64 rootfs,
# a venv of requirements/demo-aarch64.lock and check-aarch64.lock, the checkout built there,
# the tests that pin the ops' numbers, doctor), cached under AARCH64_CACHE (docs/testing.md).
AARCH64_CACHE ?= .cache/aarch64
check-aarch64:
	AARCH64_CACHE=$(AARCH64_CACHE) nice -n 10 .ci/check-aarch64

# What the clone's targets made (docs/install.md, "Uninstalling, and what each cache is"), each
# path printed with its size as it goes; nothing else is touched. clean: the build's outputs
# (build/ holds the object cache), the compat environments and the kernel interpreter's
# triton; distclean: also $(VENV). Per-user caches are tf-ge-custom clean's.
CLEAN_PATHS = $(foreach c,$(COMPAT),.venv-$(c)) build dist $(wildcard *.egg-info) tf_ge_custom/_lib \
  tf_ge_custom/opp tf_ge_custom/build_info.json $(TRITON_INTERP)
REMOVE = for p in $(1); do if [ -e "$$p" ] || [ -L "$$p" ]; then \
  printf 'removing %s (%s)\n' "$$p" "$$(du -sh -- "$$p" 2>/dev/null | cut -f1)"; rm -rf -- "$$p"; fi; done; \
  if [ -d .cache ] && [ -z "$$(ls -A .cache)" ]; then echo 'removing .cache (left empty)'; rmdir .cache; fi
clean:
	@$(call REMOVE,$(CLEAN_PATHS))

distclean:
	@$(call REMOVE,$(CLEAN_PATHS) $(VENV))
