/**
 * Examples of the storefront answers in /openapi.json: real answers of `npm start` on the seed
 * catalog (data/catalog), each list cut to its first items.
 */
import { API_PATHS } from './app-config';

/** A presigned image URL of the embedded object store (`npm start`), as the answers carry them. */
const signed = (key: string, signature: string) =>
  `http://127.0.0.1:9000/talat-images/${key}?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=${signature}`;
const CDN = 'http://127.0.0.1:3000/cdn';
const EXPIRES = '2026-11-26T13:25:00.000Z';

export const catalogTree = {
  aisles: [
    {
      id: 'cat-beef',
      slug: 'beef',
      nameEn: 'Beef',
      nameTh: 'เนื้อวัว',
      position: 1,
      groupCount: 24,
      icon: '/public/image/category/beef.webp',
      children: [
        { id: 'cat-beef-wagyu', slug: 'beef-wagyu', nameEn: 'Wagyu', nameTh: 'เนื้อวากิว', position: 1, groupCount: 4 },
        { id: 'cat-beef-steak', slug: 'beef-steak', nameEn: 'Steaks', nameTh: 'สเต็กเนื้อ', position: 2, groupCount: 6 },
      ],
    },
  ],
  collections: [
    {
      id: 'col-brand_only',
      slug: 'brand_only',
      nameEn: 'Only Here',
      nameTh: 'มีเฉพาะที่นี่',
      position: 1,
      groupCount: 23,
      icon: '/public/image/category/brand_only.webp',
    },
  ],
  iconOrder: ['beef', 'pork', 'chicken'],
};

export const stickyBanner = {
  banner: {
    id: 'BN-S-001',
    placement: 'sticky',
    titleEn: 'Free delivery on orders over ฿1,500 · Christmas pre-orders now open',
    titleTh: 'ส่งฟรีเมื่อสั่งครบ 1,500 บาท · เปิดสั่งจองเมนูคริสต์มาสแล้ววันนี้',
    imageKey: 'banners/sticky/holiday-2026.webp',
    link: '/collection/pre-order',
    position: 1,
    startsAt: '2026-10-31T17:00:00.000Z',
    endsAt: '2027-01-31T16:59:59.000Z',
  },
};

export const bannerTree = {
  home: [
    {
      id: 'BN-H-001',
      placement: 'home',
      titleEn: 'Christmas feast: pre-order turkey, ham and Yule log',
      titleTh: 'ฉลองคริสต์มาส สั่งจองไก่งวง แฮม และเค้กขอนไม้',
      imageKey: 'banners/home/christmas-preorder.webp',
      link: '/collection/pre-order',
      position: 1,
      startsAt: '2026-10-31T17:00:00.000Z',
      endsAt: '2026-12-25T16:59:59.000Z',
    },
  ],
  categories: [
    {
      categoryId: 'cat-beef',
      slug: 'beef',
      banners: [
        {
          id: 'BN-C-004',
          placement: 'category',
          categoryId: 'cat-beef',
          titleEn: 'Wagyu from Australia and Japan',
          titleTh: 'วากิวจากออสเตรเลียและญี่ปุ่น',
          imageKey: 'banners/category/beef-wagyu.webp',
          link: '/category/beef-wagyu',
          position: 1,
          startsAt: '2026-10-31T17:00:00.000Z',
          endsAt: '2027-01-31T16:59:59.000Z',
        },
      ],
    },
  ],
};

export const productList = {
  count: 473,
  groups: [
    {
      groupId: 'G872104',
      nameEn: 'Australian Wagyu Striploin Steak MB8-9',
      nameTh: 'สเต็กสันนอกวากิวออสเตรเลีย MB8-9',
      brand: 'Stone Axe',
      categoryId: 'cat-beef-wagyu',
      aisleId: 'cat-beef',
      collections: ['best-seller'],
      countryCode: 'AU',
      storage: 'chilled',
      image: '/api/group/image/G872104/G872104-1.webp',
      variants: [
        {
          productId: 'G872104-1',
          variant: '250 g',
          nameEn: 'Australian Wagyu Striploin Steak MB8-9 250 g',
          nameTh: 'สเต็กสันนอกวากิวออสเตรเลีย MB8-9 250 กรัม',
          barcode: '9306986070237',
          unit: 'g',
          size: 250,
          weightGrams: 272,
          vatable: false,
          image: '/api/group/image/G872104/G872104-1.webp',
          imageUrl: signed(
            'G872104/G872104-1.webp',
            'b2c5e6b3bfbe91bd5e517c28f5ab33fc5559a54002153f92162ffa53a126ae5a',
          ),
          cdnImage: `${CDN}/G872104-1`,
        },
      ],
      imageUrl: signed('G872104/G872104-1.webp', 'b2c5e6b3bfbe91bd5e517c28f5ab33fc5559a54002153f92162ffa53a126ae5a'),
    },
  ],
  imageUrlsExpireAt: EXPIRES,
};

export const search = {
  query: 'mango',
  branchId: 'B001',
  total: 73,
  results: [
    {
      groupId: 'G784972',
      nameEn: 'Nam Dok Mai Mango',
      nameTh: 'มะม่วงน้ำดอกไม้สีทอง',
      brand: 'Sala Fresh',
      categoryId: 'cat-fruit-thai',
      image: '/api/group/image/G784972/G784972-1.webp',
      score: 0.050476,
      matchedBy: ['lexical', 'synonym', 'trigram', 'vector'],
      priceFrom: 139,
      inStock: true,
      onPromotion: false,
      variantCount: 2,
      variants: [
        {
          productId: 'G784972-1',
          variant: '1 kg',
          nameEn: 'Nam Dok Mai Mango 1 kg',
          nameTh: 'มะม่วงน้ำดอกไม้สีทอง 1 กก.',
          price: 139,
          inStock: true,
          onPromotion: false,
        },
      ],
    },
  ],
};

export const group = {
  groupId: 'G784972',
  nameEn: 'Nam Dok Mai Mango',
  nameTh: 'มะม่วงน้ำดอกไม้สีทอง',
  brand: 'Sala Fresh',
  categoryId: 'cat-fruit-thai',
  aisleId: 'cat-fruit_new',
  collections: ['best-seller'],
  countryCode: 'TH',
  storage: 'ambient',
  image: '/api/group/image/G784972/G784972-1.webp',
  descriptionEn: 'Sweet, fragrant golden mangoes, ripe and ready for mango sticky rice.',
  descriptionTh: 'มะม่วงน้ำดอกไม้สีทองสุกหอมหวาน พร้อมทำข้าวเหนียวมะม่วง',
  keywords: ['มะม่วง', 'mango', 'มะม่วงสุก', 'ข้าวเหนียวมะม่วง', 'mango sticky rice'],
  category: { id: 'cat-fruit-thai', slug: 'fruit-thai', nameEn: 'Thai Fruit', nameTh: 'ผลไม้ไทย' },
  aisle: { id: 'cat-fruit_new', slug: 'fruit_new', nameEn: 'Fresh Fruit', nameTh: 'ผลไม้สด' },
  images: [
    {
      imageId: 'G784972-1',
      webp: '/api/group/image/G784972/G784972-1.webp',
      png: '/api/group/image/G784972/G784972-1.png',
      jpg: '/api/group/image/G784972/G784972-1.jpg',
      urls: {
        webp: signed('G784972/G784972-1.webp', '74d6a06dd69d2a15ac3c4d706012c4ef6626d37b3da73e51d5fcc2e72cb644e2'),
        png: signed('G784972/G784972-1.png', 'd0b97971d84f721b125f01c7a860b0d1fb52bcf3a70819be580f2b8c749160d4'),
        jpg: signed('G784972/G784972-1.jpg', 'ae297f2b5693038e4640b4b12d7628a980746b389defb4701f4281066c13596b'),
      },
      cdn: { webp: `${CDN}/G784972-1`, png: `${CDN}/G784972-1-png`, jpg: `${CDN}/G784972-1-jpg` },
    },
  ],
  variants: [
    {
      productId: 'G784972-1',
      variant: '1 kg',
      nameEn: 'Nam Dok Mai Mango 1 kg',
      nameTh: 'มะม่วงน้ำดอกไม้สีทอง 1 กก.',
      barcode: '8858567096033',
      unit: 'kg',
      size: 1,
      weightGrams: 1040,
      vatable: false,
      image: '/api/group/image/G784972/G784972-1.webp',
      price: 139,
      inStock: true,
      imageUrl: signed('G784972/G784972-1.webp', '74d6a06dd69d2a15ac3c4d706012c4ef6626d37b3da73e51d5fcc2e72cb644e2'),
      cdnImage: `${CDN}/G784972-1`,
    },
  ],
  promotions: [],
  imageUrl: signed('G784972/G784972-1.webp', '74d6a06dd69d2a15ac3c4d706012c4ef6626d37b3da73e51d5fcc2e72cb644e2'),
  imageUrlsExpireAt: EXPIRES,
};

export const inventory = {
  branchId: 'B001',
  updatedAt: '2026-11-22T00:00:00.000Z',
  products: { 'G101150-1': 51, 'G101414-1': 42, 'G101414-2': 45 },
};

export const prices = {
  currency: 'THB',
  updatedAt: '2026-11-22T00:00:00.000Z',
  prices: { 'G101150-1': 99, 'G101414-1': 149, 'G101414-2': 289 },
};

export const promotion = {
  promotionId: 'PR2611001',
  type: 'multi_buy',
  promotionGroupId: 'G851378',
  groupIds: ['G851378'],
  productIds: ['G851378-1'],
  buyQuantity: 10,
  payPrice: 60,
  percent: null,
  titleEn: 'Mama noodles, any 10 packs for ฿60',
  titleTh: 'มาม่า คละรส 10 ซอง 60 บาท',
  startsAt: '2026-10-31T17:00:00.000Z',
  endsAt: '2026-12-31T16:59:59.000Z',
  items: [
    {
      productId: 'G851378-1',
      groupId: 'G851378',
      variant: '55 g',
      nameEn: 'Mama Instant Noodles, Tom Yum Shrimp Creamy 55 g',
      nameTh: 'บะหมี่กึ่งสำเร็จรูป มาม่า รสต้มยำกุ้งน้ำข้น 55 กรัม',
      price: 7,
    },
  ],
};

export const firstPage = {
  shop: {
    nameEn: 'Sala Market',
    nameTh: 'ศาลา มาร์เก็ต',
    currency: 'THB',
    locales: ['th', 'en'],
    defaultLocale: 'th',
    timezone: 'Asia/Bangkok',
  },
  schema: {
    config: '/schema/talat/master/webData/config.yaml',
    firstPageCat: '/schema/talat/master/webData/firstPageCat.yaml',
  },
  api: API_PATHS,
  loadOrder: ['config', 'schema'],
  iconOrder: ['beef', 'pork'],
  categories: [
    {
      position: 1,
      id: 'cat-beef',
      slug: 'beef',
      kind: 'aisle',
      nameEn: 'Beef',
      nameTh: 'เนื้อวัว',
      icon: '/public/image/category/beef.webp',
      link: '/category/beef',
      groupCount: 24,
    },
    {
      position: 2,
      id: 'cat-pork',
      slug: 'pork',
      kind: 'aisle',
      nameEn: 'Pork',
      nameTh: 'เนื้อหมู',
      icon: '/public/image/category/pork.webp',
      link: '/category/pork',
      groupCount: 22,
    },
  ],
  branches: [
    {
      branchId: 'B001',
      nameEn: 'Sala Market Thonglor',
      nameTh: 'ศาลา มาร์เก็ต ทองหล่อ',
      district: 'Watthana',
      lat: 13.7326,
      lng: 100.5834,
      deliveryRadiusKm: 6,
    },
    {
      branchId: 'B002',
      nameEn: 'Sala Market Lang Suan',
      nameTh: 'ศาลา มาร์เก็ต หลังสวน',
      district: 'Pathum Wan',
      lat: 13.7388,
      lng: 100.5432,
      deliveryRadiusKm: 5,
    },
  ],
  search: { maxQueryLength: 200 },
  objectStore: {
    priceBucketUrl: 'http://127.0.0.1:9000/talat-prices',
    priceFileKey: '{branchId}.gz',
    priceUrl: '/api/price/url/{branchId}',
    priceUrls: {
      B001: 'http://127.0.0.1:9000/talat-prices/B001.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=a52829d3664b152fe870c4353ba91e5a93c924a515da266ebfd611a8aee70459',
      B002: 'http://127.0.0.1:9000/talat-prices/B002.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=6e62f36edf26dcba8a120bb86a3c3e82c2a071fb278a45f59647022e55030abd',
      B003: 'http://127.0.0.1:9000/talat-prices/B003.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=cecc0a3a377c5260e4431dd22f15a3928c3197bc2b81af93d387d5563c54a3df',
      B004: 'http://127.0.0.1:9000/talat-prices/B004.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=a9393e4b5a6e581c5264041227e9e2746b1e8a3a17d363a9c6508e7bfd76dbdf',
      B005: 'http://127.0.0.1:9000/talat-prices/B005.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=09e04e9a09c63384f434fc5f88968b450bf3dd6bcff5d6bfe58c90ca62b155f4',
      B006: 'http://127.0.0.1:9000/talat-prices/B006.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=52fb8d54521422803d60255390d790ccdedbbd743d8dcdfae52603054ffeefb5',
      B007: 'http://127.0.0.1:9000/talat-prices/B007.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=df9c3195288abea19ad282f7e2efc56504a1594267f3963ebf5090b0cd1d9e98',
      B008: 'http://127.0.0.1:9000/talat-prices/B008.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=e31e5199d17401cc7a768f9459f14ee16de0ce92bbe77afa5e81c0c81f5fb09b',
      B009: 'http://127.0.0.1:9000/talat-prices/B009.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=d10b2b176d9dd1270ae4e0cf70eeea8a8bddae7907d2952ccb095c1fae19cdba',
      B010: 'http://127.0.0.1:9000/talat-prices/B010.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=2aad1f5e5fbdcddc54a292dc1452beab42003e19aa1c72bad662f9e9593ca8a8',
      B011: 'http://127.0.0.1:9000/talat-prices/B011.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=63b1df8a8f8b3932ecbd275a152a158782f2c992fb124d648e60a1d31ac54e55',
      B012: 'http://127.0.0.1:9000/talat-prices/B012.gz?X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=talat-dev%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T131000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=9d2b663ab42fbd81d08d425ad09ee272ab02227e224399b55d999f350b9e216f',
    },
    imageBucketUrl: 'http://127.0.0.1:9000/talat-images',
    imageKey: '{groupId}/{imageId}.{webp|png|jpg}',
    cdnUrl: 'http://127.0.0.1:3320/cdn',
    cdnPath: '{cdnUrl}/{productId}[-{png|jpg}]',
    expiresAt: '2026-11-26T13:25:00.000Z',
  },
};

export const getCredentials = {
  request: { IdentityId: 'ap-southeast-1:61166382-e294-41a0-aaf0-ef472a65f935' },
  response: {
    IdentityId: 'ap-southeast-1:61166382-e294-41a0-aaf0-ef472a65f935',
    Credentials: {
      AccessKeyId: 'ASIAYWTCAGVGJOU7U7R3',
      SecretKey: 'XlFM0DjLVGhOBFOG4WYgi4OY5zXRg4dm9949+wLR',
      SessionToken: 'l9RjHV94t4xr4Y3u66uj7o_zEJrH8Lb_4tQFson5D0DQAzrbMelusPh7L7qY8Wun',
      Expiration: 1795702574,
    },
  },
};
