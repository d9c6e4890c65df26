/**
 * The payment API as the integrator commands (`talat webhooks`, `listen`, `trigger`) call it: the
 * gateway at --api-url (TALAT_API_URL; default the configured PUBLIC_BASE_URL, else
 * http://HOST:PORT, so http://127.0.0.1:3000) with the key of --api-key (TALAT_API_KEY). An
 * error envelope becomes a CliError naming the status, code and message.
 */
import { Option, type Command } from 'commander';
import { loadConfig } from '../config';
import { CliError, usage } from './context';

export interface ApiOptions {
  apiUrl?: string;
  apiKey?: string;
}

/** Adds --api-url and --api-key to `cmd`. */
export function withApiOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--api-url <url>',
        'the gateway (default: PUBLIC_BASE_URL, else http://HOST:PORT: 127.0.0.1:3000)',
      ).env('TALAT_API_URL'),
    )
    .addOption(new Option('--api-key <key>', 'an API key with the scopes the command needs').env('TALAT_API_KEY'));
}

export type Api = <T>(method: string, path: string, body?: unknown) => Promise<T>;

/** Calls the API; resolves with the envelope's `body`. */
export function apiOf(o: ApiOptions): Api {
  if (!o.apiKey) throw usage('an API key is needed: --api-key <key> or TALAT_API_KEY');
  const url = o.apiUrl ?? loadConfig().publicBaseUrl;
  if (!URL.canParse(url)) throw usage(`--api-url: ${JSON.stringify(url)} is not a URL`);
  const base = url.replace(/\/+$/, '');
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers: { 'x-api-key': o.apiKey!, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (e) {
      throw new CliError(
        `${method} ${base}${path}: ${(e as Error).cause ?? (e as Error).message} (is the gateway running?)`,
      );
    }
    const text = await res.text();
    let json: { body?: { error?: string; code?: string } } | undefined;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const b = json?.body;
      throw new CliError(
        `${method} ${path} answered ${res.status}${b?.code ? ` ${b.code}` : ''}: ${b?.error ?? text.slice(0, 200)}`,
      );
    }
    return json?.body as T;
  };
}
