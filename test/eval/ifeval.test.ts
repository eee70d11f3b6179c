// IFEval's instruction checkers one by one (a response that follows, one that does not, and the
// edge the rule turns on), the loose variants, and the benchmark on a parquet file with the
// dataset's real schema (kwargs as a list of structs whose unused fields are null).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  followsInstruction as follows,
  followsInstructionLoosely,
  INSTRUCTION_IDS,
  splitSentences,
  validateInstruction,
} from "../../src/eval/ifeval/instructions.ts";
import { detectLanguage } from "../../src/eval/ifeval/language.ts";
import { resolveBenchmark } from "../../src/eval/registry.ts";
import { resolveBenchmarkConfig, type GenerationBenchmark } from "../../src/eval/benchmark.ts";
import { runBenchmark } from "../../src/eval/runner.ts";
import { fakeRenderer } from "./fakes.ts";
import { scriptedSampler, writeParquet } from "./parquetFixtures.ts";

test("the checkers cover the 25 instruction ids of google/IFEval", () => {
  assert.equal(INSTRUCTION_IDS.length, 25);
  assert.match(validateInstruction("keywords:nonsense", {}) ?? "", /unknown instruction id/);
  assert.match(validateInstruction("keywords:frequency", { keyword: "a", frequency: 2 }) ?? "", /needs kwargs "relation"/);
  assert.match(validateInstruction("keywords:frequency", { keyword: "a", frequency: 2, relation: "exactly" }) ?? "", /"less than" or "at least"/);
  assert.equal(validateInstruction("keywords:frequency", { keyword: "a", frequency: 2, relation: "at least" }), null);
});

test("keywords: existence, frequency, forbidden words (whole words), letter frequency", () => {
  assert.equal(follows("keywords:existence", "Bananas and Apples", { keywords: ["banana", "apple"] }), true);
  assert.equal(follows("keywords:existence", "Bananas only", { keywords: ["banana", "apple"] }), false);
  const freq = (relation: string, frequency: number) => ({ keyword: "cat", relation, frequency });
  assert.equal(follows("keywords:frequency", "Cat, cat, CAT.", freq("at least", 3)), true);
  assert.equal(follows("keywords:frequency", "Cat, cat.", freq("at least", 3)), false);
  assert.equal(follows("keywords:frequency", "Cat, cat.", freq("less than", 3)), true);
  assert.equal(follows("keywords:frequency", "Cat, cat, cat.", freq("less than", 3)), false);
  assert.equal(follows("keywords:forbidden_words", "I like dogs", { forbidden_words: ["dog"] }), true, "dogs is not the word dog");
  assert.equal(follows("keywords:forbidden_words", "A Dog barked", { forbidden_words: ["dog"] }), false);
  const letters = (let_relation: string, let_frequency: number) => ({ letter: "z", let_relation, let_frequency });
  assert.equal(follows("keywords:letter_frequency", "Zizzi zoo", letters("at least", 4)), true, "four z, either case");
  assert.equal(follows("keywords:letter_frequency", "Zizzi zoo", letters("at least", 5)), false);
  assert.equal(follows("keywords:letter_frequency", "Zizzi zoo", letters("less than", 4)), false);
});

test("language:response_language and the English-only case checks", () => {
  const fr = "Bonjour à tous, je suis très heureux de vous présenter notre nouveau projet aujourd'hui.";
  const en = "Hello everyone, I am very happy to present our new project to you today.";
  const hi = "नमस्ते, आज मैं आपको हमारी नई परियोजना के बारे में बताना चाहता हूँ।";
  assert.equal(detectLanguage(fr), "fr");
  assert.equal(follows("language:response_language", fr, { language: "fr" }), true);
  assert.equal(follows("language:response_language", en, { language: "fr" }), false);
  assert.equal(follows("language:response_language", hi, { language: "hi" }), true);
  assert.equal(follows("change_case:english_capital", en.toUpperCase(), {}), true);
  assert.equal(follows("change_case:english_capital", en, {}), false);
  assert.equal(follows("change_case:english_lowercase", en.toLowerCase(), {}), true);
  assert.equal(follows("change_case:english_lowercase", en, {}), false);
  assert.equal(follows("change_case:english_lowercase", fr.toLowerCase(), {}), false, "lowercase but not English");
});

test("length constraints: sentences, words, *** paragraphs, nth paragraph's first word", () => {
  assert.deepEqual(splitSentences("Dr. Smith came at 3.5 p.m. today. He left! Why? Because."), [
    "Dr. Smith came at 3.5 p.m. today.",
    "He left!",
    "Why?",
    "Because.",
  ]);
  const sentences = (relation: string, num_sentences: number) => ({ relation, num_sentences });
  assert.equal(follows("length_constraints:number_sentences", "One. Two. Three.", sentences("less than", 4)), true);
  assert.equal(follows("length_constraints:number_sentences", "One. Two. Three. Four.", sentences("less than", 4)), false);
  assert.equal(follows("length_constraints:number_sentences", "One. Two. Three. Four.", sentences("at least", 4)), true);
  const words = (relation: string, num_words: number) => ({ relation, num_words });
  assert.equal(follows("length_constraints:number_words", "it's a well-known fact", words("at least", 6)), true, "it, s, a, well, known, fact");
  assert.equal(follows("length_constraints:number_words", "it's a well-known fact", words("less than", 6)), false);
  const paras = { num_paragraphs: 3 };
  assert.equal(follows("length_constraints:number_paragraphs", "First.\n***\nSecond.\n***\nThird.", paras), true);
  assert.equal(follows("length_constraints:number_paragraphs", "***\nFirst.\n***\nSecond.\n***\nThird.\n***", paras), true, "empty ends are forgiven");
  assert.equal(follows("length_constraints:number_paragraphs", "First.\n***\n***\nThird.", { num_paragraphs: 2 }), false, "an empty middle paragraph fails");
  assert.equal(follows("length_constraints:number_paragraphs", "First.\n\nSecond.\n\nThird.", paras), false, "blank lines are not the *** divider");
  const nth = { num_paragraphs: 3, nth_paragraph: 2, first_word: "however" };
  assert.equal(follows("length_constraints:nth_paragraph_first_word", 'Intro.\n\n"However, no.\n\nEnd.', nth), true);
  assert.equal(follows("length_constraints:nth_paragraph_first_word", "Intro.\n\nBut no.\n\nEnd.", nth), false);
  assert.equal(follows("length_constraints:nth_paragraph_first_word", "Intro.\n\nHowever no.", nth), false, "two paragraphs, three required");
});

test("detectable content and format: placeholders, postscript, bullets, highlights, sections, JSON, title, fixed answers", () => {
  assert.equal(follows("detectable_content:number_placeholders", "Dear [name], at [address].", { num_placeholders: 2 }), true);
  assert.equal(follows("detectable_content:number_placeholders", "Dear [name].", { num_placeholders: 2 }), false);
  assert.equal(follows("detectable_content:postscript", "Body.\n\nP.S. See you.", { postscript_marker: "P.S." }), true);
  assert.equal(follows("detectable_content:postscript", "Body. PS see you", { postscript_marker: "P.S." }), false);
  assert.equal(follows("detectable_content:postscript", "Body.\nP.P.S. more", { postscript_marker: "P.P.S" }), true);
  assert.equal(follows("detectable_format:number_bullet_lists", "* one\n* two\n- three", { num_bullets: 3 }), true);
  assert.equal(follows("detectable_format:number_bullet_lists", "* one\n* two\n- three\n* four", { num_bullets: 3 }), false, "exactly, not at least");
  assert.equal(follows("detectable_format:number_bullet_lists", "** bold line\n* one", { num_bullets: 2 }), false, "** is not a bullet");
  assert.equal(follows("detectable_format:number_highlighted_sections", "*one* and **two**", { num_highlights: 2 }), true);
  assert.equal(follows("detectable_format:number_highlighted_sections", "*one* and ** **", { num_highlights: 2 }), false, "empty highlights do not count");
  assert.equal(follows("detectable_format:multiple_sections", "SECTION 1\nA\nSECTION 2\nB", { section_spliter: "SECTION", num_sections: 2 }), true);
  assert.equal(follows("detectable_format:multiple_sections", "SECTION 1\nA\nSECTION two\nB", { section_spliter: "SECTION", num_sections: 2 }), false);
  assert.equal(follows("detectable_format:json_format", '```json\n{"a": [1, 2]}\n```', {}), true);
  assert.equal(follows("detectable_format:json_format", 'Here: {"a": 1}', {}), false);
  assert.equal(follows("detectable_format:title", "<<My Poem>>\nRoses...", {}), true);
  assert.equal(follows("detectable_format:title", "<< >>\n# My Poem", {}), false);
  assert.equal(follows("detectable_format:constrained_response", "My answer is maybe.", {}), true);
  assert.equal(follows("detectable_format:constrained_response", "My answer is perhaps.", {}), false);
});

test("combination, start/end, capitals, commas, quotation", () => {
  assert.equal(follows("combination:two_responses", "First answer.\n******\nSecond answer.", {}), true);
  assert.equal(follows("combination:two_responses", "Same.\n******\nSame.", {}), false, "the two must differ");
  assert.equal(follows("combination:two_responses", "A\n******\n******\nB", {}), false);
  assert.equal(follows("combination:repeat_prompt", "Write a poem. Here it is...", { prompt_to_repeat: "write a poem." }), true);
  assert.equal(follows("combination:repeat_prompt", "Sure! Write a poem.", { prompt_to_repeat: "Write a poem." }), false);
  assert.equal(
    follows("startend:end_checker", 'Done. Is there anything else I can help with?"', { end_phrase: "Is there anything else I can help with?" }),
    true,
  );
  assert.equal(
    follows("startend:end_checker", "Is there anything else I can help with? Bye.", { end_phrase: "Is there anything else I can help with?" }),
    false,
  );
  const caps = (capital_relation: string, capital_frequency: number) => ({ capital_relation, capital_frequency });
  assert.equal(follows("change_case:capital_word_frequency", "The NASA and ESA teams met in USA", caps("at least", 3)), true);
  assert.equal(follows("change_case:capital_word_frequency", "The NASA and ESA teams met in USA", caps("less than", 3)), false);
  assert.equal(follows("punctuation:no_comma", "No commas here.", {}), true);
  assert.equal(follows("punctuation:no_comma", "Yes, one.", {}), false);
  assert.equal(follows("startend:quotation", ' "Quoted." ', {}), true);
  assert.equal(follows("startend:quotation", '"Half quoted.', {}), false);
});

test("loose: a leading line, a trailing line or markdown asterisks are forgiven", () => {
  const r = "Sure, here it is:\nall lower case text without commas";
  assert.equal(follows("punctuation:no_comma", r, {}), false);
  assert.equal(followsInstructionLoosely("punctuation:no_comma", r, {}), true);
  assert.equal(follows("startend:end_checker", "The end.\n**Note**", { end_phrase: "The end." }), false);
  assert.equal(followsInstructionLoosely("startend:end_checker", "The end.\n**Note**", { end_phrase: "The end." }), true);
  assert.equal(followsInstructionLoosely("punctuation:no_comma", "a, b\nc, d\ne, f", {}), false);
});

test("ifeval runs on a parquet file with the dataset's schema: strict and loose, prompt and instruction level", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ifeval-"));
  const fields = { num_words: "int64", relation: "string", keywords: "string_list", end_phrase: "string", language: "string" } as const;
  writeParquet(join(dir, "ifeval_input_data.parquet"), [
    { name: "key", type: "int64", data: [1000, 1001, 1002] },
    {
      name: "prompt",
      type: "string",
      data: ["Write about cats in fewer than 10 words, mentioning whiskers.", "Say hi without commas.", "End with 'Bye now.'"],
    },
    {
      name: "instruction_id_list",
      type: "string_list",
      data: [["length_constraints:number_words", "keywords:existence"], ["punctuation:no_comma"], ["startend:end_checker"]],
    },
    {
      name: "kwargs",
      type: "struct_list",
      fields,
      data: [[{ num_words: 10, relation: "less than" }, { keywords: ["whiskers"] }], [{}], [{ end_phrase: "Bye now." }]],
    },
  ]);
  const bench = resolveBenchmark(`ifeval:${join(dir, "ifeval_input_data.parquet")}`) as GenerationBenchmark;
  const examples = await bench.load();
  assert.deepEqual(
    examples.map((e) => e.id),
    ["1000", "1001", "1002"],
  );
  assert.equal((await bench.grade("Cats have long whiskers.", examples[0]!)).correct, true);
  const half = await bench.grade("Cats are lovely animals that sleep all day long in the sun.", examples[0]!);
  assert.equal(half.correct, false);
  assert.match(half.extracted ?? "", /0\/2 \(not followed: length_constraints:number_words, keywords:existence\)/);
  const answers: Record<string, string> = {
    "Write about": "Cats: soft whiskers, quiet paws.", // both followed
    "Say hi": "Hi, there.\nHi there", // a comma: strict fails; loose (drop the first line) passes
    "End with": "See you. Bye now.", // followed
  };
  const config = resolveBenchmarkConfig(bench.defaults, { concurrency: 1 });
  const result = await runBenchmark({
    benchmark: bench,
    config,
    renderer: fakeRenderer,
    samplingClient: scriptedSampler((u) => answers[Object.keys(answers).find((k) => u.startsWith(k))!]!),
  });
  assert.equal(result.metrics["accuracy"], 2 / 3);
  assert.equal(result.metrics["prompt_strict_accuracy"], 2 / 3);
  assert.equal(result.metrics["prompt_loose_accuracy"], 1);
  assert.equal(result.metrics["instruction_strict_accuracy"], 3 / 4);
  assert.equal(result.metrics["instruction_loose_accuracy"], 1);
  // A dataset row with an unknown instruction fails at load, naming file and row.
  writeParquet(join(dir, "bad.parquet"), [
    { name: "key", type: "int64", data: [1] },
    { name: "prompt", type: "string", data: ["x"] },
    { name: "instruction_id_list", type: "string_list", data: [["keywords:made_up"]] },
    { name: "kwargs", type: "struct_list", fields, data: [[{}]] },
  ]);
  await assert.rejects(
    resolveBenchmark(`ifeval:${join(dir, "bad.parquet")}`).load(),
    /bad\.parquet row 0: instruction 0: unknown instruction id "keywords:made_up"/,
  );
});
