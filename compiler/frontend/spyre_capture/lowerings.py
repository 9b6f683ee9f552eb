"""Inductor lowerings for ops the chip computes element-wise but CPU Inductor leaves to an ATen
kernel (a fallback): installed in Inductor's lowering table only while a graph is captured
(`installed()`, used by adapter.capture_context), so a plain Inductor compile in the same
process is unchanged.

- gcd: one SFP function per element (isa sfp_fn.def `gcd`), the loop body's op `gcd` (lcm,
  which torch computes from gcd, follows). An element-wise Euclid loop unrolled into Inductor's
  ops instead would need 46 steps of remainders, which Inductor inlines into one expression of
  exponential size.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch._inductor import lowering as inductor_lowering
from torch._inductor.virtualized import ops

aten = torch.ops.aten
_LOWERINGS: dict[Any, Callable[..., Any]] = {}


def _gcd(a: Any, b: Any) -> Any:
    dtype = a.get_dtype()

    def body(x: Any, y: Any) -> Any:
        # An op Inductor's handlers do not know: named as it is; its dtype is the operands'.
        return ops.to_dtype(ops.gcd(x, y), dtype)

    return inductor_lowering.make_pointwise(body, override_return_dtype=dtype)(a, b)


inductor_lowering._register_lowering(
    aten.gcd.default, _gcd, broadcast=True,
    type_promotion_kind=inductor_lowering.ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT,
    convert_input_to_bool=False, lowering_dict=_LOWERINGS)


@contextlib.contextmanager
def installed() -> Iterator[None]:
    table = inductor_lowering.lowerings
    saved = {op: table[op] for op in _LOWERINGS if op in table}
    table.update(_LOWERINGS)
    try:
        with warnings.catch_warnings():  # Inductor warns once per op its handlers do not know
            warnings.filterwarnings("ignore", message="undefined OpHandler.gcd")
            yield
    finally:
        for op in _LOWERINGS:
            if op in saved:
                table[op] = saved[op]
            else:
                table.pop(op, None)
