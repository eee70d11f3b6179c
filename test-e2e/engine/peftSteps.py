"""The PEFT side of test-e2e/engine/families.test.ts: LoRA gradients and AdamW steps of a model
folder in transformers + PEFT, from LoRA weights the engine chose. Reads on stdin
{"model_dir", "rank", "alpha", "targets": [module names], "init": {peft name: [floats]},
 "batch": [{"tokens", "targets", "weights"}], "adam": {lr, beta1, beta2, eps, weight_decay}, "steps"};
prints {"losses": [...], "grads": {name: [...]}, "final": {name: [...]}} as JSON (gradients of the
first step; names as the engine spells them, without PEFT's ".default")."""
import json
import sys

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

request = json.load(sys.stdin)
torch.manual_seed(0)
base = AutoModelForCausalLM.from_pretrained(request["model_dir"], dtype=torch.float32, attn_implementation="eager")
config = LoraConfig(r=request["rank"], lora_alpha=request["alpha"], lora_dropout=0.0, target_modules=request["targets"], bias="none")
model = get_peft_model(base, config)
model.train()

params = {}
for name, p in model.named_parameters():
    if not p.requires_grad:
        continue
    ours = name.replace(".default.", ".")
    if ours not in request["init"]:
        raise SystemExit(f"PEFT trains {ours}, which the engine's adapter does not have")
    with torch.no_grad():
        p.copy_(torch.tensor(request["init"][ours], dtype=torch.float32).reshape(p.shape))
    params[ours] = p
missing = set(request["init"]) - set(params)
if missing:
    raise SystemExit(f"the engine's adapter has tensors PEFT does not train: {sorted(missing)[:5]}")

adam = request["adam"]
optimizer = torch.optim.AdamW(
    list(params.values()), lr=adam["lr"], betas=(adam["beta1"], adam["beta2"]), eps=adam["eps"], weight_decay=adam["weight_decay"]
)


def loss_sum():
    total = torch.zeros((), dtype=torch.float32)
    for datum in request["batch"]:
        logits = model(input_ids=torch.tensor([datum["tokens"]])).logits[0].float()
        lp = torch.log_softmax(logits, dim=-1)
        picked = lp[torch.arange(len(datum["targets"])), torch.tensor(datum["targets"])]
        total = total - (picked * torch.tensor(datum["weights"], dtype=torch.float32)).sum()
    return total


losses = []
grads = {}
for step in range(request["steps"]):
    optimizer.zero_grad()
    loss = loss_sum()
    loss.backward()
    losses.append(loss.item())
    if step == 0:
        grads = {n: p.grad.detach().flatten().tolist() for n, p in params.items()}
    optimizer.step()
final = {n: p.detach().flatten().tolist() for n, p in params.items()}
print(json.dumps({"losses": losses, "grads": grads, "final": final}))
