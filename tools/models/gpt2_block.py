"""One GPT-2 small layer at sequence 128 (Hugging Face transformers, pinned): token and position
embeddings, one transformer block (hidden 768, 12 heads, MLP 3072) and the final LayerNorm;
vocabulary 1024 (no LM head); seeded random weights, fp16; returns the hidden states. The
model of the example architecture sweep (examples/sweeps/gpt2_block.yaml)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hf import SEQ, VOCAB, build  # noqa: E402

from transformers import GPT2Config, GPT2Model  # noqa: E402

config = GPT2Config(vocab_size=VOCAB, n_positions=1024, n_embd=768, n_layer=1, n_head=12,
                    bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1,
                    resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False)
model, example_inputs = build(GPT2Model, config)
assert example_inputs[0].shape[-1] == SEQ
