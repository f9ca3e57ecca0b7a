/**
 * Two production variants that differ only in routing — `AllTraffic` with PREFIX_AWARE and `Random` with RANDOM —
 * so `prefix-router ab --variants` can compare them at the same time under the same traffic (it splits one
 * workload between them with `TargetVariant`, by conversation and prefix group). Same open 7B model and instance
 * type as the minimal example. A role with `grantAbTesting` holds the least-privilege permissions the tool needs.
 *
 * Hourly cost drivers (us-east-1 on-demand list prices, approximate; check https://aws.amazon.com/sagemaker/pricing/
 * before deploying):
 *   - 2 variants × 2 × ml.g6e.2xlarge real-time inference ≈ 4 × $2.60/h ≈ $10.40/h, billed until the endpoint is
 *     deleted: twice the minimal example, because each variant is a full fleet.
 *
 * Quota to request (Service Quotas → Amazon SageMaker): "ml.g6e.2xlarge for endpoint usage" ≥ 8. SageMaker does
 * not roll multi-variant endpoints, so updates are blue/green and need a second set of all four instances while
 * they run.
 */
import { aws_iam as iam, CfnOutput, Stack, StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { InstanceType, ModelSource, PrefixAwareLlmEndpoint, RoutingStrategy } from '../lib';

export class RoutingAbVariantsStack extends Stack {
  public readonly endpoint: PrefixAwareLlmEndpoint;
  public readonly abTestingRole: iam.Role;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);

    this.endpoint = new PrefixAwareLlmEndpoint(this, 'Llm', {
      model: ModelSource.huggingFace('Qwen/Qwen2.5-7B-Instruct'),
      instanceType: InstanceType.ML_G6E_2XLARGE,
      routing: RoutingStrategy.prefixAware(),
      routingVariants: [{ variantName: 'Random', routing: RoutingStrategy.random() }],
    });

    // Whoever runs `prefix-router ab` assumes this role (any principal of this account that is allowed to).
    this.abTestingRole = new iam.Role(this, 'AbTestingRole', {
      assumedBy: new iam.AccountRootPrincipal(),
      description: 'Runs prefix-router bench/ab against the example endpoint: invoke, describe/update, config copies, CloudWatch reads.',
    });
    this.endpoint.grantAbTesting(this.abTestingRole);

    new CfnOutput(this, 'EndpointName', { value: this.endpoint.endpointName });
    new CfnOutput(this, 'AbTestingRoleArn', { value: this.abTestingRole.roleArn });
  }
}
