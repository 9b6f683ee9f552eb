"""Models on the meta device (no weights in host memory) compiled as the same model on cpu:
what a timing-only run of an 8B-parameter model captures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .errors import CaptureError

_CPU = torch.device("cpu")


def meta_as_cpu(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> list[Any]:
    """Make a Dynamo graph of a meta-device model compile as the same model on cpu.

    Inductor treats meta tensors as unsupported (lowering.unsupported_input_tensor: every op an
    ATen fallback) and its joint-graph pass replaces meta graph outputs with empty_strided
    (dead-coding the ops behind them); AOTAutograd picks decompositions by device. So swap each
    meta example input for a fake cpu tensor of the same fake mode, shape, stride, dtype and
    requires_grad, and every `device=meta` constant in the graph (arange(..., device=x.device),
    .to(device)) for cpu, in place. Returns the inputs unchanged when none is on meta."""
    if not any(isinstance(t, torch.Tensor) and t.device.type == "meta" for t in example_inputs):
        return list(example_inputs)
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            value = getattr(gm, str(node.target), None)
            if isinstance(value, torch.Tensor) and value.device.type == "meta":
                raise CaptureError(f"graph constant {node.target} is a meta tensor (no values)")
    mode = torch._guards.detect_fake_mode(example_inputs)
    memo: dict[int, torch.Tensor] = {}
    converted = []
    with mode:
        for t in example_inputs:
            if isinstance(t, torch.Tensor) and t.device.type == "meta":
                if id(t) not in memo:
                    memo[id(t)] = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype,
                                                      device=_CPU).requires_grad_(t.requires_grad)
                t = memo[id(t)]
            converted.append(t)

    def swap(a: Any) -> Any:
        if isinstance(a, torch.device) and a.type == "meta":
            return _CPU
        return "cpu" if isinstance(a, str) and a == "meta" else a

    for node in gm.graph.nodes:
        node.args = torch.fx.node.map_aggregate(node.args, swap)
        node.kwargs = torch.fx.node.map_aggregate(node.kwargs, swap)
    gm.recompile()
    return converted
