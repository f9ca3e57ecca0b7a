import { once } from 'node:events';
import { createWriteStream, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { builtinProfile, DEFAULT_PROFILE_NAME } from '../emulator/engine-profile';
import { estimatedPromptTokens } from '../policy/prompt-tokens';
import { CHARS_PER_TOKEN } from '../state/block-hash';
import { CeilingTracker, type Ceilings } from '../report/ceilings';
import { TRACE_OPTIONS } from '../workload/mooncake-trace';
import { parseCapturedLine, detectFormat, type CaptureFormat, type CaptureFormatOption } from './capture-formats';
import { requestShape, responseOutput, UnusableRequest, type OutputSource, type ProblemKind } from './captured-request';
import { importSources, sourceLines, type SourceOptions } from './import-sources';
import { KeyedBlockIds } from './keyed-block-ids';
import type { PromptTokenizer } from './tokenizer-file';

/**
 * `prefix-router trace import`: captured requests (SageMaker Data Capture files, OpenAI request logs; local or
 * in S3) → a Mooncake trace (timestamp, input_length, output_length, hash_ids) that `simulate`, `bench` and `ab`
 * replay unchanged. One streaming pass: each line is parsed, reduced to lengths and keyed block ids, and
 * forgotten; only the ids' table, a few counters per distinct block and a bounded reorder window are kept.
 */
export interface ImportOptions {
  readonly inputs: readonly string[];
  /** The Mooncake JSONL file to write (written as OUT.partial, renamed when complete). */
  readonly out: string;
  readonly format?: CaptureFormatOption;
  /** Tokens per hash id (default 512, as Mooncake). */
  readonly blockTokens?: number;
  /** The model's tokenizer; without it, the router's estimate (CHARS_PER_TOKEN characters per token). */
  readonly tokenizer?: PromptTokenizer;
  /** Data Capture's InitialSamplingPercentage, when below 100: the summary says what sampling hides. */
  readonly samplingPercent?: number;
  /** Output length when neither the response nor the request gives one (default 128). */
  readonly defaultOutputTokens?: number;
  /** Requests may arrive this much out of order (across files, or within one) and still be put in order (default 300 s). */
  readonly reorderWindowMs?: number;
  /** Fail on the first bad line instead of counting it. */
  readonly strict?: boolean;
  /** The fleet the ceilings are computed for. */
  readonly fleet?: FleetForCeilings;
  readonly sources?: SourceOptions;
  /** The keyed hashes' secret (tests only: by default a fresh random one, never written). */
  readonly secret?: Buffer;
}

export interface FleetForCeilings {
  readonly instances: number;
  /** KV blocks per instance and tokens per KV block (the engine profile's). */
  readonly kvCapacityBlocks: number;
  readonly kvBlockTokens: number;
  readonly label?: string;
}

const defaultProfile = builtinProfile(DEFAULT_PROFILE_NAME);
/** The simulator's default fleet: 7 instances of the default engine profile. */
export const DEFAULT_FLEET: FleetForCeilings = {
  instances: 7,
  kvCapacityBlocks: defaultProfile.kvCapacityBlocks,
  kvBlockTokens: defaultProfile.blockTokens,
  label: `7 × ${defaultProfile.name}`,
};
export const DEFAULT_OUTPUT_TOKENS = 128;
export const DEFAULT_REORDER_WINDOW_MS = 300_000;
export const DEFAULT_TRACE_BLOCK_TOKENS = TRACE_OPTIONS.blockTokens.default;
export const BLOCK_TOKENS_RANGE = { min: TRACE_OPTIONS.blockTokens.min, max: TRACE_OPTIONS.blockTokens.max };

export interface ImportProblem {
  readonly source: string;
  readonly lineNumber: number;
  readonly kind: ProblemKind;
  readonly message: string;
}

export interface SharedPrefix {
  /** Requests whose prompt starts with it. */
  readonly requests: number;
  readonly blocks: number;
  readonly tokens: number;
}

export interface ImportReport {
  readonly out: string;
  readonly sources: number;
  readonly linesRead: number;
  readonly requests: number;
  readonly firstTimestampMs: number;
  readonly lastTimestampMs: number;
  readonly formats: Readonly<Record<CaptureFormat, number>>;
  readonly tokenSource: string;
  readonly blockTokens: number;
  readonly promptTokens: {
    readonly total: number;
    readonly mean: number;
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  };
  readonly outputTokens: {
    readonly total: number;
    readonly mean: number;
    readonly sources: Readonly<Record<OutputSource, number>>;
  };
  readonly kinds: Readonly<Record<'chat' | 'completions' | 'native' | 'text', number>>;
  readonly tenants: number;
  readonly distinctFirstBlocks: number;
  readonly distinctBlocks: number;
  readonly ceilings: Ceilings;
  readonly fleet: FleetForCeilings;
  readonly sharedPrefixes: readonly SharedPrefix[];
  readonly samplingPercent: number;
  readonly problemCounts: Readonly<Partial<Record<ProblemKind, number>>>;
  /** The first LISTED_PROBLEMS problems, in input order. */
  readonly problems: readonly ImportProblem[];
  readonly problemTotal: number;
  readonly notes: readonly string[];
}

/** Problems kept for the listing (all are counted). */
export const LISTED_PROBLEMS = 1000;

export class ImportFailed extends Error {
  constructor(
    message: string,
    readonly problems: readonly ImportProblem[],
  ) {
    super(message);
    this.name = 'ImportFailed';
  }
}

interface PendingEntry {
  readonly timestampMs: number;
  readonly seq: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly ids: readonly number[];
  readonly source: string;
  readonly lineNumber: number;
}

/** A min-heap on (timestamp, arrival sequence): the reorder window. */
class PendingHeap {
  private readonly items: PendingEntry[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): PendingEntry | undefined {
    return this.items[0];
  }

  push(entry: PendingEntry): void {
    const a = this.items;
    a.push(entry);
    for (let i = a.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!before(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }

  pop(): PendingEntry | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && before(a[l], a[m])) m = l;
        if (r < a.length && before(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
}

function before(x: PendingEntry, y: PendingEntry): boolean {
  return x.timestampMs < y.timestampMs || (x.timestampMs === y.timestampMs && x.seq < y.seq);
}

/** A growable Int32Array (per distinct block, per request). */
class IntColumn {
  data = new Int32Array(1 << 16);
  length = 0;

  push(v: number): void {
    if (this.length === this.data.length) this.grow();
    this.data[this.length++] = v;
  }

  ensure(n: number): void {
    while (this.data.length < n) this.grow();
    if (this.length < n) this.length = n;
  }

  private grow(): void {
    const next = new Int32Array(this.data.length * 2);
    next.set(this.data);
    this.data = next;
  }
}

/** Blank lines are not data (checked without copying the line, which trim() would for every line). */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

function percentile(sorted: Int32Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

// eslint-disable-next-line max-lines-per-function -- not yet cut by concern (issue 36)
export async function importTrace(options: ImportOptions): Promise<ImportReport> {
  const blockTokens = options.blockTokens ?? DEFAULT_TRACE_BLOCK_TOKENS;
  const blockChars = blockTokens * CHARS_PER_TOKEN;
  const window = options.reorderWindowMs ?? DEFAULT_REORDER_WINDOW_MS;
  const defaultOutput = options.defaultOutputTokens ?? DEFAULT_OUTPUT_TOKENS;
  const fleet = options.fleet ?? DEFAULT_FLEET;
  const sampling = options.samplingPercent ?? 100;
  const strict = options.strict ?? false;
  const tokenizer = options.tokenizer;
  const ids = new KeyedBlockIds(options.secret);
  const ceilings = new CeilingTracker({
    blockTokens,
    fleetCapacityBlocks: Math.floor((fleet.instances * fleet.kvCapacityBlocks * fleet.kvBlockTokens) / blockTokens),
  });

  // Per distinct block (ids are dense): requests containing it, its parent block, its depth.
  const blockRequests = new IntColumn();
  const blockParent = new IntColumn();
  const blockDepth = new IntColumn();
  const promptLengths = new IntColumn();
  const tenants = new Set<string>();
  let distinctFirstBlocks = 0;

  const problems: ImportProblem[] = [];
  const problemCounts: Partial<Record<ProblemKind, number>> = {};
  let problemTotal = 0;
  const problem = (source: string, lineNumber: number, kind: ProblemKind, message: string): void => {
    const p = { source, lineNumber, kind, message };
    if (strict)
      throw new ImportFailed(`${source}:${lineNumber}: ${message} (--strict stops at the first bad line)`, [p]);
    problemCounts[kind] = (problemCounts[kind] ?? 0) + 1;
    problemTotal++;
    if (problems.length < LISTED_PROBLEMS) problems.push(p);
  };

  const formats: Record<CaptureFormat, number> = { datacapture: 0, openai: 0 };
  const kinds = { chat: 0, completions: 0, native: 0, text: 0 };
  const outputSources: Record<OutputSource, number> = { usage: 0, 'generated-text': 0, 'max-tokens': 0, default: 0 };
  let sources = 0;
  let linesRead = 0;
  let requests = 0;
  let promptTotal = 0;
  let outputTotal = 0;
  let firstTimestamp = NaN;
  let lastWritten = -Infinity;
  let latestSeen = -Infinity;
  let seq = 0;

  mkdirSync(dirname(options.out), { recursive: true });
  const partial = `${options.out}.partial`;
  const writer = createWriteStream(partial, { highWaterMark: 1 << 20 });
  const writerError = new Promise<never>((_, reject) => writer.once('error', reject));
  writerError.catch(() => undefined);
  let buffered: string[] = [];
  let bufferedChars = 0;

  const flushBuffer = async (): Promise<void> => {
    if (buffered.length === 0) return;
    const chunk = buffered.join('');
    buffered = [];
    bufferedChars = 0;
    if (!writer.write(chunk)) await Promise.race([once(writer, 'drain'), writerError]);
  };

  const write = async (entry: PendingEntry): Promise<void> => {
    let timestamp = entry.timestampMs;
    if (timestamp < lastWritten) {
      problem(
        entry.source,
        entry.lineNumber,
        'out-of-order',
        `arrived ${((lastWritten - timestamp) / 1000).toFixed(1)} s before a request already written (more than the ${window / 1000} s reorder window); kept at that request's time`,
      );
      timestamp = lastWritten;
    }
    if (Number.isNaN(firstTimestamp)) firstTimestamp = timestamp;
    lastWritten = timestamp;
    const full = Math.floor(entry.inputTokens / blockTokens);
    ceilings.observeBlocks(full === entry.ids.length ? entry.ids : entry.ids.slice(0, full), entry.inputTokens);
    requests++;
    const line = `{"timestamp":${Math.round(timestamp - firstTimestamp)},"input_length":${entry.inputTokens},"output_length":${entry.outputTokens},"hash_ids":[${entry.ids.join(',')}]}\n`;
    buffered.push(line);
    bufferedChars += line.length;
    if (bufferedChars >= 1 << 20) await flushBuffer();
  };

  const pending = new PendingHeap();
  const drainUpTo = async (limit: number): Promise<void> => {
    while (pending.size > 0 && pending.peek()!.timestampMs <= limit) await write(pending.pop()!);
  };

  const onBlock = (id: number, parent: number, isNew: boolean): void => {
    if (isNew) {
      blockRequests.ensure(id + 1);
      blockParent.ensure(id + 1);
      blockDepth.ensure(id + 1);
      blockParent.data[id] = parent;
      blockDepth.data[id] = parent < 0 ? 1 : blockDepth.data[parent] + 1;
      if (parent < 0) distinctFirstBlocks++;
    }
    blockRequests.data[id] = blockRequests.data[id] + 1;
  };

  try {
    const firstLineTime = (line: string): number | undefined => {
      try {
        const format = options.format === 'auto' || options.format === undefined ? detectFormat(line) : options.format;
        return parseCapturedLine(format, line).timestampMs;
      } catch {
        return undefined;
      }
    };
    for await (const source of importSources(options.inputs, { firstLineTime, ...options.sources })) {
      sources++;
      let format: CaptureFormat | undefined =
        options.format === 'auto' || options.format === undefined ? undefined : options.format;
      let lastLine = 0;
      try {
        for await (const { lineNumber, text, terminated } of sourceLines(source.open())) {
          lastLine = lineNumber;
          if (isBlank(text)) continue;
          linesRead++;
          format ??= detectFormat(text);
          let entry: PendingEntry;
          try {
            const captured = parseCapturedLine(format, text);
            const shape = requestShape(captured);
            const namespace = `${shape.routing.model}\u0000${shape.routing.tenantKey ?? ''}`;
            let inputTokens: number;
            let blockIds: number[];
            if (tokenizer) {
              const tokens = tokenizer.encode(shape.text);
              inputTokens = tokens.length;
              blockIds = ids.idsOfTokens(tokens, blockTokens, namespace, onBlock);
            } else {
              inputTokens = estimatedPromptTokens(shape.routing);
              blockIds = ids.idsOfText(shape.text, blockChars, namespace, onBlock);
            }
            if (inputTokens < 1) throw new UnusableRequest('the prompt is empty', 'not-a-generation-body');
            const output = responseOutput(captured.response);
            let outputTokens: number;
            if (output !== undefined && 'tokens' in output) {
              outputTokens = output.tokens;
              outputSources.usage++;
            } else if (output !== undefined) {
              outputTokens = Math.max(
                1,
                tokenizer ? tokenizer.encode(output.text).length : Math.ceil(output.text.length / CHARS_PER_TOKEN),
              );
              outputSources['generated-text']++;
            } else if (shape.maxTokens !== undefined) {
              outputTokens = shape.maxTokens;
              outputSources['max-tokens']++;
            } else {
              outputTokens = defaultOutput;
              outputSources.default++;
            }
            formats[format]++;
            kinds[shape.kind]++;
            if (shape.routing.tenantKey !== undefined) tenants.add(shape.routing.tenantKey);
            promptTotal += inputTokens;
            outputTotal += outputTokens;
            promptLengths.push(inputTokens);
            entry = {
              timestampMs: captured.timestampMs,
              seq: seq++,
              inputTokens,
              outputTokens,
              ids: blockIds,
              source: source.name,
              lineNumber,
            };
          } catch (error) {
            if (!(error instanceof UnusableRequest)) throw error;
            const truncated = !terminated && error.kind === 'malformed-line';
            problem(
              source.name,
              lineNumber,
              truncated ? 'truncated-last-line' : error.kind,
              truncated ? `the last line is cut off (${error.message}, no newline after it)` : error.message,
            );
            continue;
          }
          latestSeen = Math.max(latestSeen, entry.timestampMs);
          pending.push(entry);
          await drainUpTo(latestSeen - window);
        }
      } catch (error) {
        if (error instanceof ImportFailed) throw error;
        if (error instanceof UnusableRequest) throw error;
        // A source that cannot be read (permissions, a vanished object, throttling exhausted) loses only itself.
        problem(source.name, lastLine, 'unreadable-source', `cannot read it: ${(error as Error).message}`);
      }
    }
    await drainUpTo(Infinity);
    await flushBuffer();
    writer.end();
    await Promise.race([once(writer, 'finish'), writerError]);
  } catch (error) {
    writer.destroy();
    rmSync(partial, { force: true });
    throw error;
  }

  if (requests === 0) {
    rmSync(partial, { force: true });
    const listed = problems.slice(0, 20).map((p) => `${p.source}:${p.lineNumber}: ${p.message}`);
    throw new ImportFailed(
      sources === 0
        ? `no input files found in ${options.inputs.join(', ')}`
        : `nothing usable in ${sources} file(s) (${linesRead} line(s) read, ${problemTotal} bad)${listed.length ? `: ${listed.join('; ')}` : ''}`,
      problems,
    );
  }
  renameSync(partial, options.out);

  const sortedLengths = promptLengths.data.slice(0, promptLengths.length).sort();
  const report: Omit<ImportReport, 'notes'> = {
    out: options.out,
    sources,
    linesRead,
    requests,
    firstTimestampMs: firstTimestamp,
    lastTimestampMs: lastWritten,
    formats,
    tokenSource: tokenizer ? tokenizer.description : `router estimate, ${CHARS_PER_TOKEN} characters per token`,
    blockTokens,
    promptTokens: {
      total: promptTotal,
      mean: promptTotal / requests,
      p50: percentile(sortedLengths, 0.5),
      p90: percentile(sortedLengths, 0.9),
      p99: percentile(sortedLengths, 0.99),
      max: sortedLengths[sortedLengths.length - 1],
    },
    outputTokens: { total: outputTotal, mean: outputTotal / requests, sources: outputSources },
    kinds,
    tenants: tenants.size,
    distinctFirstBlocks,
    distinctBlocks: ids.size,
    ceilings: ceilings.result(),
    fleet,
    sharedPrefixes: topSharedPrefixes(blockRequests, blockParent, blockDepth, ids.size, blockTokens, 5),
    samplingPercent: sampling,
    problemCounts,
    problems,
    problemTotal,
  };
  return { ...report, notes: importNotes(report) };
}

/**
 * The shared prefixes worth the most cache: a block shared by several requests whose every child is shared by
 * fewer (a maximal prefix for that many requests), ranked by the tokens a cache could serve from it,
 * (requests − 1) × its length.
 */
function topSharedPrefixes(
  requests: IntColumn,
  parent: IntColumn,
  depth: IntColumn,
  distinct: number,
  blockTokens: number,
  limit: number,
): SharedPrefix[] {
  const extended = new Uint8Array(distinct);
  for (let id = 0; id < distinct; id++) {
    const p = parent.data[id];
    if (p >= 0 && requests.data[id] === requests.data[p]) extended[p] = 1;
  }
  const best: { id: number; score: number }[] = [];
  for (let id = 0; id < distinct; id++) {
    const n = requests.data[id];
    if (n < 2 || extended[id]) continue;
    const score = (n - 1) * depth.data[id];
    if (best.length < limit || score > best[best.length - 1].score) {
      best.push({ id, score });
      best.sort((a, b) => b.score - a.score || a.id - b.id);
      if (best.length > limit) best.pop();
    }
  }
  return best.map(({ id }) => ({
    requests: requests.data[id],
    blocks: depth.data[id],
    tokens: depth.data[id] * blockTokens,
  }));
}

function importNotes(report: Omit<ImportReport, 'notes'>): string[] {
  const notes: string[] = [];
  if (report.tokenSource.startsWith('router estimate')) {
    notes.push(
      `Token counts are the router's estimate (${CHARS_PER_TOKEN} characters per token), not the model's tokenizer: pass --tokenizer tokenizer.json for exact lengths.`,
    );
  }
  const { 'max-tokens': fromMax, default: fromDefault, 'generated-text': fromText } = report.outputTokens.sources;
  if (fromMax > 0)
    notes.push(
      `${fromMax} request(s) have no captured usage: their output length is the request's max_tokens, an upper bound.`,
    );
  if (fromDefault > 0)
    notes.push(
      `${fromDefault} request(s) give neither usage nor max_tokens: their output length is the default (--default-output-tokens).`,
    );
  if (fromText > 0)
    notes.push(
      `${fromText} request(s) have a response without usage: their output length is counted from the generated text.`,
    );
  if (report.samplingPercent < 100) {
    const speedup = 100 / report.samplingPercent;
    notes.push(
      `Data Capture sampled ${report.samplingPercent} % of requests: prefixes shared with the requests it did not capture are invisible, so the hit-rate ceilings are lower bounds; ` +
        `replay with trace:FILE?speedup=${Number(speedup.toFixed(3))} to restore the full arrival rate.`,
    );
  }
  if (report.problemTotal > 0)
    notes.push(
      `${report.problemTotal} line(s) could not be used (listed below by file and line); the trace holds the other ${report.requests}.`,
    );
  return notes;
}

const pct = (x: number | null): string => (x === null ? '—' : `${(x * 100).toFixed(1)} %`);
const int = (x: number): string => Math.round(x).toLocaleString('en-US');

/** The summary printed before any simulation: what the trace holds, in words and numbers, no prompt text. */
export function formatImportSummary(report: ImportReport, listedProblems = 20): string {
  const spanS = (report.lastTimestampMs - report.firstTimestampMs) / 1000;
  const rate = spanS > 0 ? report.requests / spanS : NaN;
  const lines = [
    `trace: ${report.out}`,
    `  requests        ${int(report.requests)} from ${int(report.sources)} file(s) (${int(report.formats.datacapture)} Data Capture, ${int(report.formats.openai)} request log); ` +
      `${int(report.kinds.chat)} chat, ${int(report.kinds.completions)} completion, ${int(report.kinds.native)} native, ${int(report.kinds.text)} text; ${int(report.tenants)} tenant key(s)`,
    `  time span       ${spanS.toFixed(1)} s, ${Number.isFinite(rate) ? rate.toFixed(2) : '—'} requests/s`,
    `  prompt tokens   mean ${int(report.promptTokens.mean)}, P50 ${int(report.promptTokens.p50)}, P90 ${int(report.promptTokens.p90)}, P99 ${int(report.promptTokens.p99)}, max ${int(report.promptTokens.max)} (${report.tokenSource})`,
    `  output tokens   mean ${int(report.outputTokens.mean)} (from usage ${int(report.outputTokens.sources.usage)}, generated text ${int(report.outputTokens.sources['generated-text'])}, max_tokens ${int(report.outputTokens.sources['max-tokens'])}, default ${int(report.outputTokens.sources.default)})`,
    `  prefixes        ${int(report.distinctFirstBlocks)} distinct first blocks, ${int(report.distinctBlocks)} distinct blocks of ${report.blockTokens} tokens`,
    `  hit ceilings    ideal ${pct(report.ceilings.idealHitRate)}, fleet ${pct(report.ceilings.fleetHitRate)} (${report.fleet.label ?? `${report.fleet.instances} instances`}, ` +
      `${int(report.fleet.instances * report.fleet.kvCapacityBlocks * report.fleet.kvBlockTokens)} KV tokens; whole ${report.blockTokens}-token blocks)`,
  ];
  if (report.sharedPrefixes.length > 0) {
    lines.push('  shared prefixes (most cacheable first):');
    for (const p of report.sharedPrefixes) {
      lines.push(
        `    ${int(p.tokens)} tokens (${p.blocks} block${p.blocks === 1 ? '' : 's'}) shared by ${int(p.requests)} requests: ${int((p.requests - 1) * p.tokens)} tokens a cache can serve`,
      );
    }
  }
  for (const note of report.notes) lines.push(`  note: ${note}`);
  if (report.problemTotal > 0) {
    const byKind = Object.entries(report.problemCounts)
      .map(([k, n]) => `${k} ${int(n)}`)
      .join(', ');
    lines.push(`  bad lines       ${int(report.problemTotal)} (${byKind})`);
    for (const p of report.problems.slice(0, listedProblems))
      lines.push(`    ${p.source}:${p.lineNumber}: ${p.message}`);
    if (report.problemTotal > listedProblems) lines.push(`    … and ${int(report.problemTotal - listedProblems)} more`);
  }
  return lines.join('\n');
}
