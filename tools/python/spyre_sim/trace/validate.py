"""`spyre-sim trace validate TRACE --report compile.json`: check a simulated run against what the
compiler claimed.

1. The LX plan (report `lx_plan`, format spyre-lx-plan/1): every buffer has an offset, a size and,
   per core, the instruction interval [first_pc, last_pc] in which it is live. Statically: no two
   buffers live at the same pc on one core share a byte, and the live bytes never exceed the
   usable LX. Replayed against the trace: every LX byte an instruction reads or writes lies in a
   buffer that is live on that core at that instruction's pc (its dynamic index, span arg
   "dyn", where the stream has hardware loops: the plan counts the expanded stream). The
   intervals come from the compiler's allocator, not from the accesses, so the replay is an
   independent check.
2. Fusion: decision k (the k-th fusion taken) is simulated as the same graph compiled with
   `compiler.fusion_limit=k-1` minus `=k`; a negative cycle saving is harmful, a saving whose
   sign disagrees with the prediction is a misprediction; the same for the DRAM bytes
   (`harmful-bytes`, `sign-bytes`). The cycle saving is that of the kernels holding the
   decision's nodes (their spans summed in each program), so the shift of every later DRAM
   buffer that a removed intermediate causes does not count against the decision; the whole
   program's difference is reported beside it (`program_cycles`).

Exit status: 0 clean, 1 violations, 2 bad input.
"""

import argparse
import bisect
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from .._cli import parse_args

EXIT_OK, EXIT_VIOLATIONS, EXIT_BAD_INPUT = 0, 1, 2
PLAN_FORMAT = "spyre-lx-plan/1"


class BadInput(Exception):
    """A file that cannot be read or does not hold what the validator needs (exit 2)."""


@dataclass
class Violation:
    check: str  # "lx" or "fusion"
    kind: str
    message: str
    time: Optional[int] = None  # cycle the instruction started
    core: Optional[int] = None
    addr: Optional[int] = None
    bytes: Optional[int] = None
    rw: Optional[str] = None
    kernel: Optional[str] = None
    pc: Optional[int] = None
    mnemonic: Optional[str] = None
    buffer: Optional[str] = None

    def line(self) -> str:
        where = []
        if self.time is not None:
            where.append(f"cycle {self.time}")
        if self.core is not None:
            where.append(f"core {self.core}")
        if self.kernel is not None:
            where.append(f"kernel {self.kernel}")
        if self.pc is not None:
            where.append(f"pc {self.pc}")
        if self.mnemonic is not None:
            where.append(self.mnemonic)
        if self.addr is not None:
            where.append(f"lx [{self.addr:#x}, +{self.bytes}) {self.rw or ''}".rstrip())
        head = f"{self.check}/{self.kind}"
        return f"{head}: {', '.join(where)}: {self.message}" if where else f"{head}: {self.message}"


@dataclass
class Buffer:
    name: str
    kernel: str
    offset: int
    bytes: int
    live: List[Tuple[int, int, int]] = field(default_factory=list)  # (core, first_pc, last_pc)

    @property
    def end(self) -> int:
        return self.offset + self.bytes


def _int(x, what):
    if isinstance(x, bool) or not isinstance(x, int):
        raise BadInput(f"{what}: expected an integer, got {x!r}")
    return x


def parse_plan(report: dict, where: str = "report") -> Tuple[List[Buffer], int]:
    """The report's LX plan as buffers, and the usable LX bytes per core."""
    plan = report.get("lx_plan")
    if not isinstance(plan, dict):
        raise BadInput(f"{where}: no 'lx_plan' (compile with a spyre-sim that writes it)")
    if plan.get("format") != PLAN_FORMAT:
        raise BadInput(f"{where}: lx_plan.format: expected {PLAN_FORMAT!r}, "
                       f"got {plan.get('format')!r}")
    usable = _int(plan.get("usable_bytes", report.get("lx_usable_bytes")),
                  f"{where}: lx_plan.usable_bytes")
    out = []
    for i, b in enumerate(plan.get("buffers", [])):
        w = f"{where}: lx_plan.buffers[{i}]"
        try:
            buf = Buffer(str(b["buffer"]), str(b["kernel"]), _int(b["offset"], w + ".offset"),
                         _int(b["bytes"], w + ".bytes"))
            for j, l in enumerate(b["live"]):
                if not isinstance(l, list) or len(l) != 3:
                    raise BadInput(f"{w}.live[{j}]: expected [core, first_pc, last_pc]")
                buf.live.append(tuple(_int(v, f"{w}.live[{j}]") for v in l))
        except (KeyError, TypeError) as e:
            raise BadInput(f"{w}: missing or malformed field {e}") from None
        out.append(buf)
    return out, usable


class PlanIndex:
    """Per core: buffers grouped by live interval, for 'which buffers are live at pc'."""

    def __init__(self, buffers: List[Buffer]):
        groups: Dict[int, Dict[Tuple[int, int], List[Buffer]]] = {}
        for b in buffers:
            for core, lo, hi in b.live:
                groups.setdefault(core, {}).setdefault((lo, hi), []).append(b)
        self._cores = {}
        for core, g in groups.items():
            ivs = sorted(g.items())
            firsts = [lo for (lo, _), _ in ivs]
            max_last, m = [], -1
            for (_, hi), _ in ivs:
                m = max(m, hi)
                max_last.append(m)
            self._cores[core] = (ivs, firsts, max_last)

    def live_at(self, core: int, pc: int) -> List[Buffer]:
        if core not in self._cores:
            return []
        ivs, firsts, max_last = self._cores[core]
        out = []
        i = bisect.bisect_right(firsts, pc) - 1
        while i >= 0 and max_last[i] >= pc:
            (lo, hi), bufs = ivs[i]
            if lo <= pc <= hi:
                out.extend(bufs)
            i -= 1
        return out

    def intervals(self, core: int):
        return self._cores.get(core, ([], [], []))[0]

    def cores(self):
        return sorted(self._cores)


def check_plan(buffers: List[Buffer], usable: int) -> List[Violation]:
    """Static checks: live buffers overlapping on a core, live bytes beyond the usable LX."""
    out = []
    per_core: Dict[int, List[Tuple[int, int, Buffer]]] = {}
    for b in buffers:
        if b.offset < 0 or b.bytes <= 0:
            out.append(Violation("lx", "bad-buffer", f"buffer {b.name}: offset {b.offset}, "
                                 f"{b.bytes} bytes", kernel=b.kernel, buffer=b.name))
        for core, lo, hi in b.live:
            per_core.setdefault(core, []).append((lo, hi, b))
    over = set()  # (core, first_pc): one capacity violation per interval
    for core, items in sorted(per_core.items()):
        items.sort(key=lambda t: (t[0], t[1]))
        active: List[Tuple[int, int, Buffer]] = []
        for lo, hi, b in items:
            active = [a for a in active if a[1] >= lo]
            for alo, ahi, a in active:
                if a.offset < b.end and b.offset < a.end:
                    out.append(Violation(
                        "lx", "overlap",
                        f"buffers {a.name} [{a.offset}, {a.end}) live pc [{alo}, {ahi}] and "
                        f"{b.name} [{b.offset}, {b.end}) live pc [{lo}, {hi}] share bytes",
                        core=core, kernel=b.kernel, pc=max(lo, alo), addr=max(a.offset, b.offset),
                        bytes=min(a.end, b.end) - max(a.offset, b.offset), buffer=b.name))
            active.append((lo, hi, b))
            live_bytes = sum(x[2].bytes for x in active)
            high = max(x[2].end for x in active)
            if (high > usable or live_bytes > usable) and (core, lo) not in over:
                over.add((core, lo))
                out.append(Violation(
                    "lx", "capacity",
                    f"live buffers reach byte {high} ({live_bytes} bytes live), {usable} usable",
                    core=core, kernel=b.kernel, pc=lo, buffer=b.name))
    return out


def peak_by_core(buffers: List[Buffer]) -> Dict[int, int]:
    """Largest live bytes on each core (at a pc where a buffer becomes live)."""
    idx = PlanIndex(buffers)
    peak = {}
    for core in idx.cores():
        best = 0
        for (lo, _), _ in idx.intervals(core):
            best = max(best, sum(b.bytes for b in idx.live_at(core, lo)))
        peak[core] = best
    return peak


def _first_uncovered(live: List[Buffer], lo: int, hi: int) -> Optional[int]:
    """First byte of [lo, hi) that no buffer in `live` holds, or None.

    The trace merges touching ranges of one instruction (a pt.mm's A and B operands in adjacent
    buffers become one range), so an access must lie in the union of live buffers, not in one."""
    at = lo
    for b in sorted(live, key=lambda b: b.offset):
        if b.offset > at:
            break
        at = max(at, b.end)
        if at >= hi:
            return None
    return at if at < hi else None


def replay(buffers: List[Buffer], events: Iterable[dict]) -> Tuple[List[Violation], dict]:
    """Every recorded LX access against the buffers live at its instruction's pc."""
    idx = PlanIndex(buffers)
    out: List[Violation] = []
    stats = {"instructions": 0, "lx_accesses": 0, "lx_bytes": 0, "end_cycle": 0}
    for ev in events:
        if ev.get("ph") != "span":
            continue
        args = ev.get("args") or {}
        if "pc" not in args or "core" not in args:
            continue
        stats["instructions"] += 1
        stats["end_cycle"] = max(stats["end_cycle"], ev.get("start", 0) + ev.get("dur", 0))
        # The plan counts dynamic indices: "dyn" with hardware loops (read.instr_index).
        core, pc = args["core"], args.get("dyn", args["pc"])
        for acc in args.get("lx") or []:
            addr, n, rw = acc[0], acc[1], acc[2] if len(acc) > 2 else None
            if n <= 0:
                continue
            stats["lx_accesses"] += 1
            stats["lx_bytes"] += n
            hole = _first_uncovered(idx.live_at(core, pc), addr, addr + n)
            if hole is None:
                continue
            kind, msg = "outside-buffer", (f"byte {hole} ({hole:#x}) is in no buffer live at "
                                           "this pc")
            dead = [b for b in buffers if b.offset <= hole < b.end
                    and any(c == core for c, _, _ in b.live)]
            if dead:
                d = dead[0]
                spans = [f"[{lo}, {hi}]" for c, lo, hi in d.live if c == core]
                kind = "not-live"
                msg = (f"byte {hole} is in {d.name} of {d.kernel} [{d.offset}, {d.end}), "
                       f"live on core {core} at pc {', '.join(spans)} only")
            out.append(Violation("lx", kind, msg, time=ev.get("start"), core=core, addr=addr,
                                 bytes=n, rw=rw, kernel=args.get("kernel"), pc=pc,
                                 mnemonic=ev.get("name")))
    return out, stats


# ---------------------------------------------------------------- fusion


def _sets_from_options(report: dict) -> List[str]:
    o = report.get("options") or {}
    sets = []
    if o.get("fusion") is False:
        sets.append("compiler.fusion=off")
    for key in ("matmul_split", "matmul_tiles"):
        forced = o.get(key)
        if forced and any(forced):
            sets.append(f"compiler.{key}=" + ",".join(str(v) for v in forced))
    if o.get("matmul_lead"):
        sets.append(f"compiler.matmul_lead={o['matmul_lead']}")
    if o.get("layout_copy", "auto") != "auto":
        sets.append(f"compiler.layout_copy={o['layout_copy']}")
    if o.get("hw_loops") is False:
        sets.append("compiler.hw_loops=off")
    dbg = o.get("debug") or {}
    ff = dbg.get("force_fusion")
    if ff == "all" or (isinstance(ff, list) and ff):
        forced = ff if ff == "all" else ",".join(map(str, ff))
        sets.append("compiler.debug.force_fusion=" + forced)
    return sets


def simulate_ir(graph_file: str, arch: str, sets: List[str]) -> dict:
    """Compile and simulate through the spyre_sim core: cycles and DRAM bytes. Functional, with
    the runner's seeded inputs (those of `spyre-sim run IR.json`): a gather's DRAM addresses,
    and so its timing, depend on the data, which timing-only mode does not have."""
    from spyre_sim._core import core

    with open(graph_file) as f:
        text = f.read()
    exe = core.Executable.from_ir(text, arch, sets, graph_file)
    s = json.loads(exe.run([], "", False)["summary"])
    d = s.get("dram", {})
    nodes = {k["name"]: k.get("nodes", []) for k in json.loads(exe.report).get("kernels", [])}
    kernels = [{"name": k["name"], "cycles": k["cycles"], "nodes": nodes.get(k["name"], [])}
               for k in s.get("kernels", [])]
    return {"cycles": s["cycles"], "dram_bytes": d.get("read_bytes", 0) + d.get("write_bytes", 0),
            "kernels": kernels}


def _group_cycles(res: dict, group: List[str]) -> Optional[int]:
    """Summed spans of the kernels of `res` that hold any node of `group`; None when the run
    lists no kernels or none holds the group's nodes (then the whole program is judged)."""
    nodes = set(group)
    spans = [k["cycles"] for k in res.get("kernels") or [] if nodes & set(k.get("nodes", []))]
    return sum(spans) if spans else None


def check_fusion(report: dict, graph_file: str, arch: str,
                 sim: Callable[[str, str, List[str]], dict] = simulate_ir,
                 chip_sets: Optional[List[str]] = None):
    """Rows (one per taken decision: predicted and simulated savings), violations, and the
    cycles of the run with every fusion (to compare with the trace)."""
    base = list(chip_sets or []) + _sets_from_options(report)
    cache: Dict[int, dict] = {}

    def run(limit):
        if limit not in cache:
            cache[limit] = sim(graph_file, arch, base + [f"compiler.fusion_limit={limit}"])
        return cache[limit]

    rows, out = [], []
    k = 0
    for i, d in enumerate(report.get("fusion") or []):
        if not d.get("taken"):
            continue
        k += 1
        pred = d.get("predicted") or {}
        before, after = pred.get("before") or {}, pred.get("after") or {}
        p_cyc = before.get("cycles", 0) - after.get("cycles", 0)
        p_dram = before.get("dram_bytes", 0) - after.get("dram_bytes", 0)
        off, on = run(k - 1), run(k)
        prog_cyc = off["cycles"] - on["cycles"]
        nodes = d.get("group") or []
        g_off, g_on = _group_cycles(off, nodes), _group_cycles(on, nodes)
        s_cyc = g_off - g_on if g_off is not None and g_on is not None else prog_cyc
        s_dram = off["dram_bytes"] - on["dram_bytes"]
        group = "+".join(d.get("group") or [])
        row = {"decision": i, "taken_index": k, "group": group, "kind": d.get("kind"),
               "forced": bool(d.get("forced")),
               "predicted": {"cycles": p_cyc, "dram_bytes": p_dram},
               "simulated": {"cycles": s_cyc, "dram_bytes": s_dram, "program_cycles": prog_cyc},
               "flags": []}
        # The same two checks for cycles and for DRAM bytes: a negative simulated saving is
        # harmful; a nonzero saving whose sign disagrees with the prediction is a sign error.
        checks = (("", p_cyc, s_cyc,
                   f"decision {i} ({group}, {d.get('kind')}) costs {-s_cyc} cycles in simulation "
                   f"(fusion_limit {k - 1} -> {k}); predicted saving {p_cyc} cycles",
                   f"decision {i} ({group}): predicted saving {p_cyc} cycles, simulated {s_cyc}"),
                  ("-bytes", p_dram, s_dram,
                   f"decision {i} ({group}) moves {-s_dram} more DRAM bytes in simulation; "
                   f"predicted saving {p_dram} B",
                   f"decision {i} ({group}): predicted DRAM saving {p_dram} B, "
                   f"simulated {s_dram} B"))
        for suffix, want, got, harm_msg, sign_msg in checks:
            if got < 0:
                row["flags"].append("harmful" + suffix)
                out.append(Violation("fusion", "harmful" + suffix, harm_msg, kernel=group))
            if (want > 0 and got < 0) or (want < 0 and got > 0):
                row["flags"].append("sign" + suffix)
                out.append(Violation("fusion", "sign" + suffix, sign_msg, kernel=group))
        rows.append(row)
    return rows, out, (run(k)["cycles"] if k else None)


# ---------------------------------------------------------------- driver


def _load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: cannot read {what}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}: malformed JSON ({what}): {e}") from None


def _resolve_graph(report: dict, report_path: str, override: Optional[str]) -> Optional[str]:
    if override:
        return override
    f = report.get("file")
    if not f or not f.endswith(".json"):
        return None  # a model file run through torch.compile: no IR to re-simulate
    for cand in (f, os.path.join(os.path.dirname(report_path), f)):
        if os.path.exists(cand):
            return cand
    raise BadInput(f"{report_path}: graph file {f!r} not found; pass --graph or --skip-fusion")


def _resolve_arch(report: dict, report_path: str, override: Optional[str],
                  meta: dict) -> Tuple[str, List[str]]:
    """The chip to re-simulate on: --arch; else the arch.yaml `spyre-sim run --out` writes
    beside the report; else the report's arch with the trace's recorded parameters on top."""
    if override:
        return override, []
    yaml = os.path.join(os.path.dirname(os.path.abspath(report_path)), "arch.yaml")
    if os.path.exists(yaml):
        return yaml, []
    params = meta.get("arch") if isinstance(meta.get("arch"), dict) else {}
    sets = []
    for key, v in sorted(params.items()):
        if key == "name" or isinstance(v, (dict, list)):
            continue
        sets.append(f"{key}={str(v).lower() if isinstance(v, bool) else v}")
    return report.get("arch", "spyre"), sets


def validate(trace_path: str, report_path: str, fusion: bool = True, graph: Optional[str] = None,
             arch: Optional[str] = None, events: Optional[Iterable[dict]] = None,
             meta: Optional[dict] = None, sim=simulate_ir) -> dict:
    """The whole check; raises BadInput. `events`/`meta` replace reading `trace_path`."""
    report = _load_json(report_path, "compile report")
    if not isinstance(report, dict):
        raise BadInput(f"{report_path}: expected a compile report object")
    buffers, usable = parse_plan(report, report_path)
    if events is None:
        from spyre_sim.trace.read import TraceError, open_trace

        try:
            t = open_trace(trace_path)
        except TraceError as e:
            raise BadInput(str(e)) from None
        meta, events = t.meta or {}, t.events()
    meta = meta or {}
    if meta.get("detail") == "summary":
        raise BadInput(f"{trace_path}: a summary trace has no instruction spans to check: rerun "
                       "with --trace-detail full (spyre_sim.run(..., trace_detail=\"full\"))")
    for key in ("graph", "arch"):
        got = meta.get(key)
        if isinstance(got, dict):  # an arch given as its parameters: compare the name
            got = got.get("name")
        if isinstance(got, str) and got and report.get(key) and got != report[key]:
            raise BadInput(f"{trace_path}: trace {key} {got!r} is not the report's "
                           f"{report[key]!r}")
    violations = check_plan(buffers, usable)
    try:
        replayed, stats = replay(buffers, events)
    except (ValueError, TypeError, IndexError, KeyError) as e:
        raise BadInput(f"{trace_path}: malformed instruction span: {e!r}") from None
    if stats["instructions"] == 0:
        raise BadInput(f"{trace_path}: no instruction spans with pc and core "
                       "(a trace from a spyre-sim that records instruction args is needed)")
    violations += replayed
    end = stats.pop("end_cycle")
    result = {"trace": trace_path, "report": report_path, "trace_end_cycle": end,
              "lx": dict(stats), "fusion": None}
    result["lx"]["buffers"] = len(buffers)
    result["lx"]["usable_bytes"] = usable
    result["lx"]["peak_bytes"] = peak_by_core(buffers)
    g = None
    if fusion and any(d.get("taken") for d in report.get("fusion") or []):
        g = _resolve_graph(report, report_path, graph)
        if g is None:
            result["warnings"] = [f"fusion check skipped: the report's file "
                                  f"{report.get('file')!r} is not an IR JSON (pass --graph)"]
    if g is not None:
        a, chip_sets = _resolve_arch(report, report_path, arch, meta)
        try:
            rows, fv, full = check_fusion(report, g, a, sim, chip_sets)
        except Exception as e:  # the core's SpyreError: the graph or arch cannot be run
            if isinstance(e, BadInput):
                raise
            raise BadInput(f"{g}: cannot re-simulate for the fusion check: {e}") from None
        result["fusion"] = rows
        # The re-simulation with every fusion must reproduce the traced run; if it does not
        # (another chip configuration: pass --arch), the savings belong to a different run.
        result["resimulated_cycles"] = full
        if full is not None and abs(full - end) > max(2, end // 100):
            result["warnings"] = [f"the re-simulation takes {full} cycles, the trace ends at "
                                  f"cycle {end}: wrong --arch or --graph?"]
        violations += fv
    result["violations"] = [asdict(v) for v in violations]
    result["ok"] = not violations
    return result


def _program_note(sim: dict) -> str:
    prog = sim.get("program_cycles")
    return f" (whole program {prog})" if prog is not None and prog != sim["cycles"] else ""


def _print_text(res: dict, out=sys.stdout) -> None:
    lx = res["lx"]
    print(f"LX plan: {lx['buffers']} buffers, {lx['instructions']} instructions replayed, "
          f"{lx['lx_accesses']} LX accesses ({lx['lx_bytes']} bytes)", file=out)
    if lx["peak_bytes"]:
        worst = max(lx["peak_bytes"].items(), key=lambda kv: kv[1])
        print(f"  peak live bytes {worst[1]} (core {worst[0]}) of {lx['usable_bytes']} usable",
              file=out)
    for r in res["fusion"] or []:
        p, s = r["predicted"], r["simulated"]
        flags = f"  <- {', '.join(r['flags'])}" if r["flags"] else ""
        print(f"fusion {r['decision']} {r['group']} ({r['kind']}{', forced' if r['forced'] else ''}"
              f"): predicted {p['cycles']} cycles / {p['dram_bytes']} B, simulated "
              f"{s['cycles']} cycles / {s['dram_bytes']} B"
              f"{_program_note(s)}{flags}", file=out)
    for w in res.get("warnings", []):
        print(f"warning: {w}", file=out)
    for v in res["violations"]:
        print(Violation(**v).line(), file=out)
    n = len(res["violations"])
    print("clean" if not n else f"{n} violation{'s' if n != 1 else ''}", file=out)


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("validate", help="check a trace against the compile report's "
                              "LX plan and fusion predictions")
    p.add_argument("trace", help="trace file written by spyre-sim run --trace")
    p.add_argument("--report", required=True, help="compile report (report.json of --out)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--skip-fusion", action="store_true",
                   help="do not re-simulate the fusion decisions")
    p.add_argument("--graph", help="IR JSON to re-simulate (default: the report's file)")
    p.add_argument("--arch", help="arch name or YAML (default: arch.yaml beside the report, "
                   "else the report's arch with the trace's recorded parameters)")
    p.set_defaults(func=run_args)
    return p


def run_args(args) -> int:
    try:
        res = validate(args.trace, args.report, fusion=not args.skip_fusion, graph=args.graph,
                       arch=args.arch)
    except BadInput as e:
        print(f"spyre-sim trace validate: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        _print_text(res)
    return EXIT_OK if res["ok"] else EXIT_VIOLATIONS


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="spyre-sim trace")
    add_parser(parser.add_subparsers(dest="cmd", required=True))
    args, code = parse_args(parser, argv)
    if args is None:
        return code
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
