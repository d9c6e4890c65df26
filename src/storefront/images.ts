/**
 * Product images and category icons, generated from the catalog data (the data set has no
 * photos): an SVG drawn from the group's aisle, brand, name and variant, converted with sharp
 * to webp, png or jpg. The same data always gives the same picture. Converted images are kept
 * on disk (DATA_DIR/cache/images, named by a hash of their SVG, so a change of the data draws a
 * new file) and the most recent ones in memory; a conversion in flight is shared.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { Logger } from '../logger';
import { representation, type Representation } from '../representation';
import { aisleOf, type CatalogSnapshot, type Category } from './snapshot';
import type { ImageFormat } from './views';

const MIME: Record<ImageFormat, string> = { webp: 'image/webp', png: 'image/png', jpg: 'image/jpeg' };

/** Colours per aisle and collection icon (falls back to a hash-picked colour). */
const PALETTE: Record<string, string> = {
  beef: '#9b2226',
  pork: '#e07a5f',
  chicken: '#e9a23b',
  lamb: '#8d6346',
  seafood: '#1d6fa3',
  delicatessen: '#7f4f24',
  'frozen-food': '#4ea8de',
  dairy: '#5e81ac',
  bakery: '#c08552',
  fruit_new: '#e76f51',
  veg: '#2a9d8f',
  health: '#52b788',
  grocery: '#b08968',
  confectionery: '#d6336c',
  drinks: '#0077b6',
  baby: '#f4a261',
  pet: '#6d597a',
  beauty: '#b5838d',
  'grab-go': '#ef8354',
  brand_only: '#14532d',
  'new-arrival': '#7209b7',
  'special-offer': '#d00000',
  'best-seller': '#ffb703',
  'partnership-shops': '#386641',
  'gourmet-line': '#3d405b',
  'pre-order': '#457b9d',
  'buy-again': '#2b9348',
};
const FALLBACK = ['#264653', '#2a9d8f', '#e9c46a', '#f4a261', '#e76f51', '#6d597a'];

const colourOf = (slug: string): string =>
  PALETTE[slug] ?? FALLBACK[createHash('sha1').update(slug).digest()[0] % FALLBACK.length];

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Greedy word wrap to lines of at most `width` characters, at most `max` lines (ellipsis). */
function wrap(text: string, width: number, max: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && (line + ' ' + word).length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  if (lines.length > max) {
    lines.length = max;
    lines[max - 1] = `${lines[max - 1].slice(0, width - 1)}…`;
  }
  return lines;
}

export function productSvg(s: CatalogSnapshot, groupId: string, imageId: string): string | null {
  const g = s.groups.get(groupId);
  const p = s.products.get(imageId);
  if (!g || !p || p.groupId !== groupId) return null;
  const aisle = aisleOf(s, g.categoryId);
  const colour = colourOf(aisle?.slug ?? g.categoryId);
  const name = wrap(g.nameEn, 20, 3);
  const nameY = 190 - (name.length - 1) * 18;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400" viewBox="0 0 400 400">
<rect width="400" height="400" fill="#f7f5f0"/>
<rect x="24" y="24" width="352" height="352" rx="28" fill="${colour}"/>
<circle cx="330" cy="80" r="90" fill="#ffffff" fill-opacity="0.12"/>
<circle cx="70" cy="340" r="70" fill="#000000" fill-opacity="0.08"/>
<text x="200" y="92" font-family="DejaVu Sans, sans-serif" font-size="20" fill="#ffffff" fill-opacity="0.85" text-anchor="middle" letter-spacing="2">${esc(g.brand.toUpperCase().slice(0, 28))}</text>
${name.map((l, i) => `<text x="200" y="${nameY + i * 36}" font-family="DejaVu Sans, sans-serif" font-size="28" font-weight="bold" fill="#ffffff" text-anchor="middle">${esc(l)}</text>`).join('\n')}
<rect x="110" y="282" width="180" height="48" rx="24" fill="#ffffff"/>
<text x="200" y="314" font-family="DejaVu Sans, sans-serif" font-size="22" font-weight="bold" fill="${colour}" text-anchor="middle">${esc(p.variant.slice(0, 16))}</text>
<text x="44" y="360" font-family="DejaVu Sans, sans-serif" font-size="14" fill="#ffffff" fill-opacity="0.8">${esc(g.storage.toUpperCase())} · ${esc(g.countryCode)}</text>
</svg>`;
}

export function iconSvg(c: Category): string {
  const slug = c.icon ?? c.slug;
  const colour = colourOf(slug);
  const label = wrap(c.nameEn.replace(/&/g, 'and'), 10, 2);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128">
<circle cx="64" cy="64" r="62" fill="${colour}"/>
<circle cx="64" cy="64" r="50" fill="#ffffff" fill-opacity="0.15"/>
${label.map((l, i) => `<text x="64" y="${(label.length === 1 ? 70 : 60) + i * 18}" font-family="DejaVu Sans, sans-serif" font-size="15" font-weight="bold" fill="#ffffff" text-anchor="middle">${esc(l)}</text>`).join('\n')}
</svg>`;
}

export interface ImageStore {
  /** The image drawn by `svg` in `format`, from memory, disk or a fresh conversion. */
  render(name: string, svg: string, format: ImageFormat): Promise<Representation>;
}

export function createImageStore(opts: { cacheDir: string; logger: Logger; memoryEntries?: number }): ImageStore {
  const memory = new Map<string, Promise<Representation>>();
  const max = opts.memoryEntries ?? 256;

  async function convert(svg: string, format: ImageFormat, file: string): Promise<Buffer> {
    try {
      return await fs.promises.readFile(file);
    } catch {
      // not cached yet
    }
    const img = sharp(Buffer.from(svg));
    const bytes = await (
      format === 'webp'
        ? img.webp({ quality: 82 })
        : format === 'png'
          ? img.png({ compressionLevel: 9 })
          : img.flatten({ background: '#ffffff' }).jpeg({ quality: 85 })
    ).toBuffer();
    try {
      await fs.promises.mkdir(path.dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
      await fs.promises.writeFile(tmp, bytes);
      await fs.promises.rename(tmp, file);
    } catch (e) {
      opts.logger.warn({ err: e, file }, 'could not write the image cache');
    }
    return bytes;
  }

  return {
    render(name, svg, format) {
      const hash = createHash('sha256').update(svg).digest('hex').slice(0, 16);
      const key = `${name}.${hash}.${format}`;
      const hit = memory.get(key);
      if (hit) {
        memory.delete(key);
        memory.set(key, hit);
        return hit;
      }
      const file = path.join(
        opts.cacheDir,
        name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 2),
        `${name.replace(/[^A-Za-z0-9_-]/g, '_')}.${hash}.${format}`,
      );
      const value = convert(svg, format, file).then((bytes) => representation(bytes, MIME[format]));
      memory.set(key, value);
      value.catch(() => memory.delete(key));
      if (memory.size > max) memory.delete(memory.keys().next().value as string);
      return value;
    },
  };
}
