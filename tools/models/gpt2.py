"""GPT-2 (Hugging Face transformers, pinned) with a small config: 2 layers, hidden 256, 4 heads,
sequence 128, vocabulary 1024; seeded random weights, fp16; returns the LM logits."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hf import SEQ, VOCAB, build  # noqa: E402

from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

config = GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=256, n_layer=2, n_head=4,
                    bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1,
                    resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False)
model, example_inputs = build(GPT2LMHeadModel, config)
