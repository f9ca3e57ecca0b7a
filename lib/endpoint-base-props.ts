import { aws_ec2 as ec2, aws_iam as iam } from 'aws-cdk-lib';
import { InstanceType } from './instance-type';
import { EndpointMetricsConfig } from './monitoring';
import { RoutingStrategy } from './routing-strategy';

/**
 * The props `PrefixAwareLlmEndpoint` and `PrefixAwareLlmComponentEndpoint` share, with the same type, default and
 * rules: the fleet (instance type and count, routing), its execution role and network, the endpoint's name and its
 * `MetricsConfig`. Where a prop is placed differs (on the model, or on the endpoint configuration and every
 * component's model), and each doc says where. `monitoring` is not here: the alarms it accepts and creates differ
 * between the two constructs.
 */
export interface PrefixAwareLlmEndpointBaseProps {
  /**
   * Instance type of the fleet: every instance of the endpoint's variant. With inference components, the type every
   * component shares; its GPU count and memory size the fit checks. On `PrefixAwareLlmEndpoint`, `instancePools`
   * replaces it (give one of the two). Allowed: a name `ml.<family>.<size>`.
   *
   * @default InstanceType.ML_P5_48XLARGE (on `PrefixAwareLlmEndpoint`, unless `instancePools` is set)
   */
  readonly instanceType?: InstanceType;

  /**
   * Instances behind the endpoint. With `autoScaling` (`PrefixAwareLlmEndpoint`) or `managedInstanceScaling`
   * (`PrefixAwareLlmComponentEndpoint`), the count at creation, which must lie within that range. Allowed: an integer
   * ≥ 1; ≥ 2 under `PREFIX_AWARE` unless `allowPrefixAwareOnSingleInstance` is set.
   *
   * @default 2
   */
  readonly instanceCount?: number;

  /**
   * Allow `PREFIX_AWARE` on a fleet that may run one instance: `instanceCount` 1, an `autoScaling.minCapacity` of 1
   * (`PrefixAwareLlmEndpoint`), or a `managedInstanceScaling.minInstanceCount` of 0 or 1 (scale to zero,
   * `PrefixAwareLlmComponentEndpoint`). Routing has nowhere to send anything while one instance runs; meant for
   * staging copies of a production configuration and for fleets that scale to zero.
   *
   * @default false
   */
  readonly allowPrefixAwareOnSingleInstance?: boolean;

  /**
   * Routing over the fleet (the variant's `RoutingConfig`). Under `PREFIX_AWARE`, SageMaker keeps requests with a
   * common prefix on the same instance; with inference components, among the instances that host a copy of the
   * component called, and for an adapter among its base component's instances.
   *
   * @default RoutingStrategy.prefixAware() - prefixLength 8192, concurrencyThreshold 32
   */
  readonly routing?: RoutingStrategy;

  /**
   * Execution role SageMaker assumes: on the model of `PrefixAwareLlmEndpoint`; on the endpoint configuration, once
   * for every component, of `PrefixAwareLlmComponentEndpoint`. The construct adds the statements it needs to it (its
   * images, weights and adapter artefacts, logs, metrics, network interfaces).
   *
   * @default - a new role trusted by sagemaker.amazonaws.com with only those statements
   */
  readonly role?: iam.IRole;

  /**
   * VPC to attach the endpoint to: on the model of `PrefixAwareLlmEndpoint`; on the endpoint configuration and every
   * component's model of `PrefixAwareLlmComponentEndpoint`. SageMaker then downloads model data (and adapter
   * artefacts) through it (give it an S3 gateway endpoint), and the containers reach only what the VPC allows.
   *
   * @default - no VPC
   */
  readonly vpc?: ec2.IVpc;

  /** Subnets for the endpoint's network interfaces (1–16); requires `vpc`. @default - the VPC's private subnets */
  readonly vpcSubnets?: ec2.SubnetSelection;

  /**
   * Security groups (1–5); requires `vpc`.
   *
   * @default - one new group that allows no inbound traffic and outbound HTTPS only
   */
  readonly securityGroups?: ec2.ISecurityGroup[];

  /**
   * Run the containers without any network access: on the model of `PrefixAwareLlmEndpoint`; on the endpoint
   * configuration and every component's model of `PrefixAwareLlmComponentEndpoint`. Each model must come from S3: a
   * Hugging Face download cannot work. SageMaker itself still fetches S3 model data and adapter artefacts for the
   * containers.
   *
   * @default false
   */
  readonly enableNetworkIsolation?: boolean;

  /**
   * Physical endpoint name: the name clients call. Allowed: 1–63 characters, letters, digits and single or repeated
   * hyphens inside (`^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$`). Models and endpoint configurations never get fixed
   * names, so CloudFormation can replace them on every change.
   *
   * Recommended for production: set a stable name. The default follows the construct path, so moving or renaming
   * the construct (or its stack) renames the endpoint, and CloudFormation replaces it: a complete second fleet is
   * created before the old one is deleted, at twice the cost and quota, and clients must switch names.
   *
   * @default - derived from the construct path, unique in the app, lower case (the execution role's log permissions,
   * and `PrefixAwareLlmEndpoint`'s rollback alarm, need the name before the endpoint exists)
   */
  readonly endpointName?: string;

  /**
   * `MetricsConfig`: enhanced (per-instance) metrics are on unless turned off; `publishFrequency` is also the period
   * of the construct's metrics and alarms (each component's, with inference components).
   *
   * @default - enhanced metrics on, published every 60 s, detailed observability at SageMaker's default
   */
  readonly metricsConfig?: EndpointMetricsConfig;
}
