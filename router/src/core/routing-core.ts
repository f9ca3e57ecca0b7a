import { performance } from 'node:perf_hooks';
import type { ReleaseOutcome, RoutingDecision, RoutingPolicy, RoutingSnapshot } from '../policy/routing-policy';
import { estimatedPromptTokens } from '../policy/prompt-tokens';
import type { PrefillSpeedEstimator } from '../policy/prefill-speed';
import { routingBlockHashes } from '../policy/routing-blocks';
import { requireServingInstance } from '../policy/served-models';
import type { RoutingRequest } from '../protocol/routing-request';
import type { InstanceLoad, LoadTicket } from '../state/instance-load';
import { InstanceStateLog, type AdmittedRequest } from '../state/instance-state-log';
import { capacityBlocksFor } from '../state/prefix-index';
import type { RoutingBlockKey, StateHashKey } from '../state/state-hash-key';

/**
 * The routing loop around a policy, shared by the live router (server/prefix-router.ts) and the simulator
 * (sim/simulator.ts), so that both run the same code around the same policies, not only the same policies:
 *
 *   begin → [reach a published log] → decide (policy.decide, check, policy.commit, load ticket)
 *         → firstToken / accepted (policy.commit here instead when the policy's commitWhen is 'accepted')
 *         → release(outcome) → [decide again on a retry] → end(outcome)
 *
 * **One release path.** Everything that marks the end of a request on an instance happens in `release`: the
 * load ticket ends, the policy's release hook runs (exactly once per committed decision), the engine's cached-
 * token report corrects the published index, and the caller's `released` hook sees the outcome. `end` releases
 * the attempt still open, then ends the request's published admission.
 *
 * **Published state** (state/instance-state-log.ts) is one rule for both callers: a request is admitted to an
 * instance's published log once, when it reaches that instance, whatever the retries behind it; its blocks are
 * recorded when the caller reports the engine took it (`accepted`), and the engine's cached-token report corrects them. The live router
 * publishes itself, so a request reaches it on arrival, before its own decision among its engines (`reach`);
 * a simulated instance publishes itself, so a request reaches it when a replica's decision sends it there
 * (RoutingTarget.publishedLog). The log hashes at the block size its observers match with (publishedBlockChars).
 */
export class RoutingCore<Target extends RoutingTarget> {
  constructor(
    readonly policy: RoutingPolicy,
    /** The routable instance with this id, or undefined. */
    private readonly targetOf: (id: string) => Target | undefined,
    private readonly hooks: RoutingHooks<Target> = {},
    private readonly options: RoutingCoreOptions = {},
  ) {}

  /** A request about to be routed. */
  begin(request: RoutingRequest): RoutedRequest<Target> {
    return new RoutedRequest(this, request);
  }

  /** @internal Admits `request` to `log`, hashed at the log's block size (the policy's own hashes when they fit). */
  admit(log: InstanceStateLog, request: RoutingRequest, promptTokens: number): AdmittedRequest {
    const blocks =
      this.options.publishBlocks !== false
        ? publishedBlocksOf(this.policy, request, log.blockChars, log.hashKey)
        : NO_BLOCKS;
    return log.admit(blocks, promptTokens, 'accepted');
  }

  /**
   * @internal decide → check → commit (unless the policy commits on acceptance: `commit` then, from
   * RoutedRequest.accepted); `excluded` is an instance the decision must not choose (it refused us).
   * With `admits`, a decision it turns away is not committed (flow control holds the request): undefined.
   */
  decide(
    request: RoutingRequest,
    snapshot: RoutingSnapshot,
    excluded: string | undefined,
    admits?: (target: Target) => boolean,
  ): { decision: RoutingDecision; target: Target; decisionMicros: number } | undefined {
    const t0 = performance.now();
    // Throws UnknownModelError when no instance serves the request's model (or adapter); the policy's serves-model
    // filter keeps the others out of its choice.
    requireServingInstance(snapshot, request.model);
    const decision = this.policy.decide(request, snapshot);
    const decideSeconds = (performance.now() - t0) / 1000;
    const target = this.targetOf(decision.instance);
    if (target === undefined || decision.instance === excluded) {
      throw new Error(`policy ${this.policy.name} chose ${decision.instance}, which is not a routable instance`);
    }
    if (admits !== undefined && !admits(target)) return undefined;
    if (!this.commitsOnAcceptance) this.policy.commit(request, decision);
    const decisionMicros = (performance.now() - t0) * 1000;
    this.hooks.decided?.(decision, target, decideSeconds);
    return { decision, target, decisionMicros };
  }

  /** True when the policy's decisions are committed once the engine accepted the request (RoutingPolicy.commitWhen). */
  get commitsOnAcceptance(): boolean {
    return this.policy.commitWhen === 'accepted';
  }

  /** @internal Commits a decision the engine accepted (policies with commitWhen 'accepted'). */
  commit(request: RoutingRequest, decision: RoutingDecision): void {
    this.policy.commit(request, decision);
  }

  /**
   * @internal A first token `ttftMs` after the decision, on an instance that had `queuedAheadTokens` of prefill
   * queued when it was chosen: one sample of its prefill speed (options.prefillSpeeds), published on the target.
   */
  learnPrefillSpeed(
    instance: string,
    target: Target,
    queuedAheadTokens: number,
    ownTokens: number,
    ttftMs: number,
  ): void {
    const speeds = this.options.prefillSpeeds;
    if (speeds === undefined || !speeds.observe(instance, queuedAheadTokens + ownTokens, ttftMs)) return;
    target.prefillTokensPerSecond = speeds.tokensPerSecond(instance);
  }

  /** @internal The one release path of a committed decision. */
  release(
    attempt: RoutingAttempt<Target>,
    request: RoutingRequest,
    outcome: ReleaseOutcome,
    published: AdmittedRequest | undefined,
    promptTokens: number,
  ): void {
    attempt.ticket.end();
    try {
      // Only a committed decision is released to the policy (one never committed left nothing there).
      if (attempt.committed) this.policy.release(request, attempt.decision, outcome);
    } catch (err) {
      if (this.hooks.policyReleaseFailed === undefined) throw err;
      this.hooks.policyReleaseFailed(err);
    }
    // What the engine kept corrects the published index too, as it does the policy's own.
    if (outcome.kind === 'completed' && outcome.cachedTokens !== undefined)
      published?.engineCached(outcome.cachedTokens);
    this.hooks.released?.(attempt, outcome, promptTokens);
  }
}

export interface RoutingCoreOptions {
  /** False: published logs get the load only, no routing blocks (serve --publish-state-blocks off). Default true. */
  readonly publishBlocks?: boolean;
  /**
   * Learns each instance's prefill speed from the TTFTs this router observes (first token time − decision time,
   * over the prefill queued there at the decision + the request's own): `firstToken(nowMs)` feeds it, and the
   * estimate is written to RoutingTarget.prefillTokensPerSecond, which the caller's instance views show the policy.
   * Absent: nothing is learned (the simulator gives its views each profile's speed instead).
   */
  readonly prefillSpeeds?: PrefillSpeedEstimator;
}

/** What the core needs of an instance a decision may choose. */
export interface RoutingTarget {
  /** This router's own count of the work it sent there (the InstanceView's load fields come from it). */
  readonly load: InstanceLoad;
  /** The instance's published state, when a request reaches it by this router's decision (the simulator's instances). */
  readonly publishedLog?: InstanceStateLog;
  /** Learned prefill speed (RoutingCoreOptions.prefillSpeeds), written by the core once the instance was observed. */
  prefillTokensPerSecond?: number;
}

/** The caller's hooks: what it counts or logs. The routing itself is the core's. */
export interface RoutingHooks<Target> {
  /** A decision was committed: `decideSeconds` is the policy's decide() alone. */
  decided?(decision: RoutingDecision, target: Target, decideSeconds: number): void;
  /** A committed decision was released, with what the engine reported and the router's prompt estimate. */
  released?(attempt: RoutingAttempt<Target>, outcome: ReleaseOutcome, estimatedPromptTokens: number): void;
  /** The policy's release hook threw; without this hook the error propagates. */
  policyReleaseFailed?(err: unknown): void;
}

/** One committed decision: where the request went and its load ticket there. */
export interface RoutingAttempt<Target> {
  readonly decision: RoutingDecision;
  readonly target: Target;
  /** Wall time of decide + commit, in microseconds. */
  readonly decisionMicros: number;
  readonly ticket: LoadTicket;
  /** The snapshot's clock at the decision, and the prefill the router counted queued on the chosen instance then. */
  readonly decidedAtMs: number;
  readonly queuedAheadTokens: number;
  /** The policy committed the decision: at once, or when the engine accepted the request (RoutingPolicy.commitWhen). */
  committed: boolean;
}

/**
 * One request through the core: at most one attempt open at a time; each is released exactly once, however
 * it ended, and the request's published admission ends with the request.
 */
export class RoutedRequest<Target extends RoutingTarget> {
  /** The router's estimate of the prompt's tokens, from what it can see (the routing text), not the engine's count. */
  readonly promptTokens: number;
  private published: AdmittedRequest | undefined;
  private open: RoutingAttempt<Target> | undefined;
  private last: RoutingAttempt<Target> | undefined;
  private ended = false;
  /** The open attempt's first token was seen (its TTFT sampled at most once). */
  private firstTokenSeen = false;

  constructor(
    private readonly core: RoutingCore<Target>,
    readonly request: RoutingRequest,
  ) {
    this.promptTokens = estimatedPromptTokens(request);
  }

  /** The latest attempt's decision (undefined before the first). */
  get attempt(): RoutingAttempt<Target> | undefined {
    return this.last;
  }

  /** The request reached a publishing instance (the live router itself, on arrival): admitted once to its log. */
  reach(log: InstanceStateLog): void {
    this.published ??= this.core.admit(log, this.request, this.promptTokens);
  }

  /**
   * decide → commit → load ticket on the chosen instance (prompt tokens less those predicted cached). Throws
   * NoHealthyInstanceError when no instance is healthy (nothing is committed then).
   */
  decide(snapshot: RoutingSnapshot, excluded?: string): RoutingAttempt<Target> {
    return this.decideIfAdmitted(snapshot, undefined, excluded) as RoutingAttempt<Target>;
  }

  /**
   * As `decide`, but the chosen instance must pass `admits` (flow control, core/flow-control.ts): when it does not,
   * nothing is committed and the result is undefined.
   */
  decideIfAdmitted(
    snapshot: RoutingSnapshot,
    admits: ((target: Target) => boolean) | undefined,
    excluded?: string,
  ): RoutingAttempt<Target> | undefined {
    if (this.open !== undefined) throw new Error('the previous attempt of this request was not released');
    const chosen = this.core.decide(this.request, snapshot, excluded, admits);
    if (chosen === undefined) return undefined;
    const { decision, target, decisionMicros } = chosen;
    const queuedAheadTokens = target.load.queuedPrefillTokens;
    this.firstTokenSeen = false;
    const ticket = target.load.start(this.promptTokens - (decision.predictedCachedTokens ?? 0));
    if (target.publishedLog !== undefined) this.reach(target.publishedLog);
    this.open = this.last = {
      decision,
      target,
      decisionMicros,
      ticket,
      decidedAtMs: snapshot.nowMs,
      queuedAheadTokens,
      committed: !this.core.commitsOnAcceptance,
    };
    return this.open;
  }

  /**
   * The first token arrived: prefill done, the request now decodes (idempotent). `nowMs` (the snapshot's clock)
   * makes it a sample of the instance's prefill speed when the core learns speeds.
   */
  firstToken(nowMs?: number): void {
    const open = this.open;
    if (open !== undefined && nowMs !== undefined && !this.firstTokenSeen) {
      this.firstTokenSeen = true;
      this.core.learnPrefillSpeed(
        open.decision.instance,
        open.target,
        open.queuedAheadTokens,
        open.ticket.prefillTokens,
        nowMs - open.decidedAtMs,
      );
    }
    open?.ticket.firstToken();
    this.published?.firstToken();
  }

  /**
   * The engine accepted the request (a 2xx answer started): its blocks enter the published index, and a policy that
   * commits on acceptance records the open attempt's decision now (idempotent).
   */
  accepted(): void {
    const open = this.open;
    if (open !== undefined && !open.committed) {
      open.committed = true;
      this.core.commit(this.request, open.decision);
    }
    this.published?.accepted();
  }

  /** The open attempt ended with `outcome` (a retry may decide again). Nothing happens when none is open. */
  release(outcome: ReleaseOutcome): void {
    const attempt = this.open;
    if (attempt === undefined) return;
    this.open = undefined;
    this.core.release(attempt, this.request, outcome, this.published, this.promptTokens);
  }

  /** The request is over: the open attempt, if any, is released with `outcome`, then its published admission ends. Idempotent. */
  end(outcome: ReleaseOutcome = { kind: 'failed' }): void {
    if (this.ended) return;
    this.ended = true;
    try {
      this.release(outcome);
    } finally {
      this.published?.end();
    }
  }
}

/** What a load-only publisher (publishStateBlocks 'off') records per request. */
const NO_BLOCKS: readonly RoutingBlockKey[] = [];

/**
 * A request's routing blocks of `blockChars` characters keyed with `key`, for an instance's published state: the
 * policy's own hashes when it hashes blocks of that size with that key (already computed for its decision,
 * memoized), else hashed here.
 */
export function publishedBlocksOf(
  policy: RoutingPolicy,
  request: RoutingRequest,
  blockChars: number,
  key: StateHashKey,
): readonly RoutingBlockKey[] {
  const own = policy.routingBlocks;
  return own !== undefined && own.blockChars === blockChars && own.key === key
    ? own.hashesOf(request)
    : routingBlockHashes(request, blockChars, key);
}

/**
 * The published log of an instance holding `kvCapacityTokens` of KV cache: an index of `blockChars`-character
 * blocks sized to what the instance can hold, keyed with `key` (the deployment's state-hash secret).
 */
export function publishedStateLog(
  blockChars: number,
  kvCapacityTokens: number,
  key: StateHashKey,
  epoch?: string,
): InstanceStateLog {
  return new InstanceStateLog(blockChars, capacityBlocksFor(kvCapacityTokens, blockChars), epoch, key);
}

/**
 * The block size a published log hashes at: the one its observers match with. A live router's observers are
 * other processes, so the operator states it (`configured`: publishStateBlockChars, which must equal their
 * cache-aware blockChars); a simulator's observers are its own replicas, so it is their policy's block size when
 * that policy hashes routing blocks, else `fallback`.
 */
export function publishedBlockChars(
  observerPolicy: RoutingPolicy,
  configured: number | undefined,
  fallback: number,
): number {
  return configured ?? observerPolicy.routingBlocks?.blockChars ?? fallback;
}
