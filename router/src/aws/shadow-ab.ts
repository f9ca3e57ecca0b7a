import {
  CreateEndpointCommand,
  CreateEndpointConfigCommand,
  CreateInferenceComponentCommand,
  DeleteEndpointCommand,
  DeleteEndpointConfigCommand,
  DeleteInferenceComponentCommand,
  DescribeEndpointCommand,
  DescribeInferenceComponentCommand,
  type CreateEndpointConfigCommandInput,
  type CreateInferenceComponentCommandInput,
  type DescribeEndpointCommandOutput,
  type InferenceComponentSpecification,
  type InferenceComponentSpecificationSummary,
  type SageMakerClient,
  type Tag,
} from '@aws-sdk/client-sagemaker';
import type { LiveBenchmarkResult } from '../benchmark/live-benchmark';
import { LIST_PRICE_SOURCE, LIST_PRICE_USD_PER_HOUR } from '../common/instance-prices';
import { deleteResourceCommands, TRANSITIONAL_STATES } from './ab-finish';
import { AbPlanError, MINUTES_PER_STEP, usd, type AbStrategy } from './ab-plan';
import { runWallWindow } from './cloudwatch-view';
import { AwsSetupError, isNotFound, routingLabel, type EndpointFacts } from './endpoint-facts';
import { listEndpointInferenceComponents } from './inference-components';
import {
  AbAbortedError,
  AbRunError,
  configCopyInput,
  ControlPlaneCaller,
  RetriesExhaustedError,
  type CallOptions,
} from './routing-ab';
import { SAGEMAKER_NAME_MAX_LENGTH } from './sagemaker-names';
import { classifyControlPlaneError, withThrottlingRetry, type Clock, type RetryPolicy } from './throttling-retry';

/**
 * `prefix-router ab --shadow`: a routing A/B for an endpoint that hosts inference components, which never changes
 * the live endpoint. For each strategy it builds a shadow: a copy of the live endpoint configuration with that
 * strategy's RoutingConfig (instances: the live variant's current count), an endpoint on it, and a copy of every
 * live component (bases with their current copy count, at least 1, then adapters on the shadow's base). All
 * shadows then serve the same workload at the same time, and everything the run created is deleted.
 *
 * Invariant (tested under injected faults and at every step of an interrupt, test/router/aws/ab-shadow.test.ts):
 * the live endpoint, its configuration and its components are only read — no mutating call names them; every
 * resource the run creates carries the run-unique prefix `ab<runId>-<n>-`; and at exit every created resource is
 * gone, or the outcome says it is not (`finished: false`, exit 3) with exactly the resources left and the AWS CLI
 * commands that delete them. Abort (a signal) is checked before every mutating call; after it only deletes are
 * sent. The cleanup persists through every error (throttling, 5xx, even a refusal: it retries the resources left
 * in passes) until its time limit, and deletes in dependency order: adapters, base components, endpoints (each
 * once it is gone from Creating), configurations (only once their endpoint no longer exists, so a configuration
 * in use is never deleted).
 *
 * Why shadows rather than switching the live endpoint: the switch (UpdateEndpoint) replaces the instance fleet, and
 * no AWS page says the components come back with their copies afterwards (inference-components.ts); building
 * fleets beside it keeps the live endpoint's traffic, components and autoscaling untouched, and the strategies run
 * side by side (same schedule, fresh caches, same time of day). The price: one extra fleet per strategy while the
 * run lasts, and capacity (quota) for those instances.
 */

/** A component of the live endpoint as DescribeInferenceComponent returns it. */
export interface LiveComponent {
  readonly name: string;
  readonly variant: string;
  readonly specification: InferenceComponentSpecificationSummary;
  /** One specification per instance type (an instance-pool fleet), when the component was created with `Specifications`. */
  readonly specifications?: readonly InferenceComponentSpecificationSummary[];
  /** RuntimeConfig.CurrentCopyCount (DesiredCopyCount when absent). */
  readonly copies: number;
  /** The base component, for a LoRA adapter. */
  readonly base: string | undefined;
}

/** Every component of the live endpoint (List + Describe, read-only), bases before adapters. */
export async function readLiveComponents(
  sagemaker: SageMakerClient,
  endpointName: string,
  clock: Clock,
  retry?: RetryPolicy,
): Promise<LiveComponent[]> {
  const summaries = await listEndpointInferenceComponents(sagemaker, endpointName, clock, retry);
  const out: LiveComponent[] = [];
  for (const summary of summaries) {
    const name = summary.InferenceComponentName ?? '';
    const d = await withThrottlingRetry(
      `DescribeInferenceComponent ${name}`,
      () => sagemaker.send(new DescribeInferenceComponentCommand({ InferenceComponentName: name })),
      clock,
      retry,
    );
    if (d.InferenceComponentStatus !== 'InService') {
      throw new AwsSetupError(
        'not-in-service',
        `inference component '${name}' of '${endpointName}' is ${d.InferenceComponentStatus ?? 'unknown'}, not InService: --shadow copies the endpoint as it serves; rerun once it is InService`,
      );
    }
    // A component created per instance type has Specifications instead (the first names its model and base as well).
    const spec = d.Specification ?? d.Specifications?.[0] ?? {};
    const perType =
      d.Specifications !== undefined && d.Specifications.length > 0 ? { specifications: d.Specifications } : {};
    out.push({
      name,
      variant: d.VariantName ?? '',
      specification: spec,
      ...perType,
      copies: d.RuntimeConfig?.CurrentCopyCount ?? d.RuntimeConfig?.DesiredCopyCount ?? 0,
      base: spec.BaseInferenceComponentName,
    });
  }
  const names = new Set(out.map((c) => c.name));
  const orphan = out.find((c) => c.base !== undefined && !names.has(c.base));
  if (orphan !== undefined)
    throw new AwsSetupError(
      'unsupported',
      `adapter '${orphan.name}' names base component '${orphan.base}', which is not on '${endpointName}'`,
    );
  if (out.length === 0)
    throw new AwsSetupError(
      'unsupported',
      `endpoint '${endpointName}' hosts no inference component: nothing to copy onto a shadow`,
    );
  return [...out.filter((c) => c.base === undefined), ...out.filter((c) => c.base !== undefined)];
}

/**
 * Name of a shadow resource: `ab<runId>-<n>-` + the live name, cut to SageMaker's 63 characters (endpoint,
 * configuration and component names share that limit and alphabet). The prefix is what makes the run's resources
 * its own: nothing without it is ever deleted.
 */
export function shadowResourceName(runId: string, index: number, original: string): string {
  return `${shadowPrefix(runId, index)}${original}`.slice(0, SAGEMAKER_NAME_MAX_LENGTH).replace(/-+$/, '');
}

export function shadowPrefix(runId: string, index: number): string {
  return `ab${runId}-${index + 1}-`;
}

export interface ShadowComponent {
  readonly live: string;
  readonly name: string;
  readonly adapter: boolean;
  readonly input: CreateInferenceComponentCommandInput;
}

export interface ShadowFleet {
  readonly strategy: AbStrategy;
  readonly endpointName: string;
  readonly configName: string;
  readonly configInput: CreateEndpointConfigCommandInput;
  /** Bases first, then adapters. */
  readonly components: readonly ShadowComponent[];
}

export interface ShadowPlan {
  readonly facts: EndpointFacts;
  readonly components: readonly LiveComponent[];
  readonly fleets: readonly ShadowFleet[];
  /** The live component the workload invokes (its copy on each shadow). */
  readonly target: LiveComponent;
  /** Instances of one shadow (the live variants' current counts, at least 1 each). */
  readonly instances: number;
  readonly instanceType: string | undefined;
  readonly pricePerInstanceHour: number | undefined;
  readonly priceSource: string;
  readonly runSeconds: number;
  /** Minutes one shadow bills: provisioning (instances, then component copies), the run, deletion. */
  readonly shadowMinutes: number;
  /** Every shadow together, per hour; undefined when the price is unknown. */
  readonly hourlyUsd: number | undefined;
  /** Every shadow for shadowMinutes; undefined when the price is unknown. */
  readonly estimateUsd: number | undefined;
}

/** Minutes to delete a shadow's components and endpoint (billing stops when the instances are released). */
export const SHADOW_DELETE_MINUTES = 10;

/** Tag on every resource a shadow run creates, so a leftover can be found by its run. */
export const SHADOW_RUN_TAG = 'prefix-router:ab-run';

/** One live component's copy on a shadow endpoint: renamed, its base renamed too, tagged with the run. */
function shadowComponentOf(
  c: LiveComponent,
  name: (live: string) => string,
  endpointName: string,
  tags: Tag[],
): ShadowComponent {
  const adapter = c.base !== undefined;
  return {
    live: c.name,
    name: name(c.name),
    adapter,
    input: {
      InferenceComponentName: name(c.name),
      EndpointName: endpointName,
      VariantName: c.variant,
      // As created: one Specification, or one per instance type ("either this parameter or the singular
      // Specification parameter, but not both", API_CreateInferenceComponent.html).
      ...(c.specifications !== undefined
        ? {
            Specifications: c.specifications.map((x) =>
              creatableSpecification(x, c.base === undefined ? undefined : name(c.base)),
            ),
          }
        : {
            Specification: creatableSpecification(c.specification, c.base === undefined ? undefined : name(c.base)),
          }),
      // An adapter uses its base's compute and copies (API_InferenceComponentSpecification.html); a base gets the
      // copies it serves with now, at least 1 (a scaled-to-zero base could not answer the workload).
      ...(adapter ? {} : { RuntimeConfig: { CopyCount: Math.max(1, c.copies) } }),
      Tags: tags,
    },
  };
}

/**
 * Endpoints, configurations and components are separate name spaces; within each, two live names that agree in
 * their first characters would be cut to one shadow name: refused.
 */
function refuseNameClashes(fleets: readonly ShadowFleet[], runId: string): void {
  for (const names of [
    fleets.map((f) => f.endpointName),
    fleets.map((f) => f.configName),
    fleets.flatMap((f) => f.components.map((c) => c.name)),
  ]) {
    const clash = names.find((n, i) => names.indexOf(n) !== i);
    if (clash !== undefined)
      throw new AbPlanError(
        `two shadow resources would both be named '${clash}' (live names that agree in their first ${SAGEMAKER_NAME_MAX_LENGTH - shadowPrefix(runId, fleets.length).length} characters); rename one of them`,
      );
  }
}

export function buildShadowPlan(input: {
  facts: EndpointFacts;
  components: readonly LiveComponent[];
  strategies: readonly AbStrategy[];
  runId: string;
  target: string | undefined;
  pricePerInstanceHour?: number;
  runSeconds: number;
}): ShadowPlan {
  const { facts, components, runId } = input;
  const target =
    input.target === undefined
      ? components.length === 1
        ? components[0]
        : undefined
      : components.find((c) => c.name === input.target);
  if (target === undefined) {
    throw new AbPlanError(
      input.target === undefined
        ? `--inference-component is required with --shadow: '${facts.endpointName}' hosts ${components.length} components (${components.map((c) => c.name).join(', ')}); name the one the workload invokes`
        : `--inference-component '${input.target}' is not on '${facts.endpointName}' (its components: ${components.map((c) => c.name).join(', ')})`,
    );
  }
  const tags: Tag[] = [{ Key: SHADOW_RUN_TAG, Value: runId }];
  const countOf = (variant: string | undefined): number =>
    Math.max(1, facts.variants.find((v) => v.name === variant)?.instanceCount ?? 1);
  const fleets = input.strategies.map((strategy, index): ShadowFleet => {
    const name = (live: string): string => shadowResourceName(runId, index, live);
    const endpointName = name(facts.endpointName);
    const configName = name(facts.configName);
    const copy = configCopyInput(facts.config, configName, strategy.routing);
    // The live fleet as it is now (autoscaling moved it from the configuration's initial count); scaling settings kept.
    const configInput: CreateEndpointConfigCommandInput = {
      ...copy,
      ProductionVariants: (copy.ProductionVariants ?? []).map((v) => ({
        ...v,
        InitialInstanceCount: countOf(v.VariantName),
      })),
      Tags: tags,
    };
    const shadowComponents = components.map((c) => shadowComponentOf(c, name, endpointName, tags));
    return { strategy, endpointName, configName, configInput, components: shadowComponents };
  });
  refuseNameClashes(fleets, runId);
  const types = [...new Set(facts.variants.map((v) => v.instanceType ?? 'unknown'))];
  const listed = types.length === 1 ? LIST_PRICE_USD_PER_HOUR[types[0]] : undefined;
  const price = input.pricePerInstanceHour ?? listed;
  const instances = facts.variants.reduce((n, v) => n + countOf(v.name), 0);
  const shadowMinutes = 2 * MINUTES_PER_STEP + input.runSeconds / 60 + SHADOW_DELETE_MINUTES;
  const hourlyUsd = price === undefined ? undefined : price * instances * fleets.length;
  return {
    facts,
    components,
    fleets,
    target,
    instances,
    instanceType: types.length === 1 ? types[0] : types.join('+'),
    pricePerInstanceHour: price,
    priceSource:
      input.pricePerInstanceHour !== undefined
        ? '--price-per-instance-hour'
        : listed !== undefined
          ? LIST_PRICE_SOURCE
          : `unknown for ${types.join(', ')}: pass --price-per-instance-hour`,
    runSeconds: input.runSeconds,
    shadowMinutes,
    hourlyUsd,
    estimateUsd: hourlyUsd === undefined ? undefined : (hourlyUsd * shadowMinutes) / 60,
  };
}

/** A described specification as CreateInferenceComponent takes it (Container's DeployedImage → Image), base renamed. */
export function creatableSpecification(
  spec: InferenceComponentSpecificationSummary,
  base: string | undefined,
): InferenceComponentSpecification {
  const { Container, BaseInferenceComponentName: _base, ...rest } = spec;
  const container =
    Container === undefined
      ? undefined
      : {
          ...(Container.DeployedImage?.SpecifiedImage !== undefined
            ? { Image: Container.DeployedImage.SpecifiedImage }
            : {}),
          ...(Container.ArtifactUrl !== undefined ? { ArtifactUrl: Container.ArtifactUrl } : {}),
          ...(Container.Environment !== undefined ? { Environment: Container.Environment } : {}),
        };
  return {
    ...(rest as InferenceComponentSpecification),
    ...(container !== undefined ? { Container: container } : {}),
    ...(base !== undefined ? { BaseInferenceComponentName: base } : {}),
  };
}

/** The plan as printed before any change: what is read, what is created, what it costs, what it needs. */
export function renderShadowPlan(plan: ShadowPlan): string {
  const { facts } = plan;
  const lines: string[] = [];
  lines.push(
    `Endpoint ${facts.endpointName} (${facts.status}), configuration ${facts.configName}: inference components, read only (nothing on it is changed)`,
  );
  for (const v of facts.variants)
    lines.push(
      `  variant ${v.name}: ${v.instanceCount} × ${v.instanceType ?? 'unknown'}, routing ${routingLabel(v.routing)}`,
    );
  for (const c of plan.components)
    lines.push(
      `  component ${c.name}${c.base !== undefined ? ` (adapter on ${c.base})` : `: ${c.copies} cop${c.copies === 1 ? 'y' : 'ies'}`}`,
    );
  lines.push(
    `Mode: --shadow: one shadow endpoint per strategy, all serving the same workload at the same time (invoking ${plan.target.name}'s copy), then deleted.`,
  );
  for (const f of plan.fleets) {
    lines.push(
      `  ${f.strategy.label}: endpoint ${f.endpointName} on configuration ${f.configName}, components ${f.components.map((c) => c.name).join(', ')}`,
    );
  }
  const perShadow = plan.pricePerInstanceHour === undefined ? undefined : plan.pricePerInstanceHour * plan.instances;
  lines.push(
    `Cost: each shadow is ${plan.instances} × ${plan.instanceType ?? 'unknown'}${perShadow === undefined ? '' : ` = ${usd(perShadow)}/h`}; ${plan.fleets.length} shadows ≈ ${Math.round(plan.shadowMinutes)} min each (≈ ${2 * MINUTES_PER_STEP} min to provision instances and load the model, ${(plan.runSeconds / 60).toFixed(1)} min of traffic, ≈ ${SHADOW_DELETE_MINUTES} min to delete)` +
      (plan.estimateUsd === undefined
        ? `: price unknown (${plan.priceSource}).`
        : ` ≈ ${usd(plan.estimateUsd)} in all (${usd(plan.hourlyUsd!)}/h while they run; ${plan.priceSource}).`),
  );
  lines.push(
    `Capacity: ${plan.instances * plan.fleets.length} more ${plan.instanceType ?? 'unknown'} instance(s) at once, beside the live fleet (account quota for endpoint usage, and regional capacity). If SageMaker cannot provision them (ResourceLimitExceeded, or an endpoint Failed for capacity), the run deletes what it created and says so.`,
  );
  lines.push(
    `If this process is killed before it cleans up, delete what it created:\n${deleteResourceCommands({
      components: [
        ...plan.fleets.flatMap((f) => f.components.filter((c) => c.adapter)),
        ...plan.fleets.flatMap((f) => f.components.filter((c) => !c.adapter)),
      ].map((c) => c.name),
      endpoints: plan.fleets.map((f) => f.endpointName),
      configs: plan.fleets.map((f) => f.configName),
    })
      .map((c) => `  ${c}`)
      .join('\n')}`,
  );
  return lines.join('\n');
}

export interface ShadowDeps {
  readonly sagemaker: SageMakerClient;
  readonly renewSageMaker?: () => SageMakerClient;
  readonly clock: Clock;
  readonly log: (line: string) => void;
  /** Sends the workload once to one shadow; stops early when `signal` aborts. All shadows' runs start together. */
  readonly runWorkload: (fleet: ShadowFleet, signal: AbortSignal) => Promise<LiveBenchmarkResult>;
}

export interface ShadowOptions {
  readonly plan: ShadowPlan;
  readonly signal?: AbortSignal;
  /** Describe polling interval. Default 30 s. */
  readonly pollIntervalMs?: number;
  /** Longest wait for a shadow endpoint or component to be InService. Default: the configuration's step time × 2 + 30 min. */
  readonly createTimeoutMs?: number;
  /** Longest the cleanup keeps trying. Default 1 h. */
  readonly cleanupTimeoutMs?: number;
  readonly retry?: RetryPolicy;
}

export interface ShadowRunRecord {
  readonly label: string;
  readonly fleet: ShadowFleet;
  readonly result: LiveBenchmarkResult;
  readonly wallWindow: { readonly startMs: number; readonly endMs: number };
  /** Instances per variant of the shadow when it came up (DescribeEndpoint CurrentInstanceCount). */
  readonly instanceCounts: Readonly<Record<string, number>>;
}

/** The run's own resources, by kind. */
export interface ShadowResources {
  readonly components: readonly string[];
  readonly endpoints: readonly string[];
  readonly configs: readonly string[];
}

/** The names whose create calls were sent so far, in order. */
interface CreatedNames {
  components: string[];
  endpoints: string[];
  configs: string[];
}

export interface ShadowOutcome {
  readonly runs: ShadowRunRecord[];
  readonly interrupted: boolean;
  readonly failure?: Error;
  /** Every created resource is gone. */
  readonly finished: boolean;
  /** Resources whose create call was sent (each may exist). */
  readonly created: ShadowResources;
  /** Resources still there (or not known to be gone) when the cleanup ended. */
  readonly left: ShadowResources;
  /** Instances still billing on shadow endpoints left, and their hourly price when known. */
  readonly leftInstances: number;
  readonly leftHourlyUsd: number | undefined;
  readonly finishCommands: readonly string[];
  readonly notes: readonly string[];
}

/** A shadow that did not come up: capacity, a failed component, a wait that ran out. */
export class ShadowFailedError extends AbRunError {
  constructor(message: string) {
    super(message);
    this.name = 'ShadowFailedError';
  }
}

function isAlreadyExists(err: unknown): boolean {
  const e = err as { name?: string; message?: string };
  return (e?.name === 'ValidationException' || e?.name === 'ResourceInUse') && /already exist/i.test(e.message ?? '');
}

/** A FailureReason that says the instances could not be had (quota or regional capacity). */
export function isCapacityFailure(reason: string | undefined): boolean {
  return reason !== undefined && /capacity|ResourceLimitExceeded|service limit|quota/i.test(reason);
}

const COMPONENT_SETTLING = new Set(['Creating', 'Updating']);

export class ShadowAb {
  private readonly caller: ControlPlaneCaller;
  private readonly poll: number;
  private readonly notes: string[] = [];

  constructor(
    private readonly deps: ShadowDeps,
    private readonly options: ShadowOptions,
  ) {
    this.caller = new ControlPlaneCaller(deps, options.retry);
    this.poll = options.pollIntervalMs ?? 30_000;
  }

  private call<T>(what: string, send: (sm: SageMakerClient) => Promise<T>, opts: CallOptions): Promise<T> {
    return this.caller.call(what, send, opts);
  }

  private createTimeoutMs(): number {
    return this.options.createTimeoutMs ?? (2 * MINUTES_PER_STEP + 30) * 60_000;
  }

  /** Runs the plan. Never throws after the first create: the outcome carries the failure and the cleanup's result. */
  async run(): Promise<ShadowOutcome> {
    const signal = this.options.signal ?? new AbortController().signal;
    // Each name is recorded before its create call is sent: the call may take effect even when its answer is lost.
    const sent: CreatedNames = { components: [], endpoints: [], configs: [] };
    let runs: ShadowRunRecord[] = [];
    let failure: Error | undefined;
    try {
      await this.createConfigs(sent, signal);
      await this.createEndpoints(sent, signal);
      const described = new Map<string, DescribeEndpointCommandOutput>();
      for (const f of this.options.plan.fleets)
        described.set(f.endpointName, await this.waitEndpointInService(f, signal));
      await this.createComponents(sent, signal);
      runs = await this.runWorkloads(described, signal);
    } catch (err) {
      if (!(err instanceof AbAbortedError) || !signal.aborted) failure = err as Error;
      this.deps.log(`stopping: ${(err as Error).message}`);
    }
    return this.outcomeOf(runs, failure, sent, signal);
  }

  private async createConfigs(sent: CreatedNames, signal: AbortSignal): Promise<void> {
    for (const f of this.options.plan.fleets) {
      this.abortCheck(signal, `CreateEndpointConfig ${f.configName}`);
      this.deps.log(`[${f.strategy.label}] CreateEndpointConfig ${f.configName}`);
      sent.configs.push(f.configName);
      await this.create(
        `CreateEndpointConfig ${f.configName}`,
        (sm) => sm.send(new CreateEndpointConfigCommand(f.configInput)),
        signal,
      );
    }
  }

  private async createEndpoints(sent: CreatedNames, signal: AbortSignal): Promise<void> {
    const { plan } = this.options;
    for (const f of plan.fleets) {
      this.abortCheck(signal, `CreateEndpoint ${f.endpointName}`);
      this.deps.log(`[${f.strategy.label}] CreateEndpoint ${f.endpointName} (${plan.instances} instance(s))`);
      sent.endpoints.push(f.endpointName);
      await this.create(
        `CreateEndpoint ${f.endpointName}`,
        (sm) =>
          sm.send(
            new CreateEndpointCommand({
              EndpointName: f.endpointName,
              EndpointConfigName: f.configName,
              Tags: f.configInput.Tags,
            }),
          ),
        signal,
      ).catch((err: unknown) => {
        // The account's endpoint-usage quota for the type (API_CreateEndpoint.html Errors: ResourceLimitExceeded).
        const last = err instanceof RetriesExhaustedError ? err.lastError : err;
        if ((last as Error)?.name !== 'ResourceLimitExceeded') throw err;
        throw new ShadowFailedError(
          `CreateEndpoint ${f.endpointName} (${f.strategy.label}) was refused: ResourceLimitExceeded (${(last as Error).message}): ${this.capacityNeed()}`,
        );
      });
    }
  }

  /**
   * Bases first, InService before their adapters ("Before you can create an adapter inference component, you must
   * have an existing inference component that contains the foundation model", API_InferenceComponentSpecification.html).
   */
  private async createComponents(sent: CreatedNames, signal: AbortSignal): Promise<void> {
    const { plan } = this.options;
    for (const adapters of [false, true]) {
      for (const f of plan.fleets) {
        for (const c of f.components.filter((x) => x.adapter === adapters)) {
          this.abortCheck(signal, `CreateInferenceComponent ${c.name}`);
          this.deps.log(
            `[${f.strategy.label}] CreateInferenceComponent ${c.name}${c.adapter ? ` (adapter on ${String(c.input.Specification?.BaseInferenceComponentName)})` : ''}`,
          );
          sent.components.push(c.name);
          await this.create(
            `CreateInferenceComponent ${c.name}`,
            (sm) => sm.send(new CreateInferenceComponentCommand(c.input)),
            signal,
          );
        }
      }
      for (const f of plan.fleets)
        for (const c of f.components.filter((x) => x.adapter === adapters))
          await this.waitComponentInService(c.name, signal);
    }
  }

  /** Runs the workload against every shadow at the same time; one record per strategy. */
  private async runWorkloads(
    described: ReadonlyMap<string, DescribeEndpointCommandOutput>,
    signal: AbortSignal,
  ): Promise<ShadowRunRecord[]> {
    const { plan } = this.options;
    this.abortCheck(signal, 'the workload');
    this.deps.log(
      `every shadow is InService; running the workload against ${plan.fleets.length} shadows at the same time`,
    );
    const started = this.deps.clock.now();
    const results = await Promise.all(plan.fleets.map((f) => this.deps.runWorkload(f, signal)));
    return plan.fleets.map((f, i) => {
      const d = described.get(f.endpointName);
      return {
        label: f.strategy.label,
        fleet: f,
        result: results[i],
        wallWindow: runWallWindow(started, results[i]),
        instanceCounts: Object.fromEntries(
          (d?.ProductionVariants ?? []).map((v) => [
            v.VariantName ?? '?',
            v.CurrentInstanceCount ?? v.DesiredInstanceCount ?? 0,
          ]),
        ),
      };
    });
  }

  /** Cleans up what was created and says how the run ended, what is left and what it costs. */
  private async outcomeOf(
    runs: ShadowRunRecord[],
    failure: Error | undefined,
    sent: CreatedNames,
    signal: AbortSignal,
  ): Promise<ShadowOutcome> {
    const { plan } = this.options;
    const created = (): ShadowResources => ({
      components: [...sent.components],
      endpoints: [...sent.endpoints],
      configs: [...sent.configs],
    });
    const left = await this.cleanup(created());
    const finished = left.components.length + left.endpoints.length + left.configs.length === 0;
    const leftInstances = left.endpoints.length * plan.instances;
    return {
      runs,
      interrupted: signal.aborted,
      failure: signal.aborted && failure === undefined ? new AbRunError('interrupted by a signal') : failure,
      finished,
      created: created(),
      left,
      leftInstances,
      leftHourlyUsd: plan.pricePerInstanceHour === undefined ? undefined : leftInstances * plan.pricePerInstanceHour,
      finishCommands: finished ? [] : deleteResourceCommands(left),
      notes: this.notes,
    };
  }

  private capacityNeed(): string {
    const { plan } = this.options;
    return `the shadows need ${plan.instances * plan.fleets.length} × ${plan.instanceType ?? 'unknown'} beside the live fleet (ask for a quota increase, compare fewer strategies, or run when capacity frees up); everything created is deleted`;
  }

  private abortCheck(signal: AbortSignal, what: string): void {
    if (signal.aborted) throw new AbAbortedError(what);
  }

  /** A create call; a retry after a lost answer finds what the first attempt made (the name carries the run's id). */
  private async create(
    what: string,
    send: (sm: SageMakerClient) => Promise<unknown>,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      await this.call(what, send, { signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }

  private async waitEndpointInService(f: ShadowFleet, signal: AbortSignal): Promise<DescribeEndpointCommandOutput> {
    const deadline = this.deps.clock.now() + this.createTimeoutMs();
    for (;;) {
      const d = await this.call(
        `DescribeEndpoint ${f.endpointName}`,
        (sm) => sm.send(new DescribeEndpointCommand({ EndpointName: f.endpointName })),
        { signal },
      );
      const status = d.EndpointStatus ?? 'unknown';
      if (status === 'InService') return d;
      if (!TRANSITIONAL_STATES.has(status)) {
        const capacity = isCapacityFailure(d.FailureReason);
        throw new ShadowFailedError(
          `shadow endpoint ${f.endpointName} (${f.strategy.label}) is ${status}${d.FailureReason ? ` (${d.FailureReason})` : ''}${capacity ? `: SageMaker could not provision ${this.options.plan.instances} × ${this.options.plan.instanceType ?? 'unknown'} for it; ${this.capacityNeed()}` : ''}`,
        );
      }
      if (this.deps.clock.now() >= deadline)
        throw new ShadowFailedError(
          `shadow endpoint ${f.endpointName} was still ${status} after ${Math.round(this.createTimeoutMs() / 60_000)} min`,
        );
      await this.caller.sleep(this.poll, signal);
    }
  }

  private async waitComponentInService(name: string, signal: AbortSignal): Promise<void> {
    const deadline = this.deps.clock.now() + this.createTimeoutMs();
    for (;;) {
      const d = await this.call(
        `DescribeInferenceComponent ${name}`,
        (sm) => sm.send(new DescribeInferenceComponentCommand({ InferenceComponentName: name })),
        { signal },
      );
      const status = d.InferenceComponentStatus ?? 'unknown';
      if (status === 'InService') return;
      if (!COMPONENT_SETTLING.has(status))
        throw new ShadowFailedError(
          `shadow component ${name} is ${status}${d.FailureReason ? ` (${d.FailureReason})` : ''}`,
        );
      if (this.deps.clock.now() >= deadline)
        throw new ShadowFailedError(
          `shadow component ${name} was still ${status} after ${Math.round(this.createTimeoutMs() / 60_000)} min`,
        );
      await this.caller.sleep(this.poll, signal);
    }
  }

  /**
   * Deletes every resource the run may have created, in passes until all are gone or the time limit: adapters,
   * then bases (once their adapters are gone), then endpoints (once their components are gone), then
   * configurations (once their endpoint is gone). Each pass tries what is left; an error leaves that resource
   * for the next pass. Not abortable (it is what an abort leads to).
   */
  private async cleanup(created: ShadowResources): Promise<ShadowResources> {
    const deadline = this.deps.clock.now() + (this.options.cleanupTimeoutMs ?? 3_600_000);
    const adapters = new Set(
      this.options.plan.fleets.flatMap((f) => f.components.filter((c) => c.adapter).map((c) => c.name)),
    );
    const baseOf = new Map(
      this.options.plan.fleets.flatMap((f) =>
        f.components
          .filter((c) => c.adapter)
          .map((c) => [c.name, String(c.input.Specification?.BaseInferenceComponentName)] as const),
      ),
    );
    const left = {
      components: [
        ...created.components.filter((c) => adapters.has(c)),
        ...created.components.filter((c) => !adapters.has(c)),
      ],
      endpoints: [...created.endpoints],
      configs: [...created.configs],
    };
    const lastError = new Map<string, string>();
    // Each call retries a bounded number of times, so one resource that keeps failing does not hold up the others;
    // the passes persist until the deadline.
    const opts: CallOptions = {};
    const attempt = async (name: string, step: () => Promise<boolean>): Promise<boolean> => {
      try {
        return await step();
      } catch (err) {
        lastError.set(name, `${(err as Error).name ?? 'Error'}: ${(err as Error).message}`);
        return false;
      }
    };
    for (let pass = 1; left.components.length + left.endpoints.length + left.configs.length > 0; pass++) {
      if (pass > 1) {
        if (this.deps.clock.now() + this.poll >= deadline) break;
        await this.caller.sleep(this.poll);
      }
      for (const name of [...left.components]) {
        // A base waits until its adapters are gone: no page documents deleting a base under its adapters.
        if (left.components.some((c) => baseOf.get(c) === name)) continue;
        const gone = await attempt(name, () => this.deleteComponent(name, opts));
        if (gone) left.components.splice(left.components.indexOf(name), 1);
      }
      const onEndpoint = new Set(
        left.components.map(
          (c) => this.options.plan.fleets.find((f) => f.components.some((x) => x.name === c))?.endpointName,
        ),
      );
      for (const name of [...left.endpoints]) {
        if (onEndpoint.has(name)) continue; // its components first
        const gone = await attempt(name, () => this.deleteEndpoint(name, opts));
        if (gone) left.endpoints.splice(left.endpoints.indexOf(name), 1);
      }
      for (const name of [...left.configs]) {
        const fleet = this.options.plan.fleets.find((f) => f.configName === name);
        if (fleet !== undefined && left.endpoints.includes(fleet.endpointName)) continue; // never delete a configuration an endpoint may use
        const gone = await attempt(name, async () => {
          try {
            await this.call(
              `DeleteEndpointConfig ${name}`,
              (sm) => sm.send(new DeleteEndpointConfigCommand({ EndpointConfigName: name })),
              opts,
            );
          } catch (err) {
            if (!isNotFound(err)) throw err;
          }
          return true;
        });
        if (gone) left.configs.splice(left.configs.indexOf(name), 1);
      }
    }
    for (const name of [...left.components, ...left.endpoints, ...left.configs]) {
      this.notes.push(
        `${name} was not deleted before the cleanup's time limit${lastError.has(name) ? ` (last error: ${lastError.get(name)})` : ''}.`,
      );
    }
    if (left.components.length + left.endpoints.length + left.configs.length === 0)
      this.deps.log('cleanup: every shadow resource is deleted');
    else this.deps.log(`cleanup FAILED: left ${[...left.components, ...left.endpoints, ...left.configs].join(', ')}`);
    return left;
  }

  /** One step towards a component's deletion; true once it no longer exists. */
  private async deleteComponent(name: string, opts: CallOptions): Promise<boolean> {
    let status: string;
    try {
      const d = await this.call(
        `DescribeInferenceComponent ${name}`,
        (sm) => sm.send(new DescribeInferenceComponentCommand({ InferenceComponentName: name })),
        opts,
      );
      status = d.InferenceComponentStatus ?? 'unknown';
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
    // Creating or Updating: let it settle; Deleting: on its way.
    if (COMPONENT_SETTLING.has(status) || status === 'Deleting') return false;
    try {
      await this.call(
        `DeleteInferenceComponent ${name}`,
        (sm) => sm.send(new DeleteInferenceComponentCommand({ InferenceComponentName: name })),
        opts,
      );
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
    return false;
  }

  /** One step towards an endpoint's deletion; true once it no longer exists. */
  private async deleteEndpoint(name: string, opts: CallOptions): Promise<boolean> {
    let status: string;
    try {
      const d = await this.call(
        `DescribeEndpoint ${name}`,
        (sm) => sm.send(new DescribeEndpointCommand({ EndpointName: name })),
        opts,
      );
      status = d.EndpointStatus ?? 'unknown';
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
    if (TRANSITIONAL_STATES.has(status) || status === 'Deleting') return false;
    try {
      await this.call(
        `DeleteEndpoint ${name}`,
        (sm) => sm.send(new DeleteEndpointCommand({ EndpointName: name })),
        opts,
      );
    } catch (err) {
      if (isNotFound(err)) return true;
      if (classifyControlPlaneError(err) === 'in-progress') return false;
      throw err;
    }
    return false;
  }
}
