"""Random numbers on the device (spyre_capture/random_seeds.py, decomp_random.py,
sim/core/sfp_random.h): Inductor's seed kernel becomes a graph input the host fills at each
call, and the SFP draws Philox per element. On "tiny": bit for bit Inductor's CPU values for
the same generator state, new values at each call, the distributions' moments, and refusal of
an explicit generator."""

import pytest
import torch

import spyre_sim
from spyre_sim import session
from spyre_capture import capture


def _draws(x):
    return (torch.rand_like(x, dtype=torch.float32), torch.randn_like(x, dtype=torch.float32),
            torch.nn.functional.dropout(x, 0.3))


def test_values_are_inductors_for_the_same_generator_state():
    x = torch.randn(6, 40).to(torch.float16)
    torch.manual_seed(7)
    r = spyre_sim.run(_draws, (x,), arch="tiny", cache=False)
    torch.manual_seed(7)
    want = torch.compile(_draws, backend="inductor")(x)
    torch._dynamo.reset()
    for got, ref in zip(r.outputs, want):
        assert torch.equal(got, ref)
    u, z, d = r.outputs
    assert 0 <= u.min() and u.max() < 1 and len(set(u.flatten().tolist())) == u.numel()
    kept = d != 0
    assert torch.equal(d[kept], (x[kept].float() / 0.7).half())


def test_the_seed_buffer_is_the_last_input_and_each_call_draws_anew():
    x = torch.zeros(4, 32)
    (ir,) = capture(torch.rand_like, (x,))
    seeds = ir["seeds"]
    assert ir["inputs"][-1] == seeds["buffer"] and seeds["count"] == 1
    buf = next(b for b in ir["buffers"] if b["name"] == seeds["buffer"])
    assert buf["kind"] == "input" and buf["dtype"] == "int32"
    ops = [op["op"] for n in ir["nodes"] for op in n.get("body", [])]
    assert "rand" in ops and "load_seed" not in ops
    assert not any(n["kind"] == "extern" for n in ir["nodes"])

    torch._dynamo.reset()
    with session.active(session.Session(arch="tiny", cache=False)):
        f = torch.compile(torch.rand_like, backend="spyre_sim")
        torch.manual_seed(1)
        a, b = f(x), f(x)
        torch.manual_seed(1)
        c = f(x)
    torch._dynamo.reset()
    assert not torch.equal(a, b)
    assert torch.equal(a, c)


def test_timing_only_costs_the_same_cycles():
    x = torch.randn(8, 64).to(torch.float16)
    f = lambda t: torch.nn.functional.dropout(t, 0.5) * 2  # noqa: E731
    r = spyre_sim.run(f, (x,), arch="tiny", cache=False)
    t = spyre_sim.run(f, (x,), arch="tiny", cache=False, timing_only=True)
    assert r.summary["cycles"] == t.summary["cycles"] > 0


N = 4096  # elements per distribution: the moments below are within 5 standard errors


@pytest.mark.parametrize("name,fn,mean,var", [
    ("uniform", lambda x: x.uniform_(-2.0, 4.0), 1.0, 3.0),
    ("normal", lambda x: x.normal_(3.0, 0.5), 3.0, 0.25),
    ("exponential", lambda x: x.exponential_(2.0), 0.5, 0.25),
    ("bernoulli", lambda x: x.bernoulli_(0.25), 0.25, 0.1875),
    ("geometric", lambda x: x.geometric_(0.5), 2.0, 2.0),
    ("log_normal", lambda x: x.log_normal_(0.0, 0.25), 1.0317, 0.0687),
    ("randint_like", lambda x: torch.randint_like(x, 3, 9), 5.5, 35 / 12),
])
def test_each_distribution_has_its_moments(name, fn, mean, var):
    x = torch.zeros(N)
    torch.manual_seed(0)
    r = spyre_sim.run(lambda t: fn(t.clone()), (x,), arch="tiny", cache=False)
    v = r.outputs.double()
    assert abs(v.mean().item() - mean) < 5 * (var / N) ** 0.5, (name, v.mean())
    assert abs(v.var().item() - var) < 0.15 * var, (name, v.var())
    if name == "randint_like":
        assert set(v.tolist()) == set(range(3, 9))
    if name in ("bernoulli",):
        assert set(v.tolist()) <= {0.0, 1.0}


def test_cauchy_quartiles():
    x = torch.zeros(N)
    torch.manual_seed(0)
    r = spyre_sim.run(lambda t: t.clone().cauchy_(1.0, 2.0), (x,), arch="tiny", cache=False)
    q = torch.quantile(r.outputs.double(), torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64))
    assert torch.allclose(q, torch.tensor([-1.0, 1.0, 3.0], dtype=torch.float64), atol=0.25), q


def test_an_explicit_generator_is_not_decomposed():
    """Its stream is the host generator's, which the device cannot follow: the decompositions
    decline (the op stays an ATen fallback; Dynamo itself runs such a call eagerly)."""
    from spyre_capture import decomp_random

    g = torch.Generator().manual_seed(0)
    x = torch.zeros(8)
    for fn, args in [(decomp_random.uniform, (0.0, 1.0)), (decomp_random.bernoulli_p, (0.5,)),
                     (decomp_random.exponential, (1.0,)), (decomp_random.cauchy, (0.0, 1.0))]:
        assert fn(x, *args, generator=g) is NotImplemented
