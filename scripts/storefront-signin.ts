/**
 * The storefront sign-in against a running gateway (development, identity simulator on):
 * GetId -> GetCredentialsForIdentity -> a SigV4-presigned GET /auth/apikey/get -> the API key.
 *
 *   npx tsx scripts/storefront-signin.ts [--base http://127.0.0.1:3000] [--login alice]
 *
 * Prints the identity, the presigned URL (valid 5 minutes) and the API key. Region and service
 * are IDENTITY_REGION and SIGV4_SERVICE (defaults ap-southeast-1, execute-api).
 */
import { loadConfig } from '../src/config';
import { presignUrl } from '../src/storefront/auth/sigv4';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

async function identity<T>(base: string, target: string, body: unknown): Promise<T> {
  const res = await fetch(`${base}/dev/identity`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Amz-Target': `AWSCognitoIdentityService.${target}` },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${target}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return json as T;
}

async function main() {
  const config = loadConfig();
  const base = arg('base', `http://${config.host}:${config.port}`).replace(/\/+$/, '');
  const { IdentityId } = await identity<{ IdentityId: string }>(base, 'GetId', {
    Logins: { 'talat.dev': arg('login', 'dev-user') },
  });
  const { Credentials } = await identity<{
    Credentials: { AccessKeyId: string; SecretKey: string; SessionToken: string };
  }>(base, 'GetCredentialsForIdentity', { IdentityId });
  const url = await presignUrl({
    url: `${base}/auth/apikey/get`,
    credentials: {
      accessKeyId: Credentials.AccessKeyId,
      secretAccessKey: Credentials.SecretKey,
      sessionToken: Credentials.SessionToken,
    },
    region: config.storefront.sigv4.region,
    service: config.storefront.sigv4.service,
    expiresIn: 300,
  });
  const res = await fetch(url);
  const body = (await res.json()) as { apiKey?: string };
  process.stdout.write(`identity  ${IdentityId}\npresigned ${url}\n`);
  if (!res.ok) throw new Error(`/auth/apikey/get: HTTP ${res.status} ${JSON.stringify(body)}`);
  process.stdout.write(`api key   ${body.apiKey}\n`);
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
