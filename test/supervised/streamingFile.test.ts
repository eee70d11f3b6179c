// stream=true: a conversation file read in blocks. Every training row is served once per epoch in
// batches that come block by block (seeded block order, rows shuffled inside a block), the held-out
// rows are the file's first test_size, a bad line is reported with its file:line before training,
// and a file larger than the heap trains under a 48 MB cap that reading it whole does not survive.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chatDatasetBuilder, ChatDatasetSpecSchema } from "../../src/supervised/datasetSpec.ts";
import { StreamingConversationDataset } from "../../src/supervised/stream.ts";
import { StreamingChatDatasetBuilder } from "../../src/supervised/streamingBuilder.ts";
import { scanConversationFile } from "../../src/supervised/streamingFile.ts";
import { REPO } from "../recipes/helpers.ts";

const common = { model_name_for_tokenizer: "tiny-chat", renderer_name: "role_colon", batch_size: 4 };

function conversation(i: number, text = `row ${i}`): string {
  return JSON.stringify({
    messages: [
      { role: "user", content: `q${i}` },
      { role: "assistant", content: text },
    ],
  });
}

function answerOf(messages: { content: unknown }[]): string {
  return String(messages[1]!.content);
}

test("streamed batches: each training row once per epoch, block by block, reshuffled per epoch seed; the first test_size rows held out", async () => {
  const dir = mkdtempSync(join(tmpdir(), "stream-"));
  try {
    const file = join(dir, "data.jsonl");
    // 5 held out + 42 training rows, a blank line and CRLF endings in the middle.
    const lines = Array.from({ length: 47 }, (_, i) => conversation(i));
    writeFileSync(file, `${lines.slice(0, 20).join("\n")}\n\n${lines.slice(20, 30).join("\r\n")}\r\n${lines.slice(30).join("\n")}`);
    const { train, test: held } = await new StreamingChatDatasetBuilder({ common, data: { dataset: file }, testSize: 5, blockRows: 8 }).build();
    assert.ok(train instanceof StreamingConversationDataset);
    // Blocks of 8: 5 full (40 rows, 10 batches) and one of 2 rows (no full batch).
    assert.equal(train.length, 10);
    assert.deepEqual(held!.getBatch(0).length, 5);
    const epoch = async (seed: number | null): Promise<string[][]> => {
      if (seed !== null) train.setEpoch(seed);
      const out: string[][] = [];
      for (let b = 0; b < train.length; b++) out.push((await train.rowsOfBatch(b)).map((c) => answerOf(c.messages)));
      return out;
    };
    const fileOrder = await epoch(null);
    assert.deepEqual(fileOrder[0], ["row 5", "row 6", "row 7", "row 8"], "before any epoch: file order after the held-out rows");
    const a = await epoch(1);
    const again = await epoch(1);
    const b = await epoch(2);
    assert.deepEqual(a, again, "one seed, one order");
    assert.notDeepEqual(a, b);
    const expected = Array.from({ length: 40 }, (_, i) => `row ${i + 5}`).sort();
    for (const order of [a, b]) {
      assert.deepEqual(order.flat().sort(), expected, "every row of the full blocks once");
      // Two batches per block: each pair of batches holds exactly one block's rows.
      for (let i = 0; i < order.length; i += 2) {
        const ids = [...order[i]!, ...order[i + 1]!].map((r) => Number(r.split(" ")[1]));
        const first = Math.min(...ids);
        assert.equal((first - 5) % 8, 0);
        assert.deepEqual(
          ids.sort((x, y) => x - y),
          Array.from({ length: 8 }, (_, k) => first + k),
        );
      }
    }
    assert.notDeepEqual(a.flat(), expected, "rows are shuffled");
    // Datums are the rows rendered: one per row, trained tokens present; a batch is read before it is asked for.
    assert.throws(() => train.getBatch(3), /not read: await load\(3\) first/);
    await train.load(3);
    const datums = train.getBatch(3);
    assert.equal(datums.length, 4);
    assert.ok(datums.every((d) => d.loss_fn_inputs["weights"]!.data.some((w) => w > 0)));
    // Where a row came from survives blank lines and CRLF.
    train.setEpoch(7);
    const rows = [];
    for (let i = 0; i < train.length; i++) rows.push(...(await train.rowsOfBatch(i)));
    const where = rows.find((c) => answerOf(c.messages) === "row 33")!.where;
    assert.equal(where, `${file}:35`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("stream=true: a bad line is reported with file:line before training", async () => {
  const dir = mkdtempSync(join(tmpdir(), "stream-"));
  try {
    const file = join(dir, "bad.jsonl");
    writeFileSync(file, `${conversation(0)}\n${conversation(1)}\n{"messages": [{"role": "wizard", "content": "x"}]}\n`);
    const spec = ChatDatasetSpecSchema.parse({ dataset: file, stream: true });
    await assert.rejects(chatDatasetBuilder(spec, common).build(), new RegExp(`${file}:3: messages\\[0\\] has unknown role "wizard"`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the check pass reports how far it got every 10,000 rows", () => {
  const dir = mkdtempSync(join(tmpdir(), "stream-"));
  try {
    const file = join(dir, "many.jsonl");
    writeFileSync(file, `${Array.from({ length: 25_000 }, (_, i) => conversation(i)).join("\n")}\n`);
    const seen: number[] = [];
    const stream = scanConversationFile(file, { progress: (rows) => seen.push(rows) });
    assert.equal(stream.rows, 25_000);
    assert.deepEqual(seen, [10_000, 20_000]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const ROWS = 1900;
const TEXT = 64 * 1024;

const STREAM = `
import { createHash } from "node:crypto";
const { scanConversationFile } = await import(${JSON.stringify(join(REPO, "src/supervised/streamingFile.ts"))});
const { splitStream } = await import(${JSON.stringify(join(REPO, "src/supervised/stream.ts"))});
// The rows only (the builder adds the renderer's role check and datums, tested above).
const { train } = await splitStream(scanConversationFile(process.argv[1]), { testSize: 0, blockRows: 128, batchSize: 4, map: (c) => ({ length: c.messages.length }) });
const digest = createHash("sha256");
let rows = 0;
for (let b = 0; b < train.length; b++) for (const c of await train.rowsOfBatch(b)) { digest.update(c.messages[1].content + "\\n"); rows++; }
await train.load(0);
const datums = train.getBatch(0).length;
console.log(JSON.stringify({ rows, digest: digest.digest("hex"), datums }));
`;

const WHOLE = `
const { readConversationFile } = await import(${JSON.stringify(join(REPO, "src/supervised/conversationFile.ts"))});
console.log(readConversationFile(process.argv[1]).length);
`;

function runCapped(source: string, file: string) {
  return spawnSync(process.execPath, ["--max-old-space-size=48", "--import", "tsx", "--input-type=module", "-e", source, file], {
    cwd: REPO,
    encoding: "utf8",
    timeout: 240_000,
  });
}

test("a conversation file larger than the heap trains streamed under a 48 MB cap; read whole, it does not fit", { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "stream-big-"));
  try {
    const file = join(dir, "big.jsonl");
    const fd = openSync(file, "w");
    const digest = createHash("sha256");
    // Rows whose answers differ (a counter spread through the text), written one at a time.
    for (let i = 0; i < ROWS; i++) {
      const text = `${String(i).padStart(6, "0")}${"abcdefgh".repeat(TEXT / 8)}`;
      if (i < 4 * Math.floor(ROWS / 4)) digest.update(`${text}\n`);
      writeSync(fd, `${conversation(i, text)}\n`);
    }
    closeSync(fd);
    const size = statSync(file).size;
    assert.ok(size > 100 * 1024 * 1024, `the file is ${size} bytes`);
    const streamed = runCapped(STREAM, file);
    assert.equal(streamed.status, 0, `streaming under a 48 MB heap failed:\n${streamed.stderr.slice(-2000)}`);
    const result = JSON.parse(streamed.stdout.trim().split("\n").pop()!) as { rows: number; digest: string; datums: number };
    assert.equal(result.rows, ROWS);
    assert.equal(result.digest, digest.digest("hex"), "every row, in file order before the first epoch");
    assert.equal(result.datums, 4, "getBatch maps the batch's rows");
    const whole = runCapped(WHOLE, file);
    assert.notEqual(whole.status, 0, "reading the whole file under the same cap should run out of memory");
    assert.match(whole.stderr, /heap out of memory|Allocation failed|Invalid string length/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
