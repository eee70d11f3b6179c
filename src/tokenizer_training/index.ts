export { BYTE_TO_CHAR, CHAR_TO_BYTE, fromByteChars, toByteChars } from "./byte_level.ts";
export { PRETOKENIZE_PATTERN, pretokenize } from "./pretokenize.ts";
export { PieceCounter, mergeWord, trainBpe, trainBpeOnTexts, type BpeTrainOptions, type TrainedBpe } from "./bpe_trainer.ts";
export { ByteLevelBpeEncoder } from "./encoder.ts";
export {
  ENDOFTEXT, ROLE_COLON_CHAT_TEMPLATE, buildTokenizerConfig, buildTokenizerJson, readTrainedBpe, writeHfTokenizer,
  type HfTokenizerOptions,
} from "./hf_files.ts";
