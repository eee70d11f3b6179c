import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configSchema } from "../../recipes/example_line_fit/index.ts";
import { cycleOption, fieldError, formArgs, formProblem, formRows, logPathExists, makeForm } from "../../src/tui/ui/screens/launch/launchForm.ts";
import { tempRoot } from "./fixtures.ts";

test("the form lists the schema's fields with defaults, minus the ones it manages", () => {
  const form = makeForm("example_line_fit", configSchema, "/tmp/nowhere-xyz");
  const paths = form.fields.map((f) => f.path);
  assert.ok(paths.includes("data.num_points") && paths.includes("learning_rate"));
  assert.ok(!paths.includes("log_path") && !paths.includes("behavior_if_log_dir_exists"));
  assert.equal(form.values["max_steps"], "200");
  assert.equal(form.values["lr_schedule"], "constant");
  assert.deepEqual(formArgs(form), []);
  assert.equal(formProblem(form), undefined);
});

test("values are validated as typed and only changed values become arguments", () => {
  const form = makeForm("example_line_fit", configSchema, "/tmp/nowhere-xyz", ["max_steps=5"]);
  const byPath = new Map(form.fields.map((f) => [f.path, f]));
  assert.match(fieldError(byPath.get("max_steps")!, "abc") ?? "", /integer/);
  assert.match(fieldError(byPath.get("max_steps")!, "-3") ?? "", /max_steps/);
  assert.equal(fieldError(byPath.get("learning_rate")!, "0.5"), undefined);
  assert.deepEqual(formArgs(form), ["max_steps=5"]);
  form.values["max_steps"] = "x";
  assert.match(formProblem(form) ?? "", /max_steps/);
  assert.equal(cycleOption(byPath.get("lr_schedule")!, "constant"), "linear");
});

test("an existing log path adds the if-it-exists row", () => {
  const root = tempRoot();
  const dir = join(root, "run");
  mkdirSync(dir);
  const fresh = makeForm("example_line_fit", configSchema, join(root, "other"));
  assert.ok(!logPathExists(fresh.logPath) && !formRows(fresh, logPathExists(fresh.logPath)).some((r) => r.kind === "ifExists"));
  writeFileSync(join(dir, "metrics.jsonl"), "");
  const form = makeForm("example_line_fit", configSchema, dir);
  assert.ok(logPathExists(dir));
  assert.deepEqual(
    formRows(form, logPathExists(dir))
      .slice(0, 3)
      .map((r) => r.kind),
    ["group", "logPath", "ifExists"],
  );
});
