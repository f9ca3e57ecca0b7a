import type { InstanceView } from './routing-policy';
import { fmix32, hashString } from './hashing';

const imul = Math.imul; // one global lookup (see hashing.ts)

/**
 * Rendezvous (highest-random-weight) hashing: every instance gets a pseudo-random score for a key and the
 * highest score wins. Removing an instance only moves the keys it owned (~1/N of them); adding one only takes
 * ~1/(N+1) of keys from the others; and any router replica with the same instance ids computes the same
 * winner, whatever the order of its instance list.
 */
const INSTANCE_SEED = 0x68e31da4;
const MAX_CACHED_IDS = 4096;

/** Score of `instanceHash` for `key`: an unsigned 32-bit value. */
export function rendezvousScore(key: number, instanceHash: number): number {
  return fmix32(imul(fmix32(key ^ instanceHash), 0x9e3779b1) ^ instanceHash);
}

/** 2^32: maps an unsigned 32-bit score into (0, 1) as (score + 0.5) / 2^32. */
const TWO_POW_32 = 4294967296;

/**
 * Weighted rendezvous (weighted highest-random-weight) hashing: the score −weight / ln(u), with u the unsigned
 * 32-bit `rendezvousScore` mapped into (0, 1). For independent uniform u, the instance with the highest score wins
 * a key with probability weight_i / Σ weight (−ln(u) / w is exponential with rate w, and the smallest of independent
 * exponentials is the one of rate w_i with probability w_i / Σ w): Schindelhauer and Schomaker, "Weighted
 * distributed hash tables" (SPAA 2005), the "logarithmic method". Every other property of rendezvous hashing is
 * kept: removing an instance moves only its keys, and replicas with the same ids and weights agree.
 *
 * With equal weights the ranking is exactly the unweighted one: −w / ln(u) is strictly increasing in u for w > 0,
 * and adjacent 32-bit scores map to values millions of ulps apart, so no two distinct scores collide and ties are
 * exactly the unweighted ties (broken by id, `ranksAbove`). A weight of 0 or less, or not finite, ranks last.
 */
export function weightedRendezvousScore(score: number, weight: number): number {
  if (!(weight > 0) || !Number.isFinite(weight)) return -Infinity;
  return -weight / Math.log((score + 0.5) / TWO_POW_32);
}

/** Hashes instance ids once; ids are few and stable, so the cache stays tiny. */
export class InstanceHashCache {
  private readonly hashes = new Map<string, number>();

  get(id: string): number {
    let h = this.hashes.get(id);
    if (h === undefined) {
      if (this.hashes.size >= MAX_CACHED_IDS) this.hashes.clear();
      h = hashString(id, INSTANCE_SEED);
      this.hashes.set(id, h);
    }
    return h;
  }
}

/** True when (scoreA, idA) ranks above (scoreB, idB): higher score first, then the smaller id. */
export function ranksAbove(scoreA: number, idA: string, scoreB: number, idB: string): boolean {
  return scoreA > scoreB || (scoreA === scoreB && idA < idB);
}

/**
 * Healthy instances ordered by rendezvous rank for `key`, best first (for tests, tools and docs); with `weightOf`,
 * by weighted rank (weightedRendezvousScore).
 */
export function rendezvousRanking(
  key: number,
  instances: readonly InstanceView[],
  hashes: InstanceHashCache = new InstanceHashCache(),
  weightOf?: (instance: InstanceView) => number,
): InstanceView[] {
  return instances
    .filter((i) => i.healthy)
    .map((instance) => {
      const score = rendezvousScore(key, hashes.get(instance.id));
      return { instance, score: weightOf === undefined ? score : weightedRendezvousScore(score, weightOf(instance)) };
    })
    .sort((a, b) => (ranksAbove(a.score, a.instance.id, b.score, b.instance.id) ? -1 : 1))
    .map((s) => s.instance);
}
