import { ranksAbove } from '../rendezvous';
import { costDecision, type CostCandidate, type PromptFacts } from './predicted-cost-candidates';
import type { Picker } from './stage';

/**
 * The bounded-load rule for cold prompts, on index contents: skip instances whose index holds this × their share
 * or more. Looser than the request bound (ε = 0.5 rather than 0.25) because each router replica measures only its own
 * index: the paper's bound on keys moved off their rendezvous choice grows as 1/ε², and a cold placement that
 * moves is one replicas disagree on.
 */
const COLD_BALANCE_FACTOR = 1.5;

/**
 * How a cold prompt is placed among the eligible instances. 'least-loaded': the fewest requests in flight per unit
 * of speed (an instance carrying more than its speed's share would serve the new prefix group's later hits behind
 * its own), weighted rendezvous order breaking ties; right when every decider sees the same load (one router, or
 * replicas that observe the instances). 'rendezvous': the weighted rendezvous order alone, which replicas that
 * see only their own requests still agree on (each would place by its own partial load somewhere else).
 */
export type ColdPlacement = 'least-loaded' | 'rendezvous';

/** One router, or replicas that observe the instances: what a deployment is unless it says otherwise. */
export const DEFAULT_COLD_PLACEMENT: ColdPlacement = 'least-loaded';

/**
 * A prompt no candidate holds any of: the first candidate by `placement` (ColdPlacement) whose cold cost is within
 * the slack of the cheapest and whose index holds less than COLD_BALANCE_FACTOR × its weighted share of the blocks
 * indexed with this prompt's (bounded-load consistent hashing), so a few hot first blocks cannot fill one instance.
 * Replicas with the same view agree. The slack is `balanceSlackTokens`, never more than a quarter of the prompt.
 *
 * As in the paper, an instance accepts while it is below its capacity before the prompt is added (a bin with room
 * takes the ball), so the emptiest instance (by weighted fill) is always under it. Requiring room for the whole
 * prompt instead left no instance under the bound until the fleet's index held about n ÷ 1.5 prompts of this size:
 * the first prefixes, which on short-chat are the system prompts every later conversation follows, went to the
 * rendezvous top with no bound (seed 1: four of the first five onto one instance, which then had 2.48× the mean
 * request share, and its decoding batch delayed every hit there).
 *
 * Placed by where the prompt would *start*, not where its own prefill would finish soonest: a cold prompt's
 * placement decides where its prefix group's later requests hit (they follow the cache, `cost`), so it is what
 * spreads the fleet's work. Its eligibility (`coldCost`) counts the work queued ahead in fastest-instance time
 * (× the instance's slowdown) and its own prefill at the fastest speed, so an idle slower instance is as eligible
 * as an idle fast one, and weighted rendezvous (weights = speed ÷ fastest) gives each instance a share of new
 * prefix groups proportional to its speed while the fleet is idle (every instance's KV cache in use); load per unit
 * of speed, once it is busy, gives a slower instance, whose requests last longer, somewhat less. Charging the whole prefill × the slowdown instead would keep a slower instance from ever receiving a new
 * prefix while any fast one is near idle, and so from ever getting hits. On a fleet of equal speeds `coldCost` is `cost`
 * and the weights are all 1: placement is by requests in flight, or exactly unweighted rendezvous.
 */
export function coldPlacementPicker<Reason extends string>(
  balanceSlackTokens: number,
  placement: ColdPlacement,
  reason: Reason,
): Picker<CostCandidate, Reason, PromptFacts> {
  const before = placement === 'rendezvous' ? ranksFirst : lessLoaded;
  return {
    kind: 'picker',
    name: 'cold-placement',
    pick(candidates, _scores, prompt) {
      if (candidates.some((c) => c.matchedBlocks > 0)) return undefined;
      const promptBlocks = prompt.hashes.length;
      let minColdCost = Infinity;
      let total = 0;
      let totalWeight = 0;
      for (const c of candidates) {
        if (c.coldCost < minColdCost) minColdCost = c.coldCost;
        total += c.indexedBlocks;
        totalWeight += c.weight;
      }
      const costLimit = minColdCost + Math.min(balanceSlackTokens, prompt.promptTokens / 4);
      // Weighted like the request bound: a slower instance is filled with new prefixes in proportion to its speed.
      const bound = (c: CostCandidate) => (COLD_BALANCE_FACTOR * (total + promptBlocks) * c.weight) / totalWeight;
      let best: CostCandidate | undefined;
      let fallback: CostCandidate | undefined;
      for (const c of candidates) {
        if (c.coldCost > costLimit) continue;
        if (fallback === undefined || before(c, fallback)) fallback = c;
        if (c.indexedBlocks >= bound(c)) continue;
        if (best === undefined || before(c, best)) best = c;
      }
      return costDecision(best ?? fallback!, reason);
    },
  };
}

function ranksFirst(a: CostCandidate, b: CostCandidate): boolean {
  return ranksAbove(a.score, a.view.id, b.score, b.view.id);
}

/** Fewer requests in flight per unit of speed (a × b's weight against b × a's: no division), then rendezvous rank. */
function lessLoaded(a: CostCandidate, b: CostCandidate): boolean {
  const la = a.view.inFlight * b.weight;
  const lb = b.view.inFlight * a.weight;
  return la !== lb ? la < lb : ranksFirst(a, b);
}
