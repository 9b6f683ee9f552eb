"""Sizes a data-dependent op computes (nonzero, unique, masked_select: Inductor's unbacked
symbols u0, u1, ...) in the IR: a layout holding them is laid out at every symbol's upper bound
from Inductor's value ranges, and keeps the expressions and each symbol's [min, max] in
`symbolic` (SCHEMA.md), for the host that runs the op (host fallback) and for the compiler's
refusal of the device kernels that would read it. Inductor's run-time checks on those symbols
(AssertScalar) hold whenever the values lie within the ranges, which the host checks."""

from __future__ import annotations

import sys
from typing import Any

import sympy
import torch
from torch._inductor.virtualized import V

from .errors import CaptureError


def _expr(x: Any) -> Any:
    return sympy.sympify(x.node.expr if isinstance(x, torch.SymInt) else x)


def unbacked_symbols(x: Any) -> list:
    """The unbacked symbols in `x` (an int, a SymInt or a sympy expression)."""
    return sorted((s for s in getattr(_expr(x), "free_symbols", ()) if str(s).startswith("u")),
                  key=str)


def _finite_int(v: Any) -> int | None:
    """`v` (a bound of a value range) as an int; None when it is infinite."""
    from torch.utils._sympy.numbers import int_oo

    if v in (int_oo, -int_oo, sympy.oo, -sympy.oo) or not getattr(v, "is_integer", False):
        return None
    # torch's fake kernels bound a size they cannot bound by sys.maxsize - 1.
    return int(v) if abs(int(v)) < sys.maxsize - 1 else None


def _unbounded(what: str) -> CaptureError:
    return CaptureError(f"the {what} depends on the values of a tensor and has no upper bound "
                        "(bincount, ...): no buffer can be planned for it")


def symbolic_layout(size: list, stride: list, offset: Any, symbols: list) -> dict:
    """{"size", "stride", "offset"} at the symbols' upper bounds, and "symbolic"."""
    shape_env = V.graph.sizevars.shape_env

    def at_bound(x: Any, what: str) -> int:
        upper = _finite_int(shape_env.bound_sympy(_expr(x)).upper)
        if upper is None:
            raise _unbounded(f"{what} {_expr(x)}")
        return upper

    def text(x: Any) -> int | str:
        return str(_expr(x)) if unbacked_symbols(x) else int(x)

    bounds = {}
    for s in symbols:
        r = shape_env.var_to_range.get(s)
        lower, upper = (None, None) if r is None else (_finite_int(r.lower), _finite_int(r.upper))
        if lower is None or upper is None:
            raise _unbounded(f"size {s}")
        bounds[str(s)] = [lower, upper]
    return {
        "size": [at_bound(x, "size") for x in size],
        "stride": [at_bound(x, "stride") for x in stride],
        "offset": at_bound(offset, "offset"),
        "symbolic": {"size": [text(x) for x in size], "stride": [text(x) for x in stride],
                     "offset": text(offset), "bounds": bounds},
    }


def check_assert_scalar(node: Any) -> None:
    """An AssertScalar (u0 <= numel) is dropped when the symbols' ranges imply it; any other
    run-time check on values is refused."""
    cond = sympy.sympify(node.scalar)
    if V.graph.sizevars.shape_env.bound_sympy(cond).lower is not sympy.true:
        raise CaptureError(f"a run-time check {cond} on values of a tensor ({node.msg}): the "
                           "chip's programs cannot check it")
