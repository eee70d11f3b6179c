export { BYTE_TO_CHAR, CHAR_TO_BYTE, fromByteChars, toByteChars } from "./byteLevel.ts";
export { PRETOKENIZE_PATTERN, pretokenize } from "./pretokenize.ts";
export { PieceCounter, mergeWord, trainBpe, trainBpeOnTexts, type BpeTrainOptions, type TrainedBpe } from "./bpeTrainer.ts";
export { ByteLevelBpeEncoder } from "./encoder.ts";
export {
  ENDOFTEXT,
  ROLE_COLON_CHAT_TEMPLATE,
  buildTokenizerConfig,
  buildTokenizerJson,
  readTrainedBpe,
  writeHfTokenizer,
  type HfTokenizerOptions,
} from "./hfFiles.ts";
