import { Duration } from 'aws-cdk-lib';
import { onlyResource, problemsFor, synth } from './helpers';

describe('when metrics are requested', () => {
  const { stack, endpoint } = synth({ endpointName: 'chat-llm' });
  const dims = { EndpointName: 'chat-llm', VariantName: 'AllTraffic' };

  test.each([
    ['metricInvocations', 'Invocations', 'AWS/SageMaker', 'Sum'],
    ['metricInvocationsPerInstance', 'InvocationsPerInstance', 'AWS/SageMaker', 'Sum'],
    ['metricModelLatency', 'ModelLatency', 'AWS/SageMaker', 'p90'],
    ['metricOverheadLatency', 'OverheadLatency', 'AWS/SageMaker', 'p90'],
    ['metricConcurrentRequestsPerModel', 'ConcurrentRequestsPerModel', 'AWS/SageMaker', 'Maximum'],
    ['metricInvocation4xxErrors', 'Invocation4XXErrors', 'AWS/SageMaker', 'Sum'],
    ['metricInvocation5xxErrors', 'Invocation5XXErrors', 'AWS/SageMaker', 'Sum'],
    ['metricGpuUtilization', 'GPUUtilization', '/aws/sagemaker/Endpoints', 'Average'],
    ['metricGpuMemoryUtilization', 'GPUMemoryUtilization', '/aws/sagemaker/Endpoints', 'Average'],
  ] as const)('GIVEN %s WHEN read THEN it is %s in %s (%s) for this variant', (method, metricName, namespace, statistic) => {
    const metric = endpoint[method]();
    expect(metric.metricName).toBe(metricName);
    expect(metric.namespace).toBe(namespace);
    expect(metric.statistic).toBe(statistic);
    expect(stack.resolve(metric.dimensions)).toEqual(dims);
  });

  test('GIVEN the concurrency metric WHEN read THEN it uses the 10-second resolution', () => {
    expect(endpoint.metricConcurrentRequestsPerModel().period.toSeconds()).toBe(10);
  });

  test('GIVEN metric() with options WHEN read THEN namespace and statistic can be overridden', () => {
    const metric = endpoint.metric('CPUUtilization', { namespace: '/aws/sagemaker/Endpoints', statistic: 'Maximum' });
    expect([metric.namespace, metric.metricName, metric.statistic]).toEqual(['/aws/sagemaker/Endpoints', 'CPUUtilization', 'Maximum']);
  });
});

describe('when a dashboard is requested', () => {
  test('GIVEN createDashboard WHEN synthesized THEN one dashboard shows the variant\'s traffic, latency, load, errors and GPUs', () => {
    const { template, endpoint } = synth({ createDashboard: true });
    const body = JSON.stringify(onlyResource(template, 'AWS::CloudWatch::Dashboard').DashboardBody);
    for (const name of ['Invocations', 'ModelLatency', 'OverheadLatency', 'ConcurrentRequestsPerModel', 'Invocation5XXErrors', 'GPUUtilization']) {
      expect(body).toContain(name);
    }
    expect(endpoint.dashboard).toBeDefined();
  });
});

describe('when a metrics config is set', () => {
  test('GIVEN detailed observability at 10 s (min) WHEN synthesized THEN MetricsConfig renders', () => {
    const { template } = synth({ metricsConfig: { detailedObservability: true, enhancedMetrics: true, publishFrequency: Duration.seconds(10) } });
    expect(onlyResource(template, 'AWS::SageMaker::EndpointConfig').MetricsConfig).toEqual({
      EnableDetailedObservability: true, EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 10,
    });
  });

  test('GIVEN 300 s (max) WHEN synthesized THEN it renders', () => {
    const { template } = synth({ metricsConfig: { publishFrequency: Duration.minutes(5) } });
    expect(onlyResource(template, 'AWS::SageMaker::EndpointConfig').MetricsConfig).toEqual({ MetricPublishFrequencyInSeconds: 300 });
  });

  test('GIVEN 9 s (min−1) and 301 s (max+1) WHEN built THEN they are refused with the allowed values', () => {
    expect(problemsFor({ metricsConfig: { publishFrequency: Duration.seconds(9) } }))
      .toEqual(['metricsConfig.publishFrequency must be one of 10, 30, 60, 120, 180, 240, 300 seconds (got 9)']);
    expect(problemsFor({ metricsConfig: { publishFrequency: Duration.seconds(301) } }))
      .toEqual(['metricsConfig.publishFrequency must be one of 10, 30, 60, 120, 180, 240, 300 seconds (got 301)']);
  });

  test('GIVEN 45 s (inside the range but not allowed) WHEN built THEN it is refused', () => {
    expect(problemsFor({ metricsConfig: { publishFrequency: Duration.seconds(45) } })).toHaveLength(1);
  });

  test('GIVEN an empty metrics config WHEN synthesized THEN nothing renders', () => {
    expect(onlyResource(synth({ metricsConfig: {} }).template, 'AWS::SageMaker::EndpointConfig').MetricsConfig).toBeUndefined();
  });
});
