import type { Rng } from '../../common/seeded-rng';
import type { InstanceView, RoutingDecision } from '../routing-policy';
import type { Picker } from './stage';

const floor = Math.floor; // one global lookup (see hashing.ts)

/**
 * The candidate with the highest weighted score; ties broken uniformly at random with the injected Rng, which is
 * drawn from only when there is a tie (llm-d's max-score picker also picks among equal scores at random).
 *
 * The rule lives in `offer` and `choose` alone: `pick` offers every score, and StagedPolicy offers each instance's
 * score from its one pass over the instances instead (Picker.offer), so a least-outstanding-requests decision
 * reads each instance once. The offers keep the tied candidates' indexes, in offer order, so `choose` never reads
 * the scores again and the runner need not store them (issue 37: those stores measured about a tenth of a
 * 32-instance decision).
 */
export class MaxScorePicker<Reason extends string> implements Picker<InstanceView, Reason, unknown> {
  readonly kind = 'picker';
  readonly name = 'max-score';
  /** The decision in progress: `begin` resets them, so nothing carries over from one decision to the next. */
  private max = -Infinity;
  private ties = 0;
  /** The first candidate offered the highest score, and (reused across decisions) the ones tied with it after it. */
  private best = 0;
  private readonly tiedAfterBest: number[] = [];

  constructor(
    private readonly rng: Rng,
    private readonly reason: Reason,
  ) {}

  pick(candidates: readonly InstanceView[], scores: Float64Array): RoutingDecision<Reason> | undefined {
    this.begin();
    for (let i = 0; i < candidates.length; i++) this.offer(i, scores[i]);
    return this.choose(candidates);
  }

  begin(): void {
    this.max = -Infinity;
    this.ties = 0;
    this.best = 0;
  }

  offer(index: number, score: number): void {
    if (score > this.max) {
      this.max = score;
      this.ties = 1;
      this.best = index;
    } else if (score === this.max) {
      // The first offer may equal the starting -Infinity: `best` is then the first such index, not 0.
      if (this.ties === 0) this.best = index;
      else this.tiedAfterBest[this.ties - 1] = index;
      this.ties++;
    }
  }

  choose(candidates: readonly InstanceView[]): RoutingDecision<Reason> | undefined {
    const reason = this.reason;
    const ties = this.ties;
    if (ties === 1) return { instance: candidates[this.best].id, reason }; // no tie: one pass, no draw
    const pick = floor(this.rng.next() * ties);
    if (ties === 0) return undefined; // nothing offered a number (NaN never ties): no candidate to choose
    return { instance: candidates[pick === 0 ? this.best : this.tiedAfterBest[pick - 1]].id, reason };
  }
}

/** A max-score picker (MaxScorePicker) with its Rng and reason. */
export function maxScorePicker<Reason extends string>(rng: Rng, reason: Reason): MaxScorePicker<Reason> {
  return new MaxScorePicker(rng, reason);
}
