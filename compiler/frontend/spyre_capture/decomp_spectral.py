"""QR, symmetric eigendecomposition, SVD, pseudo-inverse and the matrix exponential on the device,
in fp32, as fixed sequences of GEMMs and element-wise steps (no branch on values):

- geqrf: LAPACK's unblocked Householder QR (dgeqr2 with dlarfg's reflector: beta =
  -sign(alpha) |x|, tau = (beta - alpha) / beta, v = x / (alpha - beta); tau = 0 when the
  column below the diagonal is already 0), so R's signs and the packed reflectors are LAPACK's;
  linalg_qr is it and the product of the reflectors (reduced, complete or R only).
- _linalg_eigh: cyclic Jacobi. Each sweep visits every pair of indices once, in the rounds of a
  round-robin tournament, so that a round's pairs are disjoint and its rotations one orthogonal
  matrix R: A <- R^T A R, V <- V R (GEMMs). Eigenvalues ascending, as LAPACK's syevd.
- _linalg_svd: one-sided Jacobi (Hestenes) on the columns of A (of A^T when it is wide): the
  same rotations, computed from the columns' Gram entries, G <- G R, V <- V R; the singular
  values are the columns' norms, descending. U is made orthonormal (and completed to m x m for
  full_matrices) by the Householder QR of G's normalised columns, its signs those of the columns.
- linalg_pinv and linalg_matrix_rank: ATen's definitions on top of these (V diag(1/s) U^T over
  the singular values above max(atol, rtol * s_max), and how many there are; with hermitian,
  the eigenvalues' magnitudes). ATen holds the default tolerances in fp64 scalars; the chip has
  no fp64, so they are fp32 here (a singular value within an fp32 ulp of the tolerance may
  count differently).
- linalg_matrix_exp: scaling and squaring: A / 2^s with s from A's 1-norm (so the scaled norm is
  at most 1/2), a degree-18 Taylor polynomial (Paterson-Stockmeyer), then s squarings; s is a
  value, so the squarings run up to a fixed count and each applies where its step is below s.

Jacobi's rotation for a pair (p, q) with Gram entries alpha = g_pp, beta = g_qq, gamma = g_pq:
zeta = (beta - alpha) / (2 gamma), t = sign(zeta) / (|zeta| + sqrt(1 + zeta^2)), c = 1 /
sqrt(1 + t^2), s = c t (Golub & Van Loan, Matrix Computations, 4th ed., 8.5; Demmel & Veselic
1992 for the one-sided form); t = 0 when gamma = 0. Cyclic Jacobi converges quadratically once
the off-diagonal part is small; _sweeps fixes the sweep count by the order (below), and
JACOBI_MAX_N bounds the order these unroll for.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from .decomp_linalg import apply_reflectors

aten = torch.ops.aten
F32 = torch.float32

# Sweeps of cyclic Jacobi: ceil(log2 n) + 5, at least 6. Measured in fp32 against fp64 LAPACK on
# 20 random matrices per size, half of them with singular values spread over 5 decades, the
# worst relative error of the values (eigh and SVD) falls to fp32 rounding (about 1e-6) after
# 4 sweeps at n = 5, 6 at n = 8, 9 at n = 16 and 10 at n = 32.
JACOBI_SWEEPS_MIN = 6
# The rounds unroll into the graph (n - 1 rounds of 2-4 GEMMs per sweep): an SVD of 16 columns
# is about 1,300 kernels and 76 s to compile and simulate on "tiny". Past this many columns
# (rows of a wide matrix, or an eigenproblem's order) the op is left whole: refused by name, or
# run on the host under compiler.host_fallback=on.
JACOBI_MAX_N = 16
TAYLOR_DEGREE = 18  # exp's Taylor series on a 1-norm <= 1/2: the remainder is below 2^-70
MAX_SQUARINGS = 32  # A's 1-norm up to 2^31 (exp of a larger norm is out of fp32's range
# unless A is close to nilpotent or its exponential underflows)


def spectral_decompositions() -> dict[Any, Callable[..., Any]]:
    return {
        aten.geqrf.default: geqrf,
        aten.linalg_qr.default: linalg_qr,
        aten._linalg_eigh.default: eigh,
        aten._linalg_svd.default: svd,
        aten.linalg_pinv.atol_rtol_tensor: pinv,
        aten.linalg_pinv.atol_rtol_float: pinv,
        aten.linalg_pinv.default: pinv_rcond,
        aten.linalg_pinv.rcond_tensor: pinv_rcond,
        aten.linalg_matrix_exp.default: matrix_exp,
    }


# The overloads whose decomposition declines past JACOBI_MAX_N (`_past_jacobi_limit`).
_JACOBI_LIMITED = {
    "aten._linalg_svd.default", "aten._linalg_eigh.default",
    "aten.linalg_pinv.atol_rtol_tensor", "aten.linalg_pinv.atol_rtol_float",
    "aten.linalg_pinv.default", "aten.linalg_pinv.rcond_tensor",
}


def _past_jacobi_limit(shape: Any) -> bool:
    """Whether Jacobi would rotate more than JACOBI_MAX_N columns of a [*, m, n] operand: the
    SVD's min(m, n) (it works on A^T when A is wide), an eigenproblem's order n = m."""
    return min(shape[-2], shape[-1]) > JACOBI_MAX_N


def why_left_whole(op: str, sizes: list[list[int]]) -> str | None:
    """Why an op this module decomposes was left whole, from its overload's name and its
    operands' sizes; None when nothing here explains it."""
    if op not in _JACOBI_LIMITED or not sizes or len(sizes[0]) < 2 \
            or not _past_jacobi_limit(sizes[0]):
        return None
    m, n = sizes[0][-2], sizes[0][-1]
    return (f"spyre-sim decomposes it (cyclic Jacobi, unrolled into the graph) only up to "
            f"{JACOBI_MAX_N} columns (decomp_spectral.py JACOBI_MAX_N): this {m} x {n} operand "
            f"has {min(m, n)}")


def composite_overrides() -> dict[Any, Callable[..., Any]]:
    """CompositeImplicitAutograd overloads replaced while capturing (decomp.composites_overridden):
    ATen's matrix_rank computes its tolerance in fp64, which the chip does not have."""
    return {
        aten.linalg_matrix_rank.atol_rtol_tensor: matrix_rank,
        aten.linalg_matrix_rank.atol_rtol_float: matrix_rank,
        aten.linalg_matrix_rank.default: matrix_rank_tol,
        aten.linalg_matrix_rank.tol_tensor: matrix_rank_tol,
    }


def _empty(a: torch.Tensor) -> bool:
    return a.numel() == 0


def _eye(n: int, batch: torch.Size, device: torch.device) -> torch.Tensor:
    return torch.eye(n, dtype=F32, device=device).expand(*batch, n, n)


# --- Householder QR ------------------------------------------------------------------------------


def _geqr2(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(packed R and reflectors [*, m, n], tau [*, k]) in fp32."""
    m, n = a.shape[-2], a.shape[-1]
    x = a.to(F32)
    rows = torch.arange(m, device=a.device).unsqueeze(-1)  # [m, 1]
    cols = torch.arange(n, device=a.device)  # [n]
    taus = []
    for j in range(min(m, n)):
        col = x[..., :, j:j + 1]  # [*, m, 1]
        alpha = col[..., j:j + 1, :]  # [*, 1, 1]
        below = torch.where(rows > j, col, 0.0)
        xnorm2 = (below * below).sum(-2, keepdim=True)
        reflect = xnorm2 > 0
        beta = -torch.where(alpha < 0, -1.0, 1.0) * torch.sqrt(alpha * alpha + xnorm2)
        safe_beta = torch.where(reflect, beta, 1.0)
        tau = torch.where(reflect, (beta - alpha) / safe_beta, 0.0)  # [*, 1, 1]
        scale = torch.where(reflect, 1.0 / (alpha - safe_beta), 0.0)
        v = torch.where(rows > j, col * scale, (rows == j).to(F32))  # [*, m, 1]
        trailing = cols > j
        w = (v * x).sum(-2, keepdim=True)  # v^T x: [*, 1, n]
        x = torch.where(trailing, x - tau * v * w, x)
        diag = torch.where(reflect, beta, alpha)
        x = torch.where(cols == j, torch.where(rows == j, diag, torch.where(rows > j, v, x)), x)
        taus.append(tau[..., 0, 0])
    tau = torch.stack(taus, -1) if taus else x.new_zeros((*a.shape[:-2], 0))
    return x, tau


def geqrf(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    packed, tau = _geqr2(a)
    return packed.to(a.dtype), tau.to(a.dtype)


def _q(packed: torch.Tensor, tau: torch.Tensor, columns: int) -> torch.Tensor:
    """The first `columns` columns of H_0 ... H_{k-1}."""
    m = packed.shape[-2]
    eye = torch.eye(m, columns, dtype=F32, device=packed.device)
    eye = eye.expand(*packed.shape[:-2], m, columns)
    return apply_reflectors(packed, tau, eye, range(tau.shape[-1] - 1, -1, -1), left=True)


def linalg_qr(a: torch.Tensor, mode: str = "reduced") -> tuple[torch.Tensor, torch.Tensor]:
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    packed, tau = _geqr2(a)
    if mode == "complete":
        return _q(packed, tau, m).to(a.dtype), torch.triu(packed).to(a.dtype)
    r = torch.triu(packed[..., :k, :]).to(a.dtype)
    if mode == "r":
        return a.new_zeros((0,)), r
    return _q(packed, tau, k).to(a.dtype), r


# --- Jacobi rotations ----------------------------------------------------------------------------


def _rounds(n: int) -> list[tuple[list[int], list[int]]]:
    """A round-robin tournament over n indices (one sits out each round when n is odd): n - 1
    rounds (n when odd) of disjoint pairs (p, q), p < q, covering every pair once."""
    players = list(range(n)) + ([-1] if n % 2 else [])
    count = len(players)
    rounds = []
    for _ in range(count - 1):
        pairs = [(players[i], players[count - 1 - i]) for i in range(count // 2)]
        pairs = [(min(p, q), max(p, q)) for p, q in pairs if p >= 0 and q >= 0]
        rounds.append(([p for p, _ in pairs], [q for _, q in pairs]))
        players = [players[0], players[-1], *players[1:-1]]
    return rounds


def _sweeps(n: int) -> int:
    return max(JACOBI_SWEEPS_MIN, math.ceil(math.log2(max(n, 1))) + 5)


class _Round:
    """One round's constants: the one-hot selections Ep, Eq [pairs, n] of its p and q indices and
    the identity on the index that sits out."""

    def __init__(self, n: int, ps: list[int], qs: list[int], device: torch.device) -> None:
        def one_hot(rows: list[int]) -> torch.Tensor:
            return torch.tensor([[float(j == i) for j in range(n)] for i in rows], dtype=F32,
                                device=device)
        paired = set(ps) | set(qs)
        self.ep, self.eq = one_hot(ps), one_hot(qs)
        self.rest = torch.tensor([[float(i == j and i not in paired) for j in range(n)]
                                  for i in range(n)], dtype=F32, device=device)

    def rotation(self, alpha: torch.Tensor, beta: torch.Tensor, gamma: torch.Tensor
                 ) -> torch.Tensor:
        """R [*, n, n] with columns p, q of G R rotated to orthogonal (alpha, beta, gamma [*,
        pairs])."""
        zero = gamma == 0
        zeta = (beta - alpha) / (2.0 * torch.where(zero, 1.0, gamma))
        sign = torch.where(zeta < 0, -1.0, 1.0)
        t = torch.where(zero, 0.0, sign / (zeta.abs() + torch.sqrt(1.0 + zeta * zeta)))
        c = torch.rsqrt(1.0 + t * t)
        s = c * t
        c, s = c.unsqueeze(-1), s.unsqueeze(-1)  # [*, pairs, 1]
        # R[p, p] = c, R[p, q] = s, R[q, p] = -s, R[q, q] = c, identity elsewhere.
        return (self.ep.mT @ (c * self.ep + s * self.eq) + self.eq.mT @ (c * self.eq - s * self.ep)
                + self.rest)


def _jacobi_rounds(n: int, device: torch.device) -> list[_Round]:
    """Every round of every sweep (none for n = 1: nothing to rotate)."""
    return [_Round(n, ps, qs, device) for ps, qs in _rounds(n) if ps] * _sweeps(n)


# --- symmetric eigendecomposition ----------------------------------------------------------------


def _eigh(sym: torch.Tensor, vectors: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(eigenvalues ascending [*, n], eigenvectors [*, n, n] or None) of a symmetric fp32 sym.
    With vectors, A and V are stacked, [A; V] R one GEMM, then R^T (A R)."""
    n = sym.shape[-1]
    x = torch.cat([sym, _eye(n, sym.shape[:-2], sym.device)], -2) if vectors else sym
    for r in _jacobi_rounds(n, sym.device):
        a = x[..., :n, :]
        d = torch.diagonal(a, 0, -2, -1).unsqueeze(-1)  # [*, n, 1]
        alpha, beta = (r.ep @ d)[..., 0], (r.eq @ d)[..., 0]
        gamma = ((r.ep @ a) * r.eq).sum(-1)
        rot = r.rotation(alpha, beta, gamma)
        x = x @ rot
        x = torch.cat([rot.mT @ x[..., :n, :], x[..., n:, :]], -2) if vectors else rot.mT @ x
    values, order = torch.sort(torch.diagonal(x[..., :n, :], 0, -2, -1), -1)
    if not vectors:
        return values, None
    v = x[..., n:, :]
    return values, torch.gather(v, -1, order.unsqueeze(-2).expand(v.shape))


def eigh(a: torch.Tensor, UPLO: str = "L", compute_v: bool = True  # noqa: N803 - ATen's name
         ) -> tuple[torch.Tensor, torch.Tensor]:
    n = a.shape[-1]
    if _past_jacobi_limit(a.shape):
        return NotImplemented
    if _empty(a):
        values = a.new_zeros((*a.shape[:-2], n))
        return values, a.new_zeros(a.shape) if compute_v else a.new_zeros((0,))
    x = a.to(F32)
    tri = torch.tril(x) if UPLO == "L" else torch.triu(x)
    sym = tri + (torch.tril(x, -1) if UPLO == "L" else torch.triu(x, 1)).mT
    values, vectors = _eigh(sym, compute_v)
    if vectors is None:
        return values.to(a.dtype), a.new_zeros((0,))
    return values.to(a.dtype), vectors.to(a.dtype)


# --- SVD -----------------------------------------------------------------------------------------


def _svd_tall(a: torch.Tensor, u_columns: int | None
              ) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor | None]:
    """(U [*, m, u_columns] or None, S [*, n] descending, V [*, n, n] or None) of a [*, m, n],
    m >= n, n > 0, in fp32."""
    m, n = a.shape[-2], a.shape[-1]
    # G and V stacked: one GEMM per round rotates both.
    x = torch.cat([a.to(F32), _eye(n, a.shape[:-2], a.device)], -2)  # [*, m + n, n]
    for r in _jacobi_rounds(n, a.device):
        g = x[..., :m, :]
        gp, gq = g @ r.ep.mT, g @ r.eq.mT  # [*, m, pairs]
        x = x @ r.rotation((gp * gp).sum(-2), (gq * gq).sum(-2), (gp * gq).sum(-2))
    g, v = x[..., :m, :], x[..., m:, :]
    s, order = torch.sort(torch.sqrt((g * g).sum(-2)), -1, descending=True)
    if u_columns is None:
        return None, s, None
    by_column = order.unsqueeze(-2)
    g = torch.gather(g, -1, by_column.expand(g.shape))
    v = torch.gather(v, -1, by_column.expand(v.shape))
    # U's columns are G's normalised; their QR makes them orthonormal where G's are not (zero or
    # tiny singular values) and completes them: Q's column j is U's column j times sign(r_jj).
    u = g / torch.where(s > 0, s, 1.0).unsqueeze(-2)
    packed, tau = _geqr2(u)
    q = _q(packed, tau, u_columns)
    sign = torch.where(torch.diagonal(packed, 0, -2, -1) < 0, -1.0, 1.0)  # [*, n]
    if u_columns > n:
        sign = torch.cat([sign, sign.new_ones((*sign.shape[:-1], u_columns - n))], -1)
    return q * sign.unsqueeze(-2), s, v


def svd(a: torch.Tensor, full_matrices: bool = False, compute_uv: bool = True,
        driver: str | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    batch = a.shape[:-2]
    none = a.new_zeros((0,))
    if _past_jacobi_limit(a.shape):
        return NotImplemented
    if _empty(a):
        s = a.new_zeros((*batch, k))
        if not compute_uv:
            return none, s, none
        um, vn = (m, n) if full_matrices else (k, k)
        return (_eye(m, batch, a.device)[..., :um].to(a.dtype).clone(), s,
                _eye(n, batch, a.device)[..., :vn, :].to(a.dtype).clone())
    wide = m < n
    tall = a.mT if wide else a
    rows = tall.shape[-2]
    u_columns = (rows if full_matrices else k) if compute_uv else None
    u, s, v = _svd_tall(tall, u_columns)
    if u is None or v is None:
        return none, s.to(a.dtype), none
    if wide:  # a^T = U S V^T: a = V S U^T
        return v.to(a.dtype), s.to(a.dtype), u.mT.to(a.dtype)
    return u.to(a.dtype), s.to(a.dtype), v.mT.to(a.dtype)


# --- pseudo-inverse ------------------------------------------------------------------------------


def _tolerances(a: torch.Tensor, atol: Any, rtol: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """ATen's get_atol_rtol: atol 0 by default; rtol eps * max(m, n) by default, 0 when atol is
    given and positive."""
    def as_tensor(x: Any) -> torch.Tensor:
        return x.to(F32) if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=F32,
                                                                             device=a.device)
    default = torch.finfo(a.dtype).eps * max(a.shape[-2], a.shape[-1])
    atol_t = as_tensor(0.0 if atol is None else atol)
    if rtol is not None:
        rtol_t = as_tensor(rtol)
    elif atol is None:
        rtol_t = as_tensor(default)
    else:
        rtol_t = torch.where(atol_t > 0, 0.0, default)
    return atol_t, rtol_t


def _above_tolerance(a: torch.Tensor, magnitude: torch.Tensor, largest: torch.Tensor,
                     atol: Any, rtol: Any) -> torch.Tensor:
    """Which of the singular values `magnitude` [*, n] exceed max(atol, rtol * largest)."""
    atol_t, rtol_t = _tolerances(a, atol, rtol)
    return magnitude > torch.maximum(atol_t.unsqueeze(-1), rtol_t.unsqueeze(-1) * largest)


def pinv(a: torch.Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False
         ) -> torch.Tensor:
    """A^+ = V diag(1 / s_i for s_i > max(atol, rtol s_max), else 0) U^T; for a hermitian A,
    U diag(1 / lambda_i for |lambda_i| above the tolerance) U^T."""
    m, n = a.shape[-2], a.shape[-1]
    if _past_jacobi_limit(a.shape):
        return NotImplemented  # one host call for all of it, not one for its decomposition
    if _empty(a):
        return a.new_zeros((*a.shape[:-2], n, m))
    x = a.to(F32)
    if hermitian:
        values, vectors = aten._linalg_eigh.default(x, "L", True)
        magnitude = values.abs()
        kept = _above_tolerance(a, magnitude, magnitude.amax(-1, keepdim=True), atol, rtol)
        inverse = torch.where(kept, 1.0 / values, 0.0)
        return ((vectors * inverse.unsqueeze(-2)) @ vectors.mT).to(a.dtype)
    u, s, vh = aten._linalg_svd.default(x, False, True)
    inverse = torch.where(_above_tolerance(a, s, s[..., :1], atol, rtol), 1.0 / s, 0.0)
    return ((vh.mT * inverse.unsqueeze(-2)) @ u.mT).to(a.dtype)


def pinv_rcond(a: torch.Tensor, rcond: Any, hermitian: bool = False) -> torch.Tensor:
    """linalg_pinv(A, rcond): ATen's atol 0, rtol rcond."""
    return pinv(a, atol=0.0, rtol=rcond, hermitian=hermitian)


def _singular_values(x: torch.Tensor, hermitian: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(singular values [*, n], the largest [*, 1]) of fp32 x; of a hermitian x, its eigenvalues'
    magnitudes (from its lower triangle). Through the ATen ops, so that one past JACOBI_MAX_N
    stays whole (refused by name, or run on the host) while the rest runs here."""
    if hermitian:
        magnitude = aten._linalg_eigh.default(x, "L", False)[0].abs()
        return magnitude, magnitude.amax(-1, keepdim=True)
    s = aten._linalg_svd.default(x, False, False)[1]
    return s, s[..., :1]


def matrix_rank(a: torch.Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False
                ) -> torch.Tensor:
    """How many singular values exceed max(atol, rtol * s_max)."""
    if _empty(a):
        return torch.zeros(a.shape[:-2], dtype=torch.int64, device=a.device)
    s, largest = _singular_values(a.to(F32), hermitian)
    return _above_tolerance(a, s, largest, atol, rtol).sum(-1)


def matrix_rank_tol(a: torch.Tensor, tol: Any, hermitian: bool = False) -> torch.Tensor:
    """linalg_matrix_rank(A, tol): ATen's atol tol, rtol 0."""
    return matrix_rank(a, atol=tol, rtol=0.0, hermitian=hermitian)


# --- matrix exponential --------------------------------------------------------------------------


def _taylor(x: torch.Tensor, degree: int) -> torch.Tensor:
    """sum_{i <= degree} x^i / i! by Paterson-Stockmeyer: blocks of b = ceil(sqrt(degree + 1))
    powers, Horner's rule over the blocks."""
    n = x.shape[-1]
    eye = _eye(n, x.shape[:-2], x.device)
    b = math.ceil(math.sqrt(degree + 1))
    powers = [eye, x]
    for _ in range(2, b + 1):
        powers.append(powers[-1] @ x)
    result = None
    for start in range((degree // b) * b, -1, -b):
        block = sum(powers[i - start] / math.factorial(i)
                    for i in range(start, min(start + b, degree + 1)))
        result = block if result is None else block + powers[b] @ result
    assert result is not None
    return result


def matrix_exp(a: torch.Tensor) -> torch.Tensor:
    if _empty(a):
        return a.clone()
    x = a.to(F32)
    if a.shape[-1] == 1:
        return torch.exp(x).to(a.dtype)
    norm = x.abs().sum(-2).amax(-1)  # the 1-norm: the largest column sum
    needed = torch.clamp(torch.ceil(torch.log2(norm)) + 1.0, min=0.0)
    steps = torch.clamp(needed, max=float(MAX_SQUARINGS))
    y = _taylor(x * torch.exp2(-steps)[..., None, None], TAYLOR_DEGREE)
    s = steps[..., None, None]
    for i in range(MAX_SQUARINGS):
        y = torch.where(s > i, y @ y, y)
    # A norm past 2^MAX_SQUARINGS would leave the series outside its range: NaN, not a wrong
    # number.
    return torch.where((needed > MAX_SQUARINGS)[..., None, None], math.nan, y).to(a.dtype)
