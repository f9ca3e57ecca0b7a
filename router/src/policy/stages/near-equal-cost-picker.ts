import { ranksAbove } from '../rendezvous';
import { BALANCE_FACTOR } from './over-share-filter';
import { costDecision, minCostOf, type CostCandidate, type PromptFacts } from './predicted-cost-candidates';
import type { Picker } from './stage';

/** Near-equal costs: only candidates adding at most this many more prefill tokens than the least compete on load. */
const UNCACHED_TOLERANCE = 0;

/**
 * Costs within the slack of the cheapest (`balanceSlackTokens`, never more than a quarter of this prompt: a
 * conversation's history is worth keeping) count as equal. Among the near-equal candidates not over
 * BALANCE_FACTOR × their share of the requests in flight (while any is not), those adding the least prefill work
 * to the fleet compete, and load decides (`better`): a hot prefix stays where it is cached until its queue costs
 * more than recomputing it. The reason is `matched` when the chosen candidate has the longest match of the
 * decision, `balanced` when load chose among near-equal costs.
 */
export function nearEqualCostPicker<Matched extends string, Balanced extends string>(
  balanceSlackTokens: number,
  reasons: { readonly matched: Matched; readonly balanced: Balanced },
): Picker<CostCandidate, Matched | Balanced, PromptFacts> {
  return {
    kind: 'picker',
    name: 'near-equal-cost',
    pick(candidates, _scores, prompt) {
      const limit = minCostOf(candidates) + Math.min(balanceSlackTokens, prompt.promptTokens / 4);
      let totalInFlight = 0;
      for (const c of candidates) totalInFlight += c.view.inFlight;
      // Not weighted by speed: an instance given work in proportion to its speed holds its requests for inversely
      // as long, so by Little's law it has as many in flight as a faster one (the requests-sent bound is weighted).
      const inFlightBound = (BALANCE_FACTOR * (totalInFlight + 1)) / candidates.length;
      let anyWithin = false;
      for (const c of candidates) if (c.cost <= limit && c.view.inFlight + 1 <= inFlightBound) anyWithin = true;
      const over = (c: CostCandidate) => anyWithin && c.view.inFlight + 1 > inFlightBound;
      let minUncached = Infinity;
      for (const c of candidates) if (c.cost <= limit && !over(c) && c.uncached < minUncached) minUncached = c.uncached;
      let best: CostCandidate | undefined;
      for (const c of candidates) {
        if (c.cost > limit || over(c) || c.uncached > minUncached + UNCACHED_TOLERANCE) continue;
        if (best === undefined || better(c, best)) best = c;
      }
      const reason = best!.matchedBlocks > 0 && best!.longest ? reasons.matched : reasons.balanced;
      return costDecision(best!, reason);
    },
  };
}

/**
 * Among equally cheap candidates: fewer in flight, then the emptier index (spreads cache contents, and with them
 * future requests), then the longer match, then rendezvous rank, then id.
 */
function better(a: CostCandidate, b: CostCandidate): boolean {
  if (a.view.inFlight !== b.view.inFlight) return a.view.inFlight < b.view.inFlight;
  if (a.indexedBlocks !== b.indexedBlocks) return a.indexedBlocks < b.indexedBlocks;
  if (a.matchedBlocks !== b.matchedBlocks) return a.matchedBlocks > b.matchedBlocks;
  return ranksAbove(a.score, a.view.id, b.score, b.view.id);
}
