"""Pools and resizes that CPU Inductor leaves to an ATen kernel, as separable linear maps on the
device: each output element is a weighted sum over a box of the input whose weights are the
product of one weight per dimension, so the op is one [out, in] matrix per pooled dimension,
known at compile time, applied by a GEMM each (the PT array's work, in fp32 as eager's
accumulation is).

- _adaptive_avg_pool3d: row o of a dimension averages input [floor(o*in/out), ceil((o+1)*in/out)).
- avg_pool2d with a window of more than 25 elements (Inductor's own lowering stops there): the
  window sums, divided by the padded window's size, the clipped window's count or the override.
- _upsample_bilinear2d_aa (antialiased resize): torch's own per-dimension weights, read off its
  CPU kernel applied to the identity at compile time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

aten = torch.ops.aten


def pool_decompositions() -> dict[Any, Callable[..., Any]]:
    return {
        aten._adaptive_avg_pool3d.default: adaptive_avg_pool3d,
        aten.avg_pool2d.default: avg_pool2d,
        aten._upsample_bilinear2d_aa.default: upsample_bilinear2d_aa,
    }


def _apply(x: torch.Tensor, mats: list[list[list[float]]]) -> torch.Tensor:
    """x's last len(mats) dimensions mapped by the matrices ([out, in] each), in fp32, back to
    x's dtype."""
    y = x.to(torch.float32)
    rank = x.dim()
    for k, m in enumerate(mats):
        dim = rank - len(mats) + k
        w = torch.tensor(m, dtype=torch.float32, device=x.device).reshape(len(m), -1)
        y = torch.matmul(w, y.movedim(dim, -2)).movedim(-2, dim)
    return y.to(x.dtype)


# --- adaptive average pooling -------------------------------------------------------------------


def _adaptive_average(n_in: int, n_out: int) -> list[list[float]]:
    rows = []
    for o in range(n_out):
        start, end = (o * n_in) // n_out, -((-(o + 1) * n_in) // n_out)
        rows.append([1.0 / (end - start) if start <= i < end else 0.0 for i in range(n_in)])
    return rows


def adaptive_avg_pool3d(x: torch.Tensor, output_size: list[int]) -> torch.Tensor:
    if x.dim() not in (4, 5) or len(output_size) != 3:
        return NotImplemented
    sizes = [int(s) for s in output_size]
    return _apply(x, [_adaptive_average(n, o) for n, o in zip(x.shape[-3:], sizes)])


# --- average pooling over big windows -----------------------------------------------------------

# Inductor lowers avg_pool2d itself up to this many window elements, and falls back beyond.
_INDUCTOR_WINDOW_LIMIT = 25


def _pooled_size(n: int, k: int, pad: int, stride: int, ceil_mode: bool) -> int:
    """torch's pooling_output_shape (dilation 1): a last window in ceil mode must start inside
    the input or its left padding."""
    out = (n + 2 * pad - k + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= n + pad:
        out -= 1
    return out


def _windows(n: int, k: int, pad: int, stride: int, ceil_mode: bool):
    """Per output row: the input rows summed, the padded window's size, the clipped count."""
    for o in range(_pooled_size(n, k, pad, stride, ceil_mode)):
        start = o * stride - pad
        end = min(start + k, n + pad)
        padded = end - start
        start, end = max(start, 0), min(end, n)
        yield range(start, end), padded, end - start


def avg_pool2d(x: torch.Tensor, kernel_size: list[int], stride: list[int] | None = None,
               padding: list[int] | int = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None
               ) -> torch.Tensor:
    def pair(v: Any) -> list[int]:
        v = [v] if isinstance(v, int) else list(v)
        return [int(v[0])] * 2 if len(v) == 1 else [int(s) for s in v]

    k = pair(kernel_size)
    s = pair(stride) if stride else k
    p = pair(padding)
    if k[0] * k[1] <= _INDUCTOR_WINDOW_LIMIT or x.dim() not in (3, 4):
        return NotImplemented
    mats = []
    for d in range(2):
        rows = []
        for window, padded, count in _windows(x.shape[-2 + d], k[d], p[d], s[d], ceil_mode):
            # The divisor is a product of one factor per dimension, or the override (once).
            if divisor_override:
                scale = 1.0 / divisor_override if d == 0 else 1.0
            else:
                scale = 1.0 / (padded if count_include_pad else count)
            rows.append([scale if i in window else 0.0 for i in range(x.shape[-2 + d])])
        mats.append(rows)
    return _apply(x, mats)


# --- antialiased bilinear resize ----------------------------------------------------------------


def _aa_weights(n_in: int, n_out: int, align_corners: bool, scale: float | None
                ) -> list[list[float]]:
    """[n_out, n_in]: the weights torch's CPU kernel gives one dimension, read off the kernel
    applied to the identity (in fp64): image j is row j of the identity down the height,
    constant across a width the resize keeps (whatever weights the width gets, they sum to
    one)."""
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():  # real tensors, not traced
        eye = torch.eye(n_in, dtype=torch.float64).reshape(n_in, 1, n_in, 1).expand(
            n_in, 1, n_in, 4).contiguous()
        out = aten._upsample_bilinear2d_aa.default(eye, [n_out, 4], align_corners, scale, None)
        return out[:, 0, :, 0].t().tolist()


def upsample_bilinear2d_aa(x: torch.Tensor, output_size: list[int], align_corners: bool,
                           scales_h: float | None = None, scales_w: float | None = None
                           ) -> torch.Tensor:
    if x.dim() != 4 or any(not math.isfinite(s) for s in
                                               (scales_h or 1.0, scales_w or 1.0)):
        return NotImplemented
    oh, ow = (int(s) for s in output_size)
    return _apply(x, [_aa_weights(x.shape[2], oh, align_corners, scales_h),
                      _aa_weights(x.shape[3], ow, align_corners, scales_w)])
