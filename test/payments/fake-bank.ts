/**
 * A stand-in for the partner bank's live API in tests: a real HTTP server on loopback whose
 * answers the test scripts (status, body) and which can hold requests until released.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeBank {
  url: string;
  requests: { method: string; path: string; headers: http.IncomingHttpHeaders; body: unknown }[];
  /** the next answers, in order; when empty, `fallback` */
  answers: { status: number; body: unknown }[];
  fallback: { status: number; body: unknown };
  /** when set, requests wait until release() */
  hold: boolean;
  /** when set, each connection is dropped without an answer (the bank is unreachable) */
  drop: boolean;
  arrived(): Promise<void>;
  release(): void;
  close(): Promise<void>;
}

export async function startFakeBank(): Promise<FakeBank> {
  let waiting: (() => void)[] = [];
  let arrivals: (() => void)[] = [];
  const bank: FakeBank = {
    url: '',
    requests: [],
    answers: [],
    fallback: { status: 500, body: { code: 'internal', message: 'fake bank: no answer scripted' } },
    hold: false,
    drop: false,
    arrived: () => new Promise<void>((resolve) => arrivals.push(resolve)),
    release() {
      bank.hold = false;
      const w = waiting;
      waiting = [];
      w.forEach((f) => f());
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', async () => {
      bank.requests.push({
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        body: raw ? JSON.parse(raw) : undefined,
      });
      const a = arrivals;
      arrivals = [];
      a.forEach((f) => f());
      if (bank.drop) return req.socket.destroy();
      if (bank.hold) await new Promise<void>((resolve) => waiting.push(resolve));
      const answer = bank.answers.shift() ?? bank.fallback;
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  bank.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return bank;
}

export const bankUser = (userId: string, name = 'Somchai') => ({
  userId,
  bankUserId: `usr_${userId}`,
  name,
  email: null,
  phone: null,
  status: 'active',
  createdAt: '2026-11-22T08:00:00.000Z',
});
