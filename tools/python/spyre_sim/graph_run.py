"""Compiling a captured graph and running it timing-only, without torch: shared by the backend
(a graph Dynamo just captured) and by a model entry's replay (model_cache.py)."""

import json
import os
import time

from . import files
from ._core import core


def compile_graph(sess, ir: dict, text: str, parse_report: bool = True):
    """(executable, compile report, label) of the graph `ir` (`text`: its JSON) for `sess`'s
    configuration, recorded in the session (its IR, report and program cache hit). With
    `parse_report` False the report is kept as its JSON text (a replay only writes it out)."""
    label = f"<{ir.get('graph', 'graph')}>"
    if sess.save_ir:  # the report then names a file that `spyre-sim trace validate` can re-run
        os.makedirs(sess.save_ir, exist_ok=True)
        label = os.path.join(sess.save_ir, f"{ir.get('graph', 'graph')}.ir.json")
        files.write_atomic(label, text)
    exe = core.Executable.from_ir(text, sess.arch, sess.sets, label, sess.cache)
    report = json.loads(exe.report) if parse_report else exe.report
    if sess.keep_graphs:
        sess.graph_irs.append(text)
    sess.from_cache.append(exe.from_cache)
    sess.reports.append(report)
    return exe, report, label


def run_timing(sess, exe, trace: str, timing_runs: dict):
    """(run output, summary) of one timing-only call of `exe`, recorded in the session. Such a
    run reads no values and depends on nothing else, so a repeat (the next decode step) is that
    same run: with Session.reuse_timing and no trace it is not simulated again (`timing_runs`:
    the program's first run) and its summary says "reused"."""
    t0 = time.perf_counter()
    reused = sess.reuse_timing and not trace and "out" in timing_runs
    if reused:
        out = timing_runs["out"]
    else:
        out = exe.run([], trace, True, sess.trace_filter, sess.trace_detail)
        timing_runs["out"] = out
    sess.sim_seconds.append(time.perf_counter() - t0)
    summary = json.loads(out["summary"])
    if reused:
        summary["reused"] = True
    sess.runs.append(summary)
    return out, summary


def replay(sess, graphs: list, calls: list) -> None:
    """Compiles `graphs` (IR JSON texts) and runs them timing-only in the order of `calls`
    (indices into `graphs`), as the model that captured them called them; the session's reports
    are JSON texts."""
    exes = [compile_graph(sess, json.loads(text), text, parse_report=False)[0]
            for text in graphs]
    timing_runs = [{} for _ in graphs]
    for g in calls:
        if sess.keep_graphs:
            sess.calls.append(g)
        run_timing(sess, exes[g], sess.next_trace_path(), timing_runs[g])
