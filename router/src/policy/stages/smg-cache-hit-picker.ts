import type { Rng } from '../../common/seeded-rng';
import { leastLoadedOf } from './smg-min-load-picker';
import type { SmgCandidate, SmgFacts } from './smg-tree-candidates';
import type { Picker } from './stage';

/** SGLang Model Gateway's cache-hit rule and its per-request spill gate. */
export interface SmgCacheHitOptions {
  /** A request goes by cache only when more than this fraction of its characters matched. */
  readonly cacheThreshold: number;
  /** The gate fires only when the chosen worker has more than this many requests above the mean... */
  readonly balanceAbsThreshold: number;
  /** ...and more than this × the mean. */
  readonly balanceRelThreshold: number;
}

/**
 * When the longest match any candidate holds covers more than `cacheThreshold` of the request's characters, the
 * least-loaded of the candidates holding that match wins (ties uniformly at random, one draw from the injected Rng
 * only on a tie): reason `hit`. Then the gate: when that worker's requests in flight exceed both
 * `balanceRelThreshold` × the candidates' mean and the mean + `balanceAbsThreshold`, the request spills to the
 * least-loaded candidate instead (reason `spill`). Otherwise no choice (the miss branch decides).
 */
export function smgCacheHitPicker<Hit extends string, Spill extends string>(
  options: SmgCacheHitOptions,
  rng: Rng,
  reasons: { readonly hit: Hit; readonly spill: Spill },
): Picker<SmgCandidate, Hit | Spill, SmgFacts> {
  return {
    kind: 'picker',
    name: 'smg-cache-hit',
    pick(candidates, _scores, facts) {
      let longest = 0;
      for (const c of candidates) if (c.matchedChars > longest) longest = c.matchedChars;
      if (facts.textChars === 0 || longest / facts.textChars <= options.cacheThreshold) return undefined;
      let minLoad = Infinity;
      let ties = 0;
      let totalLoad = 0;
      for (const c of candidates) {
        totalLoad += c.view.inFlight;
        if (c.matchedChars !== longest) continue;
        if (c.view.inFlight < minLoad) {
          minLoad = c.view.inFlight;
          ties = 1;
        } else if (c.view.inFlight === minLoad) ties++;
      }
      let pick = ties === 1 ? 0 : Math.floor(rng.next() * ties);
      let holder = candidates[0];
      for (const c of candidates) {
        if (c.matchedChars !== longest || c.view.inFlight !== minLoad) continue;
        if (pick-- === 0) {
          holder = c;
          break;
        }
      }
      const mean = totalLoad / candidates.length;
      const load = holder.view.inFlight;
      if (load > mean * options.balanceRelThreshold && load > mean + options.balanceAbsThreshold)
        return { instance: leastLoadedOf(candidates).view.id, reason: reasons.spill };
      return { instance: holder.view.id, reason: reasons.hit };
    },
  };
}
