import { aws_ec2 as ec2, aws_s3 as s3 } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ModelSource, PrefixAwareLlmEndpoint } from '../../lib/index';
import { actionsOf, baseProps, newStack, onlyResource, policyStatements, problemsFor } from './helpers';

function privateVpcEndpoint(
  overrides: {
    securityGroups?: (stack: any, vpc: ec2.Vpc) => ec2.ISecurityGroup[];
    subnets?: ec2.SubnetSelection;
  } = {},
) {
  const stack = newStack();
  const vpc = new ec2.Vpc(stack, 'Vpc', {
    maxAzs: 2,
    natGateways: 0,
    subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
  });
  const bucket = s3.Bucket.fromBucketName(stack, 'Models', 'my-models');
  const endpoint = new PrefixAwareLlmEndpoint(
    stack,
    'Llm',
    baseProps({
      model: ModelSource.s3(bucket, 'models/llama', { s3ManagedEncryption: true }),
      enableNetworkIsolation: true,
      vpc,
      vpcSubnets: overrides.subnets,
      securityGroups: overrides.securityGroups?.(stack, vpc),
    }),
  );
  return { stack, endpoint, template: Template.fromStack(stack) };
}

describe('when the endpoint joins a VPC without security groups', () => {
  const { template, endpoint } = privateVpcEndpoint();

  test('GIVEN a VPC WHEN synthesized THEN the model gets the isolated subnets and one new security group', () => {
    const model = onlyResource(template, 'AWS::SageMaker::Model');
    expect(model.VpcConfig.Subnets).toHaveLength(2);
    expect(model.VpcConfig.SecurityGroupIds).toEqual([
      { 'Fn::GetAtt': [expect.stringMatching(/^LlmSecurityGroup/), 'GroupId'] },
    ]);
    expect(endpoint.securityGroups).toHaveLength(1);
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

  test("GIVEN a VPC WHEN synthesized THEN interfaces may be created only in the endpoint's subnets and security group", () => {
    const create = policyStatements(template).find((s) => actionsOf(s).includes('ec2:CreateNetworkInterface'))!;
    const resources = JSON.stringify(create.Resource);
    expect(actionsOf(create)).toEqual(['ec2:CreateNetworkInterface']);
    expect(resources).toContain(':network-interface/*');
    expect((resources.match(/:subnet\//g) ?? []).length).toBe(2);
    expect((resources.match(/:security-group\//g) ?? []).length).toBe(1);
  });

  test('GIVEN a VPC WHEN synthesized THEN only describes and DeleteNetworkInterfacePermission use resource *', () => {
    const unscoped = policyStatements(template).find((s) => actionsOf(s).includes('ec2:DescribeSubnets'))!;
    expect(unscoped.Resource).toBe('*');
    expect(actionsOf(unscoped)).toEqual([
      'ec2:DescribeVpcs',
      'ec2:DescribeDhcpOptions',
      'ec2:DescribeSubnets',
      'ec2:DescribeSecurityGroups',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DeleteNetworkInterfacePermission',
    ]);
    const manage = policyStatements(template).find((s) => actionsOf(s).includes('ec2:DeleteNetworkInterface'))!;
    expect(JSON.stringify(manage.Resource)).toContain(':network-interface/*');
  });
});

describe('when the endpoint joins a VPC with its own security groups', () => {
  test('GIVEN one security group WHEN synthesized THEN no group is created and the given one is used', () => {
    const { template } = privateVpcEndpoint({
      securityGroups: (stack, vpc) => [new ec2.SecurityGroup(stack, 'Mine', { vpc })],
    });
    template.resourceCountIs('AWS::EC2::SecurityGroup', 1);
    expect(onlyResource(template, 'AWS::SageMaker::Model').VpcConfig.SecurityGroupIds).toEqual([
      { 'Fn::GetAtt': [expect.stringMatching(/^Mine/), 'GroupId'] },
    ]);
  });

  test('GIVEN 5 security groups (max) WHEN synthesized THEN all are used', () => {
    const { template } = privateVpcEndpoint({
      securityGroups: (stack, vpc) =>
        Array.from({ length: 5 }, (_, i) => new ec2.SecurityGroup(stack, `Sg${i}`, { vpc })),
    });
    expect(onlyResource(template, 'AWS::SageMaker::Model').VpcConfig.SecurityGroupIds).toHaveLength(5);
  });

  test('GIVEN 6 security groups (max+1) WHEN built THEN it is refused', () => {
    const stack = newStack();
    const vpc = new ec2.Vpc(stack, 'Vpc', { natGateways: 0, maxAzs: 2 });
    const groups = Array.from({ length: 6 }, (_, i) => new ec2.SecurityGroup(stack, `Sg${i}`, { vpc }));
    expect(problemsFor({ vpc, securityGroups: groups })).toEqual([
      'securityGroups must hold between 1 and 5 groups (got 6)',
    ]);
  });

  test('GIVEN an empty list (min−1) WHEN built THEN it is refused', () => {
    const stack = newStack();
    const vpc = new ec2.Vpc(stack, 'Vpc', { natGateways: 0, maxAzs: 2 });
    expect(problemsFor({ vpc, securityGroups: [] })).toEqual([
      'securityGroups must hold between 1 and 5 groups (got 0)',
    ]);
  });
});

describe('when network settings come without a VPC', () => {
  test('GIVEN vpcSubnets without vpc WHEN built THEN it is refused', () => {
    expect(problemsFor({ vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED } })).toEqual([
      'vpcSubnets needs vpc (got no vpc)',
    ]);
  });

  test('GIVEN securityGroups without vpc WHEN built THEN it is refused', () => {
    const stack = newStack();
    const group = ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-12345678');
    expect(problemsFor({ securityGroups: [group] })).toEqual(['securityGroups needs vpc (got no vpc)']);
  });
});

describe('when the subnet selection is at or around its limits (1–16)', () => {
  function vpcWithSubnets(count: number) {
    const stack = newStack();
    return ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
      vpcId: 'vpc-1',
      availabilityZones: Array.from({ length: count }, (_, i) => `az-${i}`),
      privateSubnetIds: Array.from({ length: count }, (_, i) => `subnet-${i}`),
    });
  }

  test('GIVEN 16 subnets (max) WHEN built THEN they are accepted', () => {
    expect(problemsFor({ vpc: vpcWithSubnets(16), model: ModelSource.huggingFace('org/model') })).toEqual([]);
  });

  test('GIVEN 17 subnets (max+1) WHEN built THEN it is refused', () => {
    expect(problemsFor({ vpc: vpcWithSubnets(17) })).toEqual([
      'vpcSubnets must select between 1 and 16 subnets (got 17)',
    ]);
  });
});
