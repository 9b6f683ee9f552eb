"""LU factorisation with partial pivoting on the device, and what is computed from it:
lu_factor(_ex), linalg_lu, det, slogdet, inv(_ex), solve(_ex) and lu_solve.

getrf's unblocked algorithm, column by column, in fp32: the pivot is the first row at or below
the diagonal with the largest magnitude (LAPACK's idamax: an argmax), its row swaps with the
diagonal's (a masked row update), the column below the diagonal is divided by the pivot (not
when it is 0: LAPACK then records info and goes on), and the trailing matrix takes the rank-1
update. Every step is element-wise ops and reductions of a fixed shape: n steps for n columns,
no branch on values. LAPACK's blocked getrf computes the same factors in another order: they
agree to rounding, and the pivots unless two candidates are within rounding of each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .decomp_linalg import solve_triangular

aten = torch.ops.aten
F32 = torch.float32


def lu_decompositions() -> dict[Any, Callable[..., Any]]:
    return {
        aten.linalg_lu_factor_ex.default: lu_factor_ex,
        aten.linalg_lu.default: linalg_lu,
        aten._linalg_det.default: det,
        aten._linalg_slogdet.default: slogdet,
        aten.linalg_lu_solve.default: lu_solve,
        aten.linalg_inv_ex.default: inv_ex,
        aten._linalg_solve_ex.default: solve_ex,
    }


def _getrf(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(lu [*, m, n] packed L below the diagonal and U on and above it, pivots [*, k] 1-based
    int32, info [*] int32: the first zero pivot, 1-based, else 0)."""
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    x = a.to(F32)
    rows = torch.arange(m, device=a.device).unsqueeze(-1)  # [m, 1]
    cols = torch.arange(n, device=a.device)  # [n]
    info = torch.zeros(a.shape[:-2], dtype=torch.int32, device=a.device)
    pivots = []
    for j in range(k):
        magnitude = torch.where(rows[:, 0] >= j, x[..., :, j].abs(), -1.0)  # [*, m]
        p = magnitude.argmax(-1, keepdim=True)  # [*, 1]
        at_p = (rows[:, 0] == p).to(F32).unsqueeze(-1)  # [*, m, 1]
        at_j = (rows == j).to(F32)  # [m, 1]
        row_p = (at_p * x).sum(-2, keepdim=True)  # [*, 1, n]
        row_j = x[..., j:j + 1, :]
        x = x + (at_j - at_p) * (row_p - row_j)  # rows j and p exchanged
        pivots.append(p[..., 0] + 1)
        pivot = x[..., j:j + 1, j:j + 1]  # [*, 1, 1]
        zero = pivot == 0
        info = torch.where((info == 0) & zero[..., 0, 0], j + 1, info).to(torch.int32)
        below = rows > j
        multiplier = torch.where(below, x[..., :, j:j + 1] / torch.where(zero, 1.0, pivot), 0.0)
        x = torch.where(below & (cols == j), multiplier, x)
        x = x - torch.where(below & (cols > j), multiplier * x[..., j:j + 1, :], 0.0)
    piv = torch.stack(pivots, -1).to(torch.int32) if pivots else \
        torch.zeros((*a.shape[:-2], 0), dtype=torch.int32, device=a.device)
    return x, piv, info


def _permutation(pivots: torch.Tensor, m: int, dtype: torch.dtype) -> torch.Tensor:
    """P with A = P L U: the product of the row swaps the pivots record, S_0 S_1 ..."""
    rows = torch.arange(m, device=pivots.device)
    eye = torch.eye(m, dtype=dtype, device=pivots.device)
    perm = eye.expand(*pivots.shape[:-1], m, m)
    for i in range(pivots.shape[-1]):
        d = (rows == i).to(dtype) - (rows == (pivots[..., i:i + 1].to(torch.int64) - 1)).to(dtype)
        perm = perm @ (eye - d.unsqueeze(-1) * d.unsqueeze(-2))
    return perm


def _swaps(pivots: torch.Tensor) -> torch.Tensor:
    """How many pivots swapped a row (the permutation's parity)."""
    steps = torch.arange(1, pivots.shape[-1] + 1, device=pivots.device)
    return (pivots != steps).sum(-1)


def lu_factor_ex(a: torch.Tensor, pivot: bool = True, check_errors: bool = False
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if not pivot or check_errors:
        return NotImplemented
    lu, piv, info = _getrf(a)
    return lu.to(a.dtype), piv, info


def linalg_lu(a: torch.Tensor, pivot: bool = True
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if not pivot:
        return NotImplemented
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    lu, piv, _ = _getrf(a)
    lower = torch.tril(lu[..., :, :k], -1) + torch.eye(m, k, dtype=F32, device=a.device)
    upper = torch.triu(lu[..., :k, :])
    return (_permutation(piv, m, F32).to(a.dtype), lower.to(a.dtype), upper.to(a.dtype))


def det(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(det, LU, pivots): the sign of the permutation times the product of U's diagonal."""
    lu, piv, _ = _getrf(a)
    sign = 1.0 - 2.0 * torch.remainder(_swaps(piv), 2).to(F32)
    value = sign * torch.diagonal(lu, 0, -2, -1).prod(-1)
    return value.to(a.dtype), lu.to(a.dtype), piv


def slogdet(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(sign, log|det|, LU, pivots); a singular matrix gives sign 0 and -inf."""
    lu, piv, _ = _getrf(a)
    diag = torch.diagonal(lu, 0, -2, -1)
    parity = 1.0 - 2.0 * torch.remainder(_swaps(piv) + (diag < 0).sum(-1), 2).to(F32)
    singular = (diag == 0).any(-1)
    sign = torch.where(singular, 0.0, parity)
    logabs = torch.log(diag.abs()).sum(-1)
    return sign.to(a.dtype), logabs.to(a.dtype), lu.to(a.dtype), piv


def _solve_factored(lu: torch.Tensor, piv: torch.Tensor, b: torch.Tensor,
                    adjoint: bool = False) -> torch.Tensor:
    """X with P L U X = b: X = U^-1 L^-1 P^T b; or with (P L U)^T X = b: X = P L^-T U^-T b."""
    m = lu.shape[-1]
    perm = _permutation(piv, m, F32)
    if adjoint:
        y = solve_triangular(lu.mT, b.to(F32), upper=False)  # U^T y = b
        y = solve_triangular(lu.mT, y, upper=True, unitriangular=True)  # L^T z = y
        return perm @ y
    y = solve_triangular(lu, perm.mT @ b.to(F32), upper=False, unitriangular=True)
    return solve_triangular(lu, y, upper=True)


def lu_solve(lu: torch.Tensor, pivots: torch.Tensor, b: torch.Tensor, *, left: bool = True,
             adjoint: bool = False) -> torch.Tensor:
    """A X = b (left) or X A = b, with A or A^T (adjoint) given by its factors; X A = b is
    A^T X^T = b^T."""
    lu = lu.to(F32)
    if left:
        return _solve_factored(lu, pivots, b, adjoint).to(b.dtype)
    return _solve_factored(lu, pivots, b.mT, not adjoint).mT.to(b.dtype)


def inv_ex(a: torch.Tensor, check_errors: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    if check_errors:
        return NotImplemented
    lu, piv, info = _getrf(a)
    n = a.shape[-1]
    eye = torch.eye(n, dtype=F32, device=a.device).expand(*a.shape[:-2], n, n)
    return _solve_factored(lu, piv, eye).to(a.dtype), info


def solve_ex(a: torch.Tensor, b: torch.Tensor, *, left: bool = True, check_errors: bool = False
             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(X, LU, pivots, info) with a X = b; b one vector per batch when its rank is one less."""
    if check_errors or not left:
        return NotImplemented
    lu, piv, info = _getrf(a)
    vector = b.dim() == 1 or (b.dim() == a.dim() - 1 and b.shape == a.shape[:-1])
    rhs = b.unsqueeze(-1) if vector else b
    x = _solve_factored(lu, piv, rhs)
    x = x.squeeze(-1) if vector else x
    return x.to(b.dtype), lu.to(a.dtype), piv, info
