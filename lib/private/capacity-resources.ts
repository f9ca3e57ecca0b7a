import { aws_sagemaker as sagemaker, Duration, Token } from 'aws-cdk-lib';
import { CAPACITY_LIMITS, CAPACITY_RESERVATIONS_ONLY, CapacityReservation } from '../capacity';
import { InstanceType } from '../instance-type';
import { ProblemCollector, show, wholeSeconds } from './validation';

/** `MlReservationArn` pattern of the API reference. */
const ML_RESERVATION_ARN = /^arn:aws[a-z-]*:sagemaker:[a-z0-9-]*:[0-9]{12}:[a-z0-9-]{1,14}\/.*$/;

/** Checks `capacityReservation`, `instancePools` and `variantInstanceProvisionTimeout`. */
export function validateCapacity(
  settings: { instanceType?: InstanceType; instancePools?: InstanceType[]; capacityReservation?: CapacityReservation; provisionTimeout?: Duration },
  problems: ProblemCollector,
): void {
  const arn = settings.capacityReservation?.mlReservationArn;
  if (arn !== undefined && !Token.isUnresolved(arn)) {
    const { min, max } = CAPACITY_LIMITS.reservationArnLength;
    if (arn.length < min || arn.length > max || !ML_RESERVATION_ARN.test(arn)) {
      problems.add('capacityReservation.mlReservationArn must be a SageMaker reservation ARN like '
        + `'arn:aws:sagemaker:us-east-1:111122223333:ml-reservation/name' (${min}–${max} characters) (got ${show(arn)})`);
    }
  }
  const pools = settings.instancePools;
  if (pools !== undefined) {
    if (settings.instanceType !== undefined) {
      problems.add('instanceType and instancePools exclude each other: SageMaker replaces InstanceType with the pools; '
        + `list the preferred type first in instancePools (got instanceType ${settings.instanceType.name} and ${pools.length} pools)`);
    }
    if (pools.length < 1 || pools.length > CAPACITY_LIMITS.maxInstancePools) {
      problems.add(`instancePools must list between 1 and ${CAPACITY_LIMITS.maxInstancePools} instance types (got ${pools.length})`);
    }
    const names = pools.map((p) => p.name).filter((n) => !Token.isUnresolved(n));
    const repeated = names.filter((n, i) => names.indexOf(n) !== i);
    if (repeated.length > 0) problems.add(`instancePools must not repeat an instance type (got ${[...new Set(repeated)].join(', ')} twice)`);
  }
  const { min, max } = CAPACITY_LIMITS.provisionTimeoutSeconds;
  problems.durationInRange('variantInstanceProvisionTimeout', settings.provisionTimeout, min, max);
}

/** The variant's capacity properties. */
export function renderCapacity(settings: {
  instanceType: InstanceType;
  instancePools?: InstanceType[];
  capacityReservation?: CapacityReservation;
  provisionTimeout?: Duration;
}): Pick<sagemaker.CfnEndpointConfig.ProductionVariantProperty,
  'instanceType' | 'instancePools' | 'capacityReservationConfig' | 'variantInstanceProvisionTimeoutInSeconds'> {
  const pools = settings.instancePools;
  return {
    instanceType: pools ? undefined : settings.instanceType.name,
    // Priority 1 is tried first; the list order is the user's preference.
    instancePools: pools?.map((type, index) => ({ instanceType: type.name, priority: index + 1 })),
    capacityReservationConfig: settings.capacityReservation && {
      capacityReservationPreference: CAPACITY_RESERVATIONS_ONLY,
      mlReservationArn: settings.capacityReservation.mlReservationArn,
    },
    variantInstanceProvisionTimeoutInSeconds: wholeSeconds(settings.provisionTimeout),
  };
}
