import { aws_cloudwatch as cloudwatch, aws_sns as sns, Duration } from 'aws-cdk-lib';

/** Namespace of SageMaker's invocation metrics. */
export const SAGEMAKER_NAMESPACE = 'AWS/SageMaker';
/** Namespace of per-instance host metrics (CPU, GPU, memory, disk). */
export const ENDPOINT_INSTANCE_NAMESPACE = '/aws/sagemaker/Endpoints';
/** Namespace of the prefix-router sidecar's EMF metrics (see docs/operations.md). */
export const ROUTER_NAMESPACE = 'PrefixRouter';
/** Dimension enhanced metrics add to every invocation and utilization metric. */
export const INSTANCE_ID_DIMENSION = 'InstanceId';
/**
 * Namespace of inference components' per-copy utilization metrics (`GPUUtilizationNormalized`, ...), dimension
 * `InferenceComponentName` (https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html#cloudwatch-metrics-inference-component).
 */
export const INFERENCE_COMPONENT_NAMESPACE = '/aws/sagemaker/InferenceComponents';
/** The one dimension of inference components' invocation (`AWS/SageMaker`) and utilization metrics. */
export const INFERENCE_COMPONENT_DIMENSION = 'InferenceComponentName';

/** SageMaker's allowed `MetricPublishFrequencyInSeconds` values. */
export const METRIC_PUBLISH_FREQUENCIES_SECONDS: readonly number[] = [10, 30, 60, 120, 180, 240, 300];
/** SageMaker's publish frequency when none is configured. */
export const DEFAULT_PUBLISH_FREQUENCY = Duration.seconds(60);

/** `MetricOptions` plus the namespace, for `metric()`: a named interface, so jsii languages can pass it. */
export interface EndpointMetricOptions extends cloudwatch.MetricOptions {
  /** @default 'AWS/SageMaker' */
  readonly namespace?: string;
}

/** The dimensions every endpoint metric is published with, and the periods metrics default to. */
export interface EndpointMetricTarget {
  readonly endpointName: string;
  readonly variantName: string;
  /**
   * The endpoint's publish frequency (`MetricPublishFrequencyInSeconds`): the default period of its utilization
   * metrics, and of its invocation metrics when `invocationMetricsAtPublishFrequency` holds, so a period never holds
   * more than one datapoint per instance and never less than one.
   *
   * @default Duration.seconds(60)
   */
  readonly period?: Duration;

  /**
   * Whether invocation metrics (`AWS/SageMaker`) are published at `period`: true with enhanced metrics; without them
   * SageMaker publishes invocation metrics every 60 s whatever the frequency (API reference, `MetricsConfig`).
   *
   * @default true
   */
  readonly invocationMetricsAtPublishFrequency?: boolean;

  /**
   * An inference component of the endpoint: its metrics are addressed by the `InferenceComponentName` dimension
   * alone, as SageMaker publishes them (`AWS/SageMaker` invocation metrics and `/aws/sagemaker/InferenceComponents`
   * utilization metrics), instead of `EndpointName` and `VariantName`. The per-instance series (SEARCH, Metrics
   * Insights) and the `/aws/sagemaker/Endpoints` host metrics stay the variant's.
   *
   * @default - the variant's metrics
   */
  readonly inferenceComponentName?: string;
}

/** The shortest period of a standard-resolution metric, and of every Metrics Insights query (it aggregates at one minute). */
const ONE_MINUTE = Duration.seconds(60);

/** The longer of two durations (both known at synth, or the first when either is a token). */
function atLeast(period: Duration, minimum: Duration): Duration {
  if (period.isUnresolved() || minimum.isUnresolved()) return period;
  return period.toSeconds() >= minimum.toSeconds() ? period : minimum;
}

/**
 * Builds the metrics of one variant of one endpoint: SageMaker's `AWS/SageMaker` invocation metrics,
 * `/aws/sagemaker/Endpoints` host metrics, their per-instance series (enhanced metrics, dimension `InstanceId`),
 * and the router sidecar's `PrefixRouter` EMF metrics.
 */
export class EndpointMetrics {
  constructor(private readonly target: EndpointMetricTarget) {}

  /** The publish frequency: the period of utilization metrics (`/aws/sagemaker/Endpoints`). */
  public get period(): Duration {
    return this.target.period ?? DEFAULT_PUBLISH_FREQUENCY;
  }

  /**
   * The period of invocation metrics (`AWS/SageMaker`): the publish frequency with enhanced metrics, else at least
   * 60 s, because SageMaker then publishes them every minute (a shorter period would hold no data).
   */
  public get invocationPeriod(): Duration {
    return (this.target.invocationMetricsAtPublishFrequency ?? true) ? this.period : atLeast(this.period, ONE_MINUTE);
  }

  /**
   * The period of Metrics Insights queries: at least 60 s, since Metrics Insights aggregates high-resolution data
   * at one minute (CloudWatch, Metrics Insights quotas), and never shorter than the invocation metrics' period.
   */
  public get insightsPeriod(): Duration {
    return atLeast(this.invocationPeriod, ONE_MINUTE);
  }

  /** The period of the router sidecar's EMF metrics: standard resolution, at least 60 s. */
  public get routerPeriod(): Duration {
    return atLeast(this.period, ONE_MINUTE);
  }

  /** Any metric of the variant; `namespace` defaults to `AWS/SageMaker`, the period to that namespace's. */
  public metric(metricName: string, props: EndpointMetricOptions = {}): cloudwatch.Metric {
    const { namespace, ...options } = props;
    const ns = namespace ?? SAGEMAKER_NAMESPACE;
    const component = this.target.inferenceComponentName;
    const byComponent = component !== undefined && (ns === SAGEMAKER_NAMESPACE || ns === INFERENCE_COMPONENT_NAMESPACE);
    return new cloudwatch.Metric({
      namespace: ns,
      metricName,
      dimensionsMap: byComponent
        ? { [INFERENCE_COMPONENT_DIMENSION]: component }
        : { EndpointName: this.target.endpointName, VariantName: this.target.variantName },
      period:
        ns === SAGEMAKER_NAMESPACE ? this.invocationPeriod : ns === ROUTER_NAMESPACE ? this.routerPeriod : this.period,
      ...options,
    });
  }

  /** Requests sent to the variant (Sum). */
  public invocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Invocations', { statistic: 'Sum', label: 'Requests (all instances)', ...props });
  }

  /** Requests per instance: the variant's requests divided by its instance count (Sum). */
  public invocationsPerInstance(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('InvocationsPerInstance', { statistic: 'Sum', label: 'Requests per instance (mean)', ...props });
  }

  /** Time the container took to answer, in microseconds (p90). */
  public modelLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ModelLatency', { statistic: 'p90', unit: cloudwatch.Unit.MICROSECONDS, ...props });
  }

  /** Time SageMaker added around the container, routing included, in microseconds (p90). */
  public overheadLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('OverheadLatency', { statistic: 'p90', unit: cloudwatch.Unit.MICROSECONDS, ...props });
  }

  /**
   * In-flight requests per instance (Maximum, 10-second resolution): what `PREFIX_AWARE`'s concurrencyThreshold
   * and the autoscaling target are compared with.
   */
  public concurrentRequestsPerModel(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ConcurrentRequestsPerModel', { statistic: 'Maximum', period: Duration.seconds(10), ...props });
  }

  /**
   * Inference components: in-flight requests per copy of the component (Maximum, 10-second resolution): what copy
   * autoscaling tracks (predefined metric `SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution`).
   */
  public concurrentRequestsPerCopy(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ConcurrentRequestsPerCopy', { statistic: 'Maximum', period: Duration.seconds(10), ...props });
  }

  /** Inference components: requests per copy of the component (Sum). */
  public invocationsPerCopy(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('InvocationsPerCopy', { statistic: 'Sum', label: 'Requests per copy (mean)', ...props });
  }

  /**
   * Inference components: requests refused because no copy was running (Sum): what scales a component up from zero
   * copies (https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html).
   */
  public noCapacityInvocationFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('NoCapacityInvocationFailures', { statistic: 'Sum', ...props });
  }

  /** Inference components: GPU utilization of the copies over the GPUs they reserve, 0–100 % (Average). */
  public gpuUtilizationNormalized(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('GPUUtilizationNormalized', {
      namespace: INFERENCE_COMPONENT_NAMESPACE,
      statistic: 'Average',
      ...props,
    });
  }

  /** Inference components: GPU memory utilization of the copies, 0–100 % (Average). */
  public gpuMemoryUtilizationNormalized(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('GPUMemoryUtilizationNormalized', {
      namespace: INFERENCE_COMPONENT_NAMESPACE,
      statistic: 'Average',
      ...props,
    });
  }

  /** Client errors (Sum). */
  public invocation4xxErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Invocation4XXErrors', { statistic: 'Sum', ...props });
  }

  /** Server and model errors (Sum). */
  public invocation5xxErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Invocation5XXErrors', { statistic: 'Sum', ...props });
  }

  /** GPU utilization summed over the instance's GPUs, in percent (0–100 × GPUs) (Average). */
  public gpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('GPUUtilization', { namespace: ENDPOINT_INSTANCE_NAMESPACE, statistic: 'Average', ...props });
  }

  /** GPU memory utilization summed over the instance's GPUs, in percent (0–100 × GPUs) (Average). */
  public gpuMemoryUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('GPUMemoryUtilization', {
      namespace: ENDPOINT_INSTANCE_NAMESPACE,
      statistic: 'Average',
      ...props,
    });
  }

  /** 5XX responses in percent of requests (metric math; empty without requests). */
  public invocation5xxRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.errorRate(this.invocation5xxErrors(), '5XX errors (% of requests)', props);
  }

  /** 4XX responses in percent of requests (metric math; empty without requests). */
  public invocation4xxRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.errorRate(this.invocation4xxErrors(), '4XX errors (% of requests)', props);
  }

  /**
   * 5XX errors in percent of requests, 0 while requests are fewer than `minInvocations` per period (so one stray
   * error on a quiet endpoint is not "100 % errors"). What the error-rate alarm watches.
   */
  public guardedInvocation5xxRate(
    minInvocations: number,
    props?: cloudwatch.MathExpressionOptions,
  ): cloudwatch.MathExpression {
    return new cloudwatch.MathExpression({
      expression: `IF(requests >= ${minInvocations}, 100 * FILL(errors, 0) / requests, 0)`,
      usingMetrics: { errors: this.invocation5xxErrors(), requests: this.invocations() },
      label: `5XX errors (% of requests, 0 below ${minInvocations} requests)`,
      period: this.invocationPeriod,
      ...props,
    });
  }

  /** One series per instance of an invocation metric (SEARCH over the `InstanceId` dimension; dashboards only). */
  public perInstance(
    metricName: string,
    statistic: string,
    props?: cloudwatch.MathExpressionOptions,
  ): cloudwatch.MathExpression {
    return this.search(SAGEMAKER_NAMESPACE, metricName, statistic, props);
  }

  /** One series per instance of a host metric (`/aws/sagemaker/Endpoints`; dashboards only). */
  public perInstanceHost(
    metricName: string,
    statistic: string,
    props?: cloudwatch.MathExpressionOptions,
  ): cloudwatch.MathExpression {
    return this.search(ENDPOINT_INSTANCE_NAMESPACE, metricName, statistic, props);
  }

  /**
   * Load spread of requests: the busiest instance's requests ÷ the mean per instance (1 = perfectly even; on 7
   * instances, 2 means one instance takes 29 % of the traffic). Dashboards only: it needs SEARCH, which alarms refuse,
   * and no alarm can express it otherwise (docs/operations.md#load-spread).
   */
  public invocationsLoadSpread(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.spread(
      this.perInstance('Invocations', 'Sum'),
      'requests_by_instance',
      'Requests: busiest ÷ mean instance',
      props,
    );
  }

  /** Load spread of in-flight requests: busiest instance ÷ mean (Maximum per instance). Dashboards only (SEARCH). */
  public concurrencyLoadSpread(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.spread(
      this.perInstance('ConcurrentRequestsPerModel', 'Maximum'),
      'inflight_by_instance',
      'In-flight requests: busiest ÷ mean instance',
      props,
    );
  }

  /**
   * The busiest instance's in-flight requests (Metrics Insights `SELECT MAX(...)` over the `InstanceId` series, the
   * largest sample of any instance): alarms can watch it, unlike SEARCH. Period: `insightsPeriod` (at least 60 s).
   */
  public maxConcurrentRequestsPerInstance(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.insights('MAX', 'ConcurrentRequestsPerModel', 'In-flight requests, busiest instance', props);
  }

  /** Router sidecar: requests routed, by decision reason (`Reason` dimension; SEARCH, one series per reason). */
  public routingDecisions(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return new cloudwatch.MathExpression({
      expression: `SEARCH('{${ROUTER_NAMESPACE},EndpointName,Reason} EndpointName="${this.target.endpointName}" MetricName="RoutingDecisions"', 'Sum', ${this.routerPeriod.toSeconds()})`,
      usingMetrics: {},
      label: "${PROP('Dim.Reason')}",
      period: this.routerPeriod,
      ...props,
    });
  }

  /** Router sidecar: requests routed with one decision reason, e.g. `prefix-affinity` or `threshold-spill` (Sum). */
  public routingDecisionsFor(reason: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: ROUTER_NAMESPACE,
      metricName: 'RoutingDecisions',
      dimensionsMap: { EndpointName: this.target.endpointName, Reason: reason },
      statistic: 'Sum',
      period: this.routerPeriod,
      ...props,
    });
  }

  /** Router sidecar: time to first token of streamed requests, in milliseconds (p90). */
  public routerTimeToFirstToken(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: ROUTER_NAMESPACE,
      metricName: 'TimeToFirstToken',
      dimensionsMap: { EndpointName: this.target.endpointName },
      statistic: 'p90',
      unit: cloudwatch.Unit.MILLISECONDS,
      period: this.routerPeriod,
      ...props,
    });
  }

  /**
   * Router sidecar: prompt tokens the engines report as served from their prefix cache, in percent of prompt tokens
   * (`ReportedCachedTokens` ÷ `PromptTokens`, summed over engines).
   */
  public routerReportedCacheHitRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.routerTokenRatio(
      'ReportedCachedTokens',
      'Prefix cache hit, engine-reported (% of prompt tokens)',
      props,
    );
  }

  /** Router sidecar: prompt tokens the router predicted to be cached, in percent of prompt tokens. */
  public routerPredictedCacheHitRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.routerTokenRatio(
      'PredictedCachedTokens',
      'Prefix cache hit, router-predicted (% of prompt tokens)',
      props,
    );
  }

  /**
   * vLLM's own prefix cache hit rate over 5 minutes, as a PromQL query for detailed observability metrics (OTel
   * metrics, queryable with PromQL in CloudWatch Query Studio; CloudWatch graph widgets cannot draw PromQL, so the
   * dashboard shows the query as text). Uses vLLM's counter names and the `aws.sagemaker.endpoint.name` label.
   */
  public vllmPrefixCacheHitRateQuery(): string {
    const selector = `{"aws.sagemaker.endpoint.name"="${this.target.endpointName}"}`;
    return (
      `100 * sum(rate({__name__="vllm:prefix_cache_hits_total", ${selector.slice(1, -1)}}[5m])) / ` +
      `sum(rate({__name__="vllm:prefix_cache_queries_total", ${selector.slice(1, -1)}}[5m]))`
    );
  }

  private errorRate(
    errors: cloudwatch.Metric,
    label: string,
    props?: cloudwatch.MathExpressionOptions,
  ): cloudwatch.MathExpression {
    const id = errors.metricName === 'Invocation5XXErrors' ? 'errors_5xx' : 'errors_4xx';
    return new cloudwatch.MathExpression({
      expression: `100 * FILL(${id}, 0) / requests`,
      usingMetrics: { [id]: errors, requests: this.invocations() },
      label,
      period: this.invocationPeriod,
      ...props,
    });
  }

  private search(
    namespace: string,
    metricName: string,
    statistic: string,
    props?: cloudwatch.MathExpressionOptions,
  ): cloudwatch.MathExpression {
    const { endpointName, variantName } = this.target;
    const period = namespace === SAGEMAKER_NAMESPACE ? this.invocationPeriod : this.period;
    return new cloudwatch.MathExpression({
      expression:
        `SEARCH('{${namespace},EndpointName,${INSTANCE_ID_DIMENSION},VariantName} EndpointName="${endpointName}" ` +
        `VariantName="${variantName}" MetricName="${metricName}"', '${statistic}', ${period.toSeconds()})`,
      usingMetrics: {},
      label: `\${PROP('Dim.${INSTANCE_ID_DIMENSION}')}`,
      period,
      ...props,
    });
  }

  private spread(
    perInstance: cloudwatch.MathExpression,
    id: string,
    label: string,
    props?: cloudwatch.MathExpressionOptions,
  ): cloudwatch.MathExpression {
    return new cloudwatch.MathExpression({
      expression: `MAX(${id}) / AVG(${id})`,
      usingMetrics: { [id]: perInstance },
      label,
      period: this.invocationPeriod,
      ...props,
    });
  }

  private insights(
    fn: 'MAX',
    metricName: string,
    label: string,
    props?: cloudwatch.MathExpressionOptions,
  ): cloudwatch.MathExpression {
    const { endpointName, variantName } = this.target;
    return new cloudwatch.MathExpression({
      expression:
        `SELECT ${fn}(${metricName}) FROM SCHEMA("${SAGEMAKER_NAMESPACE}", EndpointName, ${INSTANCE_ID_DIMENSION}, VariantName) ` +
        `WHERE EndpointName = '${endpointName}' AND VariantName = '${variantName}'`,
      usingMetrics: {},
      label,
      period: this.insightsPeriod,
      ...props,
    });
  }

  private routerTokenRatio(
    cached: string,
    label: string,
    props?: cloudwatch.MathExpressionOptions,
  ): cloudwatch.MathExpression {
    const series = (metricName: string) =>
      new cloudwatch.MathExpression({
        expression: `SEARCH('{${ROUTER_NAMESPACE},EndpointName,Engine} EndpointName="${this.target.endpointName}" MetricName="${metricName}"', 'Sum', ${this.routerPeriod.toSeconds()})`,
        usingMetrics: {},
        period: this.routerPeriod,
      });
    const id = cached === 'ReportedCachedTokens' ? 'reported' : 'predicted';
    return new cloudwatch.MathExpression({
      expression: `100 * SUM(${id}_cached) / SUM(${id}_prompt)`,
      usingMetrics: { [`${id}_cached`]: series(cached), [`${id}_prompt`]: series('PromptTokens') },
      label,
      period: this.routerPeriod,
      ...props,
    });
  }
}

/** `MetricsConfig` of the endpoint configuration. */
export interface EndpointMetricsConfig {
  /**
   * Invocation and utilization metrics per instance (dimension `InstanceId`), published at `publishFrequency`: what
   * the dashboard's per-instance graphs, the load spread and the per-instance alarms read. Billed as extra
   * CloudWatch metrics (one series per instance per metric).
   *
   * @default true
   */
  readonly enhancedMetrics?: boolean;

  /**
   * Container-level inference metrics (vLLM's own, including its prefix cache counters), per-GPU and per-instance
   * host metrics, as OpenTelemetry metrics queryable with PromQL.
   *
   * @default - SageMaker's default (on for new endpoint configurations)
   */
  readonly detailedObservability?: boolean;

  /**
   * How often the endpoint publishes metrics; also the period of the construct's metrics and alarms wherever CloudWatch
   * accepts it: utilization metrics (GPU memory) and, with enhanced metrics, invocation metrics (errors, latency) use
   * it; invocation metrics without enhanced metrics (published every 60 s) and Metrics Insights queries (aggregated
   * at one minute) use at least 60 s. Allowed: 10, 30, 60, 120, 180, 240 or 300 seconds. Alarms below 60 s are
   * high-resolution alarms (CloudWatch bills them at a higher rate).
   *
   * @default Duration.seconds(60)
   */
  readonly publishFrequency?: Duration;
}

/** The construct's alarms, each present unless disabled or not applicable (see `EndpointMonitoringOptions`). */
export interface EndpointAlarms {
  /** 5XX errors in percent of requests. */
  readonly errorRate?: cloudwatch.IAlarm;
  /** ModelLatency p90. */
  readonly latency?: cloudwatch.IAlarm;
  /** Busiest instance's in-flight requests near `concurrencyThreshold` (PREFIX_AWARE only). */
  readonly concurrency?: cloudwatch.IAlarm;
  /** Hottest instance's GPU memory per GPU (GPU count known only). */
  readonly gpuMemory?: cloudwatch.IAlarm;
}

/** Settings shared by the construct's alarms. */
export interface EndpointAlarmOptions {
  /** Create this alarm. @default true (see each alarm for exceptions) */
  readonly enabled?: boolean;
  /** Threshold, in the unit each alarm documents. @default - each alarm's documented default */
  readonly threshold?: number;
  /** Periods (of the publish frequency) evaluated. @default - each alarm's documented default */
  readonly evaluationPeriods?: number;
  /** Breaching periods among `evaluationPeriods` that raise the alarm. @default - each alarm's documented default */
  readonly datapointsToAlarm?: number;
}

/** Options of the 5XX error-rate alarm. */
export interface ErrorRateAlarmOptions extends EndpointAlarmOptions {
  /**
   * Requests a period needs before its error rate counts; quieter periods count as 0 %.
   *
   * @default 20 - below 20 requests one error is already 5 %
   */
  readonly minInvocations?: number;
}

/**
 * Options of the former load-spread alarm.
 *
 * @deprecated No CloudWatch alarm can compare the busiest instance with the mean within CloudWatch's documented limits
 * (docs/operations.md#load-spread); the load spread is on the dashboard. Only `{ enabled: false }` is accepted.
 */
export interface LoadSpreadAlarmOptions extends EndpointAlarmOptions {
  /** @deprecated see `LoadSpreadAlarmOptions` */
  readonly minInvocationsPerInstance?: number;
}

/**
 * Where the dashboard's load-spread graph draws its reference line: the busiest instance at twice the mean (on 7
 * instances, one instance taking 29 % of the traffic). AWS's PREFIX_AWARE benchmark on 7 × p5 stayed near 1.08.
 */
export const LOAD_SPREAD_REFERENCE = 2;

/** Defaults of the construct's alarms; docs/operations.md explains each. */
export const ALARM_DEFAULTS = {
  /** 5XX ≥ 5 % of requests in 3 of 5 periods. */
  errorRate: { thresholdPercent: 5, minInvocations: 20, evaluationPeriods: 5, datapointsToAlarm: 3 },
  /** ModelLatency p90 ≥ 30 s (half the 60 s SageMaker allows a buffered response) in 3 of 5 periods. */
  latency: { thresholdMs: 30_000, evaluationPeriods: 5, datapointsToAlarm: 3 },
  /** Busiest instance's in-flight requests ≥ 90 % of concurrencyThreshold in 5 of 5 periods. */
  concurrency: { shareOfThreshold: 0.9, evaluationPeriods: 5, datapointsToAlarm: 5 },
  /** Hottest instance's GPU memory ≥ vLLM's gpuMemoryUtilization + 5 points (at most 99 %) in 5 of 5 periods. */
  gpuMemory: {
    marginPercent: 5,
    maxPercent: 99,
    vllmDefaultUtilization: 0.9,
    evaluationPeriods: 5,
    datapointsToAlarm: 5,
  },
} as const;

/** Dashboard, alarms and notifications of the endpoint (on by default). */
export interface EndpointMonitoringOptions {
  /** Create a CloudWatch dashboard for the endpoint. @default true */
  readonly dashboard?: boolean;

  /** @default - CloudFormation generates a name */
  readonly dashboardName?: string;

  /** SNS topic notified when an alarm goes into ALARM and back to OK. @default - no notification */
  readonly alarmTopic?: sns.ITopic;

  /**
   * 5XX responses in percent of requests (metric math, guarded by `minInvocations`). Threshold in percent.
   * Rolls deployments back unless `deployment.useDefaultAlarms` is false.
   *
   * @default - 5 % in 3 of 5 periods, at least 20 requests per period
   */
  readonly errorRateAlarm?: ErrorRateAlarmOptions;

  /**
   * `ModelLatency` p90 (the container's time to answer). Threshold in milliseconds. Rolls deployments back unless
   * `deployment.useDefaultAlarms` is false.
   *
   * @default - 30,000 ms in 3 of 5 periods
   */
  readonly latencyAlarm?: EndpointAlarmOptions;

  /**
   * The busiest instance's `ConcurrentRequestsPerModel` sustained near `PREFIX_AWARE`'s concurrencyThreshold: prefix
   * affinity is saturating and requests start spilling away from their cached prefixes. Threshold as a share of the
   * concurrencyThreshold (0–1). Only under `PREFIX_AWARE`.
   *
   * @default - 0.9 in 5 of 5 periods
   */
  readonly concurrencyAlarm?: EndpointAlarmOptions;

  /**
   * No longer an alarm: CloudWatch cannot alarm on the busiest instance's requests ÷ the mean within its documented
   * limits (SEARCH is refused in alarms; an alarm takes one Metrics Insights query, and per-instance totals need
   * GROUP BY, which returns several time series). The dashboard draws the spread (SEARCH) instead; see
   * docs/operations.md#load-spread. Only `{ enabled: false }` is accepted, anything else fails synth.
   *
   * @deprecated the load spread is on the dashboard only
   * @default - no load-spread alarm
   */
  readonly loadSpreadAlarm?: LoadSpreadAlarmOptions;

  /**
   * The hottest instance's GPU memory, in percent per GPU. vLLM allocates `gpuMemoryUtilization` of each GPU at start,
   * so the reading sits there; more means memory outside vLLM's pool is growing.
   *
   * @default - engine.gpuMemoryUtilization (vLLM's 0.9 if unset) × 100 + 5, at most 99, in 5 of 5 periods
   */
  readonly gpuMemoryAlarm?: EndpointAlarmOptions;

  /**
   * Show the router sidecar's EMF metrics (namespace `PrefixRouter`: decision reasons, TTFT, predicted vs
   * engine-reported cache hit) on the dashboard.
   *
   * @default - true when the image runs the router sidecar (its bound config says so), false otherwise
   */
  readonly routerSidecarMetrics?: boolean;
}
