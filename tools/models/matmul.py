"""A bare fp16 matmul: [128, 256] @ [256, 192]."""

import torch


class MatMul(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


torch.manual_seed(0)
model = MatMul().eval()
example_inputs = (
    torch.randn(128, 256, dtype=torch.float16),
    torch.randn(256, 192, dtype=torch.float16),
)
