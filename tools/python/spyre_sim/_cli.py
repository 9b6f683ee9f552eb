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
    the program cache) of one run of a model file."""
    import torch

    from .api import run

    if not os.path.exists(path):
        raise ModelFileError(f"{path}: no such file")
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
                 trace_detail=trace_detail, save_ir=out, cache=cache)
    report = result.reports[0] if len(result.reports) == 1 else {"subgraphs": result.reports}
    hits = result.from_cache
    return json.dumps(result.summary), json.dumps(report), torch.__version__, len(hits), sum(hits)
