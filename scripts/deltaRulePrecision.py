"""Reference logprobs for the Qwen3.5 precision note (docs/numerics.md#gated-deltanet).

For a qwen3_5_text model folder and three random sequences (20, 33 and 100 tokens), writes JSON
with transformers' fp32 logprobs and those of a float64 run. transformers casts its delta-rule
inputs to float32 even in a float64 model, so the float64 run replaces torch_chunk_gated_delta_rule
by a float64 recurrence of the same rule (other float32 casts remain: the gated norm, the decay
gate, the (1 + w) norm weights).

    ~/.cache/tinker-cookbook-ts/e2e-venv/bin/python scripts/deltaRulePrecision.py MODEL_DIR OUT.json
    npx tsx scripts/deltaRulePrecision.ts MODEL_DIR OUT.json
"""
import json
import sys

import torch
import transformers.models.qwen3_5.modeling_qwen3_5 as qwen3_5
from transformers import AutoModelForCausalLM


def delta_rule_float64(query, key, value, g, beta, initial_state=None, output_final_state=False, use_qk_l2norm_in_kernel=False, **kwargs):
    q, k, v, b, g = [x.transpose(1, 2).double() for x in (query, key, value, beta, g)]
    if use_qk_l2norm_in_kernel:
        q = q * torch.rsqrt((q * q).sum(-1, keepdim=True) + 1e-6)
        k = k * torch.rsqrt((k * k).sum(-1, keepdim=True) + 1e-6)
    q = q / q.shape[-1] ** 0.5
    batch, heads, length, dk = k.shape
    state = torch.zeros(batch, heads, dk, v.shape[-1], dtype=torch.float64)
    out = torch.zeros_like(v)
    for t in range(length):
        state = state * g[:, :, t].exp()[..., None, None]
        delta = (v[:, :, t] - (state * k[:, :, t, :, None]).sum(-2)) * b[:, :, t, None]
        state = state + k[:, :, t, :, None] * delta[:, :, None, :]
        out[:, :, t] = (state * q[:, :, t, :, None]).sum(-2)
    return out.transpose(1, 2).to(query.dtype), (state if output_final_state else None)


def logprobs(model, sequences):
    out = []
    for s in sequences:
        with torch.no_grad():
            lp = torch.log_softmax(model(input_ids=torch.tensor([s])).logits[0].double(), -1)
        out.append([lp[i, s[i + 1]].item() for i in range(len(s) - 1)])
    return out


def main():
    model_dir, out_path = sys.argv[1], sys.argv[2]
    with open(f"{model_dir}/config.json") as f:
        vocab = json.load(f)["vocab_size"]
    generator = torch.Generator().manual_seed(5)
    sequences = [torch.randint(0, vocab, (n,), generator=generator).tolist() for n in (20, 33, 100)]
    fp32 = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager").eval()
    result = {"sequences": sequences, "fp32": logprobs(fp32, sequences)}
    qwen3_5.torch_chunk_gated_delta_rule = delta_rule_float64
    qwen3_5.torch_recurrent_gated_delta_rule = delta_rule_float64
    fp64 = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64, attn_implementation="eager").eval()
    result["fp64"] = logprobs(fp64, sequences)
    with open(out_path, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
