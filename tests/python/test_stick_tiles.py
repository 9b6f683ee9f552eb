"""Under Spyre's device layout (dram.tensor_layout=stick) a pointwise loop kernel's tiles are a
range of stick columns of many rows (compiler/README.md, "Loop kernels"): the outputs still match
eager PyTorch, and the tiles have the shape the rule says."""

import pytest
import torch

import spyre_sim

STICK = ["dram.tensor_layout=stick", "dram.row_prepare=2", "dram.channel_xor=1"]


def _kernels(r):
    return r.reports[0]["kernels"]


CASES = {
    # two full operands; the chunks' DRAM offsets of both loads and the store
    "add": (lambda x, y: x + y, lambda: (torch.rand(256, 1024), torch.rand(256, 1024))),
    # a hoisted [1, C] operand: each chunk reads its own columns of it
    "row_bcast": (lambda x, b: x * b - 1.0,
                  lambda: (torch.rand(512, 768, dtype=torch.float16),
                           torch.rand(1, 768, dtype=torch.float16))),
    # a [R, 1] operand: the same value for every chunk of a row
    "col_bcast": (lambda x, c: x + c,
                  lambda: (torch.rand(384, 512, dtype=torch.float16),
                           torch.rand(384, 1, dtype=torch.float16))),
    # fp16 in, fp32 out: a stick is 64 columns of one and 32 of the other
    "convert": (lambda x: x.float() * 3.0, lambda: (torch.rand(128, 640, dtype=torch.float16),)),
    # columns that end in a part chunk, rows that do not divide among the cores
    "ragged": (lambda x: torch.relu(x - 0.5),
               lambda: (torch.rand(100, 1600, dtype=torch.float16),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_column_tiles_match_eager(name):
    fn, make = CASES[name]
    torch.manual_seed(0)
    inputs = make()
    r = spyre_sim.run(fn, inputs, set=STICK)
    assert r.outputs_match is True, str(r)
    tiled = [k for k in _kernels(r) if k.get("unit") == "sfp"]
    assert tiled, _kernels(r)
    assert all(k["tiles"]["cols"] < k["split"]["cols"] for k in tiled), [k["tiles"] for k in tiled]
    row_major = spyre_sim.run(fn, inputs, set=["dram.tensor_layout=row_major"])
    assert all(k["tiles"]["cols"] == k["split"]["cols"]
               for k in _kernels(row_major) if k.get("unit") == "sfp")


def test_a_tile_is_all_of_a_cores_rows_and_one_burst_of_sticks():
    # fp16 [4096, 1024] on 32 cores: 128 rows a core, so one stick column (128 x 128 B = 16 KiB)
    # already moves a 4 KiB burst; [64, 16384]: 2 rows a core, 16 sticks (2 x 16 x 128 B).
    for rows, cols, tile_rows, tile_cols in ((4096, 1024, 128, 64), (64, 16384, 2, 16 * 64)):
        x = torch.rand(rows, cols, dtype=torch.float16)
        r = spyre_sim.run(lambda t: -t, (x,), set=STICK, timing_only=True)
        (k,) = _kernels(r)
        assert (k["tiles"]["rows"], k["tiles"]["cols"]) == (tile_rows, tile_cols), k["tiles"]
        assert k["split"]["cores_used"] == 32


def test_a_reduction_keeps_tiles_of_whole_rows():
    x = torch.rand(512, 1024, dtype=torch.float16)
    r = spyre_sim.run(lambda t: torch.softmax(t, dim=-1), (x,), set=STICK)
    assert r.outputs_match is True, str(r)
    for k in _kernels(r):
        if k.get("unit") == "sfp":
            assert k["tiles"]["cols"] == k["split"]["cols"], k["tiles"]


def test_a_reductions_tile_is_all_of_a_corelets_rows_under_the_layout():
    # A row sum of fp16 [256, 4096] on 32 cores: 4 rows a corelet. Row-major two tiles of 2
    # pipeline; under the layout a tile's rows are each stick column's run, so one tile of 4.
    x = torch.rand(256, 4096, dtype=torch.float16)
    for sets, rows in ((["dram.tensor_layout=row_major"], 2), (STICK, 4)):
        r = spyre_sim.run(lambda t: t.sum(-1), (x,), set=sets, timing_only=True)
        (k,) = _kernels(r)
        assert k["tiles"]["rows"] == rows and k["split"]["rows_per_corelet"] == 4, k
