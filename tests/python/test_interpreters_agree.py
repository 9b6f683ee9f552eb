"""The two reference interpreters of the IR agree on every golden capture.

tests/python/ir_eval.py (torch tensors; the capture tests compare it with eager PyTorch) and
tests/compiler/ir_interp.h (C++ in double, stores rounded to each buffer's dtype; the compiler's
golden tests compare the simulated chip with it) each evaluate the goldens of tests/data/ir/ops
and tests/data/ir/models on the same seeded inputs here, through the interpreter's command
build/tests/compiler/spyre_ir_interp. So eager == ir_eval == ir_interp == the chip."""

import json
import math
import os
import pathlib
import subprocess

import pytest
import torch

import ir_eval
from conftest import ROOT

GOLDENS = sorted((ROOT / "tests" / "data" / "ir").glob("ops/*.json")) + sorted(
    (ROOT / "tests" / "data" / "ir").glob("models/*.json"))
BUILD = pathlib.Path(os.environ.get("SPYRE_SIM_BUILD", ROOT / "build"))
INTERP = BUILD / "tests" / "compiler" / "spyre_ir_interp"


def _inputs(ir):
    """Seeded inputs in ir["inputs"] order, as the compiler's golden test draws them: floats
    N(0, 1), weights (parameters of rank >= 2) with std 1 / sqrt(fan_in), integers in {0, 1}
    (valid rows of every embedding and gather table in the goldens)."""
    g = torch.Generator().manual_seed(1234)
    buffers = {b["name"]: b for b in ir["buffers"]}
    # Where an index is selected (topk, sort, median, argmax) a tie makes it ambiguous: those
    # graphs get distinct values (a shuffled ramp, exact in the dtype).
    selects = any(n["kind"] == "fallback" or n.get("reduction_type") in ("argmax", "argmin")
                  for n in ir["nodes"])
    out = []
    for name in ir["inputs"]:
        b = buffers[name]
        dtype = ir_eval._DTYPES[b["dtype"]]
        if dtype.is_floating_point and selects:
            n = math.prod(b["size"])
            ramp = (torch.arange(n, dtype=torch.float64) - n // 2) / 256
            t = ramp[torch.randperm(n, generator=g)].reshape(b["size"]).to(dtype)
        elif dtype.is_floating_point:
            std = 1.0
            if b["kind"] == "parameter" and len(b["size"]) >= 2 and b["size"][0]:
                std = 1.0 / math.sqrt(math.prod(b["size"]) / b["size"][0])
            t = (torch.randn(b["size"], generator=g, dtype=torch.float64) * std).to(dtype)
        else:
            t = torch.randint(0, 2, b["size"], generator=g).to(dtype)
        out.append(t)
    return out


def _disagreement(ir, cpp_ir, tmp_path):
    """None when ir_eval on `ir` and ir_interp on `cpp_ir` give the same outputs on the same
    inputs, else what differs."""
    if not INTERP.exists():
        pytest.fail(f"{INTERP} is missing: run `make build`")
    inputs = _inputs(ir)
    with torch.no_grad():
        want = ir_eval.evaluate(ir, [t.clone() for t in inputs])
    feed, graph = tmp_path / "inputs.json", tmp_path / "ir.json"
    feed.write_text(json.dumps({"inputs": [t.double().flatten().tolist() for t in inputs]}))
    graph.write_text(json.dumps(cpp_ir))
    proc = subprocess.run([str(INTERP), str(graph), str(feed)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)["outputs"]
    if len(got) != len(want):
        return f"{len(got)} outputs, ir_eval gives {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g = torch.tensor([float(v) for v in g], dtype=torch.float64)  # "nan", "inf" too
        w = w.double().flatten()
        if g.shape != w.shape:
            return f"output {i}: {g.shape} vs {w.shape}"
        same_special = (g.isnan() & w.isnan()) | (g.isinf() & (g == w))
        finite = w.isfinite()
        if not bool((same_special | finite).all()):
            return f"output {i}: NaN or inf differ"
        if not torch.is_floating_point(want[i]):
            if not torch.equal(g[finite], w[finite]):
                return f"output {i}: integers differ"
            continue
        # Both round every store to the buffer's dtype; they may differ in how they compute
        # between (double there, the dtype's own torch kernels here): a few output ulps.
        rms = float(w[finite].pow(2).mean().sqrt()) if finite.any() else 0.0
        eps = torch.finfo(want[i].dtype).eps
        err = float((g[finite] - w[finite]).abs().max()) if finite.any() else 0.0
        if err > 8 * eps * rms + 1e-3:
            return f"output {i}: max |err| {err:.3g}, rms {rms:.3g}"
    return None


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_both_interpreters_give_the_same_outputs(path, tmp_path):
    ir = json.loads(path.read_text())
    assert _disagreement(ir, ir, tmp_path) is None


def test_a_different_graph_disagrees(tmp_path):
    """The check can fail: the C++ side gets the layer norm with its eps 1e5 times
    larger, the Python side the golden."""
    ir = json.loads((ROOT / "tests" / "data" / "ir" / "ops" / "layer_norm.json").read_text())
    doctored = json.loads(json.dumps(ir))
    changed = 0
    for node in doctored["nodes"]:
        for op in node.get("body", []):
            if op["op"] == "constant" and isinstance(op["value"], float) and 0 < op["value"] < 1e-3:
                op["value"] *= 1e5
                changed += 1
    assert changed, "the layer norm golden has no eps constant any more"
    assert _disagreement(ir, doctored, tmp_path) is not None
