// Every recipe `cookbook` knows, one line each. `load` is a lazy import so listing recipes (and
// starting the CLI) never loads a recipe's dependencies. Add a line to register a recipe.
import type { RecipeEntry } from "../src/config/recipe.ts";

export const recipes: RecipeEntry[] = [
  {
    name: "example_line_fit",
    description: "Toy example: fit y = a·x + b by gradient descent (no model, no engine)",
    load: () => import("./example_line_fit/index.ts"),
  },
  {
    name: "sl_basic",
    description: "Supervised fine-tuning template: LoRA on chat conversations with the pipelined SL loop (default: teach tiny-chat a pirate persona)",
    load: () => import("./sl_basic/index.ts"),
  },
  { name: "sl_loop", description: "Supervised fine-tuning as one flat, unpipelined loop written to be read", load: () => import("./sl_loop/index.ts") },
  { name: "chat_sl", description: "Chat SFT on any JSONL, parquet or Hugging Face dataset and any model", load: () => import("./chat_sl/index.ts") },
  {
    name: "rl_basic",
    description: "RL template: GRPO-style LoRA training of the tiny chat model on two-number addition",
    load: () => import("./rl_basic/index.ts"),
  },
  {
    name: "rl_loop",
    description: "RL as one flat loop written to be read: sample groups, grade, centre rewards, train",
    load: () => import("./rl_loop/index.ts"),
  },
  {
    name: "math_rl",
    description: "RL with verifiable rewards on math: synthetic addition, a question/answer JSONL file, GSM8K, MATH, DeepMath or Polaris",
    load: () => import("./math_rl/index.ts"),
  },
  {
    name: "dpo",
    description: "Direct Preference Optimization on labeled comparisons (default: shipped pirate-style pairs; hhh, helpsteer3, ultrafeedback from the hub)",
    load: () => import("./dpo/index.ts"),
  },
  {
    name: "preference_model",
    description: "Train a preference (reward) model that answers A or B for a comparison; reports held-out accuracy",
    load: () => import("./preference_model/index.ts"),
  },
  {
    name: "shorter",
    description: "Pairwise-preference RL that prefers shorter answers (tournaments judged by length; ac_tokens_per_turn falls)",
    load: () => import("./shorter/index.ts"),
  },
  {
    name: "rlhf",
    description: "RLHF pipeline: SFT → preference model → RL against it, each stage resumable (default: prefer concise answers, offline)",
    load: () => import("./rlhf/index.ts"),
  },
  {
    name: "tool_use",
    description:
      "Agentic RL: the tiny model learns to call a calculator for 3-digit additions (a supervised warm-up teaches the call and reading its result but seldom shows calling; RL on correct answers alone teaches calling it)",
    load: () => import("./tool_use/index.ts"),
  },
  {
    name: "tic_tac_toe",
    description: "Multi-agent RL: tic-tac-toe against a random opponent (or self-play), evaluated against random, minimax and the frozen starting policy",
    load: () => import("./tic_tac_toe/index.ts"),
  },
  {
    name: "twenty_questions",
    description: "Multi-agent RL: twenty questions against a scripted oracle over a generated attribute table (or a frozen answerer model)",
    load: () => import("./twenty_questions/index.ts"),
  },
  {
    name: "code_rl",
    description:
      "Code RL: Python in a fenced block, run against hidden tests in the local sandbox (default: shipped generated tasks after a format warm-up; DeepCoder or MBPP from the hub)",
    load: () => import("./code_rl/index.ts"),
  },
  {
    name: "guess_number",
    description: "Multi-turn RL: guess a hidden number from higher/lower replies of a scripted user",
    load: () => import("./guess_number/index.ts"),
  },
  {
    name: "on_policy_distillation",
    description:
      "On-policy distillation: the student samples, a teacher's per-token log-probs are the reward (default: tiny-chat-teacher into tiny-chat on addition)",
    load: () => import("./on_policy_distillation/index.ts"),
  },
  {
    name: "prompt_distillation",
    description:
      "Prompt distillation: a teacher with a long system prompt labels prompts; the student learns the behaviour without the prompt (default: classify tiny-chat's questions)",
    load: () => import("./prompt_distillation/index.ts"),
  },
  {
    name: "off_policy_distillation",
    description:
      "Off-policy distillation: the student trains on fixed responses with the teacher's top-K tokens as soft targets (default: tiny-chat-teacher into tiny-chat)",
    load: () => import("./off_policy_distillation/index.ts"),
  },
  {
    name: "sdft",
    description: "Self-distillation fine-tuning: learn toward yourself shown a demonstration (top-K forward KL or importance sampling), on addition",
    load: () => import("./sdft/index.ts"),
  },
];
