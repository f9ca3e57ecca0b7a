import type { Rng } from '../common/seeded-rng';
import { BALANCE_SLACK_TOKENS_OPTION, definePolicy } from './policy-definition';
import type { InstanceView } from './routing-policy';
import { engineFleetCostScorer } from './stages/engine-fleet-cost-scorer';
import { HEALTHY_FILTER } from './stages/healthy-filter';
import { maxScorePicker } from './stages/max-score-picker';
import { SERVES_MODEL_FILTER } from './stages/serves-model-filter';
import { INSTANCES_AS_CANDIDATES, StagedPolicy } from './stages/staged-policy';

/**
 * `oracle` (issue 37), simulator only: sees every engine model's exact prefix cache, queue, step in progress,
 * running batch and free KV blocks (InstanceView.engine) and places each request where `cache-aware`'s fleet cost (stages/fleet-cost.ts:
 * work ahead, this prompt's uncached part, decode pressure, the delay to prefills waiting there, and the prefix the
 * best holder has that the fleet would recompute) is least, fed that exact state instead of a router's estimates
 * (engine-fleet-cost-scorer.ts). Greedy by its own predicted TTFT it left a prefix's holder whenever the holder's
 * queue was longer than the recompute, and the fleet paid the prefix again (long-context P90 586 ms against
 * `cache-aware`'s 426); with the fleet cost and the step in progress counted: 424 ms, and no policy beats its P90 on
 * a `bench:peers` workload by more than the spread of one run (docs/router.md, "`oracle` is the P90 bound …").
 * Ties (idle engines holding nothing of the prompt) are broken uniformly by the seeded RNG.
 */
export class OraclePolicy extends StagedPolicy<InstanceView, 'oracle-least-fleet-cost'> {
  readonly engineState = 'cached-blocks-and-queue';

  constructor(rng: Rng, balanceSlackTokens: number) {
    super('oracle', {
      instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
      candidates: INSTANCES_AS_CANDIDATES,
      stages: [engineFleetCostScorer('oracle', balanceSlackTokens), maxScorePicker(rng, 'oracle-least-fleet-cost')],
    });
  }
}

export const oracleDefinition = definePolicy({
  name: 'oracle',
  description:
    "simulator only: cache-aware's fleet cost (queued prefill + uncached part + decode pressure + delay to prefills waiting there + the prefix the best holder has that the fleet would recompute) by each engine's exact cache, queue, step in progress, decode batch and KV room; serve refuses it",
  reasons: ['oracle-least-fleet-cost'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'scorer', name: 'engine-fleet-cost', weight: 1 },
    { kind: 'picker', name: 'max-score' },
  ],
  options: [
    {
      ...BALANCE_SLACK_TOKENS_OPTION,
      doc: "recomputing up to this many tokens the best-holding engine has costs the fleet nothing extra (cache-aware's default)",
    },
  ],
  engineState: 'cached-blocks-and-queue',
  create: (o, deps) => new OraclePolicy(deps.rng, o.balanceSlackTokens),
});
