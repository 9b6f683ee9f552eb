"""The "scalesim" presets against the real SCALE-Sim v3 (PyPI `scalesim`, pinned in
requirements.txt), run offline on small GEMMs for each dataflow.

SCALE-Sim is driven as a library (scalesim.scale_sim.scalesim) with a config and a GEMM
topology written into tmp_path, bandwidth mode CALC (ideal memory: no stalls, which the test
checks), and its "Total Cycles" read from COMPUTE_REPORT.csv. That figure is the 0-based index
of the last compute cycle (double_buffered_scratchpad_mem.py: total_cycles = max of the cycle
each demand row is served, row i at cycle i), so our simulator's PT busy cycles for the same
pt.mm are SCALE-Sim's Total Cycles + 1; the presets set issue_cycles 0, so the run's total
cycles are the same number.

numpy >= 2.4 refuses int() of a 1-element array, which scalesim 3.0.0 does once
(int(max(ofmap_serviced_cycles))); `_numpy2_shim` makes that module's max() return the scalar,
which is what numpy 1.x's int() did. Nothing else of SCALE-Sim is touched.

If scalesim cannot be imported or run, the test fails with the reason: it never skips.
"""
import builtins
import csv
import io
import json
import contextlib
import math

import pytest

SHAPES = [(8, 8, 8), (16, 16, 16), (5, 7, 3), (20, 9, 13), (33, 17, 40), (64, 10, 24)]
DATAFLOWS = ["os", "ws", "is"]
ARRAYS = [("scalesim", 8), ("scalesim32", 32)]

CONFIG = """[general]
run_name = spyre_check

[architecture_presets]
ArrayHeight: {rows}
ArrayWidth: {cols}
IfmapSramSzkB: 10240
FilterSramSzkB: 10240
OfmapSramSzkB: 10240
IfmapOffset: 0
FilterOffset: 10000000
OfmapOffset: 20000000
Dataflow: {df}
Bandwidth: 10
ReadRequestBuffer: 32
WriteRequestBuffer: 32

[layout]
IfmapCustomLayout: False
IfmapSRAMBankBandwidth: 10
IfmapSRAMBankNum: 10
IfmapSRAMBankPort: 2
FilterCustomLayout: False
FilterSRAMBankBandwidth: 10
FilterSRAMBankNum: 10
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport: false
SparseRep: ellpack_block
OptimizedMapping: false
BlockSize: 8
RandomNumberGeneratorSeed: 40

[run_presets]
InterfaceBandwidth: CALC
UseRamulatorTrace: False
"""


def _numpy2_shim():
    import numpy as np
    import scalesim.memory.double_buffered_scratchpad_mem as dbm

    def scalar_max(*args, **kwargs):
        v = builtins.max(*args, **kwargs)
        return v.item() if isinstance(v, np.ndarray) and v.size == 1 else v

    dbm.max = scalar_max


def scalesim_total_cycles(tmp_path, rows, cols, df, m, n, k):
    """SCALE-Sim's (Total Cycles, Stall Cycles) for one GEMM layer M x N x K."""
    try:
        from scalesim.scale_sim import scalesim
    except Exception as e:  # noqa: BLE001 - the reason is the message
        pytest.fail(f"the scalesim package (requirements.txt) cannot be imported: {e!r}")
    _numpy2_shim()
    d = tmp_path / f"ss_{rows}_{df}_{m}_{n}_{k}"
    d.mkdir()
    (d / "arch.cfg").write_text(CONFIG.format(rows=rows, cols=cols, df=df))
    # GEMM topology: name, M, N, K, (trailing comma: scalesim drops the last field).
    (d / "gemm.csv").write_text(f"Layer, M, N, K,\nmm, {m}, {n}, {k},\n")
    (d / "layout.csv").write_text("Layer,\n")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            s = scalesim(save_disk_space=True, verbose=False, config=str(d / "arch.cfg"),
                         topology=str(d / "gemm.csv"), layout=str(d / "layout.csv"),
                         input_type_gemm=True)
            s.run_scale(top_path=str(d))
    except SystemExit as e:
        pytest.fail(f"scalesim exited ({e}) for {df} {rows}x{cols} M={m} N={n} K={k}")
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"scalesim failed for {df} {rows}x{cols} M={m} N={n} K={k}: {e!r}")
    report = d / "spyre_check" / "COMPUTE_REPORT.csv"
    with open(report) as f:
        row = next(csv.DictReader(f, skipinitialspace=True))
    return int(row["Total Cycles"]), int(row["Stall Cycles"])


def ours(tmp_path, preset, df, m, n, k):
    """Our simulator's (PT busy cycles, run cycles) for one f16 pt.mm and a halt."""
    import spyre_sim_core

    b, c = m * k * 2, m * k * 2 + k * n * 2
    prog = tmp_path / f"mm_{preset}_{df}_{m}_{n}_{k}.s"
    prog.write_text(
        ".spyre 1\n.cores 1\n.dram_bytes 4096\n.core 0\n"
        f"  pt.mm cl=0 a=0 b={b} c={c} m={m} n={n} k={k} lda={k} ldb={n} ldc={n} dt=f16\n"
        "  halt\n")
    exe = spyre_sim_core.Executable.from_program_file(str(prog), preset, [f"pt.dataflow={df}"])
    summary = json.loads(exe.run([], "", True)["summary"])
    busy = summary["stats"]["chip"]["cores"][0]["pt0"]["busy_cycles"]
    return busy, summary["cycles"]


def closed_form(df, r, c, m, n, k):
    """SCALE-Sim v3's closed forms (issue 3)."""
    cd = lambda a, b: -(-a // b)  # noqa: E731
    if df == "os":
        return cd(m, r) * cd(n, c) * (k + r + c - 2) - 1
    if df == "ws":
        return cd(k, r) * cd(n, c) * (m + 2 * r + c - 2) - 1
    return cd(k, r) * cd(m, c) * (n + 2 * r + c - 2) - 1


@pytest.mark.parametrize("preset,size", ARRAYS)
@pytest.mark.parametrize("df", DATAFLOWS)
def test_scalesim_preset_matches_real_scalesim(tmp_path, preset, size, df):
    rows = []
    for m, n, k in SHAPES:
        theirs, stalls = scalesim_total_cycles(tmp_path, size, size, df, m, n, k)
        busy, cycles = ours(tmp_path, preset, df, m, n, k)
        rows.append((m, n, k, theirs, busy - 1, closed_form(df, size, size, m, n, k)))
        assert stalls == 0, f"SCALE-Sim stalled {stalls} cycles: memory is not ideal"
        assert cycles == busy, "the scalesim preset must add no issue overhead"
    table = "\n".join(f"  {df} {size}x{size} M={m} N={n} K={k}: scalesim {t}, ours {o}, closed {c}"
                      for m, n, k, t, o, c in rows)
    print("\n" + table)
    for m, n, k, theirs, ours_cycles, closed in rows:
        assert ours_cycles == theirs, table
        assert closed == theirs, table
