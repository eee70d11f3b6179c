// Supervised mixtures: two conversation files mixed by weight train through chat_sl with the loss
// of each source logged, the per-source losses add up to the batch's loss, and the held-out rows
// are scored per source too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readMetrics } from "../../src/log/metrics.ts";
import { InterleavedChatDatasetBuilder, sourceName } from "../../src/supervised/mixture.ts";
import { ChatMixtureSourceSchema } from "../../src/supervised/mixture.ts";
import { recipeSandbox, REPO, runRecipe } from "../recipes/helpers.ts";

function head(fixture: string, lines: number, to: string): string {
  writeFileSync(
    to,
    readFileSync(join(REPO, "fixtures", "data", fixture), "utf8")
      .split("\n")
      .slice(0, lines)
      .join("\n") + "\n",
  );
  return to;
}

test("chat_sl on a 3:1 mixture of two files logs each source's loss, sequences and tokens, and each source's held-out NLL", { timeout: 120_000 }, async () => {
  const s = recipeSandbox("sl-mixture");
  try {
    const persona = head("persona_train.jsonl", 200, join(s.root, "persona.jsonl"));
    const sums = head("arithmetic_chats_train.jsonl", 200, join(s.root, "sums.jsonl"));
    const logDir = join(s.root, "run");
    await runRecipe("chat_sl", [
      `model_name=${s.modelDir}`,
      `log_path=${logDir}`,
      `mixture=[{"dataset":"${persona}","weight":3},{"dataset":"${sums}","weight":1}]`,
      "batch_size=16",
      "max_steps=5",
      "lora_rank=4",
      "test_size=24",
      "eval_every=5",
      "save_every=0",
      "max_length=256",
      "behavior_if_log_dir_exists=delete",
    ]);
    const rows = readMetrics(logDir).filter((r) => "train_mean_nll" in r);
    assert.equal(rows.length, 5);
    let persona_n = 0;
    let total = 0;
    for (const row of rows) {
      const r = row as Record<string, number>;
      const names = ["persona", "sums"].filter((n) => `source/${n}/train_mean_nll` in r);
      assert.ok(names.length >= 1);
      assert.equal(
        names.reduce((n, name) => n + r[`source/${name}/num_sequences`]!, 0),
        16,
      );
      const tokens = names.reduce((n, name) => n + r[`source/${name}/num_loss_tokens`]!, 0);
      assert.equal(tokens, r["num_loss_tokens"]);
      const pooled = names.reduce((n, name) => n + r[`source/${name}/train_mean_nll`]! * r[`source/${name}/num_loss_tokens`]!, 0) / tokens;
      assert.ok(Math.abs(pooled - r["train_mean_nll"]!) < 1e-6 * Math.max(1, r["train_mean_nll"]!), `step ${row.step}: ${pooled} vs ${r["train_mean_nll"]}`);
      persona_n += r["source/persona/num_sequences"] ?? 0;
      total += 16;
    }
    // The final evaluation: the held-out rows of each source scored apart, the pooled NLL between them.
    const evalRow = readMetrics(logDir).find((r) => "test/nll" in r) as Record<string, number> | undefined;
    assert.ok(evalRow, "a test/nll row");
    const perSource = ["persona", "sums"].map((n) => evalRow[`source/${n}/test_nll`]);
    assert.ok(
      perSource.every((v) => v !== undefined && Number.isFinite(v) && v > 0),
      JSON.stringify(evalRow),
    );
    const [lo, hi] = [Math.min(...(perSource as number[])), Math.max(...(perSource as number[]))];
    assert.ok(lo < hi && evalRow["test/nll"]! > lo && evalRow["test/nll"]! < hi, JSON.stringify(evalRow));
    const share = persona_n / total;
    assert.ok(share > 0.6 && share < 0.9, `persona share ${share} for weight 3:1`);
  } finally {
    s.cleanup();
  }
});

test("a mixture source's name is its file's stem unless named; two sources of one name are refused", () => {
  const parse = (v: unknown) => ChatMixtureSourceSchema.parse(v);
  assert.equal(sourceName(parse({ dataset: "/data/a b.jsonl" })), "a_b");
  assert.equal(sourceName(parse({ dataset: "HuggingFaceH4/no_robots" })), "no_robots");
  assert.equal(sourceName(parse({ dataset: "x.jsonl", name: "mine" })), "mine");
  assert.throws(
    () =>
      new InterleavedChatDatasetBuilder({
        common: { model_name_for_tokenizer: "tiny-chat", renderer_name: "role_colon", batch_size: 1 },
        sources: [parse({ dataset: "/x/a.jsonl" }), parse({ dataset: "/y/a.jsonl" })],
        stoppingStrategy: "all_exhausted",
        testSize: 0,
        shuffleSeed: 0,
      }),
    /same name/,
  );
});
