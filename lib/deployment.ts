import { aws_cloudwatch as cloudwatch, aws_sagemaker as sagemaker, Duration } from 'aws-cdk-lib';
import { FleetSize } from './private/fleet-size';
import { isKnownInteger, ProblemCollector, show, wholeSeconds } from './private/validation';

/**
 * SageMaker's allowed ranges for deployment settings, in seconds or percent (API reference: RollingUpdatePolicy,
 * BlueGreenUpdatePolicy https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_BlueGreenUpdatePolicy.html,
 * TrafficRoutingConfig, AutoRollbackConfig).
 */
export const DEPLOYMENT_LIMITS = {
  waitIntervalSeconds: { min: 0, max: 3600 },
  rollingMaxExecutionSeconds: { min: 600, max: 28800 },
  blueGreenMaxExecutionSeconds: { min: 600, max: 28800 },
  terminationWaitSeconds: { min: 0, max: 3600 },
  /** A rolling batch must hold 5–50 % of the variant's instances. */
  rollingBatchShare: { min: 0.05, max: 0.5 },
  canaryPercent: { min: 1, max: 50 },
  linearPercent: { min: 10, max: 50 },
  maxRollbackAlarms: 10,
} as const;

/** Options shared by both deployment styles. */
export interface DeploymentAlarmOptions {
  /**
   * Alarms, in addition to the construct's own, whose ALARM state makes SageMaker roll the update back.
   * At most 10 alarms in total.
   *
   * @default - none
   */
  readonly alarms?: cloudwatch.IAlarm[];

  /**
   * Whether deployments roll back on the construct's error-rate alarm (5XX ≥ 5 % of requests, at least 20 requests
   * per period) and latency alarm (ModelLatency p90 ≥ 30 s); see `monitoring.errorRateAlarm` and
   * `monitoring.latencyAlarm` to tune or disable them. The alarms exist (and notify) either way.
   *
   * @default true
   */
  readonly useDefaultAlarms?: boolean;
}

/** Options of `DeploymentPolicy.rolling()`. */
export interface RollingDeploymentOptions extends DeploymentAlarmOptions {
  /**
   * Instances replaced per step. SageMaker requires 5–50 % of the variant's current instances; with `autoScaling`
   * that is every count from `minCapacity` to `maxCapacity`, so the batch must lie between 5 % of `maxCapacity` and
   * 50 % of `minCapacity`. Each step needs this many extra instances of capacity (and quota) while it runs.
   *
   * @default - the smallest count that is at least 5 % of `instanceCount` (of `autoScaling.maxCapacity` with
   * autoscaling): 1 instance up to 20 instances; 1 when the count is a deploy-time value
   */
  readonly batchInstances?: number;

  /**
   * Instances restored per step when rolling back. SageMaker's own default restores the whole old fleet at once,
   * which needs a second fleet's worth of capacity; on GPU fleets that capacity usually does not exist.
   *
   * @default - same as `batchInstances`
   */
  readonly rollbackBatchInstances?: number;

  /**
   * Baking time per step, during which SageMaker watches the alarms. Allowed: 0–3600 s.
   *
   * @default Duration.minutes(5)
   */
  readonly waitInterval?: Duration;

  /**
   * Limit for the whole update. Allowed: 600–28800 s. A step on ml.p5.48xlarge takes ~20–30 min (capacity,
   * image pull, 140 GB of weights, CUDA graph capture) plus the wait interval.
   *
   * @default Duration.hours(8)
   */
  readonly maximumExecutionTimeout?: Duration;
}

/** How a blue/green deployment shifts traffic to the new fleet. */
export class TrafficShift {
  /** Everything at once after the new fleet is healthy. */
  public static allAtOnce(): TrafficShift {
    return new TrafficShift('ALL_AT_ONCE');
  }

  /** First `percent` (1–50) of the capacity, then, after the wait interval, the rest. */
  public static canary(percent: number): TrafficShift {
    return new TrafficShift('CANARY', percent);
  }

  /** Steps of `percent` (10–50) of the capacity, one per wait interval. */
  public static linear(percent: number): TrafficShift {
    return new TrafficShift('LINEAR', percent);
  }

  private constructor(
    /** `ALL_AT_ONCE`, `CANARY` or `LINEAR`. */
    public readonly type: 'ALL_AT_ONCE' | 'CANARY' | 'LINEAR',
    /** Step size in percent of capacity, for canary and linear. */
    public readonly percent?: number,
  ) {}
}

/** Options of `DeploymentPolicy.blueGreen()`. */
export interface BlueGreenDeploymentOptions extends DeploymentAlarmOptions {
  /** @default TrafficShift.allAtOnce() */
  readonly trafficShift?: TrafficShift;

  /**
   * Baking time after each traffic step (for all-at-once: before the old fleet is retired), during which SageMaker
   * watches the alarms. Allowed: 0–3600 s.
   *
   * @default Duration.minutes(5)
   */
  readonly waitInterval?: Duration;

  /**
   * How long the old fleet stays up after all traffic moved. Allowed: 0–3600 s.
   *
   * @default Duration.seconds(0)
   */
  readonly terminationWait?: Duration;

  /**
   * Limit for the whole update. Allowed: 600–28800 s, and longer than `terminationWait` + `waitInterval` (SageMaker's
   * BlueGreenUpdatePolicy). The new fleet must be provisioned and pass its health checks within it: on
   * ml.p5.48xlarge that alone takes ~20–30 min (capacity, image pull, 140 GB of weights, CUDA graph capture).
   *
   * @default Duration.hours(4)
   */
  readonly maximumExecutionTimeout?: Duration;
}

/**
 * How SageMaker replaces the instances when the model or its settings change (CloudFormation replaces the
 * model and endpoint configuration and updates the endpoint). Rolling is the default for fleets of two or more
 * instances: blue/green first provisions a complete second fleet, i.e. twice the p5 capacity and quota.
 */
export abstract class DeploymentPolicy {
  /** Replace instances in small batches, watching alarms, rolling back on alarm. Needs ≥ 2 instances. */
  public static rolling(options: RollingDeploymentOptions = {}): DeploymentPolicy {
    return new RollingDeploymentPolicy(options);
  }

  /** Bring up a complete new fleet, shift traffic, retire the old one. Needs twice the capacity during updates. */
  public static blueGreen(options: BlueGreenDeploymentOptions = {}): DeploymentPolicy {
    return new BlueGreenDeploymentPolicy(options);
  }

  /** The policy used when `deployment` is not set: rolling for 2+ instances, otherwise blue/green. */
  public static defaultFor(instanceCount: number): DeploymentPolicy {
    return instanceCount >= 2 ? DeploymentPolicy.rolling() : DeploymentPolicy.blueGreen();
  }

  /** `ROLLING` or `BLUE_GREEN`. */
  public abstract readonly style: 'ROLLING' | 'BLUE_GREEN';

  /** Baking time per step, during which SageMaker watches the rollback alarms. */
  public abstract readonly waitInterval: Duration;

  protected constructor(protected readonly alarmOptions: DeploymentAlarmOptions) {}

  /** Whether deployments roll back on the construct's error-rate and latency alarms. */
  public get usesDefaultAlarms(): boolean {
    return this.alarmOptions.useDefaultAlarms ?? true;
  }

  /** Alarms given by the user. */
  public get extraAlarms(): cloudwatch.IAlarm[] {
    return [...(this.alarmOptions.alarms ?? [])];
  }

  /** @internal */
  public _validate(fleet: FleetSize, defaultAlarmCount: number, problems: ProblemCollector): void {
    const total = this.extraAlarms.length + (this.usesDefaultAlarms ? defaultAlarmCount : 0);
    if (total > DEPLOYMENT_LIMITS.maxRollbackAlarms) {
      problems.add(`deployment alarms must be at most ${DEPLOYMENT_LIMITS.maxRollbackAlarms} in total (got ${total})`);
    }
    this._validateStyle(fleet, problems);
  }

  /** @internal */
  protected abstract _validateStyle(fleet: FleetSize, problems: ProblemCollector): void;

  /** @internal */
  public abstract _render(
    fleet: FleetSize,
    alarms: cloudwatch.IAlarm[],
  ): sagemaker.CfnEndpoint.DeploymentConfigProperty;

  protected renderRollback(alarms: cloudwatch.IAlarm[]): sagemaker.CfnEndpoint.AutoRollbackConfigProperty | undefined {
    if (alarms.length === 0) return undefined;
    return { alarms: alarms.map((alarm) => ({ alarmName: alarm.alarmName })) };
  }
}

/** Baking time per step when none is given. */
export const DEFAULT_WAIT_INTERVAL_SECONDS = 300;
/** Blue/green time limit when none is given: 4 hours. */
const BLUE_GREEN_DEFAULT_TIMEOUT_SECONDS = 14_400;

/** The smallest and largest fleet an update may meet, when known at synth. */
function fleetRange(fleet: FleetSize): { min: number; max: number } | undefined {
  const { instanceCount, minCapacity, maxCapacity } = fleet;
  if (minCapacity !== undefined || maxCapacity !== undefined) {
    if (!isKnownInteger(minCapacity) || !isKnownInteger(maxCapacity) || minCapacity > maxCapacity) return undefined;
    return { min: minCapacity, max: maxCapacity };
  }
  return isKnownInteger(instanceCount) ? { min: instanceCount, max: instanceCount } : undefined;
}

/**
 * The batches that are 5–50 % of every fleet in the range: from 5 % of the largest to 50 % of the smallest. The same
 * rule holds for an inference component's copies (InferenceComponentRollingUpdatePolicy.MaximumBatchSize, "between 5%
 * to 50% of the copy count": https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentRollingUpdatePolicy.html).
 */
export function batchBounds(range: { min: number; max: number }): { low: number; high: number } {
  const { min, max } = DEPLOYMENT_LIMITS.rollingBatchShare;
  return { low: Math.max(1, Math.ceil(range.max * min)), high: Math.floor(range.min * max) };
}

/** Smallest batch that is at least 5 % of the largest fleet. */
function defaultRollingBatch(fleet: FleetSize): number {
  const range = fleetRange(fleet);
  // A deploy-time count: 1 instance is within 5–50 % for fleets of 2 to 20.
  if (!range) return 1;
  return batchBounds(range).low;
}

class RollingDeploymentPolicy extends DeploymentPolicy {
  public readonly style = 'ROLLING';

  constructor(private readonly options: RollingDeploymentOptions) {
    super(options);
  }

  public get waitInterval(): Duration {
    return this.options.waitInterval ?? Duration.seconds(DEFAULT_WAIT_INTERVAL_SECONDS);
  }

  /** @internal */
  protected _validateStyle(fleet: FleetSize, problems: ProblemCollector): void {
    const { waitIntervalSeconds: wait, rollingMaxExecutionSeconds: exec } = DEPLOYMENT_LIMITS;
    problems.durationInRange('deployment.waitInterval', this.options.waitInterval, wait.min, wait.max);
    problems.durationInRange(
      'deployment.maximumExecutionTimeout',
      this.options.maximumExecutionTimeout,
      exec.min,
      exec.max,
    );
    const range = fleetRange(fleet);
    if (!range) return;
    if (range.min < 2) {
      const got =
        fleet.minCapacity !== undefined ? `autoScaling.minCapacity ${range.min}` : `instanceCount ${range.min}`;
      problems.add(
        `deployment: a rolling deployment needs at least 2 instances, because one batch may replace at most 50 % of them; use DeploymentPolicy.blueGreen() (got ${got})`,
      );
      return;
    }
    const { low, high } = batchBounds(range);
    if (this.options.batchInstances === undefined && low > high) {
      problems.add(
        `deployment: no rolling batch is 5–50 % of every fleet size autoscaling allows (${range.min}–${range.max} instances: 5 % of ${range.max} ` +
          `needs ${low}, 50 % of ${range.min} allows ${high}); raise autoScaling.minCapacity to at least ${2 * low}, lower autoScaling.maxCapacity ` +
          `to at most ${20 * high}, or use DeploymentPolicy.blueGreen() (got minCapacity ${range.min}, maxCapacity ${range.max})`,
      );
    }
    this.validateBatch('deployment.batchInstances', this.options.batchInstances, range, problems);
    this.validateBatch('deployment.rollbackBatchInstances', this.options.rollbackBatchInstances, range, problems);
  }

  private validateBatch(
    name: string,
    batch: number | undefined,
    range: { min: number; max: number },
    problems: ProblemCollector,
  ): void {
    if (batch === undefined) return;
    const { low, high } = batchBounds(range);
    if (!isKnownInteger(batch) || batch < low || batch > high) {
      const of =
        range.min === range.max
          ? `${range.min} instances`
          : `every fleet size from ${range.min} to ${range.max} instances`;
      problems.add(`${name} must be between ${low} and ${high} (5–50 % of ${of}) (got ${show(batch)})`);
    }
  }

  public _render(fleet: FleetSize, alarms: cloudwatch.IAlarm[]): sagemaker.CfnEndpoint.DeploymentConfigProperty {
    const batch = this.options.batchInstances ?? defaultRollingBatch(fleet);
    return {
      rollingUpdatePolicy: {
        maximumBatchSize: { type: 'INSTANCE_COUNT', value: batch },
        rollbackMaximumBatchSize: { type: 'INSTANCE_COUNT', value: this.options.rollbackBatchInstances ?? batch },
        waitIntervalInSeconds: wholeSeconds(this.options.waitInterval) ?? DEFAULT_WAIT_INTERVAL_SECONDS,
        maximumExecutionTimeoutInSeconds: wholeSeconds(this.options.maximumExecutionTimeout) ?? 28800,
      },
      autoRollbackConfiguration: this.renderRollback(alarms),
    };
  }
}

class BlueGreenDeploymentPolicy extends DeploymentPolicy {
  public readonly style = 'BLUE_GREEN';

  constructor(private readonly options: BlueGreenDeploymentOptions) {
    super(options);
  }

  public get waitInterval(): Duration {
    return this.options.waitInterval ?? Duration.seconds(DEFAULT_WAIT_INTERVAL_SECONDS);
  }

  /** @internal */
  protected _validateStyle(_fleet: FleetSize, problems: ProblemCollector): void {
    const {
      waitIntervalSeconds: wait,
      blueGreenMaxExecutionSeconds: exec,
      terminationWaitSeconds: term,
    } = DEPLOYMENT_LIMITS;
    problems.durationInRange('deployment.waitInterval', this.options.waitInterval, wait.min, wait.max);
    problems.durationInRange('deployment.terminationWait', this.options.terminationWait, term.min, term.max);
    problems.durationInRange(
      'deployment.maximumExecutionTimeout',
      this.options.maximumExecutionTimeout,
      exec.min,
      exec.max,
    );
    this.validateTimeoutAboveWaits(problems);
    const shift = this.options.trafficShift;
    if (shift?.type === 'CANARY') {
      problems.integerInRange(
        'deployment.trafficShift canary percent',
        shift.percent,
        DEPLOYMENT_LIMITS.canaryPercent.min,
        DEPLOYMENT_LIMITS.canaryPercent.max,
      );
    } else if (shift?.type === 'LINEAR') {
      problems.integerInRange(
        'deployment.trafficShift linear percent',
        shift.percent,
        DEPLOYMENT_LIMITS.linearPercent.min,
        DEPLOYMENT_LIMITS.linearPercent.max,
      );
    }
  }

  /** "The timeout value should be larger than the total waiting time specified in TerminationWaitInSeconds and WaitIntervalInSeconds." */
  private validateTimeoutAboveWaits(problems: ProblemCollector): void {
    const seconds = (d: Duration | undefined, fallback: number) =>
      d === undefined ? fallback : d.isUnresolved() ? undefined : d.toSeconds({ integral: false });
    const timeout = seconds(this.options.maximumExecutionTimeout, BLUE_GREEN_DEFAULT_TIMEOUT_SECONDS);
    const waits = [
      seconds(this.options.terminationWait, 0),
      seconds(this.options.waitInterval, DEFAULT_WAIT_INTERVAL_SECONDS),
    ];
    if (timeout === undefined || waits.some((w) => w === undefined)) return;
    const total = (waits as number[]).reduce((a, b) => a + b, 0);
    if (timeout <= total) {
      problems.add(
        `deployment.maximumExecutionTimeout must be longer than deployment.terminationWait + deployment.waitInterval (${total} seconds) (got ${timeout})`,
      );
    }
  }

  public _render(_fleet: FleetSize, alarms: cloudwatch.IAlarm[]): sagemaker.CfnEndpoint.DeploymentConfigProperty {
    const shift = this.options.trafficShift ?? TrafficShift.allAtOnce();
    const step = shift.percent === undefined ? undefined : { type: 'CAPACITY_PERCENT', value: shift.percent };
    return {
      blueGreenUpdatePolicy: {
        trafficRoutingConfiguration: {
          type: shift.type,
          waitIntervalInSeconds: wholeSeconds(this.options.waitInterval) ?? DEFAULT_WAIT_INTERVAL_SECONDS,
          canarySize: shift.type === 'CANARY' ? step : undefined,
          linearStepSize: shift.type === 'LINEAR' ? step : undefined,
        },
        terminationWaitInSeconds: wholeSeconds(this.options.terminationWait) ?? 0,
        maximumExecutionTimeoutInSeconds:
          wholeSeconds(this.options.maximumExecutionTimeout) ?? BLUE_GREEN_DEFAULT_TIMEOUT_SECONDS,
      },
      autoRollbackConfiguration: this.renderRollback(alarms),
    };
  }
}
