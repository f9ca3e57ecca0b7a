/**
 * `npm run bench:prompts`: what preparing a request costs — generating its text, rendering it and hashing its
 * blocks, the prompt worker's whole job in `prefix-router simulate` — at several fleet sizes, on this thread.
 * Uses bench:fleet's workload (`long-context` scaled with the fleet, an hour), skips its first `--from` fraction
 * (a group's first request generates and hashes its prefix; by 30 % of the hour every group has been seen at any
 * fleet size, since the hour's requests and groups both scale with the fleet) and times the next `--count`
 * requests (fewer where the hour ends first), with the garbage collections in that window beside. Sizes run
 * interleaved, `--repeat` times.
 *
 *   npm run bench:prompts [-- --instances 7,112 --from 0.3 --count 20000 --repeat 2]
 */
import { integerFlag, numberFlag } from '../src/cli/flag-values';
import { ConfigError } from '../src/common/config-error';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { requestPreparer } from '../src/sim/prompt-source';
import { parseWorkloadSpec } from '../src/workload';
import { parseFleetSizes, scaledLongContext } from './fleet-scale';

export interface PromptPrepOptions {
  readonly instances: readonly number[];
  /** Fraction of the hour's requests skipped before timing. */
  readonly from: number;
  readonly count: number;
  readonly repeat: number;
}

export interface PromptPrepRow {
  readonly instances: number;
  readonly run: number;
  /** Requests timed (fewer than `count` when the hour has fewer after the skip). */
  readonly requests: number;
  readonly microsPerRequest: number;
  /** Garbage collection during the timed requests, per request. */
  readonly gcMicrosPerRequest: number;
}

const USAGE = 'usage: prompt-prep-speed [--instances N,N,...] [--from F] [--count N] [--repeat N]';

export function parseArgs(argv: readonly string[]): PromptPrepOptions {
  let instances = [7, 112];
  let from = 0.3;
  let count = 20_000;
  let repeat = 2;
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--instances') instances = parseFleetSizes(value);
    else if (flag === '--from') from = numberFlag('from', value, 0, 1);
    else if (flag === '--count') count = integerFlag('count', value, 1, 100_000_000);
    else if (flag === '--repeat') repeat = integerFlag('repeat', value, 1, 20);
    else throw new Error(`${USAGE}; unknown flag "${flag}"`);
  }
  // The hour's last instant has no requests after it to time.
  if (from >= 1) throw new ConfigError([`--from must be a fraction in [0, 1) (got ${String(from)})`]);
  return { instances, from, count, repeat };
}

/** Prepares the scaled hour's requests from `from` × its length on, at most `count` of them, and times them. */
export async function measurePromptPrep(
  instances: number,
  from: number,
  count: number,
): Promise<Omit<PromptPrepRow, 'run'>> {
  const workload = parseWorkloadSpec(scaledLongContext(instances, 3600));
  const skip = Math.floor(from * workload.expectedRequests);
  const prepare = requestPreparer({ blockTokens: 16, model: 'bench' });
  const collections: { startTime: number; duration: number }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push({ startTime: entry.startTime, duration: entry.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  let index = 0;
  let timed = 0;
  let started = 0;
  for (const request of workload.requests()) {
    if (index === skip) started = performance.now();
    prepare(request);
    if (index >= skip) timed++;
    if (++index >= skip + count) break;
  }
  const ended = performance.now();
  // GC entries reach the observer in a later turn of the event loop.
  await new Promise((resolve) => setTimeout(resolve, 20));
  observer.disconnect();
  if (timed === 0)
    throw new RangeError(`the ${instances}-instance hour has ${index} requests, none after the first ${skip}`);
  let gcMs = 0;
  for (const c of collections) if (c.startTime >= started && c.startTime <= ended) gcMs += c.duration;
  return {
    instances,
    requests: timed,
    microsPerRequest: (1000 * (ended - started)) / timed,
    gcMicrosPerRequest: (1000 * gcMs) / timed,
  };
}

export async function runPromptPrep(options: PromptPrepOptions): Promise<{ rows: PromptPrepRow[]; markdown: string }> {
  const rows: PromptPrepRow[] = [];
  for (let run = 1; run <= options.repeat; run++) {
    for (const n of options.instances) rows.push({ run, ...(await measurePromptPrep(n, options.from, options.count)) });
  }
  const lines = [
    `prompt-prep-speed: long-context scaled with the fleet, up to ${options.count} requests from ${Math.round(options.from * 100)} % of the hour on, prepared on one thread (text, rendering, block hashes), ${options.repeat} interleaved run(s) of each size`,
    '',
    '| run | instances | requests timed | µs / request | of which GC (µs) |',
    '| ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.run} | ${r.instances} | ${r.requests.toLocaleString('en-US')} | ${r.microsPerRequest.toFixed(1)} | ${r.gcMicrosPerRequest.toFixed(1)} |`,
    ),
  ];
  return { rows, markdown: lines.join('\n') };
}

if (require.main === module) {
  runPromptPrep(parseArgs(process.argv.slice(2))).then(
    ({ markdown }) => process.stdout.write(`${markdown}\n`),
    (err: Error) => {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = 1;
    },
  );
}
