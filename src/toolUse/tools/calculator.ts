// A calculator tool: + − × ÷, parentheses and unary minus over decimal numbers. Integer-only
// expressions are computed exactly with BigInt (long sums are what the tool_use recipe asks for);
// anything with a decimal point or a division uses doubles.
import { z } from "zod";
import { defineTool, errorToolResult, simpleToolResult } from "../tool.ts";

type Token = { kind: "num"; text: string } | { kind: "op"; text: string };

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const re = /\s*(?:(\d+(?:\.\d+)?|\.\d+)|([-+*/()×÷x]))/y;
  let pos = 0;
  while (pos < expression.length) {
    if (/^\s*$/.test(expression.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(expression);
    if (m === null) throw new Error(`unexpected character ${JSON.stringify(expression.slice(pos).trim()[0])} at position ${pos}`);
    if (m[1] !== undefined) tokens.push({ kind: "num", text: m[1] });
    else {
      const op = m[2]!;
      tokens.push({ kind: "op", text: op === "×" || op === "x" ? "*" : op === "÷" ? "/" : op });
    }
    pos = re.lastIndex;
  }
  return tokens;
}

type Value = bigint | number;

function toNumber(v: Value): number {
  return typeof v === "bigint" ? Number(v) : v;
}

function apply(op: string, a: Value, b: Value): Value {
  if (typeof a === "bigint" && typeof b === "bigint" && op !== "/") {
    return op === "+" ? a + b : op === "-" ? a - b : a * b;
  }
  const x = toNumber(a);
  const y = toNumber(b);
  if (op === "/") {
    if (y === 0) throw new Error("division by zero");
    return x / y;
  }
  return op === "+" ? x + y : op === "-" ? x - y : x * y;
}

/** Evaluates an arithmetic expression; throws with the position of the first problem. */
export function evaluateExpression(expression: string): string {
  const tokens = tokenize(expression);
  let i = 0;
  const peek = (): Token | undefined => tokens[i];
  const expr = (): Value => {
    let v = term();
    while (peek()?.kind === "op" && (peek()!.text === "+" || peek()!.text === "-")) {
      const op = tokens[i++]!.text;
      v = apply(op, v, term());
    }
    return v;
  };
  const term = (): Value => {
    let v = factor();
    while (peek()?.kind === "op" && (peek()!.text === "*" || peek()!.text === "/")) {
      const op = tokens[i++]!.text;
      v = apply(op, v, factor());
    }
    return v;
  };
  const factor = (): Value => {
    const t = tokens[i++];
    if (t === undefined) throw new Error("expression ends too early");
    if (t.kind === "num") return t.text.includes(".") ? Number(t.text) : BigInt(t.text);
    if (t.text === "-") {
      const v = factor();
      return typeof v === "bigint" ? -v : -v;
    }
    if (t.text === "+") return factor();
    if (t.text === "(") {
      const v = expr();
      if (tokens[i++]?.text !== ")") throw new Error("missing closing parenthesis");
      return v;
    }
    throw new Error(`unexpected ${JSON.stringify(t.text)}`);
  };
  if (tokens.length === 0) throw new Error("empty expression");
  const value = expr();
  if (i < tokens.length) throw new Error(`unexpected ${JSON.stringify(tokens[i]!.text)} after a complete expression`);
  if (typeof value === "number" && !Number.isFinite(value)) throw new Error("result is not finite");
  return typeof value === "bigint" ? value.toString() : String(Number(value.toPrecision(12)));
}

export const calculatorTool = defineTool({
  name: "calculator",
  description: "Evaluate an arithmetic expression with + - * / and parentheses",
  schema: z.object({ expression: z.string().min(1).max(500).describe("e.g. 4821 + 3967") }),
  async handler({ expression }) {
    try {
      return simpleToolResult(evaluateExpression(expression));
    } catch (err) {
      return errorToolResult(`cannot evaluate ${JSON.stringify(expression)}: ${(err as Error).message}`);
    }
  },
});
