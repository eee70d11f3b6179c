/** A plain-text chat message as stored in the fixture JSONL files (`{"messages":[...]}`). */
export interface ChatMessage {
  role: string;
  content: string;
}

export type Conversation = ChatMessage[];

/** One addition problem in the shape `math_rl env=file` reads. */
export interface QuestionAnswer {
  question: string;
  answer: string;
}
