import {
  CloudWatchClient,
  GetMetricDataCommand,
  ListMetricsCommand,
  type GetMetricDataCommandInput,
} from '@aws-sdk/client-cloudwatch';
import { mockClient, type AwsClientStub } from 'aws-sdk-client-mock';

/**
 * CloudWatch for the A/B's report tests: ListMetrics answers a few series (per variant, one per-instance series,
 * the sidecar's EMF series without a VariantName dimension, as the sidecar publishes them), GetMetricData answers
 * fixed values, and every GetMetricData input is recorded. (The control plane is the stateful fake in
 * sagemaker-control-plane.ts; CloudWatch is only read here, so a scripted answer is enough.)
 */
export interface CloudWatchFake {
  readonly cw: AwsClientStub<CloudWatchClient>;
  readonly metricQueries: GetMetricDataCommandInput[];
  restore(): void;
}

export function fakeCloudWatch(): CloudWatchFake {
  const cw = mockClient(CloudWatchClient);
  const metricQueries: GetMetricDataCommandInput[] = [];
  cw.on(ListMetricsCommand).callsFake((input: { Namespace: string }) => ({
    Metrics:
      input.Namespace === 'AWS/SageMaker'
        ? [
            {
              Namespace: input.Namespace,
              MetricName: 'Invocations',
              Dimensions: [
                { Name: 'EndpointName', Value: 'my-llm' },
                { Name: 'VariantName', Value: 'AllTraffic' },
              ],
            },
            {
              Namespace: input.Namespace,
              MetricName: 'InvocationsPerInstance',
              Dimensions: [
                { Name: 'EndpointName', Value: 'my-llm' },
                { Name: 'VariantName', Value: 'AllTraffic' },
                { Name: 'InstanceId', Value: 'i-0' },
              ],
            },
            // An instance of an earlier fleet: ListMetrics keeps listing it for two weeks; it has no data in the window.
            {
              Namespace: input.Namespace,
              MetricName: 'InvocationsPerInstance',
              Dimensions: [
                { Name: 'EndpointName', Value: 'my-llm' },
                { Name: 'VariantName', Value: 'AllTraffic' },
                { Name: 'InstanceId', Value: 'i-replaced' },
              ],
            },
          ]
        : input.Namespace === 'PrefixRouter'
          ? [
              {
                Namespace: input.Namespace,
                MetricName: 'PromptTokens',
                Dimensions: [
                  { Name: 'EndpointName', Value: 'my-llm' },
                  { Name: 'Engine', Value: 'engine-0' },
                ],
              },
              {
                Namespace: input.Namespace,
                MetricName: 'ReportedCachedTokens',
                Dimensions: [
                  { Name: 'EndpointName', Value: 'my-llm' },
                  { Name: 'Engine', Value: 'engine-0' },
                ],
              },
              {
                Namespace: input.Namespace,
                MetricName: 'RoutingDecisions',
                Dimensions: [
                  { Name: 'EndpointName', Value: 'my-llm' },
                  { Name: 'Reason', Value: 'prefix-affinity' },
                ],
              },
            ]
          : [],
  }));
  cw.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => {
    metricQueries.push(input);
    const value = (q: NonNullable<GetMetricDataCommandInput['MetricDataQueries']>[number]): number | undefined => {
      const m = q.MetricStat!.Metric!.MetricName!;
      if (q.MetricStat!.Metric!.Dimensions!.some((d) => d.Value === 'i-replaced')) return undefined;
      const stat = q.MetricStat!.Stat!;
      const table: Record<string, number> = {
        'Invocations Sum': 8,
        'InvocationsPerInstance Sum': 4,
        'ModelLatency p50': 120_000,
        'ModelLatency p90': 250_000,
        'ModelLatency Average': 150_000,
        'OverheadLatency p90': 1_800,
        'ConcurrentRequestsPerModel Maximum': 2,
        'GPUUtilization Average': 61.5,
        'PromptTokens Sum': 1000,
        'ReportedCachedTokens Sum': 800,
        'RoutingDecisions Sum': 8,
      };
      return table[`${m} ${stat}`];
    };
    return {
      MetricDataResults: (input.MetricDataQueries ?? []).map((q) => {
        const v = value(q);
        return {
          Id: q.Id,
          Values: v === undefined ? [] : [v],
          Timestamps: v === undefined ? [] : [input.StartTime as Date],
          StatusCode: 'Complete',
        };
      }),
    };
  });
  return { cw, metricQueries, restore: () => cw.restore() };
}
