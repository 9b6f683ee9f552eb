"""Device decompositions of ATen ops CPU Inductor leaves to LAPACK-style kernels, where the
algorithm is a fixed sequence of GEMMs and element-wise steps (no pivoting, no iteration to
convergence, no branch on values):

- linalg_householder_product (orgqr) and ormqr: Q = H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i
  v_i^T with v_i column i of the reflectors below the diagonal and 1 on it; each reflector is
  applied as two rank-1 GEMM steps, C - tau v (v^T C), in fp32.
- mode: per row, how often each element occurs (an [n, n] comparison and a sum); the smallest
  of the most frequent values, and the last index holding it, as torch's CPU kernel gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

aten = torch.ops.aten


def linalg_decompositions() -> dict[Any, Callable[..., Any]]:
    return {
        aten.linalg_householder_product.default: householder_product,
        aten.ormqr.default: ormqr,
        aten.mode.default: mode,
    }


# --- Householder reflectors ---------------------------------------------------------------------


def _reflector(a: torch.Tensor, i: int) -> torch.Tensor:
    """v_i as a column [*, m, 1]: 0 above row i, 1 at it, a's column i below it."""
    m = a.shape[-2]
    row = torch.arange(m, device=a.device).unsqueeze(-1)
    col = a[..., :, i:i + 1].to(torch.float32)
    return torch.where(row > i, col, (row == i).to(torch.float32))


def _apply(a: torch.Tensor, tau: torch.Tensor, c: torch.Tensor, order: range, left: bool
           ) -> torch.Tensor:
    """c with the reflectors H_i (i in `order`, each in turn) applied from the left (H_i c) or
    the right (c H_i)."""
    for i in order:
        v = _reflector(a, i)
        t = tau[..., i:i + 1].to(torch.float32).unsqueeze(-1)  # [*, 1, 1]
        if left:
            c = c - t * v @ (v.transpose(-1, -2) @ c)
        else:
            c = c - t * (c @ v) @ v.transpose(-1, -2)
    return c


def householder_product(a: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """The first n columns of H_0 ... H_{k-1}: applied, last first, to the identity's first n
    columns."""
    m, n, k = a.shape[-2], a.shape[-1], tau.shape[-1]
    if k > n or n > m:
        return NotImplemented
    eye = torch.eye(m, n, dtype=torch.float32, device=a.device).expand(*a.shape[:-2], m, n)
    return _apply(a, tau, eye, range(k - 1, -1, -1), left=True).to(a.dtype)


def ormqr(a: torch.Tensor, tau: torch.Tensor, other: torch.Tensor, left: bool = True,
          transpose: bool = False) -> torch.Tensor:
    """op(Q) other (left) or other op(Q) (right), op(Q) = Q or Q^T: Q other applies H_{k-1}
    first, Q^T other H_0 first; other Q applies H_0 first, other Q^T H_{k-1} first."""
    k = tau.shape[-1]
    first_to_last = range(k)
    last_to_first = range(k - 1, -1, -1)
    order = first_to_last if transpose == left else last_to_first
    return _apply(a, tau, other.to(torch.float32), order, left).to(other.dtype)


# --- mode ---------------------------------------------------------------------------------------


def mode(x: torch.Tensor, dim: int = -1, keepdim: bool = False
         ) -> tuple[torch.Tensor, torch.Tensor]:
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    d = dim % x.dim()
    row = x.movedim(d, -1)  # [..., n]
    n = row.shape[-1]
    if n == 0:
        return NotImplemented
    count = (row.unsqueeze(-1) == row.unsqueeze(-2)).sum(-1)  # [..., n]
    most = count == count.amax(-1, keepdim=True)
    top = math.inf if x.dtype.is_floating_point else torch.iinfo(x.dtype).max
    value = torch.where(most, row, top).amin(-1, keepdim=True)
    index = torch.where(row == value, torch.arange(n, device=x.device), -1).amax(-1, keepdim=True)
    value, index = value.movedim(-1, d), index.movedim(-1, d)
    if not keepdim:
        value, index = value.squeeze(d), index.squeeze(d)
    return value, index
