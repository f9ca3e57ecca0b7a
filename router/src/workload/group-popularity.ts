import type { Rng } from '../common/seeded-rng';

const floor = Math.floor; // hoisted: global lookups are slow in vm contexts (Jest)

export type Popularity = 'uniform' | 'zipf';

/**
 * Draws a group index in [0, groups). Uniform: every group equally likely. Zipf: group i has weight
 * 1 / (i + 1)^exponent, so group 0 is the most popular and a long tail of groups is rarely seen.
 */
export class GroupPicker {
  private readonly cumulative: Float64Array | undefined;

  constructor(
    private readonly groups: number,
    popularity: Popularity,
    exponent = 1,
  ) {
    if (!Number.isInteger(groups) || groups < 1)
      throw new RangeError(`groups must be a positive integer (got ${groups})`);
    if (popularity === 'zipf') {
      const cumulative = new Float64Array(groups);
      let total = 0;
      for (let i = 0; i < groups; i++) {
        total += 1 / Math.pow(i + 1, exponent);
        cumulative[i] = total;
      }
      this.cumulative = cumulative;
    }
  }

  pick(rng: Rng): number {
    const cumulative = this.cumulative;
    if (cumulative === undefined) return floor(rng.next() * this.groups);
    const target = rng.next() * cumulative[this.groups - 1];
    // First index whose cumulative weight exceeds the target.
    let lo = 0;
    let hi = this.groups - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid] > target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Probability of group i (for tests and docs). */
  probability(i: number): number {
    const cumulative = this.cumulative;
    if (cumulative === undefined) return 1 / this.groups;
    return (cumulative[i] - (i === 0 ? 0 : cumulative[i - 1])) / cumulative[this.groups - 1];
  }
}
