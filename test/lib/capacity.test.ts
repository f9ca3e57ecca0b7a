import { Annotations as CoreAnnotations, Duration } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { DeploymentPolicy, InstanceType, PrefixAwareLlmWarnings } from '../../lib/index';
import { build, problemsFor, synth, variantOf, warningsOf } from './helpers';

const RESERVATION = 'arn:aws:sagemaker:us-east-1:111122223333:ml-reservation/p5-block-2026';

describe('when capacity comes from a reservation and falls back across instance pools', () => {
  // One synthesized stack (with aws-cdk-lib's CloudFormation schema validation) for every property at once.
  const { template, endpoint } = synth({
    instancePools: [InstanceType.ML_P5_48XLARGE, InstanceType.ML_P5E_48XLARGE, InstanceType.ML_P5EN_48XLARGE],
    capacityReservation: { mlReservationArn: RESERVATION },
    variantInstanceProvisionTimeout: Duration.minutes(30),
    instanceCount: 7,
    endpointName: 'chat-llm',
  });

  test('GIVEN three pools WHEN synthesized THEN they replace InstanceType, in the given order as priorities 1–3', () => {
    const variant = variantOf(template);
    expect(variant.InstanceType).toBeUndefined();
    expect(variant.InstancePools).toEqual([
      { InstanceType: 'ml.p5.48xlarge', Priority: 1 },
      { InstanceType: 'ml.p5e.48xlarge', Priority: 2 },
      { InstanceType: 'ml.p5en.48xlarge', Priority: 3 },
    ]);
    expect(endpoint.instanceType).toBe(InstanceType.ML_P5_48XLARGE);
    expect(endpoint.tensorParallelSize).toBe(8);
  });

  test('GIVEN a reservation WHEN synthesized THEN instances launch into it only', () => {
    expect(variantOf(template).CapacityReservationConfig).toEqual({
      CapacityReservationPreference: 'capacity-reservations-only',
      MlReservationArn: RESERVATION,
    });
  });

  test(
    'GIVEN the synthesis above passed WHEN an unknown variant property is added THEN the same schema validation fails, so ' +
      "aws-cdk-lib 2.276's EndpointConfig schema knows InstancePools, CapacityReservationConfig and the provisioning timeout",
    () => {
      const other = build({ endpointName: 'x' });
      other.endpoint.cfnEndpointConfig.addPropertyOverride('ProductionVariants.0.NotAProperty', 1);
      expect(() => Template.fromStack(other.stack)).toThrow(
        "ProductionVariants.0.NotAProperty: Additional properties are not allowed ('NotAProperty' was unexpected)",
      );
    },
  );

  test('GIVEN the engine aws-cdk-lib validated with THEN it is the one the worker shares (test/shared-validator-environment.js), and a suite freeing it leaves it validating', () => {
    // What aws-cdk-lib's require gets; without the environment's mapping the name does not even resolve from here.
    const validator = require('@aws/cloudformation-validate') as {
      CompositeEngine: new (config: object) => {
        free(): void;
        validateTemplate(template: unknown, options?: object): { diagnostics: { message: string }[] };
      };
      TemplateContent: new (content: string, name: string) => unknown;
    };
    const [first, second] = [new validator.CompositeEngine({}), new validator.CompositeEngine({})];
    expect(Object.getPrototypeOf(first)).toBe(Object.getPrototypeOf(second));
    first.free();
    const bad = { Resources: { Config: { Type: 'AWS::SageMaker::EndpointConfig', Properties: { NotAProperty: 1 } } } };
    const report = second.validateTemplate(new validator.TemplateContent(JSON.stringify(bad), 'bad.json'));
    expect(report.diagnostics.map((d) => d.message).join('\n')).toContain("'NotAProperty' was unexpected");
  });

  test('GIVEN 30 minutes WHEN synthesized THEN the provisioning timeout is 1800 s', () => {
    expect(variantOf(template).VariantInstanceProvisionTimeoutInSeconds).toBe(1800);
  });
});

describe('when the provisioning timeout is at or around its limits (300–3600 s)', () => {
  test.each([
    [300, []],
    [3600, []],
    [299, ['variantInstanceProvisionTimeout must be between 300 and 3600 seconds (got 299)']],
    [3601, ['variantInstanceProvisionTimeout must be between 300 and 3600 seconds (got 3601)']],
  ] as const)('GIVEN %d s WHEN built THEN problems are %j', (seconds, expected) => {
    expect(problemsFor({ variantInstanceProvisionTimeout: Duration.seconds(seconds) })).toEqual(expected);
  });
});

describe('when instance pools are wrong', () => {
  test('GIVEN six pools (max+1) WHEN built THEN they are refused; five (max) are accepted', () => {
    const six = [
      InstanceType.ML_P5_48XLARGE,
      InstanceType.ML_P5E_48XLARGE,
      InstanceType.ML_P5EN_48XLARGE,
      InstanceType.ML_P6_B200_48XLARGE,
      InstanceType.ML_P4DE_24XLARGE,
      InstanceType.ML_P4D_24XLARGE,
    ];
    expect(problemsFor({ instancePools: six })).toEqual([
      'instancePools must list between 1 and 5 instance types (got 6)',
    ]);
    expect(problemsFor({ instancePools: six.slice(0, 5) })).toEqual([]);
  });

  test('GIVEN no pool (min−1) WHEN built THEN it is refused', () => {
    expect(problemsFor({ instancePools: [] })).toEqual([
      'instancePools must list between 1 and 5 instance types (got 0)',
    ]);
  });

  test('GIVEN instanceType and instancePools WHEN built THEN they exclude each other', () => {
    expect(
      problemsFor({ instanceType: InstanceType.ML_P5_48XLARGE, instancePools: [InstanceType.ML_P5E_48XLARGE] }),
    ).toEqual([
      'instanceType and instancePools exclude each other: SageMaker replaces InstanceType with the pools; list the preferred type first ' +
        'in instancePools (got instanceType ml.p5.48xlarge and 1 pools)',
    ]);
  });

  test('GIVEN a repeated type WHEN built THEN it is refused', () => {
    expect(problemsFor({ instancePools: [InstanceType.ML_P5_48XLARGE, InstanceType.ML_P5_48XLARGE] })).toEqual([
      'instancePools must not repeat an instance type (got ml.p5.48xlarge twice)',
    ]);
  });

  test('GIVEN pools with 8 and 4 GPUs and no tensor parallel size WHEN built THEN one is required', () => {
    expect(problemsFor({ instancePools: [InstanceType.ML_P5_48XLARGE, InstanceType.ML_G6E_12XLARGE] })).toEqual([
      'engine.tensorParallelSize is required because the instancePools have different GPU counts (8, 4); choose one that divides all of them ' +
        '(got no tensorParallelSize)',
    ]);
  });

  test('GIVEN pools with 8 and 4 GPUs and tensor parallel 8 WHEN built THEN it must divide the 4-GPU pool too', () => {
    expect(
      problemsFor({
        instancePools: [InstanceType.ML_P5_48XLARGE, InstanceType.ML_G6E_12XLARGE],
        engine: { tensorParallelSize: 8 },
      }),
    ).toEqual(['engine.tensorParallelSize must divide the 4 GPUs of ml.g6e.12xlarge (got 8)']);
  });
});

describe('when the reservation ARN is checked', () => {
  test.each(['arn:aws:sagemaker:us-east-1:111122223333:training-plan/p5-plan', RESERVATION])(
    'GIVEN %s WHEN built THEN it is accepted',
    (arn) => {
      expect(problemsFor({ capacityReservation: { mlReservationArn: arn } })).toEqual([]);
    },
  );

  test.each(['arn:aws:ec2:us-east-1:111122223333:capacity-reservation/cr-0123', 'p5-block-2026'])(
    'GIVEN %s WHEN built THEN it is refused with the expected form',
    (arn) => {
      expect(problemsFor({ capacityReservation: { mlReservationArn: arn } })).toEqual([
        "capacityReservation.mlReservationArn must be a SageMaker reservation ARN like 'arn:aws:sagemaker:us-east-1:111122223333:ml-reservation/name' " +
          `(20–258 characters) (got '${arn}')`,
      ]);
    },
  );
});

describe('when blue/green is chosen for a fleet', () => {
  test('GIVEN blue/green on 7 instances WHEN synthesized THEN an acknowledgeable warning states the doubled fleet', () => {
    const { stack } = build({ instanceCount: 7, deployment: DeploymentPolicy.blueGreen(), endpointName: 'chat-llm' });
    expect(warningsOf(stack).join('\n')).toContain(
      'every update first provisions a second complete fleet (14 instances at once',
    );
  });

  test('GIVEN the warning acknowledged WHEN synthesized THEN it is gone', () => {
    const { stack, endpoint } = build({
      instanceCount: 7,
      deployment: DeploymentPolicy.blueGreen(),
      endpointName: 'chat-llm',
    });
    CoreAnnotations.of(endpoint).acknowledgeWarning(
      PrefixAwareLlmWarnings.BLUE_GREEN_DOUBLES_FLEET,
      'Reserved capacity covers 14 instances.',
    );
    expect(warningsOf(stack)).toEqual([]);
  });

  test('GIVEN one instance (blue/green by default) WHEN synthesized THEN nothing is warned', () => {
    const { stack } = build({ instanceCount: 1, allowPrefixAwareOnSingleInstance: true, endpointName: 'chat-llm' });
    expect(warningsOf(stack)).toEqual([]);
  });
});

describe('when no endpoint name is given', () => {
  test('GIVEN no endpointName WHEN synthesized THEN an info recommends a stable one; with a name there is none', () => {
    const unnamed = build().stack;
    expect(
      Annotations.fromStack(unnamed).findInfo('*', Match.stringLikeRegexp('Set a stable endpointName')),
    ).toHaveLength(1);
    const named = build({ endpointName: 'chat-llm' }).stack;
    expect(
      Annotations.fromStack(named).findInfo('*', Match.stringLikeRegexp('Set a stable endpointName')),
    ).toHaveLength(0);
  });
});
