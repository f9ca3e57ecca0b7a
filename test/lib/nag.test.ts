import { App, aws_iam as iam, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, HIPAASecurityChecks, NagPack, NIST80053R5Checks } from 'cdk-nag';
import { readFileSync } from 'fs';
import { join } from 'path';
import { addExampleStacks } from '../../examples';
import { InstanceType, PrefixAwareLlmEndpoint } from '../../lib/index';
import { baseProps } from './helpers';

function cdkJsonContext(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(__dirname, '..', '..', 'cdk.json'), 'utf8')).context;
}

function nagErrors(app: App, pack: NagPack = new AwsSolutionsChecks()): string[] {
  return pack
    .validateScope(app)
    .violations.filter((v) => v.severity === 'error')
    .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
}

/** Every finding of a pack, errors and warnings. */
function nagFindings(app: App, pack: NagPack): string[] {
  return pack
    .validateScope(app)
    .violations.flatMap((v) => v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath}`));
}

/** Acknowledged rule ids (and reasons) anywhere in the app. */
function acknowledgements(app: App): Array<[string, string]> {
  return app.node
    .findAll()
    .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
    .flatMap((m) => Object.entries(m.data as Record<string, string>));
}

describe('when cdk-nag reviews the examples with AwsSolutions, NIST 800-53 R5 and HIPAA Security', () => {
  // One app for the three packs: synthesizing the examples is the slow part.
  const app = new App({ context: cdkJsonContext() });
  addExampleStacks(app);

  test.each([
    ['AwsSolutions', () => new AwsSolutionsChecks()],
    ['NIST 800-53 R5', () => new NIST80053R5Checks()],
    ['HIPAA Security', () => new HIPAASecurityChecks()],
  ])(
    'GIVEN every example stack WHEN %s checks it THEN nothing is left unacknowledged (errors or warnings)',
    (_name, pack) => {
      expect(nagFindings(app, pack())).toEqual([]);
    },
  );

  test('GIVEN the acknowledgements WHEN read THEN each gives a specific reason', () => {
    const acks = acknowledgements(app);
    expect(acks.length).toBeGreaterThan(0);
    for (const [id, reason] of acks) {
      expect({ id, long: reason.length > 60 }).toEqual({ id, long: true });
    }
    const ids = new Set(acks.map(([id]) => id.replace(/^annotation::/i, '')));
    for (const id of [
      'NIST.800.53.R5-SageMakerEndpointConfigurationKMSKeyConfigured',
      'HIPAA.Security-SageMakerEndpointConfigurationKMSKeyConfigured',
    ]) {
      expect(ids).toContain(id);
    }
  });
});

describe('when the construct is checked on an instance type without local NVMe', () => {
  test('GIVEN ml.g4dn-like type without NVMe and no key WHEN NIST checks it THEN the missing KMS key is reported, not acknowledged', () => {
    const app = new App();
    const stack = new Stack(app, 'Nag');
    new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({
        instanceType: InstanceType.of('ml.g7.2xlarge', { gpuCount: 1, hasLocalNvme: false }),
        endpointName: 'x',
      }),
    );
    expect(nagErrors(app, new NIST80053R5Checks()).filter((e) => e.includes('KMSKeyConfigured'))).toEqual([
      'NIST.800.53.R5-SageMakerEndpointConfigurationKMSKeyConfigured at Nag/Llm/EndpointConfig',
    ]);
  });
});

describe('when cdk-nag reviews the construct on its own', () => {
  test('GIVEN the construct with defaults WHEN checked THEN its deliberate wildcards are acknowledged with reasons', () => {
    const app = new App();
    const stack = new Stack(app, 'Nag');
    const endpoint = new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps());
    expect(nagErrors(app)).toEqual([]);
    const acknowledged = endpoint.role.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.entries(m.data as Record<string, string>));
    expect(acknowledged.map(([id]) => id.replace(/^annotation::/i, '')).sort()).toEqual([
      'AwsSolutions-IAM5[Resource::*]',
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/sagemaker/Endpoints/${endpoint.endpointName}:log-stream:*]`,
    ]);
    for (const [, reason] of acknowledged) expect(reason.length).toBeGreaterThan(40);
  });

  test('GIVEN a wildcard someone else adds to the role WHEN checked THEN it is still reported', () => {
    const app = new App();
    const stack = new Stack(app, 'Nag');
    const endpoint = new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps());
    endpoint.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: ['arn:aws:s3:::other-bucket/*'] }),
    );
    expect(nagErrors(app)).toEqual([
      'AwsSolutions-IAM5[Resource::arn:aws:s3:::other-bucket/*] at Nag/Llm/ExecutionRole/DefaultPolicy/Resource',
    ]);
  });
});
