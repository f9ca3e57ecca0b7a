/**
 * The fewest instances in [lo, hi] at which a strategy meets its SLOs, found with as few simulations as the
 * measured curve allows. Latency is not guaranteed to fall with every instance added (PREFIX_AWARE's keys
 * rehash over a different fleet, spills move), so the search trusts bisection only as far as the points it
 * measured agree with it:
 *
 * 1. the largest size first: if it fails, nothing in range meets the SLOs;
 * 2. bisection between the largest failing and the smallest meeting size seen;
 * 3. the answer's neighbours are measured too: one size above and two below (bisection measured the one just
 *    below; what breaks monotony here — a rehash that stacks two hot prefixes, spills at a threshold — moves
 *    the curve by a size or two, so a dip that close is the one to look for);
 * 4. if any measured pair is out of order (a smaller size meets while a larger one fails), the curve is not
 *    monotone here, and every size below the answer not yet measured is measured, smallest first, until one
 *    meets: the answer is then what an exhaustive scan gives. A dip further below that no measured point
 *    shows stays unseen: `exhaustive` measures every size.
 *
 * The search is a generator: it yields the next size to measure and receives that size's verdict, so one
 * driver can advance many searches together and run their simulations in parallel.
 */
export interface SizeVerdict {
  readonly meets: boolean;
  /** Worst SLO ratio at this size (≤ 1 meets), for reports. */
  readonly margin: number;
}

/** A measured pair out of order: `smaller` instances met the SLOs, `larger` did not. */
export interface NonMonotonePoint {
  readonly smaller: number;
  readonly larger: number;
}

export interface SizeSearchResult {
  /** Fewest instances that met every SLO; null when none in range did. */
  readonly minInstances: number | null;
  /** Every size measured, ascending. */
  readonly measured: readonly number[];
  readonly nonMonotone: readonly NonMonotonePoint[];
}

export type SizeSearch = Generator<number, SizeSearchResult, SizeVerdict>;

export function* sizeSearch(lo: number, hi: number, exhaustive = false): SizeSearch {
  if (!Number.isInteger(lo) || !Number.isInteger(hi) || lo < 1 || hi < lo)
    throw new RangeError(`a size search needs integers 1 ≤ lo ≤ hi (got ${lo}..${hi})`);
  const verdicts = new Map<number, SizeVerdict>();
  function* measure(n: number): Generator<number, SizeVerdict, SizeVerdict> {
    const known = verdicts.get(n);
    if (known !== undefined) return known;
    const verdict = yield n;
    verdicts.set(n, verdict);
    return verdict;
  }
  const result = (minInstances: number | null): SizeSearchResult => {
    const measured = [...verdicts.keys()].sort((a, b) => a - b);
    return { minInstances, measured, nonMonotone: nonMonotonePoints(verdicts) };
  };

  if (exhaustive) {
    let first: number | null = null;
    for (let n = lo; n <= hi; n++) if ((yield* measure(n)).meets && first === null) first = n;
    return result(first);
  }
  if (!(yield* measure(hi)).meets) return result(null);
  let failing = lo - 1;
  let meeting = hi;
  while (meeting - failing > 1) {
    const mid = Math.floor((failing + meeting) / 2);
    if ((yield* measure(mid)).meets) meeting = mid;
    else failing = mid;
  }
  if (meeting + 1 <= hi) yield* measure(meeting + 1);
  if (meeting - 2 >= lo) yield* measure(meeting - 2);
  if (nonMonotonePoints(verdicts).length === 0) return result(meeting);
  for (let n = lo; n < meeting; n++) {
    if ((yield* measure(n)).meets) return result(n);
  }
  return result(meeting);
}

function nonMonotonePoints(verdicts: ReadonlyMap<number, SizeVerdict>): NonMonotonePoint[] {
  const sizes = [...verdicts.keys()].sort((a, b) => a - b);
  const points: NonMonotonePoint[] = [];
  for (let i = 0; i < sizes.length; i++) {
    if (!verdicts.get(sizes[i])!.meets) continue;
    for (let j = i + 1; j < sizes.length; j++) {
      if (!verdicts.get(sizes[j])!.meets) points.push({ smaller: sizes[i], larger: sizes[j] });
    }
  }
  return points;
}

/** A search the driver runs, with the cost of one measurement (simulations per size). */
export interface SearchTask<K> {
  readonly key: K;
  readonly search: SizeSearch;
  readonly runsPerSize: number;
}

export interface SearchOutcome<K> {
  readonly key: K;
  readonly result: SizeSearchResult | null;
  /** True when the search stopped because the run budget ran out (result is then null). */
  readonly outOfBudget: boolean;
}

/**
 * Advances every search one size per round, measuring the round's sizes together (`measureRound` gets them
 * all at once, so their simulations can run in parallel). A search whose next size would take the total past
 * `maxRuns` simulations stops there, unfinished.
 */
export async function runSearches<K>(
  tasks: readonly SearchTask<K>[],
  measureRound: (probes: readonly { readonly key: K; readonly instances: number }[]) => Promise<readonly SizeVerdict[]>,
  maxRuns: number,
): Promise<SearchOutcome<K>[]> {
  const outcomes = new Map<number, SearchOutcome<K>>();
  const pending = new Map<number, number>();
  let runs = 0;
  tasks.forEach((task, i) => {
    const first = task.search.next();
    if (first.done) outcomes.set(i, { key: task.key, result: first.value, outOfBudget: false });
    else pending.set(i, first.value);
  });
  while (pending.size > 0) {
    const round: number[] = [];
    for (const i of pending.keys()) {
      if (runs + tasks[i].runsPerSize > maxRuns) {
        outcomes.set(i, { key: tasks[i].key, result: null, outOfBudget: true });
        pending.delete(i);
        continue;
      }
      runs += tasks[i].runsPerSize;
      round.push(i);
    }
    if (round.length === 0) break;
    const verdicts = await measureRound(round.map((i) => ({ key: tasks[i].key, instances: pending.get(i)! })));
    round.forEach((i, r) => {
      const step = tasks[i].search.next(verdicts[r]);
      if (step.done) {
        outcomes.set(i, { key: tasks[i].key, result: step.value, outOfBudget: false });
        pending.delete(i);
      } else {
        pending.set(i, step.value);
      }
    });
  }
  return tasks.map((_, i) => outcomes.get(i)!);
}
