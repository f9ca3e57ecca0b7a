import { aws_applicationautoscaling as appscaling, aws_cloudwatch as cloudwatch, Duration } from 'aws-cdk-lib';

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

/**
 * Application Auto Scaling of an inference component's copies (scalable dimension
 * `sagemaker:inference-component:DesiredCopyCount`), tracking SageMaker's high-resolution per-copy concurrency metric
 * `ConcurrentRequestsPerCopy` (predefined metric `SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution`).
 * Managed instance scaling on the endpoint then adds instances for copies that do not fit, and removes empty ones.
 */
export interface CopyAutoScalingOptions {
  /**
   * Fewest copies. 0 lets the component scale to zero: the construct then adds the scale-from-zero policy AWS
   * documents (a step policy that adds one copy, on an alarm over `NoCapacityInvocationFailures`), and requests fail
   * until that copy is up (docs/construct.md#inference-components). Allowed: an integer ≥ 0 and ≤ `maxCopies`.
   */
  readonly minCopies: number;

  /** Most copies; the fleet must be allowed to grow to hold them (`managedInstanceScaling.maxInstanceCount`). Allowed: ≥ 1. */
  readonly maxCopies: number;

  /**
   * Average in-flight requests per copy the policy keeps. Allowed: > 0.
   *
   * @default - three quarters of the `PREFIX_AWARE` concurrencyThreshold (24 with the default of 32); 24 for other routing strategies
   */
  readonly targetConcurrentRequestsPerCopy?: number;

  /** Wait after a scale-out before the next one. Allowed: 0–3600 s in whole seconds. @default Duration.minutes(5) */
  readonly scaleOutCooldown?: Duration;

  /** Wait after a scale-in before the next one. Allowed: 0–3600 s in whole seconds. @default Duration.minutes(15) */
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

/**
 * How an update of an inference component replaces its copies: a rolling deployment in batches of copies, baking each
 * batch while SageMaker watches the alarms, rolling back on alarm
 * (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentRollingUpdatePolicy.html).
 */
export interface ComponentDeploymentOptions {
  /**
   * Copies replaced per step. SageMaker requires 5–50 % of the component's copies, at every count autoscaling allows.
   *
   * @default - the smallest count that is at least 5 % of the most copies (1 up to 20 copies)
   */
  readonly batchCopies?: number;

  /** Copies restored per step when rolling back. @default - same as `batchCopies` (SageMaker's own default restores all at once) */
  readonly rollbackBatchCopies?: number;

  /** Baking time per step. Allowed: 0–3600 s. @default Duration.minutes(5) */
  readonly waitInterval?: Duration;

  /** Limit for the whole update. Allowed: 600–28800 s. @default Duration.hours(8) */
  readonly maximumExecutionTimeout?: Duration;

  /** Roll back on the component's error-rate and latency alarms. @default true */
  readonly useDefaultAlarms?: boolean;

  /** Further alarms to roll back on; at most 10 alarms in all. @default - none */
  readonly alarms?: cloudwatch.IAlarm[];
}

/** The Application Auto Scaling resources of an inference component with `autoScaling`. */
export interface CopyAutoScaling {
  readonly scalableTarget: appscaling.CfnScalableTarget;
  /** Target tracking on `ConcurrentRequestsPerCopy`. */
  readonly scalingPolicy: appscaling.CfnScalingPolicy;
  /** With `minCopies: 0`: the step policy that adds the first copy. */
  readonly scaleFromZeroPolicy?: appscaling.CfnScalingPolicy;
}

/** The Application Auto Scaling resources of an endpoint with `autoScaling`. */
export interface VariantAutoScaling {
  readonly scalableTarget: appscaling.CfnScalableTarget;
  readonly scalingPolicy: appscaling.CfnScalingPolicy;
}
