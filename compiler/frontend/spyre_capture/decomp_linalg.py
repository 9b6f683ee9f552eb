"""Device decompositions of ATen ops CPU Inductor leaves to LAPACK-style kernels, where the
algorithm is a fixed sequence of GEMMs and element-wise steps (no pivoting, no iteration to
convergence, no branch on values):

- linalg_householder_product (orgqr) and ormqr: Q = H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i
  v_i^T with v_i column i of the reflectors below the diagonal and 1 on it; each reflector is
  applied as two rank-1 GEMM steps, C - tau v (v^T C), in fp32.
- lu_unpack: L and U are the triangles of the packed factors; P the product of one row swap
  per pivot, each a permutation matrix built from the pivot (a GEMM per pivot, exact on 0/1).
- triangular solves (triangular_solve, linalg_solve_triangular): substitution one row of the
  solution at a time, each a GEMM against the rows already solved (n steps for n rows).
- linalg_cholesky_ex: one column of the factor at a time (a GEMM against the columns already
  found), `info` the first minor that is not positive definite (1-based; 0 when none);
  cholesky is it and torch's check of the info; cholesky_solve and cholesky_inverse are two
  triangular solves with the factor (A = L L^T, or U^T U when upper).
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
        aten.lu_unpack.default: lu_unpack,
        aten.triangular_solve.default: triangular_solve,
        aten.linalg_solve_triangular.default: solve_triangular,
        aten.linalg_cholesky_ex.default: cholesky_ex,
        aten.cholesky.default: cholesky,
        aten.cholesky_solve.default: cholesky_solve,
        aten.cholesky_inverse.default: cholesky_inverse,
    }


# --- Householder reflectors ---------------------------------------------------------------------


def _reflector(a: torch.Tensor, i: int) -> torch.Tensor:
    """v_i as a column [*, m, 1]: 0 above row i, 1 at it, a's column i below it."""
    m = a.shape[-2]
    row = torch.arange(m, device=a.device).unsqueeze(-1)
    col = a[..., :, i:i + 1].to(torch.float32)
    return torch.where(row > i, col, (row == i).to(torch.float32))


def apply_reflectors(a: torch.Tensor, tau: torch.Tensor, c: torch.Tensor, order: range, left: bool
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
    return apply_reflectors(a, tau, eye, range(k - 1, -1, -1), left=True).to(a.dtype)


def ormqr(a: torch.Tensor, tau: torch.Tensor, other: torch.Tensor, left: bool = True,
          transpose: bool = False) -> torch.Tensor:
    """op(Q) other (left) or other op(Q) (right), op(Q) = Q or Q^T: Q other applies H_{k-1}
    first, Q^T other H_0 first; other Q applies H_0 first, other Q^T H_{k-1} first."""
    k = tau.shape[-1]
    first_to_last = range(k)
    last_to_first = range(k - 1, -1, -1)
    order = first_to_last if transpose == left else last_to_first
    return apply_reflectors(a, tau, other.to(torch.float32), order, left).to(other.dtype)


# --- LU ------------------------------------------------------------------------------------------


def lu_unpack(lu: torch.Tensor, pivots: torch.Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A = P L U from getrf's packed LU and 1-based pivots: row i was swapped with row
    pivots[i] - 1, in turn, so P = S_0 S_1 ... S_{k-1} with S_i that swap."""
    if not (unpack_data and unpack_pivots):
        return NotImplemented
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    dt, dev = lu.dtype, lu.device
    lower = torch.tril(lu[..., :, :k], -1) + torch.eye(m, k, dtype=dt, device=dev)
    upper = torch.triu(lu[..., :k, :])
    rows = torch.arange(m, device=dev)
    eye = torch.eye(m, dtype=dt, device=dev)
    perm = eye.expand(*lu.shape[:-2], m, m)
    for i in range(pivots.shape[-1]):
        e_i = (rows == i).to(dt)  # [m]
        e_j = (rows == (pivots[..., i:i + 1].to(torch.int64) - 1)).to(dt)  # [*, m]
        swap = (eye - (e_i.unsqueeze(-1) - e_j.unsqueeze(-1)) *
                (e_i.unsqueeze(-2) - e_j.unsqueeze(-2)))  # I - (e_i - e_j)(e_i - e_j)^T
        perm = perm @ swap
    return perm, lower, upper


# --- triangular solves and Cholesky --------------------------------------------------------------


def _solve_lower(low: torch.Tensor, b: torch.Tensor, unit: bool) -> torch.Tensor:
    """X with low X = b (low [*, n, n] lower triangular, b [*, n, k]), in fp32: row i is
    (b_i - low[i, :i] X[:i]) / low[i, i]."""
    n = low.shape[-1]
    rows: list[torch.Tensor] = []
    solved = None
    for i in range(n):
        r = b[..., i:i + 1, :]
        if solved is not None:
            r = r - low[..., i:i + 1, :i] @ solved
        if not unit:
            r = r / low[..., i:i + 1, i:i + 1]
        rows.append(r)
        solved = torch.cat(rows, -2)
    return solved if solved is not None else b.clone()


def _solve(a: torch.Tensor, b: torch.Tensor, upper: bool, unit: bool) -> torch.Tensor:
    """X with a X = b for a triangular a (an upper one solved as the lower one it becomes with
    its rows and columns reversed)."""
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = a.to(torch.float32).expand(*batch, *a.shape[-2:])
    b = b.to(torch.float32).expand(*batch, *b.shape[-2:])
    if not upper:
        return _solve_lower(a, b, unit)
    return _solve_lower(a.flip(-2, -1), b.flip(-2), unit).flip(-2)


def triangular_solve(b: torch.Tensor, a: torch.Tensor, upper: bool = True,
                     transpose: bool = False, unitriangular: bool = False
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """(X, a) with op(a) X = b, op(a) = a or a^T (a^T of an upper a is lower)."""
    coeff = a.mT if transpose else a
    x = _solve(coeff, b, upper != transpose, unitriangular)
    return x.to(b.dtype), a.clone()


def solve_triangular(a: torch.Tensor, b: torch.Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> torch.Tensor:
    """X with a X = b (left) or X a = b (right: a^T X^T = b^T)."""
    if left:
        return _solve(a, b, upper, unitriangular).to(b.dtype)
    return _solve(a.mT, b.mT, not upper, unitriangular).mT.to(b.dtype)


def cholesky_ex(a: torch.Tensor, upper: bool = False, check_errors: bool = False
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """L with a = L L^T from a's lower triangle (upper: U = L^T from a's upper triangle), column
    j = (a[:, j] - L[:, :j] L[j, :j]^T) / sqrt(its diagonal entry), zero above the diagonal."""
    if check_errors:
        return NotImplemented
    x = (a.mT if upper else a).to(torch.float32)
    n = x.shape[-1]
    rows = torch.arange(n, device=a.device).unsqueeze(-1)  # [n, 1]
    cols: list[torch.Tensor] = []
    found = None
    info = torch.zeros(a.shape[:-2], dtype=torch.int32, device=a.device)
    for j in range(n):
        v = x[..., :, j:j + 1]
        if found is not None:
            v = v - found @ found[..., j:j + 1, :].mT
        d = v[..., j:j + 1, :]
        failed = ~(d[..., 0, 0] > 0)
        info = torch.where((info == 0) & failed, j + 1, info).to(torch.int32)
        cols.append(torch.where(rows < j, 0.0, v / torch.sqrt(d)))
        found = torch.cat(cols, -1)
    low = found if found is not None else x.clone()
    return (low.mT if upper else low).to(a.dtype), info


def cholesky(a: torch.Tensor, upper: bool = False) -> torch.Tensor:
    """torch.cholesky: cholesky_ex, then torch's check of its info (raising as eager does when
    a leading minor is not positive definite; SCHEMA.md `checks`)."""
    low, info = cholesky_ex(a, upper)
    aten._linalg_check_errors.default(info, "cholesky", is_matrix=a.dim() == 2)
    return low


def cholesky_solve(b: torch.Tensor, factor: torch.Tensor, upper: bool = False) -> torch.Tensor:
    """X with A X = b, A = L L^T (L y = b, L^T X = y) or U^T U (U^T y = b, U X = y)."""
    low = factor.mT if upper else factor
    y = _solve(low, b, upper=False, unit=False)
    return _solve(low.mT, y, upper=True, unit=False).to(b.dtype)


def cholesky_inverse(factor: torch.Tensor, upper: bool = False) -> torch.Tensor:
    """A^-1 = L^-T L^-1 with A = L L^T (upper: U^-1 U^-T, A = U^T U): L^-1 is a triangular
    solve against the identity."""
    n = factor.shape[-1]
    low = factor.mT if upper else factor
    eye = torch.eye(n, dtype=torch.float32, device=factor.device).expand(*factor.shape[:-2], n, n)
    inverse = _solve(low, eye, upper=False, unit=False)  # L^-1
    return (inverse.mT @ inverse).to(factor.dtype)


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
