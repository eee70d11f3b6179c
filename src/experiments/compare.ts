// comparison.json as tables: a CSV (one row per model, one column per test set, full precision,
// for pandas or a spreadsheet) and a Markdown table (the best value of each test set in bold, as
// the batch prints it at the end).
import { join } from "node:path";
import { formatMetricValue } from "../eval/summary.ts";
import { writeFileAtomic } from "../files/durable.ts";
import { type Comparison, writeComparison } from "./state.ts";

type TestSet = Comparison["test_sets"][number];

/** The value of a model on a test set, or null (not evaluated or failed). */
export function comparisonValue(c: Comparison, model: string, testSet: string): number | null {
  return c.results.find((r) => r.model === model && r.test_set === testSet)?.value ?? null;
}

/** The best value of each test set (lowest NLL, highest accuracy); absent when no model has one. */
export function bestValues(c: Comparison): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of c.test_sets) {
    const values = c.models.map((m) => comparisonValue(c, m.name, t.name)).filter((v): v is number => v !== null);
    if (values.length > 0) out.set(t.name, t.higher_is_better ? Math.max(...values) : Math.min(...values));
  }
  return out;
}

export function isBest(c: Comparison, best: ReadonlyMap<string, number>, model: string, testSet: string): boolean {
  const v = comparisonValue(c, model, testSet);
  return v !== null && v === best.get(testSet);
}

/** `nll_persona_test (nll ↓)`: which way is better, in the header. */
export function testSetHeader(t: TestSet): string {
  return `${t.name} (${t.metric} ${t.higher_is_better ? "↑" : "↓"})`;
}

function csvCell(text: string): string {
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function comparisonCsv(c: Comparison): string {
  const header = ["model", "kind", "base_model", "checkpoint", ...c.test_sets.map((t) => `${t.name}/${t.metric}`)];
  const rows = c.models.map((m) => [
    m.name,
    m.kind,
    m.base_model,
    m.checkpoint ?? "",
    ...c.test_sets.map((t) => String(comparisonValue(c, m.name, t.name) ?? "")),
  ]);
  return `${[header, ...rows].map((r) => r.map(csvCell).join(",")).join("\n")}\n`;
}

export function comparisonMarkdown(c: Comparison): string {
  const best = bestValues(c);
  const header = ["model", ...c.test_sets.map(testSetHeader)];
  const rows = c.models.map((m) => [
    m.kind === "baseline" ? `${m.name} (untrained)` : m.name,
    ...c.test_sets.map((t) => {
      const v = comparisonValue(c, m.name, t.name);
      if (v === null) return "—";
      const text = formatMetricValue(t.metric, v);
      return isBest(c, best, m.name, t.name) ? `**${text}**` : text;
    }),
  ]);
  const lines = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)];
  const counts = c.test_sets.map((t) => {
    const ns = [...new Set(c.results.filter((r) => r.test_set === t.name && r.value !== null).map((r) => r.n))];
    return `${t.name}: ${ns.join("/") || "0"} examples`;
  });
  const failures = c.results.filter((r) => r.error !== undefined).map((r) => `- ${r.model} on ${r.test_set}: ${r.error}`);
  return [...lines, "", counts.join("; "), ...(failures.length > 0 ? ["", "Failed:", ...failures] : [])].join("\n") + "\n";
}

/** comparison.json, .csv and .md in the experiment's folder. */
export function writeComparisonFiles(dir: string, c: Comparison): void {
  writeComparison(dir, c);
  writeFileAtomic(join(dir, "comparison.csv"), comparisonCsv(c), { context: `comparison table of ${c.experiment}` });
  writeFileAtomic(join(dir, "comparison.md"), comparisonMarkdown(c), { context: `comparison table of ${c.experiment}` });
}
