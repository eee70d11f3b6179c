// The supervised loop against fake clients: pipelining order, LR schedules, metrics, evaluators,
// checkpoint records, signals, and resume (no batch trained twice or skipped, no duplicate rows).
import { test } from "node:test";
import { readTrainingExamples } from "../../src/runs/transcripts.ts";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EvaluatorBuilder, SamplingClientEvaluator, TrainingClientEvaluator } from "../../src/eval/evaluators.ts";
import { readMetrics } from "../../src/log/metrics.ts";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import { main, SupervisedConfigSchema, type SupervisedConfig, type SupervisedConfigInput } from "../../src/supervised/train.ts";
import type { SupervisedDatasetBuilder, SupervisedDatasets } from "../../src/supervised/types.ts";
import { syntheticByteTokenizer } from "../renderers/helpers.ts";
import { FakeControl, FakeServiceClient, IdDataset } from "./fakes.ts";

function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "sl-train-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function builderOf(train: IdDataset, test: IdDataset | null = null): SupervisedDatasetBuilder & { builds: number } {
  return {
    builds: 0,
    async build(): Promise<SupervisedDatasets> {
      this.builds += 1;
      return { train, test };
    },
  };
}

function config(logPath: string, overrides: Partial<SupervisedConfigInput> = {}): SupervisedConfig {
  return SupervisedConfigSchema.parse({
    log_path: logPath,
    model_name: "fake-model",
    behavior_if_log_dir_exists: "delete",
    eval_every: 0,
    save_every: 0,
    print_examples_every: 0,
    ...overrides,
  });
}

const quiet = { console: false as const, tokenizer: null };

test("pipelining: step k+1's forward_backward and optim_step are queued before step k's results are awaited", async () => {
  const t = tempDir();
  try {
    const svc = new FakeServiceClient();
    await main(config(t.dir), builderOf(new IdDataset(8, 2)), { ...quiet, serviceClient: svc });
    const ev = svc.last.events;
    const positions = (re: RegExp) => ev.flatMap((e, i) => (re.test(e) ? [i] : []));
    const submitFb = positions(/^submit:fb:/);
    const submitOptim = positions(/^submit:optim:/);
    const awaitFb = positions(/^await:fb:/);
    assert.equal(submitFb.length, 4);
    for (let k = 0; k < 3; k++) {
      assert.ok(submitFb[k + 1]! < awaitFb[k]!, `forward_backward ${k + 1} queued before step ${k} is awaited: ${ev.join(" ")}`);
      assert.ok(submitOptim[k + 1]! < awaitFb[k]!, `optim_step ${k + 1} queued before step ${k} is awaited`);
      // forward_backward and optim_step of one step are both queued before either is awaited.
      assert.ok(submitOptim[k]! < awaitFb[k]!);
    }
    assert.deepEqual(
      [...svc.last.trained].sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
  } finally {
    t.cleanup();
  }
});

test("submit_ahead=0 awaits each step before queuing the next", async () => {
  const t = tempDir();
  try {
    const svc = new FakeServiceClient();
    await main(config(t.dir, { submit_ahead: 0, save_every: 2 }), builderOf(new IdDataset(6, 2)), { ...quiet, serviceClient: svc });
    assert.deepEqual(
      readCheckpoints(t.dir).map((r) => [r.name, r.batch]),
      [
        ["000002", 2],
        ["final", 0],
      ],
    );
    assert.equal(svc.store.states.get(readCheckpoints(t.dir)[0]!.state_path!)!.steps, 2);
    const ev = svc.last.events;
    const submitFb = ev.flatMap((e, i) => (e.startsWith("submit:fb:") ? [i] : []));
    assert.equal(submitFb.length, 3);
    assert.ok(ev.indexOf("await:optim:0") < submitFb[1]!);
    assert.ok(ev.indexOf("await:optim:1") < submitFb[2]!);
  } finally {
    t.cleanup();
  }
});

test("metrics: cookbook names, one row per step, learning rate follows the schedule", async () => {
  for (const schedule of ["linear", "cosine", "constant"] as const) {
    const t = tempDir();
    try {
      const svc = new FakeServiceClient();
      await main(
        config(t.dir, { lr_schedule: schedule, learning_rate: 0.01, print_examples_every: schedule === "linear" ? 2 : 0 }),
        builderOf(new IdDataset(8, 2)),
        {
          console: false,
          serviceClient: svc,
          tokenizer: syntheticByteTokenizer("bytes", []).tokenizer,
        },
      );
      const rows = readMetrics(t.dir);
      assert.deepEqual(
        rows.map((r) => r.step),
        [0, 1, 2, 3],
      );
      rows.forEach((r, s) => {
        const frac = s / 4;
        const mult = schedule === "linear" ? 1 - frac : schedule === "cosine" ? 0.5 * (1 + Math.cos(Math.PI * frac)) : 1;
        assert.ok(Math.abs((r["learning_rate"] as number) - 0.01 * mult) < 1e-12, `${schedule} step ${s}: ${r["learning_rate"]}`);
        assert.equal(svc.last.adam[s]!.learning_rate, r["learning_rate"]);
        for (const key of [
          "train_mean_nll",
          "train_mean_bpb",
          "num_tokens",
          "num_loss_tokens",
          "num_sequences",
          "progress",
          "epoch",
          "time/total",
          "time/step",
          "time/get_batch",
        ]) {
          assert.ok(key in r, `${key} missing from row ${s}`);
        }
        assert.equal(r["num_sequences"], 2);
        assert.equal(r["num_tokens"], 6);
        assert.equal(r["num_loss_tokens"], 2);
        assert.equal(r["progress"], (s + 1) / 4);
        // The fake's logprob is -2/(1+steps before this step).
        assert.ok(Math.abs((r["train_mean_nll"] as number) - 2 / (1 + s)) < 1e-6);
      });
      assert.deepEqual(
        svc.last.adam.map((a) => [a.beta1, a.beta2, a.eps]),
        Array.from({ length: 4 }, () => [0.9, 0.95, 1e-8]),
      );
      if (schedule === "linear") {
        // The first example of each printed batch lands in train_examples.jsonl for the TUI.
        const examples = readTrainingExamples(t.dir);
        assert.deepEqual(
          examples.map((e) => e.step),
          [0, 2],
          "every 2nd batch logs its first example",
        );
        assert.equal(examples[0]!.step, 0);
        assert.ok(
          examples[0]!.segments.some((seg) => seg.weight > 0),
          "a trained segment is present",
        );
        assert.ok(
          examples[0]!.segments.some((seg) => seg.weight === 0),
          "a context segment is present",
        );
      }
    } finally {
      t.cleanup();
    }
  }
});

test("evaluators: run before the step (pre-step weights), test/nll from the test split, sampling evaluators get a fresh sampler", async () => {
  const t = tempDir();
  try {
    const svc = new FakeServiceClient();
    const seen: string[] = [];
    const trainingEval: EvaluatorBuilder = (): TrainingClientEvaluator => ({
      kind: "training_client",
      async evaluate(tc) {
        const fake = svc.clients.find((c) => c.modelId === tc.modelId)!;
        seen.push(`tc@${fake.steps}`);
        return { "test/custom": fake.steps };
      },
    });
    const samplingEval: EvaluatorBuilder = (): SamplingClientEvaluator => ({
      async evaluate(sampler) {
        seen.push(`sc@${sampler.modelPath}`);
        return { "test/sampled": 1 };
      },
    });
    await main(config(t.dir, { eval_every: 2, infrequent_eval_every: 4 }), builderOf(new IdDataset(12, 2), new IdDataset(3, 3)), {
      ...quiet,
      serviceClient: svc,
      evaluatorBuilders: [trainingEval, samplingEval],
      infrequentEvaluatorBuilders: [(): TrainingClientEvaluator => ({ kind: "training_client", evaluate: async () => ({ "test/rare": 1 }) })],
    });
    // Steps 0, 2, 4 (before the step) and once after the last step (6).
    assert.deepEqual(seen, ["tc@0", "sc@snapshot-after-0", "tc@2", "sc@snapshot-after-2", "tc@4", "sc@snapshot-after-4", "tc@6", "sc@snapshot-after-6"]);
    assert.equal(svc.last.samplers, 4);
    const rows = readMetrics(t.dir);
    const evalSteps = rows.filter((r) => "test/nll" in r).map((r) => r.step);
    assert.deepEqual(evalSteps, [0, 2, 4, 6]);
    assert.deepEqual(
      rows.filter((r) => "test/rare" in r).map((r) => r.step),
      [0, 4],
    );
    const nll = rows.filter((r) => "test/nll" in r).map((r) => r["test/nll"] as number);
    assert.ok(Math.abs(nll[0]! - 2) < 1e-6 && nll.every((x, i) => i === 0 || x < nll[i - 1]!), `test/nll should fall: ${nll}`);
    assert.equal(rows.filter((r) => r.step === 2 && "test/custom" in r)[0]!["test/custom"], 2);
  } finally {
    t.cleanup();
  }
});

test("checkpoints: periodic records name the next batch and hold exactly the steps before it; the final one is marked final", async () => {
  const t = tempDir();
  try {
    const svc = new FakeServiceClient();
    await main(config(t.dir, { save_every: 2, num_epochs: 2 }), builderOf(new IdDataset(6, 2)), { ...quiet, serviceClient: svc });
    const recs = readCheckpoints(t.dir);
    assert.deepEqual(
      recs.map((r) => [r.name, r.epoch, r.batch, r.final ?? false]),
      [
        ["000002", 0, 2, false],
        ["000004", 1, 1, false],
        ["final", 2, 0, true],
      ],
    );
    for (const r of recs) {
      assert.match(r.state_path!, /\/weights\//);
      assert.match(r.sampler_path!, /\/sampler_weights\//);
      const steps = (r.epoch ?? 0) * 3 + (r.batch ?? 0);
      assert.equal(svc.store.states.get(r.state_path!)!.steps, steps, `${r.name} holds ${steps} steps`);
    }
    assert.deepEqual(
      recs.map((r) => r.elapsed_tokens),
      [12, 24, 36],
    );
  } finally {
    t.cleanup();
  }
});

test("SIGUSR1 (checkpoint request) saves after the current step; SIGINT (stop) saves and stops, and resume finishes the run", async () => {
  const t = tempDir();
  try {
    const svc = new FakeServiceClient();
    const control = new FakeControl();
    const tc0 = svc.createLoraTrainingClient.bind(svc);
    svc.createLoraTrainingClient = async (name: string) => {
      const tc = await tc0(name);
      tc.onForwardBackward = (i) => {
        if (i === 1) control.checkpointRequested = true;
        if (i === 4) control.stopRequested = true;
      };
      return tc;
    };
    const result = await main(config(t.dir), builderOf(new IdDataset(16, 2)), { ...quiet, serviceClient: svc, runControl: control });
    assert.equal(result.outcome, "stopped");
    assert.equal(result.stoppedAt, 5);
    const recs = readCheckpoints(t.dir);
    assert.deepEqual(
      recs.map((r) => [r.name, r.batch]),
      [
        ["000002", 2],
        ["000005", 5],
      ],
    );
    assert.deepEqual(
      readMetrics(t.dir).map((r) => r.step),
      [0, 1, 2, 3, 4],
    );

    const svc2 = new FakeServiceClient(svc.store);
    const resumed = await main(config(t.dir, { behavior_if_log_dir_exists: "resume" }), builderOf(new IdDataset(16, 2)), { ...quiet, serviceClient: svc2 });
    assert.equal(resumed.startStep, 5);
    assert.equal(resumed.outcome, "completed");
    assert.deepEqual(svc2.calls, [`state+optimizer:${recs[1]!.state_path}`]);
    assert.deepEqual(
      [...svc2.last.trained].sort((a, b) => a - b),
      Array.from({ length: 16 }, (_, i) => i),
    );
    assert.deepEqual(
      readMetrics(t.dir).map((r) => r.step),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
  } finally {
    t.cleanup();
  }
});

test("resume after a crash: rows after the checkpoint are dropped, no batch is trained twice or skipped, across epochs", async () => {
  const reference = tempDir();
  const t = tempDir();
  try {
    const cfg = (dir: string, o: Partial<SupervisedConfigInput> = {}) => config(dir, { save_every: 3, num_epochs: 2, ...o });
    const refSvc = new FakeServiceClient();
    await main(cfg(reference.dir), builderOf(new IdDataset(10, 2)), { ...quiet, serviceClient: refSvc });
    const expected = refSvc.last.trained;
    assert.equal(expected.length, 20);

    const svc = new FakeServiceClient();
    const tc0 = svc.createLoraTrainingClient.bind(svc);
    svc.createLoraTrainingClient = async (name: string) => {
      const tc = await tc0(name);
      tc.onForwardBackward = (i) => {
        if (i === 8) throw new Error("simulated crash");
      };
      return tc;
    };
    await assert.rejects(main(cfg(t.dir), builderOf(new IdDataset(10, 2)), { ...quiet, serviceClient: svc }), /simulated crash/);
    const before = readMetrics(t.dir).map((r) => r.step);
    const last = readCheckpoints(t.dir).at(-1)!;
    assert.equal(last.name, "000006");
    assert.ok(before.includes(6), `the crashed run logged steps past its checkpoint: ${before}`);

    const svc2 = new FakeServiceClient(svc.store);
    const dataset = new IdDataset(10, 2);
    const result = await main(cfg(t.dir, { behavior_if_log_dir_exists: "resume" }), builderOf(dataset), { ...quiet, serviceClient: svc2 });
    assert.equal(result.startStep, 6);
    // Epoch 1 starts at step 5: the resumed run reshuffles with that epoch's seed.
    assert.deepEqual(dataset.epochs, [1]);
    assert.deepEqual(svc2.last.trained, expected);
    const steps = readMetrics(t.dir).map((r) => r.step);
    assert.deepEqual(
      steps,
      Array.from({ length: 10 }, (_, i) => i),
    );
    const recs = readCheckpoints(t.dir);
    assert.equal(recs.at(-1)!.final, true);
    assert.ok(readFileSync(join(t.dir, "logs.log"), "utf8").includes("resumed from"));

    // A run that is already complete does nothing.
    const svc3 = new FakeServiceClient(svc.store);
    const again = await main(cfg(t.dir, { behavior_if_log_dir_exists: "resume" }), builderOf(new IdDataset(10, 2)), { ...quiet, serviceClient: svc3 });
    assert.equal(again.outcome, "already_complete");
    assert.deepEqual(
      readMetrics(t.dir).map((r) => r.step),
      steps,
    );
  } finally {
    reference.cleanup();
    t.cleanup();
  }
});

test("rolling checkpoints are state-only, and each replaces the previous one", async () => {
  const t = tempDir();
  try {
    const svc = new FakeServiceClient();
    await main(config(t.dir, { rolling_save_every: 2, save_every: 0 }), builderOf(new IdDataset(14, 2)), { ...quiet, serviceClient: svc });
    const recs = readCheckpoints(t.dir);
    assert.deepEqual(
      recs.map((r) => [r.name, r.rolling ?? false, r.sampler_path !== undefined]),
      [
        ["000002", true, false],
        ["000004", true, false],
        ["000006", true, false],
        ["final", false, true],
      ],
    );
    assert.deepEqual(svc.deleted, [recs[0]!.state_path, recs[1]!.state_path, recs[2]!.state_path]);
  } finally {
    t.cleanup();
  }
});

test("max_steps caps training and the LR schedule; a bad dataset fails before a model is created", async () => {
  const t = tempDir();
  try {
    const svc = new FakeServiceClient();
    const r = await main(config(t.dir, { max_steps: 3, learning_rate: 1 }), builderOf(new IdDataset(20, 2)), { ...quiet, serviceClient: svc });
    assert.equal(r.endStep, 3);
    svc.last.adam.forEach((a, i) => assert.ok(Math.abs(a.learning_rate! - (1 - i / 3)) < 1e-12));
    const bad = new FakeServiceClient();
    const failing: SupervisedDatasetBuilder = {
      async build() {
        throw new Error("data.jsonl:3: not valid JSON");
      },
    };
    await assert.rejects(main(config(t.dir), failing, { ...quiet, serviceClient: bad }), /data\.jsonl:3/);
    assert.deepEqual(bad.calls, []);
  } finally {
    t.cleanup();
  }
});

test("save_every_tokens triggers saves by trained tokens; async_periodic_saves still records every save", async () => {
  const t = tempDir();
  try {
    const svc = new FakeServiceClient();
    // 2 datums × 3 tokens = 6 tokens per step: a save every 2 steps.
    await main(config(t.dir, { save_every_tokens: 12, async_periodic_saves: true }), builderOf(new IdDataset(14, 2)), { ...quiet, serviceClient: svc });
    const recs = readCheckpoints(t.dir);
    assert.deepEqual(
      recs.map((r) => r.name),
      ["000002", "000004", "000006", "final"],
    );
    for (const r of recs.slice(0, -1)) assert.equal(svc.store.states.get(r.state_path!)!.steps, r.batch);
  } finally {
    t.cleanup();
  }
});
