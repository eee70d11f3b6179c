// Small text formatters shared by screens and the --once snapshot.

/** A number in at most ~9 characters: fixed for ordinary magnitudes, exponent otherwise. */
export function fmtNum(v: number | undefined | null): string {
  if (v === undefined || v === null || Number.isNaN(v)) return "–";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(2);
  if (Number.isInteger(v)) return String(v);
  if (a >= 100) return v.toFixed(1);
  return v.toPrecision(4).replace(/\.?0+$/, "") || "0";
}

export function fmtDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return "–";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  return `${Math.floor(s / 86400)}d${Math.floor((s % 86400) / 3600)}h`;
}

/** "3m ago" style age of an epoch-ms timestamp. */
export function fmtAge(ms: number, now = Date.now()): string {
  if (!ms) return "–";
  return `${fmtDuration(Math.max(0, (now - ms) / 1000))} ago`;
}

/** `[█████░░░░░] 50%` in exactly `width` characters (when width allows the percentage). */
export function progressBar(fraction: number, width: number): string {
  const pct = `${Math.round(Math.min(1, Math.max(0, fraction)) * 100)}%`;
  const inner = Math.max(1, width - pct.length - 3);
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * inner);
  return `[${"█".repeat(filled)}${"░".repeat(inner - filled)}] ${pct}`;
}

/** Seconds left, from elapsed time and progress made; undefined until there is progress. */
export function eta(elapsedSec: number, fraction: number | undefined): number | undefined {
  if (fraction === undefined || fraction <= 0 || !Number.isFinite(elapsedSec)) return undefined;
  if (fraction >= 1) return 0;
  return (elapsedSec * (1 - fraction)) / fraction;
}

/** Cuts or pads to exactly `width` visible characters (input without escapes). */
export function fit(text: string, width: number): string {
  if (width <= 0) return "";
  if (text.length > width) return width <= 1 ? text.slice(0, width) : `${text.slice(0, width - 1)}…`;
  return text.padEnd(width);
}

/** Removes ANSI escape sequences (for measuring and for tests). */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g, "");
}
