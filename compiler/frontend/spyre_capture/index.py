"""Index expressions -> the SCHEMA.md `Index` object (pure sympy, no Inductor internals)."""

from __future__ import annotations

from collections.abc import Sequence

import sympy


def describe_index(expr: sympy.Expr, var_names: Sequence[str]) -> dict:
    """`{"expr", "affine"}` for an index over the node's loop variables.

    `affine` is `{"offset", "coeffs"}` when `expr` is `offset + sum(c_v * v)` with integer
    constants over `var_names` only (every variable listed, 0 when absent); otherwise None.
    """
    expr = sympy.sympify(expr)
    return {"expr": str(expr), "affine": affine_form(expr, var_names)}


def affine_form(expr: sympy.Expr, var_names: Sequence[str]) -> dict | None:
    expanded = sympy.expand(expr)
    coeffs = {name: 0 for name in var_names}
    offset = 0
    for term, coeff in expanded.as_coefficients_dict().items():
        if not coeff.is_Integer:
            return None
        if term == 1:
            offset += int(coeff)
        elif isinstance(term, sympy.Symbol) and term.name in coeffs:
            coeffs[term.name] += int(coeff)
        else:
            return None  # a product, a FloorDiv/ModularIndexing, or an indirect symbol
    return {"offset": offset, "coeffs": coeffs}
