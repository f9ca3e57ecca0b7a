/**
 * IAM rules: the actions AWS documents for each feature a template uses, granted to the SageMaker execution role on
 * the resources the feature touches.
 */
import { AwsRule, RuleFinding } from './rule';
import {
  FlatStatement,
  flatten,
  globMatches,
  isAllowed,
  referencedId,
  resourcesOfType,
  roleStatements,
  TemplateJson,
} from './template';

/** CreateModel API: execution role permissions (ECR, S3 model data, CloudWatch logs and metrics, VPC interfaces). */
const EXECUTION_ROLE =
  'https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-roles.html#sagemaker-roles-createmodel-perms';
const GUARDRAILS_ALARMS = 'https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-configuration.html';
const DESCRIBE_ALARMS = 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_DescribeAlarms.html';
const KMS_S3 = 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html';
/** Data capture writes captured requests to DestinationS3Uri as the model's execution role (and encrypts them with KmsKeyId). */
const DATA_CAPTURE = 'https://docs.aws.amazon.com/sagemaker/latest/dg/model-monitor-data-capture-endpoint.html';
const DATA_CAPTURE_KMS = 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DataCaptureConfig.html';
/** An adapter component gives its artefacts as Container.ArtifactUrl; SageMaker loads them for the endpoint. */
const ADAPTER_SPEC =
  'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentSpecification.html';
const AUTOSCALING_SLR =
  'https://docs.aws.amazon.com/autoscaling/application/userguide/application-auto-scaling-service-linked-roles.html';
/** The service-linked role Application Auto Scaling uses for SageMaker variants. */
const SAGEMAKER_SCALING_ROLE =
  'aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint';

function rule(
  id: string,
  doc: string,
  statement: string,
  check: (template: TemplateJson, finding: (resource: string, message: string) => RuleFinding) => RuleFinding[],
): AwsRule {
  return {
    id,
    doc,
    statement,
    check: (template) => check(template, (resource, message) => ({ rule: id, resource, message })),
  };
}

/** Each model with the logical id of its execution role (when the role is in the template) and its statements. */
function modelsWithRoles(
  template: TemplateJson,
): Array<{ modelId: string; model: Record<string, any>; roleId?: string; statements: FlatStatement[] }> {
  return resourcesOfType(template, 'AWS::SageMaker::Model')
    .map(([modelId, model]) => {
      const roleId = referencedId(model.ExecutionRoleArn);
      const inTemplate = roleId !== undefined && template.Resources?.[roleId]?.Type === 'AWS::IAM::Role';
      return {
        modelId,
        model,
        roleId: inTemplate ? roleId : undefined,
        statements: inTemplate ? roleStatements(template, roleId) : [],
      };
    })
    .filter((m) => m.roleId !== undefined);
}

/**
 * The execution roles' statements of the models an endpoint serves: the models on its variants, the models of the
 * inference components placed on it, and the role its endpoint configuration names (which components run as).
 */
function endpointRoles(
  template: TemplateJson,
  endpoint: Record<string, any>,
  endpointId?: string,
): Array<{ roleId: string; statements: FlatStatement[] }> {
  const configId = referencedId(endpoint.EndpointConfigName);
  const config = configId ? template.Resources?.[configId]?.Properties : undefined;
  const variants: Array<Record<string, any>> = config?.ProductionVariants ?? [];
  const modelIds = new Set(variants.map((v) => referencedId(v.ModelName)).filter((m): m is string => m !== undefined));
  if (endpointId !== undefined) {
    for (const [, component] of resourcesOfType(template, 'AWS::SageMaker::InferenceComponent')) {
      const model = referencedId(component.Specification?.ModelName);
      if (referencedId(component.EndpointName) === endpointId && model !== undefined) modelIds.add(model);
    }
  }
  const roles = new Map(
    modelsWithRoles(template)
      .filter((m) => modelIds.has(m.modelId))
      .map((m) => [m.roleId!, m.statements]),
  );
  const configRole = referencedId(config?.ExecutionRoleArn);
  if (
    configRole !== undefined &&
    template.Resources?.[configRole]?.Type === 'AWS::IAM::Role' &&
    !roles.has(configRole)
  ) {
    roles.set(configRole, roleStatements(template, configRole));
  }
  return [...roles].map(([roleId, statements]) => ({ roleId, statements }));
}

/** The repository name and registry account of an ECR image URI (`ACCOUNT.dkr.ecr.REGION.SUFFIX/REPO:TAG`). */
function ecrRepositoryOf(imageUri: string): { account: string; repository: string } | undefined {
  const match = /^(.+?)\.dkr\.ecr\.[^/]+?\/(.+)$/.exec(imageUri);
  // The tag or digest follows the last ':' or '@' outside a flattened intrinsic (`<AWS::AccountId>` holds colons).
  return match ? { account: match[1], repository: match[2].replace(/[:@][^:@<>]*$/, '') } : undefined;
}

const ECR_PULL = ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'];
const LOGS = ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'];
const VPC = [
  'ec2:CreateNetworkInterface',
  'ec2:CreateNetworkInterfacePermission',
  'ec2:DeleteNetworkInterface',
  'ec2:DeleteNetworkInterfacePermission',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeVpcs',
  'ec2:DescribeDhcpOptions',
  'ec2:DescribeSubnets',
  'ec2:DescribeSecurityGroups',
];

export const IAM_RULES: readonly AwsRule[] = [
  rule(
    'IAM-ROLLBACK-DESCRIBE-ALARMS',
    GUARDRAILS_ALARMS,
    `The execution role may call cloudwatch:DescribeAlarms on every auto-rollback alarm (resource: the alarm ARN, or * for composite alarms: ${DESCRIBE_ALARMS}).`,
    (template, finding) =>
      resourcesOfType(template, 'AWS::SageMaker::Endpoint').flatMap(([id, endpoint]) => {
        const alarms: Array<{ AlarmName: unknown }> =
          endpoint.DeploymentConfig?.AutoRollbackConfiguration?.Alarms ?? [];
        if (alarms.length === 0) return [];
        return endpointRoles(template, endpoint).flatMap(({ roleId, statements }) =>
          alarms.flatMap((alarm) => {
            const alarmId = referencedId(alarm.AlarmName);
            const composite =
              alarmId !== undefined && template.Resources?.[alarmId]?.Type === 'AWS::CloudWatch::CompositeAlarm';
            const name = flatten(alarm.AlarmName);
            const covers = (pattern: string) =>
              !composite &&
              (alarmId !== undefined
                ? pattern === `<${alarmId}.Arn>` ||
                  globMatches(pattern.replace(/<[^>]+>/g, '*'), `arn:aws:cloudwatch:r:1:alarm:${name}`)
                : globMatches(pattern.replace(/<[^>]+>/g, '*'), `arn:aws:cloudwatch:r:1:alarm:${name}`));
            return isAllowed(statements, 'cloudwatch:DescribeAlarms', covers)
              ? []
              : [finding(id, `role ${roleId} may not describe rollback alarm ${name}`)];
          }),
        );
      }),
  ),

  rule(
    'IAM-IC-ROLLBACK-DESCRIBE-ALARMS',
    GUARDRAILS_ALARMS,
    "An inference component's rollback alarms are read with the execution role of its endpoint configuration: cloudwatch:DescribeAlarms on each alarm.",
    (template, finding) =>
      resourcesOfType(template, 'AWS::SageMaker::InferenceComponent').flatMap(([id, component]) => {
        const alarms: Array<{ AlarmName: unknown }> =
          component.DeploymentConfig?.AutoRollbackConfiguration?.Alarms ?? [];
        const endpointId = referencedId(component.EndpointName);
        const endpoint = endpointId ? template.Resources?.[endpointId]?.Properties : undefined;
        if (alarms.length === 0 || !endpoint) return [];
        return endpointRoles(template, endpoint, endpointId).flatMap(({ roleId, statements }) =>
          alarms.flatMap((alarm) => {
            const alarmId = referencedId(alarm.AlarmName);
            const covers = (pattern: string) =>
              (alarmId !== undefined && pattern === `<${alarmId}.Arn>`) ||
              globMatches(pattern.replace(/<[^>]+>/g, '*'), `arn:aws:cloudwatch:r:1:alarm:${flatten(alarm.AlarmName)}`);
            return isAllowed(statements, 'cloudwatch:DescribeAlarms', covers)
              ? []
              : [finding(id, `role ${roleId} may not describe rollback alarm ${flatten(alarm.AlarmName)}`)];
          }),
        );
      }),
  ),

  rule(
    'IAM-ECR-PULL',
    EXECUTION_ROLE,
    'An ECR image needs ecr:BatchCheckLayerAvailability, ecr:GetDownloadUrlForLayer and ecr:BatchGetImage on its repository, and ecr:GetAuthorizationToken.',
    (template, finding) =>
      modelsWithRoles(template).flatMap(({ modelId, model, roleId, statements }) => {
        const image = flatten(model.PrimaryContainer?.Image);
        const repo = ecrRepositoryOf(image);
        if (!image.includes('.dkr.ecr.')) return [];
        const out: RuleFinding[] = [];
        const coversRepo = (pattern: string) =>
          repo !== undefined &&
          ((pattern.endsWith(`:repository/${repo.repository}`) && pattern.includes(`:${repo.account}:`)) ||
            globMatches(pattern, `arn:aws:ecr:r:${repo.account}:repository/${repo.repository}`));
        for (const action of ECR_PULL)
          if (!isAllowed(statements, action, coversRepo))
            out.push(finding(modelId, `role ${roleId} lacks ${action} on repository ${repo?.repository ?? image}`));
        if (!isAllowed(statements, 'ecr:GetAuthorizationToken', () => false))
          out.push(finding(modelId, `role ${roleId} lacks ecr:GetAuthorizationToken on *`));
        return out;
      }),
  ),

  rule(
    'IAM-S3-MODEL-DATA',
    EXECUTION_ROLE,
    'S3 model data needs s3:GetObject on the objects under the prefix and s3:ListBucket on the bucket.',
    (template, finding) =>
      modelsWithRoles(template).flatMap(({ modelId, model, roleId, statements }) => {
        const source = model.PrimaryContainer?.ModelDataSource?.S3DataSource;
        if (!source) return [];
        const uri = flatten(source.S3Uri);
        const match = /^s3:\/\/([^/]+)\/(.*)$/.exec(uri);
        if (!match) return [finding(modelId, `S3Uri ${uri} is not an s3:// URI`)];
        const [, bucket, prefix] = match;
        // Statement resources may spell pseudo parameters (`<AWS::Partition>`) or literals (`aws`): compare with both as wildcards.
        const pattern = (p: string) => p.replace(/<AWS::[A-Za-z]+>/g, '*');
        const bucketArns = [
          `arn:aws:s3:::${bucket}`,
          ...(/^<([^.>]+)>$/.test(bucket) ? [`<${bucket.slice(1, -1)}.Arn>`] : []),
        ];
        const object = (arn: string) => `${arn}/${prefix}probe.safetensors`;
        const out: RuleFinding[] = [];
        if (!isAllowed(statements, 's3:GetObject', (p) => bucketArns.some((b) => globMatches(pattern(p), object(b))))) {
          out.push(finding(modelId, `role ${roleId} may not read s3://${bucket}/${prefix}*`));
        }
        if (!isAllowed(statements, 's3:ListBucket', (p) => bucketArns.some((b) => globMatches(pattern(p), b))))
          out.push(finding(modelId, `role ${roleId} may not list bucket ${bucket}`));
        const bucketId = /^<([^.>]+)>$/.exec(bucket)?.[1];
        const encryption = bucketId
          ? template.Resources?.[bucketId]?.Properties?.BucketEncryption?.ServerSideEncryptionConfiguration
          : undefined;
        const kmsKey = (encryption ?? [])
          .map((c: any) => c.ServerSideEncryptionByDefault)
          .find((d: any) => d?.SSEAlgorithm === 'aws:kms')?.KMSMasterKeyID;
        if (
          kmsKey !== undefined &&
          !isAllowed(
            statements,
            'kms:Decrypt',
            (p) => p === flatten(kmsKey) || p === flatten(kmsKey).replace(/\.Arn>$/, '>'),
          )
        ) {
          out.push(finding(modelId, `role ${roleId} may not decrypt with the bucket's KMS key (${KMS_S3})`));
        }
        return out;
      }),
  ),

  rule(
    'IAM-ADAPTER-ARTIFACT',
    ADAPTER_SPEC,
    "An adapter inference component's Container.ArtifactUrl (s3://BUCKET/KEY) needs s3:GetObject on that object for the execution role of its endpoint configuration, which SageMaker loads the adapter with.",
    (template, finding) =>
      resourcesOfType(template, 'AWS::SageMaker::InferenceComponent').flatMap(([id, component]) => {
        const url = flatten(component.Specification?.Container?.ArtifactUrl);
        const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
        const endpointId = referencedId(component.EndpointName);
        const endpoint = endpointId ? template.Resources?.[endpointId]?.Properties : undefined;
        if (!match || !endpoint) return [];
        const [, bucket, key] = match;
        const pattern = (p: string) => p.replace(/<AWS::[A-Za-z]+>/g, '*');
        const bucketArns = [
          `arn:aws:s3:::${bucket}`,
          ...(/^<([^.>]+)>$/.test(bucket) ? [`<${bucket.slice(1, -1)}.Arn>`] : []),
        ];
        return endpointRoles(template, endpoint, endpointId).flatMap(({ roleId, statements }) =>
          isAllowed(statements, 's3:GetObject', (p) => bucketArns.some((b) => globMatches(pattern(p), `${b}/${key}`)))
            ? []
            : [finding(id, `role ${roleId} may not read ${url}`)],
        );
      }),
  ),

  rule(
    'IAM-DATA-CAPTURE-WRITE',
    DATA_CAPTURE,
    `An endpoint config with DataCaptureConfig needs s3:PutObject for the execution role under DestinationS3Uri, and kms:Encrypt and kms:GenerateDataKey on its KmsKeyId (${DATA_CAPTURE_KMS}).`,
    (template, finding) =>
      resourcesOfType(template, 'AWS::SageMaker::Endpoint').flatMap(([id, endpoint]) => {
        const configId = referencedId(endpoint.EndpointConfigName);
        const capture = configId ? template.Resources?.[configId]?.Properties?.DataCaptureConfig : undefined;
        if (!capture || capture.EnableCapture === false) return [];
        const uri = flatten(capture.DestinationS3Uri);
        const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
        if (!match) return [finding(id, `DestinationS3Uri ${uri} is not an s3:// URI`)];
        const [, bucket, prefix] = match;
        const bucketArns = [
          `arn:aws:s3:::${bucket}`,
          ...(/^<([^.>]+)>$/.test(bucket) ? [`<${bucket.slice(1, -1)}.Arn>`] : []),
        ];
        const object = (arn: string) => `${arn}/${prefix.replace(/\/?$/, '/')}e/AllTraffic/2026/12/01/00/probe.jsonl`;
        const pattern = (p: string) => p.replace(/<AWS::[A-Za-z]+>/g, '*');
        return endpointRoles(template, endpoint).flatMap(({ roleId, statements }) => {
          const out: RuleFinding[] = [];
          if (!isAllowed(statements, 's3:PutObject', (p) => bucketArns.some((b) => globMatches(pattern(p), object(b)))))
            out.push(finding(id, `role ${roleId} may not write captured data under ${uri}`));
          if (capture.KmsKeyId !== undefined) {
            const key = flatten(capture.KmsKeyId);
            for (const action of ['kms:Encrypt', 'kms:GenerateDataKey']) {
              if (
                !isAllowed(
                  statements,
                  action,
                  (p) => p === key || p === key.replace(/\.Arn>$/, '>') || globMatches(pattern(p), key),
                )
              )
                out.push(finding(id, `role ${roleId} lacks ${action} on the capture key`));
            }
          }
          return out;
        });
      }),
  ),

  rule(
    'IAM-LOGS-AND-METRICS',
    EXECUTION_ROLE,
    'The execution role writes the container logs (logs:CreateLogGroup, CreateLogStream, PutLogEvents, DescribeLogStreams on /aws/sagemaker/Endpoints/NAME) and cloudwatch:PutMetricData.',
    (template, finding) =>
      resourcesOfType(template, 'AWS::SageMaker::Endpoint').flatMap(([id, endpoint]) => {
        const name = flatten(endpoint.EndpointName);
        const group = `arn:aws:logs:r:1:log-group:/aws/sagemaker/Endpoints/${name}`;
        return endpointRoles(template, endpoint, id).flatMap(({ roleId, statements }) => {
          const out: RuleFinding[] = [];
          const covers = (target: string) => (p: string) => globMatches(p.replace(/<AWS::[A-Za-z]+>/g, '*'), target);
          for (const action of LOGS) {
            const target =
              action === 'logs:PutLogEvents' || action === 'logs:CreateLogStream'
                ? `${group}:log-stream:i-1/AllTraffic`
                : group;
            if (!isAllowed(statements, action, covers(target)))
              out.push(finding(id, `role ${roleId} lacks ${action} on log group /aws/sagemaker/Endpoints/${name}`));
          }
          if (!isAllowed(statements, 'cloudwatch:PutMetricData'))
            out.push(finding(id, `role ${roleId} lacks cloudwatch:PutMetricData`));
          return out;
        });
      }),
  ),

  rule(
    'IAM-AUTOSCALING-SERVICE-LINKED-ROLE',
    AUTOSCALING_SLR,
    'A SageMaker variant registers with Application Auto Scaling through the service-linked role AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint (RoleARN absent or that role).',
    (template, finding) =>
      resourcesOfType(template, 'AWS::ApplicationAutoScaling::ScalableTarget')
        .filter(
          ([, target]) =>
            target.ServiceNamespace === 'sagemaker' &&
            target.RoleARN !== undefined &&
            !flatten(target.RoleARN).endsWith(`:role/${SAGEMAKER_SCALING_ROLE}`),
        )
        .map(([id, target]) =>
          finding(id, `RoleARN ${flatten(target.RoleARN)} is not the SageMaker service-linked role`),
        ),
  ),

  rule(
    'IAM-VPC-INTERFACES',
    EXECUTION_ROLE,
    'A model with VpcConfig needs the EC2 network-interface and describe actions SageMaker uses to attach to the VPC.',
    (template, finding) =>
      modelsWithRoles(template).flatMap(({ modelId, model, roleId, statements }) => {
        if (!model.VpcConfig) return [];
        return VPC.filter((action) => !isAllowed(statements, action)).map((action) =>
          finding(modelId, `role ${roleId} lacks ${action}`),
        );
      }),
  ),
];
