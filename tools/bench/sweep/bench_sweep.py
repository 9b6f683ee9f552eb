"""What a sweep and a regression run cost beyond compiling and simulating.

    .venv/bin/python tools/bench/sweep/bench_sweep.py [--spec examples/sweeps/gpt2_block.yaml]

Runs, side by side in one run (so machine noise hits every figure alike), each as a user would,
a fresh `spyre-sim` process per command:
- the example sweep, fresh, with -j 1 and -j 2 (the model file captured in each: import torch,
  transformers, Inductor);
- the regression suite with -j 1 and -j 2.
Reports wall time, the summed compile and simulation time of the points, the capture time, and
the overhead per point: worker-seconds not spent compiling or simulating, per point,
(jobs x (wall - capture) - sum(compile + simulate)) / points. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[3]
CLI = ROOT / ".venv" / "bin" / "spyre-sim"


def _cli(*args) -> tuple:
    """(wall seconds, parsed JSON stdout) of one spyre-sim command."""
    t0 = time.perf_counter()
    r = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True,
                       env=dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE"))
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr}")
    return wall, json.loads(r.stdout)


def sweep_once(spec: str, jobs: int, out: str) -> dict:
    wall, res = _cli("sweep", spec, "-j", jobs, "--out", out, "--fresh", "--json")
    rows = res["rows"]
    work = sum(r["compile_s"] + r["sim_s"] for r in rows)
    capture = max((r["capture_s"] for r in rows), default=0.0)
    return {"what": f"sweep -j {jobs}", "runs": len(rows), "wall_s": wall, "work_s": work,
            "capture_s": capture,
            "overhead_s": (jobs * (wall - capture) - work) / len(rows)}


def regress_once(jobs: int, out: str) -> dict:
    wall, res = _cli("regress", "-j", jobs, "--json", "--out", out)
    rows = res["rows"]
    work = sum(r["compile_s"] + r["sim_s"] for r in rows)
    return {"what": f"regress -j {jobs}", "runs": len(rows), "wall_s": wall, "work_s": work,
            "capture_s": 0.0, "overhead_s": (jobs * wall - work) / len(rows)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spec", default=str(ROOT / "examples" / "sweeps" / "gpt2_block.yaml"))
    a = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for j in (1, 2):
            rows.append(sweep_once(a.spec, j, os.path.join(tmp, f"j{j}")))
        for j in (1, 2):
            rows.append(regress_once(j, os.path.join(tmp, f"r{j}")))
    print(f"{'what':<14} {'runs':>5} {'wall s':>8} {'compile+sim s':>14} {'capture s':>10} "
          f"{'overhead/run s':>15}")
    for r in rows:
        print(f"{r['what']:<14} {r['runs']:>5} {r['wall_s']:>8.2f} {r['work_s']:>14.2f} "
              f"{r['capture_s']:>10.2f} {r['overhead_s']:>15.3f}")
    s1, s2 = rows[0], rows[1]
    print(f"sweep speed-up -j 2 vs -j 1 (wall, capture included): "
          f"{s1['wall_s'] / s2['wall_s']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
