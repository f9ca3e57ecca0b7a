import { Duration, Stack, aws_cloudwatch as cloudwatch } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import {
  DeploymentPolicy,
  PrefixAwareLlmEndpoint,
  PrefixAwareLlmWarnings,
  RoutingStrategy,
  TrafficShift,
} from '../../lib/index';
import {
  actionsOf,
  baseProps,
  build,
  newStack,
  onlyResource,
  policyStatements,
  problemsFor,
  synth,
  warningsOf,
} from './helpers';

/** The construct's rollback alarms: the 5XX error rate and ModelLatency p90. */
const DEFAULT_ROLLBACK_ALARMS = [
  { AlarmName: { Ref: expect.stringMatching(/^LlmErrorRateAlarm/) } },
  { AlarmName: { Ref: expect.stringMatching(/^LlmModelLatencyAlarm/) } },
];

function deploymentOf(template: Template): Record<string, any> {
  return onlyResource(template, 'AWS::SageMaker::Endpoint').DeploymentConfig;
}

describe('when no deployment policy is given for a fleet', () => {
  test('GIVEN 7 instances WHEN synthesized THEN rolling one instance at a time, rolling back one at a time, on the error-rate and latency alarms', () => {
    const { template } = synth({ instanceCount: 7 });
    expect(deploymentOf(template)).toEqual({
      RollingUpdatePolicy: {
        MaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: 1 },
        RollbackMaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: 1 },
        WaitIntervalInSeconds: 300,
        MaximumExecutionTimeoutInSeconds: 28800,
      },
      AutoRollbackConfiguration: { Alarms: DEFAULT_ROLLBACK_ALARMS },
    });
  });

  test('GIVEN 40 instances WHEN synthesized THEN the default batch is 2, the smallest that is 5 % of the fleet', () => {
    const { template } = synth({ instanceCount: 40 });
    expect(deploymentOf(template).RollingUpdatePolicy.MaximumBatchSize).toEqual({ Type: 'INSTANCE_COUNT', Value: 2 });
  });

  test('GIVEN 2 instances that may scale in to 1 WHEN synthesized THEN the default is blue/green (a batch of 1 is more than half of one instance)', () => {
    const { template } = synth({ routing: RoutingStrategy.random(), autoScaling: { minCapacity: 1, maxCapacity: 4 } });
    expect(deploymentOf(template).RollingUpdatePolicy).toBeUndefined();
    expect(deploymentOf(template).BlueGreenUpdatePolicy).toBeDefined();
  });
});

describe('when a rolling batch is at or around its limits (5–50 % of 10 instances: 1–5)', () => {
  const rolling = (batchInstances: number) => ({
    instanceCount: 10,
    deployment: DeploymentPolicy.rolling({ batchInstances }),
  });

  test('GIVEN 0 (min−1) WHEN built THEN it is refused', () => {
    expect(problemsFor(rolling(0))).toEqual([
      'deployment.batchInstances must be between 1 and 5 (5–50 % of 10 instances) (got 0)',
    ]);
  });

  test('GIVEN 1 (min) WHEN synthesized THEN it renders', () => {
    expect(deploymentOf(synth(rolling(1)).template).RollingUpdatePolicy.MaximumBatchSize.Value).toBe(1);
  });

  test('GIVEN 5 (max) WHEN synthesized THEN it renders and rollback uses the same batch', () => {
    const policy = deploymentOf(synth(rolling(5)).template).RollingUpdatePolicy;
    expect(policy.MaximumBatchSize.Value).toBe(5);
    expect(policy.RollbackMaximumBatchSize.Value).toBe(5);
  });

  test('GIVEN 6 (max+1) WHEN built THEN it is refused', () => {
    expect(problemsFor(rolling(6))).toEqual([
      'deployment.batchInstances must be between 1 and 5 (5–50 % of 10 instances) (got 6)',
    ]);
  });

  test('GIVEN a rollback batch of 6 WHEN built THEN it is refused', () => {
    expect(
      problemsFor({ instanceCount: 10, deployment: DeploymentPolicy.rolling({ rollbackBatchInstances: 6 }) }),
    ).toEqual(['deployment.rollbackBatchInstances must be between 1 and 5 (5–50 % of 10 instances) (got 6)']);
  });

  test('GIVEN rolling on one instance WHEN built THEN it is refused with the alternative', () => {
    expect(
      problemsFor({ instanceCount: 1, routing: RoutingStrategy.random(), deployment: DeploymentPolicy.rolling() }),
    ).toEqual([
      'deployment: a rolling deployment needs at least 2 instances, because one batch may replace at most 50 % of them; use DeploymentPolicy.blueGreen() (got instanceCount 1)',
    ]);
  });
});

describe('when a rolling batch meets an autoscaled fleet (SageMaker checks 5–50 % of the current instance count)', () => {
  const rolling = (batchInstances?: number) => DeploymentPolicy.rolling({ batchInstances });
  const batchOf = (template: Template) => deploymentOf(template).RollingUpdatePolicy.MaximumBatchSize;

  test('GIVEN autoscaling 4–30 WHEN synthesized with the default batch THEN the batch is 2 (5 % of 30), which is also at most 50 % of 4', () => {
    const { template } = synth({ instanceCount: 4, autoScaling: { minCapacity: 4, maxCapacity: 30 } });
    expect(batchOf(template)).toEqual({ Type: 'INSTANCE_COUNT', Value: 2 });
  });

  test('GIVEN autoscaling 2–20 WHEN synthesized with the default batch THEN the batch is 1', () => {
    const { template } = synth({ autoScaling: { minCapacity: 2, maxCapacity: 20 } });
    expect(batchOf(template)).toEqual({ Type: 'INSTANCE_COUNT', Value: 1 });
  });

  test('GIVEN autoscaling 2–21 WHEN built THEN no batch fits every fleet size and the way out is named', () => {
    expect(problemsFor({ autoScaling: { minCapacity: 2, maxCapacity: 21 } })).toEqual([
      'deployment: no rolling batch is 5–50 % of every fleet size autoscaling allows (2–21 instances: 5 % of 21 needs 2, 50 % of 2 allows 1); ' +
        'raise autoScaling.minCapacity to at least 4, lower autoScaling.maxCapacity to at most 20, or use DeploymentPolicy.blueGreen() ' +
        '(got minCapacity 2, maxCapacity 21)',
    ]);
  });

  test.each([
    [1, 1],
    [2, 0],
    [3, 1],
  ])('GIVEN autoscaling 4–30 and batchInstances %i WHEN built THEN %i problem', (batch, count) => {
    const problems = problemsFor({
      instanceCount: 4,
      autoScaling: { minCapacity: 4, maxCapacity: 30 },
      deployment: rolling(batch),
    });
    expect(problems).toEqual(
      count === 0
        ? []
        : [
            `deployment.batchInstances must be between 2 and 2 (5–50 % of every fleet size from 4 to 30 instances) (got ${batch})`,
          ],
    );
  });

  test('GIVEN autoscaling down to one instance WHEN built with a rolling policy THEN rolling is refused, naming minCapacity', () => {
    const problems = problemsFor({
      instanceCount: 2,
      allowPrefixAwareOnSingleInstance: true,
      autoScaling: { minCapacity: 1, maxCapacity: 3 },
      deployment: rolling(),
    });
    expect(problems).toEqual([
      expect.stringContaining('a rolling deployment needs at least 2 instances') as unknown as string,
    ]);
    expect(problems[0]).toContain('(got autoScaling.minCapacity 1)');
  });
});

describe('when rolling durations are at or around their limits', () => {
  test('GIVEN waitInterval 0 s (min) and 3600 s (max) WHEN synthesized THEN they render', () => {
    expect(
      deploymentOf(synth({ deployment: DeploymentPolicy.rolling({ waitInterval: Duration.seconds(0) }) }).template)
        .RollingUpdatePolicy.WaitIntervalInSeconds,
    ).toBe(0);
    expect(
      deploymentOf(synth({ deployment: DeploymentPolicy.rolling({ waitInterval: Duration.hours(1) }) }).template)
        .RollingUpdatePolicy.WaitIntervalInSeconds,
    ).toBe(3600);
  });

  test('GIVEN waitInterval 3601 s (max+1) WHEN built THEN it is refused', () => {
    expect(problemsFor({ deployment: DeploymentPolicy.rolling({ waitInterval: Duration.seconds(3601) }) })).toEqual([
      'deployment.waitInterval must be between 0 and 3600 seconds (got 3601)',
    ]);
  });

  test('GIVEN maximumExecutionTimeout 599 s (min−1) WHEN built THEN it is refused', () => {
    expect(
      problemsFor({ deployment: DeploymentPolicy.rolling({ maximumExecutionTimeout: Duration.seconds(599) }) }),
    ).toEqual(['deployment.maximumExecutionTimeout must be between 600 and 28800 seconds (got 599)']);
  });

  test('GIVEN maximumExecutionTimeout 600 s (min) WHEN synthesized THEN it renders', () => {
    expect(
      deploymentOf(
        synth({ deployment: DeploymentPolicy.rolling({ maximumExecutionTimeout: Duration.minutes(10) }) }).template,
      ).RollingUpdatePolicy.MaximumExecutionTimeoutInSeconds,
    ).toBe(600);
  });

  test('GIVEN maximumExecutionTimeout 28801 s (max+1) WHEN built THEN it is refused', () => {
    expect(
      problemsFor({ deployment: DeploymentPolicy.rolling({ maximumExecutionTimeout: Duration.seconds(28801) }) }),
    ).toEqual(['deployment.maximumExecutionTimeout must be between 600 and 28800 seconds (got 28801)']);
  });
});

describe('when blue/green is chosen', () => {
  test('GIVEN defaults WHEN synthesized THEN all at once, 5-minute bake, 4-hour limit, rollback on the error-rate and latency alarms', () => {
    const { template } = synth({ deployment: DeploymentPolicy.blueGreen() });
    expect(deploymentOf(template)).toEqual({
      BlueGreenUpdatePolicy: {
        TrafficRoutingConfiguration: { Type: 'ALL_AT_ONCE', WaitIntervalInSeconds: 300 },
        TerminationWaitInSeconds: 0,
        MaximumExecutionTimeoutInSeconds: 14400,
      },
      AutoRollbackConfiguration: { Alarms: DEFAULT_ROLLBACK_ALARMS },
    });
  });

  test('GIVEN canary 10 % WHEN synthesized THEN the canary size renders in percent', () => {
    const { template } = synth({
      deployment: DeploymentPolicy.blueGreen({
        trafficShift: TrafficShift.canary(10),
        terminationWait: Duration.minutes(10),
      }),
    });
    expect(deploymentOf(template).BlueGreenUpdatePolicy).toMatchObject({
      TrafficRoutingConfiguration: { Type: 'CANARY', CanarySize: { Type: 'CAPACITY_PERCENT', Value: 10 } },
      TerminationWaitInSeconds: 600,
    });
  });

  test('GIVEN linear 25 % WHEN synthesized THEN the step size renders in percent', () => {
    const { template } = synth({ deployment: DeploymentPolicy.blueGreen({ trafficShift: TrafficShift.linear(25) }) });
    expect(deploymentOf(template).BlueGreenUpdatePolicy.TrafficRoutingConfiguration).toMatchObject({
      Type: 'LINEAR',
      LinearStepSize: { Type: 'CAPACITY_PERCENT', Value: 25 },
    });
  });

  test('GIVEN canary 0 % and 51 % (min−1, max+1) WHEN built THEN both are refused', () => {
    expect(problemsFor({ deployment: DeploymentPolicy.blueGreen({ trafficShift: TrafficShift.canary(0) }) })).toEqual([
      'deployment.trafficShift canary percent must be between 1 and 50 (got 0)',
    ]);
    expect(problemsFor({ deployment: DeploymentPolicy.blueGreen({ trafficShift: TrafficShift.canary(51) }) })).toEqual([
      'deployment.trafficShift canary percent must be between 1 and 50 (got 51)',
    ]);
  });

  test('GIVEN linear 9 % and 51 % (min−1, max+1) WHEN built THEN both are refused', () => {
    expect(problemsFor({ deployment: DeploymentPolicy.blueGreen({ trafficShift: TrafficShift.linear(9) }) })).toEqual([
      'deployment.trafficShift linear percent must be between 10 and 50 (got 9)',
    ]);
    expect(problemsFor({ deployment: DeploymentPolicy.blueGreen({ trafficShift: TrafficShift.linear(51) }) })).toEqual([
      'deployment.trafficShift linear percent must be between 10 and 50 (got 51)',
    ]);
  });

  // SageMaker API reference, BlueGreenUpdatePolicy: MaximumExecutionTimeoutInSeconds 600–28800.
  test.each([
    [599, ['deployment.maximumExecutionTimeout must be between 600 and 28800 seconds (got 599)']],
    [600, []],
    [28_800, []],
    [28_801, ['deployment.maximumExecutionTimeout must be between 600 and 28800 seconds (got 28801)']],
  ])(
    'GIVEN maximumExecutionTimeout %i s (boundaries 600–28800) WHEN built THEN the problems are %j',
    (seconds, expected) => {
      expect(
        problemsFor({ deployment: DeploymentPolicy.blueGreen({ maximumExecutionTimeout: Duration.seconds(seconds) }) }),
      ).toEqual(expected);
    },
  );

  test('GIVEN maximumExecutionTimeout 28800 s WHEN synthesized THEN the template carries it', () => {
    const { template } = synth({
      deployment: DeploymentPolicy.blueGreen({ maximumExecutionTimeout: Duration.hours(8) }),
    });
    expect(deploymentOf(template).BlueGreenUpdatePolicy.MaximumExecutionTimeoutInSeconds).toBe(28_800);
  });

  // "The timeout value should be larger than the total waiting time specified in TerminationWaitInSeconds and WaitIntervalInSeconds."
  test.each([
    [1800, 1800, 3600, 1],
    [1800, 1800, 3601, 0],
    [0, 300, 600, 0],
  ])(
    'GIVEN terminationWait %i s, waitInterval %i s and a %i s limit WHEN built THEN %i problem is reported',
    (termination, wait, timeout, count) => {
      const problems = problemsFor({
        deployment: DeploymentPolicy.blueGreen({
          terminationWait: Duration.seconds(termination),
          waitInterval: Duration.seconds(wait),
          maximumExecutionTimeout: Duration.seconds(timeout),
        }),
      });
      expect(problems).toEqual(
        count === 0
          ? []
          : [
              `deployment.maximumExecutionTimeout must be longer than deployment.terminationWait + deployment.waitInterval (${termination + wait} seconds) (got ${timeout})`,
            ],
      );
    },
  );

  test('GIVEN terminationWait 3601 s (max+1) WHEN built THEN it is refused', () => {
    expect(
      problemsFor({ deployment: DeploymentPolicy.blueGreen({ terminationWait: Duration.seconds(3601) }) }),
    ).toEqual(['deployment.terminationWait must be between 0 and 3600 seconds (got 3601)']);
  });
});

describe('when deployments roll back on alarms', () => {
  /** Statements granting cloudwatch:DescribeAlarms to the execution role. */
  const describeAlarms = (template: Template) =>
    policyStatements(template).filter((s) => actionsOf(s).includes('cloudwatch:DescribeAlarms'));

  test('GIVEN the default rollback alarms WHEN synthesized THEN the execution role may describe exactly those two alarms (SageMaker reads them with it)', () => {
    const { template } = synth();
    expect(describeAlarms(template)).toEqual([
      {
        Effect: 'Allow',
        Action: 'cloudwatch:DescribeAlarms',
        Resource: [
          { 'Fn::GetAtt': [expect.stringMatching(/^LlmErrorRateAlarm/), 'Arn'] },
          { 'Fn::GetAtt': [expect.stringMatching(/^LlmModelLatencyAlarm/), 'Arn'] },
        ],
      },
    ]);
  });

  test('GIVEN an extra imported alarm WHEN synthesized THEN its ARN is added to the statement', () => {
    const stack = newStack();
    const slo = cloudwatch.Alarm.fromAlarmArn(stack, 'Slo', 'arn:aws:cloudwatch:us-east-1:111122223333:alarm:team-slo');
    new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ deployment: DeploymentPolicy.rolling({ alarms: [slo] }) }));
    expect(describeAlarms(Template.fromStack(stack))[0].Resource).toContain(
      'arn:aws:cloudwatch:us-east-1:111122223333:alarm:team-slo',
    );
  });

  test('GIVEN a composite rollback alarm WHEN synthesized THEN DescribeAlarms is granted on * (composite alarms are returned only then)', () => {
    const stack = newStack();
    const child = new cloudwatch.Alarm(stack, 'Child', {
      metric: new cloudwatch.Metric({ namespace: 'AWS/SageMaker', metricName: 'ModelLatency' }),
      threshold: 1,
      evaluationPeriods: 1,
    });
    const composite = new cloudwatch.CompositeAlarm(stack, 'Composite', {
      alarmRule: cloudwatch.AlarmRule.fromAlarm(child, cloudwatch.AlarmState.ALARM),
    });
    new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({ deployment: DeploymentPolicy.rolling({ alarms: [composite] }) }),
    );
    expect(describeAlarms(Template.fromStack(stack))).toEqual([
      { Effect: 'Allow', Action: 'cloudwatch:DescribeAlarms', Resource: '*' },
    ]);
  });

  test('GIVEN no rollback alarms WHEN synthesized THEN no DescribeAlarms is granted', () => {
    const { template } = synth({ deployment: DeploymentPolicy.rolling({ useDefaultAlarms: false }) });
    expect(describeAlarms(template)).toEqual([]);
  });
});

describe('when a rollback alarm needs longer than a bake to fire', () => {
  const slow = (stack: Stack) =>
    warningsOf(stack).filter((w) => w.includes(PrefixAwareLlmWarnings.ROLLBACK_ALARM_SLOWER_THAN_BAKE));

  test('GIVEN 120 s periods and the 5-minute bake WHEN synthesized THEN both rollback alarms warn (3 × 120 s = 360 s > 300 s)', () => {
    const { stack } = build({ endpointName: 'x', metricsConfig: { publishFrequency: Duration.seconds(120) } });
    expect(slow(stack).map((w) => w.split(' ')[0])).toEqual(['ErrorRateAlarm', 'ModelLatencyAlarm']);
    expect(slow(stack)[0]).toContain('Raise deployment waitInterval to at least 360 s');
  });

  test.each([
    ['60 s periods (3 × 60 = 180 s)', { metricsConfig: { publishFrequency: Duration.seconds(60) } }, 0],
    [
      '5 of 5 datapoints at 60 s (300 s = the bake)',
      { monitoring: { latencyAlarm: { evaluationPeriods: 5, datapointsToAlarm: 5 } } },
      0,
    ],
    [
      '6 of 6 datapoints at 60 s (360 s)',
      { monitoring: { latencyAlarm: { evaluationPeriods: 6, datapointsToAlarm: 6 } } },
      1,
    ],
    [
      '120 s periods and a 6-minute bake',
      {
        metricsConfig: { publishFrequency: Duration.seconds(120) },
        deployment: DeploymentPolicy.rolling({ waitInterval: Duration.minutes(6) }),
      },
      0,
    ],
    [
      '120 s periods without default rollback alarms',
      {
        metricsConfig: { publishFrequency: Duration.seconds(120) },
        deployment: DeploymentPolicy.rolling({ useDefaultAlarms: false }),
      },
      0,
    ],
  ] as const)('GIVEN %s WHEN synthesized THEN %i warnings', (_name, props, count) => {
    const { stack } = build({ endpointName: 'x', ...props });
    expect(slow(stack)).toHaveLength(count);
  });
});

describe('when deployment alarms are customised', () => {
  test('GIVEN an extra alarm WHEN synthesized THEN it is added after the default alarms', () => {
    const stack = newStack();
    const latency = new cloudwatch.Alarm(stack, 'Latency', {
      metric: new cloudwatch.Metric({ namespace: 'AWS/SageMaker', metricName: 'ModelLatency' }),
      threshold: 1e7,
      evaluationPeriods: 1,
    });
    new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({ deployment: DeploymentPolicy.rolling({ alarms: [latency] }) }),
    );
    const alarms = deploymentOf(Template.fromStack(stack)).AutoRollbackConfiguration.Alarms;
    expect(alarms).toEqual([...DEFAULT_ROLLBACK_ALARMS, { AlarmName: { Ref: expect.stringMatching(/^Latency/) } }]);
  });

  test('GIVEN no alarms at all WHEN synthesized THEN no rollback config renders (the alarms still page) and a warning says so', () => {
    const { stack, template } = synth({ deployment: DeploymentPolicy.rolling({ useDefaultAlarms: false }) });
    expect(deploymentOf(template).AutoRollbackConfiguration).toBeUndefined();
    expect(
      Object.keys(template.findResources('AWS::CloudWatch::Alarm')).some((id) => id.startsWith('LlmErrorRateAlarm')),
    ).toBe(true);
    expect(warningsOf(stack)).toEqual([
      'The deployment policy has no alarms: a broken update is not rolled back automatically. [ack: @cdk-prefix-aware-llm/deploymentWithoutAlarms]',
    ]);
  });

  test('GIVEN the latency alarm disabled WHEN synthesized THEN only the error-rate alarm rolls back', () => {
    const { template } = synth({ monitoring: { latencyAlarm: { enabled: false } } });
    expect(deploymentOf(template).AutoRollbackConfiguration.Alarms).toEqual([DEFAULT_ROLLBACK_ALARMS[0]]);
  });

  test('GIVEN 10 alarms in total (max: 2 default + 8) WHEN built THEN they are accepted, and 11 (max+1) are refused', () => {
    const stack = newStack();
    const alarms = Array.from({ length: 9 }, (_, i) =>
      cloudwatch.Alarm.fromAlarmArn(stack, `A${i}`, `arn:aws:cloudwatch:us-east-1:111122223333:alarm:a${i}`),
    );
    expect(problemsFor({ deployment: DeploymentPolicy.rolling({ alarms: alarms.slice(0, 8) }) })).toEqual([]);
    expect(problemsFor({ deployment: DeploymentPolicy.rolling({ alarms }) })).toEqual([
      'deployment alarms must be at most 10 in total (got 11)',
    ]);
  });
});
