import { ArnFormat, aws_cloudwatch as cloudwatch, aws_iam as iam, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { ENDPOINT_INSTANCE_NAMESPACE } from '../monitoring';
import { grantScoped } from './grants';
import { CLOUDWATCH_DESCRIBE_ALARMS_ACTIONS, CLOUDWATCH_PUT_METRIC_ACTIONS, LOGS_ACTIONS } from './iam-actions';

/**
 * The execution role an endpoint construct creates when `role` is not given (`ExecutionRole` child): trusted by
 * SageMaker, with no statement until the construct adds the ones it needs.
 */
export function createExecutionRole(scope: Construct, description: string): iam.Role {
  return new iam.Role(scope, 'ExecutionRole', {
    assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com'),
    description,
  });
}

/**
 * What every SageMaker execution role of an endpoint needs, whichever way models are hosted (on the variant or as
 * inference components): the endpoint's container logs and the instance metrics.
 */
export function grantEndpointRuntimeBasics(scope: Construct, role: iam.IRole, endpointName: string): void {
  const stack = Stack.of(scope);
  const logGroup = stack.formatArn({
    service: 'logs',
    resource: 'log-group',
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    resourceName: `/aws/sagemaker/Endpoints/${endpointName}`,
  });
  grantScoped(role, {
    actions: LOGS_ACTIONS,
    resources: [logGroup, `${logGroup}:log-stream:*`],
    wildcardReason:
      "Log streams are named per instance and container at run time; the statement is limited to this endpoint's log group.",
  });
  grantScoped(role, {
    actions: CLOUDWATCH_PUT_METRIC_ACTIONS,
    resources: ['*'],
    conditions: { StringEquals: { 'cloudwatch:namespace': ENDPOINT_INSTANCE_NAMESPACE } },
    wildcardReason:
      'cloudwatch:PutMetricData supports no resource ARNs; the statement is limited to the SageMaker endpoint instance-metrics namespace.',
  });
}

/**
 * SageMaker reads the auto-rollback alarms with the execution role: "Ensure that your IAM execution role has
 * permission to perform the cloudwatch:DescribeAlarms action on the auto-rollback alarms you specify"
 * (https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-configuration.html). Scoped to those alarms'
 * ARNs; a composite alarm is only returned to a DescribeAlarms permission scoped to `*`
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_DescribeAlarms.html), so one composite alarm
 * widens the statement to `*`.
 */
export function grantDescribeRollbackAlarms(role: iam.IRole, alarms: cloudwatch.IAlarm[]): void {
  if (alarms.length === 0) return;
  if (alarms.some((alarm) => alarm instanceof cloudwatch.CompositeAlarm)) {
    grantScoped(role, {
      actions: CLOUDWATCH_DESCRIBE_ALARMS_ACTIONS,
      resources: ['*'],
      wildcardReason:
        'A composite rollback alarm: CloudWatch returns composite alarms only to a cloudwatch:DescribeAlarms permission scoped to *; ' +
        'read-only, and SageMaker reads the rollback alarms with the execution role during deployments.',
    });
    return;
  }
  grantScoped(role, { actions: CLOUDWATCH_DESCRIBE_ALARMS_ACTIONS, resources: alarms.map((alarm) => alarm.alarmArn) });
}
