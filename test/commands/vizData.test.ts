// `cookbook viz-data`: paging, colour vs plain marking, and the errors a user meets.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { runVizData, VizDataConfigSchema, type VizDataIO } from "../../src/commands/vizData.ts";
import { packagedTokenizerDir, ROOT } from "../renderers/helpers.ts";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "viz-data-test-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const QWEN = packagedTokenizerDir("qwen3");

function writeJsonl(name: string, lines: string[]): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

const good = writeJsonl("good.jsonl", [
  JSON.stringify({
    messages: [
      { role: "user", content: "What is 2+2?" },
      { role: "assistant", content: "4" },
    ],
  }),
  "",
  JSON.stringify({
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello!" },
    ],
  }),
]);

function capture(interactive: boolean, keys: string[] = []): { io: VizDataIO; out: () => string; asked: () => number } {
  let text = "";
  let asked = 0;
  return {
    io: {
      write: (t) => (text += t),
      interactive,
      readKey: () => {
        asked++;
        return Promise.resolve(keys.shift() ?? "\r");
      },
    },
    out: () => text,
    asked: () => asked,
  };
}

const config = (args: Record<string, unknown>) => VizDataConfigSchema.parse({ model_name: QWEN, renderer_name: "qwen3", ...args });

test("not a terminal: every example, trained tokens marked with brackets, no colour codes", async () => {
  const c = capture(false);
  await runVizData(good, config({}), false, c.io);
  const out = c.out();
  assert.match(out, /== example 1\/2 \(line 1\)/);
  assert.match(out, /== example 2\/2 \(line 3\)/);
  assert.ok(out.includes("[[<think>\n\n</think>\n\n4<|im_end|>]]"), out);
  assert.ok(out.includes("<|im_start|>user\nWhat is 2+2?<|im_end|>"));
  assert.ok(!out.includes("\x1b["));
  assert.equal(c.asked(), 0);
});

test("terminal: colours by weight, one example per key, q quits, --all does not wait", async () => {
  const quit = capture(true, ["q"]);
  await runVizData(good, config({}), false, quit.io);
  assert.equal(quit.asked(), 1);
  assert.ok(!quit.out().includes("example 2/2"));
  assert.ok(quit.out().includes("\x1b[32m"), "trained tokens are green");
  assert.ok(quit.out().includes("\x1b[33m"), "untrained tokens are yellow");
  const next = capture(true, [" "]);
  await runVizData(good, config({}), false, next.io);
  assert.ok(next.out().includes("example 2/2"));
  const all = capture(true);
  await runVizData(good, config({}), true, all.io);
  assert.equal(all.asked(), 0);
  assert.ok(all.out().includes("example 2/2"));
});

test("train_on_what and max_length change what is shown", async () => {
  const c = capture(false);
  await runVizData(good, config({ train_on_what: "all_tokens", max_length: 8 }), true, c.io);
  assert.match(c.out(), /example 1\/2 \(line 1\) · 8 tokens · 7 trained/);
});

test("bad input: errors name the file and line, the role, the renderer or the token", async () => {
  const notJson = writeJsonl("bad.jsonl", [JSON.stringify({ messages: [] }), "{oops"]);
  await assert.rejects(runVizData(notJson, config({}), true, capture(false).io), /bad\.jsonl:2: not valid JSON/);
  const noMessages = writeJsonl("nomsg.jsonl", [JSON.stringify({ conversation: [] })]);
  await assert.rejects(runVizData(noMessages, config({}), true, capture(false).io), /nomsg\.jsonl:1: expected an object with a "messages" list/);
  const badRole = writeJsonl("role.jsonl", [JSON.stringify({ messages: [{ role: "narrator", content: "Once" }] })]);
  await assert.rejects(runVizData(badRole, config({}), true, capture(false).io), /role\.jsonl:1: messages\[0\] has unknown role "narrator" for renderer qwen3/);
  const badContent = writeJsonl("content.jsonl", [JSON.stringify({ messages: [{ role: "user", content: 5 }] })]);
  await assert.rejects(runVizData(badContent, config({}), true, capture(false).io), /content\.jsonl:1: messages\[0\]\.content/);
  await assert.rejects(runVizData(good, config({ renderer_name: "kimi" }), true, capture(false).io), /unknown renderer "kimi"; known renderers: .*kimi_k2/);
  await assert.rejects(runVizData(good, config({ renderer_name: "llama3" }), true, capture(false).io), /llama3 needs the special token/);
  await assert.rejects(runVizData(path.join(tmp, "missing.jsonl"), config({}), true, capture(false).io), /cannot read .*missing\.jsonl/);
});

test("a fixture model name is accepted like in every recipe: no recommended renderer means role_colon", async () => {
  const c = capture(false);
  await runVizData(good, VizDataConfigSchema.parse({ model_name: "tiny-chat" }), true, c.io);
  assert.match(c.out(), /renderer role_colon/);
  assert.ok(c.out().includes("User: What is 2+2?"), c.out());
  const explicit = capture(false);
  await runVizData(good, config({ renderer_name: null }), true, explicit.io);
  assert.match(explicit.out(), /renderer role_colon/, "a local tokenizer folder has no recommended renderer either");
});

test("the cookbook command runs viz-data, plain when piped, and exits non-zero on bad data", () => {
  const bin = path.join(ROOT, "bin", "cookbook.js");
  const env = { ...process.env, HF_HUB_OFFLINE: "1" };
  const ok = spawnSync(
    process.execPath,
    [bin, "viz-data", good, `model_name=${QWEN}`, "renderer_name=qwen3_disable_thinking", "train_on_what=last_assistant_message"],
    { encoding: "utf8", env },
  );
  assert.equal(ok.status, 0, ok.stderr);
  assert.ok(ok.stdout.includes("[[4<|im_end|>]]"), ok.stdout);
  const bad = writeJsonl("cli-bad.jsonl", ["[1, 2]"]);
  const failed = spawnSync(process.execPath, [bin, "viz-data", bad, `model_name=${QWEN}`, "renderer_name=qwen3"], { encoding: "utf8", env });
  assert.notEqual(failed.status, 0);
  assert.match(failed.stderr, /cli-bad\.jsonl:1: expected an object with a "messages" list/);
  const fixture = spawnSync(process.execPath, [bin, "viz-data", good, "model_name=tiny-chat"], { encoding: "utf8", env });
  assert.equal(fixture.status, 0, fixture.stderr);
  assert.match(fixture.stdout, /== example 2\/2 .* renderer role_colon/);
});
