/**
 * docs/architecture.md stays true: every file it names exists, its layer table has the layers of
 * LAYERS in their order, and its feature table has a row for every feature of the tree. The walks
 * it gives are measured and written by test/walks.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LAYERS } from './support/layers';
import { featuresIn } from './support/slices';

const root = path.resolve(__dirname, '..');
const doc = fs.readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');

/** The first cell of each row of a section's table (header and rule aside). */
function firstCells(markdown: string, heading: string): string[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith(heading)) ?? '';
  return [...section.matchAll(/^\| ([^|]+?) \|/gm)]
    .map((m) => m[1])
    .filter((c) => !/^-+$/.test(c))
    .slice(1);
}

describe('docs/architecture.md', () => {
  it('names only files that exist', () => {
    const named = [...doc.matchAll(/`((?:src|workflows|activities|test)\/[^`\s<]+\.ts)`/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((f) => !fs.existsSync(path.join(root, f)))).toEqual([]);
  });

  it('its layer table is LAYERS, in order', () => {
    expect(firstCells(doc, 'Layers')).toEqual(LAYERS.map(([name]) => name));
  });

  it('its feature table has one row per feature of the tree', () => {
    expect(firstCells(doc, 'A feature in one place').sort()).toEqual(featuresIn(root));
  });

  it('the table checks fail on a missing row or a changed order', () => {
    const swapped = doc.replace('| toolkit |', '| TOOLKIT |');
    expect(firstCells(swapped, 'Layers')).not.toEqual(LAYERS.map(([name]) => name));
    const missing = doc.replace(/^\| bank \|.*\n/m, '');
    expect(firstCells(missing, 'A feature in one place').sort()).not.toEqual(featuresIn(root));
  });
});
