"""Llama (Hugging Face transformers, pinned) with a small config: 2 layers, hidden 256, 4 heads
with 2 key/value heads (grouped-query attention), SwiGLU FFN 688, RoPE, RMSNorm, sequence 128,
vocabulary 1024; seeded random weights, fp16; returns the LM logits."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hf import SEQ, VOCAB, build  # noqa: E402

from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

config = LlamaConfig(vocab_size=VOCAB, hidden_size=256, intermediate_size=688, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
                     use_cache=False)
model, example_inputs = build(LlamaForCausalLM, config)
