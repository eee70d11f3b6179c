"""Writes a small SentencePiece model (256 pieces over made-up words) to the path given: a stand-in
tokenizer so that llama.cpp's convert_hf_to_gguf.py accepts the random-weight benchmark models,
which have no tokenizer of their own; the converter pads the vocabulary to the config's size.
The token ids the benchmarks feed are random, so the pieces never matter.

Usage: python bench/make_spm_tokenizer.py OUT.model
"""
import io
import sys

import sentencepiece as spm

words = [f"w{i}x" for i in range(400)]
lines = [" ".join(words[(j * 7 + k) % 400] for k in range(20)) for j in range(2000)]
buf = io.BytesIO()
spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, vocab_size=256, model_type="bpe", minloglevel=2)
with open(sys.argv[1], "wb") as f:
    f.write(buf.getvalue())
