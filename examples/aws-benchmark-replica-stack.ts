/**
 * AWS benchmark replica: Llama 3.1 70B Instruct on 7 × ml.p5.48xlarge behind SageMaker PREFIX_AWARE routing —
 * the fleet AWS used to compare PREFIX_AWARE with RANDOM routing (long-context and short-chat workloads).
 *
 * Hourly cost drivers (approximate us-east-1 on-demand list prices recorded 2026-11-30 from
 * https://aws.amazon.com/sagemaker/pricing/, the prices `prefix-router plan` and `ab` use; check the page before deploying):
 *   - 7 × ml.p5.48xlarge real-time inference ≈ 7 × $63/h ≈ $441/h (≈ $10,584/day). Billing runs from the moment
 *     the instances are provisioned until the endpoint is deleted, with or without traffic.
 *   - A rolling update adds one more ml.p5.48xlarge while a batch is replaced (≈ $63/h during updates).
 *   - Detailed observability metrics and the dashboard: CloudWatch charges, small next to the instances.
 *
 * Quota to request (Service Quotas → Amazon SageMaker): "ml.p5.48xlarge for endpoint usage" ≥ 8 (7 serving + 1 for
 * the rolling batch). The default is 0 in most accounts; capacity for p5 is also limited per Availability Zone.
 *
 * Before deploying: Llama 3.1 is a gated model. Accept its license on Hugging Face and store an access token as the
 * plain-text secret `huggingface/token` (or pass `hfTokenSecretName`).
 */
import { Annotations, CfnOutput, Duration, Stack, StackProps, aws_secretsmanager as secretsmanager } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import {
  InstanceType,
  ModelSource,
  PrefixAwareLlmEndpoint,
  PrefixAwareLlmWarnings,
  RoutingStrategy,
} from '../lib/index';
import { createAlarmTopic } from './alarm-topic';

export interface AwsBenchmarkReplicaStackProps extends StackProps {
  /** Secrets Manager secret holding the Hugging Face token. @default 'huggingface/token' */
  readonly hfTokenSecretName?: string;
}

export class AwsBenchmarkReplicaStack extends Stack {
  public readonly endpoint: PrefixAwareLlmEndpoint;

  constructor(scope: Construct, id: string, props: AwsBenchmarkReplicaStackProps = {}) {
    super(scope, id, props);

    const hfToken = secretsmanager.Secret.fromSecretNameV2(
      this,
      'HfToken',
      props.hfTokenSecretName ?? 'huggingface/token',
    );

    const { topic } = createAlarmTopic(this, 'Alarms');

    this.endpoint = new PrefixAwareLlmEndpoint(this, 'Llama70B', {
      model: ModelSource.huggingFace('meta-llama/Llama-3.1-70B-Instruct', { tokenSecret: hfToken }),
      instanceType: InstanceType.ML_P5_48XLARGE,
      instanceCount: 7,
      routing: RoutingStrategy.prefixAware({ prefixLength: 8192, concurrencyThreshold: 32 }),
      // 8 × H100 per instance: tensor parallel 8 (the default) holds the 140 GB of BF16 weights with ~1.3 M tokens of KV cache.
      engine: { maxModelLen: 32768 },
      // Detailed observability publishes vLLM's prefix cache counters: the hit rate the benchmark compares.
      // 10 s publishing: the benchmark reads per-instance load at that resolution (alarms become high-resolution alarms).
      metricsConfig: { detailedObservability: true, publishFrequency: Duration.seconds(10) },
      // A stable name: moving this construct must not replace a 7 × p5 fleet.
      endpointName: 'llama-70b-prefix-aware',
      monitoring: { alarmTopic: topic },
    });

    // A benchmark account, not production: the deploy-time token in the model environment is accepted.
    Annotations.of(this.endpoint).acknowledgeWarning(
      PrefixAwareLlmWarnings.HF_TOKEN_IN_MODEL_ENVIRONMENT,
      'Benchmark replica in a dedicated account; DescribeModel is restricted to the benchmark operators.',
    );

    new CfnOutput(this, 'EndpointName', { value: this.endpoint.endpointName });
    new CfnOutput(this, 'AlarmTopicArn', { value: topic.topicArn });
  }
}
