import { PrefillSpeedEstimator } from '../policy/prefill-speed';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DestinationStream, Logger } from 'pino';
import type { Registry } from 'prom-client';
import { SeededRng, type Rng } from '../common/seeded-rng';
import {
  isRoutingPolicy,
  liveEngineStateRefusal,
  resolveRouterConfig,
  RouterConfigError,
  type RouterConfig,
  type RouterOptions,
} from '../config';
import {
  createPolicy,
  NoHealthyInstanceError,
  requireServingInstance,
  servesModel,
  UnknownModelError,
  type RoutingPolicy,
} from '../policy';
import {
  publishedBlockChars,
  publishedStateLog,
  RoutingCore,
  type RoutedRequest,
  type RoutingAttempt,
} from '../core/routing-core';
import {
  dialectForPath,
  isJsonContentType,
  openAiErrorBody,
  matchRoute,
  parseRoutedRequest,
  RouterError,
  type ErrorDialect,
  type ParsedRequest,
  type RouteMatch,
} from '../protocol';
import { Backend, BackendSet, type HealthState } from './backend';
import { sendError } from './error-response';
import { answerClientError } from './client-errors';
import { HealthChecker } from './health-checker';
import { createRouterLogger } from './logger';
import {
  ClientGone,
  describeUpstreamError,
  forward,
  upstreamErrorCode,
  classifyOutcome,
  forwardGet,
  instanceInErrors,
  isConnectionRefused,
  isUpstreamTimeout,
  type ForwardRequest,
  type ProxyOutcome,
} from './proxy';
import { engineCacheSaltOf, withCacheSalt } from './engine-cache-salt';
import { FlowGate } from './flow-gate';
import { withRequestPriority } from './request-class';
import { BodyBudget, bodyLimitForContext, defaultBodyBudgetBytes } from './body-budget';
import { ClientGoneError, readBody } from './request-body';
import { RouterMetrics } from './router-metrics';
import { UsageScanner } from './usage-scanner';
import { readKvCapacity } from './cache-config';
import { DEFAULT_KV_CACHE_TOKENS } from '../state/prefix-index';
import { StateHashKey } from '../state/state-hash-key';
import { InstanceStatePublisher } from './instance-state-publisher';
import { InstanceStateObserver, OBSERVATION_STALE_MS } from './instance-state-observer';
import { engineTruthOf, type LiveEngineTruth } from './engine-truth';
import { zmqKvEventSource, type KvEventSource } from '../kv-events/kv-event-source';
import { SessionAffinity } from './session-affinity';
import { ServedModelsDirectory, type ModelCard } from './served-models';
import { KeyRing, presentedKey, UpstreamKey, type KeyFileError } from '../common/api-keys';
import { hostAllowed } from '../protocol/host-allowlist';
import type { UpstreamAuthorization } from './proxy';

/** Where a request in a stateful session is pinned, and how its answers teach the router where sessions live. */
interface SessionRoute {
  readonly pinned: string | undefined;
  readonly onResponseHeaders: (
    backendId: string,
  ) => ((headers: Readonly<Record<string, string | string[] | undefined>>) => void) | undefined;
}

/** A decided request on its way to one backend: what `attempt` forwards, before the router adds its own parts. */
type Exchange = Pick<
  ForwardRequest,
  'req' | 'res' | 'route' | 'parsed' | 'body' | 'backend' | 'decision' | 'decisionMicros' | 'clientGone'
>;

/** Which listener a request arrived on: the main one, or the admin one (adminPort). */
type Listener = 'main' | 'admin';

/** Objects (not configuration) a caller may inject. */
export interface RouterRuntime {
  /** A ready pino logger; otherwise one is built at `logLevel`, writing to `logDestination` or stdout. */
  readonly logger?: Logger;
  readonly logDestination?: DestinationStream;
  /** Rng for random / least-outstanding-requests; default SeededRng(config.seed). */
  readonly rng?: Rng;
  /** More Prometheus text served after the router's own at GET /metrics (the container adds its engines'). */
  readonly extraMetrics?: () => Promise<string>;
  /** Health checks that time out leave an admitted backend admitted (HealthChecker); the container's sagemaker mode. */
  readonly healthTimeoutsKeepHealthy?: boolean;
  /** What delivers the engines' KV events (config.kvEvents): the ZeroMQ subscriber, or a test's own source. */
  readonly kvEventSource?: KvEventSource;
}

export interface BackendStats {
  readonly id: string;
  /** The opaque name clients see in routing headers and errors (`backend-N`). */
  readonly name: string;
  readonly health: HealthState;
  readonly healthy: boolean;
  readonly inFlight: number;
  /** Prompt tokens of in-flight requests still waiting for their first token, less what was predicted cached. */
  readonly queuedPrefillTokens: number;
  /** In-flight requests past their first token. */
  readonly decodeSequences: number;
  /** KV capacity in tokens read from the engine's vllm:cache_config_info (only for policies that use it). */
  readonly kvCapacityTokens: number | undefined;
  /** Prefill tokens per second learned from the TTFTs observed here (learnPrefillSpeeds 'on'), once sampled. */
  readonly prefillTokensPerSecond: number | undefined;
  /** Times the policy chose this backend (a retried request counts on both backends). */
  readonly decisions: number;
  /** Requests this backend answered completely (any HTTP status). */
  readonly completed: number;
  /** Requests that failed on this backend (refused, timed out, reset, or cut mid-stream). */
  readonly failed: number;
  /** The instance's own published state as last observed (observeInstances 'on'), or undefined when none is held. */
  readonly observed: ObservedStats | undefined;
}

export interface ObservedStats {
  /** Requests the instance counts in flight, from every router that sends to it. */
  readonly inFlight: number;
  readonly queuedPrefillTokens: number;
  readonly decodeSequences: number;
  /** Routing blocks its published index holds. */
  readonly indexedBlocks: number;
  /** Index events it has published since it started (a request's blocks recorded, or an eviction the engine showed). */
  readonly seq: number;
  /** Milliseconds since the observation was taken. */
  readonly ageMs: number;
}

export interface RunningRouter {
  /** Base URL, e.g. http://127.0.0.1:41234 (OpenAI clients use `${url}/v1`). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly config: RouterConfig;
  readonly policy: RoutingPolicy;
  /** Live per-backend state and counters, in configuration order. */
  readonly backends: readonly BackendStats[];
  /** The router's private Prometheus registry (what GET /metrics serves). */
  readonly metricsRegistry: Registry;
  /** Base URL of the admin listener (adminPort), undefined when /metrics and instance state are on the main one. */
  readonly adminUrl: string | undefined;
  /** Re-reads every key file now (what SIGHUP does), asynchronously; a file that fails keeps its previous keys. */
  reloadKeys(): Promise<void>;
  /** Stops accepting, lets in-flight requests finish for up to shutdownGraceMs, then cuts the rest. */
  close(): Promise<void>;
}

/**
 * Starts a router on `host:port` in front of `backends`, runs one health check round, and resolves once it
 * accepts requests. Throws RouterConfigError / PolicyConfigError on bad options.
 */
export async function startRouter(options: RouterOptions, runtime: RouterRuntime = {}): Promise<RunningRouter> {
  return startRouterWithConfig(resolveRouterConfig(options), runtime);
}

/** Same, from an already resolved configuration (what the CLI builds from flags, env and file). */
export async function startRouterWithConfig(config: RouterConfig, runtime: RouterRuntime = {}): Promise<RunningRouter> {
  const router = new PrefixRouter(config, runtime);
  await router.start();
  return router;
}

export class PrefixRouter implements RunningRouter {
  readonly policy: RoutingPolicy;
  readonly log: Logger;
  /** decide → commit → load ticket → release, the loop the simulator runs too. */
  private readonly core: RoutingCore<Backend>;
  private readonly set: BackendSet;
  private readonly metrics: RouterMetrics;
  private readonly health: HealthChecker | undefined;
  private readonly server: Server;
  private readonly retryAfterSeconds: number;
  private draining = false;
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  private closing: Promise<void> | undefined;
  private address: AddressInfo | undefined;
  private readonly extraMetrics: (() => Promise<string>) | undefined;
  /** Which backend holds each stateful session this router saw opened. */
  private readonly sessions = new SessionAffinity();
  /** This router's own state, served to routers in front of it (publishStateMs > 0). */
  private publisher: InstanceStatePublisher | undefined;
  /** Follows the backends' published state (observeInstances 'on'). */
  private observer: InstanceStateObserver | undefined;
  /** The engines' own account of their caches (kvEvents), read by cache-aware through each backend's view. */
  readonly engineTruth: LiveEngineTruth | undefined;
  /** Keys clients must present (apiKeyFile). */
  private readonly apiKeys: KeyRing | undefined;
  /** Keys the admin listener requires (adminApiKeyFile). */
  private readonly adminKeys: KeyRing | undefined;
  /** The key sent to engines (upstreamApiKeyFile). */
  private readonly upstreamKey: UpstreamKey | undefined;
  private readonly adminServer: Server | undefined;
  /** Routed requests in flight, in total and per client (limits.maxInFlight / maxInFlightPerClient). */
  private routedInFlight = 0;
  private readonly inFlightByClient = new Map<string, number>();
  private readonly bodyBudget: BodyBudget;
  /** Flow control by priority class: where lower classes wait while their engine's prefill queue is long. */
  private readonly flowGate: FlowGate;
  private adminAddress: AddressInfo | undefined;
  /** Which models and adapters each backend serves (its /v1/models), so requests go only where their model is. */
  private readonly models: ServedModelsDirectory;
  /** The secret this router's routing block hashes are keyed with, published and observed (stateHashKeyFile). */
  readonly stateHashKey: StateHashKey;
  /** Largest request body read: limits.maxBodyBytes, or derived from the backends' context at start (maxBodyBytesFromContext). */
  private maxBodyBytes: number;

  constructor(
    readonly config: RouterConfig,
    runtime: RouterRuntime = {},
  ) {
    this.log = runtime.logger ?? createRouterLogger(config.logLevel, runtime.logDestination);
    this.extraMetrics = runtime.extraMetrics;
    this.stateHashKey = routerStateHashKey(config);
    this.maxBodyBytes = config.limits.maxBodyBytes;
    this.policy = isRoutingPolicy(config.policy)
      ? config.policy
      : createPolicy(config.policy, {
          rng: runtime.rng ?? new SeededRng(config.seed),
          stateHashKey: this.stateHashKey,
        });
    // A ready policy object skips the config's check: one that reads engine state serve lacks is refused here too.
    const refusal = liveEngineStateRefusal(this.policy.name, this.policy.engineState);
    if (refusal !== undefined) throw new RouterConfigError([`policy is refused: ${refusal}`]);
    const checking = config.healthCheck.intervalMs > 0;
    this.set = backendSetOf(config, checking);
    this.metrics = new RouterMetrics(this.set);
    this.engineTruth = engineTruthOf(
      config.kvEvents,
      config.tokenizer,
      () => runtime.kvEventSource ?? zmqKvEventSource(this.metrics.registry, this.log),
    );
    for (const b of this.set.list) b.engineCache = this.engineTruth?.viewOf(b.id);
    this.flowGate = new FlowGate(config.flowControl, this.metrics);
    const keyFileFailed = (error: KeyFileError): void =>
      this.log.error({ file: error.path }, `key file re-read failed, previous keys kept: ${error.message}`);
    this.core = routingCoreOf(config, this.policy, this.set, this.metrics, this.log);
    this.upstreamKey =
      config.upstreamApiKeyFile === undefined ? undefined : new UpstreamKey(config.upstreamApiKeyFile, keyFileFailed);
    this.models = new ServedModelsDirectory(
      this.set.list,
      config.healthCheck.timeoutMs,
      () => this.upstreamKey?.authorization,
    );
    this.health = checking
      ? new HealthChecker(
          this.set.list,
          config.healthCheck,
          this.log,
          runtime.healthTimeoutsKeepHealthy === true,
          (backend) => void this.models.refresh(backend),
        )
      : undefined;
    this.retryAfterSeconds = Math.max(1, Math.ceil((checking ? config.healthCheck.intervalMs : 1000) / 1000));
    this.bodyBudget = new BodyBudget(
      config.limits.maxBufferedBodyBytes > 0
        ? config.limits.maxBufferedBodyBytes
        : defaultBodyBudgetBytes(config.limits.maxBodyBytes),
    );
    this.server = listenerOf(config, false, (req, res) => this.onRequest(req, res));
    this.apiKeys = config.apiKeyFile === undefined ? undefined : new KeyRing(config.apiKeyFile, keyFileFailed, true);
    this.adminKeys =
      config.adminApiKeyFile === undefined ? undefined : new KeyRing(config.adminApiKeyFile, keyFileFailed);
    if (config.adminPort !== undefined)
      this.adminServer = listenerOf(config, true, (req, res) => this.onRequest(req, res, 'admin'));
  }

  get adminUrl(): string | undefined {
    if (this.adminAddress === undefined) return undefined;
    const host = this.adminAddress.address.includes(':') ? `[${this.adminAddress.address}]` : this.adminAddress.address;
    return `http://${host}:${this.adminAddress.port}`;
  }

  async reloadKeys(): Promise<void> {
    await Promise.all([this.apiKeys?.reload(), this.adminKeys?.reload(), this.upstreamKey?.reload()]);
  }

  /** What replaces the client's Authorization towards the engines. */
  private get upstreamAuthorization(): UpstreamAuthorization {
    if (this.upstreamKey !== undefined) return { value: this.upstreamKey.authorization };
    return this.apiKeys !== undefined ? 'drop' : 'pass';
  }

  get url(): string {
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `http://${host}:${this.port}`;
  }

  get host(): string {
    return this.address?.address ?? this.config.host;
  }

  get port(): number {
    return this.address?.port ?? this.config.port;
  }

  get backends(): BackendStats[] {
    return this.set.list.map((b) => ({
      id: b.id,
      name: b.name,
      health: b.health,
      healthy: b.healthy,
      inFlight: b.inFlight,
      queuedPrefillTokens: b.queuedPrefillTokens,
      decodeSequences: b.decodeSequences,
      kvCapacityTokens: b.kvCapacityTokens,
      prefillTokensPerSecond: b.prefillTokensPerSecond,
      decisions: b.decisions,
      completed: b.completed,
      failed: b.failed,
      observed: b.observation.observed
        ? {
            ...b.observation.load,
            indexedBlocks: b.observation.size,
            seq: b.observation.seq,
            ageMs: Date.now() - b.observation.observedAtMs,
          }
        : undefined,
    }));
  }

  get metricsRegistry(): Registry {
    return this.metrics.registry;
  }

  async start(): Promise<void> {
    await this.health?.start();
    // KV capacities for cache-aware policies: read once, best-effort, bounded by the health-check timeout.
    const timeoutMs = this.config.healthCheck.timeoutMs;
    await Promise.all([
      ...(this.policy.wantsKvCapacity === true || this.config.publishStateMs > 0
        ? this.set.list.map((b) => readKvCapacity(b, timeoutMs))
        : []),
      // Also each backend's context length (max_model_len on its model cards), which the body limit derives from.
      this.models.refreshAll(),
    ]);
    this.maxBodyBytes = this.bodyLimit();
    if (this.maxBodyBytes !== this.config.limits.maxBodyBytes)
      this.log.info(
        { maxBodyBytes: this.maxBodyBytes },
        "body limit derived from the backends' context (max_model_len); set limits.maxBodyBytes to override",
      );
    try {
      await listen(this.server, this.config.port, this.config.host);
      if (this.adminServer !== undefined) {
        try {
          await listen(this.adminServer, this.config.adminPort ?? 0, this.config.adminHost);
        } catch (err) {
          await new Promise<void>((resolve) => this.server.close(() => resolve()));
          throw err;
        }
        this.adminAddress = this.adminServer.address() as AddressInfo;
      }
    } catch (err) {
      // e.g. EADDRINUSE: release what start() opened, so a caller that catches this leaks nothing.
      await this.health?.stop();
      await Promise.all(this.set.list.map((b) => b.pool.destroy().catch(() => undefined)));
      throw err;
    }
    this.address = this.server.address() as AddressInfo;
    this.models.start();
    for (const keys of [this.apiKeys, this.adminKeys, this.upstreamKey]) keys?.watch();
    if (this.config.publishStateMs > 0) {
      const kvTokens = this.set.list.reduce((sum, b) => sum + (b.kvCapacityTokens ?? DEFAULT_KV_CACHE_TOKENS), 0);
      const blockChars = publishedBlockChars(
        this.policy,
        this.config.publishStateBlockChars,
        this.config.publishStateBlockChars,
      );
      this.publisher = new InstanceStatePublisher(
        publishedStateLog(blockChars, kvTokens, this.stateHashKey),
        this.config.publishStateMs,
      );
    }
    if (this.config.observeInstances === 'on') {
      this.set.observeInstances(OBSERVATION_STALE_MS);
      this.observer = new InstanceStateObserver(
        this.set.list,
        this.log,
        this.config.healthCheck.timeoutMs,
        () => this.upstreamKey?.authorization,
        this.stateHashKey,
      );
      this.observer.start();
    }
    this.engineTruth?.start();
    this.log.info(
      {
        url: this.url,
        ...(this.adminUrl !== undefined ? { adminUrl: this.adminUrl } : {}),
        authentication: this.apiKeys !== undefined,
        policy: this.policy.name,
        backends: this.set.list.map((b) => ({ id: b.id, health: b.health })),
      },
      'router listening',
    );
  }

  close(): Promise<void> {
    this.flowGate.close();
    this.closing ??= this.drain();
    return this.closing;
  }

  /**
   * Keeps listening while in-flight requests finish, so a client that connects during the drain gets a clear
   * 503 shutting_down with Retry-After (and Connection: close) rather than a refused connection it cannot tell
   * from a crash; stops listening once idle or when the grace period is over.
   */
  private async drain(): Promise<void> {
    this.draining = true;
    this.publisher?.close();
    this.log.info({ inFlight: this.active, graceMs: this.config.shutdownGraceMs }, 'router draining');
    this.server.closeIdleConnections();
    let graceTimer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<boolean>((resolve) => {
      graceTimer = setTimeout(() => resolve(false), this.config.shutdownGraceMs);
    });
    const finished = await Promise.race([this.whenIdle().then(() => true), graceOver]);
    clearTimeout(graceTimer);
    if (!finished) this.log.warn({ cut: this.active }, 'grace period over: cutting remaining requests');
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    const adminClosed =
      this.adminServer === undefined
        ? Promise.resolve()
        : new Promise<void>((resolve) => this.adminServer?.close(() => resolve()));
    this.adminServer?.closeAllConnections();
    await Promise.all([closed, adminClosed]);
    for (const keys of [this.apiKeys, this.adminKeys, this.upstreamKey]) keys?.close();
    this.models.stop();
    await this.observer?.stop();
    await this.engineTruth?.close();
    await this.health?.stop();
    await Promise.all(this.set.list.map((b) => b.pool.destroy().catch(() => undefined)));
    this.log.info('router closed');
  }

  private whenIdle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private onRequest(req: IncomingMessage, res: ServerResponse, listener: Listener = 'main'): void {
    // Requests arriving while draining are answered 503 at once; only those admitted before count towards it.
    const admitted = !this.draining;
    if (admitted) this.active++;
    req.on('error', () => undefined); // a client reset is handled through 'close'; never crash on it
    res.once('close', () => {
      if (admitted) this.active--;
      if (this.draining) {
        this.server.closeIdleConnections();
        if (this.active === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      }
    });
    if (this.draining) res.setHeader('connection', 'close');
    this.handle(req, res, listener).catch((err: unknown) => {
      // Last resort: handle() answers its own errors; reaching here is a bug, still never crash.
      this.log.error({ err }, 'unhandled error in request handler');
      if (!res.headersSent) sendError(req, res, new RouterError('internal_error', 'internal router error'), 'openai');
      else res.destroy();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse, listener: Listener): Promise<void> {
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const pathname = q === -1 ? rawUrl : rawUrl.slice(0, q);
    let dialect: ErrorDialect = dialectForPath(pathname);
    try {
      const route = matchRoute(req.method ?? 'GET', pathname);
      dialect = route.dialect;
      if (route.kind === 'ping') return this.ping(res);
      if (this.config.allowedHosts !== undefined && !hostAllowed(req.headers.host, this.config.allowedHosts)) {
        throw new RouterError(
          'misdirected_request',
          'this router does not answer for the host named in the Host header',
        );
      }
      const verifiedKey = this.authorize(req, route, listener);
      const keyIdentity = verifiedKey?.identity;
      if (route.kind === 'metrics') return await this.serveMetrics(res, listener);
      if (route.kind === 'instance-state') return this.serveInstanceState(q === -1 ? '' : rawUrl.slice(q + 1), res);
      if (this.draining)
        throw new RouterError('shutting_down', 'the router is shutting down', {
          retryAfterSeconds: this.retryAfterSeconds,
        });
      if (route.kind === 'models') return await this.listModels(req, res);
      if ((route.kind === 'chat' || route.kind === 'completions') && !isJsonContentType(req.headers['content-type'])) {
        throw new RouterError('unsupported_media_type', 'this route takes Content-Type: application/json');
      }
      this.admitRouted(req, res, keyIdentity);
      const { bodyTimeoutMs, bodyIdleTimeoutMs } = this.config.limits;
      const timeouts = { totalMs: bodyTimeoutMs, idleMs: bodyIdleTimeoutMs };
      const body = await readBody(req, this.maxBodyBytes, timeouts, this.bodyBudget);
      // The body stays held until the answer ends (it is forwarded, and retried on another backend, from memory).
      if (res.destroyed) this.bodyBudget.give(body.length);
      else res.once('close', () => this.bodyBudget.give(body.length));
      const sharedEngineCache = this.config.sharedEngineCache === 'on';
      // Keys sharing the engines' cache share the routing index too, so a prefix common to them is placed together.
      const parsed = parseRoutedRequest(route, body, req.headers, {
        keyIdentity: sharedEngineCache ? undefined : keyIdentity,
      });
      const salt = engineCacheSaltOf(parsed, keyIdentity, sharedEngineCache);
      const [classed, forwarded] = withRequestPriority(
        parsed,
        req.headers,
        salt === undefined ? body : withCacheSalt(body, salt),
        verifiedKey?.priority,
      );
      await this.routeAndProxy(req, res, route, classed, forwarded);
    } catch (err) {
      if (err instanceof ClientGoneError) return;
      let error: RouterError;
      if (err instanceof RouterError) {
        error = err;
      } else {
        this.log.error({ err }, 'internal error');
        error = new RouterError('internal_error', 'internal router error');
      }
      this.metrics.rejected.inc({ code: error.code });
      if (this.log.isLevelEnabled('debug'))
        this.log.debug(
          { method: req.method, path: pathname, code: error.code, status: error.status },
          'request rejected',
        );
      sendError(req, res, error, dialect);
    }
  }

  /**
   * Access control, from the request line and headers alone (nothing of the body is read before it passes).
   * With an admin listener, /metrics and /router/v1/instance-state exist only there and the data paths only on
   * the main one (others answer 404, as for any unknown path); the admin listener checks adminApiKeyFile, the
   * main one apiKeyFile. Without an admin listener, everything but /ping and /health needs an apiKeyFile key.
   * Returns the client key verified here, if one was: its identity (KeyRing.identity), the tenant the request's
   * in-flight cap counts against and its cache scope, and the priority class its key file line gives it. A key
   * presented where none is checked is no identity.
   */
  private authorize(
    req: IncomingMessage,
    route: RouteMatch,
    listener: Listener,
  ): { readonly identity: string; readonly priority: number | undefined } | undefined {
    const adminRoute = route.kind === 'metrics' || route.kind === 'instance-state';
    if (this.adminServer !== undefined && adminRoute !== (listener === 'admin')) {
      throw new RouterError(
        'not_found',
        adminRoute
          ? 'this path is served on the admin listener'
          : 'the admin listener serves only /metrics, /router/v1/instance-state and /ping',
      );
    }
    const keys = listener === 'admin' ? this.adminKeys : this.apiKeys;
    if (keys === undefined) return undefined;
    // The SageMaker container contract: SageMaker's front end has authenticated the caller and sends no key.
    if (this.config.openContainerPaths === 'on' && route.kind === 'invocations' && route.endpointName === undefined)
      return undefined;
    const key = presentedKey(req.headers);
    const index = keys.match(key);
    if (index < 0 || key === undefined) {
      throw new RouterError(
        'unauthorized',
        'a valid API key is required (Authorization: Bearer KEY or x-prefix-router-api-key)',
        { authenticate: 'Bearer' },
      );
    }
    return listener === 'main' ? { identity: KeyRing.identity(key), priority: keys.priorityAt(index) } : undefined;
  }

  /**
   * Counts a routed request against the in-flight caps until its response closes, or refuses it (before its
   * body is read): 503 overloaded past maxInFlight, 429 too_many_requests past maxInFlightPerClient. A client is
   * its verified key's identity, else its address: a key nothing checked is made up at will.
   */
  private admitRouted(req: IncomingMessage, res: ServerResponse, keyIdentity: string | undefined): void {
    const { maxInFlight, maxInFlightPerClient } = this.config.limits;
    if (maxInFlight === 0 && maxInFlightPerClient === 0) return;
    if (maxInFlight > 0 && this.routedInFlight >= maxInFlight) {
      throw new RouterError('overloaded', `the router has ${maxInFlight} requests in flight, its limit`, {
        retryAfterSeconds: 1,
      });
    }
    const client = keyIdentity !== undefined ? `key:${keyIdentity}` : `addr:${req.socket.remoteAddress ?? ''}`;
    const mine = this.inFlightByClient.get(client) ?? 0;
    if (maxInFlightPerClient > 0 && mine >= maxInFlightPerClient) {
      throw new RouterError(
        'too_many_requests',
        `this client has ${maxInFlightPerClient} requests in flight, its limit`,
        { retryAfterSeconds: 1 },
      );
    }
    this.routedInFlight++;
    this.inFlightByClient.set(client, mine + 1);
    res.once('close', () => {
      this.routedInFlight--;
      const left = (this.inFlightByClient.get(client) ?? 1) - 1;
      if (left <= 0) this.inFlightByClient.delete(client);
      else this.inFlightByClient.set(client, left);
    });
  }

  /**
   * decide → commit → dispatch, with one retry when the chosen backend refuses the connection before
   * anything was sent: the retry re-decides with that backend shown as unhealthy, so the "next choice" is what
   * the policy picks among the rest (for sagemaker-prefix-aware: the next instance in rendezvous order for the
   * key, or the least loaded one if that is over the threshold).
   */
  private async routeAndProxy(
    req: IncomingMessage,
    res: ServerResponse,
    route: RouteMatch,
    parsed: ParsedRequest,
    body: Buffer,
  ): Promise<void> {
    await this.checkModelServed(parsed.routing.model, route);
    const routed = this.core.begin(parsed.routing);
    // This router's own count of the request, for routers observing it: it reaches this instance now, once,
    // whatever the retries.
    if (this.publisher !== undefined) routed.reach(this.publisher.log);
    try {
      await this.routeWithRetry(req, res, route, parsed, body, routed);
    } finally {
      routed.end();
    }
  }

  private async routeWithRetry(
    req: IncomingMessage,
    res: ServerResponse,
    route: RouteMatch,
    parsed: ParsedRequest,
    body: Buffer,
    routed: RoutedRequest<Backend>,
  ): Promise<void> {
    const clientGone = new ClientGone();
    res.once('close', () => {
      if (!res.writableFinished) clientGone.abort();
    });
    const session = this.sessionRoute(req, parsed.routing.model);
    let refusedBy: string | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      const {
        decision,
        target: backend,
        decisionMicros,
      } = attempt > 0
        ? this.decide(routed, refusedBy, undefined, route)
        : this.flowGate.mayHold(parsed.priority)
          ? await this.flowGate.place(
              parsed.priority,
              (admits) => this.decideAdmitted(routed, session.pinned, route, admits),
              res,
            )
          : this.decide(routed, undefined, session.pinned, route);
      const startedMs = performance.now();
      const usage = new UsageScanner();
      const exchange = { req, res, route, parsed, body, backend, decision, decisionMicros, clientGone };
      const outcome = await this.attempt(exchange, routed, usage, session, attempt);
      const counted = classifyOutcome(outcome);
      if (counted.backendCounter !== undefined) backend[counted.backendCounter]++;
      // The one release of this attempt, however it ended (a refused connection reports nothing of the engine).
      routed.release({
        kind: counted.release,
        ...(usage.cachedTokens !== undefined ? { cachedTokens: usage.cachedTokens } : {}),
        ...(usage.promptTokens !== undefined ? { promptTokens: usage.promptTokens } : {}),
      });
      this.flowGate.wake();
      if (outcome.kind === 'refused') {
        refusedBy = backend.id;
        this.metrics.retries.inc({ instance: backend.id });
        this.log.warn({ backend: backend.id }, 'backend refused the connection; retrying on the next choice');
        continue;
      }
      const reason = decision.reason;
      this.metrics.requests.inc({
        policy: this.policy.name,
        reason,
        instance: backend.id,
        status: counted.statusLabel,
      });
      if (this.log.isLevelEnabled('debug'))
        this.logRouted(req, parsed, body, { backend, reason, attempt, status: counted.statusLabel, startedMs });
      return;
    }
  }

  /**
   * Where a request in a stateful session goes: where the session lives, as SageMaker sends it to its instance (the
   * policy still decides, its only choice, so its accounting sees the request). Gone, unhealthy or not serving the
   * request's model (another adapter): the policy chooses freely, and that backend answers as a model does for a
   * session it does not know.
   */
  private sessionRoute(req: IncomingMessage, model: string): SessionRoute {
    if (!SessionAffinity.involves(req.headers)) return { pinned: undefined, onResponseHeaders: () => undefined };
    const backend = this.set.get(this.sessions.instanceFor(req.headers, Date.now()) ?? '');
    return {
      pinned: backend?.healthy === true && servesModel(backend, model) ? backend.id : undefined,
      onResponseHeaders: (id) => (headers) => this.sessions.observe(id, headers, Date.now()),
    };
  }

  /**
   * One attempt on the decided backend: a connection from its pool, the forwarded exchange, and what it came to.
   * An error before the answer started is answered to the client here, except a first refusal (retried).
   */
  private async attempt(
    exchange: Exchange,
    routed: RoutedRequest<Backend>,
    usage: UsageScanner,
    session: SessionRoute,
    attempt: number,
  ): Promise<ProxyOutcome> {
    const { req, res, route, parsed, body, backend, decision, decisionMicros, clientGone } = exchange;
    let releaseConnection: (() => void) | undefined;
    try {
      releaseConnection = await backend.connections.acquire(this.config.limits.poolWaitTimeoutMs);
      // Every member named, not `{ ...exchange, more }`: on Node 20 a spread followed by further members costs about
      // 10 µs per object (new hidden classes each time), a measurable share of the router's CPU per request.
      return await forward({
        req,
        res,
        route,
        parsed,
        body,
        backend,
        decision,
        decisionMicros,
        clientGone,
        limits: this.config.limits,
        metrics: this.metrics,
        onFirstByte: () => {
          routed.firstToken(Date.now());
          this.flowGate.wake();
        },
        onAccepted: () => routed.accepted(),
        usage,
        upstreamAuthorization: this.upstreamAuthorization,
        routingHeaders: this.config.routingHeaders,
        onResponseHeaders: session.onResponseHeaders(backend.id),
        onStreamFailure: (err) =>
          this.log.warn(
            { backend: backend.id, error: describeUpstreamError(err) },
            'backend failed mid-response; terminal error sent',
          ),
      });
    } catch (err) {
      if (clientGone.aborted) return { kind: 'client-gone' };
      if (attempt === 0 && isConnectionRefused(err)) return { kind: 'refused' };
      const error = this.upstreamError(err, backend, attempt);
      // No routing headers on errors: a cheap rejected request must not reveal what is cached where.
      sendError(req, res, error, route.dialect);
      return { kind: 'error', error };
    } finally {
      releaseConnection?.();
    }
  }

  private logRouted(
    req: IncomingMessage,
    parsed: ParsedRequest,
    body: Buffer,
    a: { backend: Backend; reason: string; attempt: number; status: string; startedMs: number },
  ): void {
    this.log.debug(
      {
        path: req.url,
        api: parsed.routing.api,
        bytes: body.length,
        stream: parsed.routing.stream,
        instance: a.backend.id,
        reason: a.reason,
        attempt: a.attempt,
        status: a.status,
        ms: Math.round((performance.now() - a.startedMs) * 1000) / 1000,
      },
      'request routed',
    );
  }

  /**
   * Refuses a request whose model no backend serves, before anything is committed: vLLM's own 404 (or, on the
   * SageMaker runtime API, the ModelError SageMaker makes of a container's 404). Each backend's list is re-read
   * first (at most once per MISS_REFRESH_MS), so an adapter loaded at run time is found.
   */
  private async checkModelServed(model: string, route: RouteMatch): Promise<void> {
    const served = (): boolean => {
      try {
        requireServingInstance(this.set.snapshot(Date.now()), model);
        return true;
      } catch (err) {
        if (err instanceof UnknownModelError) return false;
        throw err;
      }
    };
    if (served() || ((await this.models.refreshOnMiss(Date.now())) && served())) return;
    throw modelNotFound(new UnknownModelError(model), route);
  }

  /** The core's decision on this router's backends; no healthy backend becomes the client's 503 (or the retry's 502). */
  private decide(
    routed: RoutedRequest<Backend>,
    excluded: string | undefined,
    only: string | undefined,
    route?: RouteMatch,
  ): RoutingAttempt<Backend> {
    return this.translatingNoBackend(excluded, route, () =>
      routed.decide(this.set.snapshot(Date.now(), excluded, only), excluded),
    );
  }

  /** As `decide`, when the chosen backend passes flow control's `admits`; undefined (nothing committed) if not. */
  private decideAdmitted(
    routed: RoutedRequest<Backend>,
    only: string | undefined,
    route: RouteMatch,
    admits: (queuedPrefillTokens: number) => boolean,
  ): RoutingAttempt<Backend> | undefined {
    return this.translatingNoBackend(undefined, route, () =>
      routed.decideIfAdmitted(this.set.snapshot(Date.now(), undefined, only), (b) =>
        admits(b.load.queuedPrefillTokens),
      ),
    );
  }

  private translatingNoBackend<R>(excluded: string | undefined, route: RouteMatch | undefined, decide: () => R): R {
    try {
      return decide();
    } catch (err) {
      if (err instanceof UnknownModelError) throw modelNotFound(err, route);
      if (!(err instanceof NoHealthyInstanceError)) throw err;
      if (excluded !== undefined) {
        throw new RouterError(
          'upstream_connect_failed',
          `${this.instanceInErrors(this.set.get(excluded))} refused the connection and no other healthy instance is available`,
          {
            retryAfterSeconds: this.retryAfterSeconds,
          },
        );
      }
      throw new RouterError('no_healthy_backend', 'no healthy backend is available', {
        retryAfterSeconds: this.retryAfterSeconds,
      });
    }
  }

  /** How errors name an instance: by name only with routing headers on (instanceInErrors). */
  private instanceInErrors(backend: Backend | undefined): string {
    return backend === undefined ? 'the chosen instance' : instanceInErrors(this.config.routingHeaders, backend);
  }

  private upstreamError(err: unknown, backend: Backend, attempt: number): RouterError {
    if (err instanceof RouterError) return err;
    if (isConnectionRefused(err)) {
      return new RouterError(
        'upstream_connect_failed',
        attempt > 0
          ? `${this.instanceInErrors(backend)} refused the connection (after a retry)`
          : `${this.instanceInErrors(backend)} refused the connection`,
        { retryAfterSeconds: this.retryAfterSeconds },
      );
    }
    if (isUpstreamTimeout(err))
      return new RouterError(
        'upstream_timeout',
        `${this.instanceInErrors(backend)} did not answer in time (${upstreamErrorCode(err)})`,
      );
    this.log.warn(
      { backend: backend.id, error: describeUpstreamError(err) },
      'backend request failed before a response',
    );
    return new RouterError(
      'upstream_error',
      `${this.instanceInErrors(backend)} failed before responding (${upstreamErrorCode(err)})`,
    );
  }

  /**
   * The body limit in force: limits.maxBodyBytes when configured or when no backend states its context; else
   * bodyLimitForContext of the longest context a backend states, within the body budget (a body must fit it).
   */
  private bodyLimit(): number {
    if (!this.config.maxBodyBytesFromContext) return this.config.limits.maxBodyBytes;
    const contexts = this.set.list.map((b) => b.maxModelLen).filter((n): n is number => n !== undefined);
    if (contexts.length === 0) return this.config.limits.maxBodyBytes;
    return Math.min(this.bodyBudget.maxBytes, bodyLimitForContext(Math.max(...contexts)));
  }

  /** Largest request body this router reads now (limits.maxBodyBytes, or derived from the backends' context). */
  get bodyLimitBytes(): number {
    return this.maxBodyBytes;
  }

  private ping(res: ServerResponse): void {
    const healthy = this.set.healthyCount();
    const ok = healthy > 0 && !this.draining;
    const body = JSON.stringify({
      status: ok ? 'healthy' : 'unhealthy',
      healthyBackends: healthy,
      backends: this.set.list.length,
      draining: this.draining,
    });
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  private serveInstanceState(query: string, res: ServerResponse): void {
    if (this.publisher === undefined)
      throw new RouterError(
        'not_found',
        'this router does not publish its instance state (start it with --publish-state-ms)',
      );
    this.publisher.serve(new URLSearchParams(query), res);
  }

  /**
   * GET /metrics. On the main listener of a router that requires client keys, any client key reads it, so backends
   * are labelled there by their opaque names (`backend-N`), never by URL. Without keys (whoever reaches the port may
   * use the engines anyway) and on the admin listener (operators only) the URLs stay.
   */
  private async serveMetrics(res: ServerResponse, listener: Listener): Promise<void> {
    let text = await this.metrics.registry.metrics();
    if (this.extraMetrics !== undefined) text += await this.extraMetrics().catch(() => '');
    if (listener === 'main' && this.apiKeys !== undefined)
      for (const b of this.set.list) text = text.split(`"${b.id}"`).join(`"${b.name}"`);
    res.writeHead(200, {
      'content-type': this.metrics.registry.contentType,
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  }

  /**
   * GET /v1/models: when every healthy backend's list is known, their union (each model once, as the first backend
   * listing it gives its card), so a client sees every model and adapter the fleet serves; otherwise the first
   * healthy backend's own answer, as before lists were read.
   */
  private async listModels(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const healthy = this.set.list.filter((b) => b.healthy);
    if (healthy.length === 0)
      throw new RouterError('no_healthy_backend', 'no healthy backend is available', {
        retryAfterSeconds: this.retryAfterSeconds,
      });
    if (healthy.every((b) => b.modelCards !== undefined)) {
      const cards = new Map<string, ModelCard>();
      for (const b of healthy) for (const card of b.modelCards ?? []) if (!cards.has(card.id)) cards.set(card.id, card);
      const text = JSON.stringify({ object: 'list', data: [...cards.values()] });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    const backend = healthy[0];
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    try {
      await forwardGet(
        res,
        backend,
        '/v1/models',
        req.headers,
        abort.signal,
        this.config.limits,
        this.upstreamAuthorization,
        this.config.routingHeaders,
      );
    } catch (err) {
      if (abort.signal.aborted) throw new ClientGoneError();
      throw this.upstreamError(err, backend, 0);
    }
  }
}

/** An unknown model as the client's dialect expects it: vLLM's 404, or on the runtime API SageMaker's ModelError of it. */
function modelNotFound(err: UnknownModelError, route: RouteMatch | undefined): RouterError {
  const error = new RouterError('model_not_found', err.message);
  if (route?.dialect !== 'sagemaker-runtime') return error;
  return new RouterError('model_error', 'Received error (404) from the model instance', {
    originalStatusCode: 404,
    originalMessage: JSON.stringify(openAiErrorBody(error)),
  });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export type { HealthState, RouterConfig, RouterOptions };

/**
 * The secret a router keys its routing block hashes with: its stateHashKeyFile's; without one, the given policy's
 * when it hashes blocks (a caller that built it shares its key), else a random secret of this router's own, so
 * that a router without the file matches no other (as two processes would not).
 */
function routerStateHashKey(config: RouterConfig): StateHashKey {
  const policyKey = isRoutingPolicy(config.policy) ? config.policy.routingBlocks?.key : undefined;
  if (config.stateHashKeyFile === undefined) return policyKey ?? StateHashKey.random();
  const key = StateHashKey.fromFile(config.stateHashKeyFile);
  if (policyKey !== undefined && policyKey.id !== key.id)
    throw new Error(
      'config.policy hashes its routing blocks with another secret than stateHashKeyFile holds: build it with the same StateHashKey',
    );
  return key;
}

/** The configured backends, `backend-N` in what clients may see; pending until health-checked when checks run. */
function backendSetOf(config: RouterConfig, checking: boolean): BackendSet {
  return new BackendSet(
    config.backends.map(
      (target, index) =>
        new Backend(
          target,
          {
            connections: config.maxConnectionsPerBackend,
            headersTimeoutMs: config.limits.upstreamHeadersTimeoutMs,
            bodyTimeoutMs: config.limits.upstreamBodyTimeoutMs,
          },
          checking ? 'pending' : 'healthy',
          `backend-${index + 1}`,
        ),
    ),
  );
}

/** The routing core, with the hooks that count decisions and predicted vs delivered cache hits per instance. */
function routingCoreOf(
  config: RouterConfig,
  policy: RoutingPolicy,
  set: BackendSet,
  metrics: RouterMetrics,
  log: Logger,
): RoutingCore<Backend> {
  return new RoutingCore<Backend>(
    policy,
    (id) => set.get(id),
    {
      decided: (decision, backend, decideSeconds) => {
        metrics.decisionSeconds.observe({ policy: policy.name }, decideSeconds);
        backend.decisions++;
        metrics.decisions.inc({ policy: policy.name, reason: decision.reason, instance: backend.id });
      },
      // Predicted vs delivered cache hits per instance.
      released: ({ decision, target }, outcome, estimatedPrompt) => {
        if (outcome.kind !== 'completed' || outcome.cachedTokens === undefined) return;
        const prompt = outcome.promptTokens ?? estimatedPrompt;
        metrics.promptTokens.inc({ instance: target.id }, prompt);
        metrics.predictedCachedTokens.inc(
          { instance: target.id },
          Math.min(decision.predictedCachedTokens ?? 0, prompt),
        );
        metrics.deliveredCachedTokens.inc({ instance: target.id }, outcome.cachedTokens);
      },
      policyReleaseFailed: (err) => log.error({ err, policy: policy.name }, 'policy release failed'),
    },
    {
      publishBlocks: config.publishStateBlocks === 'on',
      ...(config.learnPrefillSpeeds === 'on' ? { prefillSpeeds: new PrefillSpeedEstimator() } : {}),
    },
  );
}

/**
 * The main or admin HTTP listener: headers and body timeouts from the limits (the request timeout is a backstop
 * only: readBody answers slow bodies with a proper 408 first); the main one also sets TCP no-delay and checks
 * connections often enough for the headers timeout.
 */
function listenerOf(config: RouterConfig, admin: boolean, onRequest: RequestListener): Server {
  const { headersTimeoutMs, bodyTimeoutMs } = config.limits;
  const server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: headersTimeoutMs + bodyTimeoutMs + 1000,
      keepAliveTimeout: 5_000,
      ...(admin
        ? {}
        : {
            connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
            noDelay: true,
          }),
    },
    onRequest,
  );
  server.on('clientError', answerClientError);
  return server;
}
