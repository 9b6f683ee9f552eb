"""Every access to Inductor's private internals (torch 2.13) lives in this module and in
loop_body.py (the ops-handler replay of loop bodies).

Inductor's scheduler hooks, LoopBody, the ops-handler protocol and the IR node classes are
private and change between releases, so they are used in these two modules only; the rest of
spyre_capture sees plain dicts. See ../shared/notes/inductor_capture.md for why each hook is needed.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from . import decomp, ir_cache, loop_body, lowerings, meta, random_seeds, value_sizes
from .errors import CaptureError, UnsupportedTorch
from .loop_body import ir_dtype as _dtype

REQUIRED_TORCH = "2.13."


def check_torch_version(version: str) -> None:
    """Raise UnsupportedTorch unless `version` is a 2.13.x release."""
    if not version.startswith(REQUIRED_TORCH):
        raise UnsupportedTorch(
            f"spyre_capture hooks Inductor internals of torch 2.13 and needs torch==2.13.*; "
            f"found torch {version}. Install torch==2.13.0 (e.g. the project's .venv)."
        )


check_torch_version(torch.__version__)

import sympy  # noqa: E402
from torch._inductor import config as inductor_config  # noqa: E402
from torch._inductor import ir  # noqa: E402
from torch._inductor import scheduler as inductor_scheduler  # noqa: E402
from torch._inductor.codegen import common as codegen_common  # noqa: E402
from torch._inductor.codegen.cpp import CppScheduling  # noqa: E402
from torch._inductor.codegen.wrapper import PythonWrapperCodegen  # noqa: E402
from torch._inductor.compile_fx import compile_fx, compile_fx_inner  # noqa: E402
from torch._decomp import decompositions as aten_decompositions  # noqa: E402
from torch._inductor.decomposition import select_decomp_table  # noqa: E402
from torch._inductor.virtualized import V  # noqa: E402

# Settings for stable, per-op IR (see the notes): caches off so the Scheduler always runs;
# no reduction splitting, unrolling, buffer reuse or in-place buffers; no loop merging.
CONFIG_PATCH: dict[str, Any] = {
    "force_disable_caches": True,
    "split_reductions": False,
    "unroll_reductions_threshold": 1,
    "permute_fusion": False,
    "allow_buffer_reuse": False,
    "inplace_buffers": False,
    "online_softmax": False,
    "loop_ordering_after_fusion": False,
    "max_autotune": False,
    "max_autotune_gemm": False,
    "freezing": False,
    "cpp_wrapper": False,
    "fx_wrapper": False,
    "reorder_for_peak_memory": False,
    "graph_partition": False,
    "size_asserts": False,
    "combo_kernels": False,
    # CPU lowers var_mean over <= 1024 elements as two sum passes; always use one Welford pass
    # so layer_norm's IR does not change shape with the hidden size.
    "cpp.use_two_step_variance_threshold": 0,
}


def capture_decompositions() -> dict[Any, Callable[..., Any]]:
    """Inductor's decomposition table plus what the device needs decomposed that CPU keeps whole.

    CPU Inductor keeps SDPA as one opaque `_scaled_dot_product_flash_attention_for_cpu` fallback;
    torch's own decomposition of it (excluded by Inductor) gives bmm, softmax and masking, which
    the spyre compiler can map. The scans, batched-GEMM variants, transposed and 1-D convolutions,
    searches and accumulating scatters are rewritten by `decomp` (see there). Returned fresh each
    call: the table is Inductor's global dict.
    """
    aten = torch.ops.aten
    return {
        **select_decomp_table(),
        aten._scaled_dot_product_flash_attention_for_cpu.default:
            aten_decompositions.scaled_dot_product_flash_attention_for_cpu,
        **decomp.device_decompositions(),
    }


class CaptureScheduling(inductor_scheduler.BaseScheduling):
    """A "cpu" scheduling that fuses nothing and emits no kernel code.

    Lowering asks it for backend features as it would ask CppScheduling, so the IR is what CPU
    lowering produces. The IR itself is read from the scheduler's final node list after
    codegen (see `_build_graph_ir`), so this class only keeps the scheduler's bookkeeping.
    """

    def get_backend_features(self, device: torch.device) -> Any:
        return CppScheduling.get_backend_features(device)

    def can_fuse_vertical(self, node1: Any, node2: Any) -> bool:
        return False

    def can_fuse_horizontal(self, node1: Any, node2: Any) -> bool:
        return False

    def group_fn(self, sizes: Sequence[Sequence[sympy.Expr]]) -> Any:
        return tuple(tuple(V.graph.sizevars.simplify(s) for s in group) for group in sizes)

    def codegen_node(self, node: Any) -> None:
        for snode in node.get_nodes():
            snode.mark_run()
        self.free_buffers_in_scheduler()

    def codegen_template(self, template_node: Any, epilogue_nodes: Any, prologue_nodes: Any) -> None:
        for snode in [template_node, *epilogue_nodes, *prologue_nodes]:
            snode.mark_run()
        self.free_buffers_in_scheduler()

    def codegen_sync(self) -> None:
        pass

    def flush(self) -> None:
        pass

    def ready_to_flush(self) -> bool:
        return False


class _Session(threading.local):
    """The GraphLowering objects whose Scheduler ran during the current inner compile."""

    def __init__(self) -> None:
        self.graphs: list[Any] = []


_session = _Session()


def _record_post_fusion(nodes: list[Any]) -> list[Any]:
    # Called inside the Scheduler's constructor: V.graph is the graph being scheduled.
    _session.graphs.append(V.graph)
    return nodes


@contextlib.contextmanager
def capture_context() -> Iterator[None]:
    """Route "cpu" scheduling to CaptureScheduling and apply CONFIG_PATCH, then restore."""
    codegen_common.init_backend_registration()
    saved = codegen_common.device_codegens.get("cpu")
    codegen_common.register_backend_for_device("cpu", CaptureScheduling, PythonWrapperCodegen)
    try:
        with inductor_config.patch({**CONFIG_PATCH, "_post_fusion_custom_pass": _record_post_fusion}), \
                lowerings.installed(), decomp.composites_overridden():
            yield
    finally:
        if saved is None:
            codegen_common.device_codegens.pop("cpu", None)
        else:
            codegen_common.device_codegens["cpu"] = saved


class BoxedRunner:
    """What AOTAutograd calls: the boxed convention (one list argument, cleared by the callee)."""

    def __init__(self, runner: Callable[[list[torch.Tensor]], Sequence[torch.Tensor]]):
        self._runner = runner
        # An instance attribute: AOTAutograd wraps the backward in torch._dynamo.disable,
        # whose functools.wraps copies __dict__ but not class attributes.
        self._boxed_call = True

    def __call__(self, args: list[Any]) -> list[Any]:
        inputs = list(args)
        args.clear()
        return list(self._runner(inputs))


GraphHandler = Callable[[dict, torch.fx.GraphModule], Callable[[list[torch.Tensor]], Sequence[torch.Tensor]]]


def compile_with_capture(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    on_graph: GraphHandler,
    graph_name: Callable[[], str],
    source_root: str,
    ir_store: ir_cache.Store | None = None,
) -> Callable[..., Any]:
    """Run compile_fx on a Dynamo graph; for each post-AOT graph, build its IR and return
    `on_graph(ir, post_aot_gm)`'s runner to AOTAutograd in place of Inductor's compiled code.

    A model on the meta device (no weights in host memory) is compiled as if on cpu: see
    `meta.meta_as_cpu`. The runner is then called with the meta tensors themselves.
    With `ir_store`, a graph whose key (ir_cache.graph_key) is there skips Inductor's lowering
    and Scheduler; a new one is stored."""
    example_inputs = meta.meta_as_cpu(gm, example_inputs)

    def inner_compile(post_gm: torch.fx.GraphModule, inputs: Sequence[Any], **kwargs: Any) -> BoxedRunner:
        _reject_symbolic(inputs)
        static_idxs = set(kwargs.get("static_input_idxs") or ())
        # Keep an eager copy: Inductor's post-grad passes rewrite post_gm in place.
        eager_gm = _copy_graph_module(post_gm)
        name = graph_name()
        flags = {k: kwargs.get(k) for k in ("is_inference", "is_backward", "cpp_wrapper",
                                             "aot_mode", "layout_opt")}
        key = ""
        if ir_store is not None:
            from torch._subclasses.fake_tensor import unset_fake_temporarily

            with unset_fake_temporarily():  # the graph's tensor constants are read for the key
                key = ir_cache.graph_key(post_gm, inputs, static_idxs, source_root, flags)

        def build() -> dict:
            _session.graphs = []
            # Re-entered here because AOTAutograd compiles a backward graph lazily, after
            # compile_fx has returned.
            with capture_context():
                compile_fx_inner(post_gm, inputs, **kwargs)  # lowering + Scheduler; unused
            graphs, _session.graphs = _session.graphs, []
            if graphs:
                return _build_graph_ir(graphs[-1], name, static_idxs, source_root)
            return _build_trivial_ir(eager_gm, inputs, name, static_idxs)  # no calls

        return BoxedRunner(on_graph(ir_cache.cached_ir(ir_store, key, name, build), eager_gm))

    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    try:
        with capture_context():
            return compile_fx(gm, list(example_inputs), inner_compile=inner_compile,
                              decompositions=capture_decompositions())
    except GuardOnDataDependentSymNode as e:  # a decomposition needs a tensor's values
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise CaptureError(
            "a size or index depends on the values of a tensor (" + first + "): the chip's "
            "programs need every size known at compile time") from e


def clear_graph_breaks() -> None:
    """Forget recorded graph breaks (Dynamo's counters survive `torch._dynamo.reset()`)."""
    torch._dynamo.utils.counters["graph_break"].clear()


def graph_break_reasons() -> list[str]:
    """Dynamo's graph-break reasons recorded since `clear_graph_breaks()`, sorted."""
    counter = torch._dynamo.utils.counters["graph_break"]
    return sorted(str(reason) for reason in counter)


def current_compile_id() -> tuple[int, int] | None:
    cid = torch._guards.CompileContext.current_compile_id()
    if cid is None or cid.frame_id is None:
        return None
    return (int(cid.frame_id), int(cid.frame_compile_id or 0))


def _copy_graph_module(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    import copy

    return torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))


def _reject_symbolic(inputs: Sequence[Any]) -> None:
    for inp in inputs:
        sym = isinstance(inp, torch.SymInt) or (
            isinstance(inp, torch.Tensor)
            and any(isinstance(s, torch.SymInt) for s in (*inp.shape, *inp.stride()))
        )
        if sym:
            raise CaptureError(
                "spyre_capture needs static shapes but Dynamo traced symbolic sizes; "
                "call torch.compile(..., dynamic=False)."
            )


# ---------------------------------------------------------------- IR building


def _int(x: Any, what: str) -> int:
    try:
        return int(x)
    except TypeError as e:
        expr = x.node.expr if isinstance(x, torch.SymInt) else x
        if any(str(s).startswith("u") for s in getattr(expr, "free_symbols", ())):  # unbacked
            raise CaptureError(
                f"the {what} {x!r} depends on the values of a tensor (nonzero, unique, "
                "masked_select, ...): the chip's programs need every size known at compile time"
            ) from e
        raise CaptureError(
            f"symbolic {what} {x!r} in the captured graph; call torch.compile(..., dynamic=False)."
        ) from e


def _ints(xs: Sequence[Any], what: str) -> list[int]:
    return [_int(x, what) for x in xs]


def _layout_dict(layout: Any) -> dict:
    size, stride, offset = list(layout.size), list(layout.stride), layout.offset
    symbols = sorted({s for x in (*size, *stride, offset)
                      for s in value_sizes.unbacked_symbols(x)}, key=str)
    if symbols:  # a size a data-dependent op computes
        return {"dtype": _dtype(layout.dtype),
                **value_sizes.symbolic_layout(size, stride, offset, symbols)}
    return {
        "dtype": _dtype(layout.dtype),
        "size": _ints(size, "size"),
        "stride": _ints(stride, "stride"),
        "offset": _int(offset, "offset"),
    }


def _storage_name(node: Any) -> str:
    """The buffer whose storage `node` (a view, box or buffer) lives in."""
    while isinstance(node, (ir.BaseView, ir.MutableBox)):
        node = node.data
    return node.get_name()


def _tensor_dict(node: Any) -> dict:
    spec = node.get_output_spec()
    if isinstance(spec, ir.MultiOutputLayout):  # a fallback's tuple result: no single layout
        return {"buffer": _storage_name(node), "dtype": None, "size": [], "stride": [], "offset": 0}
    return {"buffer": _storage_name(node), **_layout_dict(node.get_layout())}


def _build_graph_ir(graph: Any, name: str, static_idxs: set[int], source_root: str) -> dict:
    with V.set_graph_handler(graph):
        buffers: dict[str, dict] = {}
        inputs = []
        for i, in_name in enumerate(graph.graph_input_names):
            value = graph.graph_inputs[in_name]
            if not isinstance(value, ir.IRNode):
                raise CaptureError(f"graph input {in_name} is not a tensor ({value!r}); use dynamic=False")
            kind = "parameter" if i in static_idxs else "input"
            buffers[in_name] = _buffer(in_name, kind, value.get_layout())
            inputs.append(in_name)
        # A tensor constant Inductor lifted out of the graph (a decomposition's torch.tensor
        # of indices) is one more input, after the graph's own: compile_graph's runner supplies
        # its values from the graph module at each call.
        constants = sorted(graph.constants)
        for const_name in constants:
            t = graph.constants[const_name]
            buffers[const_name] = {
                "name": const_name, "kind": "constant", "dtype": _dtype(t.dtype),
                "size": list(t.shape), "stride": list(t.stride()), "offset": t.storage_offset(),
                "view_of": None,
            }
            inputs.append(const_name)
        nodes = []
        checks = []
        for snode in graph.scheduler.nodes:
            for sub in snode.get_nodes():
                if _is_error_check(sub.node):
                    checks.append(_error_check(sub.node))
                    continue
                node_ir = _node_ir(sub, source_root)
                if isinstance(sub.node, ir.AssertScalar):  # checked at capture: no node, no buffer
                    continue
                for buf in sub.get_outputs():
                    bname = buf.get_name()
                    if bname not in buffers:
                        buffers[bname] = _node_buffer(buf.node)
                if node_ir is not None:
                    nodes.append(node_ir)
        outputs = [_output(o) for o in graph.graph_outputs]
        outputs += [c["input"] for c in checks]  # read back after the run: see _error_check
        for out in outputs:
            b = buffers.get(out["buffer"])
            if b is not None and b["kind"] == "intermediate":
                b["kind"] = "output"
    doc = {
        "schema": "spyre-sim-ir",
        "version": 1,
        "torch_version": torch.__version__,
        "stage": "scheduler",
        "graph": name,
        "buffers": list(buffers.values()),
        "inputs": inputs,
        "outputs": outputs,
        "nodes": nodes,
    }
    if constants:
        doc["constants"] = constants
    if checks:
        doc["checks"] = checks
    random_seeds.seeds_as_input(doc)
    return doc


def _is_error_check(node: Any) -> bool:
    return isinstance(node, ir.FallbackKernel) and \
        getattr(node, "op_overload", None) == torch.ops.aten._linalg_check_errors.default


def _error_check(node: Any) -> dict:
    """torch.linalg's check of a factorisation's `info` (raise on a singular matrix, ...): not
    a node of the IR. The chip computes `info`; it becomes one more graph output (after the
    graph's own), which the runtime reads back after the run and checks with torch's own
    `_linalg_check_errors`, raising eager's error (SCHEMA.md `checks`)."""
    tensors = [t for t in node.inputs if isinstance(t, ir.IRNode)]
    if len(tensors) != 1:
        raise CaptureError(f"{node.get_name()}: _linalg_check_errors with {len(tensors)} tensor "
                           "inputs, expected 1")
    call = _fallback_call(node)
    return {"op": str(node.op_overload), "input": _tensor_dict(tensors[0]),
            "args": call["args"], "kwargs": call["kwargs"]}


def _build_trivial_ir(gm: torch.fx.GraphModule, inputs: Sequence[Any], name: str, static_idxs: set[int]) -> dict:
    """IR of a graph with no calls: every output is a graph input."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    buffers, names = [], []
    for i, (ph, t) in enumerate(zip(placeholders, inputs)):
        kind = "parameter" if i in static_idxs else "input"
        buffers.append({
            "name": ph.name, "kind": kind, "dtype": _dtype(t.dtype), "size": list(t.shape),
            "stride": list(t.stride()), "offset": int(t.storage_offset()), "view_of": None,
        })
        names.append(ph.name)
    by_node = {ph: b for ph, b in zip(placeholders, buffers)}
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    outputs = []
    for arg in out_node.args[0]:
        if arg not in by_node:
            raise CaptureError(f"graph without calls returns a non-input {arg!r}")
        b = by_node[arg]
        outputs.append({k: b[k] for k in ("dtype", "size", "stride", "offset")} | {"buffer": b["name"]})
    return {
        "schema": "spyre-sim-ir", "version": 1, "torch_version": torch.__version__,
        "stage": "scheduler", "graph": name, "buffers": buffers, "inputs": names,
        "outputs": outputs, "nodes": [],
    }


def _buffer(name: str, kind: str, layout: Any, view_of: str | None = None) -> dict:
    return {"name": name, "kind": kind, **_layout_dict(layout), "view_of": view_of}


def _node_buffer(node: Any) -> dict:
    layout = node.get_output_spec()
    if isinstance(layout, ir.NonOwningLayout):
        return _buffer(node.get_name(), "view", layout.view.get_layout(), _storage_name(layout.view))
    if isinstance(layout, ir.MutationLayoutSHOULDREMOVE):
        target = layout.get_buffer()
        return _buffer(node.get_name(), "view", target.get_layout(), target.get_name())
    # A fallback's tuple (MultiOutputs hold its tensors), or nothing at all (an extern kernel
    # that only updates its inputs in place: scatter_add_, index_put_).
    if isinstance(layout, (ir.MultiOutputLayout, ir.NoneLayout)):
        return {"name": node.get_name(), "kind": "intermediate", "dtype": None, "size": [],
                "stride": [], "offset": 0, "view_of": None}
    return _buffer(node.get_name(), "intermediate", layout)


def _output(node: Any) -> dict:
    if isinstance(node, ir.ShapeAsConstantBuffer) or not isinstance(node, ir.IRNode):
        raise CaptureError(f"graph output {node!r} is not a tensor; use dynamic=False")
    return _tensor_dict(node)


def _node_common(snode: Any, kind: str, source_root: str) -> dict:
    origins = sorted(snode.node.get_origins(), key=lambda n: n.name)
    aten = set()
    for o in origins:
        target = o.meta.get("original_aten") or (o.target if o.op == "call_function" else None)
        if target is not None:
            aten.add(str(target))
    return {
        "name": snode.get_name(),
        "kind": kind,
        "outputs": [b.get_name() for b in snode.get_outputs()],
        "origins": [o.name for o in origins],
        "aten": sorted(aten),
        "source": _source_line(origins, source_root),
    }


def _graph_position(fx_node: Any, cache: dict) -> int:
    graph = fx_node.graph
    if graph not in cache:
        cache[graph] = {n: i for i, n in enumerate(graph.nodes)}
    return cache[graph].get(fx_node, -1)


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_TORCH_PARENT = os.path.dirname(os.path.dirname(torch.__file__)) + os.sep


def _source_line(origins: Sequence[Any], source_root: str) -> str | None:
    """The innermost frame outside torch of the origin latest in graph order (the op that
    produces the node's value) that has a stack trace; when every frame is inside torch (a
    torch.nn module called directly), the innermost one, as `torch/...`."""
    cache: dict = {}
    for o in sorted(origins, key=lambda n: _graph_position(n, cache), reverse=True):
        trace = o.meta.get("stack_trace")
        if not trace:
            continue
        frames = [(f, int(line)) for f, line in _FRAME.findall(trace)]
        user = [fl for fl in frames if not fl[0].startswith(_TORCH_DIR)]
        if user or frames:
            path, line = (user or frames)[-1]
            return f"{_portable_path(path, source_root)}:{line}"
    return None


def _portable_path(path: str, source_root: str) -> str:
    """`path` relative to the installed-packages folder holding it (`torch/nn/...`,
    `transformers/...`), else to `source_root` when under it, else absolute: captures stay
    byte-identical across checkouts and virtual environments."""
    roots = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))] + [_TORCH_PARENT]
    for root in sorted(roots, key=len, reverse=True):
        root = os.path.join(os.path.abspath(root), "")
        if path.startswith(root):
            return path[len(root):]
    rel = os.path.relpath(path, source_root)
    return path if rel.startswith("..") else rel


def _node_ir(snode: Any, source_root: str) -> dict | None:
    node = snode.node
    if isinstance(snode, inductor_scheduler.NopKernelSchedulerNode):
        return None
    if isinstance(node, ir.AssertScalar):  # a check on a size a data-dependent op computed
        value_sizes.check_assert_scalar(node)
        return None
    if isinstance(snode, inductor_scheduler.SchedulerNode) and not snode.is_template():
        return _loop_node_ir(snode, source_root)
    if isinstance(node, ir.ExternKernel) and not isinstance(node, (ir.FallbackKernel, ir.MultiOutput)):
        return _extern_node_ir(snode, "extern", source_root)
    return _extern_node_ir(snode, "fallback", source_root)


def _extern_node_ir(snode: Any, kind: str, source_root: str) -> dict:
    node = snode.node
    out = _node_common(snode, kind, source_root)
    op = getattr(node, "op_overload", None)
    kernel = getattr(node, "python_kernel_name", None)
    if kernel is None and isinstance(node, ir.TemplateBuffer):
        kernel = type(node).__name__
    inputs = [_tensor_dict(i) for i in getattr(node, "inputs", []) if isinstance(i, ir.IRNode)]
    layout = node.get_output_spec()
    out.update({
        "kernel": kernel or type(node).__name__,
        "op_overload": str(op) if op is not None else None,
        "inputs": inputs,
        "constant_args": [_jsonable(a) for a in getattr(node, "constant_args", ())],
        "kwargs": {k: _jsonable(v) for k, v in sorted(getattr(node, "kwargs", {}).items())},
        "layout": _layout_dict(layout) if isinstance(layout, ir.Layout) and not isinstance(layout, ir.MultiOutputLayout) else None,
    })
    if isinstance(node, ir.FallbackKernel):
        out["call"] = _fallback_call(node)
        why = decomp.left_whole(out["op_overload"] or "", [i["size"] for i in inputs])
        if why:
            out["why"] = why
    if isinstance(node, ir.MultiOutput):
        out["indices"] = [_int(i, "MultiOutput index") for _, i in node.indices]
    return out


def _fallback_call(node: Any) -> dict:
    """The ATen call of a FallbackKernel: `{"args", "kwargs"}` in the op's schema order, each
    tensor argument replaced by `{"input": i}`, an index into the node's `inputs`."""
    placeholders, i = [], 0
    for t in node.inputs:
        if isinstance(t, ir.IRNode):
            placeholders.append(_TensorRef(i))
            i += 1
        else:
            placeholders.append(None)
    args, kwargs = node.unflatten_args(placeholders, node.constant_args)
    kwargs = {**node.kwargs, **kwargs}  # tensor kwargs: the placeholders of unflatten_args
    out = {"args": [_jsonable(a) for a in args],
           "kwargs": {k: _jsonable(v) for k, v in sorted(kwargs.items())}}
    # Tensor arguments the op writes (its schema's Tensor(a!)): a host fallback writes them back.
    schema = getattr(getattr(node, "op_overload", None), "_schema", None)
    if schema is not None:
        values = {a.name: (args[i] if i < len(args) else kwargs.get(a.name))
                  for i, a in enumerate(schema.arguments)}
        mutated = sorted(v.index for a in schema.arguments
                         if a.alias_info is not None and a.alias_info.is_write
                         for v in [values.get(a.name)] if isinstance(v, _TensorRef))
        if mutated:
            out["mutated_inputs"] = mutated
    return out


class _TensorRef:
    def __init__(self, index: int):
        self.index = index


def _jsonable(v: Any) -> Any:
    """A fallback call's argument as JSON: tensors by input position, containers element by
    element, dtypes by name, scalars as loop bodies write them."""
    if isinstance(v, _TensorRef):
        return {"input": v.index}
    if isinstance(v, ir.IRNode):  # a tensor argument outside `inputs` (should not happen)
        return {"buffer": _storage_name(v)}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in sorted(v.items())}
    if isinstance(v, torch.dtype):
        return _dtype(v)
    return loop_body.scalar_json(v)


def _loop_node_ir(snode: Any, source_root: str) -> dict:
    iter_sizes, reduce_sizes = snode._sizes
    iter_sizes = _ints(iter_sizes, "loop size")
    reduce_sizes = _ints(reduce_sizes, "reduction size")
    xs, rs, body = loop_body.record_body(snode, iter_sizes, reduce_sizes)
    reduction_type = snode.node.get_reduction_type() if snode.is_reduction() else None
    out = _node_common(snode, "reduction" if reduction_type else "pointwise", source_root)
    out.update({
        "vars": xs,
        "sizes": iter_sizes,
        "reduce_vars": rs,
        "reduce_sizes": reduce_sizes,
        "reduction_type": reduction_type,
        "body": body,
    })
    return out
