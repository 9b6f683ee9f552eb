"""Memory-bound kernels against the DRAM bound of the chip they run on.

    .venv/bin/python tools/bench/membound/bench_membound.py [--arch spyre] [--set K=V ...]
        [--kernels neg,softmax] [--sizes 1,64] [--json]

Every kernel of tools/models/membound_kernels.py (captured IR under
tests/data/ir/bench/membound/, no torch needed) is compiled and simulated timing-only. Its
bound is the chip's own DRAM model streaming the kernel's essential bytes (every graph input
read once, every output written once) at the same read/write mix, with nothing else in the way
(runner/dram_bound.h: the V-curve of tools/bench/dram). Printed side by side: simulated time,
DRAM bytes moved, achieved GB/s over the essential bytes, the bound's GB/s and the share of
the bound reached (target: at least 90 %).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
IR_DIR = ROOT / "tests" / "data" / "ir" / "bench" / "membound"
TARGET = 0.90


def cases(kernels=None, sizes=None):
    out = []
    for path in sorted(IR_DIR.glob("*.json")):
        m = re.fullmatch(r"(.+)_(\d+)mib", path.stem)
        if not m:
            continue
        kernel, mib = m.group(1), int(m.group(2))
        if (kernels and kernel not in kernels) or (sizes and mib not in sizes):
            continue
        out.append((kernel, mib, path))
    order = {k: i for i, k in enumerate(("neg", "pointwise_chain", "sum", "row_sum", "softmax",
                                         "layer_norm", "rms_norm"))}
    return sorted(out, key=lambda c: (order.get(c[0], 99), c[0], c[1]))


def measure(path, arch, sets) -> dict:
    from spyre_sim._core import core

    exe = core.Executable.from_ir(path.read_text(), arch, list(sets), str(path))
    s = json.loads(exe.run([], "", True, "")["summary"])
    essential_in = sum(b["storage_bytes"] for b in exe.inputs)
    essential_out = sum(b["storage_bytes"] for b in exe.outputs)
    bound = core.dram_bound(arch, list(sets), essential_in, essential_out)
    ns = s["cycles"] / s["clock_ghz"]
    return {"cycles": s["cycles"], "device_us": ns / 1e3, "kernels": len(s["kernels"]),
            "dram_read": s["dram"]["read_bytes"], "dram_write": s["dram"]["write_bytes"],
            "in_bytes": essential_in, "out_bytes": essential_out,
            "gbps": (essential_in + essential_out) / ns, "bound_cycles": bound["cycles"],
            "bound_gbps": bound["gbps"], "of_bound": bound["cycles"] / s["cycles"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", default="spyre")
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--kernels", help="comma-separated kernel names")
    p.add_argument("--sizes", help="comma-separated sizes in MiB")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    ks = set(a.kernels.split(",")) if a.kernels else None
    ss = {int(x) for x in a.sizes.split(",")} if a.sizes else None
    rows = []
    for kernel, mib, path in cases(ks, ss):
        r = measure(path, a.arch, a.set)
        r.update(kernel=kernel, mib=mib)
        rows.append(r)
    if a.json:
        print(json.dumps(rows))
        return 0
    print(f"memory-bound kernels on {a.arch!r}{' ' + ' '.join(a.set) if a.set else ''}, "
          "timing-only; bound = the DRAM model streaming the essential bytes at the same mix")
    head = (f"{'kernel':<16} {'MiB':>4} {'cycles':>11} {'us':>9} {'kern':>4} {'DRAM MB':>9} "
            f"{'read/write':>10} {'GB/s':>7} {'bound':>7} {'of bound':>9}")
    print(head)
    print("-" * len(head))
    for r in rows:
        mix = r["in_bytes"] / max(1, r["in_bytes"] + r["out_bytes"])
        moved = (r["dram_read"] + r["dram_write"]) / 1e6
        flag = "" if r["of_bound"] >= TARGET else "  <"
        print(f"{r['kernel']:<16} {r['mib']:>4} {r['cycles']:>11,} {r['device_us']:>9.1f} "
              f"{r['kernels']:>4} {moved:>9.1f} {mix:>10.2f} {r['gbps']:>7.1f} "
              f"{r['bound_gbps']:>7.1f} {100 * r['of_bound']:>8.1f}%{flag}")
    below = [r for r in rows if r["of_bound"] < TARGET]
    names = ", ".join(f"{r['kernel']}_{r['mib']}" for r in below)
    print(f"{len(rows) - len(below)} of {len(rows)} within {100 * (1 - TARGET):.0f} % of the "
          f"bound" + (f"; below: {names}" if below else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
