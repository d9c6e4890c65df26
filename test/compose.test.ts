/** docker-compose.yml stays valid: it parses, and every service the README names is there with a health check. */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

const root = path.resolve(__dirname, '..');

describe('docker-compose.yml', () => {
  const doc = YAML.parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'));

  it('has postgres, temporal (on that postgres), temporal-ui, minio and the app, each with a health check', () => {
    expect(Object.keys(doc.services).sort()).toEqual(['app', 'minio', 'postgres', 'temporal', 'temporal-ui']);
    for (const [name, svc] of Object.entries<Record<string, unknown>>(doc.services)) {
      expect({ name, test: (svc.healthcheck as { test?: unknown })?.test }).toEqual({ name, test: expect.any(Array) });
    }
    expect(doc.services.temporal.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgres' });
  });

  it('starts services only after what they depend on is healthy, and every dependency exists', () => {
    for (const svc of Object.values<{ depends_on?: Record<string, { condition: string }> }>(doc.services)) {
      for (const [dep, cond] of Object.entries(svc.depends_on ?? {})) {
        expect(doc.services[dep]).toBeDefined();
        expect(cond.condition).toBe('service_healthy');
      }
    }
  });

  it('points the app at the compose postgres and temporal, and the build context has a Dockerfile', () => {
    expect(doc.services.app.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(doc.services.app.environment.DATABASE_URL).toMatch(/@postgres:5432\//);
    expect(doc.services.app.environment).toMatchObject({ S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY_ID: doc.services.minio.environment.MINIO_ROOT_USER });
    expect(fs.existsSync(path.join(root, 'Dockerfile'))).toBe(true);
  });
});
