"""Shared helpers for the Hugging Face model files: offline, seeded, built from config objects."""

from __future__ import annotations

import os

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # build from configs only: never download
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SEQ = 128
BATCH = 1
VOCAB = 1024


class LastTensor(torch.nn.Module):
    """Calls a transformers model and returns its first output tensor (logits or hidden states),
    so a capture sees one plain tensor rather than a ModelOutput."""

    def __init__(self, inner: torch.nn.Module):
        super().__init__()
        self.inner = inner

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.inner(input_ids=input_ids, use_cache=False, return_dict=True)[0]


def build(model_cls, config, dtype: torch.dtype = torch.float16) -> tuple[torch.nn.Module, tuple]:
    """Seeded random weights from `config`, eval mode, `dtype`; token ids [BATCH, SEQ]."""
    torch.manual_seed(0)
    inner = model_cls(config).to(dtype).eval()
    model = LastTensor(inner).eval()
    input_ids = torch.randint(0, config.vocab_size, (BATCH, SEQ), generator=torch.Generator().manual_seed(1))
    return model, (input_ids,)
