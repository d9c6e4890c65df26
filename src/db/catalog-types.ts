/**
 * The catalog's product group, product and branch records, in the shape the seed data
 * (data/catalog) gives them and the storefront's snapshot keeps them (src/storefront/snapshot.ts).
 */

export interface Group {
  groupId: string;
  nameEn: string;
  nameTh: string;
  brand: string;
  categoryId: string;
  collections: string[];
  countryCode: string;
  descriptionEn: string;
  descriptionTh: string;
  keywords: string[];
  /** one of the values the product_groups.storage check allows */
  storage: 'ambient' | 'chilled' | 'frozen';
}

export interface Product {
  productId: string;
  groupId: string;
  variant: string;
  nameEn: string;
  nameTh: string;
  barcode: string;
  unit: string;
  size: number;
  weightGrams: number;
  vatable: boolean;
}

export interface Branch {
  branchId: string;
  nameEn: string;
  nameTh: string;
  district: string;
  lat: number;
  lng: number;
  deliveryRadiusKm: number;
}
