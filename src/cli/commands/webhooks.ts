/**
 * `talat webhooks endpoints list | create --url U [--events a,b] | rotate <id>`: the webhook
 * endpoints of an API key (scope webhooks:manage), through the payment API. A secret is shown
 * once: by create and by rotate.
 */
import type { Command } from 'commander';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../webhooks';
import { apiOf, withApiOptions, type ApiOptions } from '../api';
import { output } from '../context';

interface Endpoint {
  id: string;
  url: string;
  mode: string;
  eventTypes: string[] | null;
  disabled: boolean;
  description: string;
  createdAt: string;
}

export function webhooksCommand(program: Command): void {
  const endpoints = program
    .command('webhooks')
    .description('webhook endpoints of an API key, through the payment API')
    .command('endpoints')
    .description('list, create or rotate the secret of webhook endpoints');

  withApiOptions(endpoints.command('list').description('the endpoints of the key'))
    .option('--json', 'print the endpoints as a JSON array')
    .action(async (o: ApiOptions & { json?: boolean }) => {
      const api = apiOf(o);
      const all: Endpoint[] = [];
      for (let after: string | undefined; ;) {
        const page = await api<{ endpoints: Endpoint[]; hasMore: boolean; nextCursor?: string }>(
          'GET',
          `/webhooks/endpoints?limit=100${after ? `&starting_after=${encodeURIComponent(after)}` : ''}`,
        );
        all.push(...page.endpoints);
        if (!page.hasMore || !page.nextCursor) break;
        after = page.nextCursor;
      }
      output(o.json, all, () =>
        all.length === 0
          ? 'no webhook endpoints'
          : all
              .map((e) =>
                [
                  e.id,
                  e.mode,
                  e.url,
                  e.eventTypes?.join(',') ?? 'every event',
                  e.disabled ? 'disabled' : 'enabled',
                ].join('  '),
              )
              .join('\n'),
      );
    });

  withApiOptions(endpoints.command('create').description('register an endpoint; its secret is shown only now'))
    .requiredOption('--url <url>', 'where the webhooks are POSTed (https in production)')
    .option(
      '--events <types>',
      `comma-separated event types (default every one): ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}`,
    )
    .option('--description <text>', 'what the endpoint is')
    .option('--json', 'print the endpoint and its secret as JSON')
    .action(async (o: ApiOptions & { url: string; events?: string; description?: string; json?: boolean }) => {
      const created = await apiOf(o)<Endpoint & { secret: string }>('POST', '/webhooks/endpoints', {
        url: o.url,
        ...(o.events ? { eventTypes: o.events.split(',').map((s) => s.trim()) } : {}),
        ...(o.description ? { description: o.description } : {}),
      });
      output(
        o.json,
        created,
        () =>
          `created ${created.id} (${created.mode}) ${created.url}\n` +
          `its signing secret is shown only now; store it safely:\n${created.secret}`,
      );
    });

  withApiOptions(
    endpoints
      .command('rotate')
      .description('a new signing secret, shown only now; the previous one signs for 24 h more')
      .argument('<id>', 'the endpoint id (ep_...)'),
  )
    .option('--json', 'print the new secret as JSON')
    .action(async (id: string, o: ApiOptions & { json?: boolean }) => {
      const r = await apiOf(o)<{ id: string; secret: string; previousSecretExpiresAt: string }>(
        'POST',
        `/webhooks/endpoints/${encodeURIComponent(id)}/rotate-secret`,
      );
      output(
        o.json,
        r,
        () =>
          `rotated ${r.id}; the previous secret signs until ${r.previousSecretExpiresAt}\n` +
          `the new secret is shown only now; store it safely:\n${r.secret}`,
      );
    });
}
