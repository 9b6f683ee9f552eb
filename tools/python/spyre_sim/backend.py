"""The `spyre_sim` backend for torch.compile: Inductor's IR is captured (no CPU kernels are
generated), compiled by the C++ compiler for the configured chip, and every call of the
compiled graph runs on the SystemC chip model."""

import json
import time

import torch

from . import graph_run, host_fallback
from . import session as _session
from . import tensors
from ._core import core

_last = {"result": None}


def _make_runner(ir: dict):
    from spyre_capture import random_seeds

    sess = _session.current()
    graph = len(sess.reports)  # this graph's index: one report per compiled graph
    exe, report, label = graph_run.compile_graph(sess, ir, json.dumps(ir, sort_keys=True))
    in_bindings, out_bindings = exe.inputs, exe.outputs
    timing_runs = {}  # this program's timing-only run (runs are data-independent)
    checks = ir.get("checks", [])

    def runner(inputs):
        # A graph that draws random numbers gets this call's seeds as its last input.
        inputs = random_seeds.with_seeds(ir, inputs)
        if len(inputs) != len(in_bindings):
            raise core.SpyreError(
                f"graph {ir.get('graph')}: called with {len(inputs)} inputs, compiled for "
                f"{len(in_bindings)}")
        if sess.keep_graphs:
            sess.calls.append(graph)
        trace = sess.next_trace_path()
        symbols = {}  # the sizes this call's data-dependent ops computed on the host
        if sess.timing_only:
            # No values are read: nothing is copied (the inputs may be meta tensors: a model
            # whose weights were never materialised).
            out, summary = graph_run.run_timing(sess, exe, trace, timing_runs)
        else:
            t0 = time.perf_counter()
            if any(t.device.type == "meta" for t in inputs):
                raise core.SpyreError(
                    f"graph {ir.get('graph')}: its inputs are meta tensors (no values); a model "
                    "on the meta device runs timing-only (timing_only=True, --timing-only)")
            data = [tensors.to_storage(t, b) for t, b in zip(inputs, in_bindings)]
            out = exe.run(data, trace, False, sess.trace_filter, sess.trace_detail,
                          lambda call, dram: host_fallback.execute(call, dram, symbols))
            sess.sim_seconds.append(time.perf_counter() - t0)
            summary = json.loads(out["summary"])
            sess.runs.append(summary)
        if sess.timing_only and inputs and inputs[0].device.type == "meta":
            results = [tensors.empty_like_binding(b, inputs[0].device) for b in out_bindings]
        else:
            results = [_output(d, b, o, None if sess.timing_only else symbols, label)
                       for d, b, o in zip(out["outputs"], out_bindings, ir["outputs"])]
        # A factorisation's `info` that torch.linalg checks (SCHEMA.md `checks`): the last
        # outputs, read back and checked as eager does (not when nothing was computed).
        if checks:
            own = len(results) - len(checks)
            infos, results = results[own:], results[:own]
            if not sess.timing_only:
                for check, info in zip(checks, infos):
                    host_fallback.run_check(check, info)
        # Inputs the graph updates in place (a KV cache, `x.add_(y)`): the compiled graph must
        # leave the new values in the caller's tensors, as Inductor's own code would.
        for i, data in out["mutated"].items():
            with torch.no_grad():
                inputs[i].copy_(tensors.from_storage(data, in_bindings[i]))
        from .result import Result

        record_result(Result(outputs=results, summary=summary, reports=[report],
                             trace_path=trace or None))
        return results

    return runner


def _output(data: bytes, binding: dict, ir_output: dict, symbols: dict | None, label: str):
    """A graph output from its storage. One whose size a data-dependent op computed lies at the
    head of the buffer planned for its upper bound: it is read at the size the host found (a
    timing-only run, which computes nothing, returns the bound's: `symbols` None)."""
    if not ir_output.get("symbolic") or symbols is None:
        return tensors.from_storage(data, binding)
    real = host_fallback.resolved({**ir_output, **binding}, symbols, label)
    if real["offset"] != ir_output["offset"]:
        raise core.SpyreError(f"{label}: output {ir_output['buffer']}: an offset that depends "
                              "on the values of a tensor is not supported")
    return tensors.from_storage(data, real)


class _IrStore:
    """Captured IR in the program cache's folder ($SPYRE_SIM_CACHE/ir, spyre_capture.ir_cache)."""

    def load(self, key):
        return core.cache_load("ir", key)

    def store(self, key, data):
        core.cache_store("ir", key, data)


def spyre_sim_backend(gm, example_inputs):
    """A Dynamo backend: `torch.compile(model, backend=spyre_sim_backend)` or "spyre_sim"."""
    from spyre_capture import compile_graph

    store = _IrStore() if _session.current().cache and core.cache_enabled() else None
    return compile_graph(gm, example_inputs, _make_runner, ir_store=store)


def record_result(result):
    _last["result"] = result


def last_backend_result():
    return _last["result"]

