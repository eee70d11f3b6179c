// stream=true through the compiled `cookbook run sl_basic`: a parquet file several times larger
// than the heap the process may have trains a few steps (and the same command without stream=true
// runs out of memory), and a hub dataset on a local fake hub is downloaded into the cache and
// streamed shard by shard with its test split scored.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { parquetWriteBuffer } from "hyparquet-writer";
import { readMetrics } from "../../src/log/metrics.ts";
import { startFakeHub } from "../hub/fakeHub.ts";
import { writeBigChatParquet } from "../supervised/bigChatParquet.ts";
import { type Bundle, buildBundle } from "./bundle.ts";

let bundle: Bundle;
before(() => {
  bundle = buildBundle();
});
after(() => bundle.cleanup());

const HEAP_MB = 48;
const ROWS = 7500;
const TEST_ROWS = 4;
const BATCH = 4;

function trainArgs(logPath: string, extra: string[]): string[] {
  return [
    bundle.runner,
    "run",
    "sl_basic",
    `log_path=${logPath}`,
    `batch_size=${BATCH}`,
    "max_steps=3",
    "max_length=128",
    "save_every=0",
    "eval_every=0",
    "behavior_if_log_dir_exists=delete",
    ...extra,
  ];
}

function trainedSteps(logPath: string): Record<string, unknown>[] {
  return readMetrics(logPath).filter((r) => typeof r["train_mean_nll"] === "number");
}

test(`a parquet file larger than a ${HEAP_MB} MB heap trains with stream=true; loaded whole it runs out of memory`, { timeout: 240_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "stream-cli-"));
  try {
    const file = join(dir, "big.parquet");
    writeBigChatParquet(file, { rows: ROWS, answerBytes: 12 * 1024, groupRows: 64 });
    const size = statSync(file).size;
    assert.ok(size > 2 * HEAP_MB * 1024 * 1024, `the file is ${size} bytes`);
    const env = { ...process.env, COOKBOOK_HOME: join(dir, "home"), HF_HUB_OFFLINE: "1", NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` };

    const logPath = join(dir, "streamed");
    const streamed = spawnSync(process.execPath, trainArgs(logPath, [`dataset=${file}`, "stream=true", `test_size=${TEST_ROWS}`]), { env, encoding: "utf8" });
    assert.equal(streamed.status, 0, `stream=true under a ${HEAP_MB} MB heap failed:\n${streamed.stderr.slice(-3000)}`);
    const steps = trainedSteps(logPath);
    assert.deepEqual(
      steps.map((r) => r.step),
      [0, 1, 2],
    );
    for (const r of steps) {
      assert.equal(r["num_sequences"], BATCH);
      assert.ok(Number.isFinite(r["train_mean_nll"]));
    }
    // Every row was counted by the streaming pass (blocks of 32 batches leave no partial batch here).
    assert.match(readFileSync(join(logPath, "logs.log"), "utf8"), new RegExp(`training for ${Math.floor((ROWS - TEST_ROWS) / BATCH)} batches`));

    const whole = spawnSync(process.execPath, trainArgs(join(dir, "whole"), [`dataset=${file}`, `test_size=${TEST_ROWS}`]), { env, encoding: "utf8" });
    assert.notEqual(whole.status, 0, "loading the same file whole under the same heap should run out of memory");
    assert.match(whole.stderr, /heap out of memory|Allocation failed/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function chats(from: number, to: number): { role: string; content: string }[][] {
  return Array.from({ length: to - from }, (_, i) => [
    { role: "user", content: `Say ${from + i}.` },
    { role: "assistant", content: `${from + i}` },
  ]);
}

const shard = (rows: unknown[]) => new Uint8Array(parquetWriteBuffer({ columnData: [{ name: "messages", data: rows }], rowGroupSize: 16 }));

test("stream=true on a hub id: shards download into the HF cache, stream, and the test split is scored", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "stream-cli-hub-"));
  const sha = "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed";
  const hub = await startFakeHub({
    datasets: {
      "org/chats": {
        sha,
        files: {
          "data/train-00000-of-00002.parquet": shard(chats(0, 50)),
          "data/train-00001-of-00002.parquet": shard(chats(50, 90)),
          "data/test-00000-of-00001.parquet": shard(chats(500, 520)),
        },
      },
    },
  });
  try {
    const logPath = join(dir, "run");
    const env: NodeJS.ProcessEnv = { ...process.env, COOKBOOK_HOME: join(dir, "home"), HF_HOME: join(dir, "hf"), HF_ENDPOINT: hub.url };
    delete env["HF_HUB_OFFLINE"];
    delete env["COOKBOOK_OFFLINE"];
    delete env["HF_HUB_CACHE"];
    // Asynchronously: the fake hub answers from this process's event loop.
    await promisify(execFile)(process.execPath, trainArgs(logPath, ["dataset=org/chats", "stream=true", "test_split=test", "test_size=8", "eval_every=2"]), {
      env,
      encoding: "utf8",
    });
    for (const f of ["train-00000-of-00002", "train-00001-of-00002", "test-00000-of-00001"]) {
      assert.ok(existsSync(join(dir, "hf", "hub", "datasets--org--chats", "snapshots", sha, "data", `${f}.parquet`)), `${f} in the cache`);
    }
    // All 90 training rows (the test rows come from the test split) in one block: 22 batches of 4.
    assert.match(readFileSync(join(logPath, "logs.log"), "utf8"), /training for 22 batches/);
    const metrics = readMetrics(logPath);
    assert.deepEqual(
      trainedSteps(logPath).map((r) => r.step),
      [0, 1, 2],
    );
    const evals = metrics.filter((r) => typeof r["test/nll"] === "number");
    assert.ok(evals.length >= 2, `test/nll logged at steps ${evals.map((r) => r.step).join(", ")}`);
  } finally {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
