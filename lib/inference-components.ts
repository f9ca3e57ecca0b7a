import {
  Annotations,
  aws_cloudwatch as cloudwatch,
  aws_ec2 as ec2,
  aws_iam as iam,
  aws_kms as kms,
  aws_s3 as s3,
  aws_sagemaker as sagemaker,
  Duration,
  Lazy,
  Resource,
  Size,
  SizeRoundingBehavior,
  Token,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { ComponentDeploymentOptions, CopyAutoScaling, CopyAutoScalingOptions } from './autoscaling';
import { PrefixAwareLlmEndpointBaseProps } from './endpoint-base-props';
import { InstanceType } from './instance-type';
import { ModelSource } from './model-source';
import { EndpointAlarms, EndpointMetrics, EndpointMetricsConfig, EndpointMonitoringOptions } from './monitoring';
import { PrefixAwareLlmEndpoint } from './prefix-aware-llm-endpoint';
import { addCopyAutoScaling, defaultScalingTarget, validateCopyAutoScaling } from './private/autoscaling-resources';
import { componentFitProblems, ComponentDemand } from './private/component-capacity';
import {
  renderEngineEnvironment,
  renderLoraEnvironment,
  validateEngineOptions,
  validateEnvironmentCount,
} from './private/engine-environment';
import { PrefixAwareLlmValidationError } from './private/errors';
import {
  CopyRange,
  renderComponentDeployment,
  rollingPossible,
  validateComponentDeployment,
} from './private/component-deployment';
import { annotateFleetPrice } from './private/cost-annotations';
import { createExecutionRole, grantDescribeRollbackAlarms, grantEndpointRuntimeBasics } from './private/execution-role';
import {
  endpointNameOf,
  fleetWithDefaults,
  validateFleetProps,
  validateRoutableFleetSize,
} from './private/fleet-rules';
import { grantScoped } from './private/grants';
import { validateBucketEncryption } from './private/s3-encryption';
import { INVOKE_ENDPOINT_ACTIONS, S3_READ_OBJECT_ACTIONS } from './private/iam-actions';
import { insightsPeriodSeconds, renderMetricsConfig } from './private/metrics-config';
import {
  componentDashboardRows,
  CreatedAlarms,
  createEndpointAlarms,
  rollbackAlarmCount,
  rollbackAlarmsOf,
  validateMonitoring,
} from './private/monitoring-resources';
import { acknowledgeComplianceFindings, flushWildcardAcknowledgements } from './private/nag-acknowledgements';
import { configureEndpointVpc, EndpointNetwork, renderVpcConfig, validateIsolatedModel } from './private/network';
import { isKnownInteger, isUnresolved, nameFromPath, ProblemCollector, show, wholeSeconds } from './private/validation';
import { RoutingStrategy } from './routing-strategy';
import { VllmEngineOptions, EngineEnvConvention } from './vllm-engine-options';
import { VllmImage, VllmImageConfig } from './vllm-image';
import { validateParallelismFits } from './private/parallelism';

/**
 * SageMaker API limits of inference components and their endpoint configuration, each from the page cited:
 * - `CopyCount` ≥ 0 (InferenceComponentRuntimeConfig,
 *   https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentRuntimeConfig.html);
 * - `NumberOfAcceleratorDevicesRequired` ≥ 1, `MinMemoryRequiredInMb` ≥ 128 (required), `NumberOfCpuCoresRequired` ≥ 0.25
 *   (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentComputeResourceRequirements.html);
 * - `BaseInferenceComponentName` names an existing component; an adapter omits `ComputeResourceRequirements` and gives
 *   its artefacts as `Container.ArtifactUrl`
 *   (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentSpecification.html);
 * - `ManagedInstanceScaling.MinInstanceCount` ≥ 0, `MaxInstanceCount` ≥ 1
 *   (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariantManagedInstanceScaling.html);
 * - the endpoint configuration of an endpoint that hosts components carries `ExecutionRoleArn` and no model on its
 *   variant (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateEndpointConfig.html).
 */
export const INFERENCE_COMPONENT_LIMITS = {
  minCopyCount: 0,
  minAcceleratorsPerCopy: 1,
  minMemoryPerCopyMiB: 128,
  minCpuCoresPerCopy: 0.25,
  minManagedInstanceCount: 0,
  minManagedMaxInstanceCount: 1,
} as const;

/**
 * Managed instance scaling of an endpoint that hosts inference components: SageMaker adds instances when copies do not
 * fit and removes instances no copy uses, between these counts.
 */
export interface ManagedInstanceScalingOptions {
  /**
   * Fewest instances. 0 lets the endpoint release every instance when all its components have scaled to zero copies
   * (their `autoScaling.minCopies` is 0): nothing is billed then, and the first request afterwards fails while an
   * instance starts and the model loads (minutes; see docs/construct.md#inference-components). Under `PREFIX_AWARE`, at
   * least 2 unless `allowPrefixAwareOnSingleInstance` is set. Allowed: an integer ≥ 0 and ≤ `maxInstanceCount`.
   */
  readonly minInstanceCount: number;

  /** Most instances; request at least this many in the "<type> for endpoint usage" quota. Allowed: an integer ≥ 1. */
  readonly maxInstanceCount: number;
}

/**
 * Props of `PrefixAwareLlmComponentEndpoint`: the fleet, role, network, name and `MetricsConfig` props it shares with
 * `PrefixAwareLlmEndpoint` (`PrefixAwareLlmEndpointBaseProps`), and its own.
 */
export interface PrefixAwareLlmComponentEndpointProps extends PrefixAwareLlmEndpointBaseProps {
  /** @default - no managed instance scaling: the fleet stays at `instanceCount` */
  readonly managedInstanceScaling?: ManagedInstanceScalingOptions;

  /**
   * Dashboard, the per-component error-rate and latency alarms (with `errorRateAlarm` and `latencyAlarm` as on
   * `PrefixAwareLlmEndpoint`), and their notification topic. `concurrencyAlarm`, `gpuMemoryAlarm` and
   * `loadSpreadAlarm` watch a variant's instances and are refused here.
   *
   * @default - a dashboard with one row group per component, and both alarms per component
   */
  readonly monitoring?: EndpointMonitoringOptions;
}

/**
 * An S3 object with LoRA adapter weights, packaged as `.tar.gz` (the adapter's files at the archive root), for
 * `LlmInferenceComponent.addAdapter()`.
 */
export abstract class AdapterSource {
  /**
   * An adapter archive in S3. The execution role may read exactly this object, and decrypt it with `encryptionKey`
   * (or the bucket's own key).
   *
   * @param key object key of the archive, ending in `.tar.gz`
   */
  public static s3(bucket: s3.IBucket, key: string, options: AdapterSourceOptions = {}): AdapterSource {
    return new S3AdapterSource(bucket, key, options);
  }

  /** @internal */
  public abstract _validate(problems: ProblemCollector): void;

  /** Grants the role read access and returns the `ArtifactUrl`. */
  public abstract bind(scope: Construct, grantee: iam.IGrantable): AdapterSourceConfig;
}

/** Options of `AdapterSource.s3()`. */
export interface AdapterSourceOptions {
  /**
   * The KMS key the object is encrypted with (SSE-KMS); the execution role may decrypt with it. An imported bucket
   * needs this or `s3ManagedEncryption`, as for `ModelSource.s3()`.
   *
   * @default - the bucket's own `encryptionKey` (known for a bucket created in this app)
   */
  readonly encryptionKey?: kms.IKey;

  /** Declares that an imported bucket's objects use SSE-S3 (no grant needed). @default false */
  readonly s3ManagedEncryption?: boolean;
}

/** What a bound adapter source gives the adapter component. */
export interface AdapterSourceConfig {
  /** `s3://bucket/key` of the archive. */
  readonly artifactUrl: string;
}

class S3AdapterSource extends AdapterSource {
  constructor(
    private readonly bucket: s3.IBucket,
    private readonly key: string,
    private readonly options: AdapterSourceOptions,
  ) {
    super();
  }

  public _validate(problems: ProblemCollector): void {
    validateBucketEncryption('adapter.artifact', 'AdapterSource.s3(bucket, key', this.bucket, this.options, problems);
    if (Token.isUnresolved(this.key)) return;
    // The container untars the adapter archive (aws/model-hosting-container-standards, LoRA adapter management).
    if (this.key.startsWith('/') || !this.key.endsWith('.tar.gz')) {
      problems.add(
        `adapter.artifact key must be an S3 object key of a .tar.gz archive, without a leading '/' (got ${show(this.key)})`,
      );
    }
  }

  public bind(_scope: Construct, grantee: iam.IGrantable): AdapterSourceConfig {
    grantScoped(grantee, { actions: S3_READ_OBJECT_ACTIONS, resources: [this.bucket.arnForObjects(this.key)] });
    (this.options.encryptionKey ?? this.bucket.encryptionKey)?.grantDecrypt(grantee);
    return { artifactUrl: `s3://${this.bucket.bucketName}/${this.key}` };
  }
}

/** Settings of one model deployed as an inference component, for `PrefixAwareLlmComponentEndpoint.addModel()`. */
export interface LlmInferenceComponentOptions {
  /** Where the weights come from. */
  readonly model: ModelSource;

  /** @default VllmImage.dlc() - the AWS vLLM DLC with prefix caching */
  readonly image?: VllmImage;

  /** @default - tensor parallel size = acceleratorsPerCopy, prefix caching on */
  readonly engine?: VllmEngineOptions;

  /**
   * The component's name: what clients pass as `InferenceComponentName`. Allowed: 1–63 letters, digits and hyphens,
   * starting and ending with a letter or digit.
   *
   * @default - derived from the construct path, lower case
   */
  readonly inferenceComponentName?: string;

  /**
   * Copies at creation. Each copy runs on one instance with its own accelerators. Allowed: an integer ≥ 0; within
   * `autoScaling` when that is set. A later deploy that changes it sets the copies back to it.
   *
   * @default - the endpoint's instanceCount (one copy per instance, so every instance can serve the model)
   */
  readonly copyCount?: number;

  /**
   * Accelerators (GPUs) each copy reserves (`NumberOfAcceleratorDevicesRequired`). Allowed: an integer ≥ 1 and at
   * most the instance's GPUs; the engine's tensor × data × pipeline parallel size must not exceed it.
   *
   * @default - engine.tensorParallelSize, else every GPU of the instance type
   */
  readonly acceleratorsPerCopy?: number;

  /**
   * Host memory each copy reserves (`MinMemoryRequiredInMb`, required by SageMaker). Allowed: at least 128 MiB and at
   * most the instance's memory; all copies together within the fleet's. No default: SageMaker keeps an undocumented
   * share of each instance for itself, so no value can be derived that is known to fit.
   */
  readonly minMemoryPerCopy: Size;

  /** CPU cores each copy reserves (`NumberOfCpuCoresRequired`). Allowed: ≥ 0.25. @default - no reservation */
  readonly cpuCoresPerCopy?: number;

  /** Allowed: 60–3600 s, whole seconds. @default Duration.minutes(30) */
  readonly containerStartupHealthCheckTimeout?: Duration;

  /** Allowed: 60–3600 s, whole seconds. @default Duration.minutes(30) */
  readonly modelDataDownloadTimeout?: Duration;

  /** @default - no autoscaling: the component keeps `copyCount` copies */
  readonly autoScaling?: CopyAutoScalingOptions;

  /**
   * How an update replaces the copies (a new image, model or engine setting): rolling in batches of copies, rolling
   * back on the component's error-rate and latency alarms. Needs at least 2 copies at every count autoscaling allows.
   *
   * @default - rolling with the defaults of `ComponentDeploymentOptions` when the copies allow one (at least 2, and at
   * most 20 per batch of 1); otherwise none, and SageMaker updates all copies at once
   */
  readonly deployment?: ComponentDeploymentOptions;
}

/** Props of `LlmInferenceComponent`. */
export interface LlmInferenceComponentProps extends LlmInferenceComponentOptions {
  /** The endpoint the component runs on. */
  readonly endpoint: PrefixAwareLlmComponentEndpoint;
}

/** Settings of a LoRA adapter, for `LlmInferenceComponent.addAdapter()`. */
export interface LoraAdapterOptions {
  /** The adapter's weights. */
  readonly artifact: AdapterSource;

  /**
   * The adapter component's name: what clients pass as `InferenceComponentName` to use the adapter. Same rules as
   * the base's.
   *
   * @default - derived from the construct path, lower case
   */
  readonly inferenceComponentName?: string;
}

/** Props of `LoraAdapterComponent`. */
export interface LoraAdapterComponentProps extends LoraAdapterOptions {
  /** The base component whose copies load the adapter. */
  readonly base: LlmInferenceComponent;
}

/** What the components of one endpoint share. */
interface ComponentHost {
  readonly endpointName: string;
  readonly variantName: string;
  readonly endpointArn: string;
  readonly role: iam.IRole;
}

/**
 * An endpoint whose models run as SageMaker inference components: one fleet (instance type, count, `RoutingConfig`,
 * managed instance scaling) and no model on its variant; add models with `addModel()` and LoRA adapters on them with
 * `addAdapter()`. A separate construct from `PrefixAwareLlmEndpoint`, as aws-cdk keeps resource shapes with different
 * required parts apart: here the variant must not name a model, the role moves to the endpoint configuration, and
 * models are children added after construction (docs/construct.md#inference-components).
 *
 * Children (fixed ids): `ExecutionRole` (unless `role` is given), `SecurityGroup` (with `vpc` and no `securityGroups`),
 * `EndpointConfig`, `Endpoint`, `Dashboard` (unless
 * `monitoring.dashboard` is false), and one child per component with its id.
 */
export class PrefixAwareLlmComponentEndpoint extends Resource {
  /** The variant name every component is placed on. */
  public static readonly VARIANT_NAME = PrefixAwareLlmEndpoint.VARIANT_NAME;

  public readonly endpointName: string;
  /** Endpoint ARN (SageMaker lower-cases the name in it). */
  public readonly endpointArn: string;
  public readonly variantName = PrefixAwareLlmComponentEndpoint.VARIANT_NAME;
  /** The execution role (created or given). */
  public readonly role: iam.IRole;
  public readonly instanceType: InstanceType;
  public readonly instanceCount: number;
  public readonly routing: RoutingStrategy;
  /** The dashboard, unless `monitoring.dashboard` is false. */
  public readonly dashboard?: cloudwatch.Dashboard;
  /** Security groups of the fleet's network interfaces (empty without `vpc`). */
  public readonly securityGroups: ec2.ISecurityGroup[];
  /** Escape hatch: the `AWS::SageMaker::EndpointConfig`. */
  public readonly cfnEndpointConfig: sagemaker.CfnEndpointConfig;
  /** Escape hatch: the `AWS::SageMaker::Endpoint`. */
  public readonly cfnEndpoint: sagemaker.CfnEndpoint;

  /** @internal */
  public readonly _monitoring: EndpointMonitoringOptions;
  /** @internal */
  public readonly _metricsConfig: EndpointMetricsConfig;
  /** @internal The VPC attachment every component's model repeats (undefined without `vpc`). */
  public readonly _network?: EndpointNetwork;
  /** @internal */
  public readonly _networkIsolation: boolean;
  private readonly managedScaling?: ManagedInstanceScalingOptions;
  private readonly components: LlmInferenceComponent[] = [];

  constructor(scope: Construct, id: string, props: PrefixAwareLlmComponentEndpointProps = {}) {
    super(scope, id);
    const fleet = fleetWithDefaults(props);
    this.instanceType = fleet.instanceType;
    this.instanceCount = fleet.instanceCount;
    this.routing = fleet.routing;
    this.managedScaling = props.managedInstanceScaling;
    this._networkIsolation = props.enableNetworkIsolation ?? false;
    this._monitoring = props.monitoring ?? {};
    this._metricsConfig = props.metricsConfig ?? {};
    this.validate(props);
    // Billed per instance like any endpoint: managed instance scaling moves the fleet between its bounds.
    annotateFleetPrice(
      this,
      {
        instanceType: this.instanceType,
        instances: {
          min: props.managedInstanceScaling?.minInstanceCount ?? this.instanceCount,
          max: props.managedInstanceScaling?.maxInstanceCount ?? this.instanceCount,
        },
        fleets: 1,
        pooled: false,
      },
      props.instanceType === undefined,
    );

    this.endpointName = endpointNameOf(this, props.endpointName);
    this.role =
      props.role ??
      createExecutionRole(
        this,
        'SageMaker execution role of a PrefixAwareLlmComponentEndpoint: pulls its images, reads its models and adapters, writes its logs.',
      );
    grantEndpointRuntimeBasics(this, this.role, this.endpointName);
    this._network = configureEndpointVpc(this, this.role, props, 'PrefixAwareLlmComponentEndpoint');
    this.securityGroups = this._network?.securityGroups ?? [];

    const managed = this.managedScaling;
    this.cfnEndpointConfig = new sagemaker.CfnEndpointConfig(this, 'EndpointConfig', {
      // Components take the role from the endpoint configuration: their specification has no role of its own.
      executionRoleArn: this.role.roleArn,
      productionVariants: [
        {
          variantName: this.variantName,
          instanceType: this.instanceType.name,
          initialInstanceCount: this.instanceCount,
          initialVariantWeight: 1,
          // One host AMI for the fleet, which every component's image must be able to run on (checked at synth).
          inferenceAmiVersion: Lazy.string({ produce: () => this.hostAmi() }),
          routingConfig: this.routing._render(),
          managedInstanceScaling: managed && {
            status: 'ENABLED',
            minInstanceCount: managed.minInstanceCount,
            maxInstanceCount: managed.maxInstanceCount,
          },
        },
      ],
      metricsConfig: renderMetricsConfig(props.metricsConfig),
      // With inference components the endpoint configuration carries the fleet's VpcConfig and EnableNetworkIsolation
      // ("all model containers deployed to the endpoint"), beside its ExecutionRoleArn
      // (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateEndpointConfig.html).
      vpcConfig: renderVpcConfig(this._network),
      enableNetworkIsolation: props.enableNetworkIsolation,
    });
    this.cfnEndpointConfig.node.addDependency(this.role);
    this.cfnEndpoint = new sagemaker.CfnEndpoint(this, 'Endpoint', {
      endpointName: this.endpointName,
      endpointConfigName: this.cfnEndpointConfig.attrEndpointConfigName,
    });
    this.endpointArn = this.cfnEndpoint.attrEndpointArn;

    if (props.monitoring?.dashboard ?? true) {
      this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: props.monitoring?.dashboardName });
    }
    this.node.addValidation({ validate: () => this.validateComponents() });
    if (Construct.isConstruct(this.role)) flushWildcardAcknowledgements(this.role);
    acknowledgeComplianceFindings({
      createdRole: props.role ? undefined : this.role,
      nvmeEndpointConfig: this.instanceType.hasLocalNvme ? this.cfnEndpointConfig : undefined,
    });
  }

  /** Deploys one model on the fleet as an inference component. */
  public addModel(id: string, options: LlmInferenceComponentOptions): LlmInferenceComponent {
    return new LlmInferenceComponent(this, id, { ...options, endpoint: this });
  }

  /**
   * `sagemaker:InvokeEndpoint` on this endpoint, for every component on it. A component's own `grantInvoke` names the
   * component too, but IAM cannot hold a caller to one component of an endpoint (see `LlmInferenceComponent.grantInvoke`).
   */
  public grantInvoke(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({ grantee, actions: INVOKE_ENDPOINT_ACTIONS, resourceArns: [this.endpointArn] });
  }

  /** The fewest instances the fleet may have: the managed-scaling minimum, else the instance count. */
  public get minInstanceCount(): number {
    return this.managedScaling?.minInstanceCount ?? this.instanceCount;
  }

  /** @internal */
  public _addComponent(component: LlmInferenceComponent): void {
    this.components.push(component);
  }

  /** @internal */
  public get _host(): ComponentHost {
    return {
      endpointName: this.endpointName,
      variantName: this.variantName,
      endpointArn: this.endpointArn,
      role: this.role,
    };
  }

  private hostAmi(): string | undefined {
    const amis = [
      ...new Set(this.components.map((c) => c._inferenceAmiVersion).filter((a): a is string => a !== undefined)),
    ];
    return amis.length === 1 ? amis[0] : undefined;
  }

  private validateComponents(): string[] {
    const problems: string[] = [];
    if (this.components.length === 0) {
      problems.push('the endpoint must host at least one inference component: add one with addModel() (got none)');
    }
    const amis = [...new Set(this.components.map((c) => c._inferenceAmiVersion ?? "SageMaker's default"))];
    if (amis.length > 1) {
      problems.push(
        `every component's image must run on one host AMI, since the instances are shared (got ${amis.join(', ')}); ` +
          'use images of the same CUDA major version',
      );
    }
    const gpus = this.instanceType.gpuCount;
    const demands: ComponentDemand[] = this.components.map((c) => c._demand);
    if (
      !this.instanceType.isUnresolved &&
      isKnownInteger(this.instanceCount) &&
      demands.every((d) => isKnownInteger(d.copies) && isKnownInteger(d.minCopies) && isKnownInteger(d.maxCopies))
    ) {
      const min = this.managedScaling?.minInstanceCount;
      const max = this.managedScaling?.maxInstanceCount;
      problems.push(
        ...componentFitProblems(
          {
            instanceTypeName: this.instanceType.name,
            gpusPerInstance: gpus,
            memoryPerInstanceMiB:
              this.instanceType.memoryGiB === undefined ? undefined : this.instanceType.memoryGiB * 1024,
            instanceCount: this.instanceCount,
            minInstanceCount: isKnownInteger(min) ? min : undefined,
            maxInstanceCount: isKnownInteger(max) ? max : undefined,
          },
          demands,
        ),
      );
    }
    return problems;
  }

  private validate(props: PrefixAwareLlmComponentEndpointProps): void {
    const problems = new ProblemCollector();
    validateFleetProps(
      props,
      {
        instanceTypes: [this.instanceType],
        instanceTypeProp: 'instanceType',
        instanceCount: this.instanceCount,
        routing: this.routing,
      },
      problems,
    );
    const managed = props.managedInstanceScaling;
    if (managed) {
      const { minManagedInstanceCount, minManagedMaxInstanceCount } = INFERENCE_COMPONENT_LIMITS;
      problems.integerAtLeast(
        'managedInstanceScaling.minInstanceCount',
        managed.minInstanceCount,
        minManagedInstanceCount,
      );
      problems.integerAtLeast(
        'managedInstanceScaling.maxInstanceCount',
        managed.maxInstanceCount,
        minManagedMaxInstanceCount,
      );
      const { minInstanceCount: min, maxInstanceCount: max } = managed;
      if (isKnownInteger(min) && isKnownInteger(max) && min > max) {
        problems.add(
          `managedInstanceScaling.minInstanceCount must be at most managedInstanceScaling.maxInstanceCount (got ${min} > ${max})`,
        );
      } else if (
        isKnownInteger(min) &&
        isKnownInteger(max) &&
        isKnownInteger(this.instanceCount) &&
        (this.instanceCount < Math.max(min, 1) || this.instanceCount > max)
      ) {
        problems.add(
          `instanceCount must lie between managedInstanceScaling.minInstanceCount ${Math.max(min, 1)} and maxInstanceCount ${max} (got ${this.instanceCount})`,
        );
      }
      validateRoutableFleetSize(
        'managedInstanceScaling.minInstanceCount',
        min,
        {
          lowestAllowed: minManagedInstanceCount,
          prefixAware: this.routing.isPrefixAware,
          allowSingleInstance: props.allowPrefixAwareOnSingleInstance ?? false,
          anyway: `let the fleet shrink to ${min === 0 ? 'zero (scale to zero)' : 'one instance'}`,
        },
        problems,
      );
    }
    validateMonitoring(
      props.monitoring,
      { insightsPeriodSeconds: insightsPeriodSeconds(props.metricsConfig) },
      problems,
    );
    for (const name of ['concurrencyAlarm', 'gpuMemoryAlarm', 'loadSpreadAlarm'] as const) {
      const alarm = props.monitoring?.[name];
      if (alarm !== undefined && alarm.enabled !== false) {
        problems.add(
          `monitoring.${name} watches a variant's instances and does not apply to inference components; ` +
            `leave it unset or { enabled: false } (got ${JSON.stringify(alarm)})`,
        );
      }
    }
    problems.throwIfAny(this);
  }
}

/** Shared by base and adapter components: name, metrics, alarms, dashboard rows and the invoke grant. */
abstract class ComponentBase extends Construct {
  public abstract readonly inferenceComponentName: string;
  public abstract readonly inferenceComponentArn: string;
  /** The component's alarms: error rate and latency. */
  public abstract readonly alarms: EndpointAlarms;
  /** @internal */
  protected abstract readonly _componentHost: ComponentHost;

  private metricsCache?: EndpointMetrics;

  /** The component's metrics (dimension `InferenceComponentName`). */
  public get metrics(): EndpointMetrics {
    this.metricsCache ??= new EndpointMetrics({
      endpointName: this._componentHost.endpointName,
      variantName: this._componentHost.variantName,
      period: this._componentMetricsConfig.publishFrequency,
      invocationMetricsAtPublishFrequency: this._componentMetricsConfig.enhancedMetrics ?? true,
      inferenceComponentName: this.inferenceComponentName,
    });
    return this.metricsCache;
  }

  /** @internal */
  protected abstract readonly _componentMetricsConfig: EndpointMetricsConfig;

  /**
   * `sagemaker:InvokeEndpoint` for this component. IAM authorizes `InvokeEndpoint` on the endpoint resource, and the
   * SageMaker service authorization reference documents no condition key for the component name
   * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsagemaker.html), so the grant
   * names the endpoint and this component's ARN: the component ARN keeps the statement valid where SageMaker also
   * checks the component resource, and the endpoint ARN is what lets the call through. It does not stop the grantee
   * from naming another component of the same endpoint; put components that need separate access on separate endpoints.
   */
  public grantInvoke(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: INVOKE_ENDPOINT_ACTIONS,
      resourceArns: [this._componentHost.endpointArn, this.inferenceComponentArn],
    });
  }

  /** @internal */
  protected _validateName(name: string | undefined, problems: ProblemCollector): void {
    problems.sageMakerName('inferenceComponentName', name);
  }

  /** @internal */
  protected _defaultName(): string {
    return nameFromPath(this);
  }

  /** @internal */
  protected _createAlarmsAndRows(
    endpoint: PrefixAwareLlmComponentEndpoint,
    kind: string,
    settings: { concurrencyThreshold?: number; scalingTarget?: number; rollsBack: boolean },
  ): CreatedAlarms {
    const alarms = createEndpointAlarms(
      this,
      { metrics: this.metrics, routerSidecarMetrics: false, subject: 'component', rollsBack: settings.rollsBack },
      endpoint._monitoring,
    );
    endpoint.dashboard?.addWidgets(
      ...componentDashboardRows(this.metrics, alarms, {
        title: `${kind} ${this.inferenceComponentName}`,
        ...settings,
      }).flat(),
    );
    return alarms;
  }
}

/**
 * One model on a `PrefixAwareLlmComponentEndpoint`: an `AWS::SageMaker::Model` with the vLLM container (rendered as
 * `PrefixAwareLlmEndpoint` renders it, prefix caching on) and an `AWS::SageMaker::InferenceComponent` with its copies
 * and the accelerators and memory each copy reserves. Children: `Model`, `InferenceComponent`, the alarms
 * `ErrorRateAlarm` and `ModelLatencyAlarm`, with `autoScaling` `ScalableTarget`, `ConcurrencyScalingPolicy` (and, with
 * `minCopies: 0`, `ScaleFromZeroPolicy` and `ScaleFromZeroAlarm`), and one child per adapter.
 */
export class LlmInferenceComponent extends ComponentBase {
  public readonly inferenceComponentName: string;
  public readonly inferenceComponentArn: string;
  public readonly alarms: EndpointAlarms;
  /** Copies at creation. */
  public readonly copyCount: number;
  /** Accelerators each copy reserves. */
  public readonly acceleratorsPerCopy: number;
  /** Tensor parallel size the engine runs with. */
  public readonly tensorParallelSize: number;
  /** Autoscaling resources, when `autoScaling` is set. */
  public readonly autoScaling?: CopyAutoScaling;
  /** The alarms updates roll back on (empty without a deployment policy). */
  public readonly rollbackAlarms: cloudwatch.IAlarm[];
  /** Escape hatch: the `AWS::SageMaker::Model`. */
  public readonly cfnModel: sagemaker.CfnModel;
  /** Escape hatch: the `AWS::SageMaker::InferenceComponent`. */
  public readonly cfnInferenceComponent: sagemaker.CfnInferenceComponent;

  /** @internal */
  public readonly _demand: ComponentDemand;
  /** @internal */
  public readonly _inferenceAmiVersion?: string;
  /** @internal */
  protected readonly _componentHost: ComponentHost;
  /** @internal */
  protected readonly _componentMetricsConfig: EndpointMetricsConfig;
  private readonly endpoint: PrefixAwareLlmComponentEndpoint;
  private readonly adapters: LoraAdapterComponent[] = [];
  private readonly convention: EngineEnvConvention;

  constructor(scope: Construct, id: string, props: LlmInferenceComponentProps) {
    super(scope, id);
    const endpoint = props.endpoint;
    this.endpoint = endpoint;
    this._componentHost = endpoint._host;
    this._componentMetricsConfig = endpoint._metricsConfig;
    const image = props.image ?? VllmImage.dlc();
    const engine = props.engine ?? {};
    this.convention = image.convention;
    const gpus = endpoint.instanceType.gpuCount;
    this.acceleratorsPerCopy = props.acceleratorsPerCopy ?? engine.tensorParallelSize ?? gpus ?? 1;
    this.tensorParallelSize = engine.tensorParallelSize ?? this.acceleratorsPerCopy;
    this.copyCount = props.copyCount ?? endpoint.instanceCount;
    this.validate(props, { image, engine });

    this.inferenceComponentName = props.inferenceComponentName ?? this._defaultName();
    const role = this._componentHost.role;
    const imageConfig = image.bind(this, role, {
      endpointName: this._componentHost.endpointName,
      containerStartupHealthCheckTimeout:
        props.containerStartupHealthCheckTimeout ?? PrefixAwareLlmEndpoint.DEFAULT_TIMEOUT,
    });
    this._inferenceAmiVersion = imageConfig.inferenceAmiVersion;
    this.cfnModel = this.createModel(props, engine, imageConfig);
    const memoryMiB = props.minMemoryPerCopy.toMebibytes({ rounding: SizeRoundingBehavior.NONE });
    this.cfnInferenceComponent = this.createInferenceComponent(props, memoryMiB);
    this.inferenceComponentArn = this.cfnInferenceComponent.attrInferenceComponentArn;
    this._demand = {
      label: id,
      copies: this.copyCount,
      minCopies: props.autoScaling?.minCopies ?? this.copyCount,
      maxCopies: props.autoScaling?.maxCopies ?? this.copyCount,
      acceleratorsPerCopy: this.acceleratorsPerCopy,
      memoryPerCopyMiB: memoryMiB,
    };

    const routing = endpoint.routing;
    const threshold = routing.isPrefixAware ? routing.concurrencyThreshold : undefined;
    const scalingTarget = props.autoScaling
      ? (props.autoScaling.targetConcurrentRequestsPerCopy ?? defaultScalingTarget(threshold))
      : undefined;
    if (props.autoScaling && scalingTarget !== undefined) {
      this.autoScaling = this.addAutoScaling(props.autoScaling, scalingTarget);
    }
    const range = copyRangeOf(this.copyCount, props.autoScaling);
    const deployment = props.deployment ?? (range && rollingPossible(range) ? {} : undefined);
    const useDefaultAlarms = deployment !== undefined && deployment.useDefaultAlarms !== false;
    const created = this._createAlarmsAndRows(endpoint, 'Model', {
      concurrencyThreshold: threshold,
      scalingTarget,
      rollsBack: useDefaultAlarms,
    });
    this.alarms = created;
    this.rollbackAlarms = deployment
      ? [...(useDefaultAlarms ? rollbackAlarmsOf(created) : []), ...(deployment.alarms ?? [])]
      : [];
    if (deployment) {
      this.cfnInferenceComponent.deploymentConfig = renderComponentDeployment(
        deployment,
        range ?? { min: 2, max: 20 },
        this.rollbackAlarms,
      );
      grantDescribeRollbackAlarms(role, this.rollbackAlarms);
    }
    if (props.autoScaling?.minCopies === 0) {
      Annotations.of(this).addInfo(
        'autoScaling.minCopies is 0: after the component scales to zero, requests fail (NoCapacityInvocationFailures) ' +
          'until the scale-from-zero policy has started a copy, which takes minutes (instance, image, weights). See docs/construct.md#inference-components.',
      );
    }
    endpoint._addComponent(this);
    if (Construct.isConstruct(role)) flushWildcardAcknowledgements(role);
  }

  /** The `AWS::SageMaker::Model` of the copies: the image, the engine's (and LoRA's) environment, the endpoint's network. */
  private createModel(
    props: LlmInferenceComponentProps,
    engine: VllmEngineOptions,
    imageConfig: VllmImageConfig,
  ): sagemaker.CfnModel {
    const role = this._componentHost.role;
    const modelConfig = props.model.bind(this, role);
    const environment = (): Record<string, string> =>
      Object.fromEntries(
        Object.entries({
          ...imageConfig.environment,
          ...renderEngineEnvironment({
            convention: imageConfig.convention,
            model: modelConfig,
            options: engine,
            tensorParallelSize: this.tensorParallelSize,
          }),
          ...renderLoraEnvironment(engine, this.adapters.length),
        }).sort(([a], [b]) => a.localeCompare(b)),
      );
    const model = new sagemaker.CfnModel(this, 'Model', {
      executionRoleArn: role.roleArn,
      primaryContainer: {
        image: imageConfig.imageUri,
        mode: 'SingleModel',
        // Adapters are added after the base: the LoRA settings follow how many there are at synth.
        environment: Lazy.any({ produce: () => environment() }),
        modelDataSource: modelConfig.modelDataSource,
      },
      // The model a component references repeats the endpoint's network settings (VpcConfig, EnableNetworkIsolation,
      // https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateModel.html), so the model never
      // describes a network other than the one its copies run in.
      enableNetworkIsolation: this.endpoint._networkIsolation || undefined,
      vpcConfig: renderVpcConfig(this.endpoint._network),
    });
    model.node.addDependency(role);
    return model;
  }

  /** The `AWS::SageMaker::InferenceComponent`: the model, what each copy reserves, its start-up limits, the copies. */
  private createInferenceComponent(
    props: LlmInferenceComponentProps,
    memoryMiB: number,
  ): sagemaker.CfnInferenceComponent {
    return new sagemaker.CfnInferenceComponent(this, 'InferenceComponent', {
      inferenceComponentName: this.inferenceComponentName,
      endpointName: this.endpoint.cfnEndpoint.attrEndpointName,
      variantName: this.endpoint.variantName,
      specification: {
        modelName: this.cfnModel.attrModelName,
        computeResourceRequirements: {
          numberOfAcceleratorDevicesRequired: this.acceleratorsPerCopy,
          minMemoryRequiredInMb: memoryMiB,
          numberOfCpuCoresRequired: props.cpuCoresPerCopy,
        },
        startupParameters: {
          containerStartupHealthCheckTimeoutInSeconds: wholeSeconds(
            props.containerStartupHealthCheckTimeout ?? PrefixAwareLlmEndpoint.DEFAULT_TIMEOUT,
          ),
          modelDataDownloadTimeoutInSeconds: wholeSeconds(
            props.modelDataDownloadTimeout ?? PrefixAwareLlmEndpoint.DEFAULT_TIMEOUT,
          ),
        },
      },
      runtimeConfig: { copyCount: this.copyCount },
    });
  }

  private addAutoScaling(options: CopyAutoScalingOptions, scalingTarget: number): CopyAutoScaling {
    const scaling = addCopyAutoScaling(
      this,
      this.inferenceComponentName,
      options,
      scalingTarget,
      // A standard-resolution period that is never shorter than the endpoint publishes at (60 s, or 120–300 s).
      this.metrics.noCapacityInvocationFailures({ period: this.metrics.insightsPeriod }),
    );
    // Registration needs the component to exist (CloudFormation gives no name attribute to reference).
    scaling.scalableTarget.node.addDependency(this.cfnInferenceComponent);
    return scaling;
  }

  /** Serves a LoRA adapter from this component's copies, as its own inference component. */
  public addAdapter(id: string, options: LoraAdapterOptions): LoraAdapterComponent {
    return new LoraAdapterComponent(this, id, { ...options, base: this });
  }

  /** @internal */
  public _addAdapter(adapter: LoraAdapterComponent): void {
    if (this.convention !== EngineEnvConvention.SM_VLLM) {
      throw new PrefixAwareLlmValidationError(adapter, [
        `addAdapter needs a base component on a vLLM DLC image (SM_VLLM_* settings), whose LoRA settings the construct renders (got a ${this.convention} image)`,
      ]);
    }
    this.adapters.push(adapter);
  }

  /** @internal */
  public get _endpoint(): PrefixAwareLlmComponentEndpoint {
    return this.endpoint;
  }

  private validate(props: LlmInferenceComponentProps, container: ComponentContainer): void {
    const { image, engine } = container;
    const problems = new ProblemCollector();
    const limits = INFERENCE_COMPONENT_LIMITS;
    const endpoint = props.endpoint;
    props.model._validate(problems);
    validateIsolatedModel(endpoint._networkIsolation, props.model, problems);
    image._validate(this, problems);
    validateEngineOptions(engine, image.convention, problems);
    // LoRA's settings are counted as if adapters follow.
    validateEnvironmentCount(
      { convention: image.convention, model: props.model, engine, withLoraAdapters: true },
      problems,
    );
    this._validateName(props.inferenceComponentName, problems);
    problems.integerAtLeast('copyCount', props.copyCount, limits.minCopyCount);
    problems.integerAtLeast('acceleratorsPerCopy', props.acceleratorsPerCopy, limits.minAcceleratorsPerCopy);
    this.validateAccelerators(props, engine, problems);
    validateCopyResources(props, problems);
    const { min, max } = PrefixAwareLlmEndpoint.TIMEOUT_RANGE_SECONDS;
    problems.durationInRange('containerStartupHealthCheckTimeout', props.containerStartupHealthCheckTimeout, min, max);
    problems.durationInRange('modelDataDownloadTimeout', props.modelDataDownloadTimeout, min, max);
    if (props.autoScaling) {
      const routing = endpoint.routing;
      validateCopyAutoScaling(
        props.autoScaling,
        {
          copyCount: this.copyCount,
          prefixAware: routing.isPrefixAware,
          concurrencyThreshold: routing.concurrencyThreshold,
        },
        problems,
      );
    }
    if (props.deployment) {
      const alarms =
        (props.deployment.useDefaultAlarms === false ? 0 : rollbackAlarmCount(endpoint._monitoring)) +
        (props.deployment.alarms?.length ?? 0);
      validateComponentDeployment(props.deployment, copyRangeOf(this.copyCount, props.autoScaling), alarms, problems);
    }
    problems.throwIfAny(this);
  }

  /** The accelerators a copy reserves: known, and enough for the engine's parallelism. */
  private validateAccelerators(
    props: LlmInferenceComponentProps,
    engine: VllmEngineOptions,
    problems: ProblemCollector,
  ): void {
    const instanceType = props.endpoint.instanceType;
    if (
      props.acceleratorsPerCopy === undefined &&
      engine.tensorParallelSize === undefined &&
      instanceType.gpuCount === undefined
    ) {
      problems.add(
        `acceleratorsPerCopy is required because the GPU count of ${instanceType.name} is unknown (got no acceleratorsPerCopy)`,
      );
    }
    if (isKnownInteger(this.acceleratorsPerCopy) && isKnownInteger(this.tensorParallelSize)) {
      validateParallelismFits(
        this.tensorParallelSize,
        engine,
        this.acceleratorsPerCopy,
        `acceleratorsPerCopy ${this.acceleratorsPerCopy}, the GPUs a copy reserves`,
        problems,
      );
    }
  }
}

/** What a component's container runs: the image and the engine's options (defaults applied). */
interface ComponentContainer {
  readonly image: VllmImage;
  readonly engine: VllmEngineOptions;
}

/** Memory and CPU cores each copy reserves, within SageMaker's minimums. */
function validateCopyResources(props: LlmInferenceComponentProps, problems: ProblemCollector): void {
  const limits = INFERENCE_COMPONENT_LIMITS;
  const memory = props.minMemoryPerCopy;
  if (!memory.isUnresolved()) {
    const mib = memory.toMebibytes({ rounding: SizeRoundingBehavior.NONE });
    if (!Number.isInteger(mib) || mib < limits.minMemoryPerCopyMiB) {
      problems.add(
        `minMemoryPerCopy must be a whole number of MiB of at least ${limits.minMemoryPerCopyMiB} (got ${mib} MiB)`,
      );
    }
  }
  const cpus = props.cpuCoresPerCopy;
  if (cpus !== undefined && !isUnresolved(cpus) && !(cpus >= limits.minCpuCoresPerCopy && Number.isFinite(cpus))) {
    problems.add(`cpuCoresPerCopy must be at least ${limits.minCpuCoresPerCopy} (got ${cpus})`);
  }
}

/**
 * A LoRA adapter served by the copies of a base `LlmInferenceComponent`: an `AWS::SageMaker::InferenceComponent` with
 * `BaseInferenceComponentName` and the adapter archive as `Container.ArtifactUrl`, no compute of its own (it uses the
 * base's copies). Clients call it by its `inferenceComponentName`. Children: `InferenceComponent`, `ErrorRateAlarm`,
 * `ModelLatencyAlarm`.
 */
export class LoraAdapterComponent extends ComponentBase {
  public readonly inferenceComponentName: string;
  public readonly inferenceComponentArn: string;
  public readonly alarms: EndpointAlarms;
  /** Escape hatch: the adapter's `AWS::SageMaker::InferenceComponent`. */
  public readonly cfnInferenceComponent: sagemaker.CfnInferenceComponent;
  /** @internal */
  protected readonly _componentHost: ComponentHost;
  /** @internal */
  protected readonly _componentMetricsConfig: EndpointMetricsConfig;

  constructor(scope: Construct, id: string, props: LoraAdapterComponentProps) {
    super(scope, id);
    const base = props.base;
    const endpoint = base._endpoint;
    this._componentHost = endpoint._host;
    this._componentMetricsConfig = endpoint._metricsConfig;
    const problems = new ProblemCollector();
    this._validateName(props.inferenceComponentName, problems);
    props.artifact._validate(problems);
    problems.throwIfAny(this);
    base._addAdapter(this);

    this.inferenceComponentName = props.inferenceComponentName ?? this._defaultName();
    const artifact = props.artifact.bind(this, this._componentHost.role);
    this.cfnInferenceComponent = new sagemaker.CfnInferenceComponent(this, 'InferenceComponent', {
      inferenceComponentName: this.inferenceComponentName,
      endpointName: endpoint.cfnEndpoint.attrEndpointName,
      specification: {
        baseInferenceComponentName: base.inferenceComponentName,
        container: { artifactUrl: artifact.artifactUrl },
      },
    });
    // The base must exist first (CloudFormation gives no name attribute to reference), and SageMaker reads the archive
    // with the execution role when it loads the adapter.
    this.cfnInferenceComponent.node.addDependency(base.cfnInferenceComponent, this._componentHost.role);
    this.inferenceComponentArn = this.cfnInferenceComponent.attrInferenceComponentArn;
    this.alarms = this._createAlarmsAndRows(endpoint, `Adapter (on ${base.inferenceComponentName})`, {
      rollsBack: false,
    });
    if (Construct.isConstruct(this._componentHost.role)) flushWildcardAcknowledgements(this._componentHost.role);
  }
}

/** The copy counts an update may meet, when known at synth: the copies, or autoscaling's range. */
function copyRangeOf(copyCount: number, autoScaling: CopyAutoScalingOptions | undefined): CopyRange | undefined {
  const min = autoScaling?.minCopies ?? copyCount;
  const max = autoScaling?.maxCopies ?? copyCount;
  return isKnownInteger(min) && isKnownInteger(max) && min <= max ? { min, max } : undefined;
}
