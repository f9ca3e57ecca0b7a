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

/** Healthy instances ordered by rendezvous rank for `key`, best first (for tests, tools and docs). */
export function rendezvousRanking(
  key: number,
  instances: readonly InstanceView[],
  hashes: InstanceHashCache = new InstanceHashCache(),
): InstanceView[] {
  return instances
    .filter((i) => i.healthy)
    .map((instance) => ({ instance, score: rendezvousScore(key, hashes.get(instance.id)) }))
    .sort((a, b) => (ranksAbove(a.score, a.instance.id, b.score, b.instance.id) ? -1 : 1))
    .map((s) => s.instance);
}
