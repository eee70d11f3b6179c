// A self-contained HTML report of one RL iteration's first groups (docs/cookbook-parity.md#logtree-html): per group the
// prompt, a reward table over its trajectories, and per trajectory the role-coloured response
// and a turn-by-turn table. Everything user-derived is escaped.
import { mkdirSync } from "node:fs";
import { writeFileAtomic } from "../../files/durable.ts";
import { dirname, join } from "node:path";
import {
  messageSpeaker,
  messageText,
  modelInputTokenCount,
  splitConversation,
  textTokens,
  turnMessages,
  type Decode,
  type SummaryGroup,
  type TranscriptMessage,
  type TranscriptTrajectory,
} from "./types.ts";

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  // Rounding noise (e.g. an advantage of 1e-17) reads as 0, not "0.000".
  if (Math.abs(x) < 5e-10) return "0";
  if (Number.isInteger(x)) return String(x);
  return x.toFixed(3);
}

const CSS = `
:root { --bg:#f7f7f5; --card:#fff; --ink:#1f2328; --muted:#6a737d; --line:#e3e3df;
  --system:#8b8f96; --user:#2f6fde; --assistant:#1a8f4e; --tool:#b7791f; --other:#7c4dcc;
  --pos:#1a8f4e; --neg:#c93c37; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.5 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; background:var(--bg); color:var(--ink); }
header.page { padding:24px 32px 8px; }
header.page h1 { margin:0; font-size:22px; }
header.page .sub { color:var(--muted); }
main { padding:8px 32px 48px; max-width:1200px; }
section.group { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:16px 20px; margin:18px 0; overflow-x:auto; }
section.group h2 { margin:0 0 4px; font-size:17px; }
.meta { color:var(--muted); font-size:12px; margin-bottom:10px; }
.tag { display:inline-block; background:#eef1f5; border-radius:4px; padding:0 6px; margin-right:4px; font-size:12px; color:#3b4450; }
h3 { font-size:14px; margin:14px 0 6px; color:#3b4450; text-transform:uppercase; letter-spacing:.04em; }
.msg { border-left:4px solid var(--other); background:#fafafa; border-radius:6px; padding:6px 10px; margin:6px 0; }
.msg .role { font-weight:600; font-size:12px; text-transform:uppercase; color:var(--other); }
.msg pre, pre.text { margin:4px 0 0; white-space:pre-wrap; word-break:break-word; font:13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.role-system { border-color:var(--system); } .role-system .role { color:var(--system); }
.role-user { border-color:var(--user); } .role-user .role { color:var(--user); }
.role-assistant { border-color:var(--assistant); background:#f4fbf7; } .role-assistant .role { color:var(--assistant); }
.role-tool { border-color:var(--tool); } .role-tool .role { color:var(--tool); }
table { border-collapse:collapse; margin:6px 0; font-size:13px; }
th, td { border-bottom:1px solid var(--line); padding:4px 10px; text-align:left; vertical-align:top; }
th { background:#f2f3f1; font-weight:600; }
td.num { text-align:right; font-variant-numeric:tabular-nums; }
.pos { color:var(--pos); } .neg { color:var(--neg); }
details.traj { border:1px solid var(--line); border-radius:8px; padding:6px 12px; margin:8px 0; }
details.traj > summary { cursor:pointer; font-weight:600; }
details.long > summary { cursor:pointer; color:var(--muted); }
.empty { color:var(--muted); font-style:italic; }
.turn-reward { font-size:12px; color:var(--muted); margin:2px 0 10px 12px; border-left:3px solid var(--line); padding-left:8px; }
caption { caption-side:top; text-align:left; font-weight:600; font-size:12px; color:#3b4450; padding:0 0 4px; text-transform:uppercase; letter-spacing:.04em; }
.kv { display:flex; flex-wrap:wrap; gap:8px 28px; align-items:flex-start; margin-top:8px; }
.stats { display:flex; flex-wrap:wrap; gap:12px; margin:12px 0 4px; }
.stat { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:8px 14px; min-width:120px; }
.stat .v { font-size:20px; font-weight:600; font-variant-numeric:tabular-nums; }
.stat .k { color:var(--muted); font-size:12px; }
td.preview { font:12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; max-width:260px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; color:#3b4450; }
`;

function roleClass(role: string): string {
  return ["system", "user", "assistant", "tool"].includes(role) ? `role-${role}` : "role-other";
}

function renderMessages(messages: readonly TranscriptMessage[]): string {
  if (messages.length === 0) return `<p class="empty">(no messages)</p>`;
  return messages
    .map((m) => `<div class="msg ${roleClass(m.role)}"><div class="role">${escapeHtml(messageSpeaker(m))}</div><pre>${escapeHtml(messageText(m))}</pre></div>`)
    .join("\n");
}

/** A multi-turn episode as one conversation: each turn's messages, then the reward it earned. */
function renderTurns(traj: TranscriptTrajectory, turns: readonly (readonly TranscriptMessage[])[]): string {
  return turns
    .map((messages, k) => {
      const t = traj.transitions[k]!;
      const reward = `<div class="turn-reward">turn ${k + 1}: reward <span class="${t.reward > 5e-10 ? "pos" : t.reward < -5e-10 ? "neg" : ""}">${escapeHtml(fmt(t.reward))}</span>${t.episodeDone ? " · episode done" : ""}</div>`;
      return `${messages.length > 0 ? renderMessages(messages) : ""}\n${reward}`;
    })
    .join("\n");
}

function renderText(text: string | null): string {
  return text === null ? `<p class="empty">(not available: no messages and no tokenizer)</p>` : `<pre class="text">${escapeHtml(text)}</pre>`;
}

function signed(x: number): string {
  const cls = x > 5e-10 ? "pos" : x < -5e-10 ? "neg" : "";
  return `<td class="num ${cls}">${escapeHtml(fmt(x))}</td>`;
}

function renderKeyValues(values: Record<string, string | number | boolean>, caption: string): string {
  const entries = Object.entries(values);
  if (entries.length === 0) return "";
  const rows = entries
    .map(([k, v]) => {
      const text = typeof v === "number" ? fmt(v) : String(v);
      const cell =
        text.length > 120 || text.includes("\n")
          ? `<details class="long"><summary>${escapeHtml(text.slice(0, 60))}…</summary><pre class="text">${escapeHtml(text)}</pre></details>`
          : escapeHtml(text);
      return `<tr><th>${escapeHtml(k)}</th><td>${cell}</td></tr>`;
    })
    .join("");
  return `<table><caption>${escapeHtml(caption)}</caption>${rows}</table>`;
}

function renderTrajectory(traj: TranscriptTrajectory, idx: number, total: number, finalReward: number, advantage: number | undefined, decode?: Decode): string {
  const conv = splitConversation(traj);
  const turns = traj.transitions.length > 1 ? turnMessages(traj) : undefined;
  let response: string;
  if (turns !== undefined) response = renderTurns(traj, turns);
  else if (conv !== null) response = renderMessages(conv.response);
  else if (decode !== undefined) response = traj.transitions.map((t) => renderText(decode(t.ac.tokens))).join("\n");
  else response = renderText(null);
  const turnRows = traj.transitions
    .map((t, k) => {
      const metrics = Object.entries(t.metrics)
        .map(([m, v]) => `${escapeHtml(m)}=${escapeHtml(fmt(v))}`)
        .join(", ");
      return `<tr><td class="num">${k + 1}</td><td class="num">${modelInputTokenCount(t.ob)}</td><td class="num">${t.ac.tokens.length}</td>${signed(t.reward)}<td>${t.episodeDone ? "yes" : "no"}</td><td>${metrics}</td></tr>`;
    })
    .join("");
  const logs = traj.transitions.map((t, k) => renderKeyValues(t.logs, `Turn ${k + 1} diagnostics`)).join("");
  const adv = advantage === undefined ? "" : `, advantage ${escapeHtml(fmt(advantage))}`;
  return `<details class="traj"${idx === 0 ? " open" : ""}><summary>Trajectory ${idx} — total reward ${escapeHtml(fmt(total))}${adv}</summary>
<h3>${turns !== undefined ? "Conversation (each turn's reward after it)" : "Response"}</h3>
${response}
<h3>Turns</h3>
<table><tr><th>turn</th><th>ob_len</th><th>ac_len</th><th>step reward</th><th>done</th><th>metrics</th></tr>${turnRows}</table>
<div class="kv"><table><caption>Episode totals</caption><tr><th>num_turns</th><td class="num">${traj.transitions.length}</td></tr><tr><th>final_ob_len</th><td class="num">${modelInputTokenCount(traj.finalOb)}</td></tr><tr><th>sum_step_rewards</th>${signed(total - finalReward)}</tr><tr><th>final_group_reward</th>${signed(finalReward)}</tr><tr><th>total_return</th>${signed(total)}</tr></table>
${logs}</div>
</details>`;
}

/** One line of what the policy said (its turns joined), for the rewards table. */
function responsePreview(traj: TranscriptTrajectory, decode?: Decode): string {
  const conv = splitConversation(traj);
  let text: string;
  // The policy's turns: everything the env did not write (multi-turn envs may label earlier turns "player").
  if (conv !== null)
    text = conv.response
      .filter((m) => !["user", "system", "tool"].includes(m.role))
      .map(messageText)
      .join(" | ");
  else if (decode !== undefined) text = traj.transitions.map((t) => decode(t.ac.tokens)).join(" | ");
  else return "";
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function renderGroup(g: SummaryGroup, groupIdx: number, decode?: Decode): string {
  const tg = g.trajectoryGroup;
  const totals = tg.getTotalRewards();
  const first = tg.trajectoriesG[0];
  let prompt = renderText(null);
  if (first !== undefined) {
    const conv = splitConversation(first);
    if (conv !== null) prompt = renderMessages(conv.prompt);
    else if (decode !== undefined && first.transitions.length > 0) prompt = renderText(decode(textTokens(first.transitions[0].ob)));
  }
  const metricKeys = [
    ...new Set(tg.trajectoriesG.flatMap((t) => t.transitions.flatMap((tr) => Object.keys(tr.metrics))).concat(tg.metricsG.flatMap((m) => Object.keys(m)))),
  ].sort();
  const header = `<tr><th>traj</th><th>total reward</th><th>group reward</th>${g.advantagesG ? "<th>advantage</th>" : ""}<th>turns</th><th>ac tokens</th><th>stop</th><th>response</th>${metricKeys.map((k) => `<th>${escapeHtml(k)}</th>`).join("")}</tr>`;
  const rows = tg.trajectoriesG
    .map((traj, i) => {
      const merged: Record<string, number> = {};
      for (const tr of traj.transitions) Object.assign(merged, tr.metrics);
      Object.assign(merged, tg.metricsG[i]);
      const acTokens = traj.transitions.reduce((s, t) => s + t.ac.tokens.length, 0);
      const metricCells = metricKeys.map((k) => (k in merged ? `<td class="num">${escapeHtml(fmt(merged[k]))}</td>` : "<td></td>")).join("");
      const adv = g.advantagesG ? signed(g.advantagesG[i]) : "";
      return `<tr><td class="num">${i}</td>${signed(totals[i])}${signed(tg.finalRewardsG[i])}${adv}<td class="num">${traj.transitions.length}</td><td class="num">${acTokens}</td><td>${escapeHtml(traj.stopReason ?? "")}</td><td class="preview">${escapeHtml(responsePreview(traj, decode))}</td>${metricCells}</tr>`;
    })
    .join("");
  const tags = g.tags.map((t) => `<span class="tag">${escapeHtml(t)}</span>`).join("");
  const step = g.samplingClientStep === null ? "" : ` · sampler step ${g.samplingClientStep}`;
  return `<section class="group" id="group-${groupIdx}">
<h2>Group ${groupIdx}</h2>
<div class="meta">${tags}${tg.trajectoriesG.length} trajectories${step}</div>
<h3>Prompt</h3>
${prompt}
<h3>Rewards</h3>
<table>${header}${rows}</table>
${tg.trajectoriesG.map((traj, i) => renderTrajectory(traj, i, totals[i], tg.finalRewardsG[i], g.advantagesG?.[i], decode)).join("\n")}
</section>`;
}

export interface RolloutHtmlArgs {
  title: string;
  groups: readonly SummaryGroup[];
  /** Only the first `maxGroups` groups are rendered. */
  maxGroups?: number;
  decode?: Decode;
  generatedAt?: Date;
  explanation?: string;
}

/** Headline numbers over every group of the iteration (not only the rendered ones). */
function renderStats(groups: readonly SummaryGroup[]): string {
  const totals = groups.flatMap((g) => g.trajectoryGroup.getTotalRewards());
  if (totals.length === 0) return "";
  const mean = totals.reduce((a, b) => a + b, 0) / totals.length;
  const mixed = groups.filter((g) => new Set(g.trajectoryGroup.getTotalRewards()).size > 1).length;
  const turns = groups.flatMap((g) => g.trajectoryGroup.trajectoriesG.map((t) => t.transitions.length));
  const stat = (v: string, k: string) => `<div class="stat"><div class="v">${escapeHtml(v)}</div><div class="k">${escapeHtml(k)}</div></div>`;
  return `<div class="stats">${[
    stat(fmt(mean), "mean total reward"),
    stat(`${fmt(Math.min(...totals))} … ${fmt(Math.max(...totals))}`, "reward range"),
    stat(String(groups.length), "groups"),
    stat(String(totals.length), "trajectories"),
    stat(`${mixed} / ${groups.length}`, "groups with reward spread"),
    stat(fmt(turns.reduce((a, b) => a + b, 0) / turns.length), "turns per episode"),
  ].join("")}</div>`;
}

export function renderRolloutHtml(args: RolloutHtmlArgs): string {
  const shown = args.groups.slice(0, args.maxGroups ?? args.groups.length);
  const when = (args.generatedAt ?? new Date()).toISOString();
  const explanation =
    args.explanation ??
    `Rollouts and rewards of the first ${shown.length} of ${args.groups.length} trajectory groups of this iteration. Advantages are each trajectory's total reward minus its group's mean.`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(args.title)}</title><style>${CSS}</style></head>
<body><header class="page"><h1>${escapeHtml(args.title)}</h1><div class="sub">Generated ${escapeHtml(when)}</div><p>${escapeHtml(explanation)}</p>${renderStats(args.groups)}</header>
<main>
${shown.map((g, i) => renderGroup(g, i, args.decode)).join("\n")}
</main></body></html>
`;
}

export function writeRolloutHtml(path: string, args: RolloutHtmlArgs): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomic(path, renderRolloutHtml(args), { fsync: false, context: "rollout report" });
  return path;
}

export function iterationHtmlPath(iterDir: string, baseName: string): string {
  return join(iterDir, `${baseName}.html`);
}
