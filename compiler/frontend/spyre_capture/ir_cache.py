"""The key of a captured graph: what Inductor's lowering and Scheduler turn into our IR.

A post-AOT graph is lowered the same way whenever these are the same: its code (every op, its
arguments and the graph's node names), what each placeholder is (shape, stride, offset, dtype,
device, and which inputs are static), the values of its tensor attributes, the source line of
every node (the IR's `source`, relative to `source_root`), Inductor's configuration, the torch
version, and this package's own code (capture settings, decompositions, IR building). The key is a
SHA-1 over all of them; `store` is given the IR as SCHEMA.md JSON and `load` returns it, with its
graph name replaced by this compile's (names follow Dynamo's compile ids, not the graph).
"""

from __future__ import annotations

import hashlib
import pathlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import torch

_PACKAGE = pathlib.Path(__file__).resolve().parent


class Store(Protocol):
    """Where entries live: bytes by key (spyre_sim keeps them in its cache folder)."""

    def load(self, key: str) -> bytes | None: ...

    def store(self, key: str, data: bytes) -> None: ...


def _package_digest() -> str:
    h = hashlib.sha1()
    for f in sorted(_PACKAGE.glob("*.py")):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


_DIGEST: list[str] = []  # computed once per process


def _tensor_meta(t: torch.Tensor) -> str:
    return (f"{tuple(t.shape)}|{t.stride()}|{t.storage_offset()}|{t.dtype}|{t.device.type}|"
            f"{t.requires_grad}")


def _value(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        return "T" + _tensor_meta(x)
    if isinstance(x, (int, float, bool, str, type(None))):
        return f"{type(x).__name__}:{x!r}"
    if isinstance(x, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return f"sym:{x}"
    return f"{type(x).__module__}.{type(x).__qualname__}"


def graph_key(gm: torch.fx.GraphModule, inputs: Sequence[Any], static_idxs: set[int],
              source_root: str, flags: dict[str, Any]) -> str:
    """Hex SHA-1 of everything the IR of `gm` (post-AOT, before Inductor's passes) depends on."""
    from torch._inductor import config as inductor_config

    if not _DIGEST:
        _DIGEST.append(_package_digest())
    h = hashlib.sha1()

    def part(s: str | bytes) -> None:
        b = s.encode() if isinstance(s, str) else s
        h.update(len(b).to_bytes(8, "little") + b)

    part("spyre_capture ir cache 1")
    part(torch.__version__)
    part(_DIGEST[0])
    part(source_root)
    part(repr(sorted((k, repr(v)) for k, v in flags.items())))
    part(repr(sorted(static_idxs)))
    part(gm.code)
    for x in inputs:
        part(_value(x))
    for node in gm.graph.nodes:
        part(f"{node.op}:{node.name}")
        part(str(node.meta.get("stack_trace") or ""))
        val = node.meta.get("val")
        part(_value(val) if not isinstance(val, (list, tuple)) else repr([_value(v) for v in val]))
    for name, t in sorted(_tensor_attributes(gm).items()):
        part(name)
        part(_tensor_meta(t))
        if t.device.type != "meta":
            # reshape(-1): a 0-dim constant cannot be viewed as bytes of another width
            part(t.detach().cpu().reshape(-1).contiguous().view(torch.uint8).numpy().tobytes()
                 if t.numel() else b"")
    config = inductor_config.save_config_portable()
    part(repr(sorted((k, repr(v)) for k, v in config.items())))
    return h.hexdigest()


def _tensor_attributes(gm: torch.fx.GraphModule) -> dict[str, torch.Tensor]:
    out = dict(gm.named_parameters())
    out.update(gm.named_buffers())
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            obj: Any = gm
            for part in str(node.target).split("."):
                obj = getattr(obj, part, None)
            if isinstance(obj, torch.Tensor):
                out[str(node.target)] = obj
    return out


def cached_ir(store: Store | None, key: str, name: str,
              build: Callable[[], dict]) -> dict:
    """The IR under `key` in `store` (renamed `name`), else `build()`'s, stored."""
    import json

    if store is not None:
        data = store.load(key)
        if data is not None:
            try:
                ir = json.loads(data)
            except ValueError:  # truncated or foreign: capture again
                ir = None
            if isinstance(ir, dict) and ir.get("schema") == "spyre-sim-ir":
                ir["graph"] = name
                return ir
    ir = build()
    if store is not None:
        store.store(key, json.dumps(ir, sort_keys=True).encode())
    return ir
