"""Regenerate the golden IR captures.

Run from anywhere: .venv/bin/python tests/data/ir/regenerate.py [key ...]
A key is a model of tools/models (`mlp_block`), an op of tools/models/ops.py (`ops/softmax`),
a real model (`models/gpt2`), a benchmark model (`bench/gpt2_small`), a regression-suite kernel
of tools/models/regress_kernels.py (`regress/mm_4096`), a memory-bound benchmark kernel of
tools/models/membound_kernels.py (`bench/membound/softmax_64mib`), a case of the cost model's
held-out set (tools/models/costmodel_kernels.py, `bench/costmodel/...`), a shape of IBM's measured
kernels (tools/models/fidelity_kernels.py, `bench/fidelity/add_2048x1024`), or a group: `ops`,
`models`, `bench`, `regress`, `membound`, `costmodel`, `fidelity`, `basic`; no key means all of
them except `fidelity` (202 shapes up to 1 GiB: minutes and gigabytes; it needs
../shared/calibration/spyre_kernels.csv).
Writes tests/data/ir/<key>.json, or <key>.<i>.json when a capture gives several graphs, and
removes stale <key>.<i>.json files of the keys it writes.
Real models set HF_HUB_OFFLINE=1 and build from config objects: nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = pathlib.Path(__file__).resolve().parents[3]
OUT_DIR = pathlib.Path(__file__).resolve().parent
MODELS = ("mlp_block", "matmul", "eltwise_chain")
REAL_MODELS = ("gpt2", "bert", "llama", "resnet_block")
# Full-size models for benchmarks only (tools/bench/compile): captured, never simulated in tests.
BENCH_MODELS = ("gpt2_small",)

sys.path.insert(0, str(REPO / "compiler" / "frontend"))
import spyre_capture  # noqa: E402

_modules: dict[str, object] = {}


def load_model(name: str):
    """tools/models/<name>.py as a module (loaded once per process: the real models are slow
    to build)."""
    if name not in _modules:
        path = REPO / "tools" / "models" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(f"spyre_models.{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _modules[name] = module
    return _modules[name]


def op_names() -> list[str]:
    return list(load_model("ops").OPS)


def regress_names() -> list[str]:
    return list(load_model("regress_kernels").CASES)


def membound_names() -> list[str]:
    return list(load_model("membound_kernels").CASES)


def costmodel_names() -> list[str]:
    return list(load_model("costmodel_kernels").CASES)


def fidelity_names() -> list[str]:
    return load_model("fidelity_kernels").shape_keys()


# key prefix -> (model file of tools/models, its dict of OpCase), for op-like captures
CASE_GROUPS = {"ops": ("ops", "OPS"), "regress": ("regress_kernels", "CASES"),
               "membound": ("membound_kernels", "CASES"),
               "costmodel": ("costmodel_kernels", "CASES")}


def all_keys() -> list[str]:
    return [*MODELS, *(f"ops/{op}" for op in op_names()), *(f"models/{m}" for m in REAL_MODELS),
            *(f"bench/{m}" for m in BENCH_MODELS), *(f"regress/{k}" for k in regress_names()),
            *(f"bench/membound/{k}" for k in membound_names()),
            *(f"bench/costmodel/{k}" for k in costmodel_names())]


def capture_key(key: str) -> spyre_capture.Capture:
    """A fresh capture of `key` (see the module docstring)."""
    group, _, name = key.removeprefix("bench/").rpartition("/")
    if group == "fidelity":
        case = load_model("fidelity_kernels").case(name)
        return spyre_capture.capture(case.fn, case.make_inputs(), source_root=str(REPO),
                                     run_eagerly=False)
    if group in CASE_GROUPS:
        module, table = CASE_GROUPS[group]
        case = getattr(load_model(module), table)[name]
        return spyre_capture.capture(case.fn, case.make_inputs(), source_root=str(REPO))
    module = load_model(key.removeprefix("models/").removeprefix("bench/"))
    return spyre_capture.capture(module.model, module.example_inputs, source_root=str(REPO))


def texts_of(key: str, irs: list[dict]) -> dict[str, str]:
    """Golden file path (relative to tests/data/ir) -> JSON text, for captured `irs` of `key`."""
    if len(irs) == 1:
        return {f"{key}.json": spyre_capture.to_json(irs[0])}
    return {f"{key}.{i}.json": spyre_capture.to_json(ir) for i, ir in enumerate(irs)}


def golden_texts(key: str) -> dict[str, str]:
    """Golden file path (relative to tests/data/ir) -> JSON text of a fresh capture of `key`."""
    return texts_of(key, capture_key(key))


def _expand(argv: list[str]) -> list[str]:
    groups = {"basic": list(MODELS), "ops": [f"ops/{op}" for op in op_names()],
              "models": [f"models/{m}" for m in REAL_MODELS],
              "bench": [f"bench/{m}" for m in BENCH_MODELS],
              "regress": [f"regress/{k}" for k in regress_names()],
              "membound": [f"bench/membound/{k}" for k in membound_names()],
              "costmodel": [f"bench/costmodel/{k}" for k in costmodel_names()]}
    if "fidelity" in argv:
        groups["fidelity"] = [f"bench/fidelity/{k}" for k in fidelity_names()]
    keys: list[str] = []
    for arg in argv or all_keys():
        keys += groups.get(arg, [arg])
    return keys


def main(argv: list[str]) -> int:
    for key in _expand(argv):
        texts = golden_texts(key)
        stem = OUT_DIR / key
        for old in [*stem.parent.glob(f"{stem.name}.*.json"), stem.with_name(f"{stem.name}.json")]:
            if old.exists() and str(old.relative_to(OUT_DIR)) not in texts:
                old.unlink()
        for file_name, text in texts.items():
            path = OUT_DIR / file_name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
