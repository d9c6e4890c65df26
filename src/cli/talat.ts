/**
 * `talat`: Talat's one command line (bin/talat runs the build in dist/ when there is one, else
 * this file through tsx; `npm run apikey|promptpay|migrate|seed` are aliases of its commands).
 * On commander: typed subcommands and options, generated --help, one parse for every command.
 * Exit codes: 0 success, 1 failure, 2 usage (an unknown command or option, a missing argument),
 * 78 a missing or bad setting (EX_CONFIG); every failure says why on stderr.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config';
import { apikeyCommand } from './commands/apikey';
import { databaseCommands } from './commands/database';
import { listenCommand } from './commands/listen';
import { promptpayCommand } from './commands/promptpay';
import { replayCommand } from './commands/replay';
import { triggerCommand } from './commands/trigger';
import { webhooksCommand } from './commands/webhooks';
import { CliError, EXIT } from './context';
import { isEntry } from './entry';

/** The version of package.json, found from this file in src/cli or in dist/src/cli. */
export function packageVersion(): string {
  for (const up of ['../..', '../../..']) {
    const file = path.join(__dirname, up, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}

export function talatProgram(): Command {
  const program = new Command('talat')
    .description('Talat: API keys, PromptPay payloads, migrations, webhooks and the checks before a deploy')
    .version(packageVersion(), '-V, --version', 'print the version of talat')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();
  apikeyCommand(program);
  promptpayCommand(program);
  databaseCommands(program);
  webhooksCommand(program);
  listenCommand(program);
  triggerCommand(program);
  replayCommand(program);
  // every subcommand exits through runTalat below, with the codes above
  const override = (c: Command) => c.commands.forEach((s) => override(s.exitOverride()));
  override(program);
  return program;
}

/** `talat apikey revoke`: the full name of a command, for its messages. */
const fullName = (c: Command | null): string => (c ? `${fullName(c.parent)} ${c.name()}`.trim() : '');

/** Runs `talat <argv>`; resolves with the exit code. */
export async function runTalat(argv: string[]): Promise<number> {
  const program = talatProgram();
  let running: Command | null = null;
  program.hook('preAction', (_, action) => {
    running = action;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version are successes; commander has printed the error itself
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (e instanceof ConfigError) {
      process.stderr.write(`talat: ${e.message}\n`);
      return EXIT.config;
    }
    const code = e instanceof CliError ? e.exitCode : EXIT.failure;
    process.stderr.write(`${fullName(running) || 'talat'}: ${(e as Error).message}\n`);
    return code;
  }
}

if (isEntry(module)) {
  void runTalat(process.argv.slice(2)).then((code) => process.exit(code));
}
