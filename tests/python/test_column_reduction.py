"""Column reductions (compiler/include/spyre/compiler/column_reduction.h): a reduction over the
strided dimension becomes levels of element-wise row adds over whole rows (else, when the rows
do not divide, reads a transposed copy row by row), matches eager PyTorch, and moves the input
at DRAM-friendly run lengths."""

import pytest
import torch

import spyre_sim


@pytest.mark.parametrize("op", ["sum", "amax", "amin"])
def test_column_reduction_matches_eager_through_row_adds(op):
    torch.manual_seed(0)
    x = (torch.randn(256, 96) * 0.1).to(torch.float16)
    r = spyre_sim.run(lambda t: getattr(t, op)(dim=0), (x,))
    assert r.outputs_match is True, str(r)
    (rep,) = r.reports
    (cr,) = rep["column_reductions"]
    assert cr["method"] == "row_adds", cr
    # 256 rows: 2 per partial first (every worker gets rows of partials), then 16 and 8.
    assert len(cr["levels"]) == len(cr["partials"]) == 2, cr
    names = [k["name"] for k in rep["kernels"]]
    assert len(names) == 3 and all(any(lv in n for n in names) for lv in cr["levels"]), names
    # The first partials: [128, 96], fp32 for a sum, the input's fp16 for max and min.
    placed = {b["buffer"]: b["bytes"] for b in rep["dram_plan"]}
    assert placed[cr["partials"][0]] == 128 * 96 * (4 if op == "sum" else 2), placed


def test_rows_that_do_not_divide_go_through_a_transposed_copy():
    torch.manual_seed(0)
    x = (torch.randn(67, 96) * 0.1).to(torch.float16)  # 67 is prime: no level divides it
    r = spyre_sim.run(lambda t: t.sum(dim=0), (x,))
    assert r.outputs_match is True, str(r)
    (rep,) = r.reports
    (cr,) = rep["column_reductions"]
    assert "method" not in cr and cr["copy_node"], cr
    (copy,) = [k for k in rep["kernels"] if cr["copy_node"] in k["nodes"]]
    assert "layout_copy" in copy  # the copy is a layout copy (lowered as the cost model picks)


def test_a_row_reduction_is_left_alone():
    x = torch.randn(256, 96, dtype=torch.float16)
    r = spyre_sim.run(lambda t: t.sum(dim=-1), (x,))
    assert r.outputs_match is True and r.reports[0]["column_reductions"] == []


def test_a_narrowing_conversion_or_a_narrow_row_goes_through_the_transposed_copy():
    torch.manual_seed(0)
    x = (torch.rand(256, 96) + 0.2).to(torch.float16)
    # eager truncates every element before the sum: adding rows first would not
    r = spyre_sim.run(lambda t: t.sum(dim=0, dtype=torch.int32), (x,))
    assert r.outputs_match is True, str(r)
    methods = [cr.get("method", "transpose") for cr in r.reports[0]["column_reductions"]]
    assert "row_adds" not in methods, methods
    # 8 fp16 values a row (16 bytes) are shorter than a DRAM word
    narrow = spyre_sim.run(lambda t: t.sum(dim=0), ((torch.randn(4096, 8) * 0.1).half(),))
    assert narrow.outputs_match is True, str(narrow)
    (cr,) = narrow.reports[0]["column_reductions"]
    assert "method" not in cr and cr["copy_node"], cr


def test_row_adds_under_ibms_schedule_keep_their_partials_fp32():
    torch.manual_seed(0)
    x = (torch.randn(2048, 128) * 0.1).to(torch.float16)
    r = spyre_sim.run(lambda t: t.sum(dim=0), (x,), set=["compiler.schedule=ibm"])
    assert r.outputs_match is True, str(r)
    (rep,) = r.reports
    (cr,) = rep["column_reductions"]
    assert cr["method"] == "row_adds" and cr["partials"], cr
    assert not set(cr["partials"]) & set(rep["device_dtype_intermediates"]), rep


def test_the_column_sum_of_ibms_kernel_database_streams_its_input_once():
    from spyre_sim._core import core
    import json
    from conftest import ROOT

    path = ROOT / "tests" / "data" / "ir" / "bench" / "fidelity" / "ctsum_2048x512.json"
    exe = core.Executable.from_ir(path.read_text(), "spyre", [], str(path))
    s = json.loads(exe.run([], "", True, "")["summary"])
    # Before: 184 us at 11 GB/s (16-byte DMA runs); through a transposed copy 60 us, the input
    # read twice. Row adds read it once, and partials of a quarter of its size.
    assert s["device_time_us"] < 40, s["device_time_us"]
    source = 2048 * 512 * 2
    assert source <= s["dram"]["read_bytes"] < 1.5 * source, s["dram"]


@pytest.mark.parametrize("fn", [
    lambda t: torch.var_mean(t, dim=(0, 2)),
    lambda t: torch.nn.functional.batch_norm(t, None, None, training=True),
    lambda t: t.amax(dim=(0, 2)),
], ids=["var_mean", "batch_norm_training", "amax"])
def test_a_reduction_over_dimensions_that_do_not_merge_matches_eager(fn):
    # N and L of [N, C, L] around the kept C: the reduction variables merge into one whose
    # loads take their index computed on the SFP (merge_reduce_vars, tile_program_builder.h).
    x = torch.randn(3, 5, 7, generator=torch.Generator().manual_seed(0)).to(torch.float16)
    r = spyre_sim.run(fn, (x,), arch="tiny", cache=False)
    assert r.outputs_match is True, str(r)
