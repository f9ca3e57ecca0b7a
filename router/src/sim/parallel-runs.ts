import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { PolicyConfig } from '../policy';
import { assembleComparison, comparisonLabels, simulateStrategy, type StrategyComparison, type StrategyComparisonConfig, type StrategyOutcome, type StrategyRunSettings } from './compare-strategies';
import type { SimulationProgress } from './simulator';
import { parseWorkloadSpec } from './workload';

/**
 * Independent simulations — the strategies of one comparison — on worker threads. Each run is a pure function
 * of its settings (seeded workload, seeded policy, virtual time), so where it runs cannot change its outcome:
 * outcomes are collected by index and the report is assembled exactly as a sequential run assembles it, so
 * reports are byte-identical to a sequential run's but for the wall-clock figures (simulation wall time,
 * router decision time). A worker rebuilds the workload from its canonical spec (`workload.spec`, which
 * reproduces the same requests by construction) and receives everything else as plain data.
 *
 * Memory: each parallel run holds a whole fleet, so peak memory is about `jobs` × one run's.
 */
export const JOBS_RANGE = { min: 1, max: 256 } as const;

/** Default worker count: the cores Node may use. */
export function defaultJobs(): number {
  return availableParallelism();
}

interface RunMessage {
  readonly workloadSpec: string;
  readonly policy: PolicyConfig;
  readonly settings: StrategyRunSettings;
}

type WorkerReply =
  | { readonly kind: 'progress'; readonly progress: SimulationProgress }
  | { readonly kind: 'done'; readonly outcome: StrategyOutcome }
  | { readonly kind: 'failed'; readonly message: string };

export interface ParallelComparisonOptions {
  /** Worker threads (1 = run in this thread, one strategy after the other). */
  readonly jobs: number;
}

/**
 * `compareStrategies` with the strategies spread over `jobs` worker threads. The callbacks of `config`
 * (`onStrategyStart`, `onProgress`, `onStrategyDone`) fire as runs start, progress and end, in whatever order
 * that happens.
 */
export async function compareStrategiesInParallel(config: StrategyComparisonConfig, options: ParallelComparisonOptions): Promise<StrategyComparison> {
  const { jobs } = options;
  if (!Number.isInteger(jobs) || jobs < JOBS_RANGE.min || jobs > JOBS_RANGE.max) {
    throw new RangeError(`jobs must be an integer between ${JOBS_RANGE.min} and ${JOBS_RANGE.max} (got ${jobs})`);
  }
  comparisonLabels(config.policies);
  const settings: StrategyRunSettings = {
    instances: config.instances,
    routers: config.routers,
    profile: config.profile,
    seed: config.seed,
    load: config.load,
    maxRequests: config.maxRequests,
    warmupMs: config.warmupMs,
    sendUntilMs: config.sendUntilMs,
  };
  const outcomes = await runPool(
    config.policies.map((policy) => ({ workloadSpec: config.workload.spec, policy, settings })),
    Math.min(jobs, config.policies.length),
    {
      start: (i) => config.onStrategyStart?.(config.policies[i], i),
      progress: (i, p) => config.onProgress?.(config.policies[i], p),
      done: (i, o) => config.onStrategyDone?.(config.policies[i], o.result),
    },
  );
  return assembleComparison(config, outcomes);
}

interface PoolCallbacks {
  readonly start: (index: number) => void;
  readonly progress: (index: number, progress: SimulationProgress) => void;
  readonly done: (index: number, outcome: StrategyOutcome) => void;
}

/** Runs `tasks` on at most `width` workers at a time; outcomes by task index. Fails with the first failure. */
function runPool(tasks: readonly RunMessage[], width: number, callbacks: PoolCallbacks): Promise<StrategyOutcome[]> {
  const outcomes: StrategyOutcome[] = new Array(tasks.length);
  let next = 0;
  let finished = 0;
  const workers = new Set<Worker>();
  return new Promise((resolve, reject) => {
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      for (const w of workers) void w.terminate();
      reject(err);
    };
    const launch = () => {
      if (failed || next >= tasks.length) return;
      const index = next++;
      callbacks.start(index);
      const worker = startWorker(tasks[index]);
      workers.add(worker);
      worker.on('message', (reply: WorkerReply) => {
        if (reply.kind === 'progress') callbacks.progress(index, reply.progress);
        else if (reply.kind === 'failed') fail(new Error(reply.message));
        else {
          outcomes[index] = reply.outcome;
          callbacks.done(index, reply.outcome);
          workers.delete(worker);
          void worker.terminate();
          if (++finished === tasks.length) resolve(outcomes);
          else launch();
        }
      });
      worker.on('error', fail);
      worker.on('exit', (code) => {
        if (outcomes[index] === undefined && !failed) fail(new Error(`simulation worker for task ${index} exited with code ${code} before finishing`));
      });
    };
    for (let i = 0; i < width; i++) launch();
  });
}

function startWorker(task: RunMessage): Worker {
  // Under ts-node or ts-jest this module is TypeScript: the worker then loads it through ts-node.
  const typescript = __filename.endsWith('.ts');
  return new Worker(__filename, {
    workerData: task,
    execArgv: typescript ? ['--require', 'ts-node/register/transpile-only'] : [],
  });
}

/** Worker side: run one strategy, report progress, post the outcome. */
function workerMain(): void {
  const task = workerData as RunMessage;
  const port = parentPort!;
  try {
    const outcome = simulateStrategy(parseWorkloadSpec(task.workloadSpec), task.policy, task.settings, (progress) =>
      port.postMessage({ kind: 'progress', progress } satisfies WorkerReply),
    );
    port.postMessage({ kind: 'done', outcome } satisfies WorkerReply);
  } catch (err) {
    port.postMessage({ kind: 'failed', message: (err as Error).message } satisfies WorkerReply);
  }
}

if (!isMainThread && (workerData as RunMessage | undefined)?.workloadSpec !== undefined) workerMain();
