"""Regenerate the golden IR captures of tools/models/*.py.

Run from anywhere: .venv/bin/python tests/data/ir/regenerate.py [model ...]
Writes tests/data/ir/<model>.json, or <model>.<i>.json when a model gives several graphs.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[3]
OUT_DIR = pathlib.Path(__file__).resolve().parent
MODELS = ("mlp_block", "matmul", "eltwise_chain")

sys.path.insert(0, str(REPO / "compiler" / "frontend"))
import spyre_capture  # noqa: E402


def load_model(name: str):
    path = REPO / "tools" / "models" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"spyre_models.{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def golden_texts(name: str) -> dict[str, str]:
    """File name -> JSON text of a fresh capture of model `name`."""
    module = load_model(name)
    irs = spyre_capture.capture(module.model, module.example_inputs, source_root=str(REPO))
    if len(irs) == 1:
        return {f"{name}.json": spyre_capture.to_json(irs[0])}
    return {f"{name}.{i}.json": spyre_capture.to_json(ir) for i, ir in enumerate(irs)}


def main(argv: list[str]) -> int:
    for name in argv or MODELS:
        for file_name, text in golden_texts(name).items():
            (OUT_DIR / file_name).write_text(text)
            print(f"wrote {OUT_DIR / file_name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
