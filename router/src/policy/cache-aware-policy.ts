import type { RoutingRequest } from '../protocol/routing-request';
import {
  capacityBlocksFor,
  DEFAULT_KV_CACHE_TOKENS,
  EngineFeedback,
  PrefixIndex,
  type FeedbackAdmission,
} from '../state/prefix-index';
import { definePolicy } from './policy-definition';
import { CHARS_PER_TOKEN, estimatedPromptTokens } from './prompt-tokens';
import { processStateHashKey, type RoutingBlockKey, type StateHashKey } from '../state/state-hash-key';
import { coldPlacementKey, routingBlockHashes } from './routing-blocks';
import { InstanceHashCache, ranksAbove, rendezvousScore, weightedRendezvousScore } from './rendezvous';
import { slowdownOf } from './prefill-speed';
import {
  NoHealthyInstanceError,
  type InstanceView,
  type ObservedBlocks,
  type ReleaseOutcome,
  type RoutingBlockHashing,
  type RoutingDecision,
  type RoutingPolicy,
  type RoutingSnapshot,
} from './routing-policy';

export interface CacheAwareOptions {
  /** Characters per routing block. */
  readonly blockChars: number;
  /** KV capacity per instance in tokens, when the instance view does not carry the engine's own figure. */
  readonly kvCacheTokens: number;
  /** Predicted prefill differences up to this many tokens count as equal; load decides among them. */
  readonly balanceSlackTokens: number;
  /** Tokens an engine step schedules (vLLM max_num_batched_tokens): decodes share it with prefill. */
  readonly stepTokens: number;
  /** Request header naming a session; '' turns session affinity off. */
  readonly sessionHeader: string;
  /** Sessions remembered (least recently used forgotten first). */
  readonly maxSessions: number;
}

export type CacheAwareReason = 'cache-match' | 'balanced' | 'cold-rendezvous' | 'session-affinity';

/**
 * Bounded loads (Mirrokni, Thorup, Zadimoghaddam, "Consistent Hashing with Bounded Loads", 2018): among
 * near-equal costs, an instance with more than this × its share of the requests in flight is passed over; 1.25
 * is the balance factor HAProxy suggests for its bounded-load hashing.
 */
const BALANCE_FACTOR = 1.25;
/**
 * The same rule for cold prompts, on index contents: skip instances whose index would exceed this × the mean.
 * Looser (ε = 0.5 rather than 0.25) because each router replica measures only its own index: the paper's bound on
 * keys moved off their rendezvous choice grows as 1/ε², and a cold placement that moves is one replicas disagree on.
 */
const COLD_BALANCE_FACTOR = 1.5;
/** Near-equal costs: only candidates adding at most this many more prefill tokens than the least compete on load. */
const UNCACHED_TOLERANCE = 0;

interface Candidate {
  view: InstanceView;
  matchedBlocks: number;
  /** Prompt tokens the instance would have to compute. */
  uncached: number;
  /** Blocks the instance's index holds: how much of its cache this router has filled. */
  indexedBlocks: number;
  cost: number;
  /**
   * What a cold prompt's placement compares (coldPlacement): the work queued ahead of it in fastest-instance time
   * (× the slowdown) plus its own prefill at the fastest speed. Equal to `cost` on a fleet of equal speeds.
   */
  coldCost: number;
  /** Weighted rendezvous score for the prompt's cold key (weightedRendezvousScore, by `weight`). */
  score: number;
  /**
   * The instance's share weight: its prefill speed over the fastest's (1 in a fleet of equal speeds). Shares
   * of requests and of index contents are bounded in proportion to it.
   */
  weight: number;
}

/** What the stages of one decision read about its request. */
interface PromptFacts {
  readonly hashes: readonly RoutingBlockKey[];
  /** The router's estimate of its prompt tokens, at least 1. */
  readonly promptTokens: number;
  readonly tokensPerBlock: number;
  /** Its cold placement key (coldPlacementKey: unkeyed, so replicas agree): what rendezvous order is computed for. */
  readonly coldKey: number;
}

interface Pending {
  readonly instance: string;
  readonly hashes: readonly RoutingBlockKey[];
  /** Recency of each matched block before this request touched it, and the clock then (for engine feedback). */
  readonly admission: FeedbackAdmission;
}

/**
 * `cache-aware`: routes each request where its prompt is predicted to start fastest.
 *
 * - **Prediction.** The routing text is cut into `blockChars`-character blocks with chained hashes seeded by the
 *   model and the tenant key; a per-instance LRU index (state/prefix-index.ts) of the blocks each instance was
 *   recently sent, sized from the instance's KV capacity, gives the longest cached prefix per instance.
 * - **Cost.** Predicted work ahead of the request's first token = prefill tokens queued on the instance + the
 *   uncached part of this prompt + one token per decoding sequence for every engine step that prefill takes
 *   (vLLM schedules every running decode's token in each step, next to prefill chunks, and a step's time grows
 *   with the tokens it schedules), plus the prefix tokens this choice would recompute that the best-matching
 *   instance holds (beyond `balanceSlackTokens`): work the fleet pays for later, on a busy fleet as queueing of
 *   later requests. A long match on a swamped instance still loses to a shorter one on an idle instance, but only
 *   when the wait saved exceeds the work wasted.
 * - **Balance.** Instances whose cost is within `balanceSlackTokens` of the cheapest are equal; among them the one
 *   with the fewest requests in flight wins, then the longest match, then the rendezvous rank of the prompt's
 *   first block. So a saving too small to matter (a short shared system prompt) does not pile load on one
 *   instance, and a prompt with no match anywhere goes where rendezvous hashing puts it when the load is even
 *   (several router replicas agree), elsewhere when it is not.
 * - **Mixed speeds.** Costs are in fastest-instance time (work × fastest speed ÷ the instance's). A cold prompt is
 *   placed by where it would start (work queued ahead × that ratio, plus its own prefill at the fastest speed) and
 *   by weighted rendezvous (weight = speed ÷ fastest), so new prefix groups, and the hits that follow them, spread
 *   in proportion to speed (coldPlacement); a prompt with a match follows the full cost, hits included.
 * - **Hot prefixes** stay on the instances that hold them until their queue costs more than recomputing the
 *   prefix elsewhere; then the next instance (by load, then rendezvous rank) takes some and holds the prefix
 *   too: the set grows with load, never to every instance at light load, and never stays one when it is swamped.
 * - **Sessions.** A request carrying the session header goes to its session's instance unless that one is
 *   unhealthy or overloaded (following it would cost more than recomputing the whole prompt on the cheapest).
 * - **Observed instances.** When the caller observes what an instance publishes about itself
 *   (`InstanceView.observedBlocks`: every replica's sends, corrected by the instance's engine), a prompt's match
 *   there is the instance's index as of the observation plus what this router sent it since, and index fill is the
 *   instance's; the load fields are then the instance's own count plus this router's changes since, the same rule.
 *   So several router replicas decide on the same state.
 * - **Feedback.** When the engine reports `cached_tokens` clearly below the prediction, that instance evicted
 *   the missing blocks, and with LRU everything it used less recently too: those entries are dropped, unless the
 *   report contradicts what the engine was seen serving or evicts faster than it admits (EngineFeedback: a
 *   request that renders a hot prefix differently cannot empty the index).
 */
export class CacheAwarePolicy implements RoutingPolicy {
  readonly name = 'cache-aware' as const;
  readonly wantsKvCapacity = true;
  readonly index = new PrefixIndex();
  private readonly instanceHashes = new InstanceHashCache();
  private readonly sessions = new Map<string, string>();
  private readonly pending = new WeakMap<RoutingDecision, Pending>();
  private readonly candidates: Candidate[] = [];
  private lastRequest: RoutingRequest | undefined;
  private lastHashes: readonly RoutingBlockKey[] = [];
  private lastInstances: readonly InstanceView[] | undefined;
  private knownInstances = '';
  /** Requests this router sent to each instance since the healthy set last changed. */
  private readonly sent = new Map<string, number>();
  /** Per instance: what its engine's reports proved (EngineFeedback), forgotten with its index. */
  private readonly feedback = new Map<string, EngineFeedback>();
  /** Per observed instance: the observation last seen at commit, and this router's index clock then. */
  private readonly observationMarks = new Map<string, { readonly atMs: number; readonly clock: number }>();

  readonly routingBlocks: RoutingBlockHashing;

  constructor(
    readonly options: CacheAwareOptions,
    /** The deployment's secret its block hashes are keyed with (a random one for this process when none is given). */
    readonly stateHashKey: StateHashKey = processStateHashKey(),
  ) {
    this.routingBlocks = {
      blockChars: options.blockChars,
      key: stateHashKey,
      hashesOf: (request) => this.blockHashesOf(request),
    };
  }

  /** Chained hashes of the request's full routing blocks (memoized for the decide → commit of one request). */
  blockHashesOf(request: RoutingRequest): readonly RoutingBlockKey[] {
    if (request === this.lastRequest) return this.lastHashes;
    this.lastHashes = routingBlockHashes(request, this.options.blockChars, this.stateHashKey);
    this.lastRequest = request;
    return this.lastHashes;
  }

  /** Index capacity for an instance: its KV capacity in routing blocks. */
  capacityBlocksOf(view: InstanceView): number {
    return capacityBlocksFor(view.kvCapacityTokens ?? this.options.kvCacheTokens, this.options.blockChars);
  }

  /**
   * Named stages, as in llm-d's scheduler plugins: **score** every healthy instance (predicted match and cost),
   * **pick** the session's instance when it is worth following, **filter** out instances over their share of the
   * requests sent (bounded load), then **pick** among the rest: a cold prompt by rendezvous order, otherwise the
   * best of the near-equal costs.
   */
  decide(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision<CacheAwareReason> {
    const prompt = this.promptOf(request);
    this.lastInstances = snapshot.instances;
    const candidates = this.scoreHealthy(snapshot.instances, prompt);
    if (candidates.length === 0) throw new NoHealthyInstanceError();
    const session = this.pickSession(request, candidates, prompt);
    if (session !== undefined) return this.decision(session, 'session-affinity', prompt);
    const all = candidates.slice();
    this.filterOverShare(candidates);
    return this.pickNearEqual(candidates, all, prompt);
  }

  /** What every stage reads about the request: its blocks, its size, and the key a cold prompt is placed by. */
  private promptOf(request: RoutingRequest): PromptFacts {
    const hashes = this.blockHashesOf(request);
    return {
      hashes,
      promptTokens: Math.max(1, estimatedPromptTokens(request)),
      tokensPerBlock: this.options.blockChars / CHARS_PER_TOKEN,
      coldKey: coldPlacementKey(request, this.options.blockChars),
    };
  }

  /**
   * Score: one candidate per healthy instance, with its predicted match, the prompt tokens it would compute, its
   * index fill, rendezvous score and cost (its own work plus the prefix it would recompute that the best-matching
   * instance holds). Fills and returns the reused candidate list.
   */
  private scoreHealthy(instances: readonly InstanceView[], prompt: PromptFacts): Candidate[] {
    const { hashes, promptTokens, tokensPerBlock, coldKey } = prompt;
    const candidates = this.candidates;
    candidates.length = 0;
    let minUncachedAll = Infinity;
    let fastest = 0;
    for (let i = 0; i < instances.length; i++) {
      const speed = instances[i].prefillTokensPerSecond;
      if (instances[i].healthy && speed !== undefined && speed > fastest) fastest = speed;
    }
    for (let i = 0; i < instances.length; i++) {
      const view = instances[i];
      if (!view.healthy) continue;
      const index = this.index.get(view.id);
      let matchedBlocks: number;
      let indexedBlocks: number;
      const observed = usableObservation(view, this.options.blockChars);
      if (observed !== undefined) {
        // The instance's own index (every replica's sends, corrected by its engine) as of the observation, plus
        // what this router sent it since: the same rule as the load.
        const sentSince =
          index === undefined ? 0 : index.matchNewerThan(hashes, this.clockAtObservation(view.id, observed));
        matchedBlocks = Math.max(observed.match(hashes), sentSince);
        indexedBlocks = observed.size;
      } else {
        matchedBlocks = index === undefined ? 0 : index.match(hashes);
        indexedBlocks = index === undefined ? 0 : index.size;
      }
      const uncached = promptTokens - cachedTokens(matchedBlocks, tokensPerBlock, promptTokens);
      if (uncached < minUncachedAll) minUncachedAll = uncached;
      const weight = 1 / slowdownOf(view.prefillTokensPerSecond, fastest);
      const score = weightedRendezvousScore(rendezvousScore(coldKey, this.instanceHashes.get(view.id)), weight);
      candidates.push({ view, matchedBlocks, uncached, indexedBlocks, cost: 0, coldCost: 0, score, weight });
    }
    // Work in tokens at the fastest instance's speed: a slower instance takes proportionally longer for the same tokens.
    for (const c of candidates) {
      const slowdown = slowdownOf(c.view.prefillTokensPerSecond, fastest);
      const ahead = this.workAheadOf(c.view, c.uncached);
      c.cost = (ahead + c.uncached + this.recomputeCostOf(c.uncached - minUncachedAll)) * slowdown;
      c.coldCost = ahead * slowdown + c.uncached;
    }
    return candidates;
  }

  /**
   * Pick (sessions): the instance a request's session lives on, unless it is overloaded: following the session
   * costs more than recomputing the whole prompt on the cheapest instance.
   */
  private pickSession(
    request: RoutingRequest,
    candidates: readonly Candidate[],
    prompt: PromptFacts,
  ): Candidate | undefined {
    if (this.options.sessionHeader === '') return undefined;
    const session = sessionOf(request, this.options.sessionHeader);
    const pinned = session === undefined ? undefined : this.sessions.get(session);
    if (pinned === undefined) return undefined;
    const c = candidates.find((x) => x.view.id === pinned);
    return c !== undefined && c.cost <= minCostOf(candidates) + prompt.promptTokens ? c : undefined;
  }

  /**
   * Filter (bounded load in requests, Mirrokni et al. on request counts): an instance that has been sent more than
   * BALANCE_FACTOR × its share of this router's requests is passed over while any other is not, whatever it
   * holds. It stays over only until the others catch up, so a hot prefix spreads to the next instance (which then
   * holds it too) instead of fixing each instance's share by how popular its cached prefixes happen to be.
   * Cold prompts are exempt: rendezvous order, bounded by index contents, is what replicas agree on.
   */
  private filterOverShare(candidates: Candidate[]): void {
    if (candidates.some((c) => c.matchedBlocks > 0)) this.dropOverShare(candidates);
  }

  /**
   * Pick (near-equal costs): costs within the slack of the cheapest count as equal, never more than a quarter of
   * this prompt (a conversation's history is worth keeping). A prompt no candidate holds any of is placed by
   * rendezvous order. Otherwise, among the near-equal instances not over BALANCE_FACTOR × their share of the
   * requests in flight (while any is not), those adding the least prefill work to the fleet compete, and load
   * decides (`better`): a hot prefix stays where it is cached until its queue costs more than recomputing it.
   */
  private pickNearEqual(
    candidates: readonly Candidate[],
    all: readonly Candidate[],
    prompt: PromptFacts,
  ): RoutingDecision<CacheAwareReason> {
    const slack = Math.min(this.options.balanceSlackTokens, prompt.promptTokens / 4);
    if (!candidates.some((c) => c.matchedBlocks > 0))
      return this.decision(
        this.coldPlacement(candidates, minColdCostOf(candidates) + slack, prompt.hashes.length),
        'cold-rendezvous',
        prompt,
      );
    const limit = minCostOf(candidates) + slack;
    let totalInFlight = 0;
    for (const c of candidates) totalInFlight += c.view.inFlight;
    // Not weighted by speed: an instance given work in proportion to its speed holds its requests for inversely
    // as long, so by Little's law it has as many in flight as a faster one (the requests-sent bound is weighted).
    const inFlightBound = (BALANCE_FACTOR * (totalInFlight + 1)) / candidates.length;
    let anyWithin = false;
    for (const c of candidates) if (c.cost <= limit && c.view.inFlight + 1 <= inFlightBound) anyWithin = true;
    const over = (c: Candidate) => anyWithin && c.view.inFlight + 1 > inFlightBound;
    let minUncached = Infinity;
    for (const c of candidates) if (c.cost <= limit && !over(c) && c.uncached < minUncached) minUncached = c.uncached;
    let best: Candidate | undefined;
    for (const c of candidates) {
      if (c.cost > limit || over(c) || c.uncached > minUncached + UNCACHED_TOLERANCE) continue;
      if (best === undefined || better(c, best)) best = c;
    }
    // cache-match: the longest match won; balanced: load chose among near-equal costs.
    const reason: CacheAwareReason = best!.matchedBlocks > 0 && isLongest(best!, all) ? 'cache-match' : 'balanced';
    return this.decision(best!, reason, prompt);
  }

  /** Removes, in place, the candidates over BALANCE_FACTOR × their share of the requests sent, unless all are. */
  private dropOverShare(candidates: Candidate[]): void {
    let total = 0;
    let totalWeight = 0;
    for (const c of candidates) {
      total += this.sent.get(c.view.id) ?? 0;
      totalWeight += c.weight;
    }
    // The paper's capacity ⌈(1 + ε)(m + 1)/n⌉ (weighted: × the instance's weight over the mean weight), never below
    // 1/ε requests: until an instance's share is that many requests, one request moves it by more than ε, so a
    // young router does not yet pass over what an instance holds.
    const bound = (c: Candidate) =>
      Math.max(Math.ceil((BALANCE_FACTOR * (total + 1) * c.weight) / totalWeight), Math.ceil(1 / (BALANCE_FACTOR - 1)));
    const under = (c: Candidate) => (this.sent.get(c.view.id) ?? 0) + 1 <= bound(c);
    if (!candidates.some(under)) return;
    let n = 0;
    for (const c of candidates) if (under(c)) candidates[n++] = c;
    candidates.length = n;
  }

  /**
   * A prompt no instance has seen: the first instance in weighted rendezvous order for its first block whose cold
   * cost is within the slack of the cheapest and whose index is not fuller than COLD_BALANCE_FACTOR × its weighted
   * share of the mean (bounded-load consistent hashing). Replicas with the same view agree, and a few hot first
   * blocks cannot fill one instance.
   *
   * Placed by where the prompt would *start*, not where its own prefill would finish soonest: a cold prompt's
   * placement decides where its prefix group's later requests hit (they follow the cache, `cost`), so it is what
   * spreads the fleet's work. Its eligibility (`coldCost`) counts the work queued ahead in fastest-instance time
   * (× the instance's slowdown) and its own prefill at the fastest speed, so an idle slower instance is as eligible
   * as an idle fast one, and weighted rendezvous (weights = speed ÷ fastest) gives each instance a share of new
   * prefix groups proportional to its speed: equal utilisation, and every instance's KV cache in use. Charging
   * the whole prefill × the slowdown instead would keep a slower instance from ever receiving a new prefix while
   * any fast one is near idle, and so from ever getting hits. On a fleet of equal speeds `coldCost` is `cost`
   * and the weights are all 1, so placement is exactly unweighted rendezvous.
   */
  private coldPlacement(candidates: readonly Candidate[], costLimit: number, promptBlocks: number): Candidate {
    let total = 0;
    let totalWeight = 0;
    for (const c of candidates) {
      total += c.indexedBlocks;
      totalWeight += c.weight;
    }
    // Weighted like the request bound: a slower instance is filled with new prefixes in proportion to its speed.
    const bound = (c: Candidate) => (COLD_BALANCE_FACTOR * (total + promptBlocks) * c.weight) / totalWeight;
    let best: Candidate | undefined;
    let fallback: Candidate | undefined;
    for (const c of candidates) {
      if (c.coldCost > costLimit) continue;
      if (fallback === undefined || ranksAbove(c.score, c.view.id, fallback.score, fallback.view.id)) fallback = c;
      if (c.indexedBlocks + promptBlocks > bound(c)) continue;
      if (best === undefined || ranksAbove(c.score, c.view.id, best.score, best.view.id)) best = c;
    }
    return best ?? fallback!;
  }

  /**
   * The fleet's share of a choice's cost: prefill tokens the choice recomputes that the best-matching instance
   * holds. Predicted TTFT alone is selfish — a diversion saves this request's wait, but the recomputed prefix is
   * prefill work the fleet did not have to do, and on a busy fleet every such token delays a later request by
   * one token's prefill: so it counts once more, at the same weight as the request's own work. Up to the
   * balance slack (a request's fixed overhead) recomputing costs nothing extra, so a short shared system prompt
   * still does not pull new conversations onto the instances that hold it.
   */
  private recomputeCostOf(recomputedTokens: number): number {
    return Math.max(0, recomputedTokens - this.options.balanceSlackTokens);
  }

  /**
   * Work ahead of a request's own prefill on `view`, in tokens at the instance's own speed: the prefill queued there,
   * plus one token per decoding sequence for every engine step the queued and own prefill take (decodes share each
   * step with prefill chunks). The request's predicted work there is this plus its `uncached` tokens.
   */
  private workAheadOf(view: InstanceView, uncached: number): number {
    const queued = view.queuedPrefillTokens ?? 0;
    const decoding = view.decodeSequences ?? 0;
    return queued + decoding * Math.max(1, Math.ceil((queued + uncached) / this.options.stepTokens));
  }

  private decision(c: Candidate, reason: CacheAwareReason, prompt: PromptFacts): RoutingDecision<CacheAwareReason> {
    return {
      instance: c.view.id,
      reason,
      predictedCachedTokens: cachedTokens(c.matchedBlocks, prompt.tokensPerBlock, prompt.promptTokens),
    };
  }

  /** A rejected request's blocks are in no engine's cache: they enter the index only once an engine accepted it. */
  readonly commitWhen = 'accepted';

  commit(request: RoutingRequest, decision: RoutingDecision): void {
    this.forgetGoneInstances();
    this.markObservations();
    const hashes = this.blockHashesOf(request);
    const view = this.lastInstances?.find((v) => v.id === decision.instance);
    const index = this.index.forInstance(
      decision.instance,
      view === undefined
        ? this.capacityBlocksOf({ id: decision.instance, healthy: true, inFlight: 0 })
        : this.capacityBlocksOf(view),
    );
    this.pending.set(decision, {
      instance: decision.instance,
      hashes,
      admission: { priorRecency: index.recenciesOfMatch(hashes), clockAtAdmission: this.index.clock.now },
    });
    index.record(hashes, this.index.clock);
    this.sent.set(decision.instance, (this.sent.get(decision.instance) ?? 0) + 1);
    if (this.options.sessionHeader !== '') {
      const session = sessionOf(request, this.options.sessionHeader);
      if (session !== undefined) {
        this.sessions.delete(session);
        this.sessions.set(session, decision.instance);
        if (this.sessions.size > this.options.maxSessions)
          this.sessions.delete(this.sessions.keys().next().value as string);
      }
    }
  }

  release(_request: RoutingRequest, decision: RoutingDecision, outcome: ReleaseOutcome): void {
    const p = this.pending.get(decision);
    if (p === undefined) return;
    this.pending.delete(decision);
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

  /** This router's index clock when it first committed after `observed` arrived: later entries are its sends since. */
  private clockAtObservation(id: string, observed: ObservedBlocks): number {
    const mark = this.observationMarks.get(id);
    // Not committed since it arrived: nothing sent since.
    return mark !== undefined && mark.atMs === observed.observedAtMs ? mark.clock : this.index.clock.now;
  }

  /** Before this request is recorded: the clock at which each newly arrived observation starts. */
  private markObservations(): void {
    const instances = this.lastInstances;
    if (instances === undefined) return;
    for (const view of instances) {
      const observed = usableObservation(view, this.options.blockChars);
      if (observed === undefined) continue;
      const mark = this.observationMarks.get(view.id);
      if (mark === undefined || mark.atMs !== observed.observedAtMs)
        this.observationMarks.set(view.id, { atMs: observed.observedAtMs, clock: this.index.clock.now });
    }
  }

  /** Drops the index of instances no longer configured or no longer healthy (their caches are gone or unknown). */
  private forgetGoneInstances(): void {
    const instances = this.lastInstances;
    if (instances === undefined) return;
    let key = '';
    // A held-back instance (healthy, not serving this request's model) keeps its index: its cache is intact.
    for (let i = 0; i < instances.length; i++)
      if (instances[i].healthy || instances[i].heldBack === true) key += `${instances[i].id}\n`;
    if (key === this.knownInstances) return;
    this.knownInstances = key;
    this.sent.clear();
    this.observationMarks.clear();
    const keep = new Set(instances.filter((v) => v.healthy || v.heldBack === true).map((v) => v.id));
    this.index.retainOnly(keep);
    for (const id of [...this.feedback.keys()]) if (!keep.has(id)) this.feedback.delete(id);
  }
}

function minCostOf(candidates: readonly Candidate[]): number {
  let min = Infinity;
  for (const c of candidates) if (c.cost < min) min = c.cost;
  return min;
}

function minColdCostOf(candidates: readonly Candidate[]): number {
  let min = Infinity;
  for (const c of candidates) if (c.coldCost < min) min = c.coldCost;
  return min;
}

/** Cached tokens of `matchedBlocks` routing blocks, never the whole prompt (the engine recomputes the last token). */
function cachedTokens(matchedBlocks: number, tokensPerBlock: number, promptTokens: number): number {
  return Math.min(Math.floor(matchedBlocks * tokensPerBlock), promptTokens - 1);
}

/**
 * Among equally cheap instances: fewer in flight, then the emptier index (spreads cache contents, and with them
 * future requests), then the longer match, then rendezvous rank, then id.
 */
function better(a: Candidate, b: Candidate): boolean {
  if (a.view.inFlight !== b.view.inFlight) return a.view.inFlight < b.view.inFlight;
  if (a.indexedBlocks !== b.indexedBlocks) return a.indexedBlocks < b.indexedBlocks;
  if (a.matchedBlocks !== b.matchedBlocks) return a.matchedBlocks > b.matchedBlocks;
  return ranksAbove(a.score, a.view.id, b.score, b.view.id);
}

/** The instance's published index, when the caller observes it and it uses this policy's block size. */
function usableObservation(view: InstanceView, blockChars: number): ObservedBlocks | undefined {
  const observed = view.observedBlocks;
  return observed !== undefined && observed.blockChars === blockChars ? observed : undefined;
}

function isLongest(c: Candidate, all: readonly Candidate[]): boolean {
  for (const x of all) if (x.matchedBlocks > c.matchedBlocks) return false;
  return true;
}

function sessionOf(request: RoutingRequest, header: string): string | undefined {
  const value = request.headers?.[header];
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v === '' ? undefined : v;
}

export const cacheAwareDefinition = definePolicy({
  name: 'cache-aware',
  description:
    'predicted time to first token: queued prefill + uncached part of the prompt (per-instance LRU index of chained block hashes) + decode pressure; near-equal costs go to the least loaded; cold prompts by rendezvous, weighted by prefill speed on a mixed fleet; X-Session-Id affinity',
  reasons: ['cache-match', 'balanced', 'cold-rendezvous', 'session-affinity'],
  options: [
    {
      name: 'blockChars',
      type: 'integer',
      min: 16,
      max: 65536,
      default: 256,
      valueName: 'chars',
      doc: 'characters per routing block (256 = 64 tokens = 4 vLLM blocks: a 128k-token prompt is 2,000 blocks, and a prediction is off by < 64 tokens)',
    },
    {
      name: 'kvCacheTokens',
      type: 'integer',
      min: 1024,
      max: 1_000_000_000,
      default: DEFAULT_KV_CACHE_TOKENS,
      valueName: 'tokens',
      doc: "KV capacity per instance when the engine's vllm:cache_config_info is not available; sizes each instance's index (about one TP8 H100 node serving a 70B model)",
    },
    {
      name: 'balanceSlackTokens',
      type: 'integer',
      min: 0,
      max: 1_000_000,
      default: 512,
      valueName: 'tokens',
      doc: "predicted prefill differences up to this are treated as equal and load decides (512 ≈ a request's fixed overhead: HTTP, tokenization and one engine step)",
    },
    {
      name: 'stepTokens',
      type: 'integer',
      min: 1,
      max: 1_000_000,
      default: 8192,
      valueName: 'tokens',
      doc: "tokens per engine step shared by decodes and prefill (vLLM's max_num_batched_tokens default with chunked prefill)",
    },
    {
      name: 'sessionHeader',
      type: 'string',
      pattern: /^$|^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/,
      patternDoc: "a lower-case HTTP header name of 1–64 characters, or '' to turn session affinity off",
      default: 'x-session-id',
      valueName: 'header',
      doc: 'request header naming a session; its requests stay on one instance unless it is unhealthy or overloaded',
    },
    {
      name: 'maxSessions',
      type: 'integer',
      min: 1,
      max: 10_000_000,
      default: 100_000,
      valueName: 'n',
      doc: 'sessions remembered, least recently used forgotten first (bounds memory)',
    },
  ],
  create: (o, deps) =>
    new CacheAwarePolicy(
      {
        blockChars: o.blockChars,
        kvCacheTokens: o.kvCacheTokens,
        balanceSlackTokens: o.balanceSlackTokens,
        stepTokens: o.stepTokens,
        sessionHeader: o.sessionHeader,
        maxSessions: o.maxSessions,
      },
      deps.stateHashKey,
    ),
});
