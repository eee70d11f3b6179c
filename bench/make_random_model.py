"""Writes a random-weight model of a real architecture, saved by transformers as a real checkpoint
would be (config.json + bf16 safetensors), for the real-size engine benchmarks. Nothing is
downloaded: the config is given as JSON, the weights are transformers' own random init.

Usage: python bench/make_random_model.py --config config.json --out DIR [--seed 0]
"""
import argparse
import json

import torch
from transformers import AutoConfig, AutoModelForCausalLM

p = argparse.ArgumentParser()
p.add_argument("--config", required=True)
p.add_argument("--out", required=True)
p.add_argument("--seed", type=int, default=0)
args = p.parse_args()
torch.manual_seed(args.seed)
with open(args.config) as f:
    cfg = json.load(f)
config = AutoConfig.for_model(cfg.pop("model_type"), **cfg)
model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
# Shards under 4 GiB, as released checkpoints mostly are: the engine's resident load then maps each
# file once (a larger file is mapped tensor by tensor, safetensors/resident.ts).
model.save_pretrained(args.out, safe_serialization=True, max_shard_size="3GB")
print(json.dumps({"out": args.out, "params": sum(t.numel() for t in model.parameters())}))
