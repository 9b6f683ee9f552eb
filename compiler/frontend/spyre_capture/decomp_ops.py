"""Device decompositions of ATen ops that CPU Inductor leaves to an ATen kernel (a fallback):
each is rewritten into element-wise ops, reductions, gathers and GEMMs, as the ops of decomp.py
are (the same contract: the ATen overload's arguments and results).

- _cdist_forward: the distance of every pair, one reduction over the features.
- _pdist_forward: the same over the rows of one matrix, pairs i < j gathered by index.
- _trilinear (nn.functional.bilinear): the three operands broadcast and multiplied, one sum.
- nanmedian: a sort (NaN last) and a gather at the lower middle of the values that are not
  NaN.
- histc: each element's bin, then one count per bin (a comparison and a sum); histogram and
  histogramdd: the same over edges (an element's bin is the last edge at or below it).
- nonzero_static: the n-th nonzero element's position through a prefix count.
- _embedding_bag_forward_only: the rows gathered, and a [bags, indices] membership that a GEMM
  (sum, mean) or a masked maximum applies.
- segment_reduce: a [segments, elements] membership from the lengths' prefix sums (or the
  offsets), and one masked reduction over the elements.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

aten = torch.ops.aten


def op_decompositions() -> dict[Any, Callable[..., Any]]:
    return {
        aten._cdist_forward.default: cdist,
        aten._pdist_forward.default: pdist,
        aten._trilinear.default: trilinear,
        aten.histc.default: histc,
        aten.nanmedian.default: nanmedian,
        aten.nanmedian.dim: nanmedian_dim,
        aten.nonzero_static.default: nonzero_static,
        aten._embedding_bag_forward_only.default: embedding_bag,
        aten._embedding_bag.default: embedding_bag,
        aten.segment_reduce.default: segment_reduce,
        aten.histogram.bin_ct: histogram_bins,
        aten.histogram.bins_tensor: histogram_edges,
        aten._histogramdd_bin_edges.default: histogramdd_bin_edges,
        aten._histogramdd_from_bin_cts.default: histogramdd_from_bin_cts,
        aten._histogramdd_from_bin_tensors.default: histogramdd_from_bin_tensors,
    }


# --- distances ---------------------------------------------------------------------------------


def _pair_distances(x1: torch.Tensor, x2: torch.Tensor, p: float) -> torch.Tensor:
    """[..., P, M] and [..., R, M] -> [..., P, R]: the p-norm of each pair's difference."""
    return _p_norm((x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs(), p).to(x1.dtype)


def _p_norm(d: torch.Tensor, p: float) -> torch.Tensor:
    """The p-norm over the last dim of `d` (|differences|): p = 0 counts the nonzeros."""
    if p == 0:
        return (d != 0).sum(-1)
    if p == math.inf:
        return d.amax(-1)
    if p == 1:
        return d.sum(-1)
    if p == 2:
        return (d * d).sum(-1).sqrt()
    return d.pow(p).sum(-1).pow(1.0 / p)


def pdist(x: torch.Tensor, p: float = 2) -> torch.Tensor:
    """[N, M] -> [N * (N - 1) / 2]: the distance of rows i < j, in torch's order (i, then j).
    The pairs are known at compile time: two gathers by constant row indices, one norm."""
    n = x.shape[0]
    first = [i for i in range(n) for _ in range(i + 1, n)]
    second = [j for i in range(n) for j in range(i + 1, n)]
    if not first or x.shape[1] == 0:
        return x.new_zeros(len(first))
    i = torch.tensor(first, dtype=torch.int64, device=x.device)
    j = torch.tensor(second, dtype=torch.int64, device=x.device)
    return _p_norm((x[i] - x[j]).abs(), p).to(x.dtype)


def cdist(x1: torch.Tensor, x2: torch.Tensor, p: float, compute_mode: int | None) -> torch.Tensor:
    """Every pair directly (never torch's |x|^2 + |y|^2 - 2xy form, whatever compute_mode asks:
    that one trades accuracy for a GEMM)."""
    if x1.shape[-1] == 0:
        return x1.new_zeros(*torch.broadcast_shapes(x1.shape[:-2], x2.shape[:-2]),
                            x1.shape[-2], x2.shape[-2])
    return _pair_distances(x1, x2, p)


# --- bilinear ----------------------------------------------------------------------------------


def trilinear(i1: torch.Tensor, i2: torch.Tensor, i3: torch.Tensor, expand1: list[int],
              expand2: list[int], expand3: list[int], sumdim: list[int],
              unroll_dim: int = 1) -> torch.Tensor:
    """i1, i2, i3 each unsqueezed at its expand dims, multiplied, summed over sumdim."""
    def grow(t: torch.Tensor, dims: list[int]) -> torch.Tensor:
        for d in sorted(dims):
            t = t.unsqueeze(d)
        return t
    prod = grow(i1, expand1) * grow(i2, expand2) * grow(i3, expand3)
    return prod.sum(list(sumdim)) if sumdim else prod


# --- medians -----------------------------------------------------------------------------------


def nanmedian(x: torch.Tensor) -> torch.Tensor:
    """The lower median of the values that are not NaN (NaN when there is none)."""
    return nanmedian_dim(x.reshape(-1), 0)[0]


def nanmedian_dim(x: torch.Tensor, dim: int = 0, keepdim: bool = False
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """(values, indices) of the lower median along `dim` ignoring NaN: a stable sort puts NaN
    last, and the answer is at position (count - 1) // 2 of the count that are not NaN. Ties
    give the index torch's CPU kernel gives on small slices (its nth_element sorts them); a
    slice that is all NaN gives NaN at the first NaN's index, where torch's index is whichever
    its nth_element leaves first (torch documents median indices as not unique)."""
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64)
    values, indices = torch.sort(x, dim=dim, stable=True)
    count = (~torch.isnan(x)).sum(dim, keepdim=True)
    k = torch.clamp((count - 1) // 2, min=0)
    v, i = values.gather(dim, k), indices.gather(dim, k)
    return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))


# --- counting ----------------------------------------------------------------------------------


def histc(x: torch.Tensor, bins: int = 100, min: float = 0, max: float = 0) -> torch.Tensor:  # noqa: A002
    """torch's histc: min = max = 0 takes the data's range (widened by 1 each way when it is a
    single value); x == max goes to the last bin; values outside [min, max] are not counted."""
    flat = x.reshape(-1).float()
    lo = torch.tensor(float(min), device=x.device)
    hi = torch.tensor(float(max), device=x.device)
    if min == max and flat.numel() > 0:
        lo, hi = flat.amin(), flat.amax()
    same = lo == hi
    lo, hi = torch.where(same, lo - 1, lo), torch.where(same, hi + 1, hi)
    idx = ((flat - lo) * bins / (hi - lo)).floor().clamp(max=bins - 1)
    idx = torch.where(flat == hi, bins - 1, idx)
    inside = (flat >= lo) & (flat <= hi)
    onehot = (idx.unsqueeze(0) == torch.arange(bins, device=x.device).unsqueeze(1)) & inside
    return onehot.sum(1).to(x.dtype)


def _bin_counts(flat: torch.Tensor, edges: torch.Tensor, weight: torch.Tensor | None,
                density: bool) -> torch.Tensor:
    """torch.histogram's counts over `edges` ([bins + 1], ascending): an element's bin is the
    last edge at or below it (the last edge closes the last bin), elements outside the edges
    and NaN are not counted; weighted; density divides by the total and the bins' widths."""
    bins = edges.numel() - 1
    pos = (edges.unsqueeze(0) <= flat.unsqueeze(1)).sum(1) - 1  # [N]
    pos = pos.clamp(max=bins - 1)
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    member = (pos.unsqueeze(0) == torch.arange(bins, device=flat.device).unsqueeze(1)) & inside
    w = torch.ones_like(flat) if weight is None else weight.reshape(-1).float()
    hist = torch.where(member, w.unsqueeze(0), 0.0).sum(1)
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return hist


def _linear_edges(col: torch.Tensor, bins: int, range_: Any) -> torch.Tensor:
    """[bins + 1] edges over `range_` (a pair) or the data's range, widened by 1/2 each way
    when it is a single value, computed as torch's linspace does (from the nearer end: exact
    for up to 7 bins; past that eager's vectorised linspace may differ by an ulp, which moves an
    element only when it lies that close to an edge)."""
    if range_ is not None:
        lo = torch.tensor(float(range_[0]), device=col.device)
        hi = torch.tensor(float(range_[1]), device=col.device)
    elif col.numel():
        lo, hi = col.amin(), col.amax()
    else:
        lo = hi = torch.tensor(0.0, device=col.device)
    same = lo == hi
    lo, hi = torch.where(same, lo - 0.5, lo), torch.where(same, hi + 0.5, hi)
    i = torch.arange(bins + 1, device=col.device, dtype=torch.float32)
    step = (hi - lo) / bins
    return torch.where(i < (bins + 1) // 2, lo + step * i, hi - step * (bins - i))


def histogram_bins(x: torch.Tensor, bins: int, *, range: list[float] | None = None,  # noqa: A002
                   weight: torch.Tensor | None = None, density: bool = False
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """torch.histogram with a bin count: `bins` edges over the range (_linear_edges)."""
    flat = x.reshape(-1).float()
    edges = _linear_edges(flat, bins, range)
    return _bin_counts(flat, edges, weight, density).to(x.dtype), edges.to(x.dtype)


def histogram_edges(x: torch.Tensor, bins: torch.Tensor, *, weight: torch.Tensor | None = None,
                    density: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """torch.histogram over given edges."""
    edges = bins.reshape(-1).float()
    if edges.numel() < 2:
        return NotImplemented
    return _bin_counts(x.reshape(-1).float(), edges, weight, density).to(x.dtype), bins.clone()


def _dd_edges(x: torch.Tensor, bins: list[int], range_: list[float] | None
              ) -> list[torch.Tensor]:
    cols = x.reshape(-1, x.shape[-1]).float()
    return [_linear_edges(cols[:, d], b, None if range_ is None else range_[2 * d:2 * d + 2])
            for d, b in enumerate(bins)]


def histogramdd_bin_edges(x: torch.Tensor, bins: list[int], *, range: list[float] | None = None,  # noqa: A002
                          weight: torch.Tensor | None = None, density: bool = False
                          ) -> list[torch.Tensor]:
    return [e.to(x.dtype) for e in _dd_edges(x, bins, range)]


def _dd_counts(x: torch.Tensor, edges: list[torch.Tensor], weight: torch.Tensor | None,
               density: bool) -> torch.Tensor:
    """torch.histogramdd: each row of x ([N, D]) lands in the bin of each of its coordinates
    (as _bin_counts), counted when every coordinate lies within its edges; density divides by
    the total and each bin's volume."""
    cols = x.reshape(-1, x.shape[-1]).float()
    sizes = [e.numel() - 1 for e in edges]
    flat = torch.zeros(cols.shape[0], dtype=torch.int64, device=x.device)
    inside = torch.ones(cols.shape[0], dtype=torch.bool, device=x.device)
    for d, e in enumerate(edges):
        col = cols[:, d]
        pos = ((e.unsqueeze(0) <= col.unsqueeze(1)).sum(1) - 1).clamp(min=0, max=sizes[d] - 1)
        inside = inside & (col >= e[0]) & (col <= e[-1])
        flat = flat * sizes[d] + pos
    total = math.prod(sizes)
    member = (flat.unsqueeze(0) == torch.arange(total, device=x.device).unsqueeze(1)) & inside
    w = torch.ones_like(cols[:, 0]) if weight is None else weight.reshape(-1).float()
    hist = torch.where(member, w.unsqueeze(0), 0.0).sum(1).reshape(sizes)
    if density:
        volume = torch.ones(sizes, device=x.device)
        for d, e in enumerate(edges):
            shape = [1] * len(sizes)
            shape[d] = sizes[d]
            volume = volume * (e[1:] - e[:-1]).reshape(shape)
        hist = hist / (hist.sum() * volume)
    return hist


def histogramdd_from_bin_cts(x: torch.Tensor, bins: list[int], *,
                             range: list[float] | None = None,  # noqa: A002
                             weight: torch.Tensor | None = None, density: bool = False
                             ) -> torch.Tensor:
    return _dd_counts(x, _dd_edges(x, bins, range), weight, density).to(x.dtype)


def histogramdd_from_bin_tensors(x: torch.Tensor, bins: list[torch.Tensor], *,
                                 weight: torch.Tensor | None = None, density: bool = False
                                 ) -> torch.Tensor:
    if any(b.numel() < 2 for b in bins):
        return NotImplemented
    return _dd_counts(x, [b.reshape(-1).float() for b in bins], weight, density).to(x.dtype)


def nonzero_static(x: torch.Tensor, *, size: int, fill_value: int = -1) -> torch.Tensor:
    """Row k holds the coordinates of the k-th nonzero element in row-major order, or
    fill_value past the last one: element e is row (number of nonzeros before e)."""
    nz = (x != 0).reshape(-1)
    n = nz.numel()
    out_shape = (size, x.dim())
    if size == 0 or n == 0:
        return torch.full(out_shape, fill_value, dtype=torch.int64, device=x.device)
    rank = torch.cumsum(nz.to(torch.int64), 0) - 1  # decomp.cumsum: a masked reduction
    rows = torch.arange(size, device=x.device)
    hit = nz.unsqueeze(0) & (rank.unsqueeze(0) == rows.unsqueeze(1))  # [size, n]
    flat = torch.arange(n, device=x.device)
    coords = []
    for extent, stride in zip(x.shape, _row_major_strides(x.shape)):
        coord = (flat // stride) % extent
        coords.append(torch.where(hit, coord.unsqueeze(0), 0).sum(1))
    found = hit.any(1)
    out = torch.stack(coords, 1) if coords else torch.zeros(size, 0, dtype=torch.int64)
    return torch.where(found.unsqueeze(1), out, fill_value)


def _row_major_strides(shape: torch.Size) -> list[int]:
    strides, s = [], 1
    for extent in reversed(shape):
        strides.append(s)
        s *= extent
    return strides[::-1]


# --- embedding bags ----------------------------------------------------------------------------

_SUM, _MEAN, _MAX = 0, 1, 2


def embedding_bag(weight: torch.Tensor, indices: torch.Tensor, offsets: torch.Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: torch.Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int = -1) -> Any:
    """Bag b holds indices[offsets[b]:offsets[b + 1]] (the last bag runs to the end unless
    include_last_offset); entries equal to padding_idx (>= 0) count in no bag. Results in the
    shapes of torch's CPU kernel (_meta_registrations: output, offset2bag, bag_size,
    max_indices)."""
    n = indices.shape[0]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    pos = torch.arange(n, device=indices.device)
    bag_of = (offsets[:bags].unsqueeze(0) <= pos.unsqueeze(1)).sum(1) - 1  # [n]
    member = bag_of.unsqueeze(0) == torch.arange(bags, device=indices.device).unsqueeze(1)
    if include_last_offset:
        member = member & (pos.unsqueeze(0) < offsets[bags])
    if padding_idx >= 0:
        member = member & (indices != padding_idx).unsqueeze(0)
    rows = weight[indices]  # [n, D]
    count = member.sum(1)
    if mode == _MAX:
        picked = torch.where(member.unsqueeze(-1), rows.unsqueeze(0), -math.inf)
        output = torch.where((count > 0).unsqueeze(1), picked.amax(1), 0).to(weight.dtype)
        at = picked.argmax(1)  # the position in indices
        max_indices = torch.where((count > 0).unsqueeze(1), indices[at], -1)
    else:
        if per_sample_weights is not None:
            rows = rows * per_sample_weights.unsqueeze(1)
        output = member.to(weight.dtype) @ rows
        if mode == _MEAN:
            output = output / count.clamp(min=1).unsqueeze(1).to(weight.dtype)
        max_indices = count.new_zeros(bags)
    bag_size = torch.cat([count, count.new_zeros(offsets.shape[0] - bags)])
    offset2bag = bag_of.to(offsets.dtype)
    return output, offset2bag, bag_size.to(offsets.dtype), max_indices.to(offsets.dtype)


# --- segments -----------------------------------------------------------------------------------

_SEGMENT_IDENTITY = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf}


def segment_reduce(data: torch.Tensor, reduce: str, lengths: torch.Tensor | None = None,
                   indices: torch.Tensor | None = None, offsets: torch.Tensor | None = None,
                   axis: int = 0, unsafe: bool = False, initial: float | None = None
                   ) -> torch.Tensor:
    """Segment s of `data` along `axis` is elements [start_s, end_s) (the lengths' exclusive and
    inclusive prefix sums, or consecutive offsets); each output reduces its segment's elements
    from `initial` (sum, prod, max, min; mean divides by the length; an empty segment is
    `initial`, else the reduction's identity, NaN for mean), in fp32 as eager accumulates."""
    if indices is not None or (lengths is None) == (offsets is None) or \
            reduce not in _SEGMENT_IDENTITY:
        return NotImplemented
    axis = axis % data.dim()
    n = data.shape[axis]
    if lengths is not None:
        end = torch.cumsum(lengths, -1)
        start = end - lengths
    else:
        start, end = offsets[..., :-1], offsets[..., 1:]
    i = torch.arange(n, device=data.device)
    member = (i >= start.unsqueeze(-1)) & (i < end.unsqueeze(-1))  # [lead..., S, N]
    trail = data.dim() - axis - 1
    member = member.reshape(*member.shape, *([1] * trail))  # [lead..., S, N, trail...]
    x = data.to(torch.float32).unsqueeze(axis)  # [lead..., 1, N, trail...]
    base = _SEGMENT_IDENTITY[reduce]
    masked = torch.where(member, x, base)
    if reduce in ("sum", "mean"):
        out = masked.sum(axis + 1) + (initial or 0.0)
    elif reduce == "prod":
        out = masked.prod(axis + 1) * (1.0 if initial is None else initial)
    else:
        out = masked.amax(axis + 1) if reduce == "max" else masked.amin(axis + 1)
        if initial is not None:
            out = torch.maximum(out, torch.full_like(out, initial)) if reduce == "max" else \
                torch.minimum(out, torch.full_like(out, initial))
    if reduce == "mean":
        count = (end - start).to(torch.float32).reshape(*start.shape, *([1] * trail))
        empty = math.nan if initial is None else initial
        out = torch.where(count > 0, out / count.clamp(min=1), empty)
    return out.to(data.dtype)
