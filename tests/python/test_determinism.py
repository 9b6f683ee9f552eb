"""Runs are deterministic: the same model and configuration give byte-identical stats and
traces, and a timing-only run gives exactly the functional run's timing (its stats and trace,
byte for byte). Parallel sweep and regression workers against a serial run: test_sweep.py
(test_results_do_not_depend_on_worker_count_or_ray) and test_regress.py."""

import json

from conftest import MODELS


def _run(cli, out, *extra):
    r = cli("run", MODELS / "mlp_block.py", "--out", out, "--trace-detail", "full", *extra)
    assert r.returncode == 0, r.stderr
    return out


def _without(path, out, drop=()):
    """A JSON output with the run's own folder replaced and the named keys removed."""
    text = path.read_text().replace(str(out), "<out>")
    doc = json.loads(text)
    for key in drop:
        doc.pop(key, None)
    return doc


def test_two_runs_write_the_same_bytes_and_timing_only_the_same_timing(cli, tmp_path):
    a = _run(cli, tmp_path / "a")
    b = _run(cli, tmp_path / "b")
    t = _run(cli, tmp_path / "t", "--timing-only")
    for name in ("stats.json", "trace.pftrace", "arch.yaml", "graph_0.ir.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    # Only where the run wrote its files (and when) differs.
    assert _without(a / "report.json", a) == _without(b / "report.json", b)
    assert _without(a / "summary.json", a) == _without(b / "summary.json", b)
    assert (_without(a / "provenance.json", a, ["created_utc"])
            == _without(b / "provenance.json", b, ["created_utc"]))
    # Timing-only computes no values and gives the same cycles, unit activity and trace.
    for name in ("stats.json", "trace.pftrace"):
        assert (a / name).read_bytes() == (t / name).read_bytes(), name
    functional = _without(a / "summary.json", a, ["outputs_match", "max_abs_err", "tolerance"])
    timing = _without(t / "summary.json", t, ["outputs_match", "max_abs_err", "tolerance"])
    assert functional == timing
    assert json.loads((a / "summary.json").read_text())["outputs_match"] is True
