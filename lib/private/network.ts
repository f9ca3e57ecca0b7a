import { aws_ec2 as ec2, aws_iam as iam, Stack, Token } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { ModelSource } from '../model-source';
import { grantScoped } from './grants';
import { EC2_CREATE_ENI_ACTIONS, EC2_MANAGE_ENI_ACTIONS, EC2_VPC_UNSCOPED_ACTIONS } from './iam-actions';
import { ProblemCollector } from './validation';

/**
 * The network props both endpoint constructs take (`PrefixAwareLlmEndpoint` puts them on its model,
 * `PrefixAwareLlmComponentEndpoint` on its endpoint configuration and on every component's model). One home for
 * their rules and for the execution role's ENI statements.
 */
export interface EndpointNetworkProps {
  readonly vpc?: ec2.IVpc;
  readonly vpcSubnets?: ec2.SubnetSelection;
  readonly securityGroups?: ec2.ISecurityGroup[];
  readonly enableNetworkIsolation?: boolean;
}

/** The subnets and security groups an endpoint's network interfaces use. */
export interface EndpointNetwork {
  readonly subnetIds: string[];
  readonly securityGroups: ec2.ISecurityGroup[];
}

/**
 * VpcConfig ranges: `SecurityGroupIds` 1–5 items, `Subnets` 1–16 items
 * (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_VpcConfig.html).
 */
export const VPC_CONFIG_LIMITS = { minSecurityGroups: 1, maxSecurityGroups: 5, minSubnets: 1, maxSubnets: 16 } as const;

/** The rules on `vpc`, `vpcSubnets` and `securityGroups`, naming the prop. */
export function validateNetwork(props: EndpointNetworkProps, problems: ProblemCollector): void {
  const limits = VPC_CONFIG_LIMITS;
  if (!props.vpc && (props.vpcSubnets || props.securityGroups)) {
    problems.add(`${props.vpcSubnets ? 'vpcSubnets' : 'securityGroups'} needs vpc (got no vpc)`);
  }
  if (
    props.securityGroups &&
    (props.securityGroups.length < limits.minSecurityGroups || props.securityGroups.length > limits.maxSecurityGroups)
  ) {
    problems.add(
      `securityGroups must hold between ${limits.minSecurityGroups} and ${limits.maxSecurityGroups} groups (got ${props.securityGroups.length})`,
    );
  }
  if (props.vpc) {
    const subnets = props.vpc.selectSubnets(props.vpcSubnets).subnetIds;
    if (!Token.isUnresolved(subnets) && (subnets.length < limits.minSubnets || subnets.length > limits.maxSubnets)) {
      problems.add(
        `vpcSubnets must select between ${limits.minSubnets} and ${limits.maxSubnets} subnets (got ${subnets.length})`,
      );
    }
  }
}

/**
 * Network isolation: "no inbound or outbound network calls can be made to or from the model container"
 * (EnableNetworkIsolation, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateModel.html; for all
 * model containers of an endpoint with inference components,
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateEndpointConfig.html), so a container that
 * downloads its weights from Hugging Face at start cannot work. SageMaker itself still fetches S3 model data and
 * adapter artefacts (ArtifactUrl) for the container.
 */
export function validateIsolatedModel(
  isolated: boolean | undefined,
  model: ModelSource,
  problems: ProblemCollector,
): void {
  if (isolated && model.downloadsAtStartup) {
    problems.add(
      'model: a Hugging Face model cannot be downloaded with enableNetworkIsolation: true (the container has no network); ' +
        'stage the weights in S3 and use ModelSource.s3() (got ModelSource.huggingFace with network isolation)',
    );
  }
}

/**
 * Attaches an endpoint to `props.vpc`: selects the subnets, creates the `SecurityGroup` child when no groups are
 * given (no inbound, outbound HTTPS only), and grants the execution role the EC2 calls SageMaker makes to create and
 * manage the endpoint's network interfaces
 * (https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-roles.html#sagemaker-roles-createmodel-perms).
 */
export function configureEndpointVpc(
  scope: Construct,
  role: iam.IRole,
  props: EndpointNetworkProps,
  constructName: string,
): EndpointNetwork | undefined {
  const vpc = props.vpc;
  if (!vpc) return undefined;
  const subnetIds = vpc.selectSubnets(props.vpcSubnets).subnetIds;
  let securityGroups = props.securityGroups;
  if (!securityGroups || securityGroups.length === 0) {
    const group = new ec2.SecurityGroup(scope, 'SecurityGroup', {
      vpc,
      allowAllOutbound: false,
      description: `${constructName} network interfaces: no inbound, outbound HTTPS only (S3, ECR, CloudWatch).`,
    });
    group.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'HTTPS to AWS APIs through VPC endpoints or NAT');
    securityGroups = [group];
  }

  const stack = Stack.of(scope);
  grantScoped(role, {
    actions: EC2_VPC_UNSCOPED_ACTIONS,
    resources: ['*'],
    wildcardReason:
      'EC2 describe calls and DeleteNetworkInterfacePermission support no resource ARNs; SageMaker makes them to attach the endpoint to the VPC.',
  });
  const networkInterfaces = stack.formatArn({ service: 'ec2', resource: 'network-interface', resourceName: '*' });
  grantScoped(role, {
    actions: EC2_CREATE_ENI_ACTIONS,
    resources: [
      networkInterfaces,
      ...subnetIds.map((id) => stack.formatArn({ service: 'ec2', resource: 'subnet', resourceName: id })),
      ...securityGroups.map((sg) =>
        stack.formatArn({ service: 'ec2', resource: 'security-group', resourceName: sg.securityGroupId }),
      ),
    ],
    wildcardReason:
      "Interface ids do not exist before SageMaker creates them; creation is limited to the endpoint's subnets and security groups.",
  });
  grantScoped(role, {
    actions: EC2_MANAGE_ENI_ACTIONS,
    resources: [networkInterfaces],
    wildcardReason: 'SageMaker manages the interfaces it created for the endpoint; their ids are not known in advance.',
  });
  return { subnetIds, securityGroups };
}

/** `VpcConfig` of a model or an endpoint configuration (same shape in both). */
export function renderVpcConfig(
  network: EndpointNetwork | undefined,
): { subnets: string[]; securityGroupIds: string[] } | undefined {
  return (
    network && {
      subnets: network.subnetIds,
      securityGroupIds: network.securityGroups.map((sg) => sg.securityGroupId),
    }
  );
}
