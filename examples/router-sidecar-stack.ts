/**
 * The router sidecar inside the serving container: 2 × ml.g5.12xlarge (four NVIDIA A10G 24 GB each), each instance
 * running four vLLM engines of an open 7B model (tensor-parallel size 1, one GPU each) behind `prefix-router
 * container`. SageMaker's PREFIX_AWARE routing picks the instance; inside it the router's cache-aware policy picks the
 * engine (two levels of prefix affinity), and the container writes routing metrics (decisions, TTFT, cached tokens per
 * engine) to CloudWatch as Embedded Metric Format. See docs/container.md.
 *
 * Deploying builds router/Dockerfile on the machine running `cdk deploy` (Docker with linux/amd64 support needed) and
 * pulls the vLLM DLC first: log in to its registry with
 *   aws ecr get-login-password --region us-east-1 | docker login --username AWS --password-stdin 763104351884.dkr.ecr.us-east-1.amazonaws.com
 * The image (≈ the DLC's size) is pushed to the CDK bootstrap's asset repository.
 *
 * Hourly cost drivers (us-east-1 on-demand list prices, approximate; check https://aws.amazon.com/sagemaker/pricing/
 * before deploying):
 *   - 2 × ml.g5.12xlarge real-time inference ≈ 2 × $7/h ≈ $14/h, billed until the endpoint is deleted.
 *   - Monitoring: one KMS key (≈ $1/month), five alarms, a dashboard and per-instance enhanced metrics.
 *   - CloudWatch: the EMF metrics are custom metrics (a few per engine and decision reason) plus log ingestion.
 *
 * Quota to request (Service Quotas → Amazon SageMaker): "ml.g5.12xlarge for endpoint usage" ≥ 3 (2 serving + 1 for
 * the rolling batch).
 */
import { CfnOutput, Stack, StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { InstanceType, ModelSource, PrefixAwareLlmEndpoint, RouterSidecarMode, VllmImage } from '../lib/index';
import { createAlarmTopic } from './alarm-topic';

export class RouterSidecarStack extends Stack {
  public readonly endpoint: PrefixAwareLlmEndpoint;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);

    // The construct's alarms (5XX rate, latency, saturation, load spread, GPU memory) page through this topic.
    const { topic } = createAlarmTopic(this, 'Alarms');

    this.endpoint = new PrefixAwareLlmEndpoint(this, 'Llm', {
      model: ModelSource.huggingFace('Qwen/Qwen2.5-7B-Instruct'),
      // A stable name: moving this construct must not replace the endpoint.
      endpointName: 'qwen-7b-router-sidecar',
      monitoring: { alarmTopic: topic },
      instanceType: InstanceType.ML_G5_12XLARGE,
      image: VllmImage.withRouterSidecar({
        mode: RouterSidecarMode.MULTI_ENGINE,
        engines: 4,
        // The recommended policy for engines the router manages itself (docs/router.md).
        policy: 'cache-aware',
      }),
      // One GPU per engine: each engine runs with tensor-parallel size GPUs ÷ engines = 1, which the template renders.
      engine: { maxModelLen: 8192 },
    });

    new CfnOutput(this, 'EndpointName', { value: this.endpoint.endpointName });
    new CfnOutput(this, 'AlarmTopicArn', { value: topic.topicArn });
  }
}
