/** The console's face (pure): nothing of it is used by another slice; its names for the docs. */
export const CONSOLE_PREFIX = '/console';
