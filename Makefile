# The two commands of the README:
#   make demo   set up .venv from scratch (pinned), build and install the package, run the demo
#   make test   same set-up, then the whole test suite
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
PIP     = $(PY) -m pip --disable-pip-version-check
PYTEST_ARGS ?=
# PyPI triton for the kernel interpreter tests (see requirements/triton-interp.txt)
TRITON_INTERP ?= .cache/triton-interp

# Python 3.7: a pyenv install if there is one, else python3.7 on PATH
PYTHON37 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.7*/bin/python3.7) python3.7)
# TF Adapter's TensorFlows (requirements/compat-<name>-py3.7.lock): the package is built and
# tested against each of them too, on Python 3.7.
COMPAT  = tf1.15 tf2.6

.PHONY: all demo test test-compat install venv bench lock clean triton-interp
all: test

$(VENV)/.deps: requirements/dev.lock
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q pip==26.3 setuptools==84.2.1 wheel==0.48.0
	$(PIP) install -q -r requirements/dev.lock
	touch $@

venv: $(VENV)/.deps

$(TRITON_INTERP)/.deps: requirements/triton-interp.txt $(VENV)/.deps
	rm -rf $(TRITON_INTERP)
	$(PIP) install -q --no-deps --target $(TRITON_INTERP) -r requirements/triton-interp.txt
	touch $@

triton-interp: $(TRITON_INTERP)/.deps

# Built against the venv's TensorFlow, as a user's `pip install .` would be.
install: venv
	$(PIP) install -q --no-deps --force-reinstall --no-build-isolation .

demo: install
	$(PY) examples/demo.py

test: install triton-interp
	TF_GE_CUSTOM_TRITON_INTERP=$(abspath $(TRITON_INTERP)) $(VENV)/bin/pytest $(PYTEST_ARGS)
	@if command -v $(PYTHON37) >/dev/null 2>&1; then $(MAKE) test-compat; \
	elif [ "$$TF_GE_CUSTOM_STRICT_SKIPS" = 1 ]; then \
	  echo "error: no Python 3.7 ($(PYTHON37)) for the TF 1.15 / 2.6.5 compat run"; exit 1; \
	else echo "note: no Python 3.7 ($(PYTHON37)): skipped the TF 1.15 / 2.6.5 compat run (make test-compat)"; fi

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
bench: install
	$(PY) benchmarks/run_all.py --out $(BENCH_OUT) $(if $(filter 1 yes true,$(BENCH_QUICK)),--quick) \
	  $(if $(BENCH_MAX_ROUNDS),--max-rounds $(BENCH_MAX_ROUNDS))

lock: venv
	{ head -2 requirements/dev.lock; $(PIP) freeze --exclude-editable | grep -v '^tf-ge-custom'; } > requirements/dev.lock.new
	mv requirements/dev.lock.new requirements/dev.lock

clean:
	rm -rf .venv-tf1.15 .venv-tf2.6 build dist *.egg-info tf_ge_custom/_lib tf_ge_custom/opp tf_ge_custom/build_info.json
