// The public API, named one by one: what jsii publishes to every CDK language is exactly what is listed here.
// Module-level constants and functions stay internal (jsii cannot carry them to other languages).
export { PrefixAwareLlmEndpointBaseProps } from './endpoint-base-props';
export {
  IPrefixAwareLlmEndpoint,
  PrefixAwareLlmEndpoint,
  PrefixAwareLlmEndpointAttributes,
  PrefixAwareLlmEndpointProps,
  PrefixAwareLlmInfos,
  PrefixAwareLlmValidationError,
  PrefixAwareLlmWarnings,
} from './prefix-aware-llm-endpoint';
export { IntegerRange, PrefixAwareRoutingOptions, RoutingStrategy, RoutingStrategyKind } from './routing-strategy';
export {
  DlcImageOptions,
  EcrImageOptions,
  InferenceAmiVersion,
  LmiImageOptions,
  VllmImage,
  VllmImageBindContext,
  VllmImageConfig,
} from './vllm-image';
export { RouterSidecarImageOptions, RouterSidecarMode } from './router-sidecar-image';
export { EngineEnvConvention, VllmEngineOptions } from './vllm-engine-options';
export {
  HuggingFaceModelOptions,
  ModelSource,
  ModelSourceConfig,
  ModelSourceKind,
  S3ModelOptions,
} from './model-source';
export { InstanceType, InstanceTypeSpec } from './instance-type';
export {
  AutoScalingOptions,
  ComponentDeploymentOptions,
  CopyAutoScaling,
  CopyAutoScalingOptions,
  VariantAutoScaling,
} from './autoscaling';
export {
  BlueGreenDeploymentOptions,
  DeploymentAlarmOptions,
  DeploymentPolicy,
  RollingDeploymentOptions,
  TrafficShift,
} from './deployment';
export {
  EndpointAlarmOptions,
  EndpointAlarms,
  EndpointMetricOptions,
  EndpointMetrics,
  EndpointMetricsConfig,
  EndpointMetricTarget,
  EndpointMonitoringOptions,
  ErrorRateAlarmOptions,
  LoadSpreadAlarmOptions,
} from './monitoring';
export { CapacityReservation } from './capacity';
export { DataCaptureMode, DataCaptureOptions } from './data-capture';
export { RoutingVariant } from './routing-variants';
export {
  AdapterSource,
  AdapterSourceConfig,
  AdapterSourceOptions,
  LlmInferenceComponent,
  LlmInferenceComponentOptions,
  LlmInferenceComponentProps,
  LoraAdapterComponent,
  LoraAdapterComponentProps,
  LoraAdapterOptions,
  ManagedInstanceScalingOptions,
  PrefixAwareLlmComponentEndpoint,
  PrefixAwareLlmComponentEndpointProps,
} from './inference-components';
