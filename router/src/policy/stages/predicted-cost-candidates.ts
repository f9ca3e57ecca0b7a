import type { RoutingRequest } from '../../protocol/routing-request';
import type { RoutingBlockKey } from '../../state/state-hash-key';
import { slowdownOf } from '../prefill-speed';
import { InstanceHashCache, rendezvousScore, weightedRendezvousScore } from '../rendezvous';
import type { InstanceView, ReleaseOutcome, RoutingDecision, RoutingSnapshot } from '../routing-policy';
import type { PrefixMemory } from './prefix-memory';
import type { CandidateStage, DecisionFacts } from './stage';

/** What the stages of a cache-predicting decision read about its request. */
export interface PromptFacts extends DecisionFacts {
  readonly hashes: readonly RoutingBlockKey[];
  /** The router's estimate of its prompt tokens, at least 1. */
  readonly promptTokens: number;
  readonly tokensPerBlock: number;
  /** Its cold placement key (coldPlacementKey: unkeyed, so replicas agree): what rendezvous order is computed for. */
  readonly coldKey: number;
}

/** One instance as the cost-predicting stages compare it. */
export interface CostCandidate {
  readonly view: InstanceView;
  readonly matchedBlocks: number;
  /** Prompt tokens predicted served from the instance's cache: the engine's own figure when it reports one. */
  readonly cachedTokens: number;
  /** True when no instance of the decision matches more blocks (before any filter). */
  readonly longest: boolean;
  /** Prompt tokens the instance would have to compute. */
  readonly uncached: number;
  /** Blocks the instance's index holds: how much of its cache this router has filled. */
  readonly indexedBlocks: number;
  /** Predicted work ahead of the request's first token there, in fastest-instance tokens, fleet recompute included. */
  readonly cost: number;
  /**
   * What a cold prompt's placement compares (cold-rendezvous picker): the work queued ahead of it in fastest-instance
   * time (× the slowdown) plus its own prefill at the fastest speed. Equal to `cost` on a fleet of equal speeds.
   */
  readonly coldCost: number;
  /** Weighted rendezvous score for the prompt's cold key (weightedRendezvousScore, by `weight`). */
  readonly score: number;
  /**
   * The instance's share weight: its prefill speed over the fastest's (1 in a fleet of equal speeds). Shares
   * of requests and of index contents are bounded in proportion to it.
   */
  readonly weight: number;
}

/** The options the cost prediction reads. */
export interface PredictedCostOptions {
  /** Recomputing up to this many tokens the best-matching instance holds costs the fleet nothing extra. */
  readonly balanceSlackTokens: number;
  /** Tokens an engine step schedules (vLLM max_num_batched_tokens): decodes share it with prefill. */
  readonly stepTokens: number;
}

/**
 * Predicts, for each instance, the request's match (PrefixMemory) and its cost: work ahead of its first token =
 * prefill tokens queued on the instance + the uncached part of this prompt + one token per decoding sequence for
 * every engine step that prefill takes (vLLM schedules every running decode's token in each step, next to prefill
 * chunks), plus the prefix tokens this choice would recompute that the best-matching instance holds (beyond
 * `balanceSlackTokens`): work the fleet pays for later, on a busy fleet as queueing of later requests, and once more
 * as far as its copy overflows the instance's cache (displacedCacheOf: it evicts other prefixes' blocks), plus the
 * delay its first chunk adds to requests waiting there in the same engine step (sharedStepDelayOf). Costs are
 * in fastest-instance time (work × fastest speed ÷ the instance's). Commits record the request in the memory.
 */
export class PredictedCostCandidates implements CandidateStage<CostCandidate, PromptFacts> {
  readonly kind = 'candidates';
  readonly name = 'predicted-cost';
  private readonly instanceHashes = new InstanceHashCache();

  constructor(
    private readonly memory: PrefixMemory,
    private readonly options: PredictedCostOptions,
  ) {}

  candidatesOf(instances: readonly InstanceView[], prompt: PromptFacts): readonly CostCandidate[] {
    const { hashes, promptTokens, tokensPerBlock, coldKey } = prompt;
    let fastest = 0;
    for (let i = 0; i < instances.length; i++) {
      const speed = instances[i].prefillTokensPerSecond;
      if (speed !== undefined && speed > fastest) fastest = speed;
    }
    const matches = instances.map((view) => this.memory.matchOf(view, hashes, prompt.request));
    const cached = matches.map(
      (m) => m.engineCachedTokens ?? cachedTokens(m.matchedBlocks, tokensPerBlock, promptTokens),
    );
    let minUncached = Infinity;
    let maxMatched = 0;
    for (let i = 0; i < matches.length; i++) {
      minUncached = Math.min(minUncached, uncachedOf(promptTokens, cached[i]));
      maxMatched = Math.max(maxMatched, matches[i].matchedBlocks);
    }
    return instances.map((view, i): CostCandidate => {
      const { matchedBlocks, indexedBlocks } = matches[i];
      const uncached = uncachedOf(promptTokens, cached[i]);
      const slowdown = slowdownOf(view.prefillTokensPerSecond, fastest);
      const weight = 1 / slowdown;
      // Work ahead of its first token, plus the delay its prefill adds to requests already waiting there.
      const ahead = this.workAheadOf(view, uncached) + this.sharedStepDelayOf(view, uncached);
      const recomputed = this.recomputeCostOf(uncached - minUncached);
      const displaced = this.displacedCacheOf(view, matches[i], hashes.length, recomputed, tokensPerBlock);
      return {
        view,
        matchedBlocks,
        cachedTokens: cached[i],
        longest: matchedBlocks === maxMatched,
        uncached,
        indexedBlocks,
        // Work in tokens at the fastest instance's speed: a slower instance takes proportionally longer for the same tokens.
        cost: (ahead + uncached + recomputed + displaced) * slowdown,
        coldCost: ahead * slowdown + uncached,
        score: weightedRendezvousScore(rendezvousScore(coldKey, this.instanceHashes.get(view.id)), weight),
        weight,
      };
    });
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
   * The cache a diversion displaces, in tokens: a recomputed prefix is stored a second time (its holder keeps its
   * copy), and once the instance's cache is full each block it stores evicts one least recently used block of
   * another prefix, which the next request for that prefix computes again. So the recomputed tokens (beyond the
   * slack, `recomputedTokens`) count once more, as far as this prompt's new blocks overflow what the instance's
   * index holds (its KV capacity in routing blocks); an instance with room displaces nothing. Counted at full
   * weight like the recompute: the evicted blocks are the instance's least recently used, so this is an upper
   * bound on what the fleet loses. Without it, on the mixed fleet's trace, the diversions' copies churned the fast
   * instances' caches: 2.5× as many requests found their prefix evicted as under `llm-d-precise` (docs/router.md).
   */
  private displacedCacheOf(
    view: InstanceView,
    match: { readonly matchedBlocks: number; readonly indexedBlocks: number },
    promptBlocks: number,
    recomputedTokens: number,
    tokensPerBlock: number,
  ): number {
    if (recomputedTokens <= 0) return 0;
    const newBlocks = Math.max(0, promptBlocks - match.matchedBlocks);
    const overflowBlocks = match.indexedBlocks + newBlocks - this.memory.capacityBlocksOf(view);
    return overflowBlocks <= 0 ? 0 : Math.min(recomputedTokens, overflowBlocks * tokensPerBlock);
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

  /**
   * The delay this prompt's prefill adds to the requests already waiting for their first token on `view`, in tokens:
   * vLLM fills an engine step with waiting prefills up to `stepTokens` (max_num_batched_tokens), so while the work
   * queued there fits in one step, this prompt's first chunk joins that step and each waiting request's first token
   * comes a chunk's prefill later (a 439-token prompt waited 422 ms instead of 56 ms on the trace when a cold
   * 33k-token prompt followed it there). Counted like the request's own work, as the fleet recompute is: predicted
   * TTFT alone is selfish. Nothing is waiting (or the caller does not track prefill): 0.
   */
  private sharedStepDelayOf(view: InstanceView, uncached: number): number {
    const queued = view.queuedPrefillTokens ?? 0;
    if (queued <= 0) return 0;
    const waiting = view.inFlight - (view.decodeSequences ?? 0);
    return Math.max(0, waiting) * Math.max(0, Math.min(uncached, this.options.stepTokens - queued));
  }

  commit(request: RoutingRequest, decision: RoutingDecision, snapshot: RoutingSnapshot | undefined): void {
    this.memory.commit(request, decision, snapshot);
  }

  release(_request: RoutingRequest, decision: RoutingDecision, outcome: ReleaseOutcome): void {
    this.memory.release(decision, outcome);
  }
}

/**
 * Prompt tokens left to compute when `cached` are served from cache: at least the last one (an engine's own figure
 * counts its tokens, the prompt's size is the router's estimate: they need not agree).
 */
function uncachedOf(promptTokens: number, cached: number): number {
  return Math.max(1, promptTokens - cached);
}

/** Cached tokens of `matchedBlocks` routing blocks, never the whole prompt (the engine recomputes the last token). */
export function cachedTokens(matchedBlocks: number, tokensPerBlock: number, promptTokens: number): number {
  return Math.min(Math.floor(matchedBlocks * tokensPerBlock), promptTokens - 1);
}

/** The decision for a cost candidate: its instance, the reason, and the tokens it is predicted to serve cached. */
export function costDecision<Reason extends string>(c: CostCandidate, reason: Reason): RoutingDecision<Reason> {
  return { instance: c.view.id, reason, predictedCachedTokens: c.cachedTokens };
}

/** The least `cost` among `candidates`. */
export function minCostOf(candidates: readonly CostCandidate[]): number {
  let min = Infinity;
  for (const c of candidates) if (c.cost < min) min = c.cost;
  return min;
}
