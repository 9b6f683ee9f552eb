"""One small case per op of issue 4's coverage list, for golden captures and IR evaluation.

`OPS[name]` is an `OpCase(fn, make_inputs)`: `fn(*inputs)` is the op under test (a plain function
or an eval-mode module); `make_inputs()` builds seeded example inputs (fp16 unless the op needs
another dtype: indices int64, masks bool, bit ops int32/int8; some cases pin bf16/fp32 to cover
those dtypes). Shapes are small so that a capture takes well under a second.

The first group is what IBM's torch-spyre compiles for Spyre; the second ("host") is what
torch-spyre sends back to the CPU and spyre-sim must run on the device. The last group covers IR
features (mutation, multiple outputs, constants, dtypes) that no single op above exercises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

H = torch.float16


class OpCase(NamedTuple):
    fn: Callable[..., Any]
    make_inputs: Callable[[], tuple]


def _randn(*shape: int, dtype: torch.dtype = H) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype)


def _seeded(make: Callable[[], tuple]) -> Callable[[], tuple]:
    def build() -> tuple:
        torch.manual_seed(0)
        return make()

    return build


def _x(*shape: int, dtype: torch.dtype = H) -> Callable[[], tuple]:
    return _seeded(lambda: (_randn(*shape, dtype=dtype),))


def _xy(*shape: int, dtype: torch.dtype = H) -> Callable[[], tuple]:
    return _seeded(lambda: (_randn(*shape, dtype=dtype), _randn(*shape, dtype=dtype)))


def _ints(*shape: int, lo: int = -50, hi: int = 50, dtype: torch.dtype = torch.int32, n: int = 2):
    return _seeded(lambda: tuple(torch.randint(lo, hi, shape, dtype=dtype) for _ in range(n)))


def _module(m: nn.Module) -> nn.Module:
    torch.manual_seed(0)
    return m.half().eval()


def _bn() -> nn.Module:
    torch.manual_seed(0)
    bn = nn.BatchNorm2d(4)
    bn.running_mean.uniform_(-0.5, 0.5)
    bn.running_var.uniform_(0.5, 1.5)
    bn.weight.data.uniform_(0.5, 1.5)
    bn.bias.data.uniform_(-0.5, 0.5)
    return bn.half().eval()


def _positive(*shape: int) -> Callable[[], tuple]:
    return _seeded(lambda: (torch.rand(*shape, dtype=H) + 0.1,))


def _add_(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.add_(y)  # an in-place update of a graph input: a mutation the IR must carry
    return x


def _graph_break(x: torch.Tensor) -> torch.Tensor:
    y = torch.softmax(x, -1)
    torch._dynamo.graph_break()  # Dynamo compiles two graphs; both must be captured
    return y.exp() + 1


def _constant(x: torch.Tensor) -> torch.Tensor:
    return x * torch.tensor([1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 4.0], dtype=H)


OPS: dict[str, OpCase] = {
    # ---- torch-spyre: matmul family and convolution
    "mm": OpCase(torch.mm, _seeded(lambda: (_randn(32, 64), _randn(64, 48)))),
    "matmul": OpCase(torch.matmul, _seeded(lambda: (_randn(2, 32, 64), _randn(64, 48)))),
    "bmm": OpCase(torch.bmm, _seeded(lambda: (_randn(3, 32, 64), _randn(3, 64, 48)))),
    "addmm": OpCase(torch.addmm, _seeded(lambda: (_randn(48), _randn(32, 64), _randn(64, 48)))),
    "linear": OpCase(_module(nn.Linear(64, 48)), _x(32, 64)),
    "conv2d": OpCase(_module(nn.Conv2d(4, 8, 3, padding=1)), _x(2, 4, 16, 16)),
    "conv2d_strided_grouped": OpCase(
        _module(nn.Conv2d(4, 8, 3, stride=2, padding=2, dilation=2, groups=2, bias=False)),
        _x(2, 4, 16, 16)),
    # ---- torch-spyre: normalisations and activations
    "softmax": OpCase(lambda x: torch.softmax(x, -1), _x(16, 64)),
    "log_softmax": OpCase(lambda x: torch.log_softmax(x, -1), _x(16, 64)),
    "layer_norm": OpCase(_module(nn.LayerNorm(64)), _x(16, 64)),
    "rms_norm": OpCase(_module(nn.RMSNorm(64, eps=1e-5)), _x(16, 64)),
    "group_norm": OpCase(_module(nn.GroupNorm(2, 4)), _x(2, 4, 8, 8)),
    "batch_norm": OpCase(_bn(), _x(2, 4, 8, 8)),
    "gelu": OpCase(lambda x: F.gelu(x), _x(16, 64)),
    "gelu_tanh": OpCase(lambda x: F.gelu(x, approximate="tanh"), _x(16, 64)),
    "silu": OpCase(F.silu, _x(16, 64)),
    "relu": OpCase(torch.relu, _x(16, 64)),
    "sigmoid": OpCase(torch.sigmoid, _x(16, 64)),
    "softplus": OpCase(F.softplus, _x(16, 64)),
    "mish": OpCase(F.mish, _x(16, 64)),
    "tanh": OpCase(torch.tanh, _x(16, 64)),
    "dropout": OpCase(lambda x: F.dropout(x, 0.5, training=False) * 2, _x(16, 64)),
    "sdpa": OpCase(F.scaled_dot_product_attention,
                   _seeded(lambda: (_randn(1, 2, 16, 32), _randn(1, 2, 16, 32), _randn(1, 2, 16, 32)))),
    "sdpa_causal": OpCase(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                          _seeded(lambda: (_randn(1, 2, 16, 32), _randn(1, 2, 16, 32), _randn(1, 2, 16, 32)))),
    # ---- torch-spyre: unary
    "abs": OpCase(torch.abs, _x(16, 64)),
    "neg": OpCase(torch.neg, _x(16, 64)),
    "exp": OpCase(torch.exp, _x(16, 64)),
    "log": OpCase(torch.log, _positive(16, 64)),
    "sqrt": OpCase(torch.sqrt, _positive(16, 64)),
    "rsqrt": OpCase(torch.rsqrt, _positive(16, 64)),
    "reciprocal": OpCase(torch.reciprocal, _positive(16, 64)),
    "floor": OpCase(torch.floor, _x(16, 64)),
    "ceil": OpCase(torch.ceil, _x(16, 64)),
    "sign": OpCase(torch.sign, _x(16, 64)),
    "clamp": OpCase(lambda x: torch.clamp(x, -0.5, 0.75), _x(16, 64)),
    "pow": OpCase(lambda x: torch.pow(x, 3), _x(16, 64)),
    "pow_tensor": OpCase(torch.pow, _seeded(lambda: (torch.rand(16, 64, dtype=H) + 0.5, _randn(16, 64)))),
    "logical_not": OpCase(torch.logical_not, _seeded(lambda: (torch.rand(16, 64) > 0.5,))),
    "bitwise_not": OpCase(torch.bitwise_not, _ints(16, 64, n=1)),
    # ---- torch-spyre: binary and comparison
    "add": OpCase(torch.add, _xy(16, 64)),
    "sub": OpCase(torch.sub, _xy(16, 64)),
    "mul": OpCase(torch.mul, _xy(16, 64)),
    "div": OpCase(torch.div, _seeded(lambda: (_randn(16, 64), torch.rand(16, 64, dtype=H) + 0.5))),
    "maximum": OpCase(torch.maximum, _xy(16, 64)),
    "minimum": OpCase(torch.minimum, _xy(16, 64)),
    "bitwise_and": OpCase(torch.bitwise_and, _ints(16, 64)),
    "where": OpCase(lambda x, y: torch.where(x > 0, x, y), _xy(16, 64)),
    "eq": OpCase(lambda x, y: torch.eq(x.round(), y.round()), _xy(16, 64)),
    "ne": OpCase(lambda x, y: torch.ne(x.round(), y.round()), _xy(16, 64)),
    "gt": OpCase(torch.gt, _xy(16, 64)),
    "lt": OpCase(torch.lt, _xy(16, 64)),
    "ge": OpCase(torch.ge, _xy(16, 64)),
    "le": OpCase(torch.le, _xy(16, 64)),
    # ---- torch-spyre: reductions
    "sum": OpCase(lambda x: torch.sum(x, -1), _x(16, 64)),
    "sum_all": OpCase(torch.sum, _x(16, 64, dtype=torch.float32)),
    "mean": OpCase(lambda x: torch.mean(x, 0), _x(16, 64)),
    "amax": OpCase(lambda x: torch.amax(x, -1), _x(16, 64)),
    "amin": OpCase(lambda x: torch.amin(x, -1), _x(16, 64)),
    "max": OpCase(lambda x: torch.max(x, -1), _x(16, 64)),  # (values, indices)
    "min": OpCase(lambda x: torch.min(x, -1), _x(16, 64)),
    "topk": OpCase(lambda x: torch.topk(x, 4, -1), _x(16, 64)),
    "vector_norm": OpCase(lambda x: torch.linalg.vector_norm(x, dim=-1), _x(16, 64)),
    # ---- torch-spyre: views and data movement
    "reshape": OpCase(lambda x: (x * 2).reshape(32, 32), _x(16, 64)),
    "view": OpCase(lambda x: (x * 2).view(4, 4, 64), _x(16, 64)),
    "transpose": OpCase(lambda x: x.transpose(0, 1) * 2, _x(16, 64)),
    "permute": OpCase(lambda x: x.permute(2, 0, 1) * 2, _x(4, 8, 16)),
    "clone": OpCase(lambda x: x.t().clone(memory_format=torch.contiguous_format), _x(16, 64)),
    "contiguous": OpCase(lambda x: x.t().contiguous(), _x(16, 64)),
    "squeeze": OpCase(lambda x: x.squeeze(1) + 1, _x(16, 1, 64)),
    "unsqueeze": OpCase(lambda x: x.unsqueeze(1) + 1, _x(16, 64)),
    "flatten": OpCase(lambda x: x.t().flatten() + 1, _x(16, 64)),
    "cat": OpCase(lambda x, y: torch.cat([x, y * 2], 1), _seeded(lambda: (_randn(16, 32), _randn(16, 48)))),
    "repeat": OpCase(lambda x: x.repeat(2, 3), _x(8, 16)),
    "unbind": OpCase(lambda x: [t * (i + 1) for i, t in enumerate(torch.unbind(x, 1))], _x(16, 3, 8)),
    "split": OpCase(lambda x: [t.exp() for t in torch.split(x, [24, 40], 1)], _x(16, 64)),
    "expand": OpCase(lambda x: x.expand(4, 16, 64) + 1, _x(16, 64)),
    "slicing": OpCase(lambda x: x[2:14:3, 5:-7] * 2, _x(16, 64)),
    "pad": OpCase(lambda x: F.pad(x, (2, 3, 1, 0), value=0.5), _x(16, 64)),
    "pad_reflect": OpCase(lambda x: F.pad(x, (2, 3, 1, 2), mode="reflect"), _x(1, 16, 64)),
    # ---- torch-spyre: factories
    "ones": OpCase(lambda x: x + torch.ones(16, 64, dtype=H), _x(16, 64)),
    "zeros": OpCase(lambda x: torch.maximum(x, torch.zeros(16, 64, dtype=H)), _x(16, 64)),
    "full": OpCase(lambda x: x * torch.full((16, 64), 1.5, dtype=H), _x(16, 64)),
    # ---- host ops (torch-spyre runs these on the CPU; spyre-sim must not)
    "embedding": OpCase(_module(nn.Embedding(100, 32)), _seeded(lambda: (torch.randint(0, 100, (4, 16)),))),
    "arange": OpCase(lambda x: x + torch.arange(64, dtype=H), _x(16, 64)),
    "sin": OpCase(torch.sin, _x(16, 64)),
    "cos": OpCase(torch.cos, _x(16, 64)),
    "tril": OpCase(torch.tril, _x(16, 64)),
    "triu": OpCase(lambda x: torch.triu(x, 1), _x(16, 64)),
    "argmax": OpCase(lambda x: torch.argmax(x, -1), _x(16, 64)),
    "argmin": OpCase(lambda x: torch.argmin(x, 0), _x(16, 64)),
    "cumsum": OpCase(lambda x: torch.cumsum(x, -1), _x(16, 64, dtype=torch.float32)),
    "index_select": OpCase(lambda x, i: torch.index_select(x, 0, i),
                           _seeded(lambda: (_randn(16, 64), torch.randint(0, 16, (10,))))),
    "gather": OpCase(lambda x, i: torch.gather(x, 1, i),
                     _seeded(lambda: (_randn(16, 64), torch.randint(0, 64, (16, 8))))),
    "var": OpCase(lambda x: torch.var(x, -1), _x(16, 64, dtype=torch.float32)),
    "std": OpCase(lambda x: torch.std(x, -1), _x(16, 64, dtype=torch.float32)),
    "prod": OpCase(lambda x: torch.prod(x, -1), _seeded(lambda: (torch.rand(16, 8) + 0.5,))),
    "any": OpCase(lambda x: torch.any(x > 1.5, -1), _x(16, 64)),
    "all": OpCase(lambda x: torch.all(x > -1.5, -1), _x(16, 64)),
    "logsumexp": OpCase(lambda x: torch.logsumexp(x, -1), _x(16, 64)),
    # ---- IR features: mutation, multiple outputs, constants, dtypes
    "add_inplace": OpCase(_add_, _xy(16, 64)),
    "var_mean": OpCase(lambda x: torch.var_mean(x, -1), _x(16, 64, dtype=torch.float32)),
    "tensor_constant": OpCase(_constant, _x(16, 8)),
    "add_bf16": OpCase(torch.add, _xy(16, 64, dtype=torch.bfloat16)),
    "mm_fp32": OpCase(torch.mm, _seeded(lambda: (_randn(32, 64, dtype=torch.float32),
                                                 _randn(64, 48, dtype=torch.float32)))),
    "add_int8": OpCase(torch.add, _ints(16, 64, dtype=torch.int8)),
    "mul_int64": OpCase(torch.mul, _ints(16, 64, dtype=torch.int64)),
    "graph_break": OpCase(_graph_break, _x(16, 64)),
    "median": OpCase(lambda x: torch.median(x, -1).values, _x(16, 63)),  # Inductor: a fallback
    "cast_chain": OpCase(lambda x: (x.float() * 3).to(torch.int32).to(torch.int8).to(torch.bfloat16),
                         _x(16, 64)),
    # Selection variants (fallbacks lowered by compiler/lower/select.cpp): smallest along a
    # strided dim; an even count (the lower median) with keepdim and both outputs; a stable
    # descending sort; the k-th smallest along dim 0; the median of all elements.
    "topk_smallest": OpCase(lambda x: torch.topk(x, 3, 0, largest=False), _x(16, 64)),
    "median_keepdim": OpCase(lambda x: torch.median(x, 0, keepdim=True),
                             _x(10, 24, dtype=torch.bfloat16)),
    "sort": OpCase(lambda x: torch.sort(x, dim=-1, descending=True, stable=True), _x(16, 32)),
    "kthvalue": OpCase(lambda x: torch.kthvalue(x, 5, 0), _x(12, 40, dtype=torch.float32)),
    "median_all": OpCase(lambda x: torch.median(x), _x(9, 15)),
    # Reductions over fewer rows than workers: split into partial and final (split_reduction.h)
    "sum_split": OpCase(torch.sum, _x(128, 512)),
    "amax_split": OpCase(lambda x: torch.amax(x, -1), _x(2, 32768)),
    "amin_split": OpCase(lambda x: torch.amin(x, 0), _x(8192, 2)),
}

HOST_OPS = ("embedding", "arange", "sin", "cos", "tril", "triu", "argmax", "argmin", "cumsum",
            "index_select", "gather", "var", "std", "prod", "any", "all", "logsumexp")
