/** OpenAPI description of the storefront routes (storefront.ts, storefront-auth.ts). */
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { PaymentError, z } from '../http/openapi';
import * as ex from './openapi-examples';

const StorefrontError = PaymentError;
const errors = (codes: number[]) =>
  Object.fromEntries(
    codes.map((c) => [
      String(c),
      { description: `error (${c})`, content: { 'application/json': { schema: StorefrontError } } },
    ]),
  );
const cached = {
  ETag: {
    description: 'strong validator of the representation (gzip twin: -gz suffix)',
    schema: { type: 'string' as const },
  },
  'Cache-Control': { description: 'how long the answer may be reused', schema: { type: 'string' as const } },
};
const rateLimitHeaders = {
  'X-RateLimit-Limit': {
    description: 'requests allowed per minute and client address',
    schema: { type: 'integer' as const },
  },
  'X-RateLimit-Remaining': { description: 'requests left in the current minute', schema: { type: 'integer' as const } },
  'X-RateLimit-Reset': {
    description: 'unix time (seconds) when the window resets',
    schema: { type: 'integer' as const },
  },
};
const notModified = { 304: { description: 'If-None-Match matched: not modified', headers: cached } };
const ifNoneMatch = z.object({ 'if-none-match': z.string().optional() });
type Headers = Record<string, { description: string; schema: { type: 'string' | 'integer' } }>;
const json = (schema: z.ZodTypeAny, description: string, headers: Headers = cached, example?: unknown) => ({
  description,
  headers,
  content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } },
});

/** The price answer's second form: the .gz file itself, for a client that sends Accept: application/gzip. */
const withGzipFile = (res: ReturnType<typeof json>) => ({
  ...res,
  content: {
    ...res.content,
    'application/gzip': {
      schema: {
        type: 'string' as const,
        format: 'binary',
        description: 'the same JSON, gzip-compressed (with Accept: application/gzip)',
      },
    },
  },
});

/** The YAML schema files: open objects under named top-level keys (the shop app reads these keys). */
const openObject = (description: string) => ({ type: 'object' as const, additionalProperties: true, description });
const openList = (description: string) => ({ type: 'array' as const, items: openObject('an entry'), description });
const YAML_SCHEMAS = {
  'config.yaml': {
    type: 'object' as const,
    description: 'the shop app configuration',
    properties: {
      version: { type: 'integer' as const, description: 'format version (1)' },
      shop: openObject('names, currency, locales, time zone'),
      api: openObject('paths: the API paths the app calls'),
      images: openObject('image paths, formats and the default format'),
      search: openObject('search path, parameter, maximum query length, languages'),
      inventory: openObject('stock path and its cache-buster parameter'),
      prices: openObject('price path, method, content type and encoding, unit'),
      auth: openObject('API key and invalidation paths, key header, SigV4 signing parameters'),
      storage: { type: 'array' as const, items: { type: 'string' as const }, description: 'storage kinds' },
      branches: openList('branches: id, names, district, coordinates, delivery radius'),
    },
  },
  'firstPageCat.yaml': {
    type: 'object' as const,
    description: 'the home page categories in icon order',
    properties: {
      categories: openList(
        'position, id, slug, kind (aisle or collection), names, icon, link, groupCount and (aisles) children',
      ),
    },
  },
};

const CategoryNode = z.object({
  id: z.string(),
  slug: z.string(),
  nameEn: z.string(),
  nameTh: z.string(),
  position: z.number().int(),
  groupCount: z.number().int(),
});
const CatalogTree = z.object({
  aisles: z.array(CategoryNode.extend({ icon: z.string(), children: z.array(CategoryNode) })),
  collections: z.array(CategoryNode.extend({ icon: z.string() })),
  iconOrder: z.array(z.string()),
});
const Banner = z.object({
  id: z.string(),
  placement: z.enum(['sticky', 'home', 'category']),
  categoryId: z.string().optional(),
  titleEn: z.string(),
  titleTh: z.string(),
  imageKey: z.string(),
  link: z.string(),
  position: z.number().int(),
  startsAt: z.string(),
  endsAt: z.string(),
});
const Variant = z.object({
  productId: z.string(),
  variant: z.string(),
  nameEn: z.string(),
  nameTh: z.string(),
  barcode: z.string(),
  unit: z.string(),
  size: z.number(),
  weightGrams: z.number().int(),
  vatable: z.boolean(),
  image: z.string(),
});
const GroupSummary = z.object({
  groupId: z.string(),
  nameEn: z.string(),
  nameTh: z.string(),
  brand: z.string(),
  categoryId: z.string(),
  aisleId: z.string().nullable(),
  collections: z.array(z.string()),
  countryCode: z.string(),
  storage: z.enum(['ambient', 'chilled', 'frozen']),
  image: z.string(),
});
const SignedUrl = z.string().openapi({
  description:
    'presigned GET URL of the image in the object store (with an object store configured; valid until imageUrlsExpireAt)',
});
const CdnImage = z.string().openapi({
  description: 'CDN path of the variant image: {cdnUrl}/{productId} (with an object store configured)',
});
const ImageUrlsExpireAt = z.string().openapi({
  description: 'ISO 8601: when the presigned URLs of this answer stop working (with an object store configured)',
});
const SignedVariantLinks = { imageUrl: SignedUrl.optional(), cdnImage: CdnImage.optional() };
const CategoryRef = z
  .object({ id: z.string(), slug: z.string(), nameEn: z.string(), nameTh: z.string() })
  .nullable()
  .openapi({ description: 'null when the catalog has no such category' });
const Formats = z.object({ webp: z.string(), png: z.string(), jpg: z.string() });
const GroupImage = z.object({
  imageId: z.string().openapi({ description: '<groupId>-<n>, one per variant' }),
  webp: z.string().openapi({ description: "the gateway's own path of the image in webp" }),
  png: z.string(),
  jpg: z.string(),
  urls: Formats.optional().openapi({
    description: 'presigned object-store URLs per format (with an object store configured)',
  }),
  cdn: Formats.optional().openapi({ description: 'CDN paths per format (with an object store configured)' }),
});
const FirstPage = z.object({
  shop: z.object({
    nameEn: z.string(),
    nameTh: z.string(),
    currency: z.string(),
    locales: z.array(z.string()),
    defaultLocale: z.string(),
    timezone: z.string().openapi({ description: 'IANA time zone of the shop' }),
  }),
  schema: z.object({
    config: z.string().openapi({ description: 'path of config.yaml' }),
    firstPageCat: z.string().openapi({ description: 'path of firstPageCat.yaml' }),
  }),
  api: z.record(z.string()).openapi({ description: 'the API paths the app calls, by name' }),
  loadOrder: z.array(z.string()).openapi({ description: 'what the app loads at start-up, in this order' }),
  iconOrder: z.array(z.string()).openapi({ description: 'icon names of the home page row' }),
  categories: z.array(
    z.object({
      position: z.number().int(),
      id: z.string(),
      slug: z.string(),
      kind: z.enum(['aisle', 'collection']),
      nameEn: z.string(),
      nameTh: z.string(),
      icon: z.string(),
      link: z.string(),
      groupCount: z.number().int(),
    }),
  ),
  branches: z.array(
    z.object({
      branchId: z.string(),
      nameEn: z.string(),
      nameTh: z.string(),
      district: z.string(),
      lat: z.number(),
      lng: z.number(),
      deliveryRadiusKm: z.number(),
    }),
  ),
  search: z.object({ maxQueryLength: z.number().int() }),
  objectStore: z
    .object({
      priceBucketUrl: z.string().openapi({ description: 'base URL of the price bucket' }),
      priceFileKey: z.string().openapi({ description: "a branch's price file key: {branchId}.gz" }),
      priceUrl: z.string().openapi({ description: "the path that hands out a branch's presigned price file URL" }),
      priceUrls: z
        .record(z.string())
        .openapi({ description: 'presigned URL of every branch price file, by branch id' }),
      imageBucketUrl: z.string().openapi({ description: 'base URL of the image bucket' }),
      imageKey: z.string().openapi({ description: "an image's key: {groupId}/{imageId}.{webp|png|jpg}" }),
      cdnUrl: z.string().openapi({ description: 'CDN base URL (CDN_BASE_URL, else the gateway /cdn)' }),
      cdnPath: z.string().openapi({ description: "a variant image's CDN path: {cdnUrl}/{productId}[-{png|jpg}]" }),
      expiresAt: z.string().openapi({ description: 'ISO 8601: when the presigned URLs stop working' }),
    })
    .optional()
    .openapi({ description: 'with an object store configured: where the price files and images are' }),
});
const IdentityId = z.string().openapi({ description: '<IDENTITY_REGION>:<uuid>' });
const IdentityRequest = z.union([
  z
    .object({
      IdentityPoolId: z.string().optional().openapi({ description: 'accepted and ignored' }),
      Logins: z
        .record(z.string())
        .optional()
        .openapi({ description: 'GetId: at most one {<provider>: <subject>}; none: a new guest identity' }),
    })
    .openapi({ title: 'GetId' }),
  z.object({ IdentityId }).openapi({ title: 'GetCredentialsForIdentity' }),
]);
const IdentityAnswer = z.union([
  z.object({ IdentityId }).openapi({ title: 'GetId' }),
  z
    .object({
      IdentityId,
      Credentials: z.object({
        AccessKeyId: z.string(),
        SecretKey: z.string(),
        SessionToken: z.string(),
        Expiration: z.number().int().openapi({ description: 'unix seconds' }),
      }),
    })
    .openapi({ title: 'GetCredentialsForIdentity' }),
]);
const Price = z.number().nullable().openapi({ description: 'THB, at most 2 decimals' });
const Promotion = z.object({
  promotionId: z.string(),
  type: z.enum(['multi_buy', 'percent_off', 'fixed_price']),
  promotionGroupId: z.string().nullable(),
  groupIds: z.array(z.string()),
  productIds: z.array(z.string()),
  buyQuantity: z.number().int(),
  payPrice: Price,
  percent: z.number().nullable(),
  titleEn: z.string(),
  titleTh: z.string(),
  startsAt: z.string(),
  endsAt: z.string(),
  items: z.array(
    z.object({
      productId: z.string(),
      groupId: z.string(),
      variant: z.string(),
      nameEn: z.string(),
      nameTh: z.string(),
      price: Price,
    }),
  ),
});
const SearchResult = z.object({
  query: z.string(),
  branchId: z.string().nullable(),
  total: z.number().int(),
  results: z.array(
    z.object({
      groupId: z.string(),
      nameEn: z.string(),
      nameTh: z.string(),
      brand: z.string(),
      categoryId: z.string(),
      image: z.string(),
      score: z.number(),
      matchedBy: z.array(z.enum(['exact', 'lexical', 'synonym', 'trigram', 'vector', 'concept'])).openapi({
        description:
          'the rankers that found the group; concept: the query names a concept of the catalog lexicon the group belongs to',
      }),
      priceFrom: Price,
      inStock: z.boolean(),
      onPromotion: z.boolean(),
      variantCount: z.number().int(),
      variants: z.array(
        z.object({
          productId: z.string(),
          variant: z.string(),
          nameEn: z.string(),
          nameTh: z.string(),
          price: Price,
          inStock: z.boolean(),
          onPromotion: z.boolean(),
        }),
      ),
    }),
  ),
});

export function register(registry: OpenAPIRegistry): void {
  const tags = ['storefront'];
  const get = (
    path: string,
    summary: string,
    description: string,
    response: Record<string, unknown>,
    codes: number[],
    request?: Record<string, unknown>,
  ) =>
    registry.registerPath({
      method: 'get',
      path,
      summary,
      description,
      tags,
      request: { headers: ifNoneMatch, ...request },
      responses: { 200: response, ...notModified, ...errors(codes) } as never,
    });

  get(
    '/api/v2/catalog-tree/catalog-tree',
    'The catalog tree',
    'Aisles with their subcategories and group counts, and the merchandising collections, with icon paths.',
    json(registry.register('CatalogTree', CatalogTree), 'the tree', cached, ex.catalogTree),
    [500],
  );
  get(
    '/api/v2/catalog-tree/sticky-banner',
    'The sticky banner',
    'The sticky banner running now (null when none). max-age never reaches past the next banner start or end.',
    json(z.object({ banner: Banner.nullable() }), 'the banner', cached, ex.stickyBanner),
    [500],
  );
  get(
    '/api/v2/catalog-tree/banner-tree',
    'Home and category banners',
    'Banners running now (startsAt <= now <= endsAt), home first, then per category in catalog order.',
    json(
      z.object({
        home: z.array(Banner),
        categories: z.array(
          z.object({ categoryId: z.string(), slug: z.string().nullable(), banners: z.array(Banner) }),
        ),
      }),
      'the banners',
      cached,
      ex.bannerTree,
    ),
    [500],
  );
  get(
    '/api/product/productlist/onlineData',
    'The product list',
    'Every product group with its variants; prices (getallgz) and stock (inventory2) come separately. gzip when Accept-Encoding allows it.',
    json(
      z.object({
        count: z.number().int(),
        groups: z.array(
          GroupSummary.extend({
            variants: z.array(Variant.extend(SignedVariantLinks)),
            imageUrl: SignedUrl.optional(),
          }),
        ),
        imageUrlsExpireAt: ImageUrlsExpireAt.optional(),
      }),
      'the list',
      cached,
      ex.productList,
    ),
    [500],
  );
  registry.registerPath({
    method: 'get',
    path: '/api/search2/semantic_search',
    summary: 'Search products (Thai and English)',
    description:
      'Hybrid search: full text over Thai split into words (Intl.Segmenter and the catalog lexicon), trigram similarity for typos, keyword synonyms from the data and a vector ranking, fused by reciprocal rank fusion. Results are groups with the variants matching the size words of the query (all variants when it names none), prices and stock flags (at branchId, else at any branch).',
    tags,
    request: {
      query: z.object({
        query: z.string().openapi({
          description: 'required, 1 to SEARCH_MAX_QUERY_LENGTH (200) characters after trimming',
          example: 'mango',
        }),
        limit: z.number().int().min(1).max(50).optional().openapi({ description: 'default 20' }),
        branchId: z.string().optional(),
      }),
    },
    responses: { 200: json(SearchResult, 'ranked groups', {}, ex.search), ...errors([400, 404]) },
  });
  get(
    '/api/group/read/{groupId}',
    'A product group',
    'Names, descriptions, category path, images, variants with prices and stock (any branch), promotions running now.',
    json(
      GroupSummary.extend({
        descriptionEn: z.string(),
        descriptionTh: z.string(),
        keywords: z.array(z.string()).openapi({ description: 'search keywords of the group (Thai and English)' }),
        category: CategoryRef,
        aisle: CategoryRef,
        images: z.array(GroupImage),
        variants: z.array(
          Variant.extend({
            price: Price,
            inStock: z.boolean().openapi({ description: 'in stock at some branch' }),
            ...SignedVariantLinks,
          }),
        ),
        promotions: z.array(Promotion),
        imageUrl: SignedUrl.optional(),
        imageUrlsExpireAt: ImageUrlsExpireAt.optional(),
      }),
      'the group',
      cached,
      ex.group,
    ),
    [400, 404],
    { params: z.object({ groupId: z.string().openapi({ example: 'G784972' }) }) },
  );
  get(
    '/api/group/image/{groupId}/{imageId}',
    'An image of a group',
    'imageId is <groupId>-<n> (one image per variant) with .webp (default), .png or .jpg (.jpeg). Generated from the catalog with sharp and cached.',
    {
      description: 'the image',
      headers: cached,
      content: {
        'image/webp': { schema: { type: 'string', format: 'binary' } },
        'image/png': { schema: { type: 'string', format: 'binary' } },
        'image/jpeg': { schema: { type: 'string', format: 'binary' } },
      },
    },
    [400, 404],
    {
      params: z.object({
        groupId: z.string().openapi({ example: 'G784972' }),
        imageId: z.string().openapi({ example: 'G784972-1.webp' }),
      }),
    },
  );
  get(
    '/api/inventory2/{branchId}',
    'Stock of a branch',
    'Quantity per product id at the branch (0 = out of stock). timestamp is a cache-buster, accepted and ignored.',
    json(
      z.object({ branchId: z.string(), updatedAt: z.string().nullable(), products: z.record(z.number().int()) }),
      'the stock',
      cached,
      ex.inventory,
    ),
    [400, 404],
    {
      params: z.object({ branchId: z.string().openapi({ example: 'B001' }) }),
      query: z.object({ timestamp: z.number().optional() }),
    },
  );
  registry.registerPath({
    method: 'post',
    path: '/api/price/getallgz',
    summary: 'All prices, gzip-compressed',
    description:
      'Precomputed once per price change. Default: Content-Type application/json with Content-Encoding gzip (HTTP clients decompress it). With Accept: application/gzip: the .gz file itself (Content-Type application/gzip). Accept-Encoding that refuses gzip: plain JSON. If-None-Match -> 304 (a read, though sent as POST). Body: {} or {timestamp}.',
    tags,
    request: {
      headers: ifNoneMatch,
      body: {
        content: {
          'application/json': {
            schema: z.object({ timestamp: z.number().optional() }).openapi({ example: { timestamp: 1795852800000 } }),
          },
        },
      },
    },
    responses: {
      200: withGzipFile(
        json(
          z.object({ currency: z.literal('THB'), updatedAt: z.string().nullable(), prices: z.record(z.number()) }),
          'the prices (THB per product id)',
          cached,
          ex.prices,
        ),
      ),
      ...notModified,
      ...errors([400, 415]),
    },
  });
  get(
    '/api/promotion/get-two4',
    'Multi-buy deal of a promotion group',
    'The multi_buy promotion running now whose promotion group id is groupId (by the shop convention the lead group id); 404 when none runs.',
    json(Promotion, 'the deal', cached, ex.promotion),
    [400, 404],
    { query: z.object({ groupId: z.string().openapi({ example: 'G851378' }) }) },
  );
  get(
    '/public/image/category/{name}.webp',
    'A category icon',
    'The 27 icons of the app (iconOrder of the catalog tree): 19 aisles and 8 collections.',
    {
      description: 'the icon',
      headers: cached,
      content: { 'image/webp': { schema: { type: 'string', format: 'binary' } } },
    },
    [404],
    { params: z.object({ name: z.string().openapi({ example: 'beef' }) }) },
  );
  get(
    '/app-first-page.json',
    'App start-up configuration',
    'Shop settings, schema file paths, API paths, icon row, branches.',
    json(FirstPage, 'the configuration', cached, ex.firstPage),
    [500],
  );
  for (const file of ['config.yaml', 'firstPageCat.yaml'])
    get(
      `/schema/talat/master/webData/${file}`,
      `Schema file ${file}`,
      `Served at SCHEMA_BASE_PATH/SCHEMA_NAME/master/webData/${file} (defaults shown). YAML built from the catalog.`,
      {
        description: 'YAML',
        headers: cached,
        content: {
          'application/yaml': {
            schema: YAML_SCHEMAS[file as keyof typeof YAML_SCHEMAS],
            example:
              file === 'config.yaml'
                ? { version: 1, shop: { nameEn: 'Sala Market', nameTh: 'ศาลา มาร์เก็ต', currency: 'THB' } }
                : {
                    categories: [
                      { position: 1, id: 'cat-beef', slug: 'beef', kind: 'aisle', nameEn: 'Beef', nameTh: 'เนื้อวัว' },
                    ],
                  },
          },
        },
      },
      [500],
    );

  registry.registerPath({
    method: 'get',
    path: '/auth/apikey/get',
    summary: 'Get the storefront API key (SigV4 presigned)',
    description:
      'Query: X-Amz-Algorithm (AWS4-HMAC-SHA256), X-Amz-Credential (<key id>/<yyyymmdd>/<IDENTITY_REGION>/<SIGV4_SERVICE>/aws4_request), X-Amz-Date, X-Amz-Expires (<= 604800), X-Amz-SignedHeaders (must include host), X-Amz-Security-Token, X-Amz-Signature: a presigned GET of this path with temporary credentials of the identity service. Returns the active key of the identity, or issues one. 400: a parameter missing or malformed; 401: the signature does not authenticate (details.reason).',
    tags,
    request: {
      query: z.object({
        'X-Amz-Algorithm': z.string().openapi({ example: 'AWS4-HMAC-SHA256' }),
        'X-Amz-Credential': z
          .string()
          .openapi({ example: 'ASIAYWTCAGVGJOU7U7R3/20261122/ap-southeast-1/execute-api/aws4_request' }),
        'X-Amz-Date': z.string().openapi({ example: '20261122T080000Z' }),
        'X-Amz-Expires': z.string().openapi({ example: '300' }),
        'X-Amz-SignedHeaders': z.string().openapi({ example: 'host' }),
        'X-Amz-Security-Token': z
          .string()
          .openapi({ example: 'l9RjHV94t4xr4Y3u66uj7o_zEJrH8Lb_4tQFson5D0DQAzrbMelusPh7L7qY8Wun' }),
        'X-Amz-Signature': z
          .string()
          .openapi({ example: '5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7' }),
      }),
    },
    responses: {
      200: json(
        z.object({
          apiKey: z.string(),
          keyId: z.string(),
          identityId: z.string(),
          createdAt: z.string(),
          created: z.boolean(),
        }),
        'the key',
        rateLimitHeaders,
        {
          apiKey: 'sfk_Qb3mZ8r1Xv0yKc7TnW5eHs2LdP9gJu4AfR6oIiE1tYw',
          keyId: 'sfkid_2b7e151628aed2a6abf7158809cf4f3c',
          identityId: 'ap-southeast-1:61166382-e294-41a0-aaf0-ef472a65f935',
          createdAt: '2026-11-22T08:00:00.000Z',
          created: true,
        },
      ),
      ...errors([400, 401, 429]),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/auth/invalidate/invalidate',
    summary: "Invalidate the caller's session",
    description:
      'Authenticate with the storefront API key in X-API-Key. The key and every temporary credential of its identity stop working at once.',
    tags,
    request: { headers: z.object({ 'x-api-key': z.string() }) },
    responses: {
      200: json(
        z.object({
          invalidated: z.literal(true),
          keyId: z.string(),
          identityId: z.string(),
          revokedCredentials: z.number().int(),
        }),
        'invalidated',
        rateLimitHeaders,
        {
          invalidated: true,
          keyId: 'sfkid_2b7e151628aed2a6abf7158809cf4f3c',
          identityId: 'ap-southeast-1:61166382-e294-41a0-aaf0-ef472a65f935',
          revokedCredentials: 2,
        },
      ),
      ...errors([401, 429]),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/dev/identity',
    summary: 'Identity simulator (development)',
    description:
      'Only with SIMULATORS on (default outside production). X-Amz-Target AWSCognitoIdentityService.GetId with {Logins?: {<provider>: <subject>}} -> {IdentityId} (the same identity for the same login; a new guest without one); AWSCognitoIdentityService.GetCredentialsForIdentity with {IdentityId} -> {IdentityId, Credentials: {AccessKeyId, SecretKey, SessionToken, Expiration (unix s)}}.',
    tags,
    request: {
      headers: z.object({
        'x-amz-target': z.string().openapi({ example: 'AWSCognitoIdentityService.GetCredentialsForIdentity' }),
      }),
      body: {
        content: { 'application/json': { schema: IdentityRequest, example: ex.getCredentials.request } },
      },
    },
    responses: {
      200: json(IdentityAnswer, 'the operation result', rateLimitHeaders, ex.getCredentials.response),
      ...errors([400, 404, 429]),
    },
  });
}
