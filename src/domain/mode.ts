/** Live or sandbox: a payment API key's mode, and so the mode of every payment it starts. */
export const MODES = ['live', 'sandbox'] as const;
export type Mode = (typeof MODES)[number];
