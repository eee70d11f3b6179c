// The tokenizer of fixtures/models/tiny-chat: byte-level BPE trained on the same synthetic
// role_colon corpus the model is pretrained on.
import { corpusDocuments, type CorpusMix } from "../data/synthetic/corpus.ts";
import { trainBpe, PieceCounter, type TrainedBpe } from "./bpeTrainer.ts";
import { ENDOFTEXT } from "./hfFiles.ts";

/**
 * The document mix the shipped tokenizer was trained on, frozen here so that tuning the
 * pretraining mix later does not silently change the tokenizer.
 */
export const TOKENIZER_CORPUS_MIX: Readonly<CorpusMix> = {
  addition: 3,
  addition_drill: 4,
  small_talk: 1,
  world: 1.5,
  numbers: 1,
  words: 0.7,
  guess_number: 0.5,
};

export interface TinyChatTokenizerOptions {
  seed: number;
  /** Documents of the pretraining mix to count pieces over. */
  documents: number;
  vocabSize: number;
}

export const DEFAULT_TINY_CHAT_TOKENIZER: Readonly<TinyChatTokenizerOptions> = {
  seed: 7,
  documents: 30000,
  vocabSize: 1024,
};

export function trainTinyChatTokenizer(options: Readonly<TinyChatTokenizerOptions> = DEFAULT_TINY_CHAT_TOKENIZER): TrainedBpe {
  const counter = new PieceCounter();
  let n = 0;
  for (const doc of corpusDocuments(options.seed, TOKENIZER_CORPUS_MIX, "train")) {
    if (n++ >= options.documents) break;
    counter.add(doc);
  }
  return trainBpe(counter.counts, { vocabSize: options.vocabSize, specialTokens: [ENDOFTEXT] });
}
