import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { frameRows } from "../../src/tui/App.tsx";
import { makeBatch, makeComparison } from "./batchFixtures.ts";
import { appendMetrics, makeRlRun, makeSlRun, tempRoot } from "./fixtures.ts";
import { renderApp } from "./harness.tsx";

const ESC = "\x1b";

function assertFits(frame: string, rows: number, columns: number): void {
  const lines = frame.split("\n");
  assert.ok(lines.length <= frameRows(rows) && lines.length < rows, `frame has ${lines.length} lines for ${rows} rows`);
  for (const l of lines) assert.ok(l.length <= columns, `line wider than ${columns}: ${l}`);
}

test("home lists recipes and runs with status, recipe, step and key metric", async () => {
  const root = tempRoot();
  makeSlRun(root);
  makeRlRun(root);
  const h = renderApp(root);
  try {
    const f = await h.waitFor((f) => f.includes("Runs (2)"), "runs table");
    assert.match(f, /example_line_fit\s+Toy example/);
    assert.match(f, /completed\s+sl-run\s+sl_basic\s+tiny-chat\s+29\s+train_mean_nll=/);
    assert.match(f, /stopped\s+rl-run\s+rl_basic/);
    assert.ok(f.includes("embedded"));
    assert.ok(f.includes("q quit"));
    assertFits(f, 30, 100);
    await h.press("/");
    await h.waitFor((f) => f.includes("/ ▏"), "filter input open");
    await h.press("rl-");
    const filtered = await h.waitFor((f) => f.includes("Runs (1 of 2"), "filtered runs");
    assert.ok(!filtered.includes("sl-run"));
  } finally {
    h.unmount();
  }
});

test("delete asks to type the run name and then removes the directory", async () => {
  const root = tempRoot();
  const dir = makeSlRun(root, "old-run");
  const h = renderApp(root);
  try {
    await h.waitFor((f) => f.includes("old-run"), "run listed");
    await h.press("D");
    await h.waitFor((f) => f.includes("Type old-run to confirm"), "confirmation");
    await h.press("old-ru");
    await h.press("\r");
    assert.ok(existsSync(dir), "deleted before the name was typed in full");
    await h.press("n");
    await h.waitFor((f) => f.includes("enter deletes"), "match hint");
    await h.press("\r");
    await h.waitFor((f) => f.includes("deleted"), "deleted message");
    assert.ok(!existsSync(dir));
  } finally {
    h.unmount();
  }
});

test("supervised dashboard charts train_mean_nll, test/nll and learning_rate with progress", async () => {
  const root = tempRoot();
  const dir = makeSlRun(root);
  makeRlRun(root);
  const h = renderApp(root, { first: { name: "dashboard", runDir: dir }, rows: 40, columns: 100 });
  try {
    const f = await h.waitFor((f) => f.includes("train_mean_nll  last"), "chart titles");
    assert.ok(f.includes("test/nll  last"));
    assert.ok(f.includes("learning_rate  last"));
    assert.match(f, /step 29\s+\[█+\] 100%/);
    assert.ok(f.includes("┤"), "chart axis drawn");
    assert.ok(f.includes("step 29 done"), "log pane tails logs.log");
    assertFits(f, 40, 100);
    await h.press("e");
    await h.waitFor((f) => f.includes("(EMA)"), "smoothing on");
    await h.press("x");
    await h.waitFor((f) => f.includes("x:time"), "time axis");
    await h.press("o");
    await h.waitFor((f) => f.includes("overlay runs (enter toggles") && f.includes("rl-run"), "overlay picker");
    await h.press("\r");
    await h.press("\x1b");
    await h.waitFor((f) => f.includes("overlay: rl-run"), "overlaid run in the header");
  } finally {
    h.unmount();
  }
});

test("dashboard follows appended metrics and the metric picker adds a chart", async () => {
  const root = tempRoot();
  const dir = makeSlRun(root, "sl-live", 5);
  const h = renderApp(root, { first: { name: "dashboard", runDir: dir }, rows: 50 });
  try {
    await h.waitFor((f) => f.includes("step 4"), "initial step");
    appendMetrics(dir, [{ step: 5, train_mean_nll: 0.1, learning_rate: 1e-4, progress: 0.6 }]);
    await h.waitFor((f) => f.includes("step 5"), "appended step");
    await h.press("m");
    await h.waitFor((f) => f.includes("metrics (enter toggles"), "picker");
    await h.press("/");
    await h.waitFor((f) => f.includes("esc closes): ▏"), "picker filter open");
    await h.press("forward");
    await h.waitFor((f) => f.includes("esc closes): forward▏"), "picker filter typed");
    await h.press("\r");
    await h.waitFor((f) => f.includes("esc closes): forward") && !f.includes("forward▏"), "picker filter closed");
    await h.press("\r");
    await h.waitFor((f) => f.includes("time/forward_backward  last"), "picked chart");
  } finally {
    h.unmount();
  }
});

test("RL dashboard shows the RL metrics, and t jumps to that step's transcripts", async () => {
  const root = tempRoot();
  const dir = makeRlRun(root);
  const h = renderApp(root, { first: { name: "dashboard", runDir: dir }, rows: 60, columns: 100 });
  try {
    const f = await h.waitFor((f) => f.includes("env/all/reward/total  last"), "rl charts");
    for (const k of ["optim/kl_sample_train_v1", "optim/entropy", "env/all/ac_tokens_per_turn"]) assert.ok(f.includes(`${k}  last`), k);
    await h.press("h");
    await h.waitFor((f) => f.includes("cursor step 1"), "step cursor");
    await h.press("t");
    const t = await h.waitFor((f) => f.includes("Transcripts  iteration 1"), "transcripts at step 1");
    assert.ok(t.includes("8/8 trajectories"));
  } finally {
    h.unmount();
  }
});

test("transcripts: sorted by reward, full text with rewards, filter, group view and histogram", async () => {
  const root = tempRoot();
  const dir = makeRlRun(root);
  const h = renderApp(root, { first: { name: "transcripts", runDir: dir }, columns: 100, rows: 30 });
  try {
    const f = await h.waitFor((f) => f.includes("iteration 2 (3/3)"), "latest iteration");
    assert.match(f, /g0\/t0\s+1\s/);
    assert.ok(f.includes("user:") && f.includes("What is 0+0?"));
    assert.ok(f.includes("assistant:") && f.includes("The answer is 0"));
    assert.ok(f.includes("advantage"));
    assertFits(f, 30, 100);
    await h.press("/");
    await h.waitFor((f) => f.includes("filter: ▏"), "transcript filter open");
    await h.press("tag:chat\r");
    await h.waitFor((f) => f.includes("4/8 trajectories"), "tag filter");
    await h.press("w");
    await h.waitFor((f) => /group 1: 4 trajectories/.test(f), "group view");
    await h.press("H");
    await h.waitFor((f) => f.includes("reward histogram (8 trajectories)"), "histogram");
    await h.press(ESC);
    await h.press("h");
    await h.waitFor((f) => f.includes("iteration 1 (2/3)"), "previous iteration");
  } finally {
    h.unmount();
  }
});

test("supervised transcripts show the logged training examples", async () => {
  const root = tempRoot();
  const dir = makeSlRun(root);
  const h = renderApp(root, { first: { name: "transcripts", runDir: dir } });
  try {
    const f = await h.waitFor((f) => f.includes("Training examples"), "examples");
    assert.ok(f.includes("Assistant: hello"));
  } finally {
    h.unmount();
  }
});

test("timing shows the time/* bars of a step", async () => {
  const root = tempRoot();
  const dir = makeSlRun(root);
  const h = renderApp(root, { first: { name: "timing", runDir: dir } });
  try {
    const f = await h.waitFor((f) => f.includes("Timing  step 29"), "timing");
    assert.match(f, /forward_backward\s+█+\s+0\.300s 60%/);
    assert.match(f, /save_checkpoint\s+█*\s+0\.050s 10% ×1/);
    await h.press("h");
    await h.waitFor((f) => f.includes("Timing  step 28"), "previous step");
  } finally {
    h.unmount();
  }
});

test("checkpoints list, copy path through OSC 52, chat and delete dialogs", async () => {
  const root = tempRoot();
  const dir = makeSlRun(root);
  const h = renderApp(root, { first: { name: "checkpoints", runDir: dir } });
  try {
    const f = await h.waitFor((f) => f.includes("2 in checkpoints.jsonl"), "list");
    assert.match(f, /000010\s+10\s+0\s+periodic tinker:\/\/sl\/weights\/000010/);
    assert.match(f, /final\s+30\s+1\s+final/);
    await h.press("y");
    await h.waitFor((f) => f.includes("copied tinker://sl/weights/000010"), "copied");
    assert.ok(h.written.some((w) => w.includes("\x1b]52;c;") && w.includes(Buffer.from("tinker://sl/weights/000010").toString("base64"))));
    await h.press("C");
    await h.waitFor((f) => /not running|not a run/.test(f), "checkpoint refused for a finished run");
    await h.press("d");
    await h.waitFor((f) => f.includes("Type 000010 to confirm"), "delete dialog");
    await h.press(ESC);
    await h.press("\r");
    await h.waitFor((f) => f.includes("chat with 000010"), "chat box");
    await h.press(ESC);
  } finally {
    h.unmount();
  }
});

test("help overlay lists the keymap; number keys switch a run's panes", async () => {
  const root = tempRoot();
  const dir = makeRlRun(root);
  const h = renderApp(root, { first: { name: "dashboard", runDir: dir }, rows: 24 });
  try {
    await h.waitFor((f) => f.includes("rl-run"), "dashboard");
    await h.press("?");
    const help = await h.waitFor((f) => f.includes("Keys — dashboard"), "help");
    assert.ok(help.includes("Toggle EMA smoothing"));
    assertFits(help, 24, 100);
    await h.press("?");
    await h.press("4");
    await h.waitFor((f) => f.includes("Checkpoints  1 in checkpoints.jsonl"), "checkpoints pane");
    await h.press("3");
    await h.waitFor((f) => f.includes("Timing  step 2"), "timing pane");
    await h.press(ESC);
    await h.waitFor((f) => f.includes("Recipes"), "back home");
  } finally {
    h.unmount();
  }
});

test("flicker guard: every screen stays shorter than the terminal at several sizes", async () => {
  const root = tempRoot();
  const sl = makeSlRun(root);
  const rl = makeRlRun(root);
  const batch = makeBatch(join(root, "experiments"), "grid", [
    { name: "run-a", status: "done", steps: 20 },
    { name: "run-b", status: "failed", steps: 3, error: "out of memory" },
    { name: "run-c", status: "queued" },
  ]);
  makeComparison(batch, "grid");
  for (const [columns, rows] of [
    [100, 14],
    [80, 24],
    [100, 45],
  ] as const) {
    for (const first of [
      undefined,
      { name: "dashboard" as const, runDir: sl },
      { name: "dashboard" as const, runDir: rl },
      { name: "transcripts" as const, runDir: rl },
      { name: "checkpoints" as const, runDir: sl },
      { name: "timing" as const, runDir: rl },
      { name: "launch" as const, recipe: "example_line_fit" },
      { name: "batch" as const },
      { name: "batch" as const, place: { open: batch } },
    ]) {
      const h = renderApp(root, { first, columns, rows });
      try {
        const f = await h.waitFor((f) => f.includes("? help") && !f.includes("loading"), `${first?.name ?? "home"} at ${columns}x${rows}`);
        assertFits(f, rows, columns);
      } finally {
        h.unmount();
      }
    }
  }
});

test("dashboard: +/- set the EMA weight shown in the header; c opens the run's config beside the charts", async () => {
  const root = tempRoot();
  const dir = makeSlRun(root);
  const h = renderApp(root, { first: { name: "dashboard", runDir: dir }, rows: 40, columns: 120 });
  try {
    await h.waitFor((f) => f.includes("train_mean_nll  last") && f.includes(" raw"), "raw dashboard");
    assert.ok(h.frame().includes("+/- EMA weight"), "footer hint");
    await h.press("+");
    await h.waitFor((f) => f.includes("EMA 0.90") && f.includes("(EMA)"), "smoothing on at 0.90");
    await h.press("+");
    await h.waitFor((f) => f.includes("EMA 0.95"), "weight up");
    await h.press("---");
    await h.waitFor((f) => f.includes("EMA 0.80"), "weight down");
    await h.press("c");
    const f = await h.waitFor((f) => f.includes("config.json (3)"), "config pane");
    assert.match(f, /model_name\s*=tiny-chat/);
    assert.match(f, /learning_rate\s*=0\.001/);
    assertFits(f, 40, 120);
    await h.press("c");
    await h.waitFor((f) => !f.includes("config.json (3)"), "config pane closed");
  } finally {
    h.unmount();
  }
});

test("transcripts: a reward bin picked in the histogram filters the list; esc clears it", async () => {
  const root = tempRoot();
  const dir = makeRlRun(root);
  const h = renderApp(root, { first: { name: "transcripts", runDir: dir }, columns: 100, rows: 30 });
  try {
    await h.waitFor((f) => f.includes("8/8 trajectories"), "all trajectories");
    await h.press("H");
    await h.waitFor((f) => f.includes("reward histogram (8 trajectories)") && f.includes("› "), "histogram with a selected bin");
    await h.press("j");
    await h.waitFor((f) => /› 0\.2\.\.0\.4 .* 2/.test(f), "second bin selected");
    await h.press("b");
    const f = await h.waitFor((f) => f.includes("2/8 trajectories") && f.includes("bin 0.2..0.4"), "bin filter");
    assert.match(f, /g\d\/t1\s+0\.25/);
    await h.press(ESC);
    await h.waitFor((f) => f.includes("8/8 trajectories") && !f.includes("bin 0.2"), "bin cleared");
    await h.press("H");
    await h.press("G");
    await h.press("\r");
    await h.waitFor((f) => f.includes("3/8 trajectories") && f.includes("bin 0.8..1"), "last bin through enter");
  } finally {
    h.unmount();
  }
});

test("checkpoint chat: tab focuses the sampling options, +/- and enter change them", async () => {
  const root = tempRoot();
  const dir = makeSlRun(root);
  const h = renderApp(root, { first: { name: "checkpoints", runDir: dir }, rows: 36 });
  try {
    await h.waitFor((f) => f.includes("2 in checkpoints.jsonl"), "list");
    await h.press("\r");
    await h.waitFor((f) => f.includes("chat with 000010") && f.includes("temperature 0.7 · top-p 1 · max tokens 128"), "chat with options line");
    await h.press("hi");
    await h.waitFor((f) => f.includes("> hi▏"), "typed message");
    await h.press("\t");
    await h.waitFor((f) => /› temperature\s+0\.7/.test(f), "options focused");
    await h.press("+");
    await h.waitFor((f) => /› temperature\s+0\.8/.test(f), "temperature up");
    await h.press("jj");
    await h.press("+");
    await h.waitFor((f) => /› max tokens\s+256/.test(f), "max tokens doubled");
    await h.press("j\r");
    await h.waitFor((f) => /› system prompt\s+▏/.test(f), "editing the system prompt");
    await h.press("Be brief.\r");
    await h.waitFor((f) => f.includes("options set") && /system prompt\s+Be brief\./.test(f), "system prompt set");
    await h.press("\t");
    const f = await h.waitFor(
      (f) => f.includes('temperature 0.8 · top-p 1 · max tokens 256 · system "Be brief."') && f.includes("> hi▏"),
      "back on the message line",
    );
    assertFits(f, 36, 100);
    await h.press(ESC);
    await h.waitFor((f) => !f.includes("chat with"), "chat closed");
  } finally {
    h.unmount();
  }
});

test("DPO transcripts: the pair viewer shows prompt, chosen and rejected with implied rewards, per evaluation step", async () => {
  const root = tempRoot();
  const dir = join(root, "dpo-run");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ model_name: "tiny-chat", dpo_beta: 0.1 }));
  const pair = (step: number, i: number, chosenReward: number, rejectedReward: number) =>
    JSON.stringify({
      step,
      pair: i,
      prompt: `User: question ${i}?`,
      chosen: `concise answer ${i}`,
      rejected: `rambling answer ${i} that goes on`,
      chosen_reward: chosenReward,
      rejected_reward: rejectedReward,
    });
  writeFileSync(join(dir, "dpo_pairs.jsonl"), [pair(0, 0, 0, 0), pair(0, 1, 0, 0), pair(10, 0, 0.5, -0.25), pair(10, 1, -0.1, 0.2)].join("\n") + "\n");
  const h = renderApp(root, { first: { name: "transcripts", runDir: dir }, columns: 110, rows: 30 });
  try {
    const f = await h.waitFor((f) => f.includes("eval step 10 (2/2)"), "latest evaluation's pairs");
    assert.ok(f.includes("1/2 pairs prefer the chosen reply"), f);
    assert.ok(f.includes("✓ prefers the chosen reply") && f.includes("margin 0.75"), "pair 0 selected: margin = 0.5 − (−0.25)");
    assert.ok(f.includes("chosen  (reward 0.5)") && f.includes("concise answer 0"));
    assert.ok(f.includes("rejected (reward -0.25)") && f.includes("rambling answer 0"));
    assertFits(f, 30, 110);
    await h.press("j");
    await h.waitFor((f) => f.includes("✗ prefers the rejected reply") && f.includes("concise answer 1"), "second pair");
    await h.press("h");
    await h.waitFor((f) => f.includes("eval step 0 (1/2)") && f.includes("0/2 pairs prefer the chosen reply"), "the first evaluation");
  } finally {
    h.unmount();
  }
});

test("pairwise-preference RL: the group view shows the tournament, each reply's result against each other", async () => {
  const root = tempRoot();
  const dir = join(root, "shorter-run");
  const idir = join(dir, "iteration_000000");
  mkdirSync(idir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ model_name: "tiny-chat", loss_fn: "importance_sampling" }));
  // Three replies, all pairs both ways: #0 beat everyone twice, #2 beat #1 once and tied once.
  const logs = [
    { vs_1: 2, vs_2: 2, matchups: 4 },
    { vs_0: -2, vs_2: -1, matchups: 4 },
    { vs_0: -2, vs_1: 1, matchups: 4 },
  ];
  const wml = [1, -0.75, -0.25];
  const recs = logs.map((l, t) =>
    JSON.stringify({
      schema_version: 1,
      split: "train",
      iteration: 0,
      group_idx: 0,
      traj_idx: t,
      tags: ["pair_pref"],
      sampling_client_step: 0,
      total_reward: wml[t],
      final_reward: wml[t],
      trajectory_metrics: { win_minus_loss: wml[t], format: 1 },
      trajectory_logs: l,
      final_ob_len: 9,
      steps: [],
      prompt: "User: hi",
      response: `reply ${t}`,
      stop_reason: "stop",
    }),
  );
  writeFileSync(join(idir, "train_rollout_summaries.jsonl"), recs.join("\n") + "\n");
  const h = renderApp(root, { first: { name: "transcripts", runDir: dir }, columns: 110, rows: 30 });
  try {
    const f = await h.waitFor((f) => f.includes("tournament (w key"), "tournament line in the detail");
    assert.match(f, /#1 \+2\s+#2 \+2/, "the best reply's results against #1 and #2");
    await h.press("w");
    const g = await h.waitFor((f) => f.includes("tournament (wins − losses against each opponent)"), "tournament table");
    assert.match(g, /vs#0\s+vs#1\s+vs#2\s+W−L/);
    assert.match(g, /#0\s+·\s+\+2\s+\+2\s+1\s/);
    assert.match(g, /#1\s+−2\s+·\s+−1\s+-0\.75/);
    assert.match(g, /#2\s+−2\s+\+1\s+·\s+-0\.25/);
    assertFits(g, 30, 110);
  } finally {
    h.unmount();
  }
});

test("distillation transcripts: the selected response token by token with the student − teacher gap and a legend", async () => {
  const root = tempRoot();
  const dir = join(root, "opd-run");
  const idir = join(dir, "iteration_000000");
  mkdirSync(idir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ model_name: "tiny-chat", loss_fn: "importance_sampling" }));
  const rec = {
    schema_version: 1,
    split: "train",
    iteration: 0,
    group_idx: 0,
    traj_idx: 0,
    tags: ["dataset_0"],
    sampling_client_step: 0,
    total_reward: 0,
    final_reward: 0,
    trajectory_metrics: {},
    final_ob_len: 28,
    steps: [{ step_idx: 0, ob_len: 25, ac_len: 3, ac_tokens: [276, 51, 55], reward: 0, episode_done: true, metrics: {}, logs: {} }],
    prompt: "User: What is 77 + 49?",
    response: "126",
    stop_reason: "stop",
  };
  writeFileSync(join(idir, "train_rollout_summaries.jsonl"), JSON.stringify(rec) + "\n");
  writeFileSync(
    join(idir, "train_teacher_logprobs.jsonl"),
    JSON.stringify({ ob_len: 25, tokens: [276, 51, 55], pieces: [" 1", "2", "6"], student: [-0.01, -0.02, -3], teacher: [-0.01, -0.03, -0.2] }) + "\n",
  );
  const h = renderApp(root, { first: { name: "transcripts", runDir: dir }, columns: 110, rows: 30 });
  try {
    const f = await h.waitFor((f) => f.includes("student − teacher log-prob per token"), "token gap block");
    assert.ok(f.includes("mean |gap| 0.9367 · largest -2.8"), f);
    assert.ok(f.includes("■ < 0.5") && f.includes("■ ≥ 2 nats"), "legend");
    assert.ok(f.includes("   126"), "the tokens in order");
    assertFits(f, 30, 110);
  } finally {
    h.unmount();
  }
});

test("multi-turn transcripts read as one conversation: tool call, tool result, answer, each turn's reward where it was earned", async () => {
  const root = tempRoot();
  const dir = join(root, "tool-run");
  const idir = join(dir, "iteration_000000");
  mkdirSync(idir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ model_name: "tiny-chat", loss_fn: "importance_sampling" }));
  const rec = {
    schema_version: 1,
    split: "train",
    iteration: 0,
    group_idx: 0,
    traj_idx: 0,
    tags: ["tool_use"],
    sampling_client_step: 0,
    total_reward: 1,
    final_reward: 0,
    trajectory_metrics: {},
    final_ob_len: 40,
    steps: [
      {
        step_idx: 0,
        ob_len: 20,
        ac_len: 9,
        reward: 0,
        episode_done: false,
        metrics: {},
        logs: {},
        messages: [{ role: "assistant", text: '[tool call] calculator({"expression":"123+456"})' }],
      },
      {
        step_idx: 1,
        ob_len: 33,
        ac_len: 2,
        reward: 1,
        episode_done: true,
        metrics: {},
        logs: {},
        messages: [
          { role: "tool (calculator)", text: "579" },
          { role: "assistant", text: "The answer is 579" },
        ],
      },
    ],
    prompt: "user: What is 123 + 456?",
    response: "…",
    stop_reason: "stop",
  };
  writeFileSync(join(idir, "train_rollout_summaries.jsonl"), JSON.stringify(rec) + "\n");
  const h = renderApp(root, { first: { name: "transcripts", runDir: dir }, columns: 110, rows: 30 });
  try {
    const f = await h.waitFor((f) => f.includes("⟶ turn 1 reward 1"), "the conversation with rewards");
    const at = (needle: string): number => f.indexOf(needle);
    const order = [
      "What is 123 + 456?",
      "[tool call] calculator",
      "⟶ turn 0 reward 0",
      "tool (calculator):",
      "579",
      "The answer is 579",
      "⟶ turn 1 reward 1  (episode done)",
    ].map(at);
    assert.ok(
      order.every((i) => i >= 0),
      `${order}\n${f}`,
    );
    assert.deepEqual(
      [...order].sort((a, b) => a - b),
      order,
      f,
    );
  } finally {
    h.unmount();
  }
});

test("play by hand: the observation as the model sees it, a typed reply scored by the environment, esc leaves", async () => {
  const root = tempRoot();
  const h = renderApp(root, { first: { name: "play", recipe: "guess_number" }, columns: 110, rows: 30 });
  try {
    const f = await h.waitFor((f) => f.includes("observation (as the model receives it):"), "the first observation", 20_000);
    assert.ok(f.includes("Your job is to guess a integer between 0 and 1024"), f);
    assert.ok(f.includes("> ▏"), "an empty input line");
    await h.press("Guess: 512");
    await h.waitFor((f) => f.includes("> Guess: 512▏"), "typed reply");
    await h.press("\r");
    const g = await h.waitFor((f) => f.includes("⟶ reward") && f.includes("environment:"), "the reward and the environment's answer", 20_000);
    assert.ok(g.includes("you: Guess: 512"));
    assert.match(g, /User: Too (low|high)|User: Correct/);
    assertFits(g, 30, 110);
    await h.press("not a guess\r");
    await h.waitFor((f) => f.includes("format=0") && f.includes("episode done"), "a malformed reply ends the episode", 20_000);
    await h.press(ESC);
    await h.waitFor((f) => f.includes("Recipes ("), "back home");
  } finally {
    h.unmount();
  }
});

test("coming back home restores the pane and the cursor the person left from", async () => {
  const root = tempRoot();
  const h = renderApp(root, { columns: 110, rows: 30 });
  try {
    await h.waitFor((f) => f.includes("Recipes ("), "home");
    await h.press("j");
    await h.press("j");
    const before = await h.waitFor((f) => /› \S+/.test(f) && !/› example_line_fit/.test(f), "the cursor two rows down");
    const selected = /› (\S+)/.exec(before)![1]!;
    await h.press("\r");
    await h.waitFor((f) => f.includes(`Launch ${selected}`), "the launch form");
    await h.press(ESC);
    const back = await h.waitFor((f) => f.includes("Recipes ("), "home again");
    assert.equal(/› (\S+)/.exec(back)?.[1], selected, back);
  } finally {
    h.unmount();
  }
});

test("launch form: e measures an estimate of the run and shows it under the form", async () => {
  const root = tempRoot();
  const h = renderApp(root, { first: { name: "launch", recipe: "example_line_fit" }, columns: 110, rows: 30 });
  try {
    await h.waitFor((f) => f.includes("Launch example_line_fit") && f.includes("e estimates"), "the form");
    await h.press("e");
    const f = await h.waitFor((f) => /estimate: \d+ steps × [\d.]+ s ≈ \d+ s/.test(f), "the estimate", 60_000);
    assertFits(f, 30, 110);
  } finally {
    h.unmount();
  }
});
