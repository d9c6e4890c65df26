/** The payment links' face: what other slices (the console) may know of them. Pure. */
/** The order id prefix of a link's payments: `<link id>-<visit number>`. */
export const LINK_ID_PATTERN = /^plink_[0-9a-f]{24}$/;

/** The link a payment's order id names, if it is a link's payment. */
export const linkIdOfOrder = (orderId: string): string | undefined => {
  const m = /^(plink_[0-9a-f]{24})-\d+$/.exec(orderId);
  return m?.[1];
};
