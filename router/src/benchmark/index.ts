/** The live benchmark: drive a workload against any OpenAI-compatible URL and report like the simulator. */
export * from './live-benchmark-options';
export * from './live-benchmark';
export * from './live-report';
export * from './streaming-client';
export * from './sse-decoder';
export * from './stream-chunk';
export * from '../common/request-errors';
export * from '../common/prometheus-text';
export * from './backend-metrics';
export * from './served-model';
export * from './target-url';
export * from '../report/progress';
export * from './request-transport';
