/**
 * Decision time of the trivial policies (least-outstanding-requests, random, round-robin), this build against a
 * built before-tree, interleaved in one process (issue 37: StagedPolicy's cost for a policy whose rule is a single
 * loop). Each round times a batch of decide + commit + release per policy and instance count (2 / 8 / 32) in
 * CPU time, the before-tree's then this build's; prints per cell the minimum batch mean of each (the least disturbed by other
 * processes) and the median over rounds of the per-round ratio, then the load average.
 *
 *   node dist/router/bench/decision-time-vs.js BEFORE_DIST [--policies a,b] [--batch N] [--rounds N]
 *
 * BEFORE_DIST is the other tree's compiled output (its `dist`, holding router/src). Run one policy per process
 * (--policies NAME) for what one router sees: a process running several policies makes the runner's call sites
 * see several stage shapes, which a single-policy router never does.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { allHealthySameModels, type RoutingPolicy, type RoutingSnapshot } from '../src/policy';
import type { RoutingRequest } from '../src/protocol/routing-request';

interface Build {
  readonly createPolicy: (config: { name: string }, deps: { rng: unknown }) => RoutingPolicy;
  readonly SeededRng: new (seed: number) => unknown;
}

function loadBuild(dist: string): Build {
  /* eslint-disable @typescript-eslint/no-require-imports -- a tree compiled elsewhere is loaded by path at run time */
  const policy = require(join(dist, 'router', 'src', 'policy')) as Pick<Build, 'createPolicy'>;
  const rng = require(join(dist, 'router', 'src', 'common', 'seeded-rng')) as Pick<Build, 'SeededRng'>;
  /* eslint-enable @typescript-eslint/no-require-imports */
  return { createPolicy: policy.createPolicy, SeededRng: rng.SeededRng };
}

const REQUEST: RoutingRequest = {
  model: 'm',
  api: 'chat',
  keyBasis: 'message-text',
  routingText: 'hello world '.repeat(100),
  stream: false,
};

function snapshotOf(instances: number): RoutingSnapshot {
  const views = Array.from({ length: instances }, (_, i) => ({
    id: `http://10.0.0.${i + 1}:8000`,
    healthy: true,
    inFlight: i % 3,
    queuedPrefillTokens: 0,
    decodeSequences: 0,
  }));
  // As the server and the simulator pass it: every instance healthy, none listing its models.
  return { instances: views, nowMs: 0, allHealthySameModels: allHealthySameModels(views) };
}

/**
 * Mean nanoseconds of decide + commit + release over one batch, in this process's CPU time (user + system, µs
 * resolution: a batch takes milliseconds): on a shared machine, time spent waiting for a core is not counted (at
 * load 18 on 2 cores, wall-clock minimum batch means of the same cell varied 9× between runs: 16–139 ns).
 */
function batchNanos(policy: RoutingPolicy, snapshot: RoutingSnapshot, batch: number): number {
  const start = process.cpuUsage();
  for (let i = 0; i < batch; i++) {
    const decision = policy.decide(REQUEST, snapshot);
    policy.commit(REQUEST, decision);
    policy.release(REQUEST, decision, { kind: 'completed' });
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / batch;
}

function flagValue(args: readonly string[], flag: string, fallback: string): string {
  const at = args.indexOf(flag);
  return at >= 0 && at + 1 < args.length ? args[at + 1] : fallback;
}

function positiveInteger(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 10_000_000)
    throw new RangeError(`${flag} must be an integer from 1 to 10000000 (got ${text})`);
  return n;
}

interface Cell {
  readonly label: string;
  readonly before: RoutingPolicy;
  readonly after: RoutingPolicy;
  readonly snapshot: RoutingSnapshot;
  readonly rounds: { before: number; after: number }[];
}

function main(args: readonly string[]): void {
  const beforeDist = args[0];
  if (beforeDist === undefined || beforeDist.startsWith('--'))
    throw new RangeError('give the before-tree dist folder first: decision-time-vs.js BEFORE_DIST');
  const names = flagValue(args, '--policies', 'least-outstanding-requests,random,round-robin').split(',');
  const batch = positiveInteger(flagValue(args, '--batch', '200000'), '--batch');
  const rounds = positiveInteger(flagValue(args, '--rounds', '11'), '--rounds');
  const before = loadBuild(beforeDist);
  const after = loadBuild(join(__dirname, '..', '..'));
  const cells: Cell[] = names.flatMap((name) =>
    [2, 8, 32].map((n) => ({
      label: `${name} @ ${n}`,
      before: before.createPolicy({ name }, { rng: new before.SeededRng(7) }),
      after: after.createPolicy({ name }, { rng: new after.SeededRng(7) }),
      snapshot: snapshotOf(n),
      rounds: [],
    })),
  );
  const load = loadavg()[0];
  for (const c of cells) {
    batchNanos(c.before, c.snapshot, batch); // warm-up: both builds compiled before any round is timed
    batchNanos(c.after, c.snapshot, batch);
  }
  for (let r = 0; r < rounds; r++)
    for (const c of cells)
      c.rounds.push({ before: batchNanos(c.before, c.snapshot, batch), after: batchNanos(c.after, c.snapshot, batch) });
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const c of cells) {
    const b = Math.min(...c.rounds.map((x) => x.before));
    const a = Math.min(...c.rounds.map((x) => x.after));
    const ratio = median(c.rounds.map((x) => x.after / x.before));
    process.stdout.write(
      `${c.label}: before ${b.toFixed(1)} ns, after ${a.toFixed(1)} ns (minimum batch means: ${(a / b).toFixed(2)}×), median of round ratios ${ratio.toFixed(2)}×\n`,
    );
  }
  process.stdout.write(`load average: ${load.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at end\n`);
}

main(process.argv.slice(2));
