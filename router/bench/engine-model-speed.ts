/**
 * How fast the engine model runs: one loaded p5-llama-3.1-70b instance fed long-context traffic (Poisson
 * arrivals, ~8,000-token prompts sharing 6,000-token group prefixes, fixed output length) in virtual time,
 * driven the way the simulator drives it (runUntil each arrival, then submit). Reports simulated seconds per
 * wall-clock second with the decode fast path on and off, side by side.
 *
 *   npm run build && node dist/router/bench/engine-model-speed.js [--seconds 3600] [--rate 4] [--output 512]
 *
 * Like a workload generator should, it hashes each shared prefix once and continues the chain over each
 * request's own part (`continueBlockHashes`), passing text and hashes to `submit`. Each run reports wall and
 * process CPU time (CPU time is the robust figure on a shared machine), best of two alternating runs per
 * mode; a last pass generates the same workload without an engine, so the engine's own cost is the difference.
 */
import { numberFlag } from '../src/cli/flag-values';
import { performance } from 'node:perf_hooks';
import { SeededRng } from '../src/common/seeded-rng';
import { EngineModel } from '../src/emulator/engine-model';
import { builtinProfile } from '../src/emulator/engine-profile';
import { blockHashes, continueBlockHashes } from '../src/state/block-hash';

interface Args {
  readonly seconds: number;
  readonly rate: number;
  readonly output: number;
  readonly groups: number;
  readonly seed: number;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Record<string, number> = { seconds: 3600, rate: 4, output: 512, groups: 16, seed: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in args))
      throw new Error(
        `usage: engine-model-speed [--seconds N>0] [--rate N>0] [--output N>0] [--groups N>0] [--seed N>0]; unknown flag "${argv[i]}"`,
      );
    args[key] = numberFlag(key, argv[i + 1], 0, Number.MAX_SAFE_INTEGER, true);
  }
  return args as unknown as Args;
}

function textOf(label: string, tokens: number): string {
  let text = '';
  for (let i = 0; text.length < tokens * 4; i++) text += `${label} ${i}. `;
  return text.slice(0, tokens * 4);
}

interface Result {
  readonly fastForward: boolean;
  readonly wallS: number;
  readonly cpuS: number;
  readonly simulatedS: number;
  readonly requests: number;
  readonly finished: number;
  readonly steps: number;
  readonly fastForwardedSteps: number;
  readonly meanBatch: number;
  /** Most requests running when an arrival came (sampled at arrivals). */
  readonly maxBatch: number;
  readonly hitRate: number;
  readonly preemptions: number;
  readonly meanTtftMs: number;
}

function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** Yields every request of the workload: arrival time, prompt text, prompt hashes. */
function* workload(
  args: Args,
  blockTokens: number,
): Generator<{ t: number; id: string; text: string; hashes: number[] }> {
  const rng = new SeededRng(args.seed);
  const prefixes = Array.from({ length: args.groups }, (_, g) => textOf(`group ${g} shared context`, 6000));
  const prefixHashes = prefixes.map((text) => blockHashes(text, { blockTokens }));
  let n = 0;
  for (
    let t = rng.nextExponential(1000 / args.rate);
    t < args.seconds * 1000;
    t += rng.nextExponential(1000 / args.rate)
  ) {
    const group = rng.nextInt(args.groups);
    const own = textOf(`question ${n}`, 2000);
    const shared = prefixHashes[group];
    const hashes = shared.concat(continueBlockHashes(own, shared[shared.length - 1], { blockTokens }));
    yield { t, id: `r${n++}`, text: prefixes[group] + own, hashes };
  }
}

/** CPU seconds to generate the workload alone (to subtract from a run). */
function workloadOnly(args: Args): number {
  const started = cpuSeconds();
  let size = 0;
  for (const request of workload(args, 16)) size += request.hashes.length + request.text.length;
  if (size < 0) throw new Error('unreachable');
  return cpuSeconds() - started;
}

function run(args: Args, fastForward: boolean): Result {
  const profile = builtinProfile('p5-llama-3.1-70b');
  // No step observer: the simulator runs without one, and it would cost a call per step.
  const engine = new EngineModel(profile, { fastForward });
  let maxBatch = 0;
  const horizonMs = args.seconds * 1000;
  let finished = 0;
  let ttftSum = 0;
  let requests = 0;
  const started = performance.now();
  const startedCpu = cpuSeconds();
  for (const { t, id, text, hashes } of workload(args, profile.blockTokens)) {
    for (const e of engine.runUntil(t)) {
      if (e.type === 'finished') {
        finished++;
        ttftSum += e.ttftMs;
      }
    }
    const running = engine.stats().running;
    if (running > maxBatch) maxBatch = running;
    engine.submit({ id, promptText: text, blockHashes: hashes, maxTokens: args.output }, t);
    requests++;
  }
  for (const e of engine.runUntil(horizonMs)) {
    if (e.type === 'finished') {
      finished++;
      ttftSum += e.ttftMs;
    }
  }
  const wallS = (performance.now() - started) / 1000;
  const cpuS = cpuSeconds() - startedCpu;
  const stats = engine.stats();
  return {
    fastForward,
    wallS,
    cpuS,
    simulatedS: args.seconds,
    requests,
    finished,
    steps: stats.steps,
    fastForwardedSteps: stats.fastForwardedSteps,
    meanBatch: stats.scheduledSequenceSteps / Math.max(1, stats.steps),
    maxBatch,
    hitRate: stats.prefixCacheHitTokens / Math.max(1, stats.prefixCacheQueryTokens),
    preemptions: stats.preemptions,
    meanTtftMs: ttftSum / Math.max(1, finished),
  };
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  // Warm the JIT on a short run of each mode, then alternate the modes twice and keep each mode's best run,
  // so neither pays for compilation or for the other's garbage.
  run({ ...args, seconds: Math.min(args.seconds, 60) }, true);
  run({ ...args, seconds: Math.min(args.seconds, 60) }, false);
  const best = (a: Result, b: Result): Result => (a.cpuS <= b.cpuS ? a : b);
  const on1 = run(args, true);
  const off1 = run(args, false);
  const off2 = run(args, false);
  const on2 = run(args, true);
  const results = [best(on1, on2), best(off1, off2)];
  const workloadCpuS = workloadOnly(args);
  process.stdout.write(
    `engine-model speed: 1 x p5-llama-3.1-70b, ${args.seconds} simulated s, ${args.rate} req/s Poisson, ` +
      `8,000-token prompts (${args.groups} groups sharing 6,000-token prefixes), ${args.output} output tokens\n\n`,
  );
  process.stdout.write(
    '| fast path | wall s | CPU s | engine-only CPU s | simulated s per CPU s (engine only) | requests | steps | fast-forwarded | mean / max batch | hit rate | mean TTFT ms |\n',
  );
  process.stdout.write('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n');
  for (const r of results) {
    const engineCpu = Math.max(1e-9, r.cpuS - workloadCpuS);
    process.stdout.write(
      `| ${r.fastForward ? 'on' : 'off'} | ${r.wallS.toFixed(2)} | ${r.cpuS.toFixed(2)} | ${engineCpu.toFixed(2)} | ` +
        `${(r.simulatedS / r.cpuS).toFixed(0)} (${(r.simulatedS / engineCpu).toFixed(0)}) | ${r.requests} | ${r.steps} | ` +
        `${((100 * r.fastForwardedSteps) / Math.max(1, r.steps)).toFixed(1)} % | ${r.meanBatch.toFixed(1)} / ${r.maxBatch} | ` +
        `${(100 * r.hitRate).toFixed(1)} % | ${r.meanTtftMs.toFixed(0)} |\n`,
    );
  }
  const [on, off] = results;
  process.stdout.write(
    `\nworkload generation alone: ${workloadCpuS.toFixed(2)} CPU s. Fast path: ${(off.cpuS / on.cpuS).toFixed(2)}x less CPU. ` +
      `7 such instances for the same span: ~${(7 * on.cpuS).toFixed(1)} CPU s with workload generation, ` +
      `~${(7 * Math.max(0, on.cpuS - workloadCpuS)).toFixed(1)} CPU s engine only\n`,
  );
  process.stdout.write(`${JSON.stringify({ args, workloadCpuS, results })}\n`);
}

main();
