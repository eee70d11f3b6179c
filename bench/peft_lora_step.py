"""The "what a user would run" peer of the engine benchmarks: Hugging Face transformers + PEFT.

A LlamaForCausalLM / Qwen3ForCausalLM (whatever config.json in --model-dir says), loaded from the
folder's safetensors in float32 when it has them, else built from the config with transformers'
random init; get_peft_model with LoRA r on q,k,v,o,gate,up,down and lm_head (alpha 32, no dropout);
one forward (logits), summed cross-entropy on the given targets, backward and torch AdamW step.

Usage: python bench/peft_lora_step.py --model-dir DIR --batch batch.json [--steps 2 --warmup 1 --rank 32 --threads 2]
batch.json: {"tokens": [[...], ...], "targets": [[...], ...]} (equal-length sequences).
Prints one JSON line: step_s (median wall), cpu_s, loss per step, peak_rss_bytes (VmHWM of the whole
process, model included), rss_after_load_bytes, versions.
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.nn.functional as F
import transformers
import peft
from transformers import AutoConfig, AutoModelForCausalLM

p = argparse.ArgumentParser()
p.add_argument("--model-dir", required=True)
p.add_argument("--batch", required=True)
p.add_argument("--steps", type=int, default=2)
p.add_argument("--warmup", type=int, default=1)
p.add_argument("--rank", type=int, default=32)
p.add_argument("--threads", type=int, default=2)
args = p.parse_args()
torch.set_num_threads(args.threads)
torch.manual_seed(0)


def status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


has_weights = any(n.endswith(".safetensors") for n in os.listdir(args.model_dir))
if has_weights:
    model = AutoModelForCausalLM.from_pretrained(args.model_dir, dtype=torch.float32)
else:
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(args.model_dir), dtype=torch.float32)
# GPT-OSS's experts are fused nn.Parameters, reachable only through target_parameters (one LoRA
# of rank r per expert, PEFT's ParamWrapper); the engine trains Tinker's shared-outer factors there.
is_gpt_oss = model.config.model_type == "gpt_oss"
lora = peft.LoraConfig(
    r=args.rank, lora_alpha=32, lora_dropout=0.0, bias="none",
    # Phi-3 stores q/k/v and gate/up fused (qkv_proj, gate_up_proj); names a model lacks match nothing.
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "qkv_proj", "gate_proj", "up_proj", "gate_up_proj", "down_proj", "lm_head"],
    target_parameters=["mlp.experts.gate_up_proj", "mlp.experts.down_proj"] if is_gpt_oss else None,
)
model = peft.get_peft_model(model, lora)
model.train()
params = [q for q in model.parameters() if q.requires_grad]
opt = torch.optim.AdamW(params, lr=1e-4, betas=(0.9, 0.95), eps=1e-12, weight_decay=0.0)
with open(args.batch) as f:
    batch = json.load(f)
tokens = torch.tensor(batch["tokens"], dtype=torch.long)
targets = torch.tensor(batch["targets"], dtype=torch.long)
rss_after_load = status_bytes("VmRSS")


def step():
    logits = model(input_ids=tokens, use_cache=False).logits
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1), reduction="sum")
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.item()


times, cpus, losses = [], [], []
for i in range(args.warmup + args.steps):
    t, c = time.perf_counter(), time.process_time()
    losses.append(step())
    if i >= args.warmup:
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
print(json.dumps({
    "torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
    "threads": torch.get_num_threads(), "step_s": statistics.median(times), "steps_s": times,
    "cpu_s": statistics.median(cpus), "losses": losses, "tokens": int(tokens.numel()),
    "peak_rss_bytes": status_bytes("VmHWM"), "rss_after_load_bytes": rss_after_load,
    "trainable_params": sum(q.numel() for q in params),
}))
