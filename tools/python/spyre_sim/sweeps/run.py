"""Running a sweep: capture each model file once, simulate every (point, model) in worker
processes or Ray tasks, keep each finished point as its own file (so a killed sweep resumes
where it stopped), then write the results table, the configurations and the plots.

The output folder:
    results.csv, results.json   one row per (point, model), in spec order
    points/<key>.json           each finished (point, model), written atomically when done
    configs/<hash>.yaml         each effective chip configuration (loadable with --arch)
    ir/<model>/                 the IR captured from a model file (an llm entry: its prefill
                                and decode graphs; with extrapolate_layers [a, b], those of
                                the model cut to a and to b layers), with capture.json
    plots/*.png                 the spec's plots
    spec.yaml, provenance.json  what was run, by which command and build
A point's key hashes the model file's contents, the configuration and the spyre-sim build, so
a resumed sweep reuses a point only when all of them are unchanged.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field

from .. import batch, files, provenance
from ..specfile import SpecError
from . import spec as spec_mod

UNIT_COLUMNS = tuple(f"util.{u}" for u in batch.UNITS)
RESULT_COLUMNS = ("config_hash", "config_file", "status", "error", "cycles", "device_time_us",
                  *UNIT_COLUMNS, "dram_read_bytes", "dram_write_bytes", "dram_bytes",
                  "achieved_gbps", "peak_gbps", "kernels", "compile_s", "sim_s", "capture_s")
WALL_COLUMNS = ("compile_s", "sim_s", "capture_s")  # the only columns that vary between runs


@dataclass
class SweepResult:
    spec: spec_mod.SweepSpec
    out: str
    rows: list                      # dicts, one per (point, model), in spec order
    reused: int = 0                 # rows taken from an earlier run of this folder
    wall_s: float = 0.0
    plots: list = field(default_factory=list)

    @property
    def failed(self) -> list:
        return [r for r in self.rows if r["status"] != "ok"]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def dataframe(self):
        import pandas as pd

        return pd.DataFrame(self.rows, columns=columns(self.spec))


def columns(spec: spec_mod.SweepSpec) -> list:
    llm = any(m.kind == "llm" for m in spec.models)
    extra = (*spec_mod.LLM_COLUMNS, *spec_mod.LLM_METRICS) if llm else ()
    return ["point", "model", *spec.axes, *extra, *RESULT_COLUMNS]


def point_key(model: spec_mod.Model, arch: str, sets, build: dict) -> str:
    text = json.dumps({"model": model.fingerprint, "arch": arch, "sets": list(sets),
                       "build": [build["version"], build["commit"], build["dirty"]]})
    return hashlib.sha256(text.encode()).hexdigest()[:20]


# --- capture ------------------------------------------------------------------------------

def _capture(model: spec_mod.Model, folder: str) -> tuple:
    """(IR paths, capture seconds) of a model file or an `llm` entry (its prefill, when it has
    a prompt, and decode graphs from a meta-device model), captured once into `folder` (reused
    when the file, its parameters and torch are unchanged). Raises SpecError with the model's
    message."""
    meta_path = os.path.join(folder, "capture.json")
    try:
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
        paths = [os.path.join(folder, g) for g in meta["graphs"]]
        if meta.get("fingerprint") == model.fingerprint and all(map(os.path.exists, paths)):
            return paths, float(meta["capture_s"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # none yet, or an unreadable record: captured again
    t0 = time.perf_counter()
    try:
        import spyre_capture

        irs, record = _capture_irs(model)
    except SpecError:
        raise
    except Exception as e:  # the model's own failure: every point of this model fails with it
        raise SpecError(f"{model.path}: capture failed: {type(e).__name__}: {e}") from e
    capture_s = time.perf_counter() - t0
    os.makedirs(folder, exist_ok=True)
    names = []
    for ir in irs:
        name = f"{ir.get('graph', f'graph_{len(names)}')}.json"
        files.write_atomic(os.path.join(folder, name), spyre_capture.to_json(ir))
        names.append(name)
    files.write_json(meta_path, {"fingerprint": model.fingerprint, "graphs": names,
                                 "capture_s": capture_s, **record})
    return [os.path.join(folder, n) for n in names], capture_s


def _capture_irs(model: spec_mod.Model) -> tuple:
    """(IR dicts, what capture.json records besides) of a model file or an `llm` entry."""
    import spyre_capture

    if model.kind == "llm":
        from .. import llm

        p = model.llm
        if not p["extrapolate_layers"]:
            return (llm.capture_graphs(p["model"], batch=p["batch"], context=p["context"],
                                       prompt=p["prompt"]), {"llm": p})
        config, irs = llm.load_config(p["model"]), []
        for k in _layers(model):  # the model cut to a layers, then to b
            for ir in llm.capture_graphs(llm.cut_layers(config, k), batch=p["batch"],
                                         context=p["context"], prompt=p["prompt"]):
                ir["graph"] = f"{ir['graph']}.l{k}"
                irs.append(ir)
        return irs, {"llm": p}
    import runpy

    ns = runpy.run_path(model.path, run_name="__spyre_model__")
    for name in ("model", "example_inputs"):
        if name not in ns:
            raise SpecError(f"{model.path}: defines no `{name}` (a model file defines "
                            "`model` and `example_inputs`)")
    irs = spyre_capture.capture(ns["model"], ns["example_inputs"])
    return irs, {"graph_breaks": irs.graph_breaks, "model_file": model.path}


def _layers(model: spec_mod.Model) -> tuple:
    """The two layer counts of an llm entry's extrapolate_layers."""
    a, b = (int(x) for x in model.llm["extrapolate_layers"].split(","))
    return a, b


# A graph's figures that add up over the layers of a model.
_PER_LAYER = ("cycles", "device_time_us", "dram_read_bytes", "dram_write_bytes", "dram_bytes",
              "kernels")


def _extrapolated(model: spec_mod.Model, result: dict) -> dict:
    """The result of a point of an llm entry with extrapolate_layers: its graphs, captured
    from the model cut to a layers and then to b, become the whole model's, each figure that
    adds up over layers on the line through the two (spyre_sim.llm.extrapolate_linear); the
    totals are their sums. Unit utilisations are not extrapolated: left blank."""
    from .. import llm

    (a, b), n = _layers(model), model.llm["layers"]
    half = len(result["graphs"]) // 2
    graphs = []
    for ga, gb in zip(result["graphs"][:half], result["graphs"][half:]):
        g = {}
        for k in _PER_LAYER:
            v = llm.extrapolate_linear(ga[k], gb[k], a, b, n)
            g[k] = v if isinstance(gb[k], float) else round(v)
        if g["device_time_us"] <= 0:
            return {"ok": False, "error": f"extrapolate_layers: the line through {a} and {b} "
                    f"layers gives a graph a device time of {g['device_time_us']} us: its "
                    "layers do not add time alike; simulate it whole"}
        g["achieved_gbps"] = g["dram_bytes"] / (g["device_time_us"] * 1e3)
        graphs.append(g)
    out = dict(result, graphs=graphs, utilisation={u: None for u in batch.UNITS})
    out.update({k: sum(g[k] for g in graphs) for k in _PER_LAYER})
    out["achieved_gbps"] = out["dram_bytes"] / (out["device_time_us"] * 1e3)
    return out


def _llm_columns(model: spec_mod.Model, result: dict) -> dict:
    """TTFT (the prefill graph, when simulated), TPOT (the decode graph: every decode step at a
    context bucket runs the same program, so one simulated step is every step) and tokens/s
    of a generation of `new` tokens."""
    p, graphs = model.llm, result["graphs"]
    dec = graphs[-1]
    ttft = graphs[0]["device_time_us"] if p["prompt"] is not None else None
    tpot = dec["device_time_us"]
    total = (ttft or 0.0) + (p["new"] - 1) * tpot if ttft is not None else None
    return {"ttft_us": ttft, "tpot_us": tpot,
            "tokens_per_s": p["batch"] * p["new"] / (total * 1e-6) if total else None,
            "decode_tokens_per_s": p["batch"] / (tpot * 1e-6) if tpot else None,
            "decode_gbps": dec["achieved_gbps"]}


# --- rows ---------------------------------------------------------------------------------

def make_row(spec, point, model, result: dict, capture_s: float) -> dict:
    row = {"point": point.index, "model": model.name}
    row.update({c: point.params.get(c) for c in spec.axes})
    row.update({c: None for c in RESULT_COLUMNS})
    row["capture_s"] = capture_s if model.kind != "ir" else 0.0
    if model.kind == "llm":  # the serving parameters, failed or not
        row.update({k: model.llm[k] for k in spec_mod.LLM_COLUMNS})
    if result.get("ok") and model.kind == "llm" and model.llm["extrapolate_layers"]:
        result = _extrapolated(model, result)
    if not result.get("ok"):
        row.update(status="failed", error=result.get("error", "failed"))
        return row
    row.update(status="ok", error=None, config_hash=result["config_hash"],
               config_file=f"configs/{result['config_hash']}.yaml", cycles=result["cycles"],
               device_time_us=result["device_time_us"], dram_read_bytes=result["dram_read_bytes"],
               dram_write_bytes=result["dram_write_bytes"], dram_bytes=result["dram_bytes"],
               achieved_gbps=result["achieved_gbps"], peak_gbps=result["peak_gbps"],
               kernels=sum(g["kernels"] for g in result["graphs"]), compile_s=result["compile_s"],
               sim_s=result["sim_s"])
    row.update({f"util.{u}": result["utilisation"][u] for u in batch.UNITS})
    if model.kind == "llm":
        row.update({k: model.llm[k] for k in spec_mod.LLM_COLUMNS})
        row.update(_llm_columns(model, result))
    return row


def _csv_text(rows, cols) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: ("" if r.get(c) is None else r.get(c)) for c in cols})
    return buf.getvalue()


def _load_point(path: str):
    try:
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
        return rec if isinstance(rec, dict) and "row" in rec else None
    except (OSError, ValueError):
        return None  # a damaged file is run again


# --- the run ------------------------------------------------------------------------------

def default_out(spec_path: str) -> str:
    return os.path.join("spyre-sim-out", "sweep",
                        os.path.splitext(os.path.basename(spec_path))[0])


def run(spec_path, out=None, jobs=None, sets=(), fresh=False, ray=None, progress=False,
        plots=True) -> SweepResult:
    """Runs the sweep of `spec_path` into `out` (default spyre-sim-out/sweep/<spec name>).
    Raises SpecError on bad input (before anything runs); a point that fails is a row with
    its error."""
    t_start = time.perf_counter()
    spec = spec_mod.load(spec_path, sets, provenance.torch_version())
    out = out or default_out(spec_path)
    if jobs is not None and jobs < 1:
        raise SpecError(f"-j: expected at least 1 worker, got {jobs}")
    if os.path.exists(out) and not os.path.isdir(out):
        raise SpecError(f"{out}: exists and is not a folder")
    points_dir = os.path.join(out, "points")
    if fresh:
        for sub in ("points", "ir", "configs", "plots"):
            shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    for sub in ("points", "configs"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    shutil.copyfile(spec.path, os.path.join(out, "spec.yaml.tmp"))
    os.replace(os.path.join(out, "spec.yaml.tmp"), os.path.join(out, "spec.yaml"))
    build = provenance.build_info()

    # Which (point, model) pairs are done; the rest become jobs.
    todo, rows, reused = [], {}, 0
    for point in spec.points:
        for model in spec.models:
            sets_ = (*spec.sets, *point.sets)
            key = point_key(model, spec.arch, sets_, build)
            rec = _load_point(os.path.join(points_dir, f"{key}.json"))
            if rec is not None:  # the same configuration of the same model and build
                row = dict(rec["row"], point=point.index, model=model.name)
                row.update({c: point.params.get(c) for c in spec.axes})
                rows[(point.index, model.name)] = row
                reused += 1
            else:
                todo.append((point, model, key, sets_))

    # Model files are captured once, and only when one of their points still has to run.
    captured = {}
    for model in spec.models:
        if model.kind == "ir":
            captured[model.name] = ([model.path], 0.0, None)
        elif any(m is model for _, m, _, _ in todo):
            if progress and sys.stderr.isatty():
                print(f"sweep: capturing {model.name} ({model.path})", file=sys.stderr,
                      flush=True)
            try:
                paths, secs = _capture(model, os.path.join(out, "ir", model.name))
                captured[model.name] = (paths, secs, None)
            except SpecError as e:
                captured[model.name] = ([], 0.0, str(e))

    jobs_list, by_key = [], {}
    for point, model, key, sets_ in todo:
        irs, _, err = captured[model.name]
        if err:
            row = make_row(spec, point, model, {"ok": False, "error": err}, 0.0)
            _finish_point(points_dir, key, row, None)
            rows[(point.index, model.name)] = row
            continue
        if key not in by_key:  # two points of one configuration (a grid point given again)
            jobs_list.append(batch.Job(key=key, irs=tuple(irs), arch=spec.arch, sets=sets_))
        by_key.setdefault(key, []).append((point, model))

    bar = _progress_bar(len(spec.points) * len(spec.models), len(rows), progress)
    failed = sum(1 for r in rows.values() if r["status"] != "ok")
    for result in batch.run_jobs(jobs_list, jobs, ray):
        if result.get("ok"):
            cfg = os.path.join(out, "configs", f"{result['config_hash']}.yaml")
            if not os.path.exists(cfg):
                files.write_atomic(cfg, result["arch_yaml"])
        for point, model in by_key[result["key"]]:
            row = make_row(spec, point, model, result, captured[model.name][1])
            _finish_point(points_dir, result["key"], row, result)
            rows[(point.index, model.name)] = row
            failed += row["status"] != "ok"
            if bar:
                bar.set_postfix(failed=failed, refresh=False)
                bar.update(1)
    if bar:
        bar.close()

    ordered = [rows[(p.index, m.name)] for p in spec.points for m in spec.models]
    res = SweepResult(spec=spec, out=out, rows=ordered, reused=reused)
    _write_tables(res)
    if plots and spec.plots:
        from . import plot

        llm = any(m.kind == "llm" for m in spec.models)  # its serving parameters split lines too
        params = [*spec.axes, *(spec_mod.LLM_COLUMNS if llm else ())]
        res.plots = plot.draw_all(spec.plots, ordered, params, os.path.join(out, "plots"))
    res.wall_s = time.perf_counter() - t_start
    provenance.write(out, provenance.record(
        arch=spec.arch, sets=spec.sets, effective_config="configs/", spec=spec.path,
        points=len(spec.points), models=[m.path for m in spec.models],
        executor=f"ray {ray}" if ray else f"processes -j {jobs or batch.default_workers()}"))
    return res


def _finish_point(points_dir, key, row, result) -> None:
    rec = {"row": row, "kernels": (result or {}).get("kernels", [])}
    files.write_json(os.path.join(points_dir, f"{key}.json"), rec)


def _write_tables(res: SweepResult) -> None:
    cols = columns(res.spec)
    files.write_atomic(os.path.join(res.out, "results.csv"), _csv_text(res.rows, cols))
    files.write_json(os.path.join(res.out, "results.json"),
                     {"spec": res.spec.path, "columns": cols, "rows": res.rows})


def _progress_bar(total: int, done: int, enabled: bool):
    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=done, desc="sweep", unit="point", file=sys.stderr,
                dynamic_ncols=True, postfix={"failed": 0})
