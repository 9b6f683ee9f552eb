"""The GEMMs and memory-bound kernels of the regression suite (tests/regress/suite.yaml), as
golden captures under tests/data/ir/regress/ (tests/data/ir/regenerate.py regress).

`CASES[name]` is an `OpCase(fn, make_inputs)` as in ops.py. GEMMs are fp16 `a @ b` of two
inputs: square 256-4096 and the LLM shapes of a Granite/Llama-8B-class layer at 512 tokens
(512x4096x4096: the attention projections; 512x4096x12800: an MLP projection) and a batched
attention-sized bmm. The memory-bound kernels work on one 64 MiB fp16 tensor [4096, 8192], large
enough that the chip's DRAM (about 150 GB/s one-way, ../shared/calibration/) bounds them: every
byte is read once and written at most once, against 68 ns of compute per 64 KiB at SFP peak.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ops import H, OpCase, _seeded, _x  # noqa: E402


def _mm(m: int, k: int, n: int, batch: int | None = None) -> OpCase:
    lead = () if batch is None else (batch,)
    return OpCase(torch.matmul, _seeded(lambda: (torch.randn(*lead, m, k, dtype=H),
                                                 torch.randn(*lead, k, n, dtype=H))))


def _layer_norm() -> nn.Module:
    torch.manual_seed(0)
    return nn.LayerNorm(8192).half().eval()


ROWS, COLS = 4096, 8192  # 64 MiB of fp16

CASES: dict[str, OpCase] = {
    **{f"mm_{s}": _mm(s, s, s) for s in (256, 512, 1024, 2048, 4096)},
    "mm_512x4096x4096": _mm(512, 4096, 4096),
    "mm_512x4096x12800": _mm(512, 4096, 12800),
    "bmm_8x128x2048x8192": _mm(128, 2048, 8192, batch=8),
    "pointwise_chain": OpCase(lambda x: torch.relu(x * 2 + 1) - x, _x(ROWS, COLS)),
    "row_sum": OpCase(lambda x: x.sum(-1), _x(ROWS, COLS)),
    "softmax": OpCase(lambda x: torch.softmax(x, -1), _x(ROWS, COLS)),
    "layer_norm": OpCase(_layer_norm(), _x(ROWS, COLS)),
}
