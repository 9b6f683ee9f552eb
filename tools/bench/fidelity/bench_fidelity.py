"""Fidelity against the measured chip: IBM's kernel database, simulated row by row.

    .venv/bin/python tools/bench/fidelity/bench_fidelity.py [--data CSV] [--ops neg,mm]
        [--rows N] [--set K=V ...] [-j 2] [--json] [--write]

Every row of ../shared/calibration/spyre_kernels.csv (IBM's kernels measured on Spyre, described
in spyre_kernels.md beside it) runs as its PyTorch expression (tools/models/fidelity_kernels.py;
captured IR in tests/data/ir/bench/fidelity/, or captured into build/fidelity-ir/ for a shape
that has none) compiled for "spyre" with the row's settings as compiler options, so that any
script reproduces a row:

    spyre-sim run tests/data/ir/bench/fidelity/<shape>.json --timing-only \\
        --set compiler.schedule=ibm --set compiler.cores=<cores> --set compiler.lx_planning=<on|off>

and is simulated timing-only, once with IBM's schedule (`compiler.schedule=ibm`,
compiler/include/spyre/compiler/ibm_schedule.h: the fidelity figure) and once with this
compiler's own (`own`: what it would gain on the chip). The simulated time is the run's device time (all the kernels of
the call; the `*_sep` chains run their add n-1 times). Printed: every row (measured, simulated,
error, IBM's cost-model error), then per op: MAPE, worst error, Spearman rank correlation of
simulated vs measured, IBM's MAPE on the same rows; the matmul K-sweep of spyre_measured.json
(IBM's division forced with compiler.matmul_split=1,4,8,1); streaming bandwidth per core count
(element-wise rows, the cost model's byte count over the time); the fused-vs-separate and LX
on/off ratios; the TPUv3 workloads of ../shared/calibration/tpuv3_measured.csv on the "tpuv3"
preset (measured vs simulated cycles, their MAE). Rows are split into a tuning part and a held-out part by a hash of the row
(HELD_OUT_PERCENT): the error on each is printed, and whoever fits a parameter on these rows
fits it on the tuning part only. `--write` writes the tables to tools/bench/RESULTS.md with
the date, the commit and the command.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import math
import os
import pathlib
import subprocess
import sys
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools" / "models"))
import fidelity_kernels as fk  # noqa: E402

GOLDEN = ROOT / "tests" / "data" / "ir" / "bench" / "fidelity"
CACHE = ROOT / "build" / "fidelity-ir"
MEASURED = ROOT.parent / "shared" / "calibration" / "spyre_measured.json"
RESULTS = ROOT / "tools" / "bench" / "RESULTS.md"
ARCH = "spyre"
# A row is held out of fitting when crc32 of its identity (op, shape, lx, cores, build,
# measured time) mod 100 is below this: fixed, independent of the order of the file.
HELD_OUT_PERCENT = 30
ELEMENTWISE = ("neg", "copy", "add", "add_indep2", "bcast", "bcastcol")


def held_out(row: dict) -> bool:
    ident = ",".join(row.get(f, "") for f in ("op", "rows", "cols", "n", "to_mid", "lx", "cores",
                                              "build", "kernel_us_median"))
    return zlib.crc32(ident.encode()) % 100 < HELD_OUT_PERCENT


def ir_files(key: str) -> list[pathlib.Path]:
    """The captured graphs of a shape: the golden ones, else a capture cached under build/."""
    for d in (GOLDEN, CACHE):
        one = d / f"{key}.json"
        if one.exists():
            return [one]
        many = sorted(d.glob(f"{key}.*.json"), key=lambda p: int(p.suffixes[-2][1:]))
        if many:
            return many
    sys.path.insert(0, str(ROOT / "compiler" / "frontend"))
    import spyre_capture

    case = fk.case(key)
    irs = spyre_capture.capture(case.fn, case.make_inputs(), source_root=str(ROOT),
                                run_eagerly=False)
    CACHE.mkdir(parents=True, exist_ok=True)
    paths = [CACHE / (f"{key}.json" if len(irs) == 1 else f"{key}.{i}.json")
             for i in range(len(irs))]
    for p, ir in zip(paths, irs):
        tmp = p.with_suffix(".tmp")
        tmp.write_text(spyre_capture.to_json(ir))
        tmp.replace(p)
    return paths


def simulate(key: str, sets: list[str], repeat: int = 1, arch: str = ARCH) -> dict:
    """Device time (us), cycles and DRAM bytes of one call of `key`'s graphs on `arch`,
    timing-only."""
    from spyre_sim._core import core

    us, cycles, dram, kernels = 0.0, 0, 0, 0
    for path in ir_files(key):
        exe = core.Executable.from_ir(path.read_text(), arch, list(sets), str(path))
        s = json.loads(exe.run([], "", True, "")["summary"])
        us += s["cycles"] / s["clock_ghz"] / 1e3
        cycles += s["cycles"]
        dram += s["dram"]["read_bytes"] + s["dram"]["write_bytes"]
        kernels += len(s["kernels"])
    return {"us": us * repeat, "cycles": cycles * repeat, "dram_bytes": dram * repeat,
            "kernels": kernels * repeat}


def row_sets(row: dict, extra: list[str], schedule: str = "ibm") -> list[str]:
    lx = "on" if row["lx"].strip() == "1" else "off"
    return [f"compiler.schedule={schedule}", f"compiler.cores={int(row['cores'])}",
            f"compiler.lx_planning={lx}", *extra]


def _job(args):
    return simulate(*args)


def run_all(jobs: list[tuple], workers: int) -> list[dict]:
    if workers <= 1:
        return [_job(j) for j in jobs]
    with concurrent.futures.ProcessPoolExecutor(workers) as ex:
        return list(ex.map(_job, jobs))


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rank correlation (ties get their mean rank); nan for fewer than 3 rows or a
    constant side."""
    if len(xs) < 3:
        return math.nan

    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for t in range(i, j + 1):
                r[order[t]] = (i + j) / 2 + 1
            i = j + 1
        return r

    a, b = ranks(xs), ranks(ys)
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    cov = sum((p - ma) * (q - mb) for p, q in zip(a, b))
    va = math.sqrt(sum((p - ma) ** 2 for p in a))
    vb = math.sqrt(sum((q - mb) ** 2 for q in b))
    return cov / (va * vb) if va > 0 and vb > 0 else math.nan


def mape(errs: list[float]) -> float:
    return sum(abs(e) for e in errs) / len(errs) if errs else math.nan


def k_sweep_jobs(extra: list[str]) -> list[tuple]:
    m = json.loads(MEASURED.read_text())["matmul_k_sweep"]
    wd = m["work_division"]
    split = f"compiler.matmul_split={wd['b']},{wd['m']},{wd['n']},{wd['k']}"
    return [(int(k), us, (f"mm_2048x{k}_n2048", ["compiler.schedule=ibm", split, *extra], 1))
            for k, us in m["points_us"].items()]


def softmax_lx_jobs(extra: list[str]) -> list[tuple]:
    m = json.loads(MEASURED.read_text())["softmax_512x1024_single_core"]
    key = "softmax_row_tiling_512x1024"
    ibm = "compiler.schedule=ibm"
    return [("LX planning off, 1 core", m["baseline_us"],
             (key, [ibm, "compiler.cores=1", "compiler.lx_planning=off", *extra], 1)),
            ("LX planning on, 1 core", m["with_lx_planning_us"],
             (key, [ibm, "compiler.cores=1", "compiler.lx_planning=on", *extra], 1)),
            ("LX planning off, 4 cores", m["four_cores_us"],
             (key, [ibm, "compiler.cores=4", "compiler.lx_planning=off", *extra], 1))]


def tpuv3_jobs() -> list[tuple]:
    """tpuv3_measured.csv's workloads on the "tpuv3" preset as it is (IBM's schedule is
    torch-spyre's, and `--set` is for the Spyre rows): (workload, measured cycles, job or None
    when not run here)."""
    return [(r["workload"], int(r["tpuv3_cycles"]),
             (r["key"], [], 1, "tpuv3") if r["key"] else None)
            for r in fk.tpuv3_rows()]


def ratios(rows: list[dict]) -> list[dict]:
    """Measured and simulated time ratios of rows of one shape: LX planning on vs off, and a
    separately compiled chain vs the fused chain without LX planning."""
    by = {}
    for r in rows:
        by.setdefault((r["op"], r["rows"], r["cols"], r["lx"], r["cores"]), []).append(r)
    out = []

    def first(op, R, C, lx, cores):
        got = by.get((op, R, C, lx, cores))
        return got[0] if got else None

    for (op, R, C, lx, cores), group in sorted(by.items()):
        if op in ("add3", "add4") and lx == "1":
            off = first(op, R, C, "0", cores)
            if off:
                out.append({"what": f"{op} {R}x{C}: LX planning off / on", "a": off,
                            "b": group[0]})
        if op in ("add3_sep", "add4_sep"):
            fused = first(op[:4], R, C, "0", cores)
            if fused:
                out.append({"what": f"{op} {R}x{C} (lx {lx}) / {op[:4]} lx 0", "a": group[0],
                            "b": fused})
    for x in out:
        x["measured"] = x["a"]["measured_us"] / x["b"]["measured_us"]
        x["simulated"] = x["a"]["sim_us"] / x["b"]["sim_us"]
        x["err_pct"] = 100 * (x["simulated"] - x["measured"]) / x["measured"]
    return out


def fmt_table(head: list[str], body: list[list], align: str) -> list[str]:
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in body]
    return lines


def pct(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:+.1f}"


def report(rows, ksweep, smx, bw, rat, command, tpu=()) -> list[str]:
    out = []
    ops = sorted({r["op"] for r in rows})
    cls = []
    for op in ops:
        rs = [r for r in rows if r["op"] == op]
        errs = [r["err_pct"] for r in rs]
        ibm = [r["ibm_err_pct"] for r in rs if r["ibm_err_pct"] is not None]
        own = [r["own_err_pct"] for r in rs]
        cls.append([op, len(rs), f"{mape(errs):.1f}", pct(max(errs, key=abs)),
                    f"{spearman([r['sim_us'] for r in rs], [r['measured_us'] for r in rs]):.2f}",
                    f"{mape(ibm):.1f}" if ibm and not op.endswith("_sep") else "n/a",
                    f"{mape(own):.1f}"])
    model_rows = [r for r in rows if not r["op"].endswith("_sep")]
    tot = lambda rs: mape([r["err_pct"] for r in rs])  # noqa: E731
    ibm_tot = lambda rs: mape([r["ibm_err_pct"] for r in rs if r["ibm_err_pct"] is not None])  # noqa: E731
    ho = [r for r in model_rows if r["held_out"]]
    tu = [r for r in model_rows if not r["held_out"]]
    own_tot = lambda rs: mape([r["own_err_pct"] for r in rs])  # noqa: E731
    cls.append(["**all but `*_sep`**", len(model_rows), f"{tot(model_rows):.1f}",
                pct(max((r["err_pct"] for r in model_rows), key=abs)) if model_rows else "n/a",
                f"{spearman([r['sim_us'] for r in model_rows], [r['measured_us'] for r in model_rows]):.2f}",
                f"{ibm_tot(model_rows):.1f}", f"{own_tot(model_rows):.1f}"])
    cls.append(["held out", len(ho), f"{tot(ho):.1f}", "", "", f"{ibm_tot(ho):.1f}",
                f"{own_tot(ho):.1f}"])
    cls.append(["tuning", len(tu), f"{tot(tu):.1f}", "", "", f"{ibm_tot(tu):.1f}",
                f"{own_tot(tu):.1f}"])
    out.append("### Per op (error = (simulated - measured) / measured, %)")
    out.append("")
    out.append("Simulated with IBM's schedule (`compiler.schedule=ibm`): the fidelity figure. "
               "The last column: this compiler's own schedule (`compiler.schedule=own`) on the "
               "same rows, what it would gain or lose on the chip.")
    out.append("")
    out += fmt_table(["op", "rows", "MAPE", "worst", "Spearman", "IBM's model MAPE",
                      "own schedule MAPE"], cls, "lrrrrrr")
    out.append("")
    out.append("IBM's model errors of the `*_sep` rows cover only their last kernel "
               "(spyre_kernels.md), so they are left out of its MAPE and of the overall rows.")
    out.append("")
    def section(title, head, body, align):
        if body:
            out.extend([f"### {title}", "", *fmt_table(head, body, align), ""])

    section("Matmul K-sweep, M = N = 2048, IBM's division (1, 4, 8, 1) forced",
            ["K", "measured us", "simulated us", "error %"],
            [[k, f"{m:.1f}", f"{s:.1f}", pct(e)] for k, m, s, e in ksweep], "rrrr")
    section("Softmax 512 x 1024 (spyre_measured.json)",
            ["schedule", "measured us", "simulated us", "error %"],
            [[w, f"{m:.1f}", f"{s:.1f}", pct(e)] for w, m, s, e in smx], "lrrr")
    section("Streaming bandwidth per core count (element-wise rows, GB/s of the cost model's "
            "bytes)", ["cores", "rows", "measured GB/s", "simulated GB/s", "error %"],
            [[c, n, f"{m:.1f}", f"{s:.1f}", pct(100 * (s - m) / m)] for c, n, m, s in bw],
            "rrrrr")
    section("Ratios (measured vs simulated)", ["ratio", "measured", "simulated", "error %"],
            [[x["what"], f"{x['measured']:.2f}", f"{x['simulated']:.2f}", pct(x["err_pct"])]
             for x in rat], "lrrr")
    run = [e for *_, e in tpu if e is not None]
    section("TPUv3 (`--arch tpuv3`, tpuv3_measured.csv: PyTorchSim's measured cycles)",
            ["workload", "measured cycles", "simulated cycles", "error %"],
            [[w, f"{m:,}", f"{s:,}" if s is not None else "not run (no expression here yet)",
              pct(e)] for w, m, s, e in tpu], "lrrr")
    if run:
        out.extend([f"TPUv3 MAE over the {len(run)} workloads run: {mape(run):.1f} % "
                    "(PyTorchSim reports 11.5 %).", ""])
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=pathlib.Path, default=fk.DEFAULT_CSV)
    p.add_argument("--ops", help="comma-separated ops (default: all)")
    p.add_argument("--rows", type=int, help="only the first N rows (after --ops)")
    p.add_argument("--set", action="append", default=[], help="extra key=value (every row)")
    p.add_argument("-j", "--jobs", type=int, default=1)
    p.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    p.add_argument("--write", action="store_true", help=f"write {RESULTS.relative_to(ROOT)}")
    p.add_argument("--no-extras", action="store_true",
                   help="skip the K-sweep and softmax points of spyre_measured.json and "
                   "the TPUv3 workloads")
    a = p.parse_args(argv)
    try:
        rows = fk.read_rows(a.data)
        tpu_jobs = [] if a.no_extras else tpuv3_jobs()
    except FileNotFoundError as e:
        print(f"bench_fidelity: {e}", file=sys.stderr)
        return 2
    if a.ops:
        want = set(a.ops.split(","))
        unknown = want - {r["op"] for r in rows}
        if unknown:
            print(f"bench_fidelity: --ops: no rows of {', '.join(sorted(unknown))} in {a.data}",
                  file=sys.stderr)
            return 2
        rows = [r for r in rows if r["op"] in want]
    if a.rows:
        rows = rows[:a.rows]
    jobs = [(fk.shape_key(r), row_sets(r, a.set, sch), fk.graphs_per_call(r))
            for sch in ("ibm", "own") for r in rows]
    extras_k = extras_s = extras_t = []
    if not a.no_extras:
        extras_k, extras_s = k_sweep_jobs(a.set), softmax_lx_jobs(a.set)
        extras_t = tpu_jobs
    results = run_all(jobs + [j for *_, j in extras_k] + [j for *_, j in extras_s] +
                      [j for *_, j in extras_t if j is not None], a.jobs)
    table = []
    own_results = results[len(rows):2 * len(rows)]
    for r, res, own in zip(rows, results, own_results):
        meas = float(r["kernel_us_median"])
        ibm = r.get("ibm_err_pct", "").strip()
        table.append({
            "op": r["op"], "rows": r["rows"], "cols": r["cols"], "n": r.get("n", ""),
            "to_mid": r.get("to_mid", ""), "lx": r["lx"], "cores": r["cores"],
            "build": r.get("build", ""), "measured_us": meas, "sim_us": res["us"],
            "err_pct": 100 * (res["us"] - meas) / meas,
            "ibm_err_pct": float(ibm) if ibm else None, "own_us": own["us"],
            "own_err_pct": 100 * (own["us"] - meas) / meas,
            "io_hbm_bytes": int(r["io_hbm_bytes"]) if r.get("io_hbm_bytes") else 0,
            "sim_dram_bytes": res["dram_bytes"], "sim_kernels": res["kernels"],
            "held_out": held_out(r)})
    rest = results[2 * len(rows):]
    ksweep = [(k, m, s["us"], 100 * (s["us"] - m) / m)
              for (k, m, _), s in zip(extras_k, rest[:len(extras_k)])]
    smx = [(w, m, s["us"], 100 * (s["us"] - m) / m)
           for (w, m, _), s in zip(extras_s, rest[len(extras_k):])]
    tpu_results = iter(rest[len(extras_k) + len(extras_s):])
    tpu = []
    for w, m, j in extras_t:
        c = next(tpu_results)["cycles"] if j is not None else None
        tpu.append((w, m, c, 100 * (c - m) / m if c is not None else None))
    bw = []
    for c in sorted({int(r["cores"]) for r in table}):
        rs = [r for r in table if int(r["cores"]) == c and r["op"] in ELEMENTWISE
              and r["io_hbm_bytes"]]
        if rs:
            m = sum(r["io_hbm_bytes"] for r in rs) / sum(r["measured_us"] for r in rs) / 1e3
            s = sum(r["io_hbm_bytes"] for r in rs) / sum(r["sim_us"] for r in rs) / 1e3
            bw.append((c, len(rs), m, s))
    rat = ratios(table)
    if a.json:
        print(json.dumps({"rows": table, "k_sweep": ksweep, "softmax": smx, "bandwidth": bw,
                          "tpuv3": tpu,
                          "ratios": [{k: v for k, v in x.items() if k not in ("a", "b")}
                                     for x in rat]}))
        return 0
    command = "python tools/bench/fidelity/bench_fidelity.py " + " ".join(
        argv if argv is not None else sys.argv[1:])
    print(f"{'op':<20} {'R':>6} {'C':>6} {'n/mid':>6} {'lx':>2} {'cores':>5} {'measured':>10} "
          f"{'simulated':>10} {'err %':>7} {'IBM %':>7} {'own us':>10} {'own %':>7} held")
    for r in table:
        extra = r["n"] or r["to_mid"]
        print(f"{r['op']:<20} {r['rows']:>6} {r['cols']:>6} {extra:>6} {r['lx']:>2} "
              f"{r['cores']:>5} {r['measured_us']:>10.1f} {r['sim_us']:>10.1f} "
              f"{r['err_pct']:>+7.1f} {pct(r['ibm_err_pct']):>7} {r['own_us']:>10.1f} "
              f"{r['own_err_pct']:>+7.1f} {'*' if r['held_out'] else ''}")
    print()
    lines = report(table, ksweep, smx, bw, rat, command, tpu)
    print("\n".join(lines))
    if a.write:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip() or "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True).stdout.strip()
        head = ["# Fidelity against the measured chip (tools/bench/fidelity)", "",
                f"{datetime.date.today().isoformat()}, commit {commit}"
                f"{' with local changes' if dirty else ''}, \"{ARCH}\", timing-only; "
                f"{len(table)} rows of {a.data.name}.", "", "```sh", command.strip(), "```", ""]
        tmp = RESULTS.with_suffix(".tmp")
        tmp.write_text("\n".join(head + lines) + "\n")
        os.replace(tmp, RESULTS)
        print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
