// Public API of the Tinker layer: wire types, client interfaces and the helpers around them.
export * from "./types.ts";
export type * from "./clients.ts";
export * from "./errors.ts";
export * from "./modelInput.ts";
export * from "./tensorData.ts";
export * from "./datum.ts";
export * from "./paths.ts";
export * from "./metrics.ts";
export * from "./futures.ts";
export * from "./customLoss.ts";
