import {
  aws_cloudwatch as cloudwatch,
  aws_cloudwatch_actions as actions,
  aws_sns as sns,
  Duration,
  Token,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import {
  ALARM_DEFAULTS,
  EndpointAlarmOptions,
  EndpointAlarms,
  EndpointMetrics,
  EndpointMonitoringOptions,
  LOAD_SPREAD_REFERENCE,
} from '../monitoring';
import { isKnownInteger, ProblemCollector } from './validation';

/** What the alarms and the dashboard need to know about the endpoint. */
export interface MonitoredEndpoint {
  readonly metrics: EndpointMetrics;
  /** `PREFIX_AWARE`'s concurrencyThreshold, when routing is prefix-aware. */
  readonly concurrencyThreshold?: number;
  /** The autoscaling target of concurrent requests per instance, when autoscaling is on. */
  readonly scalingTarget?: number;
  /** GPUs per instance, when known: GPU metrics are summed over them. */
  readonly gpuCount?: number;
  /** vLLM's `gpuMemoryUtilization`, when set. */
  readonly gpuMemoryUtilization?: number;
  /** Whether to show the router sidecar's EMF metrics. */
  readonly routerSidecarMetrics: boolean;
  /**
   * What the alarms watch, for their descriptions: an endpoint or an inference component of one.
   *
   * @default 'endpoint'
   */
  readonly subject?: 'endpoint' | 'component';
  /** Whether deployments roll back on the error-rate and latency alarms (their descriptions say so). @default true */
  readonly rollsBack?: boolean;
}

/** The alarms as created (concrete, so their thresholds can be drawn on the dashboard). */
export type CreatedAlarms = { readonly [K in keyof EndpointAlarms]?: cloudwatch.Alarm };

/**
 * CloudWatch evaluates a Metrics Insights alarm on the latest 3 hours of data only (CloudWatch, alarm limits:
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-limits.html), so its periods × evaluation
 * periods must fit in 10,800 s.
 */
export const METRICS_INSIGHTS_ALARM_WINDOW_SECONDS = 10_800;

/** What the alarm checks need to know about the endpoint's metrics at synth. */
export interface MonitoringValidationContext {
  /** Period of the Metrics Insights alarms in seconds, when known at synth. */
  readonly insightsPeriodSeconds?: number;
}

/** Checks the alarm options; thresholds and periods are known at synth. */
export function validateMonitoring(
  options: EndpointMonitoringOptions | undefined,
  context: MonitoringValidationContext,
  problems: ProblemCollector,
): void {
  if (!options) return;
  const check = (
    name: string,
    alarm: EndpointAlarmOptions | undefined,
    range: { min: number; max: number; unit: string },
  ) => {
    if (!alarm) return;
    const t = alarm.threshold;
    if (t !== undefined && !(t >= range.min && t <= range.max)) {
      problems.add(
        `monitoring.${name}.threshold must be between ${range.min} and ${range.max} ${range.unit} (got ${t})`,
      );
    }
    problems.integerInRange(`monitoring.${name}.evaluationPeriods`, alarm.evaluationPeriods, 1, 100);
    const evaluation = alarm.evaluationPeriods ?? 5;
    if (alarm.datapointsToAlarm !== undefined) {
      problems.integerInRange(`monitoring.${name}.datapointsToAlarm`, alarm.datapointsToAlarm, 1, evaluation);
    }
  };
  check('errorRateAlarm', options.errorRateAlarm, { min: 0, max: 100, unit: 'percent' });
  check('latencyAlarm', options.latencyAlarm, { min: 1, max: 3_600_000, unit: 'ms' });
  check('concurrencyAlarm', options.concurrencyAlarm, { min: 0.01, max: 1, unit: '(share of concurrencyThreshold)' });
  check('gpuMemoryAlarm', options.gpuMemoryAlarm, { min: 1, max: 100, unit: 'percent' });
  problems.integerAtLeast('monitoring.errorRateAlarm.minInvocations', options.errorRateAlarm?.minInvocations, 1);

  const period = context.insightsPeriodSeconds;
  const periods = options.concurrencyAlarm?.evaluationPeriods;
  if (period !== undefined && isKnownInteger(periods) && periods * period > METRICS_INSIGHTS_ALARM_WINDOW_SECONDS) {
    problems.add(
      `monitoring.concurrencyAlarm.evaluationPeriods must be at most ${Math.floor(METRICS_INSIGHTS_ALARM_WINDOW_SECONDS / period)} with ` +
        `${period}-second periods: CloudWatch evaluates Metrics Insights alarms on the latest 3 hours only (got ${periods})`,
    );
  }

  const spread = options.loadSpreadAlarm;
  if (spread !== undefined && !(spread.enabled === false && Object.keys(spread).length === 1)) {
    problems.add(
      'monitoring.loadSpreadAlarm can only be { enabled: false }: no CloudWatch alarm can compare the busiest instance with the mean ' +
        '(SEARCH is refused in alarms, an alarm takes one Metrics Insights query, and per-instance totals need GROUP BY, which returns several ' +
        `time series); the load spread is on the dashboard, see docs/operations.md#load-spread (got ${JSON.stringify(spread)})`,
    );
  }
}

/**
 * Adds one alarm to `made` under `key` unless its options disable it: at or above the threshold, missing data not
 * breaching, notifying `topic` (when given) of ALARM and OK.
 */
function alarmAdder(scope: Construct, topic: sns.ITopic | undefined, made: Record<string, cloudwatch.Alarm>) {
  return (
    key: keyof EndpointAlarms,
    id: string,
    alarmOptions: EndpointAlarmOptions | undefined,
    defaults: { evaluationPeriods: number; datapointsToAlarm: number },
    props: { metric: cloudwatch.IMetric; threshold: number; description: string },
  ): void => {
    if (alarmOptions?.enabled === false) return;
    const alarm = new cloudwatch.Alarm(scope, id, {
      metric: props.metric,
      threshold: props.threshold,
      alarmDescription: props.description,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: alarmOptions?.evaluationPeriods ?? defaults.evaluationPeriods,
      datapointsToAlarm: datapointsToAlarmOf(alarmOptions, defaults),
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (topic) {
      alarm.addAlarmAction(new actions.SnsAction(topic));
      alarm.addOkAction(new actions.SnsAction(topic));
    }
    made[key] = alarm;
  };
}

/** Creates the enabled alarms; missing data (no traffic) never breaches, so an idle endpoint can be updated. */
export function createEndpointAlarms(
  scope: Construct,
  endpoint: MonitoredEndpoint,
  options: EndpointMonitoringOptions = {},
): CreatedAlarms {
  const { metrics } = endpoint;
  // Each alarm evaluates at a period CloudWatch accepts for its metric: invocation metrics at their publishing interval,
  // Metrics Insights at one minute or more, utilization metrics at the publish frequency.
  const invocationPeriod = metrics.invocationPeriod;
  const component = endpoint.subject === 'component';
  const rollback = endpoint.rollsBack === false ? '' : 'Deployments roll back while it is in ALARM. ';
  const made: Record<string, cloudwatch.Alarm> = {};
  const add = alarmAdder(scope, options.alarmTopic, made);

  const errorRate = { ...ALARM_DEFAULTS.errorRate, ...options.errorRateAlarm };
  add('errorRate', 'ErrorRateAlarm', options.errorRateAlarm, ALARM_DEFAULTS.errorRate, {
    metric: metrics.guardedInvocation5xxRate(errorRate.minInvocations, { period: invocationPeriod }),
    threshold: options.errorRateAlarm?.threshold ?? ALARM_DEFAULTS.errorRate.thresholdPercent,
    description:
      `The ${component ? 'inference component' : 'endpoint'} answers a share of requests with 5XX (model or container errors). ${rollback}` +
      'See docs/operations.md#5xx-error-rate.',
  });

  const latencyMs = options.latencyAlarm?.threshold ?? ALARM_DEFAULTS.latency.thresholdMs;
  add('latency', 'ModelLatencyAlarm', options.latencyAlarm, ALARM_DEFAULTS.latency, {
    metric: metrics.modelLatency({ period: invocationPeriod }),
    // ModelLatency is in microseconds.
    threshold: latencyMs * 1000,
    description:
      `ModelLatency p90 is at least ${latencyMs} ms: the engine is queueing or a new image is slower. ${rollback}` +
      'See docs/operations.md#model-latency.',
  });

  if (endpoint.concurrencyThreshold !== undefined && isKnownInteger(endpoint.concurrencyThreshold)) {
    const share = options.concurrencyAlarm?.threshold ?? ALARM_DEFAULTS.concurrency.shareOfThreshold;
    add('concurrency', 'ConcurrencySaturationAlarm', options.concurrencyAlarm, ALARM_DEFAULTS.concurrency, {
      metric: metrics.maxConcurrentRequestsPerInstance({ period: metrics.insightsPeriod }),
      threshold: Math.max(1, Math.round(share * endpoint.concurrencyThreshold * 100) / 100),
      description:
        `An instance holds at least ${Math.round(share * 100)} % of the PREFIX_AWARE concurrencyThreshold ` +
        `(${endpoint.concurrencyThreshold}) in flight: prefix affinity is saturating and requests spill to instances without their prefix. ` +
        'See docs/operations.md#concurrency-saturation.',
    });
  }

  const gpus = endpoint.gpuCount;
  if (gpus !== undefined && isKnownInteger(gpus) && gpus >= 1) {
    const d = ALARM_DEFAULTS.gpuMemory;
    const configured = endpoint.gpuMemoryUtilization;
    // A deploy-time value cannot size the threshold: fall back to vLLM's default share.
    const vllmShare =
      configured !== undefined && !Token.isUnresolved(configured) ? configured : d.vllmDefaultUtilization;
    const percent =
      options.gpuMemoryAlarm?.threshold ?? Math.min(d.maxPercent, Math.round(vllmShare * 100) + d.marginPercent);
    add('gpuMemory', 'GpuMemoryAlarm', options.gpuMemoryAlarm, d, {
      // GPUMemoryUtilization is summed over the instance's GPUs; Maximum over the period picks the hottest instance.
      metric: new cloudwatch.MathExpression({
        expression: `gpuMemory / ${gpus}`,
        usingMetrics: { gpuMemory: metrics.gpuMemoryUtilization({ statistic: 'Maximum', period: metrics.period }) },
        label: 'GPU memory, hottest instance (% per GPU)',
        period: metrics.period,
      }),
      threshold: percent,
      description:
        `GPU memory of an instance is at least ${percent} % per GPU, above what vLLM allocates (${Math.round(vllmShare * 100)} %): ` +
        'memory outside its pool is growing toward out-of-memory. See docs/operations.md#gpu-memory.',
    });
  }
  return made;
}

/** Breaching periods an alarm needs: the option, else the default capped at the evaluation periods. */
function datapointsToAlarmOf(
  options: EndpointAlarmOptions | undefined,
  defaults: { evaluationPeriods: number; datapointsToAlarm: number },
): number {
  return (
    options?.datapointsToAlarm ??
    Math.min(defaults.datapointsToAlarm, options?.evaluationPeriods ?? defaults.evaluationPeriods)
  );
}

/**
 * How long each enabled rollback alarm needs, at least, to go into ALARM after a regression starts: datapointsToAlarm
 * of its periods. SageMaker rolls back only on alarms that trip during a bake ("If any of your alarms trip during the
 * specified monitoring period", https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-configuration.html),
 * so a delay longer than `waitInterval` lets the last batch escape.
 */
export function rollbackAlarmDelays(
  options: EndpointMonitoringOptions | undefined,
  periodSeconds: number,
): Array<{ alarm: string; datapoints: number; seconds: number }> {
  const delay = (
    alarm: string,
    alarmOptions: EndpointAlarmOptions | undefined,
    defaults: { evaluationPeriods: number; datapointsToAlarm: number },
  ) => {
    if (alarmOptions?.enabled === false) return [];
    const datapoints = datapointsToAlarmOf(alarmOptions, defaults);
    return [{ alarm, datapoints, seconds: datapoints * periodSeconds }];
  };
  return [
    ...delay('ErrorRateAlarm', options?.errorRateAlarm, ALARM_DEFAULTS.errorRate),
    ...delay('ModelLatencyAlarm', options?.latencyAlarm, ALARM_DEFAULTS.latency),
  ];
}

/** The alarms that make a deployment roll back: the error rate and the latency alarm. */
export function rollbackAlarmsOf(alarms: EndpointAlarms): cloudwatch.IAlarm[] {
  return [alarms.errorRate, alarms.latency].filter((a): a is cloudwatch.Alarm => a !== undefined);
}

/** How many rollback alarms the options produce (for the ≤ 10 alarms check before they exist). */
export function rollbackAlarmCount(options: EndpointMonitoringOptions | undefined): number {
  return [options?.errorRateAlarm, options?.latencyAlarm].filter((o) => o?.enabled !== false).length;
}

const FULL = 24;
const THIRD = 8;
const HALF = 12;
const HEIGHT = 6;

/**
 * The dashboard as rows of widgets, top to bottom: what an operator reads first (traffic and load spread), then
 * per-instance pressure, latency, errors, GPUs, and the router sidecar and vLLM cache when available.
 */
export function endpointDashboardRows(endpoint: MonitoredEndpoint, alarms: CreatedAlarms): cloudwatch.IWidget[][] {
  const m = endpoint.metrics;
  return [
    trafficRow(m),
    pressureAndLatencyRow(endpoint, alarms),
    errorsAndGpuRow(endpoint, alarms),
    ...(endpoint.routerSidecarMetrics ? [routerSidecarRow(m)] : []),
    [vllmCacheHitRateWidget(m)],
  ];
}

/** Requests in total and per instance, and how evenly they spread. */
function trafficRow(m: EndpointMetrics): cloudwatch.IWidget[] {
  return [
    new cloudwatch.GraphWidget({
      title: 'Requests: total and per instance',
      width: THIRD,
      height: HEIGHT,
      left: [m.invocations(), m.invocationsPerInstance()],
      leftYAxis: { label: 'requests / period', showUnits: false, min: 0 },
    }),
    new cloudwatch.GraphWidget({
      title: 'Requests per instance (one line each)',
      width: THIRD,
      height: HEIGHT,
      left: [m.perInstance('Invocations', 'Sum')],
      leftYAxis: { label: 'requests / period', showUnits: false, min: 0 },
    }),
    new cloudwatch.GraphWidget({
      title: 'Load spread: busiest ÷ mean instance (1 = even)',
      width: THIRD,
      height: HEIGHT,
      left: [m.invocationsLoadSpread(), m.concurrencyLoadSpread()],
      leftYAxis: { label: 'ratio', showUnits: false, min: 0 },
      leftAnnotations: [{ value: LOAD_SPREAD_REFERENCE, label: 'busiest at twice the mean', color: '#ff7f0e' }],
    }),
  ];
}

/** The lines drawn on the in-flight graph: where PREFIX_AWARE spills and the autoscaling target. */
function concurrencyAnnotationsOf(endpoint: MonitoredEndpoint): cloudwatch.HorizontalAnnotation[] {
  const annotations: cloudwatch.HorizontalAnnotation[] = [];
  if (endpoint.concurrencyThreshold !== undefined) {
    annotations.push({
      value: endpoint.concurrencyThreshold,
      label: `PREFIX_AWARE concurrencyThreshold (${endpoint.concurrencyThreshold}): spills above`,
      color: '#d62728',
    });
  }
  if (endpoint.scalingTarget !== undefined) {
    annotations.push({
      value: endpoint.scalingTarget,
      label: `autoscaling target (${endpoint.scalingTarget})`,
      color: '#2ca02c',
    });
  }
  return annotations;
}

/** In-flight requests per instance against the spill threshold, and latency percentiles. */
function pressureAndLatencyRow(endpoint: MonitoredEndpoint, alarms: CreatedAlarms): cloudwatch.IWidget[] {
  const m = endpoint.metrics;
  return [
    new cloudwatch.GraphWidget({
      title: 'In-flight requests per instance (max)',
      width: HALF,
      height: HEIGHT,
      left: [m.perInstance('ConcurrentRequestsPerModel', 'Maximum')],
      leftYAxis: { label: 'requests in flight', showUnits: false, min: 0 },
      leftAnnotations: concurrencyAnnotationsOf(endpoint),
    }),
    new cloudwatch.GraphWidget({
      title: 'Latency percentiles (ms)',
      width: HALF,
      height: HEIGHT,
      left: ['p50', 'p90', 'p99'].map((p) => millis(m.modelLatency({ statistic: p }), `model_${p}`, `model ${p}`)),
      right: ['p50', 'p90', 'p99'].map((p) =>
        millis(m.overheadLatency({ statistic: p }), `overhead_${p}`, `SageMaker overhead ${p}`),
      ),
      leftYAxis: { label: 'model latency (ms)', showUnits: false, min: 0 },
      rightYAxis: { label: 'overhead (ms)', showUnits: false, min: 0 },
      leftAnnotations: alarms.latency
        ? [{ value: alarms.latency.toAnnotation().value / 1000, label: 'latency alarm (p90)', color: '#d62728' }]
        : undefined,
    }),
  ];
}

/** Error rates, and GPU use and memory per instance (per GPU where an instance has several). */
function errorsAndGpuRow(endpoint: MonitoredEndpoint, alarms: CreatedAlarms): cloudwatch.IWidget[] {
  const m = endpoint.metrics;
  const gpus = endpoint.gpuCount;
  const perGpu = (metric: cloudwatch.MathExpression, id: string) =>
    gpus && gpus > 1
      ? new cloudwatch.MathExpression({
          expression: `${id} / ${gpus}`,
          usingMetrics: { [id]: metric },
          label: metric.label,
          period: metric.period,
        })
      : metric;
  return [
    new cloudwatch.GraphWidget({
      title: 'Errors (% of requests)',
      width: THIRD,
      height: HEIGHT,
      left: [m.invocation5xxRate(), m.invocation4xxRate()],
      leftYAxis: { label: '% of requests', showUnits: false, min: 0 },
      leftAnnotations: alarms.errorRate
        ? [{ value: alarms.errorRate.toAnnotation().value, label: '5XX alarm', color: '#d62728' }]
        : undefined,
    }),
    new cloudwatch.GraphWidget({
      title: 'GPU utilization per instance (% per GPU)',
      width: THIRD,
      height: HEIGHT,
      left: [perGpu(m.perInstanceHost('GPUUtilization', 'Average'), 'gpu_by_instance')],
      leftYAxis: { label: '% per GPU', showUnits: false, min: 0, max: 100 },
    }),
    new cloudwatch.GraphWidget({
      title: 'GPU memory per instance (% per GPU)',
      width: THIRD,
      height: HEIGHT,
      left: [perGpu(m.perInstanceHost('GPUMemoryUtilization', 'Average'), 'gpu_memory_by_instance')],
      leftYAxis: { label: '% per GPU', showUnits: false, min: 0, max: 100 },
      leftAnnotations: alarms.gpuMemory
        ? [{ value: alarms.gpuMemory.toAnnotation().value, label: 'GPU memory alarm', color: '#d62728' }]
        : undefined,
    }),
  ];
}

/** The router sidecar's own figures: decisions by reason, TTFT, and predicted against reported cache hits. */
function routerSidecarRow(m: EndpointMetrics): cloudwatch.IWidget[] {
  return [
    new cloudwatch.GraphWidget({
      title: 'Router: decisions by reason',
      width: THIRD,
      height: HEIGHT,
      stacked: true,
      left: [m.routingDecisions()],
      leftYAxis: { label: 'requests / period', showUnits: false, min: 0 },
    }),
    new cloudwatch.GraphWidget({
      title: 'Router: time to first token (ms)',
      width: THIRD,
      height: HEIGHT,
      left: ['p50', 'p90', 'p99'].map((p) => m.routerTimeToFirstToken({ statistic: p, label: `TTFT ${p}` })),
      leftYAxis: { label: 'ms', showUnits: false, min: 0 },
    }),
    new cloudwatch.GraphWidget({
      title: 'Router: cache hit, predicted vs reported (%)',
      width: THIRD,
      height: HEIGHT,
      left: [m.routerPredictedCacheHitRate(), m.routerReportedCacheHitRate()],
      leftYAxis: { label: '% of prompt tokens', showUnits: false, min: 0, max: 100 },
    }),
  ];
}

/** vLLM's own prefix cache hit rate is PromQL, which graph widgets cannot draw yet: the query to run instead. */
function vllmCacheHitRateWidget(m: EndpointMetrics): cloudwatch.IWidget {
  return new cloudwatch.TextWidget({
    width: FULL,
    height: 3,
    markdown:
      '**vLLM prefix cache hit rate** (detailed observability, PromQL; graph widgets cannot draw PromQL yet). ' +
      'Run in CloudWatch Query Studio:\n\n```\n' +
      m.vllmPrefixCacheHitRateQuery() +
      '\n```',
  });
}

function millis(microseconds: cloudwatch.Metric, id: string, label: string): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    expression: `${id} / 1000`,
    usingMetrics: { [id]: microseconds },
    label,
    period: microseconds.period ?? Duration.minutes(1),
  });
}

/**
 * The dashboard rows of one inference component (or adapter), under a title: requests and error rates, latency
 * percentiles, in-flight requests per copy against the routing threshold and the copy autoscaling target, and the
 * copies' GPU use over what they reserve. All read the `InferenceComponentName` dimension.
 */
export function componentDashboardRows(
  m: EndpointMetrics,
  alarms: CreatedAlarms,
  settings: { title: string; concurrencyThreshold?: number; scalingTarget?: number },
): cloudwatch.IWidget[][] {
  const concurrencyAnnotations: cloudwatch.HorizontalAnnotation[] = [];
  if (settings.concurrencyThreshold !== undefined) {
    concurrencyAnnotations.push({
      value: settings.concurrencyThreshold,
      label: `PREFIX_AWARE concurrencyThreshold (${settings.concurrencyThreshold})`,
      color: '#d62728',
    });
  }
  if (settings.scalingTarget !== undefined) {
    concurrencyAnnotations.push({
      value: settings.scalingTarget,
      label: `copy autoscaling target (${settings.scalingTarget})`,
      color: '#2ca02c',
    });
  }
  return [
    [new cloudwatch.TextWidget({ width: FULL, height: 1, markdown: `### ${settings.title}` })],
    [
      new cloudwatch.GraphWidget({
        title: 'Requests, and 5XX / 4XX (% of requests)',
        width: THIRD,
        height: HEIGHT,
        left: [m.invocations({ label: 'Requests (all copies)' })],
        leftYAxis: { label: 'requests / period', showUnits: false, min: 0 },
        right: [m.invocation5xxRate(), m.invocation4xxRate()],
        rightYAxis: { label: '% of requests', showUnits: false, min: 0 },
        rightAnnotations: alarms.errorRate
          ? [{ value: alarms.errorRate.toAnnotation().value, label: '5XX alarm', color: '#d62728' }]
          : undefined,
      }),
      new cloudwatch.GraphWidget({
        title: 'Model latency percentiles (ms)',
        width: THIRD,
        height: HEIGHT,
        left: ['p50', 'p90', 'p99'].map((p) => millis(m.modelLatency({ statistic: p }), `model_${p}`, `model ${p}`)),
        leftYAxis: { label: 'ms', showUnits: false, min: 0 },
        leftAnnotations: alarms.latency
          ? [{ value: alarms.latency.toAnnotation().value / 1000, label: 'latency alarm (p90)', color: '#d62728' }]
          : undefined,
      }),
      new cloudwatch.GraphWidget({
        title: 'In-flight requests per copy (max)',
        width: THIRD,
        height: HEIGHT,
        left: [m.concurrentRequestsPerCopy()],
        leftYAxis: { label: 'requests in flight', showUnits: false, min: 0 },
        leftAnnotations: concurrencyAnnotations,
      }),
    ],
    [
      new cloudwatch.GraphWidget({
        title: 'GPU use of the copies (% of reserved GPUs)',
        width: HALF,
        height: HEIGHT,
        left: [
          m.gpuUtilizationNormalized({ label: 'GPU utilization' }),
          m.gpuMemoryUtilizationNormalized({ label: 'GPU memory' }),
        ],
        leftYAxis: { label: '% of reserved GPUs', showUnits: false, min: 0, max: 100 },
      }),
      new cloudwatch.GraphWidget({
        title: 'Requests per copy (mean)',
        width: HALF,
        height: HEIGHT,
        left: [m.invocationsPerCopy()],
        leftYAxis: { label: 'requests / period', showUnits: false, min: 0 },
      }),
    ],
  ];
}
