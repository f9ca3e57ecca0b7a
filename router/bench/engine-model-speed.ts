/**
 * How fast the engine model runs: one loaded p5-llama-3.1-70b instance fed long-context traffic (Poisson
 * arrivals, ~8,000-token prompts sharing 6,000-token group prefixes, fixed output length) in virtual time,
 * driven the way the simulator drives it (runUntil each arrival, then submit). Reports simulated seconds per
 * wall-clock second with the decode fast path on and off, side by side.
 *
 *   npm run build && node dist/router/bench/engine-model-speed.js [--seconds 3600] [--rate 4] [--output 512]
 *
 * Wall time includes building each prompt's text and hashing it; it excludes nothing. Like a workload
 * generator should, it hashes each shared prefix once and continues the chain over each request's own part
 * (`continueBlockHashes`), passing text and hashes to `submit`.
 */
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
    const value = Number(argv[i + 1]);
    if (!(key in args) || !Number.isFinite(value) || value <= 0) {
      throw new Error(`usage: engine-model-speed [--seconds N>0] [--rate N>0] [--output N>0] [--groups N>0] [--seed N>0]; bad "${argv[i]} ${argv[i + 1]}"`);
    }
    args[key] = value;
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

function run(args: Args, fastForward: boolean): Result {
  const profile = builtinProfile('p5-llama-3.1-70b');
  const rng = new SeededRng(args.seed);
  const prefixes = Array.from({ length: args.groups }, (_, g) => textOf(`group ${g} shared context`, 6000));
  const prefixHashes = prefixes.map((text) => blockHashes(text, { blockTokens: profile.blockTokens }));
  // No step observer: the simulator runs without one, and it would cost a call per step.
  const engine = new EngineModel(profile, { fastForward });
  let maxBatch = 0;
  const horizonMs = args.seconds * 1000;
  let finished = 0;
  let ttftSum = 0;
  let requests = 0;
  const started = performance.now();
  for (let t = rng.nextExponential(1000 / args.rate); t < horizonMs; t += rng.nextExponential(1000 / args.rate)) {
    for (const e of engine.runUntil(t)) {
      if (e.type === 'finished') {
        finished++;
        ttftSum += e.ttftMs;
      }
    }
    const running = engine.stats().running;
    if (running > maxBatch) maxBatch = running;
    const group = rng.nextInt(args.groups);
    const own = textOf(`question ${requests}`, 2000);
    const hashes = prefixHashes[group].concat(continueBlockHashes(own, prefixHashes[group][prefixHashes[group].length - 1], { blockTokens: profile.blockTokens }));
    engine.submit({ id: `r${requests}`, promptText: prefixes[group] + own, blockHashes: hashes, maxTokens: args.output }, t);
    requests++;
  }
  for (const e of engine.runUntil(horizonMs)) {
    if (e.type === 'finished') {
      finished++;
      ttftSum += e.ttftMs;
    }
  }
  const wallS = (performance.now() - started) / 1000;
  const stats = engine.stats();
  return {
    fastForward,
    wallS,
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
  // Warm the JIT on a short run of each mode so neither measured run pays for compilation.
  run({ ...args, seconds: Math.min(args.seconds, 60) }, true);
  run({ ...args, seconds: Math.min(args.seconds, 60) }, false);
  const results = [run(args, true), run(args, false)];
  process.stdout.write(
    `engine-model speed: 1 x p5-llama-3.1-70b, ${args.seconds} simulated s, ${args.rate} req/s Poisson, ` +
      `8,000-token prompts (${args.groups} groups sharing 6,000-token prefixes), ${args.output} output tokens\n\n`,
  );
  process.stdout.write('| fast path | wall s | simulated s per wall s | requests | steps | fast-forwarded steps | mean / max batch | hit rate | preemptions | mean TTFT ms |\n');
  process.stdout.write('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n');
  for (const r of results) {
    process.stdout.write(
      `| ${r.fastForward ? 'on' : 'off'} | ${r.wallS.toFixed(2)} | ${(r.simulatedS / r.wallS).toFixed(0)} | ${r.requests} | ${r.steps} | ` +
        `${((100 * r.fastForwardedSteps) / Math.max(1, r.steps)).toFixed(1)} % | ${r.meanBatch.toFixed(1)} / ${r.maxBatch} | ` +
        `${(100 * r.hitRate).toFixed(1)} % | ${r.preemptions} | ${r.meanTtftMs.toFixed(0)} |\n`,
    );
  }
  const [on, off] = results;
  process.stdout.write(`\nfast path speed-up: ${(off.wallS / on.wallS).toFixed(2)}x; 7 instances for the same span: ~${(7 * on.wallS).toFixed(1)} s wall\n`);
  process.stdout.write(`${JSON.stringify({ args, results })}\n`);
}

main();
