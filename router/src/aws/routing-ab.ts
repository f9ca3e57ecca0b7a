import {
  CreateEndpointConfigCommand,
  DeleteEndpointConfigCommand,
  DescribeEndpointCommand,
  UpdateEndpointCommand,
  type CreateEndpointConfigCommandInput,
  type DescribeEndpointCommandOutput,
  type DescribeEndpointConfigCommandOutput,
  type ProductionVariantRoutingConfig,
  type SageMakerClient,
} from '@aws-sdk/client-sagemaker';
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { LiveBenchmarkResult } from '../benchmark/live-benchmark';
import type { WorkloadRequest } from '../sim/workload/workload-request';
import { AbPlanError, copyConfigName, type AbPlan, type AbStrategy } from './ab-plan';
import { readCloudWatchView, type CloudWatchView } from './cloudwatch-view';
import { routingLabel } from './endpoint-facts';
import { withThrottlingRetry, type Clock, type RetryPolicy } from './throttling-retry';
import { partitionByVariant, variantFor } from './variant-split';

/**
 * `prefix-router ab`: runs one workload per routing strategy on a live endpoint, or once split between
 * production variants, and always puts the endpoint back on the configuration it started with.
 *
 * Switch mode, per strategy: CreateEndpointConfig (a copy of the original that differs only in each variant's
 * RoutingConfig) → UpdateEndpoint (RetainAllVariantProperties, the plan's DeploymentConfig) → wait for
 * InService on that config → run the workload. Then, whatever happened (a failed update, throttling that would
 * not stop, Ctrl-C), the original configuration name is restored and the copies are deleted, so the endpoint is
 * again what CloudFormation deployed. Every wait and backoff goes through the injected Clock.
 */
export class AbRunError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AbRunError';
  }
}

export class WaiterTimeoutError extends AbRunError {
  constructor(readonly endpointName: string, readonly expectedConfig: string, readonly waitedMs: number, readonly lastStatus: string) {
    super(`endpoint '${endpointName}' was still ${lastStatus} after ${Math.round(waitedMs / 60000)} min waiting for configuration '${expectedConfig}'`);
    this.name = 'WaiterTimeoutError';
  }
}

export class UpdateFailedError extends AbRunError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpdateFailedError';
  }
}

export interface WorkloadRun {
  readonly label: string;
  readonly signal: AbortSignal;
  /** Variants mode: the TargetVariant of each request. */
  readonly targetVariantOf?: (request: WorkloadRequest) => string | undefined;
}

export interface AbDeps {
  readonly sagemaker: SageMakerClient;
  readonly cloudwatch?: CloudWatchClient;
  readonly clock: Clock;
  readonly log: (line: string) => void;
  /** Sends the workload once to the endpoint as it is now; stops early when `signal` aborts. */
  readonly runWorkload: (run: WorkloadRun) => Promise<LiveBenchmarkResult>;
}

export interface AbRunOptions {
  readonly plan: AbPlan;
  /** Short id in the names of the configurations created (letters and digits). */
  readonly runId: string;
  /** Ctrl-C: stops the workload and any wait for a switch; the restore still runs. */
  readonly signal?: AbortSignal;
  /** DescribeEndpoint polling interval. Default 30 s (SageMaker's own waiter polls every 30 s). */
  readonly pollIntervalMs?: number;
  /** Longest wait for one switch. Default: the DeploymentConfig's MaximumExecutionTimeoutInSeconds + 30 min, else 3 h. */
  readonly switchTimeoutMs?: number;
  /** Wait this long after a run window before reading CloudWatch (metrics land 1–3 min late). Default 3 min. */
  readonly cloudWatchDelayMs?: number;
  readonly retry?: RetryPolicy;
  /** Namespace of the router sidecar's EMF metrics (PREFIX_ROUTER_EMF_NAMESPACE). Default PrefixRouter. */
  readonly sidecarNamespace?: string;
}

export interface AbRunRecord {
  readonly label: string;
  readonly routing: ProductionVariantRoutingConfig | undefined;
  /** The variant the run's figures are for (variants mode), else every variant. */
  readonly variant?: string;
  readonly configName?: string;
  readonly result: LiveBenchmarkResult;
  /** Wall-clock window the run measured (epoch ms), for CloudWatch. */
  readonly wallWindow: { readonly startMs: number; readonly endMs: number };
  /** Instances per variant when the run started (autoscaling may change them between runs; compare like with like). */
  readonly instanceCounts?: Readonly<Record<string, number>>;
  /** One view per variant read (switch mode: every variant of the endpoint; variants mode: its own). */
  cloudwatch?: Record<string, CloudWatchView>;
  cloudwatchError?: string;
}

export interface AbOutcome {
  readonly runs: AbRunRecord[];
  readonly interrupted: boolean;
  /** What stopped the A/B early (not set when every strategy ran). */
  readonly failure?: Error;
  readonly restored: boolean;
  readonly restoreError?: Error;
  readonly createdConfigs: readonly string[];
  readonly deletedConfigs: readonly string[];
  readonly notes: readonly string[];
}

const TRANSITIONAL = new Set(['Creating', 'Updating', 'SystemUpdating', 'RollingBack', 'Deleting']);

export { copyConfigName } from './ab-plan';

/** CreateEndpointConfig input equal to the described configuration except each variant's RoutingConfig. */
export function configCopyInput(config: DescribeEndpointConfigCommandOutput, name: string, routing: ProductionVariantRoutingConfig): CreateEndpointConfigCommandInput {
  // Output-only fields are left out; everything CreateEndpointConfig accepts is copied as described.
  const { EndpointConfigName: _name, EndpointConfigArn: _arn, CreationTime: _created, $metadata: _meta, ...rest } = config;
  return {
    ...rest,
    EndpointConfigName: name,
    ProductionVariants: (config.ProductionVariants ?? []).map((v) => ({ ...v, RoutingConfig: routing })),
  };
}

export class RoutingAb {
  private readonly poll: number;
  private readonly notes: string[] = [];

  constructor(
    private readonly deps: AbDeps,
    private readonly options: AbRunOptions,
  ) {
    this.poll = options.pollIntervalMs ?? 30_000;
  }

  private get endpointName(): string {
    return this.options.plan.facts.endpointName;
  }

  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return withThrottlingRetry(what, fn, this.deps.clock, this.options.retry, (attempt, delay) =>
      this.deps.log(`${what}: throttled (attempt ${attempt}); retrying in ${(delay / 1000).toFixed(1)} s`),
    );
  }

  private switchTimeoutMs(): number {
    if (this.options.switchTimeoutMs !== undefined) return this.options.switchTimeoutMs;
    const dc = this.options.plan.switchPlan.deploymentConfig;
    const max = dc?.RollingUpdatePolicy?.MaximumExecutionTimeoutInSeconds ?? dc?.BlueGreenUpdatePolicy?.MaximumExecutionTimeoutInSeconds;
    return max !== undefined ? (max + 1800) * 1000 : 3 * 3600 * 1000;
  }

  /**
   * Polls DescribeEndpoint until the endpoint is InService on `expected`. InService on another configuration
   * after a transition means SageMaker rolled the update back; Failed is final; the deadline ends the wait.
   */
  async waitForConfig(expected: string, signal?: AbortSignal): Promise<DescribeEndpointCommandOutput> {
    const started = this.deps.clock.now();
    const deadline = started + this.switchTimeoutMs();
    let sawTransition = false;
    let polls = 0;
    for (;;) {
      const d = await this.call(`DescribeEndpoint ${this.endpointName}`, () => this.deps.sagemaker.send(new DescribeEndpointCommand({ EndpointName: this.endpointName })));
      polls++;
      const status = d.EndpointStatus ?? 'unknown';
      if (status === 'InService') {
        if (d.EndpointConfigName === expected) return d;
        // Right after UpdateEndpoint a describe may still show the old state; a rollback always passes through a transition.
        if (sawTransition || polls >= 3) {
          throw new UpdateFailedError(
            `the update to '${expected}' did not take: '${this.endpointName}' is InService on '${d.EndpointConfigName}'${d.FailureReason ? ` (${d.FailureReason})` : ''}; SageMaker rolled it back`,
          );
        }
      } else if (status === 'Failed') {
        throw new UpdateFailedError(`endpoint '${this.endpointName}' is Failed${d.FailureReason ? `: ${d.FailureReason}` : ''}`);
      } else if (TRANSITIONAL.has(status)) sawTransition = true;
      if (this.deps.clock.now() >= deadline) throw new WaiterTimeoutError(this.endpointName, expected, this.deps.clock.now() - started, status);
      await this.deps.clock.sleep(this.poll, signal);
    }
  }

  private async update(configName: string, signal?: AbortSignal): Promise<DescribeEndpointCommandOutput> {
    const dc = this.options.plan.switchPlan.deploymentConfig;
    await this.call(`UpdateEndpoint ${this.endpointName} → ${configName}`, () =>
      this.deps.sagemaker.send(
        new UpdateEndpointCommand({
          EndpointName: this.endpointName,
          EndpointConfigName: configName,
          // Keeps the instance count (autoscaling) and weights; RoutingConfig is not a variant property, so it changes.
          RetainAllVariantProperties: true,
          ...(dc !== undefined ? { DeploymentConfig: dc } : {}),
        }),
      ),
    );
    return this.waitForConfig(configName, signal);
  }

  /** Runs the plan. Never throws for a failure after the first change: the outcome carries it, with the restore's result. */
  async run(): Promise<AbOutcome> {
    const { plan } = this.options;
    const signal = this.options.signal ?? new AbortController().signal;
    const runs: AbRunRecord[] = [];
    const created: string[] = [];
    let failure: Error | undefined;
    if (plan.mode === 'variants') {
      try {
        runs.push(...(await this.runVariants(signal)));
      } catch (err) {
        failure = err as Error;
      }
      await this.readCloudWatch(runs);
      return { runs, interrupted: signal.aborted, failure, restored: true, createdConfigs: [], deletedConfigs: [], notes: this.notes };
    }
    try {
      for (const [index, strategy] of plan.strategies.entries()) {
        if (signal.aborted) break;
        const name = copyConfigName(plan.facts.configName, this.options.runId, index);
        this.deps.log(`[${strategy.label}] CreateEndpointConfig ${name}`);
        await this.call(`CreateEndpointConfig ${name}`, () => this.deps.sagemaker.send(new CreateEndpointConfigCommand(configCopyInput(plan.facts.config, name, strategy.routing))));
        created.push(name);
        this.deps.log(`[${strategy.label}] UpdateEndpoint ${this.endpointName} → ${name} (${plan.switchPlan.style}); waiting for InService`);
        const live = await this.update(name, signal);
        this.deps.log(`[${strategy.label}] InService; running the workload`);
        runs.push({ ...(await this.runOne(strategy, name, signal)), instanceCounts: instanceCountsOf(live) });
      }
    } catch (err) {
      failure = err as Error;
      this.deps.log(`stopping: ${failure.message}`);
    }
    const restore = await this.restore(created);
    await this.readCloudWatch(runs);
    return {
      runs,
      interrupted: signal.aborted,
      failure: signal.aborted && failure === undefined ? new AbRunError('interrupted (Ctrl-C)') : failure,
      restored: restore.error === undefined,
      restoreError: restore.error,
      createdConfigs: created,
      deletedConfigs: restore.deleted,
      notes: this.notes,
    };
  }

  private async runOne(strategy: AbStrategy, configName: string, signal: AbortSignal): Promise<AbRunRecord> {
    const before = this.deps.clock.now();
    const result = await this.deps.runWorkload({ label: strategy.label, signal });
    const scale = result.timeScale || 1;
    return {
      label: strategy.label,
      routing: strategy.routing,
      configName,
      result,
      wallWindow: { startMs: before + result.window.startMs / scale, endMs: before + result.window.endMs / scale },
    };
  }

  private async runVariants(signal: AbortSignal): Promise<AbRunRecord[]> {
    const { facts } = this.options.plan;
    const names = facts.variants.map((v) => v.name);
    const assigned = new Map<string, string>();
    const before = this.deps.clock.now();
    const result = await this.deps.runWorkload({
      label: 'variants',
      signal,
      targetVariantOf: (request) => {
        const v = variantFor(request, names);
        assigned.set(request.id, v);
        return v;
      },
    });
    const scale = result.timeScale || 1;
    const parts = partitionByVariant(result, assigned, names);
    return facts.variants.map((v) => ({
      label: `${v.name}: ${routingLabel(v.routing)}`,
      routing: v.routing,
      variant: v.name,
      result: parts.get(v.name)!,
      wallWindow: { startMs: before + result.window.startMs / scale, endMs: before + result.window.endMs / scale },
    }));
  }

  /** Back to the original configuration (waiting out any update in progress first), then delete the copies. */
  private async restore(created: readonly string[]): Promise<{ error?: Error; deleted: string[] }> {
    const { facts } = this.options.plan;
    const original = facts.configName;
    const deleted: string[] = [];
    let error: Error | undefined;
    try {
      const started = this.deps.clock.now();
      let d = await this.call('DescribeEndpoint', () => this.deps.sagemaker.send(new DescribeEndpointCommand({ EndpointName: this.endpointName })));
      while (TRANSITIONAL.has(d.EndpointStatus ?? '')) {
        if (this.deps.clock.now() - started >= this.switchTimeoutMs()) throw new WaiterTimeoutError(this.endpointName, original, this.deps.clock.now() - started, d.EndpointStatus ?? 'unknown');
        this.deps.log(`restore: endpoint is ${d.EndpointStatus}; waiting before switching back`);
        await this.deps.clock.sleep(this.poll);
        d = await this.call('DescribeEndpoint', () => this.deps.sagemaker.send(new DescribeEndpointCommand({ EndpointName: this.endpointName })));
      }
      if (d.EndpointConfigName !== original) {
        this.deps.log(`restore: UpdateEndpoint ${this.endpointName} → ${original}; waiting for InService`);
        await this.update(original);
      }
      this.deps.log(`restore: ${this.endpointName} is InService on its original configuration ${original}`);
    } catch (err) {
      error = err as Error;
      this.deps.log(`restore FAILED: ${error.message}`);
      this.notes.push(
        `The original configuration could not be restored (${error.message}). Restore by hand: aws sagemaker update-endpoint --endpoint-name ${this.endpointName} --endpoint-config-name ${original} --retain-all-variant-properties`,
      );
      // The copies stay: one of them may be what the endpoint runs now.
      return { error, deleted };
    }
    for (const name of created) {
      try {
        await this.call(`DeleteEndpointConfig ${name}`, () => this.deps.sagemaker.send(new DeleteEndpointConfigCommand({ EndpointConfigName: name })));
        deleted.push(name);
      } catch (err) {
        this.notes.push(`Could not delete endpoint configuration ${name} (${(err as Error).message}); delete it by hand: aws sagemaker delete-endpoint-config --endpoint-config-name ${name}`);
      }
    }
    return { deleted };
  }

  private async readCloudWatch(runs: AbRunRecord[]): Promise<void> {
    const cw = this.deps.cloudwatch;
    if (cw === undefined || runs.length === 0) return;
    const { facts } = this.options.plan;
    const delay = this.options.cloudWatchDelayMs ?? 180_000;
    const lastEnd = Math.max(...runs.map((r) => r.wallWindow.endMs));
    const wait = lastEnd + delay - this.deps.clock.now();
    if (wait > 0) {
      this.deps.log(`waiting ${Math.ceil(wait / 1000)} s for CloudWatch to publish the last run's metrics`);
      await this.deps.clock.sleep(wait);
    }
    for (const run of runs) {
      const variants = run.variant !== undefined ? [run.variant] : facts.variants.map((v) => v.name);
      try {
        const views: Record<string, CloudWatchView> = {};
        for (const variantName of variants) {
          views[variantName] = await readCloudWatchView({
            cloudwatch: cw,
            target: { endpointName: facts.endpointName, variantName },
            window: run.wallWindow,
            publishSeconds: facts.metricPublishSeconds,
            clock: this.deps.clock,
            retry: this.options.retry,
            sidecarNamespace: this.options.sidecarNamespace,
          });
        }
        run.cloudwatch = views;
      } catch (err) {
        run.cloudwatchError = (err as Error).message;
      }
    }
  }
}

/** Variants mode needs ≥ 2 variants that differ only in name, RoutingConfig and weight; returns what else differs. */
export function checkVariantsComparable(config: DescribeEndpointConfigCommandOutput): void {
  const variants = config.ProductionVariants ?? [];
  if (variants.length < 2) {
    throw new AbPlanError(`--variants needs an endpoint with at least two production variants (got ${variants.length}); deploy the two-variant example (examples/routing-ab-variants-stack.ts)`);
  }
  const strip = (v: (typeof variants)[number]): string => {
    const { VariantName: _n, RoutingConfig: _r, InitialVariantWeight: _w, ...rest } = v;
    return canonicalJson(rest);
  };
  const first = strip(variants[0]);
  const differing = variants.filter((v) => strip(v) !== first).map((v) => v.VariantName);
  if (differing.length > 0) {
    throw new AbPlanError(
      `--variants compares only variants that differ in RoutingConfig alone; ${differing.join(', ')} differ from ${variants[0].VariantName} in more (model, instance type or count, or other settings)`,
    );
  }
}

/** JSON with object keys sorted at every level, so equal settings compare equal whatever the key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function instanceCountsOf(d: DescribeEndpointCommandOutput): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of d.ProductionVariants ?? []) if (v.VariantName !== undefined) counts[v.VariantName] = v.CurrentInstanceCount ?? v.DesiredInstanceCount ?? 0;
  return counts;
}
