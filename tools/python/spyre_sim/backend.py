"""The `spyre_sim` backend for torch.compile: Inductor's IR is captured (no CPU kernels are
generated), compiled by the C++ compiler for the configured chip, and every call of the
compiled graph runs on the SystemC chip model."""

import json
import os

from . import files
from . import session as _session
from . import tensors
from ._core import core

_last = {"result": None}


def _make_runner(ir: dict):
    sess = _session.current()
    text = json.dumps(ir, sort_keys=True)
    label = f"<{ir.get('graph', 'graph')}>"
    if sess.save_ir:  # the report then names a file that `spyre-sim trace validate` can re-run
        label = os.path.join(sess.save_ir, f"{ir.get('graph', 'graph')}.ir.json")
        files.write_atomic(label, text)
    exe = core.Executable.from_ir(text, sess.arch, sess.sets, label)
    report = json.loads(exe.report)
    sess.reports.append(report)
    in_bindings, out_bindings = exe.inputs, exe.outputs

    def runner(inputs):
        if len(inputs) != len(in_bindings):
            raise core.SpyreError(
                f"graph {ir.get('graph')}: called with {len(inputs)} inputs, compiled for "
                f"{len(in_bindings)}")
        data = [tensors.to_storage(t, b) for t, b in zip(inputs, in_bindings)]
        trace = sess.next_trace_path()
        out = exe.run(data, trace, sess.timing_only, sess.trace_filter)
        summary = json.loads(out["summary"])
        sess.runs.append(summary)
        results = [tensors.from_storage(d, b) for d, b in zip(out["outputs"], out_bindings)]
        from .result import Result

        record_result(Result(outputs=results, summary=summary, reports=[report],
                             trace_path=trace or None))
        return results

    return runner


def spyre_sim_backend(gm, example_inputs):
    """A Dynamo backend: `torch.compile(model, backend=spyre_sim_backend)` or "spyre_sim"."""
    from spyre_capture import compile_graph

    return compile_graph(gm, example_inputs, _make_runner)


def record_result(result):
    _last["result"] = result


def last_backend_result():
    return _last["result"]

