"""A pre-norm MLP block in fp16: x + Linear2(GELU(Linear1(LayerNorm(x)))), 256 -> 1024 -> 256."""

import torch
from torch import nn


class MlpBlock(nn.Module):
    def __init__(self, hidden: int = 256, ffn: int = 1024):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, ffn)
        self.act = nn.GELU(approximate="none")
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        h = self.fc1(h)
        h = self.act(h)
        h = self.fc2(h)
        return x + h


torch.manual_seed(0)
model = MlpBlock().half().eval()
example_inputs = (torch.randn(64, 256, dtype=torch.float16),)
