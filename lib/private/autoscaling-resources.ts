import { aws_applicationautoscaling as appscaling, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { AUTOSCALING_DEFAULTS, AutoScalingOptions, VariantAutoScaling } from '../autoscaling';
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
    problems.add(`autoScaling.minCapacity must be at most autoScaling.maxCapacity (got minCapacity ${min} > maxCapacity ${max})`);
  }
  if (context.prefixAware && !context.allowSingleInstance && minKnown && min === 1) {
    problems.add('autoScaling.minCapacity must be at least 2 under PREFIX_AWARE routing, because one instance cannot route anywhere; '
      + 'set allowPrefixAwareOnSingleInstance: true to scale in to one instance anyway (got 1)');
  }
  if (minKnown && maxKnown && min <= max && isKnownInteger(context.instanceCount)
      && (context.instanceCount < min || context.instanceCount > max)) {
    problems.add(`instanceCount must lie between autoScaling.minCapacity ${min} and autoScaling.maxCapacity ${max} (got ${context.instanceCount})`);
  }
  const target = options.targetConcurrentRequestsPerInstance;
  if (target !== undefined && !isUnresolved(target) && !(target > 0 && Number.isFinite(target))) {
    problems.add(`autoScaling.targetConcurrentRequestsPerInstance must be a number greater than 0 (got ${target})`);
  }
  if (target === undefined && context.prefixAware && isUnresolved(context.concurrencyThreshold)) {
    problems.add('autoScaling.targetConcurrentRequestsPerInstance is required when routing.concurrencyThreshold is a deploy-time value, '
      + 'because the default target is derived from it (got no target)');
  }
  problems.durationInRange('autoScaling.scaleOutCooldown', options.scaleOutCooldown, 0, AUTOSCALING_DEFAULTS.maxCooldownSeconds);
  problems.durationInRange('autoScaling.scaleInCooldown', options.scaleInCooldown, 0, AUTOSCALING_DEFAULTS.maxCooldownSeconds);
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
  const stack = Stack.of(scope);
  const scalableTarget = new appscaling.CfnScalableTarget(scope, 'ScalableTarget', {
    serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
    resourceId: `endpoint/${endpointName}/variant/${variantName}`,
    scalableDimension: 'sagemaker:variant:DesiredInstanceCount',
    minCapacity: options.minCapacity,
    maxCapacity: options.maxCapacity,
    roleArn: stack.formatArn({ service: 'iam', region: '', resource: 'role', resourceName: SAGEMAKER_SCALING_SLR }),
  });
  const scalingPolicy = new appscaling.CfnScalingPolicy(scope, 'ConcurrencyScalingPolicy', {
    policyName: 'concurrent-requests-per-instance',
    policyType: 'TargetTrackingScaling',
    scalingTargetId: scalableTarget.ref,
    targetTrackingScalingPolicyConfiguration: {
      predefinedMetricSpecification: {
        predefinedMetricType: appscaling.PredefinedMetric.SAGEMAKER_VARIANT_CONCURRENT_REQUESTS_PER_MODEL_HIGH_RESOLUTION,
      },
      targetValue,
      scaleOutCooldown: wholeSeconds(options.scaleOutCooldown) ?? AUTOSCALING_DEFAULTS.scaleOutCooldownSeconds,
      scaleInCooldown: wholeSeconds(options.scaleInCooldown) ?? AUTOSCALING_DEFAULTS.scaleInCooldownSeconds,
    },
  });
  return { scalableTarget, scalingPolicy };
}
