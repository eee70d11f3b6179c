// Conversation datasets: splits, seeded shuffles, per-epoch order, batching, and the errors a bad
// file or config gives before training (with file and line).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { FromConversationFileBuilder, conversationDatasets, SupervisedDatasetFromRows, type Conversation } from "../../src/supervised/data.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { seededPermutation } from "../../src/data/shuffle.ts";
import type { Datum } from "../../src/tinker/types.ts";

const TOKENIZER_DIR = resolve(import.meta.dirname, "../../fixtures/models/tiny-chat");
const common = (o: Record<string, unknown> = {}) => ({
  model_name_for_tokenizer: TOKENIZER_DIR,
  renderer_name: "role_colon",
  batch_size: 4,
  max_length: null,
  ...o,
});

function chat(i: number): { messages: { role: string; content: string }[] } {
  return {
    messages: [
      { role: "user", content: `What is ${i} + 1?` },
      { role: "assistant", content: `${i + 1}` },
    ],
  };
}

function withFile(lines: string[], fn: (file: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "sl-data-"));
  const file = join(dir, "chats.jsonl");
  writeFileSync(file, lines.map((l) => `${l}\n`).join(""));
  return fn(file).finally(() => rmSync(dir, { recursive: true, force: true }));
}

/** The user question's number, to identify which conversation a datum came from. */
async function idOf(datum: Datum): Promise<number> {
  const tok = await getTokenizer(TOKENIZER_DIR);
  const tokens = datum.model_input.chunks.flatMap((c) => (c.type === "encoded_text" ? c.tokens : []));
  const m = /What is (\d+) \+ 1\?/.exec(tok.decode(tokens));
  assert.ok(m, "datum decodes to one of the test chats");
  return Number(m[1]);
}

async function ids(batch: Datum[]): Promise<number[]> {
  return Promise.all(batch.map(idOf));
}

test("seeded permutations are deterministic, complete, and differ between seeds", () => {
  const a = seededPermutation(50, 3);
  assert.deepEqual(a, seededPermutation(50, 3));
  assert.deepEqual(
    [...a].sort((x, y) => x - y),
    Array.from({ length: 50 }, (_, i) => i),
  );
  assert.notDeepEqual(a, seededPermutation(50, 4));
});

test("JSONL builder: test split, batches, and epoch reshuffles cover each training example exactly once", async () => {
  await withFile(
    Array.from({ length: 22 }, (_, i) => JSON.stringify(chat(i))),
    async (file) => {
      const { train, test: held } = await new FromConversationFileBuilder({ common: common(), filePath: file, testSize: 5, shuffleSeed: 7 }).build();
      assert.ok(held !== null);
      assert.equal(held.length, 1, "the test split is one batch");
      const testIds = await ids(held.getBatch(0));
      assert.equal(testIds.length, 5);
      assert.equal(train.length, Math.floor(17 / 4));
      const epochIds = async (seed: number): Promise<number[]> => {
        train.setEpoch(seed);
        const out: number[] = [];
        for (let b = 0; b < train.length; b++) out.push(...(await ids(train.getBatch(b))));
        return out;
      };
      const e0 = await epochIds(0);
      const e1 = await epochIds(1);
      assert.equal(e0.length, 16);
      assert.equal(new Set(e0).size, 16);
      assert.ok(
        e0.every((id) => !testIds.includes(id)),
        "test conversations never appear in training",
      );
      assert.notDeepEqual(e0, e1, "each epoch has its own order");
      assert.deepEqual(await epochIds(0), e0, "the same epoch seed gives the same order");
      // The split itself depends only on shuffle_seed.
      const again = await new FromConversationFileBuilder({ common: common(), filePath: file, testSize: 5, shuffleSeed: 7 }).build();
      assert.deepEqual(await ids(again.test!.getBatch(0)), testIds);
      const other = await new FromConversationFileBuilder({ common: common(), filePath: file, testSize: 5, shuffleSeed: 8 }).build();
      assert.notDeepEqual(await ids(other.test!.getBatch(0)), testIds);
    },
  );
});

test("datums carry loss only on the assistant replies, with per-example mean weights", async () => {
  await withFile([JSON.stringify(chat(41))], async (file) => {
    const { train } = await new FromConversationFileBuilder({ common: common({ batch_size: 1 }), filePath: file }).build();
    const [d] = train.getBatch(0);
    const w = d!.loss_fn_inputs["weights"]!.data;
    assert.ok(Math.abs(w.reduce((a, b) => a + b, 0) - 1) < 1e-6);
    assert.ok(w[0] === 0, "the prompt is not trained");
  });
});

test("bad lines name the file and line", async () => {
  await withFile([JSON.stringify(chat(0)), "{not json", JSON.stringify(chat(2))], async (file) => {
    await assert.rejects(new FromConversationFileBuilder({ common: common(), filePath: file }).build(), (err: Error) => {
      assert.match(err.message, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:2: not valid JSON`));
      return true;
    });
  });
  await withFile([JSON.stringify(chat(0)), JSON.stringify(chat(1)), JSON.stringify({ conversation: [] })], async (file) => {
    await assert.rejects(
      new FromConversationFileBuilder({ common: common(), filePath: file }).build(),
      /chats\.jsonl:3: expected an object with a "messages" list/,
    );
  });
  await withFile([JSON.stringify({ messages: [{ role: "wizard", content: "hi" }] })], async (file) => {
    await assert.rejects(
      new FromConversationFileBuilder({ common: common({ batch_size: 1 }), filePath: file }).build(),
      /chats\.jsonl:1: messages\[0\] has unknown role "wizard"/,
    );
  });
});

test("empty datasets, oversized batches, test splits that eat everything and too-short max_length fail before training", async () => {
  await withFile([], async (file) => {
    await assert.rejects(new FromConversationFileBuilder({ common: common(), filePath: file }).build(), /the dataset is empty/);
  });
  await withFile(
    Array.from({ length: 6 }, (_, i) => JSON.stringify(chat(i))),
    async (file) => {
      await assert.rejects(
        new FromConversationFileBuilder({ common: common({ batch_size: 8 }), filePath: file }).build(),
        /batch_size=8 is larger than the 6 training examples/,
      );
      await assert.rejects(
        new FromConversationFileBuilder({ common: common({ batch_size: 4 }), filePath: file, testSize: 3 }).build(),
        /batch_size=4 is larger than the 3 training examples \(after holding out test_size=3\)/,
      );
      await assert.rejects(
        new FromConversationFileBuilder({ common: common(), filePath: file, testSize: 6 }).build(),
        /test_size=6 leaves no training examples/,
      );
      await assert.rejects(
        new FromConversationFileBuilder({ common: common({ max_length: 3 }), filePath: file }).build(),
        /max_length=3 is shorter than every example checked .* has \d+ tokens/,
      );
      // Long enough for some examples: fine, and those are truncated to max_length.
      const { train } = await new FromConversationFileBuilder({ common: common({ max_length: 15 }), filePath: file }).build();
      for (const d of train.getBatch(0)) assert.ok(d.model_input.chunks.reduce((n, c) => n + (c.type === "encoded_text" ? c.tokens.length : 0), 0) <= 14);
    },
  );
});

test("rows-backed datasets drop the partial last batch and reject out-of-range batches", async () => {
  const ds = new SupervisedDatasetFromRows([1, 2, 3, 4, 5], 2, (x: number) => ({
    model_input: { chunks: [{ type: "encoded_text", tokens: [x] }] },
    loss_fn_inputs: {},
  }));
  assert.equal(ds.length, 2);
  assert.throws(() => ds.getBatch(2), /out of range/);
  const tok = await getTokenizer(TOKENIZER_DIR);
  const renderer = getRenderer("role_colon", tok);
  const convs: Conversation[] = [{ messages: chat(1).messages as Conversation["messages"], where: "x:1" }];
  assert.throws(
    () =>
      conversationDatasets(convs, {
        common: { ...common({ batch_size: 1 }), train_on_what: null } as never,
        renderer,
        testSize: 0,
        shuffleSeed: 0,
        source: "x",
      }).train.getBatch(1),
    /out of range/,
  );
});
