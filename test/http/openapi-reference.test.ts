/**
 * The reference an integrator reads alone: every operation of /openapi.json and every tag has a
 * description, every QR payload example carries its right CRC, and docs/errors.md lists every
 * error code the API can answer (the document's enums and the code enum) and no other.
 */
import fs from 'node:fs';
import path from 'node:path';
import '../../src/app/app';
import { openApiDocument } from '../../src/http/openapi';
import { ErrorCode, httpStatusOf } from '../../src/domain/errors';
import { verifyCrc } from '../../src/domain/promptpay';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const doc = openApiDocument() as Json;
const operations = Object.entries(doc.paths as Json).flatMap(([p, item]) =>
  Object.entries(item as Json).map(([m, op]) => [`${m.toUpperCase()} ${p}`, op as Json] as const),
);

it('describes every operation', () => {
  expect(operations.length).toBeGreaterThan(60);
  const bare = operations.filter(([, op]) => !(typeof op.description === 'string' && op.description.length >= 40));
  expect(bare.map(([name]) => name)).toEqual([]);
});

it('describes every tag it uses, and uses every tag it describes', () => {
  const used = [...new Set(operations.flatMap(([, op]) => (op.tags ?? []) as string[]))].sort();
  const described = ((doc.tags ?? []) as Json[]).filter((t) => String(t.description ?? '').length >= 40);
  expect(described.map((t) => t.name as string).sort()).toEqual(used);
  expect(operations.filter(([, op]) => !op.tags?.length).map(([name]) => name)).toEqual([]);
});

it('every PromptPay payload in an example has the CRC of its data', () => {
  const payloads: string[] = [];
  JSON.stringify(doc, (_k, v: unknown) => {
    if (typeof v === 'string' && /^000201/.test(v)) payloads.push(v);
    return v;
  });
  expect(payloads.length).toBeGreaterThan(0);
  expect(payloads.filter((p) => !verifyCrc(p))).toEqual([]);
});

it('docs/errors.md lists every code the API answers, and only those', () => {
  const table = fs.readFileSync(path.resolve(__dirname, '../../docs/errors.md'), 'utf8');
  const listed = [...table.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])] as const);
  const s = doc.components.schemas as Json;
  const answered = new Set<string>([
    ...Object.values(ErrorCode),
    ...(s.PaymentError.properties.body.properties.code.enum as string[]),
    ...(s.CallbackError.properties.body.properties.error.enum as string[]),
  ]);
  expect([...answered].filter((c) => !listed.some(([l]) => l === c)).sort()).toEqual([]);
  expect(listed.filter(([c]) => !answered.has(c))).toEqual([]);
  expect(listed.filter(([c, status]) => httpStatusOf[c as ErrorCode] !== status)).toEqual([]);
});

it('the changelog states the versioning rule, and its latest release is the version of the document', () => {
  const log = fs.readFileSync(path.resolve(__dirname, '../../docs/changelog.md'), 'utf8');
  expect(log).toMatch(/^## Versioning$/m);
  expect(log).toMatch(/\*\*major\*\*/);
  const released = /^## (\d+\.\d+\.\d+)/m.exec(log)?.[1];
  expect(released).toBe(doc.info.version);
});
