/**
 * The layers of docs/architecture.md, top first (test/architecture.test.ts checks the import graph
 * against them; test/architecture-doc.test.ts checks the doc's table).
 */
import path from 'node:path';
import { featuresIn } from './slices';

/** the features, read from the tree (every src/ folder that is not shared infrastructure) */
const FEATURES = `(${featuresIn(path.resolve(__dirname, '../..')).join('|')})`;
/** a feature's face (src/<feature>/index.ts) and the pure files it re-exports: its contract */
export const FACE = new RegExp(`^src/${FEATURES}/index\\.ts$`);
/** a feature's inner files: everything of src/<feature>/ but its face */
export const INNER = new RegExp(`^(?!src/${FEATURES}/index\\.ts$)src/${FEATURES}/`);

/** The layers, top first: a file may import its own layer or one below, never one above. */
export const LAYERS: ReadonlyArray<readonly [string, RegExp]> = [
  ['entry points', /^src\/(main\.ts$|roles\/|cli\/)/],
  ['composition root', /^src\/app\//],
  ['sandbox providers', /^src\/simulators\//],
  ['Temporal side', /^(workflows|activities)\//],
  ['features', INNER],
  ['toolkit', /^src\/(http|temporal)\//],
  ['infrastructure', /^src\/(db|stack|types)\/|^src\/[^/]+\.ts$/],
  ['feature faces', FACE],
  ['domain', /^src\/domain\//],
];
