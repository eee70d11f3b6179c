// The synthetic datasets shipped in fixtures/data/, as a pure function of a seed. Each file is
// JSONL: chats as {"messages":[…]} (what FromConversationFileBuilder / sl_basic read), addition
// problems as {"question","answer"} (what math_rl env=file reads). The persona chats are
// sl_basic's default: a style tiny-chat was never trained on, so fine-tuning visibly teaches it.
import fs from "node:fs";
import path from "node:path";
import { additionConversation, allAdditionPairs, additionProblem, generateArithmeticProblems } from "./arithmetic.ts";
import { generateChats } from "./chats.ts";
import { generatePersonaChats } from "./persona.ts";
import { Prng } from "./prng.ts";

export interface FixtureDataOptions {
  seed: number;
  trainChats: number;
  testChats: number;
  arithmeticProblems: number;
  trainPersona: number;
  testPersona: number;
  trainArithmeticChats: number;
  testArithmeticChats: number;
}

export const DEFAULT_FIXTURE_DATA: Readonly<FixtureDataOptions> = {
  seed: 20261122,
  trainChats: 4000,
  testChats: 400,
  arithmeticProblems: 2000,
  trainPersona: 4000,
  testPersona: 400,
  trainArithmeticChats: 2000,
  testArithmeticChats: 200,
};

export interface FixtureFile {
  name: string;
  lines: string[];
  description: string;
}

export function fixtureDataFiles(options: Readonly<FixtureDataOptions> = DEFAULT_FIXTURE_DATA): FixtureFile[] {
  // Separate streams per file so changing one count does not reshuffle the other files.
  const root = new Prng(options.seed);
  const trainRng = root.fork();
  const testRng = root.fork();
  const arithRng = root.fork();
  // Forked after the older streams, so adding these files left the others byte-identical.
  const personaTrainRng = root.fork();
  const personaTestRng = root.fork();
  const arithChatTrainRng = root.fork();
  const arithChatTestRng = root.fork();
  const toLine = (messages: unknown): string => JSON.stringify({ messages });
  return [
    {
      name: "chats_train.jsonl",
      lines: generateChats(trainRng, options.trainChats, "train").map(toLine),
      description: "short chats for supervised recipes (addition only from training pairs)",
    },
    {
      name: "chats_test.jsonl",
      lines: generateChats(testRng, options.testChats, "test").map(toLine),
      description: "held-out chats (addition only from held-out pairs)",
    },
    {
      name: "arithmetic.jsonl",
      lines: generateArithmeticProblems(arithRng, options.arithmeticProblems, "train").map((p) => JSON.stringify(p)),
      description: "two-number addition problems from training pairs, for math_rl env=file",
    },
    {
      name: "arithmetic_test.jsonl",
      lines: allAdditionPairs("test").map(([x, y]) => JSON.stringify(additionProblem(x, y))),
      description: "every held-out addition pair (never in any training stream)",
    },
    {
      name: "persona_train.jsonl",
      lines: generatePersonaChats(personaTrainRng, options.trainPersona, "train").map(toLine),
      description: "the same kinds of questions answered by a pirate persona (sl_basic's default)",
    },
    {
      name: "persona_test.jsonl",
      lines: generatePersonaChats(personaTestRng, options.testPersona, "test").map(toLine),
      description: "held-out persona chats (addition only from held-out pairs)",
    },
    {
      name: "arithmetic_chats_train.jsonl",
      lines: Array.from({ length: options.trainArithmeticChats }, () => additionConversation(arithChatTrainRng, "train")).map(toLine),
      description: "addition questions answered with the bare sum, as chats (the example experiment's second dataset)",
    },
    {
      name: "arithmetic_chats_test.jsonl",
      lines: Array.from({ length: options.testArithmeticChats }, () => additionConversation(arithChatTestRng, "test")).map(toLine),
      description: "held-out addition chats (held-out pairs only), scored by NLL",
    },
  ];
}

export function writeFixtureData(dir: string, options: Readonly<FixtureDataOptions> = DEFAULT_FIXTURE_DATA): FixtureFile[] {
  fs.mkdirSync(dir, { recursive: true });
  const files = fixtureDataFiles(options);
  for (const f of files) fs.writeFileSync(path.join(dir, f.name), f.lines.join("\n") + "\n");
  return files;
}
