import { Annotations } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { PrefixAwareLlmEndpointBaseProps } from '../endpoint-base-props';
import { InstanceType } from '../instance-type';
import { RoutingStrategy } from '../routing-strategy';
import { validateMetricsConfig } from './metrics-config';
import { validateNetwork } from './network';
import { INSTANCE_TYPE_NAME, isKnownInteger, nameFromPath, ProblemCollector, show } from './validation';

/**
 * The defaults and rules of `PrefixAwareLlmEndpointBaseProps`, the props both endpoint constructs take: one home, so
 * `PrefixAwareLlmEndpoint` and `PrefixAwareLlmComponentEndpoint` resolve and refuse them alike.
 */

/** Instances when `instanceCount` is left out (`PrefixAwareLlmEndpoint.DEFAULT_INSTANCE_COUNT`). */
export const DEFAULT_INSTANCE_COUNT = 2;

/** The fleet as the construct builds it, defaults applied. */
export interface FleetWithDefaults {
  readonly instanceType: InstanceType;
  readonly instanceCount: number;
  readonly routing: RoutingStrategy;
}

/** `instanceType`, `instanceCount` and `routing` with their documented defaults. */
export function fleetWithDefaults(props: PrefixAwareLlmEndpointBaseProps): FleetWithDefaults {
  return {
    instanceType: props.instanceType ?? InstanceType.ML_P5_48XLARGE,
    instanceCount: props.instanceCount ?? DEFAULT_INSTANCE_COUNT,
    routing: props.routing ?? RoutingStrategy.prefixAware(),
  };
}

/** What the fleet rules check besides the props themselves. */
export interface FleetToValidate {
  /** The instance types the fleet may run and the prop that gave them (`instancePools` replaces `instanceType`). */
  readonly instanceTypes: readonly InstanceType[];
  readonly instanceTypeProp: string;
  readonly instanceCount: number;
  readonly routing: RoutingStrategy;
}

/**
 * The rules of the shared props: routing ranges, instance type names, the instance count (≥ 1, and ≥ 2 under
 * PREFIX_AWARE), the network, the endpoint name and `MetricsConfig`, each problem naming the prop.
 */
export function validateFleetProps(
  props: PrefixAwareLlmEndpointBaseProps,
  fleet: FleetToValidate,
  problems: ProblemCollector,
): void {
  fleet.routing._validate(problems);
  for (const type of fleet.instanceTypes) {
    if (!type.isUnresolved && !INSTANCE_TYPE_NAME.test(type.name)) {
      problems.add(
        `${fleet.instanceTypeProp} must be a SageMaker instance type like 'ml.p5.48xlarge' (got ${show(type.name)})`,
      );
    }
  }
  problems.integerAtLeast('instanceCount', fleet.instanceCount, 1);
  validateRoutableFleetSize(
    'instanceCount',
    fleet.instanceCount,
    {
      lowestAllowed: 1,
      prefixAware: fleet.routing.isPrefixAware,
      allowSingleInstance: props.allowPrefixAwareOnSingleInstance ?? false,
      anyway: 'deploy a single instance',
    },
    problems,
  );
  validateNetwork(props, problems);
  problems.sageMakerName('endpointName', props.endpointName);
  validateMetricsConfig(props.metricsConfig, problems);
}

/**
 * PREFIX_AWARE needs at least two instances to route between: an instance count, or a scaling minimum, below 2 is
 * refused unless `allowPrefixAwareOnSingleInstance` opts out. Values below `lowestAllowed` are the prop's own range
 * check's to report, so they get one problem, not two.
 */
export function validateRoutableFleetSize(
  prop: string,
  count: number | undefined,
  context: { lowestAllowed: number; prefixAware: boolean; allowSingleInstance: boolean; anyway: string },
  problems: ProblemCollector,
): void {
  if (!context.prefixAware || context.allowSingleInstance || !isKnownInteger(count)) return;
  if (count < context.lowestAllowed || count >= 2) return;
  problems.add(
    `${prop} must be at least 2 under PREFIX_AWARE routing, because one instance cannot route anywhere; ` +
      `set allowPrefixAwareOnSingleInstance: true to ${context.anyway} anyway (got ${count})`,
  );
}

/** Id of the info that `endpointName` was derived from the construct path (`PrefixAwareLlmInfos.ENDPOINT_NAME_FROM_PATH`). */
export const ENDPOINT_NAME_FROM_PATH_INFO = '@cdk-prefix-aware-llm/endpointNameFromPath';

/**
 * The endpoint's name: `endpointName`, or one derived from the construct path with an info saying what that costs
 * (moving or renaming the construct replaces the endpoint).
 */
export function endpointNameOf(scope: IConstruct, endpointName: string | undefined): string {
  if (endpointName !== undefined) return endpointName;
  Annotations.of(scope).addInfoV2(
    ENDPOINT_NAME_FROM_PATH_INFO,
    'endpointName is derived from the construct path: moving or renaming the construct replaces the endpoint ' +
      '(a second fleet while both exist, and a new name for clients). Set a stable endpointName for production.',
  );
  return nameFromPath(scope);
}
