"""A sweep spec (YAML): the models, the base configuration, the grid and explicit points, and the
plots to draw. Everything is checked here, before anything runs: unknown parameters (with the
nearest valid name), empty grids, values a configuration refuses, missing model files.

    models: [../../tools/models/gpt2_block.py, ../../tests/data/ir/models/gpt2.json]
    # or LLM serving: a prefill and a decode step per (batch, context[, prompt]) combination
    #   models: [{llm: granite-3.3-8b, batch: [1, 4], context: [2048, 8192], new: 32}]
    #   (extrapolate_layers: [2, 4]: an estimate from the model cut to 2 and 4 layers)
    arch: spyre                      # base preset or YAML file (default spyre)
    set: {compiler.fusion: on}       # fixed overrides, applied at every point
    grid:                            # the cross product of every axis, last axis fastest
      chip.cores: [8, 16, 32]
      dram.data_rate_mtps: {scale: [0.5, 1, 2]}   # factors of the base configuration's value
    points:                          # explicit points, after the grid's
      - {chip.cores: 4, pt.rows: 16}
    plots:
      - {metric: device_time_us, x: chip.cores, series: lx.size_bytes, where: {...}}
      - {pareto: [device_time_us, chip.cores]}

Paths are relative to the spec file's folder.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from dataclasses import dataclass, field

from ..specfile import (Mapping, Spec, SpecError, check_set_key, did_you_mean, parse_sets, plain,
                        set_text)

SPEC_KEYS = ("about", "models", "arch", "set", "grid", "points", "plots")
PLOT_KEYS = ("metric", "x", "series", "where", "pareto", "label", "name", "title")
SCALE_SUFFIX = ":scale"

# Result columns a plot may use besides the parameters (rows.py makes them).
METRICS = ("cycles", "device_time_us", "util.pt", "util.sfp", "util.dma_in", "util.dma_out",
           "util.ring", "dram_read_bytes", "dram_write_bytes", "dram_bytes", "achieved_gbps",
           "peak_gbps", "kernels", "compile_s", "sim_s", "capture_s")


# An `llm` model entry's serving parameters (result columns, usable in plots) and metrics.
LLM_PARAMS = ("batch", "context", "prompt", "new", "extrapolate_layers")
# Their columns: `llm` is the entry's name without the serving parameters (a plot's line).
LLM_COLUMNS = ("llm", *LLM_PARAMS)
LLM_METRICS = ("ttft_us", "tpot_us", "tokens_per_s", "decode_tokens_per_s", "decode_gbps")


@dataclass
class Model:
    name: str
    path: str
    kind: str          # "model" (a .py model file, captured once), "ir" (one IR JSON) or
                       # "llm" (a causal LM's prefill and decode graphs, spyre_sim.llm)
    fingerprint: str   # sha256 of the file (model files: plus the torch version)
    llm: dict | None = None  # kind "llm": model (name or config path), batch, context, prompt, new


@dataclass
class Point:
    index: int
    params: dict       # column -> value as written (scaled axes: the effective value)
    sets: tuple        # the point's own --set entries (on top of the spec's and the CLI's)


@dataclass
class Plot:
    kind: str          # "metric" or "pareto"
    metric: str = ""
    x: str = ""
    series: str | None = None
    where: dict = field(default_factory=dict)
    pareto: tuple = ()  # ((column, minimise?), (column, minimise?))
    name: str = ""
    title: str = ""


@dataclass
class SweepSpec:
    path: str
    arch: str
    sets: tuple         # the spec's `set` plus the caller's
    models: list
    axes: list          # parameter columns, in spec order
    points: list
    plots: list

    @property
    def name(self) -> str:
        return os.path.splitext(os.path.basename(self.path))[0]


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _scalar(v) -> bool:
    return isinstance(v, (str, int, float, bool)) and not (isinstance(v, float) and
                                                           not math.isfinite(v))


def _models(spec: Spec, torch_version: str) -> list:
    root = spec.root
    models = root.get("models")
    if isinstance(models, (str, Mapping)):
        models = [models]
    if not isinstance(models, list) or not models:
        raise spec.error(root, "models", "models", "expected a model file (.py) or IR file "
                         "(.json), or a non-empty list of them")
    out, names = [], {}
    for i, m in enumerate(models):
        where = f"models[{i}]"
        name = None
        if isinstance(m, Mapping) and "llm" in m:
            for model in _llm_models(spec, m, where, torch_version):
                if model.name in names:
                    raise spec.error(root, "models", where, f"two models named {model.name!r}")
                names[model.name] = i
                out.append(model)
            continue
        if isinstance(m, Mapping):
            spec.check_keys(m, ("name", "file"), where + ".")
            name, m = m.get("name"), m.get("file")
        if not isinstance(m, str):
            raise spec.error(root, "models", where, "expected a file name or {name, file}")
        path = spec.resolve(m)
        kind = {".py": "model", ".json": "ir"}.get(os.path.splitext(m)[1])
        if kind is None:
            raise spec.error(root, "models", where, f"{m}: expected a model file (.py) or an "
                             "IR file (.json)")
        if not os.path.isfile(path):
            raise spec.error(root, "models", where, f"{m}: no such file")
        name = str(name) if name is not None else os.path.splitext(os.path.basename(m))[0]
        if name in names:
            raise spec.error(root, "models", where, f"two models named {name!r} (give one a "
                             "name: {name: ..., file: ...})")
        names[name] = i
        fp = _sha256(path) + (f"+torch{torch_version}" if kind == "model" else "")
        out.append(Model(name=name, path=path, kind=kind, fingerprint=fp))
    return out


def _llm_models(spec: Spec, m, where: str, torch_version: str) -> list:
    """{llm: NAME or config.json, batch, context[, prompt][, new][, extrapolate_layers: [a, b]]
    [, name]}: one model per combination of the listed values (batch, context, prompt: an
    integer or a list). extrapolate_layers: the rows are estimates from the model cut to a
    and b layers (spyre_sim.llm.simulate(extrapolate=...))."""
    from .. import llm as llm_mod

    spec.check_keys(m, ("llm", "name", *LLM_PARAMS), where + ".")
    ref = m["llm"]
    if not isinstance(ref, str):
        raise spec.error(m, "llm", where + ".llm", "expected a bundled model name ("
                         + ", ".join(llm_mod.bundled_models()) + ") or a config .json file")
    path = spec.resolve(ref) if ref.endswith(".json") else llm_mod.bundled_path(ref)
    if not os.path.isfile(path):
        raise spec.error(m, "llm", where + ".llm", f"{ref}: " + (
            "no such file" if ref.endswith(".json") else "not a bundled model (known: "
            + ", ".join(llm_mod.bundled_models()) + ")"))

    def ints(key, default, lo=1):
        v = m.get(key, default)
        vals = v if isinstance(v, list) else [v]
        if not vals or any(x is not None and (not isinstance(x, int) or isinstance(x, bool)
                                              or x < lo) for x in vals):
            raise spec.error(m, key, f"{where}.{key}", f"expected an integer >= {lo} or a list "
                             "of them")
        return vals

    batches, contexts = ints("batch", 1), ints("context", 2048, 2)
    prompts, (new,) = ints("prompt", None), ints("new", 32)
    layers = None
    if m.get("extrapolate_layers") is not None:
        try:
            config = llm_mod.load_config(path)
        except llm_mod.LlmError as e:
            raise spec.error(m, "llm", where + ".llm", str(e)) from None
        try:
            la, lb, n_layers = llm_mod.check_layers(config, m["extrapolate_layers"], "")
        except llm_mod.LlmError as e:
            raise spec.error(m, "extrapolate_layers", where + ".extrapolate_layers",
                             str(e).removeprefix(": ")) from None
        layers = f"{la},{lb}"
    default = os.path.basename(ref)[:-5] if ref.endswith(".json") else ref
    base = str(m.get("name", default))
    out = []
    for b, c, p in itertools.product(batches, contexts, prompts):
        if p is not None and p >= c:
            raise spec.error(m, "prompt", where + ".prompt", f"prompt {p} does not fit "
                             f"context {c}")
        params = {"model": path, "llm": base, "batch": b, "context": c, "prompt": p,
                  "new": new, "extrapolate_layers": layers}
        if layers:
            params["layers"] = n_layers
        name = f"{base}/b{b}/c{c}" + (f"/p{p}" if p is not None else "") \
            + (f"/x{layers.replace(',', '-')}" if layers else "")
        fp = _sha256(path) + f"+torch{torch_version}+" + json.dumps(  # the name is no input
            {k: v for k, v in params.items() if k not in ("model", "llm")}, sort_keys=True)
        out.append(Model(name=name, path=path, kind="llm", fingerprint=fp, llm=params))
    return out


def _param_types() -> dict:
    from .._core import core

    types = {p["key"]: p["type"] for p in core.param_table()}
    types.update({k: "string" for k in core.compiler_option_keys()})
    return types


def _base_value(arch: str, sets, key: str, types) -> float:
    import yaml

    from .._core import core

    cfg = yaml.safe_load(core.arch_yaml(arch, list(sets)))
    return float(cfg[key])


def _axis_values(spec: Spec, grid, key, arch, sets, types):
    """(column values, scale factors or None) of one grid axis."""
    value = grid[key]
    path = f"grid.{key}"
    scales = None
    if isinstance(value, Mapping):
        spec.check_keys(value, ("scale", "values"), path + ".")
        if len(value) != 1:
            raise spec.error(grid, key, path, "expected one of scale: [...] or values: [...]")
        (form, value), = value.items()
        if form == "scale":
            scales = value
    if not isinstance(value, list):
        raise spec.error(grid, key, path, "expected a list of values")
    if not value:
        raise spec.error(grid, key, path, "empty grid: the axis has no values")
    if not all(_scalar(v) for v in value):
        raise spec.error(grid, key, path, "expected plain values (numbers, names, on/off)")
    if len(set(map(repr, value))) != len(value):
        raise spec.error(grid, key, path, "a value is listed twice")
    if scales is None:
        return [plain(v) for v in value], None
    if types[key] not in ("int", "float") or not all(
            isinstance(s, (int, float)) and not isinstance(s, bool) and s > 0 for s in scales):
        raise spec.error(grid, key, path, "scale: expected positive factors of a numeric "
                         "chip parameter")
    base = _base_value(arch, sets, key, types)
    values = []
    for s in scales:
        v = base * s
        if types[key] == "int":
            if abs(v - round(v)) > 1e-9:
                raise spec.error(grid, key, path, f"scale {s} of {base:g} is {v:g}, not an "
                                 "integer")
            v = int(round(v))
        values.append(v)
    return values, list(scales)


def _check_point(spec, mapping, key, path, arch, sets):
    from .._core import core

    try:
        core.check_settings(arch, list(sets))
    except core.SpyreError as e:
        raise spec.error(mapping, key, path, str(e)) from None


def _check_key(spec, mapping, key, path, name):
    msg = check_set_key(str(name))
    if msg:
        raise spec.error(mapping, key, path, msg)


def _plots(spec: Spec, columns, extra_metrics=()) -> list:
    root = spec.root
    plots = root.get("plots", [])
    if not isinstance(plots, list):
        raise spec.error(root, "plots", "plots", "expected a list of plots")
    metrics = [*METRICS, *extra_metrics]
    known = list(columns) + metrics
    out = []
    for i, p in enumerate(plots):
        where = f"plots[{i}]"
        if not isinstance(p, Mapping):
            raise spec.error(root, "plots", where, "expected {metric, x[, series]} or "
                             "{pareto: [a, b]}")
        spec.check_keys(p, PLOT_KEYS, where + ".")

        def column(k, allow_max=False):
            v = p[k] if not isinstance(k, tuple) else k[1]
            key = k if not isinstance(k, tuple) else k[0]
            minimise = True
            if allow_max and isinstance(v, str) and v.startswith("max:"):
                v, minimise = v[4:], False
            if not isinstance(v, str) or v not in known:
                raise spec.error(p, key, f"{where}.{key}", f"unknown column {v!r}"
                                 + did_you_mean(str(v), known) + f" (parameters: "
                                 f"{', '.join(columns) or 'none'}; metrics: {', '.join(metrics)})")
            return v, minimise

        where_ = p.get("where", Mapping())
        fixed = {k: plain(v) for k, v in where_.items()} if isinstance(where_, Mapping) else {}
        if not isinstance(where_, Mapping):
            raise spec.error(p, "where", where + ".where", "expected a mapping column: value")
        for k in where_:
            if k not in columns:
                raise spec.error(where_, k, f"{where}.where.{k}", "not a parameter of the grid"
                                 + did_you_mean(str(k), columns))
        if "pareto" in p:
            pair = p["pareto"]
            if not isinstance(pair, list) or len(pair) != 2 or "metric" in p or "x" in p:
                raise spec.error(p, "pareto", where + ".pareto", "expected two columns "
                                 "[a, b] (a `max:` prefix maximises), and no metric or x")
            axes = tuple(column(("pareto", v), allow_max=True) for v in pair)
            out.append(Plot(kind="pareto", pareto=axes, where=fixed,
                            name=str(p.get("name", f"pareto_{axes[0][0]}_{axes[1][0]}")),
                            title=str(p.get("title", ""))))
            continue
        for k in ("metric", "x"):
            if k not in p:
                raise spec.error(p, k, f"{where}.{k}", "missing (a metric plot needs metric "
                                 "and x)")
        metric, _ = column("metric")
        x, _ = column("x")
        series = column("series")[0] if p.get("series") is not None else None
        out.append(Plot(kind="metric", metric=metric, x=x, series=series, where=fixed,
                        name=str(p.get("name", f"{metric}_vs_{x}"
                                           + (f"_by_{series}" if series else ""))),
                        title=str(p.get("title", ""))))
    return out


def load(path, sets=(), torch_version: str = "") -> SweepSpec:
    """Reads and checks a sweep spec. `sets` (the CLI's --set) apply at every point, on top of
    the spec's `set`. Raises SpecError naming the file, line and key."""
    from .._core import core

    spec = Spec(path)
    root = spec.root
    spec.check_keys(root, SPEC_KEYS, "")
    arch = root.get("arch", "spyre")
    if not isinstance(arch, str):
        raise spec.error(root, "arch", "arch", "expected a preset name or a YAML file")
    if arch.endswith((".yaml", ".yml")):
        arch = spec.resolve(arch)
    base_sets = parse_sets(spec, root, "set") if "set" in root else ()
    for s in base_sets:
        k = s.split("=", 1)[0]
        _check_key(spec, root, "set", f"set.{k}", k)
    _check_point(spec, root, "set" if "set" in root else "arch",
                 "set" if "set" in root else "arch", arch, base_sets)
    cli_sets = tuple(str(s) for s in sets)
    for s in cli_sets:
        k = s.split("=", 1)[0]
        if "=" not in s or check_set_key(k):
            raise SpecError(f"--set {s}: " + (check_set_key(k) or "expected key=value"))
    sets = (*base_sets, *cli_sets)
    try:
        core.check_settings(arch, list(sets))
    except core.SpyreError as e:
        raise SpecError(f"--set: {e}") from None
    models = _models(spec, torch_version)
    types = _param_types()

    grid = root.get("grid", Mapping())
    if not isinstance(grid, Mapping):
        raise spec.error(root, "grid", "grid", "expected a mapping parameter: [values]")
    if "grid" in root and not grid:
        raise spec.error(root, "grid", "grid", "empty grid: no parameter to sweep")
    axes, columns = [], []
    for key in grid:
        _check_key(spec, grid, key, f"grid.{key}", key)
        values, scales = _axis_values(spec, grid, key, arch, sets, types)
        axes.append((key, values, scales))
        columns.append(key)
        if scales is not None:
            columns.append(key + SCALE_SUFFIX)
    points, origins = [], []  # origins: (mapping, key) a point's values come from
    for combo in itertools.product(*(range(len(v)) for _, v, _ in axes)) if axes else []:
        params, psets = {}, []
        for (key, values, scales), i in zip(axes, combo):
            params[key] = values[i]
            if scales is not None:
                params[key + SCALE_SUFFIX] = scales[i]
            psets.append(set_text(key, values[i]))
        points.append(Point(index=len(points), params=params, sets=tuple(psets)))
        origins.append((grid, next(iter(grid))))
    explicit = root.get("points", [])
    if not isinstance(explicit, list):
        raise spec.error(root, "points", "points", "expected a list of {parameter: value}")
    for i, p in enumerate(explicit):
        where = f"points[{i}]"
        if not isinstance(p, Mapping) or not p:
            raise spec.error(root, "points", where, "expected a non-empty mapping "
                             "{parameter: value}")
        for key, v in p.items():
            _check_key(spec, p, key, f"{where}.{key}", key)
            if not _scalar(v):
                raise spec.error(p, key, f"{where}.{key}", "expected a plain value")
            if key not in columns:
                columns.append(key)
        points.append(Point(index=len(points), params={k: plain(v) for k, v in p.items()},
                            sets=tuple(set_text(k, v) for k, v in p.items())))
        origins.append((p, next(iter(p))))
    if not points:
        raise spec.error(root, "models", "grid", "empty grid: give grid or points")
    for pt, (m, key) in zip(points, origins):  # every point's values, before anything runs
        _check_point(spec, m, key, f"point {pt.index} ({', '.join(pt.sets)})", arch,
                     (*sets, *pt.sets))
    llm = any(m.kind == "llm" for m in models)
    plots = _plots(spec, [*columns, *(LLM_COLUMNS if llm else ())], LLM_METRICS if llm else ())
    return SweepSpec(path=spec.path, arch=arch, sets=sets, models=models, axes=columns,
                     points=points, plots=plots)
