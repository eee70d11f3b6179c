// The embedded engine's checkpoint store, addressed by tinker:// paths like the service's:
//
//   <root>/<model_id>/run.json                          training-run record (RestClient)
//   <root>/<model_id>/weights/<name>/                   training state: trainable tensors,
//        checkpoint.json, optimizer.safetensors           optimizer moments and step
//   <root>/<model_id>/sampler_weights/<name>/           adapter (or full weights) only
//
// LoRA tensors are saved in the PEFT layout (adapter_model.safetensors + adapter_config.json) so a
// checkpoint loads in PEFT or vLLM as it is; full fine-tunes are saved as a Hugging Face model
// folder (model.safetensors + config.json). Every save goes to a temporary folder (files and
// folder fsynced) that is renamed into place, so a crash never leaves a half-written checkpoint
// under a real name; a failed save (a full disk) removes its temporary folder, and opening the
// store sweeps the ones a killed process left behind.
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { describeWriteError } from "../../files/diskErrors.ts";
import { fsyncDir, writeAll, writeJsonAtomic } from "../../files/durable.ts";
import { APIStatusError, InvalidArgumentError } from "../../tinker/errors.ts";
import { formatTinkerPath, parseTinkerPath, validateCheckpointName, type CheckpointKind } from "../../tinker/paths.ts";
import type { Checkpoint, CheckpointsList, TrainingRun, TrainingRunsList, WeightsInfo } from "../../tinker/types.ts";
import { readSafetensors, readSafetensorsHeader, type Tensor } from "../safetensors/reader.ts";
import { writeSafetensors, type TensorToWrite } from "../safetensors/writer.ts";
import { readModelSafetensors, writeModelSafetensors } from "../safetensors/directory.ts";
import { TOKENIZER_FILES } from "../../hf/models.ts";
import { isPidAlive } from "../../files/processes.ts";
import { LORA_ALPHA } from "../model/params.ts";

/** The adapter config of an exported LoRA names the alpha its training scale used. */
export { LORA_ALPHA };

export interface LoraInfo {
  rank: number;
  seed: number;
  trainAttn: boolean;
  trainMlp: boolean;
  trainUnembed: boolean;
}

export interface RunRecord {
  model_id: string;
  base_model: string;
  is_lora: boolean;
  lora: LoraInfo | null;
  created_at: string;
  last_request_time: string;
  user_metadata?: Record<string, string>;
}

export interface CheckpointMeta {
  format: "cookbook-checkpoint/1";
  model_id: string;
  kind: CheckpointKind;
  name: string;
  tinker_path: string;
  base_model: string;
  /** Folder the base weights were loaded from, used when the base model name no longer resolves. */
  base_model_dir?: string;
  is_lora: boolean;
  lora: LoraInfo | null;
  /** Optimizer steps taken when saved. */
  step: number;
  time: string;
  has_optimizer: boolean;
  expires_at: string | null;
}

export interface OptimizerSnapshot {
  step: number;
  m: Map<string, Float32Array>;
  v: Map<string, Float32Array>;
}

export interface CheckpointPayload {
  baseModel: string;
  baseModelDir?: string;
  lora: LoraInfo | null;
  step: number;
  /** Trainable tensors with their shapes (PEFT names for LoRA, HF names for full). */
  tensors: Map<string, TensorToWrite>;
  optimizer?: OptimizerSnapshot;
  /** Full mode: the HF config.json to write beside model.safetensors. */
  modelConfigJson?: Record<string, unknown>;
  /** Full mode: tokenizer files are copied from here so the folder is a complete HF model. */
  tokenizerDir?: string;
}

export interface LoadedCheckpoint {
  meta: CheckpointMeta;
  dir: string;
  tensors: Map<string, Float32Array>;
  optimizer?: OptimizerSnapshot;
}

const META_FILE = "checkpoint.json";
const RUN_FILE = "run.json";
const ADAPTER_FILE = "adapter_model.safetensors";
const ADAPTER_CONFIG = "adapter_config.json";
const OPTIMIZER_FILE = "optimizer.safetensors";
const MODEL_ID_RE = /^[A-Za-z0-9_.:-]+$/;

export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.COOKBOOK_HOME && env.COOKBOOK_HOME.length > 0 ? env.COOKBOOK_HOME : join(homedir(), ".cookbook");
  return join(home, "checkpoints");
}

export function checkModelId(modelId: string): string {
  if (!MODEL_ID_RE.test(modelId) || modelId.includes("..")) {
    throw new InvalidArgumentError(`model id ${JSON.stringify(modelId)} is invalid; expected characters from [A-Za-z0-9_.:-]`);
  }
  return modelId;
}

/** The PEFT target_modules of a set of adapter tensor names (q_proj, …, lm_head). */
export function peftTargetModules(names: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const n of names) {
    const m = /\.([^.]+)\.lora_[AB]\.weight$/.exec(n);
    if (m) out.add(m[1]!);
  }
  return [...out].sort();
}

export function peftAdapterConfig(baseModel: string, lora: LoraInfo, tensorNames: Iterable<string>): Record<string, unknown> {
  return {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    base_model_name_or_path: baseModel,
    r: lora.rank,
    lora_alpha: LORA_ALPHA,
    lora_dropout: 0.0,
    target_modules: peftTargetModules(tensorNames),
    bias: "none",
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    use_rslora: false,
    use_dora: false,
    modules_to_save: null,
    layers_to_transform: null,
    layers_pattern: null,
    rank_pattern: {},
    alpha_pattern: {},
    revision: null,
  };
}

function dirSize(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    total += st.isDirectory() ? dirSize(p) : st.size;
  }
  return total;
}

function readJson<T>(file: string): T {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch (err) {
    throw new Error(`${file}: cannot read (${(err as Error).message})`);
  }
}

/** Writes a file inside a checkpoint's temporary folder and fsyncs it (the folder is renamed later). */
function writeSyncedFile(file: string, text: string): void {
  const fd = openSync(file, "w");
  try {
    writeAll(fd, Buffer.from(text));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function fsyncFile(file: string): void {
  const fd = openSync(file, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A folder a save is writing: `.tmp-<name>-<pid>-<hex>` (older versions: `.tmp-<name>-<hex>`). */
const TMP_DIR_RE = /^\.tmp-(.+?)(?:-(\d+))?-([0-9a-f]{8})$/;
/** A checkpoint moved aside while its replacement is renamed in: `.old-<name>-<pid>-<hex>`. */
const OLD_DIR_RE = /^\.old-(.+)-(\d+)-([0-9a-f]{8})$/;
/** Temp files of writeFileAtomic: `.<file>.<pid>.<hex>.tmp`. */
const TMP_FILE_RE = /^\..+\.(\d+)\.([0-9a-f]{8})\.tmp$/;
/** Leftovers whose owner is unknown or may be alive elsewhere are swept only after this long. */
export const ORPHAN_MAX_AGE_MS = 6 * 60 * 60 * 1000;

export interface SweepReport {
  /** Temporary folders and files removed. */
  removed: string[];
  /** Checkpoints put back under their name after a replacement was interrupted. */
  restored: string[];
}

function ageMs(path: string, now: number): number {
  try {
    return now - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** Whether a leftover owned by `pid` (when known) may be removed: its process is gone, or it is old. */
function orphaned(path: string, pid: string | undefined, now: number): boolean {
  if (pid !== undefined && Number(pid) !== process.pid && !isPidAlive(Number(pid))) return true;
  return ageMs(path, now) > ORPHAN_MAX_AGE_MS;
}

function notFound(message: string): APIStatusError {
  return new APIStatusError(message, 404, { detail: message });
}

export class CheckpointStore {
  readonly root: string;

  constructor(root: string = defaultStoreDir(), options: { sweep?: boolean } = {}) {
    this.root = root;
    if (options.sweep ?? true) {
      try {
        this.sweep();
      } catch {
        // Sweeping is housekeeping: an unreadable corner of the store must not stop it opening.
      }
    }
  }

  /**
   * Cleans up after saves that were killed or failed: removes temporary folders and files whose
   * process is gone (or that are older than ORPHAN_MAX_AGE_MS) and `.trash-*` folders, and puts a
   * checkpoint moved aside by an interrupted replacement back under its name.
   */
  sweep(now = Date.now()): SweepReport {
    const report: SweepReport = { removed: [], restored: [] };
    if (!existsSync(this.root)) return report;
    for (const run of readdirSync(this.root)) {
      const runDir = join(this.root, run);
      if (!statSync(runDir).isDirectory()) continue;
      for (const entry of readdirSync(runDir)) {
        const m = TMP_FILE_RE.exec(entry);
        const path = join(runDir, entry);
        if (m && orphaned(path, m[1], now)) {
          rmSync(path, { force: true });
          report.removed.push(path);
        }
      }
      for (const kind of ["weights", "sampler_weights"] as const) {
        const parent = join(runDir, kind);
        if (existsSync(parent)) this.sweepKind(parent, now, report);
      }
    }
    return report;
  }

  private sweepKind(parent: string, now: number, report: SweepReport): void {
    for (const entry of readdirSync(parent)) {
      if (!entry.startsWith(".")) continue;
      const path = join(parent, entry);
      const tmp = TMP_DIR_RE.exec(entry);
      if (entry.startsWith(".trash-") || (tmp && orphaned(path, tmp[2], now))) {
        rmSync(path, { recursive: true, force: true });
        report.removed.push(path);
        continue;
      }
      const old = OLD_DIR_RE.exec(entry);
      if (old && orphaned(path, old[2], now)) {
        if (this.restoreMovedAside(parent, old[1]!, path)) report.restored.push(join(parent, old[1]!));
        else report.removed.push(path);
      }
    }
  }

  /**
   * A replacement moves the old checkpoint aside, renames the new one in, then removes the old:
   * killed between the two renames, the name is empty and the old one is put back (the save never
   * completed, so the checkpoint it was to replace still stands). Otherwise the old one is removed.
   */
  private restoreMovedAside(parent: string, name: string, aside: string): boolean {
    const dir = join(parent, name);
    if (!existsSync(dir) && existsSync(join(aside, META_FILE))) {
      renameSync(aside, dir);
      fsyncDir(parent);
      return true;
    }
    rmSync(aside, { recursive: true, force: true });
    return false;
  }

  /** Puts back a checkpoint named `name` whose replacement was interrupted by a killed process. */
  private recoverInterrupted(parent: string, name: string): void {
    if (!existsSync(parent)) return;
    for (const entry of readdirSync(parent)) {
      const old = OLD_DIR_RE.exec(entry);
      if (old && old[1] === name && orphaned(join(parent, entry), old[2], Date.now())) {
        this.restoreMovedAside(parent, name, join(parent, entry));
        return;
      }
    }
  }

  runDir(modelId: string): string {
    return join(this.root, encodeURIComponent(checkModelId(modelId)));
  }

  checkpointDir(modelId: string, kind: CheckpointKind, name: string): string {
    return join(this.runDir(modelId), kind, validateCheckpointName(name));
  }

  createRun(record: Omit<RunRecord, "created_at" | "last_request_time">): RunRecord {
    const now = new Date().toISOString();
    const full: RunRecord = { ...record, created_at: now, last_request_time: now };
    mkdirSync(this.runDir(record.model_id), { recursive: true });
    writeJsonAtomic(join(this.runDir(record.model_id), RUN_FILE), full, { context: `training run record of ${record.model_id}` });
    return full;
  }

  readRun(modelId: string): RunRecord {
    const file = join(this.runDir(modelId), RUN_FILE);
    if (!existsSync(file)) throw notFound(`training run ${JSON.stringify(modelId)} not found in ${this.root}`);
    return readJson<RunRecord>(file);
  }

  /** Updates the run's last_request_time (no-op for models without a run record). */
  touchRun(modelId: string): void {
    const file = join(this.runDir(modelId), RUN_FILE);
    if (!existsSync(file)) return;
    const rec = readJson<RunRecord>(file);
    rec.last_request_time = new Date().toISOString();
    writeJsonAtomic(file, rec, { context: `training run record of ${modelId}` });
  }

  /** True when a live (unexpired) checkpoint exists at that name. */
  exists(modelId: string, kind: CheckpointKind, name: string): boolean {
    const dir = this.checkpointDir(modelId, kind, name);
    if (!existsSync(join(dir, META_FILE))) return false;
    return !this.expireIfDue(dir);
  }

  /**
   * Saves a checkpoint and returns its tinker:// path. An existing training checkpoint of the same
   * name is a 409 unless `overwrite`; sampler checkpoints have no overwrite flag in the API, so a
   * repeated name replaces the old one.
   */
  save(
    modelId: string,
    kind: CheckpointKind,
    name: string,
    payload: CheckpointPayload,
    options: { overwrite?: boolean; ttlSeconds?: number } = {},
  ): { path: string; sizeBytes: number } {
    const finalDir = this.checkpointDir(modelId, kind, name);
    const path = formatTinkerPath({ modelId, kind, name });
    const allowReplace = kind === "sampler_weights" || options.overwrite === true;
    if (!allowReplace && this.exists(modelId, kind, name)) {
      const message = `checkpoint ${path} already exists; pick another name or pass overwrite: true`;
      throw new APIStatusError(message, 409, { detail: message, code: "ResourceAlreadyExists" });
    }
    if (options.ttlSeconds !== undefined && !(Number.isFinite(options.ttlSeconds) && options.ttlSeconds > 0)) {
      throw new InvalidArgumentError(`ttlSeconds must be a positive number of seconds, got ${options.ttlSeconds}`);
    }
    const parent = join(this.runDir(modelId), kind);
    const context = `saving checkpoint ${kind}/${name} (step ${payload.step})`;
    const tmp = join(parent, `.tmp-${name}-${process.pid}-${randomBytes(4).toString("hex")}`);
    try {
      mkdirSync(parent, { recursive: true });
      mkdirSync(tmp);
      this.writePayload(tmp, kind, payload);
      const now = new Date();
      const meta: CheckpointMeta = {
        format: "cookbook-checkpoint/1",
        model_id: modelId,
        kind,
        name,
        tinker_path: path,
        base_model: payload.baseModel,
        base_model_dir: payload.baseModelDir,
        is_lora: payload.lora !== null,
        lora: payload.lora,
        step: payload.step,
        time: now.toISOString(),
        has_optimizer: kind === "weights" && payload.optimizer !== undefined,
        expires_at: options.ttlSeconds !== undefined ? new Date(now.getTime() + options.ttlSeconds * 1000).toISOString() : null,
      };
      // Written last: a folder with checkpoint.json is complete.
      writeSyncedFile(join(tmp, META_FILE), JSON.stringify(meta, null, 2) + "\n");
      fsyncDir(tmp);
      this.moveIntoPlace(parent, name, tmp);
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      throw describeWriteError(err, finalDir, context);
    }
    try {
      this.touchRun(modelId);
    } catch {
      // last_request_time is bookkeeping; the checkpoint itself is saved.
    }
    return { path, sizeBytes: dirSize(finalDir) };
  }

  /**
   * Renames a complete folder to `name`. Node has no atomic exchange of two folders, so a
   * replacement moves the old one aside first and removes it only once the new one is in place; a
   * process killed between the two renames leaves the old one aside, and the store puts it back
   * under its name when opened or when the name is looked up (recoverInterrupted).
   */
  private moveIntoPlace(parent: string, name: string, tmp: string): void {
    const finalDir = join(parent, name);
    if (!existsSync(finalDir)) {
      renameSync(tmp, finalDir);
      fsyncDir(parent);
      return;
    }
    const aside = join(parent, `.old-${name}-${process.pid}-${randomBytes(4).toString("hex")}`);
    renameSync(finalDir, aside);
    try {
      renameSync(tmp, finalDir);
    } catch (err) {
      renameSync(aside, finalDir);
      throw err;
    }
    fsyncDir(parent);
    rmSync(aside, { recursive: true, force: true });
  }

  private writePayload(dir: string, kind: CheckpointKind, payload: CheckpointPayload): void {
    if (payload.lora !== null) {
      writeSafetensors(join(dir, ADAPTER_FILE), payload.tensors, { metadata: { format: "pt" } });
      writeSyncedFile(join(dir, ADAPTER_CONFIG), JSON.stringify(peftAdapterConfig(payload.baseModel, payload.lora, payload.tensors.keys()), null, 2) + "\n");
    } else {
      if (payload.modelConfigJson === undefined) throw new Error("full-weight checkpoint needs the model's config.json");
      writeModelSafetensors(dir, payload.tensors);
      writeSyncedFile(join(dir, "config.json"), JSON.stringify(payload.modelConfigJson, null, 2) + "\n");
      if (payload.tokenizerDir !== undefined) {
        for (const f of TOKENIZER_FILES) {
          const src = join(payload.tokenizerDir, f);
          if (existsSync(src) && f !== "config.json") {
            copyFileSync(src, join(dir, f));
            fsyncFile(join(dir, f));
          }
        }
      }
    }
    if (kind === "weights" && payload.optimizer !== undefined) {
      const opt = new Map<string, TensorToWrite>();
      for (const [name, m] of payload.optimizer.m) opt.set(`exp_avg/${name}`, { shape: [m.length], data: m });
      for (const [name, v] of payload.optimizer.v) opt.set(`exp_avg_sq/${name}`, { shape: [v.length], data: v });
      writeSafetensors(join(dir, OPTIMIZER_FILE), opt, { metadata: { step: String(payload.optimizer.step) } });
    }
  }

  /** Deletes an expired checkpoint; returns whether it was expired. */
  private expireIfDue(dir: string): boolean {
    const metaFile = join(dir, META_FILE);
    if (!existsSync(metaFile)) return false;
    const meta = readJson<CheckpointMeta>(metaFile);
    if (meta.expires_at !== null && Date.parse(meta.expires_at) <= Date.now()) {
      // Out of the name first, so a kill part-way through never leaves half a checkpoint there.
      const trash = join(dir, "..", `.trash-${randomBytes(4).toString("hex")}`);
      renameSync(dir, trash);
      rmSync(trash, { recursive: true, force: true });
      return true;
    }
    return false;
  }

  /** The folder and metadata of a checkpoint, or a 404-like error that says where it looked. */
  locate(tinkerPath: string): { dir: string; meta: CheckpointMeta } {
    const p = parseTinkerPath(tinkerPath);
    const dir = this.checkpointDir(p.modelId, p.kind, p.name);
    if (!existsSync(dir)) this.recoverInterrupted(join(this.runDir(p.modelId), p.kind), p.name);
    if (!existsSync(join(dir, META_FILE)) || this.expireIfDue(dir)) {
      throw notFound(
        `checkpoint ${tinkerPath} not found (looked in ${dir}); list this run's checkpoints with the RestClient or \`ls ${this.runDir(p.modelId)}\``,
      );
    }
    return { dir, meta: readJson<CheckpointMeta>(join(dir, META_FILE)) };
  }

  load(tinkerPath: string, options: { optimizer: boolean }): LoadedCheckpoint {
    const { dir, meta } = this.locate(tinkerPath);
    let raw: Map<string, Tensor>;
    if (meta.is_lora) raw = readSafetensors(join(dir, ADAPTER_FILE));
    else raw = readModelSafetensors(dir);
    const tensors = new Map<string, Float32Array>();
    for (const [name, t] of raw) {
      if (!(t.data instanceof Float32Array)) throw new Error(`${dir}: tensor ${name} is ${t.dtype}; expected floating point`);
      tensors.set(name, t.data);
    }
    const out: LoadedCheckpoint = { meta, dir, tensors };
    if (options.optimizer) {
      const file = join(dir, OPTIMIZER_FILE);
      if (meta.kind !== "weights" || !meta.has_optimizer || !existsSync(file)) {
        throw new InvalidArgumentError(
          `checkpoint ${tinkerPath} has no optimizer state (${meta.kind === "sampler_weights" ? "sampler weights never do; use a weights/ checkpoint from saveState" : `${file} is missing`}); load it without the optimizer instead`,
        );
      }
      const opt = readSafetensors(file);
      const m = new Map<string, Float32Array>();
      const v = new Map<string, Float32Array>();
      for (const [key, t] of opt) {
        const slash = key.indexOf("/");
        const group = key.slice(0, slash);
        const name = key.slice(slash + 1);
        if (!(t.data instanceof Float32Array)) throw new Error(`${file}: tensor ${key} is ${t.dtype}; expected F32`);
        if (group === "exp_avg") m.set(name, t.data);
        else if (group === "exp_avg_sq") v.set(name, t.data);
      }
      const step = readOptimizerStep(file);
      out.optimizer = { step, m, v };
    }
    return out;
  }

  weightsInfo(tinkerPath: string): WeightsInfo {
    const { meta } = this.locate(tinkerPath);
    return {
      base_model: meta.base_model,
      is_lora: meta.is_lora,
      lora_rank: meta.lora?.rank ?? null,
      train_unembed: meta.lora?.trainUnembed ?? null,
      train_mlp: meta.lora?.trainMlp ?? null,
      train_attn: meta.lora?.trainAttn ?? null,
    };
  }

  private checkpointRecord(dir: string, meta: CheckpointMeta): Checkpoint {
    return {
      checkpoint_id: `${meta.kind}/${meta.name}`,
      checkpoint_type: meta.kind === "weights" ? "training" : "sampler",
      time: meta.time,
      tinker_path: meta.tinker_path,
      size_bytes: dirSize(dir),
      public: false,
      expires_at: meta.expires_at,
    };
  }

  private checkpointsOf(modelId: string): Checkpoint[] {
    const out: Checkpoint[] = [];
    for (const kind of ["weights", "sampler_weights"] as const) {
      const parent = join(this.runDir(modelId), kind);
      if (!existsSync(parent)) continue;
      for (const name of readdirSync(parent).sort()) {
        if (name.startsWith(".")) continue;
        const dir = join(parent, name);
        if (!existsSync(join(dir, META_FILE)) || this.expireIfDue(dir)) continue;
        out.push(this.checkpointRecord(dir, readJson<CheckpointMeta>(join(dir, META_FILE))));
      }
    }
    return out.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  }

  listCheckpoints(modelId: string): CheckpointsList {
    this.readRun(modelId);
    const checkpoints = this.checkpointsOf(modelId);
    return { checkpoints, cursor: { offset: 0, limit: checkpoints.length, total_count: checkpoints.length } };
  }

  getRun(modelId: string): TrainingRun {
    const rec = this.readRun(modelId);
    const cps = this.checkpointsOf(modelId);
    const last = (type: "training" | "sampler"): Checkpoint | null => cps.filter((c) => c.checkpoint_type === type).at(-1) ?? null;
    return {
      training_run_id: rec.model_id,
      base_model: rec.base_model,
      model_owner: "local",
      is_lora: rec.is_lora,
      corrupted: false,
      lora_rank: rec.lora?.rank ?? null,
      last_request_time: rec.last_request_time,
      last_checkpoint: last("training"),
      last_sampler_checkpoint: last("sampler"),
      user_metadata: rec.user_metadata ?? null,
    };
  }

  /** Newest first. */
  listRuns(options: { limit?: number; offset?: number } = {}): TrainingRunsList {
    const limit = options.limit ?? 20;
    const offset = options.offset ?? 0;
    const records: RunRecord[] = [];
    if (existsSync(this.root)) {
      for (const d of readdirSync(this.root)) {
        const file = join(this.root, d, RUN_FILE);
        if (existsSync(file)) records.push(readJson<RunRecord>(file));
      }
    }
    records.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.model_id < b.model_id ? 1 : -1));
    const page = records.slice(offset, offset + limit).map((r) => this.getRun(r.model_id));
    return { training_runs: page, cursor: { offset, limit, total_count: records.length } };
  }

  delete(tinkerPath: string): void {
    const { dir } = this.locate(tinkerPath);
    const trash = join(dir, "..", `.trash-${randomBytes(4).toString("hex")}`);
    renameSync(dir, trash);
    rmSync(trash, { recursive: true, force: true });
  }
}

function readOptimizerStep(file: string): number {
  const step = Number(readSafetensorsHeader(file).metadata.step);
  if (!Number.isInteger(step) || step < 0) throw new Error(`${file}: header metadata has no valid "step"`);
  return step;
}
