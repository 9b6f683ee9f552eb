"""tools/bench/fidelity on four of IBM's measured rows (tests/python/data/fidelity_rows.csv,
copied from ../shared/calibration/spyre_kernels.csv): every row runs with its own core count and
LX setting, errors are computed against the measurement, and the separately compiled chain runs
one kernel per add."""

import importlib.util
import json
import math

import torch

from conftest import ROOT

spec = importlib.util.spec_from_file_location(
    "bench_fidelity", ROOT / "tools" / "bench" / "fidelity" / "bench_fidelity.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
ROWS = ROOT / "tests" / "python" / "data" / "fidelity_rows.csv"


def test_rows_run_with_their_settings_and_errors_follow_the_measurement(capsys):
    assert bench.main(["--data", str(ROWS), "--json", "--no-extras"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {r["op"]: r for r in out["rows"]}
    assert set(rows) == {"neg", "mmwd", "add3_sep", "add3"}
    for r in rows.values():
        assert r["sim_us"] > 0
        assert math.isclose(r["err_pct"], 100 * (r["sim_us"] - r["measured_us"]) / r["measured_us"])
    assert rows["mmwd"]["cores"] == "1" and rows["mmwd"]["measured_us"] == 138.094
    # One core does the whole 512^3 matmul: far slower than the same graph on 32 cores.
    wide = bench.simulate("mm_512x512_n512", ["compiler.schedule=ibm", "compiler.cores=32"])
    assert rows["mmwd"]["sim_us"] > 4 * wide["us"]
    # The separate chain: two compiled adds, each reading two inputs and writing one.
    add = bench.simulate("add_512x4096", ["compiler.schedule=ibm", "compiler.cores=32",
                                             "compiler.lx_planning=off"])
    assert math.isclose(rows["add3_sep"]["sim_us"], 2 * add["us"])
    assert rows["add3_sep"]["sim_dram_bytes"] == 2 * add["dram_bytes"]


def test_tables_name_every_op_and_the_held_out_split(capsys):
    assert bench.main(["--data", str(ROWS), "--no-extras"]) == 0
    text = capsys.readouterr().out
    for op in ("neg", "mmwd", "add3_sep", "add3"):
        assert f"| {op} |" in text
    assert "| held out |" in text and "| tuning |" in text
    assert "Streaming bandwidth per core count" in text


def test_a_missing_data_file_fails_loudly(capsys, tmp_path):
    assert bench.main(["--data", str(tmp_path / "none.csv"), "--no-extras"]) == 2
    assert "none.csv" in capsys.readouterr().err


def test_every_tpuv3_workload_has_a_graph_and_runs_on_the_tpuv3_preset():
    jobs = bench.tpuv3_jobs()
    assert len(jobs) == 11 and all(j is not None for *_, j in jobs), jobs
    by = {w: (m, j) for w, m, j in jobs}
    assert by["gemm_256x256x256"] == (3101, ("mm_256x256_n256", [], 1, "tpuv3"))
    assert by["layernorm_512x768"][1][0] == "layernorm_512x768"
    assert by["conv_64x7x7x512x512x3x1x1"][1][0] == "conv_64x7x7x512x512x3x1x1"
    case = bench.fk.case("conv_64x7x7x512x512x3x1x1")
    x, w = case.make_inputs()
    assert tuple(x.shape) == (64, 512, 7, 7) and tuple(w.shape) == (512, 512, 3, 3)
    # Channels-last, as XLA lays a TPU convolution's operands out: no layout copies.
    assert x.is_contiguous(memory_format=torch.channels_last)
    assert w.is_contiguous(memory_format=torch.channels_last)
    assert tuple(case.fn(x, w).shape) == (64, 512, 7, 7)
    r = bench.simulate("mm_256x256_n256", [], 1, "tpuv3")
    assert r["cycles"] > 256 ** 3 / (2 * 128 * 128)  # no faster than the two arrays' peak
