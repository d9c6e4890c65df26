/** The orders face: what other slices, workflows and the toolkit may use (pure). */
export * from './contract';
