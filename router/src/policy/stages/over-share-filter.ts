import type { CostCandidate } from './predicted-cost-candidates';
import type { PrefixMemory } from './prefix-memory';
import type { Filter } from './stage';

/**
 * Bounded loads (Mirrokni, Thorup, Zadimoghaddam, "Consistent Hashing with Bounded Loads", 2018): an instance
 * with more than this × its share of the requests is passed over; 1.25 is the balance factor HAProxy suggests for
 * its bounded-load hashing.
 */
export const BALANCE_FACTOR = 1.25;

/** The bound mirrored below the share (1 − ε): an instance sent fewer than this × its share is below its floor. */
export const FLOOR_FACTOR = 2 - BALANCE_FACTOR;

/** What the over-share filter weighs a pass-over against (cache-aware's options of the same names). */
export interface OverShareLimits {
  /** Tokens per engine step: a holder of more than this beyond the best instance under its share is kept. */
  readonly stepTokens: number;
  /** Recomputing up to this many tokens costs the fleet nothing extra: the floor may move a shared prefix this long. */
  readonly balanceSlackTokens: number;
}

/**
 * Bounded load in requests sent (Mirrokni et al. on request counts): when some candidate holds part of the prompt,
 * an instance this router has sent more than BALANCE_FACTOR × its share of its requests is passed over while any
 * other is not, whatever it holds. It stays over only until the others catch up, so a hot prefix spreads to the
 * next instance (which then holds it too) instead of fixing each instance's share by how popular its cached
 * prefixes happen to be. Cold prompts are exempt: rendezvous order, bounded by index contents, is what replicas
 * agree on. So is a candidate that holds more than one engine step (`stepTokens`) of the prompt beyond what the
 * best candidate under its share holds: passing it over would recompute several steps' prefill (Mooncake prompts
 * run to 42k tokens: a second or more), while the bound only evens out request counts, and the work queued on it is
 * in its cost already (a prefix's only holder was passed over and its 20–35k-token prefix recomputed, which is what
 * kept cache-aware's trace P50 at 1.72× llm-d's). Short shared prefixes (system prompts, chat histories) stay bounded
 * while their holder is loaded (below).
 *
 * An instance is over only while it is over its share both of the requests sent and of the requests in flight now
 * (the same bound on each count): one that was sent more earlier but carries no more than its share now is not
 * loaded, so passing it over would only recompute what it holds (on short-chat, a conversation's history: P90 1.06–
 * 1.09× the best peer's over seeds 2–9, against 1.00–1.02× with this rule). A hot prefix still spreads once its
 * holder carries more than its share of the requests in flight.
 *
 * The floor: at light load nothing is over its share in flight, so the bound above alone lets an instance whose
 * cached prefixes are unpopular fall far below its share (short-chat: a new conversation follows its system prompt,
 * and the instance holding only a rare one was sent 0.59× the mean). While some instance is below FLOOR_FACTOR ×
 * its share of the requests sent and has no prefill queued, every instance not below its floor is passed over where
 * the part of the prompt it holds is held by another instance too (a prefix several requests share, such as a
 * system prompt, not one conversation's history, which only its holder has) and the cheapest instance below its
 * floor costs at most `balanceSlackTokens` more: the request goes below the floor at a recompute the cost model
 * counts as free, and that instance then holds the shared prefix for the next ones. A conversation's history stays
 * where it is. An instance with prefill queued is not pulled to: its requests are long, not few, and a recompute
 * there delays its queue (the trace at 4× compression: P90 56.7 → 63.7 s when it was).
 */
export function overShareFilter(memory: PrefixMemory, limits: OverShareLimits): Filter<CostCandidate, unknown> {
  const { stepTokens, balanceSlackTokens } = limits;
  // Each candidate's requests sent, read once per decision into a buffer reused across decisions.
  let sent = new Float64Array(8);
  // Whether each candidate is over its share of both counts (sent and in flight): only those are passed over.
  let over = new Uint8Array(8);
  // Whether each candidate is below its floor of the requests sent.
  let belowFloor = new Uint8Array(8);
  // The paper's capacity ⌈(1 + ε)(m + 1)/n⌉ (weighted: × the instance's weight over the mean weight), never below
  // 1/ε requests: until an instance's share is that many requests, one request moves it by more than ε, so a young
  // router does not yet pass over what an instance holds, nor pulls requests to one that was sent few.
  const minimumBound = Math.ceil(1 / (BALANCE_FACTOR - 1));
  const isUnder = (requests: number, c: CostCandidate, total: number, totalWeight: number): boolean =>
    requests + 1 <= Math.max(Math.ceil((BALANCE_FACTOR * (total + 1) * c.weight) / totalWeight), minimumBound);
  // Below its floor of the requests sent, with no prefill queued: a shared prefix recomputed there delays no one.
  const isBelowFloor = (requests: number, c: CostCandidate, total: number, totalWeight: number): boolean => {
    const share = (total * c.weight) / totalWeight;
    return share >= minimumBound && requests < FLOOR_FACTOR * share && (c.view.queuedPrefillTokens ?? 0) === 0;
  };
  return {
    kind: 'filter',
    name: 'over-share',
    filter(candidates, _facts, scratch = []) {
      const n = candidates.length;
      let held = false;
      for (let i = 0; i < n && !held; i++) held = candidates[i].matchedBlocks > 0;
      if (!held) return candidates;
      if (sent.length < n) {
        sent = new Float64Array(n * 2);
        over = new Uint8Array(n * 2);
        belowFloor = new Uint8Array(n * 2);
      }
      let total = 0;
      let totalInFlight = 0;
      let totalWeight = 0;
      let mostCached = 0; // the longest match of the decision, and the second longest (equal when two hold it)
      let secondMostCached = 0;
      for (let i = 0; i < n; i++) {
        const c = candidates[i];
        sent[i] = memory.sentTo(c.view.id);
        total += sent[i];
        totalInFlight += c.view.inFlight;
        totalWeight += c.weight;
        if (c.cachedTokens > mostCached) {
          secondMostCached = mostCached;
          mostCached = c.cachedTokens;
        } else if (c.cachedTokens > secondMostCached) secondMostCached = c.cachedTokens;
      }
      let under = 0;
      let cachedUnder = 0; // the most of the prompt any candidate under its share holds
      let costBelowFloor = Infinity; // the least cost of any candidate below its floor; Infinity: none is below
      for (let i = 0; i < n; i++) {
        const c = candidates[i];
        belowFloor[i] = isBelowFloor(sent[i], c, total, totalWeight) ? 1 : 0;
        if (belowFloor[i] === 1) costBelowFloor = Math.min(costBelowFloor, c.cost);
        over[i] =
          isUnder(sent[i], c, total, totalWeight) || isUnder(c.view.inFlight, c, totalInFlight, totalWeight) ? 0 : 1;
        if (over[i] === 1) continue;
        under++;
        cachedUnder = Math.max(cachedUnder, c.cachedTokens);
      }
      const bounded = under > 0 && under < n;
      if (!bounded && costBelowFloor === Infinity) return candidates;
      let kept = 0; // kept ≤ i, so compacting `scratch` in place when it is `candidates` reads before it writes
      for (let i = 0; i < n; i++) {
        const c = candidates[i];
        const overBound = bounded && over[i] === 1 && c.cachedTokens - cachedUnder <= stepTokens;
        // Its match is held elsewhere too exactly when it is not longer than the second-longest match.
        const aboveFloor =
          belowFloor[i] === 0 && c.cachedTokens <= secondMostCached && costBelowFloor - c.cost <= balanceSlackTokens;
        if (!overBound && !aboveFloor) scratch[kept++] = c;
      }
      scratch.length = kept;
      return scratch;
    },
  };
}
