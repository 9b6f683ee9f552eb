"""Host fallback (`--set compiler.host_fallback=on`): the ATen op of one `host.call` run on the
host, in eager PyTorch, over the simulator's device memory.

The compiler describes each call in its report (`host_calls[id]`, compiler/README.md): the ATen
overload, its arguments in schema order with tensors as `{"input": i}`, where each input and
output lies in device memory, and which inputs the op updates in place. In a functional run the
simulator calls `execute` when the call's inputs have crossed the host link; the outputs it
writes land in device memory before they cross back (their time is the link's, sim/README.md).
"""

from __future__ import annotations

import json
import re

import torch

from .tensors import torch_dtype

# The sizes data-dependent ops computed (u0 -> its value): set by the host call whose result
# has that size, read by later calls (and by the caller, for the graph's outputs). A run passes
# its own dict; calls made without one (the spyre-sim CLI) share this one.
_SYMBOLS: dict[str, int] = {}
_SYMBOL = re.compile(r"u[0-9]+")
# What a size expression over such symbols may hold (the IR is data, never code to run).
_EXPR = re.compile(r"[\w\s+\-*(),]*")
_EXPR_NAMES = {"Max", "Min", "FloorDiv", "CeilDiv"}


class HostCallError(Exception):
    """A host call that cannot run: names the call's op and what is wrong."""


def _view(dram: memoryview, t: dict) -> torch.Tensor:
    """The tensor `t` ({dtype, size, stride, dram_addr}) as a view of device memory."""
    dtype = torch_dtype(t["dtype"])
    size, stride = list(t["size"]), list(t["stride"])
    if any(s == 0 for s in size):
        return torch.empty(size, dtype=dtype)
    span = 1 + sum((s - 1) * st for s, st in zip(size, stride))
    flat = torch.frombuffer(dram, dtype=dtype, count=span, offset=int(t["dram_addr"]))
    return flat.as_strided(size, stride)


def _size_value(expr, symbols: dict[str, int], what: str) -> int:
    """A size, stride or offset of a `symbolic` layout at the symbols' values."""
    if isinstance(expr, int):
        return expr
    names = set(re.findall(r"[A-Za-z_]\w*", expr)) if isinstance(expr, str) else set()
    if not isinstance(expr, str) or not _EXPR.fullmatch(expr) or any(
            not _SYMBOL.fullmatch(n) and n not in _EXPR_NAMES for n in names):
        raise HostCallError(f"{what}: size expression {expr!r}: expected integers, symbols u0, "
                            f"u1, ... and {', '.join(sorted(_EXPR_NAMES))}")
    unknown = sorted(n for n in names if _SYMBOL.fullmatch(n) and n not in symbols)
    if unknown:
        raise HostCallError(f"{what}: the size {unknown[0]} is not known: no host call of "
                            "this run has computed it")
    import sympy
    from torch.utils._sympy.functions import CeilDiv, FloorDiv

    local = {n: sympy.Integer(symbols[n]) for n in names if _SYMBOL.fullmatch(n)}
    local.update(Max=sympy.Max, Min=sympy.Min, FloorDiv=FloorDiv, CeilDiv=CeilDiv)
    return int(sympy.sympify(expr, locals=local))


def resolved(t: dict, symbols: dict[str, int], what: str) -> dict:
    """`t` (a host-call tensor or a graph output) laid out at the symbols' values: its size,
    stride and offset, and dram_addr moved by the offset's change. Unchanged without
    `symbolic`."""
    sym = t.get("symbolic")
    if not sym:
        return t
    size = [_size_value(e, symbols, what) for e in sym["size"]]
    stride = [_size_value(e, symbols, what) for e in sym["stride"]]
    offset = _size_value(sym["offset"], symbols, what)
    out = {**t, "size": size, "stride": stride, "offset": offset}
    if "dram_addr" in t:
        itemsize = torch_dtype(t["dtype"]).itemsize
        out["dram_addr"] = int(t["dram_addr"]) + (offset - int(t.get("offset", 0))) * itemsize
    return out


def _bind_sizes(op: str, out: dict, value: torch.Tensor, symbols: dict[str, int],
                bound_here: dict[str, int]) -> None:
    """The symbols an output's sizes are (u0 for nonzero's rows) take the result's sizes,
    within the bounds its buffer was planned for."""
    sym = out.get("symbolic")
    if not sym:
        return
    for d, e in enumerate(sym["size"]):
        if not (isinstance(e, str) and _SYMBOL.fullmatch(e)) or d >= value.dim():
            continue
        v = int(value.shape[d])
        if bound_here.setdefault(e, v) != v:
            raise HostCallError(f"{op} on the host: its results disagree on the size {e} "
                                f"({bound_here[e]} and {v})")
        lo, hi = sym["bounds"].get(e, [0, None])
        if v < lo or (hi is not None and v > hi):
            raise HostCallError(f"{op} on the host: its result's size {e} = {v} is outside "
                                f"[{lo}, {hi}], the range its buffer was planned for")
        symbols[e] = v


def _resolve_op(name: str):
    """'aten.sort.stable' -> torch.ops.aten.sort.stable; any namespace torch.ops holds (prims'
    random ops, torch_nn's chunked linear cross entropy, a user's custom op)."""
    parts = name.split(".")
    if len(parts) != 3 or not all(parts):
        raise HostCallError(f"{name}: expected an overload NAMESPACE.NAME.OVERLOAD")
    try:
        return getattr(getattr(getattr(torch.ops, parts[0]), parts[1]), parts[2])
    except (AttributeError, RuntimeError) as e:
        raise HostCallError(f"{name}: no such overload in torch {torch.__version__}") from e


def _unwrap_type(arg_type: str, wrapper: str) -> str | None:
    """'Optional[X]' -> 'X' for wrapper 'Optional' (None when arg_type is not one)."""
    prefix = wrapper + "["
    if arg_type.startswith(prefix) and arg_type.endswith("]"):
        return arg_type[len(prefix):-1]
    return None


def _argument(value, arg_type: str, inputs: list):
    """One argument of the IR's call, back to what the schema expects (`arg_type`: the
    argument's real type as torch prints it, `Optional[ScalarType]`, `List[int]`): tensors from
    `inputs`, dtypes, layouts, devices and memory formats from their names, "inf"/"nan"
    floats."""
    while (inner := _unwrap_type(arg_type, "Optional")) is not None:
        arg_type = inner
    if isinstance(value, dict) and "input" in value:
        return inputs[value["input"]]
    if isinstance(value, list):
        element = _unwrap_type(arg_type, "List")
        return [_argument(v, element if element is not None else arg_type, inputs)
                for v in value]
    if isinstance(value, str):
        if arg_type in ("ScalarType", "Layout", "MemoryFormat"):
            return getattr(torch, value.removeprefix("torch."))
        if arg_type == "Device":
            return torch.device("cpu")  # the host's copy of a device tensor
        if arg_type in ("float", "number") and value in ("inf", "-inf", "nan"):  # number: Scalar
            return float(value)
    return value


def _call_arguments(op, call: dict, inputs: list) -> tuple[list, dict]:
    """The call's `args` and `kwargs` as the overload's schema expects them."""
    schema = op._schema
    types = {a.name: str(a.real_type) for a in schema.arguments}
    positional = [str(a.real_type) for a in schema.arguments if not a.kwarg_only]
    args = [_argument(v, positional[i] if i < len(positional) else "", inputs)
            for i, v in enumerate(call.get("args", []))]
    kwargs = {k: _argument(v, types.get(k, ""), inputs) for k, v in call.get("kwargs", {}).items()}
    return args, kwargs


def _leaves(result) -> list:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def execute(call: dict | str, dram: memoryview, symbols: dict[str, int] | None = None) -> None:
    """Runs one host call (a dict, or its JSON text as the simulator passes it): reads its
    inputs from `dram`, writes its outputs (and the inputs it updates in place) back. `dram` is
    the device memory image (writable). `symbols`: the sizes data-dependent ops computed in
    this run, which this call reads and adds to (`symbolic` layouts: an output is written at its
    real size, inside the buffer planned for the upper bound)."""
    if isinstance(call, str):
        call = json.loads(call)
    if symbols is None:
        symbols = _SYMBOLS
    op = _resolve_op(call["op"])
    inputs = [_view(dram, resolved(t, symbols, call["op"])) for t in call["inputs"]]
    mutated = set(call.get("mutated", []))
    # Inputs the op only reads are copies: an op that writes an argument it should not cannot
    # change device memory behind the program's back.
    args_in = [t if i in mutated else t.clone() for i, t in enumerate(inputs)]
    args, kwargs = _call_arguments(op, call, args_in)
    try:
        with torch.no_grad():
            result = op(*args, **kwargs)
    except Exception as e:  # the op's own error (bad arguments) names the op
        raise HostCallError(f"{call['op']} on the host: {type(e).__name__}: {e}") from e
    values, bound_here = [], {}
    for out in call.get("outputs", []):
        value = result
        for i in out.get("index", []):
            value = _leaves(value)[i]
        if not isinstance(value, torch.Tensor):
            value = torch.tensor(value)
        _bind_sizes(call["op"], out, value, symbols, bound_here)
        values.append(value)
    for out, value in zip(call.get("outputs", []), values):
        dest = _view(dram, resolved(out, symbols, call["op"]))
        if list(value.shape) != list(dest.shape):
            raise HostCallError(f"{call['op']} on the host: result of shape {list(value.shape)}, "
                                f"the program expects {list(dest.shape)}")
        if dest.numel():
            dest.copy_(value.to(dest.dtype))



def run_check(check: dict, info: torch.Tensor) -> None:
    """One of an IR's `checks` (SCHEMA.md): torch's own check (`_linalg_check_errors`) of an
    `info` the chip computed, read back after the run; raises what eager raises."""
    op = _resolve_op(check["op"])
    args, kwargs = _call_arguments(op, check, [info])
    op(*args, **kwargs)
