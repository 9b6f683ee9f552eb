"""`spyre-sim trace <report|view|validate> ...`: argparse front end, run by the CLI's embedded
interpreter (tools/cli/cmd_trace.cpp) or as `python -m spyre_sim.trace.cli`.

Exit statuses: 0 ok, 1 a failed check (validate), 2 bad input (a message naming the file).
"""

import argparse
import importlib
import json
import re
import sys
import time

from .._cli import parse_args
from ..files import write_atomic


class InputError(Exception):
    """Bad input: the message names the file."""


def _load(path):
    from .model import load

    try:
        return load(path)
    except InputError:
        raise
    except Exception as e:  # any reader failure is bad input, reported with the file name
        msg = str(e)
        raise InputError(msg if path in msg else f"{path}: {msg}") from e


def _compile_report(path):
    from .report import load_compile_report

    try:
        return load_compile_report(path)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: cannot read the compile report: {e}") from e


def cmd_report(a):
    from . import report

    loaded = _load(a.trace)
    rep = report.build(loaded, _compile_report(a.report), a.report)
    if a.json:
        print(json.dumps(rep))
    else:
        sys.stdout.write(report.text(rep))
    return 0


def cmd_view(a):
    from . import report, view

    try:
        import bokeh  # noqa: F401
    except ImportError as e:
        raise InputError(f"{a.output}: cannot make the page: bokeh is missing from the Python "
                         f"environment ({e}); `make venv` installs the pinned one") from e

    t0 = time.monotonic()
    loaded = _load(a.trace)
    rep = report.build(loaded, _compile_report(a.report), a.report)
    window = None
    if a.window:
        m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", a.window)
        if not m or int(m.group(1)) >= int(m.group(2)):
            raise InputError(f"--window: {a.window!r} is not A:B cycles with A < B")
        window = (int(m.group(1)), int(m.group(2)))
    html, info = view.page(loaded, rep, max_detail=a.max_detail, bins=a.bins, window=window)
    try:
        write_atomic(a.output, html)
    except OSError as e:
        raise InputError(f"{a.output}: cannot write: {e}") from e
    print(f"wrote {a.output}: {len(html.encode()) / 1e6:.1f} MB, {info['detailed']:,} spans drawn "
          f"one by one, {info['binned_tracks']} of {info['tracks']} tracks binned, "
          f"{time.monotonic() - t0:.1f} s")
    return 0


def _add_validate(sub):
    try:
        validate = importlib.import_module(".validate", __package__)
    except ModuleNotFoundError as e:
        if e.name != f"{__package__}.validate":
            raise
        p = sub.add_parser("validate", help="check a trace (not available in this build)")
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=lambda a: _missing_validate())
        return
    validate.add_parser(sub)


def _missing_validate():
    print("spyre-sim trace validate: error: spyre_sim.trace.validate is not installed "
          "in this tree", file=sys.stderr)
    return 2


def parser():
    p = argparse.ArgumentParser(prog="spyre-sim trace",
                                description="read, report on and view spyre-sim traces")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("report", help="per-kernel cycles, time split, bandwidth, critical path")
    r.add_argument("trace")
    r.add_argument("--report",
                   help="compile report JSON (spyre-sim run --out DIR writes DIR/report.json)")
    r.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    r.set_defaults(func=cmd_report)
    v = sub.add_parser("view", help="a self-contained HTML timeline with the report's tables")
    v.add_argument("trace")
    v.add_argument("-o", "--output", required=True, help="HTML file to write")
    v.add_argument("--report", help="compile report JSON")
    v.add_argument("--max-detail", type=int, default=60000,
                   help="spans drawn one by one in all (the rest of a track is binned)")
    v.add_argument("--bins", type=int, default=1500, help="time buckets of a binned track")
    v.add_argument("--window", help="A:B: draw only cycles [A, B) of the timeline (all spans "
                   "in it, for detail where the whole run is binned)")
    v.set_defaults(func=cmd_view)
    _add_validate(sub)
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    args, code = parse_args(parser(), argv)  # usage errors are bad input
    if args is None:
        return code
    try:
        return int(args.func(args) or 0)
    except InputError as e:
        sys.stdout.flush()
        print(f"spyre-sim trace {args.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
