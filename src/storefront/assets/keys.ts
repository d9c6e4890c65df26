/** The storefront's object keys in the object store (price files and group images). */
import type { ImageFormat } from '../views';

/** Object keys (README "Storefront assets"). */
export const priceKey = (branchId: string): string => `${branchId}.gz`;
export const imageKey = (groupId: string, imageId: string, format: ImageFormat): string =>
  `${groupId}/${imageId}.${format}`;
/** `<branchId>.gz` -> branchId; anything else -> undefined. */
export const branchOfPriceKey = (key: string): string | undefined => /^([A-Za-z0-9_-]{1,40})\.gz$/.exec(key)?.[1];
export const isImageKey = (key: string): boolean =>
  /^[A-Za-z0-9_-]{1,40}\/[A-Za-z0-9_-]{1,60}\.(webp|png|jpg)$/.test(key);
