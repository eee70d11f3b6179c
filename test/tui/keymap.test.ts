import { test } from "node:test";
import assert from "node:assert/strict";
import type { Key } from "ink";
import { keyPress, NO_KEY } from "../../src/tui/keys/keymap.ts";
import { appReducer, currentScreen, initialState } from "../../src/tui/state/app.ts";
import { splitKeys } from "../../src/tui/AppContainer.tsx";
import { editText, moveCursor, windowStart } from "../../src/tui/core/textEdit.ts";
import { KEYMAP, REGISTRY, SCREENS } from "../../src/tui/ui/screens/registry.ts";

const resolveCommand = (screen: string, input: string, key: Key): string | undefined => KEYMAP.resolve(screen, input, key);

const k = keyPress;

test("keys resolve per screen, screen bindings before shared ones", () => {
  assert.equal(resolveCommand("home", "q", NO_KEY), "quit");
  assert.equal(resolveCommand("home", "", k({ escape: true })), "back");
  assert.equal(resolveCommand("home", "j", NO_KEY), "down");
  assert.equal(resolveCommand("home", "", k({ downArrow: true })), "down");
  assert.equal(resolveCommand("dashboard", "h", NO_KEY), "cursorLeft");
  assert.equal(resolveCommand("transcripts", "h", NO_KEY), "prevIteration");
  assert.equal(resolveCommand("checkpoints", "", k({ return: true })), "chat");
  assert.equal(resolveCommand("dashboard", "", k({ return: true })), "open");
  assert.equal(resolveCommand("dashboard", "2", NO_KEY), "pane:transcripts");
  assert.deepEqual(REGISTRY.paneRoute("pane:transcripts", "/runs/a"), { name: "transcripts", runDir: "/runs/a" });
  // Only registered panes: a screen without a pane key is no pane command's target.
  assert.equal(REGISTRY.paneRoute("pane:evals", "/runs/a"), undefined);
  assert.equal(REGISTRY.paneRoute("back", "/runs/a"), undefined);
  assert.equal(resolveCommand("home", "2", NO_KEY), undefined);
  assert.equal(resolveCommand("launch", "s", k({ ctrl: true })), "submit");
  assert.equal(resolveCommand("home", "z", NO_KEY), undefined);
});

test("no two bindings share a key within the same scope", () => {
  assert.deepEqual(KEYMAP.clashes(), []);
  assert.deepEqual(
    SCREENS.map((s) => s.name),
    ["home", "launch", "dashboard", "transcripts", "timing", "checkpoints", "evals", "batch", "play"],
  );
});

test("while typing only in-text bindings resolve", () => {
  assert.equal(KEYMAP.resolve("checkpoints", "", k({ tab: true }), true), "chatFocus");
  assert.equal(KEYMAP.resolve("checkpoints", "q", NO_KEY, true), undefined);
  assert.equal(KEYMAP.resolve("checkpoints", "", k({ escape: true }), true), undefined);
  assert.equal(KEYMAP.resolve("checkpoints", "q", NO_KEY, false), "quit");
});

test("help and footer are rendered from the keymap", () => {
  const lines = KEYMAP.helpLines("dashboard").flatMap((s) => s.rows.map((r) => r[1]));
  for (const b of KEYMAP.bindingsFor("dashboard")) assert.ok(lines.includes(b.description), `missing ${b.id} in help`);
  assert.equal(lines.length, KEYMAP.bindingsFor("dashboard").length);
  assert.ok(
    lines.some((l) => l.startsWith("EMA weight up")),
    "EMA weight in help",
  );
  assert.ok(
    lines.some((l) => l.startsWith("Show or hide the run's config")),
    "config pane in help",
  );
  const footer = KEYMAP.footerHints("dashboard", 200);
  assert.ok(footer.includes("e smooth") && footer.includes("+/- EMA weight") && footer.includes("c config") && footer.includes("q quit"), footer);
  assert.ok(KEYMAP.footerHints("dashboard", 30).length <= 30);
  assert.deepEqual(KEYMAP.scopesFor("timing"), ["global", "list", "run", "timing"]);
  assert.ok(KEYMAP.footerHints("transcripts", 200).includes("b bin filter"));
  assert.ok(KEYMAP.footerHints("checkpoints", 200).includes("tab chat options"));
  const ckHelp = KEYMAP.helpLines("checkpoints").flatMap((s) => s.rows.map((r) => r[1]));
  assert.ok(
    ckHelp.some((l) => l.includes("temperature")),
    "chat options in help",
  );
});

test("app reducer: stack push/replace/pop, help, messages, overlays", () => {
  let s = initialState({ name: "dashboard", runDir: "/r" });
  assert.equal(s.stack.length, 2);
  s = appReducer(s, { type: "replace", screen: { name: "checkpoints", runDir: "/r" } });
  assert.deepEqual(currentScreen(s), { name: "checkpoints", runDir: "/r" });
  s = appReducer(s, { type: "pop" });
  s = appReducer(s, { type: "pop" });
  assert.equal(currentScreen(s).name, "home");
  s = appReducer(s, { type: "toggleHelp" });
  assert.equal(s.help, true);
  s = appReducer(s, { type: "push", screen: { name: "launch", recipe: "x" } });
  assert.equal(s.help, false);
  s = appReducer(s, { type: "message", kind: "error", text: "boom", at: 1 });
  assert.deepEqual(s.message, { kind: "error", text: "boom", at: 1 });
  s = appReducer(s, { type: "toggleOverlay", runDir: "/a" });
  s = appReducer(s, { type: "toggleOverlay", runDir: "/b" });
  s = appReducer(s, { type: "toggleOverlay", runDir: "/a" });
  assert.deepEqual(s.overlays, ["/b"]);
  assert.equal(appReducer(s, { type: "keyHandled" }).keySeq, s.keySeq + 1);
});

test("chunked input is split into single key presses", () => {
  const keys = splitKeys("jj\r\x15\x7f", NO_KEY);
  assert.deepEqual(
    keys.map(([i]) => i),
    ["j", "j", "", "u", ""],
  );
  assert.equal(keys[2][1].return, true);
  assert.equal(keys[3][1].ctrl, true);
  assert.equal(keys[4][1].backspace, true);
  assert.equal(splitKeys("", k({ upArrow: true })).length, 1);
});

test("text editing and cursor movement helpers", () => {
  assert.equal(editText("ab", "c", NO_KEY), "abc");
  assert.equal(editText("ab", "", k({ backspace: true })), "a");
  assert.equal(editText("ab", "u", k({ ctrl: true })), "");
  assert.equal(editText("ab", "", k({ return: true })), "ab");
  assert.equal(moveCursor("down", 4, 5), 4);
  assert.equal(moveCursor("up", 0, 5), 0);
  assert.equal(moveCursor("bottom", 0, 5), 4);
  assert.equal(moveCursor("open", 0, 5), undefined);
  assert.equal(windowStart(50, 100, 10), 45);
  assert.equal(windowStart(99, 100, 10), 90);
});
