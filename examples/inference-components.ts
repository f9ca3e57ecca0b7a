/**
 * One base model and two LoRA adapters as SageMaker inference components on one PREFIX_AWARE fleet: Llama 3.1 8B
 * Instruct from your own S3 bucket on 2–4 × ml.g6e.12xlarge (4 × NVIDIA L40S 48 GB, 384 GiB each), one GPU per copy,
 * copies autoscaled 2–8 on in-flight requests per copy, instances managed by SageMaker, and two adapters (SQL and
 * support) that clients call by their inference component names. Each adapter stays on its base's copies, where
 * PREFIX_AWARE keeps requests with a common prefix on one instance.
 *
 * Hourly cost drivers (us-east-1 on-demand list prices, approximate; check https://aws.amazon.com/sagemaker/pricing/
 * before deploying):
 *   - 2–4 × ml.g6e.12xlarge real-time inference ≈ $13/h per instance, ≈ $26–$53/h; managed instance scaling adds the
 *     third and fourth instance only when the copies autoscaling asks for no longer fit on two.
 *   - The adapters add no instances: they run inside the base model's copies.
 *   - Monitoring: one KMS key (≈ $1/month), two alarms per component (six), one dashboard.
 *
 * Quota to request (Service Quotas → Amazon SageMaker): "ml.g6e.12xlarge for endpoint usage" ≥ 4 (the managed
 * scaling maximum).
 *
 * Before deploying: copy the base model files (config.json, tokenizer files, *.safetensors; no tarball) to
 * s3://<artifactBucketName>/models/llama-3.1-8b-instruct/, and each adapter (adapter_config.json,
 * adapter_model.safetensors) as a .tar.gz with the files at its root to s3://<artifactBucketName>/adapters/<name>.tar.gz.
 */
import { CfnOutput, Size, Stack, StackProps, Validations, aws_iam as iam, aws_s3 as s3 } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import {
  AdapterSource,
  InstanceType,
  LlmInferenceComponent,
  ModelSource,
  PrefixAwareLlmComponentEndpoint,
} from '../lib/index';
import { createAlarmTopic } from './alarm-topic';

export interface InferenceComponentsStackProps extends StackProps {
  /** Bucket holding the base model files and the adapter archives (SSE-S3). @default 'my-llm-artifacts' */
  readonly artifactBucketName?: string;
}

export class InferenceComponentsStack extends Stack {
  public readonly endpoint: PrefixAwareLlmComponentEndpoint;
  public readonly base: LlmInferenceComponent;

  constructor(scope: Construct, id: string, props: InferenceComponentsStackProps = {}) {
    super(scope, id, props);
    const { topic } = createAlarmTopic(this, 'Alarms');
    const artifacts = s3.Bucket.fromBucketName(this, 'Artifacts', props.artifactBucketName ?? 'my-llm-artifacts');

    this.endpoint = new PrefixAwareLlmComponentEndpoint(this, 'Llm', {
      instanceType: InstanceType.ML_G6E_12XLARGE,
      instanceCount: 2,
      managedInstanceScaling: { minInstanceCount: 2, maxInstanceCount: 4 },
      endpointName: 'llama-8b-adapters',
      monitoring: { alarmTopic: topic },
    });

    // Llama 3.1 8B in BF16 (~16 GB) fits one L40S: one GPU per copy, two copies per instance to start.
    this.base = this.endpoint.addModel('Base', {
      model: ModelSource.s3(artifacts, 'models/llama-3.1-8b-instruct', { s3ManagedEncryption: true }),
      inferenceComponentName: 'llama-8b-base',
      acceleratorsPerCopy: 1,
      copyCount: 4,
      minMemoryPerCopy: Size.gibibytes(64),
      // Rank 64 adapters: vLLM's default maximum rank is 16.
      engine: { maxModelLen: 16384, extraArgs: { 'max-lora-rank': 64 } },
      autoScaling: { minCopies: 2, maxCopies: 8 },
    });
    const sql = this.base.addAdapter('SqlAdapter', {
      artifact: AdapterSource.s3(artifacts, 'adapters/sql.tar.gz', { s3ManagedEncryption: true }),
      inferenceComponentName: 'llama-8b-sql',
    });
    const support = this.base.addAdapter('SupportAdapter', {
      artifact: AdapterSource.s3(artifacts, 'adapters/support.tar.gz', { s3ManagedEncryption: true }),
      inferenceComponentName: 'llama-8b-support',
    });

    // The support application may call its adapter (and, through the endpoint, the others: see grantInvoke).
    const supportClient = new iam.Role(this, 'SupportClient', {
      assumedBy: new iam.AccountRootPrincipal(),
      description: 'Calls the support adapter of the llama-8b-adapters endpoint.',
    });
    support.grantInvoke(supportClient);
    for (const id of ['NIST.800.53.R5-IAMNoInlinePolicy', 'HIPAA.Security-IAMNoInlinePolicy']) {
      Validations.of(supportClient).acknowledge({
        id,
        reason:
          'The policy grants sagemaker:InvokeEndpoint on this one endpoint and adapter component and exists only with this role; a managed ' +
          'policy would hold the same statement and add a reusable attach point without narrowing anything.',
      });
    }

    new CfnOutput(this, 'EndpointName', { value: this.endpoint.endpointName });
    new CfnOutput(this, 'Components', {
      value: [this.base, sql, support].map((c) => c.inferenceComponentName).join(','),
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: topic.topicArn });
  }
}
