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

And grid_sampler_3d, which is not separable: each output point gathers its 8 neighbours
(trilinear) or its nearest one by computed indices, with zeros, border or reflection padding.
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
        aten.grid_sampler_3d.default: grid_sampler_3d,
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


# --- 3-D grid sampling ---------------------------------------------------------------------------


def _reflect(c: torch.Tensor, twice_low: int, twice_high: int) -> torch.Tensor:
    """c folded back and forth into [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return torch.zeros_like(c)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    dist = (c - low).abs()
    extra = torch.fmod(dist, span)
    odd = torch.remainder(torch.floor(dist / span), 2) == 1
    return torch.where(odd, span + low - extra, extra + low)


def grid_sampler_3d(a: torch.Tensor, grid: torch.Tensor, interpolation_mode: int = 0,
                    padding_mode: int = 0, align_corners: bool = False) -> torch.Tensor:
    """[N, C, D, H, W] sampled at grid [N, oD, oH, oW, 3] (x, y, z in [-1, 1]): torch's
    unnormalisation (align_corners: -1 and 1 are the corner elements' centres, else their outer
    edges), padding (0 zeros: taps outside weigh nothing; 1 border: clamped; 2 reflection), and
    trilinear (0) or nearest (1, ties to even) interpolation, in fp32."""
    if interpolation_mode not in (0, 1) or padding_mode not in (0, 1, 2) or a.dim() != 5:
        return NotImplemented
    n, c, depth, height, width = a.shape
    g = grid.to(torch.float32)

    def source(coord: torch.Tensor, size: int) -> torch.Tensor:
        scale = (size * 0.5 - 0.5) if align_corners else size * 0.5
        pos = coord * scale + (size * 0.5 - 0.5)
        if padding_mode == 1:
            pos = pos.clamp(0, size - 1)
        elif padding_mode == 2:
            pos = _reflect(pos, 0, 2 * (size - 1)) if align_corners else \
                _reflect(pos, -1, 2 * size - 1)
            pos = pos.clamp(0, size - 1)
        return pos

    x, y, z = source(g[..., 0], width), source(g[..., 1], height), source(g[..., 2], depth)
    batch = torch.arange(n, device=a.device).view(n, 1, 1, 1, 1)
    channel = torch.arange(c, device=a.device).view(1, c, 1, 1, 1)

    def tap(zs: torch.Tensor, ys: torch.Tensor, xs: torch.Tensor, w: torch.Tensor
            ) -> torch.Tensor:
        inside = ((xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
                  & (zs >= 0) & (zs < depth))
        zi, yi, xi = (torch.where(inside, t, 0).to(torch.int64).unsqueeze(1)
                      for t in (zs, ys, xs))
        return a[batch, channel, zi, yi, xi].float() * torch.where(inside, w, 0.0).unsqueeze(1)

    if interpolation_mode == 1:
        return tap(torch.round(z), torch.round(y), torch.round(x), torch.ones_like(x)).to(a.dtype)
    x0, y0, z0 = torch.floor(x), torch.floor(y), torch.floor(z)
    fx, fy, fz = x - x0, y - y0, z - z0
    out = None
    for dz in (0, 1):
        for dy in (0, 1):
            for dx in (0, 1):
                w = ((fx if dx else 1 - fx) * (fy if dy else 1 - fy) * (fz if dz else 1 - fz))
                t = tap(z0 + dz, y0 + dy, x0 + dx, w)
                out = t if out is None else out + t
    return out.to(a.dtype)
