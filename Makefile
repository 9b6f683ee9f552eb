# spyre-sim: `make demo` runs the main job, `make test` runs every test. Both install what is
# missing (Debian packages, the pinned .venv), then build with CMake (C++17, Release, 2 jobs).
SHELL := /bin/bash
ROOT := $(abspath .)
VENV := $(ROOT)/.venv
PY := $(VENV)/bin/python
BUILD := $(ROOT)/build
JOBS ?= 2
PYTHON ?= python3
APT_PACKAGES := cmake g++ pkg-config libsystemc-dev libboost-dev libyaml-cpp-dev \
  nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev clang-format \
  chromium chromium-driver
DEMO_OUT ?= spyre-sim-out/demo

.PHONY: all deps venv build demo test test-cpp test-python test-opinfo format clean

all: build

# Debian packages: installed only when one is missing (apt-get update once, first).
deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(VENV)/.stamp: requirements.txt requirements-lock.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt -c requirements-lock.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	echo "$(BUILD)/python" > $$($(PY) -c 'import sysconfig;print(sysconfig.get_paths()["purelib"])')/spyre_sim_core.pth
	touch $@

venv: $(VENV)/.stamp

$(BUILD)/CMakeCache.txt: CMakeLists.txt | deps $(VENV)/.stamp
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(PY) \
	  -Dpybind11_DIR=$$($(PY) -c 'import pybind11;print(pybind11.get_cmake_dir())')

build: deps venv $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)
	ln -sf $(BUILD)/tools/spyre-sim $(VENV)/bin/spyre-sim

demo: build
	$(VENV)/bin/spyre-sim run tools/models/mlp_block.py --out $(DEMO_OUT)

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Whole test files per worker (--dist loadfile): a file's module fixtures are built once.
test-python: build
	$(PY) -m pytest -q -n $(JOBS) --dist loadfile tests/python

test: test-cpp test-python

# PyTorch's OpInfo database, every sample in every chip dtype, against tests/opinfo/expected.json
# (make test runs each op's first sample); about an hour on two cores.
test-opinfo: build
	$(PY) tests/opinfo/opinfo.py -j $(JOBS) --check

format: deps
	git ls-files -co --exclude-standard -- '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) spyre-sim-out
