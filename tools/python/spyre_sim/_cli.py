"""What the spyre-sim CLI runs in its embedded interpreter for a model file."""

import json
import os
import runpy
import traceback


def parse_args(parser, argv):
    """argparse's parse_args with its exits turned into exit codes, for the subcommands the CLI
    runs here: (namespace, None), or (None, 0) after --help, or (None, 2) after a usage error
    (argparse has printed the message)."""
    try:
        return parser.parse_args(argv), None
    except SystemExit as e:
        return None, 0 if e.code in (0, None) else 2


class ModelFileError(Exception):
    pass


class ModelFileRaised(Exception):
    """The model file itself raised; the message is its traceback from the file's first frame."""


def run_model_file(path, arch, sets, trace, out, timing_only, trace_filter="",
                   trace_detail="summary", cache=True):
    """(summary JSON, compile report JSON, torch version, compiled subgraphs, of them found in
    the program cache, the model entry: "hit", "stored", "not stored: <why>" or "" for none)
    of one run of a model file. A timing-only run with the cache on looks the model up among
    the cache's model entries first (model_cache.py): on a hit the model file is not run, and
    torch is not imported; a replay that fails runs the model instead."""
    from . import model_cache
    from ._core import core

    if not os.path.exists(path):
        raise ModelFileError(f"{path}: no such file")
    entry_key = None
    if timing_only and cache and core.cache_enabled():
        try:
            entry_key = model_cache.key(path)
        except OSError:  # unreadable: the run below says so
            entry_key = None
    entry = model_cache.lookup(entry_key) if entry_key else None
    if entry:
        replayed = _replay(entry, arch, sets, trace, out, trace_filter, trace_detail, cache)
        if replayed:
            return replayed
    recording = model_cache.Recording() if entry_key else None
    if recording:
        recording.start()
    try:
        result, torch_version = _run_model_file(path, arch, sets, trace, out, timing_only,
                                                trace_filter, trace_detail, cache,
                                                keep_graphs=recording is not None)
    finally:
        seen = recording.stop() if recording else None
    stored = ""
    if recording:
        try:
            records = recording.records(seen)
            model_cache.store(entry_key, records, result.graph_irs, result.calls,
                              torch_version)
            stored = "stored"
        except model_cache.Unrecordable as e:
            stored = f"not stored: {e}"
        except OSError as e:  # the run itself succeeded: it still reports
            stored = f"not stored: {e}"
    hits = result.from_cache
    return (json.dumps(result.summary), json.dumps(_report(result.reports)), torch_version,
            len(hits), sum(hits), stored)


def _replay(entry, arch, sets, trace, out, trace_filter, trace_detail, cache):
    """run_model_file's answer from a model entry, or None when its graphs no longer compile
    or run here (the model then runs as if there were no entry)."""
    from . import graph_run
    from . import session as _session
    from ._core import core

    sess = _session.Session(arch, sets, trace or None, True, trace_filter, out,
                            trace_detail=trace_detail, cache=cache)
    try:
        graph_run.replay(sess, entry["graphs"], entry["calls"])
    except (core.SpyreError, ValueError):  # a graph that no longer compiles, or damaged text
        return None
    summary = core.merge_summaries([json.dumps(s) for s in sess.runs])
    texts = sess.reports  # JSON texts (graph_run.replay)
    report = texts[0] if len(texts) == 1 else '{"subgraphs": [' + ",".join(texts) + "]}"
    return (summary, report, entry["torch_version"], len(sess.from_cache),
            sum(sess.from_cache), "hit")


def _report(reports: list) -> dict:
    return reports[0] if len(reports) == 1 else {"subgraphs": reports}


def _run_model_file(path, arch, sets, trace, out, timing_only, trace_filter, trace_detail,
                    cache, keep_graphs=False):
    """(Result, torch version) of running the model file through spyre_sim.run."""
    import torch

    from .api import run

    try:
        namespace = runpy.run_path(path, run_name="__spyre_model__")
    except Exception as e:  # noqa: BLE001 - the user's code: show them their traceback
        tb = traceback.TracebackException.from_exception(e)
        mine = os.path.abspath(path)
        first = next((i for i, f in enumerate(tb.stack) if os.path.abspath(f.filename) == mine), 0)
        tb.stack = traceback.StackSummary.from_list(tb.stack[first:])
        raise ModelFileRaised("".join(tb.format())) from None
    for name in ("model", "example_inputs"):
        if name not in namespace:
            raise ModelFileError(f"{path}: defines no `{name}` (a model file defines `model` "
                                 "and `example_inputs`)")
    result = run(namespace["model"], namespace["example_inputs"], arch=arch, set=list(sets),
                 trace=trace or None, timing_only=timing_only, trace_filter=trace_filter,
                 trace_detail=trace_detail, save_ir=out, cache=cache, keep_graphs=keep_graphs)
    return result, torch.__version__
