"""The program cache: a second compile of the same graph for the same chip and compiler settings
by the same build is read from disk and runs exactly as the compiled one; any change of IR
(model, torch version), chip configuration, compiler setting or build misses."""

import json
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import CLI
from spyre_sim._core import core

ROOT = pathlib.Path(__file__).resolve().parents[2]
IR = ROOT / "tests" / "data" / "ir"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("SPYRE_SIM_CACHE", str(folder))
    monkeypatch.delenv("SPYRE_SIM_CACHE_MAX_MB", raising=False)
    return folder


def entries(folder):
    return sorted((folder / "programs").glob("*.entry")) if (folder / "programs").exists() else []


def compile_ir(text, arch="spyre", sets=(), file="<ir>"):
    return core.Executable.from_ir(text, arch, list(sets), file, True)


def test_a_second_compile_comes_from_the_cache_and_runs_the_same(cache):
    text = (IR / "mlp_block.json").read_text()
    first = compile_ir(text, file="a.ir.json")
    second = compile_ir(text, file="b.ir.json")
    assert (first.from_cache, second.from_cache) == (False, True)
    assert len(entries(cache)) == 1
    assert second.assembly == first.assembly
    assert (second.inputs, second.outputs) == (first.inputs, first.outputs)
    r1, r2 = json.loads(first.report), json.loads(second.report)
    assert (r1["file"], r2["file"]) == ("a.ir.json", "b.ir.json")  # the report names this run's IR
    r1.pop("file"), r2.pop("file")
    assert r1 == r2
    # A functional run on the same seeded random inputs: same outputs, cycles and statistics.
    run1 = first.run([], "", False, "", "summary")
    run2 = second.run([], "", False, "", "summary")
    assert run1["outputs"] == run2["outputs"]
    assert json.loads(run1["summary"]) == json.loads(run2["summary"])


@pytest.mark.parametrize("change", ["model", "torch_version", "arch", "chip_set", "compiler_set"])
def test_any_change_of_what_a_compile_depends_on_misses(cache, change):
    text = (IR / "mlp_block.json").read_text()
    assert not compile_ir(text).from_cache
    assert compile_ir(text).from_cache
    arch, sets = "spyre", []
    if change == "model":
        text = (IR / "matmul.json").read_text()
    elif change == "torch_version":  # the same graph captured by another torch
        ir = json.loads(text)
        ir["torch_version"] = ir["torch_version"] + ".other"
        text = json.dumps(ir)
    elif change == "arch":
        arch = "tiny"
    elif change == "chip_set":
        sets = ["sfp.latency_cycles=9"]
    else:
        sets = ["compiler.fusion=off"]
    changed = compile_ir(text, arch, sets)
    assert not changed.from_cache
    assert len(entries(cache)) == 2
    assert compile_ir(text, arch, sets).from_cache  # and the changed one is kept in turn


def test_another_build_misses(cache, tmp_path):
    """A binary that differs by one byte (any rebuild of the compiler) finds nothing."""
    other = tmp_path / "spyre-sim-other"
    shutil.copy2(CLI.resolve(), other)
    with open(other, "ab") as f:
        f.write(b"\0")

    def hits(binary):
        r = subprocess.run([str(binary), "run", str(IR / "matmul.json"), "--timing-only",
                            "--no-trace", "--out", str(tmp_path / "out")],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        m = re.search(r"program cache +(\d) of 1 graph", r.stdout)
        assert m, r.stdout
        return int(m.group(1))

    assert [hits(CLI), hits(CLI), hits(other), hits(other), hits(CLI)] == [0, 1, 0, 1, 1]
    assert len(entries(cache)) == 2


def test_a_corrupt_entry_is_compiled_again(cache):
    text = (IR / "matmul.json").read_text()
    compile_ir(text)
    (entry,) = entries(cache)
    entry.write_bytes(entry.read_bytes()[:100])
    again = compile_ir(text)
    assert not again.from_cache
    assert compile_ir(text).from_cache
    assert compile_ir(text).assembly == again.assembly


def test_no_cache_stores_nothing(cache, tmp_path, cli):
    r = cli("run", IR / "matmul.json", "--timing-only", "--no-trace", "--no-cache", "--out",
            tmp_path / "o")
    assert r.returncode == 0, r.stderr
    assert "program cache" not in r.stdout
    assert entries(cache) == []
    assert json.loads((tmp_path / "o" / "provenance.json").read_text())["program_cache"] is None


def test_the_size_cap_evicts_and_a_bad_cap_is_an_error(cache, monkeypatch):
    monkeypatch.setenv("SPYRE_SIM_CACHE_MAX_MB", "0")
    text = (IR / "matmul.json").read_text()
    assert not compile_ir(text).from_cache
    assert entries(cache) == []  # over the cap at once: evicted
    monkeypatch.setenv("SPYRE_SIM_CACHE_MAX_MB", "lots")
    with pytest.raises(core.SpyreError, match="SPYRE_SIM_CACHE_MAX_MB.*whole number"):
        compile_ir(text)


# ---------------------------------------------------------------- captured IR (spyre_capture.ir_cache)


def _counting_lowering(monkeypatch):
    """Counts Inductor lowerings (compile_fx_inner calls) the capture makes."""
    from spyre_capture import adapter
    calls = []
    real = adapter.compile_fx_inner

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(adapter, "compile_fx_inner", counted)
    return calls


def _ir_entries(folder):
    return sorted((folder / "ir").glob("*.entry")) if (folder / "ir").exists() else []


def test_a_second_run_of_a_model_skips_inductor_and_captures_the_same_ir(cache, tmp_path,
                                                                         monkeypatch):
    import torch
    import spyre_sim

    calls = _counting_lowering(monkeypatch)
    w = torch.randn(64, 32, dtype=torch.float16)

    def f(x, w):
        return torch.relu(x @ w) * 2

    x = torch.randn(16, 64, dtype=torch.float16)
    r1 = spyre_sim.run(f, [x, w], trace=None, save_ir=str(tmp_path / "a"))
    r2 = spyre_sim.run(f, [x, w], trace=None, save_ir=str(tmp_path / "b"))
    assert calls == [1]  # the second run lowered nothing
    assert (r1.from_cache, r2.from_cache) == ([False], [True])
    assert len(_ir_entries(cache)) == 1
    assert (tmp_path / "a" / "graph_0.ir.json").read_text() == \
        (tmp_path / "b" / "graph_0.ir.json").read_text()
    assert r2.outputs_match and r2.cycles == r1.cycles
    assert torch.equal(r1.outputs, r2.outputs)
    # cache=False: lowers and compiles again, stores nothing new
    r3 = spyre_sim.run(f, [x, w], trace=None, cache=False)
    assert calls == [1, 1] and r3.from_cache == [False] and r3.cycles == r1.cycles


def test_a_zero_dim_constant_is_keyed_by_its_value(cache):
    # A 0-dim fp16 constant (OpInfo's masked reductions have them) once stopped the capture:
    # its bytes were taken by viewing it as uint8, which torch refuses for a 0-dim tensor.
    import torch
    import spyre_sim

    def f(x):
        return x * torch.tensor(3.0, dtype=torch.float16)

    def g(x):
        return x * torch.tensor(5.0, dtype=torch.float16)

    x = torch.randn(8, 4, dtype=torch.float16)
    a = spyre_sim.run(f, [x], trace=None)
    b = spyre_sim.run(g, [x], trace=None)
    assert a.outputs_match and b.outputs_match
    assert len(_ir_entries(cache)) == 2  # another value, another key


@pytest.mark.parametrize("change", ["model", "shape", "constant", "torch_version", "capture_code"])
def test_any_change_of_what_a_capture_depends_on_lowers_again(cache, monkeypatch, change):
    import torch
    import spyre_sim
    from spyre_capture import ir_cache

    calls = _counting_lowering(monkeypatch)

    def f(x):
        return torch.sigmoid(x) + torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float16)

    def g(x):
        return torch.sigmoid(x) + torch.tensor([1.0, 2.0, 3.0, 5.0], dtype=torch.float16)

    def h(x):
        return torch.tanh(x) + torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float16)

    x = torch.randn(8, 4, dtype=torch.float16)
    spyre_sim.run(f, [x], trace=None)
    spyre_sim.run(f, [x], trace=None)
    assert calls == [1]
    fn, inputs = f, [x]
    if change == "model":
        fn = h
    elif change == "shape":
        inputs = [torch.randn(16, 4, dtype=torch.float16)]
    elif change == "constant":  # a tensor constant of the graph with other values
        fn = g
    elif change == "torch_version":
        monkeypatch.setattr(torch, "__version__", torch.__version__ + ".other")
    else:
        monkeypatch.setattr(ir_cache, "_DIGEST", ["another capture"])
    r = spyre_sim.run(fn, inputs, trace=None)
    assert calls == [1, 1], change
    assert r.outputs_match
    assert len(_ir_entries(cache)) == 2
