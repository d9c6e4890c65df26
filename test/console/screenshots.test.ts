/**
 * docs/console.md's screenshots: every page the browser test records in
 * docs/images/console-structure.json has its PNG (written by the same run), the guide shows each,
 * and each is a PNG of the browser test's screen width. The structure itself is compared by
 * test/console/browser.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');
const images = path.join(root, 'docs', 'images');
const guide = fs.readFileSync(path.join(root, 'docs', 'console.md'), 'utf8');
const pages = Object.keys(
  JSON.parse(fs.readFileSync(path.join(images, 'console-structure.json'), 'utf8')) as Record<string, string[]>,
);

it('records the seven pages', () => {
  expect(pages.sort()).toEqual(['links', 'order', 'overview', 'payments', 'reconciliation', 'sign-in', 'webhooks']);
});

it.each(pages)('%s: its PNG exists, is 1200 px wide, and docs/console.md shows it', (page) => {
  const file = path.join(images, `console-${page}.png`);
  const png = fs.readFileSync(file);
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  expect(png.readUInt32BE(16)).toBe(1200); // IHDR width
  expect(guide).toContain(`](images/console-${page}.png)`);
});

it('every console screenshot in docs/images is shown in the guide', () => {
  const shots = fs.readdirSync(images).filter((f) => /^console-.*\.png$/.test(f));
  expect(shots.filter((f) => !guide.includes(`](images/${f})`))).toEqual([]);
});
