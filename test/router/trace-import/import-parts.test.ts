/**
 * The three parts of `trace import`, each alone: a line becomes an entry (traceEntryOf), the accumulator counts
 * what the summary reports (ImportStats), and the writer puts entries in order in the file (TraceWriter).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnusableRequest } from '../../../router/src/trace-import/captured-request';
import { ImportFailed, ImportStats } from '../../../router/src/trace-import/import-stats';
import { KeyedBlockIds } from '../../../router/src/trace-import/keyed-block-ids';
import { traceEntryOf, type EntrySettings, type TraceEntry } from '../../../router/src/trace-import/trace-entry';
import { TraceWriter, type WritableEntry } from '../../../router/src/trace-import/trace-writer';

const BLOCK_TOKENS = 16;
/** 16 tokens × 4 characters: one block of the router's estimate. */
const BLOCK_CHARS = 64;
const SECRET = Buffer.alloc(32, 7);

function settings(extra: Partial<EntrySettings> = {}): EntrySettings {
  return { blockTokens: BLOCK_TOKENS, defaultOutputTokens: 99, ids: new KeyedBlockIds(SECRET), ...extra };
}

const logLine = (fields: Record<string, unknown>) => JSON.stringify({ timestamp: 1_700_000_000, ...fields });
const completion = (prompt: string, extra: Record<string, unknown> = {}) => ({
  url: '/v1/completions',
  body: { model: 'm', prompt, ...extra },
});

describe('when one line becomes a trace entry (traceEntryOf)', () => {
  test('GIVEN a completion of 2.5 blocks with usage THEN 40 tokens, 3 block ids, the usage output and its kind', () => {
    const line = logLine({ ...completion('a'.repeat(BLOCK_CHARS * 2.5)), usage: { completion_tokens: 7 } });
    const entry = traceEntryOf('openai', line, settings());
    expect(entry).toEqual<TraceEntry>({
      timestampMs: 1_700_000_000_000,
      inputTokens: 40,
      outputTokens: 7,
      outputSource: 'usage',
      ids: [0, 1, 2],
      format: 'openai',
      kind: 'completions',
      tenantKey: undefined,
    });
  });

  test('GIVEN the output length nowhere but max_tokens THEN max_tokens; GIVEN nothing THEN the default', () => {
    const shared = settings();
    const capped = traceEntryOf('openai', logLine(completion('b'.repeat(100), { max_tokens: 33 })), shared);
    const bare = traceEntryOf('openai', logLine(completion('b'.repeat(100))), shared);
    expect([capped.outputTokens, capped.outputSource]).toEqual([33, 'max-tokens']);
    expect([bare.outputTokens, bare.outputSource]).toEqual([99, 'default']);
  });

  test('GIVEN a response with text but no usage THEN its length counted at 4 characters per token, at least 1', () => {
    const answer = (text: string) => logLine({ ...completion('c'.repeat(80)), response: { choices: [{ text }] } });
    expect(traceEntryOf('openai', answer('x'.repeat(41)), settings())).toMatchObject({
      outputTokens: 11,
      outputSource: 'generated-text',
    });
    expect(traceEntryOf('openai', answer('x'), settings())).toMatchObject({ outputTokens: 1 });
  });

  test('GIVEN two lines of one id table sharing a first block THEN the same first id; another tenant THEN not', () => {
    const shared = settings();
    const head = 'd'.repeat(BLOCK_CHARS);
    const first = traceEntryOf('openai', logLine(completion(head + 'e'.repeat(BLOCK_CHARS))), shared);
    const second = traceEntryOf('openai', logLine(completion(head + 'f'.repeat(BLOCK_CHARS))), shared);
    const tenant = traceEntryOf('openai', logLine({ ...completion(head), prefix_aware_id: 't1' }), shared);
    expect(first.ids).toEqual([0, 1]);
    expect(second.ids).toEqual([0, 2]);
    expect(tenant).toMatchObject({ ids: [3], tenantKey: 't1' });
  });

  test('GIVEN an empty prompt THEN UnusableRequest: the prompt is empty', () => {
    const attempt = () => traceEntryOf('openai', logLine(completion('')), settings());
    expect(attempt).toThrow(UnusableRequest);
    expect(attempt).toThrow('the prompt is empty');
  });

  test('GIVEN a tokenizer THEN its token count and its blocks of token ids', () => {
    const tokenizer = {
      description: 'one token per character',
      encode: (text: string) => [...text].map((c) => c.charCodeAt(0)),
    };
    const entry = traceEntryOf('openai', logLine(completion('g'.repeat(40))), settings({ tokenizer }));
    expect(entry.inputTokens).toBe(40);
    expect(entry.ids).toHaveLength(3);
  });
});

const entryOf = (inputTokens: number, ids: number[], extra: Partial<TraceEntry> = {}): TraceEntry => ({
  timestampMs: 0,
  inputTokens,
  outputTokens: 10,
  outputSource: 'usage',
  ids,
  format: 'openai',
  kind: 'chat',
  ...extra,
});

describe('when the accumulator counts an import (ImportStats)', () => {
  const options = { blockTokens: BLOCK_TOKENS, fleetCapacityBlocks: 100, strict: false };

  test('GIVEN three entries written THEN totals, means, percentiles, kinds, formats, tenants and sources', () => {
    const stats = new ImportStats(options);
    const entries = [
      entryOf(10, [0], { tenantKey: 'a' }),
      entryOf(20, [1, 2], { outputSource: 'max-tokens', format: 'datacapture' }),
      entryOf(60, [3, 4, 5, 6], { kind: 'completions', tenantKey: 'a' }),
    ];
    for (const entry of entries) {
      stats.lineRead();
      stats.accepted(entry);
      stats.written(entry);
    }
    const counts = stats.counts();
    expect(counts).toMatchObject({
      linesRead: 3,
      requests: 3,
      formats: { openai: 2, datacapture: 1 },
      promptTokens: { total: 90, mean: 30, p50: 20, p90: 60, p99: 60, max: 60 },
      outputTokens: { total: 30, mean: 10, sources: { usage: 2, 'max-tokens': 1, 'generated-text': 0, default: 0 } },
      kinds: { chat: 2, completions: 1, native: 0, text: 0 },
      tenants: 1,
    });
  });

  test('GIVEN blocks A→B seen by 3 requests and A→B→C by 2 THEN the shared prefixes are B (3 requests) and C (2)', () => {
    const stats = new ImportStats(options);
    const see = (ids: number[]) => ids.forEach((id, i) => stats.onBlock(id, i === 0 ? -1 : ids[i - 1], false));
    stats.onBlock(0, -1, true);
    stats.onBlock(1, 0, true);
    stats.onBlock(2, 1, true);
    stats.onBlock(3, -1, true);
    see([0, 1, 2]);
    see([0, 1]);
    const counts = stats.counts();
    expect(counts.distinctBlocks).toBe(4);
    expect(counts.distinctFirstBlocks).toBe(2);
    // (3 − 1) × 2 blocks = 4 for A→B, (2 − 1) × 3 = 3 for A→B→C; A alone is extended by B (same 3 requests).
    expect(counts.sharedPrefixes).toEqual([
      { requests: 3, blocks: 2, tokens: 2 * BLOCK_TOKENS },
      { requests: 2, blocks: 3, tokens: 3 * BLOCK_TOKENS },
    ]);
  });

  test('GIVEN a prompt of 2.5 blocks written twice THEN the ceilings count its 2 full blocks as hits the second time', () => {
    const stats = new ImportStats(options);
    stats.written(entryOf(40, [0, 1, 2]));
    stats.written(entryOf(40, [0, 1, 2]));
    // 32 of 80 prompt tokens: the partial third block is never a hit.
    expect(stats.counts().ceilings.idealHitRate).toBeCloseTo(0.4, 9);
  });

  test('GIVEN problems THEN each is counted by kind and listed; with strict THEN the first throws ImportFailed', () => {
    const lenient = new ImportStats(options);
    lenient.problem('a.jsonl', 3, 'malformed-line', 'not JSON');
    lenient.problem('a.jsonl', 4, 'malformed-line', 'not JSON');
    lenient.problem('b.jsonl', 1, 'bad-timestamp', 'no time');
    expect(lenient.counts()).toMatchObject({
      problemCounts: { 'malformed-line': 2, 'bad-timestamp': 1 },
      problemTotal: 3,
    });
    expect(lenient.listedProblems[2]).toEqual({
      source: 'b.jsonl',
      lineNumber: 1,
      kind: 'bad-timestamp',
      message: 'no time',
    });
    const strict = new ImportStats({ ...options, strict: true });
    expect(() => strict.problem('a.jsonl', 3, 'malformed-line', 'not JSON')).toThrow(
      new ImportFailed('a.jsonl:3: not JSON (--strict stops at the first bad line)', []),
    );
  });
});

describe('when the writer puts entries in order (TraceWriter)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'trace-writer-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const at = (timestampMs: number, lineNumber: number): WritableEntry => ({
    timestampMs,
    inputTokens: lineNumber,
    outputTokens: 1,
    ids: [lineNumber],
    source: 's',
    lineNumber,
  });

  function writer(reorderWindowMs: number) {
    const out = join(dir, 'sub', 'trace.jsonl');
    const written: number[] = [];
    const late: string[] = [];
    const traceWriter = new TraceWriter({
      out,
      reorderWindowMs,
      onWritten: (entry) => written.push(entry.lineNumber),
      onLate: (entry, message) => late.push(`${entry.lineNumber}: ${message}`),
    });
    return { out, written, late, traceWriter };
  }

  const lines = (file: string) =>
    readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { timestamp: number; input_length: number });

  test('GIVEN entries out of order within the window THEN written in time order (ties in arrival order) from time 0', async () => {
    const { out, written, late, traceWriter } = writer(5_000);
    for (const entry of [at(10_000, 1), at(8_000, 2), at(10_000, 3), at(12_000, 4)]) await traceWriter.add(entry);
    await traceWriter.finish();
    expect(existsSync(out)).toBe(false);
    traceWriter.commit();
    expect(lines(out).map((l) => [l.timestamp, l.input_length])).toEqual([
      [0, 2],
      [2000, 1],
      [2000, 3],
      [4000, 4],
    ]);
    expect(written).toEqual([2, 1, 3, 4]);
    expect(late).toEqual([]);
    expect([traceWriter.firstTimestampMs, traceWriter.lastTimestampMs]).toEqual([8_000, 12_000]);
  });

  test('GIVEN an entry later than the window THEN told as late and written at the time of the one before', async () => {
    const { out, written, late, traceWriter } = writer(1_000);
    for (const entry of [at(10_000, 1), at(20_000, 2), at(25_000, 3), at(12_000, 4)]) await traceWriter.add(entry);
    await traceWriter.finish();
    traceWriter.commit();
    expect(written).toEqual([1, 2, 4, 3]);
    expect(late).toEqual([
      "4: arrived 8.0 s before a request already written (more than the 1 s reorder window); kept at that request's time",
    ]);
    expect(lines(out).map((l) => l.timestamp)).toEqual([0, 10_000, 10_000, 15_000]);
  });

  test('GIVEN discard THEN neither the partial file nor the trace remains', async () => {
    const { out, traceWriter } = writer(1_000);
    await traceWriter.add(at(1, 1));
    await traceWriter.finish();
    traceWriter.discard();
    expect([existsSync(out), existsSync(`${out}.partial`)]).toEqual([false, false]);
  });
});
