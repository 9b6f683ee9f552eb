"""`spyre-sim sweep SPEC.yaml [options]` and `spyre-sim sweep plot RESULTS.csv [options]`.

Exit statuses: 0 every point ran, 1 a point failed (its row holds the message), 2 bad input
(the message names the file and key; nothing has run)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .._cli import parse_args
from ..specfile import SpecError, did_you_mean


def _run_parser():
    p = argparse.ArgumentParser(
        prog="spyre-sim sweep",
        description="run an architecture sweep: every point of SPEC's grid on every model, in "
                    "parallel, resumable; `spyre-sim sweep plot RESULTS.csv` redraws plots")
    p.add_argument("spec", help="sweep spec (YAML); examples/sweeps/ has one")
    p.add_argument("-j", "--jobs", type=int, help="worker processes (default: the cores)")
    p.add_argument("--out", help="results folder (default spyre-sim-out/sweep/<spec name>)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a parameter at every point (chip and compiler.* keys)")
    p.add_argument("--fresh", action="store_true",
                   help="start over: forget the points an earlier run of --out finished")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run the points as Ray tasks on the cluster at ADDRESS, or `local`")
    p.add_argument("--no-plots", action="store_true", help="skip the spec's plots")
    p.add_argument("--json", action="store_true", help="print the rows as one JSON object")
    return p


def _plot_parser():
    p = argparse.ArgumentParser(
        prog="spyre-sim sweep plot",
        description="draw a plot from a sweep's results.csv without re-running anything")
    p.add_argument("results", help="results.csv of a sweep")
    p.add_argument("-o", "--output", required=True, help="PNG file to write")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--metric", help="metric on the y axis (with --x)")
    g.add_argument("--pareto", metavar="A,B",
                   help="Pareto front of two columns (`max:NAME` maximises)")
    p.add_argument("--x", help="parameter on the x axis")
    p.add_argument("--series", help="one line per value of this parameter")
    p.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE",
                   help="keep only rows with this value (repeatable)")
    p.add_argument("--title", default="")
    return p


def _parse(parser, argv):
    args, code = parse_args(parser, argv)
    if args is None:
        raise _Exit(code)
    return args


class _Exit(Exception):
    def __init__(self, code):
        self.code = code


def _plot(argv) -> int:
    from . import plot

    a = _parse(_plot_parser(), argv)
    rows, params = plot.load_csv(a.results)
    known = list(rows[0]) if rows else []
    where = plot.parse_where(a.where)
    for col in [a.metric, a.x, a.series, *where]:
        if col is not None and col not in known:
            raise SpecError(f"{a.results}: no column {col!r}" + did_you_mean(col, known))
    if a.pareto:
        names = a.pareto.split(",")
        if len(names) != 2:
            raise SpecError(f"--pareto {a.pareto}: expected two columns A,B")
        axes = []
        for n in names:
            n, minimise = (n[4:], False) if n.startswith("max:") else (n, True)
            if n not in known:
                raise SpecError(f"{a.results}: no column {n!r}" + did_you_mean(n, known))
            axes.append((n, minimise))
        path = plot.pareto_plot(rows, params, axes[0], axes[1], where, a.output, a.title)
    else:
        if not a.x:
            raise SpecError("--metric needs --x")
        path = plot.metric_plot(rows, params, a.metric, a.x, a.series, where, a.output, a.title)
    print(f"wrote {path}")
    return 0


def _summary(res) -> str:
    rows = res.rows
    ok = [r for r in rows if r["status"] == "ok"]
    lines = [f"sweep {res.spec.path}: {len(res.spec.points)} points x {len(res.spec.models)} "
             f"models = {len(rows)} runs, {len(rows) - len(ok)} failed, {res.reused} reused from "
             f"an earlier run, {res.wall_s:.1f} s"]
    if ok:
        best = min(ok, key=lambda r: r["device_time_us"])
        params = ", ".join(f"{k}={best[k]}" for k in res.spec.axes if best.get(k) is not None)
        lines.append(f"  fastest: {best['model']} at {params or 'the base configuration'}: "
                     f"{best['device_time_us']:.1f} us ({best['cycles']:,} cycles)")
    for r in res.failed[:10]:
        lines.append(f"  FAILED point {r['point']} {r['model']}: {r['error']}")
    if len(res.failed) > 10:
        lines.append(f"  ... and {len(res.failed) - 10} more failed rows (results.csv)")
    lines.append(f"  results: {os.path.join(res.out, 'results.csv')} and results.json")
    lines += [f"  plot: {p}" for p in res.plots]
    return "\n".join(lines) + "\n"


def _sweep(argv) -> int:
    from .run import run

    a = _parse(_run_parser(), argv)
    res = run(a.spec, a.out, a.jobs, a.set, a.fresh, a.ray, progress=not a.json,
              plots=not a.no_plots)
    if a.json:
        print(json.dumps({"out": res.out, "rows": res.rows, "plots": res.plots}))
    else:
        sys.stdout.write(_summary(res))
    return res.exit_code


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "plot":
            return _plot(argv[1:])
        return _sweep(argv)
    except _Exit as e:
        return e.code
    except SpecError as e:
        sys.stdout.flush()
        print(f"spyre-sim sweep: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
