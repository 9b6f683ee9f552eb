"""The memory-bound kernels of tools/bench/membound at 1 MiB to 256 MiB of fp16 input, as golden
captures under tests/data/ir/bench/membound/ (tests/data/ir/regenerate.py membound).

`CASES[name]` is an `OpCase(fn, make_inputs)` as in ops.py; names are `<kernel>_<MiB>mib`.
Every input is [rows, 4096] fp16 (an LLM hidden size), rows = MiB * 128; the norms carry a
[4096] fp16 weight (and bias). These are decode-phase LLM inference's kernels: each reads its
input once and writes at most as much, with little arithmetic per byte.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ops import H, OpCase, _seeded  # noqa: E402

HIDDEN = 4096
SIZES_MIB = (1, 4, 16, 64, 256)


class RMSNorm(nn.Module):
    """Llama's RMSNorm (transformers' LlamaRMSNorm): fp32 variance, weight in the input dtype."""

    def __init__(self, n: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def _norm(m: nn.Module) -> nn.Module:
    torch.manual_seed(0)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn_like(p))
    return m.half().eval()


def _x(mib: int):
    return _seeded(lambda: (torch.randn(mib * 1024 * 1024 // (2 * HIDDEN), HIDDEN, dtype=H),))


KERNELS = {
    "neg": lambda mib: OpCase(torch.neg, _x(mib)),
    "pointwise_chain": lambda mib: OpCase(lambda x: torch.relu(x * 2 + 1) - x, _x(mib)),
    "sum": lambda mib: OpCase(torch.sum, _x(mib)),
    "row_sum": lambda mib: OpCase(lambda x: x.sum(-1), _x(mib)),
    "softmax": lambda mib: OpCase(lambda x: torch.softmax(x, -1), _x(mib)),
    "layer_norm": lambda mib: OpCase(_norm(nn.LayerNorm(HIDDEN)), _x(mib)),
    "rms_norm": lambda mib: OpCase(_norm(RMSNorm(HIDDEN)), _x(mib)),
}

CASES: dict[str, OpCase] = {f"{k}_{mib}mib": make(mib) for k, make in KERNELS.items()
                            for mib in SIZES_MIB}
