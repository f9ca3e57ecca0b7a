/**
 * A private deployment: Llama 3.1 70B Instruct from your own S3 bucket, in a VPC without internet access, with
 * network isolation, autoscaling on concurrent requests (2–4 × ml.p5.48xlarge) and a rolling deployment that rolls
 * back on alarms. Clients inside the VPC reach the endpoint through a SageMaker Runtime interface endpoint.
 *
 * Hourly cost drivers (approximate us-east-1 on-demand list prices recorded 2026-11-30 from
 * https://aws.amazon.com/sagemaker/pricing/, the prices `prefix-router plan` and `ab` use; check the page before deploying):
 *   - 2–4 × ml.p5.48xlarge real-time inference ≈ $126–$252/h (≈ $63/h per instance), plus one extra instance while a
 *     rolling batch is replaced.
 *   - SageMaker Runtime interface endpoint: ≈ $0.01/h per Availability Zone plus data processed; the S3 gateway
 *     endpoint is free. VPC flow logs: CloudWatch Logs ingestion and storage.
 *
 * Quota to request (Service Quotas → Amazon SageMaker): "ml.p5.48xlarge for endpoint usage" ≥ 5 (autoscaling
 * maximum 4 + 1 for the rolling batch).
 *
 * Before deploying: copy the model files (config.json, tokenizer files, *.safetensors; no tarball) to
 * s3://<modelBucketName>/<modelPrefix>/ in the stack's region. Network isolation forbids downloading from Hugging Face.
 */
import {
  Annotations,
  CfnOutput,
  Duration,
  Stack,
  StackProps,
  Validations,
  aws_ec2 as ec2,
  aws_iam as iam,
  aws_kms as kms,
  aws_logs as logs,
  aws_s3 as s3,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import {
  DeploymentPolicy,
  InstanceType,
  ModelSource,
  PrefixAwareLlmEndpoint,
  PrefixAwareLlmWarnings,
} from '../lib/index';
import { createAlarmTopic } from './alarm-topic';

export interface PrivateVpcStackProps extends StackProps {
  /** Bucket holding the model files. @default 'my-llm-artifacts' */
  readonly modelBucketName?: string;
  /** Key prefix of the model files. @default 'models/llama-3.1-70b-instruct' */
  readonly modelPrefix?: string;
  /**
   * ARN of the KMS key the model bucket encrypts with (SSE-KMS); the execution role may decrypt with it.
   * @default - the bucket uses SSE-S3
   */
  readonly modelBucketKeyArn?: string;
}

export class PrivateVpcStack extends Stack {
  public readonly endpoint: PrefixAwareLlmEndpoint;

  // eslint-disable-next-line max-lines-per-function -- a benchmark or example script read top to bottom as one scenario
  constructor(scope: Construct, id: string, props: PrivateVpcStackProps = {}) {
    super(scope, id, props);

    // One customer-managed key for the alarm topic and the flow logs.
    const { topic, key } = createAlarmTopic(this, 'Alarms');
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal(`logs.${this.region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': `arn:${this.partition}:logs:${this.region}:${this.account}:*`,
          },
        },
      }),
    );

    // Isolated subnets only: no NAT, no internet gateway. SageMaker copies the model from S3 through the gateway endpoint.
    const vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 3,
      natGateways: 0,
      subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 20 }],
      gatewayEndpoints: { S3: { service: ec2.GatewayVpcEndpointAwsService.S3 } },
      flowLogs: {
        rejected: {
          destination: ec2.FlowLogDestination.toCloudWatchLogs(
            new logs.LogGroup(this, 'FlowLogs', { retention: logs.RetentionDays.ONE_MONTH, encryptionKey: key }),
          ),
          trafficType: ec2.FlowLogTrafficType.REJECT,
        },
      },
    });
    Validations.of(vpc.node.findChild('rejected')).acknowledge({
      id: 'NIST.800.53.R5-IAMNoInlinePolicy',
      reason:
        "CDK's flow-log role policy allows only writing to the one flow-log group; it exists only with that role.",
    });
    Validations.of(vpc.node.findChild('rejected')).acknowledge({
      id: 'HIPAA.Security-IAMNoInlinePolicy',
      reason:
        "CDK's flow-log role policy allows only writing to the one flow-log group; it exists only with that role.",
    });
    const runtimeEndpoint = vpc.addInterfaceEndpoint('SageMakerRuntime', {
      service: ec2.InterfaceVpcEndpointAwsService.SAGEMAKER_RUNTIME,
      privateDnsEnabled: true,
    });
    // cdk-nag cannot evaluate the CIDR intrinsic of the default rule: it admits HTTPS from this VPC's CIDR only.
    const vpcCidrOnly =
      'The interface endpoint admits TCP 443 from the VPC CIDR block only (Fn::GetAtt Vpc.CidrBlock), not from 0.0.0.0/0; ' +
      'cdk-nag cannot evaluate the intrinsic and reports it as open.';
    for (const id of [
      'AwsSolutions-EC23',
      'NIST.800.53.R5-EC2RestrictedCommonPorts',
      'NIST.800.53.R5-EC2RestrictedSSH',
      'HIPAA.Security-EC2RestrictedCommonPorts',
      'HIPAA.Security-EC2RestrictedSSH',
    ]) {
      Validations.of(runtimeEndpoint).acknowledge({ id, reason: vpcCidrOnly });
    }

    const modelBucket = s3.Bucket.fromBucketName(this, 'ModelBucket', props.modelBucketName ?? 'my-llm-artifacts');
    // An imported bucket cannot tell how it is encrypted: say it, so an SSE-KMS bucket gets its decrypt grant.
    const modelEncryption = props.modelBucketKeyArn
      ? { encryptionKey: kms.Key.fromKeyArn(this, 'ModelBucketKey', props.modelBucketKeyArn) }
      : { s3ManagedEncryption: true };

    this.endpoint = new PrefixAwareLlmEndpoint(this, 'Llama70B', {
      model: ModelSource.s3(modelBucket, props.modelPrefix ?? 'models/llama-3.1-70b-instruct', modelEncryption),
      instanceType: InstanceType.ML_P5_48XLARGE,
      instanceCount: 2,
      // Llama 3.1 70B has 64 attention heads and 8 key/value heads: tensor parallel 8 shards it over the 8 H100s. Said
      // explicitly because the construct cannot read the head counts of a model in S3.
      engine: { tensorParallelSize: 8, maxModelLen: 32768, servedModelName: 'llama-3.1-70b-instruct' },
      vpc,
      enableNetworkIsolation: true,
      autoScaling: { minCapacity: 2, maxCapacity: 4 },
      // A stable name: moving this construct must not replace the endpoint.
      endpointName: 'llama-70b-private',
      monitoring: { alarmTopic: topic },
      deployment: DeploymentPolicy.rolling({
        batchInstances: 1,
        rollbackBatchInstances: 1,
        waitInterval: Duration.minutes(10),
        maximumExecutionTimeout: Duration.hours(4),
      }),
    });

    // Autoscaling fixes the instance type: changing it later takes three deploys (docs/operations.md).
    Annotations.of(this.endpoint).acknowledgeWarning(
      PrefixAwareLlmWarnings.AUTOSCALED_INSTANCE_TYPE_FIXED,
      'This fleet stays on ml.p5.48xlarge; a type change follows the three-step procedure in docs/operations.md.',
    );

    // An application role that may call the endpoint (buffered and streaming), and nothing else.
    const clientRole = new iam.Role(this, 'ClientRole', {
      assumedBy: new iam.AccountRootPrincipal(),
      description: 'May invoke the private LLM endpoint.',
    });
    this.endpoint.grantInvoke(clientRole);
    for (const id of ['NIST.800.53.R5-IAMNoInlinePolicy', 'HIPAA.Security-IAMNoInlinePolicy']) {
      Validations.of(clientRole).acknowledge({
        id,
        reason:
          'The policy grants sagemaker:InvokeEndpoint on this one endpoint ARN and exists only with this role; a managed policy would ' +
          'hold the same statement and add a reusable attach point without narrowing anything.',
      });
    }

    new CfnOutput(this, 'EndpointName', { value: this.endpoint.endpointName });
    new CfnOutput(this, 'ClientRoleArn', { value: clientRole.roleArn });
    new CfnOutput(this, 'AlarmTopicArn', { value: topic.topicArn });
  }
}
