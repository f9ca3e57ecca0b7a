import { aws_cloudwatch as cloudwatch, Duration } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EndpointMetrics } from '../monitoring';

/** How many alarms `createRollbackAlarms` makes. */
export const DEFAULT_ROLLBACK_ALARM_COUNT = 1;

/**
 * The alarm deployments roll back on: 5XX errors of the variant ≥ 1 in 2 of 3 consecutive minutes. Missing data
 * (no traffic) is not breaching, so an idle endpoint can still be updated.
 */
export function createRollbackAlarms(scope: Construct, metrics: EndpointMetrics): cloudwatch.Alarm[] {
  return [
    new cloudwatch.Alarm(scope, 'Invocation5xxAlarm', {
      alarmDescription: 'SageMaker variant returns 5XX errors; deployments roll back while this alarm is in ALARM.',
      metric: metrics.invocation5xxErrors({ period: Duration.minutes(1) }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
  ];
}

/** A small dashboard: traffic, latency, load spread, errors and GPUs of the variant. */
export function createEndpointDashboard(scope: Construct, metrics: EndpointMetrics): cloudwatch.Dashboard {
  const dashboard = new cloudwatch.Dashboard(scope, 'Dashboard');
  dashboard.addWidgets(
    new cloudwatch.GraphWidget({ title: 'Invocations', left: [metrics.invocations()], right: [metrics.invocationsPerInstance()] }),
    new cloudwatch.GraphWidget({ title: 'Latency (µs, p90)', left: [metrics.modelLatency()], right: [metrics.overheadLatency()] }),
    new cloudwatch.GraphWidget({ title: 'Concurrent requests per instance (max)', left: [metrics.concurrentRequestsPerModel()] }),
  );
  dashboard.addWidgets(
    new cloudwatch.GraphWidget({ title: 'Errors', left: [metrics.invocation4xxErrors(), metrics.invocation5xxErrors()] }),
    new cloudwatch.GraphWidget({ title: 'GPU (%)', left: [metrics.gpuUtilization(), metrics.gpuMemoryUtilization()] }),
  );
  return dashboard;
}
