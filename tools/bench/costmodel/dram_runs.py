"""How fast the DRAM model moves strided DMA rows, and the cost model's fit of it.

    .venv/bin/python tools/bench/costmodel/dram_runs.py [--fit]

Every one of the 32 cores of "spyre" loads 16 instructions of 32 KiB, each `rows` rows of
`run` contiguous bytes `stride` apart, from its own region (timing-only simulations). Printed:
the simulated GB/s against the cost model's (compiler/report/cost.cpp: CostParams::
run_efficiency x the contiguous rate), for runs of 128 B to 4 KiB and strides of 1 KiB to
64 KiB. `--fit` refits compiler.cost.strided_channel_rate and strided_visit_words (a grid
search for the least squared log error) and prints them; their defaults in cost.h came from
this fit.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
import tempfile

RUNS = (128, 256, 512, 1024, 2048, 4096)
STRIDES = (1024, 2560, 4096, 9728, 16384, 65536)
CHUNK, PER_CORE = 32768, 16


def program(run: int, stride: int, cores: int = 32) -> str:
    rows = max(1, CHUNK // run)
    text = f".spyre 1\n.cores {cores}\n.dram_bytes {cores * PER_CORE * rows * stride + (1 << 20)}\n"
    for c in range(cores):
        text += f".core {c}\n"
        base = c * PER_CORE * rows * stride
        for i in range(PER_CORE):
            text += (f"  dma.load dram={base + i * rows * stride} lx={(i % 8) * CHUNK} "
                     f"bytes={run} rows={rows} dram_stride={stride} lx_stride={run}\n")
        text += "  halt\n"
    return text


def simulate(run: int, stride: int) -> float:
    from spyre_sim._core import core

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.s")
        with open(path, "w") as f:
            f.write(program(run, stride))
        exe = core.Executable.from_program_file(path, "spyre", [])
        return json.loads(exe.run([], "", True, "")["summary"])["dram"]["achieved_gbps"]


def model(run: int, stride: int, rate: float, visit: float, contiguous_gbps: float) -> float:
    """The cost model's GB/s for the pattern (a Python twin of run_efficiency, for the fit)."""
    rows = max(1, CHUNK // run)
    if stride == run or rows <= 1:
        return contiguous_gbps
    word, nch, window = 128, 16, 128 * 16 * 16
    chans, visits, words = set(), {}, 0
    for r in range(min(rows, 64)):
        lo = r * stride
        for w in range(lo // word, (lo + run + word - 1) // word):
            chans.add(w % nch)
            visits[(w % nch, w * word // window)] = visits.get((w % nch, w * word // window), 0) + 1
            words += 1
    v = words / len(visits)
    return contiguous_gbps * min(1.0, len(chans) / nch * rate * v / (v + visit))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fit", action="store_true")
    a = p.parse_args(argv)
    contiguous = simulate(CHUNK, CHUNK)  # one contiguous 32 KiB row per instruction
    sim = {(r, s): simulate(r, s) for s in STRIDES for r in RUNS if r <= s}
    rate, visit = 0.844, 1.40  # cost.h's defaults
    if a.fit:
        best = None
        for rt, vw in itertools.product([x / 1000 for x in range(700, 1001, 3)],
                                        [x / 100 for x in range(50, 401, 3)]):
            err = sum(math.log(model(r, s, rt, vw, contiguous) / g) ** 2 for (r, s), g in sim.items())
            if best is None or err < best[0]:
                best = (err, rt, vw)
        _, rate, visit = best
        print(f"fit: strided_channel_rate {rate:.3f}, strided_visit_words {visit:.2f}")
    print(f"contiguous: {contiguous:.1f} GB/s; simulated / model GB/s")
    print("stride\\run " + "".join(f"{r:>14}" for r in RUNS))
    worst = 0.0
    for s in STRIDES:
        cells = []
        for r in RUNS:
            if (r, s) not in sim:
                cells.append(f"{'-':>14}")
                continue
            m = model(r, s, rate, visit, contiguous)
            worst = max(worst, abs(m / sim[(r, s)] - 1))
            cells.append(f"{sim[(r, s)]:>7.1f}/{m:<6.1f}")
        print(f"{s:>10} " + "".join(cells))
    print(f"worst model error {100 * worst:.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
