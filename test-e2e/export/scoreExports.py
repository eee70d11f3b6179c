"""Scores token sequences with exported folders in transformers/peft (the reference side of the
export end-to-end test). Reads {"sequences": [[id, ...], ...], "adapter": dir?, "merged": [dir, ...]}
on stdin; prints {"adapter": [[null, lp, ...], ...], "merged": {dir: [...]}, "info": {...}} as JSON.
The adapter is loaded with AutoPeftModelForCausalLM, so its base comes from adapter_config.json's
base_model_name_or_path, as a user's would."""
import json
import sys

import torch
from peft import AutoPeftModelForCausalLM
from transformers import AutoModelForCausalLM, AutoTokenizer

torch.set_grad_enabled(False)
request = json.load(sys.stdin)
sequences = request["sequences"]


def score(model):
    model.eval()
    out = []
    for seq in sequences:
        logits = model(input_ids=torch.tensor([seq])).logits[0].double()
        logprobs = torch.log_softmax(logits, dim=-1)
        out.append([None] + [logprobs[i - 1, seq[i]].item() for i in range(1, len(seq))])
    return out


result = {"merged": {}, "info": {}}
if request.get("adapter"):
    model = AutoPeftModelForCausalLM.from_pretrained(request["adapter"], dtype=torch.float32, attn_implementation="eager")
    result["adapter"] = score(model)
    result["info"]["adapter_base"] = model.peft_config["default"].base_model_name_or_path
for folder in request.get("merged", []):
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager")
    result["merged"][folder] = score(model)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    result["info"][folder] = {
        "tie_word_embeddings": bool(model.config.tie_word_embeddings),
        "stored_dtype": str(AutoModelForCausalLM.from_pretrained(folder).dtype),
        "tokenizer_roundtrip": tokenizer.decode(sequences[0], skip_special_tokens=False),
    }
print(json.dumps(result))
