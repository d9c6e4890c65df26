/** The reconciliation's face: what other slices, workflows and the toolkit may use (pure). */
export * from './model';
