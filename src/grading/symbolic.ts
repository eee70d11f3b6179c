// Symbolic equivalence of two normalised answers through mathjs: the LaTeX is rewritten into
// mathjs syntax (fractions, radicals, π, powers, implicit products, mixed numbers, i), both sides
// are compiled, and they are equal when they agree at several probe points for every free
// variable (real and complex), which decides polynomial identities, radicals and constants
// without hand-written algebra. mathjs (~18 MB) is loaded on the first symbolic check only, so
// importing the grader costs nothing until an answer needs it. Each check has a time budget,
// checked between steps; an expression over the budget or that mathjs cannot read is "not equal".
import { createRequire } from "node:module";
import type { EvalFunction, MathJsInstance, MathNode } from "mathjs";

let math: MathJsInstance | null = null;

function mathjs(): MathJsInstance {
  if (math === null) {
    // Resolved at run time from node_modules, in the sources and in the compiled bundle alike.
    const load = createRequire(import.meta.url);
    const lib = load("mathjs") as { create: (f: unknown, c?: object) => MathJsInstance; all: unknown };
    math = lib.create(lib.all, { number: "number" });
    // mathjs builds its functions on first use; do it here, outside any check's time budget.
    math.parse("nthRoot(sqrt(x) * pi + log(2) - sin(x)^2 / 3, 3) + 2 i * x").compile().evaluate({ x: 0.5 });
  }
  return math;
}

/** Functions and constants mathjs knows; any other identifier is a product of single-letter variables. */
const KNOWN_WORDS = new Set([
  "sqrt",
  "nthRoot",
  "pi",
  "sin",
  "cos",
  "tan",
  "sec",
  "csc",
  "cot",
  "asin",
  "acos",
  "atan",
  "sinh",
  "cosh",
  "tanh",
  "log",
  "log10",
  "log2",
  "exp",
  "abs",
  "Infinity",
  "floor",
  "ceil",
]);
const CONSTANTS = new Set(["pi", "e", "i", "Infinity"]);
/** A glued identifier's parts: known names (longest first), else single letters. */
const IDENTIFIER_PARTS = new RegExp(`${[...KNOWN_WORDS].sort((a, b) => b.length - a.length).join("|")}|[a-zA-Z]`, "g");

/** `{…}` or one character at the start of `s`: its text and the characters it took. */
function readGroup(s: string): { value: string; length: number } | null {
  let i = 0;
  while (s[i] === " ") i++;
  if (i >= s.length) return null;
  if (s[i] !== "{") return { value: s[i]!, length: i + 1 };
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    if (s[j] === "{") depth++;
    else if (s[j] === "}") {
      depth--;
      if (depth === 0) return { value: s.slice(i + 1, j), length: j + 1 };
    }
  }
  return null;
}

/** Replaces `\cmd{a}{b}` (n groups) until none is left; null when a group is missing. */
function rewriteCommand(s: string, cmd: string, groups: number, f: (args: string[]) => string): string | null {
  let out = s;
  for (let guard = 0; guard < 50; guard++) {
    const at = out.lastIndexOf(cmd);
    if (at < 0) return out;
    let rest = out.slice(at + cmd.length);
    const args: string[] = [];
    for (let g = 0; g < groups; g++) {
      const group = readGroup(rest);
      if (group === null) return null;
      args.push(group.value);
      rest = rest.slice(group.length);
    }
    out = `${out.slice(0, at)}${f(args)}${rest}`;
  }
  return null;
}

/** mathjs syntax for a normalised LaTeX answer, or null when it is not an expression. */
export function latexToMathjs(latex: string): string | null {
  let s = latex;
  if (/\\(?:text|begin|end|cup|cap|le|ge|neq|pm|mp|in)(?![a-z])|[<>≤≥]|\\\{/.test(s)) return null;
  // A mixed number: an integer right before a fraction of integers ("3\frac{1}{2}" is 3½).
  s = s.replace(
    /(^|[^\d.}])(-?)(\d+)\\frac\{(\d+)\}\{(\d+)\}/g,
    (_w, pre: string, sign: string, whole: string, n: string, d: string) => `${pre}${sign}(${whole}+${n}/${d})`,
  );
  s = s.replace(/\\sqrt\[([^\]]+)\]/g, "\\nthroot{$1}");
  const steps: [string, number, (a: string[]) => string][] = [
    ["\\frac", 2, ([a, b]) => `((${a})/(${b}))`],
    ["\\nthroot", 2, ([n, x]) => `nthRoot((${x}),(${n}))`],
    ["\\sqrt", 1, ([x]) => `sqrt(${x})`],
  ];
  for (const [cmd, n, f] of steps) {
    const next = rewriteCommand(s, cmd, n, f);
    if (next === null) return null;
    s = next;
  }
  s = s
    .replace(/\\(?:cdot|times|ast)/g, "*")
    .replace(/\\div/g, "/")
    .replace(/\\pi/g, " pi ")
    .replace(/\\infty/g, " Infinity ")
    .replace(/\\ln/g, " log ")
    .replace(/\\log/g, " log10 ")
    .replace(/\\(sin|cos|tan|sec|csc|cot|sinh|cosh|tanh|exp)/g, " $1 ")
    .replace(/\\arc(sin|cos|tan)/g, " a$1 ")
    .replace(/\{/g, "(")
    .replace(/\}/g, ")");
  if (s.includes("\\")) return null;
  // Identifiers: known names stay, anything else is a product of letters ("xy" is x·y) and of
  // the known names inside it ("isqrt(3)", from i\sqrt{3}, is i·sqrt(3)).
  s = s.replace(/[a-zA-Z]+/g, (w) => (KNOWN_WORDS.has(w) ? ` ${w} ` : ` ${(w.match(IDENTIFIER_PARTS) ?? []).join(" * ")} `));
  // Implicit products mathjs would read as calls: "x (x+1)", ") (", "2 (".
  s = s.replace(/([a-zA-Z0-9.)])\s*\(/g, (w, c: string, offset: number, all: string) => {
    // The word ending at `offset` (scanned back, not re-matched on the whole prefix).
    let start = offset + 1;
    while (start > 0 && /[a-zA-Z0-9]/.test(all[start - 1]!)) start--;
    const word = all.slice(start, offset + 1);
    return word !== "" && KNOWN_WORDS.has(word) ? w : `${c} * (`;
  });
  s = s.replace(/\)\s*([a-zA-Z0-9])/g, ") * $1");
  return s.replace(/\s+/g, " ").trim();
}

interface Compiled {
  fn: EvalFunction;
  free: string[];
}

const compiled = new Map<string, Compiled | null>();

/** Forgets compiled expressions (for measuring fresh answers). */
export function clearSymbolicCache(): void {
  compiled.clear();
}

function compile(expr: string): Compiled | null {
  const hit = compiled.get(expr);
  if (hit !== undefined) return hit;
  let out: Compiled | null = null;
  try {
    const m = mathjs();
    const node: MathNode = m.parse(expr);
    const free = new Set<string>();
    node.traverse((n) => {
      if (
        (n as MathNode & { isSymbolNode?: boolean }).isSymbolNode &&
        !CONSTANTS.has((n as MathNode & { name: string }).name) &&
        !KNOWN_WORDS.has((n as MathNode & { name: string }).name)
      )
        free.add((n as MathNode & { name: string }).name);
    });
    out = { fn: node.compile(), free: [...free].sort() };
  } catch {
    out = null;
  }
  // A bounded cache: references repeat across a group's samples and a benchmark's examples.
  if (compiled.size > 4096) compiled.clear();
  compiled.set(expr, out);
  return out;
}

/** Probe values for free variables: irrational-ish reals away from 0, ±1 and each other. */
// biome-ignore lint/suspicious/noApproximativeNumericConstant: probe values chosen off the famous constants on purpose
const PROBES = [0.7310585, 1.6180339, -2.2360679, 3.1415926 / 4];

function asComplex(v: unknown): { re: number; im: number } | null {
  if (typeof v === "number") return { re: v, im: 0 };
  if (typeof v === "object" && v !== null && "re" in v && "im" in v) {
    const c = v as { re: unknown; im: unknown };
    if (typeof c.re === "number" && typeof c.im === "number") return { re: c.re, im: c.im };
  }
  return null;
}

function close(a: { re: number; im: number }, b: { re: number; im: number }): boolean {
  if (![a.re, a.im, b.re, b.im].every(Number.isFinite)) return a.re === b.re && a.im === b.im;
  const scale = Math.max(1, Math.hypot(b.re, b.im));
  return Math.hypot(a.re - b.re, a.im - b.im) <= 1e-8 * scale;
}

export interface SymbolicOptions {
  /** Time budget of one check in milliseconds. */
  timeLimitMs: number;
}

/** Whether two expressions (mathjs syntax) take the same value everywhere probed; false on any doubt. */
export function equivalentExpressions(a: string, b: string, options: SymbolicOptions): boolean {
  mathjs(); // loading the library once is not part of any check's budget
  const start = performance.now();
  const over = (): boolean => performance.now() - start > options.timeLimitMs;
  if (a.length > 300 || b.length > 300) return false;
  const ca = compile(a);
  const cb = compile(b);
  if (ca === null || cb === null || over()) return false;
  const vars = [...new Set([...ca.free, ...cb.free])];
  const rounds = vars.length === 0 ? 1 : PROBES.length;
  for (let r = 0; r < rounds; r++) {
    const scope: Record<string, number> = {};
    vars.forEach((v, k) => (scope[v] = PROBES[(r + k) % PROBES.length]! + k * 0.1));
    let va: { re: number; im: number } | null;
    let vb: { re: number; im: number } | null;
    try {
      va = asComplex(ca.fn.evaluate({ ...scope }));
      vb = asComplex(cb.fn.evaluate({ ...scope }));
    } catch {
      return false;
    }
    if (va === null || vb === null || Number.isNaN(va.re) || Number.isNaN(vb.re) || !close(va, vb) || over()) return false;
  }
  return true;
}
