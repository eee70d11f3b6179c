"""PyTorch's side of `npm run bench:decode -- --peer torch`: transformers' generate() on a model
folder, timed the way bench/lib/decodeSide.ts times our sampler. For each stream count B, one
request of B samples of a --prompt-token prompt is generated twice: with 1 new token (prefill and
one draw) and with --tokens, so the difference is --tokens - 1 decode steps of B rows. Sampling at
temperature 1 without top-k/top-p, no stop token (every stream makes --tokens tokens). Prints one
JSON line: prefill tokens/s, decode tokens/s by stream count, peak RSS.

Usage: python bench/torch_decode.py --model-dir DIR --dtype float32|bfloat16 [--prompt 128
--tokens 128 --streams 1,4,16 --reps 3 --threads 2]
"""
import argparse
import json
import resource
import statistics
import time

import torch
import transformers
from transformers import AutoModelForCausalLM

p = argparse.ArgumentParser()
p.add_argument("--model-dir", required=True)
p.add_argument("--dtype", choices=["float32", "bfloat16"], required=True)
p.add_argument("--prompt", type=int, default=128)
p.add_argument("--tokens", type=int, default=128)
p.add_argument("--streams", default="1,4,16")
p.add_argument("--reps", type=int, default=3)
p.add_argument("--threads", type=int, default=2)
args = p.parse_args()

torch.set_num_threads(args.threads)
torch.manual_seed(0)
t0 = time.perf_counter()
model = AutoModelForCausalLM.from_pretrained(args.model_dir, dtype=getattr(torch, args.dtype))
model.eval()
load_s = time.perf_counter() - t0
vocab = model.config.get_text_config().vocab_size
generator = torch.Generator().manual_seed(1234)
prompt = torch.randint(0, vocab, (1, args.prompt), generator=generator)


def generate(streams: int, new_tokens: int) -> float:
    ids = prompt.repeat(streams, 1)
    start = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=True,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            pad_token_id=0,
        )
    wall = time.perf_counter() - start
    assert out.shape == (streams, args.prompt + new_tokens), out.shape
    return wall


generate(1, 4)  # warm-up
prefill = []
decode = {}
for b in [int(s) for s in args.streams.split(",")]:
    rates = []
    for _ in range(args.reps):
        first = generate(b, 1)
        whole = generate(b, args.tokens)
        if b == 1:
            prefill.append(args.prompt / first)
        rates.append(b * (args.tokens - 1) / (whole - first))
    decode[str(b)] = statistics.median(rates)

print(
    json.dumps(
        {
            "dtype": args.dtype,
            "load_s": load_s,
            "prefill_tps": statistics.median(prefill) if prefill else float("nan"),
            "decode_tps": decode,
            "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        }
    )
)
