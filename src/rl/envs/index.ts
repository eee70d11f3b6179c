// Reusable RL environments for recipes: arithmetic and other question/answer problems, and the
// multi-turn guess-the-number game.
export * from "./problems.ts";
export * from "./arithmetic.ts";
export * from "./guessNumber.ts";
export * from "./qaSources.ts";
