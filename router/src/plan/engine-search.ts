/**
 * The engine grid's search, after the size search (which runs the profile as given). A grid point can change the
 * plan's answer only by meeting the SLOs with fewer instances, or by more room under them at the same size, so:
 *
 * 1. each strategy's grid runs with the setting that was best at its answer (for a sweep; the engine and the
 *    routing setting are searched one after the other, not jointly);
 * 2. the points other than the base run one size below the answer (the largest size, when no size met the SLOs
 *    with the base engine); the points that meet there run one size lower again, and so on: a point that misses
 *    at n instances is not simulated at fewer (the bisection's own assumption, per point);
 * 3. at the final size every point runs, so the plan names the best and what each argument bought there.
 *
 * Points the grid already dropped (a threshold at or above the step budget, the same engine as threshold 0) are
 * never simulated. Strategies advance together, each round's runs in parallel.
 */
import type { PolicyConfig } from '../policy';
import type { EngineGridPoint } from './engine-grid';
import type { RunCache, RunRequest } from './run-cache';

/** What the search needs of the plan's run cache. */
export type EngineSearchCache = Pick<RunCache, 'get' | 'measure' | 'runs'>;

export interface EngineSearchTask {
  /** The routing setting the grid runs with. */
  readonly policy: PolicyConfig;
  /** The size search's answer with the base engine; null when no size in range met the SLOs. */
  readonly minInstances: number | null;
  /** The strategy's smallest and largest sizes. */
  readonly floor: number;
  readonly max: number;
}

export interface EngineSearchResult {
  /** Fewest instances any grid point meets the SLOs with (the base engine's answer when none does better). */
  readonly minInstances: number | null;
  /** Whether the run budget stopped the search early (its answer is then what it had found). */
  readonly outOfBudget: boolean;
}

interface SearchState {
  answer: number | null;
  /** The next size to measure, with the points that are still candidates there; null when the descent is over. */
  next: { size: number; points: readonly EngineGridPoint[] } | null;
  outOfBudget: boolean;
}

function startOf(task: EngineSearchTask, others: readonly EngineGridPoint[]): SearchState {
  const start = task.minInstances === null ? task.max : task.minInstances - 1;
  const descends = others.length > 0 && start >= task.floor;
  return {
    answer: task.minInstances,
    next: descends ? { size: start, points: others } : null,
    outOfBudget: false,
  };
}

/** Runs the search for every task; `maxRuns` bounds the simulations the cache may have run in all. */
export async function searchEngineGrid(
  tasks: readonly EngineSearchTask[],
  grid: readonly EngineGridPoint[],
  cache: EngineSearchCache,
  maxRuns: number,
): Promise<EngineSearchResult[]> {
  const others = grid.filter((p) => !p.base);
  const states = tasks.map((task) => startOf(task, others));
  const fits = (requests: readonly RunRequest[]) => {
    const missing = requests.filter((r) => cache.get(r) === undefined).length;
    return cache.runs + missing <= maxRuns;
  };
  for (;;) {
    const round = states.flatMap((state, i) =>
      state.next === null
        ? []
        : state.next.points.map((engine) => ({
            task: i,
            request: { policy: tasks[i].policy, instances: state.next!.size, engine },
          })),
    );
    if (round.length === 0) break;
    if (!fits(round.map((r) => r.request))) {
      for (const state of states) if (state.next !== null) [state.next, state.outOfBudget] = [null, true];
      break;
    }
    const runs = await cache.measure(round.map((r) => r.request));
    states.forEach((state, i) => {
      if (state.next === null) return;
      const { size } = state.next;
      const met = round.flatMap((r, k) => (r.task === i && runs[k].margin <= 1 ? [r.request.engine] : []));
      if (met.length === 0) {
        state.next = null;
        return;
      }
      state.answer = size;
      state.next = size - 1 >= tasks[i].floor ? { size: size - 1, points: met } : null;
    });
  }
  // Every point at the answer: the best one is chosen there, and each argument's effect is read there.
  const finals = states.flatMap((state, i) =>
    state.answer === null ? [] : grid.map((engine) => ({ policy: tasks[i].policy, instances: state.answer!, engine })),
  );
  if (fits(finals)) await cache.measure(finals);
  else for (const state of states) state.outOfBudget ||= finals.length > 0;
  return states.map((s) => ({ minInstances: s.answer, outOfBudget: s.outOfBudget }));
}
