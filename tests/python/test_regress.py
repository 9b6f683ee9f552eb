"""`spyre-sim regress`: the repository's suite against its stored baseline (the CI gate for
compiler changes), what a worse compiler setting looks like, tolerances, --update, bad input."""

import copy
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "regress" / "suite.yaml"
BASELINE = ROOT / "tests" / "regress" / "baseline.json"
IR = ROOT / "tests" / "data" / "ir"


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    from conftest import run_cli

    out = tmp_path_factory.mktemp("regress")
    r = run_cli("regress", "--json", "--out", out / "o")
    return r, out / "o"


def test_the_suite_matches_its_baseline(full_run):
    r, out = full_run
    assert r.returncode in (0, 1, 2), r.stderr
    res = json.loads(r.stdout)
    changed = [(x["key"], x["status"], x["baseline_cycles"], x["cycles"], x["error"])
               for x in res["rows"] if x["status"] != "same"]
    assert not changed, ("cycles differ from tests/regress/baseline.json; if the change is "
                         f"intended run `spyre-sim regress --update` and say why: {changed}")
    assert r.returncode == 0 and res["exit_code"] == 0
    assert res["stale_baselines"] == []


def test_the_suite_covers_the_zoo_gemms_and_memory_bound_kernels(full_run):
    res = json.loads(full_run[0].stdout)
    cases = {}
    for row in res["rows"]:
        cases.setdefault(row["case"], set()).add(row["preset"])
    zoo = {f"models/{p.stem}" for p in (IR / "models").glob("*.json")}
    assert zoo <= set(cases), zoo - set(cases)
    gemms = {c for c in cases if c.startswith("gemm/")}
    assert {"gemm/mm_256", "gemm/mm_4096", "gemm/mm_512x4096x4096", "gemm/mm_512x4096x12800",
            "gemm/bmm_8x128x2048x8192"} <= gemms
    assert {"membound/pointwise_chain", "membound/row_sum", "membound/softmax",
            "membound/layer_norm"} <= set(cases)
    # The device-layout cases exercise one chip parameter on "spyre" itself (their matmul
    # keeps IBM's 32-core division, which "tiny" does not have); every other case runs on
    # more than one preset.
    layout = {c for c in cases if c.startswith("layout/")}
    assert {"layout/mm_2048x8192x2048", "layout/pointwise_chain",
            "layout/transpose_4096x4096"} <= layout
    for case, presets in cases.items():
        assert "spyre" in presets and (len(presets) >= 2 or case in layout), (case, presets)


def test_memory_bound_cases_are_dram_bound_sizes(full_run):
    # 64 MiB in, at the chip's ~150 GB/s one-way: the DRAM bound alone is >= 0.45 ms.
    res = json.loads(full_run[0].stdout)
    for row in res["rows"]:
        if row["case"].startswith("membound/"):
            assert row["dram_bytes"] >= 64 << 20, row
            assert row["device_time_us"] >= (64 << 20) / 150e3, row


def test_baseline_holds_every_field_and_writes_provenance(full_run):
    _, out = full_run
    data = json.loads(BASELINE.read_text())
    assert "regress --update" in data["about"]
    for key, e in data["cases"].items():
        assert set(e) == {"cycles", "device_time_us", "dram_read_bytes", "dram_write_bytes",
                          "kernel_count", "kernels"}, key
        assert e["kernel_count"] == len(e["kernels"]) > 0
        assert max(e["kernels"].values()) <= e["cycles"]
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["command"][1:3] == ["regress", "--json"]
    assert prov["spyre_sim"]["version"] and prov["spyre_sim"]["commit"]
    assert prov["torch"]["version"].startswith("2.13")
    assert list((out / "configs").glob("spyre-*.yaml")) and list((out / "configs").glob("tiny-*"))


def test_fusion_off_is_caught_and_named(cli, tmp_path):
    r = cli("regress", "-k", "models/gpt2", "-k", "models/mlp_block", "--set",
            "compiler.fusion=off", "--out", tmp_path / "o")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "SLOWER models/gpt2@spyre" in r.stdout and "SLOWER models/mlp_block@tiny" in r.stdout
    assert "kernels that moved most" in r.stdout
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert set(res["regressions"]) == {"models/gpt2@spyre", "models/gpt2@tiny",
                                       "models/mlp_block@spyre", "models/mlp_block@tiny"}
    row = next(x for x in res["rows"] if x["key"] == "models/mlp_block@spyre")
    assert row["kernel_count"] > row["baseline_kernel_count"] and row["change"] > 0
    moved = row["kernels_moved"]
    assert moved and all(abs((m["now"] or 0) - (m["baseline"] or 0)) > 0 for m in moved)
    assert res["sets"] == ["compiler.fusion=off"]


def _one_case_suite(tmp_path, tolerance=None, baseline_cycles_scale=None):
    """A suite of mlp_block on tiny, with a baseline taken from the repository's."""
    case = {"name": "models/mlp_block", "ir": str(IR / "mlp_block.json"), "presets": ["tiny"]}
    if tolerance is not None:
        case["tolerance"] = tolerance
    suite = tmp_path / "suite.yaml"
    suite.write_text(json.dumps({"cases": [case]}))  # JSON is YAML
    if baseline_cycles_scale is not None:
        entry = copy.deepcopy(json.loads(BASELINE.read_text())["cases"]["models/mlp_block@tiny"])
        entry["cycles"] = int(entry["cycles"] * baseline_cycles_scale)
        (tmp_path / "baseline.json").write_text(json.dumps(
            {"cases": {"models/mlp_block@tiny": entry}}))
    return suite


def test_an_improvement_is_listed_and_does_not_fail(cli, tmp_path):
    suite = _one_case_suite(tmp_path, baseline_cycles_scale=1.10)
    r = cli("regress", suite, "--out", tmp_path / "o")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "faster: models/mlp_block@tiny" in r.stdout


@pytest.mark.parametrize("tolerance,code,status", [("5%", 0, "within"), (0.01, 1, "slower")])
def test_a_case_states_its_own_tolerance(cli, tmp_path, tolerance, code, status):
    suite = _one_case_suite(tmp_path, tolerance=tolerance, baseline_cycles_scale=0.98)
    r = cli("regress", suite, "--json", "--out", tmp_path / "o")
    assert r.returncode == code, (r.stdout, r.stderr)
    (row,) = json.loads(r.stdout)["rows"]
    assert row["status"] == status and row["change"] > 0.01


def test_update_writes_the_baseline_and_prints_what_changed(cli, tmp_path):
    suite = _one_case_suite(tmp_path)
    r = cli("regress", suite, "--out", tmp_path / "o")
    assert r.returncode == 2 and "no baseline for models/mlp_block@tiny" in r.stdout
    r = cli("regress", suite, "--update", "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    written = json.loads((tmp_path / "baseline.json").read_text())
    cycles = written["cases"]["models/mlp_block@tiny"]["cycles"]
    assert f"models/mlp_block@tiny: new -> {cycles:,}" in r.stdout
    assert written["cases"] == {k: v for k, v in json.loads(BASELINE.read_text())["cases"].items()
                                if k == "models/mlp_block@tiny"}
    assert cli("regress", suite, "--out", tmp_path / "o").returncode == 0
    written["cases"]["models/mlp_block@tiny"]["cycles"] = cycles + 7
    (tmp_path / "baseline.json").write_text(json.dumps(written))
    r = cli("regress", suite, "--update", "--out", tmp_path / "o")
    assert f"models/mlp_block@tiny: {cycles + 7:,} -> {cycles:,}" in r.stdout, r.stdout


def test_results_do_not_depend_on_the_worker_count(cli, tmp_path):
    runs = []
    for j in ("1", "2"):
        r = cli("regress", "-k", "gemm/mm_1024", "-k", "membound/row_sum", "-k", "models/bert",
                "-j", j, "--json", "--out", tmp_path / j)
        assert r.returncode == 0, r.stderr
        rows = json.loads(r.stdout)["rows"]
        runs.append([(x["key"], x["cycles"], x["dram_bytes"]) for x in rows])
    assert runs[0] == runs[1] and len(runs[0]) == 6


def test_the_python_api_returns_the_rows(tmp_path):
    import spyre_sim

    res = spyre_sim.regress(cases=["models/mlp_block"], presets=["tiny"], jobs=1)
    assert res.exit_code == 0 and [r.status for r in res.rows] == ["same"]
    df = res.dataframe()
    assert list(df["key"]) == ["models/mlp_block@tiny"] and int(df["cycles"][0]) > 0


def _bad(cli, tmp_path, *args):
    r = cli("regress", *args, "--out", tmp_path / "o")
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    return r.stderr


def test_bad_input_names_the_file_and_key(cli, tmp_path):
    assert "nope.yaml: no such file" in _bad(cli, tmp_path, tmp_path / "nope.yaml")
    s = tmp_path / "s.yaml"
    s.write_text("cases: [{name: a, ir: x.json}\n")
    assert "s.yaml:2" in _bad(cli, tmp_path, s) and "malformed YAML" in _bad(cli, tmp_path, s)
    s.write_text(f"cases:\n  - {{name: a, ir: {IR / 'matmul.json'}, tolerence: 1%}}\n")
    err = _bad(cli, tmp_path, s)
    assert "s.yaml:2: cases[0].tolerence: unknown key; did you mean 'tolerance'?" in err, err
    s.write_text("cases:\n  - {name: a, ir: missing.json}\n")
    assert "cases[0].ir: missing.json: no such file" in _bad(cli, tmp_path, s)
    s.write_text(f"presets: [spyre, tinny]\ncases: [{{name: a, ir: {IR / 'matmul.json'}}}]\n")
    assert "unknown preset 'tinny'; did you mean 'tiny'?" in _bad(cli, tmp_path, s)
    s.write_text(f"cases: [{{name: a, ir: {IR / 'matmul.json'}, tolerance: lots}}]\n")
    assert "cases[0].tolerance: expected a fraction" in _bad(cli, tmp_path, s)
    s.write_text(f"cases: [{{name: a, ir: {IR / 'matmul.json'}, set: {{chip.cores: 0}}}}]\n")
    assert "cases[0].set" in _bad(cli, tmp_path, s)
    assert "compiler.fusin" in _bad(cli, tmp_path, "--set", "compiler.fusin=off")
    assert "no case matches -k nothing" in _bad(cli, tmp_path, "-k", "nothing")
    assert "takes no --set" in _bad(cli, tmp_path, "--update", "--set", "chip.cores=4")
    bad_base = tmp_path / "b.json"
    bad_base.write_text("[1, 2]")
    assert "b.json" in _bad(cli, tmp_path, "--baseline", bad_base, "-k", "mlp_block")


def test_a_case_that_stops_compiling_is_a_regression(cli, tmp_path):
    suite = _one_case_suite(tmp_path, baseline_cycles_scale=1.0)
    r = cli("regress", suite, "--set", "lx.size_bytes=70000", "--out", tmp_path / "o")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "FAILED models/mlp_block@tiny" in r.stdout and "does not fit LX" in r.stdout
