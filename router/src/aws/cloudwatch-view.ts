import {
  GetMetricDataCommand,
  ListMetricsCommand,
  type CloudWatchClient,
  type Dimension,
  type MetricDataQuery,
} from '@aws-sdk/client-cloudwatch';
import type { LiveBenchmarkResult } from '../benchmark/live-benchmark';
import { withThrottlingRetry, type Clock, type RetryPolicy } from './throttling-retry';

/**
 * CloudWatch's view of one run: what SageMaker (and the router sidecar's EMF metrics, when present) published
 * for the run window. Every figure comes from one GetMetricData period that covers the whole window (start
 * floored and end ceiled to the minute), so percentiles are CloudWatch's own over the window, not averages of
 * per-minute percentiles. That window can include up to a minute of traffic before and after the run.
 */
export const SAGEMAKER_NAMESPACE = 'AWS/SageMaker';
export const INSTANCE_NAMESPACE = '/aws/sagemaker/Endpoints';
/** The sidecar's EMF namespace (docs: emf-contract; override PREFIX_ROUTER_EMF_NAMESPACE). */
export const SIDECAR_NAMESPACE = 'PrefixRouter';

export interface CloudWatchTarget {
  readonly endpointName: string;
  readonly variantName: string;
}

export interface VariantMetrics {
  readonly invocations: number | null;
  readonly invocationsPerInstance: number | null;
  /** ModelLatency (SageMaker publishes microseconds), in ms. */
  readonly modelLatencyMs: {
    readonly average: number | null;
    readonly p50: number | null;
    readonly p90: number | null;
  };
  readonly overheadLatencyMs: { readonly p50: number | null; readonly p90: number | null };
  readonly concurrentRequestsPerModelMax: number | null;
  readonly invocation4xx: number | null;
  readonly invocation5xx: number | null;
  readonly gpuUtilizationAverage: number | null;
  readonly gpuMemoryUtilizationAverage: number | null;
}

export interface InstanceSeries {
  readonly namespace: string;
  readonly metric: string;
  /** Dimensions beyond EndpointName / VariantName (what makes the series per instance). */
  readonly dimensions: Readonly<Record<string, string>>;
  readonly stat: string;
  readonly value: number | null;
}

export interface SidecarMetrics {
  readonly routingDecisions: Readonly<Record<string, number>>;
  readonly ttftMs: { readonly p50: number | null; readonly p90: number | null };
  readonly promptTokens: number;
  readonly reportedCachedTokens: number;
  readonly predictedCachedTokens: number;
  /** ReportedCachedTokens / PromptTokens (the dashboard's hit rate); null without prompt tokens. */
  readonly hitRate: number | null;
  /**
   * 'variant' when the sidecar's series carry a VariantName dimension (read for this variant only); 'endpoint'
   * when they do not: then every figure is the whole endpoint's, all variants together, whichever variant asked.
   */
  readonly scope: 'variant' | 'endpoint';
}

export interface CloudWatchView {
  readonly startTime: string;
  readonly endTime: string;
  /** The one period the figures cover, seconds. */
  readonly periodSeconds: number;
  /** How often the endpoint publishes (MetricsConfig, default 60 s). */
  readonly publishSeconds: number;
  readonly variant: VariantMetrics;
  /** Per-instance series, when the endpoint publishes enhanced (per-instance) metrics. */
  readonly perInstance: readonly InstanceSeries[];
  /** The sidecar's EMF metrics, when the endpoint runs it. */
  readonly sidecar: SidecarMetrics | null;
  readonly notes: readonly string[];
}

interface Query {
  readonly id: string;
  readonly namespace: string;
  readonly metric: string;
  readonly dimensions: Dimension[];
  readonly stat: string;
}

const VARIANT_QUERIES: readonly { key: string; namespace: string; metric: string; stat: string }[] = [
  { key: 'invocations', namespace: SAGEMAKER_NAMESPACE, metric: 'Invocations', stat: 'Sum' },
  { key: 'invocationsPerInstance', namespace: SAGEMAKER_NAMESPACE, metric: 'InvocationsPerInstance', stat: 'Sum' },
  { key: 'modelLatencyAvg', namespace: SAGEMAKER_NAMESPACE, metric: 'ModelLatency', stat: 'Average' },
  { key: 'modelLatencyP50', namespace: SAGEMAKER_NAMESPACE, metric: 'ModelLatency', stat: 'p50' },
  { key: 'modelLatencyP90', namespace: SAGEMAKER_NAMESPACE, metric: 'ModelLatency', stat: 'p90' },
  { key: 'overheadLatencyP50', namespace: SAGEMAKER_NAMESPACE, metric: 'OverheadLatency', stat: 'p50' },
  { key: 'overheadLatencyP90', namespace: SAGEMAKER_NAMESPACE, metric: 'OverheadLatency', stat: 'p90' },
  { key: 'concurrentMax', namespace: SAGEMAKER_NAMESPACE, metric: 'ConcurrentRequestsPerModel', stat: 'Maximum' },
  { key: 'invocation4xx', namespace: SAGEMAKER_NAMESPACE, metric: 'Invocation4XXErrors', stat: 'Sum' },
  { key: 'invocation5xx', namespace: SAGEMAKER_NAMESPACE, metric: 'Invocation5XXErrors', stat: 'Sum' },
  { key: 'gpuUtil', namespace: INSTANCE_NAMESPACE, metric: 'GPUUtilization', stat: 'Average' },
  { key: 'gpuMemUtil', namespace: INSTANCE_NAMESPACE, metric: 'GPUMemoryUtilization', stat: 'Average' },
];

const INSTANCE_METRICS: Readonly<Record<string, string>> = {
  Invocations: 'Sum',
  InvocationsPerInstance: 'Sum',
  ModelLatency: 'p90',
  ConcurrentRequestsPerModel: 'Maximum',
  GPUUtilization: 'Average',
  GPUMemoryUtilization: 'Average',
};

/** Series beyond this are left out (GetMetricData takes 500 queries per call; a report needs far fewer). */
const MAX_DISCOVERED_SERIES = 200;

/** [start, end) aligned to whole minutes, and its length as the one period. */
export function alignedWindow(startMs: number, endMs: number): { start: Date; end: Date; periodSeconds: number } {
  const start = Math.floor(startMs / 60_000) * 60_000;
  const end = Math.max(start + 60_000, Math.ceil(endMs / 60_000) * 60_000);
  return { start: new Date(start), end: new Date(end), periodSeconds: (end - start) / 1000 };
}

/** Wall-clock window of a whole run, warm-up included: from the first send to the last completion (epoch ms). */
export function runWallWindow(startedAtMs: number, result: LiveBenchmarkResult): { startMs: number; endMs: number } {
  const scale = result.timeScale || 1;
  const firstSend = result.records.reduce((m, r) => Math.min(m, r.sentAtMs), Number.POSITIVE_INFINITY);
  const start = Number.isFinite(firstSend) ? firstSend : result.window.startMs;
  return { startMs: startedAtMs + start / scale, endMs: startedAtMs + Math.max(result.window.endMs, start) / scale };
}

export interface ReadCloudWatchOptions {
  readonly cloudwatch: CloudWatchClient;
  readonly target: CloudWatchTarget;
  readonly window: { readonly startMs: number; readonly endMs: number };
  readonly publishSeconds: number;
  readonly clock: Clock;
  readonly retry?: RetryPolicy;
  readonly sidecarNamespace?: string;
}

export async function readCloudWatchView(options: ReadCloudWatchOptions): Promise<CloudWatchView> {
  const { start, end, periodSeconds } = alignedWindow(options.window.startMs, options.window.endMs);
  const { variantName } = options.target;
  const variantDims: Dimension[] = [
    { Name: 'EndpointName', Value: options.target.endpointName },
    { Name: 'VariantName', Value: variantName },
  ];
  const queries: Query[] = VARIANT_QUERIES.map((q) => ({
    id: `v_${q.key}`,
    namespace: q.namespace,
    metric: q.metric,
    dimensions: variantDims,
    stat: q.stat,
  }));
  // Per-instance and sidecar series: discovered, since their extra dimensions are only known once published.
  const instanceSeries: InstanceQuery[] = [];
  for (const namespace of [SAGEMAKER_NAMESPACE, INSTANCE_NAMESPACE]) {
    const listed = await listEndpointMetrics(options, namespace);
    instanceSeries.push(...instanceQueries(listed, namespace, variantName, instanceSeries.length));
  }
  const sidecarNamespace = options.sidecarNamespace ?? SIDECAR_NAMESPACE;
  const sidecarListed = await listEndpointMetrics(options, sidecarNamespace);
  const sidecarScope = sidecarScopeOf(sidecarListed);
  const sidecarSeries = sidecarQueries(sidecarListed, sidecarNamespace, sidecarScope, variantName);
  const values = await metricValues(
    options,
    [...queries, ...instanceSeries.map((s) => s.q), ...sidecarSeries.map((s) => s.q)],
    { start, end, periodSeconds },
  );

  const notes: string[] = [];
  const missing = VARIANT_QUERIES.filter((q) => values.get(`v_${q.key}`) == null).map((q) => `${q.metric} ${q.stat}`);
  if (missing.length > 0) {
    notes.push(
      `CloudWatch had no data for ${missing.join(', ')} in the window (metrics appear 1–3 minutes after the traffic; error counts are absent rather than 0 when no error happened; GPU metrics need the instance namespace).`,
    );
  }
  const perInstance = perInstanceSeries(instanceSeries, values, notes);
  const sidecar = sidecarSeries.length > 0 ? sidecarMetricsOf(sidecarSeries, values, sidecarScope) : null;
  if (sidecar === null) {
    notes.push(
      `No ${sidecarNamespace} metrics: the endpoint does not run the prefix-router sidecar (VllmImage.withRouterSidecar), so there is no router-side hit rate.`,
    );
  }
  return {
    startTime: start.toISOString(),
    endTime: end.toISOString(),
    periodSeconds,
    publishSeconds: options.publishSeconds,
    variant: variantMetricsOf(values),
    perInstance,
    sidecar,
    notes,
  };
}

/** A metric ListMetrics found for the endpoint: its name and every dimension. */
interface ListedMetric {
  readonly metric: string;
  readonly dimensions: Dimension[];
}

interface InstanceQuery {
  readonly q: Query;
  /** Dimensions beyond EndpointName / VariantName. */
  readonly extra: Record<string, string>;
}

interface SidecarQuery {
  readonly q: Query;
  readonly dims: Record<string, string>;
}

/** The endpoint's series in one namespace (at most MAX_DISCOVERED_SERIES). */
async function listEndpointMetrics(options: ReadCloudWatchOptions, namespace: string): Promise<ListedMetric[]> {
  const { cloudwatch, target, clock, retry } = options;
  const found: ListedMetric[] = [];
  let token: string | undefined;
  do {
    const page = await withThrottlingRetry(
      `ListMetrics ${namespace}`,
      () =>
        cloudwatch.send(
          new ListMetricsCommand({
            Namespace: namespace,
            Dimensions: [{ Name: 'EndpointName', Value: target.endpointName }],
            NextToken: token,
          }),
        ),
      clock,
      retry,
    );
    for (const m of page.Metrics ?? [])
      if (m.MetricName) found.push({ metric: m.MetricName, dimensions: m.Dimensions ?? [] });
    token = page.NextToken;
  } while (token !== undefined && found.length < MAX_DISCOVERED_SERIES);
  return found;
}

/** The per-instance series of this variant among those listed, numbered from `firstId`. */
function instanceQueries(
  listed: readonly ListedMetric[],
  namespace: string,
  variantName: string,
  firstId: number,
): InstanceQuery[] {
  const series: InstanceQuery[] = [];
  for (const m of listed) {
    const stat = INSTANCE_METRICS[m.metric];
    if (stat === undefined) continue;
    const variant = m.dimensions.find((d) => d.Name === 'VariantName')?.Value;
    if (variant !== undefined && variant !== variantName) continue;
    const extra: Record<string, string> = {};
    for (const d of m.dimensions)
      if (d.Name !== 'EndpointName' && d.Name !== 'VariantName' && d.Name && d.Value) extra[d.Name] = d.Value;
    if (Object.keys(extra).length === 0) continue;
    const id = `i_${firstId + series.length}`;
    series.push({ q: { id, namespace, metric: m.metric, dimensions: m.dimensions, stat }, extra });
  }
  return series;
}

function sidecarScopeOf(listed: readonly ListedMetric[]): SidecarMetrics['scope'] {
  return listed.some((m) => m.dimensions.some((d) => d.Name === 'VariantName')) ? 'variant' : 'endpoint';
}

/** The sidecar's series to read: TTFT at P50 and P90, the counters summed; only this variant's when they name one. */
function sidecarQueries(
  listed: readonly ListedMetric[],
  namespace: string,
  scope: SidecarMetrics['scope'],
  variantName: string,
): SidecarQuery[] {
  const series: SidecarQuery[] = [];
  for (const m of listed) {
    if (scope === 'variant' && m.dimensions.find((d) => d.Name === 'VariantName')?.Value !== variantName) continue;
    const dims: Record<string, string> = {};
    for (const d of m.dimensions) if (d.Name && d.Value) dims[d.Name] = d.Value;
    const stats = m.metric === 'TimeToFirstToken' ? ['p50', 'p90'] : ['Sum'];
    for (const stat of stats)
      series.push({
        q: { id: `s_${series.length}`, namespace, metric: m.metric, dimensions: m.dimensions, stat },
        dims,
      });
  }
  return series;
}

/** GetMetricDataQueries per call. */
const METRIC_DATA_BATCH = 500;

/** One value per query over the one period (null when CloudWatch has none), 500 queries per GetMetricData call. */
async function metricValues(
  options: ReadCloudWatchOptions,
  all: readonly Query[],
  window: { readonly start: Date; readonly end: Date; readonly periodSeconds: number },
): Promise<Map<string, number | null>> {
  const { cloudwatch, clock, retry } = options;
  const values = new Map<string, number | null>();
  for (let i = 0; i < all.length; i += METRIC_DATA_BATCH) {
    const request: MetricDataQuery[] = all.slice(i, i + METRIC_DATA_BATCH).map((q) => ({
      Id: q.id,
      MetricStat: {
        Metric: { Namespace: q.namespace, MetricName: q.metric, Dimensions: q.dimensions },
        Period: window.periodSeconds,
        Stat: q.stat,
      },
      ReturnData: true,
    }));
    let token: string | undefined;
    do {
      const page = await withThrottlingRetry(
        'GetMetricData',
        () =>
          cloudwatch.send(
            new GetMetricDataCommand({
              MetricDataQueries: request,
              StartTime: window.start,
              EndTime: window.end,
              NextToken: token,
              ScanBy: 'TimestampAscending',
            }),
          ),
        clock,
        retry,
      );
      for (const r of page.MetricDataResults ?? []) {
        if (r.Id === undefined) continue;
        const v = r.Values?.[0];
        values.set(r.Id, v === undefined || !Number.isFinite(v) ? (values.get(r.Id) ?? null) : v);
      }
      token = page.NextToken;
    } while (token !== undefined);
  }
  return values;
}

function variantMetricsOf(values: ReadonlyMap<string, number | null>): VariantMetrics {
  const v = (key: string): number | null => values.get(`v_${key}`) ?? null;
  const micros = (x: number | null): number | null => (x === null ? null : x / 1000);
  return {
    invocations: v('invocations'),
    invocationsPerInstance: v('invocationsPerInstance'),
    modelLatencyMs: {
      average: micros(v('modelLatencyAvg')),
      p50: micros(v('modelLatencyP50')),
      p90: micros(v('modelLatencyP90')),
    },
    overheadLatencyMs: { p50: micros(v('overheadLatencyP50')), p90: micros(v('overheadLatencyP90')) },
    concurrentRequestsPerModelMax: v('concurrentMax'),
    invocation4xx: v('invocation4xx'),
    invocation5xx: v('invocation5xx'),
    gpuUtilizationAverage: v('gpuUtil'),
    gpuMemoryUtilizationAverage: v('gpuMemUtil'),
  };
}

/**
 * ListMetrics lists every instance of the last two weeks (each switch replaces the fleet): keep the series with data
 * in this window, which are the fleet that served the run; `notes` says what was left out.
 */
function perInstanceSeries(
  series: readonly InstanceQuery[],
  values: ReadonlyMap<string, number | null>,
  notes: string[],
): InstanceSeries[] {
  const allInstances: InstanceSeries[] = series.map((s) => ({
    namespace: s.q.namespace,
    metric: s.q.metric,
    dimensions: s.extra,
    stat: s.q.stat,
    value: values.get(s.q.id) ?? null,
  }));
  const perInstance = allInstances.filter((s) => s.value !== null);
  if (allInstances.length === 0)
    notes.push(
      'No per-instance series: the endpoint does not publish enhanced (per-instance) metrics (MetricsConfig EnableEnhancedMetrics).',
    );
  else if (perInstance.length < allInstances.length) {
    notes.push(
      `${allInstances.length - perInstance.length} per-instance series without data in the run window (instances of an earlier fleet, replaced by a switch) are left out.`,
    );
  }
  return perInstance;
}

/** The sidecar's figures: decisions by reason, TTFT, token sums and the hit rate they give. */
function sidecarMetricsOf(
  series: readonly SidecarQuery[],
  values: ReadonlyMap<string, number | null>,
  scope: SidecarMetrics['scope'],
): SidecarMetrics {
  const routingDecisions: Record<string, number> = {};
  let promptTokens = 0;
  let reportedCachedTokens = 0;
  let predictedCachedTokens = 0;
  const ttft: { p50: number | null; p90: number | null } = { p50: null, p90: null };
  for (const s of series) {
    const value = values.get(s.q.id);
    if (value == null) continue;
    switch (s.q.metric) {
      case 'RoutingDecisions':
        routingDecisions[s.dims.Reason ?? 'unknown'] = (routingDecisions[s.dims.Reason ?? 'unknown'] ?? 0) + value;
        break;
      case 'PromptTokens':
        promptTokens += value;
        break;
      case 'ReportedCachedTokens':
        reportedCachedTokens += value;
        break;
      case 'PredictedCachedTokens':
        predictedCachedTokens += value;
        break;
      case 'TimeToFirstToken':
        if (s.q.stat === 'p50') ttft.p50 = value;
        else ttft.p90 = value;
        break;
    }
  }
  return {
    routingDecisions,
    ttftMs: ttft,
    promptTokens,
    reportedCachedTokens,
    predictedCachedTokens,
    hitRate: promptTokens > 0 ? reportedCachedTokens / promptTokens : null,
    scope,
  };
}
