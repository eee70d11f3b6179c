// import() of what is resolved at run time, not bundled: external packages
// (@huggingface/transformers, tsx) and a user's experiment file. The compiled command is one
// vm.Script run with a V8 code cache (bin/compiled.js), and Node 20 refuses import() in a script
// whose code came from that cache ("A dynamic import callback was not specified"), whatever
// importModuleDynamically says. So bin/compiled.js lends the bundle an import() of its own (an ES
// module's, which Node's loader serves) under a registered symbol; from the sources, and in the
// engine's worker (an ES module bundle), this is plain import(). Every import() of something
// outside the bundle goes through here: test/commands/compiled.test.ts fails on any other.

/** The key bin/compiled.js stores its import function under on globalThis. */
export const RUNTIME_IMPORT_KEY = Symbol.for("tinker-cookbook-ts.runtimeImport");

type Importer = (specifier: string) => Promise<unknown>;

/** import(specifier) through Node's loader, from the sources and from the compiled bundle alike. */
export function runtimeImport<Module>(specifier: string): Promise<Module> {
  const lent = (globalThis as { [RUNTIME_IMPORT_KEY]?: Importer })[RUNTIME_IMPORT_KEY];
  return (lent ?? ((s: string) => import(s)))(specifier) as Promise<Module>;
}
