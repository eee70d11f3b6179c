// Loading a bf16 safetensors model at a Llama-3.2-1B shape (random weights, --layers of the real
// 16; written once to a temp folder). Prints the CPU seconds of loadModelDir. Compare the native
// widening with the TypeScript loop: `COOKBOOK_KERNELS=reference npm run bench:load`.
// Usage: npm run bench:load [-- --layers 4]
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadModelDir, modelConfigToHfJson } from "../src/engine/loadModel.ts";
import { expectedTensorShapes, type ModelConfig } from "../src/engine/model/config.ts";
import { EngineModel } from "../src/engine/model/model.ts";
import { writeSafetensors } from "../src/engine/safetensors/index.ts";

const argv = process.argv.slice(2);
const i = argv.indexOf("--layers");
const layers = i >= 0 ? Number(argv[i + 1]) : 4;
const config: ModelConfig = {
  modelType: "llama", vocabSize: 128256, hiddenSize: 2048, intermediateSize: 8192, numLayers: layers, numHeads: 32,
  numKvHeads: 8, headDim: 64, rmsNormEps: 1e-5, ropeTheta: 500000, ropeScaling: null, maxPositionEmbeddings: 131072,
  tieWordEmbeddings: true, attentionBias: false, qkNorm: false,
};
const dir = join(tmpdir(), `cookbook-bench-load-llama1b-${layers}l`);
if (!existsSync(join(dir, "model.safetensors"))) {
  mkdirSync(dir, { recursive: true });
  const weights = EngineModel.randomWeights(config, 0);
  const shapes = expectedTensorShapes(config);
  const tensors = new Map([...weights].map(([name, data]) => [name, { shape: shapes.get(name) ?? [data.length], data }]));
  writeFileSync(join(dir, "config.json"), JSON.stringify({ ...modelConfigToHfJson(config), torch_dtype: "bfloat16" }));
  writeSafetensors(join(dir, "model.safetensors"), tensors, { dtype: "BF16" });
}
const u0 = process.cpuUsage();
const t0 = performance.now();
const m = loadModelDir(dir);
const u = process.cpuUsage(u0);
let elements = 0;
for (const w of m.weights.values()) elements += w.length;
const widening = process.env.COOKBOOK_KERNELS === "reference" ? "TypeScript loop" : "native";
console.log(`load ${dir} (${(elements / 1e6).toFixed(0)} M bf16 params, widening: ${widening}): ${((u.user + u.system) / 1e6).toFixed(2)} CPU-s, ${((performance.now() - t0) / 1000).toFixed(2)} s wall`);
