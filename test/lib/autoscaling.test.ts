import { Duration } from 'aws-cdk-lib';
import { PrefixAwareLlmWarnings, RoutingStrategy } from '../../lib/index';
import { build, onlyResource, problemsFor, synth, warningsOf } from './helpers';

describe('when autoscaling is configured', () => {
  const { template, endpoint } = synth({ autoScaling: { minCapacity: 2, maxCapacity: 6 } });

  test('GIVEN min 2 max 6 WHEN synthesized THEN the variant is a scalable target on DesiredInstanceCount through the service-linked role', () => {
    const target = onlyResource(template, 'AWS::ApplicationAutoScaling::ScalableTarget');
    expect(target).toMatchObject({
      ServiceNamespace: 'sagemaker',
      ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
      MinCapacity: 2,
      MaxCapacity: 6,
      ResourceId: {
        'Fn::Join': [
          '',
          [
            'endpoint/',
            { 'Fn::GetAtt': [expect.stringMatching(/^LlmEndpoint/), 'EndpointName'] },
            '/variant/AllTraffic',
          ],
        ],
      },
    });
    expect(JSON.stringify(target.RoleARN)).toContain(
      ':role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint',
    );
  });

  test('GIVEN defaults WHEN synthesized THEN target tracking follows the high-resolution concurrency metric at 3/4 of the threshold', () => {
    const policy = onlyResource(template, 'AWS::ApplicationAutoScaling::ScalingPolicy');
    expect(policy).toMatchObject({
      PolicyType: 'TargetTrackingScaling',
      TargetTrackingScalingPolicyConfiguration: {
        PredefinedMetricSpecification: {
          PredefinedMetricType: 'SageMakerVariantConcurrentRequestsPerModelHighResolution',
        },
        TargetValue: 24,
        ScaleOutCooldown: 300,
        ScaleInCooldown: 900,
      },
    });
  });

  test('GIVEN autoscaling WHEN synthesized THEN updates keep the instance count the policy reached', () => {
    expect(onlyResource(template, 'AWS::SageMaker::Endpoint').RetainAllVariantProperties).toBe(true);
    expect(endpoint.autoScaling).toBeDefined();
  });

  test('GIVEN autoscaling WHEN synthesized THEN no IAM role is created for Application Auto Scaling', () => {
    expect(Object.keys(template.findResources('AWS::IAM::Role'))).toHaveLength(1);
  });
});

describe('when an autoscaled endpoint is synthesized', () => {
  // SageMaker refuses an UpdateEndpoint that changes the instance type of a variant registered with Application Auto
  // Scaling (https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling-update.html).
  test('GIVEN autoScaling WHEN synthesized THEN a warning says the instance type cannot change in a later deploy, and the way out', () => {
    const { stack } = build({ endpointName: 'x', autoScaling: { minCapacity: 2, maxCapacity: 4 } });
    const warning = warningsOf(stack).find((w) => w.includes(PrefixAwareLlmWarnings.AUTOSCALED_INSTANCE_TYPE_FIXED));
    expect(warning).toContain('a later deploy that changes instanceType or instancePools fails');
    expect(warning).toContain('deploy once without autoScaling');
    expect(warning).toContain('then add autoScaling back');
  });

  test('GIVEN no autoScaling WHEN synthesized THEN no such warning', () => {
    const { stack } = build({ endpointName: 'x' });
    expect(warningsOf(stack).filter((w) => w.includes(PrefixAwareLlmWarnings.AUTOSCALED_INSTANCE_TYPE_FIXED))).toEqual(
      [],
    );
  });
});

describe('when autoscaling options are set', () => {
  test('GIVEN a custom threshold of 100 WHEN synthesized THEN the default target follows it (75)', () => {
    const { template } = synth({
      routing: RoutingStrategy.prefixAware({ concurrencyThreshold: 100 }),
      autoScaling: { minCapacity: 2, maxCapacity: 4 },
    });
    expect(
      onlyResource(template, 'AWS::ApplicationAutoScaling::ScalingPolicy').TargetTrackingScalingPolicyConfiguration
        .TargetValue,
    ).toBe(75);
  });

  test('GIVEN RANDOM routing WHEN synthesized THEN the default target is 24', () => {
    const { template } = synth({ routing: RoutingStrategy.random(), autoScaling: { minCapacity: 1, maxCapacity: 4 } });
    expect(
      onlyResource(template, 'AWS::ApplicationAutoScaling::ScalingPolicy').TargetTrackingScalingPolicyConfiguration
        .TargetValue,
    ).toBe(24);
  });

  test('GIVEN explicit target and cooldowns WHEN synthesized THEN they render', () => {
    const { template } = synth({
      autoScaling: {
        minCapacity: 2,
        maxCapacity: 4,
        targetConcurrentRequestsPerInstance: 12.5,
        scaleOutCooldown: Duration.minutes(2),
        scaleInCooldown: Duration.minutes(30),
      },
    });
    expect(
      onlyResource(template, 'AWS::ApplicationAutoScaling::ScalingPolicy').TargetTrackingScalingPolicyConfiguration,
    ).toMatchObject({ TargetValue: 12.5, ScaleOutCooldown: 120, ScaleInCooldown: 1800 });
  });
});

describe('when capacities are at or around their limits', () => {
  test('GIVEN minCapacity 0 (min−1) WHEN built THEN it is refused', () => {
    expect(
      problemsFor({
        routing: RoutingStrategy.random(),
        instanceCount: 1,
        autoScaling: { minCapacity: 0, maxCapacity: 2 },
      }),
    ).toContain('autoScaling.minCapacity must be an integer of at least 1 (got 0)');
  });

  test('GIVEN minCapacity 1 under PREFIX_AWARE WHEN built THEN it is refused with the opt-out named', () => {
    expect(problemsFor({ autoScaling: { minCapacity: 1, maxCapacity: 4 } })).toEqual([
      'autoScaling.minCapacity must be at least 2 under PREFIX_AWARE routing, because one instance cannot route anywhere; ' +
        'set allowPrefixAwareOnSingleInstance: true to scale in to one instance anyway (got 1)',
    ]);
  });

  test('GIVEN minCapacity 1 with the opt-out (min) WHEN synthesized THEN it renders', () => {
    const { template } = synth({
      allowPrefixAwareOnSingleInstance: true,
      autoScaling: { minCapacity: 1, maxCapacity: 4 },
    });
    expect(onlyResource(template, 'AWS::ApplicationAutoScaling::ScalableTarget').MinCapacity).toBe(1);
  });

  test('GIVEN minCapacity equal to maxCapacity (boundary) WHEN synthesized THEN it renders', () => {
    const { template } = synth({ autoScaling: { minCapacity: 2, maxCapacity: 2 } });
    expect(onlyResource(template, 'AWS::ApplicationAutoScaling::ScalableTarget')).toMatchObject({
      MinCapacity: 2,
      MaxCapacity: 2,
    });
  });

  test('GIVEN minCapacity above maxCapacity (max+1) WHEN built THEN it is refused', () => {
    expect(problemsFor({ instanceCount: 3, autoScaling: { minCapacity: 3, maxCapacity: 2 } })).toContain(
      'autoScaling.minCapacity must be at most autoScaling.maxCapacity (got minCapacity 3 > maxCapacity 2)',
    );
  });

  test('GIVEN instanceCount outside min–max WHEN built THEN it is refused', () => {
    expect(problemsFor({ instanceCount: 7, autoScaling: { minCapacity: 2, maxCapacity: 4 } })).toEqual([
      'instanceCount must lie between autoScaling.minCapacity 2 and autoScaling.maxCapacity 4 (got 7)',
    ]);
  });

  test('GIVEN a target of 0 WHEN built THEN it is refused', () => {
    expect(
      problemsFor({ autoScaling: { minCapacity: 2, maxCapacity: 4, targetConcurrentRequestsPerInstance: 0 } }),
    ).toEqual(['autoScaling.targetConcurrentRequestsPerInstance must be a number greater than 0 (got 0)']);
  });
});

describe('when cooldowns are at or around their limits (0–3600 s)', () => {
  const base = { minCapacity: 2, maxCapacity: 4 };

  test('GIVEN 0 s (min) WHEN synthesized THEN it renders', () => {
    const { template } = synth({ autoScaling: { ...base, scaleOutCooldown: Duration.seconds(0) } });
    expect(
      onlyResource(template, 'AWS::ApplicationAutoScaling::ScalingPolicy').TargetTrackingScalingPolicyConfiguration
        .ScaleOutCooldown,
    ).toBe(0);
  });

  test('GIVEN 3600 s (max) WHEN synthesized THEN it renders', () => {
    const { template } = synth({ autoScaling: { ...base, scaleInCooldown: Duration.hours(1) } });
    expect(
      onlyResource(template, 'AWS::ApplicationAutoScaling::ScalingPolicy').TargetTrackingScalingPolicyConfiguration
        .ScaleInCooldown,
    ).toBe(3600);
  });

  test('GIVEN 3601 s (max+1) WHEN built THEN it is refused', () => {
    expect(problemsFor({ autoScaling: { ...base, scaleInCooldown: Duration.seconds(3601) } })).toEqual([
      'autoScaling.scaleInCooldown must be between 0 and 3600 seconds (got 3601)',
    ]);
  });

  test('GIVEN a fractional second WHEN built THEN it is refused', () => {
    expect(problemsFor({ autoScaling: { ...base, scaleOutCooldown: Duration.millis(1500) } })).toEqual([
      'autoScaling.scaleOutCooldown must be a whole number of seconds between 0 and 3600 (got 1.5 s)',
    ]);
  });
});
