"""What the spyre-sim CLI runs in its embedded interpreter for a model file."""

import json
import os
import runpy


class ModelFileError(Exception):
    pass


def run_model_file(path, arch, sets, trace, out, timing_only, trace_filter=""):
    """(summary JSON, compile report JSON, torch version) of one run of a model file."""
    import torch

    from .api import run

    if not os.path.exists(path):
        raise ModelFileError(f"{path}: no such file")
    namespace = runpy.run_path(path, run_name="__spyre_model__")
    for name in ("model", "example_inputs"):
        if name not in namespace:
            raise ModelFileError(f"{path}: defines no `{name}` (a model file defines `model` "
                                 "and `example_inputs`)")
    result = run(namespace["model"], namespace["example_inputs"], arch=arch, set=list(sets),
                 trace=trace, timing_only=timing_only, trace_filter=trace_filter,
                 save_ir=out)
    report = result.reports[0] if len(result.reports) == 1 else {"subgraphs": result.reports}
    return json.dumps(result.summary), json.dumps(report), torch.__version__
