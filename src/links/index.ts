/** The payment links' face (pure). */
export * from './contract';
