/**
 * CloudWatch Embedded Metric Format documents of the router's routing metrics (the contract the construct's
 * dashboard reads): namespace `PrefixRouter` by default, dimension `EndpointName` on every metric, plus `Reason`
 * on RoutingDecisions and `Engine` on the token metrics. One JSON object per line; CloudWatch Logs extracts the
 * metrics with no agent. Pure: the caller supplies the time and the aggregated values.
 */
export const EMF_METRIC = {
  routingDecisions: 'RoutingDecisions',
  timeToFirstToken: 'TimeToFirstToken',
  promptTokens: 'PromptTokens',
  predictedCachedTokens: 'PredictedCachedTokens',
  reportedCachedTokens: 'ReportedCachedTokens',
} as const;

export const EMF_DIMENSION = { endpointName: 'EndpointName', reason: 'Reason', engine: 'Engine' } as const;

/** EMF allows at most 100 values in one metric's array. */
export const MAX_EMF_VALUES = 100;

export interface EngineTokens {
  readonly engine: string;
  readonly promptTokens: number;
  readonly predictedCachedTokens: number;
  readonly reportedCachedTokens: number;
}

export interface EmfInterval {
  readonly timestampMs: number;
  readonly namespace: string;
  readonly endpointName: string;
  /** Requests routed in the interval, by decision reason (zero counts are left out). */
  readonly decisionsByReason: ReadonlyMap<string, number>;
  /** TTFT values in milliseconds with how often each occurred. */
  readonly ttftMs: ReadonlyArray<{ readonly value: number; readonly count: number }>;
  /** One entry per engine whose counters were read this interval. */
  readonly engines: readonly EngineTokens[];
}

type Unit = 'Count' | 'Milliseconds';

function document(
  interval: EmfInterval,
  dimensions: Record<string, string>,
  metrics: Record<string, { unit: Unit; value: number | number[] }>,
): Record<string, unknown> {
  return {
    _aws: {
      Timestamp: interval.timestampMs,
      CloudWatchMetrics: [
        {
          Namespace: interval.namespace,
          Dimensions: [Object.keys(dimensions)],
          Metrics: Object.entries(metrics).map(([name, m]) => ({ Name: name, Unit: m.unit })),
        },
      ],
    },
    ...dimensions,
    ...Object.fromEntries(Object.entries(metrics).map(([name, m]) => [name, m.value])),
  };
}

/** Every document of one interval, in a stable order: decisions by reason, TTFT chunks, engines. */
export function emfDocuments(interval: EmfInterval): Record<string, unknown>[] {
  const docs: Record<string, unknown>[] = [];
  const endpoint = { [EMF_DIMENSION.endpointName]: interval.endpointName };
  for (const [reason, count] of [...interval.decisionsByReason].sort(([a], [b]) => a.localeCompare(b))) {
    if (count <= 0) continue;
    docs.push(
      document(
        interval,
        { ...endpoint, [EMF_DIMENSION.reason]: reason },
        { [EMF_METRIC.routingDecisions]: { unit: 'Count', value: count } },
      ),
    );
  }
  for (const chunk of valueChunks(interval.ttftMs)) {
    docs.push(document(interval, endpoint, { [EMF_METRIC.timeToFirstToken]: { unit: 'Milliseconds', value: chunk } }));
  }
  for (const e of interval.engines) {
    docs.push(
      document(
        interval,
        { ...endpoint, [EMF_DIMENSION.engine]: e.engine },
        {
          [EMF_METRIC.promptTokens]: { unit: 'Count', value: e.promptTokens },
          [EMF_METRIC.predictedCachedTokens]: { unit: 'Count', value: e.predictedCachedTokens },
          [EMF_METRIC.reportedCachedTokens]: { unit: 'Count', value: e.reportedCachedTokens },
        },
      ),
    );
  }
  return docs;
}

/** Expands (value, count) pairs into arrays of at most MAX_EMF_VALUES values. */
export function valueChunks(pairs: ReadonlyArray<{ readonly value: number; readonly count: number }>): number[][] {
  const chunks: number[][] = [];
  let current: number[] = [];
  for (const { value, count } of pairs) {
    for (let i = 0; i < count; i++) {
      current.push(value);
      if (current.length === MAX_EMF_VALUES) {
        chunks.push(current);
        current = [];
      }
    }
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
