/**
 * Whether a CLI module runs as a command: directly (`node dist/src/cli/x.js`) or through
 * scripts/run.cjs (`npm run apikey`, which requires the module, so it is not require.main); not
 * when a test imports it.
 */
export const runsAsCommand = (m: NodeModule): boolean =>
  require.main === m || /scripts[\\/]run\.cjs$/.test(require.main?.filename ?? '');
