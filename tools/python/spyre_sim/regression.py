"""`spyre-sim regress`: compiler regression against simulated cycles.

A suite file (YAML, tests/regress/suite.yaml in the repository) lists cases, each an IR file
(or a model's list of graph IRs), the presets it runs on, optional `set` overrides and an
optional tolerance. The baselines are one JSON file beside it, written by `--update`. A run
simulates every (case, preset) timing-only in worker processes and compares cycles with the
baseline: slower by more than the tolerance (default 0: runs are deterministic) is a
regression (exit 1), faster is listed as an improvement; bad input exits 2 before anything
runs. Nothing here imports torch.

    spyre-sim regress                              # the repository's suite against its baseline
    spyre-sim regress --set compiler.fusion=off    # what turning fusion off costs, per case
    spyre-sim regress --update                     # rewrite the baseline, print what changed
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
from dataclasses import dataclass, field

from . import batch, files, provenance
from ._cli import parse_args
from .specfile import Mapping, Spec, SpecError, did_you_mean, parse_fraction, parse_sets

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DEFAULT_SUITE = os.path.join(REPO, "tests", "regress", "suite.yaml")
SUITE_KEYS = ("baseline", "presets", "tolerance", "cases")
CASE_KEYS = ("name", "ir", "presets", "set", "tolerance", "about")
UPDATE_COMMAND = "spyre-sim regress --update"


@dataclass
class Case:
    name: str
    irs: tuple
    presets: tuple
    sets: tuple = ()
    tolerance: float = 0.0


@dataclass
class Suite:
    path: str
    baseline: str
    cases: list


# --- the suite file -----------------------------------------------------------------------

def _presets(spec: Spec, m, key, path):
    from ._core import core

    value = m[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise spec.error(m, key, path, "expected a preset name or a non-empty list of them")
    known = core.preset_names()
    out = []
    for name in value:
        if name in known:
            out.append(name)
        elif name.endswith((".yaml", ".yml")) and os.path.isfile(spec.resolve(name)):
            out.append(spec.resolve(name))
        else:
            raise spec.error(m, key, path, f"unknown preset {name!r}{did_you_mean(name, known)} "
                             f"(known: {', '.join(known)}, or a YAML file)")
    return tuple(out)


def _tolerance(spec, m, key, path):
    try:
        return parse_fraction(m[key], "a tolerance")
    except ValueError as e:
        raise spec.error(m, key, path, str(e)) from None


def load_suite(path=None, baseline=None) -> Suite:
    """Reads and checks a suite file (raises SpecError naming the file, line and key)."""
    from ._core import core

    if path is None and not os.path.exists(DEFAULT_SUITE):
        raise SpecError(f"no suite given, and the default ({DEFAULT_SUITE}) exists only in a "
                        "spyre-sim checkout: name a suite YAML file")
    spec = Spec(path or DEFAULT_SUITE)
    root = spec.root
    spec.check_keys(root, SUITE_KEYS, "")
    presets = _presets(spec, root, "presets", "presets") if "presets" in root else ("spyre",)
    tolerance = _tolerance(spec, root, "tolerance", "tolerance") if "tolerance" in root else 0.0
    cases = root.get("cases")
    if not isinstance(cases, list) or not cases:
        raise spec.error(root, "cases", "cases", "expected a non-empty list of cases")
    out, seen = [], {}
    for i, c in enumerate(cases):
        where = f"cases[{i}]"
        if not isinstance(c, Mapping):
            raise spec.error(root, "cases", where, "expected a mapping with name and ir")
        spec.check_keys(c, CASE_KEYS, where + ".")
        name = c.get("name")
        if not isinstance(name, str) or not name or "@" in name:
            raise spec.error(c, "name", where + ".name", "expected a name without '@'")
        if name in seen:
            raise spec.error(c, "name", where + ".name", f"{name!r} is also cases[{seen[name]}]")
        seen[name] = i
        irs = c.get("ir")
        irs = [irs] if isinstance(irs, str) else irs
        if not isinstance(irs, list) or not irs or not all(isinstance(p, str) for p in irs):
            raise spec.error(c, "ir" if "ir" in c else "name", where + ".ir",
                             "expected an IR JSON file or a list of them")
        paths = tuple(spec.resolve(p) for p in irs)
        for p, rel in zip(paths, irs):
            if not os.path.isfile(p):
                raise spec.error(c, "ir", where + ".ir", f"{rel}: no such file")
        case = Case(name=name, irs=paths,
                    presets=_presets(spec, c, "presets", where + ".presets")
                    if "presets" in c else presets,
                    sets=parse_sets(spec, c, "set", where + ".set") if "set" in c else (),
                    tolerance=_tolerance(spec, c, "tolerance", where + ".tolerance")
                    if "tolerance" in c else tolerance)
        for preset in case.presets:
            try:
                core.check_settings(preset, list(case.sets))
            except core.SpyreError as e:
                raise spec.error(c, "set", where + ".set", str(e)) from None
        out.append(case)
    if baseline is None:
        rel = root.get("baseline", "baseline.json")
        if not isinstance(rel, str):
            raise spec.error(root, "baseline", "baseline", "expected a file name")
        baseline = spec.resolve(rel)
    return Suite(path=spec.path, baseline=os.fspath(baseline), cases=out)


def select(suite: Suite, patterns=(), presets=()) -> list:
    """(case, preset) pairs of the suite, in suite order, kept by name patterns (glob, or a
    substring) and presets; no pattern keeps everything."""
    def wanted(name):
        return not patterns or any(fnmatch.fnmatchcase(name, p) or p in name for p in patterns)

    pairs = [(c, p) for c in suite.cases if wanted(c.name) for p in c.presets
             if not presets or p in presets or os.path.splitext(os.path.basename(p))[0] in presets]
    if not pairs:
        raise SpecError(f"{suite.path}: no case matches "
                        + " ".join([*(f"-k {p}" for p in patterns),
                                    *(f"--preset {p}" for p in presets)]))
    return pairs


def entry_key(case: str, preset: str) -> str:
    return f"{case}@{os.path.splitext(os.path.basename(preset))[0]}"


# --- the baseline file --------------------------------------------------------------------

def load_baseline(path) -> dict:
    """{entry key: entry}; an absent file is an empty baseline."""
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise SpecError(f"{path}: cannot read the baseline: {e}") from e
    entries = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise SpecError(f"{path}: expected an object with `cases` (written by {UPDATE_COMMAND})")
    for key, e in entries.items():
        if not (isinstance(e, dict) and isinstance(e.get("cycles"), int)
                and isinstance(e.get("kernels"), dict)):
            raise SpecError(f"{path}: cases.{key}: expected cycles (an integer) and kernels")
    return entries


def baseline_entry(r: dict) -> dict:
    """What the baseline keeps of a result: deterministic fields only, kernels in run order."""
    return {"cycles": r["cycles"], "device_time_us": round(r["device_time_us"], 6),
            "dram_read_bytes": r["dram_read_bytes"], "dram_write_bytes": r["dram_write_bytes"],
            "kernel_count": len(r["kernels"]), "kernels": dict(r["kernels"])}


def write_baseline(path, entries: dict, suite_path: str) -> None:
    doc = {"about": f"Simulated cycles of the regression suite {os.path.basename(suite_path)}, "
                    f"timing-only. Regenerate: {UPDATE_COMMAND} (a commit that changes this "
                    "file says why).",
           "cases": {k: entries[k] for k in sorted(entries)}}
    files.write_atomic(path, json.dumps(doc, indent=1) + "\n")


# --- comparing ----------------------------------------------------------------------------

@dataclass
class Row:
    case: str
    preset: str
    key: str
    tolerance: float
    baseline: dict | None
    now: dict              # batch.simulate's result
    status: str = ""       # same | within | slower | faster | failed | new
    change: float | None = None  # relative change of cycles
    moved: list = field(default_factory=list)  # [(kernel, base, now)], largest moves first

    def to_json(self) -> dict:
        now = self.now
        return {"case": self.case, "preset": self.preset, "key": self.key,
                "status": self.status, "tolerance": self.tolerance,
                "baseline_cycles": self.baseline["cycles"] if self.baseline else None,
                "cycles": now.get("cycles"), "change": self.change,
                "baseline_dram_bytes": (self.baseline["dram_read_bytes"]
                                        + self.baseline["dram_write_bytes"])
                if self.baseline else None,
                "dram_bytes": now.get("dram_bytes"),
                "baseline_kernel_count": self.baseline["kernel_count"] if self.baseline else None,
                "kernel_count": len(now["kernels"]) if now.get("ok") else None,
                "device_time_us": now.get("device_time_us"),
                "error": now.get("error"),
                "kernels_moved": [{"kernel": k, "baseline": b, "now": n} for k, b, n in self.moved],
                "compile_s": now.get("compile_s"), "sim_s": now.get("sim_s")}


def kernels_moved(base: dict, now: list, top: int) -> list:
    """Kernels whose cycles changed, by how much (a kernel missing on one side counts 0)."""
    now_d = dict(now)
    names = list(dict.fromkeys([*(k for k, _ in now), *base]))
    moves = [(k, base.get(k), now_d.get(k)) for k in names if base.get(k) != now_d.get(k)]
    moves.sort(key=lambda m: -abs((m[2] or 0) - (m[1] or 0)))
    return moves[:top]


def compare(case: Case, preset: str, base: dict | None, now: dict, top: int) -> Row:
    row = Row(case=case.name, preset=os.path.splitext(os.path.basename(preset))[0],
              key=entry_key(case.name, preset), tolerance=case.tolerance, baseline=base, now=now)
    if not now.get("ok"):
        row.status = "failed"
        return row
    if base is None:
        row.status = "new"
        return row
    b, n = base["cycles"], now["cycles"]
    row.change = (n - b) / b if b else (0.0 if n == b else float("inf"))
    if n == b:
        row.status = "same"
    elif abs(n - b) <= case.tolerance * b:
        row.status = "within"
    else:
        row.status = "slower" if n > b else "faster"
    row.moved = kernels_moved(base["kernels"], now["kernels"], top)
    return row


@dataclass
class Result:
    """A regression run: one row per (case, preset) in suite order."""

    suite: str
    baseline: str
    sets: tuple
    rows: list
    stale: list = field(default_factory=list)  # baseline entries the suite no longer has
    updated: dict | None = None   # --update: {key: (old cycles | None, new cycles)}
    notes: list = field(default_factory=list)

    @property
    def regressions(self) -> list:
        return [r for r in self.rows if r.status in ("slower", "failed")]

    @property
    def improvements(self) -> list:
        return [r for r in self.rows if r.status == "faster"]

    @property
    def missing(self) -> list:
        return [r for r in self.rows if r.status == "new"]

    @property
    def exit_code(self) -> int:
        """0: nothing got slower; 1: a regression (or a case that no longer runs); 2: a case
        without a baseline (the suite and its baseline disagree: run --update)."""
        if self.regressions:
            return 1
        if self.missing and self.updated is None:
            return 2
        return 0

    def to_json(self) -> dict:
        return {"suite": self.suite, "baseline": self.baseline, "sets": list(self.sets),
                "exit_code": self.exit_code, "rows": [r.to_json() for r in self.rows],
                "regressions": [r.key for r in self.regressions],
                "improvements": [r.key for r in self.improvements],
                "missing_baselines": [r.key for r in self.missing], "stale_baselines": self.stale,
                "notes": self.notes,
                "updated": None if self.updated is None
                else {k: {"baseline": a, "now": b} for k, (a, b) in self.updated.items()}}

    def dataframe(self):
        import pandas as pd

        return pd.DataFrame([r.to_json() for r in self.rows])


def run(suite=None, baseline=None, sets=(), jobs=None, cases=(), presets=(), update=False,
        top=5, progress=None) -> Result:
    """Runs a regression suite (default: the repository's). `sets` apply to every case on top
    of its own; `cases` are name patterns, `presets` preset names; `update` rewrites the
    baseline entries of the cases run (not allowed with `sets`). Raises SpecError on bad
    input; never raises for a case that fails to run (its row says `failed`)."""
    from ._core import core

    sets = tuple(str(s) for s in sets)
    if update and sets:
        raise SpecError("--update writes the suite's own baselines: it takes no --set "
                        "(run the comparison with --set instead)")
    s = load_suite(suite, baseline)
    pairs = select(s, tuple(cases), tuple(presets))
    for preset in dict.fromkeys(p for _, p in pairs):
        try:
            core.check_settings(preset, list(sets))
        except core.SpyreError as e:
            raise SpecError(f"--set: {e}") from None
    base = load_baseline(s.baseline)
    jobs_list = [batch.Job(key=entry_key(c.name, p), irs=c.irs, arch=p, sets=(*c.sets, *sets))
                 for c, p in pairs]
    # Longest first (the baseline's cycles as a proxy; new cases first), so the pool ends evenly.
    def cost(j):
        b = base.get(j.key)
        return -(b["cycles"] if b else 1 << 62)
    results = {}
    for r in batch.run_jobs(sorted(jobs_list, key=cost), jobs):
        results[r["key"]] = r
        if progress:
            progress(len(results), len(jobs_list), r)
    rows = [compare(c, p, base.get(entry_key(c.name, p)), results[entry_key(c.name, p)], top)
            for c, p in pairs]
    all_keys = {entry_key(c.name, p) for c in s.cases for p in c.presets}
    result = Result(suite=s.path, baseline=s.baseline, sets=sets, rows=rows,
                    stale=sorted(k for k in base if k not in all_keys))
    if update:
        if any(r.status == "failed" for r in rows):
            result.notes.append(f"--update: {s.baseline} not written: a case that does not run "
                                "has no baseline")
            return result
        entries = {k: v for k, v in base.items() if k in all_keys}
        result.updated = {}
        for r in rows:
            new = baseline_entry(r.now)
            old = base.get(r.key)
            if old != new:
                result.updated[r.key] = (old["cycles"] if old else None, new["cycles"])
            entries[r.key] = new
        write_baseline(s.baseline, entries, s.path)
    return result


# --- output -------------------------------------------------------------------------------

def _pct(x):
    return "" if x is None else f"{100 * x:+.2f} %"


def text(res: Result) -> str:
    lines = []
    w = max([len("case"), *(len(r.case) for r in res.rows)])
    head = f"{'case':<{w}}  {'preset':<10} {'baseline':>12} {'now':>12} {'change':>10}  status"
    lines += [head, "-" * len(head)]
    for r in res.rows:
        b = f"{r.baseline['cycles']:,}" if r.baseline else "-"
        n = f"{r.now['cycles']:,}" if r.now.get("ok") else "-"
        status = r.status + (f" (tolerance {100 * r.tolerance:g} %)" if r.status == "within"
                             else "")
        lines.append(f"{r.case:<{w}}  {r.preset:<10} {b:>12} {n:>12} {_pct(r.change):>10}  "
                     f"{status}")
    for r in res.regressions:
        if r.status == "failed":
            lines.append(f"\nFAILED {r.key}: {r.now.get('error')}")
            continue
        lines.append(f"\nSLOWER {r.key}: {r.baseline['cycles']:,} -> {r.now['cycles']:,} cycles "
                     f"({_pct(r.change)}), kernels {r.baseline['kernel_count']} -> "
                     f"{len(r.now['kernels'])}; kernels that moved most:")
        lines += [f"    {k:<40} {'-' if b is None else f'{b:,}':>12} -> "
                  f"{'-' if n is None else f'{n:,}':>12}  {(n or 0) - (b or 0):+,}"
                  for k, b, n in r.moved]
    if res.improvements:
        lines.append("\nfaster: " + ", ".join(f"{r.key} ({_pct(r.change)})"
                                               for r in res.improvements))
    if res.stale:
        lines.append(f"\nbaseline entries no case has (dropped by --update): "
                     f"{', '.join(res.stale)}")
    if res.updated is not None:
        if res.updated:
            lines.append(f"\nupdated {res.baseline}:")
            lines += [f"    {k}: {'new' if a is None else f'{a:,}'} -> {b:,}"
                      for k, (a, b) in res.updated.items()]
        else:
            lines.append(f"\n{res.baseline}: no change")
    elif res.missing:
        lines.append(f"\nno baseline for {', '.join(r.key for r in res.missing)}: run "
                     f"`{UPDATE_COMMAND}` and commit {res.baseline} saying why")
    lines += [f"\n{n}" for n in res.notes]
    n_reg, n_imp = len(res.regressions), len(res.improvements)
    lines.append(f"\n{len(res.rows)} runs: {n_reg} regressed, {n_imp} faster"
                 + ("" if not res.sets else f"  (--set {' '.join(res.sets)})"))
    return "\n".join(lines) + "\n"


def write_outputs(res: Result, out: str) -> None:
    os.makedirs(out, exist_ok=True)
    files.write_json(os.path.join(out, "results.json"), res.to_json())
    configs = os.path.join(out, "configs")
    os.makedirs(configs, exist_ok=True)
    names = {}
    for r in res.rows:
        if r.now.get("ok"):
            name = f"{r.preset}-{r.now['config_hash']}.yaml"
            names.setdefault(name, r.now["arch_yaml"])
    for name, text_ in names.items():
        files.write_atomic(os.path.join(configs, name), text_)
    provenance.write(out, provenance.record(
        arch=",".join(dict.fromkeys(r.preset for r in res.rows)), sets=res.sets,
        effective_config="configs/", suite=res.suite, baseline=res.baseline))


def parser():
    p = argparse.ArgumentParser(
        prog="spyre-sim regress",
        description="simulate the regression suite's cases and compare their cycles with the "
                    "stored baselines; exit 0 nothing slower, 1 a regression, 2 bad input")
    p.add_argument("suite", nargs="?", help="suite YAML (default: tests/regress/suite.yaml)")
    p.add_argument("--baseline", help="baseline JSON (default: the suite's `baseline`)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a parameter for every case (chip and compiler.* keys)")
    p.add_argument("-j", "--jobs", type=int, help="worker processes (default: the cores)")
    p.add_argument("-k", "--case", action="append", default=[], metavar="PATTERN",
                   help="run only cases whose name matches (glob or substring; repeatable)")
    p.add_argument("--preset", action="append", default=[], help="run only these presets")
    p.add_argument("--update", action="store_true",
                   help="rewrite the baseline entries of the cases run and print what changed")
    p.add_argument("--top", type=int, default=5, help="kernels listed per regressed case")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", default=os.path.join("spyre-sim-out", "regress"),
                   help="output folder (results.json, configs/, provenance.json)")
    return p


def _progress(done, total, r):
    if sys.stderr.isatty():
        print(f"\rregress: {done}/{total} {r['key']:<48}", end="" if done < total else "\n",
              file=sys.stderr, flush=True)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    a, code = parse_args(parser(), argv)
    if a is None:
        return code
    try:
        if a.jobs is not None and a.jobs < 1:
            raise SpecError(f"-j: expected at least 1 worker, got {a.jobs}")
        res = run(a.suite, a.baseline, a.set, a.jobs, a.case, a.preset, a.update, a.top,
                  progress=None if a.json else _progress)
        write_outputs(res, a.out)
    except SpecError as e:
        print(f"spyre-sim regress: error: {e}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(res.to_json()))
    else:
        sys.stdout.write(text(res))
        print(f"results in {a.out}")
    return res.exit_code


if __name__ == "__main__":
    sys.exit(main())
