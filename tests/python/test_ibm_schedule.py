"""`compiler.schedule=ibm` (compiler/include/spyre/compiler/ibm_schedule.h): Inductor's kernels
unfused and every op of a pointwise kernel a step through memory, kept in LX by the LX plan
when it is on. Results stay those of eager PyTorch; the steps show in the report and in the
DRAM bytes."""

import pytest
import torch

import spyre_sim

H = torch.float16


def _chain(a, b, c, d):
    return ((a + b) * c) - d


def _inputs():
    torch.manual_seed(0)
    return tuple(torch.rand(512, 1024, dtype=H) for _ in range(4))


def _dram(r):
    return r.summary["dram"]["read_bytes"] + r.summary["dram"]["write_bytes"]


def test_every_op_is_a_step_through_dram_without_lx_planning():
    own = spyre_sim.run(_chain, _inputs())
    ibm = spyre_sim.run(_chain, _inputs(), set=["compiler.schedule=ibm",
                                                "compiler.lx_planning=off"])
    assert own.outputs_match is True and ibm.outputs_match is True, str(ibm)
    (rep,) = ibm.reports
    (split,) = rep["op_steps"]
    assert len(split["nodes"]) == 3 and len(split["buffers"]) == 2
    assert len(rep["kernels"]) == 3 and rep["fusion_enabled"] is False
    assert rep["options"]["schedule"] == "ibm"
    step = 512 * 1024 * 2  # one fp16 tensor
    # own: 4 inputs in, 1 out; ibm: each intermediate written once and read once more
    assert _dram(own) == 5 * step
    assert _dram(ibm) == 5 * step + 2 * 2 * step
    assert ibm.cycles > own.cycles


def test_lx_planning_keeps_the_steps_in_lx():
    off = spyre_sim.run(_chain, _inputs(), set=["compiler.schedule=ibm",
                                                "compiler.lx_planning=off"])
    on = spyre_sim.run(_chain, _inputs(), set=["compiler.schedule=ibm",
                                               "compiler.lx_planning=on"])
    assert on.outputs_match is True
    resident = {b["buffer"] for b in on.reports[0]["lx_residency"]["buffers"]}
    assert resident == set(on.reports[0]["op_steps"][0]["buffers"])
    assert _dram(on) < _dram(off) and on.cycles < off.cycles


def test_softmax_under_ibm_schedule_matches_eager():
    torch.manual_seed(0)
    x = torch.randn(256, 512, dtype=H)
    r = spyre_sim.run(lambda t: torch.softmax(t, -1), (x,), set=["compiler.schedule=ibm"])
    assert r.outputs_match is True, str(r)
    (rep,) = r.reports
    (split,) = rep["op_steps"]  # Inductor's sub/exp kernel, split into its two steps
    # Every step divides its rows as the kernel it came from, so with LX planning on (the
    # default) the step's result stays in LX between them.
    divisions = {k["name"]: (k["split"]["rows"], k["split"]["cols"]) for k in rep["kernels"]}
    assert len(set(divisions.values())) == 1, divisions
    resident = {b["buffer"] for b in rep["lx_residency"]["buffers"]}
    assert set(split["buffers"]) <= resident


def test_a_16_bit_graphs_intermediates_are_stored_16_bit():
    # Inductor computes an fp16 softmax in fp32; IBM's back end keeps the tensors between its
    # steps fp16 (its DRAM byte count of a softmax R x C is 16 R C: five steps over 2-byte
    # elements, spyre_kernels.csv), where fp32 intermediates would move 26 R C.
    torch.manual_seed(0)
    R, C = 256, 512
    x = torch.randn(R, C, dtype=H)
    r = spyre_sim.run(lambda t: torch.softmax(t, -1), (x,),
                      set=["compiler.schedule=ibm", "compiler.lx_planning=off"])
    assert r.outputs_match is True, str(r)
    (rep,) = r.reports
    # buf2, the row sum, is an accumulation: it stays fp32
    assert set(rep["device_dtype_intermediates"]) == {"buf0", "buf1", "op1_step0"}
    # the row max (fp16) and the row sum (fp32), each written once and read once
    assert _dram(r) == 16 * R * C + 2 * R * 2 + 2 * R * 4
    own = spyre_sim.run(lambda t: torch.softmax(t, -1), (x,))
    assert own.reports[0]["device_dtype_intermediates"] == []


def test_an_fp32_graph_keeps_its_fp32_intermediates():
    x = torch.randn(64, 128)
    r = spyre_sim.run(lambda t: torch.softmax(t, -1), (x,), set=["compiler.schedule=ibm"])
    assert r.outputs_match is True and r.reports[0]["device_dtype_intermediates"] == []


def test_an_unknown_schedule_is_an_error_naming_the_option(cli):
    from conftest import ROOT

    r = cli("run", ROOT / "tests" / "data" / "ir" / "ops" / "add.json", "--timing-only",
            "--set", "compiler.schedule=fast", "--out", ROOT / "build" / "test-ibm-schedule")
    assert r.returncode == 2
    assert "compiler.schedule" in r.stderr and "own or ibm" in r.stderr, r.stderr


def test_each_kernel_starts_after_the_runtime_start_up():
    """IBM's runtime launches every kernel as a job (compiler.ibm.kernel_start_ns): a
    sync.delay heads every core's stream under IBM's schedule and nowhere in this compiler's
    own; the device time grows by it, the kernel starts after it and its span leaves it out."""
    # 4 MiB: the span moves with the start's phase against the DRAM's refresh by under 4 % at
    # 0-4 us of start-up (at 1 MiB by up to 12 %, a fixed 2-3k cycles).
    x = torch.rand(2048, 1024, dtype=H)
    neg = lambda t: -t  # noqa: E731
    runs = {ns: spyre_sim.run(neg, (x,), timing_only=True,
                              set=["compiler.schedule=ibm", f"compiler.ibm.kernel_start_ns={ns}"])
            for ns in (0, 2000, 4000)}
    own = spyre_sim.run(neg, (x,), timing_only=True)
    ghz = runs[0].summary["clock_ghz"]
    assert runs[4000].reports[0]["options"]["ibm"]["kernel_start_ns"] == 4000
    for ns, r in runs.items():
        (k,) = r.summary["kernels"]
        assert k["start_cycle"] >= round(ns * ghz), (ns, k)
    span = {ns: r.summary["kernels"][0]["cycles"] for ns, r in runs.items()}
    for ns in (2000, 4000):  # the same work, give or take the DRAM refresh's phase
        assert abs(span[ns] - span[0]) < 0.1 * span[0], span
    base = runs[0].cycles
    for ns in (2000, 4000):  # the start-up, plus the same work as the span above
        assert abs(runs[ns].cycles - base - round(ns * ghz)) < 0.1 * span[0], (ns, runs[ns].cycles)
    assert own.cycles < runs[4000].cycles
    start = runs[4000].reports[0]["totals"]["start_cycles"]
    assert start == round(4000 * ghz) and own.reports[0]["totals"]["start_cycles"] == 0
    pred = [r.reports[0]["totals"]["predicted_cycles"] for r in (runs[0], runs[4000])]
    assert pred[1] == pred[0] + start


@pytest.mark.parametrize("value", ["-1", "abc", "5us", " 4000", "0x10", "2e9"])
def test_a_bad_kernel_start_is_an_error_naming_the_option(cli, value):
    from conftest import ROOT

    r = cli("run", ROOT / "tests" / "data" / "ir" / "ops" / "add.json", "--timing-only",
            "--set", "compiler.schedule=ibm", "--set", f"compiler.ibm.kernel_start_ns={value}",
            "--out", ROOT / "build" / "test-ibm-schedule")
    assert r.returncode == 2, (value, r.stderr)
    assert "compiler.ibm.kernel_start_ns" in r.stderr and "nanoseconds" in r.stderr, r.stderr


def _mm_tiles(a, b, *sets):
    r = spyre_sim.run(torch.mm, (a, b), timing_only=True, set=list(sets))
    (k,) = r.reports[0]["kernels"]
    return r, k["tiles"], k["split"]["block"]


def test_a_cores_matmul_block_is_one_tile_where_it_fits():
    """Under IBM's schedule a core computes its output block as one tile when the accumulator
    and operand slots fit LX, streaming K (IBM's K-sweep reads as compute plus DRAM time: no
    store overlaps later matmuls); this compiler's own schedule walks smaller tiles. A block
    that does not fit is tiled as the own schedule tiles it."""
    torch.manual_seed(0)
    a, b = torch.rand(2048, 512, dtype=H), torch.rand(512, 2048, dtype=H)
    split = "compiler.matmul_split=1,4,8,1"
    own, own_t, block = _mm_tiles(a, b, split)
    ibm, ibm_t, _ = _mm_tiles(a, b, split, "compiler.schedule=ibm")
    assert (block["m"], block["n"]) == (512, 256)
    assert (ibm_t["tm"], ibm_t["tn"], ibm_t["acc_slots"]) == (512, 256, 1), ibm_t
    assert own_t["tm"] * own_t["tn"] < 512 * 256, own_t
    assert ibm.cycles > own.cycles  # the output's store no longer hides under the matmuls
    # One core, 1024 x 1024 outputs: a 4 MiB fp32 accumulator, more than LX holds.
    x, y = torch.rand(1024, 256, dtype=H), torch.rand(256, 1024, dtype=H)
    _, own_t, _ = _mm_tiles(x, y, "compiler.cores=1")
    _, ibm_t, _ = _mm_tiles(x, y, "compiler.cores=1", "compiler.schedule=ibm")
    assert ibm_t == own_t and ibm_t["tm"] * ibm_t["tn"] < 1024 * 1024
