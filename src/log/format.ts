// Number formatting for console tables and run listings.

/** Floats with 6 significant digits, integers as they are, other values as text. */
export function formatValue(value: unknown): string {
  if (typeof value === "number") {
    if (Number.isInteger(value)) return String(value);
    if (!Number.isFinite(value)) return String(value);
    return String(Number(value.toPrecision(6)));
  }
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? String(value);
}

/** Pads cells into aligned columns separated by two spaces. */
export function formatColumns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i])))
      .join("  ")
      .trimEnd(),
  );
}
