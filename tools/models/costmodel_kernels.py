"""The cost model's held-out set (tools/bench/costmodel): matmuls and memory-bound kernels of
shapes drawn at random with a fixed seed, never used to tune the cost model. Captured under
tests/data/ir/bench/costmodel/ by tests/data/ir/regenerate.py costmodel.

Drawn once with random.Random(SEED) in this order (changing the draw changes the set):
- 16 fp16 matmuls a @ b: M from {16, 32, 64, 128, 256, 512, 1024}, N and K from multiples of
  256 in [512, 8192], redrawn until M*N*K <= 2.2e9 (the capture runs them eagerly on the CPU);
- 4 batched matmuls: batch {4, 8, 12, 16}, M {64, 128, 256}, K {64, 128}, N {128 .. 2048};
- 4 linear layers (addmm with bias): M {16 .. 512}, in/out features {1024 .. 4096};
- 16 memory-bound kernels: neg, relu(x*2+1)-x, x+y, x.sum(-1), x.sum(), softmax, LayerNorm,
  RMSNorm over [rows, cols] fp16, cols a multiple of 256 in [256, 16384], 2 to 32 MiB.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from membound_kernels import RMSNorm, _norm  # noqa: E402
from ops import H, OpCase, _seeded  # noqa: E402

SEED = 20261201


def _mm(m, k, n, batch=None):
    lead = () if batch is None else (batch,)
    return OpCase(torch.matmul, _seeded(lambda: (torch.randn(*lead, m, k, dtype=H),
                                                 torch.randn(*lead, k, n, dtype=H))))


def _linear(m, k, n):
    torch.manual_seed(0)
    lin = nn.Linear(k, n).half().eval()
    return OpCase(lin, _seeded(lambda: (torch.randn(m, k, dtype=H),)))


def _x(rows, cols, n=1):
    return _seeded(lambda: tuple(torch.randn(rows, cols, dtype=H) for _ in range(n)))


def _draw() -> dict[str, OpCase]:
    rng = random.Random(SEED)
    cases: dict[str, OpCase] = {}
    for _ in range(16):
        while True:
            m = rng.choice([16, 32, 64, 128, 256, 512, 1024])
            n, k = (256 * rng.randint(2, 32) for _ in range(2))
            if m * n * k <= 2.2e9:
                break
        cases[f"mm_{m}x{k}x{n}"] = _mm(m, k, n)
    for _ in range(4):
        b, m = rng.choice([4, 8, 12, 16]), rng.choice([64, 128, 256])
        k, n = rng.choice([64, 128]), 128 * rng.randint(1, 16)
        cases[f"bmm_{b}x{m}x{k}x{n}"] = _mm(m, k, n, batch=b)
    for _ in range(4):
        m, k, n = rng.choice([16, 64, 128, 512]), 1024 * rng.randint(1, 4), 1024 * rng.randint(1, 4)
        cases[f"linear_{m}x{k}x{n}"] = _linear(m, k, n)
    kinds = ["neg", "chain", "add", "row_sum", "sum", "softmax", "layer_norm", "rms_norm"]
    for i in range(16):
        kind = kinds[i % len(kinds)]
        cols = 256 * rng.randint(1, 64)
        mib = rng.choice([2, 4, 8, 16, 32])
        rows = max(1, mib * (1 << 20) // (2 * cols))
        name = f"{kind}_{rows}x{cols}"
        if kind == "neg":
            cases[name] = OpCase(torch.neg, _x(rows, cols))
        elif kind == "chain":
            cases[name] = OpCase(lambda x: torch.relu(x * 2 + 1) - x, _x(rows, cols))
        elif kind == "add":
            cases[name] = OpCase(torch.add, _x(rows, cols, 2))
        elif kind == "row_sum":
            cases[name] = OpCase(lambda x: x.sum(-1), _x(rows, cols))
        elif kind == "sum":
            cases[name] = OpCase(torch.sum, _x(rows, cols))
        elif kind == "softmax":
            cases[name] = OpCase(lambda x: torch.softmax(x, -1), _x(rows, cols))
        elif kind == "layer_norm":
            cases[name] = OpCase(_norm(nn.LayerNorm(cols)), _x(rows, cols))
        else:
            cases[name] = OpCase(_norm(RMSNorm(cols)), _x(rows, cols))
    return cases


CASES = _draw()
