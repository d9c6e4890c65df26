/**
 * docs/security.md lists every door: each route of the running app's routers and each path of
 * /openapi.json (routes that exist only with an object store are there too) has a row in its
 * table, and every test file a row names exists.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { appRoutes } from '../../src/app/app';
import { useTestStack } from '../support/servers';

const stack = useTestStack({ worker: false });
const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'security.md'), 'utf8');
/** `METHOD /path/{param}` of every table row's first cell */
const rows = new Set([...doc.matchAll(/^\| `([A-Z]+ \/[^`]*)` \|/gm)].map((m) => m[1]));
const asDoc = (method: string, p: string) => `${method} ${p.replace(/:([A-Za-z]+)/g, '{$1}')}`;

it('every route of the running app has a row', () => {
  const routes = appRoutes(stack.app);
  expect(routes.length).toBeGreaterThan(50);
  expect(routes.map((r) => asDoc(r.method, r.path)).filter((d) => !rows.has(d))).toEqual([]);
});

it('every path of /openapi.json has a row', async () => {
  const { paths } = (await request(stack.app.callback()).get('/openapi.json')).body as {
    paths: Record<string, Record<string, unknown>>;
  };
  const ops = Object.entries(paths).flatMap(([p, o]) => Object.keys(o).map((m) => asDoc(m.toUpperCase(), p)));
  // the reconciliation schedule's actions are one route, {action}
  // a parameter with a suffix (`{name}.webp`) is the route's one parameter
  const shape = (d: string) => d.replace(/\{[^}]+\}[^/]*/g, '{}');
  const shapes = new Set([...rows].map(shape));
  const missing = ops
    .map((d) => shape(d.replace(/\/schedule\/[a-z]+$/, '/schedule/{action}')))
    .filter((d) => !shapes.has(d));
  expect(missing).toEqual([]);
});

it('every test a row names exists (the Temporal suite excepted: its own file names)', () => {
  const named = [...doc.matchAll(/`([a-z-]+\/[a-z0-9.-]+\.test\.ts)`/g)].map((m) => m[1]);
  expect(named.length).toBeGreaterThan(20);
  expect(named.filter((f) => !fs.existsSync(path.join(__dirname, '..', f)))).toEqual([]);
});

it('every workflow type the workers register has its row under "The rule", naming a test that exists', () => {
  const index = fs.readFileSync(path.join(__dirname, '..', '..', 'workflows', 'index.ts'), 'utf8');
  const types = [...index.match(/^export \{([^}]*)\};/m)![1].matchAll(/(\w+)/g)].map((m) => m[1]);
  expect(types.length).toBeGreaterThan(10);
  const temporal = doc.slice(doc.indexOf('### Workflow starts, signals, updates, queries'));
  const tableRows = temporal.slice(0, temporal.indexOf('\n\n', temporal.indexOf('| Door'))).split('\n');
  const missing = types.filter((t) => {
    const row = tableRows.find((r) => r.split('|')[1]?.includes(`\`${t}\``));
    const tests = [...(row?.split('|')[4] ?? '').matchAll(/`test\/([a-z-]+\/[a-z0-9.-]+\.test\.ts)`/g)];
    return tests.length === 0 || tests.some((m) => !fs.existsSync(path.join(__dirname, '..', m[1])));
  });
  expect(missing).toEqual([]);
});
