"""`spyre-sim trace report` / `view` on a real small run: the report's numbers against the run's
own summary and compile report (both written by `spyre-sim run --out DIR`)."""

import json
import re

import pytest

from conftest import ROOT, run_cli

IR = ROOT / "tests" / "data" / "ir" / "mlp_block.json"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("trace_tools") / "run"
    r = run_cli("run", IR, "--arch", "tiny", "--out", out, "--trace", out / "trace.json",
                "--trace-detail", "full")
    assert r.returncode == 0, r.stderr
    # The run tells the user how to look at its trace.
    assert f"spyre-sim trace view {out / 'trace.json'} -o {out / 'view.html'}" in r.stdout
    assert (f"spyre-sim trace validate {out / 'trace.json'} --report {out / 'report.json'}"
            in r.stdout)
    return out


@pytest.fixture(scope="module")
def rep(run_dir):
    r = run_cli("trace", "report", run_dir / "trace.json", "--report", run_dir / "report.json",
                "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _load(p):
    return json.loads(p.read_text())


def test_kernels_match_the_run(run_dir, rep):
    summary = _load(run_dir / "summary.json")
    assert rep["total_cycles"] == summary["cycles"]
    want = [(k["name"], k["start_cycle"], k["end_cycle"], k["cycles"]) for k in summary["kernels"]]
    got = [(k["name"], k["start_cycle"], k["end_cycle"], k["cycles"]) for k in rep["kernels"]]
    assert got == want
    assert rep["kernel_cycles_sum"] == sum(k["cycles"] for k in summary["kernels"])
    assert rep["clock_ghz"] == pytest.approx(summary["clock_ghz"])


def test_predicted_cycles_from_the_compile_report(run_dir, rep):
    kernels = _load(run_dir / "report.json")["kernels"]
    compiled = {k["name"]: k["predicted"]["cycles"] for k in kernels}
    assert {k["name"]: k["predicted_cycles"] for k in rep["kernels"]} == compiled
    for k in rep["kernels"]:
        assert k["sim_over_predicted"] == pytest.approx(k["cycles"] / k["predicted_cycles"])


def test_time_split_covers_every_core_cycle(run_dir, rep):
    stats = _load(run_dir / "stats.json")
    for k in rep["kernels"]:
        split = k["split_core_cycles"]
        assert 0 < k["cores_used"] <= stats["chip"]["num_cores"]
        assert sum(split.values()) == k["cores_used"] * k["cycles"]
        assert split["compute"] > 0 and split["memory"] > 0
        assert sum(k["split_frac"].values()) == pytest.approx(1.0)


def test_dram_bytes_and_bandwidth(run_dir, rep):
    summary = _load(run_dir / "summary.json")
    d = summary["dram"]
    assert rep["dram_total"]["bytes"] == d["read_bytes"] + d["write_bytes"]
    assert rep["dram_total"]["achieved_gbps"] == pytest.approx(d["achieved_gbps"], rel=1e-3)
    assert rep["dram_total"]["peak_gbps"] == pytest.approx(d["peak_gbps"])
    chans = [r for r in rep["links"] if r["kind"] == "dram"]
    assert chans and all(0 < r["of_peak"] <= 1 for r in chans)


def test_critical_path_ends_where_the_kernel_ends(rep):
    for k in rep["kernels"]:
        cp = k["critical_path"]
        assert cp["finish_cycle"] == k["end_cycle"]
        assert sum(cp["cycles_by_class"].values()) == k["cycles"]
        assert cp["finisher"].startswith("spyre.core_")
        assert cp["segments"][-1]["end"] == k["end_cycle"]


def test_text_report(run_dir, rep):
    r = run_cli("trace", "report", run_dir / "trace.json", "--report", run_dir / "report.json")
    assert r.returncode == 0, r.stderr
    for k in rep["kernels"]:
        assert k["name"] in r.stdout
    for title in ("Kernels", "Bandwidth", "Critical path", "spyre.dram/ch0"):
        assert title in r.stdout


def test_report_without_compile_report(run_dir, rep):
    # The simulator copies the compiler's predictions onto its kernel spans.
    r = run_cli("trace", "report", run_dir / "trace.json", "--json")
    assert r.returncode == 0, r.stderr
    alone = json.loads(r.stdout)
    assert [k["predicted_cycles"] for k in alone["kernels"]] == [
        k["predicted_cycles"] for k in rep["kernels"]]
    assert alone["total_cycles"] == rep["total_cycles"]


@pytest.mark.parametrize("content", ["{not json", '{"traceEvents": 3}', ""])
def test_bad_trace_is_exit_2_naming_the_file(tmp_path, content):
    bad = tmp_path / "bad_trace.json"
    bad.write_text(content)
    r = run_cli("trace", "report", bad)
    assert r.returncode == 2
    assert str(bad) in r.stderr and "Traceback" not in r.stderr


def test_missing_trace_and_bad_usage(tmp_path):
    r = run_cli("trace", "view", tmp_path / "nope.json", "-o", tmp_path / "v.html")
    assert r.returncode == 2 and "nope.json" in r.stderr
    r = run_cli("trace", "frobnicate")
    assert r.returncode == 2


def _view(run, trace, out):
    """The page `trace view` writes for run/trace with run's compile report."""
    r = run_cli("trace", "view", run / trace, "-o", out, "--report", run / "report.json")
    assert r.returncode == 0, r.stderr
    return out.read_text()


def test_view_writes_a_self_contained_page(run_dir, tmp_path):
    page = _view(run_dir, "trace.json", tmp_path / "view.html")
    assert "<script" in page and "Bokeh" in page
    # Nothing is fetched: no script or stylesheet tag points anywhere (bokeh's code inline).
    assert not re.search(r"<script[^>]*\bsrc=|<link[^>]*\bhref=", page)
    assert "spyre.core_0 / pt0" in page and "spyre.dram / ch0" in page


def test_view_window_draws_only_the_spans_in_it(run_dir, rep, tmp_path):
    from spyre_sim.trace.model import load, windowed

    lo, hi = rep["total_cycles"] // 3, rep["total_cycles"] // 2
    full = load(str(run_dir / "trace.json"))
    part = windowed(full, lo, hi)
    n_full = sum(len(t.start) for t in full.tracks.values())
    n_part = sum(len(t.start) for t in part.tracks.values())
    assert 0 < n_part < n_full
    # Exactly the spans that overlap [lo, hi), none lost, none extra.
    want = sum(1 for t in full.tracks.values() for s, e in zip(t.start, t.ends) if e > lo and s < hi)
    assert n_part == want
    out = tmp_path / "w.html"
    r = run_cli("trace", "view", run_dir / "trace.json", "-o", out, "--window", f"{lo}:{hi}")
    assert r.returncode == 0, r.stderr
    assert f"{n_part:,} spans drawn one by one" in r.stdout
    assert f"Timeline: cycles {lo:,} to {hi:,} only" in out.read_text()
    bad = run_cli("trace", "view", run_dir / "trace.json", "-o", out, "--window", "5:5")
    assert bad.returncode == 2 and "--window" in bad.stderr


def test_perfetto_trace_gives_the_same_report(run_dir, rep, tmp_path):
    pf = tmp_path / "run.pftrace"
    r = run_cli("run", IR, "--arch", "tiny", "--out", tmp_path / "pf", "--trace", pf,
                "--trace-detail", "full")
    assert r.returncode == 0, r.stderr
    r = run_cli("trace", "report", pf, "--report", run_dir / "report.json", "--json")
    assert r.returncode == 0, r.stderr
    other = json.loads(r.stdout)
    for key in ("total_cycles", "kernels", "dram_total", "links", "spans", "flows"):
        assert other[key] == rep[key], key


def test_trace_without_kernel_spans_counters_flows(run_dir, rep, tmp_path):
    # A filtered or older trace: no kernel spans, counters or flows. The report falls back to
    # the spans' kernel args for the kernel windows and finds no predictions.
    doc = _load(run_dir / "trace.json")
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] in ("process_name", "thread_name")}
    chip = next(pid for (pid, tid), n in names.items() if tid is None and n == "spyre")
    kernels_tid = next(tid for (pid, tid), n in names.items() if pid == chip and n == "kernels")
    events = [e for e in doc["traceEvents"] if e["ph"] not in ("C", "s", "f", "t")
              and not (e.get("pid") == chip and e.get("tid") == kernels_tid)]
    old = tmp_path / "old.json"
    doc["traceEvents"] = events
    old.write_text(json.dumps(doc))
    r = run_cli("trace", "report", old, "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["counters"] == 0 and got["flows"] == 0
    assert got["clock_ghz"] == pytest.approx(rep["clock_ghz"])
    assert [(k["name"], k["cycles"]) for k in got["kernels"]] == [
        (k["name"], k["cycles"]) for k in rep["kernels"]]
    assert all(k["window_from"] == "kernel arg" and k["predicted_cycles"] is None
               for k in got["kernels"])
    assert got["dram_total"]["bytes"] == rep["dram_total"]["bytes"]
    r = run_cli("trace", "view", old, "-o", tmp_path / "old.html")
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def summary_dir(tmp_path_factory):
    """The same run with no trace option: a summary Perfetto trace in the output folder."""
    out = tmp_path_factory.mktemp("trace_tools") / "summary"
    r = run_cli("run", IR, "--arch", "tiny", "--out", out)
    assert r.returncode == 0, r.stderr
    assert f"{out / 'trace.pftrace'}  (summary detail" in r.stdout
    assert "--trace-detail full" in r.stdout and "spyre-sim trace validate" not in r.stdout
    return out


def test_summary_trace_report_agrees_with_the_full_one(run_dir, rep, summary_dir):
    r = run_cli("trace", "report", summary_dir / "trace.pftrace", "--report",
                summary_dir / "report.json", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["detail"] == "summary" and rep["detail"] == "full"
    assert s["total_cycles"] == rep["total_cycles"]
    assert ([(k["name"], k["cycles"], k["predicted_cycles"]) for k in s["kernels"]]
            == [(k["name"], k["cycles"], k["predicted_cycles"]) for k in rep["kernels"]])
    # DRAM bytes from the channels' GB/s counters = bytes of the full trace's transactions
    # (each channel's integral is rounded to a byte).
    channels = sum(1 for r in rep["links"] if r["kind"] == "dram")
    assert rep["dram_total"]["bytes"] > 0
    assert abs(s["dram_total"]["bytes"] - rep["dram_total"]["bytes"]) <= channels
    assert all(k["busy_frac"]["pt"] > 0 for k in s["kernels"] if "matmul" in k["name"])
    text = run_cli("trace", "report", summary_dir / "trace.pftrace").stdout
    assert "dma_in busy" in text and "--trace-detail full" in text


def test_busy_counters_integrate_to_the_unit_spans(run_dir):
    # Both detail levels carry the busy counters. In the full trace, each unit's counter
    # integrated over whole counter windows equals the cycles its instruction spans cover
    # there (inside a window the counter is that window's average).
    from spyre_sim.trace import analysis
    from spyre_sim.trace.model import load

    loaded = load(str(run_dir / "trace.json"))
    win = loaded.meta["counter_window_cycles"]
    busy = analysis.busy_counters(loaded)
    assert busy
    checked = 0
    for k in analysis.kernel_windows(loaded):
        lo, hi = k["start"] // win * win, -(-k["end"] // win) * win
        for (g, tr), (ts, vs) in busy.items():
            t = loaded.tracks.get((g, tr))
            covered = sum(max(0, min(e, hi) - max(s, lo)) for s, e, c in
                          zip(t.start, t.ends, t.cls) if c != "sync") if t else 0
            got = analysis.counter_integral(ts, vs, lo, hi)
            assert got == pytest.approx(covered, rel=1e-9, abs=1e-6), (k["name"], g, tr)
            checked += covered > 0
    assert checked > 10


def test_summary_trace_view_and_validate(summary_dir, tmp_path):
    page = _view(summary_dir, "trace.pftrace", tmp_path / "view.html")
    assert "utilisation" in page and "spyre.dram / chN GB/s" in page
    r = run_cli("trace", "validate", summary_dir / "trace.pftrace", "--report",
                summary_dir / "report.json")
    assert r.returncode == 2
    assert "summary trace" in r.stderr and "--trace-detail full" in r.stderr
