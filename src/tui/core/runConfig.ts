// A run's resolved config (config.json) as `key=value` lines for the dashboard's side pane:
// nested objects flattened to dotted keys, in the file's order, values as `key=value` would take them.
export function configEntries(config: Record<string, unknown> | undefined, prefix = ""): [string, string][] {
  if (!config) return [];
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(config)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0) out.push(...configEntries(v as Record<string, unknown>, key));
    else out.push([key, typeof v === "string" ? v : JSON.stringify(v)]);
  }
  return out;
}
