import { aws_sagemaker as sagemaker } from 'aws-cdk-lib';
import {
  DEFAULT_PUBLISH_FREQUENCY,
  EndpointMetrics,
  EndpointMetricsConfig,
  METRIC_PUBLISH_FREQUENCIES_SECONDS,
} from '../monitoring';
import { ProblemCollector, wholeSeconds } from './validation';

/** `metricsConfig.publishFrequency` must be one of SageMaker's `MetricPublishFrequencyInSeconds` values. */
export function validateMetricsConfig(config: EndpointMetricsConfig | undefined, problems: ProblemCollector): void {
  const frequency = config?.publishFrequency;
  if (!frequency || frequency.isUnresolved()) return;
  const seconds = frequency.toSeconds({ integral: false });
  if (!METRIC_PUBLISH_FREQUENCIES_SECONDS.includes(seconds)) {
    problems.add(
      `metricsConfig.publishFrequency must be one of ${METRIC_PUBLISH_FREQUENCIES_SECONDS.join(', ')} seconds (got ${seconds})`,
    );
  }
}

/** The endpoint configuration's `MetricsConfig`. */
export function renderMetricsConfig(
  config: EndpointMetricsConfig = {},
): sagemaker.CfnEndpointConfig.MetricsConfigProperty {
  // Enhanced metrics give every metric an InstanceId dimension: the per-instance graphs and alarms read them.
  return {
    enableEnhancedMetrics: config.enhancedMetrics ?? true,
    enableDetailedObservability: config.detailedObservability,
    metricPublishFrequencyInSeconds: wholeSeconds(config.publishFrequency ?? DEFAULT_PUBLISH_FREQUENCY),
  };
}

/** Period of the Metrics Insights alarms, when known at synth (the metrics' own rule; names do not matter here). */
export function insightsPeriodSeconds(config: EndpointMetricsConfig | undefined): number | undefined {
  const period = new EndpointMetrics({
    endpointName: '',
    variantName: '',
    period: config?.publishFrequency,
    invocationMetricsAtPublishFrequency: config?.enhancedMetrics ?? true,
  }).insightsPeriod;
  return period.isUnresolved() ? undefined : period.toSeconds({ integral: false });
}
