/** Reconciliation's settings: documented defaults, the mode by environment, a bad cron refused with its name. */
import { ConfigError, loadConfig } from '../../src/config';

it('defaults, and the mode of the environment', () => {
  expect(loadConfig({ NODE_ENV: 'test' }).reconciliation).toEqual({
    bucket: 'talat-settlements',
    schedules: true,
    cron: '0 6 * * *',
    mode: 'sandbox',
    fileWaitSeconds: 21_600,
    filePollSeconds: 900,
  });
  expect(loadConfig({ NODE_ENV: 'test', RECONCILIATION_MODE: 'live' }).reconciliation.mode).toBe('live');
});

it.each([
  ['RECONCILIATION_CRON', 'every day'],
  ['RECONCILIATION_CRON', '0 6 * *'],
  ['RECONCILIATION_MODE', 'test'],
  ['RECONCILIATION_FILE_POLL_S', '0'],
  ['S3_BUCKET_SETTLEMENTS', 'Settlements'],
])('%s=%s is refused, naming the variable', (name, value) => {
  expect(() => loadConfig({ NODE_ENV: 'test', [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ NODE_ENV: 'test', [name]: value })).toThrow(new RegExp(name));
});
