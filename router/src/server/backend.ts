import { Pool } from 'undici';
import type { BackendTarget } from '../config';
import {
  allHealthySameModels,
  type EngineCacheView,
  type InstanceView,
  type ObservedBlocks,
  type RoutingSnapshot,
} from '../policy';
import { InstanceLoad } from '../state/instance-load';
import type { ModelCard } from '../protocol/model-cards';
import { ConnectionSlots } from './connection-slots';
import {
  loadFiguresOf,
  observedLoadOf,
  ObservedInstance,
  type InstanceLoadFigures,
  type InstanceStateUpdate,
} from '../state/instance-state-log';

export type HealthState = 'pending' | 'healthy' | 'ejected';

export interface BackendPoolOptions {
  readonly connections: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
}

/**
 * One backend: its connection pool, health state and counters. It is its own InstanceView, so building a
 * routing snapshot allocates nothing per instance.
 */
export class Backend implements InstanceView {
  readonly id: string;
  /**
   * The name clients may see (routing headers, error messages): `backend-N` by configuration order, the same on
   * every replica with the same backends, and never the internal URL.
   */
  readonly name: string;
  readonly origin: string;
  readonly basePath: string;
  readonly pool: Pool;
  private healthState: HealthState;
  /** In-flight requests, queued prefill tokens and decoding sequences, as the router sees them. */
  readonly load = new InstanceLoad();
  /** KV-cache capacity in tokens from the engine's vllm:cache_config_info, once read. */
  kvCapacityTokens: number | undefined;
  private models: ReadonlySet<string> | undefined;
  /** Told when `health` or `servedModels` changes (BackendSet: what every snapshot's allHealthySameModels says). */
  onRoutableChange: (() => void) | undefined;
  /** The cards of that list, as the engine gave them (the router's own /v1/models merges them). */
  modelCards: readonly ModelCard[] | undefined;

  /** Prefill speed learned from observed TTFTs (serve --learn-prefill-speeds on; written by the routing core). */
  prefillTokensPerSecond: number | undefined;
  /** The backend's context length in tokens (max_model_len from GET /v1/models), when it states one. */
  maxModelLen: number | undefined;
  /** Times a policy chose this backend (retries included). */
  decisions = 0;
  /** Requests that ended with a complete response from this backend (any status). */
  completed = 0;
  /** Requests that ended in a connection, timeout or stream failure on this backend. */
  failed = 0;
  consecutiveFailures = 0;
  consecutiveSuccesses = 0;
  /** The instance's own published state, when this router observes it (InstanceStateObserver). */
  readonly observation = new ObservedInstance();
  /** What its engine says its prefix cache holds, when the router follows its KV events (core/engine-truth.ts). */
  engineCache: EngineCacheView | undefined;
  /** This router's load figures when the observation was taken (its changes since are added to it). */
  private ownAtObservation: InstanceLoadFigures = loadFiguresOf(new InstanceLoad());

  /** Routed requests' share of the pool, with a bounded wait for a free connection (limits.poolWaitTimeoutMs). */
  readonly connections: ConnectionSlots;

  constructor(
    target: BackendTarget,
    options: BackendPoolOptions,
    initialHealth: HealthState,
    name: string = target.id,
  ) {
    this.id = target.id;
    this.name = name;
    this.origin = target.origin;
    this.basePath = target.basePath;
    this.healthState = initialHealth;
    this.connections = new ConnectionSlots(options.connections);
    this.pool = new Pool(target.origin, {
      connections: options.connections,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      keepAliveTimeout: 4_000,
    });
  }

  /** 'pending' until the first passed health check; only 'healthy' backends are routable. */
  get health(): HealthState {
    return this.healthState;
  }

  set health(to: HealthState) {
    if (to === this.healthState) return;
    this.healthState = to;
    this.onRoutableChange?.();
  }

  /** Models and adapters the engine lists at GET /v1/models, once read (server/served-models.ts); undefined: unknown. */
  get servedModels(): ReadonlySet<string> | undefined {
    return this.models;
  }

  set servedModels(models: ReadonlySet<string> | undefined) {
    this.models = models;
    this.onRoutableChange?.();
  }

  get healthy(): boolean {
    return this.healthState === 'healthy';
  }

  get inFlight(): number {
    return this.load.inFlight;
  }

  get queuedPrefillTokens(): number {
    return this.load.queuedPrefillTokens;
  }

  get decodeSequences(): number {
    return this.load.decodeSequences;
  }

  /** Takes an update from the instance (throws when it does not follow on from the last; the observer starts over). */
  applyObservation(update: InstanceStateUpdate, nowMs: number): void {
    this.observation.apply(update, nowMs);
    this.ownAtObservation = loadFiguresOf(this.load);
  }

  /** Observed load (the instance's count plus this router's changes since), or undefined without a fresh observation. */
  observedLoad(nowMs: number, staleAfterMs: number): InstanceLoadFigures | undefined {
    const o = this.observation;
    if (!o.observed || nowMs - o.observedAtMs > staleAfterMs) return undefined;
    return observedLoadOf(o.load, this.load, this.ownAtObservation);
  }
}

/** What a policy sees of a backend this router observes: the instance's own counts and blocks, while fresh. */
class ObservedView implements InstanceView {
  id: string;
  healthy = false;
  inFlight = 0;
  queuedPrefillTokens = 0;
  decodeSequences = 0;
  kvCapacityTokens: number | undefined;
  prefillTokensPerSecond: number | undefined;
  observedBlocks: ObservedBlocks | undefined;
  servedModels: ReadonlySet<string> | undefined;
  engineCache: EngineCacheView | undefined;

  constructor(readonly backend: Backend) {
    this.id = backend.id;
  }

  refresh(nowMs: number, staleAfterMs: number, excluded: boolean): this {
    const b = this.backend;
    const observed = b.observedLoad(nowMs, staleAfterMs);
    const load = observed ?? b.load;
    this.healthy = b.healthy && !excluded;
    this.inFlight = load.inFlight;
    this.queuedPrefillTokens = load.queuedPrefillTokens;
    this.decodeSequences = load.decodeSequences;
    this.kvCapacityTokens = b.kvCapacityTokens;
    this.servedModels = b.servedModels;
    this.engineCache = b.engineCache;
    this.prefillTokensPerSecond = b.prefillTokensPerSecond;
    this.observedBlocks = observed === undefined ? undefined : b.observation;
    return this;
  }
}

/** A stand-in view used on retry: the instance that refused the connection, seen as unhealthy. */
class ExcludedView implements InstanceView {
  readonly healthy = false;
  readonly id: string;
  readonly inFlight: number;
  readonly queuedPrefillTokens: number;
  readonly decodeSequences: number;
  readonly servedModels: ReadonlySet<string> | undefined;
  constructor(backend: Backend) {
    this.id = backend.id;
    this.servedModels = backend.servedModels;
    this.inFlight = backend.inFlight;
    this.queuedPrefillTokens = backend.queuedPrefillTokens;
    this.decodeSequences = backend.decodeSequences;
  }
}

export class BackendSet {
  private readonly byId: Map<string, Backend>;
  /** One reused view per backend while this router observes its instances' published state. */
  private observedViews: ObservedView[] | undefined;
  private staleAfterMs = 0;

  /** allHealthySameModels of the backends; undefined after a change, until the next snapshot computes it. */
  private routable: boolean | undefined;

  constructor(readonly list: readonly Backend[]) {
    this.byId = new Map(list.map((b) => [b.id, b]));
    const changed = (): void => {
      this.routable = undefined;
    };
    for (const b of list) b.onRoutableChange = changed;
  }

  /** True once observeInstances was called. */
  get observing(): boolean {
    return this.observedViews !== undefined;
  }

  /** From now on, snapshots show each instance's observed state while it is at most `staleAfterMs` old. */
  observeInstances(staleAfterMs: number): void {
    this.observedViews = this.list.map((b) => new ObservedView(b));
    this.staleAfterMs = staleAfterMs;
  }

  get(id: string): Backend | undefined {
    return this.byId.get(id);
  }

  healthyCount(): number {
    let n = 0;
    for (const b of this.list) if (b.healthy) n++;
    return n;
  }

  firstHealthy(): Backend | undefined {
    return this.list.find((b) => b.healthy);
  }

  /**
   * Every backend in configuration order; `excludedId` (a backend that refused us) is shown unhealthy, and with
   * `onlyId` (the backend holding a request's stateful session) every other one is.
   */
  snapshot(nowMs: number, excludedId?: string, onlyId?: string): RoutingSnapshot {
    const shownUnhealthy = (id: string): boolean => id === excludedId || (onlyId !== undefined && id !== onlyId);
    // An excluded backend, or every one but the session's, is shown unhealthy: then not all are healthy.
    const allHealthySame =
      excludedId === undefined && onlyId === undefined && (this.routable ??= allHealthySameModels(this.list));
    const views = this.observedViews;
    if (views !== undefined) {
      for (const v of views) v.refresh(nowMs, this.staleAfterMs, shownUnhealthy(v.id));
      return { instances: views, nowMs, allHealthySameModels: allHealthySame };
    }
    if (excludedId === undefined && onlyId === undefined)
      return { instances: this.list, nowMs, allHealthySameModels: allHealthySame };
    return { instances: this.list.map((b) => (shownUnhealthy(b.id) ? new ExcludedView(b) : b)), nowMs };
  }
}
