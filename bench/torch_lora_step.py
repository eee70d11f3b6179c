"""PyTorch reference for bench/engine.ts: one LoRA forward_backward + optim_step on a
SmolLM2-135M-shaped Llama with random weights (hidden 576, 30 layers, 9 heads / 3 KV heads,
head_dim 64, ffn 1536, vocab 49152, tied embeddings, rope_theta 100000), LoRA r=32 alpha=32 on
q,k,v,o,gate,up,down and lm_head, AdamW, summed cross-entropy, fp32, on 8 x 128 tokens.

Usage: python3 bench/torch_lora_step.py [--steps 3] [--seqs 8] [--len 128] [--threads 2]
Prints one JSON line: {"step_s": median seconds, "tokens_per_s": ..., "torch": version, ...}.
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=3)
p.add_argument("--warmup", type=int, default=1)
p.add_argument("--seqs", type=int, default=8)
p.add_argument("--len", type=int, default=128)
p.add_argument("--rank", type=int, default=32)
p.add_argument("--threads", type=int, default=2)
args = p.parse_args()
torch.set_num_threads(args.threads)
torch.manual_seed(0)

D, L, H, HKV, HD, FF, V, THETA, EPS = 576, 30, 9, 3, 64, 1536, 49152, 100000.0, 1e-5
R, ALPHA = args.rank, 32.0


class LoraLinear(torch.nn.Module):
    def __init__(self, inp, out, base=None):
        super().__init__()
        self.weight = base if base is not None else torch.nn.Parameter(torch.randn(out, inp) * 0.02, requires_grad=False)
        self.a = torch.nn.Parameter(torch.empty(R, inp).uniform_(-1 / math.sqrt(inp), 1 / math.sqrt(inp)))
        # B starts at zero in PEFT; a small value keeps every gradient path busy, as after a step.
        self.b = torch.nn.Parameter(torch.randn(out, R) * 1e-3)
        self.scale = ALPHA / R

    def forward(self, x):
        return F.linear(x, self.weight) + F.linear(F.linear(x, self.a), self.b) * self.scale


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def rope_tables(T):
    inv = 1.0 / (THETA ** (torch.arange(0, HD, 2, dtype=torch.float32) / HD))
    ang = torch.outer(torch.arange(T, dtype=torch.float32), inv)
    emb = torch.cat([ang, ang], -1)
    return emb.cos(), emb.sin()


def rotate(x, cos, sin):
    x1, x2 = x[..., : HD // 2], x[..., HD // 2 :]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.n1 = torch.nn.Parameter(torch.ones(D), requires_grad=False)
        self.n2 = torch.nn.Parameter(torch.ones(D), requires_grad=False)
        self.q, self.k, self.v = LoraLinear(D, H * HD), LoraLinear(D, HKV * HD), LoraLinear(D, HKV * HD)
        self.o = LoraLinear(H * HD, D)
        self.gate, self.up, self.down = LoraLinear(D, FF), LoraLinear(D, FF), LoraLinear(FF, D)

    def forward(self, x, cos, sin, mask):
        B, T, _ = x.shape
        h = rms(x, self.n1)
        q = self.q(h).view(B, T, H, HD).transpose(1, 2)
        k = self.k(h).view(B, T, HKV, HD).transpose(1, 2)
        v = self.v(h).view(B, T, HKV, HD).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        k = k.repeat_interleave(H // HKV, dim=1)
        v = v.repeat_interleave(H // HKV, dim=1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(HD) + mask
        a = (att.softmax(-1) @ v).transpose(1, 2).reshape(B, T, H * HD)
        x = x + self.o(a)
        h = rms(x, self.n2)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Parameter(torch.randn(V, D) * 0.02, requires_grad=False)
        self.layers = torch.nn.ModuleList([Layer() for _ in range(L)])
        self.norm = torch.nn.Parameter(torch.ones(D), requires_grad=False)
        self.head = LoraLinear(D, V, base=self.embed)

    def forward(self, tokens):
        T = tokens.shape[1]
        cos, sin = rope_tables(T)
        mask = torch.full((T, T), float("-inf")).triu(1)
        x = self.embed[tokens]
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.head(rms(x, self.norm))


model = Model()
params = [p for p in model.parameters() if p.requires_grad]
opt = torch.optim.AdamW(params, lr=1e-4, betas=(0.9, 0.95), eps=1e-12, weight_decay=0.0)
g = torch.Generator().manual_seed(1)
tokens = torch.randint(0, V, (args.seqs, args.len), generator=g)
targets = torch.randint(0, V, (args.seqs, args.len), generator=g)


def step():
    logits = model(tokens)
    loss = F.cross_entropy(logits.view(-1, V), targets.view(-1), reduction="sum")
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.item()


# Wall time, and process CPU time (all threads): on a shared machine wall time also counts the
# time other processes held the cores.
times, cpus = [], []
for i in range(args.warmup + args.steps):
    t, c = time.perf_counter(), time.process_time()
    step()
    if i >= args.warmup:
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
med = statistics.median(times)
print(json.dumps({
    "torch": torch.__version__, "threads": torch.get_num_threads(), "step_s": med, "steps_s": times,
    "cpu_s": statistics.median(cpus),
    "tokens_per_s": args.seqs * args.len / med, "trainable_params": sum(p.numel() for p in params),
}))
