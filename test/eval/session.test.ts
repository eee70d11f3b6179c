import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { evaluateModel, resolveEvalTarget } from "../../src/eval/session.ts";
import { EvalStore, type TrajectoryRecord } from "../../src/eval/store.ts";
import { readJsonl } from "../../src/log/jsonl.ts";
import { FakeSampler, fakeRenderer, fakeService } from "./fakes.ts";

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "eval-session-"));
}

const byIndex = (rs: TrajectoryRecord[]) => [...rs].sort((a, b) => a.index - b.index);

test("an eval run writes the cookbook's store layout and a rerun of a finished run starts a new one", async () => {
  const root = tmp();
  const store = new EvalStore(root);
  const sampler = new FakeSampler();
  const out = await evaluateModel({
    model: "fake-model",
    benchmarks: ["arithmetic", "arithmetic:9"],
    overrides: { max_examples: 6 },
    service: fakeService(sampler),
    store,
    renderer: fakeRenderer,
  });
  assert.equal(out.resumed, false);
  const index = readJsonl<{ run_id: string; benchmarks: string[]; base_model: string }>(join(root, "runs.jsonl"));
  assert.equal(index.length, 1);
  assert.deepEqual(index[0]!.benchmarks, ["arithmetic", "arithmetic_max9"]);
  assert.equal(index[0]!.base_model, "fake-model");
  const runDir = join(root, "runs", out.run.run_id);
  const meta = JSON.parse(readFileSync(join(runDir, "metadata.json"), "utf8"));
  assert.equal(meta.status, "complete");
  for (const b of ["arithmetic", "arithmetic_max9"]) {
    const result = JSON.parse(readFileSync(join(runDir, b, "result.json"), "utf8"));
    assert.equal(result.num_examples, 6);
    assert.equal(typeof result.metrics.accuracy, "number");
    const trajs = readJsonl<TrajectoryRecord>(join(runDir, b, "trajectories.jsonl"));
    assert.equal(trajs.length, 6);
    assert.equal(typeof trajs[0]!.samples[0]!.response, "string");
    assert.ok("extracted" in trajs[0]!.samples[0]!);
  }
  assert.equal(sampler.calls, 12);
  const again = await evaluateModel({
    model: "fake-model",
    benchmarks: ["arithmetic"],
    overrides: { max_examples: 6 },
    service: fakeService(sampler),
    store,
    renderer: fakeRenderer,
  });
  assert.notEqual(again.run.run_id, out.run.run_id);
  assert.equal(store.listIndex().length, 2);
});

test("killed mid-run (SIGKILL) and rerun: finished examples are reused and the numbers equal an uninterrupted run's", async () => {
  const total = 40;
  const killedRoot = tmp();
  const child = spawn(process.execPath, ["--import", "tsx", resolve(import.meta.dirname, "killableEval.ts"), killedRoot, String(total)], { stdio: "ignore" });
  const store = new EvalStore(killedRoot);
  // Wait until some, not all, examples are on disk, then kill without warning.
  const deadline = Date.now() + 60_000;
  let finished = 0;
  for (;;) {
    const runs = store.listIndex();
    if (runs.length > 0) finished = store.readTrajectories(runs[0]!.run_id, "arithmetic").length;
    if (finished >= 8) break;
    if (Date.now() > deadline) throw new Error(`child wrote only ${finished} examples in 60s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill("SIGKILL");
  await new Promise((r) => child.once("exit", r));
  const runId = store.listIndex()[0]!.run_id;
  const before = store.readTrajectories(runId, "arithmetic");
  assert.ok(before.length < total, `killed too late (${before.length} of ${total})`);
  assert.equal(store.readMetadata(runId)!.status, "running");
  assert.equal(store.readResult(runId, "arithmetic"), null);

  const resumedSampler = new FakeSampler();
  const resumed = await evaluateModel({
    model: "fake-model",
    benchmarks: ["arithmetic"],
    overrides: { max_examples: total, concurrency: 2 },
    service: fakeService(resumedSampler),
    store,
    renderer: fakeRenderer,
  });
  assert.equal(resumed.resumed, true);
  assert.equal(resumed.run.run_id, runId);
  assert.equal(resumedSampler.calls, total - before.length, "only unfinished examples are sampled again");
  assert.equal(resumed.summaries[0]!.reused, before.length);

  const freshStore = new EvalStore(tmp());
  const fresh = await evaluateModel({
    model: "fake-model",
    benchmarks: ["arithmetic"],
    overrides: { max_examples: total, concurrency: 5 },
    service: fakeService(new FakeSampler()),
    store: freshStore,
    renderer: fakeRenderer,
  });
  assert.deepEqual(resumed.summaries[0]!.metrics, fresh.summaries[0]!.metrics);
  const strip = (rs: TrajectoryRecord[]) => byIndex(rs).map((r) => ({ id: r.example_id, samples: r.samples }));
  assert.deepEqual(strip(store.readTrajectories(runId, "arithmetic")), strip(freshStore.readTrajectories(fresh.run.run_id, "arithmetic")));
  assert.equal(store.readMetadata(runId)!.status, "complete");
  assert.equal(store.listIndex().length, 1, "the resumed run is not indexed twice");
});

test("a run directory evaluates its final sampler checkpoint; bad targets name the file", () => {
  const dir = tmp();
  writeFileSync(
    join(dir, "checkpoints.jsonl"),
    [
      JSON.stringify({ name: "000010", batch: 10, state_path: "tinker://m/weights/000010", sampler_path: "tinker://m/sampler_weights/000010" }),
      JSON.stringify({ name: "final", batch: 60, final: true, state_path: "tinker://m/weights/final", sampler_path: "tinker://m/sampler_weights/final" }),
    ].join("\n") + "\n",
  );
  assert.deepEqual(resolveEvalTarget(dir), { model: dir, modelPath: "tinker://m/sampler_weights/final", baseModel: null, sourceRun: dir, step: 60 });
  assert.equal(resolveEvalTarget("tinker://abc/sampler_weights/000001").modelPath, "tinker://abc/sampler_weights/000001");
  assert.equal(resolveEvalTarget("tiny-chat").baseModel, "tiny-chat");
  const empty = tmp();
  writeFileSync(join(empty, "checkpoints.jsonl"), `${JSON.stringify({ name: "000001", state_path: "tinker://m/weights/000001" })}\n`);
  assert.throws(() => resolveEvalTarget(empty), /checkpoints\.jsonl has no record with a sampler_path/);
  assert.ok(!existsSync(join(empty, "runs.jsonl")));
});

test("a finished run with failed examples is resumed by the next identical command, which samples only those", async () => {
  const store = new EvalStore(tmp());
  const opts = { model: "fake-model", benchmarks: ["arithmetic"], overrides: { max_examples: 6 }, store, renderer: fakeRenderer };
  const { arithmeticBenchmark } = await import("../../src/eval/benchmarks/arithmetic.ts");
  const victim = (await arithmeticBenchmark(null).load())[3]!.prompt.at(-1)!.content as string;
  const first = await evaluateModel({ ...opts, service: fakeService(new FakeSampler({ failOn: victim })) });
  assert.equal(first.summaries[0]!.metrics["errors"], 1);
  assert.equal(first.run.status, "complete");
  const retry = new FakeSampler();
  const second = await evaluateModel({ ...opts, service: fakeService(retry) });
  assert.equal(second.resumed, true);
  assert.equal(second.run.run_id, first.run.run_id);
  assert.equal(retry.calls, 1);
  assert.equal(second.summaries[0]!.metrics["errors"], 0);
  assert.equal(store.readResult(first.run.run_id, "arithmetic")!.metrics["errors"], 0);
  // Now complete and clean: the next identical command starts a new run.
  const third = await evaluateModel({ ...opts, service: fakeService(new FakeSampler()) });
  assert.equal(third.resumed, false);
});
