/**
 * `npm run bench:webhook-post [-- --posts N --concurrency C]`
 *
 * What one webhook POST (src/webhooks/http.ts, postWebhook, as the settle step and the retries
 * send it) costs the sender, over http and over https, to a receiver on loopback that keeps
 * connections alive as Node's servers do (5 s). Prints, per protocol: POSTs/s, the sender's CPU
 * per POST (its whole process), the receiver's CPU per POST, and how many connections the
 * receiver accepted. Loopback only, bounded (N POSTs each, default 2000; 2 minutes).
 *
 * The https receiver uses a throwaway self-signed certificate for 127.0.0.1 made with `openssl`
 * in a temporary directory (the sender trusts it through NODE_EXTRA_CA_CERTS in a child process);
 * without `openssl` the https line is skipped.
 */
import { execFileSync, fork } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { postWebhook } from '../src/webhooks/http';
import { intArg, loadAverage, runBounded } from './support';

const posts = intArg('--posts', 2000, 20000);
const concurrency = intArg('--concurrency', 8, 64);
const policy = { requireHttps: false, allowLoopback: true };
const body = JSON.stringify({
  type: 'payment.status.updated',
  timestamp: '2026-11-25T00:00:00Z',
  data: { paymentId: 'pay_0123456789abcdef0123456789abcdef', orderId: 'ORD-1', status: 'paid', amount: 250.5 },
});

interface ClientResult {
  rate: number;
  cpuUsPerPost: number;
  failed: number;
}

/** The sender: N POSTs to `url` over C loops; its process CPU per POST. */
async function sender(url: string): Promise<ClientResult> {
  let next = 0;
  let failed = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < posts) {
        const r = await postWebhook(url, { 'content-type': 'application/json' }, body, { timeoutMs: 5_000, policy });
        if (r.statusCode !== 204) failed++;
      }
    }),
  );
  const cpu = process.cpuUsage(c0);
  return { rate: posts / ((performance.now() - t0) / 1000), cpuUsPerPost: (cpu.user + cpu.system) / posts, failed };
}

/** Runs the sender in a child process (trusting `ca` when given) and returns what it measured. */
function senderProcess(url: string, ca?: string): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ['--sender', url, ...process.argv.slice(2)], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ...(ca ? { NODE_EXTRA_CA_CERTS: ca } : {}) },
    });
    child.once('message', (m: ClientResult) => resolve(m));
    child.once('error', reject);
    child.once('exit', (code) => code !== 0 && reject(new Error(`the sender exited with ${code}`)));
  });
}

/** the throwaway certificate's directory, removed at the end */
let certDir: string | undefined;

function selfSignedCert(): { key: string; cert: string; file: string } | undefined {
  const dir = (certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-bench-tls-')));
  const [keyFile, certFile] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ],
      { stdio: 'ignore' },
    );
  } catch {
    return undefined;
  }
  return { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8'), file: certFile };
}

/** the receivers, closed (with their kept-alive connections) when the benchmark ends or is stopped */
const servers: http.Server[] = [];
const stopAll = async () => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  if (certDir) fs.rmSync(certDir, { recursive: true, force: true });
};

async function main() {
  let connections = 0;
  const handler: http.RequestListener = (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  };
  const listen = async (server: http.Server) => {
    servers.push(server);
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  const tls = selfSignedCert();
  const targets: [string, string | undefined, http.Server | undefined][] = [
    ['http', undefined, http.createServer(handler)],
    ['https', tls?.file, tls ? https.createServer({ key: tls.key, cert: tls.cert }, handler) : undefined],
  ];
  const lines: string[] = [];
  for (const [name, ca, server] of targets) {
    if (!server) {
      lines.push(`${name}: skipped (no openssl to make a loopback certificate)`);
      continue;
    }
    const port = await listen(server);
    connections = 0;
    const r0 = process.cpuUsage();
    const r = await senderProcess(`${name}://127.0.0.1:${port}/hooks`, ca);
    const receiver = process.cpuUsage(r0);
    lines.push(
      `${name.padEnd(5)}: ${r.rate.toFixed(0)} POSTs/s, sender CPU ${r.cpuUsPerPost.toFixed(0)} us/POST, ` +
        `receiver CPU ${((receiver.user + receiver.system) / posts).toFixed(0)} us/POST, ` +
        `${connections} connections for ${posts} POSTs${r.failed ? `, ${r.failed} failed` : ''}`,
    );
  }
  console.log(
    [
      '',
      `Talat webhook POST benchmark — ${os.cpus().length} x ${os.cpus()[0]?.model.split(' ')[0] ?? 'CPU'}, Node ${process.version}, ` +
        `${posts} POSTs, ${concurrency} at a time, loopback, load average before ${loadAverage()}`,
      ...lines,
      '',
    ].join('\n'),
  );
}

const i = process.argv.indexOf('--sender');
if (i >= 0) {
  void sender(process.argv[i + 1]).then(
    (r) => process.send!(r, () => process.exit(0)),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
} else {
  runBounded(2, stopAll, main);
}
