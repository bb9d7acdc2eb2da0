export * from './latency-histogram';
export * from './log-record';
export { LOG_WRITER_OPTIONS, LogWriter } from './log-writer';
export type { LogWriterOptions } from './log-writer';
export * from './observability.module';
export { aggregateRollups, bucketStart } from './rollup-aggregation';
export type { RollupDelta } from './rollup-aggregation';
