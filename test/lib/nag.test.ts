import { App, aws_iam as iam, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readFileSync } from 'fs';
import { join } from 'path';
import { addExampleStacks } from '../../examples';
import { PrefixAwareLlmEndpoint } from '../../lib';
import { baseProps } from './helpers';

function cdkJsonContext(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(__dirname, '..', '..', 'cdk.json'), 'utf8')).context;
}

function nagErrors(app: App): string[] {
  return new AwsSolutionsChecks().validateScope(app).violations
    .filter((v) => v.severity === 'error')
    .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
}

describe('when cdk-nag AwsSolutionsChecks reviews the examples', () => {
  test('GIVEN every example stack WHEN checked THEN no error is left unacknowledged', () => {
    const app = new App({ context: cdkJsonContext() });
    addExampleStacks(app);
    expect(nagErrors(app)).toEqual([]);
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
    endpoint.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: ['arn:aws:s3:::other-bucket/*'] }));
    expect(nagErrors(app)).toEqual(['AwsSolutions-IAM5[Resource::arn:aws:s3:::other-bucket/*] at Nag/Llm/ExecutionRole/DefaultPolicy/Resource']);
  });
});
