// Each screen's reducer on its own: pure state transitions, no Ink.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Key } from "ink";
import { keyPress, NO_KEY } from "../../src/tui/keys/keymap.ts";
import { EMA_WEIGHTS, stepEmaWeight } from "../../src/tui/core/dashboard.ts";
import { binRange, histogram } from "../../src/tui/core/histogram.ts";
import { configEntries } from "../../src/tui/core/runConfig.ts";
import { selectTranscripts } from "../../src/tui/core/transcripts.ts";
import { DEFAULT_CHAT_OPTIONS, setChatOption, stepChatOption } from "../../src/tui/ui/screens/checkpoints/chatOptions.ts";
import {
  SAMPLING,
  capturing,
  checkpointsReducer,
  confirmReady,
  initialCheckpoints,
  pendingMessage,
} from "../../src/tui/ui/screens/checkpoints/checkpointsState.ts";
import { chartKeys, dashboardReducer, initialDashboard } from "../../src/tui/ui/screens/dashboard/dashboardState.ts";
import { smoothingLabel } from "../../src/tui/ui/screens/dashboard/DashboardHeader.tsx";
import { dialogConfirmed, homeReducer, initialHome } from "../../src/tui/ui/screens/home/homeState.ts";
import { makeForm } from "../../src/tui/ui/screens/launch/launchForm.ts";
import { initialLaunch, launchReducer } from "../../src/tui/ui/screens/launch/launchState.ts";
import { shownIndex, timingReducer } from "../../src/tui/ui/screens/timing/timingState.ts";
import { backHandled, effectiveFilter, initialTranscripts, transcriptsReducer } from "../../src/tui/ui/screens/transcripts/transcriptsState.ts";
import { chatMessages } from "../../src/tui/services/sampler.ts";
import { z } from "zod";
import type { TranscriptRecord } from "../../src/runs/index.ts";

const k = keyPress;
const typeText = <S, A>(reduce: (s: S, a: A) => S, s: S, text: string, mk: (input: string, key: Key) => A): S =>
  [...text].reduce((acc, c) => reduce(acc, mk(c, NO_KEY)), s);

test("home: panes, cursors, filter typing and the delete dialog", () => {
  let s = initialHome(true);
  assert.equal(s.pane, "runs");
  s = homeReducer(s, { type: "move", cmd: "down", count: 3, page: 5 });
  s = homeReducer(s, { type: "move", cmd: "down", count: 3, page: 5 });
  s = homeReducer(s, { type: "move", cmd: "down", count: 3, page: 5 });
  assert.equal(s.runCursor, 2, "cursor stops at the last run");
  s = homeReducer(s, { type: "nextPane" });
  s = homeReducer(s, { type: "move", cmd: "bottom", count: 7, page: 5 });
  assert.deepEqual([s.pane, s.recipeCursor, s.runCursor], ["recipes", 6, 2]);
  s = homeReducer(s, { type: "startFilter" });
  s = typeText(homeReducer, s, "rl", (input, key) => ({ type: "type" as const, input, key }));
  assert.deepEqual([s.pane, s.filter, s.filtering, s.runCursor], ["runs", "rl", true, 0]);
  s = homeReducer(s, { type: "type", input: "", key: k({ return: true }) });
  assert.equal(s.filtering, false);
  assert.equal(homeReducer(s, { type: "clearFilter" }).filter, "");
  s = homeReducer(s, { type: "openDialog", dialog: { dir: "/r/x", name: "x", typed: "" } });
  assert.equal(dialogConfirmed(s.dialog), false);
  s = homeReducer(s, { type: "type", input: "x", key: NO_KEY });
  assert.equal(dialogConfirmed(s.dialog), true);
  assert.equal(s.filter, "rl", "typing in the dialog leaves the filter alone");
  const refused = homeReducer(homeReducer(s, { type: "openDialog", dialog: { dir: "/r/y", name: "y", typed: "", refusal: "live" } }), {
    type: "type",
    input: "y",
    key: NO_KEY,
  });
  assert.equal(dialogConfirmed(refused.dialog), false, "a refused dialog takes no text");
  assert.equal(homeReducer(s, { type: "type", input: "", key: k({ escape: true }) }).dialog, undefined);
});

test("launch: enter cycles options and the if-exists choice, edits text fields, esc cancels", () => {
  const schema = z.object({ lr: z.number().default(0.1), loss: z.enum(["a", "b"]).default("a"), log_path: z.string().default("/x") });
  const form = makeForm("r", schema, "/tmp/r");
  let s = launchReducer(initialLaunch, { type: "loaded", form });
  const lr = form.fields.find((f) => f.path === "lr")!;
  const loss = form.fields.find((f) => f.path === "loss")!;
  s = launchReducer(s, { type: "activate", row: { kind: "field", field: loss } });
  assert.equal(s.form!.values.loss, "b");
  s = launchReducer(s, { type: "activate", row: { kind: "ifExists" } });
  assert.equal(s.form!.ifExists, "resume");
  s = launchReducer(s, { type: "activate", row: { kind: "field", field: lr } });
  assert.equal(s.editing?.text, "0.1");
  s = launchReducer(s, { type: "type", input: "", key: k({ backspace: true }) });
  s = launchReducer(s, { type: "type", input: "5", key: NO_KEY });
  assert.equal(s.form!.values.lr, "0.1", "not committed while typing");
  const cancelled = launchReducer(s, { type: "type", input: "", key: k({ escape: true }) });
  assert.deepEqual([cancelled.editing, cancelled.form!.values.lr], [undefined, "0.1"]);
  s = launchReducer(s, { type: "type", input: "", key: k({ return: true }) });
  assert.deepEqual([s.editing, s.form!.values.lr], [undefined, "0.5"]);
  s = launchReducer(s, { type: "activate", row: { kind: "logPath" } });
  s = launchReducer(
    typeText(launchReducer, s, "-2", (input, key) => ({ type: "type" as const, input, key })),
    { type: "type", input: "", key: k({ return: true }) },
  );
  assert.equal(s.form!.logPath, "/tmp/r-2");
  assert.equal(launchReducer(s, { type: "failed", error: "boom" }).loadError, "boom");
});

test("dashboard: EMA weight steps within 0.6–0.99 and turns smoothing on; panes and picker", () => {
  assert.equal(stepEmaWeight(0.9, 1), 0.95);
  assert.equal(stepEmaWeight(0.9, -1), 0.85);
  assert.equal(stepEmaWeight(0.99, 1), 0.99);
  assert.equal(stepEmaWeight(0.6, -1), 0.6);
  assert.deepEqual([EMA_WEIGHTS[0], EMA_WEIGHTS.at(-1)], [0.6, 0.99]);
  let s = dashboardReducer(initialDashboard, { type: "emaStep", direction: 1 });
  assert.deepEqual([s.smooth, s.emaWeight], [true, 0.9], "the first press shows the current weight");
  s = dashboardReducer(s, { type: "emaStep", direction: 1 });
  assert.equal(smoothingLabel(s), "EMA 0.95");
  for (let i = 0; i < 10; i++) s = dashboardReducer(s, { type: "emaStep", direction: -1 });
  assert.equal(smoothingLabel(s), "EMA 0.60");
  assert.equal(smoothingLabel(dashboardReducer(s, { type: "toggleSmoothing" })), "raw");
  s = dashboardReducer(s, { type: "toggleConfig" });
  s = dashboardReducer(s, { type: "scrollConfig", by: 10, count: 4 });
  assert.deepEqual([s.showConfig, s.configScroll], [true, 3]);
  assert.equal(dashboardReducer(s, { type: "scrollConfig", by: -10, count: 4 }).configScroll, 0);
  s = dashboardReducer(s, { type: "toggleMetric", key: "loss", charted: true });
  s = dashboardReducer(s, { type: "toggleMetric", key: "time/x", charted: false });
  assert.deepEqual(chartKeys(s, ["loss", "lr"]), ["lr", "time/x"]);
  s = dashboardReducer(s, { type: "openPicker", kind: "overlay", typing: true, choices: ["/a", "/b"] });
  s = dashboardReducer(s, { type: "pickerType", input: "b", key: NO_KEY });
  assert.deepEqual([s.picker?.filter, s.picker?.choices], ["b", ["/a", "/b"]]);
  s = dashboardReducer(s, { type: "pickerType", input: "", key: k({ return: true }) });
  assert.equal(s.picker?.typing, false);
  assert.equal(dashboardReducer(s, { type: "closePicker" }).picker, undefined);
  s = dashboardReducer(s, { type: "cursor", direction: -1, rows: 10 });
  assert.equal(s.cursorIdx, 8);
  s = dashboardReducer(s, { type: "cursor", direction: 1, rows: 10 });
  assert.equal(s.cursorIdx, undefined, "moving onto the last row follows the latest again");
});

test("config pane entries: nested keys flattened in file order", () => {
  assert.deepEqual(configEntries({ model_name: "m", lr: 1e-4, lora: { rank: 8 }, tags: ["a"], base_url: null }), [
    ["model_name", "m"],
    ["lr", "0.0001"],
    ["lora.rank", "8"],
    ["tags", '["a"]'],
    ["base_url", "null"],
  ]);
  assert.deepEqual(configEntries(undefined), []);
});

test("transcripts: iterations, views, a histogram bin as filter, esc unwinds", () => {
  let s = initialTranscripts();
  s = transcriptsReducer(s, { type: "iteration", direction: -1, current: 2, count: 3 });
  assert.equal(s.iterIdx, 1);
  s = transcriptsReducer(s, { type: "iteration", direction: -1, current: 0, count: 3 });
  assert.equal(s.iterIdx, 1, "no iteration before the first");
  s = transcriptsReducer(s, { type: "toggleView", view: "histogram" });
  s = transcriptsReducer(s, { type: "move", cmd: "down", count: 5 });
  assert.deepEqual([s.binCursor, s.cursor], [1, 0], "j/k move the bin in the histogram");
  const rewards = [1, 0.25, 0.5, 1, 0, 0.25, 1, 0.75];
  const h = histogram(rewards, 5);
  s = transcriptsReducer(s, { type: "applyBin", bin: { label: "0.2..0.4", range: binRange(h, s.binCursor) } });
  assert.equal(s.view, "list");
  const records = rewards.map((r, i) => ({ group_idx: 0, traj_idx: i, total_reward: r, tags: [] }) as unknown as TranscriptRecord);
  assert.deepEqual(
    selectTranscripts(records, "index", effectiveFilter(s)).map((r) => r.total_reward),
    [0.25, 0.25],
  );
  const last = { ...s, bin: { label: "", range: binRange(h, 4) } };
  assert.deepEqual(
    selectTranscripts(records, "index", effectiveFilter(last)).map((r) => r.total_reward),
    [1, 1, 1],
    "the last bin holds its upper edge",
  );
  s = transcriptsReducer(s, { type: "startTyping" });
  s = typeText(transcriptsReducer, s, "tag:x", (input, key) => ({ type: "type" as const, input, key }));
  s = transcriptsReducer(s, { type: "type", input: "", key: k({ return: true }) });
  assert.deepEqual(effectiveFilter(s), { tag: "x", min: 0.2, below: h.edges[2] });
  s = transcriptsReducer(s, { type: "back" });
  assert.deepEqual([s.bin, s.filterText], [undefined, "tag:x"], "esc clears the bin first");
  s = transcriptsReducer(s, { type: "back" });
  assert.equal(backHandled(s), false);
  assert.equal(transcriptsReducer(s, { type: "sort" }).sort, "asc");
});

test("timing: h/l move between steps and the end follows the latest", () => {
  let s = timingReducer({}, { type: "left", last: 5 });
  assert.equal(shownIndex(s, 5), 4);
  s = timingReducer(timingReducer(s, { type: "left", last: 5 }), { type: "right", last: 5 });
  assert.equal(s.idx, 4);
  assert.equal(timingReducer(s, { type: "right", last: 5 }).idx, undefined);
  assert.equal(timingReducer({ idx: 0 }, { type: "left", last: 5 }).idx, 0);
});

test("checkpoints: confirm, chat messages, and the chat's sampling options", () => {
  let s = checkpointsReducer(initialCheckpoints, { type: "openConfirm", name: "000010" });
  assert.equal(capturing(s), true);
  s = typeText(checkpointsReducer, s, "000010", (input, key) => ({ type: "type" as const, input, key }));
  assert.equal(confirmReady(s), true);
  s = checkpointsReducer(s, { type: "type", input: "", key: k({ escape: true }) });
  assert.equal(s.confirm, undefined);

  s = checkpointsReducer(s, { type: "openChat", ckptName: "000010" });
  assert.equal(pendingMessage(s), undefined);
  s = typeText(checkpointsReducer, s, "hi", (input, key) => ({ type: "type" as const, input, key }));
  assert.equal(pendingMessage(s), "hi");
  s = checkpointsReducer(s, { type: "sent" });
  assert.deepEqual([s.chat?.input, s.chat?.status, s.chat?.history], ["", SAMPLING, [{ role: "user", content: "hi" }]]);
  s = checkpointsReducer(s, { type: "reply", text: "hello" });
  assert.equal(s.chat?.history.at(-1)?.content, "hello");

  s = checkpointsReducer(s, { type: "toggleFocus" });
  assert.equal(capturing(s), false, "the options list answers keymap keys");
  s = checkpointsReducer(s, { type: "stepOption", direction: 1 });
  assert.equal(s.options.temperature, 0.8);
  s = checkpointsReducer(s, { type: "move", cmd: "down", count: 0 });
  s = checkpointsReducer(s, { type: "stepOption", direction: -1 });
  assert.equal(s.options.topP, 0.95);
  s = checkpointsReducer(s, { type: "move", cmd: "bottom", count: 0 });
  s = checkpointsReducer(s, { type: "editOption" });
  assert.equal(capturing(s), true);
  s = typeText(checkpointsReducer, s, "Be brief.", (input, key) => ({ type: "type" as const, input, key }));
  s = checkpointsReducer(s, { type: "type", input: "", key: k({ return: true }) });
  assert.equal(s.options.systemPrompt, "Be brief.");
  s = checkpointsReducer(s, { type: "move", cmd: "top", count: 0 });
  s = checkpointsReducer(s, { type: "editOption" });
  s = checkpointsReducer(s, { type: "type", input: "u", key: k({ ctrl: true }) });
  s = checkpointsReducer(s, { type: "type", input: "3", key: NO_KEY });
  s = checkpointsReducer(s, { type: "type", input: "", key: k({ return: true }) });
  assert.match(s.chat?.status ?? "", /temperature: expected 0 to 2, got 3/);
  assert.equal(s.options.temperature, 0.8, "a refused value changes nothing");
  s = checkpointsReducer(s, { type: "closeChat" });
  s = checkpointsReducer(s, { type: "openChat", ckptName: "final" });
  assert.equal(s.options.systemPrompt, "Be brief.", "options outlive one chat");
});

test("chat options: steps clamp, typed values are checked, the system prompt leads the messages", () => {
  let o = DEFAULT_CHAT_OPTIONS;
  for (let i = 0; i < 30; i++) o = stepChatOption(o, "temperature", 1);
  assert.equal(o.temperature, 2);
  for (let i = 0; i < 20; i++) o = stepChatOption(o, "maxTokens", 1);
  assert.equal(o.maxTokens, 4096);
  assert.equal(stepChatOption({ ...o, maxTokens: 1 }, "maxTokens", -1).maxTokens, 1);
  assert.deepEqual(setChatOption(o, "maxTokens", "1.5"), { error: "max tokens: expected an integer from 1 to 4096, got 1.5" });
  assert.deepEqual(setChatOption(o, "topP", "0"), { error: "top-p: expected more than 0 and at most 1, got 0" });
  assert.equal((setChatOption(o, "topP", "0.9") as { topP: number }).topP, 0.9);
  assert.deepEqual(chatMessages([{ role: "user", content: "q" }], "sys"), [
    { role: "system", content: "sys" },
    { role: "user", content: "q" },
  ]);
  assert.deepEqual(chatMessages([{ role: "user", content: "q" }], " "), [{ role: "user", content: "q" }]);
});
