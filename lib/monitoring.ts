import { aws_cloudwatch as cloudwatch, Duration } from 'aws-cdk-lib';

/** Namespace of SageMaker's invocation metrics. */
export const SAGEMAKER_NAMESPACE = 'AWS/SageMaker';
/** Namespace of per-instance host metrics (CPU, GPU, memory, disk). */
export const ENDPOINT_INSTANCE_NAMESPACE = '/aws/sagemaker/Endpoints';

/** `MetricOptions` plus the namespace, for `metric()`: a named interface, so jsii languages can pass it. */
export interface EndpointMetricOptions extends cloudwatch.MetricOptions {
  /** @default 'AWS/SageMaker' */
  readonly namespace?: string;
}

/** The dimensions every endpoint metric is published with. */
export interface EndpointMetricTarget {
  readonly endpointName: string;
  readonly variantName: string;
}

/** Builds `AWS/SageMaker` and `/aws/sagemaker/Endpoints` metrics for one variant of one endpoint. */
export class EndpointMetrics {
  constructor(private readonly target: EndpointMetricTarget) {}

  /** Any metric of the variant; `namespace` defaults to `AWS/SageMaker`. */
  public metric(metricName: string, props: EndpointMetricOptions = {}): cloudwatch.Metric {
    const { namespace, ...options } = props;
    return new cloudwatch.Metric({
      namespace: namespace ?? SAGEMAKER_NAMESPACE,
      metricName,
      dimensionsMap: { EndpointName: this.target.endpointName, VariantName: this.target.variantName },
      ...options,
    });
  }

  /** Requests sent to the variant (Sum). */
  public invocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Invocations', { statistic: 'Sum', ...props });
  }

  /** Requests per instance (Sum): the load spread across the fleet. */
  public invocationsPerInstance(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('InvocationsPerInstance', { statistic: 'Sum', ...props });
  }

  /** Time the container took to answer, in microseconds (p90). */
  public modelLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ModelLatency', { statistic: 'p90', ...props });
  }

  /** Time SageMaker added around the container, routing included, in microseconds (p90). */
  public overheadLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('OverheadLatency', { statistic: 'p90', ...props });
  }

  /**
   * In-flight requests per instance (Maximum, 10-second resolution): what `PREFIX_AWARE`'s concurrencyThreshold
   * and the autoscaling target are compared with.
   */
  public concurrentRequestsPerModel(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ConcurrentRequestsPerModel', { statistic: 'Maximum', period: Duration.seconds(10), ...props });
  }

  /** Client errors (Sum). */
  public invocation4xxErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Invocation4XXErrors', { statistic: 'Sum', ...props });
  }

  /** Server and model errors (Sum). */
  public invocation5xxErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Invocation5XXErrors', { statistic: 'Sum', ...props });
  }

  /** GPU utilization summed over the instance's GPUs, in percent (0–100 × GPUs) (Average). */
  public gpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('GPUUtilization', { namespace: ENDPOINT_INSTANCE_NAMESPACE, statistic: 'Average', ...props });
  }

  /** GPU memory utilization summed over the instance's GPUs, in percent (Average). */
  public gpuMemoryUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('GPUMemoryUtilization', { namespace: ENDPOINT_INSTANCE_NAMESPACE, statistic: 'Average', ...props });
  }
}

/** `MetricsConfig` of the endpoint configuration (not rendered unless set). */
export interface EndpointMetricsConfig {
  /**
   * Utilization and invocation metrics per instance and container (extra CloudWatch metrics, billed as such).
   *
   * @default - SageMaker's default (off)
   */
  readonly enhancedMetrics?: boolean;

  /**
   * Container-level inference metrics, per-GPU and per-instance host metrics; with the vLLM DLC this includes
   * vLLM's own metrics such as the prefix cache hit counters, the figure prefix-aware routing is meant to raise.
   *
   * @default - SageMaker's default (off)
   */
  readonly detailedObservability?: boolean;

  /**
   * How often the endpoint publishes metrics. Allowed: 10, 30, 60, 120, 180, 240 or 300 seconds.
   *
   * @default - SageMaker's default (60 seconds)
   */
  readonly publishFrequency?: Duration;
}

/** SageMaker's allowed `MetricPublishFrequencyInSeconds` values. */
export const METRIC_PUBLISH_FREQUENCIES_SECONDS: readonly number[] = [10, 30, 60, 120, 180, 240, 300];
