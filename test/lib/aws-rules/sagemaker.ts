/** SageMaker endpoint rules (deployment guardrails, metrics configuration), each from the page it cites. */
import { AwsRule, RuleFinding } from './rule';
import { flatten, referencedId, resourcesOfType, TemplateJson } from './template';

const AUTO_ROLLBACK = 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_AutoRollbackConfig.html';
const BLUE_GREEN = 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_BlueGreenUpdatePolicy.html';
const TRAFFIC_ROUTING = 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_TrafficRoutingConfig.html';
const ROLLING = 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_RollingUpdatePolicy.html';
const METRICS_CONFIG = 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_MetricsConfig.html';
const ROLLING_GUIDE = 'https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-rolling.html';

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

function endpoints(template: TemplateJson) {
  return resourcesOfType(template, 'AWS::SageMaker::Endpoint');
}

/** The endpoint configuration an endpoint references (by `Fn::GetAtt`/`Ref`). */
function configOf(template: TemplateJson, endpoint: Record<string, any>): Record<string, any> | undefined {
  const id = referencedId(endpoint.EndpointConfigName);
  return id ? template.Resources?.[id]?.Properties : undefined;
}

/** The instance counts the variant may have: its initial count and, when a scalable target registers it, its min and max. */
function fleetSizes(
  template: TemplateJson,
  endpointId: string,
  endpoint: Record<string, any>,
  variant: Record<string, any> | undefined,
): number[] {
  const sizes = typeof variant?.InitialInstanceCount === 'number' ? [variant.InitialInstanceCount] : [];
  const name = flatten(endpoint.EndpointName);
  for (const [, target] of resourcesOfType(template, 'AWS::ApplicationAutoScaling::ScalableTarget')) {
    const resource = flatten(target.ResourceId);
    if (
      resource.includes(`<${endpointId}.EndpointName>`) ||
      resource === `endpoint/${name}/variant/${variant?.VariantName}`
    ) {
      sizes.push(target.MinCapacity, target.MaxCapacity);
    }
  }
  return sizes.filter((n) => typeof n === 'number');
}

function inRange(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

export const SAGEMAKER_RULES: readonly AwsRule[] = [
  rule(
    'SM-ROLLBACK-ALARM-COUNT',
    AUTO_ROLLBACK,
    'AutoRollbackConfiguration.Alarms holds 1–10 alarms.',
    (template, finding) =>
      endpoints(template).flatMap(([id, endpoint]) => {
        const rollback = endpoint.DeploymentConfig?.AutoRollbackConfiguration;
        if (!rollback) return [];
        const count = (rollback.Alarms ?? []).length;
        return count >= 1 && count <= 10 ? [] : [finding(id, `${count} rollback alarms (1–10)`)];
      }),
  ),

  rule(
    'SM-ROLLBACK-ALARM-EXISTS',
    AUTO_ROLLBACK,
    'Rollback alarms are CloudWatch alarms in the account: a reference into the template must name an alarm resource.',
    (template, finding) =>
      endpoints(template).flatMap(([id, endpoint]) =>
        (endpoint.DeploymentConfig?.AutoRollbackConfiguration?.Alarms ?? []).flatMap(
          (alarm: { AlarmName: unknown }) => {
            const target = referencedId(alarm.AlarmName);
            if (target === undefined)
              return typeof alarm.AlarmName === 'string' && alarm.AlarmName.length > 0
                ? []
                : [finding(id, 'a rollback alarm has no name')];
            const type = template.Resources?.[target]?.Type;
            return type === 'AWS::CloudWatch::Alarm' || type === 'AWS::CloudWatch::CompositeAlarm'
              ? []
              : [
                  finding(
                    id,
                    `rollback alarm ${flatten(alarm.AlarmName)} is ${type ?? 'not a resource of this template'}`,
                  ),
                ];
          },
        ),
      ),
  ),

  rule(
    'SM-BLUE-GREEN-TIMES',
    BLUE_GREEN,
    `Blue/green MaximumExecutionTimeoutInSeconds is 600–28,800 and larger than TerminationWaitInSeconds + WaitIntervalInSeconds; TerminationWaitInSeconds 0–3600; WaitIntervalInSeconds 0–3600 (${TRAFFIC_ROUTING}).`,
    (template, finding) =>
      endpoints(template).flatMap(([id, endpoint]) => {
        const policy = endpoint.DeploymentConfig?.BlueGreenUpdatePolicy;
        if (!policy) return [];
        const out: RuleFinding[] = [];
        const timeout = policy.MaximumExecutionTimeoutInSeconds;
        const termination = policy.TerminationWaitInSeconds ?? 0;
        const wait = policy.TrafficRoutingConfiguration?.WaitIntervalInSeconds;
        if (timeout !== undefined && !inRange(timeout, 600, 28_800))
          out.push(finding(id, `MaximumExecutionTimeoutInSeconds ${timeout} (600–28800)`));
        if (!inRange(termination, 0, 3600)) out.push(finding(id, `TerminationWaitInSeconds ${termination} (0–3600)`));
        if (!inRange(wait, 0, 3600)) out.push(finding(id, `WaitIntervalInSeconds ${wait} (0–3600)`));
        if (typeof timeout === 'number' && typeof wait === 'number' && timeout <= termination + wait) {
          out.push(
            finding(
              id,
              `MaximumExecutionTimeoutInSeconds ${timeout} is not larger than TerminationWaitInSeconds + WaitIntervalInSeconds (${termination + wait})`,
            ),
          );
        }
        return out;
      }),
  ),

  rule(
    'SM-ROLLING-POLICY',
    ROLLING,
    `Rolling: MaximumExecutionTimeoutInSeconds 600–28,800, WaitIntervalInSeconds 0–3600, MaximumBatchSize 5–50 % of the variant's instances; only for endpoints with one production variant (${ROLLING_GUIDE}).`,
    (template, finding) =>
      endpoints(template).flatMap(([id, endpoint]) => {
        const policy = endpoint.DeploymentConfig?.RollingUpdatePolicy;
        if (!policy) return [];
        const out: RuleFinding[] = [];
        if (
          policy.MaximumExecutionTimeoutInSeconds !== undefined &&
          !inRange(policy.MaximumExecutionTimeoutInSeconds, 600, 28_800)
        ) {
          out.push(
            finding(id, `MaximumExecutionTimeoutInSeconds ${policy.MaximumExecutionTimeoutInSeconds} (600–28800)`),
          );
        }
        if (!inRange(policy.WaitIntervalInSeconds, 0, 3600))
          out.push(finding(id, `WaitIntervalInSeconds ${policy.WaitIntervalInSeconds} (0–3600)`));
        const variants: Array<Record<string, any>> = configOf(template, endpoint)?.ProductionVariants ?? [];
        if (variants.length > 1)
          out.push(finding(id, `rolling deployment on ${variants.length} production variants (rolling needs one)`));
        const batch = policy.MaximumBatchSize;
        if (batch?.Type === 'CAPACITY_PERCENT' && !inRange(batch.Value, 5, 50))
          out.push(finding(id, `MaximumBatchSize ${batch.Value} % (5–50)`));
        // The batch is checked against the current instance count: every count autoscaling may reach.
        for (const count of fleetSizes(template, id, endpoint, variants[0])) {
          if (
            batch?.Type === 'INSTANCE_COUNT' &&
            typeof batch.Value === 'number' &&
            (batch.Value < Math.max(1, Math.ceil(count * 0.05)) || batch.Value > Math.floor(count * 0.5))
          ) {
            out.push(finding(id, `MaximumBatchSize ${batch.Value} of ${count} instances (5–50 %)`));
          }
        }
        return out;
      }),
  ),

  rule(
    'SM-METRIC-PUBLISH-FREQUENCY',
    METRICS_CONFIG,
    'MetricPublishFrequencyInSeconds is one of 10, 30, 60, 120, 180, 240, 300.',
    (template, finding) =>
      resourcesOfType(template, 'AWS::SageMaker::EndpointConfig').flatMap(([id, config]) => {
        const frequency = config.MetricsConfig?.MetricPublishFrequencyInSeconds;
        return frequency === undefined || [10, 30, 60, 120, 180, 240, 300].includes(frequency)
          ? []
          : [finding(id, `MetricPublishFrequencyInSeconds ${frequency}`)];
      }),
  ),
];
