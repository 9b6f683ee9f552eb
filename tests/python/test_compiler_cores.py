"""`compiler.cores=N`: the work is divided over N of the chip's cores, the chip keeps all of them
(IBM's measurements of one-core and few-core kernels, ../shared/calibration/, are run this way)."""

import json

import spyre_sim
from spyre_sim._core import core

from conftest import ROOT


def test_work_on_fewer_cores_matches_eager_and_leaves_the_others_idle(model):
    m, inputs = model("mlp_block")
    few = spyre_sim.run(m, inputs, set=["compiler.cores=3"])
    assert few.outputs_match is True, str(few)
    (rep,) = few.reports
    assert rep["cores"] == 3 and rep["chip_cores"] == 32 and rep["options"]["cores"] == 3
    assert few.summary["cores"] == 32  # the chip, with its rings and DRAM, is unchanged
    for k in rep["kernels"]:
        split = k.get("split", {})
        assert split.get("cores_used", 1) <= 3, (k["name"], split)
    all_cores = spyre_sim.run(m, inputs)
    assert all_cores.reports[0]["cores"] == 32
    assert few.cycles > all_cores.cycles


def test_one_core_streams_only_on_core_zero():
    path = ROOT / "tests" / "data" / "ir" / "ops" / "add.json"
    exe = core.Executable.from_ir(path.read_text(), "spyre", ["compiler.cores=1"], str(path))
    s = json.loads(exe.run([], "", True, "")["summary"])
    per_core = s["stats"]["chip"]["cores"]
    assert len(per_core) == 32
    dma = [c["dma_in"]["instructions"] + c["dma_out"]["instructions"] for c in per_core]
    assert dma[0] > 0 and not any(dma[1:]), dma
    assert json.loads(exe.report)["cores"] == 1


def test_more_cores_than_the_chip_has_is_an_error_naming_the_option(cli):
    path = ROOT / "tests" / "data" / "ir" / "ops" / "add.json"
    for bad, expected in (("33", "expected 1 to 32"), ("0", "positive integer"),
                          ("x", "positive integer")):
        r = cli("run", path, "--timing-only", "--set", f"compiler.cores={bad}", "--out",
                ROOT / "build" / "test-compiler-cores")
        assert r.returncode == 2, r.stderr
        assert "compiler.cores" in r.stderr and expected in r.stderr, r.stderr


def test_few_long_rows_are_cut_so_that_every_core_gets_rows():
    # torch.cat([x, x]) of a [512, 512] x is Inductor's [2, 262144] node: two rows. Its rows
    # become an outer loop and its cols rows of 2048, so all 32 cores copy (before: 2 cores,
    # 44.7 us; IBM measured 15.4 us, spyre_kernels.csv cat0).
    import torch

    torch.manual_seed(0)
    x = torch.rand(512, 512, dtype=torch.float16)
    r = spyre_sim.run(lambda t: torch.cat([t, t], dim=0), (x,))
    assert r.outputs_match is True, str(r)
    (k,) = r.reports[0]["kernels"]
    assert k["split"]["cores_used"] == 32 and k["split"]["outer_loops"] == 1, k["split"]
    assert k["split"]["cols"] == 2048 and k["split"]["rows"] == 2 * 128, k["split"]
