/**
 * Two production variants that differ only in routing — `AllTraffic` with PREFIX_AWARE and `Random` with RANDOM —
 * so `prefix-router ab --variants` can compare them at the same time under the same traffic (it splits one
 * workload between them with `TargetVariant`, by conversation and prefix group). Same open 7B model and instance
 * type as the minimal example. A role with `grantAbTesting` holds the least-privilege permissions the tool needs.
 *
 * Hourly cost drivers (approximate us-east-1 on-demand list prices recorded 2026-11-30 from
 * https://aws.amazon.com/sagemaker/pricing/, the prices `prefix-router plan` and `ab` use; check the page before deploying):
 *   - 2 variants × 2 × ml.g6e.2xlarge real-time inference ≈ 4 × $2.60/h ≈ $10.40/h, billed until the endpoint is
 *     deleted: twice the minimal example, because each variant is a full fleet.
 *
 * Quota to request (Service Quotas → Amazon SageMaker): "ml.g6e.2xlarge for endpoint usage" ≥ 8. SageMaker does
 * not roll multi-variant endpoints, so updates are blue/green and need a second set of all four instances while
 * they run.
 */
import { aws_iam as iam, CfnOutput, Stack, StackProps, Validations } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { InstanceType, ModelSource, PrefixAwareLlmEndpoint, RoutingStrategy } from '../lib/index';
import { createAlarmTopic } from './alarm-topic';

export class RoutingAbVariantsStack extends Stack {
  public readonly endpoint: PrefixAwareLlmEndpoint;
  public readonly abTestingRole: iam.Role;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);

    // The construct's alarms (5XX rate, latency, saturation, load spread, GPU memory) page through this topic.
    const { topic } = createAlarmTopic(this, 'Alarms');

    this.endpoint = new PrefixAwareLlmEndpoint(this, 'Llm', {
      model: ModelSource.huggingFace('Qwen/Qwen2.5-7B-Instruct'),
      instanceType: InstanceType.ML_G6E_2XLARGE,
      // A stable name: moving this construct must not replace the endpoint (and the A/B tool addresses it by name).
      endpointName: 'qwen-7b-routing-ab',
      monitoring: { alarmTopic: topic },
      routing: RoutingStrategy.prefixAware(),
      routingVariants: [{ variantName: 'Random', routing: RoutingStrategy.random() }],
    });

    // Whoever runs `prefix-router ab` assumes this role (any principal of this account that is allowed to).
    this.abTestingRole = new iam.Role(this, 'AbTestingRole', {
      assumedBy: new iam.AccountRootPrincipal(),
      description:
        'Runs prefix-router bench/ab against the example endpoint: invoke, describe/update, config copies, CloudWatch reads.',
    });
    this.endpoint.grantAbTesting(this.abTestingRole);
    for (const id of ['NIST.800.53.R5-IAMNoInlinePolicy', 'HIPAA.Security-IAMNoInlinePolicy']) {
      Validations.of(this.abTestingRole).acknowledge({
        id,
        reason:
          'The policy holds exactly what prefix-router ab needs on this one endpoint (invoke, describe/update, endpoint-config copies, ' +
          'CloudWatch reads) and exists only with this role; a managed policy would hold the same statements and add a reusable attach point.',
      });
    }

    new CfnOutput(this, 'EndpointName', { value: this.endpoint.endpointName });
    new CfnOutput(this, 'AbTestingRoleArn', { value: this.abTestingRole.roleArn });
    new CfnOutput(this, 'AlarmTopicArn', { value: topic.topicArn });
  }
}
