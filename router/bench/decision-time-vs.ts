/**
 * Decision time of the trivial policies (least-outstanding-requests, random, round-robin), this build against a
 * built before-tree (issue 37: StagedPolicy's cost for a policy whose rule is a single loop). Each tree runs in a
 * child process of its own (decision-time-side.ts: its own isolate, its own copy of the timing loop, its own V8
 * feedback and inlining budget); this process only hands out the rounds. Each round times a batch of decide +
 * commit + release per policy and instance count (2 / 8 / 32) in CPU time on each side, one side at a time, the
 * before-tree first in even rounds and this build first in odd ones, so load drift and whichever side ran last
 * hit both alike; prints per cell the minimum batch mean of each (the least disturbed by other processes) and the
 * median over rounds of the per-round ratio, each side's scavenges per million decisions, then the load average.
 *
 *   node dist/router/bench/decision-time-vs.js BEFORE_DIST [--policies a,b] [--batch N] [--rounds N] [--model-step]
 *
 * BEFORE_DIST is the other tree's compiled output (its `dist`, holding router/src); this build's own `dist` there
 * is the A/A check: the same code on both sides, whose ratios show the bench's own noise. Run one policy per
 * process (--policies NAME) for what one router sees: a side running several policies makes the runner's call sites
 * see several stage shapes, which a single-policy router never does. --model-step and how each decision is
 * consumed: see decision-time-side.ts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import type { SideReply, SideRequest } from './decision-time-side';

/** Instance counts of the cells, for each policy. */
export const INSTANCE_COUNTS: readonly number[] = [2, 8, 32];

export interface ComparisonOptions {
  readonly beforeDist: string;
  readonly afterDist: string;
  readonly policies: readonly string[];
  readonly batch: number;
  readonly rounds: number;
  readonly withModelStep: boolean;
}

/** One tree's figures for one cell. */
export interface SideFigures {
  /** Mean ns per decision of each round's batch, in round order. */
  readonly nanos: readonly number[];
  readonly decisions: number;
  readonly scavengesPerMillion: number;
}

export interface CellFigures {
  readonly label: string;
  readonly before: SideFigures;
  readonly after: SideFigures;
  /** Median over rounds of after ÷ before. */
  readonly ratio: number;
}

/** Which process timed each side, and what each side's decisions read (equal when both trees decide alike). */
export interface SideIdentity {
  readonly pid: number;
  readonly dist: string;
  readonly consumed: number;
}

export interface Comparison {
  readonly cells: readonly CellFigures[];
  readonly before: SideIdentity;
  readonly after: SideIdentity;
}

/** A forked side, answering one request at a time. */
class SideProcess {
  private readonly child: ChildProcess;
  private pending: { resolve: (r: SideReply) => void; reject: (e: Error) => void } | undefined;

  constructor(readonly name: string) {
    this.child = fork(join(__dirname, 'decision-time-side.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (reply: SideReply) => this.settle(undefined, reply));
    this.child.on('exit', (code, signal) =>
      this.settle(new Error(`the ${name} side exited (${signal ?? `code ${code}`}) without answering`)),
    );
  }

  private settle(error: Error | undefined, reply?: SideReply): void {
    const pending = this.pending;
    this.pending = undefined;
    if (pending === undefined) return;
    if (error !== undefined) pending.reject(error);
    else if (reply?.kind === 'failed') pending.reject(new Error(`${this.name} side: ${reply.message}`));
    else if (reply !== undefined) pending.resolve(reply);
  }

  async ask<K extends SideReply['kind']>(request: SideRequest, kind: K): Promise<Extract<SideReply, { kind: K }>> {
    if (this.pending !== undefined) throw new Error(`the ${this.name} side is still answering`);
    const reply = await new Promise<SideReply>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.send(request);
    });
    if (reply.kind !== kind) throw new Error(`the ${this.name} side answered '${reply.kind}', not '${kind}'`);
    return reply as Extract<SideReply, { kind: K }>;
  }

  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
  }
}

/** The upper median (of an even count, the larger middle value). */
function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
}

/** Sets up both sides (one after the other, so their warm-ups do not compete), times every round, collects. */
export async function compareTrees(options: ComparisonOptions): Promise<Comparison> {
  const sides = [new SideProcess('before'), new SideProcess('after')] as const;
  try {
    const { policies, batch, withModelStep } = options;
    const setup = (dist: string): SideRequest => ({
      kind: 'setup',
      dist,
      policies,
      instanceCounts: INSTANCE_COUNTS,
      batch,
      withModelStep,
    });
    const ready = [
      await sides[0].ask(setup(options.beforeDist), 'ready'),
      await sides[1].ask(setup(options.afterDist), 'ready'),
    ];
    const nanos = sides.map(() => Array.from({ length: ready[0].cells }, (): number[] => []));
    for (let r = 0; r < options.rounds; r++)
      for (let cell = 0; cell < ready[0].cells; cell++)
        for (const s of r % 2 === 0 ? [0, 1] : [1, 0])
          nanos[s][cell].push((await sides[s].ask({ kind: 'batch', cell }, 'timed')).nanos);
    const totals = [await sides[0].ask({ kind: 'finish' }, 'totals'), await sides[1].ask({ kind: 'finish' }, 'totals')];
    const figures = (s: number, cell: number): SideFigures => ({
      nanos: nanos[s][cell],
      decisions: totals[s].decisions[cell],
      scavengesPerMillion: totals[s].scavengesPerMillion[cell],
    });
    const labels = policies.flatMap((name) => INSTANCE_COUNTS.map((n) => `${name} @ ${n}`));
    const cells = labels.map((label, cell) => {
      const [before, after] = [figures(0, cell), figures(1, cell)];
      return { label, before, after, ratio: median(after.nanos.map((a, r) => a / before.nanos[r])) };
    });
    const identity = (s: number): SideIdentity => ({
      pid: ready[s].pid,
      dist: ready[s].dist,
      consumed: totals[s].consumed,
    });
    return { cells, before: identity(0), after: identity(1) };
  } finally {
    for (const s of sides) s.stop();
  }
}

/** One cell's output line. */
export function cellLine(c: CellFigures): string {
  const b = Math.min(...c.before.nanos);
  const a = Math.min(...c.after.nanos);
  const gcBefore = c.before.scavengesPerMillion.toFixed(1);
  const gcAfter = c.after.scavengesPerMillion.toFixed(1);
  return `${c.label}: before ${b.toFixed(1)} ns, after ${a.toFixed(1)} ns (minimum batch means: ${(a / b).toFixed(2)}×), median of round ratios ${c.ratio.toFixed(2)}×; scavenges per million decisions: before ${gcBefore}, after ${gcAfter}`;
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

/** The command line's options; this build is the after-tree. */
export function parseArgs(args: readonly string[]): ComparisonOptions {
  const beforeDist = args[0];
  if (beforeDist === undefined || beforeDist.startsWith('--'))
    throw new RangeError('give the before-tree dist folder first: decision-time-vs.js BEFORE_DIST');
  return {
    beforeDist: resolve(beforeDist),
    afterDist: join(__dirname, '..', '..'),
    policies: flagValue(args, '--policies', 'least-outstanding-requests,random,round-robin').split(','),
    batch: positiveInteger(flagValue(args, '--batch', '200000'), '--batch'),
    rounds: positiveInteger(flagValue(args, '--rounds', '11'), '--rounds'),
    withModelStep: args.includes('--model-step'),
  };
}

async function main(args: readonly string[]): Promise<void> {
  const options = parseArgs(args);
  const load = loadavg()[0];
  const { cells } = await compareTrees(options);
  for (const c of cells) process.stdout.write(`${cellLine(c)}\n`);
  process.stdout.write(
    `${options.withModelStep ? "each tree's core model step + " : ''}decide + commit + release, each tree in its own process; load average: ${load.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at end\n`,
  );
}

if (require.main === module)
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
