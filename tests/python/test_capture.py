"""spyre_capture against real torch 2.13 Inductor: captures, determinism, goldens, runner path."""

from __future__ import annotations

import copy
import pathlib

import pytest
import torch

import ir_eval
import regenerate
import spyre_capture
from spyre_capture import CaptureError, UnsupportedTorch, capture, compile_graph, to_json

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN_DIR = REPO / "tests" / "data" / "ir"


@pytest.fixture(scope="module")
def captures() -> dict[str, list[dict]]:
    out = {}
    for name in regenerate.MODELS:
        m = regenerate.load_model(name)
        out[name] = capture(m.model, m.example_inputs, source_root=str(REPO))
    return out


def nodes_of(ir: dict, kind: str) -> list[dict]:
    return [n for n in ir["nodes"] if n["kind"] == kind]


def test_each_model_gives_one_graph_with_schema_header(captures):
    for name, irs in captures.items():
        assert len(irs) == 1, name
        ir = irs[0]
        assert (ir["schema"], ir["version"], ir["stage"]) == ("spyre-sim-ir", 1, "scheduler")
        assert ir["graph"] == "graph_0"
        names = [b["name"] for b in ir["buffers"]]
        assert names[: len(ir["inputs"])] == ir["inputs"], "graph inputs come first"


def test_mlp_has_two_addmm_externs_with_transposed_weight_views_and_a_welford(captures):
    ir = captures["mlp_block"][0]
    externs = nodes_of(ir, "extern")
    assert [n["kernel"] for n in externs] == ["extern_kernels.addmm"] * 2
    fc1 = externs[0]
    bias, act, weight = fc1["inputs"]
    assert (bias["size"], act["size"]) == ([1024], [64, 256])
    assert (weight["size"], weight["stride"]) == ([256, 1024], [1, 256])  # W^T view, no copy
    assert fc1["layout"]["size"] == [64, 1024]
    assert fc1["kwargs"] == {"alpha": 1, "beta": 1}
    welford = [n for n in nodes_of(ir, "reduction") if n["reduction_type"] == "welford_reduce"]
    assert welford and all(n["reduce_sizes"] == [256] for n in welford)
    ops = {op["op"] for n in ir["nodes"] for op in n.get("body", [])}
    assert {"erf", "rsqrt", "reduction", "store_reduction"} <= ops
    params = [b["name"] for b in ir["buffers"] if b["kind"] == "parameter"]
    assert len(params) == 6 and all(b["dtype"] == "float16" for b in ir["buffers"][:7])


def test_matmul_is_one_mm_extern(captures):
    ir = captures["matmul"][0]
    (node,) = ir["nodes"]
    assert (node["kind"], node["kernel"]) == ("extern", "extern_kernels.mm")
    assert [i["size"] for i in node["inputs"]] == [[128, 256], [256, 192]]
    assert node["layout"]["size"] == [128, 192]
    assert node["source"] == "tools/models/matmul.py:8"


def test_chain_is_pointwise_with_a_broadcast_load(captures):
    ir = captures["eltwise_chain"][0]
    (node,) = ir["nodes"]
    assert node["kind"] == "pointwise" and node["sizes"] == [64, 512]
    loads = {op["buffer"]: op["index"]["affine"] for op in node["body"] if op["op"] == "load"}
    y = ir["inputs"][1]
    assert loads[y] == {"offset": 0, "coeffs": {"x0": 0, "x1": 1}}
    assert [op["op"] for op in node["body"]][-1] == "store"


def test_capturing_twice_gives_identical_json(captures):
    m = regenerate.load_model("mlp_block")
    again = capture(m.model, m.example_inputs, source_root=str(REPO))
    assert [to_json(ir) for ir in again] == [to_json(ir) for ir in captures["mlp_block"]]


@pytest.mark.parametrize("name", regenerate.MODELS)
def test_goldens_match_a_fresh_capture(name):
    for file_name, text in regenerate.golden_texts(name).items():
        golden = GOLDEN_DIR / file_name
        assert golden.exists(), f"missing {golden}; run tests/data/ir/regenerate.py"
        assert golden.read_text() == text, f"{golden} is stale; run tests/data/ir/regenerate.py"


def test_wrong_torch_version_is_rejected_with_the_required_version():
    spyre_capture.check_torch_version("2.13.0+cpu")
    with pytest.raises(UnsupportedTorch, match=r"torch==2\.13"):
        spyre_capture.check_torch_version("2.12.1")


@pytest.mark.parametrize("name", regenerate.MODELS)
def test_runner_path_evaluates_the_ir_and_matches_eager(name):
    m = regenerate.load_model(name)
    seen = []

    def make_runner(ir):
        seen.append(ir)
        return lambda inputs: ir_eval.evaluate(ir, inputs)

    torch._dynamo.reset()
    compiled = torch.compile(m.model, backend=lambda gm, ex: compile_graph(gm, ex, make_runner))
    with torch.no_grad():
        got = compiled(*m.example_inputs)
        want = m.model(*m.example_inputs)
    torch._dynamo.reset()
    assert len(seen) == 1
    torch.testing.assert_close(got, want, atol=2e-2, rtol=2e-2)


def test_graph_without_calls_returns_its_inputs():
    torch._dynamo.reset()
    x = torch.randn(4, 8)
    irs = capture(lambda a: a.t(), (x,))
    (ir,) = irs
    assert ir["nodes"] == []
    assert ir["outputs"] == [{"buffer": ir["inputs"][0], "dtype": "float32", "size": [8, 4],
                              "stride": [1, 8], "offset": 0}]


def test_op_without_lowering_is_captured_as_fallback():
    (ir,) = capture(lambda a: torch.median(a, 1).values, (torch.randn(4, 8),))
    fallbacks = nodes_of(ir, "fallback")
    assert fallbacks and fallbacks[0]["op_overload"] == "aten.median.dim"


def test_dynamic_shapes_raise_capture_error():
    torch._dynamo.reset()
    compiled = torch.compile(lambda a: a * 2, dynamic=True,
                             backend=lambda gm, ex: compile_graph(gm, ex, lambda ir: None))
    with pytest.raises(Exception, match="dynamic=False") as info:
        compiled(torch.randn(4, 8))
    err = info.value
    while err is not None and not isinstance(err, CaptureError):
        err = err.__cause__ or getattr(err, "inner_exception", None)
    assert isinstance(err, CaptureError)
    torch._dynamo.reset()


def test_training_forward_and_lazy_backward_both_run_through_the_runner():
    m = regenerate.load_model("mlp_block")
    model = copy.deepcopy(m.model).float()  # Module.float() converts in place: the cached
    # model stays fp16 for the tests that share it
    x = m.example_inputs[0].float().requires_grad_()
    seen = []

    def make_runner(ir):
        seen.append(ir)
        return lambda inputs: ir_eval.evaluate(ir, inputs)

    torch._dynamo.reset()
    compiled = torch.compile(model, backend=lambda gm, ex: compile_graph(gm, ex, make_runner))
    compiled(x).sum().backward()
    got = x.grad
    x.grad = None
    model(x).sum().backward()
    torch._dynamo.reset()
    assert len(seen) == 2  # forward, then backward compiled lazily
    assert any(n["kind"] == "extern" for n in seen[1]["nodes"])
    torch.testing.assert_close(got, x.grad, atol=1e-4, rtol=1e-4)


# ---------------------------------------------------------------- JSON Schema, graph breaks

SCHEMA_FILE = REPO / "compiler" / "frontend" / "schema" / "ir-v1.schema.json"


def _validator():
    import json

    import jsonschema

    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_every_golden_validates_against_the_json_schema():
    import json

    validator = _validator()
    goldens = sorted(GOLDEN_DIR.rglob("*.json"))
    assert len(goldens) > 100
    failures = []
    for path in goldens:
        for err in validator.iter_errors(json.loads(path.read_text())):
            failures.append(f"{path.relative_to(REPO)}: {err.json_path}: {err.message[:160]}")
    assert not failures, "\n".join(failures[:20])


def test_json_schema_names_the_node_and_field_of_a_broken_ir(captures):
    import copy

    validator = _validator()
    ir = copy.deepcopy(captures["mlp_block"][0])
    ext = next(i for i, n in enumerate(ir["nodes"]) if n["kind"] == "extern")
    del ir["nodes"][ext]["kernel"]
    ir["nodes"][0]["body"][0]["index"]["affine"] = {"offset": "0"}
    paths = sorted(err.json_path for err in validator.iter_errors(ir))
    assert paths == ["$.nodes[0].body[0].index.affine", f"$.nodes[{ext}]"]
    messages = [err.message for err in validator.iter_errors(ir)]
    assert any("'kernel' is a required property" in m for m in messages)


def test_graph_breaks_give_one_capture_per_subgraph_and_are_reported():
    def fn(x):
        y = torch.softmax(x, -1)
        torch._dynamo.graph_break()
        z = y.exp()
        torch._dynamo.graph_break()
        return z + 1

    irs = capture(fn, (torch.randn(8, 16),))
    assert [ir["graph"] for ir in irs] == ["graph_0", "graph_1", "graph_2"]
    assert len(irs.graph_breaks) == 1 and "graph_break" in irs.graph_breaks[0]
    assert irs.summary().startswith("captured 3 graph(s)")


def test_unsupported_op_names_the_aten_op_and_the_user_source_line():
    def fn(x):
        return torch.median(x, 1).values * 2  # no Inductor lowering: a fallback

    (ir,) = capture(fn, (torch.randn(4, 8),), source_root=str(REPO))
    (fallback,) = [n for n in ir["nodes"] if n["kind"] == "fallback" and n["kernel"] != "MultiOutput"]
    assert fallback["op_overload"] == "aten.median.dim"
    assert fallback["source"] == f"tests/python/test_capture.py:{fn.__code__.co_firstlineno + 1}"
    assert fallback["call"] == {"args": [{"input": 0}, 1, False], "kwargs": {}}
