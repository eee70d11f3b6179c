// Conversations the renderer tests run over.
import type { Message, ToolSpec } from "../../src/renderers/types.ts";

export const WEATHER_TOOL: ToolSpec = {
  name: "get_weather",
  description: "Get the current weather for a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string", description: "City name" }, unit: { type: "string", enum: ["c", "f"] } },
    required: ["city"],
  },
};

export const basic: Message[] = [
  { role: "user", content: "What is 2+2?" },
  { role: "assistant", content: "2+2 is 4." },
  { role: "user", content: "And 3+3?" },
];

export const withSystem: Message[] = [
  { role: "system", content: "You are a terse math tutor." },
  { role: "user", content: "What is 2+2?" },
  { role: "assistant", content: "4" },
  { role: "user", content: "Thanks! Now, what's 10 / 4?" },
];

export const multiTurn: Message[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Name a fruit." },
  { role: "assistant", content: "Apple." },
  { role: "user", content: "Another one, please." },
  { role: "assistant", content: "Banana — yellow and sweet." },
  { role: "user", content: "One more?\nMaybe something tropical." },
  { role: "assistant", content: "Mango!" },
];

/** Assistant turns that reasoned. */
export const withThinking: Message[] = [
  { role: "user", content: "What is 12*12?" },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "12*12 = 144." },
      { type: "text", text: "144" },
    ],
  },
  { role: "user", content: "Half of that?" },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "144 / 2 = 72." },
      { type: "text", text: "72" },
    ],
  },
];

export const withToolCall: Message[] = [
  { role: "user", content: "What's the weather in Paris?" },
  {
    role: "assistant",
    content: "",
    tool_calls: [{ type: "function", id: "call_1", function: { name: "get_weather", arguments: '{"city": "Paris"}' } }],
  },
  { role: "tool", content: '{"temp_c": 18, "sky": "cloudy"}', tool_call_id: "call_1", name: "get_weather" },
  { role: "assistant", content: "It is 18°C and cloudy in Paris." },
];

export function upTo(messages: Message[], n: number): Message[] {
  return messages.slice(0, n);
}
