"""Inductor's loop bodies replayed into the IR's SSA ops (SCHEMA.md "body").

A LoopBody is run with `Recorder` as Inductor's ops handler over symbolic loop variables
(x0.., r0..); each op it calls becomes one instruction with its operands, dtype (Inductor's own
dtype rules) and, for memory ops, the index as an affine form where it is one. Like adapter.py,
this module uses Inductor's private ops-handler protocol (torch 2.13).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sympy
import torch
from torch._inductor.dtype_propagation import DtypePropagationOpsHandler
from torch._inductor.ops_handler import DefaultHandler
from torch._inductor.virtualized import V

from .errors import CaptureError
from .index import describe_index


def ir_dtype(dtype: torch.dtype | None) -> str | None:
    if dtype is not None and dtype.is_complex:
        raise CaptureError(f"a {dtype_name(dtype)} tensor in the graph: the chip has no complex "
                           "dtype (FFTs and complex arithmetic do not run on it)")
    return None if dtype is None else dtype_name(dtype)


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def scalar_json(v: Any) -> Any:
    """A loop body's scalar (a constant's value, a size, a masked op's other value) as JSON:
    infinities and NaN as strings, sympy integers as ints, anything else as its text."""
    if isinstance(v, (bool, int, str)) or v is None:
        return v
    if isinstance(v, float):
        return v if v == v and abs(v) != float("inf") else str(v)
    if isinstance(v, sympy.Integer):
        return int(v)
    return str(v)


def record_body(snode: Any, iter_sizes: list[int], reduce_sizes: list[int]
                ) -> tuple[list[str], list[str], list[dict]]:
    """Replays `snode`'s LoopBody: (loop variable names, reduction variable names, ops)."""
    xs = [sympy.Symbol(f"x{i}", integer=True, nonnegative=True) for i in range(len(iter_sizes))]
    rs = [sympy.Symbol(f"r{i}", integer=True, nonnegative=True) for i in range(len(reduce_sizes))]
    recorder = Recorder([s.name for s in (*xs, *rs)], sizes=[*iter_sizes, *reduce_sizes])
    with V.set_ops_handler(recorder):
        snode._body(xs, rs, allow_same_symbol_in_index=True)
    return [s.name for s in xs], [s.name for s in rs], recorder.ops


_NARROW_INTS = {torch.uint8: (0, 255), torch.int16: (-2**15, 2**15 - 1)}


def fits_int32_range(affine: dict | None, var_names: Sequence[str], sizes: Sequence[int],
                      dtype: torch.dtype) -> bool:
    """True when `dtype` is a narrow integer type the chip lacks and the affine index takes
    only values that type holds over loops of extents `sizes`."""
    if dtype not in _NARROW_INTS or affine is None or len(sizes) != len(var_names):
        return False
    lo = hi = affine["offset"]
    for name, n in zip(var_names, sizes):
        step = affine["coeffs"].get(name, 0) * (max(n, 1) - 1)
        lo, hi = lo + min(step, 0), hi + max(step, 0)
    low, high = _NARROW_INTS[dtype]
    return low <= lo and hi <= high


class _Value:
    """An SSA value of a replayed loop body; `.dtype` lets Inductor's dtype rules run on it."""

    def __init__(self, name: str, dtype: torch.dtype | None):
        self.name = name
        self.dtype = dtype
        self.is_scalar = False

    def __str__(self) -> str:
        return self.name


_DTYPE_RULES: DtypePropagationOpsHandler | None = None


def _dtype_rules() -> DtypePropagationOpsHandler:
    global _DTYPE_RULES
    if _DTYPE_RULES is None:
        _DTYPE_RULES = DtypePropagationOpsHandler()
    return _DTYPE_RULES


class Recorder(DefaultHandler):
    """Ops handler that records each op of a LoopBody replay as an SSA instruction."""

    def __init__(self, var_names: list[str], counter: list[int] | None = None,
                 sizes: Sequence[int] = ()):
        self.var_names = var_names
        self.sizes = list(sizes)  # each loop variable's extent, for index_expr's range
        self.ops: list[dict] = []
        self._counter = counter if counter is not None else [0]

    def _new_id(self) -> str:
        name = f"v{self._counter[0]}"
        self._counter[0] += 1
        return name

    def _emit(self, op: str, args: Sequence[Any], dtype: torch.dtype | None, **extra: Any) -> _Value:
        vid = self._new_id()
        self.ops.append({"id": vid, "op": op, "args": [self._operand(a) for a in args],
                         "dtype": ir_dtype(dtype), **extra})
        return _Value(vid, dtype)

    def _operand(self, a: Any) -> str:
        if isinstance(a, _Value):
            return a.name
        if isinstance(a, (bool, int, float)):  # a Python scalar operand: materialise it
            dtype = torch.bool if isinstance(a, bool) else torch.int64 if isinstance(a, int) else torch.float32
            return self.constant(a, dtype).name
        raise CaptureError(f"unexpected loop-body operand {a!r}")

    def _index(self, index: Any) -> dict:
        return describe_index(index, self.var_names)

    # -- memory
    def load(self, name: str, index: Any) -> _Value:
        return self._emit("load", [], V.graph.get_dtype(name), buffer=name, index=self._index(index))

    def store(self, name: str, index: Any, value: Any, mode: Any = None) -> None:
        self.ops.append({"op": "store", "args": [self._operand(value)], "buffer": name,
                         "index": self._index(index), "mode": mode})

    def store_reduction(self, name: str, index: Any, value: Any) -> None:
        self.ops.append({"op": "store_reduction", "args": [self._operand(value)], "buffer": name,
                         "index": self._index(index), "mode": None})

    # -- values
    def constant(self, value: Any, dtype: torch.dtype) -> _Value:
        """A constant; one of a narrow integer type the chip lacks is recorded as int32 when the
        type holds its value (eye's folded indices), as index_expr's are."""
        v = self._emit("constant", [], dtype, value=scalar_json(value))
        if (dtype in _NARROW_INTS and isinstance(value, (int, bool))
                and _NARROW_INTS[dtype][0] <= int(value) <= _NARROW_INTS[dtype][1]):
            self.ops[-1]["dtype"] = "int32"
        return v

    def index_expr(self, expr: Any, dtype: torch.dtype) -> _Value:
        """An index as a value. Inductor types some as a narrow integer the chip lacks (eye's
        as uint8); when every value the affine index takes over the loop fits that type, it is
        recorded as int32, which holds the same values. The value keeps Inductor's dtype for
        the ops that read it, so arithmetic that could wrap in the narrow type still names
        it."""
        index = self._index(expr)
        v = self._emit("index_expr", [], dtype, index=index)
        if fits_int32_range(index["affine"], self.var_names, self.sizes, dtype):
            self.ops[-1]["dtype"] = "int32"
        return v

    def to_dtype(self, x: Any, dtype: torch.dtype, src_dtype: Any = None, use_compute_types: bool = True) -> _Value:
        return self._emit("to_dtype", [x], dtype)

    def to_dtype_bitcast(self, x: Any, dtype: torch.dtype, src_dtype: Any) -> _Value:
        return self._emit("to_dtype_bitcast", [x], dtype)

    def reduction(self, dtype: torch.dtype, src_dtype: torch.dtype, reduction_type: str, value: Any) -> Any:
        args = list(value) if isinstance(value, tuple) else [value]
        n = 3 if reduction_type in ("welford_reduce", "welford_combine") else 1
        v = self._emit("reduction", args, dtype, reduction_type=reduction_type, outputs=n)
        if n == 1:
            return v
        return tuple(_Value(f"{v.name}.{i}", dtype) for i in range(n))

    def indirect_indexing(self, x: Any, size: Any, check: bool = True, wrap_neg: bool = True) -> sympy.Symbol:
        v = self._emit("indirect_indexing", [x], torch.int64, size=scalar_json(size), check=bool(check))
        return sympy.Symbol(v.name, integer=True)

    def check_bounds(self, expr: Any, size: Any, lower: bool, upper: bool) -> None:
        self.ops.append({"op": "check_bounds", "args": [], "index": self._index(expr),
                         "size": scalar_json(size), "lower": bool(lower), "upper": bool(upper)})

    def masked(self, mask: Any, body: Callable[[], Any], other: Any) -> _Value:
        sub = Recorder(self.var_names, self._counter, self.sizes)
        with V.set_ops_handler(sub):
            result = body()
        dtype = result.dtype if isinstance(result, _Value) else None
        return self._emit("masked", [mask], dtype, value=scalar_json(other), body=sub.ops)

    def output(self, *args: Any) -> None:
        pass

    def frexp(self, x: Any) -> tuple[_Value, _Value]:
        """Inductor's one pointwise op with two results: (mantissa, exponent)."""
        v = self._emit("frexp", [x], getattr(x, "dtype", None), outputs=2)
        return _Value(f"{v.name}.0", v.dtype), _Value(f"{v.name}.1", torch.int32)

    def _default(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Value:
        try:
            dtype = getattr(_dtype_rules(), name)(*args, **kwargs)
        except Exception:  # no rule for this op/operands: leave the dtype unknown
            dtype = None
        values = [a for a in args if isinstance(a, (_Value, bool, int, float))]
        return self._emit(name, values, dtype)
