/** The webhooks face: what other slices, workflows and the toolkit may use (pure). */
export * from './contract';
export * from './events';
