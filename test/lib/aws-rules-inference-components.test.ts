import { findings, INFERENCE_COMPONENT_RULES, TemplateJson } from './aws-rules';

const ruleIds = (template: TemplateJson) => [...new Set(findings(template).map((f) => f.split(' ')[0]))].sort();

const ROLE = {
  Type: 'AWS::IAM::Role',
  Properties: {
    AssumeRolePolicyDocument: {
      Statement: [{ Effect: 'Allow', Principal: { Service: 'sagemaker.amazonaws.com' }, Action: 'sts:AssumeRole' }],
    },
  },
};
/** What the role needs for the IAM rules to pass: logs, metrics and reading the adapter archive. */
const POLICY = {
  Type: 'AWS::IAM::Policy',
  Properties: {
    Roles: [{ Ref: 'R' }],
    PolicyDocument: {
      Statement: [
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
          Resource: [
            'arn:aws:logs:*:*:log-group:/aws/sagemaker/Endpoints/e',
            'arn:aws:logs:*:*:log-group:/aws/sagemaker/Endpoints/e:log-stream:*',
          ],
        },
        { Effect: 'Allow', Action: 'cloudwatch:PutMetricData', Resource: '*' },
        { Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::bucket/adapters/sql.tar.gz' },
      ],
    },
  },
};

/**
 * A valid endpoint with one base component and one adapter; `change` edits the resources to break one rule.
 */
function componentTemplate(change: (r: Record<string, any>) => void = () => undefined): TemplateJson {
  const resources: Record<string, any> = {
    R: ROLE,
    P: POLICY,
    C: {
      Type: 'AWS::SageMaker::EndpointConfig',
      Properties: {
        ExecutionRoleArn: { 'Fn::GetAtt': ['R', 'Arn'] },
        ProductionVariants: [
          {
            VariantName: 'AllTraffic',
            InstanceType: 'ml.g6e.12xlarge',
            InitialInstanceCount: 2,
            ManagedInstanceScaling: { Status: 'ENABLED', MinInstanceCount: 2, MaxInstanceCount: 4 },
          },
        ],
      },
    },
    E: {
      Type: 'AWS::SageMaker::Endpoint',
      Properties: { EndpointName: 'e', EndpointConfigName: { 'Fn::GetAtt': ['C', 'EndpointConfigName'] } },
    },
    Base: {
      Type: 'AWS::SageMaker::InferenceComponent',
      Properties: {
        InferenceComponentName: 'base',
        EndpointName: { 'Fn::GetAtt': ['E', 'EndpointName'] },
        VariantName: 'AllTraffic',
        Specification: {
          ModelName: 'm',
          ComputeResourceRequirements: { NumberOfAcceleratorDevicesRequired: 1, MinMemoryRequiredInMb: 32768 },
        },
        RuntimeConfig: { CopyCount: 2 },
      },
    },
    Sql: {
      Type: 'AWS::SageMaker::InferenceComponent',
      Properties: {
        InferenceComponentName: 'sql',
        EndpointName: { 'Fn::GetAtt': ['E', 'EndpointName'] },
        Specification: {
          BaseInferenceComponentName: 'base',
          Container: { ArtifactUrl: 's3://bucket/adapters/sql.tar.gz' },
        },
      },
    },
    T: {
      Type: 'AWS::ApplicationAutoScaling::ScalableTarget',
      Properties: {
        ServiceNamespace: 'sagemaker',
        ResourceId: 'inference-component/base',
        ScalableDimension: 'sagemaker:inference-component:DesiredCopyCount',
        MinCapacity: 2,
        MaxCapacity: 8,
      },
    },
    Tracking: {
      Type: 'AWS::ApplicationAutoScaling::ScalingPolicy',
      Properties: {
        PolicyType: 'TargetTrackingScaling',
        ScalingTargetId: { Ref: 'T' },
        TargetTrackingScalingPolicyConfiguration: {
          PredefinedMetricSpecification: {
            PredefinedMetricType: 'SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution',
          },
          TargetValue: 24,
        },
      },
    },
  };
  const copy = JSON.parse(JSON.stringify(resources));
  change(copy);
  return { Resources: copy };
}

/** Makes the base scale to zero copies, with (or without) AWS's scale-from-zero policy and alarm. */
function toZero(r: Record<string, any>, withPolicy: boolean, alarmComponent = 'base'): void {
  r.T.Properties.MinCapacity = 0;
  if (!withPolicy) return;
  r.Step = {
    Type: 'AWS::ApplicationAutoScaling::ScalingPolicy',
    Properties: { PolicyType: 'StepScaling', ScalingTargetId: { Ref: 'T' } },
  };
  r.Zero = {
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      Namespace: 'AWS/SageMaker',
      MetricName: 'NoCapacityInvocationFailures',
      Dimensions: [{ Name: 'InferenceComponentName', Value: alarmComponent }],
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [{ 'Fn::GetAtt': ['Step', 'Arn'] }],
    },
  };
}

/** Attaches the endpoint configuration to a VPC with `groups` security groups and `subnets` subnets. */
function inVpc(r: Record<string, any>, groups: number, subnets: number): void {
  r.C.Properties.VpcConfig = {
    SecurityGroupIds: Array.from({ length: groups }, (_, i) => `sg-${i}`),
    Subnets: Array.from({ length: subnets }, (_, i) => `subnet-${i}`),
  };
}

/** Gives the base a model M whose vLLM DLC container loads `model`, on an endpoint with (or without) network isolation. */
function isolated(r: Record<string, any>, model: string, isolation = true): void {
  r.M = {
    Type: 'AWS::SageMaker::Model',
    Properties: {
      ExecutionRoleArn: { 'Fn::GetAtt': ['R', 'Arn'] },
      PrimaryContainer: { Image: 'image', Environment: { SM_VLLM_MODEL: model } },
    },
  };
  r.Base.Properties.Specification.ModelName = { 'Fn::GetAtt': ['M', 'ModelName'] };
  if (isolation) r.C.Properties.EnableNetworkIsolation = true;
}

/** Gives the base a rolling update in batches of `batch` copies, rolling back on alarm A (described by the role unless `undescribed`). */
function rolling(r: Record<string, any>, batch: number, undescribed = false): void {
  r.A = {
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      Namespace: 'AWS/SageMaker',
      MetricName: 'Invocation5XXErrors',
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    },
  };
  r.Base.Properties.DeploymentConfig = {
    RollingUpdatePolicy: {
      MaximumBatchSize: { Type: 'COPY_COUNT', Value: batch },
      WaitIntervalInSeconds: 300,
      MaximumExecutionTimeoutInSeconds: 28_800,
    },
    AutoRollbackConfiguration: { Alarms: [{ AlarmName: { Ref: 'A' } }] },
  };
  if (!undescribed)
    r.P.Properties.PolicyDocument.Statement.push({
      Effect: 'Allow',
      Action: 'cloudwatch:DescribeAlarms',
      Resource: { 'Fn::GetAtt': ['A', 'Arn'] },
    });
}

describe('when the inference component rules are listed', () => {
  test('GIVEN each rule WHEN read THEN it cites an AWS documentation page', () => {
    expect(INFERENCE_COMPONENT_RULES.map((r) => r.id)).toEqual([
      'SM-IC-ENDPOINT-CONFIG',
      'SM-IC-NAME',
      'SM-IC-BASE-COMPUTE',
      'SM-IC-ADAPTER',
      'SM-IC-MANAGED-SCALING',
      'SM-IC-COPY-SCALING',
      'SM-IC-ROLLING-POLICY',
      'SM-IC-SCALE-FROM-ZERO',
      'SM-IC-VPC-CONFIG',
      'SM-IC-NETWORK-ISOLATION',
    ]);
    for (const rule of INFERENCE_COMPONENT_RULES) expect(rule.doc).toMatch(/^https:\/\/docs\.aws\.amazon\.com\//);
  });
});

describe('when a hand-made inference component template is checked', () => {
  test('GIVEN the valid template WHEN checked THEN no rule fires (the control)', () => {
    expect(findings(componentTemplate())).toEqual([]);
  });

  test.each<[string, (r: Record<string, any>) => void, string[]]>([
    [
      'no ExecutionRoleArn on the config',
      (r) => {
        delete r.C.Properties.ExecutionRoleArn;
      },
      ['SM-IC-ENDPOINT-CONFIG'],
    ],
    [
      'a model on the variant',
      (r) => {
        r.C.Properties.ProductionVariants[0].ModelName = 'm';
      },
      ['SM-IC-ENDPOINT-CONFIG'],
    ],
    [
      'a variant without an instance type',
      (r) => {
        delete r.C.Properties.ProductionVariants[0].InstanceType;
      },
      ['SM-IC-ENDPOINT-CONFIG'],
    ],
    [
      'a component name ending in a hyphen',
      (r) => {
        r.Base.Properties.InferenceComponentName = 'base-';
        r.Sql.Properties.Specification.BaseInferenceComponentName = 'base-';
        r.T.Properties.ResourceId = 'inference-component/base-';
      },
      ['SM-IC-NAME'],
    ],
    [
      'a component name of 64 characters',
      (r) => {
        r.Sql.Properties.InferenceComponentName = 'a'.repeat(64);
      },
      ['SM-IC-NAME'],
    ],
    [
      'a name of 63 characters',
      (r) => {
        r.Sql.Properties.InferenceComponentName = 'a'.repeat(63);
      },
      [],
    ],
    [
      'MinMemoryRequiredInMb 127',
      (r) => {
        r.Base.Properties.Specification.ComputeResourceRequirements.MinMemoryRequiredInMb = 127;
      },
      ['SM-IC-BASE-COMPUTE'],
    ],
    [
      'MinMemoryRequiredInMb 128',
      (r) => {
        r.Base.Properties.Specification.ComputeResourceRequirements.MinMemoryRequiredInMb = 128;
      },
      [],
    ],
    [
      'no MinMemoryRequiredInMb',
      (r) => {
        delete r.Base.Properties.Specification.ComputeResourceRequirements.MinMemoryRequiredInMb;
      },
      ['SM-IC-BASE-COMPUTE'],
    ],
    [
      '0 accelerators',
      (r) => {
        r.Base.Properties.Specification.ComputeResourceRequirements.NumberOfAcceleratorDevicesRequired = 0;
      },
      ['SM-IC-BASE-COMPUTE'],
    ],
    [
      '0.24 CPU cores',
      (r) => {
        r.Base.Properties.Specification.ComputeResourceRequirements.NumberOfCpuCoresRequired = 0.24;
      },
      ['SM-IC-BASE-COMPUTE'],
    ],
    [
      '0.25 CPU cores',
      (r) => {
        r.Base.Properties.Specification.ComputeResourceRequirements.NumberOfCpuCoresRequired = 0.25;
      },
      [],
    ],
    [
      'CopyCount -1',
      (r) => {
        r.Base.Properties.RuntimeConfig.CopyCount = -1;
      },
      ['SM-IC-BASE-COMPUTE'],
    ],
    [
      'CopyCount 0',
      (r) => {
        r.Base.Properties.RuntimeConfig.CopyCount = 0;
      },
      [],
    ],
    [
      'no model and no container',
      (r) => {
        delete r.Base.Properties.Specification.ModelName;
      },
      ['SM-IC-BASE-COMPUTE'],
    ],
    [
      'an adapter with compute of its own',
      (r) => {
        r.Sql.Properties.Specification.ComputeResourceRequirements = { MinMemoryRequiredInMb: 1024 };
      },
      ['SM-IC-ADAPTER'],
    ],
    [
      'an adapter without an s3:// artefact',
      (r) => {
        r.Sql.Properties.Specification.Container.ArtifactUrl = 'https://example.com/a.tar.gz';
      },
      ['SM-IC-ADAPTER'],
    ],
    [
      'an adapter on an unknown base',
      (r) => {
        r.Sql.Properties.Specification.BaseInferenceComponentName = 'other';
      },
      ['SM-IC-ADAPTER'],
    ],
    [
      'an adapter on an adapter',
      (r) => {
        r.Sql2 = JSON.parse(JSON.stringify(r.Sql));
        r.Sql2.Properties.InferenceComponentName = 'sql2';
        r.Sql2.Properties.Specification.BaseInferenceComponentName = 'sql';
      },
      ['SM-IC-ADAPTER'],
    ],
    [
      'an adapter on another endpoint',
      (r) => {
        r.Sql.Properties.EndpointName = 'other-endpoint';
      },
      ['SM-IC-ADAPTER'],
    ],
    [
      'managed MinInstanceCount -1',
      (r) => {
        r.C.Properties.ProductionVariants[0].ManagedInstanceScaling.MinInstanceCount = -1;
      },
      ['SM-IC-MANAGED-SCALING'],
    ],
    [
      'managed MaxInstanceCount 0',
      (r) => {
        Object.assign(r.C.Properties.ProductionVariants[0].ManagedInstanceScaling, {
          MinInstanceCount: 0,
          MaxInstanceCount: 0,
        });
      },
      ['SM-IC-MANAGED-SCALING'],
    ],
    [
      'managed min above max',
      (r) => {
        Object.assign(r.C.Properties.ProductionVariants[0].ManagedInstanceScaling, {
          MinInstanceCount: 5,
          MaxInstanceCount: 4,
        });
      },
      ['SM-IC-MANAGED-SCALING'],
    ],
    [
      'managed status ON',
      (r) => {
        r.C.Properties.ProductionVariants[0].ManagedInstanceScaling.Status = 'ON';
      },
      ['SM-IC-MANAGED-SCALING'],
    ],
    [
      'a copy target on the variant dimension',
      (r) => {
        r.T.Properties.ScalableDimension = 'sagemaker:variant:DesiredInstanceCount';
      },
      ['SM-IC-COPY-SCALING'],
    ],
    [
      'a copy target for an unknown component',
      (r) => {
        r.T.Properties.ResourceId = 'inference-component/other';
      },
      ['SM-IC-COPY-SCALING'],
    ],
    [
      'copy tracking on a variant metric',
      (r) => {
        r.Tracking.Properties.TargetTrackingScalingPolicyConfiguration.PredefinedMetricSpecification.PredefinedMetricType =
          'SageMakerVariantConcurrentRequestsPerModelHighResolution';
      },
      ['SM-IC-COPY-SCALING'],
    ],
    ['minimum 0 copies without the scale-from-zero policy', (r) => toZero(r, false), ['SM-IC-SCALE-FROM-ZERO']],
    ['minimum 0 copies with the scale-from-zero policy', (r) => toZero(r, true), []],
    ['minimum 0 copies with the alarm on another component', (r) => toZero(r, true, 'sql'), ['SM-IC-SCALE-FROM-ZERO']],
    ['a rolling batch of 1 of 2–8 copies', (r) => rolling(r, 1), []],
    ['a rolling batch of 2 of 2–8 copies', (r) => rolling(r, 2), ['SM-IC-ROLLING-POLICY']],
    [
      'a rolling bake of 3601 s',
      (r) => {
        rolling(r, 1);
        r.Base.Properties.DeploymentConfig.RollingUpdatePolicy.WaitIntervalInSeconds = 3601;
      },
      ['SM-IC-ROLLING-POLICY'],
    ],
    [
      'a rolling time limit of 599 s',
      (r) => {
        rolling(r, 1);
        r.Base.Properties.DeploymentConfig.RollingUpdatePolicy.MaximumExecutionTimeoutInSeconds = 599;
      },
      ['SM-IC-ROLLING-POLICY'],
    ],
    ['a rollback alarm the role may not describe', (r) => rolling(r, 1, true), ['IAM-IC-ROLLBACK-DESCRIBE-ALARMS']],
    ['a VpcConfig with 5 security groups and 16 subnets (max)', (r) => inVpc(r, 5, 16), []],
    ['a VpcConfig with 6 security groups (max+1)', (r) => inVpc(r, 6, 2), ['SM-IC-VPC-CONFIG']],
    ['a VpcConfig with 0 security groups (min−1)', (r) => inVpc(r, 0, 2), ['SM-IC-VPC-CONFIG']],
    ['a VpcConfig with 17 subnets (max+1)', (r) => inVpc(r, 1, 17), ['SM-IC-VPC-CONFIG']],
    ['a VpcConfig with 0 subnets (min−1)', (r) => inVpc(r, 1, 0), ['SM-IC-VPC-CONFIG']],
    [
      'network isolation with a Hugging Face download at start',
      (r) => isolated(r, 'Qwen/Qwen2.5-7B-Instruct'),
      ['SM-IC-NETWORK-ISOLATION'],
    ],
    ['network isolation with weights from S3 (and an adapter from S3)', (r) => isolated(r, '/opt/ml/model'), []],
    ['a Hugging Face download without network isolation', (r) => isolated(r, 'Qwen/Qwen2.5-7B-Instruct', false), []],
    [
      'the adapter archive not readable',
      (r) => {
        r.P.Properties.PolicyDocument.Statement[2].Resource = 'arn:aws:s3:::bucket/adapters/other.tar.gz';
      },
      ['IAM-ADAPTER-ARTIFACT'],
    ],
  ])('GIVEN %s WHEN checked THEN it finds the expected rules', (_name, change, expected) => {
    expect(ruleIds(componentTemplate(change))).toEqual(expected);
  });

  test('GIVEN a variant that scales to zero instances without components WHEN checked THEN SM-IC-SCALE-FROM-ZERO and SM-IC-MANAGED-SCALING fire', () => {
    const template = {
      Resources: {
        C: {
          Type: 'AWS::SageMaker::EndpointConfig',
          Properties: {
            ProductionVariants: [
              {
                VariantName: 'AllTraffic',
                ModelName: 'm',
                InstanceType: 'ml.g5.xlarge',
                InitialInstanceCount: 1,
                ManagedInstanceScaling: { Status: 'ENABLED', MinInstanceCount: 0, MaxInstanceCount: 2 },
              },
            ],
          },
        },
        E: {
          Type: 'AWS::SageMaker::Endpoint',
          Properties: { EndpointName: 'e', EndpointConfigName: { 'Fn::GetAtt': ['C', 'EndpointConfigName'] } },
        },
        T: {
          Type: 'AWS::ApplicationAutoScaling::ScalableTarget',
          Properties: {
            ServiceNamespace: 'sagemaker',
            ResourceId: 'endpoint/e/variant/AllTraffic',
            ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
            MinCapacity: 0,
            MaxCapacity: 2,
          },
        },
      },
    } as TemplateJson;
    expect(ruleIds(template)).toEqual(['SM-IC-MANAGED-SCALING', 'SM-IC-SCALE-FROM-ZERO']);
  });
});
