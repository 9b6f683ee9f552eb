"""A reference evaluator of SCHEMA.md v1 IR with torch tensors (tests only).

It executes the IR itself (buffers, loop bodies, extern kernels), not the FX graph, so a test
that compares it with eager PyTorch checks that the captured IR means what the model computes.
Each loop body is evaluated on whole index grids: variable `x<i>`/`r<j>` is an arange shaped to
broadcast along its own dimension of `sizes + reduce_sizes`.
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
}
_BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "truediv": torch.div,
    "maximum": torch.maximum, "minimum": torch.minimum, "lt": torch.lt, "le": torch.le,
    "gt": torch.gt, "ge": torch.ge, "eq": torch.eq, "ne": torch.ne, "pow": torch.pow,
    "and_": torch.logical_and, "or_": torch.logical_or, "floordiv": torch.floor_divide,
}
_EXTERN = {
    "extern_kernels.mm": torch.mm, "extern_kernels.addmm": torch.addmm,
    "extern_kernels.bmm": torch.bmm, "extern_kernels.baddbmm": torch.baddbmm,
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
    for node in ir["nodes"]:
        if node["kind"] in ("pointwise", "reduction"):
            _run_loops(node, store)
        elif node["kind"] == "extern":
            _run_extern(node, store)
        else:
            raise NotImplementedError(f"{node['name']}: fallback {node['op_overload']}")
    return [_strided(store[o["buffer"]], o).clone() for o in ir["outputs"]]


def _strided(flat: torch.Tensor, layout: dict) -> torch.Tensor:
    return flat.as_strided(layout["size"], layout["stride"], layout["offset"])


def _run_extern(node: dict, store: dict[str, torch.Tensor]) -> None:
    args = [_strided(store[i["buffer"]], i) for i in node["inputs"]]
    result = _EXTERN[node["kernel"]](*args, *node["constant_args"], **node["kwargs"])
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
    scope = {**grid, **env, "FloorDiv": lambda a, b: a // b,
             "ModularIndexing": lambda x, d, m: (x // d) % m, "Min": torch.minimum, "Max": torch.maximum}
    return torch.as_tensor(eval(index["expr"], {"__builtins__": {}}, scope))  # noqa: S307


def _run_body(body: list[dict], env: dict, grid: dict, store: dict, n_reduce: int, sizes: list[int]):
    last = None
    for op in body:
        kind, args = op["op"], [env[a] for a in op.get("args", [])]
        if kind == "load":
            idx = _index(op["index"], grid, env)
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
        elif kind == "where":
            val = torch.where(*args)
        elif kind == "masked":
            sub = _run_body(op["body"], env, grid, store, n_reduce, sizes)
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
    fn = {"sum": torch.sum, "prod": torch.prod, "max": torch.amax, "min": torch.amin,
          "any": torch.any}[kind]
    env[op["id"]] = fn(x, dim=dims, keepdim=True).to(_DTYPES[op["dtype"]])
