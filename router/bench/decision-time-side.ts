/**
 * One side of decision-time-vs.ts: a child process (child_process.fork) that loads ONE tree's policies and times
 * them on request. Each tree gets a process of its own, so it gets its own isolate, its own copy of the timing loop
 * below and its own V8 type feedback and inlining budget: one shared loop timing two trees runs out of that budget
 * unevenly, which made the same round-robin code loaded from two builds measure 1.33–1.43× against itself.
 *
 * Messages (SideRequest in, SideReply out): `setup` loads the tree, builds each cell's policy and warms it up (one
 * untimed batch per cell), then answers `ready`; `batch` times one batch of one cell and answers `timed`; `finish`
 * answers `totals` (scavenges per cell, the decision checksum) and the process exits.
 *
 * Each decision is consumed as RoutingCore consumes it, identically for both trees: it reads the chosen instance
 * and the predicted cached tokens, and the decision stays referenced until its release (the core keeps it in the
 * request's open attempt), here in small fresh arrays. Without that, V8's escape analysis may delete the decision
 * objects from the timing loop (one tree per process, 3.4 M least-outstanding-requests decisions at 2 instances:
 * 2 scavenges for a7d9107, 4 for this build; 74 and 70 with the decisions held), a saving no live router gets and
 * one the two trees need not get alike.
 *
 * With --model-step, the side also runs the model check its own RoutingCore runs before `decide`, inside the
 * span the core times as the decision (its decideSeconds): a7d9107's core narrowed the snapshot with
 * `scopeToModel` (a servesModel test of every instance), today's calls `requireServingInstance` and leaves the
 * narrowing to the policy's serves-model filter, whose check `decide` now times. Without the flag, `decide` alone.
 */
import { join } from 'node:path';
import { PerformanceObserver, constants as perfConstants, performance, type PerformanceEntry } from 'node:perf_hooks';
import type { RoutingDecision, RoutingPolicy, RoutingSnapshot } from '../src/policy';
import type { RoutingRequest } from '../src/protocol/routing-request';

/** What the parent asks of a side. */
export type SideRequest =
  | {
      readonly kind: 'setup';
      /** The tree's compiled output (its `dist`, holding router/src). */
      readonly dist: string;
      readonly policies: readonly string[];
      readonly instanceCounts: readonly number[];
      readonly batch: number;
      readonly withModelStep: boolean;
    }
  | { readonly kind: 'batch'; readonly cell: number }
  | { readonly kind: 'finish' };

/** What a side answers; cells are indexed policy-major (every instance count of the first policy, then the next). */
export type SideReply =
  | { readonly kind: 'ready'; readonly pid: number; readonly dist: string; readonly cells: number }
  | { readonly kind: 'timed'; readonly cell: number; readonly nanos: number }
  | {
      readonly kind: 'totals';
      /** Timed decisions per cell. */
      readonly decisions: readonly number[];
      /** Young-generation GCs that started inside each cell's timed batches, per million of its decisions. */
      readonly scavengesPerMillion: readonly number[];
      /** What the loop read from every decision, warm-up included: the same for two trees deciding alike. */
      readonly consumed: number;
    }
  | { readonly kind: 'failed'; readonly message: string };

/** The snapshot a tree's RoutingCore gives `decide` for a request's model, after the check it runs first. */
type ModelStep = (snapshot: RoutingSnapshot, model: string) => RoutingSnapshot;

interface Build {
  readonly createPolicy: (config: { name: string }, deps: { rng: unknown }) => RoutingPolicy;
  readonly SeededRng: new (seed: number) => unknown;
  readonly allHealthySameModels?: (instances: RoutingSnapshot['instances']) => boolean;
  readonly modelStep: ModelStep;
}

/** What a tree's served-models module exports: a7d9107 the first, today's tree the second. */
interface ServedModels {
  readonly scopeToModel?: ModelStep;
  readonly requireServingInstance?: (snapshot: RoutingSnapshot, model: string) => void;
}

function loadBuild(dist: string): Build {
  /* eslint-disable @typescript-eslint/no-require-imports -- a tree compiled elsewhere is loaded by path at run time */
  const policy = require(join(dist, 'router', 'src', 'policy')) as Pick<Build, 'createPolicy' | 'allHealthySameModels'>;
  const rng = require(join(dist, 'router', 'src', 'common', 'seeded-rng')) as Pick<Build, 'SeededRng'>;
  const served = require(join(dist, 'router', 'src', 'policy', 'served-models')) as ServedModels;
  /* eslint-enable @typescript-eslint/no-require-imports */
  return {
    createPolicy: policy.createPolicy,
    SeededRng: rng.SeededRng,
    allHealthySameModels: policy.allHealthySameModels,
    modelStep: modelStepOf(served, dist),
  };
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

/**
 * As the server and the simulator pass it: every instance healthy, none listing its models. The flag that says so
 * comes from the tree's own `allHealthySameModels` (a7d9107 has none, and its policies read no such field).
 */
function snapshotOf(instances: number, build: Build): RoutingSnapshot {
  const views = Array.from({ length: instances }, (_, i) => ({
    id: `http://10.0.0.${i + 1}:8000`,
    healthy: true,
    inFlight: i % 3,
    queuedPrefillTokens: 0,
    decodeSequences: 0,
  }));
  const sameModels = build.allHealthySameModels?.(views) ?? false;
  return { instances: views, nowMs: 0, allHealthySameModels: sameModels };
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

interface SideCell {
  readonly policy: RoutingPolicy;
  readonly snapshot: RoutingSnapshot;
  readonly modelStep: ModelStep;
  /** Start and end (performance.now()) of each timed batch, for the GC attribution. */
  readonly windows: [number, number][];
}

/** Young-generation (scavenge) GCs that started inside `windows`, per million decisions of `decisions`. */
function scavengesPerMillion(gcStarts: readonly number[], windows: SideCell['windows'], decisions: number): number {
  const inside = gcStarts.filter((t) => windows.some(([from, to]) => t >= from && t <= to)).length;
  return decisions === 0 ? 0 : (inside * 1e6) / decisions;
}

/** The side's state between messages: its cells and the GC starts observed since setup. */
class Side {
  private readonly cells: SideCell[];
  private readonly gcStarts: number[] = [];
  private readonly gcObserver: PerformanceObserver;

  constructor(private readonly setup: Extract<SideRequest, { kind: 'setup' }>) {
    const build = loadBuild(setup.dist);
    this.cells = setup.policies.flatMap((name) =>
      setup.instanceCounts.map((n) => ({
        policy: build.createPolicy({ name }, { rng: new build.SeededRng(7) }),
        snapshot: snapshotOf(n, build),
        modelStep: setup.withModelStep ? build.modelStep : NO_MODEL_STEP,
        windows: [],
      })),
    );
    // Warm-up: every cell compiled before any batch is timed.
    for (const c of this.cells) batchNanos(c.policy, c.snapshot, setup.batch, c.modelStep);
    this.gcObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[])
        if (e.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) this.gcStarts.push(e.startTime);
    });
    this.gcObserver.observe({ entryTypes: ['gc'] });
  }

  get cellCount(): number {
    return this.cells.length;
  }

  timeBatch(cell: number): number {
    const c = this.cells[cell];
    if (c === undefined) throw new RangeError(`no cell ${cell} (this side has ${this.cells.length})`);
    const from = performance.now();
    const nanos = batchNanos(c.policy, c.snapshot, this.setup.batch, c.modelStep);
    c.windows.push([from, performance.now()]);
    return nanos;
  }

  async totals(): Promise<Extract<SideReply, { kind: 'totals' }>> {
    // GC entries reach the observer once the event loop has turned (one turn measured too few: allow 100 ms).
    await new Promise((resolve) => setTimeout(resolve, 100));
    this.gcObserver.disconnect();
    const decisions = this.cells.map((c) => c.windows.length * this.setup.batch);
    return {
      kind: 'totals',
      decisions,
      scavengesPerMillion: this.cells.map((c, i) => scavengesPerMillion(this.gcStarts, c.windows, decisions[i])),
      consumed,
    };
  }
}

let side: Side | undefined;

async function answer(request: SideRequest): Promise<SideReply> {
  if (request.kind === 'setup') {
    side = new Side(request);
    return { kind: 'ready', pid: process.pid, dist: request.dist, cells: side.cellCount };
  }
  if (side === undefined) throw new Error(`'${request.kind}' before 'setup'`);
  if (request.kind === 'batch') return { kind: 'timed', cell: request.cell, nanos: side.timeBatch(request.cell) };
  return side.totals();
}

if (require.main === module) {
  if (process.send === undefined) {
    process.stderr.write('decision-time-side.js runs as a child of decision-time-vs.js (child_process.fork)\n');
    process.exitCode = 2;
  } else {
    process.on('message', (request: SideRequest) => {
      answer(request).then(
        (reply) => {
          process.send?.(reply);
          if (reply.kind === 'totals') process.disconnect();
        },
        (err: unknown) => {
          process.send?.({ kind: 'failed', message: err instanceof Error ? err.message : String(err) });
          process.disconnect();
        },
      );
    });
  }
}
