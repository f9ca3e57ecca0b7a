/**
 * Decision time of the trivial policies (least-outstanding-requests, random, round-robin), this build (or another
 * built tree, --after) against a built before-tree (issue 37: StagedPolicy's cost for a policy whose rule is a
 * single loop). Each side of each round runs in a fresh child process (decision-time-side.ts: its own isolate, its
 * own copy of the timing loop, its own V8 feedback and inlining budget); this process only starts the rounds. A
 * side loads its tree, warms every cell up with one untimed batch, then times one batch of decide + commit +
 * release per policy and instance count (2 / 8 / 32) in CPU time. The sides run one at a time, the before-tree
 * first in even rounds and the after-tree first in odd ones, so load drift hits both alike; a process per round, not
 * one per side, because one process's code can run a few per cent faster or slower than another's throughout (an
 * A/A run with one long-lived process per side measured a side 24 ns against the other's 22 in every round), and
 * the median over rounds then samples as many processes as rounds. Prints per cell the minimum batch mean of each
 * (the least disturbed by other processes) and the median over rounds of the per-round ratio, each side's
 * scavenges per million decisions, then the load average.
 *
 *   node dist/router/bench/decision-time-vs.js BEFORE_DIST [--after AFTER_DIST] [--policies a,b] [--batch N]
 *     [--rounds N] [--model-step]
 *
 * BEFORE_DIST is the other tree's compiled output (its `dist`, holding router/src); AFTER_DIST is this build's unless
 * given. The same `dist` on both sides is the A/A check: the same code on both sides, whose ratios show the bench's
 * own noise. Run one policy per process (--policies NAME) for what one router sees: a side running several policies
 * makes the runner's call sites see several stage shapes, which a single-policy router never does. --model-step and
 * how each decision is consumed: see decision-time-side.ts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import type { SideReply, SideRequest } from './decision-time-side';
import { median } from '../src/report/stats';

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

/** The processes that timed a side (one per round), and what its decisions read (equal when both trees decide alike). */
export interface SideIdentity {
  readonly pids: readonly number[];
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

/** One round of one side: a fresh process loads the tree, warms every cell up, times each cell once, exits. */
async function sideRound(name: string, setup: Extract<SideRequest, { kind: 'setup' }>) {
  const side = new SideProcess(name);
  try {
    const ready = await side.ask(setup, 'ready');
    const nanos: number[] = [];
    for (let cell = 0; cell < ready.cells; cell++) nanos.push((await side.ask({ kind: 'batch', cell }, 'timed')).nanos);
    return { pid: ready.pid, nanos, totals: await side.ask({ kind: 'finish' }, 'totals') };
  } finally {
    side.stop();
  }
}

/** What one side's rounds add up to, cell by cell. */
class SideTally {
  readonly pids: number[] = [];
  consumed = 0;
  readonly nanos: number[][];
  private readonly decisions: number[];
  private readonly scavenges: number[];

  constructor(cells: number) {
    this.nanos = Array.from({ length: cells }, () => []);
    this.decisions = new Array<number>(cells).fill(0);
    this.scavenges = new Array<number>(cells).fill(0);
  }

  add(round: Awaited<ReturnType<typeof sideRound>>): void {
    this.pids.push(round.pid);
    this.consumed += round.totals.consumed;
    round.nanos.forEach((ns, cell) => {
      this.nanos[cell].push(ns);
      const decisions = round.totals.decisions[cell];
      this.decisions[cell] += decisions;
      this.scavenges[cell] += (round.totals.scavengesPerMillion[cell] * decisions) / 1e6;
    });
  }

  figures(cell: number): SideFigures {
    const decisions = this.decisions[cell];
    const scavengesPerMillion = decisions === 0 ? 0 : (this.scavenges[cell] * 1e6) / decisions;
    return { nanos: this.nanos[cell], decisions, scavengesPerMillion };
  }
}

/** Runs every round, each side in a fresh process, one side at a time; collects the figures per cell. */
export async function compareTrees(options: ComparisonOptions): Promise<Comparison> {
  const { policies, batch, withModelStep } = options;
  const labels = policies.flatMap((name) => INSTANCE_COUNTS.map((n) => `${name} @ ${n}`));
  const sides = [
    { name: 'before', dist: options.beforeDist, tally: new SideTally(labels.length) },
    { name: 'after', dist: options.afterDist, tally: new SideTally(labels.length) },
  ];
  for (let r = 0; r < options.rounds; r++)
    for (const s of r % 2 === 0 ? sides : [...sides].reverse()) {
      const setup = {
        kind: 'setup' as const,
        dist: s.dist,
        policies,
        instanceCounts: INSTANCE_COUNTS,
        batch,
        withModelStep,
      };
      s.tally.add(await sideRound(s.name, setup));
    }
  const [before, after] = sides.map((s) => s.tally);
  const cells = labels.map((label, cell) => {
    const [b, a] = [before.figures(cell), after.figures(cell)];
    return { label, before: b, after: a, ratio: median(a.nanos.map((ns, round) => ns / b.nanos[round])) };
  });
  const identity = (s: (typeof sides)[number]): SideIdentity => ({
    pids: s.tally.pids,
    dist: s.dist,
    consumed: s.tally.consumed,
  });
  return { cells, before: identity(sides[0]), after: identity(sides[1]) };
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

/** The command line's options; this build is the after-tree unless --after names another. */
export function parseArgs(args: readonly string[]): ComparisonOptions {
  const beforeDist = args[0];
  if (beforeDist === undefined || beforeDist.startsWith('--'))
    throw new RangeError('give the before-tree dist folder first: decision-time-vs.js BEFORE_DIST');
  return {
    beforeDist: resolve(beforeDist),
    afterDist: resolve(flagValue(args, '--after', join(__dirname, '..', '..'))),
    policies: flagValue(args, '--policies', 'least-outstanding-requests,random,round-robin').split(','),
    batch: positiveInteger(flagValue(args, '--batch', '200000'), '--batch'),
    // 21, not 11: with a process per side and round, each round's ratio carries two processes' luck; at 11 rounds
    // A/A medians spread 0.94–1.07× (3 runs × 3 policies × 3 sizes × with and without --model-step, load 5.4–10.3).
    rounds: positiveInteger(flagValue(args, '--rounds', '21'), '--rounds'),
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
