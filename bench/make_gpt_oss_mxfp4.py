"""Writes GPT-OSS-20B's architecture with random weights laid out as the released checkpoint is
(experts' matrices as MXFP4 `*_blocks` / `*_scales`, everything else bf16), cut to its first
--layers layers, for the memory measurement in bench/gptOssMemory.ts (docs/numerics.md#gpt-oss).
The config values are the released openai/gpt-oss-20b config.json's; nothing is downloaded.

Usage: python bench/make_gpt_oss_mxfp4.py --out DIR [--layers 2] [--seed 0]
"""
import argparse
import json
import os

import torch
from safetensors.torch import save_file

CONFIG = {
    "architectures": ["GptOssForCausalLM"],
    "model_type": "gpt_oss",
    "attention_bias": True,
    "attention_dropout": 0.0,
    "eos_token_id": 200002,
    "pad_token_id": 199999,
    "head_dim": 64,
    "hidden_act": "silu",
    "hidden_size": 2880,
    "intermediate_size": 2880,
    "initializer_range": 0.02,
    "max_position_embeddings": 131072,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "num_experts_per_tok": 4,
    "num_local_experts": 32,
    "num_hidden_layers": 24,
    "rms_norm_eps": 1e-05,
    "rope_scaling": {
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "factor": 32.0,
        "original_max_position_embeddings": 4096,
        "rope_type": "yarn",
        "truncate": False,
    },
    "rope_theta": 150000,
    "router_aux_loss_coef": 0.9,
    "sliding_window": 128,
    "swiglu_limit": 7.0,
    "tie_word_embeddings": False,
    "vocab_size": 201088,
    "quantization_config": {
        "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"],
        "quant_method": "mxfp4",
    },
}

p = argparse.ArgumentParser()
p.add_argument("--out", required=True)
p.add_argument("--layers", type=int, default=2)
p.add_argument("--seed", type=int, default=0)
args = p.parse_args()
g = torch.Generator().manual_seed(args.seed)
c = dict(CONFIG, num_hidden_layers=args.layers)
c["layer_types"] = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(args.layers)]
D, F, E, H, Hkv, d, V = c["hidden_size"], c["intermediate_size"], c["num_local_experts"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["vocab_size"]


def bf16(*shape, std=0.02):
    return (torch.randn(*shape, generator=g) * std).to(torch.bfloat16)


def mxfp4(rows, cols):
    # Random codes; exponents around 2^-6 so the widened weights are ~0.02 like the rest.
    blocks = torch.randint(0, 256, (E, rows, cols // 32, 16), generator=g, dtype=torch.uint8)
    scales = torch.randint(127 - 7, 127 - 5, (E, rows, cols // 32), generator=g, dtype=torch.uint8)
    return blocks, scales


t = {"model.embed_tokens.weight": bf16(V, D), "lm_head.weight": bf16(V, D), "model.norm.weight": torch.ones(D, dtype=torch.bfloat16)}
for l in range(args.layers):
    p_ = f"model.layers.{l}."
    for name, out, inn in (("q_proj", H * d, D), ("k_proj", Hkv * d, D), ("v_proj", Hkv * d, D), ("o_proj", D, H * d)):
        t[p_ + f"self_attn.{name}.weight"] = bf16(out, inn)
        t[p_ + f"self_attn.{name}.bias"] = bf16(out)
    t[p_ + "self_attn.sinks"] = bf16(H, std=1.0)
    t[p_ + "input_layernorm.weight"] = torch.ones(D, dtype=torch.bfloat16)
    t[p_ + "post_attention_layernorm.weight"] = torch.ones(D, dtype=torch.bfloat16)
    t[p_ + "mlp.router.weight"] = bf16(E, D)
    t[p_ + "mlp.router.bias"] = bf16(E)
    t[p_ + "mlp.experts.gate_up_proj_blocks"], t[p_ + "mlp.experts.gate_up_proj_scales"] = mxfp4(2 * F, D)
    t[p_ + "mlp.experts.gate_up_proj_bias"] = bf16(E, 2 * F)
    t[p_ + "mlp.experts.down_proj_blocks"], t[p_ + "mlp.experts.down_proj_scales"] = mxfp4(D, F)
    t[p_ + "mlp.experts.down_proj_bias"] = bf16(E, D)
os.makedirs(args.out, exist_ok=True)
save_file(t, os.path.join(args.out, "model.safetensors"), metadata={"format": "pt"})
with open(os.path.join(args.out, "config.json"), "w") as f:
    json.dump(c, f, indent=2)
    f.write("\n")
print(json.dumps({"out": args.out, "bytes": os.path.getsize(os.path.join(args.out, "model.safetensors"))}))
