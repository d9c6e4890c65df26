/** The payments' face: what other slices, workflows and the toolkit may use (pure). */
export * from './contract';
export * from './states';
export * from './rows';
