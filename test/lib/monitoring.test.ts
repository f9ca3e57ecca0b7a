import { aws_cloudwatch as cloudwatch, aws_sns as sns, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { DeploymentPolicy, EndpointMetrics, PrefixAwareLlmEndpoint, RoutingStrategy, VllmImage } from '../../lib/index';
import { ALARM_DEFAULTS } from '../../lib/monitoring';
import { baseProps, build, newStack, onlyResource, problemsFor, synth } from './helpers';

const VARIANT = { EndpointName: 'chat-llm', VariantName: 'AllTraffic' };

/** namespace, name, dimensions, statistic and period of a plain metric, resolved. */
function describeMetric(stack: Stack, metric: cloudwatch.Metric) {
  return {
    namespace: metric.namespace,
    name: metric.metricName,
    dimensions: stack.resolve(metric.dimensions),
    statistic: metric.statistic,
    period: metric.period.toSeconds(),
  };
}

describe('when every metric helper is read (publish frequency 30 s)', () => {
  // One endpoint, never synthesized: metrics are plain objects.
  const { stack, endpoint } = build({
    endpointName: 'chat-llm',
    metricsConfig: { publishFrequency: Duration.seconds(30) },
  });

  test.each([
    ['metricInvocations', 'AWS/SageMaker', 'Invocations', VARIANT, 'Sum', 30],
    ['metricInvocationsPerInstance', 'AWS/SageMaker', 'InvocationsPerInstance', VARIANT, 'Sum', 30],
    ['metricModelLatency', 'AWS/SageMaker', 'ModelLatency', VARIANT, 'p90', 30],
    ['metricOverheadLatency', 'AWS/SageMaker', 'OverheadLatency', VARIANT, 'p90', 30],
    ['metricConcurrentRequestsPerModel', 'AWS/SageMaker', 'ConcurrentRequestsPerModel', VARIANT, 'Maximum', 10],
    ['metricInvocation4xxErrors', 'AWS/SageMaker', 'Invocation4XXErrors', VARIANT, 'Sum', 30],
    ['metricInvocation5xxErrors', 'AWS/SageMaker', 'Invocation5XXErrors', VARIANT, 'Sum', 30],
    ['metricGpuUtilization', '/aws/sagemaker/Endpoints', 'GPUUtilization', VARIANT, 'Average', 30],
    ['metricGpuMemoryUtilization', '/aws/sagemaker/Endpoints', 'GPUMemoryUtilization', VARIANT, 'Average', 30],
    // The sidecar's EMF metrics are standard resolution (no StorageResolution): never shorter than 60 s.
    ['metricRouterTimeToFirstToken', 'PrefixRouter', 'TimeToFirstToken', { EndpointName: 'chat-llm' }, 'p90', 60],
  ] as const)(
    'GIVEN %s WHEN read THEN it is %s %s %j, %s over %d s',
    (method, namespace, name, dimensions, statistic, period) => {
      expect(describeMetric(stack, endpoint[method]())).toEqual({ namespace, name, dimensions, statistic, period });
    },
  );

  test('GIVEN the 5XX and 4XX rates WHEN read THEN they divide each error count by Invocations, in percent, over 30 s', () => {
    for (const [method, errors, id] of [
      ['metricInvocation5xxRate', 'Invocation5XXErrors', 'errors_5xx'],
      ['metricInvocation4xxRate', 'Invocation4XXErrors', 'errors_4xx'],
    ] as const) {
      const rate = endpoint[method]();
      expect(rate.expression).toBe(`100 * FILL(${id}, 0) / requests`);
      expect(rate.period.toSeconds()).toBe(30);
      expect(describeMetric(stack, rate.usingMetrics[id] as cloudwatch.Metric)).toEqual({
        namespace: 'AWS/SageMaker',
        name: errors,
        dimensions: VARIANT,
        statistic: 'Sum',
        period: 30,
      });
      expect(describeMetric(stack, rate.usingMetrics.requests as cloudwatch.Metric)).toEqual({
        namespace: 'AWS/SageMaker',
        name: 'Invocations',
        dimensions: VARIANT,
        statistic: 'Sum',
        period: 30,
      });
    }
  });

  test.each([
    ['metricInvocationsPerInstanceSeries', 'AWS/SageMaker', 'Invocations', 'Sum'],
    ['metricConcurrentRequestsPerInstanceSeries', 'AWS/SageMaker', 'ConcurrentRequestsPerModel', 'Maximum'],
  ] as const)(
    'GIVEN %s WHEN read THEN one series per InstanceId of %s %s (%s, 30 s)',
    (method, namespace, name, statistic) => {
      const series = endpoint[method]();
      expect(series.expression).toBe(
        `SEARCH('{${namespace},EndpointName,InstanceId,VariantName} EndpointName="chat-llm" ` +
          `VariantName="AllTraffic" MetricName="${name}"', '${statistic}', 30)`,
      );
      expect(series.period.toSeconds()).toBe(30);
    },
  );

  test('GIVEN the load spreads WHEN read THEN each is MAX ÷ AVG over the per-instance series', () => {
    const requests = endpoint.metricInvocationsLoadSpread();
    expect(requests.expression).toBe('MAX(requests_by_instance) / AVG(requests_by_instance)');
    expect((requests.usingMetrics.requests_by_instance as cloudwatch.MathExpression).expression).toContain(
      "MetricName=\"Invocations\"', 'Sum', 30)",
    );
    const inflight = endpoint.metricConcurrencyLoadSpread();
    expect(inflight.expression).toBe('MAX(inflight_by_instance) / AVG(inflight_by_instance)');
    expect((inflight.usingMetrics.inflight_by_instance as cloudwatch.MathExpression).expression).toContain(
      "MetricName=\"ConcurrentRequestsPerModel\"', 'Maximum', 30)",
    );
  });

  test("GIVEN the busiest instance's in-flight requests WHEN read THEN it is a Metrics Insights MAX over the InstanceId schema, over 60 s (Metrics Insights aggregates at one minute)", () => {
    const busiest = endpoint.metricMaxConcurrentRequestsPerInstance();
    expect(busiest.expression).toBe(
      'SELECT MAX(ConcurrentRequestsPerModel) FROM SCHEMA("AWS/SageMaker", EndpointName, InstanceId, VariantName) ' +
        "WHERE EndpointName = 'chat-llm' AND VariantName = 'AllTraffic'",
    );
    expect(busiest.period.toSeconds()).toBe(60);
  });

  test('GIVEN the router metrics WHEN read THEN they follow the EMF contract (PrefixRouter, EndpointName + Reason / Engine)', () => {
    expect(endpoint.metricRoutingDecisions().expression).toBe(
      'SEARCH(\'{PrefixRouter,EndpointName,Reason} EndpointName="chat-llm" MetricName="RoutingDecisions"\', \'Sum\', 60)',
    );
    const reported = endpoint.metricRouterReportedCacheHitRate();
    expect(reported.expression).toBe('100 * SUM(reported_cached) / SUM(reported_prompt)');
    expect((reported.usingMetrics.reported_cached as cloudwatch.MathExpression).expression).toBe(
      'SEARCH(\'{PrefixRouter,EndpointName,Engine} EndpointName="chat-llm" MetricName="ReportedCachedTokens"\', \'Sum\', 60)',
    );
    expect((reported.usingMetrics.reported_prompt as cloudwatch.MathExpression).expression).toBe(
      'SEARCH(\'{PrefixRouter,EndpointName,Engine} EndpointName="chat-llm" MetricName="PromptTokens"\', \'Sum\', 60)',
    );
    const predicted = endpoint.metricRouterPredictedCacheHitRate();
    expect((predicted.usingMetrics.predicted_cached as cloudwatch.MathExpression).expression).toContain(
      'MetricName="PredictedCachedTokens"',
    );
  });

  test("GIVEN one decision reason and the vLLM cache query WHEN read THEN they name the contract's metric and vLLM's counters", () => {
    const metrics = new EndpointMetrics({
      endpointName: 'chat-llm',
      variantName: 'AllTraffic',
      period: Duration.seconds(30),
    });
    expect(describeMetric(stack, metrics.routingDecisionsFor('threshold-spill'))).toEqual({
      namespace: 'PrefixRouter',
      name: 'RoutingDecisions',
      dimensions: { EndpointName: 'chat-llm', Reason: 'threshold-spill' },
      statistic: 'Sum',
      period: 60,
    });
    expect(metrics.vllmPrefixCacheHitRateQuery()).toBe(
      '100 * sum(rate({__name__="vllm:prefix_cache_hits_total", "aws.sagemaker.endpoint.name"="chat-llm"}[5m])) / ' +
        'sum(rate({__name__="vllm:prefix_cache_queries_total", "aws.sagemaker.endpoint.name"="chat-llm"}[5m]))',
    );
  });

  test('GIVEN metric() with a namespace WHEN read THEN namespace and statistic can be overridden (a named, jsii-friendly options type)', () => {
    const metric = endpoint.metric('CPUUtilization', { namespace: '/aws/sagemaker/Endpoints', statistic: 'Maximum' });
    expect([metric.namespace, metric.metricName, metric.statistic, metric.period.toSeconds()]).toEqual([
      '/aws/sagemaker/Endpoints',
      'CPUUtilization',
      'Maximum',
      30,
    ]);
  });

  test('GIVEN no publish frequency WHEN read THEN metrics use 60 s', () => {
    const other = build({ endpointName: 'x' }).endpoint;
    expect(other.metricInvocations().period.toSeconds()).toBe(60);
  });

  test('GIVEN enhanced metrics off at 10 s WHEN read THEN invocation metrics use 60 s (SageMaker publishes them every minute), utilization 10 s', () => {
    const other = build({
      endpointName: 'x',
      metricsConfig: { enhancedMetrics: false, publishFrequency: Duration.seconds(10) },
    }).endpoint;
    expect([
      other.metricInvocations().period.toSeconds(),
      other.metricModelLatency().period.toSeconds(),
      other.metricInvocation5xxRate().period.toSeconds(),
    ]).toEqual([60, 60, 60]);
    expect(other.metricGpuMemoryUtilization().period.toSeconds()).toBe(10);
  });
});

describe('when the default alarms are synthesized (7 instances, PREFIX_AWARE threshold 32, p5)', () => {
  const { template, endpoint } = synth({ endpointName: 'chat-llm', instanceCount: 7 });
  const alarm = (prefix: string) =>
    Object.entries(template.findResources('AWS::CloudWatch::Alarm')).find(([id]) => id.startsWith(prefix))![1]
      .Properties as Record<string, any>;

  test('GIVEN defaults WHEN synthesized THEN four alarms exist and none of them notifies', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 4);
    for (const props of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(props.Properties.AlarmActions).toBeUndefined();
      expect(props.Properties.TreatMissingData).toBe('notBreaching');
    }
    expect(Object.keys(endpoint.alarms).sort()).toEqual(['concurrency', 'errorRate', 'gpuMemory', 'latency']);
  });

  test('GIVEN the error-rate alarm WHEN read THEN it is 5XX ÷ Invocations ≥ 5 % with at least 20 requests, in 3 of 5 minutes', () => {
    const props = alarm('LlmErrorRateAlarm');
    expect(props).toMatchObject({
      Threshold: 5,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(props.Metrics[0]).toMatchObject({
      Expression: 'IF(requests >= 20, 100 * FILL(errors, 0) / requests, 0)',
      ReturnData: true,
    });
    expect(
      props.Metrics.slice(1)
        .map((m: any) => [m.Id, m.MetricStat.Metric.MetricName, m.MetricStat.Stat, m.MetricStat.Period])
        .sort(),
    ).toEqual([
      ['errors', 'Invocation5XXErrors', 'Sum', 60],
      ['requests', 'Invocations', 'Sum', 60],
    ]);
  });

  test('GIVEN the latency alarm WHEN read THEN ModelLatency p90 ≥ 30 s (in µs) in 3 of 5 minutes', () => {
    expect(alarm('LlmModelLatencyAlarm')).toMatchObject({
      MetricName: 'ModelLatency',
      Namespace: 'AWS/SageMaker',
      ExtendedStatistic: 'p90',
      Period: 60,
      Threshold: 30_000_000,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
    });
  });

  test('GIVEN the concurrency alarm WHEN read THEN the busiest instance ≥ 90 % of 32 (28.8) for 5 of 5 minutes', () => {
    const props = alarm('LlmConcurrencySaturationAlarm');
    expect(props).toMatchObject({ Threshold: 28.8, EvaluationPeriods: 5, DatapointsToAlarm: 5 });
    expect(props.Metrics[0].Expression).toContain('SELECT MAX(ConcurrentRequestsPerModel)');
    expect(props.Metrics[0].Period).toBe(60);
  });

  test("GIVEN the GPU memory alarm WHEN read THEN the hottest instance's memory ÷ 8 GPUs ≥ 95 % (vLLM's 90 % + 5)", () => {
    const props = alarm('LlmGpuMemoryAlarm');
    expect(props).toMatchObject({ Threshold: 95, EvaluationPeriods: 5, DatapointsToAlarm: 5 });
    expect(props.Metrics[0].Expression).toBe('gpuMemory / 8');
    expect(props.Metrics[1].MetricStat).toMatchObject({
      Metric: { MetricName: 'GPUMemoryUtilization', Namespace: '/aws/sagemaker/Endpoints' },
      Stat: 'Maximum',
    });
  });

  test('GIVEN the defaults table WHEN read THEN the alarms above use exactly ALARM_DEFAULTS', () => {
    expect(ALARM_DEFAULTS.errorRate.thresholdPercent).toBe(alarm('LlmErrorRateAlarm').Threshold);
    expect(ALARM_DEFAULTS.latency.thresholdMs * 1000).toBe(alarm('LlmModelLatencyAlarm').Threshold);
  });
});

describe('when alarms are overridden, disabled or routed to a topic', () => {
  test('GIVEN overrides, a topic and a 10 s publish frequency WHEN synthesized THEN thresholds change, alarms notify, periods are 10 s', () => {
    const stack = newStack();
    const topic = new sns.Topic(stack, 'Pager');
    new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({
        endpointName: 'chat-llm',
        engine: { gpuMemoryUtilization: 0.95 },
        metricsConfig: { publishFrequency: Duration.seconds(10) },
        monitoring: {
          alarmTopic: topic,
          errorRateAlarm: { threshold: 1, minInvocations: 100, evaluationPeriods: 3 },
          latencyAlarm: { threshold: 10_000 },
          concurrencyAlarm: { enabled: false },
          // Accepted for compatibility: there is no load-spread alarm to disable.
          loadSpreadAlarm: { enabled: false },
        },
      }),
    );
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::CloudWatch::Alarm', 3);
    const alarms = Object.entries(template.findResources('AWS::CloudWatch::Alarm'));
    const byPrefix = (p: string) => alarms.find(([id]) => id.startsWith(p))![1].Properties as Record<string, any>;
    expect(byPrefix('LlmErrorRateAlarm')).toMatchObject({ Threshold: 1, EvaluationPeriods: 3, DatapointsToAlarm: 3 });
    expect(byPrefix('LlmErrorRateAlarm').Metrics[0].Expression).toBe(
      'IF(requests >= 100, 100 * FILL(errors, 0) / requests, 0)',
    );
    expect(byPrefix('LlmModelLatencyAlarm')).toMatchObject({ Threshold: 10_000_000, Period: 10 });
    // 0.95 × 100 + 5 would be 100: capped at 99.
    expect(byPrefix('LlmGpuMemoryAlarm').Threshold).toBe(99);
    for (const [, resource] of alarms) {
      expect(resource.Properties.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^Pager/) }]);
      expect(resource.Properties.OKActions).toEqual([{ Ref: expect.stringMatching(/^Pager/) }]);
    }
  });

  test('GIVEN a 10 s publish frequency WHEN synthesized THEN each alarm uses a period CloudWatch accepts for its metric', () => {
    const periods = (metricsConfig: Record<string, unknown>) => {
      const { template } = synth({ endpointName: 'chat-llm', metricsConfig });
      const byPrefix = (p: string) =>
        Object.entries(template.findResources('AWS::CloudWatch::Alarm')).find(([id]) => id.startsWith(p))![1]
          .Properties as Record<string, any>;
      return {
        errorRate: byPrefix('LlmErrorRateAlarm')
          .Metrics.slice(1)
          .map((m: any) => m.MetricStat.Period),
        latency: byPrefix('LlmModelLatencyAlarm').Period,
        concurrency: byPrefix('LlmConcurrencySaturationAlarm').Metrics[0].Period,
        gpuMemory: byPrefix('LlmGpuMemoryAlarm').Metrics[1].MetricStat.Period,
      };
    };
    // Enhanced metrics publish invocations every 10 s; Metrics Insights aggregates at one minute.
    expect(periods({ publishFrequency: Duration.seconds(10) })).toEqual({
      errorRate: [10, 10],
      latency: 10,
      concurrency: 60,
      gpuMemory: 10,
    });
    // Without enhanced metrics invocation metrics stay at 60 s; utilization metrics follow the frequency.
    expect(periods({ publishFrequency: Duration.seconds(10), enhancedMetrics: false })).toEqual({
      errorRate: [60, 60],
      latency: 60,
      concurrency: 60,
      gpuMemory: 10,
    });
    expect(periods({ publishFrequency: Duration.seconds(300) })).toEqual({
      errorRate: [300, 300],
      latency: 300,
      concurrency: 300,
      gpuMemory: 300,
    });
  });

  test('GIVEN RANDOM routing on one instance WHEN built THEN no concurrency alarm applies', () => {
    const { endpoint } = build({
      routing: RoutingStrategy.random(),
      instanceCount: 1,
      deployment: DeploymentPolicy.blueGreen(),
    });
    expect(Object.keys(endpoint.alarms).sort()).toEqual(['errorRate', 'gpuMemory', 'latency']);
  });

  test.each([
    [
      { errorRateAlarm: { threshold: 101 } },
      'monitoring.errorRateAlarm.threshold must be between 0 and 100 percent (got 101)',
    ],
    [
      { concurrencyAlarm: { threshold: 1.5 } },
      'monitoring.concurrencyAlarm.threshold must be between 0.01 and 1 (share of concurrencyThreshold) (got 1.5)',
    ],
    [
      { loadSpreadAlarm: { threshold: 2 } },
      'monitoring.loadSpreadAlarm can only be { enabled: false }: no CloudWatch alarm can compare the busiest instance with the mean ' +
        '(SEARCH is refused in alarms, an alarm takes one Metrics Insights query, and per-instance totals need GROUP BY, which returns several ' +
        'time series); the load spread is on the dashboard, see docs/operations.md#load-spread (got {"threshold":2})',
    ],
    [
      { loadSpreadAlarm: { enabled: true } },
      expect.stringContaining('monitoring.loadSpreadAlarm can only be { enabled: false }'),
    ],
    [
      { latencyAlarm: { evaluationPeriods: 0 } },
      'monitoring.latencyAlarm.evaluationPeriods must be between 1 and 100 (got 0)',
    ],
    [
      { latencyAlarm: { evaluationPeriods: 3, datapointsToAlarm: 4 } },
      'monitoring.latencyAlarm.datapointsToAlarm must be between 1 and 3 (got 4)',
    ],
    [
      { errorRateAlarm: { minInvocations: 0 } },
      'monitoring.errorRateAlarm.minInvocations must be an integer of at least 1 (got 0)',
    ],
  ])('GIVEN %j WHEN built THEN it is refused', (monitoring, message) => {
    expect(problemsFor({ monitoring })).toEqual([message]);
  });

  test.each([
    [36, []],
    [
      37,
      [
        'monitoring.concurrencyAlarm.evaluationPeriods must be at most 36 with 300-second periods: CloudWatch evaluates Metrics Insights alarms on the latest 3 hours only (got 37)',
      ],
    ],
  ])(
    'GIVEN 300 s periods and a concurrency alarm over %i periods WHEN built THEN the 3-hour Metrics Insights window gives %j',
    (evaluationPeriods, expected) => {
      expect(
        problemsFor({
          metricsConfig: { publishFrequency: Duration.seconds(300) },
          monitoring: { concurrencyAlarm: { evaluationPeriods } },
        }),
      ).toEqual(expected);
    },
  );

  test.each([
    [90, 0],
    [91, 1],
  ])(
    'GIVEN 120 s periods and a concurrency alarm over %i periods WHEN built THEN %i problem is reported',
    (evaluationPeriods, count) => {
      expect(
        problemsFor({
          metricsConfig: { publishFrequency: Duration.seconds(120) },
          monitoring: { concurrencyAlarm: { evaluationPeriods } },
        }),
      ).toHaveLength(count);
    },
  );
});

describe('when the dashboard is synthesized', () => {
  const { template } = synth({
    endpointName: 'chat-llm',
    instanceCount: 7,
    autoScaling: { minCapacity: 7, maxCapacity: 9 },
  });
  const body = JSON.stringify(onlyResource(template, 'AWS::CloudWatch::Dashboard').DashboardBody);

  test('GIVEN defaults WHEN synthesized THEN it shows totals, per-instance series, load spread, latency percentiles, error rates and GPUs', () => {
    for (const text of [
      'Requests: total and per instance',
      'Load spread: busiest ÷ mean instance',
      'In-flight requests per instance (max)',
      'Latency percentiles (ms)',
      'Errors (% of requests)',
      'GPU utilization per instance',
      'GPU memory per instance',
      'MAX(requests_by_instance) / AVG(requests_by_instance)',
      'p99',
      'vllm:prefix_cache_hits_total',
    ]) {
      expect(body).toContain(text);
    }
  });

  test('GIVEN the load-spread graph WHEN synthesized THEN it draws the reference line at twice the mean, not an alarm (there is none)', () => {
    expect(body).toContain('busiest at twice the mean');
    expect(body).not.toContain('load-spread alarm');
    expect(
      Object.keys(template.findResources('AWS::CloudWatch::Alarm')).filter((id) => id.includes('LoadSpread')),
    ).toEqual([]);
  });

  test('GIVEN PREFIX_AWARE and autoscaling WHEN synthesized THEN concurrencyThreshold and the scaling target are horizontal annotations', () => {
    expect(body).toContain('PREFIX_AWARE concurrencyThreshold (32): spills above');
    expect(body).toContain('autoscaling target (24)');
  });

  test('GIVEN an image without the router sidecar WHEN synthesized THEN no router widget is shown', () => {
    expect(body).not.toContain('PrefixRouter');
  });
});

describe('when router sidecar metrics are shown or the dashboard is turned off', () => {
  test('GIVEN routerSidecarMetrics WHEN built THEN router widgets read the PrefixRouter namespace', () => {
    const { stack, endpoint } = build({ endpointName: 'chat-llm', monitoring: { routerSidecarMetrics: true } });
    const body = JSON.stringify(
      stack.resolve((endpoint.dashboard!.node.defaultChild as cloudwatch.CfnDashboard).dashboardBody),
    );
    expect(body).toContain('Router: decisions by reason');
    expect(body).toContain('PrefixRouter');
  });

  test('GIVEN an image whose bound config says it runs the sidecar WHEN built THEN router widgets show and the EMF endpoint name is set', () => {
    class SidecarImage extends VllmImage {
      private readonly inner = VllmImage.dlc();
      public readonly convention = this.inner.convention;
      public _validate(...args: Parameters<VllmImage['_validate']>): void {
        this.inner._validate(...args);
      }
      public bind(...args: Parameters<VllmImage['bind']>) {
        return { ...this.inner.bind(...args), routerSidecarMetrics: true };
      }
    }
    const { stack, endpoint } = build({ endpointName: 'chat-llm', image: new SidecarImage() });
    const body = JSON.stringify(
      stack.resolve((endpoint.dashboard!.node.defaultChild as cloudwatch.CfnDashboard).dashboardBody),
    );
    expect(body).toContain('Router: time to first token (ms)');
    expect(stack.resolve(endpoint.cfnModel.primaryContainer)).toMatchObject({
      environment: { PREFIX_ROUTER_EMF_ENDPOINT_NAME: 'chat-llm' },
    });
  });

  test('GIVEN monitoring.dashboard false WHEN built THEN there is no dashboard, and addWidgetsTo fills one of your own', () => {
    const { stack, endpoint } = build({ monitoring: { dashboard: false } });
    expect(endpoint.dashboard).toBeUndefined();
    const own = new cloudwatch.Dashboard(stack, 'Team');
    endpoint.addWidgetsTo(own);
    expect(JSON.stringify(stack.resolve((own.node.defaultChild as cloudwatch.CfnDashboard).dashboardBody))).toContain(
      'Load spread',
    );
  });
});

describe('when a metrics config is set', () => {
  test('GIVEN detailed observability at 10 s (min) WHEN synthesized THEN MetricsConfig renders', () => {
    const { template } = synth({
      metricsConfig: { detailedObservability: true, enhancedMetrics: true, publishFrequency: Duration.seconds(10) },
    });
    expect(onlyResource(template, 'AWS::SageMaker::EndpointConfig').MetricsConfig).toEqual({
      EnableDetailedObservability: true,
      EnableEnhancedMetrics: true,
      MetricPublishFrequencyInSeconds: 10,
    });
  });

  test('GIVEN 300 s (max) and enhanced metrics off WHEN built THEN both render', () => {
    const { stack, endpoint } = build({
      metricsConfig: { publishFrequency: Duration.minutes(5), enhancedMetrics: false },
    });
    expect(stack.resolve(endpoint.cfnEndpointConfig.metricsConfig)).toEqual({
      enableEnhancedMetrics: false,
      metricPublishFrequencyInSeconds: 300,
    });
  });

  test('GIVEN 9 s (min−1) and 301 s (max+1) WHEN built THEN they are refused with the allowed values', () => {
    expect(problemsFor({ metricsConfig: { publishFrequency: Duration.seconds(9) } })).toEqual([
      'metricsConfig.publishFrequency must be one of 10, 30, 60, 120, 180, 240, 300 seconds (got 9)',
    ]);
    expect(problemsFor({ metricsConfig: { publishFrequency: Duration.seconds(301) } })).toEqual([
      'metricsConfig.publishFrequency must be one of 10, 30, 60, 120, 180, 240, 300 seconds (got 301)',
    ]);
  });

  test('GIVEN 45 s (inside the range but not allowed) WHEN built THEN it is refused', () => {
    expect(problemsFor({ metricsConfig: { publishFrequency: Duration.seconds(45) } })).toHaveLength(1);
  });
});
