import { App, aws_sagemaker as sagemaker, CfnParameter, Errors, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { Template } from 'aws-cdk-lib/assertions';
import { InstanceType, PrefixAwareLlmEndpoint, PrefixAwareLlmValidationError, RoutingStrategy } from '../../lib/index';
import { ProblemCollector } from '../../lib/private/validation';
import { baseProps, newStack, variantOf } from './helpers';

describe('when the test apps validate templates', () => {
  function endpointConfigWith(strategy: string, prefixLength: number): Stack {
    const stack = newStack();
    new sagemaker.CfnEndpointConfig(stack, 'Raw', {
      productionVariants: [
        {
          variantName: 'AllTraffic',
          modelName: 'm',
          instanceType: 'ml.p5.48xlarge',
          initialInstanceCount: 2,
          routingConfig: {
            routingStrategy: strategy,
            prefixAwareRoutingConfig: { prefixLength, concurrencyThreshold: 32 },
          },
        },
      ],
    });
    return stack;
  }

  test('GIVEN a wrong RoutingStrategy enum in a raw L1 WHEN synthesized THEN synth fails, so the flags are active', () => {
    expect(() => Template.fromStack(endpointConfigWith('PREFIX_AWAREX', 4096))).toThrow(
      /'PREFIX_AWAREX' is not one of/,
    );
  });

  test('GIVEN an out-of-range PrefixLength in a raw L1 WHEN synthesized THEN synth fails on the schema range', () => {
    expect(() => Template.fromStack(endpointConfigWith('PREFIX_AWARE', 512))).toThrow(
      /512 is less than the minimum of 1024/,
    );
  });

  test('GIVEN the same L1 without the flags WHEN synthesized THEN synth passes (findings are only printed)', () => {
    const stack = new Stack(new App(), 'Unflagged');
    new sagemaker.CfnEndpointConfig(stack, 'Raw', {
      productionVariants: [
        {
          variantName: 'v',
          modelName: 'm',
          instanceType: 'ml.p5.48xlarge',
          initialInstanceCount: 2,
          routingConfig: { routingStrategy: 'PREFIX_AWAREX' },
        },
      ],
    });
    const spy = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(() => Template.fromStack(stack)).not.toThrow();
    } finally {
      spy.mockRestore();
    }
  });
});

describe('when values are deploy-time tokens', () => {
  test('GIVEN prefixLength and instanceCount from parameters WHEN synthesized THEN they are not validated and render as references', () => {
    const stack = newStack();
    const prefixLength = new CfnParameter(stack, 'PrefixLength', {
      type: 'Number',
      default: 4096,
      minValue: 1024,
      maxValue: 65536,
    });
    const count = new CfnParameter(stack, 'Count', { type: 'Number', default: 3, minValue: 2 });
    new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({
        routing: RoutingStrategy.prefixAware({ prefixLength: prefixLength.valueAsNumber }),
        instanceCount: count.valueAsNumber,
      }),
    );
    const variant = variantOf(Template.fromStack(stack));
    expect(variant.RoutingConfig.PrefixAwareRoutingConfig.PrefixLength).toEqual({ Ref: 'PrefixLength' });
    expect(variant.InitialInstanceCount).toEqual({ Ref: 'Count' });
  });

  test('GIVEN a deploy-time instance count WHEN synthesized THEN the default rolling batch is 1 instance', () => {
    const stack = newStack();
    const count = new CfnParameter(stack, 'Count', { type: 'Number', default: 3 });
    new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ instanceCount: count.valueAsNumber }));
    const endpoint = Object.values(Template.fromStack(stack).findResources('AWS::SageMaker::Endpoint'))[0] as any;
    expect(endpoint.Properties.DeploymentConfig.RollingUpdatePolicy.MaximumBatchSize).toEqual({
      Type: 'INSTANCE_COUNT',
      Value: 1,
    });
  });

  test('GIVEN a deploy-time instance type without tensorParallelSize WHEN built THEN the GPU count is unknown and TP is required', () => {
    const stack = newStack();
    const type = new CfnParameter(stack, 'Type', { type: 'String', default: 'ml.p5.48xlarge' });
    expect(
      () => new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ instanceType: InstanceType.of(type.valueAsString) })),
    ).toThrow(
      'engine.tensorParallelSize is required because the instance type is a deploy-time value, so its GPU count is unknown (got no tensorParallelSize)',
    );
  });

  test('GIVEN a deploy-time concurrencyThreshold and autoscaling without a target WHEN built THEN the target is required', () => {
    const stack = newStack();
    const threshold = new CfnParameter(stack, 'Threshold', { type: 'Number', default: 32 });
    expect(
      () =>
        new PrefixAwareLlmEndpoint(
          stack,
          'Llm',
          baseProps({
            routing: RoutingStrategy.prefixAware({ concurrencyThreshold: threshold.valueAsNumber }),
            autoScaling: { minCapacity: 2, maxCapacity: 4 },
          }),
        ),
    ).toThrow(
      'autoScaling.targetConcurrentRequestsPerInstance is required when routing.concurrencyThreshold is a deploy-time value',
    );
  });

  test('GIVEN an endpoint name from a parameter WHEN built THEN it is not validated', () => {
    const stack = newStack();
    const name = new CfnParameter(stack, 'Name', { type: 'String' });
    expect(
      () => new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ endpointName: name.valueAsString })),
    ).not.toThrow();
  });
});

describe('when problems are collected', () => {
  const scope = new Construct(newStack(), 'L');

  test('GIVEN no problem WHEN thrown-if-any THEN nothing is thrown', () => {
    expect(() => new ProblemCollector().throwIfAny(scope)).not.toThrow();
  });

  test('GIVEN one problem WHEN thrown THEN it is a core ValidationError attached to the construct, saying 1 invalid setting', () => {
    const problems = new ProblemCollector();
    problems.integerInRange('x', 0, 1, 2);
    let caught: unknown;
    try {
      problems.throwIfAny(scope);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PrefixAwareLlmValidationError);
    expect(Errors.isValidationError(caught)).toBe(true);
    const error = caught as PrefixAwareLlmValidationError;
    expect(error.message).toBe('TestStack/L has 1 invalid setting:\n  - x must be between 1 and 2 (got 0)');
    expect(error.name).toBe('PrefixAwareLlmValidationError');
    expect(error.constructPath).toBe('TestStack/L');
    expect(error.problems).toEqual(['x must be between 1 and 2 (got 0)']);
  });

  test('GIVEN undefined values WHEN checked THEN defaults apply and nothing is reported', () => {
    const problems = new ProblemCollector();
    problems.integerInRange('a', undefined, 1, 2);
    problems.integerAtLeast('b', undefined, 1);
    problems.durationInRange('c', undefined, 1, 2);
    expect(problems.count).toBe(0);
  });
});
