import { App, aws_ec2 as ec2, aws_s3 as s3, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, HIPAASecurityChecks, NagPack, NIST80053R5Checks } from 'cdk-nag';
import {
  AdapterSource,
  InstanceType,
  ModelSource,
  PrefixAwareLlmComponentEndpoint,
  PrefixAwareLlmComponentEndpointProps,
} from '../../lib/index';
import { findings, TemplateJson } from './aws-rules';
import { actionsOf, newStack, onlyResource, policyStatements, problemsOf } from './helpers';

type NetworkProps = Pick<
  PrefixAwareLlmComponentEndpointProps,
  'vpc' | 'vpcSubnets' | 'securityGroups' | 'enableNetworkIsolation'
>;

/**
 * A component endpoint on 2 × ml.g6e.12xlarge with one base model (from S3 unless `huggingFace`) and one S3 adapter,
 * in an isolated-subnet VPC unless `network` says otherwise.
 */
function build(
  network: (stack: Stack, vpc: ec2.Vpc) => NetworkProps = (_s, vpc) => ({ vpc, enableNetworkIsolation: true }),
  huggingFace = false,
) {
  const stack = newStack();
  const app = stack.node.root as App;
  const vpc = new ec2.Vpc(stack, 'Vpc', {
    maxAzs: 2,
    natGateways: 0,
    subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
  });
  const models = s3.Bucket.fromBucketName(stack, 'Models', 'my-models');
  const endpoint = new PrefixAwareLlmComponentEndpoint(stack, 'Llm', {
    instanceType: InstanceType.ML_G6E_12XLARGE,
    endpointName: 'llm',
    ...network(stack, vpc),
  });
  const base = endpoint.addModel('Base', {
    model: huggingFace
      ? ModelSource.huggingFace('Qwen/Qwen2.5-7B-Instruct')
      : ModelSource.s3(models, 'models/qwen', { s3ManagedEncryption: true }),
    inferenceComponentName: 'base',
    acceleratorsPerCopy: 1,
    minMemoryPerCopy: Size.gibibytes(32),
  });
  base.addAdapter('Sql', {
    artifact: AdapterSource.s3(models, 'adapters/sql.tar.gz', { s3ManagedEncryption: true }),
    inferenceComponentName: 'sql',
  });
  return { app, stack, endpoint };
}

function synth(...args: Parameters<typeof build>) {
  const built = build(...args);
  return { ...built, template: Template.fromStack(built.stack) };
}

describe('when a component endpoint joins a VPC with network isolation', () => {
  const { template, endpoint } = synth();
  const config = onlyResource(template, 'AWS::SageMaker::EndpointConfig');
  const model = onlyResource(template, 'AWS::SageMaker::Model');

  test('GIVEN a VPC WHEN synthesized THEN the endpoint configuration carries the VpcConfig and EnableNetworkIsolation', () => {
    expect(config.VpcConfig.Subnets).toHaveLength(2);
    expect(config.VpcConfig.SecurityGroupIds).toEqual([
      { 'Fn::GetAtt': [expect.stringMatching(/^LlmSecurityGroup/), 'GroupId'] },
    ]);
    expect(config.EnableNetworkIsolation).toBe(true);
    expect(endpoint.securityGroups).toHaveLength(1);
  });

  test('GIVEN a component WHEN synthesized THEN its model repeats the same network settings', () => {
    expect(model.VpcConfig).toEqual(config.VpcConfig);
    expect(model.EnableNetworkIsolation).toBe(true);
  });

  test('GIVEN the new security group WHEN synthesized THEN it allows no inbound traffic and outbound HTTPS only', () => {
    const group = onlyResource(template, 'AWS::EC2::SecurityGroup');
    expect(group.SecurityGroupIngress).toBeUndefined();
    expect(group.SecurityGroupEgress).toEqual([
      {
        CidrIp: '0.0.0.0/0',
        Description: 'HTTPS to AWS APIs through VPC endpoints or NAT',
        FromPort: 443,
        IpProtocol: 'tcp',
        ToPort: 443,
      },
    ]);
  });

  test('GIVEN the execution role WHEN synthesized THEN it gets the ENI statements once, creation scoped to the subnets and the group', () => {
    const statements = policyStatements(template);
    const create = statements.filter((s) => actionsOf(s).includes('ec2:CreateNetworkInterface'));
    expect(create).toHaveLength(1);
    expect(actionsOf(create[0])).toEqual(['ec2:CreateNetworkInterface']);
    expect(create[0].Resource).toHaveLength(1 + 2 + 1);
    expect(statements.filter((s) => actionsOf(s).includes('ec2:DescribeSubnets'))).toHaveLength(1);
    expect(statements.filter((s) => actionsOf(s).includes('ec2:DeleteNetworkInterface'))).toHaveLength(1);
  });

  test('GIVEN the template WHEN the documented AWS rules check it THEN none fires', () => {
    expect(findings(template.toJSON() as TemplateJson)).toEqual([]);
  });
});

describe('when a component endpoint has no VPC', () => {
  test('GIVEN no network props WHEN synthesized THEN neither the configuration nor the model names a VPC or isolation, and no ENI statement is granted', () => {
    const { template } = synth(() => ({}), true);
    const config = onlyResource(template, 'AWS::SageMaker::EndpointConfig');
    const model = onlyResource(template, 'AWS::SageMaker::Model');
    expect([config.VpcConfig, config.EnableNetworkIsolation, model.VpcConfig, model.EnableNetworkIsolation]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    template.resourceCountIs('AWS::EC2::SecurityGroup', 0);
    expect(policyStatements(template).filter((s) => actionsOf(s).some((a) => a.startsWith('ec2:')))).toEqual([]);
  });
});

describe('when a component endpoint is given its own security groups', () => {
  test('GIVEN 5 security groups (max) WHEN synthesized THEN no group is created and all five are used on the configuration and the model', () => {
    const { template } = synth((stack, vpc) => ({
      vpc,
      securityGroups: Array.from({ length: 5 }, (_, i) => new ec2.SecurityGroup(stack, `Sg${i}`, { vpc })),
    }));
    template.resourceCountIs('AWS::EC2::SecurityGroup', 5);
    expect(onlyResource(template, 'AWS::SageMaker::EndpointConfig').VpcConfig.SecurityGroupIds).toHaveLength(5);
    expect(onlyResource(template, 'AWS::SageMaker::Model').VpcConfig.SecurityGroupIds).toHaveLength(5);
  });
});

describe('when component endpoint network settings break a rule', () => {
  test.each<[string, (stack: Stack, vpc: ec2.Vpc) => NetworkProps, boolean, string[]]>([
    [
      'a Hugging Face model under network isolation',
      () => ({ enableNetworkIsolation: true }),
      true,
      [
        'model: a Hugging Face model cannot be downloaded with enableNetworkIsolation: true (the container has no network); ' +
          'stage the weights in S3 and use ModelSource.s3() (got ModelSource.huggingFace with network isolation)',
      ],
    ],
    ['a Hugging Face model without isolation', (_s, vpc) => ({ vpc }), true, []],
    [
      'vpcSubnets without vpc',
      () => ({ vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED } }),
      false,
      ['vpcSubnets needs vpc (got no vpc)'],
    ],
    [
      '6 security groups (max+1)',
      (stack, vpc) => ({
        vpc,
        securityGroups: Array.from({ length: 6 }, (_, i) => new ec2.SecurityGroup(stack, `Sg${i}`, { vpc })),
      }),
      false,
      ['securityGroups must hold between 1 and 5 groups (got 6)'],
    ],
    [
      'no security groups (min−1)',
      (_s, vpc) => ({ vpc, securityGroups: [] }),
      false,
      ['securityGroups must hold between 1 and 5 groups (got 0)'],
    ],
  ])('GIVEN %s WHEN built THEN the problems name the prop', (_name, network, huggingFace, expected) => {
    expect(problemsOf(() => build(network, huggingFace))).toEqual(expected);
  });
});

describe('when cdk-nag reviews a component endpoint in a VPC with network isolation', () => {
  /** Findings on the endpoint's own constructs (the test's VPC is not the construct's). */
  function nagOf(pack: NagPack, network: Parameters<typeof build>[0]): string[] {
    const { app } = build(network);
    return pack
      .validateScope(app)
      .violations.flatMap((v) => v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath}`))
      .filter((f) => f.includes('/Llm/'));
  }

  test.each([
    ['AwsSolutions', () => new AwsSolutionsChecks()],
    ['NIST 800-53 R5', () => new NIST80053R5Checks()],
    ['HIPAA Security', () => new HIPAASecurityChecks()],
  ] as Array<[string, () => NagPack]>)(
    'GIVEN %s THEN the VPC and isolation add no unacknowledged finding to the endpoint',
    (_name, pack) => {
      const withVpc = nagOf(pack(), undefined);
      const withoutVpc = nagOf(pack(), () => ({}));
      // NIST and HIPAA report the alarms without an action (no alarmTopic here) either way; the VPC adds nothing.
      expect(withVpc.filter((f) => !withoutVpc.includes(f))).toEqual([]);
    },
  );

  test('GIVEN AwsSolutions THEN the endpoint in a VPC has no finding at all (the ENI wildcards are acknowledged with their reasons)', () => {
    expect(nagOf(new AwsSolutionsChecks(), undefined)).toEqual([]);
  });
});
