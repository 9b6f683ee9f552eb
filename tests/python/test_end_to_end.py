"""End to end with real torch: Inductor capture -> C++ compiler -> SystemC chip model."""

import torch

import spyre_sim


def _check(result, n_runs_equal):
    assert result.outputs_match is True, str(result)
    assert result.cycles > 0
    assert result.device_time_us == result.cycles / (result.summary["clock_ghz"] * 1000.0)
    assert result.kernels and all(k["cycles"] > 0 for k in result.kernels)
    assert result.cycles == n_runs_equal.cycles
    assert result.kernels == n_runs_equal.kernels


def test_mlp_block_matches_eager_and_is_deterministic(model):
    m, inputs = model("mlp_block")
    first = spyre_sim.run(m, inputs)
    second = spyre_sim.run(m, inputs)
    _check(first, second)
    s = first.summary
    assert s["arch"] == "spyre" and s["cores"] == 32
    assert s["dram"]["read_bytes"] > 0 and s["dram"]["write_bytes"] > 0
    assert 0 < s["utilisation"]["pt"] <= 1 and 0 < s["utilisation"]["sfp"] <= 1
    # Both linear layers ran on the PT array.
    assert sum(1 for r in first.reports for k in r["kernels"] if k["unit"] == "pt") == 2


def test_bare_matmul_matches_eager(model):
    m, inputs = model("matmul")
    first = spyre_sim.run(m, inputs, arch="tiny")
    _check(first, spyre_sim.run(m, inputs, arch="tiny"))
    assert first.summary["cores"] == 4


def test_elementwise_chain_matches_eager(model):
    m, inputs = model("eltwise_chain")
    first = spyre_sim.run(m, inputs)
    _check(first, spyre_sim.run(m, inputs))


def test_torch_compile_backend_by_name_and_last_result(model):
    m, inputs = model("eltwise_chain")
    torch._dynamo.reset()
    compiled = torch.compile(m, backend="spyre_sim")
    with torch.no_grad():
        out = compiled(*inputs)
    torch._dynamo.reset()
    ok, err, tol = spyre_sim.api.compare(out, spyre_sim.api.reference(m, inputs))
    assert ok, (err, tol)
    last = spyre_sim.last_result()
    assert last is not None and last.cycles > 0


def test_timing_only_gives_the_same_cycles(model):
    m, inputs = model("matmul")
    functional = spyre_sim.run(m, inputs, arch="tiny")
    timing = spyre_sim.run(m, inputs, arch="tiny", timing_only=True)
    assert timing.cycles == functional.cycles
    assert timing.outputs_match is None


def test_set_changes_the_chip(model):
    m, inputs = model("matmul")
    slow = spyre_sim.run(m, inputs, arch="tiny", set=["dram.channels=2"])
    fast = spyre_sim.run(m, inputs, arch="tiny")
    assert slow.outputs_match and slow.cycles > fast.cycles
    fifo_slow = spyre_sim.run(m, inputs, arch="tiny", set=["dram.impl=fifo", "dram.bw_gbps=15"])
    fifo = spyre_sim.run(m, inputs, arch="tiny", set=["dram.impl=fifo"])
    assert fifo_slow.outputs_match and fifo_slow.cycles > fifo.cycles


def test_graph_breaks_compile_and_run_every_subgraph():
    class Broken(torch.nn.Module):
        def forward(self, x):
            y = torch.softmax(x, dim=-1) * 2
            torch._dynamo.graph_break()
            return y + x.sum(dim=-1, keepdim=True)

    x = torch.randn(32, 64, dtype=torch.float16)
    r = spyre_sim.run(Broken(), (x,), arch="tiny")
    assert r.summary["subgraphs"] == 2
    assert len(r.reports) == 2 and len(r.summary["traces"]) == 2
    assert r.outputs_match is True, str(r)
    # Device time adds up over the subgraph runs.
    assert r.cycles == sum(st["chip"]["cycles"] for st in r.summary["stats"]["subgraphs"])


def test_empty_tensors_compute_nothing_and_empty_products_give_torchs_values():
    a = torch.randn(0, 5, dtype=torch.float16)
    b = torch.randn(5, 10, dtype=torch.float16)
    r = spyre_sim.run(lambda x, y: torch.mm(x, y) + 1, (a, b))
    assert r.outputs_match is True and tuple(r.outputs.shape) == (0, 10)
    # A matmul with K = 0 has a non-empty result from empty operands: zeros (drop_empty_nodes
    # writes them; it used to stop the compiler with a division by zero).
    k0 = (torch.randn(3, 0, dtype=torch.float16), torch.randn(0, 4, dtype=torch.float16))
    r = spyre_sim.run(torch.mm, k0)
    assert r.outputs_match is True and bool((r.outputs == 0).all())
    # addmm with K = 0 is beta * bias broadcast (beta = 0: zeros, whatever the bias holds).
    for bias in (torch.arange(4, dtype=torch.float16), torch.full((3, 1), float("nan")).half()):
        for beta in (1.0, 0.5, 0.0):
            def f(c, x, y, beta=beta):
                return torch.addmm(c, x, y, beta=beta, alpha=3.0)

            r = spyre_sim.run(f, (bias, *k0), arch="tiny", cache=False)
            want = f(bias, *k0)
            assert torch.equal(r.outputs, want) or (beta != 0 and r.outputs.isnan().all()), \
                (bias, beta, r.outputs)
    # A sum over an empty dim: zeros (Inductor writes them as a constant).
    r = spyre_sim.run(lambda x: x.sum(0) * 2, (torch.randn(0, 4, dtype=torch.float16),),
                      arch="tiny", cache=False)
    assert r.outputs_match is True and torch.equal(r.outputs, torch.zeros(4, dtype=torch.float16))
