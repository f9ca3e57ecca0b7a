import { slowdownOf } from '../prefill-speed';
import { estimatedPromptTokens } from '../prompt-tokens';
import { engineStateOf, type InstanceView } from '../routing-policy';
import type { DecisionFacts, Scorer } from './stage';

/**
 * The oracle's scorer: minus the time to first token each engine's own state predicts for the request, in
 * fastest-instance prefill tokens: (the prefill work the engine has ahead + this prompt's part its cache does not
 * hold now) × the fastest speed ÷ its own. Reads InstanceView.engine (the simulator's engine models): the engine's
 * actual cached prefix, not a router-side index, so an evicted prefix counts as the recompute it is.
 */
export function predictedTtftScorer(policy: string): Scorer<InstanceView, DecisionFacts> {
  return {
    kind: 'scorer',
    name: 'predicted-ttft',
    weight: 1,
    score(candidates, facts, scores) {
      const promptTokens = estimatedPromptTokens(facts.request);
      let fastest = 0;
      for (const c of candidates) if ((c.prefillTokensPerSecond ?? 0) > fastest) fastest = c.prefillTokensPerSecond!;
      for (let i = 0; i < candidates.length; i++) {
        const view = candidates[i];
        const engine = engineStateOf(view, policy);
        const uncached = Math.max(0, promptTokens - engine.cachedPromptTokens);
        const ahead = engine.prefillTokensAhead ?? 0;
        scores[i] = -(ahead + uncached) * slowdownOf(view.prefillTokensPerSecond, fastest);
      }
    },
  };
}
