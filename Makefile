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

.PHONY: all demo test install venv bench lock clean triton-interp
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
	$(VENV)/bin/vermin --no-tips --violations --target=3.7- tf_ge_custom kernels
	TF_GE_CUSTOM_TRITON_INTERP=$(abspath $(TRITON_INTERP)) $(VENV)/bin/pytest $(PYTEST_ARGS)

bench: install
	$(PY) benchmarks/bench_add_custom.py

lock: venv
	{ head -2 requirements/dev.lock; $(PIP) freeze --exclude-editable | grep -v '^tf-ge-custom'; } > requirements/dev.lock.new
	mv requirements/dev.lock.new requirements/dev.lock

clean:
	rm -rf build dist *.egg-info tf_ge_custom/_lib tf_ge_custom/opp tf_ge_custom/build_info.json
