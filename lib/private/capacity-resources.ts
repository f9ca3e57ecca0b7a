import { Annotations, aws_sagemaker as sagemaker, Duration, Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { CAPACITY_LIMITS, CAPACITY_RESERVATIONS_ONLY, CapacityReservation } from '../capacity';
import { InstanceType } from '../instance-type';
import { ProblemCollector, show, wholeSeconds } from './validation';

/** `MlReservationArn` pattern of the API reference. */
const ML_RESERVATION_ARN = /^arn:aws[a-z-]*:sagemaker:[a-z0-9-]*:[0-9]{12}:[a-z0-9-]{1,14}\/.*$/;

/** Checks `capacityReservation`, `instancePools` and `variantInstanceProvisionTimeout`. */
export function validateCapacity(
  settings: {
    instanceType?: InstanceType;
    instancePools?: InstanceType[];
    capacityReservation?: CapacityReservation;
    provisionTimeout?: Duration;
  },
  problems: ProblemCollector,
): void {
  const arn = settings.capacityReservation?.mlReservationArn;
  if (arn !== undefined && !Token.isUnresolved(arn)) {
    const { min, max } = CAPACITY_LIMITS.reservationArnLength;
    if (arn.length < min || arn.length > max || !ML_RESERVATION_ARN.test(arn)) {
      problems.add(
        'capacityReservation.mlReservationArn must be a SageMaker reservation ARN like ' +
          `'arn:aws:sagemaker:us-east-1:111122223333:ml-reservation/name' (${min}–${max} characters) (got ${show(arn)})`,
      );
    }
  }
  const pools = settings.instancePools;
  if (pools !== undefined) {
    if (settings.instanceType !== undefined) {
      problems.add(
        'instanceType and instancePools exclude each other: SageMaker replaces InstanceType with the pools; ' +
          `list the preferred type first in instancePools (got instanceType ${settings.instanceType.name} and ${pools.length} pools)`,
      );
    }
    if (pools.length < 1 || pools.length > CAPACITY_LIMITS.maxInstancePools) {
      problems.add(
        `instancePools must list between 1 and ${CAPACITY_LIMITS.maxInstancePools} instance types (got ${pools.length})`,
      );
    }
    const names = pools.map((p) => p.name).filter((n) => !Token.isUnresolved(n));
    const repeated = names.filter((n, i) => names.indexOf(n) !== i);
    if (repeated.length > 0)
      problems.add(`instancePools must not repeat an instance type (got ${[...new Set(repeated)].join(', ')} twice)`);
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
}): Pick<
  sagemaker.CfnEndpointConfig.ProductionVariantProperty,
  'instanceType' | 'instancePools' | 'capacityReservationConfig' | 'variantInstanceProvisionTimeoutInSeconds'
> {
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

/** Warning id: `instancePools` mixes GPUs of different prefill speed under PREFIX_AWARE. */
export const MIXED_POOLS_UNDER_PREFIX_AWARE = '@cdk-prefix-aware-llm/mixedPoolsUnderPrefixAware';

/**
 * Dense BF16 tensor TFLOPS per GPU, from NVIDIA's datasheets: what prefill (compute-bound) scales with.
 * H100 SXM and H200 SXM share the GH100 die (989.4: https://www.nvidia.com/en-us/data-center/h100/,
 * https://www.nvidia.com/en-us/data-center/h200/); A100 SXM 40 and 80 GB: 312
 * (https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf).
 */
const DENSE_BF16_TFLOPS: Readonly<Record<string, number>> = {
  'H100 80GB': 989.4,
  'H200 141GB': 989.4,
  'A100 40GB': 312,
  'A100 80GB': 312,
};

/**
 * Under PREFIX_AWARE, warns when the pools' GPUs differ in prefill speed, or are not known to match: SageMaker hashes
 * prefixes evenly and spills on one `concurrencyThreshold`, blind to how fast each instance is (measured in
 * docs/benchmarks.md, "Mixed fleets"). p5, p5e and p5en (H100 / H200: the same compute) do not warn.
 */
export function warnAboutMixedPools(
  scope: IConstruct,
  pools: readonly InstanceType[] | undefined,
  prefixAware: boolean,
): void {
  if (!prefixAware || pools === undefined || pools.length < 2 || pools.some((p) => Token.isUnresolved(p.name))) return;
  const speedOf = (p: InstanceType) => (p.gpuModel !== undefined ? DENSE_BF16_TFLOPS[p.gpuModel] : undefined);
  const keys = new Set(pools.map((p) => speedOf(p) ?? `unknown ${p.gpuModel ?? p.name}`));
  if (keys.size < 2) return;
  const described = pools
    .map(
      (p) =>
        `${p.name} (${p.gpuModel ?? 'GPU unknown'}${speedOf(p) !== undefined ? `, ${speedOf(p)} dense BF16 TFLOPS` : ''})`,
    )
    .join(', ');
  Annotations.of(scope).addWarningV2(
    MIXED_POOLS_UNDER_PREFIX_AWARE,
    `instancePools mixes GPUs whose prefill speed differs or is not known to match: ${described}. PREFIX_AWARE gives every instance ` +
      'the same share of prefixes and the same concurrencyThreshold whatever its speed, so a fleet SageMaker fills with a slower fallback ' +
      'type sends that type more prefill than it can keep up with: in simulation (5 × p5 + 2 × p4d), each p4d did 2.0–2.7× the share of the ' +
      "fleet's prefill its capacity gives it, and the best setting's P90 TTFT was 1.45–2.6× that of the five p5 without the p4d (docs/benchmarks.md, " +
      '"Mixed fleets"). Prefer fallback types with the same GPU compute (p5 → p5e → p5en), or size the fleet for the slowest type.',
  );
}
