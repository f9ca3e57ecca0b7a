import { slowdownOf } from '../prefill-speed';
import { estimatedPromptTokens } from '../prompt-tokens';
import { engineQueueOf, engineStateOf, type InstanceView } from '../routing-policy';
import { predictedFleetCostOf, sharedStepDelayOf, uncachedOf, workAheadOf } from './fleet-cost';
import type { DecisionFacts, Scorer } from './stage';

/**
 * The oracle's scorer: minus the fleet cost of sending the request to each engine, by the cost `cache-aware`
 * predicts (fleet-cost.ts) but fed each engine's exact state (InstanceView.engine, the simulator's engine models)
 * instead of a router's index and counts: the rest of the engine step in progress, the wait for KV room when its
 * cache cannot admit the queue and the request now, the prefill the engine has queued, this prompt's part its
 * cache will not hold when the request starts (held now, or computed by the requests queued ahead), one token per
 * decoding sequence of its batch for every step that prefill takes, the delay its first chunk adds to the engine's
 * requests still prefilling, and the prefix tokens the best-holding engine has that this one would recompute
 * beyond `balanceSlackTokens` (the fleet pays them later, as queueing of the requests after it); × the engine's
 * slowdown (fastest speed ÷ its own). Predicted TTFT alone is selfish: it leaves a prefix's holder whenever the
 * holder's queue is longer than the recompute.
 */
export function engineFleetCostScorer(policy: string, balanceSlackTokens: number): Scorer<InstanceView, DecisionFacts> {
  return {
    kind: 'scorer',
    name: 'engine-fleet-cost',
    weight: 1,
    score(candidates, facts, scores) {
      const promptTokens = Math.max(1, estimatedPromptTokens(facts.request));
      const uncachedByEngine = candidates.map((c) => uncachedOf(promptTokens, cachedAtStart(c, policy)));
      let fastest = 0;
      for (const c of candidates) if ((c.prefillTokensPerSecond ?? 0) > fastest) fastest = c.prefillTokensPerSecond!;
      const minUncached = Math.min(...uncachedByEngine);
      for (let i = 0; i < candidates.length; i++) {
        const view = candidates[i];
        const uncached = uncachedByEngine[i];
        const queue = engineQueueOf(view, policy);
        const { prefillTokensAhead: queued, decodeSequences, prefillingSequences, stepTokens } = queue;
        const ahead =
          queue.stepInProgressTokens +
          queue.kvWaitTokens +
          workAheadOf(queued, decodeSequences, uncached, stepTokens) +
          sharedStepDelayOf(queued, prefillingSequences, uncached, stepTokens);
        const slowdown = slowdownOf(view.prefillTokensPerSecond, fastest);
        scores[i] = -predictedFleetCostOf(ahead, uncached, uncached - minUncached, slowdown, balanceSlackTokens);
      }
    },
  };
}

/**
 * Prompt tokens the engine's cache will hold when the request starts there: what it holds now, or what the requests
 * queued ahead of it will have computed, whichever is more (a burst of one cold prefix then stays on its first engine).
 */
function cachedAtStart(view: InstanceView, policy: string): number {
  return Math.max(engineStateOf(view, policy).cachedPromptTokens, engineQueueOf(view, policy).pendingPromptTokens);
}
