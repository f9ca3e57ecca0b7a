/**
 * `npm run bench:import`: how fast `prefix-router trace import` reads Data Capture files, and how much memory it
 * holds, at the scale (one million captured requests: target ≤ 120 s on 2 cores, RSS ≤ 512 MB).
 *
 * It writes the input first (not timed): `--requests` Data Capture lines in AWS's S3 layout, JSON encoding, one
 * file per `--per-file` lines, bodies shaped like a support copilot's traffic — one of `--prefixes` shared system
 * prompts (popularity falling as 1/rank), a conversation history that later turns repeat, and a new question.
 * Then it runs the import in a child process (the CLI's own code path, a fresh heap) and reads the child's wall
 * time and peak RSS (getrusage maxrss). Figures are reported beside the targets as ratios.
 *
 *   npm run bench:import [-- --requests 1000000 --per-file 10000 --prefixes 200 --keep DIR]
 */
import { integerFlag } from '../src/cli/flag-values';
import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SeededRng } from '../src/common/seeded-rng';
import { syntheticText } from '../src/workload/synthetic-text';
import { captureFileKey, DEFAULT_CAPTURE_START_MS, importTrace } from '../src/trace-import';

export interface ImportSpeedOptions {
  readonly requests: number;
  readonly perFile: number;
  readonly prefixes: number;
  /** Keep the generated input here (default: a temporary directory, removed after). */
  readonly keep?: string;
}

export const TARGET_SECONDS = 120;
export const TARGET_RSS_MB = 512;

const USAGE = 'usage: import-speed [--requests N] [--per-file N] [--prefixes N] [--keep DIR]';

export function parseArgs(argv: readonly string[]): ImportSpeedOptions {
  let requests = 1_000_000;
  let perFile = 10_000;
  let prefixes = 200;
  let keep: string | undefined;
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--requests') requests = integerFlag('requests', value, 1, 100_000_000);
    else if (flag === '--per-file') perFile = integerFlag('per-file', value, 1, 10_000_000);
    else if (flag === '--prefixes') prefixes = integerFlag('prefixes', value, 1, 1_000_000);
    else if (flag === '--keep') keep = value;
    else throw new Error(`${USAGE}; unknown flag "${flag}"`);
  }
  return { requests, perFile, prefixes, keep };
}

/** The generated input: its size and shape. */
export interface GeneratedInput {
  readonly dir: string;
  readonly files: number;
  readonly bytes: number;
  readonly requests: number;
}

async function put(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

/**
 * Support-copilot-shaped capture: system prompts of 1,000–6,000 characters; 40 % of requests continue an
 * earlier conversation (its whole prompt plus an answer and a new question), the rest start one; questions of
 * 100–1,500 characters; 8 requests a second.
 */
export async function generateCapture(dir: string, options: ImportSpeedOptions): Promise<GeneratedInput> {
  const rng = new SeededRng(26);
  const systems = Array.from({ length: options.prefixes }, (_, i) =>
    syntheticText(new SeededRng(1000 + i), 1000 + Math.floor(rng.next() * 5000)),
  );
  // Popularity 1/rank: a few system prompts carry most of the traffic.
  const weights = systems.map((_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  weights.reduce((acc, w) => (cumulative.push((acc + w) / total), acc + w), 0);
  const pick = (): number => {
    const u = rng.next();
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  // Open conversations: their messages so far (bounded, so prompts stay bounded too).
  const open: Array<Array<{ role: string; content: string }>> = [];
  let files = 0;
  let bytes = 0;
  let stream: WriteStream | undefined;
  for (let i = 0; i < options.requests; i++) {
    const ms = DEFAULT_CAPTURE_START_MS + Math.floor(i * 125);
    if (i % options.perFile === 0) {
      if (stream) {
        stream.end();
        await once(stream, 'finish');
      }
      const file = join(
        dir,
        'datacapture',
        captureFileKey('bench-llm', 'AllTraffic', ms, `${String(files).padStart(8, '0')}-0000-4000-a000-000000000000`),
      );
      mkdirSync(dirname(file), { recursive: true });
      stream = createWriteStream(file, { highWaterMark: 1 << 20 });
      files++;
    }
    const question = syntheticText(new SeededRng(i * 7 + 3), 100 + Math.floor(rng.next() * 1400));
    let messages: Array<{ role: string; content: string }>;
    if (open.length > 0 && rng.next() < 0.4) {
      const k = Math.floor(rng.next() * open.length);
      const history = open[k];
      messages = [
        ...history,
        { role: 'assistant', content: syntheticText(new SeededRng(i * 7 + 5), 200) },
        { role: 'user', content: question },
      ];
      if (messages.length > 9) open.splice(k, 1);
      else open[k] = messages;
    } else {
      messages = [
        { role: 'system', content: systems[pick()] },
        { role: 'user', content: question },
      ];
      if (open.length < 5000) open.push(messages);
      else open[Math.floor(rng.next() * open.length)] = messages;
    }
    const body = JSON.stringify({ model: 'bench-model', messages, max_tokens: 256, stream: false });
    const output = `{"id":"c${i}","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":""}}],"usage":{"completion_tokens":${32 + (i % 200)}}}`;
    const line = `{"captureData":{"endpointInput":{"observedContentType":"application/json","mode":"INPUT","data":${JSON.stringify(body)},"encoding":"JSON"},"endpointOutput":{"observedContentType":"application/json","mode":"OUTPUT","data":${JSON.stringify(output)},"encoding":"JSON"}},"eventMetadata":{"eventId":"e${i}","inferenceTime":"${new Date(ms).toISOString()}"},"eventVersion":"0"}\n`;
    bytes += Buffer.byteLength(line);
    await put(stream!, line);
  }
  if (stream) {
    stream.end();
    await once(stream, 'finish');
  }
  return { dir: join(dir, 'datacapture'), files, bytes, requests: options.requests };
}

export interface ImportSpeedResult {
  readonly input: GeneratedInput;
  readonly wallSeconds: number;
  /** The child's user + system CPU time: what the import costs whatever else the machine runs. */
  readonly cpuSeconds: number;
  readonly maxRssMb: number;
  readonly requestsPerSecond: number;
  readonly mbPerSecond: number;
  readonly summary: string;
}

/** Runs the import in a child (this file with --child; through ts-node under jest), returning its wall time, CPU time and peak RSS. */
export function runImportChild(
  input: string,
  out: string,
): { wallSeconds: number; cpuSeconds: number; maxRssMb: number; summary: string } {
  const loader = __filename.endsWith('.ts') ? ['-r', 'ts-node/register/transpile-only'] : [];
  const child = spawnSync(process.execPath, [...loader, __filename, '--child', input, out], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (child.status !== 0) throw new Error(`the import failed (exit ${child.status}): ${child.stderr}`);
  const result = JSON.parse(child.stdout.trim().split('\n').pop()!) as {
    wallSeconds: number;
    cpuSeconds: number;
    maxRssKb: number;
    summary: string;
  };
  return {
    wallSeconds: result.wallSeconds,
    cpuSeconds: result.cpuSeconds,
    maxRssMb: result.maxRssKb / 1024,
    summary: result.summary,
  };
}

export async function runImportSpeed(
  options: ImportSpeedOptions,
): Promise<{ result: ImportSpeedResult; markdown: string }> {
  const root = options.keep ?? mkdtempSync(join(tmpdir(), 'bench-import-'));
  try {
    const input = await generateCapture(root, options);
    const { wallSeconds, cpuSeconds, maxRssMb, summary } = runImportChild(input.dir, join(root, 'trace.jsonl'));
    const result: ImportSpeedResult = {
      input,
      wallSeconds,
      cpuSeconds,
      maxRssMb,
      requestsPerSecond: input.requests / wallSeconds,
      mbPerSecond: input.bytes / 1e6 / wallSeconds,
      summary,
    };
    const scale = input.requests / 1_000_000;
    const markdown = [
      `| requests | input | files | import wall | import CPU (user + sys) | requests/s (wall) | MB/s (wall) | peak RSS | wall / target (${TARGET_SECONDS} s × ${scale.toFixed(3)}) | CPU / target | RSS / target (${TARGET_RSS_MB} MB) |`,
      '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      `| ${input.requests.toLocaleString('en-US')} | ${(input.bytes / 1e9).toFixed(2)} GB | ${input.files} | ${wallSeconds.toFixed(1)} s | ${cpuSeconds.toFixed(1)} s | ${Math.round(result.requestsPerSecond).toLocaleString('en-US')} | ${result.mbPerSecond.toFixed(0)} | ${maxRssMb.toFixed(0)} MB | ${(wallSeconds / (TARGET_SECONDS * scale)).toFixed(2)} | ${(cpuSeconds / (TARGET_SECONDS * scale)).toFixed(2)} | ${(maxRssMb / TARGET_RSS_MB).toFixed(2)} |`,
    ].join('\n');
    return { result, markdown };
  } finally {
    if (options.keep === undefined) rmSync(root, { recursive: true, force: true });
  }
}

async function child(input: string, out: string): Promise<void> {
  const { formatImportSummary } = await import('../src/trace-import');
  const started = process.hrtime.bigint();
  const report = await importTrace({ inputs: [input], out });
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const usage = process.resourceUsage();
  const cpuSeconds = (usage.userCPUTime + usage.systemCPUTime) / 1e6;
  process.stdout.write(
    `${JSON.stringify({ wallSeconds, cpuSeconds, maxRssKb: usage.maxRSS, summary: formatImportSummary(report) })}\n`,
  );
}

function machine(): string {
  const load = execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');
  return `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load average ${load} at the end`;
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') {
    child(argv[1], argv[2]).catch((err: unknown) => {
      process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    });
  } else {
    runImportSpeed(parseArgs(argv))
      .then(({ result, markdown }) => {
        process.stdout.write(`${result.summary}\n\n${markdown}\n\n${machine()}\n`);
      })
      .catch((err: unknown) => {
        process.stderr.write(`bench:import: ${(err as Error).message}\n`);
        process.exit(1);
      });
  }
}
