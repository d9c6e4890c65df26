/**
 * Statements as the budget test names them (test/payments/budget.test.ts): a statement by its
 * verb and the tables it names, and the statements and transactions of a list of knex events.
 */
/** A statement's verb (a WITH's first write, else select) and the tables it names, sorted. */
export function label(sql: string): string {
  const text = sql.replace(/\s+/g, ' ').trim();
  const isWith = /^with\b/i.test(text);
  const verb = isWith ? (/\b(insert|update|delete)\b/i.exec(text)?.[1] ?? 'select') : text.split(' ')[0];
  const ctes = isWith ? [...text.matchAll(/(?:with|,)\s*(\w+) as \(/gi)].map((m) => m[1].toLowerCase()) : [];
  const tables = new Set<string>();
  for (const m of text.matchAll(/\b(?:from|into|update|join)\s+"?([a-z_]+)"?/gi))
    if (!ctes.includes(m[1].toLowerCase()) && !['now', 'set', 'lateral', 'unnest'].includes(m[1].toLowerCase()))
      tables.add(m[1]);
  return [verb.toLowerCase(), ...[...tables].sort()].join(' ');
}

/** statements (labelled) and transactions of a list of knex query events */
export function tally(events: { sql: string; txId?: string }[]): { statements: string[]; transactions: number } {
  const txIds = new Set(events.filter((e) => e.txId).map((e) => e.txId));
  return {
    statements: events.map((e) => label(e.sql)),
    transactions: txIds.size + events.filter((e) => !e.txId).length,
  };
}
