import { aws_iam as iam, aws_s3 as s3, Duration, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import {
  AdapterSource,
  InstanceType,
  LlmInferenceComponentOptions,
  ModelSource,
  PrefixAwareLlmComponentEndpoint,
  PrefixAwareLlmComponentEndpointProps,
  RoutingStrategy,
  VllmImage,
} from '../../lib/index';
import { findings, TemplateJson } from './aws-rules';
import { newStack, policyStatements, problemsOf } from './helpers';

const QWEN = 'Qwen/Qwen2.5-7B-Instruct';

/** A base model that fits one GPU of an ml.g6e.12xlarge (4 × L40S, 384 GiB). */
function baseOptions(overrides: Partial<LlmInferenceComponentOptions> = {}): LlmInferenceComponentOptions {
  return {
    model: ModelSource.huggingFace(QWEN),
    acceleratorsPerCopy: 1,
    minMemoryPerCopy: Size.gibibytes(32),
    ...overrides,
  };
}

/** An endpoint on 2 × ml.g6e.12xlarge with one base component (and the adapters asked for). */
function build(
  endpointProps: Partial<PrefixAwareLlmComponentEndpointProps> = {},
  base: Partial<LlmInferenceComponentOptions> = {},
  adapters = 0,
) {
  const stack = newStack();
  const bucket = new s3.Bucket(stack, 'Adapters');
  const endpoint = new PrefixAwareLlmComponentEndpoint(stack, 'Llm', {
    instanceType: InstanceType.ML_G6E_12XLARGE,
    endpointName: 'llm',
    ...endpointProps,
  });
  const component = endpoint.addModel('Base', baseOptions({ inferenceComponentName: 'base', ...base }));
  const adapterComponents = Array.from({ length: adapters }, (_, i) =>
    component.addAdapter(`Adapter${i}`, {
      artifact: AdapterSource.s3(bucket, `adapters/a${i}.tar.gz`),
      inferenceComponentName: `adapter-${i}`,
    }),
  );
  return { stack, endpoint, component, adapters: adapterComponents };
}

function synth(...args: Parameters<typeof build>) {
  const built = build(...args);
  return { ...built, template: Template.fromStack(built.stack) };
}

/** Problems of the constructor, or of synthesis (the fit checks run when the app is synthesized). */
function problemsFor(...args: Parameters<typeof build>): readonly string[] {
  const constructed = problemsOf(() => build(...args));
  if (constructed.length > 0) return constructed;
  try {
    synth(...args);
    return [];
  } catch (error) {
    const message = String((error as Error).message);
    // Synthesis validation errors: "Validation failed with the following errors:\n  [path] problem".
    return message
      .split('\n')
      .map((line) => line.replace(/^\s*\[[^\]]+\]\s*/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('Validation failed'));
  }
}

function resources(template: Template, type: string): Array<Record<string, any>> {
  return Object.values(template.findResources(type)).map((r) => (r as { Properties: Record<string, any> }).Properties);
}

function componentNamed(template: Template, name: string): Record<string, any> {
  const found = resources(template, 'AWS::SageMaker::InferenceComponent').filter(
    (c) => c.InferenceComponentName === name,
  );
  if (found.length !== 1) throw new Error(`expected one component ${name}, found ${found.length}`);
  return found[0];
}

describe('when an endpoint hosts a base model and two adapters', () => {
  const { template, component, adapters } = synth(
    { managedInstanceScaling: { minInstanceCount: 2, maxInstanceCount: 4 } },
    { copyCount: 4, autoScaling: { minCopies: 2, maxCopies: 8 } },
    2,
  );

  test('GIVEN the endpoint WHEN synthesized THEN its configuration names the role, no model, the fleet, PREFIX_AWARE and managed scaling', () => {
    const [config] = resources(template, 'AWS::SageMaker::EndpointConfig');
    expect(config.ExecutionRoleArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^LlmExecutionRole/), 'Arn'] });
    expect(config.ProductionVariants).toEqual([
      {
        VariantName: 'AllTraffic',
        InstanceType: 'ml.g6e.12xlarge',
        InitialInstanceCount: 2,
        InitialVariantWeight: 1,
        InferenceAmiVersion: 'al2023-ami-sagemaker-inference-gpu-4-1',
        RoutingConfig: {
          RoutingStrategy: 'PREFIX_AWARE',
          PrefixAwareRoutingConfig: { PrefixLength: 8192, ConcurrencyThreshold: 32 },
        },
        ManagedInstanceScaling: { Status: 'ENABLED', MinInstanceCount: 2, MaxInstanceCount: 4 },
      },
    ]);
  });

  test('GIVEN the base WHEN synthesized THEN its model runs the vLLM DLC with prefix caching and LoRA for two adapters', () => {
    const [model] = resources(template, 'AWS::SageMaker::Model');
    expect(JSON.stringify(model.PrimaryContainer.Image)).toContain('/vllm:server-sagemaker-cuda-v2.3');
    expect(model.PrimaryContainer.Environment).toEqual({
      SM_VLLM_ENABLE_LORA: 'true',
      SM_VLLM_ENABLE_PREFIX_CACHING: 'true',
      SM_VLLM_MAX_LORAS: '2',
      SM_VLLM_MODEL: QWEN,
      SM_VLLM_TENSOR_PARALLEL_SIZE: '1',
      VLLM_ALLOW_RUNTIME_LORA_UPDATING: 'True',
    });
  });

  test('GIVEN the base WHEN synthesized THEN its component reserves one GPU and 32 GiB per copy, four copies, on the endpoint', () => {
    const { DeploymentConfig: _deployment, ...rest } = componentNamed(template, 'base');
    expect(rest).toEqual({
      InferenceComponentName: 'base',
      EndpointName: { 'Fn::GetAtt': [expect.stringMatching(/^LlmEndpoint/), 'EndpointName'] },
      VariantName: 'AllTraffic',
      Specification: {
        ModelName: { 'Fn::GetAtt': [expect.stringMatching(/^LlmBaseModel/), 'ModelName'] },
        ComputeResourceRequirements: { NumberOfAcceleratorDevicesRequired: 1, MinMemoryRequiredInMb: 32768 },
        StartupParameters: {
          ContainerStartupHealthCheckTimeoutInSeconds: 1800,
          ModelDataDownloadTimeoutInSeconds: 1800,
        },
      },
      RuntimeConfig: { CopyCount: 4 },
    });
  });

  test('GIVEN an adapter WHEN synthesized THEN it names its base and its archive, with no compute or copies of its own, and is created after the base', () => {
    const adapter = componentNamed(template, 'adapter-0');
    expect(adapter.Specification).toEqual({
      BaseInferenceComponentName: 'base',
      Container: {
        ArtifactUrl: {
          'Fn::Join': ['', ['s3://', { Ref: expect.stringMatching(/^Adapters/) }, '/adapters/a0.tar.gz']],
        },
      },
    });
    expect(adapter.RuntimeConfig).toBeUndefined();
    const [adapterId] = Object.entries(template.findResources('AWS::SageMaker::InferenceComponent')).find(
      ([, r]) => (r as any).Properties.InferenceComponentName === 'adapter-0',
    )!;
    const baseId = Object.entries(template.findResources('AWS::SageMaker::InferenceComponent')).find(
      ([, r]) => (r as any).Properties.InferenceComponentName === 'base',
    )![0];
    expect(template.toJSON().Resources[adapterId].DependsOn).toContain(baseId);
    expect(adapters.map((a) => a.inferenceComponentName)).toEqual(['adapter-0', 'adapter-1']);
  });

  test('GIVEN copy autoscaling WHEN synthesized THEN the component is a scalable target on DesiredCopyCount tracking ConcurrentRequestsPerCopy', () => {
    const [target] = resources(template, 'AWS::ApplicationAutoScaling::ScalableTarget');
    expect(target).toMatchObject({
      ServiceNamespace: 'sagemaker',
      ResourceId: 'inference-component/base',
      ScalableDimension: 'sagemaker:inference-component:DesiredCopyCount',
      MinCapacity: 2,
      MaxCapacity: 8,
    });
    expect(JSON.stringify(target.RoleARN)).toContain('AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint');
    const [policy] = resources(template, 'AWS::ApplicationAutoScaling::ScalingPolicy');
    expect(policy.TargetTrackingScalingPolicyConfiguration).toEqual({
      PredefinedMetricSpecification: {
        PredefinedMetricType: 'SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution',
      },
      TargetValue: 24,
      ScaleOutCooldown: 300,
      ScaleInCooldown: 900,
    });
    expect(component.autoScaling?.scaleFromZeroPolicy).toBeUndefined();
  });

  test('GIVEN three components WHEN synthesized THEN each has an error-rate and a latency alarm on its InferenceComponentName', () => {
    const alarms = resources(template, 'AWS::CloudWatch::Alarm');
    expect(alarms).toHaveLength(6);
    const dimensions = alarms.map((a) => JSON.stringify(a.Metrics ?? a.Dimensions));
    for (const name of ['base', 'adapter-0', 'adapter-1']) {
      expect(dimensions.filter((d) => d.includes(`{"Name":"InferenceComponentName","Value":"${name}"}`))).toHaveLength(
        2,
      );
    }
    const rollsBack = alarms.filter((a) => String(a.AlarmDescription).includes('Deployments roll back'));
    expect(
      rollsBack.map((a) => JSON.stringify(a.Metrics ?? a.Dimensions)).every((m) => m.includes('"Value":"base"')),
    ).toBe(true);
    expect(rollsBack).toHaveLength(2);
  });

  test("GIVEN 2–8 copies WHEN synthesized THEN updates roll one copy at a time and roll back on the base's alarms, which the role may read", () => {
    const config = componentNamed(template, 'base').DeploymentConfig;
    expect(config.RollingUpdatePolicy).toEqual({
      MaximumBatchSize: { Type: 'COPY_COUNT', Value: 1 },
      RollbackMaximumBatchSize: { Type: 'COPY_COUNT', Value: 1 },
      WaitIntervalInSeconds: 300,
      MaximumExecutionTimeoutInSeconds: 28800,
    });
    expect(config.AutoRollbackConfiguration.Alarms).toEqual([
      { AlarmName: { Ref: expect.stringMatching(/^LlmBaseErrorRateAlarm/) } },
      { AlarmName: { Ref: expect.stringMatching(/^LlmBaseModelLatencyAlarm/) } },
    ]);
    expect(component.rollbackAlarms).toHaveLength(2);
    const describe = policyStatements(template).find((st) => st.Action === 'cloudwatch:DescribeAlarms');
    expect(describe?.Resource).toEqual([
      { 'Fn::GetAtt': [expect.stringMatching(/^LlmBaseErrorRateAlarm/), 'Arn'] },
      { 'Fn::GetAtt': [expect.stringMatching(/^LlmBaseModelLatencyAlarm/), 'Arn'] },
    ]);
    expect(componentNamed(template, 'adapter-0').DeploymentConfig).toBeUndefined();
  });

  test('GIVEN three components WHEN synthesized THEN the dashboard has a titled row group for each, reading its own metrics', () => {
    const [dashboard] = resources(template, 'AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(Stack.of(component).resolve(dashboard.DashboardBody));
    for (const title of ['### Model base', '### Adapter (on base) adapter-0', '### Adapter (on base) adapter-1'])
      expect(body).toContain(title);
    expect(body).toContain('ConcurrentRequestsPerCopy');
    expect(body).toContain('GPUUtilizationNormalized');
  });

  test('GIVEN the template WHEN the documented AWS rules check it THEN nothing is violated', () => {
    expect(findings(template.toJSON() as TemplateJson)).toEqual([]);
  });

  test('GIVEN a client granted one adapter WHEN synthesized THEN it may invoke the endpoint and that component', () => {
    const built = build({}, {}, 1);
    const client = new iam.Role(built.stack, 'Client', { assumedBy: new iam.AccountRootPrincipal() });
    built.adapters[0].grantInvoke(client);
    const statement = policyStatements(Template.fromStack(built.stack)).find(
      (s) => s.Action === 'sagemaker:InvokeEndpoint',
    );
    expect(statement?.Resource).toEqual([
      { 'Fn::GetAtt': [expect.stringMatching(/^LlmEndpoint/), 'EndpointArn'] },
      { 'Fn::GetAtt': [expect.stringMatching(/^LlmBaseAdapter0InferenceComponent/), 'InferenceComponentArn'] },
    ]);
  });
});

describe('when the execution role is read', () => {
  const { template } = synth({}, {}, 1);
  const statements = policyStatements(template);

  test('GIVEN an adapter in a bucket of the stack WHEN synthesized THEN the role may read exactly its archive', () => {
    const read = statements.filter((s) => s.Action === 's3:GetObject');
    expect(read).toEqual([
      {
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: {
          'Fn::Join': ['', [{ 'Fn::GetAtt': [expect.stringMatching(/^Adapters/), 'Arn'] }, '/adapters/a0.tar.gz']],
        },
      },
    ]);
  });

  test('GIVEN the endpoint WHEN synthesized THEN the role writes its logs and instance metrics', () => {
    const actions = statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
    expect(actions).toEqual(
      expect.arrayContaining([
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'cloudwatch:PutMetricData',
        'ecr:BatchGetImage',
      ]),
    );
  });
});

describe('when a component may scale to zero copies', () => {
  const { template, component } = synth(
    { allowPrefixAwareOnSingleInstance: true, managedInstanceScaling: { minInstanceCount: 0, maxInstanceCount: 2 } },
    { copyCount: 1, autoScaling: { minCopies: 0, maxCopies: 4 } },
  );

  test('GIVEN minCopies 0 WHEN synthesized THEN a step policy adds one copy when NoCapacityInvocationFailures alarms', () => {
    expect(component.autoScaling?.scaleFromZeroPolicy).toBeDefined();
    const step = resources(template, 'AWS::ApplicationAutoScaling::ScalingPolicy').find(
      (p) => p.PolicyType === 'StepScaling',
    );
    expect(step?.StepScalingPolicyConfiguration).toEqual({
      AdjustmentType: 'ChangeInCapacity',
      MetricAggregationType: 'Maximum',
      Cooldown: 300,
      StepAdjustments: [{ MetricIntervalLowerBound: 0, ScalingAdjustment: 1 }],
    });
    const alarm = resources(template, 'AWS::CloudWatch::Alarm').find(
      (a) => a.MetricName === 'NoCapacityInvocationFailures',
    );
    expect(alarm).toMatchObject({
      Namespace: 'AWS/SageMaker',
      Dimensions: [{ Name: 'InferenceComponentName', Value: 'base' }],
      Period: 60,
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      AlarmActions: [{ 'Fn::GetAtt': [expect.stringMatching(/^LlmBaseScaleFromZeroPolicy/), 'Arn'] }],
    });
  });

  test('GIVEN managed scaling to 0 WHEN synthesized THEN the variant may release every instance, and the rules pass', () => {
    expect(
      resources(template, 'AWS::SageMaker::EndpointConfig')[0].ProductionVariants[0].ManagedInstanceScaling,
    ).toEqual({ Status: 'ENABLED', MinInstanceCount: 0, MaxInstanceCount: 2 });
    expect(findings(template.toJSON() as TemplateJson)).toEqual([]);
  });
});

describe('when the metrics are published at other frequencies', () => {
  test.each([10, 30, 60, 120, 300])(
    'GIVEN a %i-second publish frequency and a component that scales to zero WHEN the AWS rules check it THEN nothing is violated',
    (seconds) => {
      const { template } = synth(
        { metricsConfig: { publishFrequency: Duration.seconds(seconds) } },
        { copyCount: 2, autoScaling: { minCopies: 0, maxCopies: 4 } },
        1,
      );
      expect(findings(template.toJSON() as TemplateJson)).toEqual([]);
    },
  );
});

describe('when the fleet is sized', () => {
  // ml.g6e.12xlarge: 4 GPUs and 384 GiB per instance; 2 instances unless set.
  test.each<[string, Partial<PrefixAwareLlmComponentEndpointProps>, Partial<LlmInferenceComponentOptions>, string[]]>([
    ['8 one-GPU copies on 2 × 4 GPUs', {}, { copyCount: 8 }, []],
    [
      '9 one-GPU copies on 2 × 4 GPUs',
      {},
      { copyCount: 9 },
      [
        "copyCount × acceleratorsPerCopy of the endpoint's inference components must fit in the 4 GPUs of each of the instanceCount 2 × ml.g6e.12xlarge " +
          '(8 GPUs, each copy on one instance) (got 9 GPUs: Base 9 × 1 GPUs)',
      ],
    ],
    [
      '3 three-GPU copies on 2 × 4 GPUs (9 > 8)',
      {},
      { copyCount: 3, acceleratorsPerCopy: 3 },
      [
        "copyCount × acceleratorsPerCopy of the endpoint's inference components must fit in the 4 GPUs of each of the instanceCount 2 × ml.g6e.12xlarge " +
          '(8 GPUs, each copy on one instance) (got 9 GPUs: Base 3 × 3 GPUs)',
      ],
    ],
    ['3 three-GPU copies on 3 × 4 GPUs', { instanceCount: 3 }, { copyCount: 3, acceleratorsPerCopy: 3 }, []],
    [
      'a copy of 5 GPUs on 4-GPU instances',
      {},
      { copyCount: 1, acceleratorsPerCopy: 5 },
      [
        'Base: acceleratorsPerCopy must be at most the 4 GPUs of one ml.g6e.12xlarge, since a copy runs on one instance (got 5)',
      ],
    ],
    ['two copies of 384 GiB', {}, { copyCount: 2, minMemoryPerCopy: Size.gibibytes(384) }, []],
    [
      'a copy of 384 GiB + 1 MiB',
      {},
      { copyCount: 1, minMemoryPerCopy: Size.mebibytes(384 * 1024 + 1) },
      [
        'Base: minMemoryPerCopy must be at most the 393216 MiB of one ml.g6e.12xlarge, since a copy runs on one instance (got 393217 MiB)',
      ],
    ],
    [
      'three copies of 200 GiB on 2 × 384 GiB',
      {},
      { copyCount: 3, minMemoryPerCopy: Size.gibibytes(200) },
      [
        "copyCount × minMemoryPerCopy of the endpoint's inference components must fit in the 393216 MiB of each of the instanceCount 2 × ml.g6e.12xlarge " +
          '(each copy on one instance) (got 614400 MiB: Base 3 × 204800 MiB)',
      ],
    ],
    [
      'minCopies 5 at a managed minimum of 1 instance',
      { allowPrefixAwareOnSingleInstance: true, managedInstanceScaling: { minInstanceCount: 1, maxInstanceCount: 4 } },
      { copyCount: 5, autoScaling: { minCopies: 5, maxCopies: 8 } },
      [
        "autoScaling.minCopies (copyCount without autoscaling) × acceleratorsPerCopy of the endpoint's inference components must fit in the 4 GPUs of each of the " +
          'managedInstanceScaling.minInstanceCount 1 × ml.g6e.12xlarge (4 GPUs, each copy on one instance) (got 5 GPUs: Base 5 × 1 GPUs)',
      ],
    ],
    [
      'maxCopies 17 at a managed maximum of 4 instances',
      { managedInstanceScaling: { minInstanceCount: 2, maxInstanceCount: 4 } },
      { copyCount: 2, autoScaling: { minCopies: 2, maxCopies: 17 } },
      [
        "autoScaling.maxCopies (copyCount without autoscaling) × acceleratorsPerCopy of the endpoint's inference components must fit in the 4 GPUs of each of the " +
          'managedInstanceScaling.maxInstanceCount 4 × ml.g6e.12xlarge (16 GPUs, each copy on one instance) (got 17 GPUs: Base 17 × 1 GPUs)',
      ],
    ],
    [
      'maxCopies 16 at a managed maximum of 4 instances',
      { managedInstanceScaling: { minInstanceCount: 2, maxInstanceCount: 4 } },
      { copyCount: 2, autoScaling: { minCopies: 2, maxCopies: 16 } },
      [],
    ],
  ])('GIVEN %s WHEN synthesized THEN it reports the expected problems', (_name, endpointProps, base, expected) => {
    expect(problemsFor(endpointProps, base)).toEqual(expected);
  });

  test('GIVEN two models WHEN together they need one GPU more than the fleet THEN both are named in the sum', () => {
    const stack = newStack();
    const endpoint = new PrefixAwareLlmComponentEndpoint(stack, 'Llm', {
      instanceType: InstanceType.ML_G6E_12XLARGE,
      endpointName: 'llm',
    });
    endpoint.addModel('Chat', baseOptions({ copyCount: 2, acceleratorsPerCopy: 2 }));
    endpoint.addModel('Code', baseOptions({ copyCount: 5 }));
    expect(() => Template.fromStack(stack)).toThrow('(got 9 GPUs: Chat 2 × 2 GPUs, Code 5 × 1 GPUs)');
  });

  test('GIVEN an endpoint without components WHEN synthesized THEN synth says to add one', () => {
    const stack = newStack();
    new PrefixAwareLlmComponentEndpoint(stack, 'Llm', {
      instanceType: InstanceType.ML_G6E_12XLARGE,
      endpointName: 'llm',
    });
    expect(() => Template.fromStack(stack)).toThrow(
      'the endpoint must host at least one inference component: add one with addModel() (got none)',
    );
  });
});

describe('when endpoint props are out of range', () => {
  test.each<[string, Partial<PrefixAwareLlmComponentEndpointProps>, string[]]>([
    [
      'one instance under PREFIX_AWARE',
      { instanceCount: 1 },
      [
        'instanceCount must be at least 2 under PREFIX_AWARE routing, because one instance cannot route anywhere; ' +
          'set allowPrefixAwareOnSingleInstance: true to deploy a single instance anyway (got 1)',
      ],
    ],
    ['one instance under RANDOM', { instanceCount: 1, routing: RoutingStrategy.random() }, []],
    ['0 instances', { instanceCount: 0 }, ['instanceCount must be an integer of at least 1 (got 0)']],
    [
      'a managed minimum of 0 under PREFIX_AWARE',
      { managedInstanceScaling: { minInstanceCount: 0, maxInstanceCount: 4 } },
      [
        'managedInstanceScaling.minInstanceCount must be at least 2 under PREFIX_AWARE routing, because one instance cannot route anywhere; ' +
          'set allowPrefixAwareOnSingleInstance: true to let the fleet shrink to zero (scale to zero) anyway (got 0)',
      ],
    ],
    [
      'a managed minimum of 0 with the single-instance allowance',
      { allowPrefixAwareOnSingleInstance: true, managedInstanceScaling: { minInstanceCount: 0, maxInstanceCount: 4 } },
      [],
    ],
    [
      'a managed minimum of -1',
      { routing: RoutingStrategy.random(), managedInstanceScaling: { minInstanceCount: -1, maxInstanceCount: 4 } },
      ['managedInstanceScaling.minInstanceCount must be an integer of at least 0 (got -1)'],
    ],
    [
      'a managed maximum of 0',
      {
        routing: RoutingStrategy.random(),
        instanceCount: 1,
        managedInstanceScaling: { minInstanceCount: 0, maxInstanceCount: 0 },
      },
      [
        'managedInstanceScaling.maxInstanceCount must be an integer of at least 1 (got 0)',
        'instanceCount must lie between managedInstanceScaling.minInstanceCount 1 and maxInstanceCount 0 (got 1)',
      ],
    ],
    [
      'min above max',
      { managedInstanceScaling: { minInstanceCount: 3, maxInstanceCount: 2 } },
      ['managedInstanceScaling.minInstanceCount must be at most managedInstanceScaling.maxInstanceCount (got 3 > 2)'],
    ],
    [
      'instanceCount above the managed maximum',
      { instanceCount: 5, managedInstanceScaling: { minInstanceCount: 2, maxInstanceCount: 4 } },
      ['instanceCount must lie between managedInstanceScaling.minInstanceCount 2 and maxInstanceCount 4 (got 5)'],
    ],
    [
      'an endpoint name with an underscore',
      { endpointName: 'my_llm' },
      [
        "endpointName must be 1–63 letters, digits or hyphens, starting and ending with a letter or digit (got 'my_llm')",
      ],
    ],
    [
      'an instance type without ml.',
      { instanceType: InstanceType.of('g6e.12xlarge', { gpuCount: 4 }) },
      ["instanceType must be a SageMaker instance type like 'ml.p5.48xlarge' (got 'g6e.12xlarge')"],
    ],
    [
      'a concurrency alarm',
      { monitoring: { concurrencyAlarm: { threshold: 0.5 } } },
      [
        'monitoring.concurrencyAlarm watches a variant\'s instances and does not apply to inference components; leave it unset or { enabled: false } (got {"threshold":0.5})',
      ],
    ],
    [
      'a publish frequency of 45 s',
      { metricsConfig: { publishFrequency: Duration.seconds(45) } },
      ['metricsConfig.publishFrequency must be one of 10, 30, 60, 120, 180, 240, 300 seconds (got 45)'],
    ],
  ])('GIVEN %s WHEN built THEN it reports the expected problems', (_name, endpointProps, expected) => {
    expect(
      problemsOf(
        () =>
          new PrefixAwareLlmComponentEndpoint(newStack(), 'Llm', {
            instanceType: InstanceType.ML_G6E_12XLARGE,
            ...endpointProps,
          }),
      ),
    ).toEqual(expected);
  });
});

describe('when component props are out of range', () => {
  test.each<[string, Partial<LlmInferenceComponentOptions>, string[]]>([
    ['copyCount -1', { copyCount: -1 }, ['copyCount must be an integer of at least 0 (got -1)']],
    ['copyCount 0', { copyCount: 0 }, []],
    [
      'acceleratorsPerCopy 0',
      { acceleratorsPerCopy: 0 },
      ['acceleratorsPerCopy must be an integer of at least 1 (got 0)'],
    ],
    [
      'minMemoryPerCopy 127 MiB',
      { minMemoryPerCopy: Size.mebibytes(127) },
      ['minMemoryPerCopy must be a whole number of MiB of at least 128 (got 127 MiB)'],
    ],
    ['minMemoryPerCopy 128 MiB', { minMemoryPerCopy: Size.mebibytes(128) }, []],
    ['cpuCoresPerCopy 0.24', { cpuCoresPerCopy: 0.24 }, ['cpuCoresPerCopy must be at least 0.25 (got 0.24)']],
    ['cpuCoresPerCopy 0.25', { cpuCoresPerCopy: 0.25 }, []],
    [
      'tensor parallel 2 on one GPU per copy',
      { engine: { tensorParallelSize: 2 } },
      [
        'engine tensor × data × pipeline parallel size must be at most acceleratorsPerCopy 1, the GPUs a copy reserves (got 2)',
      ],
    ],
    [
      'a start-up timeout of 59 s',
      { containerStartupHealthCheckTimeout: Duration.seconds(59) },
      ['containerStartupHealthCheckTimeout must be between 60 and 3600 seconds (got 59)'],
    ],
    [
      'a name ending in a hyphen',
      { inferenceComponentName: 'base-' },
      [
        "inferenceComponentName must be 1–63 letters, digits or hyphens, starting and ending with a letter or digit (got 'base-')",
      ],
    ],
    [
      'a name of 64 characters',
      { inferenceComponentName: 'a'.repeat(64) },
      [
        `inferenceComponentName must be 1–63 letters, digits or hyphens, starting and ending with a letter or digit (got '${'a'.repeat(64)}')`,
      ],
    ],
    [
      'minCopies above maxCopies',
      { autoScaling: { minCopies: 3, maxCopies: 2 } },
      ['autoScaling.minCopies must be at most autoScaling.maxCopies (got minCopies 3 > maxCopies 2)'],
    ],
    [
      'copyCount outside the autoscaling range',
      { copyCount: 1, autoScaling: { minCopies: 2, maxCopies: 4 } },
      ['copyCount must lie between autoScaling.minCopies 2 and autoScaling.maxCopies 4 (got 1)'],
    ],
    [
      'minCopies -1',
      { autoScaling: { minCopies: -1, maxCopies: 4 } },
      ['autoScaling.minCopies must be an integer of at least 0 (got -1)'],
    ],
    [
      'a target of 0',
      { autoScaling: { minCopies: 2, maxCopies: 4, targetConcurrentRequestsPerCopy: 0 } },
      ['autoScaling.targetConcurrentRequestsPerCopy must be a number greater than 0 (got 0)'],
    ],
  ])('GIVEN %s WHEN built THEN it reports the expected problems', (_name, base, expected) => {
    expect(problemsOf(() => build({}, base))).toEqual(expected);
  });

  test('GIVEN a type outside the catalog without GPU count or accelerators WHEN built THEN acceleratorsPerCopy is required', () => {
    const endpoint = new PrefixAwareLlmComponentEndpoint(newStack(), 'Llm', {
      instanceType: InstanceType.of('ml.g7e.12xlarge'),
      endpointName: 'x',
    });
    expect(
      problemsOf(() =>
        endpoint.addModel('Base', { model: ModelSource.huggingFace(QWEN), minMemoryPerCopy: Size.gibibytes(8) }),
      ),
    ).toEqual([
      'acceleratorsPerCopy is required because the GPU count of ml.g7e.12xlarge is unknown (got no acceleratorsPerCopy)',
    ]);
  });
});

describe('when a component deployment is chosen', () => {
  test.each<[string, Partial<LlmInferenceComponentOptions>, boolean]>([
    ['one copy', { copyCount: 1 }, false],
    ['two copies', { copyCount: 2 }, true],
    ['0–4 copies', { copyCount: 1, autoScaling: { minCopies: 0, maxCopies: 4 } }, false],
    [
      '2–21 copies (5 % of 21 needs 2, 50 % of 2 allows 1)',
      { copyCount: 2, autoScaling: { minCopies: 2, maxCopies: 21 } },
      false,
    ],
    ['2–20 copies', { copyCount: 2, autoScaling: { minCopies: 2, maxCopies: 20 } }, true],
  ])(
    'GIVEN %s and no deployment prop WHEN synthesized THEN a rolling policy is rendered only when one exists',
    (_name, base, rolling) => {
      const endpointProps = { managedInstanceScaling: { minInstanceCount: 2, maxInstanceCount: 20 } };
      const { template } = synth(endpointProps, base);
      expect(componentNamed(template, 'base').DeploymentConfig !== undefined).toBe(rolling);
    },
  );

  test.each<[string, Partial<LlmInferenceComponentOptions>, string[]]>([
    [
      'a rolling deployment on one copy',
      { copyCount: 1, deployment: {} },
      [
        'deployment: no rolling batch is 5–50 % of 1 copies (5 % needs 1, 50 % allows 0); give the component at least 2 copies (autoScaling.minCopies) ' +
          "or leave deployment unset for SageMaker's default update (got copyCount 1)",
      ],
    ],
    [
      'a batch of 3 of 4 copies',
      { copyCount: 4, deployment: { batchCopies: 3 } },
      ['deployment.batchCopies must be between 1 and 2 (5–50 % of 4 copies) (got 3)'],
    ],
    ['a batch of 2 of 4 copies', { copyCount: 4, deployment: { batchCopies: 2 } }, []],
    [
      'a bake of 3601 s',
      { copyCount: 2, deployment: { waitInterval: Duration.seconds(3601) } },
      ['deployment.waitInterval must be between 0 and 3600 seconds (got 3601)'],
    ],
    [
      'a time limit of 599 s',
      { copyCount: 2, deployment: { maximumExecutionTimeout: Duration.seconds(599) } },
      ['deployment.maximumExecutionTimeout must be between 600 and 28800 seconds (got 599)'],
    ],
  ])('GIVEN %s WHEN built THEN it reports the expected problems', (_name, base, expected) => {
    expect(problemsOf(() => build({}, base))).toEqual(expected);
  });

  test('GIVEN useDefaultAlarms false and no alarms WHEN synthesized THEN the rolling policy has no rollback and the alarms do not claim one', () => {
    const { template } = synth({}, { copyCount: 2, deployment: { useDefaultAlarms: false } });
    expect(componentNamed(template, 'base').DeploymentConfig.AutoRollbackConfiguration).toBeUndefined();
    expect(
      resources(template, 'AWS::CloudWatch::Alarm').some((a) => String(a.AlarmDescription).includes('roll back')),
    ).toBe(false);
  });
});

describe('when adapters are misconfigured', () => {
  test('GIVEN an archive that is not .tar.gz WHEN added THEN the key is refused', () => {
    const { component, stack } = build();
    expect(
      problemsOf(() =>
        component.addAdapter('A', { artifact: AdapterSource.s3(new s3.Bucket(stack, 'B'), 'adapters/sql/') }),
      ),
    ).toEqual([
      "adapter.artifact key must be an S3 object key of a .tar.gz archive, without a leading '/' (got 'adapters/sql/')",
    ]);
  });

  test('GIVEN an imported bucket without its encryption WHEN added THEN the encryption must be declared', () => {
    const { component, stack } = build();
    const imported = s3.Bucket.fromBucketName(stack, 'Imported', 'my-artifacts');
    expect(
      problemsOf(() => component.addAdapter('A', { artifact: AdapterSource.s3(imported, 'a.tar.gz') }))[0],
    ).toContain('adapter.artifact: the bucket');
    expect(
      problemsOf(() =>
        component.addAdapter('B', { artifact: AdapterSource.s3(imported, 'b.tar.gz', { s3ManagedEncryption: true }) }),
      ),
    ).toEqual([]);
  });

  test('GIVEN a base on an LMI image WHEN an adapter is added THEN it is refused, naming addAdapter', () => {
    const { endpoint, stack } = build();
    const lmi = endpoint.addModel('Lmi', baseOptions({ image: VllmImage.lmi(), copyCount: 1 }));
    expect(
      problemsOf(() => lmi.addAdapter('A', { artifact: AdapterSource.s3(new s3.Bucket(stack, 'B'), 'a.tar.gz') }))[0],
    ).toContain('addAdapter needs a base component on a vLLM DLC image');
  });

  test('GIVEN max-loras in extraArgs WHEN synthesized THEN the construct keeps it', () => {
    const { template } = synth({}, { engine: { extraArgs: { 'max-loras': 4 } } }, 2);
    const [model] = resources(template, 'AWS::SageMaker::Model');
    expect(model.PrimaryContainer.Environment.SM_VLLM_MAX_LORAS).toBe('4');
  });

  test('GIVEN no adapters WHEN synthesized THEN no LoRA settings are rendered', () => {
    const { template } = synth();
    const [model] = resources(template, 'AWS::SageMaker::Model');
    expect(Object.keys(model.PrimaryContainer.Environment).filter((k) => k.includes('LORA'))).toEqual([]);
  });
});
