"""The whole-graph LX plan (compiler/plan/lx_residency.cpp) end to end: buffers kept in LX
between kernels and the barriers dropped change no output bit, never cost cycles or DRAM bytes,
replay clean against the trace, and are reported."""

import json
import pathlib

import pytest

from spyre_sim._core import core

ROOT = pathlib.Path(__file__).resolve().parents[2]
IR = ROOT / "tests" / "data" / "ir"
MODELS = ["models/bert", "models/gpt2", "models/llama", "models/resnet_block", "mlp_block"]


def _run(path, arch, sets, timing_only=False):
    exe = core.Executable.from_ir(path.read_text(), arch, list(sets), str(path))
    out = exe.run([], "", timing_only, "")
    return json.loads(out["summary"]), out["outputs"], json.loads(exe.report)


@pytest.mark.parametrize("model", MODELS)
def test_the_plan_changes_no_output_and_costs_nothing(model):
    """The plan with every kernel's own work division (compiler.joint_division=off)."""
    path = IR / f"{model}.json"
    on_s, on_out, rep = _run(path, "tiny", ["compiler.lx_planning=on",
                                            "compiler.joint_division=off"])
    off_s, off_out, off_rep = _run(path, "tiny", ["compiler.lx_planning=off"])
    assert on_out == off_out  # bit for bit: the same values, a different schedule
    assert on_s["cycles"] <= off_s["cycles"]
    dram = lambda s: s["dram"]["read_bytes"] + s["dram"]["write_bytes"]  # noqa: E731
    assert dram(on_s) <= dram(off_s)
    plan = rep["lx_residency"]
    assert plan["enabled"] is True and off_rep["lx_residency"]["enabled"] is False
    assert off_rep["lx_residency"]["barriers_dropped"] == 0
    assert plan["barriers_kept"] + plan["barriers_dropped"] == len(rep["kernels"]) - 1
    for b in plan["buffers"]:
        assert b["readers"] and b["bytes_per_core"] > 0
        assert b["lx"] + b["bytes_per_core"] <= rep["lx_plan"]["usable_bytes"]


def _arrays(path, outs):
    import numpy as np

    ir = json.loads(path.read_text())
    return [np.frombuffer(b, dtype=np.dtype(o["dtype"])).astype(np.float64)
            for o, b in zip(ir["outputs"], outs)]


@pytest.mark.parametrize("model", MODELS)
def test_the_joint_division_changes_outputs_only_where_a_matmul_sums_otherwise(model):
    """Work division chosen with the plan (the default) against the plan alone: the same bits,
    unless a matmul took its producer's rows; then its split (a K split with a ring reduction
    before, whole K now) adds its fp32 products in another order, and the outputs agree to the
    outputs' precision. Never more cycles."""
    path = IR / f"{model}.json"
    joint_s, joint_out, rep = _run(path, "tiny", [])
    alone_s, alone_out, _ = _run(path, "tiny", ["compiler.joint_division=off"])
    assert rep["options"]["joint_division"] is True
    assert joint_s["cycles"] <= alone_s["cycles"]
    _assert_same_or_close(path, rep, joint_out, alone_out)


def _assert_same_or_close(path, rep, outs, ref):
    """The same bits, unless a matmul of `rep` took its producer's rows or was lowered again
    with whole rows for its reader (its fp32 sums may then run in another order): then equal to
    the outputs' precision."""
    import numpy as np

    units = {k["name"]: k["unit"] for k in rep["kernels"]}
    taken = [d for d in rep["lx_residency"]["rows_from_producers"] if d["taken"]]
    if not [d for d in taken if units[d["kernel"]] == "pt" or "producer_whole_rows_cycles" in d]:
        assert outs == ref
        return
    for a, b in zip(_arrays(path, outs), _arrays(path, ref)):
        scale = np.abs(b).max()
        assert np.abs(a - b).max() <= 1e-2 * scale, (np.abs(a - b).max(), scale)


def test_zoo_models_keep_buffers_in_lx_and_drop_barriers():
    _, _, rep = _run(IR / "models" / "gpt2.json", "spyre", [], timing_only=True)
    plan = rep["lx_residency"]
    assert plan["buffers"] and plan["barriers_dropped"] > 0
    resident = [b for b in rep["lx_plan"]["buffers"] if b.get("resident")]
    assert len(resident) == len(plan["buffers"])
    for b in resident:  # live from the producer's first instruction to the last reader's last
        assert b["live"] and all(lo < hi for _, lo, hi in b["live"])
    reserved = {r["what"]: r for r in rep["lx_plan"]["reserved"]}
    assert reserved["runtime"]["offset"] + reserved["runtime"]["bytes"] == 2 << 20


def test_a_larger_lx_never_moves_more_dram_bytes():
    bytes_ = []
    for lx in (1 << 20, 2 << 20, 4 << 20):
        s, _, _ = _run(IR / "models" / "gpt2.json", "spyre", [f"lx.size_bytes={lx}"],
                       timing_only=True)
        bytes_.append(s["dram"]["read_bytes"] + s["dram"]["write_bytes"])
    assert bytes_[0] >= bytes_[1] >= bytes_[2], bytes_


def test_the_trace_replays_clean_against_the_plan(cli, tmp_path):
    out = tmp_path / "o"
    r = cli("run", IR / "mlp_block.json", "--arch", "tiny", "--set", "compiler.fusion=off",
            "--out", out, "--trace", out / "trace.json", "--trace-detail", "full")
    assert r.returncode == 0, r.stderr
    rep = json.loads((out / "report.json").read_text())
    assert rep["lx_residency"]["buffers"], "mlp_block unfused keeps LayerNorm's statistics in LX"
    r = cli("trace", "validate", out / "trace.json", "--report", out / "report.json",
            "--skip-fusion")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "clean" in r.stdout
    # The planted defect is still caught with resident buffers in the plan.
    r = cli("run", IR / "mlp_block.json", "--arch", "tiny", "--set", "compiler.fusion=off",
            "--set", "compiler.debug.lx_plan_error=shift", "--out", tmp_path / "bad", "--trace",
            tmp_path / "bad" / "trace.json", "--trace-detail", "full")
    r = cli("trace", "validate", tmp_path / "bad" / "trace.json", "--report",
            tmp_path / "bad" / "report.json", "--skip-fusion")
    assert r.returncode == 1, (r.stdout, r.stderr)


def test_an_input_read_by_several_kernels_is_loaded_once():
    """A buffer no kernel writes (here the softmax's input under IBM's schedule, read by the
    max step and the subtract step) is loaded once into an LX slot by its first reader and
    taken from there by the next, where the slot fits; results stay eager PyTorch's."""
    import torch

    import spyre_sim

    torch.manual_seed(0)
    x = torch.randn(2048, 512, dtype=torch.float16)
    step = x.numel() * 2

    def softmax(cores):
        return spyre_sim.run(lambda t: torch.softmax(t, -1), (x,), arch="spyre",
                             set=["compiler.schedule=ibm", f"compiler.cores={cores}"])

    r = softmax(16)  # 64 KiB of x per core: the slot fits
    assert r.outputs_match is True, str(r)
    (rep,) = r.reports
    loaded = [b for b in rep["lx_residency"]["buffers"] if b["loaded"]]
    assert len(loaded) == 1 and loaded[0]["readers"], loaded
    assert not loaded[0]["dram"]  # nothing to store: it is already in DRAM
    roles = {k["name"]: [s["role"] for s in k.get("lx_resident", [])
                         if s["buffer"] == loaded[0]["buffer"]] for k in rep["kernels"]}
    assert roles[loaded[0]["producer"]] == ["loads"]
    assert all(roles[name] == ["reads"] for name in loaded[0]["readers"])
    assert r.summary["dram"]["read_bytes"] == step  # x once; every step in LX
    off = spyre_sim.run(lambda t: torch.softmax(t, -1), (x,), arch="spyre",
                        set=["compiler.schedule=ibm", "compiler.cores=16",
                             "compiler.lx_planning=off"])
    assert off.summary["dram"]["read_bytes"] > 2 * step
    one = softmax(1)  # all 2 MiB of x on one core: no room, so the subtract step reads it again
    assert one.outputs_match is True
    assert not [b for b in one.reports[0]["lx_residency"]["buffers"] if b["loaded"]]
    assert one.summary["dram"]["read_bytes"] >= 2 * step


def test_a_kernel_with_outer_loops_keeps_its_value_in_lx():
    """A causal softmax over [8, 128, 128]: the mask depends on the row within each head, so the
    kernel computing the masked exponentials loops over the heads outside its tiles. Its rows
    flattened over the heads are still the rows its reader divides alike, so the exponentials
    stay in LX; results stay eager PyTorch's."""
    import torch

    import spyre_sim

    torch.manual_seed(0)
    x = torch.randn(8, 128, 128, dtype=torch.float32)

    def causal_softmax(t):
        i = torch.arange(128)
        return torch.softmax(t.masked_fill(i[:, None] < i[None, :], float("-inf")), -1)

    def run(planning):
        return spyre_sim.run(causal_softmax, (x,), arch="spyre",
                             set=[f"compiler.lx_planning={planning}"])

    on, off = run("on"), run("off")
    assert on.outputs_match is True and off.outputs_match is True, (str(on), str(off))
    (rep,) = on.reports
    outer = [k for k in rep["kernels"] if k["split"].get("outer_loops", 0) > 0]
    assert outer, [k["split"] for k in rep["kernels"]]
    kept = {b["buffer"]: b for b in rep["lx_residency"]["buffers"]}
    written = [s["buffer"] for k in outer for s in k.get("lx_resident", [])
               if s["role"] == "writes"]
    assert written and all(w in kept and kept[w]["readers"] for w in written), rep["lx_residency"]
    step = x.numel() * 4
    assert on.summary["dram"]["read_bytes"] == step  # x once, the exponentials stay in LX
    assert off.summary["dram"]["read_bytes"] >= 2 * step
    assert on.summary["cycles"] < off.summary["cycles"]


@pytest.mark.parametrize("model", ["models/bert", "models/gpt2", "models/llama"])
def test_attention_keeps_its_scores_and_probabilities_in_lx(model):
    """On "spyre" the attention's kernels divide their rows with each other (work division
    chosen with the plan): the score bmm writes its output into an LX slot that the softmax
    reads, and the probabilities go from the softmax's slot into the second bmm as its A. Plan
    off: everything through DRAM. Outputs agree, in fewer cycles."""
    path = IR / f"{model}.json"
    on_s, on_out, rep = _run(path, "spyre", [])
    off_s, off_out, _ = _run(path, "spyre", ["compiler.lx_planning=off"])
    _assert_same_or_close(path, rep, on_out, off_out)
    assert on_s["cycles"] < off_s["cycles"]
    kernels = {k["name"]: k for k in rep["kernels"]}
    assert [d for d in rep["lx_residency"]["rows_from_producers"] if d["taken"]]
    kept = rep["lx_residency"]["buffers"]
    mm_out = [b for b in kept if kernels[b["producer"]]["unit"] == "pt"]
    mm_in = [b for b in kept if any(kernels[r]["unit"] == "pt" for r in b["readers"])]
    assert mm_out and mm_in, kept
    for b in mm_out:
        assert all(kernels[r]["unit"] == "sfp" for r in b["readers"])
        assert {"buffer": b["buffer"], "lx": b["lx"], "role": "writes", "dram": b["dram"]} in \
            kernels[b["producer"]]["lx_resident"]
    for b in mm_in:
        for r in b["readers"]:
            if kernels[r]["unit"] == "pt":
                assert {"buffer": b["buffer"], "lx": b["lx"], "role": "reads", "dram": False} \
                    in kernels[r]["lx_resident"]
