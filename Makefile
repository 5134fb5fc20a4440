# Everything runs in a virtual environment (.venv) that the first target creates.
# TORCH pins torch 2.13.0, the version this project is tested with. From PyPI that is the CUDA build on
# Linux x86-64 (several GB of nvidia-* wheels) and the CPU build on macOS and Windows; choose a build with e.g.
#   make install TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"   (CPU only, small)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH ?= torch==2.13.0
PYTEST_ARGS ?=

.PHONY: install test test-all lint demo bench clean

$(VENV)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q $(TORCH)  # unquoted: TORCH may carry options (--index-url ...)
	$(PY) -m pip install -q -e ".[test,mining]"  # mining: FAISS, which the mining tests need
	touch $@

install: $(VENV)/.installed

# A contributor's loop: every test but those marked slow (real data; worker processes, signals, training runs:
# each over ~3 s, listed in tests/slow.py) or distributed (several processes on gloo).
test: install
	$(PY) -m pytest -m "not slow and not distributed" $(PYTEST_ARGS)

# The whole suite, the slow and distributed tests too (the real-data ones when ../shared/data or $BRIDGEEMBED_DATA
# exists): what CI runs (.ci/run).
test-all: install
	$(PY) -m pytest $(PYTEST_ARGS)

# Style, import order and type hints on functions (ruff, configured in pyproject.toml; in the test extra).
lint: install
	$(PY) -m ruff check .

# Encode, compare and translate with the shipped model (pretrained/general-m2m), offline.
demo: install
	$(PY) -m bridgeembed demo

# Speed benchmarks (figures in README.md): training throughput, encoding throughput against MiniLM.
bench: install
	$(PY) -m pip install -q -e ".[bench]"
	$(PY) benchmarks/train_throughput.py --threads 2
	$(PY) benchmarks/encode_throughput.py --threads 2

clean:
	rm -rf $(VENV) .pytest_cache build dist *.egg-info
