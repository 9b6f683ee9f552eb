import os
import pathlib
import runpy
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "tools" / "models"
# SPYRE_SIM_BUILD=<build dir> tests another build tree's CLI (set PYTHONPATH=<build dir>/python
# as well for its Python module); by default the one `make build` links into the .venv.
CLI = (pathlib.Path(os.environ["SPYRE_SIM_BUILD"]) / "tools" / "spyre-sim"
       if os.environ.get("SPYRE_SIM_BUILD") else ROOT / ".venv" / "bin" / "spyre-sim")
# Every test compiles: the program cache (tools/runner/include/spyre/runner/program_cache.h) is
# off unless a test points SPYRE_SIM_CACHE at a folder of its own (test_program_cache.py), and
# nothing is written to the user's ~/.cache.
os.environ["SPYRE_SIM_CACHE"] = "off"
# The golden-capture script doubles as a helper module for the capture tests.
sys.path.insert(0, str(ROOT / "tests" / "data" / "ir"))


def load_model(name):
    ns = runpy.run_path(str(MODELS / f"{name}.py"))
    return ns["model"], ns["example_inputs"]


@pytest.fixture
def model():
    return load_model


def run_cli(*args, cwd=None):
    if not CLI.exists():
        pytest.fail(f"{CLI} is missing: the build did not install the CLI (run `make build`)")
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


@pytest.fixture
def cli():
    return run_cli


# `make test` runs whole files per xdist worker in collection order: the longest files start
# first, so that no worker is left with one of them at the end while the other idles.
LONGEST_FIRST = ("test_opinfo.py", "test_interpreters_agree.py", "test_llm.py", "test_sweep.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        name = pathlib.Path(str(item.fspath)).name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: the order within each file and among the rest is kept
