import {
  CreateEndpointConfigCommand,
  DeleteEndpointConfigCommand,
  DescribeEndpointCommand,
  DescribeEndpointConfigCommand,
  UpdateEndpointCommand,
  type CreateEndpointConfigCommandInput,
  type DeploymentConfig,
  type UpdateEndpointCommandInput,
  type DescribeEndpointCommandOutput,
  type DescribeEndpointConfigCommandOutput,
  type ProductionVariantRoutingConfig,
  type SageMakerClient,
} from '@aws-sdk/client-sagemaker';
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { LiveBenchmarkResult } from '../benchmark/live-benchmark';
import type { WorkloadRequest } from '../workload/workload-request';
import { finishCommands, TRANSITIONAL_STATES } from './ab-finish';
import { AbPlanError, copyConfigName, deploymentFor, type AbPlan, type AbStrategy } from './ab-plan';
import { readCloudWatchView, runWallWindow, type CloudWatchView } from './cloudwatch-view';
import { gpusPerInstance, routingLabel } from './endpoint-facts';
import {
  backoffDelayMs,
  classifyControlPlaneError,
  DEFAULT_RETRY_POLICY,
  ThrottlingExhaustedError,
  type Clock,
  type RetryPolicy,
} from './throttling-retry';
import { partitionByVariant, variantFor } from './variant-split';

/**
 * `prefix-router ab`: runs one workload per routing strategy on a live endpoint, or once split between
 * production variants, and puts the endpoint back where it began.
 *
 * Invariant (tested under injected faults and signals at every step, test/router/aws/ab-faults.test.ts): the run
 * ends with the endpoint InService on its original configuration, no deployment pending and every copy deleted —
 * or it says it did not (`finished: false`, exit 3) with the endpoint's state and the exact commands that finish
 * the job. A configuration the endpoint uses (current, pending, or part of a mixed fleet) is never deleted.
 *
 * Switch mode: every copy (the original configuration differing only in each variant's RoutingConfig) is created
 * first, so a refused copy costs no deployment. Then per strategy: UpdateEndpoint (RetainAllVariantProperties, a
 * DeploymentConfig recomputed from the instance count at that moment) → wait for InService on that configuration
 * → run the workload. Then, whatever happened, the restore: wait out any deployment, recreate the original
 * configuration from the description held in memory if someone deleted it, UpdateEndpoint back, wait, and delete
 * the copies. The restore persists through every error that is not permanent (capped exponential backoff with
 * full jitter) until `restoreTimeoutMs`; expired credentials are re-resolved through the credential chain.
 * Abort (a signal) is checked before every mutating call and ends every sleep; after it, nothing but the
 * restore is sent.
 */
export class AbRunError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AbRunError';
  }
}

export class WaiterTimeoutError extends AbRunError {
  constructor(
    readonly endpointName: string,
    readonly expectedConfig: string,
    readonly waitedMs: number,
    readonly lastStatus: string,
  ) {
    super(
      `endpoint '${endpointName}' was still ${lastStatus} after ${Math.round(waitedMs / 60000)} min waiting for configuration '${expectedConfig}'`,
    );
    this.name = 'WaiterTimeoutError';
  }
}

export class UpdateFailedError extends AbRunError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpdateFailedError';
  }
}

/** A call that kept failing with errors worth retrying until its attempts or its deadline ran out. */
export class RetriesExhaustedError extends AbRunError {
  constructor(
    readonly what: string,
    readonly attempts: number,
    readonly lastError: unknown,
    why: string,
  ) {
    super(
      `${what} failed ${attempts} time(s) (${why}); last error: ${(lastError as Error)?.name ?? 'Error'}: ${(lastError as Error)?.message ?? String(lastError)}`,
      { cause: lastError },
    );
    this.name = 'RetriesExhaustedError';
  }
}

/** Thrown where an abort stops the forward run (the restore still runs). */
export class AbAbortedError extends AbRunError {
  constructor(what: string) {
    super(`interrupted before ${what}`);
    this.name = 'AbAbortedError';
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
  /** A fresh client with a freshly resolved credential chain, for when credentials expire mid-run. */
  readonly renewSageMaker?: () => SageMakerClient;
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
  /** A signal: stops the workload, any wait and any backoff, and every further change but the restore. */
  readonly signal?: AbortSignal;
  /** DescribeEndpoint polling interval. Default 30 s (SageMaker's own waiter polls every 30 s). */
  readonly pollIntervalMs?: number;
  /** Longest wait for one switch. Default: the deployment's time limit + 30 min. */
  readonly switchTimeoutMs?: number;
  /** Longest the restore keeps trying (waiting out deployments, retrying errors). Default 2 × the switch wait, at least 1 h. */
  readonly restoreTimeoutMs?: number;
  /** Wait this long after a run window before reading CloudWatch (metrics land 1–3 min late). Default 3 min. */
  readonly cloudWatchDelayMs?: number;
  readonly retry?: RetryPolicy;
  /** Namespace of the router sidecar's EMF metrics (PREFIX_ROUTER_EMF_NAMESPACE). Default PrefixRouter. */
  readonly sidecarNamespace?: string;
  /** Where the original configuration's CreateEndpointConfig input was saved (for the finishing commands). */
  readonly originalConfigFile?: string;
}

export interface AbRunRecord {
  readonly label: string;
  readonly routing: ProductionVariantRoutingConfig | undefined;
  /** The variant the run's figures are for (variants mode), else every variant. */
  readonly variant?: string;
  readonly configName?: string;
  readonly result: LiveBenchmarkResult;
  /** Wall-clock window of the whole run, warm-up included (epoch ms), for CloudWatch. */
  readonly wallWindow: { readonly startMs: number; readonly endMs: number };
  /** Instances per variant when the run started (autoscaling may change them between runs; compare like with like). */
  readonly instanceCounts?: Readonly<Record<string, number>>;
  /** GPUs per instance of the variant's instance type, when known (GPUUtilization is 0–100 × this). */
  readonly gpusPerInstance?: number;
  /** One view per variant read (switch mode: every variant of the endpoint; variants mode: its own). */
  cloudwatch?: Record<string, CloudWatchView>;
  cloudwatchError?: string;
}

/** The endpoint as last seen by the restore. */
export interface EndpointSnapshot {
  readonly status: string;
  readonly configName: string | undefined;
  readonly pendingConfig: string | undefined;
  readonly failureReason: string | undefined;
}

export interface AbOutcome {
  readonly runs: AbRunRecord[];
  readonly interrupted: boolean;
  /** What stopped the A/B early (not set when every strategy ran). */
  readonly failure?: Error;
  /** InService on the original configuration with no deployment pending. */
  readonly restored: boolean;
  /** Restored and every copy deleted: the endpoint is where it began. */
  readonly finished: boolean;
  readonly restoreError?: Error;
  readonly createdConfigs: readonly string[];
  readonly deletedConfigs: readonly string[];
  /** Copies left behind (in use, or not deleted in time). */
  readonly leftConfigs: readonly string[];
  readonly finalState?: EndpointSnapshot;
  /** When not finished: the exact commands that finish the job. */
  readonly finishCommands: readonly string[];
  readonly notes: readonly string[];
  /** Shadow mode (shadow-ab.ts): what the run created and what is left, by kind; the live endpoint was only read. */
  readonly shadow?: {
    readonly created: {
      readonly components: readonly string[];
      readonly endpoints: readonly string[];
      readonly configs: readonly string[];
    };
    readonly left: {
      readonly components: readonly string[];
      readonly endpoints: readonly string[];
      readonly configs: readonly string[];
    };
    readonly leftHourlyUsd: number | undefined;
  };
}

export { copyConfigName } from './ab-plan';

/** CreateEndpointConfig input equal to the described configuration except each variant's RoutingConfig (undefined: unchanged). */
export function configCopyInput(
  config: DescribeEndpointConfigCommandOutput,
  name: string,
  routing?: ProductionVariantRoutingConfig,
): CreateEndpointConfigCommandInput {
  // Output-only fields are left out; everything CreateEndpointConfig accepts is copied as described.
  const {
    EndpointConfigName: _name,
    EndpointConfigArn: _arn,
    CreationTime: _created,
    $metadata: _meta,
    ...rest
  } = config;
  return {
    ...rest,
    EndpointConfigName: name,
    ProductionVariants: (config.ProductionVariants ?? []).map((v) =>
      routing === undefined ? { ...v } : { ...v, RoutingConfig: routing },
    ),
  };
}

/** What a restore did: the copies deleted and left, the endpoint as last seen, and the rollout it used. */
interface RestoreResult {
  error?: Error;
  deleted: string[];
  left: string[];
  snapshot?: EndpointSnapshot;
  deploymentConfig?: DeploymentConfig;
  originalMissing: boolean;
}

/** What a restore has seen and sent so far, kept for its report whichever step fails. */
interface RestoreProgress {
  last?: DescribeEndpointCommandOutput;
  deploymentConfig?: DeploymentConfig;
  sent: number;
}

/** The endpoint as the restore last saw it, for the report. */
function snapshotOf(last: DescribeEndpointCommandOutput | undefined): EndpointSnapshot | undefined {
  return last === undefined
    ? undefined
    : {
        status: last.EndpointStatus ?? 'unknown',
        configName: last.EndpointConfigName,
        pendingConfig: last.PendingDeploymentSummary?.EndpointConfigName,
        failureReason: last.FailureReason,
      };
}

/** "Restored" in full: InService on `config` and no deployment pending. Nothing less counts. */
export function isRestoredOn(d: DescribeEndpointCommandOutput, config: string): boolean {
  return (
    d.EndpointStatus === 'InService' && d.EndpointConfigName === config && d.PendingDeploymentSummary === undefined
  );
}

/** Configurations the endpoint uses now: current and pending deployment. */
export function configsInUse(d: DescribeEndpointCommandOutput): Set<string> {
  const used = new Set<string>();
  if (d.EndpointConfigName) used.add(d.EndpointConfigName);
  if (d.PendingDeploymentSummary?.EndpointConfigName) used.add(d.PendingDeploymentSummary.EndpointConfigName);
  return used;
}

function isConfigNotFound(err: unknown): boolean {
  const e = err as { name?: string; message?: string };
  return (
    (e?.name === 'ValidationException' || e?.name === 'ResourceNotFound') &&
    /could not find|not found|does not exist/i.test(e.message ?? '')
  );
}

function isAlreadyExists(err: unknown): boolean {
  const e = err as { name?: string; message?: string };
  return e?.name === 'ValidationException' && /already exist/i.test(e.message ?? '');
}

/** Most UpdateEndpoint calls the restore sends: a restore SageMaker rolls back repeatedly will not succeed by retrying. */
export const MAX_RESTORE_DEPLOYMENTS = 3;

export interface CallOptions {
  /** Forward calls: abort is checked before every attempt and ends the backoff. */
  readonly signal?: AbortSignal;
  /** Restore calls: retry every non-permanent error until this epoch ms instead of a fixed number of attempts. */
  readonly deadline?: number;
}

/**
 * The A/B tools' one way to send a control-plane call. Throttling and transient errors are retried with
 * full-jitter backoff: a fixed number of attempts on the forward path (abort is checked before every attempt and
 * ends the backoff), until a deadline in a restore or cleanup; expired credentials renew the client first.
 * In-progress refusals and permanent errors go to the caller, which knows what they mean.
 */
export class ControlPlaneCaller {
  private current: SageMakerClient;

  constructor(
    private readonly deps: {
      readonly sagemaker: SageMakerClient;
      readonly renewSageMaker?: () => SageMakerClient;
      readonly clock: Clock;
      readonly log: (line: string) => void;
    },
    readonly retry: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {
    this.current = deps.sagemaker;
  }

  async call<T>(what: string, send: (sm: SageMakerClient) => Promise<T>, opts: CallOptions = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (opts.signal?.aborted) throw new AbAbortedError(what);
      try {
        return await send(this.current);
      } catch (err) {
        const kind = classifyControlPlaneError(err);
        if (kind === 'permanent' || kind === 'in-progress') throw err;
        if (kind === 'credentials') this.renewCredentials(what);
        const delay = backoffDelayMs(attempt, this.deps.clock, this.retry);
        if (opts.deadline === undefined) {
          if (attempt >= this.retry.maxAttempts) {
            if (kind === 'throttling') throw new ThrottlingExhaustedError(what, attempt, err);
            throw new RetriesExhaustedError(what, attempt, err, `${kind} errors, ${attempt} attempts`);
          }
        } else if (this.deps.clock.now() + delay >= opts.deadline) {
          throw new RetriesExhaustedError(what, attempt, err, `${kind} errors until the restore's time limit`);
        }
        this.deps.log(
          `${what}: ${kind === 'throttling' ? 'throttled' : `${(err as Error).name ?? 'error'}: ${(err as Error).message}`} (attempt ${attempt}); retrying in ${(delay / 1000).toFixed(1)} s`,
        );
        await this.sleep(delay, opts.signal);
      }
    }
  }

  /** Sleeps; an abort ends the sleep early by throwing AbAbortedError. */
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    try {
      await this.deps.clock.sleep(ms, signal);
    } catch (err) {
      if (signal?.aborted) throw new AbAbortedError('the end of a wait');
      throw err;
    }
  }

  private renewCredentials(what: string): void {
    if (this.deps.renewSageMaker === undefined) return;
    this.deps.log(
      `${what}: the credentials expired; re-resolving the credential chain (refresh them now if they come from a login: aws sso login, new keys)`,
    );
    const old = this.current;
    this.current = this.deps.renewSageMaker();
    if (old !== this.deps.sagemaker) old.destroy();
  }
}

export class RoutingAb {
  private readonly poll: number;
  private readonly notes: string[] = [];
  private readonly retry: RetryPolicy;
  private readonly caller: ControlPlaneCaller;
  /** The original configuration was found deleted and is not recreated yet. */
  private originalGone = false;

  constructor(
    private readonly deps: AbDeps,
    private readonly options: AbRunOptions,
  ) {
    this.poll = options.pollIntervalMs ?? 30_000;
    this.retry = options.retry ?? DEFAULT_RETRY_POLICY;
    this.caller = new ControlPlaneCaller(deps, this.retry);
  }

  private get endpointName(): string {
    return this.options.plan.facts.endpointName;
  }

  private call<T>(what: string, send: (sm: SageMakerClient) => Promise<T>, opts: CallOptions = {}): Promise<T> {
    return this.caller.call(what, send, opts);
  }

  private sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.caller.sleep(ms, signal);
  }

  private describe(opts: CallOptions = {}): Promise<DescribeEndpointCommandOutput> {
    return this.call(
      `DescribeEndpoint ${this.endpointName}`,
      (sm) => sm.send(new DescribeEndpointCommand({ EndpointName: this.endpointName })),
      opts,
    );
  }

  /**
   * Polls DescribeEndpoint until the endpoint is InService on `expected` with nothing pending. InService on
   * another configuration after a transition means SageMaker rolled the update back; UpdateRollbackFailed,
   * OutOfService, Failed and Deleting end the wait at once; the deadline ends it too.
   */
  async waitForConfig(
    expected: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<DescribeEndpointCommandOutput> {
    const started = this.deps.clock.now();
    const deadline = started + (this.options.switchTimeoutMs ?? timeoutMs);
    let sawTransition = false;
    let polls = 0;
    for (;;) {
      const d = await this.describe({ signal });
      polls++;
      const status = d.EndpointStatus ?? 'unknown';
      const reason = d.FailureReason ? ` (${d.FailureReason})` : '';
      if (isRestoredOn(d, expected)) return d;
      if (status === 'InService' && d.PendingDeploymentSummary === undefined) {
        // Right after UpdateEndpoint a describe may still show the old state; a rollback always passes through a transition.
        if (sawTransition || polls >= 3)
          throw new UpdateFailedError(
            `the update to '${expected}' did not take: '${this.endpointName}' is InService on '${d.EndpointConfigName}'${reason}; SageMaker rolled it back`,
          );
      } else if (status === 'UpdateRollbackFailed') {
        throw new UpdateFailedError(
          `the update to '${expected}' failed and so did its rollback: '${this.endpointName}' is UpdateRollbackFailed (serving a mix of configurations)${reason}`,
        );
      } else if (status === 'OutOfService' || status === 'Failed' || status === 'Deleting') {
        throw new UpdateFailedError(`endpoint '${this.endpointName}' is ${status}${reason}`);
      } else if (TRANSITIONAL_STATES.has(status) || d.PendingDeploymentSummary !== undefined) sawTransition = true;
      if (this.deps.clock.now() >= deadline)
        throw new WaiterTimeoutError(this.endpointName, expected, this.deps.clock.now() - started, status);
      await this.sleep(this.poll, signal);
    }
  }

  /** Waits (abortably) until no deployment runs, then returns the endpoint as it is. */
  private async settled(signal: AbortSignal, timeoutMs: number): Promise<DescribeEndpointCommandOutput> {
    const started = this.deps.clock.now();
    for (;;) {
      const d = await this.describe({ signal });
      if (!TRANSITIONAL_STATES.has(d.EndpointStatus ?? '') && d.PendingDeploymentSummary === undefined) return d;
      if (this.deps.clock.now() - started >= timeoutMs)
        throw new WaiterTimeoutError(
          this.endpointName,
          d.EndpointConfigName ?? '',
          this.deps.clock.now() - started,
          d.EndpointStatus ?? 'unknown',
        );
      this.deps.log(`endpoint is ${d.EndpointStatus}; waiting before the next switch`);
      await this.sleep(this.poll, signal);
    }
  }

  private async switchTo(
    name: string,
    copy: DescribeEndpointConfigCommandOutput,
    signal: AbortSignal,
  ): Promise<DescribeEndpointCommandOutput> {
    const { plan } = this.options;
    const initial = plan.facts.variants.reduce((n, v) => n + v.instanceCount, 0);
    const before = await this.settled(signal, deploymentFor(plan.facts.endpoint, copy, initial).waitMs);
    if (before.EndpointStatus !== 'InService')
      throw new UpdateFailedError(
        `endpoint '${this.endpointName}' is ${before.EndpointStatus}, not InService; no switch is sent`,
      );
    const deployment = deploymentFor(
      { ...before, LastDeploymentConfig: plan.facts.endpoint.LastDeploymentConfig },
      copy,
      initial,
    );
    this.deps.log(
      `UpdateEndpoint ${this.endpointName} → ${name} (${deployment.style}, ${deployment.batch} of ${deployment.instances} instance(s) per step); waiting for InService`,
    );
    await this.call(
      `UpdateEndpoint ${this.endpointName} → ${name}`,
      (sm) => sm.send(new UpdateEndpointCommand(this.updateInput(name, deployment.deploymentConfig))),
      { signal },
    ).catch(async (err: unknown) => {
      // A retried UpdateEndpoint whose first attempt took effect is refused as in progress: that deployment is ours.
      if (classifyControlPlaneError(err) !== 'in-progress') throw err;
      const d = await this.describe({ signal });
      if (d.PendingDeploymentSummary?.EndpointConfigName !== name) throw err;
    });
    return this.waitForConfig(name, deployment.waitMs, signal);
  }

  private updateInput(configName: string, dc: DeploymentConfig | undefined): UpdateEndpointCommandInput {
    return {
      EndpointName: this.endpointName,
      EndpointConfigName: configName,
      // Keeps the instance count (autoscaling) and weights; RoutingConfig is not a variant property, so it changes.
      RetainAllVariantProperties: true,
      ...(dc !== undefined ? { DeploymentConfig: dc } : {}),
    };
  }

  private async createCopy(name: string, input: CreateEndpointConfigCommandInput, signal: AbortSignal): Promise<void> {
    try {
      await this.call(`CreateEndpointConfig ${name}`, (sm) => sm.send(new CreateEndpointConfigCommand(input)), {
        signal,
      });
    } catch (err) {
      // A retry after a lost answer finds the copy the first attempt made (the name carries this run's id).
      if (!isAlreadyExists(err)) throw err;
    }
  }

  /** Runs the plan. Never throws for a failure after the first change: the outcome carries it, with the restore's result. */
  async run(): Promise<AbOutcome> {
    const { plan } = this.options;
    const signal = this.options.signal ?? new AbortController().signal;
    const runs: AbRunRecord[] = [];
    let failure: Error | undefined;
    if (plan.mode === 'variants') {
      try {
        runs.push(...(await this.runVariants(signal)));
      } catch (err) {
        failure = err as Error;
      }
      await this.readCloudWatch(runs, signal);
      return {
        runs,
        interrupted: signal.aborted,
        failure,
        restored: true,
        finished: true,
        createdConfigs: [],
        deletedConfigs: [],
        leftConfigs: [],
        finishCommands: [],
        notes: this.notes,
      };
    }
    // Names whose CreateEndpointConfig was sent: each may exist, so the restore deletes each.
    const attempted: string[] = [];
    const copies = new Map<string, DescribeEndpointConfigCommandOutput>();
    try {
      for (const [index, strategy] of plan.strategies.entries()) {
        const name = copyConfigName(plan.facts.configName, this.options.runId, index);
        if (signal.aborted) throw new AbAbortedError(`CreateEndpointConfig ${name}`);
        this.deps.log(`[${strategy.label}] CreateEndpointConfig ${name}`);
        attempted.push(name);
        const input = configCopyInput(plan.facts.config, name, strategy.routing);
        await this.createCopy(name, input, signal);
        copies.set(name, { ...plan.facts.config, ...input });
      }
      for (const [index, strategy] of plan.strategies.entries()) {
        const name = attempted[index];
        if (signal.aborted) throw new AbAbortedError(`UpdateEndpoint → ${name}`);
        this.deps.log(`[${strategy.label}] switching to ${name}`);
        const live = await this.switchTo(name, copies.get(name)!, signal);
        this.deps.log(`[${strategy.label}] InService; running the workload`);
        runs.push({
          ...(await this.runOne(strategy, name, signal)),
          instanceCounts: instanceCountsOf(live),
          gpusPerInstance: gpusPerInstance(plan.facts.variants[0]?.instanceType),
        });
      }
    } catch (err) {
      if (!(err instanceof AbAbortedError) || !signal.aborted) failure = err as Error;
      this.deps.log(`stopping: ${(err as Error).message}`);
    }
    const restore = await this.restore(attempted);
    await this.readCloudWatch(runs, signal);
    const finished = restore.error === undefined && restore.left.length === 0;
    return {
      runs,
      interrupted: signal.aborted,
      failure: signal.aborted && failure === undefined ? new AbRunError('interrupted by a signal') : failure,
      restored: restore.error === undefined,
      finished,
      restoreError: restore.error,
      createdConfigs: attempted,
      deletedConfigs: restore.deleted,
      leftConfigs: restore.left,
      finalState: restore.snapshot,
      finishCommands: finished
        ? []
        : finishCommands({
            endpointName: this.endpointName,
            originalConfig: plan.facts.configName,
            copies: restore.error === undefined ? restore.left : attempted,
            status: restore.error === undefined ? 'InService' : (restore.snapshot?.status ?? 'unknown'),
            deploymentConfig: restore.deploymentConfig,
            recreateFrom: restore.originalMissing ? this.options.originalConfigFile : undefined,
          }).filter((c) => restore.error !== undefined || c.includes('delete-endpoint-config')),
      notes: this.notes,
    };
  }

  private async runOne(strategy: AbStrategy, configName: string, signal: AbortSignal): Promise<AbRunRecord> {
    const before = this.deps.clock.now();
    const result = await this.deps.runWorkload({ label: strategy.label, signal });
    return {
      label: strategy.label,
      routing: strategy.routing,
      configName,
      result,
      wallWindow: runWallWindow(before, result),
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
    const parts = partitionByVariant(result, assigned, names);
    return facts.variants.map((v) => ({
      label: `${v.name}: ${routingLabel(v.routing)}`,
      routing: v.routing,
      variant: v.name,
      result: parts.get(v.name)!,
      wallWindow: runWallWindow(before, result),
      gpusPerInstance: gpusPerInstance(v.instanceType),
    }));
  }

  /** The original configuration exists (recreated from the description held in memory when someone deleted it). */
  private async ensureOriginal(deadline: number): Promise<boolean> {
    const original = this.options.plan.facts.configName;
    try {
      await this.call(
        `DescribeEndpointConfig ${original}`,
        (sm) => sm.send(new DescribeEndpointConfigCommand({ EndpointConfigName: original })),
        { deadline },
      );
      return false;
    } catch (err) {
      if (!isConfigNotFound(err)) throw err;
    }
    this.originalGone = true;
    this.deps.log(
      `restore: the original configuration ${original} was deleted meanwhile; recreating it from the description read before the run`,
    );
    this.notes.push(
      `The original configuration ${original} had been deleted during the run; it was recreated from the description read before the run (same name and settings).`,
    );
    try {
      await this.call(
        `CreateEndpointConfig ${original}`,
        (sm) => sm.send(new CreateEndpointConfigCommand(configCopyInput(this.options.plan.facts.config, original))),
        { deadline },
      );
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    this.originalGone = false;
    return true;
  }

  private restoreTimeoutMs(): number {
    if (this.options.restoreTimeoutMs !== undefined) return this.options.restoreTimeoutMs;
    const { facts } = this.options.plan;
    const wait = deploymentFor(
      facts.endpoint,
      facts.config,
      facts.variants.reduce((n, v) => n + v.instanceCount, 0),
    ).waitMs;
    return Math.max(3_600_000, 2 * (this.options.switchTimeoutMs ?? wait));
  }

  /**
   * Back to the original configuration: wait out any deployment, UpdateEndpoint to the original (recreated if
   * deleted) until the endpoint is InService on it with nothing pending, then delete every copy the endpoint does
   * not use. Not abortable (it is what an abort leads to); bounded by the restore's time limit.
   */
  private async restore(attempted: readonly string[]): Promise<RestoreResult> {
    const { facts } = this.options.plan;
    const deadline = this.deps.clock.now() + this.restoreTimeoutMs();
    const initial = facts.variants.reduce((n, v) => n + v.instanceCount, 0);
    const progress: RestoreProgress = {
      deploymentConfig: deploymentFor(facts.endpoint, facts.config, initial).deploymentConfig,
      sent: 0,
    };
    const unrestored = (error: Error, deleted: string[] = []): RestoreResult => {
      this.deps.log(`restore FAILED: ${error.message}`);
      // The copies stay: any of them may be what the endpoint runs now.
      return {
        error,
        deleted,
        left: attempted.filter((n) => !deleted.includes(n)),
        snapshot: snapshotOf(progress.last),
        deploymentConfig: progress.deploymentConfig,
        originalMissing: this.originalGone,
      };
    };
    try {
      await this.switchBackToOriginal(progress, deadline, initial);
    } catch (err) {
      // Whatever went wrong, the finishing commands switch to the original configuration: make sure it exists
      // (one more try, past the deadline if need be); if it cannot be, they recreate it from the saved file.
      await this.ensureOriginal(this.deps.clock.now() + backoffDelayMs(1, this.deps.clock, this.retry) + 1).catch(
        () => undefined,
      );
      return unrestored(err as Error);
    }
    const { deleted, left } = await this.deleteUnusedCopies(attempted, progress, deadline);
    try {
      // Last, as the endpoint was found: its own configuration exists (someone may have deleted it meanwhile).
      await this.ensureOriginal(deadline);
    } catch (err) {
      return unrestored(err as Error, deleted);
    }
    const { deploymentConfig } = progress;
    return { deleted, left, snapshot: snapshotOf(progress.last), deploymentConfig, originalMissing: this.originalGone };
  }

  /**
   * Polls the endpoint until it is InService on the original configuration with nothing pending: waits out
   * deployments, sends UpdateEndpoint back (at most MAX_RESTORE_DEPLOYMENTS times), and throws where it cannot.
   */
  private async switchBackToOriginal(progress: RestoreProgress, deadline: number, initial: number): Promise<void> {
    const original = this.options.plan.facts.configName;
    for (;;) {
      const last = await this.describe({ deadline });
      progress.last = last;
      const status = last.EndpointStatus ?? 'unknown';
      if (isRestoredOn(last, original)) break;
      if (this.deps.clock.now() >= deadline)
        throw new AbRunError(
          `the restore's time limit ran out with '${this.endpointName}' ${status} on '${last.EndpointConfigName}'`,
        );
      if (TRANSITIONAL_STATES.has(status) || last.PendingDeploymentSummary !== undefined) {
        this.deps.log(
          `restore: endpoint is ${status}${last.PendingDeploymentSummary ? ` (deploying ${last.PendingDeploymentSummary.EndpointConfigName})` : ''}; waiting before switching back`,
        );
        await this.sleep(Math.min(this.poll, Math.max(0, deadline - this.deps.clock.now())));
        continue;
      }
      if (status === 'Failed' || status === 'Deleting') {
        throw new AbRunError(
          `endpoint '${this.endpointName}' is ${status}${last.FailureReason ? ` (${last.FailureReason})` : ''}: UpdateEndpoint cannot restore it`,
        );
      }
      if (progress.sent >= MAX_RESTORE_DEPLOYMENTS) {
        throw new AbRunError(
          `${progress.sent} restore deployments did not bring '${this.endpointName}' back: it is ${status} on '${last.EndpointConfigName}'${last.FailureReason ? ` (${last.FailureReason})` : ''}`,
        );
      }
      // InService on a copy, UpdateRollbackFailed (a mixed fleet, whatever name it shows) or OutOfService: switch back.
      await this.sendRestoreUpdate(last, progress, deadline, initial);
      await this.sleep(Math.min(this.poll, Math.max(0, deadline - this.deps.clock.now())));
    }
    // Where it began includes the configuration itself (CloudFormation owns it): recreate it if someone deleted it.
    await this.ensureOriginal(deadline);
    this.deps.log(`restore: ${this.endpointName} is InService on its original configuration ${original}`);
  }

  /** One UpdateEndpoint back to the original configuration (recreated first if deleted), rolled as the endpoint was. */
  private async sendRestoreUpdate(
    last: DescribeEndpointCommandOutput,
    progress: RestoreProgress,
    deadline: number,
    initial: number,
  ): Promise<void> {
    const { facts } = this.options.plan;
    const original = facts.configName;
    const status = last.EndpointStatus ?? 'unknown';
    await this.ensureOriginal(deadline);
    // LastDeploymentConfig is now the tool's own last one: the endpoint's own is the one read before the run.
    const deployment = deploymentFor(
      { ...last, LastDeploymentConfig: facts.endpoint.LastDeploymentConfig },
      facts.config,
      initial,
    );
    progress.deploymentConfig = deployment.deploymentConfig;
    this.deps.log(
      `restore: UpdateEndpoint ${this.endpointName} → ${original} from ${status} on ${last.EndpointConfigName} (${deployment.style}, ${deployment.batch} of ${deployment.instances} per step); waiting for InService`,
    );
    try {
      await this.call(
        `UpdateEndpoint ${this.endpointName} → ${original}`,
        (sm) => sm.send(new UpdateEndpointCommand(this.updateInput(original, deployment.deploymentConfig))),
        { deadline },
      );
      progress.sent++;
    } catch (err) {
      // Refused because a deployment (maybe this very update, sent before an answer was lost) runs: wait it out.
      if (classifyControlPlaneError(err) !== 'in-progress') throw err;
    }
  }

  /** Deletes each copy the endpoint does not use (checked right before each delete); notes the ones left. */
  private async deleteUnusedCopies(
    attempted: readonly string[],
    progress: RestoreProgress,
    deadline: number,
  ): Promise<{ deleted: string[]; left: string[] }> {
    const deleted: string[] = [];
    const left: string[] = [];
    for (const name of attempted) {
      try {
        // Never delete a configuration in use: check right before each delete.
        const d = await this.describe({ deadline });
        progress.last = d;
        // A mixed fleet (UpdateRollbackFailed) may run a configuration DescribeEndpoint does not name: delete nothing then.
        if (configsInUse(d).has(name) || d.EndpointStatus === 'UpdateRollbackFailed') {
          left.push(name);
          this.notes.push(
            `Configuration ${name} was not deleted: the endpoint uses it (${d.EndpointStatus} on ${d.EndpointConfigName}).`,
          );
          continue;
        }
        await this.call(
          `DeleteEndpointConfig ${name}`,
          (sm) => sm.send(new DeleteEndpointConfigCommand({ EndpointConfigName: name })),
          { deadline },
        );
        deleted.push(name);
      } catch (err) {
        if (isConfigNotFound(err)) {
          deleted.push(name); // never created (its CreateEndpointConfig did not take effect) or already gone
          continue;
        }
        left.push(name);
        this.notes.push(
          `Could not delete endpoint configuration ${name} (${(err as Error).message}); delete it by hand: aws sagemaker delete-endpoint-config --endpoint-config-name ${name}`,
        );
      }
    }
    return { deleted, left };
  }

  private async readCloudWatch(runs: AbRunRecord[], signal: AbortSignal): Promise<void> {
    const cw = this.deps.cloudwatch;
    if (cw === undefined || runs.length === 0) return;
    const { facts } = this.options.plan;
    const delay = this.options.cloudWatchDelayMs ?? 180_000;
    const lastEnd = Math.max(...runs.map((r) => r.wallWindow.endMs));
    const wait = lastEnd + delay - this.deps.clock.now();
    if (wait > 0) {
      this.deps.log(
        `waiting ${Math.ceil(wait / 1000)} s for CloudWatch to publish the last run's metrics${signal.aborted ? '' : ' (a signal skips the wait and reads what is there)'}`,
      );
      try {
        if (!signal.aborted) await this.deps.clock.sleep(wait, signal);
      } catch {
        // Interrupted: read what CloudWatch has now.
      }
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
    throw new AbPlanError(
      `--variants needs an endpoint with at least two production variants (got ${variants.length}); deploy the two-variant example (examples/routing-ab-variants-stack.ts)`,
    );
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
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function instanceCountsOf(d: DescribeEndpointCommandOutput): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of d.ProductionVariants ?? [])
    if (v.VariantName !== undefined) counts[v.VariantName] = v.CurrentInstanceCount ?? v.DesiredInstanceCount ?? 0;
  return counts;
}
