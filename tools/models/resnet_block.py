"""A ResNet basic block as He et al. define it ("Deep Residual Learning for Image Recognition",
2015, Fig. 2 and Sec. 3.3), with batch normalisation after each convolution (Sec. 3.4):

    y = ReLU(BN2(conv3x3(ReLU(BN1(conv3x3_stride_s(x))))) + shortcut(x))

where the shortcut is the identity, or (option B) a 1x1 convolution with stride s plus BN when
the shape changes. This one downsamples: 64 -> 128 channels, stride 2, on 1x64x32x32, fp16,
eval mode (BN uses running statistics, seeded at random values so it is not the identity).
"""

import torch
from torch import nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Identity()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + self.shortcut(x))


def _randomise_bn(module: nn.Module) -> None:
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.1, 0.1)


torch.manual_seed(0)
model = BasicBlock(64, 128, stride=2)
_randomise_bn(model)
model = model.half().eval()
example_inputs = (torch.randn(1, 64, 32, 32, dtype=torch.float16),)
