/**
 * SageMaker inference component rules (endpoint configuration, components, adapters, copy autoscaling, scale to zero),
 * each from the page it cites.
 */
import { AwsRule, RuleFinding } from './rule';
import { flatten, referencedId, resourcesOfType, TemplateJson } from './template';

const CREATE_ENDPOINT_CONFIG =
  'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateEndpointConfig.html';
const SPECIFICATION =
  'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentSpecification.html';
const COMPUTE =
  'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentComputeResourceRequirements.html';
const RUNTIME_CONFIG =
  'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentRuntimeConfig.html';
const CREATE_COMPONENT = 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateInferenceComponent.html';
const MANAGED_SCALING =
  'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariantManagedInstanceScaling.html';
const REGISTER_TARGET =
  'https://docs.aws.amazon.com/autoscaling/application/APIReference/API_RegisterScalableTarget.html';
const PREDEFINED_METRIC =
  'https://docs.aws.amazon.com/autoscaling/application/APIReference/API_PredefinedMetricSpecification.html';
const IC_ROLLING =
  'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentRollingUpdatePolicy.html';
const SCALE_TO_ZERO = 'https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html';
const VPC_CONFIG = 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_VpcConfig.html';

/** InferenceComponentName / BaseInferenceComponentName: at most 63 characters, `^[a-zA-Z0-9]([\-a-zA-Z0-9]*[a-zA-Z0-9])?$`. */
const COMPONENT_NAME = /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/;

function rule(
  id: string,
  doc: string,
  statement: string,
  check: (template: TemplateJson, finding: (resource: string, message: string) => RuleFinding) => RuleFinding[],
): AwsRule {
  return {
    id,
    doc,
    statement,
    check: (template) => check(template, (resource, message) => ({ rule: id, resource, message })),
  };
}

function components(template: TemplateJson) {
  return resourcesOfType(template, 'AWS::SageMaker::InferenceComponent');
}

/** The endpoint resource a component's EndpointName references, when it is in the template. */
function endpointIdOf(component: Record<string, any>): string | undefined {
  return referencedId(component.EndpointName);
}

/** Logical ids of endpoints that host components (referenced by a component's EndpointName). */
function hostingEndpointIds(template: TemplateJson): Set<string> {
  return new Set(
    components(template)
      .map(([, c]) => endpointIdOf(c))
      .filter((id): id is string => id !== undefined),
  );
}

/** The endpoint configuration behind an endpoint that hosts components, with its logical id. */
function hostingConfigs(template: TemplateJson): Array<[string, Record<string, any>]> {
  return [...hostingEndpointIds(template)].flatMap((endpointId) => {
    const configId = referencedId(template.Resources?.[endpointId]?.Properties?.EndpointConfigName);
    const config = configId ? template.Resources?.[configId]?.Properties : undefined;
    return config && configId ? [[configId, config] as [string, Record<string, any>]] : [];
  });
}

/**
 * The Hugging Face model id a container downloads at start: `HF_MODEL_ID` or `SM_VLLM_MODEL` naming a hub id rather than
 * a local path (the construct points both at /opt/ml/model for S3 weights).
 */
function hubModelOf(model: Record<string, any> | undefined): string | undefined {
  const env = model?.PrimaryContainer?.Environment ?? {};
  for (const key of ['HF_MODEL_ID', 'SM_VLLM_MODEL']) {
    const value = env[key];
    if (typeof value === 'string' && !value.startsWith('/')) return value;
  }
  return undefined;
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** The name a component is known by in the template: its literal name, else its logical id. */
function nameOf(id: string, component: Record<string, any>): string {
  return component.InferenceComponentName !== undefined ? flatten(component.InferenceComponentName) : `<${id}>`;
}

export const INFERENCE_COMPONENT_RULES: readonly AwsRule[] = [
  rule(
    'SM-IC-ENDPOINT-CONFIG',
    CREATE_ENDPOINT_CONFIG,
    'The endpoint configuration of an endpoint that hosts inference components names the execution role (ExecutionRoleArn) and no model on its variants; each variant has an InstanceType.',
    (template, finding) =>
      [...hostingEndpointIds(template)].flatMap((endpointId) => {
        const configId = referencedId(template.Resources?.[endpointId]?.Properties?.EndpointConfigName);
        const config = configId ? template.Resources?.[configId]?.Properties : undefined;
        if (!config || !configId) return [];
        const out: RuleFinding[] = [];
        if (config.ExecutionRoleArn === undefined)
          out.push(finding(configId, 'no ExecutionRoleArn, which an endpoint with inference components needs'));
        for (const variant of config.ProductionVariants ?? []) {
          if (variant.ModelName !== undefined)
            out.push(finding(configId, `variant ${variant.VariantName} names a model; components bring their own`));
          if (variant.InstanceType === undefined && variant.InstancePools === undefined)
            out.push(finding(configId, `variant ${variant.VariantName} has no InstanceType`));
        }
        return out;
      }),
  ),

  rule(
    'SM-IC-NAME',
    CREATE_COMPONENT,
    'InferenceComponentName and BaseInferenceComponentName are 1–63 letters, digits and hyphens, starting and ending with a letter or digit.',
    (template, finding) =>
      components(template).flatMap(([id, component]) => {
        const out: RuleFinding[] = [];
        for (const [field, value] of [
          ['InferenceComponentName', component.InferenceComponentName],
          ['BaseInferenceComponentName', component.Specification?.BaseInferenceComponentName],
        ] as const) {
          if (typeof value !== 'string') continue;
          if (value.length > 63 || !COMPONENT_NAME.test(value)) out.push(finding(id, `${field} '${value}'`));
        }
        return out;
      }),
  ),

  rule(
    'SM-IC-BASE-COMPUTE',
    COMPUTE,
    `A component that is not an adapter has ComputeResourceRequirements with MinMemoryRequiredInMb ≥ 128 (required), NumberOfAcceleratorDevicesRequired ≥ 1, NumberOfCpuCoresRequired ≥ 0.25 and MaxMemoryRequiredInMb ≥ 128 where set, a model (ModelName or Container), and RuntimeConfig.CopyCount, an integer ≥ 0 (${RUNTIME_CONFIG}).`,
    (template, finding) =>
      components(template)
        .filter(([, c]) => c.Specification?.BaseInferenceComponentName === undefined)
        .flatMap(([id, component]) => {
          const spec = component.Specification ?? {};
          const compute = spec.ComputeResourceRequirements;
          const out: RuleFinding[] = [];
          if (!compute) return [finding(id, 'no ComputeResourceRequirements')];
          if (!(
            isNumber(compute.MinMemoryRequiredInMb) &&
            Number.isInteger(compute.MinMemoryRequiredInMb) &&
            compute.MinMemoryRequiredInMb >= 128
          )) {
            out.push(
              finding(id, `MinMemoryRequiredInMb ${compute.MinMemoryRequiredInMb} (an integer ≥ 128, required)`),
            );
          }
          if (
            compute.MaxMemoryRequiredInMb !== undefined &&
            !(isNumber(compute.MaxMemoryRequiredInMb) && compute.MaxMemoryRequiredInMb >= 128)
          ) {
            out.push(finding(id, `MaxMemoryRequiredInMb ${compute.MaxMemoryRequiredInMb} (≥ 128)`));
          }
          if (
            compute.NumberOfAcceleratorDevicesRequired !== undefined &&
            !(isNumber(compute.NumberOfAcceleratorDevicesRequired) && compute.NumberOfAcceleratorDevicesRequired >= 1)
          ) {
            out.push(
              finding(id, `NumberOfAcceleratorDevicesRequired ${compute.NumberOfAcceleratorDevicesRequired} (≥ 1)`),
            );
          }
          if (
            compute.NumberOfCpuCoresRequired !== undefined &&
            !(isNumber(compute.NumberOfCpuCoresRequired) && compute.NumberOfCpuCoresRequired >= 0.25)
          ) {
            out.push(finding(id, `NumberOfCpuCoresRequired ${compute.NumberOfCpuCoresRequired} (≥ 0.25)`));
          }
          if (spec.ModelName === undefined && spec.Container === undefined)
            out.push(finding(id, 'neither ModelName nor Container'));
          const copies = component.RuntimeConfig?.CopyCount;
          if (!(isNumber(copies) && Number.isInteger(copies) && copies >= 0))
            out.push(finding(id, `RuntimeConfig.CopyCount ${copies} (an integer ≥ 0, required)`));
          return out;
        }),
  ),

  rule(
    'SM-IC-ADAPTER',
    SPECIFICATION,
    `An adapter component (BaseInferenceComponentName) omits ComputeResourceRequirements, gives its artefacts as Container.ArtifactUrl (an s3:// URI), and its base is an existing component of the same endpoint that holds the foundation model, not an adapter.`,
    (template, finding) => {
      const all = components(template);
      return all
        .filter(([, c]) => c.Specification?.BaseInferenceComponentName !== undefined)
        .flatMap(([id, adapter]) => {
          const spec = adapter.Specification;
          const out: RuleFinding[] = [];
          if (spec.ComputeResourceRequirements !== undefined)
            out.push(finding(id, "an adapter has ComputeResourceRequirements (it uses its base's)"));
          const url = flatten(spec.Container?.ArtifactUrl);
          if (!url.startsWith('s3://')) out.push(finding(id, `Container.ArtifactUrl '${url}' is not an s3:// URI`));
          const baseName = flatten(spec.BaseInferenceComponentName);
          const base = all.find(([otherId, other]) => otherId !== id && nameOf(otherId, other) === baseName);
          if (!base) {
            out.push(finding(id, `base ${baseName} is no inference component of this template`));
          } else {
            if (base[1].Specification?.BaseInferenceComponentName !== undefined)
              out.push(finding(id, `base ${baseName} is itself an adapter`));
            if (flatten(base[1].EndpointName) !== flatten(adapter.EndpointName))
              out.push(finding(id, `base ${baseName} is on another endpoint`));
          }
          return out;
        });
    },
  ),

  rule(
    'SM-IC-MANAGED-SCALING',
    MANAGED_SCALING,
    `ManagedInstanceScaling: Status ENABLED or DISABLED, MinInstanceCount ≥ 0, MaxInstanceCount ≥ 1 and ≥ MinInstanceCount; MinInstanceCount 0 only on an endpoint that hosts inference components (${SCALE_TO_ZERO}).`,
    (template, finding) =>
      resourcesOfType(template, 'AWS::SageMaker::EndpointConfig').flatMap(([configId, config]) => {
        const hosts = [...hostingEndpointIds(template)].some(
          (endpointId) => referencedId(template.Resources?.[endpointId]?.Properties?.EndpointConfigName) === configId,
        );
        return (config.ProductionVariants ?? []).flatMap((variant: Record<string, any>) => {
          const scaling = variant.ManagedInstanceScaling;
          if (!scaling) return [];
          const out: RuleFinding[] = [];
          if (scaling.Status !== undefined && !['ENABLED', 'DISABLED'].includes(scaling.Status))
            out.push(finding(configId, `Status ${scaling.Status}`));
          const { MinInstanceCount: min, MaxInstanceCount: max } = scaling;
          if (min !== undefined && !(Number.isInteger(min) && min >= 0))
            out.push(finding(configId, `MinInstanceCount ${min} (≥ 0)`));
          if (max !== undefined && !(Number.isInteger(max) && max >= 1))
            out.push(finding(configId, `MaxInstanceCount ${max} (≥ 1)`));
          if (isNumber(min) && isNumber(max) && min > max)
            out.push(finding(configId, `MinInstanceCount ${min} > MaxInstanceCount ${max}`));
          if (min === 0 && !hosts)
            out.push(finding(configId, 'MinInstanceCount 0 on an endpoint without inference components'));
          return out;
        });
      }),
  ),

  rule(
    'SM-IC-COPY-SCALING',
    REGISTER_TARGET,
    `An inference component registers as ResourceId inference-component/NAME with ScalableDimension sagemaker:inference-component:DesiredCopyCount, MinCapacity ≥ 0; its target-tracking policies use the SageMakerInferenceComponent* predefined metrics (${PREDEFINED_METRIC}).`,
    (template, finding) => {
      const names = new Set(components(template).map(([id, c]) => nameOf(id, c)));
      const targets = resourcesOfType(template, 'AWS::ApplicationAutoScaling::ScalableTarget').filter(
        ([, t]) => t.ServiceNamespace === 'sagemaker',
      );
      const out: RuleFinding[] = [];
      for (const [id, target] of targets) {
        const resource = flatten(target.ResourceId);
        const isComponent = resource.startsWith('inference-component/');
        const isCopyDimension = target.ScalableDimension === 'sagemaker:inference-component:DesiredCopyCount';
        if (isComponent !== isCopyDimension)
          out.push(finding(id, `ResourceId ${resource} with ScalableDimension ${target.ScalableDimension}`));
        if (!isComponent) continue;
        if (!names.has(resource.slice('inference-component/'.length)))
          out.push(finding(id, `${resource} names no inference component of this template`));
        if (!(Number.isInteger(target.MinCapacity) && target.MinCapacity >= 0))
          out.push(finding(id, `MinCapacity ${target.MinCapacity} (≥ 0)`));
        for (const [policyId, policy] of resourcesOfType(template, 'AWS::ApplicationAutoScaling::ScalingPolicy')) {
          if (referencedId(policy.ScalingTargetId) !== id || policy.PolicyType !== 'TargetTrackingScaling') continue;
          const metric =
            policy.TargetTrackingScalingPolicyConfiguration?.PredefinedMetricSpecification?.PredefinedMetricType;
          if (metric !== undefined && !String(metric).startsWith('SageMakerInferenceComponent'))
            out.push(finding(policyId, `predefined metric ${metric} is not a per-copy metric`));
        }
      }
      return out;
    },
  ),

  rule(
    'SM-IC-ROLLING-POLICY',
    IC_ROLLING,
    "A component's rolling update: WaitIntervalInSeconds 0–3600 (required), MaximumExecutionTimeoutInSeconds 600–28,800, MaximumBatchSize (required) and RollbackMaximumBatchSize of COPY_COUNT between 5 % and 50 % of the copy count (every count its scalable target allows), or of CAPACITY_PERCENT 5–50; rollback alarms are alarms of the template or named ones.",
    (template, finding) =>
      components(template).flatMap(([id, component]) => {
        const policy = component.DeploymentConfig?.RollingUpdatePolicy;
        if (!policy) return [];
        const out: RuleFinding[] = [];
        const inRange = (v: unknown, min: number, max: number) =>
          isNumber(v) && Number.isInteger(v) && v >= min && v <= max;
        if (!inRange(policy.WaitIntervalInSeconds, 0, 3600))
          out.push(finding(id, `WaitIntervalInSeconds ${policy.WaitIntervalInSeconds} (0–3600, required)`));
        if (
          policy.MaximumExecutionTimeoutInSeconds !== undefined &&
          !inRange(policy.MaximumExecutionTimeoutInSeconds, 600, 28_800)
        ) {
          out.push(
            finding(id, `MaximumExecutionTimeoutInSeconds ${policy.MaximumExecutionTimeoutInSeconds} (600–28800)`),
          );
        }
        if (!policy.MaximumBatchSize) out.push(finding(id, 'no MaximumBatchSize'));
        const name = nameOf(id, component);
        const counts = [
          component.RuntimeConfig?.CopyCount,
          ...resourcesOfType(template, 'AWS::ApplicationAutoScaling::ScalableTarget')
            .filter(([, t]) => flatten(t.ResourceId) === `inference-component/${name}`)
            .flatMap(([, t]) => [t.MinCapacity, t.MaxCapacity]),
        ].filter(isNumber);
        for (const [field, size] of [
          ['MaximumBatchSize', policy.MaximumBatchSize],
          ['RollbackMaximumBatchSize', policy.RollbackMaximumBatchSize],
        ] as const) {
          if (!size) continue;
          if (size.Type === 'CAPACITY_PERCENT' && !inRange(size.Value, 5, 50))
            out.push(finding(id, `${field} ${size.Value} % (5–50)`));
          if (size.Type === 'COPY_COUNT') {
            for (const count of counts) {
              if (!(
                isNumber(size.Value) &&
                size.Value >= Math.max(1, Math.ceil(count * 0.05)) &&
                size.Value <= Math.floor(count * 0.5)
              )) {
                out.push(finding(id, `${field} ${size.Value} of ${count} copies (5–50 %)`));
              }
            }
          }
        }
        for (const alarm of component.DeploymentConfig?.AutoRollbackConfiguration?.Alarms ?? []) {
          const target = referencedId(alarm.AlarmName);
          if (
            target !== undefined &&
            template.Resources?.[target]?.Type !== 'AWS::CloudWatch::Alarm' &&
            template.Resources?.[target]?.Type !== 'AWS::CloudWatch::CompositeAlarm'
          ) {
            out.push(finding(id, `rollback alarm ${flatten(alarm.AlarmName)} is not an alarm of this template`));
          }
        }
        return out;
      }),
  ),

  rule(
    'SM-IC-SCALE-FROM-ZERO',
    SCALE_TO_ZERO,
    'A component that may scale to zero copies (MinCapacity 0) needs a step scaling policy on its target that a CloudWatch alarm on NoCapacityInvocationFailures of that component triggers; target tracking alone never adds the first copy. Only components scale to zero: a variant target (DesiredInstanceCount) has MinCapacity ≥ 1.',
    (template, finding) => {
      const targets = resourcesOfType(template, 'AWS::ApplicationAutoScaling::ScalableTarget').filter(
        ([, t]) => t.ServiceNamespace === 'sagemaker' && t.MinCapacity === 0,
      );
      const policies = resourcesOfType(template, 'AWS::ApplicationAutoScaling::ScalingPolicy');
      const alarms = resourcesOfType(template, 'AWS::CloudWatch::Alarm');
      return targets.flatMap(([id, target]) => {
        if (target.ScalableDimension === 'sagemaker:variant:DesiredInstanceCount')
          return [
            finding(
              id,
              'a variant scales to zero instances only through managed instance scaling of inference components',
            ),
          ];
        const component = flatten(target.ResourceId).slice('inference-component/'.length);
        const steps = policies.filter(
          ([, p]) => referencedId(p.ScalingTargetId) === id && p.PolicyType === 'StepScaling',
        );
        const triggered = steps.some(([stepId]) =>
          alarms.some(
            ([, alarm]) =>
              alarm.MetricName === 'NoCapacityInvocationFailures' &&
              (alarm.Dimensions ?? []).some(
                (d: { Name: string; Value: unknown }) =>
                  d.Name === 'InferenceComponentName' && flatten(d.Value) === component,
              ) &&
              (alarm.AlarmActions ?? []).some((action: unknown) => referencedId(action) === stepId),
          ),
        );
        return triggered
          ? []
          : [
              finding(
                id,
                `component ${component} may scale to zero copies but no NoCapacityInvocationFailures alarm triggers a step policy on it`,
              ),
            ];
      });
    },
  ),

  rule(
    'SM-IC-VPC-CONFIG',
    VPC_CONFIG,
    'A VpcConfig (on an endpoint configuration that hosts components, or on a model) lists 1–5 SecurityGroupIds and 1–16 Subnets.',
    (template, finding) =>
      [...hostingConfigs(template), ...resourcesOfType(template, 'AWS::SageMaker::Model')].flatMap(([id, props]) => {
        const vpc = props.VpcConfig;
        if (vpc === undefined) return [];
        const groups = Array.isArray(vpc.SecurityGroupIds) ? vpc.SecurityGroupIds.length : undefined;
        const subnets = Array.isArray(vpc.Subnets) ? vpc.Subnets.length : undefined;
        const out: RuleFinding[] = [];
        if (groups !== undefined && (groups < 1 || groups > 5))
          out.push(finding(id, `VpcConfig lists ${groups} security groups (1–5)`));
        if (subnets !== undefined && (subnets < 1 || subnets > 16))
          out.push(finding(id, `VpcConfig lists ${subnets} subnets (1–16)`));
        return out;
      }),
  ),

  rule(
    'SM-IC-NETWORK-ISOLATION',
    CREATE_ENDPOINT_CONFIG,
    "EnableNetworkIsolation on the endpoint configuration isolates all model containers deployed to the endpoint (no inbound or outbound calls), so no component's model may download its weights from Hugging Face at start; adapters' ArtifactUrl archives are fetched by SageMaker and stay allowed.",
    (template, finding) => {
      const isolatedEndpoints = new Set(
        [...hostingEndpointIds(template)].filter((endpointId) => {
          const configId = referencedId(template.Resources?.[endpointId]?.Properties?.EndpointConfigName);
          return configId !== undefined && template.Resources?.[configId]?.Properties?.EnableNetworkIsolation === true;
        }),
      );
      return components(template).flatMap(([id, component]) => {
        const endpointId = endpointIdOf(component);
        if (endpointId === undefined || !isolatedEndpoints.has(endpointId)) return [];
        const modelId = referencedId(component.Specification?.ModelName);
        const hub = hubModelOf(modelId ? template.Resources?.[modelId]?.Properties : undefined);
        return hub
          ? [
              finding(
                id,
                `component ${nameOf(id, component)} downloads ${hub} from Hugging Face at start on a network-isolated endpoint`,
              ),
            ]
          : [];
      });
    },
  ),
];
