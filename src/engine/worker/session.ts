// The state that lives in the compute worker: loaded models by id, base weights shared between
// LoRA models of the same base, and the checkpoint store. Every request is handled synchronously,
// so requests run in exactly the order they were posted. A failing request leaves the model as it
// was (the model validates before it mutates), so the engine stays usable.
import { InvalidArgumentError } from "../../tinker/errors.ts";
import { getKernels, loadNativeKernels, referenceKernels, type Kernels } from "../kernels/index.ts";
import { expectedTensorShapes, parseModelConfig, type ModelConfig } from "../model/config.ts";
import { EngineModel, type TrainableSetup } from "../model/model.ts";
import { loadModelDir, modelConfigToHfJson } from "../loadModel.ts";
import { CheckpointStore, type LoraInfo } from "../store.ts";
import type { TensorToWrite } from "../safetensors/writer.ts";
import type { CreateModelRequest, CreateModelResult, ResultByOp, WorkerRequest } from "./protocol.ts";

interface LoadedBase {
  config: ModelConfig;
  configJson: Record<string, unknown>;
  weights: Map<string, Float32Array>;
}

interface ModelEntry {
  model: EngineModel;
  baseModel: string;
  configJson: Record<string, unknown>;
  /** Folder the starting weights came from (also holds the tokenizer files, if any). */
  sourceDir?: string;
  baseKey?: string;
}

export function loraInfo(setup: TrainableSetup): LoraInfo | null {
  return setup.mode === "lora"
    ? { rank: setup.rank, seed: setup.seed, trainAttn: setup.trainAttn, trainMlp: setup.trainMlp, trainUnembed: setup.trainUnembed }
    : null;
}

/** Shapes of trainable tensors: LoRA A is [r, in] and B is [out, r]; full mode uses the HF shapes. */
export function trainableShapes(config: ModelConfig, setup: TrainableSetup, tensors: Map<string, Float32Array>): Map<string, TensorToWrite> {
  const hf = expectedTensorShapes(config);
  const out = new Map<string, TensorToWrite>();
  for (const [name, data] of tensors) {
    let shape: number[];
    if (setup.mode === "lora" && name.endsWith(".lora_A.weight")) shape = [setup.rank, data.length / setup.rank];
    else if (setup.mode === "lora" && name.endsWith(".lora_B.weight")) shape = [data.length / setup.rank, setup.rank];
    else shape = hf.get(name) ?? [data.length];
    out.set(name, { shape, data });
  }
  return out;
}

export class EngineSession {
  private readonly models = new Map<string, ModelEntry>();
  private readonly bases = new Map<string, LoadedBase>();
  private kernelsCache: Kernels | null = null;
  readonly store: CheckpointStore;

  constructor(storeDir: string, private readonly kernelChoice?: "native" | "reference") {
    this.store = new CheckpointStore(storeDir);
  }

  private kernels(): Kernels {
    if (this.kernelsCache === null) {
      this.kernelsCache = this.kernelChoice === "reference" ? referenceKernels : this.kernelChoice === "native" ? loadNativeKernels() : getKernels();
    }
    return this.kernelsCache;
  }

  private entry(modelId: string): ModelEntry {
    const e = this.models.get(modelId);
    if (e === undefined) {
      throw new InvalidArgumentError(`model ${JSON.stringify(modelId)} is not loaded in this engine (it was unloaded, or belongs to another process)`);
    }
    return e;
  }

  handle<Op extends WorkerRequest["op"]>(req: Extract<WorkerRequest, { op: Op }>): ResultByOp[Op] {
    return this.dispatch(req) as ResultByOp[Op];
  }

  dispatch(req: WorkerRequest): ResultByOp[WorkerRequest["op"]] {
    switch (req.op) {
      case "createModel":
        return this.createModel(req);
      case "forwardBackward": {
        const { model } = this.entry(req.modelId);
        const r = model.forwardBackward(req.batch, req.lossFn, req.lossFnConfig, req.backward);
        return { logprobs: r.logprobs, lossSum: r.lossSum, metrics: { ...r.metrics, "loss:sum": r.lossSum }, elementwiseLoss: r.elementwiseLoss };
      }
      case "optimStep": {
        const metrics = this.entry(req.modelId).model.optimStep(req.adam);
        this.store.touchRun(req.modelId);
        return metrics;
      }
      case "save":
        return this.save(req.modelId, req.kind, req.name, req.overwrite, req.ttlSeconds);
      case "load":
        return this.load(req.modelId, req.path, req.optimizer);
      case "unload": {
        const e = this.entry(req.modelId);
        this.models.delete(req.modelId);
        if (e.baseKey !== undefined && ![...this.models.values()].some((m) => m.baseKey === e.baseKey)) this.bases.delete(e.baseKey);
        return { modelId: req.modelId };
      }
      case "optimizerState":
        return this.entry(req.modelId).model.optimizerState();
    }
  }

  private createModel(req: CreateModelRequest): CreateModelResult {
    if (this.models.has(req.modelId)) throw new InvalidArgumentError(`model id ${req.modelId} is already in use`);
    let model: EngineModel;
    let configJson: Record<string, unknown>;
    let sourceDir: string | undefined;
    let baseKey: string | undefined;
    if (req.source.kind === "dir") {
      // LoRA models share frozen base weights; a full fine-tune copies them inside create().
      baseKey = req.source.dir;
      let base = this.bases.get(baseKey);
      if (base === undefined) {
        base = loadModelDir(req.source.dir);
        this.bases.set(baseKey, base);
      }
      model = EngineModel.create(base.config, base.weights, req.setup, this.kernels());
      configJson = base.configJson;
      sourceDir = req.source.dir;
      if (req.setup.mode === "full" && ![...this.models.values()].some((m) => m.baseKey === baseKey)) {
        // Nothing shares the loaded copy; do not keep a second copy of a full model alive.
        this.bases.delete(baseKey);
        baseKey = undefined;
      }
    } else {
      const config = parseModelConfig(req.source.configJson, `model config for ${req.baseModel}`);
      model = EngineModel.create(config, EngineModel.randomWeights(config, req.source.seed), req.setup, this.kernels());
      configJson = { ...modelConfigToHfJson(config), ...req.source.configJson };
    }
    if (req.record) {
      this.store.createRun({
        model_id: req.modelId,
        base_model: req.baseModel,
        is_lora: req.setup.mode === "lora",
        lora: loraInfo(req.setup),
        user_metadata: req.userMetadata,
      });
    }
    this.models.set(req.modelId, { model, baseModel: req.baseModel, configJson, sourceDir, baseKey });
    let trainableParameters = 0;
    for (const t of model.parameters()) trainableParameters += t.data.length;
    return {
      modelType: model.config.modelType,
      vocabSize: model.config.vocabSize,
      maxPositionEmbeddings: model.config.maxPositionEmbeddings,
      trainableParameters,
    };
  }

  private save(modelId: string, kind: "weights" | "sampler_weights", name: string, overwrite: boolean, ttlSeconds?: number): { path: string; sizeBytes: number } {
    const e = this.entry(modelId);
    const { model } = e;
    const opt = kind === "weights" ? model.optimizerState() : undefined;
    return this.store.save(
      modelId,
      kind,
      name,
      {
        baseModel: e.baseModel,
        baseModelDir: model.setup.mode === "lora" ? e.sourceDir : undefined,
        lora: loraInfo(model.setup),
        step: opt?.step ?? model.optimizerState().step,
        tensors: trainableShapes(model.config, model.setup, model.trainableTensors()),
        optimizer: opt,
        modelConfigJson: model.setup.mode === "full" ? e.configJson : undefined,
        tokenizerDir: model.setup.mode === "full" ? e.sourceDir : undefined,
      },
      { overwrite, ttlSeconds },
    );
  }

  private load(modelId: string, path: string, optimizer: boolean): { path: string } {
    const { model } = this.entry(modelId);
    const ckpt = this.store.load(path, { optimizer });
    const isLora = model.setup.mode === "lora";
    if (ckpt.meta.is_lora !== isLora) {
      throw new InvalidArgumentError(`checkpoint ${path} holds ${ckpt.meta.is_lora ? "LoRA adapter" : "full"} weights but model ${modelId} is a ${isLora ? "LoRA" : "full-weight"} model`);
    }
    if (isLora && model.setup.mode === "lora" && ckpt.meta.lora !== null && ckpt.meta.lora.rank !== model.setup.rank) {
      throw new InvalidArgumentError(`checkpoint ${path} has LoRA rank ${ckpt.meta.lora.rank} but model ${modelId} has rank ${model.setup.rank}; create the training client from the checkpoint instead`);
    }
    try {
      model.loadTrainableTensors(ckpt.tensors);
    } catch (err) {
      throw new InvalidArgumentError(`checkpoint ${path} does not fit model ${modelId} (base ${ckpt.meta.base_model}): ${(err as Error).message}`);
    }
    if (ckpt.optimizer !== undefined) model.loadOptimizerState(ckpt.optimizer);
    else model.resetOptimizerState();
    return { path };
  }
}
