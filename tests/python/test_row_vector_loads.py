"""A row-vector operand (one value per row, b of a + b with b: [R, 1]) is loaded once per core
for all its rows, not one DRAM word per tile (compiler/lower/loops.cpp, `batched_loads`)."""

import torch

import spyre_sim

H = torch.float16


def test_row_vector_add_matches_pytorch_across_tiles_and_cores():
    a, b = torch.rand(300, 700, dtype=H), torch.rand(300, 1, dtype=H)
    r = spyre_sim.run(lambda x, y: x + y, (a, b))
    assert r.outputs_match is True
    (k,) = r.reports[0]["kernels"]
    assert any(p["buffer"].startswith("rows_v") for p in k["lx"]["plan"]), k["lx"]["plan"]


def test_row_vector_add_streams_like_the_column_vector_add():
    # Per tile, the [R, 1] operand's word opened a row in the banks that hold it between the
    # stream's rows: 8192 x 4096 took 1.16x the cycles of the same add with b: [1, C].
    a = torch.rand(8192, 4096, dtype=H)
    rows = spyre_sim.run(lambda x, y: x + y, (a, torch.rand(8192, 1, dtype=H)), timing_only=True)
    cols = spyre_sim.run(lambda x, y: x + y, (a, torch.rand(1, 4096, dtype=H)), timing_only=True)
    assert rows.cycles < 1.03 * cols.cycles, (rows.cycles, cols.cycles)
