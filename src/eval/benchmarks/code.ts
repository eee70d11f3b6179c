// Code benchmarks (docs/code-rl.md#benchmarks): MBPP, HumanEval and LiveCodeBench. A reply's last fenced code
// block runs against the problem's tests in the sandbox (src/grading/code.ts); an example is
// correct when every test passes, so accuracy is pass@1 (pass@k with num_samples > 1).
import { extractCodeBlock, gradeCode } from "../../grading/code.ts";
import { readHumanEval, readLiveCodeBench, readMbpp, solutionSource, testCount, testsOf, type CodeTask } from "../../grading/codeTasks.ts";
import type { AnswerGrade } from "../../grading/index.ts";
import type { HubOptions } from "../../hf/datasets.ts";
import { BenchmarkDataError, type EvalExample, type GenerationBenchmark } from "../benchmark.ts";

function codeBenchmark(name: string, description: string, loadTasks: (hub: HubOptions | undefined) => Promise<CodeTask[]>): GenerationBenchmark {
  // The tests stay here, keyed by example id: the eval store keeps only prompt and reference.
  const tasks = new Map<string, CodeTask>();
  return {
    kind: "generation",
    name,
    description,
    defaults: { max_tokens: 1024, temperature: 0.6 },
    async load(options = {}) {
      const loaded = await loadTasks(options.hub);
      return loaded.map((task): EvalExample => {
        tasks.set(task.id, task);
        const n = testCount(task);
        return {
          id: task.id,
          prompt: [{ role: "user", content: task.prompt }],
          reference: `${n} hidden test${n === 1 ? "" : "s"}`,
        };
      });
    },
    async grade(response, example): Promise<AnswerGrade> {
      const task = tasks.get(example.id);
      if (task === undefined) throw new BenchmarkDataError(`${name}: example ${JSON.stringify(example.id)} was not loaded by this benchmark`);
      const code = extractCodeBlock(response);
      if (code === null) return { correct: false, extracted: null };
      const result = await gradeCode(solutionSource(task, code), await testsOf(task), { setup: task.setup, testTimeoutSeconds: 6 });
      return { correct: result.allPassed, extracted: code };
    },
  };
}

/** `mbpp` (google-research-datasets/mbpp, config full, split test) or `mbpp:<hub id or local path>`. */
export function mbppBenchmark(source: string | null): GenerationBenchmark {
  const path = source ?? "google-research-datasets/mbpp";
  return codeBenchmark("mbpp", `MBPP (${path}, test split): Python functions checked by their asserts in the sandbox`, (hub) =>
    readMbpp("test", { path, hub }),
  );
}

/** `humaneval` (openai/openai_humaneval, split test) or `humaneval:<hub id or local path>`. */
export function humanEvalBenchmark(source: string | null): GenerationBenchmark {
  const path = source ?? "openai/openai_humaneval";
  return codeBenchmark("humaneval", `HumanEval (${path}): complete a Python function, checked by its check() in the sandbox`, (hub) =>
    readHumanEval({ path, hub }),
  );
}

/** `livecodebench` (livecodebench/code_generation_lite, split test) or `livecodebench:<hub id or local path>`. */
export function liveCodeBenchBenchmark(source: string | null): GenerationBenchmark {
  const path = source ?? "livecodebench/code_generation_lite";
  return codeBenchmark(
    "livecodebench",
    `LiveCodeBench code generation (${path}): stdin programs and LeetCode functions checked by public and private tests in the sandbox`,
    (hub) => readLiveCodeBench({ path, hub }),
  );
}
