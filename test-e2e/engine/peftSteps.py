"""The PEFT side of test-e2e/engine/families.test.ts: LoRA gradients and AdamW steps of a model
folder in transformers + PEFT, from LoRA weights the engine chose. Reads on stdin
{"model_dir", "rank", "alpha", "targets": [module names], "init": {peft name: [floats]},
 "batch": [{"tokens", "targets", "weights"}], "adam": {lr, beta1, beta2, eps, weight_decay}, "steps"};
prints {"losses": [...], "grads": {name: [...]}, "final": {name: [...]}} as JSON (gradients of the
first step; names as the engine spells them, without PEFT's ".default").

Mixture-of-experts models: the engine adapts the experts in Tinker's shared-outer layout (w1/w3:
A [1, r, D] shared, B [E, F, r]; w2: A [E, r, F], B [1, D, r] shared), which is not PEFT's
per-expert parametrisation (the shared factors' gradients sum over the experts), and transformers 5
stores a layer's experts fused (gate_up_proj, down_proj), which PEFT's target_modules cannot reach
one expert at a time. Those factors are applied here by plain torch autograd inside the experts'
forward (Qwen3MoeExperts: gate then up halves of gate_up_proj [E, 2F, D]; GptOssExperts: gate and
up interleaved in gate_up_proj [E, D, 2F], with biases); everything else is PEFT's."""
import json
import sys

import torch
import torch.nn.functional as F
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

request = json.load(sys.stdin)
torch.manual_seed(0)
base = AutoModelForCausalLM.from_pretrained(request["model_dir"], dtype=torch.float32, attn_implementation="eager")
targets = request["targets"]
if any(name.endswith("mlp.experts") for name, _ in base.named_modules()):
    # Given leaf names, PEFT would wrap the fused expert tensors whose names match instead (see
    # above): name the linear layers themselves.
    targets = [n for n, m in base.named_modules() if isinstance(m, torch.nn.Linear) and n.split(".")[-1] in targets]
config = LoraConfig(r=request["rank"], lora_alpha=request["alpha"], lora_dropout=0.0, target_modules=targets, bias="none")
model = get_peft_model(base, config)
model.train()
scale = request["alpha"] / request["rank"]

params = {}


def shared_outer_factors(name, E, D, F_):
    """Tinker's w1/w3/w2 factors of one experts module as leaves (from the engine's values), and
    the deltas they add to expert e's gate, up (from its rows x) and down (from its activations h)."""
    r = request["rank"]

    def leaf(proj, which, shape):
        key = f"{name}.{proj}.{which}.weight"
        if key not in request["init"]:
            raise SystemExit(f"the engine's adapter has no {key}")
        t = torch.tensor(request["init"][key], dtype=torch.float32).reshape(shape).requires_grad_(True)
        params[key] = t
        return t

    a1, b1 = leaf("w1", "lora_A", (1, r, D)), leaf("w1", "lora_B", (E, F_, r))
    a3, b3 = leaf("w3", "lora_A", (1, r, D)), leaf("w3", "lora_B", (E, F_, r))
    a2, b2 = leaf("w2", "lora_A", (E, r, F_)), leaf("w2", "lora_B", (1, D, r))

    def gate_up(x, e):
        return scale * (x @ a1[0].T) @ b1[e].T, scale * (x @ a3[0].T) @ b3[e].T

    def down(h, e):
        return scale * (h @ a2[e].T) @ b2[0].T

    return gate_up, down


def adapt_qwen3_moe_experts(name, module):
    """The shared-outer factors inside Qwen3MoeExperts' forward (gate and up halves of gate_up_proj)."""
    E, D, F_ = module.num_experts, module.hidden_dim, module.intermediate_dim
    lora_gate_up, lora_down = shared_outer_factors(name, E, D, F_)

    def forward(hidden_states, top_k_index, top_k_weights):
        final = torch.zeros_like(hidden_states)
        for e in range(E):
            token_idx, pos = torch.where(top_k_index == e)
            if len(token_idx) == 0:
                continue
            x = hidden_states[token_idx]
            w = module.gate_up_proj[e]
            dg, du = lora_gate_up(x, e)
            h = module.act_fn(F.linear(x, w[:F_]) + dg) * (F.linear(x, w[F_:]) + du)
            y = F.linear(h, module.down_proj[e]) + lora_down(h, e)
            final.index_add_(0, token_idx, y * top_k_weights[token_idx, pos, None])
        return final

    module.forward = forward


def adapt_gpt_oss_experts(name, module):
    """The shared-outer factors inside GptOssExperts' forward (gate and up interleaved in gate_up_proj)."""
    E, D, F_ = module.num_experts, module.hidden_size, module.intermediate_size
    lora_gate_up, lora_down = shared_outer_factors(name, E, D, F_)

    def forward(hidden_states, router_indices=None, routing_weights=None):
        out = torch.zeros_like(hidden_states)
        for e in range(E):
            token_idx, top_k_pos = torch.where(router_indices == e)
            if len(token_idx) == 0:
                continue
            x = hidden_states[token_idx]
            gate_up = x @ module.gate_up_proj[e] + module.gate_up_proj_bias[e]
            gate, up = lora_gate_up(x, e)
            gate_up = gate_up + torch.stack([gate, up], dim=-1).reshape(len(token_idx), 2 * F_)
            h = module._apply_gate(gate_up)
            y = h @ module.down_proj[e] + module.down_proj_bias[e] + lora_down(h, e)
            out.index_add_(0, token_idx, y * routing_weights[token_idx, top_k_pos, None])
        return out

    module.forward = forward


for name, module in model.named_modules():
    # Only where the engine adapts the experts (train_mlp).
    if not (name.endswith("mlp.experts") and isinstance(getattr(module, "gate_up_proj", None), torch.nn.Parameter)):
        continue
    if not any(key.startswith(f"{name}.w1.") for key in request["init"]):
        continue
    if hasattr(module, "gate_up_proj_bias"):
        adapt_gpt_oss_experts(name, module)
    else:
        adapt_qwen3_moe_experts(name, module)

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
    # An expert no token chose has no gradient; it still takes its AdamW step (decay, moments), as
    # it does in the engine and in PEFT's fused expert tensors.
    for p in params.values():
        if p.grad is None:
            p.grad = torch.zeros_like(p)
    losses.append(loss.item())
    if step == 0:
        grads = {n: p.grad.detach().flatten().tolist() for n, p in params.items()}
    optimizer.step()
final = {n: p.detach().flatten().tolist() for n, p in params.items()}
print(json.dumps({"losses": losses, "grads": grads, "final": final}))
