/**
 * Every IAM action the construct grants, in one place, each list as small as the job needs. No wildcards in
 * action names: a reviewer can read exactly what the role may do.
 */

/** Pull one image from one ECR repository (resource: that repository's ARN). */
export const ECR_PULL_ACTIONS = ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'];

/** Get a registry login token; ECR only accepts resource `*` for this action. */
export const ECR_AUTH_ACTIONS = ['ecr:GetAuthorizationToken'];

/** Read the model weights (resource: objects under the model prefix). */
export const S3_READ_OBJECT_ACTIONS = ['s3:GetObject'];

/** List the keys under the model prefix (resource: the bucket, with an `s3:prefix` condition). */
export const S3_LIST_ACTIONS = ['s3:ListBucket'];

/** Container logs go to `/aws/sagemaker/Endpoints/<endpoint-name>`. */
export const LOGS_ACTIONS = [
  'logs:CreateLogGroup',
  'logs:CreateLogStream',
  'logs:PutLogEvents',
  'logs:DescribeLogStreams',
];

/**
 * SageMaker reads the deployment's auto-rollback alarms with the execution role (resource: the alarms' ARNs; `*` for
 * composite alarms, which DescribeAlarms returns only to a permission scoped to `*`).
 */
export const CLOUDWATCH_DESCRIBE_ALARMS_ACTIONS = ['cloudwatch:DescribeAlarms'];

/** Instance metrics (CPU, GPU, memory, disk); the action supports no resource ARNs, only a namespace condition. */
export const CLOUDWATCH_PUT_METRIC_ACTIONS = ['cloudwatch:PutMetricData'];

/**
 * Calls SageMaker makes around attaching the endpoint to a VPC that support no resource ARNs: the describes, and
 * deleting an interface permission (addressed by permission id, not by interface).
 */
export const EC2_VPC_UNSCOPED_ACTIONS = [
  'ec2:DescribeVpcs',
  'ec2:DescribeDhcpOptions',
  'ec2:DescribeSubnets',
  'ec2:DescribeSecurityGroups',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DeleteNetworkInterfacePermission',
];

/** Create an elastic network interface in the chosen subnets and security groups. */
export const EC2_CREATE_ENI_ACTIONS = ['ec2:CreateNetworkInterface'];

/** Manage the interfaces SageMaker created (resource: network interfaces in this account and region). */
export const EC2_MANAGE_ENI_ACTIONS = ['ec2:CreateNetworkInterfacePermission', 'ec2:DeleteNetworkInterface'];

/**
 * What a client needs to call the endpoint, buffered and streaming (resource: this endpoint's ARN). The IAM service
 * authorization reference lists no `InvokeEndpointWithResponseStream` action: the API reference of that operation
 * says it is authorized by `sagemaker:InvokeEndpoint`.
 */
export const INVOKE_ENDPOINT_ACTIONS = ['sagemaker:InvokeEndpoint'];

/** The OpenAI-compatible path authenticates with a bearer token; the action accepts only resource `*`. */
export const CALL_WITH_BEARER_TOKEN_ACTIONS = ['sagemaker:CallWithBearerToken'];

/** `prefix-router ab` on one endpoint: read it and switch its configuration (resource: the endpoint's ARN). */
export const AB_TESTING_ENDPOINT_ACTIONS = ['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpoint'];

/** `prefix-router ab`: read the original configuration, create and delete its copies (resource: endpoint configurations). */
export const AB_TESTING_CONFIG_ACTIONS = [
  'sagemaker:DescribeEndpointConfig',
  'sagemaker:CreateEndpointConfig',
  'sagemaker:DeleteEndpointConfig',
];

/** `prefix-router ab` / `bench --sagemaker-endpoint`: the served model name from the model environment. */
export const AB_TESTING_MODEL_READ_ACTIONS = ['sagemaker:DescribeModel'];

/** CloudWatch's view of a run; neither action supports resource ARNs. */
export const AB_TESTING_CLOUDWATCH_READ_ACTIONS = ['cloudwatch:GetMetricData', 'cloudwatch:ListMetrics'];
