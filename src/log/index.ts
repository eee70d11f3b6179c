// Run-directory writers and readers: metrics, JSONL, logs.log, timing.
export { formatColumns, formatValue } from "./format.ts";
export { JsonlError, type JsonlParseResult, appendJsonl, parseJsonlText, readJsonl } from "./jsonl.ts";
export {
  type Metrics,
  MetricsLogger,
  type MetricsLoggerOptions,
  type MetricsRecord,
  type MetricValue,
  formatMetricsTable,
  readMetrics,
} from "./metrics.ts";
export { type LogLevel, RunLog } from "./runLog.ts";
export { JsonlTailReader } from "./tail.ts";
export { StepTimer } from "./timing.ts";
