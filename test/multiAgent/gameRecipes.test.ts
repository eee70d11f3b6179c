// tic_tac_toe and twenty_questions end to end on the embedded engine with a small random model (the
// tiny-chat tokenizer): warm-up, then RL; the per-opponent evaluations land in metrics.jsonl at the
// eval steps and once more after the last step; the transcripts name each player; the warm-up is
// reused by a second run with the same settings; a self-play run refuses rollout retries.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { readMetrics } from "../../src/log/metrics.ts";
import { recipeSandbox, runRecipe } from "../recipes/helpers.ts";

const small = (modelDir: string, logDir: string) => [
  `model_name=${modelDir}`,
  `log_path=${logDir}`,
  "lora_rank=4",
  "behavior_if_log_dir_exists=delete",
  "warmup_steps=2",
  "warmup_batch_size=4",
];

test("tic_tac_toe: warm-up, self-play, and test/vs_<opponent>/ rates at every eval step and at the end", { timeout: 300_000 }, async () => {
  const s = recipeSandbox("ttt-recipe");
  try {
    const log = join(s.root, "ttt");
    const common = [...small(s.modelDir, log), "eval_every=2", "groups_per_batch=2", "test_games=4"];
    const args = [...common, "max_steps=3", "train_opponent=self_play", "group_size=2", `test_opponents=["random","minimax","base_model"]`];
    await runRecipe("tic_tac_toe", args);
    assert.ok(existsSync(join(`${log}-warmup`, "warmup.json")), "the warm-up ran and recorded its settings");
    const rows = readMetrics(log);
    const evalSteps = rows.filter((r) => r["test/vs_random/win_rate"] !== undefined).map((r) => r.step);
    assert.deepEqual(evalSteps, [0, 2, 3], "eval at steps 0 and 2, and after the last step");
    for (const r of rows.filter((x) => x["test/vs_minimax/win_or_draw"] !== undefined)) {
      for (const opp of ["random", "minimax", "base_model"]) {
        const win = r[`test/vs_${opp}/win_rate`] as number;
        const draw = r[`test/vs_${opp}/draw_rate`] as number;
        const loss = r[`test/vs_${opp}/loss_rate`] as number;
        assert.ok(Math.abs(win + draw + loss - 1) < 1e-9, `${opp}: rates sum to 1 (${win} ${draw} ${loss})`);
        assert.equal(r[`test/vs_${opp}/win_or_draw`], win + draw);
        assert.equal(r[`test/vs_${opp}/total_episodes`], 4);
        assert.ok((r[`test/vs_${opp}/illegal_rate`] as number) >= 0);
      }
      assert.equal(r["test/vs_minimax/win_rate"], 0, "nobody beats minimax");
    }
    const train = rows.filter((r) => r["env/all/total_episodes"] !== undefined);
    assert.equal(train.length, 3);
    // Self-play: both seats of 2 games per step, and every win is someone's loss.
    for (const r of train) {
      assert.equal(r["env/all/total_episodes"], 4);
      assert.ok(Math.abs((r["env/all/win_rate"] as number) - (r["env/all/loss_rate"] as number)) < 1e-9);
    }
    const summaries = readFileSync(join(log, "iteration_000000", "train_rollout_summaries.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { steps: { messages?: { role: string }[] }[] });
    const roles = new Set(summaries.flatMap((r) => r.steps.flatMap((st) => (st.messages ?? []).map((m) => m.role))));
    // A random model mostly loses on X's first move (O then never speaks), so X's side is what is sure to be there.
    assert.ok(roles.has("assistant (X)") && roles.has("user (O)"), `players named in transcripts: ${[...roles].join(", ")}`);
    assert.ok(existsSync(join(log, "iteration_000003", "eval_vs_random.html")), "the end-of-run evaluation leaves its transcripts");

    // Same warm-up settings: it is reused (its directory is not rewritten). This run trains against
    // the default fixed opponent (random): group_size games per group, the policy's seat alternating.
    const marker = readFileSync(join(`${log}-warmup`, "metrics.jsonl"), "utf8");
    await runRecipe("tic_tac_toe", [...common, "max_steps=1", "group_size=4", 'test_opponents=["random"]']);
    assert.equal(readFileSync(join(`${log}-warmup`, "metrics.jsonl"), "utf8"), marker);
    const vsRandom = readMetrics(log).filter((r) => r["env/all/total_episodes"] !== undefined);
    assert.equal(vsRandom.length, 1);
    assert.equal(vsRandom[0]!["env/all/total_episodes"], 8, "2 groups of 4 games");
    assert.equal(vsRandom[0]!["env/all/opponent_illegal_rate"], 0, "the random opponent only plays legal squares");

    await assert.rejects(runRecipe("tic_tac_toe", [...args, "rollout_error_tolerance=true"]), /self-play seat cannot be replayed/);
  } finally {
    s.cleanup();
  }
});

test("twenty_questions: warm-up, RL against the oracle, held-out games evaluated at the end", { timeout: 300_000 }, async () => {
  const s = recipeSandbox("tq-recipe");
  try {
    const log = join(s.root, "tq");
    await runRecipe("twenty_questions", [
      ...small(s.modelDir, log),
      "max_steps=2",
      "eval_every=5",
      "groups_per_batch=2",
      "group_size=2",
      "test_groups=2",
      "nouns=8",
      "attributes=3",
      "max_questions=4",
    ]);
    const rows = readMetrics(log);
    const train = rows.filter((r) => r["env/all/total_episodes"] !== undefined);
    assert.equal(train.length, 2);
    for (const r of train) {
      const reward = r["env/all/reward/total"] as number;
      assert.ok(reward >= 0 && reward <= 1, `reward ${reward}`);
    }
    assert.deepEqual(
      rows.filter((r) => r["test/env/all/reward/total"] !== undefined).map((r) => r.step),
      [0, 2],
    );
    const summary = JSON.parse(readFileSync(join(log, "iteration_000001", "train_rollout_summaries.jsonl"), "utf8").split("\n")[0]) as { prompt: string };
    assert.match(summary.prompt, /Twenty questions\. The secret is one of: /);

    // A frozen model answers instead of the oracle: the game still runs to its end.
    const withModel = join(s.root, "tq-model");
    await runRecipe("twenty_questions", [
      ...small(s.modelDir, withModel),
      `answerer_model=${s.modelDir}`,
      "max_steps=1",
      "groups_per_batch=1",
      "group_size=2",
      "test_groups=0",
      "nouns=8",
      "attributes=3",
      "max_questions=3",
    ]);
    const rows2 = readMetrics(withModel);
    assert.equal(rows2.length, 1);
    assert.equal(rows2[0]["env/all/total_episodes"], 2);
  } finally {
    s.cleanup();
  }
});
