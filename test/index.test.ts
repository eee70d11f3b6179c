import { test } from "node:test";
import assert from "node:assert/strict";
import * as lib from "../src/index.ts";

test("the library entry exposes what recipe authors use, as callables", () => {
  for (const name of [
    "createServiceClient",
    "modelInputFromInts",
    "makeDatum",
    "parseTinkerPath",
    "defineRecipe",
    "getLr",
    "getTokenizer",
    "getRenderer",
    "conversationToDatum",
    "TinkerTokenCompleter",
    "withRun",
    "MetricsLogger",
  ] as const) {
    // biome-ignore lint/performance/noDynamicNamespaceImportAccess: the test checks the public exports by name
    assert.equal(typeof lib[name], "function", `${name} should be exported as a function`);
  }
  assert.equal(typeof lib.rl.computeAdvantages, "function");
  assert.equal(typeof lib.supervised.main, "function");
});

test("the library entry's helpers round-trip through the Tinker types", () => {
  const input = lib.modelInputFromInts([5, 6, 7]);
  assert.deepEqual(lib.modelInputToInts(input), [5, 6, 7]);
  const parsed = lib.parseTinkerPath("tinker://run-1/sampler_weights/final");
  assert.equal(parsed.kind, "sampler_weights");
  assert.equal(lib.formatTinkerPath(parsed), "tinker://run-1/sampler_weights/final");
});
