"""A reference evaluator of SCHEMA.md v1 IR with torch tensors (tests only).

It executes the IR itself (buffers, loop bodies, extern kernels), not the FX graph, so a test
that compares it with eager PyTorch checks that the captured IR means what the model computes.
Each loop body is evaluated on whole index grids: variable `x<i>`/`r<j>` is an arange shaped to
broadcast along its own dimension of `sizes + reduce_sizes`. Inside a `masked` block every load
and indirect index is evaluated at index 0 where the mask is false (the value is discarded), so
padding and slicing never read out of bounds. Fallback nodes run their ATen op from `call`
(the C++ compiler lowers topk, sort, kthvalue and median and refuses the rest; here they keep
the rest of a graph checkable). Graph inputs that the IR writes (in-place mutation) are copied
back into the caller's tensors.
"""

from __future__ import annotations

import math

import torch

_DTYPES = {
    "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
    "float64": torch.float64, "int8": torch.int8, "int32": torch.int32, "int64": torch.int64,
    "bool": torch.bool,
}

_UNARY = {
    "exp": torch.exp, "erf": torch.erf, "tanh": torch.tanh, "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt, "relu": torch.relu, "sigmoid": torch.sigmoid, "neg": torch.neg,
    "abs": torch.abs, "log": torch.log, "square": torch.square, "reciprocal": torch.reciprocal,
    "logical_not": torch.logical_not, "sin": torch.sin, "cos": torch.cos,
    "log1p": torch.log1p, "expm1": torch.expm1, "floor": torch.floor, "ceil": torch.ceil,
    "trunc": torch.trunc, "round": torch.round, "sign": torch.sign, "bitwise_not": torch.bitwise_not,
    "tan": torch.tan, "sinh": torch.sinh, "cosh": torch.cosh, "asin": torch.asin, "acos": torch.acos,
    "atan": torch.atan, "log2": torch.log2, "exp2": torch.exp2, "erfc": torch.erfc,
    "isinf": torch.isinf, "isnan": torch.isnan, "signbit": torch.signbit, "identity": lambda x: x,
}
_BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "truediv": torch.div,
    "maximum": torch.maximum, "minimum": torch.minimum, "lt": torch.lt, "le": torch.le,
    "gt": torch.gt, "ge": torch.ge, "eq": torch.eq, "ne": torch.ne, "pow": torch.pow,
    "and_": torch.logical_and, "or_": torch.logical_or, "floordiv": torch.floor_divide,
    "logical_and": torch.logical_and, "logical_or": torch.logical_or, "xor": torch.logical_xor,
    "logical_xor": torch.logical_xor, "bitwise_and": torch.bitwise_and,
    "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
    "bitwise_left_shift": torch.bitwise_left_shift, "bitwise_right_shift": torch.bitwise_right_shift,
    "mod": torch.fmod, "fmod": torch.fmod, "remainder": torch.remainder, "atan2": torch.atan2,
    "copysign": torch.copysign, "truncdiv": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "gcd": torch.gcd,
    "int_truediv": lambda a, b: a / b,
}
_EXTERN = {
    "extern_kernels.mm": torch.mm, "extern_kernels.addmm": torch.addmm,
    "extern_kernels.bmm": torch.bmm, "extern_kernels.baddbmm": torch.baddbmm,
    "extern_kernels.convolution": torch.convolution,
}


def storage_elems(size: list[int], stride: list[int], offset: int) -> int:
    if any(s == 0 for s in size):
        return 0
    return offset + sum((s - 1) * st for s, st in zip(size, stride)) + 1


def evaluate(ir: dict, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    store: dict[str, torch.Tensor] = {}
    buffers = {b["name"]: b for b in ir["buffers"]}
    for b in ir["buffers"]:  # owners first, then views into them
        if b["kind"] != "view" and b["dtype"] is not None:
            store[b["name"]] = torch.zeros(storage_elems(b["size"], b["stride"], b["offset"]),
                                           dtype=_DTYPES[b["dtype"]])
    for b in ir["buffers"]:
        if b["kind"] == "view":
            store[b["name"]] = store[b["view_of"]][b["offset"]:]
    for name, t in zip(ir["inputs"], inputs):
        b = buffers[name]
        _strided(store[name], b).copy_(t)
    results: dict[str, object] = {}  # a tuple-returning fallback's Python result, by buffer
    for node in ir["nodes"]:
        if node["kind"] in ("pointwise", "reduction"):
            _run_loops(node, store)
        elif node["kind"] == "extern":
            _run_extern(node, store)
        elif node["kind"] == "fallback":
            _run_fallback(node, store, results)
        else:
            raise NotImplementedError(f"{node['name']}: node kind {node['kind']}")
    written = _written_buffers(ir, buffers)
    for name, t in zip(ir["inputs"], inputs):
        if name in written:  # an in-place update of a graph input
            with torch.no_grad():
                t.copy_(_strided(store[name], buffers[name]))
    return [_strided(store[o["buffer"]], o).clone() for o in ir["outputs"]]


def _written_buffers(ir: dict, buffers: dict) -> set[str]:
    written = set()
    for node in ir["nodes"]:
        names = list(node["outputs"])
        names += [op["buffer"] for op in node.get("body", []) if op["op"] in ("store", "store_reduction")]
        for name in names:
            while name in buffers and buffers[name]["view_of"] is not None:
                name = buffers[name]["view_of"]
            written.add(name)
    return written


def _aten(name: str):
    op = torch.ops
    for part in name.removeprefix("torch.ops.").split("."):
        op = getattr(op, part)
    return op


def _call_arg(a, args: list[torch.Tensor]):
    if isinstance(a, dict) and set(a) == {"input"}:
        return args[a["input"]]
    if isinstance(a, list):
        return [_call_arg(x, args) for x in a]
    if isinstance(a, str) and a.startswith("torch."):  # a dtype/layout/device/memory format
        return eval(a, {"torch": torch})  # noqa: S307
    if isinstance(a, str) and a in _DTYPES:
        return _DTYPES[a]
    return a


def _run_fallback(node: dict, store: dict, results: dict) -> None:
    if node["kernel"] == "MultiOutput":
        value = results[node["inputs"][0]["buffer"]]
        for i in node["indices"]:
            value = value[i]
        _strided(store[node["outputs"][0]], node["layout"]).copy_(value)
        return
    if "call" not in node:
        raise NotImplementedError(f"{node['name']}: fallback {node['kernel']} without a call")
    args = [_strided(store[i["buffer"]], i) if i["dtype"] is not None else results[i["buffer"]]
            for i in node["inputs"]]
    call = node["call"]
    result = _aten(node["op_overload"])(*_call_arg(call["args"], args),
                                        **{k: _call_arg(v, args) for k, v in call["kwargs"].items()})
    if node["layout"] is None:
        results[node["outputs"][0]] = result
    else:
        _strided(store[node["outputs"][0]], node["layout"]).copy_(result)


def _strided(flat: torch.Tensor, layout: dict) -> torch.Tensor:
    return flat.as_strided(layout["size"], layout["stride"], layout["offset"])


def _run_extern(node: dict, store: dict[str, torch.Tensor]) -> None:
    args = [_strided(store[i["buffer"]], i) for i in node["inputs"]]
    kwargs = dict(node["kwargs"])
    if node["kernel"] == "extern_kernels.convolution" and "bias" not in kwargs and len(args) < 3:
        kwargs["bias"] = None
    fn = _EXTERN.get(node["kernel"]) or _aten(node["op_overload"].replace(".out", ".default"))
    result = fn(*args, *node["constant_args"], **kwargs)
    _strided(store[node["outputs"][0]], node["layout"]).copy_(result)


def _run_loops(node: dict, store: dict[str, torch.Tensor]) -> None:
    names = node["vars"] + node["reduce_vars"]
    sizes = node["sizes"] + node["reduce_sizes"]
    shape = [1] * len(sizes)
    grid = {}
    for d, (n, s) in enumerate(zip(names, sizes)):
        grid[n] = torch.arange(s).reshape(shape[:d] + [s] + shape[d + 1:])
    env: dict[str, torch.Tensor] = {}
    _run_body(node["body"], env, grid, store, len(node["reduce_vars"]), sizes)


def _index(index: dict, grid: dict, env: dict) -> torch.Tensor:
    aff = index["affine"]
    if aff is not None:
        out = torch.tensor(aff["offset"])
        for v, c in aff["coeffs"].items():
            if c:
                out = out + c * grid[v]
        return out
    scope = {**grid, **env, "FloorDiv": lambda a, b: a // b, "CleanDiv": lambda a, b: a // b,
             "ModularIndexing": lambda x, d, m: (x // d) % m, "Mod": lambda a, b: a % b,
             "Min": _tmin, "Max": _tmax, "Abs": lambda a: torch.as_tensor(a).abs()}
    return torch.as_tensor(eval(index["expr"], {"__builtins__": {}}, scope))  # noqa: S307


def _tmin(*xs):
    out = torch.as_tensor(xs[0])
    for x in xs[1:]:
        out = torch.minimum(out, torch.as_tensor(x))
    return out


def _tmax(*xs):
    out = torch.as_tensor(xs[0])
    for x in xs[1:]:
        out = torch.maximum(out, torch.as_tensor(x))
    return out


def _run_body(body: list[dict], env: dict, grid: dict, store: dict, n_reduce: int, sizes: list[int],
              mask: torch.Tensor | None = None):
    last = None
    for op in body:
        kind, args = op["op"], [env[a] for a in op.get("args", [])]
        if kind == "load":
            idx = _index(op["index"], grid, env)
            if mask is not None:  # a masked-off lane may index out of bounds: read element 0
                idx = torch.where(mask, idx, 0)
            val = store[op["buffer"]][idx]
        elif kind in ("store", "store_reduction"):
            idx = _index(op["index"], grid, env)
            value, idx = torch.broadcast_tensors(args[0], idx)
            if kind == "store":
                value, idx = torch.broadcast_tensors(value.expand(sizes), idx.expand(sizes))
            dst = store[op["buffer"]]
            dst[idx.reshape(-1)] = value.reshape(-1).to(dst.dtype)
            continue
        elif kind == "constant":
            v = op["value"]
            v = float(v) if isinstance(v, str) else v
            val = torch.tensor(v, dtype=_DTYPES[op["dtype"]])
        elif kind == "index_expr":
            val = _index(op["index"], grid, env).to(_DTYPES[op["dtype"]])
        elif kind == "to_dtype":
            val = args[0].to(_DTYPES[op["dtype"]])
        elif kind == "indirect_indexing":
            val = args[0].long()
            val = torch.where(val < 0, val + op["size"], val)  # Python-style negative indices
            if mask is not None:
                val = torch.where(mask, val, 0)
        elif kind == "check_bounds":
            continue
        elif kind == "where":
            val = torch.where(*args)
        elif kind == "masked":
            inner = args[0] if mask is None else torch.logical_and(mask, args[0])
            sub = _run_body(op["body"], env, grid, store, n_reduce, sizes, inner)
            fill = op["value"]
            val = torch.where(args[0], sub, torch.tensor(float(fill) if isinstance(fill, str) else fill, dtype=sub.dtype))
        elif kind == "reduction":
            _reduce(op, args, env, n_reduce, sizes)
            continue
        elif kind in _UNARY:
            val = _UNARY[kind](*args)
        elif kind in _BINARY:
            val = _BINARY[kind](*args)
        else:
            raise NotImplementedError(f"op {kind}")
        env[op["id"]] = last = val
    return last


def _reduce(op: dict, args: list, env: dict, n_reduce: int, sizes: list[int]) -> None:
    x = args[0].expand(sizes)
    dims = tuple(range(len(sizes) - n_reduce, len(sizes)))
    kind = op["reduction_type"]
    if kind == "welford_reduce":
        count = math.prod(sizes[d] for d in dims)
        mean = x.mean(dim=dims, keepdim=True)
        m2 = ((x - mean) ** 2).sum(dim=dims, keepdim=True)
        for i, v in enumerate((mean, m2, torch.full_like(mean, count))):
            env[f"{op['id']}.{i}"] = v
        return
    keep = list(sizes[: len(sizes) - n_reduce]) + [1] * n_reduce
    flat = x.reshape(*sizes[: len(sizes) - n_reduce], -1)  # reduction dims as one, row-major
    if kind in ("argmax", "argmin"):  # the linear index over the reduction ranges, first wins
        fn = torch.argmax if kind == "argmax" else torch.argmin
        out = fn(flat, dim=-1)
    elif kind == "xor_sum":
        out = flat[..., 0]
        for i in range(1, flat.shape[-1]):
            out = out ^ flat[..., i]
    else:
        fn = {"sum": torch.sum, "prod": torch.prod, "max": torch.amax, "min": torch.amin,
              "any": torch.any}[kind]
        out = fn(flat, dim=-1)
    env[op["id"]] = out.reshape(keep).to(_DTYPES[op["dtype"]])
