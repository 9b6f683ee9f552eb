"""BERT (Hugging Face transformers, pinned) with a small config: 2 layers, hidden 256, 4 heads,
FFN 1024, sequence 128, vocabulary 1024; seeded random weights, fp16; returns the encoder's
last hidden state."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hf import SEQ, VOCAB, build  # noqa: E402

from transformers import BertConfig, BertModel  # noqa: E402

config = BertConfig(vocab_size=VOCAB, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=1024, max_position_embeddings=SEQ,
                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
model, example_inputs = build(BertModel, config)
