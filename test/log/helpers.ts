import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChromeTrace, ChromeTraceEvent } from "../../src/log/trace.ts";

export function tempDir(prefix = "cookbook-log-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Checks what the trace-event format requires of the events we write; returns the complete events. */
export function assertValidTrace(value: unknown): ChromeTraceEvent[] {
  assert.ok(typeof value === "object" && value !== null && "traceEvents" in value, "a trace object with traceEvents");
  const events = (value as ChromeTrace).traceEvents;
  assert.ok(Array.isArray(events) && events.length > 0);
  const named = new Set<number>();
  for (const e of events) {
    assert.ok(typeof e.name === "string" && e.name !== "");
    assert.ok(Number.isInteger(e.pid) && Number.isInteger(e.tid));
    assert.ok(e.ph === "X" || e.ph === "M", `phase ${e.ph}`);
    if (e.ph === "M" && e.name === "thread_name") named.add(e.tid);
    if (e.ph === "X") {
      assert.ok(typeof e.ts === "number" && e.ts >= 0 && typeof e.dur === "number" && e.dur >= 0, `${e.name}: ts ${e.ts} dur ${e.dur}`);
    }
  }
  const spans = events.filter((e) => e.ph === "X");
  for (const e of spans) assert.ok(named.has(e.tid), `track ${e.tid} of ${e.name} has a thread_name`);
  // No two complete events of one track overlap unless one contains the other.
  for (const tid of new Set(spans.map((e) => e.tid))) {
    const sorted = spans.filter((e) => e.tid === tid).sort((a, b) => a.ts! - b.ts!);
    for (let i = 1; i < sorted.length; i++) {
      const prev = sorted[i - 1];
      const cur = sorted[i];
      const nested = cur.ts! + cur.dur! <= prev.ts! + prev.dur!;
      assert.ok(cur.ts! >= prev.ts! + prev.dur! || nested, `track ${tid}: ${prev.name} and ${cur.name} overlap`);
    }
  }
  return spans;
}
