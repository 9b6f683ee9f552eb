"""Decompositions the device needs that CPU Inductor keeps whole.

CPU Inductor has no scan lowering, calls ATen for the batched GEMM variants and transposed or
1-D convolutions, and lowers the accumulating scatters to stores in `atomic_add` mode. None of
those run on the chip; each is rewritten here, before Inductor lowers the graph, into ops the
spyre compiler maps: reductions with an index mask, comparisons, GEMMs and 2-D convolutions.
3-D convolutions, direct and transposed, become 2-D ones too.
Each function takes and returns what the ATen overload it replaces does, and returns
NotImplemented where it does not apply (the op is then traced as it is).

Work and memory of the masked forms (the scan ops along `dim`, the scatters over their index
extent) grow as n x k where the ATen kernel does n + k: they suit the sequence-length and
gather/scatter sizes of the models, not scans over millions of elements.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from .decomp_linalg import linalg_decompositions
from .decomp_lu import lu_decompositions
from .decomp_ops import op_decompositions
from .decomp_pools import pool_decompositions
from .decomp_random import random_decompositions
from .decomp_spectral import composite_overrides, spectral_decompositions, why_left_whole

aten = torch.ops.aten


def device_decompositions() -> dict[Any, Callable[..., Any]]:
    """{ATen overload: its decomposition} for the ops above and those of decomp_ops.py."""
    from torch._decomp import decompositions as core

    table: dict[Any, Callable[..., Any]] = {
        aten.cumsum.default: cumsum,
        aten.cumprod.default: cumprod,
        aten.cummax.default: cummax,
        aten.cummin.default: cummin,
        aten.logcumsumexp.default: logcumsumexp,
        aten.addbmm.default: addbmm,
        aten.baddbmm.default: core.baddbmm,
        aten.searchsorted.Tensor: searchsorted,
        aten.bucketize.Tensor: bucketize,
        aten.convolution.default: convolution,
        aten.index_add.default: index_add,
        aten.scatter_add.default: scatter_add,
        aten.scatter.reduce: scatter_reduce_legacy,
        aten.scatter.value_reduce: scatter_value_reduce_legacy,
        aten.scatter_reduce.two: scatter_reduce,
        aten.index_reduce.default: index_reduce,
        aten.index_put.default: index_put,
        aten.put.default: put,
        aten._unsafe_masked_index_put_accumulate.default: masked_index_put_accumulate,
        aten.masked_scatter.default: masked_scatter,
        **op_decompositions(),
        **pool_decompositions(),
        **linalg_decompositions(),
        **lu_decompositions(),
        **random_decompositions(),
        **spectral_decompositions(),
    }
    return table


def left_whole(op: str, sizes: list[list[int]]) -> str | None:
    """Why a decomposition here declined an op that stayed a fallback kernel (the IR node's
    `why`, which the compiler's refusal quotes); None when no decomposition covers the op."""
    return why_left_whole(op, sizes)


@contextlib.contextmanager
def composites_overridden() -> Iterator[None]:
    """While capturing: decompositions of CompositeImplicitAutograd overloads, which AOTAutograd
    expands with ATen's own composite before a decomposition table is consulted. Each is
    installed as the overload's Python kernel for that key (read only under the Python
    dispatcher, which AOTAutograd's tracing enables) and removed afterwards."""
    key = torch._C.DispatchKey.CompositeImplicitAutograd
    overrides = composite_overrides()
    installed = [op for op in overrides if key not in op.py_kernels]  # not when nested
    for op in installed:
        op.py_impl(key)(overrides[op])
    try:
        yield
    finally:
        for op in installed:
            op.py_kernels.pop(key, None)
            op._dispatch_cache.clear()


# --- scans: one reduction over j <= i ---------------------------------------------------------


def _prefix_terms(x: torch.Tensor, dim: int, fill: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """(terms, keep): x moved to the last dim and repeated along a new second-to-last one, so
    terms[..., i, j] = x[..., j] where j <= i and `fill` elsewhere."""
    xt = x.movedim(dim, -1)
    n = xt.shape[-1]
    idx = torch.arange(n, device=x.device)
    keep = idx.unsqueeze(0) <= idx.unsqueeze(1)  # [i, j]: j <= i
    return torch.where(keep, xt.unsqueeze(-2), torch.full((), fill, dtype=x.dtype, device=x.device)), keep


def _scan_dtype(x: torch.Tensor, dtype: torch.dtype | None) -> torch.dtype:
    if dtype is not None:
        return dtype
    return x.dtype if x.is_floating_point() or x.is_complex() else torch.int64


def cumsum(x: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    """cumsum(x, dim)[i] = sum_j x[j] * (j <= i): one reduction with an index mask (the models'
    attention-mask and position-id cumsums)."""
    dtype = _scan_dtype(x, dtype)
    if x.dim() == 0:
        return x.to(dtype)
    terms, _ = _prefix_terms(x.to(dtype), dim, 0)
    return terms.sum(-1, dtype=dtype).movedim(-1, dim)


def cumprod(x: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    """cumprod(x, dim)[i] = prod_{j <= i} x[j]."""
    dtype = _scan_dtype(x, dtype)
    if x.dim() == 0:
        return x.to(dtype)
    terms, _ = _prefix_terms(x.to(dtype), dim, 1)
    return terms.prod(-1, dtype=dtype).movedim(-1, dim)


def _cum_extreme(x: torch.Tensor, dim: int, largest: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """cummax / cummin: the running extreme and the index of its last occurrence so far (ATen's
    kernel takes a later equal value, and a NaN once seen stays, at its last position)."""
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    if x.is_floating_point():
        fill = float("-inf") if largest else float("inf")
    else:
        info = torch.iinfo(x.dtype)
        fill = info.min if largest else info.max
    terms, keep = _prefix_terms(x, dim, fill)
    values = terms.amax(-1) if largest else terms.amin(-1)  # [..., i]; NaN propagates
    xt = x.movedim(dim, -1).unsqueeze(-2)  # [..., 1, j]
    v = values.unsqueeze(-1)  # [..., i, 1]
    hit = xt == v
    if x.is_floating_point():
        hit = hit | (torch.isnan(xt) & torch.isnan(v))
    n = x.shape[dim]
    j = torch.arange(n, device=x.device)
    at = torch.where(keep & hit, j, torch.full((), -1, dtype=torch.int64, device=x.device))
    return values.movedim(-1, dim), at.amax(-1).movedim(-1, dim)


def cummax(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    return _cum_extreme(x, dim, True)


def cummin(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    return _cum_extreme(x, dim, False)


def logcumsumexp(x: torch.Tensor, dim: int) -> torch.Tensor:
    """log(sum_{j <= i} exp(x[j])), shifted by the running maximum so nothing overflows."""
    if x.dim() == 0:
        return x.clone()
    terms, _ = _prefix_terms(x, dim, float("-inf"))
    m = terms.amax(-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    out = torch.log(torch.exp(terms - m).sum(-1)) + m.squeeze(-1)
    return out.movedim(-1, dim)


# --- GEMM variants and convolutions -------------------------------------------------------------


def addbmm(input: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, *,
           beta: Any = 1, alpha: Any = 1) -> torch.Tensor:
    """beta * input + alpha * sum_b batch1[b] @ batch2[b]: one GEMM over K = b * k, the
    batches laid side by side ([n, b*k] @ [b*k, p])."""
    b, n, k = batch1.shape
    p = batch2.shape[2]
    prod = batch1.permute(1, 0, 2).reshape(n, b * k) @ batch2.reshape(b * k, p)
    if beta == 0:
        return (alpha * prod if alpha != 1 else prod).expand(n, p).clone()
    out = input * beta if beta != 1 else input
    return out + (alpha * prod if alpha != 1 else prod)


def convolution(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                transposed: bool, output_padding: Sequence[int], groups: int) -> Any:
    """The convolutions the compiler has no lowering for, as 2-D direct ones (which it lowers
    itself as an implicit GEMM, compiler/lower/conv.cpp):
    - 1-D: a 2-D convolution of height 1;
    - transposed (1-, 2- or 3-D): a direct one over the input with stride - 1 zeros between its
      elements, padded by dilation * (k - 1) - padding (plus output_padding after), with each
      group's weight transposed and flipped;
    - 3-D direct: the kernel's depth taps become input channels. For output depth d, tap t
      reads input depth d * stride + t * dilation (after depth padding); the taps' slices are
      stacked beside each channel ([N * D_out, C * KD, H, W], group by group as the weight's
      [OC, C / groups * KD, KH, KW] reshape orders them), so one 2-D convolution with K = C *
      KD * KH * KW computes every output depth."""
    if input.dim() == 3:
        args = (input.unsqueeze(2), weight.unsqueeze(2), bias, [1, *stride], [0, *padding],
                [1, *dilation], transposed, [0, *output_padding], groups)
        out = convolution(*args) if transposed else aten.convolution.default(*args)
        return out.squeeze(2)
    if input.dim() not in (4, 5):
        return NotImplemented
    if transposed:
        return _transposed_as_direct(input, weight, bias, stride, padding, dilation,
                                     output_padding, groups)
    if input.dim() == 4:
        return NotImplemented
    n, c, depth = input.shape[0], input.shape[1], input.shape[2]
    oc, kd = weight.shape[0], weight.shape[2]
    d_out = (depth + 2 * padding[0] - dilation[0] * (kd - 1) - 1) // stride[0] + 1
    x = torch.nn.functional.pad(input, [0, 0, 0, 0, padding[0], padding[0]])
    span = (d_out - 1) * stride[0] + 1
    taps = [x[:, :, t * dilation[0]:t * dilation[0] + span:stride[0]] for t in range(kd)]
    x = torch.stack(taps, dim=2)  # [N, C, KD, D_out, H, W]
    h, w = x.shape[4], x.shape[5]
    x = x.permute(0, 3, 1, 2, 4, 5).reshape(n * d_out, c * kd, h, w)
    w2 = weight.reshape(oc, weight.shape[1] * kd, weight.shape[3], weight.shape[4])
    out = aten.convolution.default(x, w2, bias, list(stride[1:]), list(padding[1:]),
                                   list(dilation[1:]), False, [0, 0], groups)
    return out.reshape(n, d_out, oc, out.shape[2], out.shape[3]).permute(0, 2, 1, 3, 4)


def _transposed_as_direct(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                          stride: Sequence[int], padding: Sequence[int],
                          dilation: Sequence[int], output_padding: Sequence[int],
                          groups: int) -> Any:
    """A transposed 2- or 3-D convolution as the direct one convolution() describes."""
    spatial = input.dim() - 2
    cin = input.shape[1]
    cout_g, ks = weight.shape[1], list(weight.shape[2:])
    x = input
    for i, s in enumerate(stride):  # s - 1 zeros between elements
        axis = 2 + i
        if s > 1:
            size = x.shape[axis]
            x = torch.nn.functional.pad(x.unsqueeze(axis + 1),
                                        [0, 0] * (spatial + 2 - axis - 1) + [0, s - 1])
            shape = list(x.shape)
            x = x.reshape(shape[:axis] + [size * s] + shape[axis + 2:])
            x = x.narrow(axis, 0, (size - 1) * s + 1)
    pads = []
    for i in reversed(range(spatial)):  # F.pad lists the last dim first
        lo = dilation[i] * (ks[i] - 1) - padding[i]
        pads += [lo, lo + output_padding[i]]
    x = torch.nn.functional.pad(x, pads)
    wt = weight.reshape(groups, cin // groups, cout_g, *ks).transpose(1, 2)
    wt = wt.reshape(groups * cout_g, cin // groups, *ks).flip(list(range(2, 2 + spatial)))
    return aten.convolution.default(x, wt, bias, [1] * spatial, [0] * spatial, list(dilation),
                                    False, [0] * spatial, groups)  # a 3-D one decomposes again


# --- searching ----------------------------------------------------------------------------------


def searchsorted(sorted_sequence: torch.Tensor, self: torch.Tensor, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None,
                 sorter: torch.Tensor | None = None) -> torch.Tensor:
    """The insertion point of each value: how many entries of its row of the sorted sequence
    are below it (<= it with right=True), one comparison and a count per pair."""
    seq = sorted_sequence
    if sorter is not None:
        seq = torch.gather(seq, -1, sorter)
    right = right or side == "right"
    if seq.dim() == 1:
        v = self.unsqueeze(-1)  # [..., 1] against [L]
        s = seq
    else:
        v = self.unsqueeze(-1)  # [..., M, 1] against [..., 1, L]
        s = seq.unsqueeze(-2)
    below = (s <= v) if right else (s < v)
    dtype = torch.int32 if out_int32 else torch.int64
    return below.sum(-1, dtype=dtype)


def bucketize(self: torch.Tensor, boundaries: torch.Tensor, *, out_int32: bool = False,
              right: bool = False) -> torch.Tensor:
    return searchsorted(boundaries, self, out_int32=out_int32, right=right)


# --- accumulating scatters: one masked reduction over the index extent --------------------------

_IDENTITY = {"sum": 0, "prod": 1, "mean": 0}


def _scatter_dense(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor,
                   reduce: str, include_self: bool) -> torch.Tensor:
    """scatter_reduce as out[a, j, c] = self[a, j, c] (op) reduce_k {src[a, k, c] : index[a, k, c]
    == j}: the index and src cut to the index's extent and padded to self's in the other dims
    (with an index of -1, which matches no j), so every output element reduces over the k's of
    its own (a, c)."""
    if self.dim() == 0:
        self, index, src = self.reshape(1), index.reshape(1), src.reshape(1)
        return _scatter_dense(self, 0, index, src, reduce, include_self).reshape(())
    dim = dim % self.dim()
    k = index.shape[dim]
    src = src[tuple(slice(0, s) for s in index.shape)]
    pads_i: list[int] = []
    for d in reversed(range(self.dim())):
        pads_i += [0, 0 if d == dim else self.shape[d] - index.shape[d]]
    index = torch.nn.functional.pad(index, pads_i, value=-1)
    src = torch.nn.functional.pad(src, pads_i)
    # mask[..., j, k, ...]: index[..., k, ...] == j
    j = torch.arange(self.shape[dim], device=self.device)
    j = j.reshape([self.shape[dim] if d == dim else 1 for d in range(self.dim() + 1)])
    mask = index.unsqueeze(dim) == j
    vals = src.to(self.dtype).unsqueeze(dim)
    count = mask.sum(dim + 1)
    hit = count > 0
    if reduce in ("sum", "mean"):
        got = torch.where(mask, vals, torch.zeros((), dtype=self.dtype, device=self.device)).sum(dim + 1)
        if reduce == "sum":
            return self + got if include_self else torch.where(hit, got, self)
        total = (self + got) if include_self else got
        n = count + (1 if include_self else 0)
        if self.is_floating_point():
            mean = total / n.clamp(min=1).to(self.dtype)
        else:
            mean = torch.div(total, n.clamp(min=1), rounding_mode="floor").to(self.dtype)
        return torch.where(n > 0, mean, self) if not include_self else mean
    if reduce == "prod":
        got = torch.where(mask, vals, torch.ones((), dtype=self.dtype, device=self.device)).prod(dim + 1)
        return self * got if include_self else torch.where(hit, got, self)
    if reduce in ("amax", "amin"):
        if self.is_floating_point():
            fill = float("-inf") if reduce == "amax" else float("inf")
        else:
            info = torch.iinfo(self.dtype)
            fill = info.min if reduce == "amax" else info.max
        masked = torch.where(mask, vals, torch.full((), fill, dtype=self.dtype, device=self.device))
        got = masked.amax(dim + 1) if reduce == "amax" else masked.amin(dim + 1)
        if include_self:
            got = torch.maximum(self, got) if reduce == "amax" else torch.minimum(self, got)
            return torch.where(hit, got, self)
        return torch.where(hit, got, self)
    return NotImplemented


def scatter_add(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    return _scatter_dense(self, dim, index, src, "sum", True)


def scatter_reduce(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor,
                   reduce: str, *, include_self: bool = True) -> torch.Tensor:
    return _scatter_dense(self, dim, index, src, reduce, include_self)


_LEGACY = {"add": "sum", "multiply": "prod"}


def scatter_reduce_legacy(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor,
                          *, reduce: str) -> torch.Tensor:
    """scatter(..., reduce="add" | "multiply")."""
    if reduce not in _LEGACY:
        return NotImplemented
    return _scatter_dense(self, dim, index, src, _LEGACY[reduce], True)


def scatter_value_reduce_legacy(self: torch.Tensor, dim: int, index: torch.Tensor, value: Any,
                                *, reduce: str) -> torch.Tensor:
    if reduce not in _LEGACY:
        return NotImplemented
    src = torch.full(index.shape, value, dtype=self.dtype, device=self.device)
    return _scatter_dense(self, dim, index, src, _LEGACY[reduce], True)


def _along(index: torch.Tensor, dim: int, shape: Sequence[int]) -> torch.Tensor:
    """A 1-D index along `dim` broadcast to `shape` (index_add's and index_reduce's index)."""
    view = [index.shape[0] if d == dim else 1 for d in range(len(shape))]
    return index.reshape(view).expand(list(shape))


def index_add(self: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor, *,
              alpha: Any = 1) -> torch.Tensor:
    if self.dim() == 0:
        dim, self1, src = 0, self.reshape(1), source.reshape(1)
        return index_add(self1, dim, index.reshape(1), src, alpha=alpha).reshape(())
    dim = dim % self.dim()
    src = source * alpha if alpha != 1 else source
    return _scatter_dense(self, dim, _along(index, dim, src.shape), src, "sum", True)


def index_reduce(self: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor,
                 reduce: str, *, include_self: bool = True) -> torch.Tensor:
    if self.dim() == 0:
        return index_reduce(self.reshape(1), 0, index.reshape(1), source.reshape(1), reduce,
                            include_self=include_self).reshape(())
    dim = dim % self.dim()
    return _scatter_dense(self, dim, _along(index, dim, source.shape), source, reduce, include_self)


def index_put(self: torch.Tensor, indices: Sequence[torch.Tensor | None], values: torch.Tensor,
              accumulate: bool = False) -> torch.Tensor:
    """index_put with accumulate=True and integer indices for the leading dims: the indexed
    dims flattened into one, then an index_add along it. Anything else is left as it is."""
    if (len(indices) == 1 and indices[0] is not None
            and indices[0].dtype in (torch.bool, torch.uint8)):
        return _index_put_masked(self, indices[0].to(torch.bool), values, accumulate)
    if not accumulate or not indices or self.dim() == 0:
        return NotImplemented
    if any(i is None or i.dtype == torch.bool for i in indices) or len(indices) > self.dim():
        return NotImplemented
    lead = len(indices)
    bshape = torch.broadcast_shapes(*[i.shape for i in indices])
    flat = torch.zeros(bshape, dtype=torch.int64, device=self.device)
    for d, i in enumerate(indices):
        i = torch.where(i < 0, i + self.shape[d], i).to(torch.int64)
        stride = 1
        for s in self.shape[d + 1:lead]:
            stride *= s
        flat = flat + i * stride
    rest = list(self.shape[lead:])
    count = 1
    for s in self.shape[:lead]:
        count *= s
    target = self.reshape([count] + rest)
    src = values.to(self.dtype).expand(list(bshape) + rest).reshape([-1] + rest)
    out = index_add(target, 0, flat.reshape(-1), src)
    return out.reshape(self.shape)


def _index_put_masked(self: torch.Tensor, mask: torch.Tensor, values: torch.Tensor,
                      accumulate: bool) -> torch.Tensor:
    """self[mask] = values (+= with accumulate): the k-th selected element, in row-major order,
    takes values[k], k being the count of selected elements before it (a prefix sum of the
    mask), so the data-dependent count never becomes a shape."""
    m = mask.dim()
    if m == 0 or m > self.dim() or tuple(mask.shape) != tuple(self.shape[:m]):
        return NotImplemented
    rest = list(self.shape[m:])
    vals = values.to(self.dtype)
    if vals.dim() > len(rest) and vals.shape[vals.dim() - len(rest) - 1] != 1:
        vals = _in_mask_order(mask, vals.reshape([-1] + rest)).reshape(self.shape)
    else:
        vals = vals.reshape(vals.shape[max(0, vals.dim() - len(rest)):] if rest else ())
        vals = vals.expand(self.shape)
    keep = mask.reshape(list(mask.shape) + [1] * len(rest))
    if accumulate:
        return self + torch.where(keep, vals, torch.zeros((), dtype=self.dtype, device=self.device))
    return torch.where(keep, vals, self)


def _in_mask_order(mask: torch.Tensor, picked: torch.Tensor) -> torch.Tensor:
    """[mask.numel(), *rest]: row k of `picked` at the k-th true element of the mask (in
    row-major order), row 0 elsewhere."""
    flat = mask.reshape(-1)
    pos = cumsum(flat.to(torch.int32), 0) - 1
    pos = torch.where(flat, pos, torch.zeros_like(pos)).to(torch.int64)
    return picked[pos]


def masked_scatter(self: torch.Tensor, mask: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    """self with its elements where the mask is true replaced, in row-major order, by source's
    first elements."""
    self, mask = torch.broadcast_tensors(self, mask)
    vals = _in_mask_order(mask, source.to(self.dtype).reshape(-1)).reshape(self.shape)
    return torch.where(mask, vals, self)


def masked_index_put_accumulate(self: torch.Tensor, mask: torch.Tensor,
                                indices: Sequence[torch.Tensor | None],
                                values: torch.Tensor) -> torch.Tensor:
    """index_put(accumulate=True) of the values where the mask is true; a masked-off index
    may be out of range, so it is replaced by 0 and its value by 0."""
    zero = torch.zeros((), dtype=values.dtype, device=values.device)
    safe = [None if i is None else torch.where(mask, i, torch.zeros_like(i)) for i in indices]
    return index_put(self, safe, torch.where(mask, values, zero), True)


def put(self: torch.Tensor, index: torch.Tensor, source: torch.Tensor,
        accumulate: bool = False) -> torch.Tensor:
    """put into the flattened tensor: an index_add with accumulate=True, else an index_put
    (a scatter store). Inductor keeps no fallback for put once it has a decomposition, so every
    call is rewritten."""
    flat = self.reshape(-1)
    i = index.reshape(-1).to(torch.int64)
    i = torch.where(i < 0, i + flat.shape[0], i)
    src = source.reshape(-1).to(self.dtype)
    if accumulate:
        return index_add(flat, 0, i, src).reshape(self.shape)
    return aten.index_put.default(flat, [i], src, False).reshape(self.shape)
