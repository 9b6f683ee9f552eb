"""Speed of LLM inference simulation (issue: LLM inference, "Speed"): the wall time of one
Granite-3.3-8B decode step (batch 1, context 2048, timing-only) and of a whole 32-token
generation (prompt 128), with peak host memory, on this machine.

    .venv/bin/python tools/bench/llm/bench_llm.py [--quick] [--cases decode_step,generation_32]
        [--cache] [--arena-cache-off] [--extrapolate A,B [--extrapolate-only]]
        [--out tools/bench/llm/results.json]

Each case runs in a fresh process (peak memory is per process), cold: the compile cache is off
unless --cache. A decode step's wall time is
split into capture + compile (its graph's first call) and simulation; a generation's decode
steps after the first reuse that simulated run (exact: spyre_sim.llm) unless --no-reuse.
--quick runs the 2-layer Granite width (hidden 4096) instead of the full 40 layers."""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))

CHILD = r"""
import json, resource, sys, time
import spyre_sim.llm as L
args = json.loads(sys.argv[1])
model = L.load_config("granite-3.3-8b")
if args.pop("layers", None):
    model.num_hidden_layers = 2
if args.get("extrapolate"):
    args["extrapolate"] = tuple(args["extrapolate"])
t = time.perf_counter()
r = L.simulate(model, timing_only=True, **args)
out = {"wall_s": time.perf_counter() - t,
       "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
       "ttft_us": r.ttft_us, "tpot_us": r.tpot_us, "weight_floor_us": r.weight_floor_us,
       "steps": [{k: s[k] for k in ("phase", "device_time_us", "wall_s", "sim_wall_s",
                                     "reused", "achieved_gbps", "dram_bytes")}
                 for s in r.steps]}
print("RESULT " + json.dumps(out))
"""


def run_case(args: dict, extra_env: dict) -> dict:
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE", PYTHONWARNINGS="ignore", **extra_env)
    p = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], capture_output=True,
                       text=True, cwd=ROOT, env=env)
    lines = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    if p.returncode != 0 or not lines:
        raise SystemExit(f"case {args} failed:\n{p.stderr[-4000:]}")
    return json.loads(lines[-1][7:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 layers of the Granite width")
    ap.add_argument("--no-reuse", action="store_true")
    ap.add_argument("--out", default=None, help="write the figures as JSON")
    ap.add_argument("--cases", default="decode_step,generation_32",
                    help="comma-separated: decode_step, generation_32")
    ap.add_argument("--cache", action="store_true",
                    help="use the compile cache ($SPYRE_SIM_CACHE); default: off, a cold run")
    ap.add_argument("--arena-cache-off", action="store_true",
                    help="SPYRE_SIM_ARENA_CACHE=off: CPython's frame-stack chunks mmap'd per call "
                         "(tools/python/arena_cache.h), to measure what the cache saves")
    ap.add_argument("--extrapolate", default=None, metavar="A,B",
                    help="also run each case extrapolated from the model cut to A and B layers "
                         "(spyre_sim.llm.simulate(extrapolate=(A, B))) and print its error "
                         "against the full simulation")
    ap.add_argument("--extrapolate-only", action="store_true",
                    help="with --extrapolate: skip the full simulation (no error figure)")
    a = ap.parse_args()
    layers = None
    if a.extrapolate:
        try:
            layers = [int(x) for x in a.extrapolate.split(",")]
        except ValueError:
            raise SystemExit(f"--extrapolate: expected A,B (layer counts), got {a.extrapolate!r}")
        if a.quick:
            raise SystemExit("--extrapolate: not with --quick (the quick model has 2 layers)")
    elif a.extrapolate_only:
        raise SystemExit("--extrapolate-only needs --extrapolate A,B")
    extra_env = {"SPYRE_SIM_ARENA_CACHE": "off"} if a.arena_cache_off else {}
    if not a.cache:  # a cold run: nothing captured or compiled before is reused
        extra_env["SPYRE_SIM_CACHE"] = "off"
    base = {"batch": 1, "context": 2048, "reuse": not a.no_reuse}
    if a.quick:
        base["layers"] = 2
    cases = {"decode_step": dict(base, prompt=16, new=2),
             "generation_32": dict(base, prompt=128, new=32)}
    res = {}
    wanted = a.cases.split(",")
    for name in wanted:
        if name not in cases:
            raise SystemExit(f"--cases: unknown case {name!r} (expected {', '.join(cases)})")
    for name, args in cases.items():
        if name not in wanted:
            continue
        runs = {} if a.extrapolate_only else {name: args}
        if layers:
            runs[name + "_extrapolated"] = dict(args, extrapolate=layers)
        for key, case in runs.items():
            r = run_case(case, extra_env)
            res[key] = r
            dec = [s for s in r["steps"] if s["phase"] == "decode"]
            print(f"{key}: wall {r['wall_s']:.1f} s, peak {r['peak_rss_mib']:.0f} MiB; prefill "
                  f"{r['steps'][0]['wall_s']:.1f} s wall; first decode step "
                  f"{dec[0]['wall_s']:.1f} s wall of which simulation "
                  f"{dec[0]['sim_wall_s']:.1f} s; TTFT {r['ttft_us']:.0f} us, TPOT "
                  f"{r['tpot_us']:.0f} us (floor {r['weight_floor_us']:.0f} us)", flush=True)
        if len(runs) == 2:
            full, est = res[name], res[name + "_extrapolated"]
            err = {m: 100 * (est[m] / full[m] - 1) for m in ("ttft_us", "tpot_us")}
            err["decode_dram_bytes"] = 100 * (est["steps"][1]["dram_bytes"]
                                              / full["steps"][1]["dram_bytes"] - 1)
            res[name + "_extrapolated"]["error_pct"] = err
            print(f"{name}: extrapolated from {layers[0]} and {layers[1]} layers against the "
                  f"full simulation: TTFT {err['ttft_us']:+.2f} %, TPOT {err['tpot_us']:+.2f} %, "
                  f"decode DRAM bytes {err['decode_dram_bytes']:+.3f} %; wall "
                  f"{est['wall_s']:.1f} s against {full['wall_s']:.1f} s", flush=True)
    if a.out:
        with open(a.out + ".tmp", "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
        os.replace(a.out + ".tmp", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
