import { aws_iam as iam, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeploymentPolicy, PrefixAwareLlmEndpoint, RoutingStrategy } from '../../lib/index';
import {
  AB_TESTING_CLOUDWATCH_READ_ACTIONS,
  AB_TESTING_CONFIG_ACTIONS,
  AB_TESTING_ENDPOINT_ACTIONS,
  AB_TESTING_MODEL_READ_ACTIONS,
  INVOKE_ENDPOINT_ACTIONS,
} from '../../lib/private/iam-actions';
import { build, newStack, onlyResource, synth } from './helpers';

describe('when routingVariants adds variants that differ only in routing', () => {
  test('GIVEN one extra RANDOM variant WHEN synthesized THEN it copies the main variant except name and RoutingConfig, and updates are blue/green', () => {
    const { template } = synth({ routingVariants: [{ variantName: 'Random', routing: RoutingStrategy.random() }] });
    const [main, extra] = onlyResource(template, 'AWS::SageMaker::EndpointConfig').ProductionVariants;
    expect(extra.VariantName).toBe('Random');
    expect(extra.RoutingConfig).toEqual({ RoutingStrategy: 'RANDOM' });
    const { VariantName: _a, RoutingConfig: _b, ...mainRest } = main;
    const { VariantName: _c, RoutingConfig: _d, ...extraRest } = extra;
    expect(extraRest).toEqual(mainRest);
    expect(onlyResource(template, 'AWS::SageMaker::Endpoint').DeploymentConfig.BlueGreenUpdatePolicy).toBeDefined();
  });

  test('GIVEN no routingVariants WHEN synthesized THEN there is one variant and the rolling default stays', () => {
    const { template } = synth();
    expect(onlyResource(template, 'AWS::SageMaker::EndpointConfig').ProductionVariants).toHaveLength(1);
    expect(onlyResource(template, 'AWS::SageMaker::Endpoint').DeploymentConfig.RollingUpdatePolicy).toBeDefined();
  });

  test.each([
    [
      [{ variantName: 'AllTraffic', routing: RoutingStrategy.random() }],
      "routingVariants[0].variantName must differ from the other variant names (AllTraffic) (got 'AllTraffic')",
    ],
    [
      [
        { variantName: 'a', routing: RoutingStrategy.random() },
        { variantName: 'a', routing: RoutingStrategy.random() },
      ],
      'routingVariants[1].variantName must differ',
    ],
    [
      [{ variantName: '-bad', routing: RoutingStrategy.random() }],
      'routingVariants[0].variantName must be 1–63 letters, digits or hyphens',
    ],
    [
      [{ variantName: 'x'.repeat(64), routing: RoutingStrategy.random() }],
      'routingVariants[0].variantName must be 1–63',
    ],
    [
      [{ variantName: 'P', routing: RoutingStrategy.prefixAware({ prefixLength: 1023 }) }],
      'routingVariants[0].routing.prefixLength must be between 1024 and 65536 (got 1023)',
    ],
    [
      Array.from({ length: 10 }, (_, i) => ({ variantName: `v${i}`, routing: RoutingStrategy.random() })),
      'routingVariants must hold at most 9 variants (10 production variants in all) (got 10)',
    ],
  ])('GIVEN routingVariants %# THEN synth fails naming the prop', (routingVariants, message) => {
    expect(() => build({ routingVariants })).toThrow(message);
  });

  test('GIVEN a boundary: 9 extra variants THEN it synthesizes', () => {
    const routingVariants = Array.from({ length: 9 }, (_, i) => ({
      variantName: `v${i}`,
      routing: RoutingStrategy.random(),
    }));
    expect(() => build({ routingVariants })).not.toThrow();
  });

  test('GIVEN routingVariants with an explicit rolling deployment THEN synth fails: SageMaker rolls only single-variant endpoints', () => {
    expect(() =>
      build({
        routingVariants: [{ variantName: 'R', routing: RoutingStrategy.random() }],
        deployment: DeploymentPolicy.rolling(),
      }),
    ).toThrow('deployment must be DeploymentPolicy.blueGreen() with routingVariants');
  });

  test('GIVEN routingVariants with autoScaling THEN synth fails: the fleets must stay equal', () => {
    expect(() =>
      build({
        routingVariants: [{ variantName: 'R', routing: RoutingStrategy.random() }],
        autoScaling: { minCapacity: 2, maxCapacity: 4 },
      }),
    ).toThrow('autoScaling cannot be combined with routingVariants');
  });
});

describe('when grantAbTesting gives a role what prefix-router ab needs', () => {
  function statements(stack: Stack) {
    return Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy')).flatMap(
      (p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[],
    );
  }
  const actionsOf = (s: { Action: string | string[] }) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

  test('GIVEN a role WHEN granted THEN it gets exactly the A/B actions, endpoint actions on the endpoint ARN only', () => {
    const { stack, endpoint } = build();
    const role = new iam.Role(stack, 'Tester', { assumedBy: new iam.AccountRootPrincipal() });
    endpoint.grantAbTesting(role);
    const granted = statements(stack).filter((s) =>
      actionsOf(s).some(
        (a) =>
          AB_TESTING_CONFIG_ACTIONS.includes(a) ||
          AB_TESTING_ENDPOINT_ACTIONS.includes(a) ||
          AB_TESTING_CLOUDWATCH_READ_ACTIONS.includes(a) ||
          INVOKE_ENDPOINT_ACTIONS.includes(a) ||
          AB_TESTING_MODEL_READ_ACTIONS.includes(a),
      ),
    );
    const all = granted.flatMap(actionsOf).sort();
    expect(all).toEqual(
      [
        ...INVOKE_ENDPOINT_ACTIONS,
        ...AB_TESTING_ENDPOINT_ACTIONS,
        ...AB_TESTING_CONFIG_ACTIONS,
        ...AB_TESTING_MODEL_READ_ACTIONS,
        ...AB_TESTING_CLOUDWATCH_READ_ACTIONS,
      ].sort(),
    );
    for (const s of granted) {
      if (actionsOf(s).includes('sagemaker:UpdateEndpoint'))
        expect(s.Resource).toEqual(stack.resolve(endpoint.endpointArn));
      if (actionsOf(s).includes('cloudwatch:GetMetricData')) expect(s.Resource).toBe('*');
    }
    expect(all.some((a) => a.includes('*'))).toBe(false);
  });

  test('GIVEN an imported endpoint THEN grantAbTesting works the same', () => {
    const stack = newStack();
    const imported = PrefixAwareLlmEndpoint.fromEndpointAttributes(stack, 'Imported', { endpointName: 'My-Llm' });
    const role = new iam.Role(stack, 'Tester', { assumedBy: new iam.AccountRootPrincipal() });
    imported.grantAbTesting(role);
    const update = statements(stack).find((s) => actionsOf(s).includes('sagemaker:UpdateEndpoint'))!;
    expect(JSON.stringify(update.Resource)).toContain('endpoint/my-llm');
  });

  test('GIVEN docs/validate.md WHEN its IAM policy is read THEN it lists exactly the actions grantAbTesting grants', () => {
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'validate.md'), 'utf8');
    const json = doc.split('```json')[1].split('```')[0];
    const policy = JSON.parse(json) as { Statement: { Action: string[] }[] };
    const documented = policy.Statement.flatMap((s) => s.Action).sort();
    expect(documented).toEqual(
      [
        ...INVOKE_ENDPOINT_ACTIONS,
        ...AB_TESTING_ENDPOINT_ACTIONS,
        ...AB_TESTING_CONFIG_ACTIONS,
        ...AB_TESTING_MODEL_READ_ACTIONS,
        ...AB_TESTING_CLOUDWATCH_READ_ACTIONS,
      ].sort(),
    );
  });
});
