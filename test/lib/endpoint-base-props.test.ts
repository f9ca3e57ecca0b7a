/**
 * `PrefixAwareLlmEndpointBaseProps`: the props `PrefixAwareLlmEndpoint` and `PrefixAwareLlmComponentEndpoint` share
 * have one set of defaults and rules (lib/private/fleet-rules.ts), so one value configures both constructs alike and
 * an invalid one is refused by both with the same problem, naming the prop.
 */
import { aws_ec2 as ec2, aws_iam as iam, aws_s3 as s3, Duration, Size, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import {
  InstanceType,
  ModelSource,
  PrefixAwareLlmComponentEndpoint,
  PrefixAwareLlmEndpoint,
  PrefixAwareLlmEndpointBaseProps,
  PrefixAwareLlmInfos,
  RoutingStrategy,
} from '../../lib/index';
import { validateRoutableFleetSize } from '../../lib/private/fleet-rules';
import { ProblemCollector } from '../../lib/private/validation';
import { newStack, onlyResource, problemsOf } from './helpers';

/** The p5 default, given explicitly so the endpoint does not warn about it. */
const FLEET_TYPE = InstanceType.ML_P5_48XLARGE;

function endpointIn(stack: Stack, shared: PrefixAwareLlmEndpointBaseProps): PrefixAwareLlmEndpoint {
  const bucket = s3.Bucket.fromBucketName(stack, 'Models', 'my-models');
  return new PrefixAwareLlmEndpoint(stack, 'Llm', {
    model: ModelSource.s3(bucket, 'models/llama', { s3ManagedEncryption: true }),
    instanceType: FLEET_TYPE,
    ...shared,
  });
}

function componentEndpointIn(stack: Stack, shared: PrefixAwareLlmEndpointBaseProps): PrefixAwareLlmComponentEndpoint {
  const endpoint = new PrefixAwareLlmComponentEndpoint(stack, 'Llm', { instanceType: FLEET_TYPE, ...shared });
  const bucket = s3.Bucket.fromBucketName(stack, 'Models', 'my-models');
  endpoint.addModel('Base', {
    model: ModelSource.s3(bucket, 'models/llama', { s3ManagedEncryption: true }),
    minMemoryPerCopy: Size.gibibytes(64),
  });
  return endpoint;
}

describe('when one PrefixAwareLlmEndpointBaseProps value configures both constructs', () => {
  // GIVEN every shared prop set, in a VPC with network isolation and a role of the user's
  const stacks = { endpoint: newStack(), component: newStack() };
  const shared = (stack: Stack): PrefixAwareLlmEndpointBaseProps => {
    const vpc = new ec2.Vpc(stack, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
    });
    return {
      instanceType: InstanceType.ML_G6E_12XLARGE,
      instanceCount: 3,
      routing: RoutingStrategy.prefixAware({ prefixLength: 4096, concurrencyThreshold: 16 }),
      role: iam.Role.fromRoleArn(stack, 'Role', 'arn:aws:iam::123456789012:role/llm', { mutable: false }),
      vpc,
      enableNetworkIsolation: true,
      endpointName: 'shared-llm',
      metricsConfig: { publishFrequency: Duration.seconds(30) },
    };
  };
  // WHEN each construct takes it
  endpointIn(stacks.endpoint, shared(stacks.endpoint));
  componentEndpointIn(stacks.component, shared(stacks.component));
  const templates = { endpoint: Template.fromStack(stacks.endpoint), component: Template.fromStack(stacks.component) };
  const variant = (t: Template) => onlyResource(t, 'AWS::SageMaker::EndpointConfig').ProductionVariants[0];

  test('THEN both variants have the same instance type, initial count and RoutingConfig', () => {
    const fleet = (t: Template) => {
      const { InstanceType: type, InitialInstanceCount: count, RoutingConfig: routing } = variant(t);
      return { type, count, routing };
    };
    expect(fleet(templates.endpoint)).toEqual({
      type: 'ml.g6e.12xlarge',
      count: 3,
      routing: {
        RoutingStrategy: 'PREFIX_AWARE',
        PrefixAwareRoutingConfig: { PrefixLength: 4096, ConcurrencyThreshold: 16 },
      },
    });
    expect(fleet(templates.component)).toEqual(fleet(templates.endpoint));
  });

  test('THEN both endpoints have the given name and the same MetricsConfig', () => {
    for (const t of [templates.endpoint, templates.component]) {
      expect(onlyResource(t, 'AWS::SageMaker::Endpoint').EndpointName).toBe('shared-llm');
    }
    const metricsConfig = (t: Template) => onlyResource(t, 'AWS::SageMaker::EndpointConfig').MetricsConfig;
    expect(metricsConfig(templates.endpoint)).toEqual({
      EnableEnhancedMetrics: true,
      MetricPublishFrequencyInSeconds: 30,
    });
    expect(metricsConfig(templates.component)).toEqual(metricsConfig(templates.endpoint));
  });

  test("THEN the role, VPC and isolation go where each construct documents: the model, or the endpoint configuration and every component's model", () => {
    const model = (t: Template) => onlyResource(t, 'AWS::SageMaker::Model');
    const config = onlyResource(templates.component, 'AWS::SageMaker::EndpointConfig');
    for (const where of [model(templates.endpoint), model(templates.component), config]) {
      expect(where.EnableNetworkIsolation).toBe(true);
      expect(where.VpcConfig.Subnets).toHaveLength(2);
      expect(where.VpcConfig.SecurityGroupIds).toHaveLength(1);
    }
    expect(model(templates.endpoint).ExecutionRoleArn).toBe('arn:aws:iam::123456789012:role/llm');
    expect(config.ExecutionRoleArn).toBe('arn:aws:iam::123456789012:role/llm');
    for (const t of [templates.endpoint, templates.component]) t.resourceCountIs('AWS::IAM::Role', 0);
  });
});

describe('when both constructs leave the shared props out', () => {
  const endpoint = endpointIn(newStack(), {});
  const component = new PrefixAwareLlmComponentEndpoint(newStack(), 'Llm', { instanceType: FLEET_TYPE });

  test('THEN both run 2 instances with PREFIX_AWARE at 8192 and 32', () => {
    expect(PrefixAwareLlmEndpoint.DEFAULT_INSTANCE_COUNT).toBe(2);
    expect(component.instanceCount).toBe(2);
    for (const routing of [endpoint.routing, component.routing]) {
      expect([routing.isPrefixAware, routing.prefixLength, routing.concurrencyThreshold]).toEqual([true, 8192, 32]);
    }
  });

  test('THEN both derive the endpoint name from the construct path, lower case', () => {
    expect(endpoint.endpointName).toMatch(/^teststack-llm-[0-9a-f]{8}$/);
    expect(component.endpointName).toMatch(/^teststack-llm-[0-9a-f]{8}$/);
  });

  test('THEN both add the ENDPOINT_NAME_FROM_PATH info, and neither does with a name', () => {
    const infos = (built: PrefixAwareLlmEndpoint | PrefixAwareLlmComponentEndpoint) =>
      Annotations.fromStack(Stack.of(built)).findInfo(
        '*',
        Match.stringLikeRegexp(`Set a stable endpointName.*\\[ack: ${PrefixAwareLlmInfos.ENDPOINT_NAME_FROM_PATH}\\]`),
      );
    expect(infos(endpoint)).toHaveLength(1);
    expect(infos(componentEndpointIn(newStack(), {}))).toHaveLength(1);
    expect(infos(endpointIn(newStack(), { endpointName: 'chat-llm' }))).toHaveLength(0);
    expect(infos(componentEndpointIn(newStack(), { endpointName: 'chat-llm' }))).toHaveLength(0);
  });

  test('THEN the component endpoint defaults to the same instance type as the endpoint', () => {
    expect(new PrefixAwareLlmComponentEndpoint(newStack(), 'Llm').instanceType.name).toBe('ml.p5.48xlarge');
  });
});

describe('when a shared prop is invalid', () => {
  const cases: Array<[string, PrefixAwareLlmEndpointBaseProps, string]> = [
    [
      'an instance type name outside ml.<family>.<size>',
      { instanceType: InstanceType.of('p5.48xlarge', { gpuCount: 8 }) },
      "instanceType must be a SageMaker instance type like 'ml.p5.48xlarge' (got 'p5.48xlarge')",
    ],
    ['instanceCount 0', { instanceCount: 0 }, 'instanceCount must be an integer of at least 1 (got 0)'],
    ['instanceCount 1.5', { instanceCount: 1.5 }, 'instanceCount must be an integer of at least 1 (got 1.5)'],
    [
      'instanceCount 1 under PREFIX_AWARE',
      { instanceCount: 1 },
      'instanceCount must be at least 2 under PREFIX_AWARE routing, because one instance cannot route anywhere; ' +
        'set allowPrefixAwareOnSingleInstance: true to deploy a single instance anyway (got 1)',
    ],
    [
      'an endpoint name with an underscore',
      { endpointName: 'my_llm' },
      "endpointName must be 1–63 letters, digits or hyphens, starting and ending with a letter or digit (got 'my_llm')",
    ],
    [
      'an endpoint name of 64 characters',
      { endpointName: 'a'.repeat(64) },
      `endpointName must be 1–63 letters, digits or hyphens, starting and ending with a letter or digit (got '${'a'.repeat(64)}')`,
    ],
    [
      'a prefix length below 1024',
      { routing: RoutingStrategy.prefixAware({ prefixLength: 1023 }) },
      'routing.prefixLength must be between 1024 and 65536 (got 1023)',
    ],
    [
      'a publish frequency SageMaker does not offer',
      { metricsConfig: { publishFrequency: Duration.seconds(45) } },
      'metricsConfig.publishFrequency must be one of 10, 30, 60, 120, 180, 240, 300 seconds (got 45)',
    ],
  ];

  test.each(cases)(
    'GIVEN %s WHEN either construct is created THEN both refuse it with the same problem',
    (_name, shared, problem) => {
      expect(problemsOf(() => endpointIn(newStack(), shared))).toContain(problem);
      expect(problemsOf(() => componentEndpointIn(newStack(), shared))).toContain(problem);
    },
  );

  test('GIVEN security groups without a VPC WHEN either construct is created THEN both refuse it naming securityGroups', () => {
    const problem = 'securityGroups needs vpc (got no vpc)';
    const groups = (stack: Stack) => [ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-12345678')];
    const stacks = [newStack(), newStack()];
    expect(problemsOf(() => endpointIn(stacks[0], { securityGroups: groups(stacks[0]) }))).toEqual([problem]);
    expect(problemsOf(() => componentEndpointIn(stacks[1], { securityGroups: groups(stacks[1]) }))).toEqual([problem]);
  });

  test('GIVEN instanceCount 2 under PREFIX_AWARE WHEN either construct is created THEN neither reports a problem', () => {
    expect(problemsOf(() => endpointIn(newStack(), { instanceCount: 2 }))).toEqual([]);
    expect(problemsOf(() => componentEndpointIn(newStack(), { instanceCount: 2 }))).toEqual([]);
  });

  test('GIVEN instanceCount 1 with allowPrefixAwareOnSingleInstance WHEN either construct is created THEN neither reports a problem', () => {
    const shared = { instanceCount: 1, allowPrefixAwareOnSingleInstance: true };
    expect(problemsOf(() => endpointIn(newStack(), shared))).toEqual([]);
    expect(problemsOf(() => componentEndpointIn(newStack(), shared))).toEqual([]);
  });

  test('GIVEN instanceCount 1 under RANDOM WHEN either construct is created THEN neither reports a problem', () => {
    const shared = { instanceCount: 1, routing: RoutingStrategy.random() };
    expect(problemsOf(() => endpointIn(newStack(), shared))).toEqual([]);
    expect(problemsOf(() => componentEndpointIn(newStack(), shared))).toEqual([]);
  });
});

describe('when a scaling minimum leaves PREFIX_AWARE one instance or none', () => {
  const refusal = (prop: string, anyway: string, got: number) =>
    `${prop} must be at least 2 under PREFIX_AWARE routing, because one instance cannot route anywhere; ` +
    `set allowPrefixAwareOnSingleInstance: true to ${anyway} anyway (got ${got})`;
  const managed = (minInstanceCount: number) =>
    problemsOf(
      () =>
        new PrefixAwareLlmComponentEndpoint(newStack(), 'Llm', {
          instanceType: FLEET_TYPE,
          managedInstanceScaling: { minInstanceCount, maxInstanceCount: 4 },
        }),
    );

  test('GIVEN autoScaling.minCapacity 1 THEN the endpoint refuses it in the shared wording', () => {
    expect(
      problemsOf(
        () =>
          new PrefixAwareLlmEndpoint(newStack(), 'Llm', {
            model: ModelSource.huggingFace('Qwen/Qwen2.5-7B-Instruct'),
            instanceType: FLEET_TYPE,
            autoScaling: { minCapacity: 1, maxCapacity: 4 },
          }),
      ),
    ).toContain(refusal('autoScaling.minCapacity', 'scale in to one instance', 1));
  });

  test('GIVEN managedInstanceScaling.minInstanceCount 0 THEN the component endpoint refuses it as scale to zero', () => {
    expect(managed(0)).toEqual([
      refusal('managedInstanceScaling.minInstanceCount', 'let the fleet shrink to zero (scale to zero)', 0),
    ]);
  });

  test('GIVEN managedInstanceScaling.minInstanceCount 1 THEN the component endpoint refuses it as one instance', () => {
    expect(managed(1)).toEqual([
      refusal('managedInstanceScaling.minInstanceCount', 'let the fleet shrink to one instance', 1),
    ]);
  });

  test('GIVEN managedInstanceScaling.minInstanceCount -1 THEN only its range is reported, not PREFIX_AWARE as well', () => {
    expect(managed(-1)).toEqual(['managedInstanceScaling.minInstanceCount must be an integer of at least 0 (got -1)']);
  });

  test('GIVEN managedInstanceScaling.minInstanceCount 2 THEN there is no problem', () => {
    expect(managed(2)).toEqual([]);
  });
});

describe('when validateRoutableFleetSize checks a count', () => {
  const check = (count: number | undefined, context: Partial<Parameters<typeof validateRoutableFleetSize>[2]> = {}) => {
    const problems = new ProblemCollector();
    validateRoutableFleetSize(
      'count',
      count,
      { lowestAllowed: 1, prefixAware: true, allowSingleInstance: false, anyway: 'run one', ...context },
      problems,
    );
    return problems.list();
  };
  const refused = (got: number) => [
    `count must be at least 2 under PREFIX_AWARE routing, because one instance cannot route anywhere; set allowPrefixAwareOnSingleInstance: true to run one anyway (got ${got})`,
  ];

  test('GIVEN the lowest allowed count minus one THEN it is left to the range check', () =>
    expect(check(0)).toEqual([]));
  test('GIVEN the lowest allowed count 1 THEN it is refused', () => expect(check(1)).toEqual(refused(1)));
  test('GIVEN 0 with lowest allowed 0 THEN it is refused', () =>
    expect(check(0, { lowestAllowed: 0 })).toEqual(refused(0)));
  test('GIVEN 2 THEN it passes', () => expect(check(2)).toEqual([]));
  test('GIVEN 1 with the opt-out THEN it passes', () => expect(check(1, { allowSingleInstance: true })).toEqual([]));
  test('GIVEN 1 without PREFIX_AWARE THEN it passes', () => expect(check(1, { prefixAware: false })).toEqual([]));
  test('GIVEN no count THEN it passes (the default applies)', () => expect(check(undefined)).toEqual([]));
  test('GIVEN a non-integer THEN it is left to the range check', () => expect(check(1.5)).toEqual([]));
});
