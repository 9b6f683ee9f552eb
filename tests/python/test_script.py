"""`spyre-sim script FILE.py [ARGS]`, `spyre-sim --version` and the provenance of a run."""

import json
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
IR = ROOT / "tests" / "data" / "ir"


def test_a_script_gets_its_argv_and_the_spyre_sim_api(cli, tmp_path):
    script = tmp_path / "s.py"
    script.write_text(
        "import json, sys\n"
        "import spyre_sim, torch\n"
        "if __name__ == '__main__':\n"
        "    res = spyre_sim.regress(cases=['models/mlp_block'], presets=['tiny'], jobs=1)\n"
        "    r = spyre_sim.run(torch.nn.Linear(64, 64).half(),\n"
        "                      (torch.randn(8, 64, dtype=torch.float16),))\n"
        "    print(json.dumps({'argv': sys.argv, 'regress': res.exit_code,\n"
        "                      'rows': [x.status for x in res.rows], 'cycles': r.cycles,\n"
        "                      'match': r.outputs_match, 'version': spyre_sim.version()}))\n")
    r = cli("script", script, "a", "--flag")
    assert r.returncode == 0, (r.stdout, r.stderr)
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["argv"] == [str(script), "a", "--flag"]
    assert out["regress"] == 0 and out["rows"] == ["same"]
    assert out["cycles"] > 0 and out["match"] is True
    assert out["version"].startswith("spyre-sim ")


def test_an_exception_prints_the_traceback_and_exits_1(cli, tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("def f():\n    raise KeyError('nope')\n\nf()\n")
    r = cli("script", script)
    assert r.returncode == 1
    assert "Traceback (most recent call last)" in r.stderr
    assert f'File "{script}", line 4' in r.stderr and "KeyError: 'nope'" in r.stderr
    assert "spyre_sim/script.py" not in r.stderr


def test_sys_exit_and_a_missing_file(cli, tmp_path):
    script = tmp_path / "exit.py"
    script.write_text("import sys\nsys.exit(3)\n")
    assert cli("script", script).returncode == 3
    r = cli("script", tmp_path / "none.py")
    assert r.returncode == 2 and "none.py: no such file" in r.stderr


def test_version_names_the_commit(cli):
    r = cli("--version")
    assert r.returncode == 0
    assert re.fullmatch(r"spyre-sim \d+\.\d+\.\d+ \(commit ([0-9a-f]{40}|unknown)(, modified)?\)\n",
                        r.stdout), r.stdout


def test_a_run_records_its_provenance(cli, tmp_path):
    r = cli("run", IR / "matmul.json", "--arch", "tiny", "--set", "pt.rows=16", "--out",
            tmp_path / "o")
    assert r.returncode == 0, r.stderr
    prov = json.loads((tmp_path / "o" / "provenance.json").read_text())
    assert prov["command"][1:] == ["run", str(IR / "matmul.json"), "--arch", "tiny", "--set",
                                   "pt.rows=16", "--out", str(tmp_path / "o")]
    assert prov["arch"] == "tiny" and prov["sets"] == ["pt.rows=16"]
    ir_torch = json.loads((IR / "matmul.json").read_text())["torch_version"]
    assert prov["torch"] == {"version": ir_torch, "source": "ir"}
    assert prov["effective_config"] == "arch.yaml"
    assert "pt.rows: 16" in (tmp_path / "o" / "arch.yaml").read_text()
    version = cli("--version").stdout
    assert prov["spyre_sim"]["commit"] in version and prov["spyre_sim"]["version"] in version


def test_regress_and_an_ir_sweep_never_import_torch(cli, tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(f"models: [{IR / 'matmul.json'}]\narch: tiny\ngrid: {{chip.cores: [1, 2]}}\n")
    script = tmp_path / "no_torch.py"
    script.write_text(
        "import sys\n"
        "import spyre_sim\n"
        "if __name__ == '__main__':\n"
        "    res = spyre_sim.regress(cases=['gemm/mm_256'], jobs=1)\n"
        f"    rows = spyre_sim.sweep({str(spec)!r}, out={str(tmp_path / 'o')!r}, jobs=1)\n"
        "    print(res.exit_code, len(rows), 'torch' in sys.modules)\n")
    r = cli("script", script)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert r.stdout.split() == ["0", "2", "False"]
