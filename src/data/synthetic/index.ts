export { Prng } from "./prng.ts";
export type { ChatMessage, Conversation, QuestionAnswer } from "./types.ts";
export {
  ADDITION_MAX,
  ARITHMETIC_FEWSHOT_PREFIX,
  additionConversation,
  additionDrill,
  additionProblem,
  additionQuestion,
  allAdditionPairs,
  generateArithmeticProblems,
  isHeldOutPair,
  pairSplit,
  sampleAdditionPair,
  type Split,
} from "./arithmetic.ts";
export { CHAT_KINDS, DEFAULT_CHAT_WEIGHTS, chatOfKind, generateChats, randomChat, type ChatKind } from "./chats.ts";
export { GUESS_MAX_TURNS, GUESS_SYSTEM_PROMPT, GUESS_UPPER_BOUND, guessNumberGame, guessNumberPrefix } from "./guessNumber.ts";
export { ROLE_COLON_STOP, renderRoleColonDocument, renderRoleColonPrompt, roleHeader } from "./roleColonText.ts";
export { DEFAULT_CORPUS_MIX, corpusConversation, corpusDocuments, takeDocuments, type CorpusMix } from "./corpus.ts";
export { CREATURES, TOWNS, WORLD_NAME, ASSISTANT_NAME } from "./world.ts";
export { DEFAULT_PERSONA_WEIGHTS, PERSONA_NAME, PERSONA_TURN_KINDS, generatePersonaChats, personaChat, type PersonaTurnKind } from "./persona.ts";
