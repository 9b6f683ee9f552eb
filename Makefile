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
# Fuzzing (tools/fuzz/run) needs clang with libFuzzer and the sanitizer runtimes.
FUZZ_APT_PACKAGES := clang libclang-rt-14-dev
BUILD_FUZZ := $(ROOT)/build-fuzz
BUILD_SANITIZE := $(ROOT)/build-sanitize
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g
PYBIND11_DIR = $$($(PY) -c 'import pybind11;print(pybind11.get_cmake_dir())')

.PHONY: all deps deps-fuzz venv build demo test test-cpp test-python test-opinfo test-sanitize \
  test-install build-fuzz format clean

all: build

# Debian packages: installed only when one is missing (apt-get update once, first).
define install_missing
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
endef

deps:
	$(call install_missing,$(APT_PACKAGES))

deps-fuzz:
	$(call install_missing,$(FUZZ_APT_PACKAGES))

$(VENV)/.stamp: requirements.txt requirements-lock.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt -c requirements-lock.txt
	SPYRE_SIM_DEV=1 $(PY) -m pip install -q --disable-pip-version-check --no-deps \
	  --no-build-isolation -e .
	echo "$(BUILD)/python" > $$($(PY) -c 'import sysconfig;print(sysconfig.get_paths()["purelib"])')/spyre_sim_core.pth
	touch $@

venv: $(VENV)/.stamp

$(BUILD)/CMakeCache.txt: CMakeLists.txt | deps $(VENV)/.stamp
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(PY) \
	  -Dpybind11_DIR=$(PYBIND11_DIR)

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
# (and the device's refusals with compiler.host_fallback=on, expected_host_fallback.json)
# (make test runs each op's first sample); about an hour on two cores.
test-opinfo: build
	$(PY) tests/opinfo/opinfo.py -j $(JOBS) --check
	$(PY) tests/opinfo/opinfo.py -j $(JOBS) --check --host-fallback

# The C++ tests and the end-to-end runs (tests/sanitize/run) built with AddressSanitizer and
# UndefinedBehaviorSanitizer (gcc, -O1 with assertions on) in their own build folder; any
# report fails.
test-sanitize: deps venv
	cmake -S . -B $(BUILD_SANITIZE) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
	  -DPython_EXECUTABLE=$(PY) -Dpybind11_DIR=$(PYBIND11_DIR) -DCMAKE_CXX_FLAGS="$(SANITIZE_FLAGS)" \
	  -DSPYRE_BUILD_BENCH=OFF
	cmake --build $(BUILD_SANITIZE) -j $(JOBS)
	tests/sanitize/run $(BUILD_SANITIZE)

# `pip install .` (the wheel, in a fresh environment, outside the checkout) and the C++
# package of `cmake --install` (tests/install/run).
test-install: deps venv
	tests/install/run

# The libFuzzer targets (clang, ASan, UBSan); tools/fuzz/run builds and runs one.
build-fuzz: deps deps-fuzz venv
	test -f $(BUILD_FUZZ)/CMakeCache.txt || cmake -S . -B $(BUILD_FUZZ) \
	  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release -DSPYRE_FUZZ=ON \
	  -DSPYRE_BUILD_TESTS=OFF -DPython_EXECUTABLE=$(PY) -Dpybind11_DIR=$(PYBIND11_DIR) \
	  -DCMAKE_CXX_FLAGS="$(SANITIZE_FLAGS) -fsanitize=fuzzer-no-link"
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target spyre_fuzz_arch spyre_fuzz_ir \
	  spyre_fuzz_asm spyre_fuzz_binary

format: deps
	git ls-files -co --exclude-standard -- '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(BUILD_SANITIZE) $(BUILD_FUZZ) $(ROOT)/build-wheel spyre-sim-out
