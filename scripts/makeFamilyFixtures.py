"""Builds the tiny per-family reference models in fixtures/families/ (docs/numerics.md#model-families).

For each decoder family the engine implements beyond llama/qwen: a random model in a tiny config
saved by transformers (fp32, and a bf16 copy for the resident 16-bit path; gpt_oss also an MXFP4
copy, as the released checkpoints store their experts), with transformers' own log-probabilities
of a fixed token sequence in reference.json. The unit tests
(test/engine/model/families.test.ts) load these folders with the engine and compare.

Run with the e2e venv's python (torch + transformers 5.x):
    ~/.cache/tinker-cookbook-ts/e2e-venv/bin/python scripts/makeFamilyFixtures.py [--out DIR] [--family NAME ...]
    [--vocab N] [--tokenizer-from MODEL_DIR]
The e2e tests call it with --out (and tiny-chat's tokenizer, vocab 1024) to build the same models in
a temporary folder that recipes can train.
"""
import argparse
import json
import os
import shutil

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

SEED = 1234
SEQUENCE_LENGTH = 24

# Tiny configs: hidden 32, 2-3 layers, GQA with 2 query heads per KV head, vocab 64 (fixtures stay
# well under 200 KB). Each sets what makes its family differ from llama.
TINY = dict(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
FAMILIES = {
    "olmo2": dict(
        TINY,
        model_type="olmo2",
        num_hidden_layers=2,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        tie_word_embeddings=False,
        attention_bias=False,
    ),
    # Two sliding layers with a 5-token window (shorter than the sequence, so the mask matters) and
    # their own RoPE base, one global layer; query_pre_attn_scalar differs from head_dim.
    "gemma3_text": dict(
        TINY,
        model_type="gemma3_text",
        num_hidden_layers=3,
        head_dim=8,
        query_pre_attn_scalar=12,
        sliding_window=5,
        layer_types=["sliding_attention", "full_attention", "sliding_attention"],
        rope_parameters={
            "sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
            "full_attention": {"rope_type": "default", "rope_theta": 10000.0},
        },
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
    ),
    # Layer 1 has no rotary embedding (NoPE) and, as transformers lays it out by default, slides.
    "smollm3": dict(
        TINY,
        model_type="smollm3",
        num_hidden_layers=3,
        no_rope_layers=[1, 0, 1],
        use_sliding_window=True,
        sliding_window=5,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        tie_word_embeddings=True,
    ),
    # Fused qkv_proj and gate_up_proj; a 5-token sliding window on every layer, as Phi-3-mini-4k has.
    "phi3": dict(
        TINY,
        model_type="phi3",
        num_hidden_layers=2,
        sliding_window=5,
        original_max_position_embeddings=512,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        tie_word_embeddings=False,
    ),
    # Six experts, two per token with renormalised weights (Qwen3-30B-A3B's norm_topk_prob), every
    # layer sparse as in the released models (PEFT 0.21 does not adapt the dense MLP of a mixed
    # model on transformers 5; the engine's mixed layers are checked in test/engine/model).
    "qwen3_moe": dict(
        TINY,
        model_type="qwen3_moe",
        num_hidden_layers=3,
        head_dim=8,
        num_experts=6,
        num_experts_per_tok=2,
        moe_intermediate_size=16,
        norm_topk_prob=True,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        tie_word_embeddings=False,
    ),
    # Qwen3.5's hybrid stack: Gated DeltaNet (linear attention) layers with 2 key heads shared by 4
    # value heads, a 4-tap causal conv, interleaved with gated full attention (q_proj twice as wide,
    # q/k norms, RoPE on the first quarter of each 16-wide head).
    "qwen3_5_text": dict(
        TINY,
        model_type="qwen3_5_text",
        num_hidden_layers=3,
        head_dim=16,
        layer_types=["linear_attention", "full_attention", "linear_attention"],
        linear_conv_kernel_dim=4,
        linear_key_head_dim=8,
        linear_value_head_dim=8,
        linear_num_key_heads=2,
        linear_num_value_heads=4,
        rms_norm_eps=1e-6,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25},
        tie_word_embeddings=False,
    ),
    # Attention sinks, a 5-token window on the first layer and full attention on the second, YaRN
    # (truncate false, as the released config), biases everywhere, four experts with two per token
    # (the router's top-k logits softmaxed) and the clamped SwiGLU; Fe = 32 so the experts can be
    # written in MXFP4 (32-value blocks along the input) for the gpt_oss-mxfp4 fixture.
    "gpt_oss": dict(
        TINY,
        model_type="gpt_oss",
        num_hidden_layers=2,
        intermediate_size=32,
        head_dim=8,
        num_local_experts=4,
        num_experts_per_tok=2,
        sliding_window=5,
        layer_types=["sliding_attention", "full_attention"],
        rope_parameters={
            "rope_type": "yarn",
            "rope_theta": 150000.0,
            "factor": 8.0,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
            "original_max_position_embeddings": 64,
        },
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
    ),
}


def randomize(model, generator):
    """Weights large enough that every nonlinearity matters (HF's 0.02 init gives near-uniform
    logprobs, which would hide a wrong norm), norm weights spread around their identity value."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                # Gemma- and Qwen3.5-style norms scale by (1 + weight): their identity is 0, not 1
                # (Qwen3.5's gated norm in the linear attention scales by weight itself).
                model_type = getattr(model.config, "model_type", "")
                offset = model_type.startswith("gemma") or (model_type.startswith("qwen3_5") and "linear_attn" not in name)
                base = 0.0 if offset else 1.0
                p.copy_(base + 0.4 * (torch.rand(p.shape, generator=generator) - 0.5))
            elif name.endswith("sinks"):
                # Sinks comparable to the scores, so the extra denominator term matters.
                p.copy_(torch.randn(p.shape, generator=generator))
            elif name.endswith("gate_up_proj_bias"):
                # Large enough that the clamps at ±7 cut some gate and up values.
                p.copy_(torch.randn(p.shape, generator=generator) * 5)
            else:
                p.copy_(torch.randn(p.shape, generator=generator) * 0.2)


def logprobs(model, tokens):
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([tokens])).logits[0].double()
    lp = torch.log_softmax(logits, dim=-1)
    return [lp[i, tokens[i + 1]].item() for i in range(len(tokens) - 1)]


def routing(model, tokens):
    """Mixture of experts: each sparse layer's chosen experts per token, as transformers' router picks them."""
    with torch.no_grad():
        out = model(input_ids=torch.tensor([tokens]), output_router_logits=True)
    k = model.config.num_experts_per_tok
    return [torch.topk(logits.float(), k, dim=-1).indices.tolist() for logits in out.router_logits]


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def build(family, out_dir, vocab, tokenizer_from=None):
    spec = dict(FAMILIES[family])
    model_type = spec.pop("model_type")
    bos, eos = 0, 1
    if tokenizer_from:
        with open(os.path.join(tokenizer_from, "config.json")) as f:
            source = json.load(f)
        bos, eos = source.get("bos_token_id", bos), source.get("eos_token_id", eos)
    config = AutoConfig.for_model(model_type, vocab_size=vocab, bos_token_id=bos, eos_token_id=eos, pad_token_id=None, **spec)
    torch.manual_seed(SEED)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager", dtype=torch.float32)
    generator = torch.Generator().manual_seed(SEED)
    randomize(model, generator)
    model.eval()
    tokens = torch.randint(0, vocab, (SEQUENCE_LENGTH,), generator=generator).tolist()

    fp32_dir = os.path.join(out_dir, family)
    model.save_pretrained(fp32_dir, safe_serialization=True)
    reference = {
        "transformers": transformers.__version__,
        "tokens": tokens,
        "logprobs": logprobs(model, tokens),
    }
    if getattr(config, "num_experts_per_tok", None):
        reference["routing"] = routing(model, tokens)
    # The bf16 copy: the weights rounded to bf16, scored in fp32 (what the resident path computes).
    bf16_dir = os.path.join(out_dir, f"{family}-bf16")
    model.to(torch.bfloat16).save_pretrained(bf16_dir, safe_serialization=True)
    widened = AutoModelForCausalLM.from_pretrained(bf16_dir, dtype=torch.float32, attn_implementation="eager")
    widened.eval()
    reference["logprobs_bf16_weights"] = logprobs(widened, tokens)
    for d in (fp32_dir, bf16_dir):
        gen = os.path.join(d, "generation_config.json")
        if os.path.exists(gen):
            os.remove(gen)
        for name in TOKENIZER_FILES if tokenizer_from else ():
            shutil.copyfile(os.path.join(tokenizer_from, name), os.path.join(d, name))
    if model_type == "gpt_oss":
        reference["logprobs_mxfp4"] = write_mxfp4(bf16_dir, os.path.join(out_dir, f"{family}-mxfp4"), tokens, generator)
    with open(os.path.join(fp32_dir, "reference.json"), "w") as f:
        json.dump(reference, f, indent=1)
        f.write("\n")
    return fp32_dir


def write_mxfp4(bf16_dir, out_dir, tokens, generator):
    """GPT-OSS as released: the experts' matrices in MXFP4 (`*_blocks` uint8 [E, rows, in/32, 16], two
    FP4 e2m1 codes a byte, low nibble first; `*_scales` uint8 [E, rows, in/32], exponents biased by
    127; rows are the output dimension, as transformers' integrations/mxfp4.py dequantizes them),
    every other tensor bf16. The codes and scales are random (every code value occurs), so the
    dequantized weights are exact. Returns transformers' fp32 logprobs of `tokens` after it loads
    the folder and dequantizes it."""
    from safetensors.torch import load_file, save_file
    from transformers import Mxfp4Config

    tensors = load_file(os.path.join(bf16_dir, "model.safetensors"))
    with open(os.path.join(bf16_dir, "config.json")) as f:
        config = json.load(f)
    out = {}
    for name, t in tensors.items():
        if not name.endswith(("experts.gate_up_proj", "experts.down_proj")):
            out[name] = t
            continue
        experts, n_in, n_out = t.shape
        blocks = torch.randint(0, 256, (experts, n_out, n_in // 32, 16), generator=generator, dtype=torch.int32).to(torch.uint8)
        # 2^-4 .. 2^-2 times codes up to 6: weights up to 1.5, like the fp32 fixture's spread.
        scales = torch.randint(127 - 4, 127 - 1, (experts, n_out, n_in // 32), generator=generator, dtype=torch.int32).to(torch.uint8)
        out[f"{name}_blocks"] = blocks
        out[f"{name}_scales"] = scales
    os.makedirs(out_dir, exist_ok=True)
    save_file(out, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    config["quantization_config"] = {
        "quant_method": "mxfp4",
        "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"],
    }
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    # On a CPU without the Triton kernels transformers dequantizes the experts to bf16 (exact).
    model = AutoModelForCausalLM.from_pretrained(
        out_dir, dtype=torch.float32, attn_implementation="eager", quantization_config=Mxfp4Config(dequantize=True)
    )
    model.float().eval()
    return logprobs(model, tokens)


def main():
    parser = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "fixtures", "families"))
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES))
    parser.add_argument("--vocab", type=int, default=64)
    parser.add_argument("--tokenizer-from", help="a model folder whose tokenizer files (and bos/eos ids) the models get")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    built = [build(family, args.out, args.vocab, args.tokenizer_from) for family in (args.family or sorted(FAMILIES))]
    print(json.dumps({"built": built}))


if __name__ == "__main__":
    main()
