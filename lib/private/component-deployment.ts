import { aws_cloudwatch as cloudwatch, aws_sagemaker as sagemaker } from 'aws-cdk-lib';
import { ComponentDeploymentOptions } from '../autoscaling';
import { batchBounds, DEFAULT_WAIT_INTERVAL_SECONDS, DEPLOYMENT_LIMITS } from '../deployment';
import { isKnownInteger, ProblemCollector, show, wholeSeconds } from './validation';

/** The copy counts an update of a component may meet: its copies, or every count its autoscaling allows. */
export interface CopyRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Whether a rolling deployment can exist for the range: some batch is 5–50 % of every count in it
 * (InferenceComponentRollingUpdatePolicy, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentRollingUpdatePolicy.html).
 */
export function rollingPossible(range: CopyRange): boolean {
  const { low, high } = batchBounds(range);
  return range.min >= 2 && low <= high;
}

/** Problems of explicitly given deployment options (`deployment.*`), naming the option and the range. */
export function validateComponentDeployment(
  options: ComponentDeploymentOptions,
  range: CopyRange | undefined,
  alarmCount: number,
  problems: ProblemCollector,
): void {
  const { waitIntervalSeconds: wait, rollingMaxExecutionSeconds: exec, maxRollbackAlarms } = DEPLOYMENT_LIMITS;
  problems.durationInRange('deployment.waitInterval', options.waitInterval, wait.min, wait.max);
  problems.durationInRange('deployment.maximumExecutionTimeout', options.maximumExecutionTimeout, exec.min, exec.max);
  if (alarmCount > maxRollbackAlarms)
    problems.add(`deployment.alarms: at most ${maxRollbackAlarms} rollback alarms in all (got ${alarmCount})`);
  if (!range) return;
  const of = range.min === range.max ? `${range.min} copies` : `every copy count from ${range.min} to ${range.max}`;
  if (!rollingPossible(range)) {
    const { low, high } = batchBounds(range);
    problems.add(
      `deployment: no rolling batch is 5–50 % of ${of} (5 % needs ${low}, 50 % allows ${high}); ` +
        "give the component at least 2 copies (autoScaling.minCopies) or leave deployment unset for SageMaker's default update " +
        `(got ${range.min === range.max ? `copyCount ${range.min}` : `minCopies ${range.min}, maxCopies ${range.max}`})`,
    );
    return;
  }
  const { low, high } = batchBounds(range);
  for (const [name, batch] of [
    ['deployment.batchCopies', options.batchCopies],
    ['deployment.rollbackBatchCopies', options.rollbackBatchCopies],
  ] as const) {
    if (batch !== undefined && (!isKnownInteger(batch) || batch < low || batch > high)) {
      problems.add(`${name} must be between ${low} and ${high} (5–50 % of ${of}) (got ${show(batch)})`);
    }
  }
}

/** The component's `DeploymentConfig`: rolling in batches of copies, rolling back on the alarms. */
export function renderComponentDeployment(
  options: ComponentDeploymentOptions,
  range: CopyRange,
  alarms: cloudwatch.IAlarm[],
): sagemaker.CfnInferenceComponent.InferenceComponentDeploymentConfigProperty {
  const batch = options.batchCopies ?? batchBounds(range).low;
  return {
    rollingUpdatePolicy: {
      maximumBatchSize: { type: 'COPY_COUNT', value: batch },
      rollbackMaximumBatchSize: { type: 'COPY_COUNT', value: options.rollbackBatchCopies ?? batch },
      waitIntervalInSeconds: wholeSeconds(options.waitInterval) ?? DEFAULT_WAIT_INTERVAL_SECONDS,
      maximumExecutionTimeoutInSeconds:
        wholeSeconds(options.maximumExecutionTimeout) ?? DEPLOYMENT_LIMITS.rollingMaxExecutionSeconds.max,
    },
    autoRollbackConfiguration:
      alarms.length > 0 ? { alarms: alarms.map((alarm) => ({ alarmName: alarm.alarmName })) } : undefined,
  };
}
