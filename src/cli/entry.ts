/**
 * Whether a command module is the one being run: Node's main module (`node --import tsx
 * src/cli/x.ts`) or the entry `scripts/run.cjs` loads for `npm run <command>` (there the main
 * module is run.cjs itself, so `require.main === module` alone is false and the command would
 * print nothing).
 */
export function isEntry(mod: NodeModule): boolean {
  return require.main === mod || (globalThis as { talatEntry?: string }).talatEntry === mod.filename;
}
