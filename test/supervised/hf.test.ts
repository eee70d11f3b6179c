// Hub datasets as parquet: local files and folders, download from a (local, fake) hub endpoint into
// the HF cache layout, offline reuse of the cache, the parquet-conversion fallback, and errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { AddressInfo } from "node:net";
import { parquetWriteBuffer } from "hyparquet-writer";
import { FromHFDatasetBuilder } from "../../src/supervised/hf/builder.ts";
import { matchesSplit, resolveDatasetSplitFiles } from "../../src/hf/datasets.ts";
import { readParquetConversations } from "../../src/supervised/hf/parquet.ts";

const TOKENIZER_DIR = resolve(import.meta.dirname, "../../fixtures/models/tiny-chat");
const common = { model_name_for_tokenizer: TOKENIZER_DIR, renderer_name: "role_colon", batch_size: 2 };

function conversations(n: number, offset = 0): { role: string; content: string }[][] {
  return Array.from({ length: n }, (_, i) => [
    { role: "user", content: `Say ${i + offset}.` },
    { role: "assistant", content: `${i + offset}` },
  ]);
}

function parquetOf(rows: unknown[], column = "messages", asJson = false): Uint8Array {
  const data = asJson ? rows.map((r) => JSON.stringify(r)) : rows;
  const buf = parquetWriteBuffer({
    columnData: [
      { name: column, data, ...(asJson ? { type: "STRING" as const } : {}) },
      { name: "id", data: rows.map((_, i) => `r${i}`), type: "STRING" },
    ],
  });
  return new Uint8Array(buf);
}

function writeFile(path: string, bytes: Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
}

function temp(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "sl-hf-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test("split matching follows the hub's file layouts", () => {
  assert.ok(matchesSplit("data/train-00000-of-00002.parquet", null, "train"));
  assert.ok(matchesSplit("train.parquet", null, "train"));
  assert.ok(matchesSplit("default/train/0000.parquet", "default", "train"));
  assert.ok(matchesSplit("sft/train-00000-of-00001.parquet", "sft", "train"));
  assert.ok(!matchesSplit("data/test-00000-of-00001.parquet", null, "train"));
  assert.ok(!matchesSplit("other/train-00000.parquet", "sft", "train"));
  assert.ok(!matchesSplit("data/train-00000.json", null, "train"));
});

test("a local parquet folder: train and test splits, struct and JSON-string message columns", async () => {
  const t = temp();
  try {
    writeFile(join(t.dir, "data", "train-00000-of-00002.parquet"), parquetOf(conversations(5)));
    writeFile(join(t.dir, "data", "train-00001-of-00002.parquet"), parquetOf(conversations(3, 5), "messages", true));
    writeFile(join(t.dir, "data", "test-00000-of-00001.parquet"), parquetOf(conversations(3, 100)));
    const rows = await readParquetConversations(await resolveDatasetSplitFiles({ path: t.dir, name: null, split: "train" }));
    assert.equal(rows.length, 8);
    assert.deepEqual(rows[6]!.messages, [
      { role: "user", content: "Say 6." },
      { role: "assistant", content: "6" },
    ]);
    assert.match(rows[0]!.where, /train-00000-of-00002\.parquet row 0$/);
    const { train, test: held } = await new FromHFDatasetBuilder({ common, path: t.dir, testSplit: "test" }).build();
    assert.equal(train.length, 4);
    assert.equal(held!.getBatch(0).length, 3);
    const capped = await new FromHFDatasetBuilder({ common, path: t.dir, testSplit: "test", testSize: 2 }).build();
    assert.equal(capped.test!.getBatch(0).length, 2);
    await assert.rejects(resolveDatasetSplitFiles({ path: t.dir, name: null, split: "validation" }), /no parquet files for split "validation"/);
  } finally {
    t.cleanup();
  }
});

test("bad parquet rows name the file and row", async () => {
  const t = temp();
  try {
    const file = join(t.dir, "train.parquet");
    writeFile(file, parquetOf([[{ role: "user", content: "hi" }], [{ role: "user" }]]));
    await assert.rejects(readParquetConversations([file]), /train\.parquet row 1: messages\[0\]\.content/);
    writeFile(file, parquetOf(conversations(2), "dialog"));
    await assert.rejects(readParquetConversations([file]), /train\.parquet/);
  } finally {
    t.cleanup();
  }
});

interface FakeHub {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

/** Serves a dataset repo the way the hub API does: revision info, then resolve URLs. */
async function fakeHub(revisions: Record<string, { sha: string; files: Record<string, Uint8Array> }>): Promise<FakeHub> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = decodeURIComponent(req.url ?? "");
    requests.push(url);
    const info = /^\/api\/datasets\/org\/chats\/revision\/(.+)$/.exec(url);
    if (info) {
      const rev = revisions[info[1]!];
      if (!rev) return void res.writeHead(404).end("{}");
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ sha: rev.sha, siblings: Object.keys(rev.files).map((rfilename) => ({ rfilename })) }));
    }
    const file = /^\/datasets\/org\/chats\/resolve\/([^/]+)\/(.+)$/.exec(url);
    if (file) {
      const rev = Object.values(revisions).find((r) => r.sha === file[1]);
      const bytes = rev?.files[file[2]!];
      if (bytes) {
        res.writeHead(200, { "content-length": String(bytes.length) });
        return void res.end(Buffer.from(bytes));
      }
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test("hub datasets download into the HF cache layout once, then load offline", async () => {
  const t = temp();
  const hub = await fakeHub({
    main: {
      sha: "abc123",
      files: {
        "README.md": new Uint8Array([1]),
        "data/train-00000-of-00001.parquet": parquetOf(conversations(6)),
        "data/test-00000-of-00001.parquet": parquetOf(conversations(2, 50)),
      },
    },
  });
  try {
    const env = { HF_ENDPOINT: hub.url, HF_HOME: join(t.dir, "hf") };
    const files = await resolveDatasetSplitFiles({ path: "org/chats", name: null, split: "train" }, { env, log: () => {} });
    const repoDir = join(t.dir, "hf", "hub", "datasets--org--chats");
    assert.deepEqual(files, [join(repoDir, "snapshots", "abc123", "data", "train-00000-of-00001.parquet")]);
    assert.equal(readFileSync(join(repoDir, "refs", "main"), "utf8"), "abc123");
    assert.ok(!existsSync(join(repoDir, "snapshots", "abc123", "data", "test-00000-of-00001.parquet")), "only the asked split is fetched");
    await hub.close();
    const offline = { ...env, HF_HUB_OFFLINE: "1" };
    const { train } = await new FromHFDatasetBuilder({ common, path: "org/chats", hub: { env: offline } }).build();
    assert.equal(train.length, 3);
    await assert.rejects(
      new FromHFDatasetBuilder({ common, path: "org/chats", testSplit: "test", hub: { env: offline } }).build(),
      /dataset org\/chats split test not found[\s\S]*offline/,
    );
  } finally {
    await hub.close().catch(() => undefined);
    t.cleanup();
  }
});

test("repos without parquet files are read from the hub's parquet conversion", async () => {
  const t = temp();
  const hub = await fakeHub({
    main: { sha: "raw1", files: { "chats.jsonl": new Uint8Array([1]) } },
    "refs/convert/parquet": { sha: "conv9", files: { "default/train/0000.parquet": parquetOf(conversations(4)) } },
  });
  try {
    const env = { HF_ENDPOINT: hub.url, HF_HOME: join(t.dir, "hf") };
    const files = await resolveDatasetSplitFiles({ path: "org/chats", name: null, split: "train" }, { env, log: () => {} });
    assert.equal(files.length, 1);
    assert.match(files[0]!, /datasets--org--chats\/snapshots\/conv9\/default\/train\/0000\.parquet$/);
    assert.equal((await readParquetConversations(files)).length, 4);
  } finally {
    await hub.close();
    t.cleanup();
  }
});
