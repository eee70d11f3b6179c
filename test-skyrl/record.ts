// Records what a running SkyRL tx answers to short sl_basic and rl_basic runs, for the replay test
// (test/tinker/http/skyrlReplay.test.ts) that checks in CI, without SkyRL, that our client still
// accepts SkyRL's actual answers. It starts nothing: point SKYRL_TX_URL at a server started as
// docs/remote.md describes, then
//   SKYRL_TX_URL=http://127.0.0.1:8000 node --import tsx test-skyrl/record.ts [sl_basic|rl_basic ...]
// Writes fixtures/skyrl/<recipe>.jsonl (the exchanges, bodies as sent, no headers) and
// fixtures/skyrl/<recipe>.run.json (the arguments, the served model, the run's metrics and
// checkpoint records, which the replay must reproduce).
import { mkdirSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileAtomic } from "../src/files/durable.ts";
import { startProxy } from "../test/tinker/http/proxy.ts";
import { toRecorded } from "../test/tinker/http/recording.ts";
import { REPO, tempDir } from "../test-e2e/faults/helpers.ts";
import { checkpointsOf, cookbook, metricsOf, ok, servedModel, skyrlUrl } from "./skyrl.ts";

/** Short runs: a few steps, a periodic and a final checkpoint (sl), an ephemeral sampler per step (rl), the base model as reference (dpo). */
export const RECORDED_RUNS: Record<string, string[]> = {
  sl_basic: ["max_steps=3", "batch_size=2", "save_every=2", "eval_every=0", "test_size=0", "lora_rank=4", "max_length=128", "seed=0"],
  rl_basic: ["max_steps=2", "group_size=4", "groups_per_batch=2", "save_every=1", "lora_rank=4", "max_tokens=8", "seed=0"],
  dpo: ["max_steps=3", "batch_size=4", "save_every=2", "eval_every=0", "test_size=0", "lora_rank=8", "max_length=128", "learning_rate=1e-3", "seed=0"],
};

export const FIXTURE_DIR = join(REPO, "fixtures", "skyrl");

async function record(recipe: string): Promise<void> {
  const url = skyrlUrl();
  const model = await servedModel(url);
  const proxy = await startProxy(url);
  const root = tempDir("skyrl-record-");
  const logDir = join(root, recipe);
  const args = [...RECORDED_RUNS[recipe]!, `model_name=${model}`];
  try {
    ok(
      await cookbook(["run", recipe, `base_url=${proxy.url}`, `log_path=${logDir}`, "behavior_if_log_dir_exists=delete", ...args], {
        COOKBOOK_HOME: join(root, "home"),
      }),
      `cookbook run ${recipe}`,
    );
  } finally {
    await proxy.close();
  }
  const exchanges = toRecorded(proxy.exchanges);
  mkdirSync(FIXTURE_DIR, { recursive: true });
  writeFileAtomic(join(FIXTURE_DIR, `${recipe}.jsonl`), exchanges.map((e) => `${JSON.stringify(e)}\n`).join(""), { context: `the ${recipe} recording` });
  const inRepo = relative(REPO, model);
  const run = {
    recipe,
    args,
    served_model: model,
    ...(!inRepo.startsWith("..") && !isAbsolute(inRepo) ? { served_model_in_repo: inRepo } : {}),
    recorded_at: new Date().toISOString(),
    metrics: metricsOf(logDir),
    checkpoints: checkpointsOf(logDir),
  };
  writeFileAtomic(join(FIXTURE_DIR, `${recipe}.run.json`), `${JSON.stringify(run, null, 2)}\n`, { context: `the ${recipe} run record` });
  console.log(`${recipe}: ${exchanges.length} exchanges, ${run.metrics.length} metrics rows, ${run.checkpoints.length} checkpoints → ${FIXTURE_DIR}`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const which = process.argv.slice(2);
  for (const recipe of which.length > 0 ? which : Object.keys(RECORDED_RUNS)) {
    if (RECORDED_RUNS[recipe] === undefined) throw new Error(`no recorded run is defined for ${recipe}; known: ${Object.keys(RECORDED_RUNS).join(", ")}`);
    await record(recipe);
  }
}
