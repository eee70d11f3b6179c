// A sampler of the weights a run starts from that stays put while the run trains: DPO's reference
// and SDFT's teacher. A sampler checkpoint of the model being trained is not enough: SkyRL tx
// samples a saved sampler of a model still in training with that model's current weights, so such
// a "reference" would move with the policy (docs/remote.md#skyrl-tx-on-your-own-gpus). Instead:
// - a run that starts from the base model uses the base model itself (a fresh LoRA adds exactly
//   zero, so the policy starts equal to it);
// - a run that starts from load_checkpoint_path loads those weights a second time into a model that
//   never trains and saves its sampler weights.
// The choice is kept in every checkpoint record, so a resumed run compares against the same weights.
import type { CheckpointRecord } from "../runs/checkpoints.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import type { TrainingRunConfig } from "./config.ts";
import type { TrainingContext } from "./run.ts";

export interface StartingWeights {
  sampler: SamplingClient;
  /** Merged into every checkpoint record of the run (`<key>_sampler_path` or `<key>_base_model`). */
  record: Record<string, string>;
  /** For the log: what the sampler reads. */
  description: string;
}

/**
 * The starting weights as a sampler, read back from `resume` when the run resumes. `key` names
 * them in the checkpoint records ("reference", "teacher").
 */
export async function frozenStartingWeights(
  run: Pick<TrainingContext, "serviceClient" | "recipeName">,
  config: Pick<TrainingRunConfig, "model_name" | "load_checkpoint_path">,
  key: string,
  resume: CheckpointRecord | undefined,
): Promise<StartingWeights> {
  const pathKey = `${key}_sampler_path`;
  const baseKey = `${key}_base_model`;
  const service = run.serviceClient;
  const resumedPath = resume?.[pathKey];
  if (typeof resumedPath === "string") {
    return { sampler: await service.createSamplingClient({ modelPath: resumedPath }), record: { [pathKey]: resumedPath }, description: resumedPath };
  }
  const resumedBase = resume?.[baseKey];
  if (typeof resumedBase === "string" || config.load_checkpoint_path === null) {
    const baseModel = typeof resumedBase === "string" ? resumedBase : config.model_name;
    return { sampler: await service.createSamplingClient({ baseModel }), record: { [baseKey]: baseModel }, description: `the base model ${baseModel}` };
  }
  // A copy of the loaded weights that never trains, so its sampler weights stay the loaded ones.
  const frozen = await service.createTrainingClientFromState(config.load_checkpoint_path, { userMetadata: { recipe_name: run.recipeName, role: key } });
  const path = (await (await frozen.saveWeightsForSampler(key)).result()).path;
  return {
    sampler: await service.createSamplingClient({ modelPath: path }),
    record: { [pathKey]: path },
    description: `${config.load_checkpoint_path} (frozen copy ${path})`,
  };
}
