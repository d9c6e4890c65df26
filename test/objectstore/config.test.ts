/** Object-store settings, presigned URL shapes and signing windows, CDN paths (no I/O). */
import { ConfigError, loadConfig } from '../../src/config';
import { createPresigner } from '../../src/object-store';
import { imageKey, priceKey } from '../../src/storefront/assets/keys';
import { cdnPath, parseCdnFile } from '../../src/storefront/assets/presigned';

describe('object store settings', () => {
  it('development default: the embedded store on 127.0.0.1:9000 with documented credentials, buckets, 15-minute URLs, the gateway as CDN', () => {
    const c = loadConfig({}).objectStore;
    expect(c).toMatchObject({
      endpoint: undefined,
      embedded: { port: 9000 },
      accessKeyId: 'talat-dev',
      buckets: { prices: 'talat-prices', images: 'talat-images' },
      presignExpirySeconds: 900,
      forcePathStyle: true,
      region: 'us-east-1',
      cdnBaseUrl: 'http://127.0.0.1:3000/cdn',
    });
  });

  it('S3_ENDPOINT: that store, no embedded one; production without it: Amazon S3 of the region, virtual-hosted, no dev credentials', () => {
    expect(
      loadConfig({ S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY_ID: 'talat', S3_SECRET_ACCESS_KEY: 'secretsecret' })
        .objectStore,
    ).toMatchObject({
      endpoint: 'http://minio:9000',
      embedded: undefined,
      forcePathStyle: true,
      accessKeyId: 'talat',
    });
    const prod = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://talat@db:5432/talat',
      TEMPORAL_ADDRESS: 'temporal:7233',
      STOREFRONT_KEY_SECRET: 'x'.repeat(32),
      IDENTITY_SECRET: 'y'.repeat(32),
      RESULT_SIGNING_KEY: 'r'.repeat(32),
      WEBHOOK_SECRET_KEY: 'a'.repeat(64),
      TEMPORAL_CODEC_KEYS: 'k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=',
      S3_REGION: 'ap-southeast-1',
      CDN_BASE_URL: 'https://cdn.example.com/p/',
      ...Object.fromEntries(
        ['CARD', 'CARDNET', 'BANKAPP', 'QR', 'WALLET'].flatMap((n) => [
          [`PROVIDER_SECRET_${n}`, 's'.repeat(20)],
          [`PROVIDER_IPS_${n}`, '10.0.0.0/8'],
        ]),
      ),
    }).objectStore;
    expect(prod).toMatchObject({
      endpoint: 'https://s3.ap-southeast-1.amazonaws.com',
      embedded: undefined,
      forcePathStyle: false,
      accessKeyId: undefined,
      cdnBaseUrl: 'https://cdn.example.com/p',
    });
  });

  it.each([
    ['S3_BUCKET_PRICES', 'Prices_Bucket'],
    ['S3_PRESIGN_EXPIRY_S', '10'],
    ['S3_PRESIGN_EXPIRY_S', '700000'],
    ['S3_ENDPOINT', 'not a url'],
    ['OBJECT_STORE_PORT', '70000'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });
});

describe('presigned URLs', () => {
  const store = (env: Record<string, string> = {}) =>
    loadConfig({
      S3_ENDPOINT: 'http://127.0.0.1:9000',
      S3_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      S3_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      ...env,
    }).objectStore as never;

  it('path style: {endpoint}/{bucket}/{key} with SigV4 query parameters; virtual-hosted: {bucket}.{host}/{key}', async () => {
    const p = createPresigner(store());
    const at = new Date('2026-11-23T10:00:00Z');
    const { url, expiresAt } = await p.url('talat-prices', priceKey('B001'), at);
    const u = new URL(url);
    expect(`${u.origin}${u.pathname}`).toBe('http://127.0.0.1:9000/talat-prices/B001.gz');
    expect(Object.fromEntries(u.searchParams)).toMatchObject({
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': 'AKIDEXAMPLE/20261123/us-east-1/s3/aws4_request',
      'X-Amz-Date': '20261123T100000Z',
      'X-Amz-Expires': '900',
      'X-Amz-SignedHeaders': 'host',
      'X-Amz-Signature': expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(expiresAt.toISOString()).toBe('2026-11-23T10:15:00.000Z');
    expect(p.bucketUrl('talat-images')).toBe('http://127.0.0.1:9000/talat-images');

    const vh = createPresigner(
      store({
        S3_ENDPOINT: 'https://s3.ap-southeast-1.amazonaws.com',
        S3_FORCE_PATH_STYLE: 'off',
        S3_REGION: 'ap-southeast-1',
      }),
    );
    const img = new URL((await vh.url('shop-images', imageKey('G1', 'G1-2', 'png'), at)).url);
    expect(`${img.origin}${img.pathname}`).toBe('https://shop-images.s3.ap-southeast-1.amazonaws.com/G1/G1-2.png');
    expect(img.searchParams.get('X-Amz-Credential')).toContain('/ap-southeast-1/s3/');
  });

  it('S3_PUBLIC_ENDPOINT names the host the clients reach; the same window gives the same URL, the next one another', async () => {
    const p = createPresigner(store({ S3_PUBLIC_ENDPOINT: 'http://localhost:9000' }));
    expect(p.windowSeconds).toBe(300);
    const a = p.windowStart(new Date('2026-11-23T10:01:00Z'));
    const b = p.windowStart(new Date('2026-11-23T10:04:59Z'));
    const c = p.windowStart(new Date('2026-11-23T10:05:00Z'));
    expect(a).toEqual(b);
    expect(c.getTime() - a.getTime()).toBe(300_000);
    const [u1, u2, u3] = await Promise.all([a, b, c].map((at) => p.url('talat-prices', 'B002.gz', at)));
    expect(u1.url).toBe(u2.url);
    expect(u3.url).not.toBe(u1.url);
    expect(u1.url.startsWith('http://localhost:9000/talat-prices/B002.gz?')).toBe(true);
  });
});

describe('CDN paths', () => {
  it('{cdn}/{productId} is webp, {cdn}/{productId}-{variant} png or jpg', () => {
    expect(cdnPath('https://cdn.example', 'G872104-1')).toBe('https://cdn.example/G872104-1');
    expect(cdnPath('https://cdn.example', 'G872104-1', 'png')).toBe('https://cdn.example/G872104-1-png');
    expect(parseCdnFile('G872104-1')).toEqual({ productId: 'G872104-1', groupId: 'G872104', format: 'webp' });
    expect(parseCdnFile('G872104-12-jpg')).toEqual({ productId: 'G872104-12', groupId: 'G872104', format: 'jpg' });
    expect(parseCdnFile('G872104')).toBeUndefined();
    expect(parseCdnFile('G872104-1-gif')).toBeUndefined();
    expect(parseCdnFile('../G1-1')).toBeUndefined();
  });
});
