export * from "./game.ts";
export * from "./coordinator.ts";
export * from "./seatEnv.ts";
export * from "./opponents.ts";
export * from "./groups.ts";
export * from "./evaluator.ts";
