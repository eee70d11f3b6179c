// Writes the trained model as a Hugging Face LlamaForCausalLM folder: config.json,
// generation_config.json, model.safetensors (bf16) and the tokenizer files next to them.
import fs from "node:fs";
import path from "node:path";
import { denseWeight, toFloat32 } from "../../src/engine/kernels/halfArray.ts";
import { modelConfigToHfJson } from "../../src/engine/storage/loadModel.ts";
import type { EngineModel } from "../../src/engine/model/model.ts";
import { writeModelSafetensors } from "../../src/engine/safetensors/index.ts";
import { expectedTensorShapes } from "../../src/engine/model/config.ts";

const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"];

export function exportHfModel(model: EngineModel, outDir: string, tokenizerDir: string, metadata: Record<string, string>): number {
  fs.mkdirSync(outDir, { recursive: true });
  const config = { ...modelConfigToHfJson(model.config), torch_dtype: "bfloat16" };
  fs.writeFileSync(path.join(outDir, "config.json"), JSON.stringify(config, null, 2) + "\n");
  fs.writeFileSync(
    path.join(outDir, "generation_config.json"),
    JSON.stringify({ bos_token_id: model.config.bosTokenId, eos_token_id: model.config.eosTokenId, do_sample: false }, null, 2) + "\n",
  );
  const shapes = expectedTensorShapes(model.config);
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, data] of model.baseWeights()) {
    const shape = shapes.get(name);
    if (!shape) throw new Error(`exportHfModel: the model holds an unexpected tensor ${name}`);
    tensors.set(name, { shape, data: toFloat32(denseWeight(data, name)) });
  }
  const bytes = writeModelSafetensors(outDir, tensors, { dtype: "BF16", metadata });
  if (path.resolve(tokenizerDir) !== path.resolve(outDir)) {
    for (const f of TOKENIZER_FILES) {
      const src = path.join(tokenizerDir, f);
      if (fs.existsSync(src)) fs.copyFileSync(src, path.join(outDir, f));
    }
  }
  return bytes;
}
