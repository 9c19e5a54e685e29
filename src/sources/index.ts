export { pollEvents, WATERMARK_OVERLAP_MS } from './events.ts';
export { pollKpis } from './kpis.ts';
export { pollReports } from './reports.ts';
export { pollRuns, startGeneration } from './runs.ts';
export { errorCode, errorStatus } from './types.ts';
export type { Page, PollContext, PollResult, ResearchApi } from './types.ts';
