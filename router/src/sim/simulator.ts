import { performance } from 'node:perf_hooks';
import { SeededRng } from '../common/seeded-rng';
import { StepJitter } from '../emulator/step-jitter';
import { badRequest } from '../emulator/emulator-errors';
import {
  EngineModel,
  EngineRequestError,
  type EngineStats,
  type FinishedEvent,
  type StepRecord,
} from '../emulator/engine-model';
import { prefillTokensPerSecond, type EngineProfile } from '../emulator/engine-profile';
import { PrefillSpeedEstimator } from '../policy/prefill-speed';
import { httpErrorCode, httpErrorMessage, transportErrorCode } from '../common/request-errors';
import { allHealthySameModels, createPolicy, policyOptionsOf, type PolicyConfig, type RoutingPolicy } from '../policy';
import { InstanceLoad } from '../state/instance-load';
import { StateHashKey } from '../state/state-hash-key';
import {
  InstanceStateLog,
  ObservedInstance,
  loadFiguresOf,
  observedLoadOf,
  type InstanceLoadFigures,
} from '../state/instance-state-log';
import { ROUTER_DEFAULTS } from '../config/router-config';
import {
  publishedBlockChars,
  publishedStateLog,
  RoutingCore,
  type RoutedRequest,
  type RoutingTarget,
} from '../core/routing-core';
import { EngineSchedule } from './engine-schedule';
import { EventQueue } from './event-queue';
import { FLOW_CONTROL_DEFAULTS, FlowControlQueue, type FlowControlSettings } from '../core/flow-control';
import type { CeilingTracker } from '../report/ceilings';
import type { StrategyRunInput } from '../report/report-model';
import type { RequestRecord } from '../report/request-record';
import { inlinePromptSource, type PreparedRequest, type PromptSource } from './prompt-source';
import { startPromptWorker } from './prompt-worker';
import { RecordColumns } from './record-columns';
import { RequestFeed } from '../feed/request-feed';
import type { EngineCacheView, EngineQueue, EngineState } from '../policy/routing-policy';
import { SimulatedKvEvents, type KvEventStats, type SimulatedKvEventSettings } from './simulated-kv-events';
import type { LoadShape } from '../workload/load-shape';
import type { Workload } from '../workload/workload';

/**
 * The state-hash secret of every simulated router and instance: one fixed value, so a run is the same every time
 * and its replicas match each other's published blocks (a simulation has nothing to keep secret). It hashes with
 * the same keyed MAC as a live router, so the simulator measures what that hashing costs.
 */
const SIMULATOR_STATE_HASH_KEY = StateHashKey.fromSecret('prefix-router simulator: a fixed, public state-hash key');
/**
 * The virtual-time simulator: the live router's routing core and policies (core/routing-core.ts: the same decide,
 * commit, load tickets, published-state admission and release) in front of N engine models (one per vLLM
 * instance), fed by a workload. Nothing here sleeps or reads a clock for simulated time, so an hour of traffic on seven
 * instances runs in seconds, and the same seed gives the same run.
 *
 * Exactness: events are processed in time order. An engine only executes steps that start before the earliest
 * time anything could reach it — in an open loop with nothing parked, the next arrival (handling a first token
 * or a finish changes the routers, never an engine); when a finish can release a send (closed loop, or a
 * request parked on a running one) and until the warm-up snapshot of every engine is taken, the next queued
 * event or the next step of another engine, stopping after a step in which a request finished. So every request
 * joins the same step it would join in a real-time run of the same models, and every routing decision sees the
 * in-flight counts of that instant. (Arrivals are always queued one ahead, so no engine ever runs past the next
 * send; first-token and finish events before it are handled before it.)
 *
 * Cost: the engines sit in a heap keyed by when they next need running (EngineSchedule), so an event costs
 * O(log instances), not a visit to every instance. After the warm-up snapshot an engine plans a decode stretch
 * up to its next finish (RunOptions.lookahead) and is keyed by the stretch's end: a send to it applies the
 * planned steps that start before the send and drops the rest, so an engine nobody sends to is run about twice
 * per request it serves, not once per arrival anywhere in the fleet (at 112 instances, 4 engine runs per request
 * instead of 80). The stretch is the same steps, durations and jitter draws as stepping one at a time.
 */
export interface SimulationConfig {
  readonly workload: Workload;
  readonly policy: PolicyConfig;
  /** Number of engine instances (1–1024). */
  readonly instances: number;
  readonly profile: EngineProfile;
  /**
   * One profile per instance, for a fleet that mixes instance types (SageMaker InstancePools fills a fleet with
   * fallback types); `instances` entries, one KV block size. Default: every instance runs `profile`.
   */
  readonly profiles?: readonly EngineProfile[];
  /**
   * What the routers know of each instance's prefill speed (InstanceView.prefillTokensPerSecond): 'profile'
   * (default) its profile's full-step figure (prefillTokensPerSecond); 'learned' what each router learns from the
   * TTFTs it observes, as the live router does (core/routing-core.ts, policy/prefill-speed.ts); 'none' nothing.
   */
  readonly prefillSpeeds?: 'profile' | 'learned' | 'none';
  /** Instance ids the policy sees; default `instance-0` … `instance-{n-1}`. Rendezvous hashing depends on them. */
  readonly instanceIds?: readonly string[];
  /** Seed of the policy's random generator (random, least-outstanding tie-breaks). Default 1. */
  readonly seed?: number;
  /**
   * Step-time jitter: coefficient of variation of a lognormal factor on every engine step (0–1; default 0 = the
   * deterministic model). Seeded from `seed`, one stream per instance. See emulator/step-jitter.ts.
   */
  readonly stepJitterCv?: number;
  /**
   * Which set of jitter streams `stepJitterCv` draws from (an integer 0–STEP_JITTER_STREAM_RANGE.max; default 0, the
   * streams above): another gives other draws with the same workload and policy seed, so runs differ only in step times.
   */
  readonly stepJitterStream?: number;
  /**
   * Flow control by priority class (core/flow-control.ts): lower classes (priority > 0) wait at the router while
   * the instance chosen for them has more prefill queued than the bound. Default FLOW_CONTROL_DEFAULTS (on); it
   * changes nothing for requests without a priority.
   */
  readonly flowControl?: FlowControlSettings;
  /**
   * Router replicas (1–64, default 1): requests go to them round-robin, and each has its own policy object and
   * its own view of the instances' load (only the requests it sent), with no shared state, like several router
   * processes behind a load balancer. Replica r's random generator is seeded with seed + r.
   */
  readonly routers?: number;
  /**
   * Diagnostics only, not a deployable mode: with several `routers`, replicas share the true load view (`load`:
   * every replica sees every request's load) and/or one policy object (`policy`: one index, one set of counts).
   * Sharing both is one router. Measures what each kind of state the replicas lack is worth.
   */
  readonly replicaSharing?: ReplicaSharing;
  /**
   * Every this many milliseconds of virtual time, each router replica fetches every instance's published state
   * (the load the instance counts and the routing blocks it was sent: state/instance-state-log.ts, what
   * `serve --observe-instances on` follows on instances whose router runs `--publish-state-ms`). 0 (default): replicas
   * see only what they sent themselves.
   */
  readonly observeIntervalMs?: number;
  /** Overrides the workload's load shape. */
  readonly load?: LoadShape;
  /** Send at most this many requests. */
  readonly maxRequests?: number;
  /** No request is sent at or after this virtual time (in-flight ones finish). Default: the workload's end. */
  readonly sendUntilMs?: number;
  /** Requests sent before this virtual time are run but excluded from the measured window (cache warm-up). */
  readonly warmupMs?: number;
  /** Model name in the request bodies (routing keys include it only through the text; default 'model'). */
  readonly modelName?: string;
  /** Receives every rendered prompt in send order, to compute hit-rate ceilings without hashing twice. */
  readonly ceilings?: CeilingTracker;
  /**
   * Generate the workload and hash its prompts on a worker thread, ahead of the simulation (same results; a
   * second core does about half the work of a long-context run). Needs a workload that `parseWorkloadSpec`
   * rebuilds from its spec. Default false.
   */
  readonly promptWorker?: boolean;
  /** Called about every `progressEveryMs` of virtual time. */
  readonly onProgress?: (progress: SimulationProgress) => void;
  readonly progressEveryMs?: number;
  /**
   * 'fast' (default): engines fast-forward decode stretches and run up to the next instant anything can reach
   * them. 'lockstep': every engine executes one step at a time in global time order, with no fast path; the
   * reference the fast mode is tested against (it must give identical records).
   */
  readonly stepping?: 'fast' | 'lockstep';
  /**
   * Engine truth: every router replica follows the engine models' KV cache events, delivered `delayMs` after the
   * step that made them and each batch lost for a replica with probability `lossRate` (a loss marks that engine
   * stale for the replica until its stream restarts); cache-aware reads them as serve --kv-events does
   * (sim/simulated-kv-events.ts). Default: none (the routers' own estimate).
   */
  readonly kvEvents?: SimulatedKvEventSettings;
  /**
   * An engine restart (a crash, a redeploy) at `atMs`: instance `instance` drops every request it holds (each recorded
   * as failed, connection_reset or stream_cut as a live client sees it) and its prefix cache starts empty (its KV event
   * stream starts again at 0 with AllBlocksCleared); for `downMs` after, health checks have it out of every router's
   * set. With downMs 0 the routers never see it leave. Default none.
   */
  readonly engineRestart?: EngineRestart;
  /**
   * Share of the requests (0–1) that reach the engines without any router (clients that bypass it): each goes to a
   * healthy engine drawn from the seed, fills its cache and loads it, and is left out of the records (the report is
   * the routers' traffic; SimulationResult.bypassed counts them). Which requests bypass depends only on the seed and
   * the request id, so every strategy sees the same ones. Default 0.
   */
  readonly bypassShare?: number;
}

/** An engine restart in a simulation (SimulationConfig.engineRestart). */
export interface EngineRestart {
  /** The instance's index, 0 … instances − 1. */
  readonly instance: number;
  readonly atMs: number;
  /** How long health checks keep it out of the routers' sets (0–600,000 ms). */
  readonly downMs: number;
}

export const RESTART_DOWN_RANGE_MS = { min: 0, max: 600_000 } as const;
export const BYPASS_SHARE_RANGE = { min: 0, max: 1 } as const;

/** What router replicas share in a diagnostic run (SimulationConfig.replicaSharing). */
export interface ReplicaSharing {
  readonly load?: boolean;
  readonly policy?: boolean;
}

export interface SimulationProgress {
  readonly simulatedMs: number;
  readonly sent: number;
  readonly finished: number;
  /** Of the finished, those the engines refused (e.g. a prompt over the profile's context): the report's errors. */
  readonly failed: number;
  readonly expected: number;
}

export interface SimulationResult {
  readonly policy: PolicyConfig;
  readonly instanceIds: readonly string[];
  readonly records: readonly RequestRecord[];
  readonly window: { readonly startMs: number; readonly endMs: number };
  /** Engine prefix-cache counters over the measured window, summed over instances (as Prometheus deltas would be). */
  readonly prometheus: { readonly prefixCacheQueries: number; readonly prefixCacheHits: number };
  readonly engines: readonly EngineStats[];
  readonly simulatedMs: number;
  readonly wallMs: number;
  /** With `kvEvents`: batches published, lost and the stale marks the losses caused. */
  readonly kvEvents?: KvEventStats;
  /** With `bypassShare`: requests sent to the engines around the routers (not in `records`). */
  readonly bypassed?: number;
}

type SimEvent =
  | { readonly kind: 'arrival'; readonly request: PreparedRequest }
  /** Router replicas fetch every instance's published state. */
  | { readonly kind: 'observe' }
  | { readonly kind: 'first-token'; readonly id: string }
  | { readonly kind: 'finished'; readonly instance: number; readonly event: FinishedEvent }
  | { readonly kind: 'rejected'; readonly dispatched: Dispatched; readonly code: string; readonly detail: string }
  /** The warm-up ends: every engine has run the steps that start before it, none after, in any stepping. */
  | { readonly kind: 'warmup-end' }
  /** SimulationConfig.engineRestart: the engine restarts; then, after its down time, it is healthy again. */
  | { readonly kind: 'engine-restart' }
  | { readonly kind: 'engine-back' }
  /** A request that bypassed the routers ended without reaching an engine (the engine refused it). */
  | { readonly kind: 'bypass-refused'; readonly id: string };

interface Dispatched {
  readonly id: string;
  /** The request in the routing core: its decision, load ticket and the instance's published record of it. */
  readonly routed: RoutedRequest<SimulatedInstance>;
  readonly instance: number;
  readonly sentAtMs: number;
  /** The request's priority class, when it has one. */
  readonly priority?: number;
  /** Time it waited at the router (flow control) before its engine got it; 0 for most. */
  readonly heldMs: number;
}

/** An instance as one replica's routing core sees it: that replica's load on it, and its published log. */
interface SimulatedInstance extends RoutingTarget {
  readonly index: number;
}

/** One engine model per instance, each with its own step jitter stream (forked from the seed by index). */
function simulatedEngines(
  config: SimulationConfig,
  instanceCount: number,
  profiles: readonly EngineProfile[],
  lockstep: boolean,
  kvEvents: SimulatedKvEvents | undefined,
): EngineModel[] {
  const jitterCv = config.stepJitterCv ?? 0;
  const stream = config.stepJitterStream ?? 0;
  const seedRng = new SeededRng(config.seed ?? 1);
  const jitterSeed = stream === 0 ? seedRng : seedRng.fork(`step-jitter-stream/${stream}`);
  return Array.from(
    { length: instanceCount },
    (_, i) =>
      new EngineModel(profiles[i], {
        fastForward: !lockstep,
        ...(jitterCv > 0 ? { stepJitter: new StepJitter(jitterCv, jitterSeed.fork(`step-jitter/${i}`)) } : {}),
        // Each step's cache changes leave as one batch when it ends, as vLLM publishes them.
        ...(kvEvents === undefined
          ? {}
          : {
              cacheListener: kvEvents.listenerOf(i),
              onStep: (step: StepRecord) => kvEvents.flush(i, step.startMs + step.durationMs),
            }),
      }),
  );
}

/**
 * Each router replica's policy (one shared policy when replicaSharing.policy, else one per replica seeded by its
 * index) and, when replicaSharing.load, the load per instance they all share.
 */
function replicaPolicies(
  config: SimulationConfig,
  instanceCount: number,
): { policies: RoutingPolicy[]; sharedLoads: InstanceLoad[] | undefined } {
  const sharedPolicy =
    config.replicaSharing?.policy === true
      ? createPolicy(config.policy, { rng: new SeededRng(config.seed ?? 1), stateHashKey: SIMULATOR_STATE_HASH_KEY })
      : undefined;
  const sharedLoads =
    config.replicaSharing?.load === true ? Array.from({ length: instanceCount }, () => new InstanceLoad()) : undefined;
  const policies = Array.from(
    { length: config.routers ?? 1 },
    (_, r) =>
      sharedPolicy ??
      createPolicy(config.policy, {
        rng: new SeededRng((config.seed ?? 1) + r),
        stateHashKey: SIMULATOR_STATE_HASH_KEY,
      }),
  );
  return { policies, sharedLoads };
}

/** One router: its policy and its own view of the load it put on each instance. */
interface RouterReplica {
  readonly policy: RoutingPolicy;
  /** The same routing loop as the live router's, around this replica's policy. */
  readonly core: RoutingCore<SimulatedInstance>;
  readonly loads: InstanceLoad[];
  /** The core's targets (their learned prefill speeds, with prefillSpeeds 'learned'). */
  readonly targets: readonly SimulatedInstance[];
  /** Own load figures per instance when the instances' state was last observed. */
  readonly loadsAtObservation: InstanceLoadFigures[];
  readonly views: {
    id: string;
    healthy: boolean;
    inFlight: number;
    queuedPrefillTokens: number;
    decodeSequences: number;
    kvCapacityTokens: number;
    prefillTokensPerSecond?: number;
    observedBlocks?: ObservedInstance;
    /** The engine model's own state for the request being decided: filled only for a policy that reads it. */
    engine?: EngineState;
    /** The engine's KV events as this replica received them (SimulationConfig.kvEvents). */
    engineCache?: EngineCacheView;
  }[];
  /** allHealthySameModels of `views`, for every snapshot: recomputed when an instance's health changes (setHealthy). */
  allHealthySameModels: boolean;
}

export const INSTANCES_RANGE = { min: 1, max: 1024 } as const;
export const ROUTERS_RANGE = { min: 1, max: 64 } as const;
export const OBSERVE_INTERVAL_RANGE = { min: 0, max: 60_000 } as const;
export const STEP_JITTER_STREAM_RANGE = { min: 0, max: 1_000_000 } as const;

export function defaultInstanceIds(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `instance-${i}`);
}

export function simulate(config: SimulationConfig): SimulationResult {
  const n = config.instances;
  if (!Number.isInteger(n) || n < INSTANCES_RANGE.min || n > INSTANCES_RANGE.max) {
    throw new RangeError(
      `instances must be an integer between ${INSTANCES_RANGE.min} and ${INSTANCES_RANGE.max} (got ${n})`,
    );
  }
  const routers = config.routers ?? 1;
  if (!Number.isInteger(routers) || routers < ROUTERS_RANGE.min || routers > ROUTERS_RANGE.max) {
    throw new RangeError(
      `routers must be an integer between ${ROUTERS_RANGE.min} and ${ROUTERS_RANGE.max} (got ${routers})`,
    );
  }
  const observeMs = config.observeIntervalMs ?? 0;
  if (!(observeMs >= 0 && observeMs <= OBSERVE_INTERVAL_RANGE.max)) {
    throw new RangeError(`observeIntervalMs must be between 0 and ${OBSERVE_INTERVAL_RANGE.max} (got ${observeMs})`);
  }
  const ids = config.instanceIds ?? defaultInstanceIds(n);
  if (ids.length !== n) throw new RangeError(`instanceIds must list ${n} ids (got ${ids.length})`);
  checkScenario(config);
  if (config.profiles !== undefined) {
    if (config.profiles.length !== n)
      throw new RangeError(`profiles must list ${n} profiles, one per instance (got ${config.profiles.length})`);
    if (config.profiles.some((p) => p.blockTokens !== config.profile.blockTokens))
      throw new RangeError(
        'every profile must have the blockTokens of `profile`: prompts are hashed once for the fleet',
      );
  }
  return new Simulation(config, ids).run();
}

/** Throws a RangeError naming the field and its range for an engine restart, bypass share or jitter stream out of range. */
function checkScenario(config: SimulationConfig): void {
  const stream = config.stepJitterStream ?? 0;
  if (!Number.isInteger(stream) || stream < STEP_JITTER_STREAM_RANGE.min || stream > STEP_JITTER_STREAM_RANGE.max)
    throw new RangeError(
      `stepJitterStream must be an integer between ${STEP_JITTER_STREAM_RANGE.min} and ${STEP_JITTER_STREAM_RANGE.max} (got ${stream})`,
    );
  const restart = config.engineRestart;
  if (restart !== undefined) {
    const { instance, atMs, downMs } = restart;
    if (!Number.isInteger(instance) || instance < 0 || instance >= config.instances)
      throw new RangeError(
        `engineRestart.instance must be an integer between 0 and ${config.instances - 1} (got ${instance})`,
      );
    if (!(atMs >= 0 && Number.isFinite(atMs)))
      throw new RangeError(`engineRestart.atMs must be a finite number >= 0 (got ${atMs})`);
    if (!(downMs >= RESTART_DOWN_RANGE_MS.min && downMs <= RESTART_DOWN_RANGE_MS.max))
      throw new RangeError(
        `engineRestart.downMs must be between ${RESTART_DOWN_RANGE_MS.min} and ${RESTART_DOWN_RANGE_MS.max} (got ${downMs})`,
      );
  }
  const share = config.bypassShare ?? 0;
  if (!(share >= BYPASS_SHARE_RANGE.min && share <= BYPASS_SHARE_RANGE.max))
    throw new RangeError(
      `bypassShare must be between ${BYPASS_SHARE_RANGE.min} and ${BYPASS_SHARE_RANGE.max} (got ${share})`,
    );
}

/** The result as one strategy run of a report. */
export function toStrategyRun(result: SimulationResult, label?: string): StrategyRunInput {
  return {
    strategy: { name: result.policy.name, options: policyOptionsOf(result.policy) },
    label,
    instances: result.instanceIds,
    records: result.records,
    window: result.window,
    prometheus: result.prometheus,
  };
}

class Simulation {
  private readonly engines: EngineModel[];
  /** The engines' KV events and each replica's receiver of them (SimulationConfig.kvEvents). */
  private readonly kvEvents: SimulatedKvEvents | undefined;
  private readonly schedule: EngineSchedule;
  private readonly indexOfId: ReadonlyMap<string, number>;
  private readonly lockstep: boolean;
  /** prefillSpeeds 'learned': the routers' views show what their cores learned. */
  private readonly learnsSpeeds: boolean;
  private readonly routers: RouterReplica[];
  private nextRouter = 0;
  /** Each instance's published state and the replicas' copy of it (identical for every replica: one copy serves all). */
  private readonly published: { readonly log: InstanceStateLog; readonly observed: ObservedInstance }[] | undefined;
  private readonly observeMs: number;
  private readonly queue = new EventQueue<SimEvent>();
  private readonly feed: RequestFeed<PreparedRequest>;
  private readonly prompts: PromptSource;
  private readonly dispatched = new Map<string, Dispatched>();
  /** Lower-class requests held at the router (one queue for all replicas), with the time they arrived. */
  private readonly held: FlowControlQueue<{ readonly request: PreparedRequest; readonly arrivedMs: number }>;
  private readonly records: RecordColumns;
  private readonly model: string;
  private readonly warmupMs: number;
  private readonly sendUntilMs: number;
  private warmupStats: EngineStats[] | undefined;
  private ceilingWarmupEnded = false;
  /** Open loop: time of the arrival in the queue (Infinity when none is). */
  private nextArrivalMs = Infinity;
  /** Time of the engine restart still to come (Infinity when none): engines run no further before it. */
  private restartPendingMs = Infinity;
  /** Requests that bypassed the routers, in flight, by id → their engine; and how many were sent. */
  private readonly bypassing = new Map<string, number>();
  private bypassed = 0;
  private readonly bypassSeed: SeededRng;
  private sent = 0;
  private finished = 0;
  private failed = 0;
  private lastFinishMs = 0;
  private nextProgressMs: number;

  constructor(
    private readonly config: SimulationConfig,
    private readonly ids: readonly string[],
  ) {
    this.lockstep = config.stepping === 'lockstep';
    this.records = new RecordColumns(ids);
    this.held = new FlowControlQueue(config.flowControl ?? FLOW_CONTROL_DEFAULTS);
    const profiles = config.profiles ?? ids.map(() => config.profile);
    const { policies, sharedLoads } = replicaPolicies(config, ids.length);
    this.kvEvents =
      config.kvEvents === undefined
        ? undefined
        : new SimulatedKvEvents(
            ids,
            config.replicaSharing?.policy === true ? 1 : policies.length,
            config.profile.blockTokens,
            config.kvEvents,
            config.seed ?? 1,
          );
    this.engines = simulatedEngines(config, ids.length, profiles, this.lockstep, this.kvEvents);
    this.schedule = new EngineSchedule(this.engines.length, (i) => this.engines[i].nextRunTimeMs());
    this.indexOfId = new Map(ids.map((id, i) => [id, i]));
    const kvCapacityTokens = profiles.map((p) => p.kvCapacityBlocks * p.blockTokens);
    this.learnsSpeeds = config.prefillSpeeds === 'learned';
    this.observeMs = config.observeIntervalMs ?? 0;
    if (this.observeMs > 0) {
      // The replicas observe the instances, so the instances publish at the block size the replicas' policy matches with.
      const blockChars = publishedBlockChars(policies[0], undefined, ROUTER_DEFAULTS.publishStateBlockChars);
      this.published = ids.map((id, i) => ({
        log: publishedStateLog(blockChars, kvCapacityTokens[i], SIMULATOR_STATE_HASH_KEY, `sim-${id}`),
        observed: new ObservedInstance(),
      }));
    }
    this.routers = policies.map((policy, r) =>
      this.routerReplica(policy, sharedLoads ?? ids.map(() => new InstanceLoad()), profiles, kvCapacityTokens, r),
    );
    this.model = config.modelName ?? 'model';
    const prepare = { blockTokens: config.profile.blockTokens, model: this.model };
    this.prompts = config.promptWorker
      ? startPromptWorker(config.workload, prepare)
      : inlinePromptSource(config.workload, prepare);
    this.feed = new RequestFeed(
      this.prompts.requests,
      config.load ?? config.workload.load,
      config.maxRequests ?? Infinity,
    );
    this.warmupMs = config.warmupMs ?? 0;
    this.sendUntilMs = config.sendUntilMs ?? Infinity;
    if (this.warmupMs <= 0) this.warmupStats = this.engines.map((e) => e.stats());
    this.nextProgressMs = config.progressEveryMs ?? 60_000;
    this.bypassSeed = new SeededRng(config.seed ?? 1).fork('bypass');
  }

  /** One router replica: its policy inside a routing core over its own (or the shared) load per instance. */
  private routerReplica(
    policy: RoutingPolicy,
    loads: InstanceLoad[],
    profiles: readonly EngineProfile[],
    kvCapacityTokens: readonly number[],
    replica: number,
  ): RouterReplica {
    const { ids, published } = this;
    const speedMode = this.config.prefillSpeeds ?? 'profile';
    const instances: SimulatedInstance[] = ids.map((_, i) => ({
      index: i,
      load: loads[i],
      ...(published !== undefined ? { publishedLog: published[i].log } : {}),
    }));
    const views: RouterReplica['views'] = ids.map((id, i) => ({
      id,
      healthy: true,
      inFlight: 0,
      queuedPrefillTokens: 0,
      decodeSequences: 0,
      kvCapacityTokens: kvCapacityTokens[i],
      ...(speedMode === 'profile' ? { prefillTokensPerSecond: prefillTokensPerSecond(profiles[i]) } : {}),
      ...(published !== undefined ? { observedBlocks: published[i].observed } : {}),
      ...this.engineCacheOf(replica, id),
    }));
    return {
      policy,
      core: new RoutingCore<SimulatedInstance>(
        policy,
        (id) => {
          const i = this.indexOfId.get(id);
          return i === undefined ? undefined : instances[i];
        },
        {},
        this.learnsSpeeds ? { prefillSpeeds: new PrefillSpeedEstimator() } : {},
      ),
      loads,
      targets: instances,
      loadsAtObservation: ids.map(() => ({ inFlight: 0, queuedPrefillTokens: 0, decodeSequences: 0 })),
      views,
      allHealthySameModels: allHealthySameModels(views),
    };
  }

  /** The replica's view of the engine's KV events, when the run follows them (one receiver for a shared policy). */
  private engineCacheOf(replica: number, id: string): { engineCache?: EngineCacheView } {
    const view = this.kvEvents?.viewOf(this.config.replicaSharing?.policy === true ? 0 : replica, id);
    return view === undefined ? {} : { engineCache: view };
  }

  run(): SimulationResult {
    try {
      return this.runToEnd();
    } finally {
      this.prompts.close();
    }
  }

  private runToEnd(): SimulationResult {
    const wallStart = performance.now();
    this.start();
    const engines = this.engines;
    const schedule = this.schedule;
    for (;;) {
      const first = schedule.first();
      const firstStart = schedule.firstTime();
      const eventTime = this.queue.peekTime();
      if (first < 0 && eventTime === Infinity) break;
      if (eventTime <= firstStart) {
        const { timeMs, item } = this.queue.pop()!;
        this.handle(timeMs, item);
        continue;
      }
      // Another engine's finish can reach this one only through a send it releases. Until the warm-up
      // snapshot is taken, no engine may run ahead of the event being handled (the snapshot reads them all).
      const inLockstepWithFleet = !this.feed.isOpenLoop || this.feed.hasParked || this.warmupStats === undefined;
      // Otherwise only an arrival can reach an engine: handling other events (first tokens, finishes) changes
      // the routers, never an engine, so an engine runs through them up to the next arrival in one call.
      let horizon = this.lockstep
        ? firstStart
        : inLockstepWithFleet
          ? Math.min(eventTime, schedule.secondTime())
          : Math.min(this.nextArrivalMs, this.restartPendingMs);
      // Always make progress: at least the step that starts at firstStart.
      if (!(horizon > firstStart)) horizon = firstStart + Math.max(1e-6, firstStart * 1e-12);
      // Once the warm-up snapshot is taken nothing reads an engine between sends to it, so decode stretches may
      // be planned past the horizon and applied when a send or the stretch's end comes (RunOptions.lookahead):
      // an engine nobody sends to is then run once per stretch, not once per arrival anywhere in the fleet.
      const lookahead = !this.lockstep && this.warmupStats !== undefined;
      for (const ev of engines[first].runUntil(horizon, { stopAfterFinish: inLockstepWithFleet, lookahead })) {
        if (ev.type === 'finished') this.queue.push(ev.timeMs, { kind: 'finished', instance: first, event: ev });
        else if (ev.type === 'first-token') this.queue.push(ev.timeMs, { kind: 'first-token', id: ev.id });
      }
      this.flushKvEvents(first);
      schedule.update(first);
    }
    const endMs = this.lastFinishMs;
    const endStats = this.engines.map((e) => e.stats());
    const startStats = this.warmupStats ?? endStats;
    let queries = 0;
    let hits = 0;
    endStats.forEach((s, i) => {
      queries += s.prefixCacheQueryTokens - startStats[i].prefixCacheQueryTokens;
      hits += s.prefixCacheHitTokens - startStats[i].prefixCacheHitTokens;
    });
    return {
      policy: this.config.policy,
      instanceIds: this.ids,
      records: this.records.toRecords(),
      window: { startMs: Math.min(this.warmupMs, endMs), endMs },
      prometheus: { prefixCacheQueries: queries, prefixCacheHits: hits },
      engines: endStats,
      simulatedMs: endMs,
      wallMs: performance.now() - wallStart,
      ...(this.kvEvents === undefined ? {} : { kvEvents: this.kvEvents.stats() }),
      ...(this.config.bypassShare ? { bypassed: this.bypassed } : {}),
    };
  }

  private start(): void {
    // Queued before anything else, so it is handled first among events at that instant.
    if (this.warmupMs > 0) this.queue.push(this.warmupMs, { kind: 'warmup-end' });
    if (this.published !== undefined) this.queue.push(0, { kind: 'observe' });
    const restart = this.config.engineRestart;
    if (restart !== undefined) {
      this.queue.push(restart.atMs, { kind: 'engine-restart' });
      this.restartPendingMs = restart.atMs;
    }
    if (this.feed.isOpenLoop) {
      this.scheduleNextArrival();
    } else {
      this.fillClosedLoop(0);
    }
  }

  private scheduleNextArrival(): void {
    const next = this.feed.nextArrival();
    this.nextArrivalMs = Infinity;
    if (next !== undefined && next.arrivalMs < this.sendUntilMs) {
      this.queue.push(next.arrivalMs, { kind: 'arrival', request: next });
      this.nextArrivalMs = next.arrivalMs;
    }
  }

  private fillClosedLoop(nowMs: number): void {
    const concurrency = (this.feed.load as { concurrency: number }).concurrency;
    while (this.dispatched.size + this.bypassing.size < concurrency && nowMs < this.sendUntilMs) {
      const next = this.feed.nextSendable();
      if (next === undefined) return;
      this.dispatch(next, nowMs);
    }
  }

  private handle(timeMs: number, event: SimEvent): void {
    this.observeClock(timeMs);
    if (event.kind === 'warmup-end') return;
    if (event.kind === 'observe') {
      this.observe(timeMs);
      return;
    }
    if (event.kind === 'arrival') {
      this.scheduleNextArrival();
      if (this.feed.release(event.request)) this.dispatch(event.request, timeMs);
      return;
    }
    if (event.kind === 'first-token') {
      // The router sees the first token when it arrives: prefill done, the request now decodes. A non-streamed
      // answer shows nothing before it ends, so the live router counts its prefill until then: so does this.
      const d = this.dispatched.get(event.id);
      if (d !== undefined && d.routed.request.stream) d.routed.firstToken(timeMs);
      if (this.held.length > 0) this.routeHeld(timeMs);
      return;
    }
    if (event.kind === 'rejected') {
      this.reject(timeMs, event.dispatched, event.code, event.detail);
      return;
    }
    if (event.kind === 'engine-restart' || event.kind === 'engine-back' || event.kind === 'bypass-refused') {
      this.handleScenario(timeMs, event);
      return;
    }
    this.finish(timeMs, event.instance, event.event);
  }

  /** Every replica fetches every instance's state (one shared copy stands for all), then the next fetch is due. */
  private observe(timeMs: number): void {
    const published = this.published!;
    for (let i = 0; i < published.length; i++) {
      const { log, observed } = published[i];
      observed.apply(log.updateSince(observed.epoch, observed.seq), timeMs);
      for (const router of this.routers) router.loadsAtObservation[i] = loadFiguresOf(router.loads[i]);
    }
    // Keep observing while anything can still happen; the run ends when nothing else is queued.
    if (this.queue.size > 0 || this.dispatched.size > 0 || this.nextArrivalMs !== Infinity)
      this.queue.push(timeMs + this.observeMs, { kind: 'observe' });
  }

  private observeClock(timeMs: number): void {
    if (this.warmupStats === undefined && timeMs >= this.warmupMs)
      this.warmupStats = this.engines.map((e) => e.stats());
    if (this.config.onProgress && timeMs >= this.nextProgressMs) {
      this.nextProgressMs = timeMs + (this.config.progressEveryMs ?? 60_000);
      this.config.onProgress({
        simulatedMs: timeMs,
        sent: this.sent,
        finished: this.finished,
        failed: this.failed,
        expected: this.config.workload.expectedRequests,
      });
    }
  }

  /** A request the client sent now: routed, or held at the router (flow control), or refused there when it is full. */
  private dispatch(request: PreparedRequest, nowMs: number): void {
    this.sent++;
    const bypass = this.bypassEngineOf(request);
    if (bypass !== undefined) {
      this.sendAroundRouters(request, bypass, nowMs);
      return;
    }
    const entry = { request, arrivedMs: nowMs };
    let verdict = this.held.offer(entry, request.priority);
    if (verdict === 'route') {
      if (this.route(request, nowMs, nowMs)) return;
      verdict = this.held.hold(entry, request.priority as number);
    }
    if (verdict === 'refuse') this.refuseAtRouter(request, nowMs);
  }

  /** Held requests leave most urgent first while the instance chosen for the head admits it. */
  private routeHeld(nowMs: number): void {
    for (let head = this.held.peek(); head !== undefined; head = this.held.peek()) {
      if (!this.route(head.item.request, head.item.arrivedMs, nowMs)) return;
      this.held.shift();
    }
  }

  /** The router's flow control is full: 429 at once, as serve answers (never dropped silently). */
  private refuseAtRouter(request: PreparedRequest, nowMs: number): void {
    const { retryAfterSeconds } = this.held.settings;
    const detail = `flow control: the router's queue for lower priority classes is full; retry after ${retryAfterSeconds} s`;
    this.records.pushRejected(
      request.id,
      -1,
      nowMs,
      0,
      0,
      undefined,
      undefined,
      'http_429:flow_control',
      detail,
      request.priority,
    );
    this.finished++;
    this.afterCompletion(request.id, nowMs);
  }

  /**
   * Decides and sends `request` (arrived at `arrivedMs`) at `nowMs`; false when flow control turned the chosen
   * instance down (nothing committed, nothing sent).
   */
  private route(request: PreparedRequest, arrivedMs: number, nowMs: number): boolean {
    const router = this.routers[this.nextRouter];
    this.nextRouter = (this.nextRouter + 1) % this.routers.length;
    const routing = request.routing;
    const published = this.published;
    for (let i = 0; i < router.views.length; i++) {
      const view = router.views[i];
      const own = router.loads[i];
      const load =
        published !== undefined && published[i].observed.observed
          ? observedLoadOf(published[i].observed.load, own, router.loadsAtObservation[i])
          : own;
      view.inFlight = load.inFlight;
      view.queuedPrefillTokens = load.queuedPrefillTokens;
      view.decodeSequences = load.decodeSequences;
      if (this.learnsSpeeds) view.prefillTokensPerSecond = router.targets[i].prefillTokensPerSecond;
    }
    if (this.kvEvents !== undefined) this.receiveKvEvents(request, nowMs);
    if (router.policy.engineState !== undefined) this.fillEngineStates(router, request, nowMs);
    const routed = router.core.begin(routing);
    const snapshot = { instances: router.views, nowMs, allHealthySameModels: router.allHealthySameModels };
    const attempt = routed.decideIfAdmitted(snapshot, (target) =>
      this.held.admits(request.priority, target.load.queuedPrefillTokens),
    );
    if (attempt === undefined) return false;
    const instance = attempt.target.index;
    const dispatched: Dispatched = {
      id: request.id,
      routed,
      instance,
      sentAtMs: arrivedMs,
      priority: request.priority,
      heldMs: nowMs - arrivedMs,
    };
    this.dispatched.set(request.id, dispatched);

    const { hashes, promptTokens } = request;
    try {
      this.engines[instance].submit(
        { id: request.id, promptTokens, blockHashes: hashes, maxTokens: request.maxTokens, priority: request.priority },
        nowMs,
      );
    } catch (err) {
      if (!(err instanceof EngineRequestError)) throw err;
      // vLLM answers 400 at once; the run goes on. The code and message are what the live benchmark records for it.
      const body = JSON.stringify(badRequest(err.message).body());
      this.queue.push(nowMs, {
        kind: 'rejected',
        dispatched,
        code: httpErrorCode(400, body),
        detail: httpErrorMessage(body),
      });
      return true;
    }
    // The engine took it: its blocks enter the instance's published index now, as the live router records them on
    // a 2xx answer (a request the engine refuses puts nothing in its cache).
    routed.accepted();
    this.flushKvEvents(instance);
    this.schedule.update(instance);
    if (this.config.ceilings) {
      // Warm-up requests fill the ceilings' caches but are not counted, like the measured hit rate. Requests the
      // engine refused never reach a cache, so they are not observed.
      if (!this.ceilingWarmupEnded && nowMs >= this.warmupMs) {
        this.config.ceilings.endWarmup();
        this.ceilingWarmupEnded = true;
      }
      this.config.ceilings.observeBlocks(hashes, promptTokens);
    }
    return true;
  }

  /**
   * Before a decision at `nowMs`: every engine applies its planned steps before then (their cache changes leave as
   * events), and every batch due by then reaches the replicas, which answer for `request`'s blocks.
   */
  private receiveKvEvents(request: PreparedRequest, nowMs: number): void {
    const kv = this.kvEvents!;
    for (let i = 0; i < this.engines.length; i++) {
      this.engines[i].applyPlannedStepsBefore(nowMs);
      this.flushKvEvents(i);
    }
    kv.deliverUntil(nowMs);
    kv.decide(request.routing, request.hashes, request.promptTokens, this.config.profile.blockTokens);
  }

  /** Cache changes an engine call made outside a step's end (a stretch's evictions) leave at the engine's clock. */
  private flushKvEvents(instance: number): void {
    this.kvEvents?.flush(instance, this.engines[instance].clockMs);
  }

  /**
   * Gives a policy that reads engine state (RoutingPolicy.engineState: oracle, llm-d-precise) each engine model's
   * own view of `request` at `nowMs`: the prefix its cache holds and, when asked for, its queue, step in progress
   * and running batch (EngineModel.queueAhead).
   */
  private fillEngineStates(router: RouterReplica, request: PreparedRequest, nowMs: number): void {
    const withQueue = router.policy.engineState === 'cached-blocks-and-queue';
    const prompt = { promptTokens: request.promptTokens, blockHashes: request.hashes };
    for (let i = 0; i < router.views.length; i++) {
      const engine = this.engines[i];
      // First, for every policy, apply the steps planned ahead that start before now (decode steps, whose new
      // blocks may evict cached ones; queueAhead does so too), so the cache read is the one a request sent now meets.
      let queue: EngineQueue | undefined;
      if (withQueue) queue = engine.queueAhead(nowMs, prompt);
      else engine.applyPlannedStepsBefore(nowMs);
      router.views[i].engine = { cachedPromptTokens: engine.cachedTokensFor(prompt), queue };
    }
  }

  private reject(
    timeMs: number,
    d: Dispatched,
    code: string,
    detail: string,
    outcome: 'completed' | 'failed' = 'completed',
  ): void {
    this.dispatched.delete(d.id);
    d.routed.end({ kind: outcome });
    this.finished++;
    this.failed++;
    this.lastFinishMs = Math.max(this.lastFinishMs, timeMs);
    const { decision, decisionMicros } = d.routed.attempt!;
    this.records.pushRejected(
      d.id,
      d.instance,
      d.sentAtMs,
      timeMs - d.sentAtMs,
      decisionMicros,
      decision.reason,
      decision.predictedCachedTokens,
      code,
      detail,
      d.priority,
    );
    this.afterCompletion(d.id, timeMs);
  }

  private finish(timeMs: number, instance: number, event: FinishedEvent): void {
    if (this.bypassing.delete(event.id)) {
      // Not the routers' traffic: it frees its place in the feed, and nothing is recorded.
      this.finished++;
      this.afterCompletion(event.id, timeMs);
      return;
    }
    const d = this.dispatched.get(event.id);
    if (d === undefined) throw new Error(`engine ${this.ids[instance]} finished unknown request ${event.id}`);
    this.dispatched.delete(event.id);
    d.routed.end({ kind: 'completed', cachedTokens: event.cachedTokens, promptTokens: event.promptTokens });
    const { decision, decisionMicros } = d.routed.attempt!;
    this.finished++;
    this.lastFinishMs = Math.max(this.lastFinishMs, timeMs);
    this.records.pushFinished(
      event.id,
      instance,
      d.sentAtMs,
      event.ttftMs + d.heldMs,
      event.e2eMs + d.heldMs,
      event.promptTokens,
      event.cachedTokens,
      event.outputTokens,
      decisionMicros,
      decision.reason,
      decision.predictedCachedTokens,
      d.priority,
    );
    this.afterCompletion(event.id, timeMs);
  }

  private handleScenario(
    timeMs: number,
    event: Extract<SimEvent, { kind: 'engine-restart' | 'engine-back' | 'bypass-refused' }>,
  ): void {
    if (event.kind === 'engine-restart') this.restartEngine(timeMs);
    else if (event.kind === 'engine-back') this.setHealthy(this.config.engineRestart!.instance, true);
    else {
      this.finished++;
      this.afterCompletion(event.id, timeMs);
    }
  }

  /**
   * SimulationConfig.engineRestart: what the old process published leaves, the engine drops its requests and
   * empties its cache (a new event stream), and health checks take it out of the routers' sets while it is down.
   */
  private restartEngine(nowMs: number): void {
    const { instance, downMs } = this.config.engineRestart!;
    this.restartPendingMs = Infinity;
    const engine = this.engines[instance];
    engine.applyPlannedStepsBefore(nowMs);
    this.flushKvEvents(instance);
    this.kvEvents?.restarted(instance);
    const dropped = engine.restart(nowMs);
    this.kvEvents?.flush(instance, nowMs);
    this.schedule.update(instance);
    if (downMs > 0) {
      this.setHealthy(instance, false);
      this.queue.push(nowMs + downMs, { kind: 'engine-back' });
    }
    for (const id of dropped) {
      if (this.bypassing.delete(id)) {
        this.finished++;
        this.afterCompletion(id, nowMs);
        continue;
      }
      const d = this.dispatched.get(id)!;
      // The connection to the engine breaks: a streamed answer has its headers already (a cut stream).
      const code = transportErrorCode({ code: 'ECONNRESET' }, d.routed.request.stream);
      this.reject(nowMs, d, code, `engine ${this.ids[instance]} restarted`, 'failed');
    }
  }

  /** Every router's health checks see the instance leave or come back. */
  private setHealthy(instance: number, healthy: boolean): void {
    for (const router of this.routers) {
      router.views[instance].healthy = healthy;
      router.allHealthySameModels = allHealthySameModels(router.views);
    }
  }

  /** The engine a request that bypasses the routers goes to (SimulationConfig.bypassShare), or undefined. */
  private bypassEngineOf(request: PreparedRequest): number | undefined {
    const share = this.config.bypassShare ?? 0;
    if (share <= 0) return undefined;
    const draws = this.bypassSeed.fork(request.id);
    if (draws.next() >= share) return undefined;
    const healthy = this.routers[0].views.flatMap((v, i) => (v.healthy ? [i] : []));
    return healthy.length === 0 ? undefined : healthy[draws.nextInt(healthy.length)];
  }

  /** A request no router sees: straight to its engine, which caches and serves it like any other. */
  private sendAroundRouters(request: PreparedRequest, instance: number, nowMs: number): void {
    this.bypassed++;
    const { id, promptTokens, hashes, maxTokens, priority } = request;
    try {
      this.engines[instance].submit({ id, promptTokens, blockHashes: hashes, maxTokens, priority }, nowMs);
    } catch (err) {
      if (!(err instanceof EngineRequestError)) throw err;
      this.queue.push(nowMs, { kind: 'bypass-refused', id });
      return;
    }
    this.bypassing.set(id, instance);
    this.flushKvEvents(instance);
    this.schedule.update(instance);
  }

  private afterCompletion(id: string, timeMs: number): void {
    if (this.held.length > 0) this.routeHeld(timeMs);
    for (const released of this.feed.complete(id)) if (timeMs < this.sendUntilMs) this.dispatch(released, timeMs);
    if (!this.feed.isOpenLoop) this.fillClosedLoop(timeMs);
  }
}
