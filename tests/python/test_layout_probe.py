"""The device-layout probe (tools/bench/layout/layout_probe.py): the programs it generates move
what they say, and under the stick layout short stick runs stream slower than row-major until
the controller opens rows ahead, the effect its README reports."""

import importlib.util
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROBE = ROOT / "tools" / "bench" / "layout" / "layout_probe.py"
spec = importlib.util.spec_from_file_location("layout_probe", PROBE)
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)


def test_the_programs_move_every_row_once(tmp_path):
    from spyre_sim._core import core

    path = tmp_path / "copy.s"
    path.write_text(probe.program(512, 256, 4, 10, copy=True))  # 128 rows a core, a short tile
    s = json.loads(core.Executable.from_program_file(str(path), "spyre", []).run(
        [], "", True, "")["summary"])
    assert s["dram"]["read_bytes"] == 512 * 256 * 2
    assert s["dram"]["write_bytes"] == 512 * 256 * 2


def test_short_stick_runs_need_rows_opened_ahead(tmp_path):
    path = tmp_path / "read.s"
    path.write_text(probe.program(2048, 2048, 32, 8, copy=False))  # runs of 1 KiB
    before = ["dram.row_prepare=1", "dram.channel_xor=0"]  # rows opened for precharged banks
    row_major = probe.gbps(path, [*before, "dram.tensor_layout=row_major"])
    stick = probe.gbps(path, [*before, "dram.tensor_layout=stick"])
    ahead = probe.gbps(path, ["dram.tensor_layout=stick", "dram.row_prepare=2",
                              "dram.channel_xor=1"])
    assert stick < 0.6 * row_major
    assert ahead > 1.5 * stick


def test_bad_arguments_exit_with_a_message():
    r = subprocess.run([sys.executable, str(PROBE), "--cols", "100"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "--cols" in r.stderr
    r = subprocess.run([sys.executable, str(PROBE), "--tiles", "8,x"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "--tiles" in r.stderr


def _load_bytes(cli, tmp_path, layout):
    """The dma.load sizes of a one-core fp16 4096 x 2048 softmax under `layout`."""
    out = tmp_path / f"softmax_{layout}.s"
    ir = ROOT / "tests" / "data" / "ir" / "bench" / "fidelity" / "softmax_row_tiling_4096x2048.json"
    r = cli("compile", ir, "-o", out, "--set", "compiler.schedule=ibm", "--set",
            "compiler.cores=1", "--set", f"dram.tensor_layout={layout}")
    assert r.returncode == 0, r.stderr
    return {int(t.split("=")[1]) for line in out.read_text().splitlines()
            if line.strip().startswith("dma.load") for t in line.split() if t.startswith("bytes=")}


def test_stick_layout_tiles_are_a_power_of_two_of_rows(cli, tmp_path):
    # A softmax's tiles are whole rows under either layout (a pointwise kernel's are
    # stick columns under the stick layout: test_stick_tiles.py). Row-major, the loop lowering
    # takes the tallest tile that fits (19 rows of 2048 elements, 77,824 B); under the stick
    # layout each row of a tile is a 128 B piece of every stick column's run, and 16 rows (runs
    # of 2 KiB) fill the DMA's 4 KiB in flight with whole runs where 19 leave part of it idle.
    row_major, stick = _load_bytes(cli, tmp_path, "row_major"), _load_bytes(cli, tmp_path, "stick")
    assert 19 * 4096 in row_major and 16 * 4096 not in row_major, sorted(row_major)
    assert 16 * 4096 in stick and 19 * 4096 not in stick, sorted(stick)
