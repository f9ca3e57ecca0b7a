import { aws_applicationautoscaling as appscaling, aws_cloudwatch as cloudwatch, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import {
  AUTOSCALING_DEFAULTS,
  AutoScalingOptions,
  CopyAutoScaling,
  CopyAutoScalingOptions,
  VariantAutoScaling,
} from '../autoscaling';
import { validateRoutableFleetSize } from './fleet-rules';
import { isKnownInteger, isUnresolved, ProblemCollector, wholeSeconds } from './validation';

/** The service-linked role Application Auto Scaling uses for SageMaker variants (created on first use). */
const SAGEMAKER_SCALING_SLR =
  'aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint';

/** The target a policy tracks when the user gives none. */
export function defaultScalingTarget(concurrencyThreshold: number | undefined): number {
  if (concurrencyThreshold === undefined) return AUTOSCALING_DEFAULTS.targetWithoutPrefixAware;
  return Math.max(1, Math.floor(concurrencyThreshold * AUTOSCALING_DEFAULTS.targetShareOfConcurrencyThreshold));
}

/** Checks one autoscaling configuration against the endpoint's other settings. */
export function validateAutoScaling(
  options: AutoScalingOptions,
  context: { instanceCount: number; prefixAware: boolean; allowSingleInstance: boolean; concurrencyThreshold?: number },
  problems: ProblemCollector,
): void {
  problems.integerAtLeast('autoScaling.minCapacity', options.minCapacity, 1);
  problems.integerAtLeast('autoScaling.maxCapacity', options.maxCapacity, 1);
  const { minCapacity: min, maxCapacity: max } = options;
  const minKnown = isKnownInteger(min);
  const maxKnown = isKnownInteger(max);
  if (minKnown && maxKnown && min > max) {
    problems.add(
      `autoScaling.minCapacity must be at most autoScaling.maxCapacity (got minCapacity ${min} > maxCapacity ${max})`,
    );
  }
  validateRoutableFleetSize(
    'autoScaling.minCapacity',
    min,
    { ...context, lowestAllowed: 1, anyway: 'scale in to one instance' },
    problems,
  );
  if (
    minKnown &&
    maxKnown &&
    min <= max &&
    isKnownInteger(context.instanceCount) &&
    (context.instanceCount < min || context.instanceCount > max)
  ) {
    problems.add(
      `instanceCount must lie between autoScaling.minCapacity ${min} and autoScaling.maxCapacity ${max} (got ${context.instanceCount})`,
    );
  }
  const target = options.targetConcurrentRequestsPerInstance;
  if (target !== undefined && !isUnresolved(target) && !(target > 0 && Number.isFinite(target))) {
    problems.add(`autoScaling.targetConcurrentRequestsPerInstance must be a number greater than 0 (got ${target})`);
  }
  if (target === undefined && context.prefixAware && isUnresolved(context.concurrencyThreshold)) {
    problems.add(
      'autoScaling.targetConcurrentRequestsPerInstance is required when routing.concurrencyThreshold is a deploy-time value, ' +
        'because the default target is derived from it (got no target)',
    );
  }
  problems.durationInRange(
    'autoScaling.scaleOutCooldown',
    options.scaleOutCooldown,
    0,
    AUTOSCALING_DEFAULTS.maxCooldownSeconds,
  );
  problems.durationInRange(
    'autoScaling.scaleInCooldown',
    options.scaleInCooldown,
    0,
    AUTOSCALING_DEFAULTS.maxCooldownSeconds,
  );
}

/** The cooldowns and target of a target-tracking policy, from either autoscaling option set. */
interface TrackingSettings {
  readonly scaleOutCooldown?: AutoScalingOptions['scaleOutCooldown'];
  readonly scaleInCooldown?: AutoScalingOptions['scaleInCooldown'];
}

/** Application Auto Scaling's service-linked role for SageMaker (variants and inference components alike). */
function scalingRoleArn(scope: Construct): string {
  return Stack.of(scope).formatArn({
    service: 'iam',
    region: '',
    resource: 'role',
    resourceName: SAGEMAKER_SCALING_SLR,
  });
}

function targetTrackingPolicy(
  scope: Construct,
  id: string,
  policyName: string,
  target: appscaling.CfnScalableTarget,
  metricType: appscaling.PredefinedMetric,
  targetValue: number,
  settings: TrackingSettings,
): appscaling.CfnScalingPolicy {
  return new appscaling.CfnScalingPolicy(scope, id, {
    policyName,
    policyType: 'TargetTrackingScaling',
    scalingTargetId: target.ref,
    targetTrackingScalingPolicyConfiguration: {
      predefinedMetricSpecification: { predefinedMetricType: metricType },
      targetValue,
      scaleOutCooldown: wholeSeconds(settings.scaleOutCooldown) ?? AUTOSCALING_DEFAULTS.scaleOutCooldownSeconds,
      scaleInCooldown: wholeSeconds(settings.scaleInCooldown) ?? AUTOSCALING_DEFAULTS.scaleInCooldownSeconds,
    },
  });
}

/**
 * Registers the variant as a scalable target (`endpoint/<name>/variant/<variant>`,
 * `sagemaker:variant:DesiredInstanceCount`) and adds the target-tracking policy. L1 resources on purpose: the L2
 * `ScalableTarget` creates an IAM role Application Auto Scaling does not need for SageMaker; we point it at the
 * service-linked role instead, as the Application Auto Scaling docs recommend.
 */
export function addVariantAutoScaling(
  scope: Construct,
  endpointName: string,
  variantName: string,
  options: AutoScalingOptions,
  targetValue: number,
): VariantAutoScaling {
  const scalableTarget = new appscaling.CfnScalableTarget(scope, 'ScalableTarget', {
    serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
    resourceId: `endpoint/${endpointName}/variant/${variantName}`,
    scalableDimension: 'sagemaker:variant:DesiredInstanceCount',
    minCapacity: options.minCapacity,
    maxCapacity: options.maxCapacity,
    roleArn: scalingRoleArn(scope),
  });
  const scalingPolicy = targetTrackingPolicy(
    scope,
    'ConcurrencyScalingPolicy',
    'concurrent-requests-per-instance',
    scalableTarget,
    appscaling.PredefinedMetric.SAGEMAKER_VARIANT_CONCURRENT_REQUESTS_PER_MODEL_HIGH_RESOLUTION,
    targetValue,
    options,
  );
  return { scalableTarget, scalingPolicy };
}

/** Checks one component's copy autoscaling against its copy count and the routing. */
export function validateCopyAutoScaling(
  options: CopyAutoScalingOptions,
  context: { copyCount: number; prefixAware: boolean; concurrencyThreshold?: number },
  problems: ProblemCollector,
): void {
  // RegisterScalableTarget: MinCapacity and MaxCapacity are integers ≥ 0; a component scales to zero with MinCapacity 0
  // (https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html).
  problems.integerAtLeast('autoScaling.minCopies', options.minCopies, 0);
  problems.integerAtLeast('autoScaling.maxCopies', options.maxCopies, 1);
  const { minCopies: min, maxCopies: max } = options;
  if (isKnownInteger(min) && isKnownInteger(max) && min > max) {
    problems.add(
      `autoScaling.minCopies must be at most autoScaling.maxCopies (got minCopies ${min} > maxCopies ${max})`,
    );
  }
  if (
    isKnownInteger(min) &&
    isKnownInteger(max) &&
    min <= max &&
    isKnownInteger(context.copyCount) &&
    (context.copyCount < min || context.copyCount > max)
  ) {
    problems.add(
      `copyCount must lie between autoScaling.minCopies ${min} and autoScaling.maxCopies ${max} (got ${context.copyCount})`,
    );
  }
  const target = options.targetConcurrentRequestsPerCopy;
  if (target !== undefined && !isUnresolved(target) && !(target > 0 && Number.isFinite(target))) {
    problems.add(`autoScaling.targetConcurrentRequestsPerCopy must be a number greater than 0 (got ${target})`);
  }
  if (target === undefined && context.prefixAware && isUnresolved(context.concurrencyThreshold)) {
    problems.add(
      'autoScaling.targetConcurrentRequestsPerCopy is required when routing.concurrencyThreshold is a deploy-time value, ' +
        'because the default target is derived from it (got no target)',
    );
  }
  problems.durationInRange(
    'autoScaling.scaleOutCooldown',
    options.scaleOutCooldown,
    0,
    AUTOSCALING_DEFAULTS.maxCooldownSeconds,
  );
  problems.durationInRange(
    'autoScaling.scaleInCooldown',
    options.scaleInCooldown,
    0,
    AUTOSCALING_DEFAULTS.maxCooldownSeconds,
  );
}

/**
 * Registers an inference component's copies as a scalable target (`inference-component/<name>`,
 * `sagemaker:inference-component:DesiredCopyCount`) with target tracking on `ConcurrentRequestsPerCopy`. With
 * `minCopies: 0`, target tracking cannot bring the first copy back (no copy, no per-copy metric), so, as AWS documents
 * for scaling to zero, a step policy adds one copy when an alarm sees `NoCapacityInvocationFailures`
 * (https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html).
 */
export function addCopyAutoScaling(
  scope: Construct,
  componentName: string,
  options: CopyAutoScalingOptions,
  targetValue: number,
  noCapacityFailures: cloudwatch.Metric,
): CopyAutoScaling {
  const scalableTarget = new appscaling.CfnScalableTarget(scope, 'ScalableTarget', {
    serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
    resourceId: `inference-component/${componentName}`,
    scalableDimension: 'sagemaker:inference-component:DesiredCopyCount',
    minCapacity: options.minCopies,
    maxCapacity: options.maxCopies,
    roleArn: scalingRoleArn(scope),
  });
  const scalingPolicy = targetTrackingPolicy(
    scope,
    'ConcurrencyScalingPolicy',
    'concurrent-requests-per-copy',
    scalableTarget,
    appscaling.PredefinedMetric.SAGEMAKER_INFERENCE_COMPONENT_CONCURRENT_REQUESTS_PER_COPY_HIGH_RESOLUTION,
    targetValue,
    options,
  );
  if (!(isKnownInteger(options.minCopies) && options.minCopies === 0)) return { scalableTarget, scalingPolicy };

  const scaleFromZeroPolicy = new appscaling.CfnScalingPolicy(scope, 'ScaleFromZeroPolicy', {
    policyName: 'scale-from-zero',
    policyType: 'StepScaling',
    scalingTargetId: scalableTarget.ref,
    stepScalingPolicyConfiguration: {
      adjustmentType: 'ChangeInCapacity',
      metricAggregationType: 'Maximum',
      cooldown: wholeSeconds(options.scaleOutCooldown) ?? AUTOSCALING_DEFAULTS.scaleOutCooldownSeconds,
      stepAdjustments: [{ metricIntervalLowerBound: 0, scalingAdjustment: 1 }],
    },
  });
  const alarm = new cloudwatch.Alarm(scope, 'ScaleFromZeroAlarm', {
    metric: noCapacityFailures,
    threshold: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    datapointsToAlarm: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription:
      'A request found no copy of this inference component (it had scaled to zero): adds the first copy. ' +
      'Requests fail until it is up. See docs/construct.md#inference-components.',
  });
  alarm.addAlarmAction({ bind: () => ({ alarmActionArn: scaleFromZeroPolicy.attrArn }) });
  return { scalableTarget, scalingPolicy, scaleFromZeroPolicy };
}
