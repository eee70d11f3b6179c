export * from "./tool.ts";
export * from "./callFormat.ts";
export * from "./rolloutLimits.ts";
export * from "./agentToolEnv.ts";
export { calculatorTool, evaluateExpression } from "./tools/calculator.ts";
export { documentSearchTool, DocumentIndex, readDocuments, type SearchDocument } from "./tools/documentSearch.ts";
