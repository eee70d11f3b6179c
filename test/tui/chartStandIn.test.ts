import assert from "node:assert/strict";
import { test } from "node:test";
import { asciiStandIn, renderChart } from "../../src/tui/core/chart.ts";
import { stripAnsi } from "../../src/tui/core/format.ts";
import { runColorAnsi } from "../../src/tui/core/palette.ts";

test("a coloured chart's stand-ins are ASCII and as wide as the visible lines", () => {
  const x = Array.from({ length: 500 }, (_, i) => i);
  const y = x.map((i) => Math.sin(i / 20));
  const chart = renderChart([{ x, y, color: runColorAnsi(0) }], { width: 80, rows: 10, smoothing: 0.9, cursorX: 250, color: true });
  assert.ok(
    chart.lines.some((l) => l.includes("\x1b[")),
    "the chart is coloured",
  );
  for (const line of chart.lines) {
    const s = asciiStandIn(line);
    assert.ok(s !== undefined, `no stand-in for ${JSON.stringify(line)}`);
    assert.match(s, /^[\x20-\x7e]*$/);
    assert.equal(s.length, [...stripAnsi(line)].length);
  }
});

test("text it cannot vouch for (wide characters, emoji) gets no stand-in", () => {
  assert.equal(asciiStandIn("損失 1.0"), undefined);
  assert.equal(asciiStandIn("loss 🚀"), undefined);
  assert.equal(asciiStandIn("\x1b[32m╭─┤\x1b[0m ok"), "xxx ok");
});
