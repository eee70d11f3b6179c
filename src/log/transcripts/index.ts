export * from "./types.ts";
export * from "./rolloutSummaries.ts";
export * from "./html.ts";
