"""Public API: capture Inductor's scheduled IR of a PyTorch model as SCHEMA.md v1 dicts."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import torch

from . import adapter
from .errors import CaptureError

Runner = Callable[[list[torch.Tensor]], Sequence[torch.Tensor]]
MakeRunner = Callable[[dict], Runner]


def compile_graph(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    make_runner: MakeRunner,
    *,
    source_root: str | None = None,
    ir_store: adapter.ir_cache.Store | None = None,
) -> Callable[..., Any]:
    """Dynamo backend body: run Inductor up to its Scheduler and hand each scheduled graph's IR
    to `make_runner`, whose runner then computes that graph when the compiled model is called.

    `make_runner(ir)` is called once per captured graph, at compile time; the runner takes the
    post-AOT flat inputs in `ir["inputs"]` order and returns tensors in `ir["outputs"]` order.
    The tensor constants Inductor lifted out of the graph (`ir["constants"]`, the last of
    `ir["inputs"]`) are appended to each call's inputs from the graph module.
    `source_root` (default: the working directory) is what `source` paths are made relative to.
    `ir_store` (ir_cache.Store): where captured IR is looked up and kept between runs.
    """
    def on_graph(ir: dict, post_gm: torch.fx.GraphModule) -> Runner:
        device_ir, empties = _split_unwritten_empty_outputs(ir)
        runner = _with_constants(device_ir, post_gm, make_runner(device_ir))
        return runner if not empties else _with_empty_outputs(runner, empties)

    return _compile(gm, example_inputs, on_graph, source_root, ir_store)


def _split_unwritten_empty_outputs(ir: dict) -> tuple[dict, list[tuple[int, dict]]]:
    """The IR without the graph outputs that have no elements and that no node writes (the
    empty uint8 reserve of training-mode batch norm): they need no device memory, and the
    host makes them. Returns the IR to compile and each such output with its position; the IR
    is returned as it is when nothing (or every output) would go."""
    written = {b for n in ir.get("nodes", []) for b in n.get("outputs", [])}
    kinds = {b["name"]: b["kind"] for b in ir.get("buffers", [])}
    empties = [(i, o) for i, o in enumerate(ir.get("outputs", []))
               if 0 in o.get("size", []) and o["buffer"] not in written
               and kinds.get(o["buffer"]) in ("intermediate", "output")]
    if not empties or len(empties) == len(ir["outputs"]):
        return ir, []
    gone = {o["buffer"] for _, o in empties}
    read = {t.get("buffer") for n in ir["nodes"] for t in n.get("inputs", [])
            if isinstance(t, dict)}
    kept = [o for o in ir["outputs"] if o["buffer"] not in gone]
    if gone & (read | {o["buffer"] for o in kept}):
        return ir, []
    device_ir = {**ir, "outputs": kept,
                 "buffers": [b for b in ir["buffers"] if b["name"] not in gone]}
    return device_ir, empties


def _with_empty_outputs(runner: Runner, empties: list[tuple[int, dict]]) -> Runner:
    """`runner` with the empty outputs `_split_unwritten_empty_outputs` took away put back at
    their positions, made on the device of the call's inputs."""
    def run(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
        device = inputs[0].device if inputs else torch.device("cpu")
        results = list(runner(inputs))
        for i, o in empties:
            results.insert(i, torch.empty_strided(o["size"], o["stride"],
                                                  dtype=getattr(torch, o["dtype"]),
                                                  device=device))
        return results
    return run


def _with_constants(ir: dict, gm: torch.fx.GraphModule, runner: Runner) -> Runner:
    """`runner` with the values of the graph's lifted tensor constants appended to its inputs."""
    names = ir.get("constants", [])
    if not names:
        return runner
    values = []
    for name in names:
        value = getattr(gm, name, None)
        if not isinstance(value, torch.Tensor):
            raise CaptureError(f"graph {ir.get('graph')}: tensor constant {name} is not an "
                               "attribute of the graph module: its values cannot be supplied")
        values.append(value)
    return lambda inputs: runner([*inputs, *values])


class Capture(list):
    """The IR dicts of every graph one `capture()` compiled, in compile order (a plain list of
    SCHEMA.md v1 dicts), plus `graph_breaks`: Dynamo's graph-break reasons, sorted.

    Each Dynamo subgraph is one entry; `len(capture)` is the graph count. (A graph break usually
    gives two or more graphs; a break whose pieces have no tensor ops gives fewer.)"""

    graph_breaks: list[str]

    def summary(self) -> str:
        nodes = sum(len(ir["nodes"]) for ir in self)
        return (f"captured {len(self)} graph(s), {nodes} node(s), "
                f"{len(self.graph_breaks)} graph break(s)"
                + "".join(f"\n  break: {r}" for r in self.graph_breaks))


def capture(model_or_fn: Callable[..., Any], example_inputs: Sequence[Any], *,
            source_root: str | None = None, run_eagerly: bool = True) -> Capture:
    """Compile `model_or_fn` once on `example_inputs` and return the IR of every graph, in
    compile order (Dynamo compiles and runs every subgraph of a model with graph breaks).
    Resets Dynamo first so repeated captures are independent; the compiled model runs the
    post-AOT graphs eagerly (only to finish the call). run_eagerly=False finishes the call with
    uninitialised outputs of the traced shapes instead (for one-graph functions whose eager run
    would be slow: a 2048 x 8192 x 2048 fp16 matmul takes minutes on a CPU); the IR is the
    same."""
    torch._dynamo.reset()
    adapter.clear_graph_breaks()
    captured = Capture()
    counter = itertools.count()

    def on_graph(ir: dict, gm: torch.fx.GraphModule) -> Runner:
        ir["graph"] = f"graph_{next(counter)}"
        captured.append(ir)
        return _eager_runner(gm) if run_eagerly else _placeholder_runner(gm)

    def backend(gm: torch.fx.GraphModule, inputs: Sequence[Any]) -> Callable[..., Any]:
        return _compile(gm, inputs, on_graph, source_root)

    if any(isinstance(t, torch.Tensor) and t.is_meta for t in _tensors(model_or_fn, example_inputs)):
        run_eagerly = False  # no values to compute with: the post-AOT graph runs on cpu fakes
    compiled = torch.compile(model_or_fn, backend=backend, dynamic=False, fullgraph=False)
    with torch.no_grad():
        compiled(*example_inputs)
    captured.graph_breaks = adapter.graph_break_reasons()
    torch._dynamo.reset()
    return captured


def to_json(ir: dict) -> str:
    """Deterministic serialisation: sorted keys, fixed indentation, trailing newline."""
    return json.dumps(ir, sort_keys=True, indent=1, allow_nan=False) + "\n"


def _compile(gm: torch.fx.GraphModule, example_inputs: Sequence[Any],
             on_graph: adapter.GraphHandler, source_root: str | None,
             ir_store: adapter.ir_cache.Store | None = None) -> Callable[..., Any]:
    root = os.path.abspath(source_root or os.getcwd())
    return adapter.compile_with_capture(gm, example_inputs, on_graph, _graph_namer(), root,
                                        ir_store)


def _graph_namer() -> Callable[[], str]:
    """`graph_<frame>` from Dynamo's compile id (plus `_<recompile>`/`.<n>` when needed)."""
    counter = itertools.count()

    def name() -> str:
        cid = adapter.current_compile_id()
        base = "graph_0" if cid is None else f"graph_{cid[0]}" + (f"_{cid[1]}" if cid[1] else "")
        n = next(counter)
        return base if n == 0 else f"{base}.{n}"

    return name


def _tensors(model_or_fn: Any, example_inputs: Sequence[Any]) -> list[Any]:
    params = list(model_or_fn.parameters()) if isinstance(model_or_fn, torch.nn.Module) else []
    return [*params, *example_inputs]


def _eager_runner(gm: torch.fx.GraphModule) -> Runner:
    def run(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
        with torch.no_grad():
            return list(gm(*inputs))

    return run


def _placeholder_runner(gm: torch.fx.GraphModule) -> Runner:
    """Outputs of the traced shapes, strides and dtypes (the graph's `val` metadata), left
    uninitialised; the eager runner where an output has no such metadata."""
    (out,) = [n for n in gm.graph.nodes if n.op == "output"]
    vals = [getattr(a, "meta", {}).get("val") for a in out.args[0]]
    if not all(isinstance(v, torch.Tensor) for v in vals):
        return _eager_runner(gm)

    def run(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
        # A meta model's graph was traced on cpu (meta.meta_as_cpu): answer on meta.
        meta = any(isinstance(t, torch.Tensor) and t.is_meta for t in inputs)
        return [torch.empty_strided(v.shape, v.stride(), dtype=v.dtype,
                                    device="meta" if meta else v.device) for v in vals]

    return run
