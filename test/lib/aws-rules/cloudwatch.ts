/**
 * CloudWatch alarm rules, each from the page it cites. Metric resolutions come from the endpoint configuration in the
 * same template (`metricResolutionSeconds`), because SageMaker publishes its metrics at `MetricPublishFrequencyInSeconds`.
 */
import { AwsRule, RuleFinding } from './rule';
import { flatten, resourcesOfType, TemplateJson } from './template';

const PUT_METRIC_ALARM = 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html';
const METRIC_DATA_QUERY = 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricDataQuery.html';
const GET_METRIC_DATA = 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html';
const MI_LIMITS =
  'https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-metrics-insights-limits.html';
const ALARM_LIMITS = 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-limits.html';
const ALARM_DATA_QUERIES = 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-data-queries.html';
const SEARCH_EXPRESSIONS =
  'https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-search-expressions.html';
const SAGEMAKER_METRICS_CONFIG = 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_MetricsConfig.html';
const SAGEMAKER_HIGH_RES = 'https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-add-code-define.html';

/** One entry of an alarm's `Metrics` array. */
interface AlarmQuery {
  readonly Id: string;
  readonly Expression?: string;
  readonly Period?: number;
  readonly ReturnData?: boolean;
  readonly MetricStat?: {
    Metric: { Namespace: string; MetricName: string; Dimensions?: Array<{ Name: string; Value: unknown }> };
    Period: number;
    Stat: string;
  };
}

function alarms(template: TemplateJson): Array<[string, Record<string, any>]> {
  return resourcesOfType(template, 'AWS::CloudWatch::Alarm');
}

function queriesOf(alarm: Record<string, any>): AlarmQuery[] {
  return (alarm.Metrics ?? []) as AlarmQuery[];
}

/** A Metrics Insights query: an Expression that is a `SELECT` statement. */
export function isMetricsInsights(expression: string | undefined): boolean {
  return expression !== undefined && /^\s*SELECT\s/i.test(expression);
}

/** `SELECT FN(Metric) FROM SCHEMA("Namespace", ...)` or `FROM "Namespace"` → the metric and namespace. */
function insightsTarget(expression: string): { namespace?: string; metricName?: string } {
  const metric = /^\s*SELECT\s+\w+\s*\(\s*"?([A-Za-z0-9_.:/-]+)"?\s*\)/i.exec(expression)?.[1];
  const namespace =
    /\bFROM\s+(?:SCHEMA\s*\(\s*)?"([^"]+)"/i.exec(expression)?.[1] ??
    /\bFROM\s+(?:SCHEMA\s*\(\s*)?([A-Za-z0-9_]+)/i.exec(expression)?.[1];
  return { namespace, metricName: metric };
}

/** `MetricsConfig` of the endpoint configuration that serves `endpointName` (or the template's only one). */
function metricsConfigFor(template: TemplateJson, endpointName: string | undefined): Record<string, any> | undefined {
  const endpoints = resourcesOfType(template, 'AWS::SageMaker::Endpoint');
  const endpoint =
    endpoints.find(([, p]) => endpointName !== undefined && flatten(p.EndpointName) === endpointName) ??
    (endpoints.length === 1 ? endpoints[0] : undefined);
  if (!endpoint) return undefined;
  const configId = /^<([^.>]+)/.exec(flatten(endpoint[1].EndpointConfigName))?.[1];
  const config = configId ? template.Resources?.[configId] : undefined;
  return config?.Properties?.MetricsConfig ?? (config ? {} : undefined);
}

/** SageMaker invocation metrics (namespace `AWS/SageMaker`) other than the always high-resolution concurrency metric. */
const CONCURRENCY_METRICS = ['ConcurrentRequestsPerModel', 'ConcurrentRequestsPerCopy'];

/**
 * The interval, in seconds, at which a metric receives data points: SageMaker's invocation metrics follow
 * `MetricPublishFrequencyInSeconds` only with enhanced metrics on, else 60 s; its utilization metrics always follow
 * it (API_MetricsConfig); `ConcurrentRequestsPerModel` is a high-resolution (10 s) metric (SageMaker autoscaling
 * guide); any other metric is treated as standard resolution (60 s).
 */
export function metricResolutionSeconds(
  template: TemplateJson,
  namespace: string | undefined,
  metricName: string | undefined,
  endpointName?: string,
): number {
  if (namespace === 'AWS/SageMaker' && metricName && CONCURRENCY_METRICS.includes(metricName)) return 10;
  if (namespace === 'AWS/SageMaker' || namespace === '/aws/sagemaker/Endpoints') {
    const config = metricsConfigFor(template, endpointName);
    if (!config) return 60;
    const frequency =
      typeof config.MetricPublishFrequencyInSeconds === 'number' ? config.MetricPublishFrequencyInSeconds : 60;
    if (namespace === '/aws/sagemaker/Endpoints') return frequency;
    return config.EnableEnhancedMetrics === true ? frequency : Math.max(60, frequency);
  }
  return 60;
}

/** Periods PutMetricAlarm accepts: 10, 20, 30 and any multiple of 60. */
function isAlarmPeriod(period: number): boolean {
  return [10, 20, 30].includes(period) || (period > 0 && period % 60 === 0);
}

function endpointNameOf(dimensions: Array<{ Name: string; Value: unknown }> | undefined): string | undefined {
  const value = dimensions?.find((d) => d.Name === 'EndpointName')?.Value;
  return value === undefined ? undefined : flatten(value);
}

function endpointNameInQuery(expression: string): string | undefined {
  return /EndpointName\s*=\s*'([^']+)'/.exec(expression)?.[1];
}

/** The period each alarm evaluates: the alarm's `Period`, or the common period of its queries. */
function evaluationPeriodOf(alarm: Record<string, any>): number | undefined {
  if (typeof alarm.Period === 'number') return alarm.Period;
  const periods = queriesOf(alarm)
    .map((q) => q.MetricStat?.Period ?? q.Period)
    .filter((p): p is number => typeof p === 'number');
  return periods.length > 0 ? Math.max(...periods) : undefined;
}

function rule(
  id: string,
  doc: string,
  statement: string,
  check: (template: TemplateJson, finding: (resource: string, message: string) => RuleFinding) => RuleFinding[],
): AwsRule {
  return {
    id,
    doc,
    statement,
    check: (template) => check(template, (resource, message) => ({ rule: id, resource, message })),
  };
}

export const CLOUDWATCH_RULES: readonly AwsRule[] = [
  rule(
    'CW-MI-ONE-QUERY',
    GET_METRIC_DATA,
    'A metric-data request (and so an alarm, which CloudWatch evaluates with one) can include only one Metrics Insights query.',
    (template, finding) =>
      alarms(template).flatMap(([id, alarm]) => {
        const count = queriesOf(alarm).filter((q) => isMetricsInsights(q.Expression)).length;
        return count > 1 ? [finding(id, `${count} Metrics Insights queries in one alarm (at most 1)`)] : [];
      }),
  ),

  rule(
    'CW-NO-SEARCH',
    SEARCH_EXPRESSIONS,
    'Alarms cannot use SEARCH expressions: a search returns many time series, an alarm watches one.',
    (template, finding) =>
      alarms(template).flatMap(([id, alarm]) =>
        queriesOf(alarm)
          .filter((q) => q.Expression !== undefined && /\bSEARCH\s*\(/i.test(q.Expression))
          .map((q) => finding(id, `query ${q.Id} uses SEARCH`)),
      ),
  ),

  rule(
    'CW-MATH-LIMITS',
    METRIC_DATA_QUERY,
    'A PutMetricAlarm Metrics array holds at most 20 queries: at most 10 MetricStat and at most 10 Expression.',
    (template, finding) =>
      alarms(template).flatMap(([id, alarm]) => {
        const queries = queriesOf(alarm);
        const stats = queries.filter((q) => q.MetricStat).length;
        const expressions = queries.filter((q) => q.Expression !== undefined).length;
        const out: RuleFinding[] = [];
        if (stats > 10) out.push(finding(id, `${stats} MetricStat queries (at most 10)`));
        if (expressions > 10) out.push(finding(id, `${expressions} expressions (at most 10)`));
        if (queries.length > 20) out.push(finding(id, `${queries.length} queries (at most 20)`));
        return out;
      }),
  ),

  rule(
    'CW-RETURN-DATA',
    METRIC_DATA_QUERY,
    'In PutMetricAlarm exactly one query has ReturnData true (the value the alarm watches); every other query sets it to false.',
    (template, finding) =>
      alarms(template).flatMap(([id, alarm]) => {
        const queries = queriesOf(alarm);
        if (queries.length === 0) return [];
        // ReturnData defaults to true when omitted.
        const returned = queries.filter((q) => q.ReturnData !== false).map((q) => q.Id);
        return returned.length === 1
          ? []
          : [
              finding(
                id,
                `${returned.length} queries return data (${returned.join(', ') || 'none'}); exactly one must`,
              ),
            ];
      }),
  ),

  rule(
    'CW-SINGLE-SERIES',
    METRIC_DATA_QUERY,
    'Any expression used in a PutMetricAlarm operation must return a single time series; a Metrics Insights query with GROUP BY returns several.',
    (template, finding) =>
      alarms(template).flatMap(([id, alarm]) =>
        queriesOf(alarm)
          .filter(
            (q) =>
              q.ReturnData === false && isMetricsInsights(q.Expression) && /\bGROUP\s+BY\b/i.test(q.Expression ?? ''),
          )
          .map((q) => finding(id, `query ${q.Id} groups into several time series inside a math alarm`)),
      ),
  ),

  rule(
    'CW-SAME-PERIOD',
    ALARM_DATA_QUERIES,
    'Every metric of a metric-math alarm must use the same period.',
    (template, finding) =>
      alarms(template).flatMap(([id, alarm]) => {
        const periods = [
          ...new Set(
            queriesOf(alarm)
              .map((q) => q.MetricStat?.Period ?? q.Period)
              .filter((p) => p !== undefined),
          ),
        ];
        return periods.length > 1 ? [finding(id, `queries use periods ${periods.join(', ')}`)] : [];
      }),
  ),

  rule(
    'CW-PERIOD-VALID',
    PUT_METRIC_ALARM,
    'Alarm periods are 10, 20, 30 or a multiple of 60 seconds; 10–30 only for high-resolution metrics, else the alarm misses data. ' +
      `A period must hold whole publishing intervals of its metric (SageMaker: ${SAGEMAKER_METRICS_CONFIG}, ${SAGEMAKER_HIGH_RES}).`,
    (template, finding) =>
      alarms(template).flatMap(([id, alarm]) => {
        const checks: Array<{
          what: string;
          period: number | undefined;
          namespace?: string;
          metricName?: string;
          endpointName?: string;
        }> = [];
        if (alarm.MetricName !== undefined) {
          checks.push({
            what: `metric ${alarm.MetricName}`,
            period: alarm.Period,
            namespace: alarm.Namespace,
            metricName: alarm.MetricName,
            endpointName: endpointNameOf(alarm.Dimensions),
          });
        }
        for (const q of queriesOf(alarm)) {
          if (q.MetricStat) {
            const m = q.MetricStat.Metric;
            checks.push({
              what: `query ${q.Id} (${m.MetricName})`,
              period: q.MetricStat.Period,
              namespace: m.Namespace,
              metricName: m.MetricName,
              endpointName: endpointNameOf(m.Dimensions),
            });
          } else if (isMetricsInsights(q.Expression)) {
            const target = insightsTarget(q.Expression!);
            checks.push({
              what: `query ${q.Id} (Metrics Insights ${target.metricName})`,
              period: q.Period,
              ...target,
              endpointName: endpointNameInQuery(q.Expression!),
            });
          }
        }
        return checks.flatMap((c) => {
          if (c.period === undefined) return [finding(id, `${c.what} has no period`)];
          if (!isAlarmPeriod(c.period))
            return [finding(id, `${c.what} has period ${c.period} s (allowed: 10, 20, 30 or a multiple of 60)`)];
          const resolution = metricResolutionSeconds(template, c.namespace, c.metricName, c.endpointName);
          if (c.period % resolution !== 0) {
            return [
              finding(
                id,
                `${c.what} has period ${c.period} s, but the metric receives a data point every ${resolution} s`,
              ),
            ];
          }
          return [];
        });
      }),
  ),

  rule(
    'CW-MI-PERIOD',
    MI_LIMITS,
    'Metrics Insights does not support high-resolution data: it aggregates at one minute, so its period is a multiple of 60 s.',
    (template, finding) =>
      alarms(template).flatMap(([id, alarm]) =>
        queriesOf(alarm)
          .filter((q) => isMetricsInsights(q.Expression) && !(typeof q.Period === 'number' && q.Period % 60 === 0))
          .map((q) => finding(id, `Metrics Insights query ${q.Id} has period ${q.Period} s`)),
      ),
  ),

  rule(
    'CW-MI-WINDOW',
    ALARM_LIMITS,
    'A Metrics Insights alarm evaluates only the latest 3 hours of data: Period × EvaluationPeriods ≤ 10,800 s.',
    (template, finding) =>
      alarms(template).flatMap(([id, alarm]) => {
        if (!queriesOf(alarm).some((q) => isMetricsInsights(q.Expression))) return [];
        const period = evaluationPeriodOf(alarm) ?? 0;
        const window = period * (alarm.EvaluationPeriods ?? 0);
        return window > 10_800 ? [finding(id, `evaluates ${window} s of data (at most 10,800)`)] : [];
      }),
  ),

  rule(
    'CW-EVALUATION-RANGE',
    PUT_METRIC_ALARM,
    'Period × EvaluationPeriods is at most 86,400 s for periods under an hour and at most 604,800 s otherwise; DatapointsToAlarm ≤ EvaluationPeriods.',
    (template, finding) =>
      alarms(template).flatMap(([id, alarm]) => {
        const out: RuleFinding[] = [];
        const period = evaluationPeriodOf(alarm) ?? 0;
        const evaluation = alarm.EvaluationPeriods ?? 0;
        const limit = period < 3600 ? 86_400 : 604_800;
        if (!(evaluation >= 1)) out.push(finding(id, `EvaluationPeriods ${evaluation} (at least 1)`));
        if (period * evaluation > limit)
          out.push(finding(id, `evaluation range ${period * evaluation} s (at most ${limit})`));
        if (alarm.DatapointsToAlarm !== undefined && alarm.DatapointsToAlarm > evaluation) {
          out.push(finding(id, `DatapointsToAlarm ${alarm.DatapointsToAlarm} > EvaluationPeriods ${evaluation}`));
        }
        return out;
      }),
  ),

  rule(
    'CW-MI-ALARM-QUOTA',
    ALARM_LIMITS,
    'A Region holds at most 200 Metrics Insights alarms by default (quota); one template may not use them all.',
    (template, finding) => {
      const count = alarms(template).filter(([, a]) =>
        queriesOf(a).some((q) => isMetricsInsights(q.Expression)),
      ).length;
      return count > 200 ? [finding('template', `${count} Metrics Insights alarms (quota 200 per Region)`)] : [];
    },
  ),
];
