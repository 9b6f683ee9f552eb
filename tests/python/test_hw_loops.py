"""Hardware loops end to end: traces carry the dynamic index, `trace validate` replays the LX
plan against it with loops on and off, and a malformed loop is bad input (exit 2)."""

import json
import pathlib

from spyre_sim.trace import validate as tv
from spyre_sim.trace.read import instr_index, open_trace

ROOT = pathlib.Path(__file__).resolve().parents[2]
MLP = ROOT / "tests" / "data" / "ir" / "mlp_block.json"
# A fixed matmul division and tiling, so that its tiles repeat in hardware loops over PT, DMA
# and ring instructions whatever the compiler's own choice would pick on "tiny".
SPLIT = ("compiler.matmul_split=1,1,2,2", "compiler.matmul_tiles=16,128,256")


def _run(cli, out, trace_name, *sets):
    args = ["run", MLP, "--arch", "tiny", "--timing-only", "--out", out, "--trace", out / trace_name,
            "--trace-detail", "full"]
    for s in sets:
        args += ["--set", s]
    r = cli(*args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), out / trace_name, out / "report.json"


def _instr_spans(trace):
    """Spans of executed unit instructions (not sequencer stalls or token waits)."""
    return [e for e in open_trace(str(trace)).events()
            if e.get("ph") == "span" and "pc" in (e.get("args") or {})
            and "core" in (e.get("args") or {}) and e.get("track") != "seq"
            and not e["name"].startswith("wait tok")]


def test_loop_spans_carry_dyn_and_validate_clean(cli, tmp_path, capsys):
    on, trace, report = _run(cli, tmp_path / "on", "trace.json", *SPLIT)
    off, trace_off, report_off = _run(cli, tmp_path / "off", "trace.json", *SPLIT,
                                      "compiler.hw_loops=off")
    rep, rep_off = json.loads(report.read_text()), json.loads(report_off.read_text())
    loops = rep["totals"]["hw_loops"]
    assert loops["enabled"] and loops["loops"] > 0
    assert rep["totals"]["instructions"] < rep_off["totals"]["instructions"]
    assert loops["instructions_expanded"] == rep_off["totals"]["instructions"]
    assert rep["lx_plan"] == rep_off["lx_plan"]  # live intervals count dynamic indices
    spans = _instr_spans(trace)
    looped = [e for e in spans if "iter" in e["args"]]
    assert looped and any(e["args"]["dyn"] != e["args"]["pc"] for e in looped)
    for core in {e["args"]["core"] for e in spans}:  # a core with loops marks every span
        marks = {"dyn" in e["args"] for e in spans if e["args"]["core"] == core}
        assert len(marks) == 1, core
    # The same instructions ran: per core, the dynamic indices with loops are the pcs without.
    key = lambda evs: sorted((e["args"]["core"], instr_index(e["args"]), e["name"]) for e in evs)
    assert key(spans) == key(_instr_spans(trace_off))
    assert all("dyn" not in e["args"] for e in _instr_spans(trace_off))
    # Loop words cost a little sequencer time (at most a cycle each on tiny) and nothing else.
    # Measured over the one-server DRAM: the LPDDR5 model's FR-FCFS choice across cores turns a
    # few cycles of issue time into a different order of row hits (here about 700 cycles
    # either way, more than the loop words), which is the DRAM's sensitivity, not the loops'.
    fifo = ("dram.impl=fifo",)
    on_f, _, _ = _run(cli, tmp_path / "on_fifo", "trace.json", *SPLIT, *fifo)
    off_f, _, _ = _run(cli, tmp_path / "off_fifo", "trace.json", *SPLIT, *fifo,
                       "compiler.hw_loops=off")
    words = sum(c["sequencer"]["loop_words"] for c in on_f["stats"]["chip"]["cores"])
    assert words > 0 and 0 <= on_f["cycles"] - off_f["cycles"] <= words
    for t, r in ((trace, report), (trace_off, report_off)):
        code = tv.main(["validate", str(t), "--report", str(r), "--json", "--skip-fusion"])
        res = json.loads(capsys.readouterr().out)
        assert code == tv.EXIT_OK and res["violations"] == [], res["violations"][:3]
        assert res["lx"]["lx_accesses"] > 1000


def test_perfetto_trace_reads_dyn(cli, tmp_path):
    _, trace, _ = _run(cli, tmp_path, "trace.pftrace", *SPLIT)
    spans = _instr_spans(trace)
    assert any("iter" in e["args"] and e["args"]["dyn"] != e["args"]["pc"] for e in spans)


def test_planted_lx_plan_error_is_still_caught_with_loops(cli, tmp_path, capsys):
    _, trace, report = _run(cli, tmp_path, "trace.json", "compiler.debug.lx_plan_error=shift")
    code = tv.main(["validate", str(trace), "--report", str(report), "--json", "--skip-fusion"])
    res = json.loads(capsys.readouterr().out)
    assert code == tv.EXIT_VIOLATIONS
    assert "outside-buffer" in {v["kind"] for v in res["violations"]}


def test_malformed_loop_is_bad_input_naming_core_and_pc(cli, tmp_path):
    head = ".spyre 1\n.cores 1\n.dram_bytes 4096\n.kernel 0 k\n.core 0\n"
    cases = {
        "past_end.s": ("  loop count=2 len=5\n  dma.load dram=0 lx=0 bytes=128\n  halt\n",
                       "core 0 pc 0 (loop)", "runs past the end"),
        "zero.s": ("  loop count=0 len=1\n  dma.load dram=0 lx=0 bytes=128\n  halt\n",
                   "core 0 pc 0 (loop)", "count=0"),
        "float.s": ("  loop count=2 len=1\n  loop.step i=0 o=7 delta=1\n"
                    "  sfp.fill cl=0 dt=f32 dst=0 dst_rs=32 dst_cs=1 rows=1 cols=32 value=1\n"
                    "  halt\n", "core 0 pc 1 (loop.step)", "is a float"),
    }
    for name, (body, where, what) in cases.items():
        p = tmp_path / name
        p.write_text(head + body)
        for args in (("asm", p, "-o", tmp_path / "x.bin"), ("run", p, "--out", tmp_path / "o")):
            r = cli(*args)
            assert r.returncode == 2, (name, args[0], r.stdout, r.stderr)
            assert where in r.stderr and what in r.stderr and "Traceback" not in r.stderr, r.stderr
