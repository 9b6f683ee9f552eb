"""`spyre_sim.run`: compile a function or module with the spyre_sim backend, simulate it on a
configured chip and compare its outputs with eager PyTorch on the same inputs."""

import copy
import json
import math
from typing import Optional

import torch

from . import backend as _backend
from . import session as _session
from ._core import core
from .result import Result

# The reference is eager PyTorch computed in fp32 on the same (fp16) inputs and weights: eager
# fp16 rounds every intermediate and is itself off by more than the simulator (exp of a rounded
# argument, say). A result matches when every element is within REL_TOL[sim dtype] * RMS(ref)
# + ABS_TOL of the reference, plus one unit in the last place of the output dtype at that value
# (the rounding of the output itself). `max_abs_err` reports that excess over the ulp.
REL_TOL = {torch.float16: 1e-2, torch.bfloat16: 2e-2, torch.float32: 1e-4}
ABS_TOL = 1e-3


def _flatten(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for item in x for t in _flatten(item)]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in _flatten(x[k])]
    return []


def _upcast(x):
    if isinstance(x, torch.Tensor) and x.dtype in (torch.float16, torch.bfloat16):
        return x.float()
    if isinstance(x, (list, tuple)):
        return type(x)(_upcast(v) for v in x)
    if isinstance(x, dict):
        return {k: _upcast(v) for k, v in x.items()}
    return x


def reference(fn, inputs):
    """Eager PyTorch in fp32 on the same inputs and weights (16-bit floats upcast exactly)."""
    if isinstance(fn, torch.nn.Module):
        fn = copy.deepcopy(fn).float()
    with torch.no_grad():
        return fn(*_upcast(tuple(inputs)))


def compare(actual, expected):
    """(match, max_abs_err, tolerance) over every tensor of two output structures."""
    a, e = _flatten(actual), _flatten(expected)
    if len(a) != len(e):
        return False, math.inf, 0.0
    worst, ok = None, True
    for x, y in zip(a, e):
        if x.shape != y.shape:
            return False, math.inf, 0.0
        if y.is_floating_point():
            y32, x32 = y.float(), x.float()
            # NaN and infinities must sit where eager has them (pow of a negative base, 1/0,
            # a value beyond the output dtype's range); the tolerance applies to the rest.
            y_out = y32.to(x.dtype).float() if x.is_floating_point() else y32
            finite = torch.isfinite(y_out)
            special = ~finite & ~((x32 == y_out) | (torch.isnan(x32) & torch.isnan(y_out)))
            y32, x32 = y32[finite], x32[finite]
            rms = float(y32.pow(2).mean().sqrt()) if y32.numel() else 0.0
            tol = REL_TOL.get(x.dtype, 1e-2) * rms + ABS_TOL
            ulp = torch.finfo(x.dtype).eps * y32.abs()
            err = float(((x32 - y32).abs() - ulp).clamp(min=0).max()) if y32.numel() else 0.0
            if not math.isfinite(err) or bool(special.any()):
                err = math.inf
        else:
            tol, err = 0.0, float((x != y).sum())
        ok = ok and err <= tol
        if worst is None or err - tol > worst[0] - worst[1]:
            worst = (err, tol)
    worst_err, worst_tol = worst if worst else (0.0, 0.0)
    return ok, worst_err, worst_tol


def run(fn, inputs, arch: Optional[str] = None, set=None, trace: Optional[str] = None,
        timing_only: bool = False, compare_eager: bool = True,
        trace_filter: Optional[str] = None, save_ir: Optional[str] = None,
        trace_detail: str = "summary", cache: bool = True, keep_graphs: bool = False) -> Result:
    """Compile `fn` (a module or function) for the chip, run it on `inputs` in the simulator.

    arch: preset name or YAML file ("spyre" by default); set: ["key=value", ...] overrides;
    trace: trace path, `.pftrace` for Perfetto protobuf, else Chrome JSON (several subgraphs
    get .1, .2 suffixes); trace_filter: what to keep, as `spyre-sim run --trace-filter`
    (`unit=pt,dma;core=0-3;window=A:B`); trace_detail: "summary" (kernels, barriers and
    per-window unit busy, DRAM and ring counters) or "full" (also every instruction, DRAM
    transaction, ring transfer and flow), as `--trace-detail`; save_ir: a folder where each
    captured graph's IR JSON is written (`<graph>.ir.json`, named by the compile report's
    `file`); cache: look up and store compiled programs in the program cache
    ($SPYRE_SIM_CACHE, default ~/.cache/spyre-sim; `--no-cache`); keep_graphs: the result
    keeps each captured graph's IR and the order the model called them (`graph_irs`,
    `calls`)."""
    import torch._dynamo

    inputs = tuple(inputs)
    if trace_detail not in ("summary", "full"):
        raise ValueError(f"trace_detail: {trace_detail!r} is not 'summary' or 'full'")
    sess = _session.Session(arch, set, trace, timing_only, trace_filter, save_ir,
                            trace_detail=trace_detail, cache=cache, keep_graphs=keep_graphs)
    torch._dynamo.reset()
    from spyre_capture import adapter

    adapter.clear_graph_breaks()
    with _session.active(sess), torch.no_grad():
        compiled = torch.compile(fn, backend=_backend.spyre_sim_backend, dynamic=False)
        try:
            outputs = compiled(*inputs)
        except torch._dynamo.exc.BackendCompilerFailed as e:
            # Dynamo wraps our own errors (unsupported op, bad shape); show the user ours.
            inner = getattr(e, "inner_exception", None)
            if inner is None:
                raise
            raise inner.with_traceback(inner.__traceback__) from None
    torch._dynamo.reset()
    if not sess.runs:
        raise core.SpyreError(_nothing_simulated(adapter.graph_break_reasons()))
    summary = json.loads(core.merge_summaries([json.dumps(s) for s in sess.runs]))
    if compare_eager and not timing_only:
        ok, err, tol = compare(outputs, reference(fn, inputs))
        summary.update(outputs_match=ok, max_abs_err=err, tolerance=tol)
    result = Result(outputs=outputs, summary=summary, reports=sess.reports,
                    trace_path=summary.get("trace"), from_cache=sess.from_cache,
                    graph_irs=sess.graph_irs, calls=sess.calls)
    _backend.record_result(result)
    return result


def last_result() -> Optional[Result]:
    """The latest run's result: of spyre_sim.run, or of a graph compiled with the backend."""
    return _backend.last_backend_result()


def _nothing_simulated(breaks: list) -> str:
    """Why a run simulated nothing: no graph reached the chip, and Dynamo's graph breaks when
    it broke the model up (an op whose output size depends on values, e.g. nonzero, without
    `torch._dynamo.config.capture_dynamic_output_shape_ops`, runs eagerly)."""
    text = "run: nothing was simulated (the model has no device work)"
    if not breaks:
        return text
    shown = "; ".join(b.splitlines()[0] for b in breaks[:3])
    more = f" and {len(breaks) - 3} more" if len(breaks) > 3 else ""
    return f"{text}: Dynamo broke the graph and ran the model eagerly ({shown}{more})"
