import {
  CreateEndpointConfigCommand,
  DeleteEndpointConfigCommand,
  DescribeEndpointCommand,
  DescribeEndpointConfigCommand,
  DescribeModelCommand,
  SageMakerClient,
  UpdateEndpointCommand,
  type CreateEndpointConfigCommandInput,
  type DeploymentConfig,
  type DescribeEndpointConfigCommandOutput,
  type UpdateEndpointCommandInput,
} from '@aws-sdk/client-sagemaker';
import { CloudWatchClient, GetMetricDataCommand, ListMetricsCommand, type GetMetricDataCommandInput } from '@aws-sdk/client-cloudwatch';
import { mockClient, type AwsClientStub } from 'aws-sdk-client-mock';
import type { Clock } from '../../../../router/src/aws/throttling-retry';

/**
 * A scripted SageMaker control plane behind aws-sdk-client-mock: endpoint state that moves from Updating to
 * InService after a number of polls, configurations created and deleted, and failure modes (a rolled-back
 * update, a stuck update, a rejected update, throttling). A virtual clock makes hours of polling instant.
 */
export const ORIGINAL_CONFIG = 'my-llm-config-abc123';

export function describedConfig(name = ORIGINAL_CONFIG, variants = 1): DescribeEndpointConfigCommandOutput {
  const variant = (i: number) => ({
    VariantName: i === 0 ? 'AllTraffic' : `Variant${i + 1}`,
    ModelName: 'my-llm-model',
    InstanceType: 'ml.g6e.2xlarge' as const,
    InitialInstanceCount: 2,
    InitialVariantWeight: 1,
    ContainerStartupHealthCheckTimeoutInSeconds: 1800,
    ModelDataDownloadTimeoutInSeconds: 1800,
    InferenceAmiVersion: 'al2023-ami-sagemaker-inference-gpu-4-1' as const,
    RoutingConfig:
      i === 0
        ? { RoutingStrategy: 'PREFIX_AWARE' as const, PrefixAwareRoutingConfig: { PrefixLength: 8192, ConcurrencyThreshold: 32 } }
        : { RoutingStrategy: 'RANDOM' as const },
  });
  return {
    $metadata: {},
    EndpointConfigName: name,
    EndpointConfigArn: `arn:aws:sagemaker:us-east-1:111122223333:endpoint-config/${name}`,
    CreationTime: new Date(0),
    ProductionVariants: Array.from({ length: variants }, (_, i) => variant(i)),
    MetricsConfig: { EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 10 },
    EnableNetworkIsolation: false,
  };
}

export interface FakeOptions {
  readonly variants?: number;
  /** Polls an update stays Updating before it finishes. */
  readonly pollsPerUpdate?: number;
  readonly lastDeploymentConfig?: DeploymentConfig;
  /** SM_VLLM_MODEL of the endpoint's model (what the emulators serve). Default tiny-emulated-model. */
  readonly servedModel?: string;
}

export class FakeControlPlane {
  readonly sm: AwsClientStub<SageMakerClient>;
  readonly cw: AwsClientStub<CloudWatchClient>;
  status: string = 'InService';
  current = ORIGINAL_CONFIG;
  failureReason: string | undefined;
  readonly configs = new Map<string, DescribeEndpointConfigCommandOutput>();
  readonly created: CreateEndpointConfigCommandInput[] = [];
  readonly updates: UpdateEndpointCommandInput[] = [];
  readonly deleted: string[] = [];
  readonly metricQueries: GetMetricDataCommandInput[] = [];
  private pending: { config: string; pollsLeft: number; outcome: 'ok' | 'rollback' } | undefined;
  /** Outcome of each UpdateEndpoint in order ('ok' when absent): 'rollback' rolls back, 'reject' throws, 'stuck:N' stays Updating N polls. */
  readonly script: string[] = [];
  /** Throttle the next N calls of a command name. */
  readonly throttle = new Map<string, number>();
  describeCalls = 0;

  constructor(private readonly options: FakeOptions = {}) {
    this.sm = mockClient(SageMakerClient);
    this.cw = mockClient(CloudWatchClient);
    this.configs.set(ORIGINAL_CONFIG, describedConfig(ORIGINAL_CONFIG, options.variants ?? 1));
    const throttled = (name: string): void => {
      const left = this.throttle.get(name) ?? 0;
      if (left > 0) {
        this.throttle.set(name, left - 1);
        throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
      }
    };
    this.sm.on(DescribeEndpointCommand).callsFake((input: { EndpointName: string }) => {
      throttled('DescribeEndpoint');
      this.describeCalls++;
      if (input.EndpointName !== 'my-llm') throw Object.assign(new Error(`Could not find endpoint "${input.EndpointName}".`), { name: 'ValidationException' });
      this.advance();
      const config = this.configs.get(this.current)!;
      return {
        EndpointName: 'my-llm',
        EndpointArn: 'arn:aws:sagemaker:us-east-1:111122223333:endpoint/my-llm',
        EndpointConfigName: this.current,
        EndpointStatus: this.status,
        FailureReason: this.failureReason,
        CreationTime: new Date(0),
        LastModifiedTime: new Date(0),
        LastDeploymentConfig: this.options.lastDeploymentConfig,
        ProductionVariants: (config.ProductionVariants ?? []).map((v) => ({ VariantName: v.VariantName, CurrentInstanceCount: 2, DesiredInstanceCount: 2 })),
      };
    });
    this.sm.on(DescribeEndpointConfigCommand).callsFake((input: { EndpointConfigName: string }) => {
      throttled('DescribeEndpointConfig');
      const c = this.configs.get(input.EndpointConfigName);
      if (c === undefined) throw Object.assign(new Error(`Could not find endpoint configuration "${input.EndpointConfigName}".`), { name: 'ValidationException' });
      return c;
    });
    this.sm.on(DescribeModelCommand).resolves({
      ModelName: 'my-llm-model',
      ModelArn: 'arn:aws:sagemaker:us-east-1:111122223333:model/my-llm-model',
      CreationTime: new Date(0),
      PrimaryContainer: { Environment: { SM_VLLM_MODEL: options.servedModel ?? 'tiny-emulated-model' } },
    });
    this.sm.on(CreateEndpointConfigCommand).callsFake((input: CreateEndpointConfigCommandInput) => {
      throttled('CreateEndpointConfig');
      this.created.push(input);
      this.configs.set(input.EndpointConfigName!, { ...describedConfig(), ...input, EndpointConfigArn: `arn:${input.EndpointConfigName}`, CreationTime: new Date(1) } as DescribeEndpointConfigCommandOutput);
      return { EndpointConfigArn: `arn:${input.EndpointConfigName}` };
    });
    this.sm.on(UpdateEndpointCommand).callsFake((input: UpdateEndpointCommandInput) => {
      throttled('UpdateEndpoint');
      if (this.status !== 'InService' && this.status !== 'Failed') {
        throw Object.assign(new Error('Cannot update in-progress endpoint'), { name: 'ValidationException' });
      }
      this.updates.push(input);
      const step = this.script.shift() ?? 'ok';
      if (step === 'reject') throw Object.assign(new Error('The account-level service limit for ml.g6e.2xlarge is 2 instances'), { name: 'ResourceLimitExceeded' });
      const stuck = step.startsWith('stuck:') ? Number(step.slice(6)) : 0;
      this.pending = { config: input.EndpointConfigName!, pollsLeft: (this.options.pollsPerUpdate ?? 2) + stuck, outcome: step === 'rollback' ? 'rollback' : 'ok' };
      this.status = 'Updating';
      this.failureReason = undefined;
      return { EndpointArn: 'arn:aws:sagemaker:us-east-1:111122223333:endpoint/my-llm' };
    });
    this.sm.on(DeleteEndpointConfigCommand).callsFake((input: { EndpointConfigName: string }) => {
      this.deleted.push(input.EndpointConfigName);
      this.configs.delete(input.EndpointConfigName);
      return {};
    });
    this.cw.on(ListMetricsCommand).callsFake((input: { Namespace: string }) => ({
      Metrics:
        input.Namespace === 'AWS/SageMaker'
          ? [
              { Namespace: input.Namespace, MetricName: 'Invocations', Dimensions: [{ Name: 'EndpointName', Value: 'my-llm' }, { Name: 'VariantName', Value: 'AllTraffic' }] },
              {
                Namespace: input.Namespace,
                MetricName: 'InvocationsPerInstance',
                Dimensions: [{ Name: 'EndpointName', Value: 'my-llm' }, { Name: 'VariantName', Value: 'AllTraffic' }, { Name: 'InstanceId', Value: 'i-0' }],
              },
            ]
          : input.Namespace === 'PrefixRouter'
            ? [
                { Namespace: input.Namespace, MetricName: 'PromptTokens', Dimensions: [{ Name: 'EndpointName', Value: 'my-llm' }, { Name: 'Engine', Value: 'engine-0' }] },
                { Namespace: input.Namespace, MetricName: 'ReportedCachedTokens', Dimensions: [{ Name: 'EndpointName', Value: 'my-llm' }, { Name: 'Engine', Value: 'engine-0' }] },
                { Namespace: input.Namespace, MetricName: 'RoutingDecisions', Dimensions: [{ Name: 'EndpointName', Value: 'my-llm' }, { Name: 'Reason', Value: 'prefix-affinity' }] },
              ]
            : [],
    }));
    this.cw.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => {
      this.metricQueries.push(input);
      const value = (q: NonNullable<GetMetricDataCommandInput['MetricDataQueries']>[number]): number | undefined => {
        const m = q.MetricStat!.Metric!.MetricName!;
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
          return { Id: q.Id, Values: v === undefined ? [] : [v], Timestamps: v === undefined ? [] : [input.StartTime as Date], StatusCode: 'Complete' };
        }),
      };
    });
  }

  private advance(): void {
    const p = this.pending;
    if (p === undefined) return;
    if (p.pollsLeft > 0) {
      p.pollsLeft--;
      this.status = p.outcome === 'rollback' && p.pollsLeft === 0 ? 'RollingBack' : 'Updating';
      return;
    }
    this.pending = undefined;
    this.status = 'InService';
    if (p.outcome === 'rollback') this.failureReason = 'Rolled back: the new fleet failed its health checks';
    else this.current = p.config;
  }

  restore(): void {
    this.sm.restore();
    this.cw.restore();
  }
}

/** Virtual time: sleeps return at once and move the clock; random is fixed so backoff delays are exact. */
export class VirtualClock implements Clock {
  t = Date.UTC(2026, 0, 1, 12, 0, 0);
  readonly sleeps: number[] = [];
  constructor(private readonly r = 0.5) {}
  now(): number {
    return this.t;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    this.sleeps.push(ms);
    this.t += ms;
    await Promise.resolve();
    if (signal?.aborted) throw signal.reason;
  }
  random(): number {
    return this.r;
  }
}
