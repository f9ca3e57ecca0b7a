import type { RoutingRequest } from '../protocol/routing-request';
import type { EngineQueue } from '../state/engine-queue';
import type { RoutingBlockKey, StateHashKey } from '../state/state-hash-key';
import type { StageSummary } from './stages/stage';

export type { DecisionReason, PolicyName } from './policy-registry';
export type { EngineQueue } from '../state/engine-queue';

/** What the caller knows about one instance at decision time. */
export interface InstanceView {
  /** Stable identifier (the same on every router replica for the same backend list), e.g. the backend URL. */
  readonly id: string;
  /** False while health checks have ejected the instance: a policy never chooses it. */
  readonly healthy: boolean;
  /** Requests dispatched to the instance and not yet finished (counted by the caller before dispatch). */
  readonly inFlight: number;
  /**
   * The caller's estimate of prompt tokens queued for prefill on the instance: the prompt tokens of in-flight
   * requests that have not produced their first token, less what the policy predicted cached for each. The live
   * router and the simulator keep it identically (state/instance-load.ts): first token observed = prefill done.
   * Absent (0) when the caller does not track it.
   */
  readonly queuedPrefillTokens?: number;
  /** In-flight requests past their first token: sequences decoding on the instance. Absent (0) when untracked. */
  readonly decodeSequences?: number;
  /** KV-cache capacity of the instance in tokens, when known (the engine's vllm:cache_config_info, or the simulated profile). */
  readonly kvCapacityTokens?: number;
  /**
   * How fast the instance prefills, in tokens per second, when known: in simulation its profile's figure; in a live
   * fleet learned from the TTFTs the router observes there (policy/prefill-speed.ts, through the routing core).
   * A fleet may mix instance types (SageMaker InstancePools): cost-based policies scale an instance's predicted
   * prefill work by the fastest speed over its own, and its share of the load by its speed. Absent: as fast as the fastest.
   */
  readonly prefillTokensPerSecond?: number;
  /**
   * The routing blocks the instance itself reports holding (its instance-state feed, state/instance-state-log.ts),
   * when the caller observes it: what every router replica sent it, not only this one. When the caller observes
   * the instance, the load fields above are the instance's own count at the last observation plus this router's
   * changes since.
   */
  readonly observedBlocks?: ObservedBlocks;
  /**
   * What the instance's engine says its prefix cache holds (its KV cache events), when the caller follows them:
   * cache-aware predicts the instance's hit from it instead of its own index, which stays the fallback while the
   * engine's account is unknown.
   */
  readonly engineCache?: EngineCacheView;
  /**
   * The models the instance serves (its GET /v1/models: the base model and each LoRA adapter), when known.
   * Undefined: unknown, so it may serve any (an engine without /v1/models). Every policy's serves-model filter
   * (policy/stages/serves-model-filter.ts) passes over an instance that does not serve a request's model; it stays
   * healthy, so a policy keeps what it knows of its cache.
   */
  readonly servedModels?: ReadonlySet<string>;
  /**
   * What the engine itself holds and queues for the request being decided, filled only for a policy that declares
   * RoutingPolicy.engineState (in the simulator, from its engine model; serve fills none, and a 'cached-blocks' policy
   * reads `engineCache` there instead: engineCachedPromptTokens). Reusable per view:
   * read it during `decide` only.
   */
  readonly engine?: EngineState;
}

/**
 * What of the engines' own state a policy reads (RoutingPolicy.engineState): 'cached-blocks', how much of the
 * request each engine's prefix cache holds (live, from the engines' KV events); 'cached-blocks-and-queue',
 * that and the prefill work queued inside each engine, which only the simulator's engine model knows.
 */
export type EngineStateNeed = 'cached-blocks' | 'cached-blocks-and-queue';

/** An engine's own state as a policy that reads it sees it (InstanceView.engine). */
export interface EngineState {
  /** Leading prompt tokens of the request being decided that the engine's prefix cache holds now (vLLM's rule: full blocks, never the last token). */
  readonly cachedPromptTokens: number;
  /** The engine's own queue and batch: filled for 'cached-blocks-and-queue'; undefined otherwise. */
  readonly queue?: EngineQueue;
}

/** Thrown when a policy that reads engine state is given an instance without it (a caller that is not the simulator). */
export class EngineStateMissingError extends Error {
  constructor(policy: string, instance: string) {
    super(
      `policy ${policy} reads each engine's own state (InstanceView.engine), and instance ${instance} has none: the simulator fills it, serve only the cached blocks, from the engines' KV events`,
    );
    this.name = 'EngineStateMissingError';
  }
}

/**
 * Leading prompt tokens of `request` the instance's engine holds now: the engine state its caller filled (the
 * simulator's engine models), else the engine's own account from its KV events (serve --kv-events), where an
 * account not known yet (no events, or a gap not repaired) counts as holding nothing, as llm-d's precise scorer
 * scores a pod it has no events from. Throws EngineStateMissingError when the caller gave neither.
 */
export function engineCachedPromptTokens(view: InstanceView, request: RoutingRequest, policy: string): number {
  if (view.engine === undefined && view.engineCache !== undefined) return view.engineCache.cachedTokensOf(request) ?? 0;
  return engineStateOf(view, policy).cachedPromptTokens;
}

/** The view's engine queue; throws EngineStateMissingError when the caller did not fill it. */
export function engineQueueOf(view: InstanceView, policy: string): EngineQueue {
  const queue = engineStateOf(view, policy).queue;
  if (queue === undefined) throw new EngineStateMissingError(policy, view.id);
  return queue;
}

/** The view's engine state; throws EngineStateMissingError when the caller did not fill it. */
export function engineStateOf(view: InstanceView, policy: string): EngineState {
  const engine = view.engine;
  if (engine === undefined) throw new EngineStateMissingError(policy, view.id);
  return engine;
}

/** An instance's published block index, as an observer holds it. */
export interface ObservedBlocks {
  /** Characters per block the instance hashes with; an index with another block size cannot be matched. */
  readonly blockChars: number;
  /** Blocks indexed. */
  readonly size: number;
  /** The caller's clock (RoutingSnapshot.nowMs) when this state was received: what this router sent later is not in it. */
  readonly observedAtMs: number;
  /** How many leading blocks of `hashes` the instance holds. */
  match(hashes: readonly RoutingBlockKey[]): number;
}

/** An engine's own account of its prefix cache, as the caller follows it (core/engine-truth.ts). */
export interface EngineCacheView {
  /**
   * Prompt tokens of `request` the engine would serve from its prefix cache now, or undefined when its account is
   * unknown for this request (no events yet, events lost, a prompt the caller cannot tokenize as the engine does).
   */
  cachedTokensOf(request: RoutingRequest): number | undefined;
  /** Changes whenever the engine's account changes: what this router sent it before the last change is in it. */
  readonly version: number;
}

export interface RoutingSnapshot {
  /** Every configured instance, healthy or not, in configuration order. */
  readonly instances: readonly InstanceView[];
  /** Caller's clock in milliseconds (virtual time in the simulator). */
  readonly nowMs: number;
  /**
   * True only when every instance is healthy and all serve the same models (allHealthySameModels in
   * served-models.ts): an instance then passes the serves-model and healthy filters exactly when the first does, so
   * a runner checks one instead of each (issue 37). The server and the simulator keep it as health and served models
   * change, not per decision. Absent or false: every instance is checked.
   */
  readonly allHealthySameModels?: boolean;
}

export interface RoutingDecision<Reason extends string = string> {
  /** The chosen instance's id. */
  readonly instance: string;
  /** Why it was chosen: one of its policy definition's `reasons` (a closed set, counted in metrics). */
  readonly reason: Reason;
  /** Prompt tokens the policy expects the instance to serve from its prefix cache (cache-aware policies). */
  readonly predictedCachedTokens?: number;
}

/** How a dispatched request ended, for `release`. */
export interface ReleaseOutcome {
  /** completed: the engine answered (any HTTP status); failed: connection, timeout or stream failure; aborted: the client left. */
  readonly kind: 'completed' | 'failed' | 'aborted';
  /** Engine-reported `usage.prompt_tokens_details.cached_tokens`, when the response carried it. */
  readonly cachedTokens?: number;
  /** Engine-reported `usage.prompt_tokens`, when the response carried it. */
  readonly promptTokens?: number;
}

/** A policy's routing blocks (RoutingPolicy.routingBlocks): chained hashes of `blockChars`-character blocks. */
export interface RoutingBlockHashing {
  /** Characters per routing block. */
  readonly blockChars: number;
  /** The secret the hashes are keyed with: a caller hashing for the same key may reuse them. */
  readonly key: StateHashKey;
  /** The request's full routing blocks' chained keyed hashes (policy/routing-blocks.ts), memoized per request. */
  hashesOf(request: RoutingRequest): readonly RoutingBlockKey[];
}

/**
 * The contract every routing policy implements. A policy is pure: no I/O, no clock, no Math.random.
 * Randomness comes from an injected seeded Rng; time, if a policy ever needs it, comes in the snapshot.
 *
 * One request flows: parse -> key -> decide -> commit -> proxy -> release. `decide` must not mutate policy
 * state other than drawing from its injected Rng; anything a policy remembers about the decision (a round-robin
 * cursor, a prefix index entry) is written in `commit`, once the caller has actually dispatched the request.
 * The live router and the simulator call these methods through one routing core (core/routing-core.ts), in the
 * same order, so they make the same decisions.
 */
export interface RoutingPolicy {
  /** The policy's registered name (PolicyName). */
  readonly name: string;
  /** True when the policy uses InstanceView.kvCapacityTokens: the router then reads each engine's vllm:cache_config_info. */
  readonly wantsKvCapacity?: boolean;
  /**
   * Optional capability: the policy cuts requests into routing blocks (cache-aware). What an instance publishes
   * about itself is hashed the same way, so the caller reuses the policy's hashes (already computed for its
   * decision) when the block sizes agree, instead of hashing the prompt twice; a simulator's replicas also read
   * the block size they observe at from here.
   */
  readonly routingBlocks?: RoutingBlockHashing;
  /**
   * When the routing core commits a decision: 'decided' (default) right after decide(); 'accepted' only once the
   * chosen engine accepted the request (a 2xx answer started), so a request the engine rejects leaves no trace in
   * what the policy remembers (a prefix index must not predict blocks no engine computed). A decision never
   * committed is never released.
   */
  readonly commitWhen?: 'decided' | 'accepted';
  /** The stages the policy runs, in order, when it is built from stages (stages/staged-policy.ts). */
  readonly stages?: readonly StageSummary[];
  /**
   * Optional capability: the policy reads each engine's own state (InstanceView.engine), which its caller must fill
   * for every decision. The simulator fills it from its engine models; serve refuses such a policy
   * (config/router-config.ts, liveEngineStateRefusal) until it has a source for it.
   */
  readonly engineState?: EngineStateNeed;
  /** Choose an instance. Throws NoHealthyInstanceError when no instance is healthy. */
  decide(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision;
  /** Record that the request was dispatched as decided (advance cursors, update indexes). */
  commit(request: RoutingRequest, decision: RoutingDecision): void;
  /**
   * Called exactly once for every committed decision, when the request ends in any way, with what the engine
   * reported. Lets a policy learn (correct a prefix index) and keeps its own bookkeeping exact.
   */
  release(request: RoutingRequest, decision: RoutingDecision, outcome: ReleaseOutcome): void;
}

export class NoHealthyInstanceError extends Error {
  constructor() {
    super('no healthy instance is available');
    this.name = 'NoHealthyInstanceError';
  }
}
