import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'fs';
import { join } from 'path';
import { addExampleStacks, EXAMPLE_STACK_NAMES } from '../../examples';

/** The context `cdk synth` runs with (cdk.json), plus strict schema validation as in every test app. */
function cdkJsonContext(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(__dirname, '..', '..', 'cdk.json'), 'utf8')).context;
}

describe('when every example stack is synthesized the way `cdk synth` does', () => {
  const context: Record<string, unknown> = { ...cdkJsonContext(), '@aws-cdk/core:strictCfnValidateErrors': true };
  const app = new App({ context });
  const stacks = addExampleStacks(app);
  // One synthesis for the whole file: schema validation and annotations included. Throws on any finding.
  const assembly = app.synth();
  const template = (name: string) => Template.fromJSON(assembly.getStackByName(name).template);

  test('GIVEN cdk.json WHEN read THEN schema validation is an error there too', () => {
    expect(context['@aws-cdk/core:validateAgainstDefaultRules']).toBe(true);
  });

  test('GIVEN the app WHEN synthesized THEN there is exactly one stack per example, all environment-agnostic', () => {
    expect(assembly.stacks.map((s) => s.stackName).sort()).toEqual(Object.values(EXAMPLE_STACK_NAMES).sort());
    for (const stack of assembly.stacks) {
      expect(stack.environment.account).toBe('unknown-account');
      expect(stack.environment.region).toBe('unknown-region');
    }
  });

  test('GIVEN the app WHEN synthesized THEN no stack carries a warning or error annotation', () => {
    for (const stack of assembly.stacks) {
      const flagged = Object.values(stack.manifest.metadata ?? {})
        .flat()
        .filter((entry) => entry.type === 'aws:cdk:warning' || entry.type === 'aws:cdk:error');
      expect(flagged).toEqual([]);
    }
  });

  test('GIVEN every example WHEN synthesized THEN it has a stable endpoint name, a dashboard, and alarms that page an encrypted topic', () => {
    for (const name of Object.values(EXAMPLE_STACK_NAMES)) {
      const t = template(name);
      const endpointName = Object.values(t.findResources('AWS::SageMaker::Endpoint'))[0].Properties.EndpointName;
      expect(typeof endpointName).toBe('string');
      t.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
      t.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
      const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm'));
      expect(alarms.length).toBeGreaterThanOrEqual(4);
      for (const alarm of alarms)
        expect(alarm.Properties.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^Alarms/) }]);
    }
  });

  test('GIVEN the benchmark replica WHEN synthesized THEN Llama 3.1 70B runs on 7 × ml.p5.48xlarge with PREFIX_AWARE', () => {
    const t = template(EXAMPLE_STACK_NAMES.benchmarkReplica);
    t.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      ProductionVariants: [
        {
          InstanceType: 'ml.p5.48xlarge',
          InitialInstanceCount: 7,
          RoutingConfig: {
            RoutingStrategy: 'PREFIX_AWARE',
            PrefixAwareRoutingConfig: { PrefixLength: 8192, ConcurrencyThreshold: 32 },
          },
        },
      ],
      MetricsConfig: { EnableDetailedObservability: true, MetricPublishFrequencyInSeconds: 10 },
    });
    const env = Object.values(t.findResources('AWS::SageMaker::Model'))[0].Properties.PrimaryContainer.Environment;
    expect(env.SM_VLLM_MODEL).toBe('meta-llama/Llama-3.1-70B-Instruct');
    expect(env.SM_VLLM_TENSOR_PARALLEL_SIZE).toBe('8');
    expect(JSON.stringify(env.HF_TOKEN)).toContain('{{resolve:secretsmanager:');
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    expect(stacks.benchmarkReplica.endpoint.deployment.style).toBe('ROLLING');
  });

  test('GIVEN the minimal stack WHEN synthesized THEN two ml.g6e.2xlarge run an open model with the defaults', () => {
    const t = template(EXAMPLE_STACK_NAMES.minimal);
    t.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      ProductionVariants: [
        { InstanceType: 'ml.g6e.2xlarge', InitialInstanceCount: 2, RoutingConfig: { RoutingStrategy: 'PREFIX_AWARE' } },
      ],
    });
    const env = Object.values(t.findResources('AWS::SageMaker::Model'))[0].Properties.PrimaryContainer.Environment;
    expect(env).toEqual({
      SM_VLLM_ENABLE_PREFIX_CACHING: 'true',
      SM_VLLM_MODEL: 'Qwen/Qwen2.5-7B-Instruct',
      SM_VLLM_TENSOR_PARALLEL_SIZE: '1',
    });
  });

  test('GIVEN the private VPC stack WHEN synthesized THEN an isolated, network-isolated, autoscaled endpoint reads its model from S3', () => {
    const t = template(EXAMPLE_STACK_NAMES.privateVpc);
    const model = Object.values(t.findResources('AWS::SageMaker::Model'))[0].Properties;
    expect(model.EnableNetworkIsolation).toBe(true);
    expect(model.VpcConfig.Subnets.length).toBeGreaterThanOrEqual(2);
    expect(model.PrimaryContainer.ModelDataSource.S3DataSource).toEqual({
      S3Uri: 's3://my-llm-artifacts/models/llama-3.1-70b-instruct/',
      S3DataType: 'S3Prefix',
      CompressionType: 'None',
    });
    t.resourceCountIs('AWS::EC2::NatGateway', 0);
    t.resourceCountIs('AWS::EC2::InternetGateway', 0);
    t.hasResourceProperties('AWS::EC2::VPCEndpoint', { VpcEndpointType: 'Gateway' });
    t.hasResourceProperties('AWS::EC2::VPCEndpoint', { VpcEndpointType: 'Interface', PrivateDnsEnabled: true });
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', { MinCapacity: 2, MaxCapacity: 4 });
    t.hasResourceProperties('AWS::SageMaker::Endpoint', {
      DeploymentConfig: {
        RollingUpdatePolicy: {
          MaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: 1 },
          RollbackMaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: 1 },
          WaitIntervalInSeconds: 600,
          MaximumExecutionTimeoutInSeconds: 14400,
        },
      },
    });
    t.resourceCountIs('AWS::EC2::FlowLog', 1);
  });

  test('GIVEN the router sidecar stack WHEN synthesized THEN each ml.g5.12xlarge runs four engines behind the sidecar image, under PREFIX_AWARE', () => {
    const t = template(EXAMPLE_STACK_NAMES.routerSidecar);
    const model = Object.values(t.findResources('AWS::SageMaker::Model'))[0].Properties.PrimaryContainer;
    expect(JSON.stringify(model.Image)).toContain('cdk-hnb659fds-container-assets');
    expect(model.Environment).toMatchObject({
      PREFIX_ROUTER_MODE: 'multi-engine',
      PREFIX_ROUTER_ENGINES: '4',
      PREFIX_ROUTER_POLICY: 'cache-aware',
      PREFIX_ROUTER_EMF: 'on',
      PREFIX_ROUTER_EMF_ENDPOINT_NAME: stacks.routerSidecar.endpoint.endpointName,
      SM_VLLM_ENABLE_PREFIX_CACHING: 'true',
      // What each engine runs with: its share of the 4 GPUs (the container passes --tensor-parallel-size 1), not the instance's 4.
      SM_VLLM_TENSOR_PARALLEL_SIZE: '1',
    });
    t.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      ProductionVariants: [
        { InstanceType: 'ml.g5.12xlarge', InitialInstanceCount: 2, RoutingConfig: { RoutingStrategy: 'PREFIX_AWARE' } },
      ],
    });
  });

  test('GIVEN the routing A/B variants stack WHEN synthesized THEN two variants differ only in RoutingConfig, deploy blue/green, and a role may run prefix-router ab', () => {
    const t = template(EXAMPLE_STACK_NAMES.routingAbVariants);
    const config = Object.values(t.findResources('AWS::SageMaker::EndpointConfig'))[0].Properties;
    const [main, random] = config.ProductionVariants;
    expect(main.VariantName).toBe('AllTraffic');
    expect(random.VariantName).toBe('Random');
    expect(main.RoutingConfig).toEqual({
      RoutingStrategy: 'PREFIX_AWARE',
      PrefixAwareRoutingConfig: { PrefixLength: 8192, ConcurrencyThreshold: 32 },
    });
    expect(random.RoutingConfig).toEqual({ RoutingStrategy: 'RANDOM' });
    const strip = ({ VariantName: _n, RoutingConfig: _r, ...rest }: Record<string, unknown>) => rest;
    expect(strip(random)).toEqual(strip(main));
    const endpoint = Object.values(t.findResources('AWS::SageMaker::Endpoint'))[0].Properties;
    expect(endpoint.DeploymentConfig.RollingUpdatePolicy).toBeUndefined();
    expect(endpoint.DeploymentConfig.BlueGreenUpdatePolicy).toBeDefined();
    const actions = Object.values(t.findResources('AWS::IAM::Policy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement)
      .flatMap((st: { Action: string | string[] }) => (Array.isArray(st.Action) ? st.Action : [st.Action]));
    expect(actions).toEqual(
      expect.arrayContaining([
        'sagemaker:UpdateEndpoint',
        'sagemaker:CreateEndpointConfig',
        'cloudwatch:GetMetricData',
        'sagemaker:InvokeEndpoint',
      ]),
    );
  });
});

describe('when the inference components example is synthesized', () => {
  const app = new App({ context: { ...cdkJsonContext(), '@aws-cdk/core:strictCfnValidateErrors': true } });
  const stacks = addExampleStacks(app);
  const t = Template.fromJSON(app.synth().getStackByName(EXAMPLE_STACK_NAMES.inferenceComponents).template);
  const components = Object.values(t.findResources('AWS::SageMaker::InferenceComponent')).map((r) => r.Properties);

  test('GIVEN the stack WHEN synthesized THEN one PREFIX_AWARE fleet of 2–4 × ml.g6e.12xlarge hosts one base model and two adapters on it', () => {
    t.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      ProductionVariants: [
        Match.objectLike({
          InstanceType: 'ml.g6e.12xlarge',
          InitialInstanceCount: 2,
          RoutingConfig: { RoutingStrategy: 'PREFIX_AWARE', PrefixAwareRoutingConfig: Match.anyValue() },
          ManagedInstanceScaling: { Status: 'ENABLED', MinInstanceCount: 2, MaxInstanceCount: 4 },
        }),
      ],
    });
    expect(components.map((c) => c.InferenceComponentName).sort()).toEqual([
      'llama-8b-base',
      'llama-8b-sql',
      'llama-8b-support',
    ]);
    const adapters = components.filter((c) => c.Specification.BaseInferenceComponentName !== undefined);
    expect(adapters.map((a) => a.Specification.BaseInferenceComponentName)).toEqual(['llama-8b-base', 'llama-8b-base']);
    expect(adapters.map((a) => a.Specification.Container.ArtifactUrl).sort()).toEqual([
      's3://my-llm-artifacts/adapters/sql.tar.gz',
      's3://my-llm-artifacts/adapters/support.tar.gz',
    ]);
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      ResourceId: 'inference-component/llama-8b-base',
      MinCapacity: 2,
      MaxCapacity: 8,
    });
    expect(stacks.inferenceComponents.base.copyCount).toBe(4);
  });

  test('GIVEN the base model WHEN synthesized THEN vLLM loads LoRA adapters of rank 64, two at a time, next to prefix caching', () => {
    const env = Object.values(t.findResources('AWS::SageMaker::Model'))[0].Properties.PrimaryContainer.Environment;
    expect(env).toMatchObject({
      SM_VLLM_ENABLE_PREFIX_CACHING: 'true',
      SM_VLLM_ENABLE_LORA: 'true',
      SM_VLLM_MAX_LORAS: '2',
      SM_VLLM_MAX_LORA_RANK: '64',
      VLLM_ALLOW_RUNTIME_LORA_UPDATING: 'True',
      SM_VLLM_TENSOR_PARALLEL_SIZE: '1',
      SM_VLLM_MODEL: '/opt/ml/model',
    });
  });
});

describe('when an example file is read', () => {
  test.each([
    ['aws-benchmark-replica-stack.ts', '"ml.p5.48xlarge for endpoint usage"'],
    ['inference-components.ts', '"ml.g6e.12xlarge for endpoint usage"'],
    ['minimal-stack.ts', '"ml.g6e.2xlarge for endpoint usage"'],
    ['private-vpc-stack.ts', '"ml.p5.48xlarge for endpoint usage"'],
    ['router-sidecar-stack.ts', '"ml.g5.12xlarge for endpoint usage"'],
    ['routing-ab-variants-stack.ts', '"ml.g6e.2xlarge for endpoint usage"'],
  ])(
    'GIVEN %s WHEN its header is read THEN it states hourly cost drivers (us-east-1, approximate) and the quota %s',
    (file, quota) => {
      const header = readFileSync(join(__dirname, '..', '..', 'examples', file), 'utf8').split('*/')[0];
      expect(header).toContain('Hourly cost drivers');
      expect(header).toContain('us-east-1');
      expect(header).toContain('approximate');
      expect(header).toMatch(/\$\d+(\.\d+)?\/h/);
      expect(header).toContain(quota);
    },
  );
});
