import { builtinProfile, DEFAULT_PROFILE_NAME } from '../emulator/engine-profile';
import { CHARS_PER_TOKEN } from '../state/block-hash';
import { TRACE_OPTIONS } from '../workload/mooncake-trace';
import { parseCapturedLine, detectFormat, type CaptureFormat, type CaptureFormatOption } from './capture-formats';
import { UnusableRequest } from './captured-request';
import { ImportFailed, ImportStats, type ImportCounts } from './import-stats';
import { importSources, sourceLines, type ImportSource, type SourceOptions } from './import-sources';
import { KeyedBlockIds } from './keyed-block-ids';
import { traceEntryOf, type EntrySettings, type TraceEntry } from './trace-entry';
import { TraceWriter } from './trace-writer';
import type { PromptTokenizer } from '../state/tokenizer-file';

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

export { ImportFailed, LISTED_PROBLEMS, type ImportProblem, type SharedPrefix } from './import-stats';

export interface ImportReport extends ImportCounts {
  readonly out: string;
  readonly sources: number;
  readonly firstTimestampMs: number;
  readonly lastTimestampMs: number;
  readonly tokenSource: string;
  readonly blockTokens: number;
  readonly fleet: FleetForCeilings;
  readonly samplingPercent: number;
  readonly notes: readonly string[];
}

/** Problems quoted in the error when nothing was usable. */
const QUOTED_PROBLEMS = 20;

export async function importTrace(options: ImportOptions): Promise<ImportReport> {
  const blockTokens = options.blockTokens ?? DEFAULT_TRACE_BLOCK_TOKENS;
  const fleet = options.fleet ?? DEFAULT_FLEET;
  const stats = new ImportStats({
    blockTokens,
    fleetCapacityBlocks: Math.floor((fleet.instances * fleet.kvCapacityBlocks * fleet.kvBlockTokens) / blockTokens),
    strict: options.strict ?? false,
  });
  const writer = new TraceWriter({
    out: options.out,
    reorderWindowMs: options.reorderWindowMs ?? DEFAULT_REORDER_WINDOW_MS,
    onWritten: (entry) => stats.written(entry),
    onLate: (entry, message) => stats.problem(entry.source, entry.lineNumber, 'out-of-order', message),
  });
  const settings: EntrySettings = {
    blockTokens,
    defaultOutputTokens: options.defaultOutputTokens ?? DEFAULT_OUTPUT_TOKENS,
    tokenizer: options.tokenizer,
    ids: new KeyedBlockIds(options.secret),
    onBlock: stats.onBlock,
  };
  let sources = 0;
  try {
    for await (const source of importSources(options.inputs, {
      firstLineTime: firstLineTimeOf(options.format),
      ...options.sources,
    })) {
      sources++;
      await importSource(source, { format: fixedFormat(options.format), settings, stats, writer });
    }
    await writer.finish();
  } catch (error) {
    writer.discard();
    throw error;
  }
  if (stats.requestsWritten === 0) {
    writer.discard();
    throw nothingUsable(options.inputs, sources, stats);
  }
  writer.commit();
  const report: Omit<ImportReport, 'notes'> = {
    ...stats.counts(),
    out: options.out,
    sources,
    firstTimestampMs: writer.firstTimestampMs,
    lastTimestampMs: writer.lastTimestampMs,
    tokenSource: options.tokenizer
      ? options.tokenizer.description
      : `router estimate, ${CHARS_PER_TOKEN} characters per token`,
    blockTokens,
    fleet,
    samplingPercent: options.samplingPercent ?? 100,
  };
  return { ...report, notes: importNotes(report) };
}

/** The format every line has, or undefined when each source's first line tells. */
function fixedFormat(option: CaptureFormatOption | undefined): CaptureFormat | undefined {
  return option === 'auto' || option === undefined ? undefined : option;
}

/** A source's first arrival time, which orders the sources (undefined when its first line cannot tell). */
function firstLineTimeOf(option: CaptureFormatOption | undefined): (line: string) => number | undefined {
  return (line) => {
    try {
      return parseCapturedLine(fixedFormat(option) ?? detectFormat(line), line).timestampMs;
    } catch {
      return undefined;
    }
  };
}

interface SourceImport {
  readonly format: CaptureFormat | undefined;
  readonly settings: EntrySettings;
  readonly stats: ImportStats;
  readonly writer: TraceWriter;
}

/** One source's lines into the writer; a source that cannot be read loses only itself. */
async function importSource(source: ImportSource, into: SourceImport): Promise<void> {
  const { settings, stats, writer } = into;
  let format = into.format;
  let lastLine = 0;
  try {
    for await (const { lineNumber, text, terminated } of sourceLines(source.open())) {
      lastLine = lineNumber;
      if (isBlank(text)) continue;
      stats.lineRead();
      format ??= detectFormat(text);
      let entry: TraceEntry;
      try {
        entry = traceEntryOf(format, text, settings);
      } catch (error) {
        if (!(error instanceof UnusableRequest)) throw error;
        // A line cut off by the end of the file is told apart from one that was malformed when written.
        const truncated = !terminated && error.kind === 'malformed-line';
        stats.problem(
          source.name,
          lineNumber,
          truncated ? 'truncated-last-line' : error.kind,
          truncated ? `the last line is cut off (${error.message}, no newline after it)` : error.message,
        );
        continue;
      }
      stats.accepted(entry);
      await writer.add({ ...entry, source: source.name, lineNumber });
    }
  } catch (error) {
    if (error instanceof ImportFailed) throw error;
    if (error instanceof UnusableRequest) throw error;
    // A source that cannot be read (permissions, a vanished object, throttling exhausted) loses only itself.
    stats.problem(source.name, lastLine, 'unreadable-source', `cannot read it: ${(error as Error).message}`);
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

/** The error when no line gave a request: no sources at all, or the first problems of those read. */
function nothingUsable(inputs: readonly string[], sources: number, stats: ImportStats): ImportFailed {
  const problems = stats.listedProblems;
  if (sources === 0) return new ImportFailed(`no input files found in ${inputs.join(', ')}`, problems);
  const listed = problems.slice(0, QUOTED_PROBLEMS).map((p) => `${p.source}:${p.lineNumber}: ${p.message}`);
  return new ImportFailed(
    `nothing usable in ${sources} file(s) (${stats.lines} line(s) read, ${stats.problemsCounted} bad)${listed.length ? `: ${listed.join('; ')}` : ''}`,
    problems,
  );
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
