"""`spyre-sim trace validate`: the LX-plan replay and the fusion check.

The first tests feed the validator synthetic reports and event lists (its logic alone); the
end-to-end tests run the simulator on mlp_block (tiny) with a trace and the compile report, clean
and with the compiler's planted defects (compiler.debug.*)."""

import json

import pytest

from spyre_sim.trace import validate as tv


def plan_report(buffers, usable=1024, fusion=None):
    return {"graph": "g", "arch": "tiny", "lx_usable_bytes": usable, "fusion": fusion or [],
            "lx_plan": {"format": tv.PLAN_FORMAT, "usable_bytes": usable, "buffers": buffers}}


def buf(name, offset, nbytes, live, kernel="k0"):
    return {"buffer": name, "kernel": kernel, "offset": offset, "bytes": nbytes,
            "live": [list(x) for x in live]}


def span(core, pc, lx, start=0, name="sfp.bin", kernel="k0"):
    return {"ph": "span", "group": f"spyre.core_{core}", "track": "sfp0", "name": name, "start": start,
            "dur": 1, "args": {"kernel": kernel, "core": core, "pc": pc, "lx": lx}}


def run(tmp_path, report, events, **kw):
    p = tmp_path / "report.json"
    p.write_text(json.dumps(report))
    return tv.validate("trace.json", str(p), events=events, meta={}, **kw)


TWO = [buf("A", 0, 256, [(0, 0, 10), (1, 0, 12)]), buf("B", 256, 128, [(0, 0, 10), (1, 0, 12)])]


def test_clean_accesses_inside_live_buffers(tmp_path):
    ev = [span(0, 1, [[0, 256, "w"]]), span(0, 5, [[256, 128, "r"], [128, 64, "r"]]),
          span(1, 12, [[300, 10, "w"]]), {"ph": "counter", "name": "x"}]
    res = run(tmp_path, plan_report(TWO), ev)
    assert res["ok"], res["violations"]
    assert res["lx"]["lx_accesses"] == 4 and res["lx"]["instructions"] == 3
    assert res["lx"]["peak_bytes"] == {0: 384, 1: 384}


def test_access_outside_any_buffer_is_listed_with_its_instruction(tmp_path):
    ev = [span(0, 3, [[384, 128, "w"]], start=77, name="dma.load")]
    res = run(tmp_path, plan_report(TWO), ev)
    assert not res["ok"]
    (v,) = res["violations"]
    assert (v["kind"], v["time"], v["core"], v["addr"], v["pc"], v["mnemonic"], v["kernel"]) == (
        "outside-buffer", 77, 0, 384, 3, "dma.load", "k0")


def test_access_across_adjacent_live_buffers_is_fine_across_a_gap_is_not(tmp_path):
    # The trace merges touching ranges of one instruction, so [200, 300) may be A's tail and
    # B's head; with a hole between the buffers the first uncovered byte is reported.
    assert run(tmp_path, plan_report(TWO), [span(0, 3, [[200, 100, "r"]])])["ok"]
    gap = [buf("A", 0, 256, [(0, 0, 10)]), buf("B", 384, 128, [(0, 0, 10)])]
    (v,) = run(tmp_path, plan_report(gap), [span(0, 3, [[200, 200, "r"]])])["violations"]
    assert v["kind"] == "outside-buffer" and "byte 256 " in v["message"] and v["addr"] == 200


def test_access_after_the_buffer_died(tmp_path):
    bufs = [buf("A", 0, 256, [(0, 0, 10)]), buf("C", 256, 256, [(0, 11, 20)], kernel="k1")]
    res = run(tmp_path, plan_report(bufs), [span(0, 15, [[0, 64, "r"]], kernel="k1")])
    (v,) = res["violations"]
    assert v["kind"] == "not-live" and "in A of k0" in v["message"] and "[0, 10]" in v["message"]


def test_access_on_a_core_without_the_buffer(tmp_path):
    res = run(tmp_path, plan_report(TWO), [span(2, 3, [[0, 64, "r"]])])
    assert [v["kind"] for v in res["violations"]] == ["outside-buffer"]


def test_overlapping_live_buffers_flagged_disjoint_lives_not(tmp_path):
    bufs = [buf("A", 0, 256, [(0, 0, 10)]), buf("B", 128, 256, [(0, 5, 10)]),
            buf("C", 0, 512, [(0, 11, 20)], kernel="k1")]
    res = run(tmp_path, plan_report(bufs), [span(0, 1, [[0, 8, "r"]])])
    kinds = [(v["kind"], v["core"], v["addr"], v["bytes"]) for v in res["violations"]]
    assert kinds == [("overlap", 0, 128, 128)]


def test_capacity(tmp_path):
    bufs = [buf("A", 0, 512, [(0, 0, 10)]), buf("B", 512, 1024, [(0, 0, 10)])]
    res = run(tmp_path, plan_report(bufs, usable=1024), [span(0, 1, [[0, 8, "r"]])])
    assert [v["kind"] for v in res["violations"]] == ["capacity"]


@pytest.mark.parametrize("bad", [
    {"graph": "g"},
    {"lx_plan": {"format": "other", "buffers": []}},
    {"lx_plan": {"format": tv.PLAN_FORMAT, "usable_bytes": 10, "buffers": [{"buffer": "a"}]}},
])
def test_bad_reports_are_bad_input(tmp_path, bad):
    with pytest.raises(tv.BadInput):
        run(tmp_path, bad, [span(0, 0, [])])


def test_trace_without_instruction_args_is_bad_input(tmp_path):
    ev = [{"ph": "span", "name": "x", "start": 0, "dur": 1, "args": {"kernel": "k0"}}]
    with pytest.raises(tv.BadInput, match="no instruction spans"):
        run(tmp_path, plan_report(TWO), ev)


def fusion_decision(group, before, after, taken=True, **extra):
    return dict({"group": group, "kind": "pointwise", "taken": taken,
                 "predicted": {"before": {"cycles": before, "dram_bytes": 100},
                               "after": {"cycles": after, "dram_bytes": 50}}}, **extra)


def fake_sim(cycles_by_limit):
    calls = []

    def sim(graph, arch, sets):
        calls.append(sets)
        limit = int([s for s in sets if s.startswith("compiler.fusion_limit=")][0].split("=")[1])
        return {"cycles": cycles_by_limit[limit], "dram_bytes": 1000 - 10 * limit}

    return sim, calls


def test_fusion_judges_the_decisions_kernels_not_the_programs_noise(tmp_path):
    """A removed intermediate shifts every later DRAM buffer, which moves unrelated kernels by
    a few hundred cycles: decision op0+op1 saves 100 cycles in its own kernels while the whole
    program is 50 slower. The decision is judged on its kernels; the program's difference is
    kept beside it. A decision whose own kernels get slower is still harmful."""
    rep = plan_report(TWO, fusion=[fusion_decision(["op0", "op1"], 300, 200),
                                   fusion_decision(["op2", "op3"], 300, 250)])
    rep["file"] = "g.json"
    programs = {
        0: [("op0_k", ["op0"], 200), ("op1_k", ["op1"], 200), ("op2_k", ["op2"], 100),
            ("op3_k", ["op3"], 100), ("op9_k", ["op9"], 1000)],
        1: [("op0_op1_k", ["op0", "op1"], 300), ("op2_k", ["op2"], 100), ("op3_k", ["op3"], 100),
            ("op9_k", ["op9"], 1150)],
        2: [("op0_op1_k", ["op0", "op1"], 300), ("op2_op3_k", ["op2", "op3"], 260),
            ("op9_k", ["op9"], 1150)]}

    def sim(graph, arch, sets):
        limit = int([s for s in sets if s.startswith("compiler.fusion_limit=")][0].split("=")[1])
        ks = [{"name": n, "nodes": nodes, "cycles": c} for n, nodes, c in programs[limit]]
        return {"cycles": sum(k["cycles"] for k in ks), "dram_bytes": 1000 - limit, "kernels": ks}

    res = run(tmp_path, rep, [span(0, 0, [])], graph="g.json", arch="tiny", sim=sim)
    rows = res["fusion"]
    assert [(r["simulated"]["cycles"], r["simulated"]["program_cycles"], r["flags"])
            for r in rows] == [(100, -50, []), (-60, -60, ["harmful", "sign"])]
    assert [v["kernel"] for v in res["violations"]] == ["op2+op3", "op2+op3"]


def test_fusion_replay_keeps_every_forced_compiler_option():
    """The fusion check recompiles with the report's options: forced splits, tiles and leads,
    the layout-copy mode and hardware loops must all reach the replay, defaults must not."""
    rep = {"options": {"fusion": True, "matmul_split": [1, 1, 32, 1],
                       "matmul_tiles": [128, 64, 1024], "matmul_lead": 10,
                       "layout_copy": "transpose", "hw_loops": False,
                       "debug": {"force_fusion": [], "lx_plan_error": "none"}}}
    assert tv._sets_from_options(rep) == [
        "compiler.matmul_split=1,1,32,1", "compiler.matmul_tiles=128,64,1024",
        "compiler.matmul_lead=10", "compiler.layout_copy=transpose", "compiler.hw_loops=off"]
    rep["options"].update({"matmul_split": [0, 0, 0, 0], "matmul_tiles": [0, 0, 0],
                           "matmul_lead": 0, "layout_copy": "auto", "hw_loops": True})
    assert tv._sets_from_options(rep) == []


def test_fusion_decisions_compare_limit_k_minus_1_with_k(tmp_path):
    fusion = [fusion_decision(["op0", "op1"], 100, 80),
              fusion_decision(["op2", "op3"], 50, 60, taken=False),
              fusion_decision(["op4", "op5"], 90, 70),
              fusion_decision(["op6", "op7"], 40, 45, forced=True)]
    rep = plan_report(TWO, fusion=fusion)
    rep["file"] = "g.json"
    rep["options"] = {"fusion": True, "matmul_split": [0, 0, 0, 0],
                      "debug": {"force_fusion": [3], "lx_plan_error": "none"}}
    # limit 0: 1000, 1: 900 (saves), 2: 950 (costs 50 though predicted +20), 3: 960 (forced:
    # predicted -5, simulated -10: harmful, sign agrees)
    sim, calls = fake_sim({0: 1000, 1: 900, 2: 950, 3: 960})
    res = run(tmp_path, rep, [span(0, 0, [])], graph="g.json", arch="tiny", sim=sim)
    rows = res["fusion"]
    assert [(r["decision"], r["simulated"]["cycles"], r["flags"]) for r in rows] == [
        (0, 100, []), (2, -50, ["harmful", "sign"]), (3, -10, ["harmful"])]
    assert rows[2]["forced"] and rows[0]["simulated"]["dram_bytes"] == 10
    assert all("compiler.debug.force_fusion=3" in c for c in calls)
    assert len(calls) == 4  # each limit simulated once
    assert sorted(v["kind"] for v in res["violations"]) == ["harmful", "harmful", "sign"]


def test_fusion_that_moves_more_dram_bytes_is_flagged(tmp_path):
    rep = plan_report(TWO, fusion=[fusion_decision(["op0", "op1"], 100, 80),
                                   fusion_decision(["op2", "op3"], 90, 70)])
    rep["file"] = "g.json"

    def sim(graph, arch, sets):  # every fusion saves cycles; the second adds 30 DRAM bytes
        limit = int([s for s in sets if s.startswith("compiler.fusion_limit=")][0].split("=")[1])
        return {"cycles": 1000 - 10 * limit, "dram_bytes": [500, 400, 430][limit]}

    res = run(tmp_path, rep, [span(0, 0, [])], graph="g.json", arch="tiny", sim=sim)
    assert [(r["simulated"]["dram_bytes"], r["flags"]) for r in res["fusion"]] == [
        (100, []), (-30, ["harmful-bytes", "sign-bytes"])]
    assert sorted(v["kind"] for v in res["violations"]) == ["harmful-bytes", "sign-bytes"]


def test_fusion_check_needs_an_ir_graph(tmp_path):
    rep = plan_report(TWO, fusion=[fusion_decision(["a", "b"], 10, 5)])
    rep["file"] = "model.py"
    res = run(tmp_path, rep, [span(0, 0, [])])
    assert res["fusion"] is None and "--graph" in res["warnings"][0]
    rep["file"] = "missing.json"
    with pytest.raises(tv.BadInput, match="not found"):
        run(tmp_path, rep, [span(0, 0, [])])
    assert run(tmp_path, rep, [span(0, 0, [])], fusion=False)["ok"]


def test_main_exit_status_for_bad_input(tmp_path, capsys):
    assert tv.main(["validate", str(tmp_path / "no.json"), "--report",
                    str(tmp_path / "none.json")]) == tv.EXIT_BAD_INPUT
    assert "cannot read compile report" in capsys.readouterr().err


# ---------------------------------------------------------------- end to end (simulator)

MLP = tv.__file__.rsplit("/tools/", 1)[0] + "/tests/data/ir/mlp_block.json"
# mlp_block on tiny with the K split forced and slow transcendentals: the K chain's last core
# runs the whole GELU epilogue, so the cost model rejects op4+op5 (decision 2).
HARMFUL_SETS = ["compiler.matmul_split=1,1,1,4", "sfp.transcendental_factor=50"]


def simulate(cli, out, *sets):
    args = ["run", MLP, "--arch", "tiny", "--timing-only", "--out", out,
            "--trace", out / "trace.json", "--trace-detail", "full"]
    for s in sets:
        args += ["--set", s]
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    return out / "trace.json", out / "report.json"


def validate_cli(trace, report, *extra, capsys):
    code = tv.main(["validate", str(trace), "--report", str(report), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


# mlp_block on "tiny": every fusion decision saves cycles in simulation. (op6+op7 cost 3233
# cycles while the PT overlapped its folds: fused with its epilogue, op6's matmul took an
# n-split division that simulated slower than op6 and op7 apart. With the drain paid per fold
# the split search divides it otherwise and the fusion saves.) The planted-fusion test below
# forces a harmful one.
def _no_violations(res):
    assert res["violations"] == [], res["violations"]
    assert res["fusion"] and all(r["simulated"]["cycles"] > 0 for r in res["fusion"])


def test_real_run_validates_its_plan_and_every_fusion_saves(cli, tmp_path, capsys):
    trace, report = simulate(cli, tmp_path)
    code, res = validate_cli(trace, report, capsys=capsys)
    _no_violations(res)
    assert code == tv.EXIT_OK
    assert res["lx"]["lx_accesses"] > 1000 and res["lx"]["buffers"] > 20
    assert res["resimulated_cycles"] == res["trace_end_cycle"]  # the fusion runs are this run
    rows = res["fusion"]
    assert [r["group"] for r in rows] == ["op0+op1", "op0+op1+op3", "op4+op5", "op6+op7"]
    # Every decision is predicted to save, and saves in simulation.
    assert all(r["predicted"]["cycles"] > 0 for r in rows)


@pytest.mark.parametrize("kind,expect", [("shift", "outside-buffer"),
                                         ("shrink", "outside-buffer"), ("overlap", "overlap")])
def test_planted_wrong_lx_plan_is_caught(cli, tmp_path, capsys, kind, expect):
    trace, report = simulate(cli, tmp_path, f"compiler.debug.lx_plan_error={kind}")
    code, res = validate_cli(trace, report, "--skip-fusion", capsys=capsys)
    assert code == tv.EXIT_VIOLATIONS
    kinds = {v["kind"] for v in res["violations"]}
    assert expect in kinds, kinds
    v = next(v for v in res["violations"] if v["kind"] == expect)
    assert v["core"] is not None and v["kernel"] and v["pc"] is not None and v["addr"] is not None
    if kind != "overlap":  # a replayed access: the instruction that made it
        assert v["mnemonic"] and v["time"] is not None
    r = cli("trace", "validate", trace, "--report", report, "--skip-fusion")
    assert r.returncode == tv.EXIT_VIOLATIONS and f"lx/{expect}" in r.stdout, r.stdout + r.stderr


def test_planted_harmful_fusion_is_flagged(cli, tmp_path, capsys):
    trace, report = simulate(cli, tmp_path / "honest", *HARMFUL_SETS)
    honest = json.loads(report.read_text())["fusion"]
    assert honest[2]["group"] == ["op4", "op5"] and not honest[2]["taken"]
    assert honest[2]["predicted"]["after"] is not None
    trace, report = simulate(cli, tmp_path / "forced", *HARMFUL_SETS,
                             "compiler.debug.force_fusion=2")
    code, res = validate_cli(trace, report, capsys=capsys)
    assert code == tv.EXIT_VIOLATIONS
    row = next(r for r in res["fusion"] if r["decision"] == 2)
    assert row["forced"] and row["predicted"]["cycles"] < 0
    assert row["simulated"]["cycles"] < 0 and "harmful" in row["flags"]
    assert any(v["kind"] == "harmful" and v["kernel"] == "op4+op5" for v in res["violations"])
    assert res["resimulated_cycles"] == res["trace_end_cycle"]
    # Without the arch.yaml beside the report, the trace's recorded parameters give the chip.
    bare = tmp_path / "bare"
    bare.mkdir()
    for f in (trace, report):
        (bare / f.name).write_bytes(f.read_bytes())
    code2, res2 = validate_cli(bare / trace.name, bare / report.name, capsys=capsys)
    assert (code2, res2["fusion"]) == (code, res["fusion"]) and "warnings" not in res2


def test_model_file_run_saves_its_ir_and_validates_with_the_fusion_check(cli, tmp_path):
    import pathlib
    model = pathlib.Path(__file__).resolve().parents[2] / "tools" / "models" / "mlp_block.py"
    out = tmp_path / "o"
    r = cli("run", model, "--arch", "tiny", "--out", out, "--trace-detail", "full")
    assert r.returncode == 0, r.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["file"] == str(out / "graph_0.ir.json") and (out / "graph_0.ir.json").exists()
    line = next(x for x in r.stdout.splitlines() if x.lstrip().startswith("validate"))
    assert "--skip-fusion" not in line and str(out / "trace.pftrace") in line
    v = cli("trace", "validate", out / "trace.pftrace", "--report", out / "report.json", "--json")
    assert v.returncode == tv.EXIT_OK, v.stdout + v.stderr
    res = json.loads(v.stdout)
    _no_violations(res)
    assert res["fusion"] and all(row["simulated"] is not None for row in res["fusion"])
