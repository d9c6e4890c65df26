/**
 * `talat listen [--forward-to URL]`: a local receiver on 127.0.0.1, registered as a webhook
 * endpoint of the API key (through the payment API; the gateway must allow loopback endpoints:
 * WEBHOOK_ALLOW_LOOPBACK=on, development only). Prints each webhook as it arrives with its
 * signature check (verifyWebhook, the integrator's own check), forwards it unchanged to
 * --forward-to and answers Talat with that status; Ctrl-C removes the endpoint it registered.
 * Each line carries the attempt number (the times this session received that webhook-id); the
 * endpoint's dead letters are polled, and each change of one (retrying, gave_up, delivered) is
 * printed as it is seen.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../webhooks';
import { verifyWebhook } from '../../webhooks/signing';
import { apiOf, withApiOptions, type ApiOptions } from '../api';
import { CliError, usage } from '../context';

/** How often the endpoint's dead letters are polled. */
const DEAD_LETTER_POLL_MS = 2000;

interface DeadLetter {
  id: string;
  messageId: string;
  endpointId: string;
  orderId: string;
  attempts: number;
  state?: string;
  nextAttemptAt?: string | null;
}

interface Opts extends ApiOptions {
  forwardTo?: string;
  events?: string;
  port: string;
  json?: boolean;
}

/** Forwards one webhook as it came (headers that sign it, body); the status, or the reason it failed. */
async function forward(url: string, headers: http.IncomingHttpHeaders, body: string) {
  const pass: Record<string, string> = {};
  for (const h of ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent'])
    if (typeof headers[h] === 'string') pass[h] = headers[h] as string;
  try {
    const res = await fetch(url, { method: 'POST', headers: pass, body, signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return { status: res.status };
  } catch (e) {
    return { error: String((e as Error).cause ?? (e as Error).message) };
  }
}

export function listenCommand(program: Command): void {
  withApiOptions(
    program
      .command('listen')
      .description('receive the webhooks of your API key here, check their signature and forward them'),
  )
    .option('--forward-to <url>', 'POST each webhook on to this URL (your handler), signature headers included')
    .option(
      '--events <types>',
      `comma-separated event types (default every one): ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}`,
    )
    .option('--port <port>', 'the local receiver port on 127.0.0.1 (0: any free one)', '0')
    .option('--json', 'print one JSON object per webhook (and one when ready)')
    .action(async (o: Opts) => {
      const api = apiOf(o);
      if (o.forwardTo !== undefined && !/^https?:\/\//.test(o.forwardTo))
        throw usage(`--forward-to: ${JSON.stringify(o.forwardTo)} is not an http(s) URL`);
      const port = Number(o.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw usage(`--port: ${o.port} is not a port`);
      let secret = '';
      const seen = new Map<string, number>();
      const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          void (async () => {
            const body = Buffer.concat(chunks).toString('utf8');
            const valid = verifyWebhook(secret, req.headers, body);
            let event: {
              event?: string;
              type?: string;
              data?: { orderId?: string; status?: string; amount?: number };
            } = {};
            try {
              event = JSON.parse(body);
            } catch {
              // printed as it came
            }
            const id = String(req.headers['webhook-id'] ?? '');
            const attempt = (seen.get(id) ?? 0) + 1;
            seen.set(id, attempt);
            const fwd = o.forwardTo ? await forward(o.forwardTo, req.headers, body) : undefined;
            const line = {
              id: req.headers['webhook-id'],
              attempt,
              signature: valid ? 'valid' : 'INVALID',
              ...event,
              ...(fwd ? { forwarded: { url: o.forwardTo, ...fwd } } : {}),
            };
            process.stdout.write(
              o.json
                ? `${JSON.stringify(line)}\n`
                : `${new Date().toISOString()}  ${event.event === 'order.updated' ? event.type : `payment.${event.data?.status ?? '?'}`}  order ${event.data?.orderId ?? '?'}  ` +
                    `amount ${event.data?.amount ?? '?'}  attempt ${attempt}  signature ${line.signature}  ${line.id ?? ''}` +
                    `${fwd ? `  -> ${o.forwardTo} ${fwd.status ?? `failed: ${fwd.error}`}` : ''}\n`,
            );
            // Talat retries what the handler did not take, as it would without the listener
            res.statusCode = !valid ? 400 : fwd ? (fwd.status ?? 502) : 200;
            res.end();
          })();
        });
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      let endpoint: { id: string; secret: string; mode: string };
      try {
        endpoint = await api('POST', '/webhooks/endpoints', {
          url,
          description: 'talat listen',
          ...(o.events ? { eventTypes: o.events.split(',').map((s) => s.trim()) } : {}),
        });
      } catch (e) {
        server.close();
        const msg = (e as Error).message;
        throw new CliError(
          /public address|public host/.test(msg)
            ? `${msg}\nthe gateway refuses loopback endpoints: start it with WEBHOOK_ALLOW_LOOPBACK=on (development only)`
            : msg,
        );
      }
      secret = endpoint.secret;
      const ready = { ready: true, endpointId: endpoint.id, mode: endpoint.mode, url, secret, forwardTo: o.forwardTo };
      if (o.json) process.stdout.write(`${JSON.stringify(ready)}\n`);
      process.stderr.write(
        `listening on ${url} as webhook endpoint ${endpoint.id} (${endpoint.mode})` +
          `${o.forwardTo ? `, forwarding to ${o.forwardTo}` : ''}\n` +
          `signing secret of this session (verify with it in your handler): ${endpoint.secret}\n` +
          'Ctrl-C removes the endpoint and stops\n',
      );

      // the endpoint's dead letters: each new one, and each change of state, printed once
      const states = new Map<string, string>();
      const poll = async () => {
        const page = await api<{ deadLetters: DeadLetter[] }>('GET', '/webhooks/dead-letters?status=all&limit=200');
        for (const d of page.deadLetters.filter((x) => x.endpointId === endpoint.id).reverse()) {
          const state = d.state ?? 'dead';
          if (states.get(d.id) === state) continue;
          states.set(d.id, state);
          const what =
            state === 'retrying'
              ? `retrying, next attempt at ${d.nextAttemptAt ?? '?'}`
              : state === 'gave_up'
                ? 'gave up: every retry failed (replay it: POST /webhooks/dead-letters/{id}/replay)'
                : state;
          process.stdout.write(
            o.json
              ? `${JSON.stringify({ deadLetter: d.id, id: d.messageId, orderId: d.orderId, attempts: d.attempts, state, nextAttemptAt: d.nextAttemptAt ?? null })}\n`
              : `${new Date().toISOString()}  dead letter ${d.id}  order ${d.orderId}  after ${d.attempts} attempts  ${what}  ${d.messageId}\n`,
          );
        }
      };
      const timer = setInterval(() => {
        poll().catch((e: Error) => process.stderr.write(`could not list dead letters: ${e.message}\n`));
      }, DEAD_LETTER_POLL_MS);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      clearInterval(timer);
      server.close();
      server.closeAllConnections();
      await api('DELETE', `/webhooks/endpoints/${endpoint.id}`);
      process.stderr.write(`removed webhook endpoint ${endpoint.id}\n`);
    });
}
