"""Device decompositions of the random distributions CPU Inductor leaves to ATen kernels.

Inductor lowers `rand_like` and `randn_like` to counter-based draws on the device (a seed
buffer the host fills at each call and Philox per element: random_seeds.py,
sim/core/sfp_random.h), but keeps uniform, normal, bernoulli and the other distributions as
fallbacks, which the chip cannot run. Each is rewritten here as its transform of one uniform
(u in [0, 1)) or standard normal draw per element, computed in fp32 and rounded to the
result's dtype:

  uniform(a, b)        a + (b - a) u
  normal(mean, std)    mean + std z
  log_normal(m, s)     exp(m + s z)
  exponential(l)       -log(1 - u) / l
  geometric(p)         floor(log(1 - u) / log(1 - p)) + 1
  cauchy(m, s)         m + s tan(pi (u - 1/2))
  bernoulli(p)         u < p (a scalar p, or a tensor of probabilities)
  randint(lo, hi)      lo + floor((hi - lo) u), exact below 2^24 values (u has 24 bits)
  multinomial(p, n)    with replacement: per sample, the category whose interval of the
                       normalised cumulative probabilities holds u; without: the n categories
                       with the smallest keys -log(1 - u) / p (an exponential race, as
                       Efraimidis and Spirakis sample without replacement), one topk

The values follow these distributions but are not eager PyTorch's (the CPU generator draws
them another way), as with Inductor's own compiled random ops. An explicit `generator` is
not decomposed (the op stays a fallback, refused on the device).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

aten = torch.ops.aten
prims = torch.ops.prims
F32 = torch.float32


def random_decompositions() -> dict[Any, Callable[..., Any]]:
    return {
        aten.uniform.default: uniform,
        aten.normal_functional.default: normal_functional,
        prims.normal.default: prims_normal,
        aten.log_normal.default: log_normal,
        aten.exponential.default: exponential,
        aten.geometric.default: geometric,
        aten.cauchy.default: cauchy,
        aten.bernoulli.p: bernoulli_p,
        aten.bernoulli_.float: bernoulli_float_,
        aten.bernoulli_.Tensor: bernoulli_tensor_,
        aten.randint.low: randint_low,
        aten.randint.default: randint,
        aten.randint_like.low_dtype: randint_like_low,
        aten.randint_like.default: randint_like,
        aten.multinomial.default: multinomial,
    }


def _u(x: torch.Tensor) -> torch.Tensor:
    return torch.rand_like(x, dtype=F32)


def _z(x: torch.Tensor) -> torch.Tensor:
    return torch.randn_like(x, dtype=F32)


def uniform(x, low=0.0, high=1.0, generator=None):
    if generator is not None:
        return NotImplemented
    return (_u(x) * (high - low) + low).to(x.dtype)


def normal_functional(x, mean=0.0, std=1.0, generator=None):
    if generator is not None:
        return NotImplemented
    return (_z(x) * std + mean).to(x.dtype)


def prims_normal(shape, *, mean, std, dtype, device, requires_grad, generator=None):
    if generator is not None:
        return NotImplemented
    z = torch.randn(shape, dtype=F32, device=device)
    return (z * std + mean).to(dtype)


def log_normal(x, mean=1.0, std=2.0, generator=None):
    if generator is not None:
        return NotImplemented
    return torch.exp(_z(x) * std + mean).to(x.dtype)


def exponential(x, lambd=1.0, generator=None):
    if generator is not None:
        return NotImplemented
    return (-torch.log1p(-_u(x)) / lambd).to(x.dtype)


def geometric(x, p, generator=None):
    if generator is not None:
        return NotImplemented
    return (torch.floor(torch.log1p(-_u(x)) / math.log1p(-p)) + 1).to(x.dtype)


def cauchy(x, median=0.0, sigma=1.0, generator=None):
    if generator is not None:
        return NotImplemented
    return (torch.tan(math.pi * (_u(x) - 0.5)) * sigma + median).to(x.dtype)


def bernoulli_p(x, p=0.5, generator=None):
    if generator is not None:
        return NotImplemented
    return (_u(x) < p).to(x.dtype)


def bernoulli_float_(x, p=0.5, generator=None):
    if generator is not None:
        return NotImplemented
    return x.copy_((_u(x) < p).to(x.dtype))


def bernoulli_tensor_(x, p, generator=None):
    if generator is not None:
        return NotImplemented
    return x.copy_((_u(x) < p.to(F32)).to(x.dtype))


def _ints(low, high, u, dtype):
    return (torch.floor(u * (high - low)) + low).to(dtype)


def randint_low(low, high, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    u = torch.rand(size, dtype=F32, device=device)
    return _ints(low, high, u, dtype or torch.int64)


def randint(high, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low(0, high, size, dtype=dtype, device=device)


def randint_like_low(x, low, high, *, dtype=None, layout=None, device=None, pin_memory=None,
                     memory_format=None):
    return _ints(low, high, _u(x), dtype or x.dtype)


def randint_like(x, high, *, dtype=None, layout=None, device=None, pin_memory=None,
                 memory_format=None):
    return _ints(0, high, _u(x), dtype or x.dtype)


def multinomial(probs, num_samples, replacement=False, *, generator=None):
    if generator is not None or probs.dim() not in (1, 2) or probs.shape[-1] == 0:
        return NotImplemented
    p = probs.to(F32)
    if replacement:
        cdf = torch.cumsum(p, -1)
        cdf = cdf / cdf[..., -1:]
        u = torch.rand((*p.shape[:-1], num_samples), dtype=F32, device=p.device)
        below = (cdf.unsqueeze(-2) <= u.unsqueeze(-1)).sum(-1)  # categories wholly below u
        return below.clamp(max=p.shape[-1] - 1).to(torch.int64)
    keys = -torch.log1p(-_u(p)) / p  # a category of probability 0 never comes first
    return torch.topk(keys, num_samples, dim=-1, largest=False).indices
