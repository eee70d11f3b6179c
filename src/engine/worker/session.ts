// The state that lives in the compute worker: loaded models by id, base weights shared between
// LoRA models of the same base, and the checkpoint store. Every request is handled synchronously,
// so requests run in exactly the order they were posted. A failing request leaves the model as it
// was (the model validates before it mutates), so the engine stays usable.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { InvalidArgumentError } from "../../tinker/errors.ts";
import { getKernels, loadNativeKernels, referenceKernels, type Kernels } from "../kernels/index.ts";
import { expectedTensorShapes, parseModelConfig, type ModelConfig } from "../model/config.ts";
import { expertLoraTensorShape } from "../model/expertLora.ts";
import { EngineModel, type TrainableSetup } from "../model/model.ts";
import { denseWeight, HalfArray, type BaseArray } from "../kernels/halfArray.ts";
import { baseWeightsMode, loadBaseModelDir, modelConfigToHfJson } from "../storage/loadModel.ts";
import { IdleCollector } from "./idleGc.ts";
import { CheckpointStore, type LoraInfo } from "../storage/store.ts";
import type { TensorToWrite } from "../safetensors/writer.ts";
import { checkPrompt, resolveSampleRequest } from "../sampling/request.ts";
import { SamplerRegistry, type Sampler, type SamplerSource } from "../sampling/samplers.ts";
import { DecodeScheduler } from "../sampling/scheduler.ts";
import type { CreateModelRequest, CreateModelResult, CreateSamplerRequest, CreateSamplerResult, ResultByOp, WorkerRequest } from "./protocol.ts";

interface LoadedBase {
  config: ModelConfig;
  configJson: Record<string, unknown>;
  /** 16-bit matrices are views of the checkpoint's memory mapping, which lives as long as they do. */
  weights: Map<string, BaseArray>;
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

/**
 * Shapes of trainable tensors: LoRA A is [r, in] and B is [out, r] (the experts' shared-outer factors are
 * 3-D, model/expertLora.ts); full mode uses the HF shapes.
 */
export function trainableShapes(config: ModelConfig, setup: TrainableSetup, tensors: Map<string, Float32Array>): Map<string, TensorToWrite> {
  const hf = expectedTensorShapes(config);
  const out = new Map<string, TensorToWrite>();
  for (const [name, data] of tensors) {
    let shape: number[];
    const expert = setup.mode === "lora" ? expertLoraTensorShape(config, setup.rank, name) : null;
    if (expert !== null) shape = expert;
    else if (setup.mode === "lora" && name.endsWith(".lora_A.weight")) shape = [setup.rank, data.length / setup.rank];
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
  private samplerRegistry: SamplerRegistry | null = null;
  /** Batches the decoding of every sample request (answered asynchronously). */
  readonly scheduler = new DecodeScheduler();
  readonly store: CheckpointStore;
  /** Returns the memory of released models and samplers once the worker is quiet (issue 20). */
  readonly collector: IdleCollector;

  constructor(
    storeDir: string,
    private readonly kernelChoice?: "native" | "reference",
    collector: IdleCollector = new IdleCollector(),
  ) {
    this.store = new CheckpointStore(storeDir);
    this.collector = collector;
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

  handle<Op extends WorkerRequest["op"]>(req: Extract<WorkerRequest, { op: Op }>): ResultByOp[Op] | Promise<ResultByOp[Op]> {
    return this.dispatch(req) as ResultByOp[Op] | Promise<ResultByOp[Op]>;
  }

  private samplers(): SamplerRegistry {
    this.samplerRegistry ??= new SamplerRegistry(this.kernels());
    return this.samplerRegistry;
  }

  private sampler(samplerId: string): Sampler {
    const s = this.samplerRegistry?.get(samplerId);
    if (s === undefined)
      throw new InvalidArgumentError(`sampler ${JSON.stringify(samplerId)} is not loaded in this engine (it was released, or belongs to another process)`);
    return s;
  }

  /** Frees a shared base once no model and no sampler uses it. */
  private dropBaseIfUnused(baseKey: string | undefined): void {
    if (baseKey === undefined) return;
    if ([...this.models.values()].some((m) => m.baseKey === baseKey)) return;
    if (this.samplerRegistry?.baseKeys().has(baseKey)) return;
    this.bases.delete(baseKey);
  }

  /** The shared frozen base of `dir`, loaded on first use (16-bit matrices mapped, see loadBaseModelDir). */
  private baseFor(dir: string): LoadedBase {
    let base = this.bases.get(dir);
    if (base === undefined) {
      base = loadBaseModelDir(dir, baseWeightsMode(this.kernels().name));
      this.bases.set(dir, base);
    }
    return base;
  }

  /** Sample and compute_logprobs requests return a promise (the decode scheduler batches them); everything else answers at once. */
  dispatch(req: WorkerRequest): ResultByOp[WorkerRequest["op"]] | Promise<ResultByOp["sample"] | ResultByOp["computeLogprobs"]> {
    this.collector.busy();
    switch (req.op) {
      case "createModel":
        return this.createModel(req);
      case "forwardBackward": {
        const { model } = this.entry(req.modelId);
        const r = model.forwardBackward(req.batch, req.lossFn, req.lossFnConfig, req.backward);
        return {
          logprobs: r.logprobs,
          logprobWidths: r.logprobWidths,
          lossSum: r.lossSum,
          metrics: { ...r.metrics, "loss:sum": r.lossSum },
          elementwiseLoss: r.elementwiseLoss,
        };
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
        this.dropBaseIfUnused(e.baseKey);
        this.collector.released();
        return { modelId: req.modelId };
      }
      case "optimizerState":
        return this.entry(req.modelId).model.optimizerState();
      case "createSampler":
        return this.createSampler(req);
      case "releaseSampler": {
        const s = this.samplerRegistry?.remove(req.samplerId);
        if (s !== undefined) {
          this.scheduler.drop(req.samplerId, new InvalidArgumentError(`sampler ${req.samplerId} was released while this request was running`));
          this.dropBaseIfUnused(s.source.baseKey);
          this.collector.released();
        }
        return { samplerId: req.samplerId };
      }
      case "sample": {
        const s = this.sampler(req.samplerId);
        return this.scheduler.submit(s, resolveSampleRequest(req.spec, s.limits));
      }
      case "computeLogprobs": {
        const s = this.sampler(req.samplerId);
        checkPrompt(req.prompt, s.limits);
        return this.scheduler.submitLogprobs(s, req.prompt);
      }
    }
  }

  private createSampler(req: CreateSamplerRequest): CreateSamplerResult {
    let source: SamplerSource;
    const src = req.source;
    if (src.kind === "base") {
      const base = this.baseFor(src.dir);
      source = { config: base.config, weights: base.weights, baseKey: src.dir, adapter: null, tokenizerDir: src.dir };
    } else if (src.kind === "checkpoint") {
      const ckpt = this.store.load(src.path, { optimizer: false });
      if (ckpt.meta.is_lora) {
        const baseDir = src.baseDir ?? ckpt.meta.base_model_dir;
        if (baseDir === undefined) {
          throw new InvalidArgumentError(
            `checkpoint ${src.path} is a LoRA adapter of ${ckpt.meta.base_model}, which cannot be found locally; put the base model where the engine looks (see docs/embedded-engine.md)`,
          );
        }
        if (ckpt.meta.lora === null) throw new InvalidArgumentError(`checkpoint ${src.path}: ${ckpt.dir}/checkpoint.json has is_lora but no lora record`);
        const base = this.baseFor(baseDir);
        source = {
          config: base.config,
          weights: base.weights,
          baseKey: baseDir,
          adapter: { rank: ckpt.meta.lora.rank, tensors: ckpt.tensors },
          tokenizerDir: baseDir,
        };
      } else {
        // A full-weight checkpoint is a complete model folder.
        const m = loadBaseModelDir(ckpt.dir, baseWeightsMode(this.kernels().name));
        source = { config: m.config, weights: m.weights, adapter: null, tokenizerDir: existsSync(join(ckpt.dir, "tokenizer.json")) ? ckpt.dir : undefined };
      }
    } else {
      const e = this.entry(src.modelId);
      const { model } = e;
      if (model.setup.mode === "lora") {
        // Frozen base arrays are shared (they never change); the adapter is copied now.
        source = {
          config: model.config,
          weights: model.baseWeights(),
          baseKey: e.baseKey,
          adapter: { rank: model.setup.rank, tensors: model.trainableTensors() },
          tokenizerDir: e.sourceDir,
        };
      } else {
        const weights = new Map<string, BaseArray>();
        for (const [name, w] of model.baseWeights()) {
          const dense = denseWeight(w, name);
          weights.set(name, dense instanceof HalfArray ? dense.widen() : dense.slice());
        }
        source = { config: model.config, weights, adapter: null, tokenizerDir: e.sourceDir };
      }
    }
    const sampler = this.samplers().add(req.samplerId, source);
    try {
      // Merging now checks the adapter against the model and makes the first sample fast.
      sampler.model();
    } catch (err) {
      this.samplers().remove(req.samplerId);
      this.dropBaseIfUnused(source.baseKey);
      throw new InvalidArgumentError(
        `cannot build a sampler from ${src.kind === "checkpoint" ? src.path : src.kind === "base" ? src.dir : `model ${src.modelId}`}: ${(err as Error).message}`,
      );
    }
    return { modelType: source.config.modelType, vocabSize: source.config.vocabSize, contextLength: source.config.maxPositionEmbeddings };
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
      const base = this.baseFor(baseKey);
      model = EngineModel.create(base.config, base.weights, req.setup, this.kernels());
      configJson = base.configJson;
      sourceDir = req.source.dir;
      if (req.setup.mode === "full" && ![...this.models.values()].some((m) => m.baseKey === baseKey) && !this.samplerRegistry?.baseKeys().has(baseKey)) {
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

  private save(
    modelId: string,
    kind: "weights" | "sampler_weights",
    name: string,
    overwrite: boolean,
    ttlSeconds?: number,
  ): { path: string; sizeBytes: number } {
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
      throw new InvalidArgumentError(
        `checkpoint ${path} holds ${ckpt.meta.is_lora ? "LoRA adapter" : "full"} weights but model ${modelId} is a ${isLora ? "LoRA" : "full-weight"} model`,
      );
    }
    if (isLora && model.setup.mode === "lora" && ckpt.meta.lora !== null && ckpt.meta.lora.rank !== model.setup.rank) {
      throw new InvalidArgumentError(
        `checkpoint ${path} has LoRA rank ${ckpt.meta.lora.rank} but model ${modelId} has rank ${model.setup.rank}; create the training client from the checkpoint instead`,
      );
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
