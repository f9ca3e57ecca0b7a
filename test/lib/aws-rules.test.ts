import { App, aws_cloudwatch as cloudwatch, aws_kms as kms, aws_s3 as s3, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { execFileSync } from 'child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { addExampleStacks, EXAMPLE_STACK_NAMES } from '../../examples';
import { compiledDist } from '../compiled-dist';
import {
  DeploymentPolicy,
  PrefixAwareLlmEndpoint,
  PrefixAwareLlmEndpointProps,
  RoutingStrategy,
} from '../../lib/index';
import { AWS_RULES, findings, TemplateJson } from './aws-rules';
import { baseProps } from './helpers';

function cdkJsonContext(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(__dirname, '..', '..', 'cdk.json'), 'utf8')).context;
}

/** The template of one endpoint with these props, in a fresh app (no schema validation: the rules are the check here). */
function templateOf(
  props: Partial<PrefixAwareLlmEndpointProps>,
  extra?: (stack: Stack) => Partial<PrefixAwareLlmEndpointProps>,
): TemplateJson {
  const stack = new Stack(new App(), 'Rules');
  new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ ...props, ...extra?.(stack) }));
  return Template.fromStack(stack).toJSON();
}

describe('when the documented AWS rules are listed', () => {
  test('GIVEN every rule WHEN read THEN it has a unique id, cites an AWS documentation page and states the rule', () => {
    expect(new Set(AWS_RULES.map((r) => r.id)).size).toBe(AWS_RULES.length);
    for (const rule of AWS_RULES) {
      expect({ id: rule.id, doc: rule.doc }).toEqual({
        id: rule.id,
        doc: expect.stringMatching(/^https:\/\/docs\.aws\.amazon\.com\//),
      });
      expect(rule.statement.length).toBeGreaterThan(30);
    }
  });
});

describe('when every example stack is checked against the documented AWS rules', () => {
  const app = new App({ context: cdkJsonContext() });
  addExampleStacks(app);
  const assembly = app.synth();

  test.each(assembly.stacks.map((s) => [s.stackName, s.template]))(
    'GIVEN %s WHEN checked THEN no rule is violated',
    (_name, template) => {
      expect(findings(template as TemplateJson)).toEqual([]);
    },
  );
});

describe('when bin/app.ts is synthesized the way `cdk synth` runs it', () => {
  const ROOT = join(__dirname, '..', '..');
  const outdir = mkdtempSync(join(tmpdir(), 'aws-rules-app-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));
  // The CLI hands the app its output directory and cdk.json's context through these variables. The app runs as tsc
  // compiled it (dist/bin/app.js), in a process of its own as under the CLI: ts-node would compile the constructs
  // again first (about 4 s of CPU).
  execFileSync(process.execPath, [join(compiledDist(), 'bin', 'app.js')], {
    cwd: ROOT,
    timeout: 120_000,
    env: { ...process.env, CDK_OUTDIR: outdir, CDK_CONTEXT_JSON: JSON.stringify(cdkJsonContext()) },
  });
  const templates = readdirSync(outdir).filter((f) => f.endsWith('.template.json'));

  test('GIVEN the app WHEN synthesized THEN it writes one template per example stack', () => {
    expect(templates.map((f) => f.replace('.template.json', '')).sort()).toEqual(
      Object.values(EXAMPLE_STACK_NAMES).sort(),
    );
  });

  test.each(templates)('GIVEN %s WHEN checked THEN no rule is violated', (file) => {
    expect(findings(JSON.parse(readFileSync(join(outdir, file), 'utf8')) as TemplateJson)).toEqual([]);
  });
});

describe('when a matrix of construct props is checked against the documented AWS rules', () => {
  const frequencies: Array<number | undefined> = [10, 30, 60, undefined];
  type Case = [string, Partial<PrefixAwareLlmEndpointProps>];
  const cases: Case[] = [];
  for (const instanceCount of [1, 2, 7]) {
    for (const seconds of frequencies) {
      const metricsConfig = seconds === undefined ? undefined : { publishFrequency: Duration.seconds(seconds) };
      const single = instanceCount === 1 ? { allowPrefixAwareOnSingleInstance: true } : {};
      const styles: Array<[string, DeploymentPolicy | undefined]> =
        instanceCount === 1
          ? [['default (blue/green)', undefined]]
          : [
              ['rolling', DeploymentPolicy.rolling()],
              ['blue/green', DeploymentPolicy.blueGreen({ maximumExecutionTimeout: Duration.hours(8) })],
            ];
      for (const [style, deployment] of styles) {
        for (const scaling of [false, true]) {
          cases.push([
            `${instanceCount} instances, publish ${seconds ?? 'unset'}, ${style}, autoscaling ${scaling ? 'on' : 'off'}`,
            {
              instanceCount,
              metricsConfig,
              deployment,
              ...single,
              autoScaling: scaling ? { minCapacity: instanceCount, maxCapacity: instanceCount + 2 } : undefined,
            },
          ]);
        }
      }
      if (instanceCount >= 2) {
        cases.push([
          `${instanceCount} instances, publish ${seconds ?? 'unset'}, routing variants`,
          {
            instanceCount,
            metricsConfig,
            routingVariants: [{ variantName: 'Random', routing: RoutingStrategy.random() }],
          },
        ]);
      }
    }
  }
  for (const seconds of [10, 30, 120, 300]) {
    cases.push([
      `enhanced metrics off, publish ${seconds}`,
      { metricsConfig: { enhancedMetrics: false, publishFrequency: Duration.seconds(seconds) } },
    ]);
  }
  cases.push([
    'least outstanding requests routing, 2 instances',
    { routing: RoutingStrategy.leastOutstandingRequests() },
  ]);
  cases.push([
    'rolling on an autoscaled fleet of 4–30',
    { instanceCount: 4, autoScaling: { minCapacity: 4, maxCapacity: 30 } },
  ]);
  cases.push([
    'longest alarm windows at 300 s',
    {
      metricsConfig: { publishFrequency: Duration.seconds(300) },
      monitoring: {
        concurrencyAlarm: { evaluationPeriods: 36, datapointsToAlarm: 36 },
        errorRateAlarm: { evaluationPeriods: 100 },
      },
    },
  ]);

  test.each(cases)('GIVEN %s WHEN checked THEN no rule is violated', (_name, props) => {
    expect(findings(templateOf(props))).toEqual([]);
  });

  test.each([
    ['a bucket of the stack', false],
    ['a bucket of the stack and a capture key', true],
  ])('GIVEN data capture to %s WHEN checked THEN no rule is violated', (_name, withKey) => {
    const template = templateOf({}, (stack) => ({
      dataCapture: {
        bucket: new s3.Bucket(stack, 'Capture'),
        prefix: 'captured/llm',
        ...(withKey ? { encryptionKey: new kms.Key(stack, 'CaptureKey') } : {}),
      },
    }));
    expect(findings(template)).toEqual([]);
  });

  test('GIVEN extra rollback alarms of the user WHEN checked THEN the execution role may describe each of them', () => {
    const template = templateOf({}, (stack) => {
      const own = new cloudwatch.Alarm(stack, 'Own', {
        metric: new cloudwatch.Metric({
          namespace: 'AWS/SageMaker',
          metricName: 'OverheadLatency',
          statistic: 'p99',
          period: Duration.minutes(1),
        }),
        threshold: 1,
        evaluationPeriods: 1,
      });
      const imported = cloudwatch.Alarm.fromAlarmArn(
        stack,
        'Imported',
        'arn:aws:cloudwatch:us-east-1:111122223333:alarm:team-slo',
      );
      return { deployment: DeploymentPolicy.rolling({ alarms: [own, imported] }) };
    });
    expect(findings(template)).toEqual([]);
  });

  test('GIVEN a composite rollback alarm WHEN checked THEN the execution role may describe it (DescribeAlarms on *)', () => {
    const template = templateOf({}, (stack) => {
      const child = new cloudwatch.Alarm(stack, 'Child', {
        metric: new cloudwatch.Metric({
          namespace: 'AWS/SageMaker',
          metricName: 'OverheadLatency',
          statistic: 'p99',
          period: Duration.minutes(1),
        }),
        threshold: 1,
        evaluationPeriods: 1,
      });
      const composite = new cloudwatch.CompositeAlarm(stack, 'Composite', {
        alarmRule: cloudwatch.AlarmRule.fromAlarm(child, cloudwatch.AlarmState.ALARM),
      });
      return { deployment: DeploymentPolicy.rolling({ alarms: [composite] }) };
    });
    expect(findings(template)).toEqual([]);
  });
});

/** A template with one alarm, for rules that must fire. */
function alarmTemplate(alarm: Record<string, unknown>, extra: Record<string, unknown> = {}): TemplateJson {
  return {
    Resources: {
      A: { Type: 'AWS::CloudWatch::Alarm', Properties: { EvaluationPeriods: 5, DatapointsToAlarm: 5, ...alarm } },
      ...extra,
    },
  };
}

const stat = (id: string, period: number, metricName = 'Invocations', namespace = 'AWS/SageMaker') => ({
  Id: id,
  ReturnData: false,
  MetricStat: { Metric: { Namespace: namespace, MetricName: metricName }, Period: period, Stat: 'Sum' },
});
const insights = (id: string, period: number, returnData = false, tail = '') => ({
  Id: id,
  ReturnData: returnData,
  Period: period,
  Expression: `SELECT MAX(ConcurrentRequestsPerModel) FROM SCHEMA("AWS/SageMaker", EndpointName, InstanceId, VariantName) WHERE EndpointName = 'e'${tail}`,
});
const math = (expression: string) => ({ Id: 'x', Expression: expression, ReturnData: true });
const ruleIds = (template: TemplateJson) => [...new Set(findings(template).map((f) => f.split(' ')[0]))].sort();

describe('when a template breaks a CloudWatch rule', () => {
  test('GIVEN two Metrics Insights queries in one alarm WHEN checked THEN CW-MI-ONE-QUERY fires, and one query passes', () => {
    expect(ruleIds(alarmTemplate({ Metrics: [math('a / b'), insights('a', 60), insights('b', 60)] }))).toEqual([
      'CW-MI-ONE-QUERY',
    ]);
    expect(ruleIds(alarmTemplate({ Metrics: [insights('a', 60, true)] }))).toEqual([]);
  });

  test('GIVEN SEARCH in an alarm WHEN checked THEN CW-NO-SEARCH fires', () => {
    expect(
      ruleIds(
        alarmTemplate({
          Metrics: [
            {
              Id: 's',
              ReturnData: true,
              Period: 60,
              Expression: "MAX(SEARCH('{AWS/SageMaker,InstanceId} x', 'Sum', 60))",
            },
          ],
        }),
      ),
    ).toEqual(['CW-NO-SEARCH']);
  });

  test.each([
    [10, 0, []],
    [11, 0, ['CW-MATH-LIMITS']],
    [1, 10, ['CW-MATH-LIMITS']],
    [10, 9, []],
  ])('GIVEN %i metrics and %i more expressions WHEN checked THEN it finds %j', (metrics, expressions, expected) => {
    const queries = [
      math('m0'),
      ...Array.from({ length: metrics }, (_, i) => stat(`m${i}`, 60)),
      ...Array.from({ length: expressions }, (_, i) => ({ Id: `e${i}`, ReturnData: false, Expression: 'm0 * 2' })),
    ];
    expect(ruleIds(alarmTemplate({ Metrics: queries }))).toEqual(expected);
  });

  test('GIVEN no or two returned queries, or an omitted ReturnData WHEN checked THEN CW-RETURN-DATA fires', () => {
    expect(ruleIds(alarmTemplate({ Metrics: [{ ...math('m * 2'), ReturnData: false }, stat('m', 60)] }))).toEqual([
      'CW-RETURN-DATA',
    ]);
    expect(ruleIds(alarmTemplate({ Metrics: [math('m * 2'), { ...stat('m', 60), ReturnData: true }] }))).toEqual([
      'CW-RETURN-DATA',
    ]);
    const { ReturnData: _omitted, ...implicit } = stat('m', 60);
    expect(ruleIds(alarmTemplate({ Metrics: [math('m * 2'), implicit] }))).toEqual(['CW-RETURN-DATA']);
  });

  test('GIVEN a grouped Metrics Insights query reduced by math WHEN checked THEN CW-SINGLE-SERIES fires', () => {
    expect(
      ruleIds(alarmTemplate({ Metrics: [math('MAX(q)'), insights('q', 60, false, ' GROUP BY InstanceId')] })),
    ).toEqual(['CW-SINGLE-SERIES']);
  });

  test('GIVEN metrics with different periods WHEN checked THEN CW-SAME-PERIOD fires', () => {
    expect(ruleIds(alarmTemplate({ Metrics: [math('a / b'), stat('a', 60), stat('b', 120)] }))).toEqual([
      'CW-SAME-PERIOD',
    ]);
  });

  test.each<[string, TemplateJson, string[]]>([
    [
      'a 10 s period on a standard metric',
      alarmTemplate({ Namespace: 'AWS/SageMaker', MetricName: 'ModelLatency', Period: 10, ExtendedStatistic: 'p90' }),
      ['CW-PERIOD-VALID'],
    ],
    [
      'a 45 s period',
      alarmTemplate({ Namespace: 'Custom', MetricName: 'X', Period: 45, Statistic: 'Sum' }),
      ['CW-PERIOD-VALID'],
    ],
    ['a 10 s Metrics Insights query', alarmTemplate({ Metrics: [insights('q', 10, true)] }), ['CW-MI-PERIOD']],
    [
      'a 10 s period on the high-resolution ConcurrentRequestsPerModel',
      alarmTemplate({
        Namespace: 'AWS/SageMaker',
        MetricName: 'ConcurrentRequestsPerModel',
        Period: 10,
        Statistic: 'Maximum',
      }),
      [],
    ],
  ])('GIVEN %s WHEN checked THEN it finds the expected rules', (_name, template, expected) => {
    expect(ruleIds(template)).toEqual(expected);
  });

  test('GIVEN an endpoint publishing every 120 s WHEN an alarm reads its invocations every 60 s THEN CW-PERIOD-VALID fires; every 120 s passes', () => {
    const endpoint = {
      E: {
        Type: 'AWS::SageMaker::Endpoint',
        Properties: { EndpointName: 'e', EndpointConfigName: { 'Fn::GetAtt': ['C', 'EndpointConfigName'] } },
      },
      C: {
        Type: 'AWS::SageMaker::EndpointConfig',
        Properties: { MetricsConfig: { EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 120 } },
      },
    };
    const alarm = (period: number) => ({
      Namespace: 'AWS/SageMaker',
      MetricName: 'Invocations',
      Period: period,
      Statistic: 'Sum',
      Dimensions: [{ Name: 'EndpointName', Value: 'e' }],
    });
    expect(ruleIds(alarmTemplate(alarm(60), endpoint))).toEqual(['CW-PERIOD-VALID']);
    expect(ruleIds(alarmTemplate(alarm(120), endpoint))).toEqual([]);
  });

  test('GIVEN enhanced metrics off at 10 s WHEN an alarm reads invocations every 10 s THEN CW-PERIOD-VALID fires (invocations stay at 60 s)', () => {
    const endpoint = {
      E: {
        Type: 'AWS::SageMaker::Endpoint',
        Properties: { EndpointName: 'e', EndpointConfigName: { 'Fn::GetAtt': ['C', 'EndpointConfigName'] } },
      },
      C: {
        Type: 'AWS::SageMaker::EndpointConfig',
        Properties: { MetricsConfig: { EnableEnhancedMetrics: false, MetricPublishFrequencyInSeconds: 10 } },
      },
    };
    const alarm = {
      Namespace: 'AWS/SageMaker',
      MetricName: 'ModelLatency',
      Period: 10,
      ExtendedStatistic: 'p90',
      Dimensions: [{ Name: 'EndpointName', Value: 'e' }],
    };
    expect(ruleIds(alarmTemplate(alarm, endpoint))).toEqual(['CW-PERIOD-VALID']);
    expect(
      ruleIds(
        alarmTemplate(
          { ...alarm, Namespace: '/aws/sagemaker/Endpoints', MetricName: 'GPUMemoryUtilization' },
          endpoint,
        ),
      ),
    ).toEqual([]);
  });

  test.each([
    [36, 300, []],
    [37, 300, ['CW-MI-WINDOW']],
    [180, 60, []],
    [181, 60, ['CW-MI-WINDOW']],
  ])(
    'GIVEN a Metrics Insights alarm over %i periods of %i s WHEN checked THEN it finds %j',
    (evaluationPeriods, period, expected) => {
      expect(
        ruleIds(
          alarmTemplate({
            EvaluationPeriods: evaluationPeriods,
            DatapointsToAlarm: 1,
            Metrics: [insights('q', period, true)],
          }),
        ),
      ).toEqual(expected);
    },
  );

  test('GIVEN more datapoints than periods, or more than a day of 60 s periods WHEN checked THEN CW-EVALUATION-RANGE fires', () => {
    expect(
      ruleIds(
        alarmTemplate({
          Namespace: 'Custom',
          MetricName: 'X',
          Period: 60,
          Statistic: 'Sum',
          EvaluationPeriods: 2,
          DatapointsToAlarm: 3,
        }),
      ),
    ).toEqual(['CW-EVALUATION-RANGE']);
    expect(
      ruleIds(
        alarmTemplate({
          Namespace: 'Custom',
          MetricName: 'X',
          Period: 60,
          Statistic: 'Sum',
          EvaluationPeriods: 1441,
          DatapointsToAlarm: 1,
        }),
      ),
    ).toEqual(['CW-EVALUATION-RANGE']);
    expect(
      ruleIds(
        alarmTemplate({
          Namespace: 'Custom',
          MetricName: 'X',
          Period: 60,
          Statistic: 'Sum',
          EvaluationPeriods: 1440,
          DatapointsToAlarm: 1,
        }),
      ),
    ).toEqual([]);
  });
});

/** An endpoint whose deployment config is `deployment`, with `variants` production variants of `count` instances. */
function endpointTemplate(
  deployment: Record<string, unknown>,
  count = 4,
  variants = 1,
  extra: Record<string, unknown> = {},
): TemplateJson {
  return {
    Resources: {
      E: {
        Type: 'AWS::SageMaker::Endpoint',
        Properties: {
          EndpointName: 'e',
          EndpointConfigName: { 'Fn::GetAtt': ['C', 'EndpointConfigName'] },
          DeploymentConfig: deployment,
        },
      },
      C: {
        Type: 'AWS::SageMaker::EndpointConfig',
        Properties: {
          ProductionVariants: Array.from({ length: variants }, (_, i) => ({
            VariantName: `v${i}`,
            InitialInstanceCount: count,
          })),
        },
      },
      ...extra,
    },
  };
}

describe('when a template breaks a SageMaker deployment rule', () => {
  const blueGreen = (timeout: number, wait = 300, termination = 0) => ({
    BlueGreenUpdatePolicy: {
      MaximumExecutionTimeoutInSeconds: timeout,
      TerminationWaitInSeconds: termination,
      TrafficRoutingConfiguration: { Type: 'ALL_AT_ONCE', WaitIntervalInSeconds: wait },
    },
  });
  test.each([
    [599, ['SM-BLUE-GREEN-TIMES']],
    [600, []],
    [28_800, []],
    [28_801, ['SM-BLUE-GREEN-TIMES']],
  ])('GIVEN a blue/green timeout of %i s WHEN checked THEN it finds %j', (timeout, expected) => {
    expect(ruleIds(endpointTemplate(blueGreen(timeout)))).toEqual(expected);
  });

  test('GIVEN a blue/green timeout not above the waits WHEN checked THEN SM-BLUE-GREEN-TIMES fires', () => {
    expect(ruleIds(endpointTemplate(blueGreen(3600, 1800, 1800)))).toEqual(['SM-BLUE-GREEN-TIMES']);
    expect(ruleIds(endpointTemplate(blueGreen(3601, 1800, 1800)))).toEqual([]);
  });

  test('GIVEN a rolling batch above 50 % or rolling on two variants WHEN checked THEN SM-ROLLING-POLICY fires', () => {
    const rolling = (batch: number) => ({
      RollingUpdatePolicy: {
        MaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: batch },
        WaitIntervalInSeconds: 300,
        MaximumExecutionTimeoutInSeconds: 28_800,
      },
    });
    expect(ruleIds(endpointTemplate(rolling(2)))).toEqual([]);
    expect(ruleIds(endpointTemplate(rolling(3)))).toEqual(['SM-ROLLING-POLICY']);
    expect(ruleIds(endpointTemplate(rolling(1), 4, 2))).toEqual(['SM-ROLLING-POLICY']);
  });

  test('GIVEN a batch of 1 and a scalable target that reaches 30 instances WHEN checked THEN SM-ROLLING-POLICY fires (5 % of 30 is 2)', () => {
    const rolling = {
      RollingUpdatePolicy: { MaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: 1 }, WaitIntervalInSeconds: 300 },
    };
    const target = (max: number) => ({
      T: {
        Type: 'AWS::ApplicationAutoScaling::ScalableTarget',
        Properties: {
          ResourceId: { 'Fn::Join': ['', ['endpoint/', { 'Fn::GetAtt': ['E', 'EndpointName'] }, '/variant/v0']] },
          MinCapacity: 4,
          MaxCapacity: max,
        },
      },
    });
    expect(ruleIds(endpointTemplate(rolling, 4, 1, target(30)))).toEqual(['SM-ROLLING-POLICY']);
    expect(ruleIds(endpointTemplate(rolling, 4, 1, target(20)))).toEqual([]);
  });

  test.each([
    [0, ['SM-ROLLBACK-ALARM-COUNT']],
    [1, []],
    [10, []],
    [11, ['SM-ROLLBACK-ALARM-COUNT']],
  ])('GIVEN %i rollback alarms WHEN checked THEN it finds %j', (count, expected) => {
    const alarms = Array.from({ length: count }, (_, i) => ({ AlarmName: `external-${i}` }));
    expect(ruleIds(endpointTemplate({ AutoRollbackConfiguration: { Alarms: alarms } }))).toEqual(expected);
  });

  test('GIVEN a rollback alarm that references something other than an alarm WHEN checked THEN SM-ROLLBACK-ALARM-EXISTS fires', () => {
    const template = endpointTemplate(
      { AutoRollbackConfiguration: { Alarms: [{ AlarmName: { Ref: 'Topic' } }] } },
      4,
      1,
      { Topic: { Type: 'AWS::SNS::Topic' } },
    );
    expect(ruleIds(template)).toEqual(['SM-ROLLBACK-ALARM-EXISTS']);
  });
});

describe('when a template breaks an IAM rule', () => {
  /** A model served by the endpoint, with an execution role holding `statements`. */
  function withRole(
    statements: Array<Record<string, unknown>>,
    deployment: Record<string, unknown> = {},
    model: Record<string, unknown> = {},
  ): TemplateJson {
    const base = endpointTemplate(deployment);
    const config = base.Resources!.C.Properties!;
    config.ProductionVariants[0].ModelName = { 'Fn::GetAtt': ['M', 'ModelName'] };
    return {
      Resources: {
        ...base.Resources,
        M: {
          Type: 'AWS::SageMaker::Model',
          Properties: {
            ExecutionRoleArn: { 'Fn::GetAtt': ['R', 'Arn'] },
            PrimaryContainer: { Image: 'public.example/vllm:1' },
            ...model,
          },
        },
        R: { Type: 'AWS::IAM::Role', Properties: {} },
        P: {
          Type: 'AWS::IAM::Policy',
          Properties: { Roles: [{ Ref: 'R' }], PolicyDocument: { Statement: statements } },
        },
        Alarm: {
          Type: 'AWS::CloudWatch::Alarm',
          Properties: { Namespace: 'Custom', MetricName: 'X', Period: 60, Statistic: 'Sum', EvaluationPeriods: 1 },
        },
      },
    };
  }
  const logsAndMetrics = [
    {
      Effect: 'Allow',
      Action: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
      Resource: [
        'arn:aws:logs:*:*:log-group:/aws/sagemaker/Endpoints/e',
        'arn:aws:logs:*:*:log-group:/aws/sagemaker/Endpoints/e:log-stream:*',
      ],
    },
    { Effect: 'Allow', Action: 'cloudwatch:PutMetricData', Resource: '*' },
  ];
  const rollback = { AutoRollbackConfiguration: { Alarms: [{ AlarmName: { Ref: 'Alarm' } }] } };

  test('GIVEN rollback alarms and no DescribeAlarms WHEN checked THEN IAM-ROLLBACK-DESCRIBE-ALARMS fires; granted on the alarm ARN it passes', () => {
    expect(ruleIds(withRole(logsAndMetrics, rollback))).toEqual(['IAM-ROLLBACK-DESCRIBE-ALARMS']);
    const describe = {
      Effect: 'Allow',
      Action: 'cloudwatch:DescribeAlarms',
      Resource: { 'Fn::GetAtt': ['Alarm', 'Arn'] },
    };
    expect(ruleIds(withRole([...logsAndMetrics, describe], rollback))).toEqual([]);
  });

  test('GIVEN data capture and write rights on another prefix or no rights on its key WHEN checked THEN IAM-DATA-CAPTURE-WRITE fires', () => {
    const captured = (statements: Array<Record<string, unknown>>, kmsKeyId?: string) => {
      const template = withRole([...logsAndMetrics, ...statements]);
      template.Resources!.C.Properties!.DataCaptureConfig = {
        DestinationS3Uri: 's3://bucket/capture',
        InitialSamplingPercentage: 100,
        CaptureOptions: [{ CaptureMode: 'Input' }],
        ...(kmsKeyId ? { KmsKeyId: kmsKeyId } : {}),
      };
      return template;
    };
    const put = (prefix: string) => ({
      Effect: 'Allow',
      Action: 's3:PutObject',
      Resource: `arn:aws:s3:::bucket/${prefix}/*`,
    });
    const key = 'arn:aws:kms:us-east-1:111122223333:key/k';
    expect(ruleIds(captured([put('other')]))).toEqual(['IAM-DATA-CAPTURE-WRITE']);
    expect(ruleIds(captured([put('capture')]))).toEqual([]);
    expect(ruleIds(captured([put('capture')], key))).toEqual(['IAM-DATA-CAPTURE-WRITE']);
    expect(
      ruleIds(
        captured(
          [put('capture'), { Effect: 'Allow', Action: ['kms:Encrypt', 'kms:GenerateDataKey'], Resource: key }],
          key,
        ),
      ),
    ).toEqual([]);
  });

  test('GIVEN no log permissions WHEN checked THEN IAM-LOGS-AND-METRICS fires', () => {
    expect(ruleIds(withRole([]))).toEqual(['IAM-LOGS-AND-METRICS']);
  });

  test('GIVEN an ECR image and pull rights on another repository WHEN checked THEN IAM-ECR-PULL fires', () => {
    const model = { PrimaryContainer: { Image: '763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:tag' } };
    const pull = (repo: string) => [
      {
        Effect: 'Allow',
        Action: ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'],
        Resource: `arn:aws:ecr:us-east-1:763104351884:repository/${repo}`,
      },
      { Effect: 'Allow', Action: 'ecr:GetAuthorizationToken', Resource: '*' },
    ];
    expect(ruleIds(withRole([...logsAndMetrics, ...pull('djl-inference')], {}, model))).toEqual(['IAM-ECR-PULL']);
    expect(ruleIds(withRole([...logsAndMetrics, ...pull('vllm')], {}, model))).toEqual([]);
  });

  test('GIVEN S3 model data and read rights on another prefix WHEN checked THEN IAM-S3-MODEL-DATA fires', () => {
    const model = {
      PrimaryContainer: {
        Image: 'x',
        ModelDataSource: {
          S3DataSource: { S3Uri: 's3://bucket/models/llama/', S3DataType: 'S3Prefix', CompressionType: 'None' },
        },
      },
    };
    const read = (prefix: string) => [
      {
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:s3:::bucket/${prefix}/*`]] },
      },
      { Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::bucket' },
    ];
    expect(ruleIds(withRole([...logsAndMetrics, ...read('models/other')], {}, model))).toEqual(['IAM-S3-MODEL-DATA']);
    expect(ruleIds(withRole([...logsAndMetrics, ...read('models/llama')], {}, model))).toEqual([]);
  });

  test('GIVEN a SageMaker scalable target with another role WHEN checked THEN IAM-AUTOSCALING-SERVICE-LINKED-ROLE fires; the service-linked role passes', () => {
    const target = (role: string) =>
      ({
        Resources: {
          T: {
            Type: 'AWS::ApplicationAutoScaling::ScalableTarget',
            Properties: {
              ServiceNamespace: 'sagemaker',
              ResourceId: 'endpoint/e/variant/AllTraffic',
              MinCapacity: 2,
              MaxCapacity: 4,
              RoleARN: role,
            },
          },
        },
      }) as TemplateJson;
    expect(ruleIds(target('arn:aws:iam::111122223333:role/my-scaling-role'))).toEqual([
      'IAM-AUTOSCALING-SERVICE-LINKED-ROLE',
    ]);
    expect(
      ruleIds(
        target(
          'arn:aws:iam::111122223333:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint',
        ),
      ),
    ).toEqual([]);
  });

  test('GIVEN a VPC model without EC2 interface rights WHEN checked THEN IAM-VPC-INTERFACES fires', () => {
    expect(ruleIds(withRole(logsAndMetrics, {}, { VpcConfig: { Subnets: ['s'], SecurityGroupIds: ['g'] } }))).toEqual([
      'IAM-VPC-INTERFACES',
    ]);
  });
});
