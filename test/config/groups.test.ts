// Field groups come from the schemas: a tag where a field is declared, kept through
// overrideDefaults, inherited by nested fields, `data` for untagged ones; `--help` and the launch
// form show the same groups for every recipe.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { recipes } from "../../recipes/registry.ts";
import { FIELD_GROUP_TITLES, formatConfigHelp, groupConfigFields, inGroup, listConfigFields, loadRecipe, tagGroup } from "../../src/config/index.ts";
import { overrideDefaults } from "../../src/training/config.ts";
import { formRows, makeForm } from "../../src/tui/ui/screens/launch/launchForm.ts";

test("a group tag survives describe, overrideDefaults and nesting; untagged fields go to data", () => {
  const schema = z.object({
    ...inGroup("optimizer", { lr: z.number().default(0.1).describe("step size") }),
    nested: tagGroup("advanced", z.object({ a: z.number().default(1), b: z.string().default("x") }).prefault({})),
    dataset: z.string().default("d").describe("where the data is"),
  });
  const overridden = overrideDefaults(schema, { lr: 0.5 });
  const byPath = new Map(listConfigFields(overridden).map((f) => [f.path, f]));
  assert.equal(byPath.get("lr")?.group, "optimizer");
  assert.equal(byPath.get("lr")?.default, 0.5);
  assert.equal(byPath.get("lr")?.description, "step size", "the description is kept with the new default");
  assert.equal(byPath.get("nested.a")?.group, "advanced");
  assert.equal(byPath.get("nested.b")?.group, "advanced");
  assert.equal(byPath.get("dataset")?.group, "data");
});

test("sl_basic's --help lists its fields under the groups in order", async () => {
  const recipe = await loadRecipe(recipes, "sl_basic");
  const help = formatConfigHelp(recipe);
  const headings = help.split("\n").filter((l) => /^[A-Z][a-z ]+:$/.test(l));
  assert.deepEqual(headings, ["Run and model:", "Optimizer and schedule:", "Data:", "Evaluation:", "Checkpoints:", "Tracking:", "Advanced:"]);
  const at = (s: string): number => help.indexOf(s);
  assert.ok(at("Optimizer and schedule:") < at("  adam_beta1:") && at("  adam_beta1:") < at("Data:"), "the shared Adam fields are in the optimizer group");
  assert.ok(at("Tracking:") < at("  wandb_project:") && at("Advanced:") < at("  submit_ahead:"), help);
});

test("every recipe's form shows the groups its --help shows, each field exactly once", async () => {
  for (const entry of recipes) {
    const recipe = await loadRecipe(recipes, entry.name);
    const help = formatConfigHelp(recipe);
    const helpTitles = help
      .split("\n")
      .filter((l) => /^[A-Z][a-z ]+:$/.test(l))
      .map((l) => l.slice(0, -1).toLowerCase());
    const form = makeForm(recipe.name, recipe.configSchema, "/tmp/nowhere-groups", []);
    const rows = formRows({ ...form, collapsed: [] }, false);
    const formTitles = rows.filter((r) => r.kind === "group").map((r) => r.group!.title);
    // log_path and behavior_if_log_dir_exists are the form's own rows, under the run group's header.
    assert.deepEqual(formTitles, helpTitles, entry.name);
    const shown = rows.filter((r) => r.kind === "field").map((r) => r.field!.path);
    assert.deepEqual([...shown].sort(), form.fields.map((f) => f.path).sort(), entry.name);
    assert.ok(helpTitles.includes(FIELD_GROUP_TITLES.run), `${entry.name}: the run group`);
    const groups = groupConfigFields(listConfigFields(recipe.configSchema));
    assert.ok(groups.length >= 4, `${entry.name} has ${groups.length} groups`);
  }
});
