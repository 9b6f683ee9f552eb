"""torch.special's orthogonal polynomials, zeta, polygamma, the incomplete gamma functions and
Airy's Ai compiled onto the SFP (sim/core/sfp_special.h) on the "tiny" chip, against torch's own
float64 kernels rounded to float32: the chip computes in double and rounds once, so the two
agree to float32's rounding, NaN for NaN and infinity for infinity."""

from __future__ import annotations

import pytest
import torch

import spyre_sim


def _check(fn, *inputs):
    result = spyre_sim.run(fn, inputs, arch="tiny", cache=False)
    want = fn(*(t.double() for t in inputs)).float()
    got = result.outputs if isinstance(result.outputs, torch.Tensor) else result.outputs[0]
    torch.testing.assert_close(got, want, rtol=2e-6, atol=1e-30, equal_nan=True)


def _grid(xs, ns):
    x = torch.tensor(xs, dtype=torch.float32)
    n = torch.tensor(ns, dtype=torch.float32)
    return x.repeat_interleave(len(ns)), n.repeat(len(xs))


X = [-2.5, -1.0, -0.999, -0.6, -0.1, 0.0, 0.3, 0.5, 0.75, 1.0, 1.001, 2.0]
N = [-2.0, 0.0, 1.0, 2.0, 3.7, 5.0, 7.0, 9.0, 10.0, 16.0, 60.0]

POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_orthogonal_polynomials(name):
    f = getattr(torch.special, name)
    _check(lambda x, n: f(x, n), *_grid(X, N))


@pytest.mark.parametrize("name", ["hermite_polynomial_h", "hermite_polynomial_he"])
def test_hermite_beyond_degree_128_is_nan_as_in_float32(name):
    f = getattr(torch.special, name)
    x, n = torch.tensor([0.5, -0.25, 0.1]), torch.tensor([12.0, 129.0, 1000.0])
    got = spyre_sim.run(f, (x, n), arch="tiny", cache=False).outputs
    assert not torch.isnan(f(x, n)[0]) and torch.isnan(f(x, n)[1:]).all()  # torch, float32
    torch.testing.assert_close(got, f(x.double(), n.double()).float().where(n <= 128, torch.nan),
                               rtol=2e-6, atol=0, equal_nan=True)


def test_zeta_and_incomplete_gamma():
    s, q = _grid([0.5, 1.0, 1.5, 2.0, 3.0, 7.5], [-3.0, -1.5, -0.25, 0.0, 0.5, 1.0, 4.0, 60.0])
    _check(torch.special.zeta, s, q)
    a, x = _grid([0.0, 0.25, 1.0, 2.5, 10.0, 80.0], [0.0, 0.1, 1.0, 3.0, 12.0, 90.0, 500.0])
    _check(torch.igamma, a, x)
    _check(torch.igammac, a, x)


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_polygamma(n):
    x = torch.tensor([-2.5, -1.0, -0.5, 0.0, 0.2, 1.0, 1.5, 4.0, 30.0])
    _check(lambda t: torch.polygamma(n, t), x)


def test_airy_ai():
    _check(torch.special.airy_ai, torch.tensor([-60.0, -5.0, -1.0, 0.0, 0.5, 1.0, 10.0, 110.0]))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_frexp_gives_eagers_mantissa_and_exponent(dtype):
    """frexp's two results (one IR op with two outputs) bit for bit, the edges included: 0 and
    -0, the infinities and NaN (exponent 0), subnormals, the dtype's extremes."""
    info = torch.finfo(dtype)
    x = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 3.0, -1.5, 1e-3,
                      info.max, -info.max, info.tiny, info.tiny / 4, info.eps], dtype=dtype)
    r = spyre_sim.run(torch.frexp, (x,), arch="tiny", cache=False)
    mantissa, exponent = r.outputs
    want_m, want_e = torch.frexp(x)
    assert mantissa.dtype == dtype and exponent.dtype == torch.int32
    assert torch.equal(exponent, want_e)
    assert torch.equal(mantissa.view(torch.int16 if dtype != torch.float32 else torch.int32),
                       want_m.view(torch.int16 if dtype != torch.float32 else torch.int32))


def test_truncdiv_rounds_toward_zero_at_int32s_extremes():
    """Inductor's truncdiv (lcm divides by the gcd with it): C's a / b on int32."""
    a = torch.tensor([7, -7, 7, -7, 2**31 - 1, -2**31, 2**31 - 1, 5, 0], dtype=torch.int32)
    b = torch.tensor([2, 2, -2, -2, 3, 7, 2**31 - 2, 1, 3], dtype=torch.int32)
    r = spyre_sim.run(lambda x, y: torch.div(x, y, rounding_mode="trunc"), (a, b), arch="tiny",
                      cache=False)
    assert torch.equal(r.outputs, torch.div(a, b, rounding_mode="trunc"))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_nextafter_steps_one_unit_of_the_tensors_own_dtype(dtype):
    """nextafter bit for bit in each float dtype (the compiler computes fp16 and bf16 in fp32,
    so the step must be the storage format's): from +-0 to the smallest subnormal with the
    target's sign, up and down, toward zero from a negative value, from the largest finite
    value to infinity, from infinity back, NaN, and equal operands."""
    info = torch.finfo(dtype)
    a = torch.tensor([0.0, -0.0, 1.0, -1.0, info.max, float("inf"), float("nan"), 3.5, 1e-3,
                      -2.0, info.tiny], dtype=dtype)
    b = torch.tensor([1.0, -1.0, 2.0, 0.0, float("inf"), 0.0, 1.0, 3.5, 0.0, -3.0, -1.0],
                     dtype=dtype)
    r = spyre_sim.run(torch.nextafter, (a, b), arch="tiny", cache=False)
    bits = torch.int16 if dtype != torch.float32 else torch.int32
    assert r.outputs.dtype == dtype
    assert torch.equal(r.outputs.view(bits), torch.nextafter(a, b).view(bits))
