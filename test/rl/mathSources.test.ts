// math_rl's hub sources (Hendrycks MATH minus MATH-500, MATH-500, DeepMath, Polaris) read from
// parquet files with the real datasets' columns in the hub's layout, and env=math's episodes:
// the cookbook's question suffix and few-shot turn, boxed-answer rewards.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HENDRYCKS_MATH_SUBJECTS, readDeepMath, readHendrycksMath, readMath500, readPolaris } from "../../src/rl/envs/qaSources.ts";
import { configSchema, environments } from "../../recipes/math_rl/index.ts";
import type { RLRecipeSetup } from "../../src/rl/recipeRuntime.ts";
import { modelInputToInts } from "../../src/tinker/modelInput.ts";
import { fakeRenderer } from "../eval/fakes.ts";
import { writeParquet } from "../eval/parquetFixtures.ts";

const tmp = (): string => mkdtempSync(join(tmpdir(), "math-src-"));

function mathFolders(): { math: string; math500: string } {
  const math = tmp();
  for (const subject of HENDRYCKS_MATH_SUBJECTS) {
    for (const split of ["train", "test"]) {
      const problems = [`${subject} ${split}: what is 2+2?`, `${subject} ${split}: what is 3+3?`];
      if (subject === "algebra" && split === "test") problems.push("Held out: what is 1/2 + 1/4?");
      writeParquet(join(math, subject, `${split}-00000-of-00001.parquet`), [
        { name: "problem", type: "string", data: problems },
        { name: "level", type: "string", data: problems.map(() => "Level 1") },
        { name: "type", type: "string", data: problems.map(() => subject) },
        {
          name: "solution",
          type: "string",
          data: problems.map((p) => (p.includes("2+2") ? "So $\\boxed{4}$." : p.includes("3+3") ? "$3+3=\\boxed{6}$" : "$\\boxed{\\frac34}$")),
        },
      ]);
    }
  }
  const math500 = join(tmp(), "test.parquet");
  writeParquet(math500, [
    { name: "problem", type: "string", data: ["Held out: what is 1/2 + 1/4?"] },
    { name: "solution", type: "string", data: ["$\\boxed{\\frac34}$"] },
    { name: "answer", type: "string", data: ["\\frac{3}{4}"] },
    { name: "subject", type: "string", data: ["Algebra"] },
    { name: "level", type: "int64", data: [1] },
    { name: "unique_id", type: "string", data: ["test/algebra/9.json"] },
  ]);
  return { math, math500 };
}

test("Hendrycks MATH: 7 subjects × train and test, answers from the boxed solution, MATH-500 problems removed", async () => {
  const { math, math500 } = mathFolders();
  const held = await readMath500({ path: math500 });
  assert.deepEqual(held, [{ question: "Held out: what is 1/2 + 1/4?", answer: "\\frac{3}{4}" }]);
  const train = await readHendrycksMath(held, { path: math });
  assert.equal(train.length, 7 * 2 * 2, "the held-out problem is not trained on");
  assert.deepEqual(train[0], { question: "algebra train: what is 2+2?", answer: "4" });
  assert.equal(train.find((p) => p.question.includes("3+3"))!.answer, "6");
});

test("DeepMath (question, final_answer) and Polaris (problem, answer); rows without an answer are skipped", async () => {
  const deep = join(tmp(), "data", "train-00000-of-00001.parquet");
  writeParquet(deep, [
    { name: "question", type: "string", data: ["Evaluate $\\int_0^1 2x\\,dx$.", "Empty answer row"] },
    { name: "final_answer", type: "string", data: ["1", ""] },
    { name: "difficulty", type: "string", data: ["5.0", "1.0"] },
    { name: "topic", type: "string", data: ["Calculus", "x"] },
    { name: "r1_solution_1", type: "string", data: ["...", "..."] },
  ]);
  assert.deepEqual(await readDeepMath({ path: deep }), [{ question: "Evaluate $\\int_0^1 2x\\,dx$.", answer: "1" }]);
  const polaris = join(tmp(), "train.parquet");
  writeParquet(polaris, [
    { name: "problem", type: "string", data: ["Find $x$ if $2x=6$."] },
    { name: "answer", type: "string", data: ["3"] },
    { name: "difficulty", type: "string", data: ["1/8"] },
  ]);
  assert.deepEqual(await readPolaris({ path: polaris }), [{ question: "Find $x$ if $2x=6$.", answer: "3" }]);
  await assert.rejects(readPolaris({ path: deep }), /no rows with a "problem"|column/);
});

test("math_rl env=math: the cookbook's suffix and few-shot, MATH-500 as test set, boxed answers rewarded", async () => {
  const { math, math500 } = mathFolders();
  const config = configSchema.parse({ env: "math", math_dataset: math, math500_dataset: math500, groups_per_batch: 4, group_size: 2, test_problems: 1 });
  const setup = { renderer: fakeRenderer } as unknown as RLRecipeSetup;
  const { train, test: testSet } = await (await environments(config, setup)).build();
  assert.equal(train.length, 7, "28 problems in batches of 4");
  assert.equal(testSet!.getBatch(0).length, 1);
  const [env] = await train.getBatch(0)[0]!.makeEnvs();
  const obs = await env!.initialObservation();
  assert.ok("observation" in obs);
  const prompt = String.fromCharCode(...modelInputToInts(obs.observation));
  assert.match(prompt, /How many r's are in strawberry\? Write your answer in \\boxed\{\} format\./);
  assert.match(prompt, /: what is \d\+\d\? Write your answer in \\boxed\{\} format\.\nassistant:$/);
  const right = prompt.includes("2+2?\u0020Write your answer in \\boxed{} format.\nassistant:") ? "4" : "6";
  const wrong = right === "4" ? "5" : "7";
  const reward = async (text: string) => (await env!.step([...text].map((c) => c.charCodeAt(0)))).reward;
  assert.equal(await reward(`It is \\boxed{${right}}`), 1);
  const [env2] = await train.getBatch(0)[0]!.makeEnvs();
  await env2!.initialObservation();
  assert.equal((await env2!.step([...`\\boxed{${wrong}}`].map((c) => c.charCodeAt(0)))).reward, 0);
  const [env3] = await train.getBatch(0)[0]!.makeEnvs();
  await env3!.initialObservation();
  assert.equal((await env3!.step([...right].map((c) => c.charCodeAt(0)))).reward, -config.format_coef, "no box: a format failure and no credit");
});
