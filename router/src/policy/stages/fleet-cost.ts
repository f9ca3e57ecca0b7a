/**
 * The cost arithmetic of a predicted-cost decision, pure and in one home: `cache-aware` feeds it the router's
 * estimates (its index, its count of queued prefill and decodes: predicted-cost-candidates.ts), `oracle` the engine
 * models' exact state (engine-fleet-cost-scorer.ts). All figures are tokens at the instance's own speed until
 * `predictedFleetCostOf` converts them to fastest-instance time.
 */

/**
 * Prompt tokens left to compute when `cached` are served from cache: at least the last one (an engine's own figure
 * counts its tokens, the prompt's size is the router's estimate: they need not agree).
 */
export function uncachedOf(promptTokens: number, cached: number): number {
  return Math.max(1, promptTokens - cached);
}

/**
 * Work ahead of a request's own prefill on an instance: the `queued` prefill tokens, plus one token per decoding
 * sequence for every engine step the queued and own (`uncached`) prefill take (decodes share each step of
 * `stepTokens`, vLLM's max_num_batched_tokens, with prefill chunks). The request's predicted work there is this
 * plus its `uncached` tokens.
 */
export function workAheadOf(queued: number, decoding: number, uncached: number, stepTokens: number): number {
  return queued + decoding * Math.max(1, Math.ceil((queued + uncached) / stepTokens));
}

/**
 * The delay this prompt's prefill adds to the `waiting` requests (not yet at their first token) on an instance, in
 * tokens: vLLM fills an engine step with waiting prefills up to `stepTokens` (max_num_batched_tokens), so while the
 * `queued` work fits in one step, this prompt's first chunk joins that step and each waiting request's first token
 * comes a chunk's prefill later (a 439-token prompt waited 422 ms instead of 56 ms on the trace when a cold
 * 33k-token prompt followed it there). Counted like the request's own work, as the fleet recompute is: predicted
 * TTFT alone is selfish. Nothing is waiting (or the caller does not track prefill): 0.
 */
export function sharedStepDelayOf(queued: number, waiting: number, uncached: number, stepTokens: number): number {
  if (queued <= 0) return 0;
  return Math.max(0, waiting) * Math.max(0, Math.min(uncached, stepTokens - queued));
}

/**
 * The fleet's share of a choice's cost: prefill tokens the choice recomputes that the best-matching instance
 * holds. Predicted TTFT alone is selfish — a diversion saves this request's wait, but the recomputed prefix is
 * prefill work the fleet did not have to do, and on a busy fleet every such token delays a later request by
 * one token's prefill: so it counts once more, at the same weight as the request's own work. Up to the
 * balance slack (a request's fixed overhead) recomputing costs nothing extra, so a short shared system prompt
 * still does not pull new conversations onto the instances that hold it.
 */
export function recomputeCostOf(recomputedTokens: number, balanceSlackTokens: number): number {
  return Math.max(0, recomputedTokens - balanceSlackTokens);
}

/**
 * A choice's predicted cost in fastest-instance time: (work `ahead` of its prefill there + its own `uncached`
 * prefill + the fleet's recompute of `recomputedTokens` beyond the slack) × the instance's `slowdown` (fastest
 * speed ÷ its own: a slower instance takes proportionally longer for the same tokens).
 */
export function predictedFleetCostOf(
  ahead: number,
  uncached: number,
  recomputedTokens: number,
  slowdown: number,
  balanceSlackTokens: number,
): number {
  return (ahead + uncached + recomputeCostOf(recomputedTokens, balanceSlackTokens)) * slowdown;
}
