// Comparison rows: the cookbook's JSONL shape, the hub datasets' parquet shapes (hh-rlhf,
// HelpSteer3, UltraFeedback) read from local files and from the HF cache layout, errors naming
// file and line, and DPO datums built from comparisons.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { readComparisonFile, comparisonToJsonLine, parseComparisonLine } from "../../src/preference/comparisonFile.ts";
import { loadComparisons, readParquetComparisons, type ComparisonSourceConfig } from "../../src/preference/datasets.ts";
import { parseHhTranscript } from "../../src/preference/hubRows.ts";
import { chosenAndRejected, swapLabeled, type LabeledComparison } from "../../src/preference/types.ts";
import { comparisonToDpoPair, dpoDataset } from "../../src/preference/dpoData.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { tensorDataToNumbers } from "../../src/tinker/tensorData.ts";

function temp(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "prefs-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function writeParquet(path: string, columns: Record<string, { data: unknown[]; type?: "STRING" | "INT32" }>): void {
  const buf = parquetWriteBuffer({ columnData: Object.entries(columns).map(([name, c]) => ({ name, data: c.data, ...(c.type ? { type: c.type } : {}) })) });
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, new Uint8Array(buf));
}

const config = (dataset: string, extra: Partial<ComparisonSourceConfig> = {}): ComparisonSourceConfig => ({
  dataset,
  dataset_config: null,
  test_dataset: null,
  test_size: 2,
  max_train: null,
  shuffle_seed: 0,
  ...extra,
});

const sample: LabeledComparison = {
  comparison: {
    promptConversation: [{ role: "user", content: "Hi" }],
    completionA: [{ role: "assistant", content: "Hello!" }],
    completionB: [{ role: "assistant", content: "Go away." }],
  },
  label: "A",
};

test("cookbook JSONL rows round-trip; swapping moves the label with its completion", () => {
  const line = comparisonToJsonLine(sample);
  assert.equal(
    line,
    '{"comparison":{"prompt_conversation":[{"role":"user","content":"Hi"}],"completion_A":[{"role":"assistant","content":"Hello!"}],"completion_B":[{"role":"assistant","content":"Go away."}]},"label":"A"}',
  );
  assert.deepEqual(parseComparisonLine(line, "x:1"), sample);
  const swapped = swapLabeled(sample);
  assert.equal(swapped.label, "B");
  assert.deepEqual(chosenAndRejected(swapped), chosenAndRejected(sample));
  assert.equal(chosenAndRejected({ ...sample, label: "Tie" }), null);
});

test("a malformed JSONL row names the file, line and key", () => {
  const t = temp();
  try {
    const file = join(t.dir, "pairs.jsonl");
    const bad = JSON.stringify({ comparison: { prompt_conversation: [], completion_A: [{ role: "assistant", content: "x" }], completion_B: [] }, label: "A" });
    writeFileSync(file, `${comparisonToJsonLine(sample)}\n\n${bad}\n`);
    assert.throws(
      () => readComparisonFile(file),
      (err: Error) => err.message.includes(`${file}:3`) && err.message.includes("comparison.completion_B"),
    );
    writeFileSync(file, `${comparisonToJsonLine({ ...sample, label: "Tie" })}\n{"comparison": {}, "label": "C"}\n`);
    assert.throws(() => readComparisonFile(file), new RegExp(`${file.replace(/[.\\/]/g, "\\$&")}:2: comparison\\.prompt_conversation`));
    writeFileSync(file, "{not json\n");
    assert.throws(() => readComparisonFile(file), /pairs\.jsonl:1: not valid JSON/);
  } finally {
    t.cleanup();
  }
});

test("hh-rlhf transcripts split into a shared prompt and two final replies", async () => {
  assert.deepEqual(parseHhTranscript("\n\nHuman: Hi there\n\nAssistant: Hello.\n\nHuman: Help?\n\nAssistant: Sure."), [
    { role: "user", content: "Hi there" },
    { role: "assistant", content: "Hello." },
    { role: "user", content: "Help?" },
    { role: "assistant", content: "Sure." },
  ]);
  const t = temp();
  try {
    const file = join(t.dir, "train.parquet");
    writeParquet(file, {
      chosen: {
        data: ["\n\nHuman: Q1\n\nAssistant: good", "\n\nHuman: Q2\n\nAssistant: a\n\nHuman: more\n\nAssistant: fine", "\n\nHuman: Q3\n\nAssistant: same"],
        type: "STRING",
      },
      rejected: {
        data: [
          "\n\nHuman: Q1\n\nAssistant: bad",
          "\n\nHuman: Q2\n\nAssistant: DIFFERENT\n\nHuman: more\n\nAssistant: worse",
          "\n\nHuman: Q3\n\nAssistant: same",
        ],
        type: "STRING",
      },
    });
    const rows = await readParquetComparisons([file]);
    // Row 2's histories differ and row 3's replies are equal: both skipped, like the cookbook.
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0], {
      comparison: {
        promptConversation: [{ role: "user", content: "Q1" }],
        completionA: [{ role: "assistant", content: "good" }],
        completionB: [{ role: "assistant", content: "bad" }],
      },
      label: "A",
    });
  } finally {
    t.cleanup();
  }
});

test("HelpSteer3 and UltraFeedback rows; unknown columns are named in the error", async () => {
  const t = temp();
  try {
    const hs = join(t.dir, "hs.parquet");
    writeParquet(hs, {
      context: {
        data: [
          JSON.stringify([{ role: "user", content: "Pick" }]),
          JSON.stringify([{ role: "user", content: "Tie?" }]),
          JSON.stringify([{ role: "user", content: "Other" }]),
        ],
        type: "STRING",
      },
      response1: { data: ["one", "x", "first"], type: "STRING" },
      response2: { data: ["two", "y", "second"], type: "STRING" },
      overall_preference: { data: [2, 0, -3], type: "INT32" },
    });
    const hsRows = await readParquetComparisons([hs]);
    assert.deepEqual(
      hsRows.map((r) => [r.comparison.promptConversation[0]!.content, r.label]),
      [
        ["Pick", "B"],
        ["Other", "A"],
      ],
    );
    const uf = join(t.dir, "uf.parquet");
    writeParquet(uf, {
      instruction: { data: ["Say hi"], type: "STRING" },
      chosen_response: { data: ["hi"], type: "STRING" },
      rejected_response: { data: ["no"], type: "STRING" },
    });
    assert.deepEqual(await readParquetComparisons([uf]), [
      {
        comparison: {
          promptConversation: [{ role: "user", content: "Say hi" }],
          completionA: [{ role: "assistant", content: "hi" }],
          completionB: [{ role: "assistant", content: "no" }],
        },
        label: "A",
      },
    ]);
    const odd = join(t.dir, "odd.parquet");
    writeParquet(odd, { question: { data: ["q"], type: "STRING" } });
    await assert.rejects(readParquetComparisons([odd]), /odd\.parquet: columns \[question\] match no known comparison format/);
    const badPref = join(t.dir, "badpref.parquet");
    writeParquet(badPref, {
      context: { data: ["[]"], type: "STRING" },
      response1: { data: ["a"], type: "STRING" },
      response2: { data: ["b"], type: "STRING" },
      overall_preference: { data: ["lots"], type: "STRING" },
    });
    await assert.rejects(readParquetComparisons([badPref]), /badpref\.parquet row 0: column "overall_preference"/);
  } finally {
    t.cleanup();
  }
});

test("hub presets load from the HF cache layout offline (hhh: train and test splits; helpsteer3: its config)", async () => {
  const t = temp();
  try {
    const hhh = join(t.dir, "hub", "datasets--Anthropic--hh-rlhf");
    mkdirSync(join(hhh, "refs"), { recursive: true });
    writeFileSync(join(hhh, "refs", "main"), "sha1");
    const hh = (n: number, tag: string) => ({
      chosen: { data: Array.from({ length: n }, (_, i) => `\n\nHuman: ${tag}${i}\n\nAssistant: yes`), type: "STRING" as const },
      rejected: { data: Array.from({ length: n }, (_, i) => `\n\nHuman: ${tag}${i}\n\nAssistant: no`), type: "STRING" as const },
    });
    writeParquet(join(hhh, "snapshots", "sha1", "data", "train-00000-of-00001.parquet"), hh(5, "train"));
    writeParquet(join(hhh, "snapshots", "sha1", "data", "test-00000-of-00001.parquet"), hh(3, "test"));
    const hub = { env: { HF_HUB_CACHE: join(t.dir, "hub"), HF_HUB_OFFLINE: "1" } };
    const splits = await loadComparisons(config("hhh", { test_size: 10 }), hub);
    assert.equal(splits.train.length, 5);
    assert.equal(splits.test!.length, 3);
    assert.ok(splits.test!.every((c) => String(c.comparison.promptConversation[0]!.content).startsWith("test")));
    const hs = join(t.dir, "hub", "datasets--nvidia--HelpSteer3");
    mkdirSync(join(hs, "refs"), { recursive: true });
    writeFileSync(join(hs, "refs", "main"), "sha2");
    const hsCols = (n: number) => ({
      context: { data: Array.from({ length: n }, () => JSON.stringify([{ role: "user", content: "q" }])), type: "STRING" as const },
      response1: { data: Array.from({ length: n }, () => "a"), type: "STRING" as const },
      response2: { data: Array.from({ length: n }, () => "b"), type: "STRING" as const },
      overall_preference: { data: Array.from({ length: n }, () => 1), type: "INT32" as const },
    });
    writeParquet(join(hs, "snapshots", "sha2", "preference", "train-00000-of-00001.parquet"), hsCols(4));
    writeParquet(join(hs, "snapshots", "sha2", "preference", "validation-00000-of-00001.parquet"), hsCols(2));
    const hsSplits = await loadComparisons(config("helpsteer3"), hub);
    assert.deepEqual([hsSplits.train.length, hsSplits.test!.length], [4, 2]);
    await assert.rejects(loadComparisons(config("ultrafeedback"), hub), /argilla\/ultrafeedback-binarized-preferences split train not found/);
  } finally {
    t.cleanup();
  }
});

test("a JSONL source without a test file holds out test_size comparisons; the shipped sets load", async () => {
  const t = temp();
  try {
    const file = join(t.dir, "p.jsonl");
    writeFileSync(
      file,
      Array.from({ length: 10 }, (_, i) =>
        comparisonToJsonLine({ ...sample, comparison: { ...sample.comparison, promptConversation: [{ role: "user", content: `q${i}` }] } }),
      ).join("\n"),
    );
    const s = await loadComparisons(config(file, { test_size: 3 }));
    assert.deepEqual([s.train.length, s.test!.length], [7, 3]);
    const seen = new Set([...s.train, ...s.test!].map((c) => c.comparison.promptConversation[0]!.content));
    assert.equal(seen.size, 10, "train and test are disjoint and cover the file");
    const shipped = await loadComparisons(config("pirate", { test_size: 50, max_train: 100 }));
    assert.deepEqual([shipped.train.length, shipped.test!.length], [100, 50]);
  } finally {
    t.cleanup();
  }
});

test("DPO pairs: chosen then rejected, token-sum weights on the completion only", async () => {
  const tokenizer = await getTokenizer("tiny-chat");
  const renderer = getRenderer("role_colon", tokenizer);
  const [chosen, rejected] = comparisonToDpoPair(swapLabeled(sample), renderer, null)!;
  const text = (d: typeof chosen, weighted: boolean) => {
    const targets = tensorDataToNumbers(d.loss_fn_inputs["target_tokens"]!);
    const w = tensorDataToNumbers(d.loss_fn_inputs["weights"]!);
    return tokenizer.decode(targets.filter((_, i) => w[i]! > 0 === weighted));
  };
  assert.equal(text(chosen, true), " Hello!\n\nUser:");
  assert.equal(text(rejected, true), " Go away.\n\nUser:");
  const w = tensorDataToNumbers(chosen.loss_fn_inputs["weights"]!);
  assert.ok(
    w.every((x) => x === 0 || x === 1),
    "weights are not normalised (token sums)",
  );
  assert.equal(comparisonToDpoPair({ ...sample, label: "Tie" }, renderer, null), null);
  const ds = dpoDataset([sample, { ...sample, label: "Tie" }, swapLabeled(sample), sample], renderer, 2, null);
  assert.equal(ds.length, 1, "ties dropped: 3 pairs make one batch of 2");
  assert.equal(ds.getBatch(0).length, 4);
});
