"""The spyre-sim CLI: the run summary, JSON output, program files and bad input."""

import json
import pathlib

import pytest

from spyre_sim.trace import names
from spyre_sim.trace.read import open_trace

ROOT = pathlib.Path(__file__).resolve().parents[2]
IR = ROOT / "tests" / "data" / "ir"


def test_run_model_file_json(cli, tmp_path):
    r = cli("run", ROOT / "tools/models/mlp_block.py", "--json", "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    for key, typ in [("cycles", int), ("device_time_us", float), ("clock_ghz", float),
                     ("arch", str), ("kernels", list), ("stats", dict), ("trace", str)]:
        assert isinstance(s[key], typ), key
    assert s["outputs_match"] is True
    assert all({"name", "cycles"} <= set(k) for k in s["kernels"])
    for f in ("summary.json", "stats.json", "report.json", "arch.yaml", "trace.pftrace"):
        assert (tmp_path / "o" / f).is_file(), f
    # With no trace option: a summary Perfetto trace of kernels and unit activity.
    t = open_trace(str(tmp_path / "o" / "trace.pftrace"))
    assert t.meta["format"] == "perfetto" and t.meta["detail"] == "summary"
    events = list(t.events())
    counters = {(e["group"], e["name"]) for e in events if e["ph"] == "counter"}
    assert {("spyre.core_0", "dma_in busy"), ("spyre.core_0", "pt0 busy"),
            ("spyre.core_0", "sfp0 busy")} <= counters
    tracks = {(e["group"], e["track"]) for e in events if e["ph"] == "span"}
    assert ("spyre", "kernels") in tracks
    assert not any(names.is_core(g) or names.is_dram(g) for g, _ in tracks), tracks
    assert not any(e["ph"] == "flow" for e in events)


def test_no_trace_and_full_detail(cli, tmp_path):
    r = cli("run", IR / "matmul.json", "--arch", "tiny", "--no-trace", "--out", tmp_path / "n")
    assert r.returncode == 0, r.stderr
    assert "trace             none (--no-trace)" in r.stdout
    assert not any(p.name.startswith("trace") for p in (tmp_path / "n").iterdir())
    r = cli("run", IR / "matmul.json", "--arch", "tiny", "--no-trace", "--trace",
            tmp_path / "t.pftrace", "--out", tmp_path / "x")
    assert r.returncode == 2 and "--no-trace" in r.stderr and "--trace" in r.stderr
    r = cli("run", IR / "matmul.json", "--arch", "tiny", "--trace-detail", "most",
            "--out", tmp_path / "y")
    assert r.returncode == 2 and "--trace-detail" in r.stderr and "most" in r.stderr
    r = cli("run", IR / "matmul.json", "--arch", "tiny", "--trace-detail", "full",
            "--out", tmp_path / "f")
    assert r.returncode == 0, r.stderr
    t = open_trace(str(tmp_path / "f" / "trace.pftrace"))
    assert t.meta["detail"] == "full"
    spans = [e for e in t.events() if e["ph"] == "span"]
    assert any(e["group"] == "spyre.core_0" and e["track"] == "pt0" and e["name"] == "pt.mm"
               for e in spans)
    assert "trace validate" in r.stdout


def test_run_ir_and_program_round_trip(cli, tmp_path):
    r = cli("run", IR / "matmul.json", "--arch", "tiny", "--json", "--out", tmp_path / "a")
    assert r.returncode == 0, r.stderr
    cycles = json.loads(r.stdout)["cycles"]
    assert json.loads(r.stdout)["outputs_match"] is None
    r = cli("compile", IR / "matmul.json", "--arch", "tiny", "-o", tmp_path / "m.s")
    assert r.returncode == 0, r.stderr
    assert cli("asm", tmp_path / "m.s", "-o", tmp_path / "m.bin").returncode == 0
    r = cli("disasm", tmp_path / "m.bin")
    assert r.returncode == 0 and r.stdout == (tmp_path / "m.s").read_text()
    r = cli("run", tmp_path / "m.bin", "--arch", "tiny", "--json", "--out", tmp_path / "b")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["cycles"] == cycles


def test_arch_show_lists_every_parameter(cli):
    r = cli("arch", "show")
    assert r.returncode == 0
    for key in ("chip.cores", "pt.rows", "lx.size_bytes", "dram.bw_gbps"):
        line = next(l for l in r.stdout.splitlines() if l.startswith(key))
        assert len(line.split()) >= 4, line


def _bad(cli, tmp_path, *args):
    r = cli(*args, "--out", tmp_path / "bad") if args[0] == "run" else cli(*args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    return r.stderr


def test_bad_input_is_one_clear_message(cli, tmp_path):
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{ not json")
    assert "bad.json" in _bad(cli, tmp_path, "run", bad_json) 
    ir = json.loads((IR / "matmul.json").read_text())
    del ir["nodes"][0]["kind"]
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(ir))
    err = _bad(cli, tmp_path, "run", missing)
    assert "missing.json" in err and "kind" in err
    assert "unknown architecture" in _bad(cli, tmp_path, "run", IR / "matmul.json", "--arch", "nope")
    asm = tmp_path / "p.s"
    asm.write_text(".spyre 1\n.cores 1\n.core 0\n  pt.mm cl=0\n")
    assert "p.s:4" in _bad(cli, tmp_path, "run", asm)
    corrupt = tmp_path / "p.bin"
    corrupt.write_bytes(b"SPYREPRG\x01\x00\x00\x00")
    assert "truncated" in _bad(cli, tmp_path, "run", corrupt)


def test_unsupported_op_names_the_op(cli, tmp_path):
    # linalg.ldl_factor has no Inductor lowering and none in spyre-sim (no decomposition,
    # select.h): it stays a fallback kernel, which the device refuses.
    model = tmp_path / "ldl.py"
    model.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.linalg.ldl_factor(x).LD\n"
        "model = M()\n"
        "example_inputs = (torch.randn(8, 8),)\n")
    err = _bad(cli, tmp_path, "run", model)
    assert "aten.linalg_ldl_factor_ex" in err and "unsupported op" in err, err
    assert "ldl.py:4" in err, err


@pytest.mark.parametrize("sub", [["llm"], ["regress"], ["sweep"], ["trace"], ["trace", "validate"],
                                 ["run"], ["compile"]])
def test_help_and_usage_errors_of_every_subcommand(cli, sub):
    # --help prints the usage and exits 0; a bad command line is bad input (exit 2) with the
    # parser's message, never an internal error (the Python subcommands once reported
    # argparse's exit as one: `spyre-sim llm --help` exited 3).
    h = cli(*sub, "--help")
    assert h.returncode == 0, (h.stdout, h.stderr)
    assert "usage" in h.stdout.lower() and "internal error" not in h.stderr
    b = cli(*sub, "--no-such-option")
    assert b.returncode == 2, (b.stdout, b.stderr)
    assert ("required" in b.stderr or "--no-such-option" in b.stderr)
    assert "internal error" not in b.stderr
