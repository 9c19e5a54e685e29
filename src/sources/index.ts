export { eventSnapshot, fetchEvents, WATERMARK_OVERLAP_MS } from './events.ts';
export { fetchKpis } from './kpis.ts';
export { fetchReports } from './reports.ts';
export { fetchRuns, runSnapshot } from './runs.ts';
export { errorCode, errorStatus } from './types.ts';
export type { FetchContext, Page, ProcessingRuns, ReportCandidates, ResearchApi, SnapshotReader, SourcePage, SourcePages } from './types.ts';
