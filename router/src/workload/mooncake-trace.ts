import { CHARS_PER_TOKEN } from '../state/block-hash';
import { readLines } from './line-reader';
import { resolveTracePath } from './shipped-traces';
import { compressTraceTime } from './load-shape';
import { TextCache, traceBlockText } from './synthetic-text';
import { canonicalSpec, COMMON_OPTIONS, parametersOf, requestId, type Workload } from './workload';
import { resolveOptions, type OptionSchema } from './workload-options';
import type { WorkloadApi, WorkloadRequest } from './workload-request';

/**
 * Mooncake-format request traces (JSONL; see router/traces/README.md): one object per line with `timestamp`
 * (ms), `input_length` and `output_length` (tokens) and `hash_ids` (one id per `blockTokens`-token block of
 * the prompt). Replay turns every id into a fixed block of synthetic text (traceBlockText: same id, same text,
 * on every machine) and cuts the prompt to `input_length` tokens, so shared ids become shared text prefixes.
 *
 * The file is read twice, both times streaming: once up front to validate every line (so a bad trace fails
 * before a run starts, listing every bad line) and once per `requests()` pass to build prompts lazily.
 */
export const TRACE_OPTIONS = {
  speedup: {
    type: 'number',
    min: 0,
    minExclusive: true,
    max: 100000,
    default: 1,
    description: 'divide every timestamp by this (2 = replay twice as fast)',
  },
  blockTokens: {
    type: 'int',
    min: 16,
    max: 1000000,
    default: 512,
    description: 'tokens per hash id (Mooncake traces use 512)',
  },
  api: {
    type: 'enum',
    values: ['chat', 'completion'],
    default: 'chat',
    description: 'chat: one user message holding the prompt; completion: the prompt',
  },
  skipBadLines: {
    type: 'bool',
    default: false,
    description: 'true: skip bad lines and list them in the report notes; false: fail listing them',
  },
  count: { ...COMMON_OPTIONS.count, description: 'replay only the first this many requests' },
  duration: {
    ...COMMON_OPTIONS.duration,
    default: undefined,
    description: 'replay only requests arriving within this many seconds (after speedup)',
  },
  concurrency: {
    ...COMMON_OPTIONS.concurrency,
    description: 'closed loop: keep this many in flight, in trace order, ignoring timestamps',
  },
} as const satisfies OptionSchema;

export interface TraceOptions {
  readonly speedup: number;
  readonly blockTokens: number;
  readonly api: WorkloadApi;
  readonly skipBadLines: boolean;
  readonly count?: number;
  readonly duration?: number;
  readonly concurrency?: number;
}

export interface TraceEntry {
  readonly lineNumber: number;
  readonly timestampMs: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly hashIds: readonly number[];
  /** The line's `priority` (an integer, lower sooner), when it has one. */
  readonly priority?: number;
}

export interface TraceProblem {
  readonly lineNumber: number;
  readonly message: string;
}

/** Shown in an error message; every problem stays available in `problems`. */
const LISTED_PROBLEMS = 20;

function listProblems(problems: readonly TraceProblem[]): string {
  const shown = problems.slice(0, LISTED_PROBLEMS).map((p) => `line ${p.lineNumber}: ${p.message}`);
  if (problems.length > LISTED_PROBLEMS) shown.push(`… and ${problems.length - LISTED_PROBLEMS} more`);
  return shown.join('; ');
}

export class TraceFormatError extends Error {
  constructor(
    readonly path: string,
    readonly problems: readonly TraceProblem[],
  ) {
    super(
      `trace ${path} has ${problems.length} bad line${problems.length === 1 ? '' : 's'} (pass skipBadLines=true to skip them): ${listProblems(problems)}`,
    );
    this.name = 'TraceFormatError';
  }
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Parse and check one line. `previousTimestampMs` is the last good line's timestamp: traces must be in
 * arrival order. Returns the entry, or a problem naming the field.
 */
export function parseTraceLine(
  text: string,
  lineNumber: number,
  blockTokens: number,
  previousTimestampMs: number,
): TraceEntry | TraceProblem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { lineNumber, message: `not valid JSON (${(error as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { lineNumber, message: 'not a JSON object' };
  const o = value as Record<string, unknown>;
  const problems: string[] = [];
  const { timestamp, input_length: input, output_length: output, hash_ids: ids, priority } = o;
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp) || timestamp < 0)
    problems.push(`timestamp must be a number ≥ 0 (got ${JSON.stringify(timestamp)})`);
  else if (timestamp < previousTimestampMs)
    problems.push(
      `timestamp ${timestamp} is before the previous line's ${previousTimestampMs} (lines must be in arrival order)`,
    );
  if (!isNonNegativeInteger(input) || input < 1)
    problems.push(`input_length must be an integer ≥ 1 (got ${JSON.stringify(input)})`);
  if (!isNonNegativeInteger(output) || output < 1)
    problems.push(`output_length must be an integer ≥ 1 (got ${JSON.stringify(output)})`);
  if (!Array.isArray(ids) || !ids.every(isNonNegativeInteger)) {
    problems.push('hash_ids must be an array of non-negative integers');
  } else if (isNonNegativeInteger(input) && input >= 1) {
    const needed = Math.ceil(input / blockTokens);
    if (ids.length !== needed) {
      problems.push(
        `hash_ids has ${ids.length} ids but input_length ${input} needs ${needed} blocks of ${blockTokens} tokens`,
      );
    }
  }
  if (priority !== undefined && !Number.isSafeInteger(priority))
    problems.push(`priority must be an integer (got ${JSON.stringify(priority)})`);
  if (problems.length > 0) return { lineNumber, message: problems.join(', ') };
  return {
    lineNumber,
    timestampMs: timestamp as number,
    inputTokens: input as number,
    outputTokens: output as number,
    hashIds: ids as number[],
    ...(priority !== undefined ? { priority: priority as number } : {}),
  };
}

function isProblem(parsed: TraceEntry | TraceProblem): parsed is TraceProblem {
  return 'message' in parsed;
}

/** Good entries of a trace in file order, streaming. Blank lines are not data and are passed over. */
export function* traceEntries(
  path: string,
  blockTokens: number,
  onProblem: (problem: TraceProblem) => void,
): Generator<TraceEntry, void, undefined> {
  let previous = 0;
  for (const { lineNumber, text } of readLines(path)) {
    if (text.trim() === '') continue;
    const parsed = parseTraceLine(text, lineNumber, blockTokens, previous);
    if (isProblem(parsed)) {
      onProblem(parsed);
      continue;
    }
    previous = parsed.timestampMs;
    yield parsed;
  }
}

export interface TraceSummary {
  readonly path: string;
  readonly requests: number;
  readonly badLines: readonly TraceProblem[];
  readonly firstTimestampMs: number;
  readonly lastTimestampMs: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** Validate a whole trace in one streaming pass. Throws TraceFormatError listing every bad line unless `skipBadLines`. */
export function scanTrace(path: string, blockTokens: number, skipBadLines: boolean): TraceSummary {
  const badLines: TraceProblem[] = [];
  let requests = 0;
  let first = 0;
  let last = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  for (const entry of traceEntries(path, blockTokens, (p) => badLines.push(p))) {
    if (requests === 0) first = entry.timestampMs;
    last = entry.timestampMs;
    requests++;
    inputTokens += entry.inputTokens;
    outputTokens += entry.outputTokens;
  }
  if (badLines.length > 0 && !skipBadLines) throw new TraceFormatError(path, badLines);
  if (requests === 0) throw new TraceFormatError(path, [{ lineNumber: 0, message: 'the trace holds no request' }]);
  return { path, requests, badLines, firstTimestampMs: first, lastTimestampMs: last, inputTokens, outputTokens };
}

/** The prompt text of a trace entry: its blocks' texts, cut to `inputTokens` tokens. */
export function tracePromptText(entry: TraceEntry, blockTokens: number, cache?: TextCache): string {
  const parts = entry.hashIds.map((id) =>
    cache ? cache.get(id, () => traceBlockText(id, blockTokens)) : traceBlockText(id, blockTokens),
  );
  return parts.join('').slice(0, entry.inputTokens * CHARS_PER_TOKEN);
}

export function traceWorkload(
  path: string,
  given: Partial<TraceOptions> | Record<string, string> = {},
  fromText = false,
): Workload {
  const resolved = resolveOptions(`trace:${path}`, TRACE_OPTIONS, given, fromText);
  const options = resolved as unknown as TraceOptions;
  // A path as given, or the bare name of a shipped trace; a missing file names the workload and the path.
  const file = resolveTracePath(path);
  const summary = scanTrace(file, options.blockTokens, options.skipBadLines);
  const durationMs = options.duration === undefined ? Infinity : options.duration * 1000;
  const arrivalOf = (entry: TraceEntry): number =>
    compressTraceTime(entry.timestampMs - summary.firstTimestampMs, options.speedup);

  function* requests(): Generator<WorkloadRequest, void, undefined> {
    const blocks = new TextCache(32_000_000);
    let index = 0;
    for (const entry of traceEntries(file, options.blockTokens, () => undefined)) {
      if (options.count !== undefined && index >= options.count) return;
      const arrivalMs = arrivalOf(entry);
      if (arrivalMs >= durationMs) return;
      const prompt = tracePromptText(entry, options.blockTokens, blocks);
      const base = {
        index,
        id: requestId('tr', index),
        arrivalMs,
        maxTokens: entry.outputTokens,
        ...(entry.priority !== undefined ? { priority: entry.priority } : {}),
      };
      if (options.api === 'completion') yield { ...base, kind: 'completion', prompt };
      else yield { ...base, kind: 'chat', messages: [{ role: 'user', content: prompt }] };
      index++;
    }
  }

  let expected = summary.requests;
  if (options.count !== undefined) expected = Math.min(expected, options.count);
  const exact = options.duration === undefined;
  const notes =
    summary.badLines.length > 0
      ? [`skipped ${summary.badLines.length} bad trace line(s): ${listProblems(summary.badLines)}`]
      : [];
  const spanS = (summary.lastTimestampMs - summary.firstTimestampMs) / 1000;
  return {
    kind: 'trace',
    spec: canonicalSpec(`trace:${path}`, TRACE_OPTIONS, resolved),
    parameters: {
      path,
      ...parametersOf(resolved),
      traceRequests: summary.requests,
      traceSpanSeconds: Math.round(spanS * 1000) / 1000,
      meanInputTokens: Math.round(summary.inputTokens / summary.requests),
      meanOutputTokens: Math.round(summary.outputTokens / summary.requests),
    },
    load:
      options.concurrency !== undefined
        ? { mode: 'closed', concurrency: options.concurrency }
        : { mode: 'open-trace', speedup: options.speedup },
    expectedRequests: expected,
    expectedRequestsExact: exact,
    description: `Mooncake trace ${path}: ${summary.requests} requests over ${spanS.toFixed(0)} s, mean input ${Math.round(summary.inputTokens / summary.requests)} tokens`,
    notes,
    requests,
  };
}
