// stream=true on parquet, hub splits and mixtures: the same conversations streamed from a .jsonl
// file and from parquet shards (row groups that do not line up with the blocks) give the same
// batches for every epoch seed, a hub split is downloaded into the cache and streamed shard by
// shard with its test split held out, a bad row is named before training, and a streamed mixture
// draws exactly the rows, repeats and sources of the loaded mixture.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { interleaveRows, mixtureProbabilities, type StoppingStrategy } from "../../src/data/mixture.ts";
import { chatDatasetBuilder, ChatDatasetSpecSchema } from "../../src/supervised/datasetSpec.ts";
import { mixtureStream } from "../../src/supervised/mixtureStream.ts";
import { type ConversationStream, type StreamedConversation, StreamingConversationDataset } from "../../src/supervised/stream.ts";
import { StreamingChatDatasetBuilder } from "../../src/supervised/streamingBuilder.ts";
import { startFakeHub } from "../hub/fakeHub.ts";

const TOKENIZER_DIR = resolve(import.meta.dirname, "../../fixtures/models/tiny-chat");
const common = { model_name_for_tokenizer: TOKENIZER_DIR, renderer_name: "role_colon", batch_size: 4 };

function messages(i: number): { role: string; content: string }[] {
  return [
    { role: "user", content: `q${i}` },
    { role: "assistant", content: `row ${i}` },
  ];
}

function parquetOf(ids: number[], rowGroupSize: number): Uint8Array {
  return new Uint8Array(parquetWriteBuffer({ columnData: [{ name: "messages", data: ids.map(messages) }], rowGroupSize }));
}

function write(path: string, bytes: Uint8Array | string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
  return path;
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const answer = (c: StreamedConversation) => String(c.messages[1]!.content);

async function epochs(train: StreamingConversationDataset, seeds: (number | null)[]): Promise<string[][][]> {
  const out: string[][][] = [];
  for (const seed of seeds) {
    if (seed !== null) train.setEpoch(seed);
    const batches: string[][] = [];
    for (let b = 0; b < train.length; b++) batches.push((await train.rowsOfBatch(b)).map(answer));
    out.push(batches);
  }
  return out;
}

function withTemp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "stream-parquet-"));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

test("a parquet folder streams the same batches as the .jsonl file of the same rows, for every epoch seed", () =>
  withTemp(async (dir) => {
    // 107 rows: shards of 40, 45 and 22 rows in row groups of 7, so blocks of 12 rows cross row groups and files.
    const jsonl = write(
      join(dir, "data.jsonl"),
      `${range(0, 107)
        .map((i) => JSON.stringify({ messages: messages(i) }))
        .join("\n")}\n`,
    );
    write(join(dir, "pq", "data", "train-00000-of-00003.parquet"), parquetOf(range(0, 40), 7));
    write(join(dir, "pq", "data", "train-00001-of-00003.parquet"), parquetOf(range(40, 85), 7));
    write(join(dir, "pq", "data", "train-00002-of-00003.parquet"), parquetOf(range(85, 107), 7));
    const build = (dataset: string) => new StreamingChatDatasetBuilder({ common, data: { dataset }, testSize: 3, blockRows: 12 }).build();
    const fromJsonl = await build(jsonl);
    const fromParquet = await build(join(dir, "pq"));
    assert.ok(fromParquet.train instanceof StreamingConversationDataset && fromJsonl.train instanceof StreamingConversationDataset);
    // 104 training rows: 8 blocks of 12 (3 batches each) and one of 8 (2 batches).
    assert.equal(fromParquet.train.length, 26);
    assert.equal(fromJsonl.train.length, 26);
    const seeds = [null, 0, 1, 5];
    const a = await epochs(fromParquet.train, seeds);
    assert.deepEqual(a, await epochs(fromJsonl.train, seeds));
    assert.deepEqual(a[0]![0], ["row 3", "row 4", "row 5", "row 6"], "stream order before the first epoch, after the held-out rows");
    for (const epoch of a)
      assert.deepEqual(
        epoch.flat().sort(),
        range(3, 107)
          .map((i) => `row ${i}`)
          .sort(),
        "every training row once",
      );
    assert.notDeepEqual(a[1], a[2], "epochs differ");
    assert.deepEqual(a[1], (await epochs(fromParquet.train, [0]))[0], "one seed, one order");
    // The held-out rows are the first three, rendered.
    assert.equal(fromParquet.test!.getBatch(0).length, 3);
    assert.deepEqual(fromParquet.test!.getBatch(0), fromJsonl.test!.getBatch(0));
    // Rows name their shard and row.
    fromParquet.train.setEpoch(3);
    const rows: StreamedConversation[] = [];
    for (let b = 0; b < fromParquet.train.length; b++) rows.push(...(await fromParquet.train.rowsOfBatch(b)));
    assert.match(rows.find((c) => answer(c) === "row 50")!.where, /train-00001-of-00003\.parquet row 10$/);
    // Datums of a read batch.
    await fromParquet.train.load(7);
    assert.equal(fromParquet.train.getBatch(7).length, 4);
  }));

test("stream=true on a hub id: the split's shards download into the cache, stream shard by shard, and test_split is held out", () =>
  withTemp(async (dir) => {
    const hub = await startFakeHub({
      datasets: {
        "org/chat": {
          sha: "feedfacefeedfacefeedfacefeedfacefeedface",
          files: {
            "data/train-00000-of-00002.parquet": parquetOf(range(0, 30), 8),
            "data/train-00001-of-00002.parquet": parquetOf(range(30, 50), 8),
            "data/test-00000-of-00001.parquet": parquetOf(range(900, 910), 8),
          },
        },
      },
    });
    try {
      const env = { HF_ENDPOINT: hub.url, HF_HOME: join(dir, "hf") };
      const builder = new StreamingChatDatasetBuilder({
        common,
        data: { dataset: "org/chat" },
        testSplit: "test",
        testSize: 6,
        hub: { env, log: () => {} },
      });
      const { train, test: held } = await builder.build();
      assert.ok(train instanceof StreamingConversationDataset);
      assert.equal(train.length, 12, "all 50 training rows (no test rows taken from them): 12 batches of 4");
      const [order] = await epochs(train, [2]);
      const trained = order!.flat();
      assert.equal(new Set(trained).size, 48, "48 distinct rows (the last 2 after the in-block shuffle do not fill a batch)");
      assert.ok(trained.every((r) => Number(r.split(" ")[1]) < 50));
      assert.equal(held!.getBatch(0).length, 6, "test_size caps the test split");
      assert.ok(hub.requests.some((r) => r.endsWith("data/train-00001-of-00002.parquet")));
      // Offline, the cache alone is enough.
      const cached = await new StreamingChatDatasetBuilder({
        common,
        data: { dataset: "org/chat" },
        hub: { env: { HF_HOME: join(dir, "hf"), HF_HUB_OFFLINE: "1" } },
      }).build();
      assert.equal(cached.train.length, 12);
      assert.equal(cached.test, null);
    } finally {
      await hub.close();
    }
  }));

test("stream=true: a bad parquet row is named before training", () =>
  withTemp(async (dir) => {
    const file = write(
      join(dir, "bad.parquet"),
      new Uint8Array(parquetWriteBuffer({ columnData: [{ name: "messages", data: [messages(0), [{ role: "wizard", content: "x" }]] }] })),
    );
    const spec = ChatDatasetSpecSchema.parse({ dataset: file, stream: true });
    await assert.rejects(chatDatasetBuilder(spec, common).build(), /bad\.parquet row 1: messages\[0\] has unknown role "wizard"/);
    const noColumn = ChatDatasetSpecSchema.parse({ dataset: file, stream: true, message_field: "dialog" });
    await assert.rejects(chatDatasetBuilder(noColumn, common).build(), /bad\.parquet/);
  }));

/** A stream over rows in memory that counts what is read. */
function memoryStream(name: string, n: number): ConversationStream & { reads: number } {
  const s = {
    name,
    rows: n,
    reads: 0,
    read: async (start: number, end: number) => {
      s.reads += 1;
      return range(start, end).map((i) => ({ messages: [{ role: "user", content: `${name}${i}` }], where: `${name}:${i}` }));
    },
  };
  return s;
}

test("a streamed mixture reads exactly the loaded mixture's rows, repeats and sources, by any range", async () => {
  const strategies: StoppingStrategy[] = ["all_exhausted", "first_exhausted", "all_exhausted_without_replacement"];
  for (const strategy of strategies) {
    const big = memoryStream("a", 5000);
    const small = memoryStream("b", 37);
    const probabilities = mixtureProbabilities([3, 1], [5000, 37], ["a", "b"]);
    const stream = mixtureStream(
      [
        { name: "a", stream: big },
        { name: "b", stream: small },
      ],
      probabilities,
      11,
      strategy,
    );
    const expected = interleaveRows([5000, 37], probabilities, 11, strategy).map(([s, r]) => `${["a", "b"][s]}${r}`);
    assert.equal(stream.rows, expected.length, strategy);
    const all = await stream.read(0, stream.rows);
    assert.deepEqual(
      all.map((c) => c.messages[0]!.content),
      expected,
      strategy,
    );
    assert.ok(
      all.every((c) => c.source === (String(c.messages[0]!.content).startsWith("a") ? "a" : "b")),
      "each row carries its source's name",
    );
    // Ranges that start past a checkpoint and cross it read the same rows.
    for (const [from, to] of [
      [4090, 4100],
      [4096, 4096 + 300],
      [stream.rows - 7, stream.rows],
    ] as const) {
      if (to > stream.rows) continue;
      assert.deepEqual(
        (await stream.read(from, to)).map((c) => c.messages[0]!.content),
        expected.slice(from, to),
        `${strategy} ${from}..${to}`,
      );
    }
  }
});

test("stream=true with mixture=: per-source batches over a .jsonl and a parquet source, the held-out rows tagged by source", () =>
  withTemp(async (dir) => {
    const a = write(
      join(dir, "a.jsonl"),
      `${range(0, 60)
        .map((i) => JSON.stringify({ messages: messages(i) }))
        .join("\n")}\n`,
    );
    const b = write(join(dir, "b.parquet"), parquetOf(range(1000, 1020), 6));
    const spec = ChatDatasetSpecSchema.parse({
      stream: true,
      dataset: "unused",
      mixture: [
        { dataset: a, weight: 1 },
        { dataset: b, weight: 1 },
      ],
      mixture_stopping_strategy: "all_exhausted_without_replacement",
      test_size: 8,
    });
    const { train, test: held } = await chatDatasetBuilder(spec, common).build();
    assert.ok(train instanceof StreamingConversationDataset);
    assert.equal(train.length, 18, "72 of the 80 rows train, 18 batches of 4");
    train.setEpoch(4);
    const seen = new Map<string, string[]>();
    for (let i = 0; i < train.length; i++) {
      const rows = await train.rowsOfBatch(i);
      const sources = train.batchSources(i)!;
      rows.forEach((r, k) => seen.set(sources[k]!, [...(seen.get(sources[k]!) ?? []), answer(r)]));
    }
    assert.ok(seen.get("a")!.every((r) => Number(r.split(" ")[1]) < 60));
    assert.ok(seen.get("b")!.every((r) => Number(r.split(" ")[1]) >= 1000));
    assert.equal(seen.get("a")!.length + seen.get("b")!.length, 72);
    assert.equal(held!.getBatch(0).length, 8);
    assert.equal(held!.batchSources!(0)!.length, 8);
  }));
