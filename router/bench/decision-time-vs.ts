/**
 * Decision time of the trivial policies (least-outstanding-requests, random, round-robin), this build against a
 * built before-tree, interleaved in one process (issue 37: StagedPolicy's cost for a policy whose rule is a single
 * loop). Each round times a batch of decide + commit + release per policy and instance count (2 / 8 / 32) in
 * CPU time, the before-tree's then this build's; prints per cell the minimum batch mean of each (the least disturbed by other
 * processes) and the median over rounds of the per-round ratio, then the load average.
 *
 *   node dist/router/bench/decision-time-vs.js BEFORE_DIST [--policies a,b] [--batch N] [--rounds N] [--model-step]
 *
 * BEFORE_DIST is the other tree's compiled output (its `dist`, holding router/src). Run one policy per process
 * (--policies NAME) for what one router sees: a process running several policies makes the runner's call sites
 * see several stage shapes, which a single-policy router never does.
 *
 * Each decision is consumed as RoutingCore consumes it, identically for both trees: it reads the chosen instance
 * and the predicted cached tokens, and the decision stays referenced until its release (the core keeps it in the
 * request's open attempt), here in small fresh arrays. Without that, V8's escape analysis may delete the decision
 * objects from the timing loop (one tree per process, 3.4 M least-outstanding-requests decisions at 2 instances:
 * 2 scavenges for a7d9107, 4 for this build; 74 and 70 with the decisions held), a saving no live router gets and
 * one the two trees need not get alike. Per cell the output also gives each side's young-generation
 * GCs per million decisions, so an allocation difference between the trees shows rather than hides.
 *
 * With --model-step, each side also runs the model check its own RoutingCore runs before `decide`, inside the
 * span the core times as the decision (its decideSeconds): a7d9107's core narrowed the snapshot with
 * `scopeToModel` (a servesModel test of every instance), today's calls `requireServingInstance` and leaves the
 * narrowing to the policy's serves-model filter, whose check `decide` now times. Without the flag, `decide` alone.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver, constants as perfConstants, performance, type PerformanceEntry } from 'node:perf_hooks';
import { allHealthySameModels, type RoutingDecision, type RoutingPolicy, type RoutingSnapshot } from '../src/policy';
import type { RoutingRequest } from '../src/protocol/routing-request';

/** The snapshot a tree's RoutingCore gives `decide` for a request's model, after the check it runs first. */
type ModelStep = (snapshot: RoutingSnapshot, model: string) => RoutingSnapshot;

interface Build {
  readonly createPolicy: (config: { name: string }, deps: { rng: unknown }) => RoutingPolicy;
  readonly SeededRng: new (seed: number) => unknown;
  readonly modelStep: ModelStep;
}

/** What a tree's served-models module exports: a7d9107 the first, today's tree the second. */
interface ServedModels {
  readonly scopeToModel?: ModelStep;
  readonly requireServingInstance?: (snapshot: RoutingSnapshot, model: string) => void;
}

function loadBuild(dist: string): Build {
  /* eslint-disable @typescript-eslint/no-require-imports -- a tree compiled elsewhere is loaded by path at run time */
  const policy = require(join(dist, 'router', 'src', 'policy')) as Pick<Build, 'createPolicy'>;
  const rng = require(join(dist, 'router', 'src', 'common', 'seeded-rng')) as Pick<Build, 'SeededRng'>;
  const served = require(join(dist, 'router', 'src', 'policy', 'served-models')) as ServedModels;
  /* eslint-enable @typescript-eslint/no-require-imports */
  return { createPolicy: policy.createPolicy, SeededRng: rng.SeededRng, modelStep: modelStepOf(served, dist) };
}

/** The model check the tree's RoutingCore runs before decide (see the file comment). */
function modelStepOf(served: ServedModels, dist: string): ModelStep {
  const { scopeToModel, requireServingInstance } = served;
  if (scopeToModel !== undefined) return scopeToModel;
  if (requireServingInstance === undefined)
    throw new Error(`${dist}: served-models exports neither scopeToModel nor requireServingInstance`);
  return (snapshot, model) => {
    requireServingInstance(snapshot, model);
    return snapshot;
  };
}

/** --model-step absent: the core's check is not timed, `decide` gets the snapshot itself. */
const NO_MODEL_STEP: ModelStep = (snapshot) => snapshot;

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
 * Decisions held until their release, as RoutingCore's open attempts hold them: stored here, a decision escapes
 * the timing loop, so neither tree's can be optimised away. A fresh array every HELD_DECISIONS decisions (a power of
 * two, indexed by mask), as the core stores each decision in a fresh attempt: young into young, without the
 * old-to-young write barrier one long-lived ring would add to both sides (about 3 ns a decision, measured).
 */
const HELD_DECISIONS = 64;
let held: (RoutingDecision | undefined)[] = [];
/** What the loop read from each decision (its instance id and predicted cached tokens), checked once per batch. */
let consumed = 0;

/**
 * Mean nanoseconds of decide + commit + release over one batch, in this process's CPU time (user + system, µs
 * resolution: a batch takes milliseconds): on a shared machine, time spent waiting for a core is not counted (at
 * load 18 on 2 cores, wall-clock minimum batch means of the same cell varied 9× between runs: 16–139 ns).
 */
function batchNanos(policy: RoutingPolicy, snapshot: RoutingSnapshot, batch: number, modelStep: ModelStep): number {
  const start = process.cpuUsage();
  for (let i = 0; i < batch; i++) {
    const decision = policy.decide(REQUEST, modelStep(snapshot, REQUEST.model));
    // As RoutingCore.decide: the chosen instance's target, and the tokens its load ticket does not count.
    consumed += decision.instance.length + (decision.predictedCachedTokens ?? 0);
    const slot = i & (HELD_DECISIONS - 1);
    if (slot === 0) held = new Array<RoutingDecision | undefined>(HELD_DECISIONS);
    held[slot] = decision;
    policy.commit(REQUEST, decision);
    policy.release(REQUEST, decision, { kind: 'completed' });
  }
  const used = process.cpuUsage(start);
  if (consumed === 0) throw new Error('no decision named an instance');
  return ((used.user + used.system) * 1000) / batch;
}

/** Start and end (performance.now()) of the batches timed for one side of one cell. */
type Windows = [number, number][];

/** Young-generation (scavenge) GCs that started inside `windows`, per million decisions of `decisions`. */
function scavengesPerMillion(gcStarts: readonly number[], windows: Windows, decisions: number): number {
  const inside = gcStarts.filter((t) => windows.some(([from, to]) => t >= from && t <= to)).length;
  return (inside * 1e6) / decisions;
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
  readonly beforeStep: ModelStep;
  readonly afterStep: ModelStep;
  readonly snapshot: RoutingSnapshot;
  readonly rounds: { before: number; after: number }[];
  readonly beforeWindows: Windows;
  readonly afterWindows: Windows;
}

/** Times one batch of `policy`, recording its window for the GC attribution. */
function timedBatch(
  policy: RoutingPolicy,
  snapshot: RoutingSnapshot,
  batch: number,
  modelStep: ModelStep,
  windows: Windows,
): number {
  const from = performance.now();
  const nanos = batchNanos(policy, snapshot, batch, modelStep);
  windows.push([from, performance.now()]);
  return nanos;
}

async function main(args: readonly string[]): Promise<void> {
  const beforeDist = args[0];
  if (beforeDist === undefined || beforeDist.startsWith('--'))
    throw new RangeError('give the before-tree dist folder first: decision-time-vs.js BEFORE_DIST');
  const names = flagValue(args, '--policies', 'least-outstanding-requests,random,round-robin').split(',');
  const batch = positiveInteger(flagValue(args, '--batch', '200000'), '--batch');
  const rounds = positiveInteger(flagValue(args, '--rounds', '11'), '--rounds');
  const withModelStep = args.includes('--model-step');
  const before = loadBuild(beforeDist);
  const after = loadBuild(join(__dirname, '..', '..'));
  const cells: Cell[] = names.flatMap((name) =>
    [2, 8, 32].map((n) => ({
      label: `${name} @ ${n}`,
      before: before.createPolicy({ name }, { rng: new before.SeededRng(7) }),
      after: after.createPolicy({ name }, { rng: new after.SeededRng(7) }),
      beforeStep: withModelStep ? before.modelStep : NO_MODEL_STEP,
      afterStep: withModelStep ? after.modelStep : NO_MODEL_STEP,
      snapshot: snapshotOf(n),
      rounds: [],
      beforeWindows: [],
      afterWindows: [],
    })),
  );
  const load = loadavg()[0];
  for (const c of cells) {
    batchNanos(c.before, c.snapshot, batch, c.beforeStep); // warm-up: both builds compiled before any round is timed
    batchNanos(c.after, c.snapshot, batch, c.afterStep);
  }
  const gcStarts: number[] = [];
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[])
      if (e.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) gcStarts.push(e.startTime);
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  for (let r = 0; r < rounds; r++)
    for (const c of cells)
      c.rounds.push({
        before: timedBatch(c.before, c.snapshot, batch, c.beforeStep, c.beforeWindows),
        after: timedBatch(c.after, c.snapshot, batch, c.afterStep, c.afterWindows),
      });
  // GC entries reach the observer once the event loop has turned (one turn measured too few: allow 100 ms).
  await new Promise((resolve) => setTimeout(resolve, 100));
  gcObserver.disconnect();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const c of cells) {
    const b = Math.min(...c.rounds.map((x) => x.before));
    const a = Math.min(...c.rounds.map((x) => x.after));
    const ratio = median(c.rounds.map((x) => x.after / x.before));
    const decisions = rounds * batch;
    const gcBefore = scavengesPerMillion(gcStarts, c.beforeWindows, decisions).toFixed(1);
    const gcAfter = scavengesPerMillion(gcStarts, c.afterWindows, decisions).toFixed(1);
    process.stdout.write(
      `${c.label}: before ${b.toFixed(1)} ns, after ${a.toFixed(1)} ns (minimum batch means: ${(a / b).toFixed(2)}×), median of round ratios ${ratio.toFixed(2)}×; scavenges per million decisions: before ${gcBefore}, after ${gcAfter}\n`,
    );
  }
  process.stdout.write(
    `${withModelStep ? "each tree's core model step + " : ''}decide + commit + release; load average: ${load.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at end\n`,
  );
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
