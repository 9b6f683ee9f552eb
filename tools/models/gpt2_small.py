"""GPT-2 small (Hugging Face transformers, pinned) at its real size: 12 layers, hidden 768,
12 heads, vocabulary 50257, sequence 128; seeded random weights, fp16; returns the LM logits.
Used for the compiler's compile-time benchmark (tools/bench/compile), not simulated in tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hf import SEQ, build  # noqa: E402

from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

config = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12,
                    resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False)
model, example_inputs = build(GPT2LMHeadModel, config)
assert example_inputs[0].shape[-1] == SEQ
