"""spyre_sim.trace.read over both trace formats, the recorded args, --trace-filter and
determinism, on traces the CLI writes."""

import inspect
import json
import pathlib
from collections import Counter

import pytest

from spyre_sim.trace.read import TraceError, open_trace

ROOT = pathlib.Path(__file__).resolve().parents[2]
IR = ROOT / "tests" / "data" / "ir"


def run(cli, out, *extra):
    r = cli("run", IR / "matmul.json", "--out", out.parent / (out.name + ".o"), "--trace", out,
            "--trace-detail", "full", *extra)
    assert r.returncode == 0, r.stderr
    return out


def key(e):
    return json.dumps(e, sort_keys=True)


@pytest.mark.parametrize("clock", [None, "1.37"])
def test_both_formats_give_the_same_events_in_exact_cycles(cli, tmp_path, clock):
    extra = ["--set", f"chip.clock_ghz={clock}"] if clock else []
    a = open_trace(str(run(cli, tmp_path / "t.json", *extra)))
    b = open_trace(str(run(cli, tmp_path / "t.pftrace", *extra)))
    assert inspect.isgenerator(a.events()) and inspect.isgenerator(b.events())
    for t, fmt in ((a, "chrome-json"), (b, "perfetto")):
        assert t.meta["format"] == fmt and t.meta["version"] == 1
        assert t.meta["clock_ghz"] == float(clock or 1.15)
        assert t.meta["arch"]["chip.clock_ghz"] == t.meta["clock_ghz"]
        assert t.meta["cores"] >= 1 and t.meta["graph"]
    assert {k: v for k, v in a.meta.items() if k != "format"} == \
        {k: v for k, v in b.meta.items() if k != "format"}
    ea, eb = list(a.events()), list(b.events())
    # JSON gets cycles back from microsecond timestamps, protobuf from annotations: identical
    assert sorted(map(key, ea)) == sorted(map(key, eb))
    kinds = Counter(e["ph"] for e in ea)
    assert kinds["span"] > 100 and kinds["counter"] > 0 and kinds["flow"] > 0


def test_spans_carry_args_and_tracks_cover_the_chip(cli, tmp_path):
    t = open_trace(str(run(cli, tmp_path / "t.json")))
    lx_size = t.meta["arch"]["lx.size_bytes"]
    spans = [e for e in t.events() if e["ph"] == "span"]
    instr = [e for e in spans if e["group"].startswith("spyre.core_")
             and e["track"] != "seq" and not e["name"].startswith("wait")]
    assert instr
    for e in instr:
        a = e["args"]
        assert a["core"] == int(e["group"].rsplit("_", 1)[1]) and a["pc"] >= 0 and a["kernel"]
        if e["track"] in ("pt0", "pt1", "sfp0", "sfp1", "dma_in", "dma_out"):
            assert a["lx"], e
            assert any(rw == "w" for _, _, rw in a["lx"]) or e["track"] == "dma_out"
            for addr, n, rw in a["lx"]:
                assert rw in ("r", "w") and n > 0 and 0 <= addr and addr + n <= lx_size
    tracks = {(e["group"].split("_")[0], e["track"]) for e in spans}
    assert {("spyre.dram", "ch0"), ("spyre", "kernels")} <= tracks
    assert any(g == "spyre.core" and tr.startswith("pt") for g, tr in tracks)
    kernels = [e for e in spans if e["track"] == "kernels"]
    assert kernels and all("predicted_cycles" in k["args"] for k in kernels)
    counters = {(e["group"], e["name"].split()[0]) for e in t.events() if e["ph"] == "counter"}
    assert ("spyre.dram", "ch0") in counters and ("spyre", "lx") in counters


def test_trace_filter_keeps_units_cores_and_window(cli, tmp_path):
    full = [e for e in open_trace(str(run(cli, tmp_path / "a.json"))).events()]
    f = open_trace(str(run(cli, tmp_path / "b.pftrace", "--trace-filter",
                           "unit=pt,dma; core=0-1; window=100:5000")))
    got = list(f.events())
    assert got
    for e in got:
        if e["ph"] == "span":
            assert e["group"] in ("spyre.core_0", "spyre.core_1")
            assert e["track"] in ("pt0", "pt1", "dma_in", "dma_out")
            assert e["start"] < 5000 and e["start"] + max(e["dur"], 1) > 100
        if e["ph"] == "counter":  # only the kept units' busy counters, in the window
            assert e["group"] in ("spyre.core_0", "spyre.core_1"), e
            assert e["name"] in ("pt0 busy", "pt1 busy", "dma_in busy", "dma_out busy"), e
            assert 100 <= e["t"] < 5000
    want = [e for e in full if e["ph"] == "span" and e["group"] in ("spyre.core_0", "spyre.core_1")
            and e["track"] in ("pt0", "pt1", "dma_in", "dma_out")
            and e["start"] < 5000 and e["start"] + max(e["dur"], 1) > 100]
    assert sorted(map(key, want)) == sorted(map(key, (e for e in got if e["ph"] == "span")))


def test_bad_trace_filter_exits_2_naming_the_field(cli, tmp_path):
    r = cli("run", IR / "matmul.json", "--out", tmp_path / "o", "--trace-filter", "core=2-1")
    assert r.returncode == 2
    assert "--trace-filter" in r.stderr and "field 'core'" in r.stderr


def test_same_run_writes_byte_identical_traces(cli, tmp_path):
    for ext in ("json", "pftrace"):
        a = run(cli, tmp_path / f"x.{ext}").read_bytes()
        b = run(cli, tmp_path / f"y.{ext}").read_bytes()
        assert a == b, ext


def test_unreadable_files_raise_trace_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    with pytest.raises(TraceError, match="bad.json"):
        open_trace(str(bad))
    with pytest.raises(TraceError, match="no such file"):
        open_trace(str(tmp_path / "missing.pftrace"))


def test_lx_planned_bytes_per_core_follow_the_compile_report(cli, tmp_path):
    trace = run(cli, tmp_path / "t.json")
    report = json.loads((tmp_path / "t.json.o" / "report.json").read_text())
    want = {}  # (core, kernel id) -> planned bytes that core holds in that kernel
    for b in report["lx_plan"]["buffers"]:
        for c in b["cores"]:
            want[(c, b["kernel_id"])] = want.get((c, b["kernel_id"]), 0) + b["bytes"]
    assert want
    events = list(open_trace(str(trace)).events())
    kernels = {e["args"]["kernel_id"]: e for e in events
               if e["ph"] == "span" and e["group"] == "spyre" and e["track"] == "kernels"}
    samples = {}
    for e in events:
        if e["ph"] == "counter" and e["name"] == "lx planned bytes" and e["group"] != "spyre":
            samples.setdefault(int(e["group"].rsplit("_", 1)[1]), []).append((e["t"], e["value"]))
    for (core, kid), nbytes in want.items():
        start, end = kernels[kid]["start"], kernels[kid]["start"] + kernels[kid]["dur"]
        held = [v for t, v in samples[core] if start <= t < end]
        assert held == [nbytes], (core, kid, samples[core])
        assert (end, 0) in samples[core]


def test_trace_filter_applies_to_model_files(cli, tmp_path):
    out = tmp_path / "t.pftrace"
    r = cli("run", ROOT / "tools" / "models" / "matmul.py", "--arch", "tiny", "--out",
            tmp_path / "o", "--trace", out, "--trace-filter", "unit=pt;core=1", "--trace-detail",
            "full")
    assert r.returncode == 0, r.stderr
    events = list(open_trace(str(out)).events())
    assert events and all(e["ph"] in ("span", "counter") for e in events)
    pt = {("spyre.core_1", "pt0"), ("spyre.core_1", "pt1")}
    assert {(e["group"], e["track"]) for e in events if e["ph"] == "span"} <= pt
    assert {(e["group"], e["name"][:-5]) for e in events if e["ph"] == "counter"} <= pt
    bad = cli("run", ROOT / "tools" / "models" / "matmul.py", "--trace-filter", "core=3-1")
    assert bad.returncode == 2 and "core" in bad.stderr
