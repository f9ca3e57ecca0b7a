import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { PolicyConfig } from '../policy';
import {
  assembleComparison,
  comparisonLabels,
  simulateStrategy,
  type StrategyComparison,
  type StrategyComparisonConfig,
  type StrategyOutcome,
  type StrategyRunSettings,
} from './compare-strategies';
import type { SimulationProgress } from './simulator';
import { parseWorkloadSpec } from '../workload';

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

/** One simulation for a worker: a workload (by its canonical spec), a policy and the run's settings. */
export interface RunMessage {
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
export async function compareStrategiesInParallel(
  config: StrategyComparisonConfig,
  options: ParallelComparisonOptions,
): Promise<StrategyComparison> {
  const { jobs } = options;
  if (!Number.isInteger(jobs) || jobs < JOBS_RANGE.min || jobs > JOBS_RANGE.max) {
    throw new RangeError(`jobs must be an integer between ${JOBS_RANGE.min} and ${JOBS_RANGE.max} (got ${jobs})`);
  }
  comparisonLabels(config.policies);
  const settings: StrategyRunSettings = {
    instances: config.instances,
    routers: config.routers,
    replicaSharing: config.replicaSharing,
    observeIntervalMs: config.observeIntervalMs,
    profile: config.profile,
    profiles: config.profiles,
    prefillSpeeds: config.prefillSpeeds,
    seed: config.seed,
    stepJitterCv: config.stepJitterCv,
    stepJitterStream: config.stepJitterStream,
    ...(config.flowControl !== undefined ? { flowControl: config.flowControl } : {}),
    ...(config.kvEvents !== undefined ? { kvEvents: config.kvEvents } : {}),
    ...(config.engineRestart !== undefined ? { engineRestart: config.engineRestart } : {}),
    ...(config.bypassShare !== undefined ? { bypassShare: config.bypassShare } : {}),
    load: config.load,
    maxRequests: config.maxRequests,
    warmupMs: config.warmupMs,
    sendUntilMs: config.sendUntilMs,
    arrivalWindow: config.arrivalWindow,
    promptWorker: config.promptWorker,
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

export interface PoolCallbacks {
  readonly start: (index: number) => void;
  readonly progress: (index: number, progress: SimulationProgress) => void;
  readonly done: (index: number, outcome: StrategyOutcome) => void;
}

/**
 * Independent simulations, each with its own policy and settings, on `jobs` worker threads (`plan` runs
 * strategies at different instance counts at once); outcomes by task index.
 */
export function simulateInParallel(
  tasks: readonly RunMessage[],
  jobs: number,
  callbacks: Partial<PoolCallbacks> = {},
): Promise<StrategyOutcome[]> {
  if (!Number.isInteger(jobs) || jobs < JOBS_RANGE.min || jobs > JOBS_RANGE.max) {
    throw new RangeError(`jobs must be an integer between ${JOBS_RANGE.min} and ${JOBS_RANGE.max} (got ${jobs})`);
  }
  if (tasks.length === 0) return Promise.resolve([]);
  return runPool(tasks, Math.min(jobs, tasks.length), {
    start: callbacks.start ?? (() => undefined),
    progress: callbacks.progress ?? (() => undefined),
    done: callbacks.done ?? (() => undefined),
  });
}

/**
 * Runs `tasks` on `width` workers, each taking the next task when it finishes one (a worker is started once,
 * not per task); outcomes by task index. Fails with the first failure.
 */
function runPool(tasks: readonly RunMessage[], width: number, callbacks: PoolCallbacks): Promise<StrategyOutcome[]> {
  const outcomes = new Array<StrategyOutcome>(tasks.length);
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
    const startOne = () => {
      const worker = startWorker();
      workers.add(worker);
      let current = -1;
      const assign = () => {
        if (failed || next >= tasks.length) {
          current = -1;
          workers.delete(worker);
          void worker.terminate();
          return;
        }
        current = next++;
        callbacks.start(current);
        worker.postMessage(tasks[current]);
      };
      worker.on('message', (reply: WorkerReply) => {
        if (reply.kind === 'progress') callbacks.progress(current, reply.progress);
        else if (reply.kind === 'failed') fail(new Error(reply.message));
        else {
          outcomes[current] = reply.outcome;
          callbacks.done(current, reply.outcome);
          if (++finished === tasks.length) resolve(outcomes);
          assign();
        }
      });
      worker.on('error', fail);
      worker.on('exit', (code) => {
        if (current >= 0 && !failed)
          fail(new Error(`simulation worker for task ${current} exited with code ${code} before finishing`));
      });
      assign();
    };
    for (let i = 0; i < width; i++) startOne();
  });
}

const WORKER_ROLE = 'prefix-router-simulation-worker';

function startWorker(): Worker {
  // Under ts-node or ts-jest this module is TypeScript: the worker then loads it through ts-node.
  const typescript = __filename.endsWith('.ts');
  return new Worker(__filename, {
    workerData: { role: WORKER_ROLE },
    execArgv: typescript ? ['--require', 'ts-node/register/transpile-only'] : [],
  });
}

/** Worker side: run each strategy it is sent, report progress, post the outcome. */
function workerMain(): void {
  const port = parentPort!;
  port.on('message', (task: RunMessage) => {
    try {
      const outcome = simulateStrategy(parseWorkloadSpec(task.workloadSpec), task.policy, task.settings, (progress) =>
        port.postMessage({ kind: 'progress', progress } satisfies WorkerReply),
      );
      port.postMessage({ kind: 'done', outcome } satisfies WorkerReply);
    } catch (err) {
      port.postMessage({ kind: 'failed', message: (err as Error).message } satisfies WorkerReply);
    }
  });
}

if (!isMainThread && (workerData as { role?: string } | undefined)?.role === WORKER_ROLE) workerMain();
