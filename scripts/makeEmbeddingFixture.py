"""Builds fixtures/models/tiny-embed: a tiny random BERT encoder exported to ONNX, the shape
`@huggingface/transformers` feature extraction loads (config.json, tokenizer files, onnx/model.onnx),
for the search_tool recipe's embedding index (docs/rl.md#search-tool-recipe-search_tool).

The weights are random (seeded), so its embeddings carry no meaning beyond the tokens a text
shares with another; what the tests check with it is the plumbing: that the project's embedder
gives the same mean-pooled, L2-normalised vectors as PyTorch does on the same model
(reference.json, written here from transformers' own forward) and ranks by cosine.

Run with the e2e venv's python (torch + transformers 5.x + onnx):
    ~/.cache/tinker-cookbook-ts/e2e-venv/bin/python scripts/makeEmbeddingFixture.py [--out DIR]
"""
import argparse
import json
import os
import shutil

import torch
from tokenizers import Tokenizer
from transformers import BertConfig, BertModel

SEED = 20261127
HERE = os.path.dirname(os.path.abspath(__file__))
TINY_CHAT = os.path.join(HERE, "..", "fixtures", "models", "tiny-chat")
TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]
# Texts whose embeddings the unit test compares (one of them long enough to need padding in a batch).
REFERENCE_TEXTS = [
    "The capital of apple tiger is silver kites.",
    "capital of apple tiger",
    "The river of moss coal is glass seeds.",
    "hello",
]


class LastHidden(torch.nn.Module):
    """BertModel with positional inputs and one output, as the ONNX graph has them."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(HERE, "..", "fixtures", "models", "tiny-embed"))
    args = parser.parse_args()
    torch.manual_seed(SEED)
    config = BertConfig(
        vocab_size=1024,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
        type_vocab_size=1,
        pad_token_id=0,
    )
    config._attn_implementation = "eager"
    bert = BertModel(config, add_pooling_layer=False).eval()
    os.makedirs(os.path.join(args.out, "onnx"), exist_ok=True)
    config.to_json_file(os.path.join(args.out, "config.json"))
    for name in TOKENIZER_FILES:
        shutil.copy(os.path.join(TINY_CHAT, name), os.path.join(args.out, name))
    tokenizer = Tokenizer.from_file(os.path.join(TINY_CHAT, "tokenizer.json"))
    reference = []
    with torch.no_grad():
        for text in REFERENCE_TEXTS:
            ids = torch.tensor([tokenizer.encode(text).ids])
            hidden = bert(input_ids=ids, attention_mask=torch.ones_like(ids), token_type_ids=torch.zeros_like(ids)).last_hidden_state[0]
            pooled = hidden.mean(dim=0)
            pooled = pooled / pooled.norm()
            reference.append({"text": text, "token_ids": ids[0].tolist(), "embedding": [round(float(x), 7) for x in pooled]})
    # The reference comes first: the legacy ONNX exporter leaves the module changed in a way that
    # moves its outputs (measured: 0.08 in one component), while the exported graph is right.
    model = LastHidden(bert)
    ids = torch.tensor([[1, 2, 3, 4]])
    axes = {0: "batch", 1: "sequence"}
    torch.onnx.export(
        model,
        (ids, torch.ones_like(ids), torch.zeros_like(ids)),
        os.path.join(args.out, "onnx", "model.onnx"),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["last_hidden_state"],
        dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "last_hidden_state": axes},
        opset_version=14,
        dynamo=False,
    )
    with open(os.path.join(args.out, "reference.json"), "w") as f:
        json.dump({"pooling": "mean", "normalize": True, "texts": reference}, f, indent=1)
        f.write("\n")
    for root, _, files in os.walk(args.out):
        for name in files:
            print(os.path.join(root, name), os.path.getsize(os.path.join(root, name)))


if __name__ == "__main__":
    main()
