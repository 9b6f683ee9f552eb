"""`spyre-sim trace view`: one self-contained HTML page (bokeh, JS inline) with a zoomable
timeline of every track, counters and utilisation as area charts, and the report's tables.

Big traces: a page holds at most `max_detail` spans drawn one by one. Below that budget every
span is drawn. Above it, a per-track cap c is chosen (the largest c with sum(min(n_track, c)) <=
max_detail): tracks with at most c spans keep them all; a busier track is drawn as its busy
fraction per time bucket (`bins` buckets over the run, the bucket's opacity = fraction of the
bucket the track was working, waits in grey underneath) plus its c longest spans on top, which
are the ones that matter at any zoom. Why not zoom-dependent detail: it needs every span in the
page anyway (the page must work offline, without a server), which is exactly the size problem;
`window=(lo, hi)` (`--window A:B`) draws one stretch of the run in full detail instead.
"""

import html
import re
import time

import numpy as np

from . import analysis, names
from .model import COMPUTE, MEMORY, OTHER, SYNC, natural_key, group_sort_key
from .report import kernel_rows, link_rows, path_rows

COLOURS = {COMPUTE: "#4c78a8", MEMORY: "#f58518", SYNC: "#b0b0b0", OTHER: "#54a24b"}
ROW_PX = 14
MAX_SERIES = 8


def per_track_cap(sizes, budget):
    if sum(sizes) <= budget:
        return max(sizes, default=0)
    lo, hi = 0, max(sizes)
    while lo < hi:  # largest c with sum(min(n, c)) <= budget
        mid = (lo + hi + 1) // 2
        if sum(min(n, mid) for n in sizes) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def coverage(starts, ends, edges):
    """Cycles covered by [starts, ends) spans inside each bucket between edges (vectorised):
    F(x) = sum over spans of clip(x - s, 0, d) = sum_{s<x}(x - s) - sum_{e<x}(x - e)."""
    def cum(points):
        points = np.sort(points)
        csum = np.concatenate([[0.0], np.cumsum(points, dtype=np.float64)])
        k = np.searchsorted(points, edges, side="left")
        return k * edges - csum[k]

    f = cum(np.asarray(starts, dtype=np.float64)) - cum(np.asarray(ends, dtype=np.float64))
    return np.diff(f)


def runs(frac, levels=10):
    """Busy fractions rounded up to 1/levels, adjacent equal buckets merged into one bar (a long
    busy stretch is one bar, not hundreds): (first bucket, end bucket, level) of nonzero runs."""
    q = np.ceil(np.clip(frac, 0, 1) * levels - 1e-9) / levels
    change = np.flatnonzero(np.diff(q)) + 1
    starts = np.concatenate([[0], change])
    ends = np.concatenate([change, [len(q)]])
    keep = q[starts] > 0
    return starts[keep], ends[keep], q[starts][keep]


def _label(tr):
    return f"{tr.group} / {tr.name}"


def _timeline(loaded, tracks, cap, edges, lo=0):
    from bokeh.models import (ColumnDataSource, HoverTool, LinearAxis, NumeralTickFormatter,
                              Range1d)
    from bokeh.plotting import figure

    labels = [_label(t) for t in tracks]
    end = max(loaded.end, lo + 1)
    p = figure(height=ROW_PX * len(labels) + 80, sizing_mode="stretch_width",
               y_range=list(reversed(labels)), x_range=Range1d(lo, end, bounds=(lo, end)),
               tools="xpan,xwheel_zoom,box_zoom,reset,save", active_scroll="xwheel_zoom",
               active_drag="xpan", x_axis_label="cycle", output_backend="webgl",
               title="timeline (wheel: zoom time, drag: pan, box: zoom)")
    p.yaxis.major_label_text_font_size = "9px"
    # The timeline is taller than a screen: a second time axis on top.
    p.add_layout(LinearAxis(axis_label="cycle", formatter=NumeralTickFormatter(format="0,0")),
                 "above")
    p.xaxis.formatter = NumeralTickFormatter(format="0,0")
    # One source per class (no colour column); the kernel of a span is the chip/kernels row.
    det = {c: {k: [] for k in ("y", "left", "right", "name", "cycles")} for c in COLOURS}
    binned = {k: [] for k in ("y", "left", "right", "colour", "alpha", "busy")}
    # Numbers go as numpy arrays: bokeh embeds those as base64 binary, not JSON text.
    info = {"tracks": len(tracks), "binned_tracks": 0, "detailed": 0}
    width = edges[1] - edges[0]
    for tr, lab in zip(tracks, labels):
        n = len(tr.start)
        keep = range(n)
        if n > cap:
            info["binned_tracks"] += 1
            keep = sorted(sorted(range(n), key=lambda i: -tr.dur[i])[:cap])
            cls = np.array(tr.cls)
            st, en = np.array(tr.start), np.array(tr.ends)
            for layer in (SYNC, "work"):
                mask = cls == SYNC if layer == SYNC else cls != SYNC
                if not mask.any():
                    continue
                frac = coverage(st[mask], en[mask], edges) / width
                work_cls = SYNC if layer == SYNC else max(set(cls[mask]), key=list(cls[mask]).count)
                left, right, level = runs(frac)
                binned["y"] += [lab] * len(left)
                binned["left"] += edges[left].tolist()
                binned["right"] += edges[right].tolist()
                binned["colour"] += [COLOURS[work_cls]] * len(left)
                binned["alpha"] += (0.15 + 0.85 * level).tolist()
                binned["busy"] += (100 * level).tolist()
        for i in keep:
            d = det[tr.cls[i]]
            d["y"].append(lab)
            d["left"].append(tr.start[i])
            d["right"].append(tr.ends[i])
            d["name"].append(tr.label[i])
            d["cycles"].append(tr.dur[i])
        info["detailed"] += len(keep)
    if binned["y"]:
        r = p.hbar(y="y", left="left", right="right", height=0.9, fill_color="colour",
                   fill_alpha="alpha", line_color=None, source=ColumnDataSource(_arrays(binned)))
        p.add_tools(HoverTool(renderers=[r], tooltips=[("track", "@y"),
                                                       ("busy", "@busy{0}% (rounded up)"),
                                                       ("cycles", "@left{0,0} - @right{0,0}")]))
    rs = [p.hbar(y="y", left="left", right="right", height=0.8, fill_color=COLOURS[c],
                 line_color=None, source=ColumnDataSource(_arrays(d)))
          for c, d in det.items() if d["y"]]
    p.add_tools(HoverTool(renderers=rs, tooltips=[
        ("span", "@name"), ("track", "@y"), ("start", "@left{0,0} cycles"),
        ("length", "@cycles{0,0} cycles")]))
    _kernel_names(p, loaded)
    return p, info


def _kernel_names(p, loaded):
    """Kernel names written on their chip/kernels bars (clipped by the plot, not by the bar)."""
    from bokeh.models import ColumnDataSource

    kt = loaded.tracks.get(names.KERNELS)
    if kt is None or not kt.start:
        return
    src = ColumnDataSource({"x": np.asarray(kt.start, dtype=np.float64),
                            "y": [_label(kt)] * len(kt.start), "text": list(kt.label)})
    p.text(x="x", y="y", text="text", source=src, text_font_size="8px", text_baseline="middle",
           x_offset=2, text_color="#ffffff")


def _arrays(cols):
    out = {}
    for k, v in cols.items():
        out[k] = np.asarray(v, dtype=np.float64) if v and not isinstance(v[0], str) else v
    return out


def _area(title, x_range, series, edges):
    from bokeh.models import ColumnDataSource
    from bokeh.palettes import Category10

    from bokeh.plotting import figure

    p = figure(height=150, sizing_mode="stretch_width", x_range=x_range, title=title,
               tools="xpan,xwheel_zoom,reset", active_scroll="xwheel_zoom", output_backend="webgl")
    x = np.repeat(edges, 2)[1:-1]  # step shape: each bucket a flat segment
    for (name, ys), colour in zip(series.items(), Category10[10] * 10):
        y = np.repeat(ys, 2)
        src = ColumnDataSource({"x": x, "y": y})
        p.varea(x="x", y1=0, y2="y", source=src, fill_color=colour, fill_alpha=0.25)
        p.line(x="x", y="y", source=src, line_color=colour, legend_label=name)
    from bokeh.models import NumeralTickFormatter

    p.xaxis.formatter = NumeralTickFormatter(format="0,0")
    p.yaxis.formatter = NumeralTickFormatter(format="0,0.[00]")
    p.legend.location = "top_left"
    p.legend.label_text_font_size = "9px"
    p.legend.click_policy = "hide"
    return p


def _utilisation(loaded, edges):
    """Chip-wide busy fraction per bucket of each unit kind: work spans over tracks of the kind,
    or in a summary trace the units' busy counters."""
    width = edges[1] - edges[0]
    kinds = {}
    if analysis.is_summary(loaded):
        for (_, tr), (ts, vs) in analysis.busy_counters(loaded).items():
            cov = np.array([analysis.counter_integral(ts, vs, a, b)
                            for a, b in zip(edges[:-1], edges[1:])]) / width
            acc = kinds.setdefault(analysis.unit_kind(tr), [np.zeros(len(edges) - 1), 0])
            acc[0] += np.minimum(cov, 1.0)
            acc[1] += 1
        return {k: v[0] / v[1] for k, v in sorted(kinds.items())}
    for tr in loaded.tracks.values():
        if names.is_core(tr.group):
            kind = tr.name.rstrip("0123456789")
        else:
            kind = "chip" if names.is_chip(tr.group) else tr.group.rsplit(".", 1)[-1]
        if kind in ("seq", "ring", "ring_data", "chip") or not tr.start:
            continue
        kind = "dram channels" if kind == "dram" else kind
        idx = [i for i, c in enumerate(tr.cls) if c in (COMPUTE, MEMORY)]
        if not idx:
            continue
        cov = coverage([tr.start[i] for i in idx], [tr.ends[i] for i in idx], edges) / width
        acc = kinds.setdefault(kind, [np.zeros(len(edges) - 1), 0])
        acc[0] += np.minimum(cov, 1.0)
        acc[1] += 1
    return {k: v[0] / v[1] for k, v in sorted(kinds.items())}


def _counters(loaded, edges):
    """Counters sampled (hold last value) at bucket starts, one chart per group and name
    pattern (digits as N: "ch N GB/s"). Up to MAX_SERIES series are drawn each; above that the
    chart shows their sum (or mean, for fractions: every value <= 1) and their maximum."""
    def sample(ts, vs):
        k = np.searchsorted(np.asarray(ts), edges[:-1], side="right") - 1
        return np.where(k >= 0, np.asarray(vs)[np.maximum(k, 0)], 0.0)

    charts = {}
    for (g, n), tv in sorted(loaded.counters.items(), key=lambda kv: (
            group_sort_key(kv[0][0]), natural_key(kv[0][1]))):
        if names.is_core(g) and n.endswith(names.BUSY_SUFFIX):
            continue  # the units' busy counters are drawn as utilisation, not a chart per core
        charts.setdefault((g, re.sub(r"\d+", "N", n)), {})[n] = sample(*tv)
    out = {}
    for (g, pattern), series in charts.items():
        if len(series) > MAX_SERIES:
            stack = np.vstack(list(series.values()))
            frac = bool((stack <= 1.0).all())
            agg = stack.mean(axis=0) if frac else stack.sum(axis=0)
            series = {f"{'mean' if frac else 'sum'} of {len(stack)}": agg,
                      f"max of {len(stack)}": stack.max(axis=0)}
        out[f"{g} / {pattern}"] = series
    return out


def _table(headers, rows, cls=""):
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


CSS = """body{font-family:system-ui,sans-serif;margin:1em 2em;color:#222}
table{border-collapse:collapse;font-size:12px;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
td:first-child,th:first-child{text-align:left}h2{margin-top:1.2em}
.key span{display:inline-block;width:1em;height:1em;margin:0 .3em 0 1em;vertical-align:middle}
.chains{font-size:12px;font-family:monospace;white-space:pre-wrap}"""


def page(loaded, rep, max_detail=60000, bins=1500, window=None):
    """The page; `window` = (lo, hi) cycles draws only that part of the run on the timeline and
    the charts (every span in it, up to max_detail), the tables stay those of the whole run."""
    from bokeh.embed import components
    from bokeh.layouts import column
    from bokeh.resources import Resources

    t0 = time.monotonic()
    clock = float(rep["clock_ghz"])
    lo = 0
    if window is not None:
        from .model import windowed

        lo, hi = window
        loaded = windowed(loaded, lo, min(hi, max(loaded.end, lo + 1)))
    tracks = loaded.ordered_tracks()
    cap = per_track_cap([len(t.start) for t in tracks], max_detail)
    edges = np.linspace(lo, max(loaded.end, lo + 1), bins + 1)
    tl, info = _timeline(loaded, tracks, cap, edges, lo)
    plots = [tl, _area("utilisation (busy fraction of the units of each kind)", tl.x_range,
                       _utilisation(loaded, edges), edges)]
    for title, series in _counters(loaded, edges).items():
        plots.append(_area(title, tl.x_range, series, edges))
    script, div = components(column(*plots, sizing_mode="stretch_width"))
    key = "".join(f'<span style="background:{c}"></span>{k}' for k, c in COLOURS.items())
    mode = (f"all {info['detailed']:,} spans drawn" if not info["binned_tracks"] else
            f"{info['binned_tracks']} busy tracks binned into {bins} buckets "
            f"(opacity = busy fraction) with their {cap:,} longest spans; "
            f"{info['detailed']:,} spans drawn one by one")
    track_rows = [[_label(t), len(t.start), "binned + longest" if len(t.start) > cap else "all"]
                  for t in tracks]
    window_note = ("" if window is None else
                   f" Timeline: cycles {lo:,} to {loaded.end:,} only (--window).")
    hdr, krows = kernel_rows(rep)
    phdr, prows, chains = path_rows(rep)
    body = f"""<h1>spyre-sim trace: {html.escape(loaded.path)}</h1>
<p>{rep['total_cycles']:,} cycles = {rep['device_time_us']:.2f} us at {clock} GHz,
{rep['cores']} cores, {rep['spans']:,} spans on {rep['tracks']} tracks, {rep['counters']}
counters. {html.escape(mode)}.{window_note}</p>
<p class="key">{key}</p>
{div}
<h2>Kernels</h2>{_table(hdr, krows, "kernels")}
<h2>Bandwidth</h2>{_table(*link_rows(rep), "links")}
<h2>Critical path</h2>{_table(phdr, prows, "path")}
<div class="chains">{html.escape(chr(10).join(chains))}</div>
<h2>Tracks</h2>{_table(["track", "spans", "drawn"], track_rows, "tracks")}"""
    # bokeh's core and its WebGL backend only (no widgets, tables, MathJax): 1.5 MB, not 3.9.
    js = Resources(mode="inline", components=["bokeh", "bokeh-gl"]).render()
    doc = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
           f"<title>spyre-sim trace {html.escape(loaded.path)}</title>{js}"
           f"<style>{CSS}</style></head><body>{body}{script}</body></html>\n")
    info["seconds"] = time.monotonic() - t0
    return doc, info
