"""An fp16 element-wise chain with a broadcast: exp(relu(x * 2 + y)) - x, x [64, 512], y [512]."""

import torch


class EltwiseChain(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.relu(x * 2 + y).exp() - x


torch.manual_seed(0)
model = EltwiseChain().eval()
example_inputs = (
    torch.randn(64, 512, dtype=torch.float16),
    torch.randn(512, dtype=torch.float16),
)
