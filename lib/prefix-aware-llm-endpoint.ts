import {
  Annotations,
  aws_cloudwatch as cloudwatch,
  aws_ec2 as ec2,
  aws_iam as iam,
  aws_kms as kms,
  aws_sagemaker as sagemaker,
  Duration,
  IResource,
  Resource,
  Stack,
  Token,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { AutoScalingOptions, VariantAutoScaling } from './autoscaling';
import { CapacityReservation } from './capacity';
import { DataCaptureOptions } from './data-capture';
import { DeploymentPolicy } from './deployment';
import { PrefixAwareLlmEndpointBaseProps } from './endpoint-base-props';
import { InstanceType } from './instance-type';
import { ModelSource } from './model-source';
import { EndpointAlarms, EndpointMetricOptions, EndpointMetrics, EndpointMonitoringOptions } from './monitoring';
import { addVariantAutoScaling, defaultScalingTarget, validateAutoScaling } from './private/autoscaling-resources';
import {
  MIXED_POOLS_UNDER_PREFIX_AWARE,
  renderCapacity,
  validateCapacity,
  warnAboutMixedPools,
} from './private/capacity-resources';
import { DATA_CAPTURE_STORES_PROMPTS, renderDataCapture, validateDataCapture } from './private/data-capture-resources';
import { renderEngineEnvironment, validateEngineOptions, validateEnvironmentCount } from './private/engine-environment';
import { createExecutionRole, grantDescribeRollbackAlarms, grantEndpointRuntimeBasics } from './private/execution-role';
import {
  DEFAULT_INSTANCE_COUNT,
  ENDPOINT_NAME_FROM_PATH_INFO,
  endpointNameOf,
  fleetWithDefaults,
  validateFleetProps,
} from './private/fleet-rules';
import { annotateFleetPrice, DEFAULT_INSTANCE_TYPE_WARNING, HOURLY_PRICE_INFO } from './private/cost-annotations';
import { FleetSize } from './private/fleet-size';
import { modelHeads } from './private/model-catalog';
import {
  defaultTensorParallelSize,
  gpusUsed,
  ParallelismInput,
  validateInstanceParallelism,
  validateModelParallelism,
} from './private/parallelism';
import {
  CreatedAlarms,
  createEndpointAlarms,
  endpointDashboardRows,
  MonitoredEndpoint,
  rollbackAlarmCount,
  rollbackAlarmDelays,
  rollbackAlarmsOf,
  validateMonitoring,
} from './private/monitoring-resources';
import { acknowledgeComplianceFindings, flushWildcardAcknowledgements } from './private/nag-acknowledgements';
import { CALL_WITH_BEARER_TOKEN_ACTIONS, INVOKE_ENDPOINT_ACTIONS } from './private/iam-actions';
import { insightsPeriodSeconds, renderMetricsConfig } from './private/metrics-config';
import { configureEndpointVpc, EndpointNetwork, renderVpcConfig, validateIsolatedModel } from './private/network';
import { isKnownInteger, ProblemCollector, wholeSeconds } from './private/validation';
import { IntegerRange, RoutingStrategy } from './routing-strategy';
import { grantAbTestingTo, RoutingVariant, validateRoutingVariants, withRoutingVariants } from './routing-variants';
import { VllmEngineOptions } from './vllm-engine-options';
import { VllmImage, VllmImageBindContext, VllmImageConfig } from './vllm-image';

export { PrefixAwareLlmValidationError } from './private/errors';

/** Ids of the construct's acknowledgeable warnings (`Annotations.of(scope).acknowledgeWarning(id, reason)`). */
export class PrefixAwareLlmWarnings {
  /** `engine.enablePrefixCaching: false` under `PREFIX_AWARE`: routing for a cache that is not there. */
  public static readonly PREFIX_CACHING_DISABLED = '@cdk-prefix-aware-llm/prefixCachingDisabled';
  /** A Hugging Face token is resolved into the model environment at deploy time (readable via DescribeModel). */
  public static readonly HF_TOKEN_IN_MODEL_ENVIRONMENT = '@cdk-prefix-aware-llm/hfTokenInModelEnvironment';
  /** Tensor × data × pipeline parallel size uses fewer GPUs than the instance has. */
  public static readonly UNUSED_GPUS = '@cdk-prefix-aware-llm/unusedGpus';
  /** `routing.prefixLength` is longer than any prompt `engine.maxModelLen` admits, so keys never repeat across turns. */
  public static readonly PREFIX_LONGER_THAN_CONTEXT = '@cdk-prefix-aware-llm/prefixLongerThanContext';
  /** `routing.concurrencyThreshold` above `engine.maxNumSeqs`: requests queue in vLLM before SageMaker spills. */
  public static readonly THRESHOLD_ABOVE_MAX_NUM_SEQS = '@cdk-prefix-aware-llm/thresholdAboveMaxNumSeqs';
  /** The deployment policy has no alarm to roll back on. */
  public static readonly DEPLOYMENT_WITHOUT_ALARMS = '@cdk-prefix-aware-llm/deploymentWithoutAlarms';
  /** Blue/green on a fleet of 2+: every update provisions a second complete fleet (2× instances, quota and cost). */
  public static readonly BLUE_GREEN_DOUBLES_FLEET = '@cdk-prefix-aware-llm/blueGreenDoublesFleet';
  /** `VllmImage.fromEcrRepository()` without a CUDA version or AMI: SageMaker's default AMI cannot start CUDA 13 images. */
  public static readonly HOST_AMI_UNKNOWN = '@cdk-prefix-aware-llm/hostAmiUnknown';
  /**
   * `autoScaling` is set: SageMaker refuses an update that changes the instance type of a variant registered with
   * Application Auto Scaling, so a later deploy that changes `instanceType` or `instancePools` fails.
   */
  public static readonly AUTOSCALED_INSTANCE_TYPE_FIXED = '@cdk-prefix-aware-llm/autoscaledInstanceTypeFixed';
  /**
   * A rollback alarm needs longer to go into ALARM (datapointsToAlarm × its period) than the deployment bakes
   * (`waitInterval`): a broken last batch, or a whole blue/green fleet, finishes its bake before the alarm can fire.
   */
  public static readonly ROLLBACK_ALARM_SLOWER_THAN_BAKE = '@cdk-prefix-aware-llm/rollbackAlarmSlowerThanBake';
  /** `dataCapture` stores prompts and answers in S3: expire them. */
  public static readonly DATA_CAPTURE_STORES_PROMPTS = DATA_CAPTURE_STORES_PROMPTS;
  /** `instancePools` mixes GPUs of different prefill speed under `PREFIX_AWARE`, which hashes prefixes evenly, blind to speed. */
  public static readonly MIXED_POOLS_UNDER_PREFIX_AWARE = MIXED_POOLS_UNDER_PREFIX_AWARE;
  /**
   * `instanceType` (and `instancePools`) left out: the endpoint runs the default ml.p5.48xlarge, the costliest type,
   * sized for a 70B model. The warning states the fleet's hourly price.
   */
  public static readonly DEFAULT_INSTANCE_TYPE = DEFAULT_INSTANCE_TYPE_WARNING;
  /**
   * The model is not in the construct's catalogue of attention-head counts and the tensor parallel size was left to
   * its default above 1: vLLM exits at start when the model's attention heads do not divide it.
   */
  public static readonly MODEL_HEADS_UNKNOWN = '@cdk-prefix-aware-llm/modelHeadsUnknown';
  /** The router sidecar's settings could not be checked at synth: this installation carries no compiled router. */
  public static readonly ROUTER_SETTINGS_UNCHECKED = '@cdk-prefix-aware-llm/routerSettingsUnchecked';
  /** A router sidecar setting the container accepts but warns about at start (e.g. a drain past SageMaker's 30 s stop deadline). */
  public static readonly ROUTER_SETTING_DOUBTFUL = '@cdk-prefix-aware-llm/routerSettingDoubtful';

  private constructor() {}
}

/** Ids of the construct's info annotations (`Annotations.of(scope).acknowledgeInfo(id, reason)` hides one). */
export class PrefixAwareLlmInfos {
  /** The endpoint's hourly price: instances × the list price of the instance type, with the price's source and date. */
  public static readonly HOURLY_PRICE = HOURLY_PRICE_INFO;
  /** `endpointName` is derived from the construct path: moving or renaming the construct replaces the endpoint. */
  public static readonly ENDPOINT_NAME_FROM_PATH = ENDPOINT_NAME_FROM_PATH_INFO;

  private constructor() {}
}

/** Characters per token the construct assumes when it relates `prefixLength` (characters) to token limits. */
const CHARS_PER_TOKEN = 4;

/**
 * Props of `PrefixAwareLlmEndpoint`: the fleet, role, network, name and `MetricsConfig` props it shares with
 * `PrefixAwareLlmComponentEndpoint` (`PrefixAwareLlmEndpointBaseProps`), and its own.
 */
export interface PrefixAwareLlmEndpointProps extends PrefixAwareLlmEndpointBaseProps {
  /** Where the weights come from: `ModelSource.huggingFace(...)` or `ModelSource.s3(...)`. */
  readonly model: ModelSource;

  /**
   * Instance types SageMaker may provision, in order of preference (priority 1 first), e.g. p5 → p5e → p5en: when
   * the first type has insufficient capacity, SageMaker falls back to the next one, until the fleet is complete, the
   * pools are exhausted, or `variantInstanceProvisionTimeout` passes. Replaces `instanceType`. Allowed: 1–5
   * distinct types. The tensor parallel size must divide every pool's GPU count (set `engine.tensorParallelSize`
   * when the pools differ). One fleet may then mix instance types: `PREFIX_AWARE` routes by prefix and in-flight
   * count with one `concurrencyThreshold` for all of them; AWS does not document any weighting by instance type, and
   * pools whose GPUs differ in compute (e.g. p5 then p4d) warn at synth (`MIXED_POOLS_UNDER_PREFIX_AWARE`).
   *
   * @default - one instance type, `instanceType`
   */
  readonly instancePools?: InstanceType[];

  /**
   * Launch the instances only into this ML capacity reservation (training plan or flexible reservation).
   *
   * @default - on-demand capacity
   */
  readonly capacityReservation?: CapacityReservation;

  /**
   * How long SageMaker keeps trying to provision instances (across `instancePools`) before the create or update
   * fails. Capacity only: model download and container start have their own timeouts. Allowed: 300–3600 s.
   *
   * @default - SageMaker's default
   */
  readonly variantInstanceProvisionTimeout?: Duration;

  /** @default VllmImage.dlc() - the AWS vLLM DLC for SageMaker at VllmImage.DLC_DEFAULT_TAG */
  readonly image?: VllmImage;

  /** @default - tensor parallel size = GPUs of the instance type, prefix caching on, vLLM defaults otherwise */
  readonly engine?: VllmEngineOptions;

  /**
   * KMS key for the instances' ML storage volume. Refused on instance types with local NVMe storage (every GPU
   * type in the catalog): SageMaker rejects `KmsKeyId` there, the storage is encrypted by the instance hardware.
   * The deploying principal needs `kms:CreateGrant` on the key.
   *
   * @default - AWS-managed encryption
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * How long SageMaker waits for `/ping` to succeed after the container starts. A Hugging Face model downloads in
   * this window. Allowed: 60–3600 s, whole seconds.
   *
   * @default Duration.minutes(30) - a 70B BF16 model (~140 GB): download, loading 8 shards, CUDA graph capture
   */
  readonly containerStartupHealthCheckTimeout?: Duration;

  /**
   * How long SageMaker may take to copy S3 model data to each instance. Allowed: 60–3600 s, whole seconds.
   *
   * @default Duration.minutes(30) - ~140 GB at a few hundred MB/s, with margin
   */
  readonly modelDataDownloadTimeout?: Duration;

  /**
   * SageMaker Data Capture of requests (and responses) to S3, for `prefix-router trace import` (docs/own-traffic.md).
   *
   * @default - no capture
   */
  readonly dataCapture?: DataCaptureOptions;

  /** @default - no autoscaling: the fleet stays at `instanceCount` */
  readonly autoScaling?: AutoScalingOptions;

  /**
   * How updates replace instances.
   *
   * @default - DeploymentPolicy.rolling() for 2+ instances (one instance per batch, rollback in the same batch
   * size, 5-minute bake, auto-rollback on the construct's error-rate and latency alarms); DeploymentPolicy.blueGreen() for one instance
   * (or an `autoScaling.minCapacity` of one, since a rolling batch must be at most half the current fleet)
   */
  readonly deployment?: DeploymentPolicy;

  /**
   * Dashboard, alarms and alarm notifications. Monitoring is on by default: turn parts off with
   * `{ dashboard: false }` or an alarm's `{ enabled: false }`.
   *
   * @default - a dashboard and every applicable alarm with its documented default, no notification topic
   */
  readonly monitoring?: EndpointMonitoringOptions;

  /**
   * Create a CloudWatch dashboard for the endpoint.
   *
   * @deprecated use `monitoring.dashboard`
   * @default true
   */
  readonly createDashboard?: boolean;

  /**
   * Extra production variants identical to the main one except their routing, to compare strategies side by side
   * (`prefix-router ab --variants`, requests pick one with `TargetVariant`). Each is a full fleet of `instanceCount`
   * instances. Needs `DeploymentPolicy.blueGreen()` (the default then): SageMaker rolls only single-variant endpoints.
   *
   * @default - none: one variant, `AllTraffic`
   */
  readonly routingVariants?: RoutingVariant[];
}

/** An endpoint the construct created or imported. */
export interface IPrefixAwareLlmEndpoint extends IResource {
  /** Endpoint name clients call. */
  readonly endpointName: string;
  /** Endpoint ARN (SageMaker lower-cases the name in it). */
  readonly endpointArn: string;
  /** Production variant name. */
  readonly variantName: string;

  /**
   * `sagemaker:InvokeEndpoint` on this endpoint only: it authorizes both `InvokeEndpoint` and
   * `InvokeEndpointWithResponseStream` (the IAM service authorization reference has no separate streaming action).
   */
  grantInvoke(grantee: iam.IGrantable): iam.Grant;

  /**
   * What the OpenAI-compatible path (`/endpoints/<name>/openai/v1/chat/completions`) needs: `grantInvoke` plus
   * `sagemaker:CallWithBearerToken`, which accepts only resource `*`.
   */
  grantInvokeOpenAiCompatible(grantee: iam.IGrantable): iam.Grant;

  /**
   * What `prefix-router ab` and `prefix-router bench --sagemaker-endpoint` need on this endpoint: invoke it,
   * describe and update it, create/describe/delete endpoint configurations, describe models, and read CloudWatch
   * metrics (see docs/validate.md for the same policy as JSON).
   */
  grantAbTesting(grantee: iam.IGrantable): iam.Grant;

  /** Any metric of the variant (`AWS/SageMaker` unless `namespace` is given). */
  metric(metricName: string, props?: EndpointMetricOptions): cloudwatch.Metric;
  metricInvocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricInvocationsPerInstance(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricModelLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricOverheadLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricConcurrentRequestsPerModel(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricInvocation4xxErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricInvocation5xxErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricGpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricGpuMemoryUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** 5XX responses in percent of requests (metric math). */
  metricInvocation5xxRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression;
  /** 4XX responses in percent of requests (metric math). */
  metricInvocation4xxRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression;
  /** Busiest ÷ mean instance of requests (SEARCH over `InstanceId`; dashboards only). Needs enhanced metrics. */
  metricInvocationsLoadSpread(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression;
  /** Busiest ÷ mean instance of in-flight requests (SEARCH; dashboards only). Needs enhanced metrics. */
  metricConcurrencyLoadSpread(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression;
  /** The busiest instance's in-flight requests (Metrics Insights; alarms can use it). Needs enhanced metrics. */
  metricMaxConcurrentRequestsPerInstance(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression;
  /** Requests of each instance, one series per `InstanceId` (SEARCH; dashboards only). Needs enhanced metrics. */
  metricInvocationsPerInstanceSeries(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression;
  /** In-flight requests of each instance, one series per `InstanceId` (SEARCH; dashboards only). Needs enhanced metrics. */
  metricConcurrentRequestsPerInstanceSeries(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression;
  /** Router sidecar: routed requests by decision reason (`PrefixRouter` namespace; SEARCH). */
  metricRoutingDecisions(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression;
  /** Router sidecar: time to first token in ms (p90). */
  metricRouterTimeToFirstToken(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** Router sidecar: engine-reported cached prompt tokens in percent of prompt tokens. */
  metricRouterReportedCacheHitRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression;
  /** Router sidecar: router-predicted cached prompt tokens in percent of prompt tokens. */
  metricRouterPredictedCacheHitRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression;
}

/** Attributes of an existing endpoint, for `PrefixAwareLlmEndpoint.fromEndpointAttributes`. */
export interface PrefixAwareLlmEndpointAttributes {
  readonly endpointName: string;
  /** @default PrefixAwareLlmEndpoint.VARIANT_NAME */
  readonly variantName?: string;
}

abstract class PrefixAwareLlmEndpointBase extends Resource implements IPrefixAwareLlmEndpoint {
  public abstract readonly endpointName: string;
  public abstract readonly endpointArn: string;
  public abstract readonly variantName: string;

  private metricsCache?: EndpointMetrics;

  /** The period metrics default to: the endpoint's publish frequency (60 s unless configured). */
  protected get metricsPeriod(): Duration | undefined {
    return undefined;
  }

  /** Whether invocation metrics are published at `metricsPeriod` (enhanced metrics on; the default). */
  protected get invocationMetricsAtPublishFrequency(): boolean {
    return true;
  }

  protected get metrics(): EndpointMetrics {
    this.metricsCache ??= new EndpointMetrics({
      endpointName: this.endpointName,
      variantName: this.variantName,
      period: this.metricsPeriod,
      invocationMetricsAtPublishFrequency: this.invocationMetricsAtPublishFrequency,
    });
    return this.metricsCache;
  }

  public grantInvoke(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({ grantee, actions: INVOKE_ENDPOINT_ACTIONS, resourceArns: [this.endpointArn] });
  }

  public grantInvokeOpenAiCompatible(grantee: iam.IGrantable): iam.Grant {
    const invoke = this.grantInvoke(grantee);
    const bearer = iam.Grant.addToPrincipal({ grantee, actions: CALL_WITH_BEARER_TOKEN_ACTIONS, resourceArns: ['*'] });
    return invoke.combine(bearer);
  }

  public grantAbTesting(grantee: iam.IGrantable): iam.Grant {
    return grantAbTestingTo(this, grantee, this.endpointArn);
  }

  public metric(metricName: string, props?: EndpointMetricOptions): cloudwatch.Metric {
    return this.metrics.metric(metricName, props);
  }
  public metricInvocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics.invocations(props);
  }
  public metricInvocationsPerInstance(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics.invocationsPerInstance(props);
  }
  public metricModelLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics.modelLatency(props);
  }
  public metricOverheadLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics.overheadLatency(props);
  }
  public metricConcurrentRequestsPerModel(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics.concurrentRequestsPerModel(props);
  }
  public metricInvocation4xxErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics.invocation4xxErrors(props);
  }
  public metricInvocation5xxErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics.invocation5xxErrors(props);
  }
  public metricGpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics.gpuUtilization(props);
  }
  public metricGpuMemoryUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics.gpuMemoryUtilization(props);
  }
  public metricInvocation5xxRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.metrics.invocation5xxRate(props);
  }
  public metricInvocation4xxRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.metrics.invocation4xxRate(props);
  }
  public metricInvocationsLoadSpread(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.metrics.invocationsLoadSpread(props);
  }
  public metricConcurrencyLoadSpread(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.metrics.concurrencyLoadSpread(props);
  }
  public metricMaxConcurrentRequestsPerInstance(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.metrics.maxConcurrentRequestsPerInstance(props);
  }
  public metricInvocationsPerInstanceSeries(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.metrics.perInstance('Invocations', 'Sum', props);
  }
  public metricConcurrentRequestsPerInstanceSeries(
    props?: cloudwatch.MathExpressionOptions,
  ): cloudwatch.MathExpression {
    return this.metrics.perInstance('ConcurrentRequestsPerModel', 'Maximum', props);
  }
  public metricRoutingDecisions(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.metrics.routingDecisions(props);
  }
  public metricRouterTimeToFirstToken(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metrics.routerTimeToFirstToken(props);
  }
  public metricRouterReportedCacheHitRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.metrics.routerReportedCacheHitRate(props);
  }
  public metricRouterPredictedCacheHitRate(props?: cloudwatch.MathExpressionOptions): cloudwatch.MathExpression {
    return this.metrics.routerPredictedCacheHitRate(props);
  }
}

/**
 * A multi-instance SageMaker real-time endpoint running vLLM with prefix caching, routed with
 * `RoutingStrategy: PREFIX_AWARE` by default.
 *
 * Children (fixed ids): `ExecutionRole` (unless `role` is given), `SecurityGroup` (with `vpc` and no
 * `securityGroups`), `Model`, `EndpointConfig`, `Endpoint`, the alarms `ErrorRateAlarm`, `ModelLatencyAlarm`,
 * `ConcurrencySaturationAlarm`, `GpuMemoryAlarm` (each unless disabled or not applicable),
 * `ScalableTarget` and `ConcurrencyScalingPolicy` (with `autoScaling`), `Dashboard` (unless `monitoring.dashboard` is false).
 */
export class PrefixAwareLlmEndpoint extends PrefixAwareLlmEndpointBase {
  /** The variant name; kept stable so updates never look like a new variant. */
  public static readonly VARIANT_NAME = 'AllTraffic';
  /** Default instance count. */
  public static readonly DEFAULT_INSTANCE_COUNT = DEFAULT_INSTANCE_COUNT;
  /** Default container start-up and model download timeouts. */
  public static readonly DEFAULT_TIMEOUT = Duration.minutes(30);
  /** Allowed range of both timeouts, in seconds. */
  public static readonly TIMEOUT_RANGE_SECONDS: IntegerRange = { min: 60, max: 3600 };

  /** An endpoint created elsewhere: grants and metrics only. */
  public static fromEndpointAttributes(
    scope: Construct,
    id: string,
    attrs: PrefixAwareLlmEndpointAttributes,
  ): IPrefixAwareLlmEndpoint {
    class Imported extends PrefixAwareLlmEndpointBase {
      public readonly endpointName = attrs.endpointName;
      public readonly variantName = attrs.variantName ?? PrefixAwareLlmEndpoint.VARIANT_NAME;
      public readonly endpointArn = Stack.of(scope).formatArn({
        service: 'sagemaker',
        resource: 'endpoint',
        // SageMaker ARNs carry the endpoint name in lower case.
        resourceName: Token.isUnresolved(attrs.endpointName) ? attrs.endpointName : attrs.endpointName.toLowerCase(),
      });
    }
    return new Imported(scope, id);
  }

  public readonly endpointName: string;
  public readonly endpointArn: string;
  public readonly variantName = PrefixAwareLlmEndpoint.VARIANT_NAME;

  /** The execution role (created or given). */
  public readonly role: iam.IRole;
  /** Security groups of the endpoint's network interfaces (empty without `vpc`). */
  public readonly securityGroups: ec2.ISecurityGroup[];
  /** Instance type of the variant. */
  public readonly instanceType: InstanceType;
  /** Routing strategy of the variant. */
  public readonly routing: RoutingStrategy;
  /** Tensor parallel size the engine runs with. */
  public readonly tensorParallelSize: number;
  /** Deployment policy in force. */
  public readonly deployment: DeploymentPolicy;
  /** Rollback alarms the construct created (empty when the policy does not use default alarms). */
  public readonly rollbackAlarms: cloudwatch.IAlarm[];
  /** The construct's alarms (see `monitoring`). */
  public readonly alarms: EndpointAlarms;
  /** Autoscaling resources, when `autoScaling` is set. */
  public readonly autoScaling?: VariantAutoScaling;
  /** The dashboard, unless `monitoring.dashboard` is false. */
  public readonly dashboard?: cloudwatch.Dashboard;

  private readonly publishFrequency?: Duration;
  private readonly enhancedMetrics: boolean;
  private readonly monitored: MonitoredEndpoint;
  private readonly createdAlarms: CreatedAlarms;

  /** Escape hatch: the `AWS::SageMaker::Model`. */
  public readonly cfnModel: sagemaker.CfnModel;
  /** Escape hatch: the `AWS::SageMaker::EndpointConfig`. */
  public readonly cfnEndpointConfig: sagemaker.CfnEndpointConfig;
  /** Escape hatch: the `AWS::SageMaker::Endpoint`. */
  public readonly cfnEndpoint: sagemaker.CfnEndpoint;

  constructor(scope: Construct, id: string, props: PrefixAwareLlmEndpointProps) {
    super(scope, id);
    const resolved = resolveEndpointSettings(props);
    const { instanceType, instanceTypes, instanceCount, routing, image, engine, deployment } = resolved;
    this.instanceType = instanceType;
    this.publishFrequency = props.metricsConfig?.publishFrequency;
    this.enhancedMetrics = props.metricsConfig?.enhancedMetrics ?? true;
    this.routing = routing;
    this.deployment = deployment;
    this.validate(props, resolved);
    this.tensorParallelSize = engine.tensorParallelSize ?? defaultTensorParallelSize(resolved.parallelism);
    this.warnAboutDoubtfulSettings(props, resolved);
    warnAboutMixedPools(this, props.instancePools, routing.isPrefixAware);
    annotateFleetPrice(
      this,
      {
        instanceType,
        instances: {
          min: props.autoScaling?.minCapacity ?? instanceCount,
          max: props.autoScaling?.maxCapacity ?? instanceCount,
        },
        fleets: 1 + (props.routingVariants?.length ?? 0),
        pooled: (props.instancePools?.length ?? 0) > 1,
      },
      props.instanceType === undefined && props.instancePools === undefined,
    );

    this.endpointName = endpointNameOf(this, props.endpointName);
    // Execution role: only what this endpoint needs.
    this.role =
      props.role ??
      createExecutionRole(
        this,
        'SageMaker execution role of a PrefixAwareLlmEndpoint: pulls its image, reads its model, writes its logs.',
      );
    this.grantRuntimeBasics();
    const vpcConfig = configureEndpointVpc(this, this.role, props, 'PrefixAwareLlmEndpoint');
    this.securityGroups = vpcConfig?.securityGroups ?? [];
    const imageConfig = image.bind(this, this.role, this.imageBindContext(props));
    this.cfnModel = this.createModel(props, engine, imageConfig, vpcConfig);
    this.cfnEndpointConfig = this.createEndpointConfig(props, resolved, imageConfig);

    const scalingTarget = props.autoScaling
      ? (props.autoScaling.targetConcurrentRequestsPerInstance ??
        defaultScalingTarget(routing.isPrefixAware ? routing.concurrencyThreshold : undefined))
      : undefined;
    const gpuCounts = [...new Set(instanceTypes.map((t) => t.gpuCount))];
    this.monitored = {
      metrics: this.metrics,
      concurrencyThreshold: routing.isPrefixAware ? routing.concurrencyThreshold : undefined,
      scalingTarget,
      gpuCount: gpuCounts.length === 1 ? gpuCounts[0] : undefined,
      gpuMemoryUtilization: engine.gpuMemoryUtilization,
      routerSidecarMetrics: props.monitoring?.routerSidecarMetrics ?? imageConfig.routerSidecarMetrics ?? false,
    };
    this.createdAlarms = createEndpointAlarms(this, this.monitored, props.monitoring);
    this.alarms = this.createdAlarms;
    this.rollbackAlarms = deployment.usesDefaultAlarms ? rollbackAlarmsOf(this.createdAlarms) : [];
    this.grantDescribeRollbackAlarms([...this.rollbackAlarms, ...deployment.extraAlarms]);
    this.warnAboutSlowRollbackAlarms(props, deployment);

    this.cfnEndpoint = this.createEndpoint(props, instanceCount, deployment);
    this.endpointArn = this.cfnEndpoint.attrEndpointArn;
    if (props.autoScaling && scalingTarget !== undefined) {
      // The resource id needs the endpoint to exist: reference its name attribute, not the plain string.
      this.autoScaling = addVariantAutoScaling(
        this,
        this.cfnEndpoint.attrEndpointName,
        this.variantName,
        props.autoScaling,
        scalingTarget,
      );
    }
    if (props.monitoring?.dashboard ?? props.createDashboard ?? true) {
      this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: props.monitoring?.dashboardName });
      this.addWidgetsTo(this.dashboard);
    }
    if (Construct.isConstruct(this.role)) flushWildcardAcknowledgements(this.role);
    acknowledgeComplianceFindings({
      createdRole: props.role ? undefined : this.role,
      nvmeEndpointConfig: instanceTypes.every((t) => t.hasLocalNvme) ? this.cfnEndpointConfig : undefined,
    });
  }

  /** The `AWS::SageMaker::Model`: the image, the engine's environment, the model's data and the network. */
  private createModel(
    props: PrefixAwareLlmEndpointProps,
    engine: VllmEngineOptions,
    imageConfig: VllmImageConfig,
    vpcConfig: EndpointNetwork | undefined,
  ): sagemaker.CfnModel {
    const modelConfig = props.model.bind(this, this.role);
    const environment: Record<string, string> = {
      ...imageConfig.environment,
      ...renderEngineEnvironment({
        convention: imageConfig.convention,
        model: modelConfig,
        options: engine,
        tensorParallelSize: this.tensorParallelSize,
      }),
    };
    if (imageConfig.routerSidecarMetrics) {
      // The sidecar's EMF metrics carry this as their EndpointName dimension (docs/operations.md, router sidecar).
      environment.PREFIX_ROUTER_EMF_ENDPOINT_NAME = this.endpointName;
    }
    const model = new sagemaker.CfnModel(this, 'Model', {
      executionRoleArn: this.role.roleArn,
      enableNetworkIsolation: props.enableNetworkIsolation ?? false,
      primaryContainer: {
        image: imageConfig.imageUri,
        mode: 'SingleModel',
        environment,
        modelDataSource: modelConfig.modelDataSource,
      },
      vpcConfig: renderVpcConfig(vpcConfig),
    });
    // SageMaker checks the role's access (image, model data) when the model and endpoint are created.
    model.node.addDependency(this.role);
    return model;
  }

  /** The `AWS::SageMaker::EndpointConfig`: the variant (and routing variants), its capacity, metrics, Data Capture. */
  private createEndpointConfig(
    props: PrefixAwareLlmEndpointProps,
    resolved: ResolvedEndpointSettings,
    imageConfig: VllmImageConfig,
  ): sagemaker.CfnEndpointConfig {
    return new sagemaker.CfnEndpointConfig(this, 'EndpointConfig', {
      kmsKeyId: props.encryptionKey?.keyArn,
      productionVariants: withRoutingVariants(
        {
          variantName: this.variantName,
          modelName: this.cfnModel.attrModelName,
          ...renderCapacity({
            instanceType: resolved.instanceType,
            instancePools: props.instancePools,
            capacityReservation: props.capacityReservation,
            provisionTimeout: props.variantInstanceProvisionTimeout,
          }),
          initialInstanceCount: resolved.instanceCount,
          initialVariantWeight: 1,
          inferenceAmiVersion: imageConfig.inferenceAmiVersion,
          containerStartupHealthCheckTimeoutInSeconds: wholeSeconds(
            props.containerStartupHealthCheckTimeout ?? PrefixAwareLlmEndpoint.DEFAULT_TIMEOUT,
          ),
          modelDataDownloadTimeoutInSeconds: wholeSeconds(
            props.modelDataDownloadTimeout ?? PrefixAwareLlmEndpoint.DEFAULT_TIMEOUT,
          ),
          routingConfig: resolved.routing._render(),
        },
        props.routingVariants,
      ),
      metricsConfig: renderMetricsConfig(props.metricsConfig),
      dataCaptureConfig: props.dataCapture && renderDataCapture(this, this.role, props.dataCapture),
    });
  }

  /** The `AWS::SageMaker::Endpoint`, deployed by the policy with the rollback alarms. */
  private createEndpoint(
    props: PrefixAwareLlmEndpointProps,
    instanceCount: number,
    deployment: DeploymentPolicy,
  ): sagemaker.CfnEndpoint {
    return new sagemaker.CfnEndpoint(this, 'Endpoint', {
      endpointName: this.endpointName,
      endpointConfigName: this.cfnEndpointConfig.attrEndpointConfigName,
      deploymentConfig: deployment._render(fleetSizeOf(instanceCount, props.autoScaling), [
        ...this.rollbackAlarms,
        ...deployment.extraAlarms,
      ]),
      // With autoscaling, keep the instance count the policy reached instead of resetting it on every update.
      retainAllVariantProperties: props.autoScaling ? true : undefined,
    });
  }

  /**
   * Adds this endpoint's widgets (traffic and load spread, per-instance in-flight requests with the
   * concurrencyThreshold, latency percentiles, error rates, GPUs, router sidecar and vLLM cache) to a dashboard
   * of your own, row by row.
   */
  public addWidgetsTo(dashboard: cloudwatch.Dashboard): void {
    for (const row of endpointDashboardRows(this.monitored, this.createdAlarms)) dashboard.addWidgets(...row);
  }

  protected override get metricsPeriod(): Duration | undefined {
    return this.publishFrequency;
  }

  protected override get invocationMetricsAtPublishFrequency(): boolean {
    return this.enhancedMetrics;
  }

  /** The execution role may read the rollback alarms (see `grantDescribeRollbackAlarms`). */
  private grantDescribeRollbackAlarms(alarms: cloudwatch.IAlarm[]): void {
    grantDescribeRollbackAlarms(this.role, alarms);
  }

  /** Logs and instance metrics: every endpoint needs them. */
  private grantRuntimeBasics(): void {
    grantEndpointRuntimeBasics(this, this.role, this.endpointName);
  }

  /** What the image is told of this endpoint: its name, and the start-up health check the sidecar's waits fit in. */
  private imageBindContext(props: PrefixAwareLlmEndpointProps): VllmImageBindContext {
    return {
      endpointName: this.endpointName,
      containerStartupHealthCheckTimeout:
        props.containerStartupHealthCheckTimeout ?? PrefixAwareLlmEndpoint.DEFAULT_TIMEOUT,
    };
  }

  private validate(props: PrefixAwareLlmEndpointProps, resolved: ResolvedEndpointSettings): void {
    const { instanceTypes, instanceCount, routing, image, engine, deployment } = resolved;
    const problems = new ProblemCollector();
    props.model._validate(problems);
    validateDataCapture(props.dataCapture, problems);
    image._validate(this, problems);
    validateEngineOptions(engine, image.convention, problems);
    validateEnvironmentCount(
      { convention: image.convention, model: props.model, engine, withLoraAdapters: false },
      problems,
    );
    validateCapacity(
      {
        instanceType: props.instancePools ? props.instanceType : undefined,
        instancePools: props.instancePools,
        capacityReservation: props.capacityReservation,
        provisionTimeout: props.variantInstanceProvisionTimeout,
      },
      problems,
    );
    const instanceTypeProp = props.instancePools ? 'instancePools' : 'instanceType';
    validateFleetProps(props, { instanceTypes, instanceTypeProp, instanceCount, routing }, problems);
    validateInstanceTypes(props, resolved, problems);
    validateIsolatedModel(props.enableNetworkIsolation, props.model, problems);
    const { min, max } = PrefixAwareLlmEndpoint.TIMEOUT_RANGE_SECONDS;
    problems.durationInRange('containerStartupHealthCheckTimeout', props.containerStartupHealthCheckTimeout, min, max);
    problems.durationInRange('modelDataDownloadTimeout', props.modelDataDownloadTimeout, min, max);
    if (props.autoScaling) {
      validateAutoScaling(
        props.autoScaling,
        {
          instanceCount,
          prefixAware: routing.isPrefixAware,
          allowSingleInstance: props.allowPrefixAwareOnSingleInstance ?? false,
          concurrencyThreshold: routing.concurrencyThreshold,
        },
        problems,
      );
    }
    deployment._validate(fleetSizeOf(instanceCount, props.autoScaling), rollbackAlarmCount(props.monitoring), problems);
    validateRoutingVariants(
      props.routingVariants,
      {
        mainVariantName: PrefixAwareLlmEndpoint.VARIANT_NAME,
        hasAutoScaling: props.autoScaling !== undefined,
        deploymentStyle: deployment.style,
        deploymentGiven: props.deployment !== undefined,
      },
      problems,
    );
    validateMonitoring(
      props.monitoring,
      { insightsPeriodSeconds: insightsPeriodSeconds(props.metricsConfig) },
      problems,
    );
    problems.throwIfAny(this);
  }

  private warnAboutSlowRollbackAlarms(props: PrefixAwareLlmEndpointProps, deployment: DeploymentPolicy): void {
    const warn = (id: string, message: string) => Annotations.of(this).addWarningV2(id, message);
    if (!deployment.usesDefaultAlarms || deployment.waitInterval.isUnresolved()) return;
    const period = this.metrics.invocationPeriod;
    if (period.isUnresolved()) return;
    const bake = deployment.waitInterval.toSeconds({ integral: false });
    for (const { alarm, seconds, datapoints } of rollbackAlarmDelays(props.monitoring, period.toSeconds())) {
      if (seconds <= bake) continue;
      warn(
        PrefixAwareLlmWarnings.ROLLBACK_ALARM_SLOWER_THAN_BAKE,
        `${alarm} needs ${datapoints} periods of ${period.toSeconds()} s (${seconds} s) to go into ALARM, longer than the deployment's ${bake}-s bake ` +
          '(waitInterval): SageMaker rolls back only on alarms that trip during a bake, so a broken last batch (or a whole blue/green fleet) ' +
          `is kept. Raise deployment waitInterval to at least ${seconds} s, or lower metricsConfig.publishFrequency or the alarm's datapointsToAlarm.`,
      );
    }
  }

  /** Settings that synthesize but probably do not do what was meant: each a warning that can be acknowledged. */
  private warnAboutDoubtfulSettings(props: PrefixAwareLlmEndpointProps, resolved: ResolvedEndpointSettings): void {
    this.warnAboutEngineSettings(props, resolved);
    this.warnAboutRoutingAndDeployment(props, resolved);
  }

  /** Prefix caching off, a token in the environment, GPUs left idle, a model whose heads the construct cannot check. */
  private warnAboutEngineSettings(props: PrefixAwareLlmEndpointProps, resolved: ResolvedEndpointSettings): void {
    const { instanceType, routing, engine, parallelism } = resolved;
    const warn = (id: string, message: string) => Annotations.of(this).addWarningV2(id, message);

    if (routing.isPrefixAware && engine.enablePrefixCaching === false) {
      warn(
        PrefixAwareLlmWarnings.PREFIX_CACHING_DISABLED,
        'engine.enablePrefixCaching is false under PREFIX_AWARE routing: requests are kept on the instance that served their prefix, ' +
          'but no instance keeps a prefix cache, so affinity only costs load balance.',
      );
    }
    if (props.model.resolvesSecretIntoEnvironment) {
      warn(
        PrefixAwareLlmWarnings.HF_TOKEN_IN_MODEL_ENVIRONMENT,
        'The Hugging Face token is a CloudFormation dynamic reference: not in the template, but resolved at deploy time into the ' +
          'SageMaker model environment (HF_TOKEN), readable by anyone allowed sagemaker:DescribeModel. For production, stage the ' +
          'weights in S3 and use ModelSource.s3().',
      );
    }
    const gpus = instanceType.gpuCount;
    if (gpus !== undefined && isKnownInteger(this.tensorParallelSize)) {
      const used = gpusUsed(this.tensorParallelSize, engine, parallelism.enginesPerInstance);
      if (used < gpus && gpus % this.tensorParallelSize === 0) {
        warn(
          PrefixAwareLlmWarnings.UNUSED_GPUS,
          `vLLM uses ${used} of the ${gpus} GPUs of ${instanceType.name}; set engine.extraArgs['data-parallel-size'] to ` +
            `${gpus / this.tensorParallelSize} to serve ${gpus / this.tensorParallelSize} replicas per instance, or pick a smaller instance type.`,
        );
      }
    }
    if (parallelism.heads === undefined && engine.tensorParallelSize === undefined && this.tensorParallelSize > 1) {
      const model = parallelism.modelId ?? 'the model from S3';
      warn(
        PrefixAwareLlmWarnings.MODEL_HEADS_UNKNOWN,
        `vLLM runs ${model} with tensor parallel size ${this.tensorParallelSize} (the GPUs ${parallelism.enginesPerInstance === undefined ? `of ${instanceType.name}` : 'of each engine'}), ` +
          `which the construct cannot check: ${model} is not in its catalogue of attention-head counts. vLLM exits at start, after the instances ` +
          `are paid for, unless num_attention_heads in the model's config.json divides by ${this.tensorParallelSize}; set engine.tensorParallelSize ` +
          'to a size it divides (which also silences this warning).',
      );
    }
  }

  /** Routing settings the engine defeats, a blue/green fleet doubled, autoscaling's fixed type, no rollback alarms. */
  private warnAboutRoutingAndDeployment(props: PrefixAwareLlmEndpointProps, resolved: ResolvedEndpointSettings): void {
    const { instanceType, instanceCount, routing, engine, deployment } = resolved;
    const warn = (id: string, message: string) => Annotations.of(this).addWarningV2(id, message);
    const maxModelLen = engine.maxModelLen;
    if (
      routing.isPrefixAware &&
      isKnownInteger(maxModelLen) &&
      isKnownInteger(routing.prefixLength) &&
      routing.prefixLength > maxModelLen * CHARS_PER_TOKEN
    ) {
      warn(
        PrefixAwareLlmWarnings.PREFIX_LONGER_THAN_CONTEXT,
        `routing.prefixLength ${routing.prefixLength} (≈ ${Math.ceil(routing.prefixLength / CHARS_PER_TOKEN)} tokens) is longer than ` +
          `engine.maxModelLen ${maxModelLen} tokens: every key is the whole prompt, so a follow-up turn never matches the key of the turn ` +
          'before it; choose a prefixLength that covers the shared prefix, not the whole prompt.',
      );
    }
    const maxNumSeqs = engine.maxNumSeqs;
    if (
      routing.isPrefixAware &&
      isKnownInteger(maxNumSeqs) &&
      isKnownInteger(routing.concurrencyThreshold) &&
      routing.concurrencyThreshold > maxNumSeqs
    ) {
      warn(
        PrefixAwareLlmWarnings.THRESHOLD_ABOVE_MAX_NUM_SEQS,
        `routing.concurrencyThreshold ${routing.concurrencyThreshold} is above engine.maxNumSeqs ${maxNumSeqs}: requests queue inside ` +
          'vLLM before SageMaker spills them to another instance.',
      );
    }
    if (props.deployment && deployment.style === 'BLUE_GREEN' && isKnownInteger(instanceCount) && instanceCount >= 2) {
      warn(
        PrefixAwareLlmWarnings.BLUE_GREEN_DOUBLES_FLEET,
        `deployment is blue/green on ${instanceCount} × ${instanceType.name}: every update first provisions a second complete fleet ` +
          `(${2 * instanceCount} instances at once, so twice the hourly cost while it runs and an instance quota of at least ${2 * instanceCount}), ` +
          'and fails when that capacity is not available. DeploymentPolicy.rolling() replaces one batch at a time.',
      );
    }
    if (props.autoScaling) {
      warn(
        PrefixAwareLlmWarnings.AUTOSCALED_INSTANCE_TYPE_FIXED,
        'autoScaling registers the variant with Application Auto Scaling, and SageMaker then refuses any update that changes its instance type ' +
          '(https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling-update.html): a later deploy that changes instanceType or ' +
          'instancePools fails. To change them, deploy once without autoScaling (deregisters the variant), then deploy the new instance type, ' +
          'then add autoScaling back; model and setting changes deploy as usual. See docs/operations.md#changing-the-instance-type-of-an-autoscaled-endpoint.',
      );
    }
    if (!deployment.usesDefaultAlarms && deployment.extraAlarms.length === 0) {
      warn(
        PrefixAwareLlmWarnings.DEPLOYMENT_WITHOUT_ALARMS,
        'The deployment policy has no alarms: a broken update is not rolled back automatically.',
      );
    }
  }
}

/** The props with their defaults: what validation, warnings and resources all read. */
interface ResolvedEndpointSettings {
  /** The variant's instance type (the first pool's with `instancePools`). */
  readonly instanceType: InstanceType;
  /** Every instance type the variant may run: the pools, or the one type. */
  readonly instanceTypes: InstanceType[];
  readonly instanceCount: number;
  readonly routing: RoutingStrategy;
  readonly image: VllmImage;
  readonly engine: VllmEngineOptions;
  readonly deployment: DeploymentPolicy;
  readonly parallelism: ParallelismInput;
}

function resolveEndpointSettings(props: PrefixAwareLlmEndpointProps): ResolvedEndpointSettings {
  const fleet = fleetWithDefaults(props);
  const instanceType = props.instancePools?.[0] ?? fleet.instanceType;
  const { instanceCount, routing } = fleet;
  const image = props.image ?? VllmImage.dlc();
  const engine = props.engine ?? {};
  // The smallest fleet an update may meet decides the default: rolling batches must be 5–50 % of the current count.
  const smallestFleet = props.autoScaling?.minCapacity ?? instanceCount;
  const deployment =
    props.deployment ??
    (props.routingVariants?.length
      ? DeploymentPolicy.blueGreen()
      : DeploymentPolicy.defaultFor(isKnownInteger(smallestFleet) ? smallestFleet : 2));
  const modelId = props.model._huggingFaceModelId();
  return {
    instanceType,
    instanceTypes: props.instancePools && props.instancePools.length > 0 ? props.instancePools : [instanceType],
    instanceCount,
    routing,
    image,
    engine,
    deployment,
    parallelism: {
      instanceType,
      engine,
      enginesPerInstance: image._enginesPerInstance(),
      modelId,
      heads: modelHeads(modelId),
    },
  };
}

/** Each instance type against the engine's parallelism and the model's heads, pools against one another and the key. */
function validateInstanceTypes(
  props: PrefixAwareLlmEndpointProps,
  resolved: ResolvedEndpointSettings,
  problems: ProblemCollector,
): void {
  const { instanceTypes, engine, parallelism } = resolved;
  for (const instanceType of instanceTypes) {
    validateInstanceParallelism(instanceType, engine, problems);
    validateModelParallelism({ ...parallelism, instanceType }, problems);
  }
  const gpuCounts = [...new Set(instanceTypes.map((t) => t.gpuCount))];
  if (engine.tensorParallelSize === undefined && gpuCounts.length > 1) {
    problems.add(
      'engine.tensorParallelSize is required because the instancePools have different GPU counts ' +
        `(${gpuCounts.map(String).join(', ')}); choose one that divides all of them (got no tensorParallelSize)`,
    );
  }
  for (const instanceType of instanceTypes) {
    if (props.encryptionKey && instanceType.hasLocalNvme) {
      problems.add(
        `encryptionKey cannot be used with ${instanceType.name}: it has local NVMe storage, which SageMaker encrypts in hardware and for which it rejects a KmsKeyId (got a key)`,
      );
    }
  }
}

/** The fleet sizes an update may meet: the initial count, or every count autoscaling allows. */
function fleetSizeOf(instanceCount: number, autoScaling: AutoScalingOptions | undefined): FleetSize {
  return { instanceCount, minCapacity: autoScaling?.minCapacity, maxCapacity: autoScaling?.maxCapacity };
}
