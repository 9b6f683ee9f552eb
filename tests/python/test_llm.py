"""LLM inference (spyre_sim.llm): greedy generation with a static KV cache on the simulated chip
matches eager PyTorch token for token; timing-only runs of a meta model (no weights on the
host) reuse a decode step's run exactly; the KV-cache update is a dma.scatter into the cache."""

import json
import subprocess

import pytest
import torch

import spyre_sim
from conftest import CLI, ROOT
from spyre_sim import llm


def test_tiny_generation_matches_eager_tokens_and_logits():
    r = llm.simulate("tiny", batch=2, prompt=8, new=16)
    assert r.tokens.shape == (2, 16)
    assert r.tokens_match is True, (r.tokens, llm.eager_generate)
    assert r.logits_match is True, r.max_abs_err
    assert [s["phase"] for s in r.steps] == ["prefill"] + ["decode"] * 15
    assert r.steps[0]["tokens"] == 16 and r.steps[1]["tokens"] == 2
    assert r.ttft_us == r.steps[0]["device_time_us"] > 0
    assert r.tpot_us == pytest.approx(sum(s["device_time_us"] for s in r.steps[1:]) / 15)
    # every step's device time is split over the four classes and the time between kernels
    for s in r.steps:
        total = sum(s["by_class_us"].values()) + s["between_kernels_us"]
        assert total == pytest.approx(s["device_time_us"], abs=0.01)
        assert s["between_kernels_us"] < 0.3 * s["device_time_us"]
        assert s["by_class_us"]["attention"] > 0 and s["by_class_us"]["mlp"] > 0


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_two_layer_models_generate_eager_tokens(name):
    import transformers

    if name == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=512, n_positions=64, n_embd=128, n_layer=2,
                                      n_head=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    else:
        cfg = transformers.LlamaConfig(vocab_size=512, hidden_size=128, intermediate_size=256,
                                       num_hidden_layers=2, num_attention_heads=4,
                                       num_key_value_heads=2, max_position_embeddings=64)
    r = llm.simulate(cfg, prompt=8, new=16, context=32)
    assert r.tokens_match is True
    assert r.logits_match is True, r.max_abs_err


def test_timing_only_meta_model_reuses_decode_runs_exactly():
    # the model is built on the meta device: no parameter has storage
    reused = llm.simulate("tiny", prompt=8, new=4, context=32, timing_only=True)
    every = llm.simulate("tiny", prompt=8, new=4, context=32, timing_only=True, reuse=False)
    assert [s["reused"] for s in reused.steps] == [False, False, True, True]
    assert not any(s["reused"] for s in every.steps)
    assert [s["cycles"] for s in reused.steps] == [s["cycles"] for s in every.steps]
    assert reused.tokens is None and reused.tokens_match is None
    assert reused.weight_bytes == sum(p.numel() * 2 for p in llm.build_model(
        llm.load_config("tiny"), meta=True).parameters())
    # decode reads every weight once: at least the weight bytes move
    assert every.steps[1]["dram_read_bytes"] >= reused.weight_bytes


def test_decode_step_updates_the_cache_with_a_scatter(tmp_path):
    # the compiled decode graph writes its new key/value rows with dma.scatter (the position is
    # data: one graph serves every step), and the cache tensors change on the host
    from spyre_sim._core import core

    cfg = llm.load_config("tiny")
    lm = llm.build_model(cfg, meta=False)
    cache = llm._static_cache(cfg, 1, 16, torch.float16, torch.device("cpu"))
    step = llm._Step(lm, cache)
    spyre_sim.run(step, (torch.tensor([[3, 1, 4, 1, 5]]),), compare_eager=False)
    before = cache.layers[0].keys.clone()
    spyre_sim.run(step, (torch.tensor([[9]]),), compare_eager=False, save_ir=str(tmp_path))
    rows = (cache.layers[0].keys[0, 0].abs().sum(-1) > 0).nonzero().flatten().tolist()
    assert rows == [0, 1, 2, 3, 4, 5]
    assert torch.equal(cache.layers[0].keys[:, :, :5], before[:, :, :5])
    assert int(cache.layers[0].cumulative_length) == 6
    (ir,) = list(tmp_path.glob("*.ir.json"))
    exe = core.Executable.from_ir(ir.read_text(), "spyre", [], str(ir))
    assert "dma.scatter" in exe.assembly
    # per layer: the keys, the values and the cache's position counter are updated in place
    assert sum(b["mutated"] for b in exe.inputs) == 3 * cfg.num_hidden_layers


def test_index_copy_into_an_input_writes_the_host_tensor():
    cache = torch.zeros(2, 16, 8, dtype=torch.float16)
    k = torch.randn(2, 3, 8, dtype=torch.float16)
    pos = torch.tensor([5, 9, 2])
    expected = cache.clone().index_copy_(1, pos, k)

    def f(cache, k, pos):
        cache.index_copy_(1, pos, k)
        return cache.sum(-1)

    r = spyre_sim.run(f, (cache, k, pos))
    assert r.summary["outputs_match"]
    assert torch.equal(cache, expected)


def test_meta_model_refuses_a_functional_run():
    with pytest.raises(Exception, match="meta tensors"):
        lm = llm.build_model(llm.load_config("tiny"), meta=True)
        llm.simulate(lm, prompt=4, new=2)


@pytest.mark.parametrize("model,msg", [
    ("no-such-model", "not a bundled model"),
    ("/nonexistent/config.json", "no such file"),
])
def test_bad_model_names_are_clear_errors(model, msg):
    with pytest.raises(llm.LlmError, match=msg):
        llm.simulate(model)


def test_bad_generation_parameters_are_clear_errors():
    with pytest.raises(llm.LlmError, match="context"):
        llm.simulate("tiny", prompt=8, new=4, context=8, timing_only=True)
    with pytest.raises(llm.LlmError, match="new"):
        llm.simulate("tiny", new=0, timing_only=True)
    with pytest.raises(llm.LlmError, match="max_position_embeddings"):
        llm.simulate("tiny", prompt=8, new=4, context=100000, timing_only=True)


def test_layer_extrapolation_is_close_to_the_full_simulation():
    # The tiny Llama at 6 layers, simulated whole and extrapolated from its first 2 and 4:
    # DRAM traffic and kernel count grow by exactly one layer's per layer; the device time is
    # an estimate (each layer starts in another DRAM state), within 3 % here.
    cfg = llm.load_config("tiny")
    cfg.num_hidden_layers = 6
    full = llm.simulate(cfg, prompt=8, new=2, context=32, timing_only=True)
    est = llm.simulate(cfg, prompt=8, new=2, context=32, timing_only=True, extrapolate=(2, 4))
    assert est.extrapolated["layers"] == 6 and est.extrapolated["from_layers"] == [2, 4]
    assert est.weight_bytes == full.weight_bytes
    for f, e in zip(full.steps, est.steps):
        assert e["extrapolated"] and not f["extrapolated"]
        for k in ("dram_read_bytes", "dram_write_bytes", "kernels", "phase", "tokens"):
            assert e[k] == f[k], k
        assert e["device_time_us"] == pytest.approx(f["device_time_us"], rel=0.03)
    assert "ESTIMATE: extrapolated to 6 layers from simulations of 2 and 4" in est.text()


def test_layer_extrapolation_errors_name_the_option(capsys):
    for layers, msg in [((2,), "expected two layer counts"),
                        ((4, 2), r"expected layer counts 1 <= a < b < 2 .* got \(4, 2\)"),
                        ((1, 2), r"expected layer counts 1 <= a < b < 2 .* got \(1, 2\)"),
                        (("1", 2), "expected two layer counts")]:
        with pytest.raises(llm.LlmError, match="^extrapolate: " + msg):
            llm.simulate("tiny", timing_only=True, extrapolate=layers)
    with pytest.raises(llm.LlmError, match="^extrapolate: .* needs timing_only=True"):
        llm.simulate("llama-3.1-8b", extrapolate=(2, 4))
    with pytest.raises(llm.LlmError, match="^extrapolate: .* has no trace"):
        llm.simulate("llama-3.1-8b", timing_only=True, extrapolate=(2, 4), trace="t.json")
    with pytest.raises(llm.LlmError, match="^extrapolate: takes a model name"):
        llm.simulate(llm.build_model(llm.load_config("tiny"), meta=True), timing_only=True,
                     extrapolate=(1, 2))
    cfg = llm.load_config("tiny")
    cfg.num_hidden_layers, cfg.layer_types = 4, ["full_attention", "sliding_attention"] * 2
    with pytest.raises(llm.LlmError, match="^extrapolate: the model's layers are not all alike"):
        llm.simulate(cfg, timing_only=True, extrapolate=(1, 2))
    capsys.readouterr()
    assert llm.main(["tiny", "--timing-only", "--extrapolate-layers", "2,x"]) == 2
    assert "--extrapolate-layers: expected A,B (two layer counts), got '2,x'" in \
        capsys.readouterr().err
    assert llm.main(["tiny", "--timing-only", "--extrapolate-layers", "1,3"]) == 2
    assert "--extrapolate-layers: expected layer counts 1 <= a < b < 2" in capsys.readouterr().err


def test_cli_writes_json_and_jsonl(tmp_path):
    exe = str(CLI)
    j, jl = tmp_path / "r.json", tmp_path / "steps.jsonl"
    out = subprocess.run([exe, "llm", "tiny", "--prompt", "8", "--new", "3", "--timing-only",
                          "--json", str(j), "--jsonl", str(jl)], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "TTFT" in out.stdout and "TPOT" in out.stdout
    lines = [json.loads(x) for x in jl.read_text().splitlines()]
    assert [x["phase"] for x in lines] == ["prefill", "decode", "decode"]
    summary = json.loads(j.read_text())
    assert summary["ttft_us"] == lines[0]["device_time_us"]
    again = subprocess.run([exe, "llm", "tiny", "--timing-only", "--json", str(j)],
                           capture_output=True, text=True, cwd=ROOT)
    assert again.returncode == 2 and "exists" in again.stderr
    bad = subprocess.run([exe, "llm", "nope"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "not a bundled model" in bad.stderr


def test_reduction_reading_a_table_at_r_mod_n_matches_eager(tmp_path):
    # RoPE inside q.k: the reduction variable indexes a table at ModularIndexing(r0, 1, 32).
    # Split at 32 the reduced dims do not merge, so the tile program keeps r0 whole and
    # computes the table index on the SFP (a gather).
    x, t = torch.randn(8, 64).half(), torch.randn(32).half()

    def f(x, t):
        return (x * torch.cat([t, t]).float().cos().half()).sum(-1)

    r = spyre_sim.run(f, (x, t), save_ir=str(tmp_path))
    assert r.summary["outputs_match"], r.summary["max_abs_err"]
    (ir,) = [json.loads(p.read_text()) for p in tmp_path.glob("*.ir.json")]
    loads = [o["index"]["expr"] for n in ir["nodes"] for o in n.get("body", []) if o["op"] == "load"]
    assert "ModularIndexing(r0, 1, 32)" in loads


def test_generation_trace_has_a_span_per_step_over_the_kernels(tmp_path):
    path = tmp_path / "gen.json"
    r = llm.simulate("tiny", prompt=8, new=3, timing_only=True, trace=str(path))
    d = json.loads(path.read_text())
    spans = [e for e in d["traceEvents"] if e.get("cat") == "llm"]
    assert [e["name"] for e in spans] == ["prefill", "decode 1", "decode 2"]
    assert [e["dur"] for e in spans] == [s["device_time_us"] for s in r.steps]
    assert spans[1]["ts"] == pytest.approx(spans[0]["dur"])
    # every step's kernels are in the trace, each step's shifted to start where the last ended
    ends = [e["ts"] + e["dur"] for e in d["traceEvents"] if e["ph"] == "X"]
    assert max(ends) == pytest.approx(sum(s["device_time_us"] for s in r.steps), rel=1e-6)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen.json"]  # no step files left


def test_sweep_llm_entries_give_tpot_per_batch_context_and_chip_point(tmp_path):
    spec = tmp_path / "serve.yaml"
    spec.write_text("""
models:
  - {llm: tiny, batch: [1, 2], context: [32, 64], prompt: 8, new: 4}
grid:
  lx.size_bytes: [1048576, 2097152]
plots:
  - {metric: tpot_us, x: context, series: batch, where: {lx.size_bytes: 2097152}}
""")
    rows = spyre_sim.sweep(str(spec), out=str(tmp_path / "out"), jobs=2)
    assert len(rows) == 8 and all(r["status"] == "ok" for r in rows), rows
    assert {(r["batch"], r["context"]) for r in rows} == {(1, 32), (2, 32), (1, 64), (2, 64)}
    for r in rows:
        assert r["tpot_us"] > 0 and r["ttft_us"] > 0 and r["new"] == 4
        total = r["ttft_us"] + 3 * r["tpot_us"]
        assert r["tokens_per_s"] == pytest.approx(r["batch"] * 4 / (total * 1e-6))
    # the same point simulated through spyre_sim.llm gives the same TTFT and TPOT
    one = llm.simulate("tiny", batch=2, prompt=8, new=4, context=64, timing_only=True,
                       set=["lx.size_bytes=1048576"])
    (row,) = [r for r in rows if r["batch"] == 2 and r["context"] == 64
              and r["lx.size_bytes"] == 1048576]
    assert row["ttft_us"] == pytest.approx(one.ttft_us) and row["tpot_us"] == pytest.approx(
        one.tpot_us)
    assert (tmp_path / "out" / "plots").is_dir() and any((tmp_path / "out" / "plots").iterdir())
    # the plot's lines: one per batch over the contexts, not one per (batch, context) entry
    from spyre_sim.sweeps import plot, spec as spec_mod

    params = ["lx.size_bytes", *spec_mod.LLM_COLUMNS]
    _, lines, _ = plot.line_groups(rows, params, "tpot_us", "context", "batch",
                                   {"lx.size_bytes": 2097152})
    assert {k: len(v) for k, v in lines.items()} == {("tiny", 1): 2, ("tiny", 2): 2}
    # and the same from results.csv (`spyre-sim sweep plot`): metrics never split lines
    rows_csv, params_csv = plot.load_csv(str(tmp_path / "out" / "results.csv"))
    assert "tpot_us" not in params_csv and "batch" in params_csv
    _, lines, _ = plot.line_groups(rows_csv, params_csv, "tpot_us", "context", "batch",
                                   {"lx.size_bytes": 2097152})
    assert {k: len(v) for k, v in lines.items()} == {("tiny", 1): 2, ("tiny", 2): 2}


def _tiny_config_file(tmp_path, layers: int):
    d = json.loads(open(llm.bundled_path("tiny")).read())
    d["num_hidden_layers"] = layers
    path = tmp_path / f"tiny{layers}.json"
    path.write_text(json.dumps(d))
    return path


def test_sweep_llm_entry_extrapolates_layers_as_spyre_sim_llm_does(tmp_path):
    cfg = _tiny_config_file(tmp_path, 6)
    spec = tmp_path / "est.yaml"
    spec.write_text(f"""
models:
  - {{llm: {cfg}, batch: 1, context: 32, prompt: 8, new: 2, extrapolate_layers: [2, 4]}}
grid:
  lx.size_bytes: [2097152]
""")
    (row,) = spyre_sim.sweep(str(spec), out=str(tmp_path / "out"), jobs=1)
    assert row["status"] == "ok" and row["extrapolate_layers"] == "2,4", row
    assert row["model"].endswith("/x2-4") and row["util.pt"] is None
    one = llm.simulate(str(cfg), prompt=8, new=2, context=32, timing_only=True,
                       set=["lx.size_bytes=2097152"], extrapolate=(2, 4))
    assert row["ttft_us"] == pytest.approx(one.ttft_us, rel=1e-9)
    assert row["tpot_us"] == pytest.approx(one.tpot_us, rel=1e-9)
    assert row["kernels"] == sum(s["kernels"] for s in one.steps)
    assert row["dram_bytes"] == sum(s["dram_bytes"] for s in one.steps)
    names = sorted(p.name for p in (tmp_path / "out" / "ir").rglob("*.json"))
    assert names == ["capture.json", "decode.l2.json", "decode.l4.json", "prefill.l2.json",
                     "prefill.l4.json"]


def test_sweep_llm_entry_errors_name_the_key(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text("models:\n  - {llm: nope, batch: 1}\ngrid:\n  chip.cores: [8]\n")
    with pytest.raises(spyre_sim.SpecError, match="not a bundled model"):
        spyre_sim.sweep(str(spec), out=str(tmp_path / "o"))
    spec.write_text("models:\n  - {llm: tiny, extrapolate_layers: [1, 4]}\n"
                    "grid:\n  chip.cores: [8]\n")
    with pytest.raises(spyre_sim.SpecError, match=r"bad.yaml:2: models\[0\]"
                       r".extrapolate_layers: expected layer counts 1 <= a < b < 2"):
        spyre_sim.sweep(str(spec), out=str(tmp_path / "o"))
    spec.write_text("models:\n  - {llm: tiny, extrapolate_layers: 2}\ngrid:\n  chip.cores: [8]\n")
    with pytest.raises(spyre_sim.SpecError, match=r"extrapolate_layers: expected two layer"):
        spyre_sim.sweep(str(spec), out=str(tmp_path / "o"))
    spec.write_text("models:\n  - {llm: tiny, batch: [0]}\ngrid:\n  chip.cores: [8]\n")
    with pytest.raises(spyre_sim.SpecError, match="batch"):
        spyre_sim.sweep(str(spec), out=str(tmp_path / "o"))
