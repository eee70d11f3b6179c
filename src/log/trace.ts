// The run's timing spans as a Chrome trace (trace event format), openable in ui.perfetto.dev or
// chrome://tracing. Every logged step appends its spans to trace_events.jsonl (whole lines, so a
// crash loses nothing already written); trace.json is made from that file when the run ends.
// Spans of one name share a track; a span that overlaps the previous one on its track (concurrent
// rollouts, asynchronous RL) opens another track of that name, because the format draws complete
// events of one thread as a stack and overlapping siblings would be misdrawn.
import { basename, join } from "node:path";
import { writeFileAtomic } from "../files/durable.ts";
import { appendJsonl, readJsonl } from "./jsonl.ts";
import type { TimedSpan } from "./timing.ts";

export const TRACE_EVENTS_FILE = "trace_events.jsonl";
export const TRACE_FILE = "trace.json";

/** One line of trace_events.jsonl. */
export interface TraceSpanRecord {
  step: number;
  name: string;
  /** Epoch microseconds. */
  ts: number;
  /** Microseconds. */
  dur: number;
}

/** A Chrome trace event: complete spans ("X") and the metadata events ("M") naming tracks. */
export interface ChromeTraceEvent {
  name: string;
  ph: "X" | "M";
  pid: number;
  tid: number;
  ts?: number;
  dur?: number;
  cat?: string;
  args?: Record<string, string | number>;
}

export interface ChromeTrace {
  traceEvents: ChromeTraceEvent[];
  displayTimeUnit: "ms";
  otherData: Record<string, string | number>;
}

/** Appends one step's spans to the run's trace_events.jsonl. */
export function appendTraceSpans(logDir: string, step: number, spans: readonly TimedSpan[]): void {
  const path = join(logDir, TRACE_EVENTS_FILE);
  for (const span of spans) {
    const record: TraceSpanRecord = { step, name: span.name, ts: span.startUs, dur: span.durationUs };
    appendJsonl(path, record, { context: `trace span ${span.name} of step ${step}` });
  }
}

interface Track {
  tid: number;
  name: string;
  endUs: number;
}

/** Builds the Chrome trace of span records: times relative to the first span, one pid for the run. */
export function chromeTrace(records: readonly TraceSpanRecord[], runName: string): ChromeTrace {
  const sorted = [...records].sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const origin = sorted.length > 0 ? sorted[0].ts : 0;
  const tracksByName = new Map<string, Track[]>();
  const tracks: Track[] = [];
  const spans: ChromeTraceEvent[] = [];
  for (const record of sorted) {
    const sameName = tracksByName.get(record.name) ?? [];
    let track = sameName.find((t) => t.endUs <= record.ts);
    if (track === undefined) {
      track = { tid: tracks.length + 1, name: sameName.length === 0 ? record.name : `${record.name} (${sameName.length + 1})`, endUs: 0 };
      sameName.push(track);
      tracks.push(track);
      tracksByName.set(record.name, sameName);
    }
    track.endUs = record.ts + record.dur;
    spans.push({
      name: record.name === "step" ? `step ${record.step}` : record.name,
      cat: record.name === "step" ? "step" : "span",
      ph: "X",
      pid: 1,
      tid: track.tid,
      ts: record.ts - origin,
      dur: record.dur,
      args: { step: record.step },
    });
  }
  const metadata: ChromeTraceEvent[] = [
    { name: "process_name", ph: "M", pid: 1, tid: 0, args: { name: runName } },
    ...tracks.flatMap((t): ChromeTraceEvent[] => [
      { name: "thread_name", ph: "M", pid: 1, tid: t.tid, args: { name: t.name } },
      // Steps on top, then the spans in the order they first appeared.
      { name: "thread_sort_index", ph: "M", pid: 1, tid: t.tid, args: { sort_index: t.tid } },
    ]),
  ];
  return { traceEvents: [...metadata, ...spans], displayTimeUnit: "ms", otherData: { run: runName, origin_epoch_us: origin } };
}

/**
 * Writes <logDir>/trace.json from <logDir>/trace_events.jsonl; false (and nothing written) when the
 * run logged no spans.
 */
export function exportTrace(logDir: string): boolean {
  const records = readJsonl<TraceSpanRecord>(join(logDir, TRACE_EVENTS_FILE));
  if (records.length === 0) return false;
  // Compact: a long run has tens of thousands of spans.
  writeFileAtomic(join(logDir, TRACE_FILE), `${JSON.stringify(chromeTrace(records, basename(logDir)))}\n`, { context: "the run's timing trace" });
  return true;
}
