// `cookbook play`: a scripted person plays guess_number by binary search on the environment's
// replies, through the same parsing and rewards as the policy, and finds the number; a recipe with
// no environment is refused by name; malformed replies go to the environment's own policy.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { runPlay } from "../../src/commands/play.ts";

function transcript(): { out: string[]; write: (t: string) => void; text: () => string } {
  const out: string[] = [];
  return { out, write: (t) => void out.push(t), text: () => out.join("") };
}

test("a scripted person plays guess_number to the end by binary search and is rewarded for finding the number", async () => {
  const io = transcript();
  let lo = 0;
  let hi = 1023;
  let guesses = 0;
  async function* person(): AsyncGenerator<string> {
    for (;;) {
      const mid = Math.floor((lo + hi) / 2);
      guesses++;
      yield `Guess: ${mid}`;
      // The environment's reply to this guess is the last "User:" line printed since.
      const replies = io.text().match(/User: (Too low|Too high|Correct)/g) ?? [];
      const last = replies.at(-1);
      if (io.text().includes("episode done")) return;
      if (last === "User: Too low") lo = mid + 1;
      else if (last === "User: Too high") hi = mid - 1;
      else return;
    }
  }
  const total = await runPlay("guess_number", ["max_turns=12", "reward_shape=binary"], { lines: person(), write: io.write });
  const text = io.text();
  assert.match(text, /^guess_number: you are the policy/);
  assert.match(text, /── observation ──\n<\|endoftext\|>System: Your job is to guess/, "the observation as the model receives it, special tokens visible");
  assert.match(text, /correct=1/, text.slice(-400));
  assert.match(text, new RegExp(`episode done: ${guesses} turns`));
  assert.equal(total, 1, "binary reward: 1 for finding the number");
  assert.ok(guesses <= 11, `binary search needs at most 11 guesses, took ${guesses}`);
});

test("play refuses a recipe without environments, and a malformed reply meets the environment's parse-error policy", async () => {
  await assert.rejects(runPlay("sl_basic", [], { lines: (async function* () {})(), write: () => {} }), /recipe sl_basic has no environment to play/);
  const io = transcript();
  const total = await runPlay("guess_number", [], {
    lines: (async function* () {
      yield "I think it is five hundred";
    })(),
    write: io.write,
  });
  assert.match(io.text(), /format=0/);
  assert.match(io.text(), /episode done: 1 turns/);
  assert.ok(total <= 0, `a malformed reply earns no reward: ${total}`);
});

test("stopping before the end says so", async () => {
  const dir = mkdtempSync(join(tmpdir(), "play-"));
  try {
    const io = transcript();
    await runPlay("guess_number", [], {
      lines: (async function* () {
        yield "Guess: 1";
      })(),
      write: io.write,
    });
    assert.match(io.text(), /stopped before the episode ended/);
    assert.match(io.text(), /episode unfinished: 1 turns/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
