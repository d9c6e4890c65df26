/**
 * The Temporal runtime's logs are Talat's log (src/temporal/runtime.ts): the SDK's own lines and
 * Core's, forwarded from Rust, come out as JSON lines of the process's pino logger (redaction,
 * batching, `component: "temporal-sdk"`), never as the SDK's or Core's own text lines.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { runtimeOptions, sdkLoggerOf } from '../../src/temporal/runtime';
import { capturingLogger } from '../support/stack';

type Line = Record<string, unknown> & { level: number; msg: string };

const capture = (level: string) => {
  const { logger, lines } = capturingLogger(level);
  return { logger, lines: lines as Line[] };
};

describe("the SDK's logger over pino", () => {
  it('writes JSON lines with the SDK level mapped, the error under err, the secret paths redacted', () => {
    const { logger, lines } = capture('info');
    const sdk = sdkLoggerOf(logger, 'WARN');
    sdk.info('below the SDK level');
    sdk.warn('Activity failed', {
      error: new Error('boom'),
      workflowId: 'payment-ORD-1',
      headers: { 'x-api-key': 'tk_live_secret' },
    });
    sdk.log('ERROR', 'Workflow task failed', { sdkComponent: 'core', target: 'temporalio_sdk_core' });
    expect(lines.map((l) => [l.level, l.msg, l.component])).toEqual([
      [40, 'Activity failed', 'temporal-sdk'],
      [50, 'Workflow task failed', 'temporal-sdk'],
    ]);
    expect(lines[0]).toMatchObject({ workflowId: 'payment-ORD-1', err: { message: 'boom' } });
    expect(String((lines[0].err as { stack: string }).stack)).toMatch(/boom/);
    expect(JSON.stringify(lines[0])).not.toContain('tk_live_secret');
    expect(lines[1]).toMatchObject({ sdkComponent: 'core', target: 'temporalio_sdk_core' });
  });

  it("never writes below the process's own level (LOG_LEVEL=error keeps the SDK's warnings out)", () => {
    const quiet = capture('error');
    sdkLoggerOf(quiet.logger, 'WARN').warn('a warning');
    sdkLoggerOf(quiet.logger, 'DEBUG').error('an error');
    expect(quiet.lines.map((l) => l.msg)).toEqual(['an error']);
    const silent = capture('silent');
    sdkLoggerOf(silent.logger, 'DEBUG').error('nothing');
    expect(silent.lines).toEqual([]);
  });

  it("the runtime forwards Core's logs to that logger, filtered at the same level", () => {
    const { logger } = capture('info');
    const o = runtimeOptions(logger, 'WARN', { metricsPort: 9999 });
    expect(o.telemetryOptions.logging).toEqual({ forward: {}, filter: { core: 'WARN', other: 'WARN' } });
    expect(o.telemetryOptions.metrics?.prometheus.bindAddress).toBe('127.0.0.1:9999');
    expect(o.shutdownSignals).toEqual([]);
  });
});

describe('a process with a worker', () => {
  it("writes only JSON lines: the SDK's and Core's among them, none of their own text lines", () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'runtime-process.ts'), process.env.TALAT_TEST_TEMPORAL_ADDRESS!],
      { cwd: path.join(__dirname, '..', '..'), encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status).toBe(0);
    const out = r.stdout.split('\n').filter(Boolean);
    const lines = out.map((l) => JSON.parse(l) as Line); // throws on any line that is not JSON
    const sdk = lines.filter((l) => l.component === 'temporal-sdk');
    expect(sdk.some((l) => l.sdkComponent === 'core')).toBe(true); // forwarded from Rust
    expect(sdk.some((l) => l.sdkComponent === 'worker')).toBe(true); // the TypeScript SDK's own
    expect(r.stderr).not.toMatch(/temporalio_sdk_core|\[(INFO|WARN|DEBUG)\]/);
  });
});
