/**
 * `npm run bench:sdk` — what the AWS SDK path of `bench --sagemaker-endpoint` costs on the client, measured side
 * by side with the plain HTTP client of `bench --url`: the same workload, the same emulated fleet and router, the
 * same live-benchmark driver; only the transport differs (InvokeEndpointWithResponseStream through
 * @aws-sdk/client-sagemaker-runtime with SigV4 and event-stream decoding, versus undici to the OpenAI path).
 * Rounds alternate HTTP, SDK, HTTP, SDK… on a fresh fleet each, so neither gets warmer caches or a quieter
 * machine; the table gives each round's TTFT P50/P90 and E2E P50 and the median SDK − HTTP difference.
 *
 *   npm run bench:sdk [-- --rounds 3 --requests 200 --concurrency 4]
 */
import { integerFlag } from '../src/cli/flag-values';
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { PrefixAwareLlmClient } from '../src/aws/runtime-client';
import { SageMakerRuntimeTransport } from '../src/aws/sagemaker-transport';
import { runLiveBenchmark, type LiveBenchmarkResult } from '../src/benchmark';
import { startEmulatorFleet } from '../src/emulator';
import { startRouter } from '../src/server';
import { percentileOfSorted, sortedAscending } from '../src/report/stats';
import { parseWorkloadSpec } from '../src/workload';

export interface SdkBenchOptions {
  readonly rounds: number;
  readonly requests: number;
  readonly concurrency: number;
}

export interface RoundResult {
  readonly transport: 'http' | 'sdk';
  readonly round: number;
  readonly ttftP50: number;
  readonly ttftP90: number;
  readonly e2eP50: number;
  readonly failed: number;
}

function stats(result: LiveBenchmarkResult): { ttftP50: number; ttftP90: number; e2eP50: number } {
  const ttft = sortedAscending(result.records.filter((r) => r.ttftMs !== null).map((r) => r.ttftMs!));
  const e2e = sortedAscending(result.records.map((r) => r.e2eMs));
  return {
    ttftP50: percentileOfSorted(ttft, 50) ?? NaN,
    ttftP90: percentileOfSorted(ttft, 90) ?? NaN,
    e2eP50: percentileOfSorted(e2e, 50) ?? NaN,
  };
}

async function oneRound(transport: 'http' | 'sdk', round: number, options: SdkBenchOptions): Promise<RoundResult> {
  // tiny profile at real time: engine steps of about a millisecond, so client overhead is visible, not drowned.
  const fleet = await startEmulatorFleet(2, { profile: 'tiny', timeScale: 1 });
  const router = await startRouter({
    backends: fleet.urls,
    port: 0,
    logLevel: 'silent',
    routingHeaders: 'all',
    healthCheck: { intervalMs: 0 },
    policy: { name: 'sagemaker-prefix-aware', prefixLength: 1024 },
  });
  const workload = parseWorkloadSpec(
    `shared-system?groups=4&promptsPerGroup=64&systemTokens=300&questionTokens=20&outputTokens=16&concurrency=${options.concurrency}`,
  );
  let sdk: SageMakerRuntimeClient | undefined;
  try {
    const base = { workload, maxRequests: options.requests, model: 'tiny-emulated-model' };
    let result: LiveBenchmarkResult;
    if (transport === 'http') {
      result = await runLiveBenchmark({ ...base, url: router.url });
    } else {
      sdk = new SageMakerRuntimeClient({
        endpoint: router.url,
        region: 'us-east-1',
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
        maxAttempts: 1,
      });
      result = await runLiveBenchmark({
        ...base,
        url: `${router.url}/endpoints/bench`,
        transport: new SageMakerRuntimeTransport({
          client: new PrefixAwareLlmClient({ endpointName: 'bench', client: sdk }),
          instanceHeader: 'x-prefix-router-instance',
        }),
      });
    }
    return { transport, round, ...stats(result), failed: result.failed };
  } finally {
    sdk?.destroy();
    await router.close();
    await fleet.close();
  }
}

export async function runSdkBench(options: SdkBenchOptions): Promise<{ rounds: RoundResult[]; markdown: string }> {
  const rounds: RoundResult[] = [];
  for (let r = 0; r < options.rounds; r++) {
    rounds.push(await oneRound('http', r + 1, options));
    rounds.push(await oneRound('sdk', r + 1, options));
  }
  const ms = (x: number): string => `${x.toFixed(2)} ms`;
  const lines = [
    `| round | transport | TTFT P50 | TTFT P90 | E2E P50 | failed |`,
    `| ---: | --- | ---: | ---: | ---: | ---: |`,
    ...rounds.map(
      (x) =>
        `| ${x.round} | ${x.transport === 'http' ? 'HTTP (bench --url)' : 'AWS SDK (bench --sagemaker-endpoint)'} | ${ms(x.ttftP50)} | ${ms(x.ttftP90)} | ${ms(x.e2eP50)} | ${x.failed} |`,
    ),
  ];
  const diffs = (key: 'ttftP50' | 'ttftP90' | 'e2eP50'): number => {
    const d = sortedAscending(
      rounds
        .filter((x) => x.transport === 'sdk')
        .map((x, i) => x[key] - rounds.filter((y) => y.transport === 'http')[i][key]),
    );
    return percentileOfSorted(d, 50) ?? NaN;
  };
  lines.push(
    '',
    `Median SDK − HTTP over ${options.rounds} round(s): TTFT P50 ${ms(diffs('ttftP50'))}, TTFT P90 ${ms(diffs('ttftP90'))}, E2E P50 ${ms(diffs('e2eP50'))} (${options.requests} requests per round, closed loop at ${options.concurrency}).`,
  );
  return { rounds, markdown: lines.join('\n') };
}

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  return integerFlag(name, process.argv[i + 1], 1, 100_000);
}

if (require.main === module) {
  runSdkBench({ rounds: flag('rounds', 3), requests: flag('requests', 200), concurrency: flag('concurrency', 4) })
    .then(({ markdown }) => process.stdout.write(`${markdown}\n`))
    .catch((err: unknown) => {
      process.stderr.write(`bench:sdk: ${(err as Error).message}\n`);
      process.exit(1);
    });
}
