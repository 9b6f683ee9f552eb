"""Streaming in Spyre's device layout: the DRAM bandwidth of tiles of whole rows, row-major and
stick (dram.tensor_layout, sim/README.md "Device layout").

    .venv/bin/python tools/bench/layout/layout_probe.py [--rows 16384] [--cols 2048]
        [--cores 32] [--tiles 8,19,64] [--copy] [--set K=V ...]

Each of `cores` cores moves its share of the rows of an fp16 [rows, cols] tensor (declared as a
program tensor, so the stick layout applies to it) in tiles of t whole rows: one dma.load per
tile (and with --copy a dma.store of it into a second tensor), timing-only on "spyre". For
every tile height it prints the achieved GB/s (bytes moved over device time) row-major and in
the stick layout, under the settings the fidelity README compares: rows activated only in
precharged banks (dram.row_prepare=1, channel_xor=0), rows also reopened ahead
(dram.row_prepare=2), and that with channel hashing (dram.channel_xor=1). --set adds a parameter to
every run. The programs are generated here (a few thousand instructions each), so the probe
depends on nothing but the simulator.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[3]

SETTINGS = {  # "spyre"'s defaults are the first
    "row_prepare=1": ["dram.row_prepare=1", "dram.channel_xor=0"],
    "row_prepare=2": ["dram.row_prepare=2", "dram.channel_xor=0"],
    "row_prepare=2 + channel_xor": ["dram.row_prepare=2", "dram.channel_xor=1"],
}


def program(rows: int, cols: int, cores: int, tile: int, copy: bool) -> str:
    """Assembly: core k moves rows [k * rows / cores, (k + 1) * rows / cores) in tiles."""
    row = cols * 2
    nbytes = rows * row
    out = [".spyre 1", ".cores 32", f".dram_bytes {2 * nbytes}",
           f".tensor x input f16 size={rows},{cols} stride={cols},1 addr=0 bytes={nbytes}",
           f".tensor y output f16 size={rows},{cols} stride={cols},1 addr={nbytes} "
           f"bytes={nbytes}"]
    per = rows // cores
    for k in range(cores):
        out.append(f".core {k}")
        i = j = 0
        while i < per:
            n = min(tile, per - i)
            addr = (k * per + i) * row
            lx = (j % 2) * tile * row
            out.append(f"  dma.load dram={addr} lx={lx} bytes={n * row}")
            if copy:
                out.append(f"  sync.sig q=dma_in tok={j % 8}")
                out.append(f"  sync.wait q=dma_out tok={j % 8}")
                out.append(f"  dma.store lx={lx} dram={nbytes + addr} bytes={n * row}")
            i += n
            j += 1
        out.append("  halt")
    return "\n".join(out) + "\n"


def gbps(path: pathlib.Path, sets: list[str]) -> float:
    from spyre_sim._core import core

    exe = core.Executable.from_program_file(str(path), "spyre", sets)
    s = json.loads(exe.run([], "", True, "")["summary"])
    moved = s["dram"]["read_bytes"] + s["dram"]["write_bytes"]
    return moved / (s["cycles"] / s["clock_ghz"])  # bytes per ns = GB/s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=16384)
    ap.add_argument("--cols", type=int, default=2048)
    ap.add_argument("--cores", type=int, default=32)
    ap.add_argument("--tiles", default="8,19,64", help="tile heights in rows, comma-separated")
    ap.add_argument("--copy", action="store_true", help="store each tile into a second tensor")
    ap.add_argument("--set", action="append", default=[], metavar="K=V")
    a = ap.parse_args()
    try:
        tiles = [int(t) for t in a.tiles.split(",")]
    except ValueError:
        ap.error(f"--tiles: expected comma-separated row counts, got {a.tiles!r}")
    if a.cores < 1 or a.cores > 32 or a.rows % a.cores != 0 or min(tiles) < 1:
        ap.error("--cores must be 1-32 and divide --rows; tiles must be positive")
    if (a.cols * 2) % 128 != 0:
        ap.error("--cols: a row must be whole sticks (a multiple of 64 fp16 values)")
    what = "copy" if a.copy else "read"
    print(f"{what}: fp16 [{a.rows}, {a.cols}] on {a.cores} cores, GB/s (row-major / stick)")
    print("| settings | " + " | ".join(f"t = {t}" for t in tiles) + " |")
    print("|---|" + "---:|" * len(tiles))
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for t in tiles:
            paths[t] = pathlib.Path(tmp) / f"probe_{t}.s"
            paths[t].write_text(program(a.rows, a.cols, a.cores, t, a.copy))
        for name, sets in SETTINGS.items():
            cells = []
            for t in tiles:
                rm = gbps(paths[t], [*sets, *a.set, "dram.tensor_layout=row_major"])
                st = gbps(paths[t], [*sets, *a.set, "dram.tensor_layout=stick"])
                cells.append(f"{rm:.1f} / {st:.1f}")
            print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
