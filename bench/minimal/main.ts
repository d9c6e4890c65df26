/**
 * The minimal app in a process of its own (bench/anchor.ts --cluster forks it, as the cluster runs
 * Talat's gateway and worker in theirs): its options as JSON in argv[2]; answers { type: 'ready',
 * base } once listening, { type: 'statements', n } when asked, and stops on { type: 'stop' }.
 */
import { startMinimal, type MinimalOptions } from './app';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { createLogger } from '../../src/logger';

const options = JSON.parse(process.argv[2]) as MinimalOptions;
installTemporalRuntime(createLogger('warn'), 'WARN');
void startMinimal(options).then((m) => {
  process.on('message', (msg: { type: string }) => {
    if (msg.type === 'statements') process.send!({ type: 'statements', n: m.statements() });
    if (msg.type === 'stop') void m.stop().finally(() => process.exit(0));
  });
  process.on('disconnect', () => void m.stop().finally(() => process.exit(0)));
  process.send!({ type: 'ready', base: m.base });
});
