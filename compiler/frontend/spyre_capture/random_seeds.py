"""Random numbers: Inductor's seed buffer as a graph input the host fills at each call.

Inductor lowers `torch.rand`, `randn` and what decomposes into them (dropout, bernoulli, ...)
into one extern kernel, `aten.randint.low_out` (from `prims.inductor_seeds`), that fills an int64
buffer of seeds from the default generator at each call, and element-wise `rand(seed, offset)` /
`randn(seed, offset)` ops, each reading one seed with `load_seed(k)`. The chip has no int64 and
no host generator, so the frontend rewrites the pair:

- the extern node goes; its buffer becomes the graph's last input, int32, described by the
  top-level `seeds` entry ({buffer, low, high, count});
- each `load_seed(k)` becomes a `load` of element k of that buffer.

At each call the host draws the seeds as Inductor's own code does (`torch.randint(low, high,
[count])` from the default generator) and passes their low 32 bits: Inductor's CPU kernels use
only those (a seed is a uint32 there), so the simulated chip, whose SFP draws with the same
Philox-4x32-10 (sim/core/sfp_random.h), gives eager Inductor's values for the same generator
state."""

from __future__ import annotations

from typing import Any

import torch

from .errors import CaptureError

SEED_KERNEL = "aten.randint.low_out"
SEED_ORIGIN = "prims.inductor_seeds.default"


def _is_seed_node(node: dict) -> bool:
    return (node.get("kind") == "extern" and node.get("kernel") == SEED_KERNEL
            and SEED_ORIGIN in node.get("aten", []))


def seeds_as_input(doc: dict) -> None:
    """Rewrite `doc` (an IR dict) in place as the module docstring says; no-op without seeds."""
    found = [n for n in doc["nodes"] if _is_seed_node(n)]
    if not found:
        return
    if len(found) > 1:
        raise CaptureError(f"{len(found)} seed kernels ({SEED_KERNEL}) in one graph: expected "
                           "one (Inductor draws every random op's seeds at once)")
    node = found[0]
    low, high, size = node["constant_args"]
    name = node["outputs"][0]
    buf = next(b for b in doc["buffers"] if b["name"] == name)
    buf.update(kind="input", dtype="int32")
    doc["inputs"].append(name)
    doc["nodes"] = [n for n in doc["nodes"] if n is not node]
    doc["seeds"] = {"buffer": name, "low": int(low), "high": int(high), "count": int(size[0])}
    for n in doc["nodes"]:
        _rewrite_body(n.get("body") or [], name)


def _rewrite_body(body: list, buffer: str) -> None:
    values = {op.get("id"): op for op in body}
    for i, op in enumerate(body):
        if op.get("body"):  # a masked op's inner body
            _rewrite_body(op["body"], buffer)
        if op["op"] != "load_seed":
            continue
        k = values.get(op["args"][0]) if op["args"] else None
        if k is None or k["op"] != "constant" or not isinstance(k.get("value"), int):
            raise CaptureError(f"load_seed {op.get('id')}: expected a constant index into the "
                               "seed buffer")
        at = int(k["value"])
        body[i] = {"id": op["id"], "op": "load", "args": [], "buffer": buffer, "dtype": "int32",
                   "index": {"expr": str(at), "affine": {"coeffs": {}, "offset": at}}}


def draw(spec: dict) -> torch.Tensor:
    """The seeds of one call: `count` int64 draws in [low, high) from the default generator, as
    Inductor's own code makes them, kept as their low 32 bits in an int32 tensor."""
    seeds = torch.randint(spec["low"], spec["high"], [spec["count"]], dtype=torch.int64)
    low = seeds & 0xFFFFFFFF
    return torch.where(low >= 2**31, low - 2**32, low).to(torch.int32)


def with_seeds(doc: dict, inputs: list[Any]) -> list[Any]:
    """The call's inputs with its seeds appended when the graph draws random numbers."""
    spec = doc.get("seeds")
    return inputs if spec is None else [*inputs, draw(spec)]
