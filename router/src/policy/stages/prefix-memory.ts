import type { RoutingRequest } from '../../protocol/routing-request';
import { capacityBlocksFor, EngineFeedback, PrefixIndex, type FeedbackAdmission } from '../../state/prefix-index';
import { processStateHashKey, type RoutingBlockKey, type StateHashKey } from '../../state/state-hash-key';
import { CHARS_PER_TOKEN } from '../prompt-tokens';
import { memoizedRoutingBlockHashes } from '../routing-blocks';
import type {
  InstanceView,
  ObservedBlocks,
  ReleaseOutcome,
  RoutingBlockHashing,
  RoutingDecision,
  RoutingSnapshot,
} from '../routing-policy';

interface Pending {
  readonly instance: string;
  readonly hashes: readonly RoutingBlockKey[];
  /** Recency of each matched block before this request touched it, and the clock then (for engine feedback). */
  readonly admission: FeedbackAdmission;
}

/** What a prefix memory needs to know: its block size and the KV capacity of an instance that does not say. */
export interface PrefixMemoryOptions {
  /** Characters per routing block. */
  readonly blockChars: number;
  /** KV capacity per instance in tokens, when the instance view does not carry the engine's own figure. */
  readonly kvCacheTokens: number;
  /**
   * Tokens an engine step schedules (vLLM max_num_batched_tokens): a request behind more queued prefill than this
   * waits at least a step, so an engine's account is read as of when it runs (engineMatchOf). Without it, any
   * queued prefill counts as waiting.
   */
  readonly stepTokens?: number;
}

/**
 * What a router remembers of the prompts it sent each instance, for the stages that predict cache hits: a bounded
 * per-instance LRU index of routing blocks (state/prefix-index.ts) sized from each instance's KV capacity, what
 * each engine's `cached_tokens` reports proved (EngineFeedback), when each observed instance's published index
 * arrived, and how many requests each instance was sent since the healthy set last changed. Written only by
 * `commit` and `release`; the stages read it while deciding.
 */
export class PrefixMemory {
  readonly index = new PrefixIndex();
  readonly routingBlocks: RoutingBlockHashing;
  private readonly pending = new WeakMap<RoutingDecision, Pending>();
  /** Requests this router sent to each instance since the healthy set last changed. */
  private readonly sent = new Map<string, number>();
  /** Per instance: what its engine's reports proved (EngineFeedback), forgotten with its index. */
  private readonly feedback = new Map<string, EngineFeedback>();
  /** Per observed instance: the observation last seen at commit, and this router's index clock then. */
  private readonly observationMarks = new Map<string, { readonly atMs: number; readonly clock: number }>();
  /** Per instance whose engine's account is followed: its version last seen at commit, and this router's index clock then. */
  private readonly engineMarks = new Map<string, { readonly version: number; readonly clock: number }>();
  /**
   * Per instance whose engine's account is followed: the requests sent there that have not ended, each with this
   * router's index clock at its commit, oldest first (a Map keeps insertion order through deletions).
   */
  private readonly unended = new Map<string, Map<RoutingDecision, number>>();
  private knownInstances = '';
  private readonly hashesOf: (request: RoutingRequest) => readonly RoutingBlockKey[];

  constructor(
    readonly options: PrefixMemoryOptions,
    /** The deployment's secret its block hashes are keyed with (a random one for this process when none is given). */
    readonly stateHashKey: StateHashKey = processStateHashKey(),
  ) {
    this.hashesOf = memoizedRoutingBlockHashes(options.blockChars, stateHashKey);
    this.routingBlocks = { blockChars: options.blockChars, key: stateHashKey, hashesOf: this.hashesOf };
  }

  /** Chained hashes of the request's full routing blocks (memoized for the decide → commit of one request). */
  blockHashesOf(request: RoutingRequest): readonly RoutingBlockKey[] {
    return this.hashesOf(request);
  }

  /** Index capacity for an instance: its KV capacity in routing blocks. */
  capacityBlocksOf(view: InstanceView): number {
    return capacityBlocksFor(view.kvCapacityTokens ?? this.options.kvCacheTokens, this.options.blockChars);
  }

  /** Requests sent to `id` since the healthy set last changed. */
  sentTo(id: string): number {
    return this.sent.get(id) ?? 0;
  }

  /**
   * Leading blocks of `hashes` the instance is predicted to hold, and how many blocks its index holds. When the
   * caller observes the instance (its published index, every replica's sends corrected by its engine), the match
   * is that index as of the observation plus what this router sent it since: the same rule as the load.
   */
  matchOf(
    view: InstanceView,
    hashes: readonly RoutingBlockKey[],
    request?: RoutingRequest,
  ): { matchedBlocks: number; indexedBlocks: number; engineCachedTokens?: number } {
    const engine = request === undefined ? undefined : this.engineMatchOf(view, hashes, request);
    if (engine !== undefined) return engine;
    const index = this.index.get(view.id);
    const observed = this.usableObservation(view);
    if (observed !== undefined) {
      const sentSince =
        index === undefined ? 0 : index.matchNewerThan(hashes, this.clockAtObservation(view.id, observed));
      return { matchedBlocks: Math.max(observed.match(hashes), sentSince), indexedBlocks: observed.size };
    }
    return {
      matchedBlocks: index === undefined ? 0 : index.match(hashes),
      indexedBlocks: index === undefined ? 0 : index.size,
    };
  }

  /**
   * The match by the engine's own account, when it is known for this request: the tokens the engine holds, or what
   * this router sent it that the account may not show yet, whichever is more. `engineCachedTokens` is the engine's
   * figure when it is the larger: the prediction a decision reports. Not shown yet: what was sent since the account
   * last changed, and since the oldest request sent there that has not ended. A request queued on the engine stores
   * its prompt's blocks before one sent after it runs (a running one holds them: vLLM never evicts them), so under
   * a queue the account at decision time understates what this request meets (bench:kv-truth, KV pressure: without
   * the second clause a group whose prefix is being recomputed in one engine's queue looks cold everywhere and is
   * spread over the fleet).
   *
   * A request that waits behind queued prefill meets the cache as it will be when it runs, not as the account shows
   * it now: every step ahead allocates blocks, and under KV pressure the engine evicts its least recently used free
   * blocks for them. So while it waits, the account counts only as far as this router's own index also holds the
   * prefix there (sent recently enough to stay in its LRU of the instance's capacity, and not shown evicted by the
   * engine's answers). A prefix the engine holds that the index does not is one its LRU forgot: at the engine's LRU
   * tail, gone before the request runs (bench:kv-truth, KV pressure, seed 2: such a choice served 0 cached tokens in
   * every case, and the group was split off the instance that kept it). With nothing queued the account stands.
   */
  private engineMatchOf(
    view: InstanceView,
    hashes: readonly RoutingBlockKey[],
    request: RoutingRequest,
  ): { matchedBlocks: number; indexedBlocks: number; engineCachedTokens?: number } | undefined {
    const engine = view.engineCache;
    const cachedTokens = engine?.cachedTokensOf(request);
    if (engine === undefined || cachedTokens === undefined) return undefined;
    const index = this.index.get(view.id);
    const mark = this.engineMarks.get(view.id);
    const sinceChange = mark !== undefined && mark.version === engine.version ? mark.clock : this.index.clock.now;
    const oldestUnended = this.unended.get(view.id)?.values().next().value;
    const since = oldestUnended === undefined ? sinceChange : Math.min(sinceChange, oldestUnended);
    const sentSince = index === undefined ? 0 : index.matchNewerThan(hashes, since);
    const engineBlocks = Math.floor((cachedTokens * CHARS_PER_TOKEN) / this.options.blockChars);
    const indexedBlocks = index === undefined ? 0 : index.size;
    const lasting = this.waitsForStep(view)
      ? Math.min(engineBlocks, index === undefined ? 0 : index.match(hashes))
      : engineBlocks;
    if (sentSince > lasting || lasting < engineBlocks)
      return { matchedBlocks: Math.max(sentSince, lasting), indexedBlocks };
    return { matchedBlocks: engineBlocks, indexedBlocks, engineCachedTokens: cachedTokens };
  }

  /** Whether a request sent to `view` now waits behind queued prefill for at least one engine step. */
  private waitsForStep(view: InstanceView): boolean {
    return (view.queuedPrefillTokens ?? 0) > (this.options.stepTokens ?? 0);
  }

  /** Records that `request` went to the decided instance: its blocks, the feedback baseline, the request count. */
  commit(request: RoutingRequest, decision: RoutingDecision, snapshot: RoutingSnapshot | undefined): void {
    const instances = snapshot?.instances;
    this.forgetGoneInstances(instances);
    this.markObservations(instances);
    const hashes = this.blockHashesOf(request);
    const view = instances?.find((v) => v.id === decision.instance);
    const index = this.index.forInstance(
      decision.instance,
      this.capacityBlocksOf(view ?? { id: decision.instance, healthy: true, inFlight: 0 }),
    );
    this.pending.set(decision, {
      instance: decision.instance,
      hashes,
      admission: { priorRecency: index.recenciesOfMatch(hashes), clockAtAdmission: this.index.clock.now },
    });
    if (view?.engineCache !== undefined) {
      let unended = this.unended.get(decision.instance);
      if (unended === undefined) this.unended.set(decision.instance, (unended = new Map<RoutingDecision, number>()));
      unended.set(decision, this.index.clock.now);
    }
    index.record(hashes, this.index.clock);
    this.sent.set(decision.instance, this.sentTo(decision.instance) + 1);
  }

  /**
   * When the engine reports `cached_tokens` clearly below the prediction, that instance evicted the missing
   * blocks, and with LRU everything it used less recently too: those entries are dropped, unless the report
   * contradicts what the engine was seen serving or evicts faster than it admits (EngineFeedback).
   */
  release(decision: RoutingDecision, outcome: ReleaseOutcome): void {
    const p = this.pending.get(decision);
    if (p === undefined) return;
    this.pending.delete(decision);
    this.unended.get(p.instance)?.delete(decision);
    if (outcome.kind !== 'completed' || outcome.cachedTokens === undefined) return;
    const index = this.index.get(p.instance);
    if (index === undefined) return;
    const cutoff = this.feedbackOf(p.instance).correct(
      index,
      this.index.clock,
      p.admission,
      outcome.cachedTokens,
      this.options.blockChars,
    );
    // This prompt's own blocks are cached there now (the engine just computed them): they go back in.
    if (cutoff !== undefined) index.record(p.hashes, this.index.clock);
  }

  private feedbackOf(instance: string): EngineFeedback {
    let feedback = this.feedback.get(instance);
    if (feedback === undefined) {
      feedback = new EngineFeedback();
      this.feedback.set(instance, feedback);
    }
    return feedback;
  }

  /** The instance's published index, when the caller observes it and it uses this memory's block size. */
  private usableObservation(view: InstanceView): ObservedBlocks | undefined {
    const observed = view.observedBlocks;
    return observed !== undefined && observed.blockChars === this.options.blockChars ? observed : undefined;
  }

  /** This router's index clock when it first committed after `observed` arrived: later entries are its sends since. */
  private clockAtObservation(id: string, observed: ObservedBlocks): number {
    const mark = this.observationMarks.get(id);
    // Not committed since it arrived: nothing sent since.
    return mark !== undefined && mark.atMs === observed.observedAtMs ? mark.clock : this.index.clock.now;
  }

  /** Before this request is recorded: the clock at which each newly arrived observation starts. */
  private markObservations(instances: readonly InstanceView[] | undefined): void {
    if (instances === undefined) return;
    for (const view of instances) {
      const engine = view.engineCache;
      if (engine !== undefined && this.engineMarks.get(view.id)?.version !== engine.version)
        this.engineMarks.set(view.id, { version: engine.version, clock: this.index.clock.now });
      const observed = this.usableObservation(view);
      if (observed === undefined) continue;
      const mark = this.observationMarks.get(view.id);
      if (mark === undefined || mark.atMs !== observed.observedAtMs)
        this.observationMarks.set(view.id, { atMs: observed.observedAtMs, clock: this.index.clock.now });
    }
  }

  /**
   * Drops the index of instances no longer configured or no longer healthy (their caches are gone or unknown). An
   * instance that does not serve the request's model is still healthy: its cache is intact, its index kept.
   */
  private forgetGoneInstances(instances: readonly InstanceView[] | undefined): void {
    if (instances === undefined) return;
    let key = '';
    for (let i = 0; i < instances.length; i++) if (instances[i].healthy) key += `${instances[i].id}\n`;
    if (key === this.knownInstances) return;
    this.knownInstances = key;
    this.sent.clear();
    this.observationMarks.clear();
    this.engineMarks.clear();
    const keep = new Set(instances.filter((v) => v.healthy).map((v) => v.id));
    for (const id of [...this.unended.keys()]) if (!keep.has(id)) this.unended.delete(id);
    this.index.retainOnly(keep);
    for (const id of [...this.feedback.keys()]) if (!keep.has(id)) this.feedback.delete(id);
  }
}
