import type { RoutingRequest } from '../../protocol/routing-request';
import type { RoutingBlockKey } from '../../state/state-hash-key';
import { slowdownOf } from '../prefill-speed';
import { InstanceHashCache, rendezvousScore, weightedRendezvousScore } from '../rendezvous';
import type { InstanceView, ReleaseOutcome, RoutingDecision, RoutingSnapshot } from '../routing-policy';
import type { PrefixMemory } from './prefix-memory';
import { predictedFleetCostOf, recomputeCostOf, sharedStepDelayOf, uncachedOf, workAheadOf } from './fleet-cost';
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
      const queued = view.queuedPrefillTokens ?? 0;
      const decoding = view.decodeSequences ?? 0;
      const { stepTokens, balanceSlackTokens } = this.options;
      const ahead =
        workAheadOf(queued, decoding, uncached, stepTokens) +
        sharedStepDelayOf(queued, view.inFlight - decoding, uncached, stepTokens);
      const displaced = this.displacedCacheOf(view, matches[i], hashes.length, uncached - minUncached, tokensPerBlock);
      return {
        view,
        matchedBlocks,
        cachedTokens: cached[i],
        longest: matchedBlocks === maxMatched,
        uncached,
        indexedBlocks,
        // Work in tokens at the fastest instance's speed: a slower instance takes proportionally longer for the same tokens.
        cost:
          predictedFleetCostOf(ahead, uncached, uncached - minUncached, slowdown, balanceSlackTokens) +
          displaced * slowdown,
        coldCost: ahead * slowdown + uncached,
        score: weightedRendezvousScore(rendezvousScore(coldKey, this.instanceHashes.get(view.id)), weight),
        weight,
      };
    });
  }

  /**
   * The cache a diversion displaces, in tokens: a recomputed prefix is stored a second time (its holder keeps its
   * copy), and once the instance's cache is full each block it stores evicts one least recently used block of
   * another prefix, which the next request for that prefix computes again. So the `recomputedTokens` beyond the
   * slack (recomputeCostOf) count once more, as far as this prompt's new blocks overflow what the instance's
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
    const recomputed = recomputeCostOf(recomputedTokens, this.options.balanceSlackTokens);
    if (recomputed <= 0) return 0;
    const newBlocks = Math.max(0, promptBlocks - match.matchedBlocks);
    const overflowBlocks = match.indexedBlocks + newBlocks - this.memory.capacityBlocksOf(view);
    return overflowBlocks <= 0 ? 0 : Math.min(recomputed, overflowBlocks * tokensPerBlock);
  }

  commit(request: RoutingRequest, decision: RoutingDecision, snapshot: RoutingSnapshot | undefined): void {
    this.memory.commit(request, decision, snapshot);
  }

  release(_request: RoutingRequest, decision: RoutingDecision, outcome: ReleaseOutcome): void {
    this.memory.release(decision, outcome);
  }
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
