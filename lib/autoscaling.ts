import { aws_applicationautoscaling as appscaling, Duration, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { isKnownInteger, isUnresolved, ProblemCollector, wholeSeconds } from './private/validation';

/**
 * Application Auto Scaling for the endpoint's variant, tracking SageMaker's high-resolution
 * `ConcurrentRequestsPerModel` metric (published every 10 s, so scale-out reacts in under a minute).
 */
export interface AutoScalingOptions {
  /**
   * Fewest instances. At least 2 under `PREFIX_AWARE` (one instance cannot route anywhere) unless the endpoint
   * sets `allowPrefixAwareOnSingleInstance`. Allowed: an integer ≥ 1 and ≤ `maxCapacity`.
   */
  readonly minCapacity: number;

  /** Most instances; request at least this many in the "<type> for endpoint usage" quota. Allowed: ≥ `minCapacity`. */
  readonly maxCapacity: number;

  /**
   * Average concurrent requests per instance the policy keeps the fleet at. Allowed: > 0.
   *
   * @default - three quarters of the `PREFIX_AWARE` concurrencyThreshold (24 with the default of 32), so the fleet
   * grows before prefix-selected instances start spilling; 24 for other routing strategies
   */
  readonly targetConcurrentRequestsPerInstance?: number;

  /**
   * Wait after a scale-out before the next one. A new GPU instance needs several minutes to pull the image and
   * load the weights; a short cooldown over-provisions. Allowed: 0–3600 s in whole seconds.
   *
   * @default Duration.minutes(5)
   */
  readonly scaleOutCooldown?: Duration;

  /**
   * Wait after a scale-in before the next one. Scale-in discards the KV cache of the removed instance, so it is
   * slow on purpose. Allowed: 0–3600 s in whole seconds.
   *
   * @default Duration.minutes(15)
   */
  readonly scaleInCooldown?: Duration;
}

/** Defaults and ranges used by the construct and the docs. */
export const AUTOSCALING_DEFAULTS = {
  targetShareOfConcurrencyThreshold: 0.75,
  targetWithoutPrefixAware: 24,
  scaleOutCooldownSeconds: 300,
  scaleInCooldownSeconds: 900,
  maxCooldownSeconds: 3600,
} as const;

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

/** What `addVariantAutoScaling` creates. */
export interface VariantAutoScaling {
  readonly scalableTarget: appscaling.CfnScalableTarget;
  readonly scalingPolicy: appscaling.CfnScalingPolicy;
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
