"""Bad input through the CLI: one message naming the file and the field, line, node or
instruction, and what was expected; exit status 2 (1 when the user's model file itself raises,
with its traceback); never a Python traceback of ours or an internal error; and no output
folder that looks complete. (Sweep specs and regression suites: test_sweep.py and
test_regress.py; unsupported ops: test_cli.py and tests/opinfo.)"""

import copy
import json

import pytest

from conftest import ROOT

IR = ROOT / "tests" / "data" / "ir"
MATMUL = json.loads((IR / "matmul.json").read_text())


def _ir(tmp_path, name, edit):
    doc = copy.deepcopy(MATMUL)
    edit(doc)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _text(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def _set(kv):
    return lambda tmp_path: [IR / "matmul.json", "--set", kv]


def _asm(body):
    return lambda tmp_path: [_text(tmp_path, "p.s", ".spyre 1\n.cores 1\n.core 0\n" + body)]


CASES = {
    "malformed JSON": (lambda t: [_text(t, "bad.json", "{ not json")], ["bad.json"]),
    "malformed YAML": (lambda t: [IR / "matmul.json", "--arch",
                                  _text(t, "a.yaml", "chip: {cores: 4\n")],
                       ["a.yaml:2", "end of map"]),
    "missing field": (lambda t: [_ir(t, "m.json", lambda d: d["nodes"][0].pop("kind"))],
                      ["m.json", "node op0", "kind"]),
    "wrong type": (lambda t: [_ir(t, "w.json",
                                  lambda d: d["buffers"][0].update(size="abc"))],
                   ["w.json", "buffer arg0_1", "field 'size'", "expected array"]),
    "unknown config key": (_set("pt.rwos=16"), ["pt.rwos", "did you mean pt.rows?"]),
    "zero bandwidth (fifo)": (_set("dram.bw_gbps=0"), ["dram.bw_gbps", "must be positive"]),
    "zero bandwidth (lpddr5)": (_set("dram.data_rate_mtps=0"),
                                ["dram.data_rate_mtps", "must be positive"]),
    "zero cores": (_set("chip.cores=0"), ["chip.cores", "must be in [1, 1024], got 0"]),
    "LX below one stick": (_set("lx.size_bytes=64"), ["lx.size_bytes", "one stick"]),
    "clock of 0": (_set("chip.clock_ghz=0"), ["chip.clock_ghz", "must be positive"]),
    "negative issue cost": (_set("core.issue_cycles=-1"),
                            ["core.issue_cycles", "must not be negative"]),
    "zero outstanding DMA": (_set("dma.max_outstanding=0"),
                             ["dma.max_outstanding", "must be positive"]),
    "unknown schema version": (lambda t: [_ir(t, "v.json", lambda d: d.update(version=7))],
                               ["v.json", "field 'version'", "expected 1"]),
    "missing buffer": (lambda t: [_ir(t, "b.json",
                                      lambda d: d["nodes"][0].update(outputs=["nope"]))],
                       ["b.json", "node op0", "unknown buffer 'nope'"]),
    "64-bit overflow": (lambda t: [_ir(t, "o.json", lambda d: d["buffers"][0].update(
        size=[2 ** 40, 2 ** 40], stride=[2 ** 40, 1]))], ["o.json", "overflows 64 bits"]),
    "truncated binary": (lambda t: [(t / "p.bin").write_bytes(b"SPYREPRG\x01\x00") and t / "p.bin"],
                         ["p.bin", "truncated"]),
    "unknown mnemonic": (_asm("  foo.bar x=1\n"), ["p.s:4", "unknown instruction 'foo.bar'"]),
    "unknown operand": (_asm("  dma.load dram=0 lx=0 bytes=128 bogus=3\n  halt\n"),
                        ["p.s:4", "no operand 'bogus'"]),
    "outside LX": (_asm("  sfp.un cl=0 fn=neg dt=f16 dst=99999999 dst_rs=1 dst_cs=1 a=0 a_rs=1 "
                        "a_cs=1 rows=1 cols=1\n  halt\n"),
                   ["core 0 instruction #0 (sfp.un)", "outside the LX"]),
    "outside DRAM": (_asm("  dma.load dram=999999999999 lx=0 bytes=128\n  halt\n"),
                     ["core 0 instruction #0 (dma.load)", "outside the DRAM"]),
    "deadlock": (_asm("  sync.wait q=0 tok=1\n  halt\n"), ["deadlock", "core 0"]),
    "unwritable output": (lambda t: [IR / "matmul.json", "--out", "/proc/spyre-sim/out"],
                          ["/proc/spyre-sim/out", "cannot create"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_gets_one_clear_message_and_status_2(case, cli, tmp_path):
    make, words = CASES[case]
    args = [str(a) for a in make(tmp_path)]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "out")]
    r = cli("run", *args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.startswith("spyre-sim: error: "), r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)
    out = tmp_path / "out"
    assert not (out / "summary.json").exists() and not (out / "stats.json").exists()


def test_a_model_file_that_raises_shows_its_traceback_and_exits_1(cli, tmp_path):
    model = _text(tmp_path, "m.py", "import torch\n\ndef helper():\n"
                                    "    raise ValueError('boom in the model')\n\nhelper()\n")
    r = cli("run", model, "--out", tmp_path / "out")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "Traceback (most recent call last)" in r.stderr
    assert 'm.py", line 6' in r.stderr and 'm.py", line 4, in helper' in r.stderr
    assert "ValueError: boom in the model" in r.stderr
    assert "runpy" not in r.stderr and "_cli.py" not in r.stderr  # the user's frames only
    assert not (tmp_path / "out" / "summary.json").exists()


def test_user_files_are_not_overwritten_by_a_failed_run(cli, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    mine = out / "notes.txt"
    mine.write_text("mine")
    r = cli("run", _text(tmp_path, "bad.json", "{"), "--out", out)
    assert r.returncode == 2 and mine.read_text() == "mine"
