// Child process for the kill-and-resume test: evaluates the fake model on arithmetic, slowly,
// into the eval store named on the command line, until the parent kills it.
import { EvalStore } from "../../src/eval/store.ts";
import { evaluateModel } from "../../src/eval/session.ts";
import { FakeSampler, fakeRenderer, fakeService } from "./fakes.ts";

const [storeDir, maxExamples] = process.argv.slice(2);
await evaluateModel({
  model: "fake-model",
  benchmarks: ["arithmetic"],
  overrides: { max_examples: Number(maxExamples), concurrency: 2 },
  service: fakeService(new FakeSampler({ delayMs: 40 })),
  store: new EvalStore(storeDir!),
  renderer: fakeRenderer,
});
