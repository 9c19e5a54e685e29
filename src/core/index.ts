export * from './types.ts';
export * from './errors.ts';
export * from './duration.ts';
export * from './retry-after.ts';
export * from './redact.ts';
export * from './suggest.ts';
export type * from './plan.ts';
