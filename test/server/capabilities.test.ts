// `cookbook serve` narrowed to what a smaller server offers (one model, a LoRA rank ceiling, no
// top-k prompt logprobs): it advertises and enforces that, and recipes pointed at it refuse before
// their run directory exists, naming the server, what it lacks and what to do instead.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type RunningServer } from "../../src/server/index.ts";
import { UnsupportedByServerError } from "../../src/tinker/errors.ts";
import { explainCreateModelFailure } from "../../src/training/capabilities.ts";
import { runRecipe } from "../recipes/helpers.ts";
import { client, raw } from "./helpers.ts";

let root: string;
let server: RunningServer;
let previousHome: string | undefined;

before(async () => {
  root = mkdtempSync(join(tmpdir(), "serve-caps-"));
  previousHome = process.env["COOKBOOK_HOME"];
  process.env["COOKBOOK_HOME"] = join(root, "home");
  server = await startServer(
    { port: 0, storeDir: join(root, "store"), kernels: "reference", models: ["tiny-chat"], maxLoraRank: 4, topkPromptLogprobs: false },
    { log: () => undefined },
  );
});

after(async () => {
  await server.close();
  if (previousHome === undefined) delete process.env["COOKBOOK_HOME"];
  else process.env["COOKBOOK_HOME"] = previousHome;
  rmSync(root, { recursive: true, force: true });
});

test("get_server_capabilities lists only the configured models and the rank ceiling", async () => {
  const caps = await raw(server.url, "/api/v1/get_server_capabilities", { method: "GET" });
  assert.equal(caps.status, 200);
  assert.deepEqual(
    (caps.json["supported_models"] as { model_name: string }[]).map((m) => m.model_name),
    ["tiny-chat"],
  );
  assert.equal(caps.json["max_lora_rank"], 4);
});

async function refused(recipe: string, args: string[], message: RegExp): Promise<void> {
  const dir = join(root, `${recipe}-${args.length}-${Math.random().toString(36).slice(2, 8)}`);
  await assert.rejects(runRecipe(recipe, [`base_url=${server.url}`, `log_path=${dir}`, "behavior_if_log_dir_exists=delete", ...args]), (err: Error) => {
    assert.ok(err instanceof UnsupportedByServerError, `${err.name}: ${err.message}`);
    assert.match(err.message, message);
    assert.ok(err.message.includes(`the server at ${server.url}`), err.message);
    return true;
  });
  assert.equal(existsSync(dir), false, "a refused run must not create its run directory");
}

test("a model the server does not serve, and a rank above its ceiling, are refused before the run starts", async () => {
  await refused(
    "sl_basic",
    ["model_name=tiny-chat-teacher", "lora_rank=4"],
    /^sl_basic: .* does not serve model_name=tiny-chat-teacher; it serves "tiny-chat"\. Pick one of those \(model_name=tiny-chat\)/,
  );
  await refused(
    "sl_basic",
    ["model_name=tiny-chat", "lora_rank=8"],
    /cannot train lora_rank=8 on tiny-chat: its maximum LoRA rank is 4\. Use a smaller rank \(lora_rank=4\)/,
  );
});

test("off_policy_distillation refuses a teacher the server does not serve, then one without top-k prompt logprobs", async () => {
  const common = ["model_name=tiny-chat", "lora_rank=4", "num_examples=4", "batch_size=2", "max_steps=1", "test_problems=0"];
  await refused("off_policy_distillation", common, /does not serve teacher\.base_model=tiny-chat-teacher/);
  await refused(
    "off_policy_distillation",
    [...common, "teacher.base_model=tiny-chat"],
    /does not give top-k prompt logprobs \(k=20\), needed for the teacher's soft targets; it answered "topk_prompt_logprobs is not supported by this server \(it was started with --no-topk-prompt-logprobs\)"\. .*teacher\.base_url=local.*on_policy_distillation/,
  );
});

test("the server enforces what it advertises; its rank refusal reads as the capability message", async () => {
  const c = client(server.url);
  try {
    const err = await c.createLoraTrainingClient("tiny-chat", { rank: 8 }).then(
      () => assert.fail("rank 8 was accepted"),
      (e: unknown) => e,
    );
    const explained = explainCreateModelFailure(err, c, { model: "tiny-chat", field: "model_name", loraRank: 8, recipe: "sl_basic" }) as Error;
    assert.ok(explained instanceof UnsupportedByServerError, String(explained));
    assert.match(explained.message, /it answered "LoRA rank 8 is above this server's maximum of 4"\. Use a smaller rank \(lora_rank=4\)/);
    await assert.rejects(
      c.createLoraTrainingClient("tiny-chat-teacher", { rank: 4 }),
      /base model \\"tiny-chat-teacher\\" is not served here; this server serves \\"tiny-chat\\"/,
    );
    await assert.rejects(c.createSamplingClient({ baseModel: "tiny-chat-teacher" }), /not served here/);
  } finally {
    await c.close();
  }
});
