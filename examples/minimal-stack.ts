/**
 * The smallest useful deployment: an open 7B model on 2 × ml.g6e.2xlarge (one NVIDIA L40S 48 GB each), with the
 * construct's defaults for everything else — PREFIX_AWARE routing (prefixLength 8192, concurrencyThreshold 32), the
 * AWS vLLM DLC with prefix caching, rolling deployments that roll back on the 5XX-rate and latency alarms, a dashboard,
 * and alarms that page through an SNS topic.
 *
 * Hourly cost drivers (approximate us-east-1 on-demand list prices recorded 2026-11-30 from
 * https://aws.amazon.com/sagemaker/pricing/, the prices `prefix-router plan` and `ab` use; check the page before deploying):
 *   - 2 × ml.g6e.2xlarge real-time inference ≈ 2 × $2.60/h ≈ $5.20/h, billed until the endpoint is deleted.
 *   - With the construct's default instance type, ml.p5.48xlarge, the same stack costs ≈ 2 × $63/h ≈ $126/h.
 *   - Monitoring: one KMS key (≈ $1/month), five alarms, one dashboard and per-instance enhanced metrics: CloudWatch
 *     charges of a few dollars a month, small next to the instances.
 *
 * Quota to request (Service Quotas → Amazon SageMaker): "ml.g6e.2xlarge for endpoint usage" ≥ 3 (2 serving + 1 for
 * the rolling batch).
 */
import { CfnOutput, Stack, StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { InstanceType, ModelSource, PrefixAwareLlmEndpoint } from '../lib/index';
import { createAlarmTopic } from './alarm-topic';

export class MinimalStack extends Stack {
  public readonly endpoint: PrefixAwareLlmEndpoint;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);

    // The construct's alarms (5XX rate, latency, saturation, load spread, GPU memory) page through this topic.
    const { topic } = createAlarmTopic(this, 'Alarms');

    this.endpoint = new PrefixAwareLlmEndpoint(this, 'Llm', {
      model: ModelSource.huggingFace('Qwen/Qwen2.5-7B-Instruct'),
      instanceType: InstanceType.ML_G6E_2XLARGE,
      // A stable name: moving this construct must not replace the endpoint.
      endpointName: 'qwen-7b-minimal',
      monitoring: { alarmTopic: topic },
    });

    new CfnOutput(this, 'EndpointName', { value: this.endpoint.endpointName });
    new CfnOutput(this, 'AlarmTopicArn', { value: topic.topicArn });
  }
}
