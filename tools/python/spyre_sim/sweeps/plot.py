"""Sweep plots (matplotlib, PNG), drawn from result rows: after a sweep from its spec's `plots`,
or later from results.csv with `spyre-sim sweep plot` (nothing is re-run).

- metric plot: a metric against a parameter, one line per model and per value of a second
  parameter (`series`); parameters that vary besides these split lines further unless `where`
  fixes them.
- Pareto plot: every point in the plane of two columns (both minimised unless written
  `max:name`), the non-dominated ones joined and labelled with their parameters.
"""

from __future__ import annotations

import csv
import os

from ..specfile import SpecError

# Columns of results.csv that are results, not parameters (run.py's RESULT_COLUMNS).
_NOT_PARAMS = {"point", "model"}


def _number(v):
    if v is None or v == "":
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return v
    return int(f) if f.is_integer() and "." not in str(v) and "e" not in str(v).lower() else f


def load_csv(path: str) -> tuple:
    """(rows, parameter columns) of a sweep's results.csv, numbers as numbers."""
    from .run import RESULT_COLUMNS
    from .spec import LLM_METRICS

    if not os.path.isfile(path):
        raise SpecError(f"{path}: no such file")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            cols = reader.fieldnames or []
            rows = [{k: _number(v) for k, v in r.items()} for r in reader]
    except (OSError, csv.Error, UnicodeDecodeError) as e:
        raise SpecError(f"{path}: cannot read the results: {e}") from e
    missing = [c for c in ("point", "model", *RESULT_COLUMNS) if c not in cols]
    if missing:
        raise SpecError(f"{path}: not a sweep's results.csv (no column {missing[0]!r})")
    params = [c for c in cols if c not in _NOT_PARAMS and c not in RESULT_COLUMNS
              and c not in LLM_METRICS]
    return rows, params


def _fmt(key: str, v) -> str:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if key.endswith("_bytes") and v >= 1 << 20 and v % (1 << 20) == 0:
            return f"{v >> 20} MiB"
        if key.endswith("_bytes") and v >= 1024 and v % 1024 == 0:
            return f"{v >> 10} KiB"
        return f"{v:g}"
    return str(v)


def _twin(key: str) -> str:
    """A scaled axis has two columns, the value and its factor: each names the other."""
    return key[:-len(":scale")] if key.endswith(":scale") else key + ":scale"


def _filter(rows, where: dict, needed) -> list:
    out = []
    for r in rows:
        if r.get("status") != "ok":
            continue
        if any(_number(r.get(k)) != _number(v) for k, v in where.items()):
            continue
        if any(r.get(c) is None for c in needed):
            continue
        out.append(r)
    return out


def _varying(rows, params) -> list:
    return [p for p in params if len({repr(r.get(p)) for r in rows}) > 1]


def _sort_key(v):
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    return plt, fig, ax


def _save(plt, fig, path: str) -> str:
    from .. import files

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    import io

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    files.write_atomic(path, buf.getvalue())
    return path


def line_groups(rows, params, metric: str, x: str, series, where: dict):
    """(the rows drawn, {line key: its rows}, the varying parameters that split lines) of a
    metric plot. A line's key is its model and its values of `series` and of `split`."""
    for c in (metric, x, *([series] if series else [])):
        if rows and c not in rows[0]:
            raise SpecError(f"no column {c!r} in the results")
    sel = _filter(rows, where, (metric, x))
    if not sel:
        raise SpecError(f"plot {metric} vs {x}: no successful row matches "
                        + (", ".join(f"{k}={v}" for k, v in where.items()) or "(all rows)"))
    used = {c for c in (x, series, *where) if c}
    split = [p for p in _varying(sel, params) if p not in used and _twin(p) not in used
             and not (p.endswith(":scale") and _twin(p) in params)]
    lines = {}
    for r in sel:
        # an llm entry's rows are one model (their serving parameters are columns)
        key = (r.get("llm") or r["model"], *(r.get(p) for p in ([series] if series else [])
                                             + split))
        lines.setdefault(key, []).append(r)
    return sel, lines, split


def metric_plot(rows, params, metric: str, x: str, series=None, where=None, out="plot.png",
                title="") -> str:
    """`metric` against parameter `x`, a line per model (an llm entry: per `llm` name),
    `series` value and any other varying parameter not fixed by `where`."""
    where = dict(where or {})
    sel, lines, split = line_groups(rows, params, metric, x, series, where)
    plt, fig, ax = _figure()
    for key in sorted(lines, key=lambda k: tuple(_sort_key(v) for v in k)):
        pts = sorted(lines[key], key=lambda r: _sort_key(r[x]))
        names = ([series] if series else []) + split
        label = ", ".join([str(key[0]), *(f"{n}={_fmt(n, v)}"
                                          for n, v in zip(names, key[1:]))])
        xs = [r[x] for r in pts]
        categorical = not all(isinstance(v, (int, float)) for v in xs)
        ax.plot([str(v) for v in xs] if categorical else xs, [r[metric] for r in pts],
                marker="o", label=label)
    ax.set_xlabel(x)
    ax.set_ylabel(metric)
    xs = sorted({r[x] for r in sel if isinstance(r[x], (int, float))})
    if len(xs) > 2 and xs[0] > 0 and xs[-1] / xs[0] >= 8:
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [_fmt(x, v) for v in xs])
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fixed = ", ".join(f"{k}={_fmt(k, v)}" for k, v in where.items())
    ax.set_title(title or f"{metric} vs {x}" + (f" ({fixed})" if fixed else ""), fontsize=10)
    return _save(plt, fig, out)


def pareto_front(points, minimise=(True, True)) -> list:
    """Indices of the points (a, b) that no other point beats on both (ties kept once)."""
    def better_eq(p, q):  # p at least as good as q on both
        return all((pi <= qi) if m else (pi >= qi) for pi, qi, m in zip(p, q, minimise))

    front = []
    for i, p in enumerate(points):
        dominated = any(better_eq(q, p) and q != p for j, q in enumerate(points) if j != i)
        duplicate = any(points[j] == p for j in front)
        if not dominated and not duplicate:
            front.append(i)
    return sorted(front, key=lambda i: points[i])


def pareto_plot(rows, params, a, b, where=None, out="pareto.png", title="") -> str:
    """`a` and `b` are (column, minimise?) pairs."""
    (ca, ma), (cb, mb) = a, b
    sel = _filter(rows, dict(where or {}), (ca, cb))
    if not sel:
        raise SpecError(f"pareto {ca}, {cb}: no successful row to draw")
    pts = [(float(r[ca]), float(r[cb])) for r in sel]
    front = pareto_front(pts, (ma, mb))
    vary = [p for p in _varying(sel, params) if not p.endswith(":scale")]
    multi_model = len({r["model"] for r in sel}) > 1
    plt, fig, ax = _figure()
    ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, color="0.7", label="all points")
    fx = [pts[i][0] for i in front]
    fy = [pts[i][1] for i in front]
    ax.plot(fx, fy, "o-", color="tab:red", label="Pareto front")
    for i in front:
        r = sel[i]
        text = ", ".join(([str(r["model"])] if multi_model else [])
                         + [f"{p}={_fmt(p, r.get(p))}" for p in vary])
        ax.annotate(text, pts[i], textcoords="offset points", xytext=(5, 4), fontsize=7)
    ax.set_xlabel(ca + ("" if ma else " (higher is better)"))
    ax.set_ylabel(cb + ("" if mb else " (higher is better)"))
    xs = [p[0] for p in pts]
    if min(xs) > 0 and max(xs) / min(xs) >= 8:
        ax.set_xscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title or f"Pareto front: {ca} vs {cb} ({len(front)} of {len(pts)} points)",
                 fontsize=10)
    return _save(plt, fig, out)


def draw(p, rows, params, folder) -> str:
    """One spec plot (spec.Plot) into `folder`/<name>.png."""
    out = os.path.join(folder, f"{p.name}.png")
    if p.kind == "pareto":
        return pareto_plot(rows, params, p.pareto[0], p.pareto[1], p.where, out, p.title)
    return metric_plot(rows, params, p.metric, p.x, p.series, p.where, out, p.title)


def draw_all(plots, rows, params, folder) -> list:
    return [draw(p, rows, params, folder) for p in plots]


def parse_where(items) -> dict:
    out = {}
    for it in items or []:
        if "=" not in it:
            raise SpecError(f"--where {it}: expected column=value")
        k, v = it.split("=", 1)
        out[k] = _number(v)
    return out
