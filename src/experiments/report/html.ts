// experiments/<experiment>/report.html: one self-contained page (inline CSS and SVG, no script, no
// network) with the runs and their state, the comparison table (best value of each test set
// highlighted), a bar chart per test set, and the training curves of every run overlaid per metric.
import { formatMetricValue } from "../../eval/summary.ts";
import type { MetricsRecord } from "../../log/metrics.ts";
import { MAIN_METRIC_KEYS } from "../../runs/discovery.ts";
import { bestValues, comparisonValue, isBest, testSetHeader } from "../compare.ts";
import type { BatchState, Comparison } from "../state.ts";
import { escapeHtml } from "../../log/transcripts/html.ts";
import { barChartSvg, lineChartSvg, type Series } from "./svg.ts";

export interface ReportInput {
  state: BatchState;
  comparison?: Comparison;
  /** metrics.jsonl rows of each run, by run name. */
  metrics: ReadonlyMap<string, readonly MetricsRecord[]>;
  description?: string;
  generatedAt: string;
}

/** Distinct on white and for most colour blindness (Okabe–Ito, then Tableau). */
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C564B", "#7F7F7F", "#BCBD22", "#17BECF", "#1F3A93", "#A0522D"];
const BASELINE_COLOURS = ["#9a9a9a", "#bdbdbd", "#7a7a7a", "#d0d0d0"];
/** Curves beyond this many metrics are left to the dashboard. */
const MAX_CURVES = 9;

export function runColours(names: readonly string[]): Map<string, string> {
  return new Map(names.map((n, i) => [n, PALETTE[i % PALETTE.length]!]));
}

const numeric = (r: MetricsRecord, k: string): number | undefined => (typeof r[k] === "number" && Number.isFinite(r[k]) ? (r[k] as number) : undefined);

/** The metrics worth a curve: the main ones (loss, reward, …), then held-out ones, learning rate last. */
export function curveMetrics(metrics: ReadonlyMap<string, readonly MetricsRecord[]>): string[] {
  const keys = new Set<string>();
  for (const rows of metrics.values()) for (const r of rows) for (const k of Object.keys(r)) if (k !== "step" && numeric(r, k) !== undefined) keys.add(k);
  const main = MAIN_METRIC_KEYS.filter((k) => k !== "learning_rate" && keys.has(k));
  const heldOut = [...keys].filter((k) => k.startsWith("test/") && !main.includes(k as never)).sort();
  const extra = ["teacher_kl", "env/all/ac_tokens_per_turn", "learning_rate"].filter((k) => keys.has(k));
  return [...new Set<string>([...main, ...heldOut, ...extra])].slice(0, MAX_CURVES);
}

const STATUS_COLOURS: Record<string, string> = { queued: "#777", running: "#0072B2", done: "#009E73", failed: "#D55E00", stopped: "#E69F00" };

function overridesText(overrides: Record<string, unknown>): string {
  return Object.entries(overrides)
    .map(
      ([k, v]) =>
        `<span class="chip">${escapeHtml(k)}=${escapeHtml(typeof v === "string" ? (v.includes("/") ? `…/${v.split("/").pop()}` : v) : JSON.stringify(v))}</span>`,
    )
    .join(" ");
}

function runsTable(input: ReportInput, colours: ReadonlyMap<string, string>): string {
  const rows = input.state.runs.map((r) => {
    const rows = input.metrics.get(r.name) ?? [];
    const key = r.key_metric ?? MAIN_METRIC_KEYS.find((k) => rows.some((row) => numeric(row, k) !== undefined));
    // Evaluation-only rows (the last step's test/nll) may lack the training metric: its last value.
    const value =
      key === undefined
        ? undefined
        : rows
            .map((row) => numeric(row, key))
            .filter((v) => v !== undefined)
            .pop();
    return `<tr><td><span class="swatch" style="background:${colours.get(r.name)}"></span>${escapeHtml(r.name)}</td><td>${escapeHtml(r.recipe)}</td><td><span class="status" style="background:${STATUS_COLOURS[r.status] ?? "#777"}">${r.status}</span>${r.error !== undefined ? `<div class="error">${escapeHtml(r.error)}</div>` : ""}</td><td class="num">${rows[rows.length - 1]?.step ?? "—"}</td><td>${key !== undefined && value !== undefined ? `${escapeHtml(key)} ${value.toPrecision(4)}` : "—"}</td><td class="overrides">${overridesText(r.overrides)}</td></tr>`;
  });
  return `<table class="runs"><thead><tr><th>run</th><th>recipe</th><th>status</th><th>last step</th><th>key metric</th><th>overrides</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function comparisonTable(c: Comparison): string {
  const best = bestValues(c);
  const head = `<tr><th>model</th>${c.test_sets.map((t) => `<th>${escapeHtml(testSetHeader(t))}</th>`).join("")}</tr>`;
  const rows = c.models.map((m) => {
    const cells = c.test_sets.map((t) => {
      const v = comparisonValue(c, m.name, t.name);
      const r = c.results.find((x) => x.model === m.name && x.test_set === t.name);
      const title = r?.error !== undefined ? ` title="${escapeHtml(r.error)}"` : r !== undefined ? ` title="${r.n} examples"` : "";
      return `<td class="num${isBest(c, best, m.name, t.name) ? " best" : ""}"${title}>${v === null ? "—" : escapeHtml(formatMetricValue(t.metric, v))}</td>`;
    });
    return `<tr class="${m.kind}"><td>${escapeHtml(m.name)}${m.kind === "baseline" ? ' <span class="tag">untrained</span>' : ""}</td>${cells.join("")}</tr>`;
  });
  return `<table class="comparison"><thead>${head}</thead><tbody>${rows.join("")}</tbody></table>`;
}

function barCharts(c: Comparison, colours: ReadonlyMap<string, string>): string {
  const best = bestValues(c);
  let baselineIndex = 0;
  const modelColour = new Map(
    c.models.map((m) => [m.name, m.kind === "baseline" ? BASELINE_COLOURS[baselineIndex++ % BASELINE_COLOURS.length]! : (colours.get(m.name) ?? PALETTE[0]!)]),
  );
  return c.test_sets
    .map((t) =>
      barChartSvg(
        t.name,
        c.models.map((m) => {
          const v = comparisonValue(c, m.name, t.name);
          return {
            label: m.name,
            value: v,
            colour: modelColour.get(m.name)!,
            best: isBest(c, best, m.name, t.name),
            text: v === null ? "—" : formatMetricValue(t.metric, v),
          };
        }),
        { note: `${t.metric}, ${t.higher_is_better ? "higher" : "lower"} is better` },
      ),
    )
    .join("");
}

function curves(input: ReportInput, colours: ReadonlyMap<string, string>): string {
  const keys = curveMetrics(input.metrics);
  if (keys.length === 0) return '<p class="empty">No training metrics yet.</p>';
  const legend = input.state.runs
    .map((r) => `<span class="legend-item"><span class="swatch" style="background:${colours.get(r.name)}"></span>${escapeHtml(r.name)}</span>`)
    .join("");
  const charts = keys.map((k) => {
    const series: Series[] = input.state.runs.map((r) => ({
      label: r.name,
      colour: colours.get(r.name)!,
      points: (input.metrics.get(r.name) ?? []).flatMap((row) => {
        const v = numeric(row, k);
        return v === undefined ? [] : [[row.step, v] as const];
      }),
    }));
    return lineChartSvg(k, series);
  });
  return `<div class="legend">${legend}</div><div class="grid">${charts.join("")}</div>`;
}

const CSS = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px 32px;color:#222;background:#fff;max-width:1400px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 10px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#666;font-size:13px}.desc{margin:6px 0 0;font-size:14px}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ddd;padding:5px 9px;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.best{background:#d9f2e3;font-weight:700;color:#0b5a2e}tr.baseline td:first-child{font-style:italic;color:#555}
.tag{font-size:11px;background:#eee;border-radius:3px;padding:1px 5px;font-style:normal}
.status{color:#fff;border-radius:3px;padding:1px 6px;font-size:12px}.error{color:#b33;font-size:12px;margin-top:3px;max-width:420px}
.chip{display:inline-block;background:#f0f4f8;border-radius:3px;padding:0 5px;margin:1px;font-size:12px;font-family:ui-monospace,monospace}
.swatch{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;vertical-align:-1px}
.legend{margin:0 0 8px;font-size:13px}.legend-item{margin-right:16px;white-space:nowrap}
.grid{display:flex;flex-wrap:wrap;gap:14px}.chart{border:1px solid #eee;border-radius:4px;background:#fff}
.empty{color:#777}
`;

export function renderReport(input: ReportInput): string {
  const { state, comparison } = input;
  const colours = runColours(state.runs.map((r) => r.name));
  const counts = ["done", "running", "queued", "stopped", "failed"]
    .map((s) => [s, state.runs.filter((r) => r.status === s).length] as const)
    .filter(([, n]) => n > 0);
  const sections = [
    `<h1>Experiment ${escapeHtml(state.experiment)}</h1>`,
    `<div class="meta">${escapeHtml(state.file)} · batch ${escapeHtml(state.phase)} · ${counts.map(([s, n]) => `${n} ${s}`).join(", ")} · report written ${escapeHtml(input.generatedAt)}</div>`,
    input.description !== undefined ? `<p class="desc">${escapeHtml(input.description)}</p>` : "",
    `<h2>Comparison</h2>`,
    comparison !== undefined && comparison.models.length > 0
      ? `${comparisonTable(comparison)}<p class="meta">Best value of each test set highlighted. Baselines are the base models, untrained. Evaluated ${escapeHtml(comparison.created_at)}.</p><h2>Test sets</h2><div class="grid">${barCharts(comparison, colours)}</div>`
      : '<p class="empty">Not evaluated yet: the comparison appears when the batch has evaluated its runs.</p>',
    `<h2>Training curves</h2>`,
    curves(input, colours),
    `<h2>Runs</h2>`,
    runsTable(input, colours),
  ];
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Experiment ${escapeHtml(state.experiment)}</title><style>${CSS}</style></head><body>${sections.join("\n")}</body></html>\n`;
}
