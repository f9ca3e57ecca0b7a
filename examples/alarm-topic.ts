import { aws_iam as iam, aws_kms as kms, aws_sns as sns, RemovalPolicy } from 'aws-cdk-lib';
import { Construct } from 'constructs';

/**
 * The SNS topic the examples' alarms page through: encrypted with a customer-managed KMS key (CloudWatch cannot
 * publish to a topic encrypted with the AWS-managed `aws/sns` key, whose policy cannot grant it), TLS-only.
 * Subscribe your pager or e-mail to it after deploying.
 */
export function createAlarmTopic(scope: Construct, id: string): { topic: sns.Topic; key: kms.Key } {
  const key = new kms.Key(scope, `${id}Key`, {
    enableKeyRotation: true,
    description: 'Encrypts the LLM endpoint alarm topic (and its logs, where an example has any).',
    removalPolicy: RemovalPolicy.RETAIN,
  });
  // CloudWatch alarms publish to the topic, so they need the key to encrypt the message.
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
    }),
  );
  const topic = new sns.Topic(scope, id, { masterKey: key, enforceSSL: true, displayName: 'LLM endpoint alarms' });
  return { topic, key };
}
