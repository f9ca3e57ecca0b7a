import { Annotations as CoreAnnotations, Duration, aws_iam as iam, aws_kms as kms } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import {
  InstanceType,
  ModelSource,
  PrefixAwareLlmEndpoint,
  PrefixAwareLlmValidationError,
  PrefixAwareLlmWarnings,
  RoutingStrategy,
} from '../../lib/index';
import {
  actionsOf,
  baseProps,
  build,
  environmentOf,
  LLAMA_70B,
  newStack,
  onlyResource,
  policyStatements,
  problemsFor,
  synth,
  variantOf,
  warningsOf,
} from './helpers';

describe('when only the model is given', () => {
  // One synthesized template shared by the assertions on defaults.
  const { endpoint, template } = synth();

  test('GIVEN defaults WHEN synthesized THEN exactly one model, endpoint configuration and endpoint exist', () => {
    template.resourceCountIs('AWS::SageMaker::Model', 1);
    template.resourceCountIs('AWS::SageMaker::EndpointConfig', 1);
    template.resourceCountIs('AWS::SageMaker::Endpoint', 1);
  });

  test('GIVEN defaults WHEN synthesized THEN the model and endpoint configuration have no fixed names (they are replaced on change)', () => {
    expect(onlyResource(template, 'AWS::SageMaker::Model').ModelName).toBeUndefined();
    expect(onlyResource(template, 'AWS::SageMaker::EndpointConfig').EndpointConfigName).toBeUndefined();
  });

  test('GIVEN defaults WHEN synthesized THEN 2 × ml.p5.48xlarge in variant AllTraffic with the CUDA 13 AMI and 30-minute timeouts', () => {
    expect(variantOf(template)).toEqual({
      VariantName: 'AllTraffic',
      ModelName: { 'Fn::GetAtt': [expect.stringMatching(/^LlmModel/), 'ModelName'] },
      InstanceType: 'ml.p5.48xlarge',
      InitialInstanceCount: 2,
      InitialVariantWeight: 1,
      InferenceAmiVersion: 'al2023-ami-sagemaker-inference-gpu-4-1',
      ContainerStartupHealthCheckTimeoutInSeconds: 1800,
      ModelDataDownloadTimeoutInSeconds: 1800,
      RoutingConfig: {
        RoutingStrategy: 'PREFIX_AWARE',
        PrefixAwareRoutingConfig: { PrefixLength: 8192, ConcurrencyThreshold: 32 },
      },
    });
  });

  test('GIVEN defaults WHEN synthesized THEN the container runs the DLC with tensor parallel 8 and prefix caching, no network isolation', () => {
    const model = onlyResource(template, 'AWS::SageMaker::Model');
    expect(model.EnableNetworkIsolation).toBe(false);
    expect(model.PrimaryContainer.Mode).toBe('SingleModel');
    expect(model.VpcConfig).toBeUndefined();
    expect(environmentOf(template)).toEqual({
      SM_VLLM_ENABLE_PREFIX_CACHING: 'true',
      SM_VLLM_MODEL: LLAMA_70B,
      SM_VLLM_TENSOR_PARALLEL_SIZE: '8',
    });
    expect(endpoint.tensorParallelSize).toBe(8);
  });

  test('GIVEN defaults WHEN synthesized THEN the endpoint gets a stable lower-case name derived from the construct path', () => {
    const name = onlyResource(template, 'AWS::SageMaker::Endpoint').EndpointName;
    expect(name).toMatch(/^teststack-llm-[0-9a-f]{8}$/);
    expect(endpoint.endpointName).toBe(name);
  });

  test('GIVEN defaults WHEN synthesized THEN no KMS key or autoscaling; enhanced metrics every 60 s and a dashboard are on', () => {
    expect(onlyResource(template, 'AWS::SageMaker::EndpointConfig').KmsKeyId).toBeUndefined();
    expect(onlyResource(template, 'AWS::SageMaker::EndpointConfig').MetricsConfig).toEqual({
      EnableEnhancedMetrics: true,
      MetricPublishFrequencyInSeconds: 60,
    });
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    template.resourceCountIs('AWS::ApplicationAutoScaling::ScalableTarget', 0);
    expect(onlyResource(template, 'AWS::SageMaker::Endpoint').RetainAllVariantProperties).toBeUndefined();
  });

  test('GIVEN defaults WHEN synthesized THEN the execution role trusts SageMaker only and has no managed policy', () => {
    const role = onlyResource(template, 'AWS::IAM::Role');
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'sagemaker.amazonaws.com' } },
    ]);
    expect(role.ManagedPolicyArns).toBeUndefined();
  });

  test('GIVEN defaults WHEN synthesized THEN no statement grants an action wildcard', () => {
    for (const statement of policyStatements(template)) {
      for (const action of actionsOf(statement)) expect(action).not.toContain('*');
    }
  });

  test("GIVEN defaults WHEN synthesized THEN logs are limited to this endpoint's log group", () => {
    const logs = policyStatements(template).find((s) => actionsOf(s).includes('logs:PutLogEvents'))!;
    const rendered = JSON.stringify(logs.Resource);
    expect(rendered).toContain(`:log-group:/aws/sagemaker/Endpoints/${endpoint.endpointName}"`);
    expect(rendered).toContain(`:log-group:/aws/sagemaker/Endpoints/${endpoint.endpointName}:log-stream:*`);
  });

  test('GIVEN defaults WHEN synthesized THEN instance metrics may go to the endpoint namespace only', () => {
    const metrics = policyStatements(template).find((s) => actionsOf(s).includes('cloudwatch:PutMetricData'))!;
    expect(metrics.Condition).toEqual({ StringEquals: { 'cloudwatch:namespace': '/aws/sagemaker/Endpoints' } });
  });

  test('GIVEN defaults WHEN synthesized THEN the model waits for the role policy', () => {
    const models = template.findResources('AWS::SageMaker::Model');
    const dependsOn = (Object.values(models)[0] as { DependsOn: string[] }).DependsOn;
    const policyId = Object.keys(template.findResources('AWS::IAM::Policy'))[0];
    expect(dependsOn).toContain(policyId);
  });

  test('GIVEN defaults WHEN synthesized THEN escape hatches expose the three SageMaker resources', () => {
    expect(endpoint.cfnModel.cfnResourceType).toBe('AWS::SageMaker::Model');
    expect(endpoint.cfnEndpointConfig.cfnResourceType).toBe('AWS::SageMaker::EndpointConfig');
    expect(endpoint.cfnEndpoint.cfnResourceType).toBe('AWS::SageMaker::Endpoint');
    expect(endpoint.variantName).toBe(PrefixAwareLlmEndpoint.VARIANT_NAME);
  });
});

describe('when the children are listed', () => {
  test('GIVEN defaults WHEN built THEN the child ids are fixed', () => {
    const { endpoint } = build();
    expect(endpoint.node.children.map((c) => c.node.id).sort()).toEqual(
      [
        'ConcurrencySaturationAlarm',
        'Dashboard',
        'Endpoint',
        'EndpointConfig',
        'ErrorRateAlarm',
        'ExecutionRole',
        'GpuMemoryAlarm',
        'HourlyPrice',
        'Model',
        'ModelLatencyAlarm',
      ].sort(),
    );
  });
});

describe('when an escape hatch overrides a property', () => {
  test('GIVEN an override on cfnEndpointConfig WHEN synthesized THEN the template carries it', () => {
    const { stack, endpoint } = build();
    endpoint.cfnEndpointConfig.addPropertyOverride('ProductionVariants.0.EnableSSMAccess', true);
    expect(variantOf(Template.fromStack(stack)).EnableSSMAccess).toBe(true);
  });
});

describe('when instanceCount is at or around its limits (≥ 1; ≥ 2 under PREFIX_AWARE)', () => {
  test('GIVEN 0 (min−1) WHEN built THEN it is refused', () => {
    expect(problemsFor({ instanceCount: 0, allowPrefixAwareOnSingleInstance: true })).toContain(
      'instanceCount must be an integer of at least 1 (got 0)',
    );
  });

  test('GIVEN 1 under PREFIX_AWARE without opt-out WHEN built THEN the error explains why and names the opt-out', () => {
    expect(problemsFor({ instanceCount: 1 })).toEqual([
      'instanceCount must be at least 2 under PREFIX_AWARE routing, because one instance cannot route anywhere; ' +
        'set allowPrefixAwareOnSingleInstance: true to deploy a single instance anyway (got 1)',
    ]);
  });

  test('GIVEN 1 with allowPrefixAwareOnSingleInstance (min) WHEN synthesized THEN one instance with blue/green updates renders', () => {
    const { template } = synth({ instanceCount: 1, allowPrefixAwareOnSingleInstance: true });
    expect(variantOf(template).InitialInstanceCount).toBe(1);
    expect(onlyResource(template, 'AWS::SageMaker::Endpoint').DeploymentConfig.BlueGreenUpdatePolicy).toBeDefined();
  });

  test('GIVEN 2 under PREFIX_AWARE (min) WHEN synthesized THEN it renders', () => {
    expect(variantOf(synth({ instanceCount: 2 }).template).InitialInstanceCount).toBe(2);
  });

  test('GIVEN 7 WHEN synthesized THEN it renders', () => {
    expect(variantOf(synth({ instanceCount: 7 }).template).InitialInstanceCount).toBe(7);
  });
});

describe('when the instance type changes', () => {
  test('GIVEN ml.g6e.12xlarge (4 GPUs) WHEN synthesized THEN tensor parallel size defaults to 4', () => {
    const { template } = synth({ instanceType: InstanceType.ML_G6E_12XLARGE });
    expect(variantOf(template).InstanceType).toBe('ml.g6e.12xlarge');
    expect(environmentOf(template).SM_VLLM_TENSOR_PARALLEL_SIZE).toBe('4');
  });

  test('GIVEN a type outside the catalog without a GPU count WHEN built THEN tensorParallelSize is required', () => {
    expect(problemsFor({ instanceType: InstanceType.of('ml.g7e.12xlarge') })).toEqual([
      "engine.tensorParallelSize is required because the GPU count of ml.g7e.12xlarge is unknown; set it, or use InstanceType.of('ml.g7e.12xlarge', { gpuCount }) (got no tensorParallelSize)",
    ]);
  });

  test.each([
    ['ml.g6e.2xlarg', 'ml.g6e.2xlarge (InstanceType.ML_G6E_2XLARGE, 1 × L40S 48GB)'],
    ['ml.p5.48xlage', 'ml.p5.48xlarge (InstanceType.ML_P5_48XLARGE, 8 × H100 80GB)'],
    ['ml.g5.2xlargee', 'ml.g5.2xlarge (InstanceType.ML_G5_2XLARGE, 1 × A10G 24GB)'],
  ])('GIVEN the typo %p THEN the problem names the closest catalog type first', (typo, closest) => {
    const [problem] = problemsFor({ instanceType: InstanceType.of(typo) });
    expect(problem).toMatch(
      new RegExp(`^instanceType ${typo.replace(/\./g, '\\.')} is not in the catalog: did you mean `),
    );
    expect(problem).toContain(`did you mean ${closest}? Otherwise, engine.tensorParallelSize is required`);
  });

  test('GIVEN a type outside the catalog with a GPU count WHEN synthesized THEN that count is the tensor parallel size', () => {
    const { template } = synth({
      instanceType: InstanceType.of('ml.g7e.12xlarge', { gpuCount: 2, hasLocalNvme: true }),
    });
    expect(environmentOf(template).SM_VLLM_TENSOR_PARALLEL_SIZE).toBe('2');
  });

  test('GIVEN a GPU count of 0 WHEN built THEN it is refused', () => {
    expect(problemsFor({ instanceType: InstanceType.of('ml.c7i.xlarge', { gpuCount: 0 }) })).toEqual([
      'instanceType gpuCount of ml.c7i.xlarge must be an integer of at least 1 (got 0)',
    ]);
  });

  test('GIVEN a malformed name WHEN built THEN it is refused', () => {
    expect(problemsFor({ instanceType: InstanceType.of('p5.48xlarge', { gpuCount: 8 }) })).toEqual([
      "instanceType must be a SageMaker instance type like 'ml.p5.48xlarge' (got 'p5.48xlarge')",
    ]);
  });
});

describe('when the tensor parallel size is set', () => {
  test('GIVEN 3 on 8 GPUs WHEN built THEN it must divide the GPUs', () => {
    expect(problemsFor({ engine: { tensorParallelSize: 3 } })).toEqual([
      'engine.tensorParallelSize must divide the 8 GPUs of ml.p5.48xlarge (got 3)',
    ]);
  });

  test('GIVEN 16 on 8 GPUs WHEN built THEN it must divide the GPUs', () => {
    expect(problemsFor({ engine: { tensorParallelSize: 16 } })).toEqual([
      'engine.tensorParallelSize must divide the 8 GPUs of ml.p5.48xlarge (got 16)',
    ]);
  });

  test('GIVEN 4 on 8 GPUs WHEN synthesized THEN it renders and warns that 4 GPUs idle', () => {
    const { stack, template } = synth({ engine: { tensorParallelSize: 4 } });
    expect(environmentOf(template).SM_VLLM_TENSOR_PARALLEL_SIZE).toBe('4');
    expect(warningsOf(stack).join('\n')).toContain(
      "vLLM uses 4 of the 8 GPUs of ml.p5.48xlarge; set engine.extraArgs['data-parallel-size'] to 2",
    );
  });

  test('GIVEN 4 with data-parallel-size 2 WHEN synthesized THEN every GPU is used and nothing is warned', () => {
    const { stack, template } = synth({ engine: { tensorParallelSize: 4, extraArgs: { 'data-parallel-size': 2 } } });
    expect(environmentOf(template).SM_VLLM_DATA_PARALLEL_SIZE).toBe('2');
    expect(warningsOf(stack)).toEqual([]);
  });

  test('GIVEN 8 with data-parallel-size 2 WHEN built THEN more GPUs than the instance has are refused', () => {
    expect(problemsFor({ engine: { extraArgs: { 'data-parallel-size': 2 }, tensorParallelSize: 8 } })).toEqual([
      'engine tensor × data × pipeline parallel size must be at most the 8 GPUs of ml.p5.48xlarge (got 16)',
    ]);
  });
});

describe('when prefix caching is turned off under PREFIX_AWARE', () => {
  test('GIVEN enablePrefixCaching false WHEN synthesized THEN an acknowledgeable warning is raised and the negative flag renders', () => {
    const { stack, template } = synth({ engine: { enablePrefixCaching: false } });
    expect(environmentOf(template).SM_VLLM_NO_ENABLE_PREFIX_CACHING).toBe('true');
    expect(warningsOf(stack).join('\n')).toContain('engine.enablePrefixCaching is false under PREFIX_AWARE routing');
  });

  test('GIVEN the warning acknowledged on the endpoint WHEN synthesized THEN it is gone', () => {
    const { stack, endpoint } = build({ engine: { enablePrefixCaching: false } });
    CoreAnnotations.of(endpoint).acknowledgeWarning(
      PrefixAwareLlmWarnings.PREFIX_CACHING_DISABLED,
      'A/B test of the cache itself',
    );
    expect(warningsOf(stack)).toEqual([]);
  });

  test('GIVEN the warning acknowledged on the stack before the endpoint exists WHEN synthesized THEN it is gone', () => {
    const stack = newStack();
    CoreAnnotations.of(stack).acknowledgeWarning(
      PrefixAwareLlmWarnings.PREFIX_CACHING_DISABLED,
      'A/B test of the cache itself',
    );
    new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ engine: { enablePrefixCaching: false } }));
    expect(warningsOf(stack)).toEqual([]);
  });

  test('GIVEN prefix caching off under RANDOM WHEN synthesized THEN nothing is warned', () => {
    const { stack } = synth({ routing: RoutingStrategy.random(), engine: { enablePrefixCaching: false } });
    expect(warningsOf(stack)).toEqual([]);
  });
});

describe('when routing and engine limits disagree', () => {
  test('GIVEN prefixLength 65536 and maxModelLen 8192 WHEN synthesized THEN a warning says keys never repeat across turns', () => {
    const { stack } = synth({
      routing: RoutingStrategy.prefixAware({ prefixLength: 65536 }),
      engine: { maxModelLen: 8192 },
    });
    expect(warningsOf(stack).join('\n')).toContain(
      'routing.prefixLength 65536 (≈ 16384 tokens) is longer than engine.maxModelLen 8192 tokens',
    );
  });

  test('GIVEN prefixLength exactly 4 × maxModelLen WHEN synthesized THEN nothing is warned', () => {
    const { stack } = synth({
      routing: RoutingStrategy.prefixAware({ prefixLength: 32768 }),
      engine: { maxModelLen: 8192 },
    });
    expect(warningsOf(stack)).toEqual([]);
  });

  test('GIVEN concurrencyThreshold 64 above maxNumSeqs 32 WHEN synthesized THEN a warning says requests queue in vLLM', () => {
    const { stack } = synth({
      routing: RoutingStrategy.prefixAware({ concurrencyThreshold: 64 }),
      engine: { maxNumSeqs: 32 },
    });
    expect(warningsOf(stack).join('\n')).toContain('routing.concurrencyThreshold 64 is above engine.maxNumSeqs 32');
  });
});

describe('when the timeouts are at or around their limits (60–3600 s)', () => {
  for (const prop of ['containerStartupHealthCheckTimeout', 'modelDataDownloadTimeout'] as const) {
    const cfn =
      prop === 'containerStartupHealthCheckTimeout'
        ? 'ContainerStartupHealthCheckTimeoutInSeconds'
        : 'ModelDataDownloadTimeoutInSeconds';

    test(`GIVEN ${prop} 59 s (min−1) WHEN built THEN it is refused`, () => {
      expect(problemsFor({ [prop]: Duration.seconds(59) })).toEqual([
        `${prop} must be between 60 and 3600 seconds (got 59)`,
      ]);
    });

    test(`GIVEN ${prop} 60 s (min) WHEN synthesized THEN it renders`, () => {
      expect(variantOf(synth({ [prop]: Duration.seconds(60) }).template)[cfn]).toBe(60);
    });

    test(`GIVEN ${prop} 3600 s (max) WHEN synthesized THEN it renders`, () => {
      expect(variantOf(synth({ [prop]: Duration.hours(1) }).template)[cfn]).toBe(3600);
    });

    test(`GIVEN ${prop} 3601 s (max+1) WHEN built THEN it is refused`, () => {
      expect(problemsFor({ [prop]: Duration.seconds(3601) })).toEqual([
        `${prop} must be between 60 and 3600 seconds (got 3601)`,
      ]);
    });
  }

  test('GIVEN a timeout of 90.5 s WHEN built THEN fractional seconds are refused', () => {
    expect(problemsFor({ modelDataDownloadTimeout: Duration.millis(90500) })).toEqual([
      'modelDataDownloadTimeout must be a whole number of seconds between 60 and 3600 (got 90.5 s)',
    ]);
  });
});

describe('when endpointName is given', () => {
  test('GIVEN a valid name WHEN synthesized THEN the endpoint, alarm and log permissions use it', () => {
    const { template, endpoint } = synth({ endpointName: 'chat-llm' });
    expect(onlyResource(template, 'AWS::SageMaker::Endpoint').EndpointName).toBe('chat-llm');
    const latencyAlarm = Object.entries(template.findResources('AWS::CloudWatch::Alarm')).find(([id]) =>
      id.startsWith('LlmModelLatencyAlarm'),
    )![1];
    expect((latencyAlarm as any).Properties.Dimensions).toContainEqual({ Name: 'EndpointName', Value: 'chat-llm' });
    expect(endpoint.endpointName).toBe('chat-llm');
  });

  test('GIVEN 63 characters (max) WHEN synthesized THEN it renders', () => {
    const name = 'a'.repeat(63);
    expect(onlyResource(synth({ endpointName: name }).template, 'AWS::SageMaker::Endpoint').EndpointName).toBe(name);
  });

  test('GIVEN 64 characters (max+1) WHEN built THEN it is refused', () => {
    expect(problemsFor({ endpointName: 'a'.repeat(64) })).toHaveLength(1);
  });

  test('GIVEN an underscore WHEN built THEN it is refused with the rule', () => {
    expect(problemsFor({ endpointName: 'chat_llm' })).toEqual([
      "endpointName must be 1–63 letters, digits or hyphens, starting and ending with a letter or digit (got 'chat_llm')",
    ]);
  });

  test('GIVEN an empty name (min−1) WHEN built THEN it is refused', () => {
    expect(problemsFor({ endpointName: '' })).toHaveLength(1);
  });
});

describe('when the encryption key meets the instance storage', () => {
  test('GIVEN a key on ml.p5.48xlarge (local NVMe) WHEN built THEN it is refused because SageMaker rejects KmsKeyId there', () => {
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    expect(() => new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ encryptionKey: key }))).toThrow(
      'encryptionKey cannot be used with ml.p5.48xlarge: it has local NVMe storage, which SageMaker encrypts in hardware and for which it rejects a KmsKeyId (got a key)',
    );
  });

  test('GIVEN a key on an EBS-backed type WHEN synthesized THEN KmsKeyId renders', () => {
    const stack = newStack();
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({
        encryptionKey: key,
        instanceType: InstanceType.of('ml.p3.2xlarge', { gpuCount: 1 }),
        model: ModelSource.huggingFace('Qwen/Qwen2.5-0.5B-Instruct'),
      }),
    );
    const config = onlyResource(Template.fromStack(stack), 'AWS::SageMaker::EndpointConfig');
    expect(config.KmsKeyId).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^Key/), 'Arn'] });
  });
});

describe('when a role is given', () => {
  test('GIVEN an existing role WHEN synthesized THEN no role is created and the statements go to the given role', () => {
    const stack = newStack();
    const role = new iam.Role(stack, 'MyRole', { assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com') });
    const endpoint = new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ role }));
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::IAM::Role', 1);
    expect(endpoint.role).toBe(role);
    expect(onlyResource(template, 'AWS::SageMaker::Model').ExecutionRoleArn).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/^MyRole/), 'Arn'],
    });
    expect(policyStatements(template).some((s) => actionsOf(s).includes('ecr:BatchGetImage'))).toBe(true);
  });
});

describe('when clients are granted access', () => {
  test('GIVEN grantInvoke WHEN synthesized THEN only sagemaker:InvokeEndpoint (which also authorizes streaming) applies, to this endpoint ARN only', () => {
    const stack = newStack();
    const endpoint = new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps());
    const client = new iam.Role(stack, 'Client', { assumedBy: new iam.AccountRootPrincipal() });
    endpoint.grantInvoke(client);
    const policies = Template.fromStack(stack).findResources('AWS::IAM::Policy', {
      Properties: { Roles: [{ Ref: Match.stringLikeRegexp('^Client') }] },
    });
    const statements = (Object.values(policies)[0] as any).Properties.PolicyDocument.Statement;
    expect(statements).toEqual([
      {
        Action: 'sagemaker:InvokeEndpoint',
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [expect.stringMatching(/^LlmEndpoint/), 'EndpointArn'] },
      },
    ]);
  });

  test('GIVEN grantInvokeOpenAiCompatible WHEN synthesized THEN CallWithBearerToken is added on *, the only resource it accepts', () => {
    const stack = newStack();
    const endpoint = new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps());
    const client = new iam.Role(stack, 'Client', { assumedBy: new iam.AccountRootPrincipal() });
    endpoint.grantInvokeOpenAiCompatible(client);
    const statements = policyStatements(Template.fromStack(stack)).filter((s) =>
      actionsOf(s).some((a) => a.startsWith('sagemaker:')),
    );
    expect(statements.map((s) => actionsOf(s))).toEqual([
      ['sagemaker:InvokeEndpoint'],
      ['sagemaker:CallWithBearerToken'],
    ]);
    expect(statements[1].Resource).toBe('*');
  });
});

describe('when an endpoint is imported', () => {
  test('GIVEN a mixed-case name WHEN imported THEN the ARN carries it in lower case, as SageMaker does', () => {
    const stack = newStack({ env: { account: '111122223333', region: 'us-east-1' } });
    const imported = PrefixAwareLlmEndpoint.fromEndpointAttributes(stack, 'Imported', { endpointName: 'Chat-LLM' });
    expect(stack.resolve(imported.endpointArn)).toEqual({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sagemaker:us-east-1:111122223333:endpoint/chat-llm']],
    });
    expect(imported.variantName).toBe('AllTraffic');
    expect(stack.resolve(imported.metricInvocations().dimensions)).toEqual({
      EndpointName: 'Chat-LLM',
      VariantName: 'AllTraffic',
    });
  });
});

describe('when several props are wrong at once', () => {
  test('GIVEN four mistakes WHEN built THEN one PrefixAwareLlmValidationError lists all of them with the construct path', () => {
    let caught: unknown;
    try {
      build({
        instanceCount: 0,
        routing: RoutingStrategy.prefixAware({ prefixLength: 512 }),
        engine: { tensorParallelSize: 3 },
        modelDataDownloadTimeout: Duration.seconds(10),
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PrefixAwareLlmValidationError);
    const error = caught as PrefixAwareLlmValidationError;
    expect(error.problems).toEqual([
      'routing.prefixLength must be between 1024 and 65536 (got 512)',
      'instanceCount must be an integer of at least 1 (got 0)',
      'engine.tensorParallelSize must divide the 8 GPUs of ml.p5.48xlarge (got 3)',
      'modelDataDownloadTimeout must be between 60 and 3600 seconds (got 10)',
    ]);
    expect(error.message).toMatch(/^TestStack\/Llm has 4 invalid settings:\n {2}- routing\.prefixLength/);
  });
});
