// Small run directories for TUI tests: a supervised run and an RL run with iteration dirs,
// transcripts, checkpoints, logs.log and a finished run.json.
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";

export function tempRoot(prefix = "cookbook-tui-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

function manifest(recipe: string, status: string, pid = 999_999): object {
  const t = new Date(Date.now() - 60_000).toISOString();
  return { recipe, argv: ["max_steps=20"], pid, host: hostname(), started_at: t, engine: "embedded", status, heartbeat_at: t, ended_at: t };
}

function writeJsonl(path: string, rows: readonly object[]): void {
  writeFileSync(path, rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
}

export function makeSlRun(root: string, name = "sl-run", steps = 30): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ model_name: "tiny-chat", num_epochs: 1, learning_rate: 1e-3 }));
  writeFileSync(join(dir, "run.json"), JSON.stringify(manifest("sl_basic", "completed")));
  const rows = Array.from({ length: steps }, (_, i) => ({
    step: i,
    train_mean_nll: 3 * Math.exp(-i / 10) + 0.5,
    learning_rate: 1e-3 * (1 - i / steps),
    progress: (i + 1) / steps,
    ...(i % 10 === 9 ? { "test/nll": 2.5 * Math.exp(-i / 12) + 0.6 } : {}),
    "time/total": 0.5,
    "time/forward_backward": 0.3,
    "time/optim_step": 0.1,
    "time/save_checkpoint:total": 0.05,
    "time/save_checkpoint:count": 1,
  }));
  writeJsonl(join(dir, "metrics.jsonl"), rows);
  writeJsonl(join(dir, "checkpoints.jsonl"), [
    { name: "000010", batch: 10, epoch: 0, state_path: "tinker://sl/weights/000010", sampler_path: "tinker://sl/sampler_weights/000010" },
    { name: "final", batch: steps, epoch: 1, final: true, state_path: "tinker://sl/weights/final", sampler_path: "tinker://sl/sampler_weights/final" },
  ]);
  writeFileSync(join(dir, "logs.log"), "2026-01-01T00:00:00Z [INFO] command: cookbook run sl_basic\n2026-01-01T00:00:01Z [INFO] step 29 done\n");
  writeJsonl(join(dir, "train_examples.jsonl"), [
    {
      step: 0,
      segments: [
        { text: "User: hi ", weight: 0 },
        { text: "Assistant: hello", weight: 1 },
      ],
    },
  ]);
  return dir;
}

export function makeRlRun(root: string, name = "rl-run", iterations = 3): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ model_name: "tiny-chat", loss_fn: "importance_sampling", group_size: 4 }));
  writeFileSync(join(dir, "run.json"), JSON.stringify(manifest("rl_basic", "stopped")));
  const rows = Array.from({ length: iterations }, (_, i) => ({
    step: i,
    "env/all/reward/total": 0.2 + 0.2 * i,
    "optim/kl_sample_train_v1": 0.01 * (i + 1),
    "optim/entropy": 1.5 - 0.1 * i,
    "env/all/ac_tokens_per_turn": 12 + i,
    "progress/done_frac": (i + 1) / 10,
    "time/total": 2,
    "time/sampling": 1.2,
  }));
  writeJsonl(join(dir, "metrics.jsonl"), rows);
  for (let it = 0; it < iterations; it++) {
    const idir = join(dir, `iteration_${String(it).padStart(6, "0")}`);
    mkdirSync(idir, { recursive: true });
    const recs = [];
    for (let g = 0; g < 2; g++) {
      for (let t = 0; t < 4; t++) {
        const reward = (g + t) % 3 === 0 ? 1 : t * 0.25;
        recs.push({
          schema_version: 1,
          split: "train",
          iteration: it,
          group_idx: g,
          traj_idx: t,
          tags: [g === 0 ? "addition" : "chat"],
          sampling_client_step: it,
          total_reward: reward,
          final_reward: reward,
          trajectory_metrics: { correct: reward === 1 ? 1 : 0 },
          final_ob_len: 20,
          steps: [{ step_idx: 0, ob_len: 10, ac_len: 5, reward, episode_done: true, metrics: { format: 1 }, logs: {} }],
          prompt: `user: What is ${g}+${t}?`,
          response: `The answer is ${g + t} (traj ${t})`,
          stop_reason: "stop",
        });
      }
    }
    writeJsonl(join(idir, "train_rollout_summaries.jsonl"), recs);
  }
  writeJsonl(join(dir, "checkpoints.jsonl"), [
    { name: "000002", batch: 2, state_path: "tinker://rl/weights/000002", sampler_path: "tinker://rl/sampler_weights/000002" },
  ]);
  writeFileSync(join(dir, "logs.log"), "[INFO] rl iteration 2\n");
  return dir;
}

export function appendMetrics(dir: string, rows: readonly object[]): void {
  appendFileSync(join(dir, "metrics.jsonl"), rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
}
