import fc from 'fast-check';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheableHitTokens } from '../../../router/src/state/block-hash';
import { CeilingTracker } from '../../../router/src/report/ceilings';
import {
  parseWorkloadSpec,
  readLines,
  scanTrace,
  TraceFormatError,
  traceBlockText,
  tracePromptText,
  traceWorkload,
  type WorkloadRequest,
} from '../../../router/src/workload';

const EXCERPT = join(__dirname, 'fixtures', 'mooncake-excerpt.jsonl');
const FULL_TRACE = join(__dirname, '..', '..', '..', 'router', 'traces', 'mooncake-synthetic.jsonl');

interface Line {
  timestamp: number;
  input_length: number;
  output_length: number;
  hash_ids: number[];
}

const lines: Line[] = readFileSync(EXCERPT, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Line);

function promptOf(r: WorkloadRequest): string {
  return r.kind === 'chat' ? r.messages.map((m) => m.content).join('') : r.prompt;
}

function tempFile(content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'trace-test-'));
  const path = join(dir, 'trace.jsonl');
  writeFileSync(path, content);
  return path;
}

/**
 * The id model of a trace's ideal cache: for every prefix of ids, the most tokens of its last block any earlier
 * request had; a request hits the full 16-token blocks of the leading prefixes seen before.
 */
function idealHitsFromIds(trace: readonly Line[], blockTokens: number): number[] {
  const seen = new Map<string, number>();
  return trace.map((line) => {
    let matched = 0;
    let key = '';
    for (let b = 0; b < line.hash_ids.length; b++) {
      key += `${line.hash_ids[b]},`;
      const mine = Math.min(blockTokens, line.input_length - b * blockTokens);
      const full16 = Math.floor(Math.min(seen.get(key) ?? 0, mine) / 16) * 16;
      matched += full16;
      if (full16 < blockTokens) break;
    }
    key = '';
    for (let b = 0; b < line.hash_ids.length; b++) {
      key += `${line.hash_ids[b]},`;
      seen.set(key, Math.max(seen.get(key) ?? 0, Math.min(blockTokens, line.input_length - b * blockTokens)));
    }
    return cacheableHitTokens(matched / 16, line.input_length);
  });
}

describe('when replaying a Mooncake trace', () => {
  // Text volume matters in tests: jest runs code in a vm context, where Math.imul (text generation, hashing) is
  // tens of times slower than in plain node. The first 20 requests are ~1.2 M characters.
  const requests = Array.from(traceWorkload(EXCERPT, { api: 'completion', count: 20 }).requests());

  test('GIVEN the excerpt THEN one request per line, arrivals at the timestamps, prompts of input_length tokens and max_tokens of output_length', () => {
    expect(requests).toHaveLength(20);
    requests.forEach((r, i) => {
      expect(r.arrivalMs).toBe(lines[i].timestamp);
      expect(promptOf(r)).toHaveLength(lines[i].input_length * 4);
      expect(r.maxTokens).toBe(lines[i].output_length);
    });
    expect(traceWorkload(EXCERPT).expectedRequests).toBe(200);
  });

  test('GIVEN hash ids THEN each prompt is its blocks’ texts in order, the last one cut', () => {
    requests.slice(0, 8).forEach((r, i) => {
      const prompt = promptOf(r);
      lines[i].hash_ids.forEach((id, b) => {
        const block = traceBlockText(id, 512);
        expect(prompt.slice(b * 2048, (b + 1) * 2048)).toBe(block.slice(0, Math.min(2048, prompt.length - b * 2048)));
      });
    });
  });

  test('GIVEN two excerpt lines sharing their first 5 ids THEN their prompts share exactly 5 × 2,048 characters', () => {
    const [a, b] = [lines[15], lines[58]];
    expect(b.hash_ids.slice(0, 5)).toEqual(a.hash_ids.slice(0, 5));
    expect(b.hash_ids[5]).not.toBe(a.hash_ids[5]);
    const entry = (l: Line, n: number) => ({
      lineNumber: n,
      timestampMs: l.timestamp,
      inputTokens: l.input_length,
      outputTokens: l.output_length,
      hashIds: l.hash_ids,
    });
    const pa = tracePromptText(entry(a, 16), 512);
    const pb = tracePromptText(entry(b, 59), 512);
    expect(pb.slice(0, 5 * 2048)).toBe(pa.slice(0, 5 * 2048));
    let firstDifference = 5 * 2048;
    while (pa[firstDifference] === pb[firstDifference]) firstDifference++;
    expect(firstDifference).toBeLessThan(5 * 2048 + 16);
  });

  test('GIVEN random traces with shared prefixes THEN the ideal ceiling from the replayed text equals the one from hash ids alone', () => {
    const blockTokens = 16;
    const stem = fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 6 });
    const request = fc.tuple(
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 6 }),
      fc.array(fc.integer({ min: 31, max: 60 }), { maxLength: 3 }),
      fc.integer({ min: 0, max: 15 }),
    );
    fc.assert(
      fc.property(
        fc.array(stem, { minLength: 4, maxLength: 4 }),
        fc.array(request, { minLength: 1, maxLength: 25 }),
        (stems, picks) => {
          const trace: Line[] = picks.map(([s, keep, tail, cut], i) => {
            const ids = [...stems[s].slice(0, Math.max(1, keep)), ...tail];
            const input = Math.max(1, ids.length * blockTokens - Math.min(cut, blockTokens - 1));
            return { timestamp: i * 10, input_length: input, output_length: 1, hash_ids: ids };
          });
          const path = tempFile(trace.map((l) => JSON.stringify(l)).join('\n'));
          const replayed = Array.from(traceWorkload(path, { blockTokens, api: 'completion' }).requests());
          const tracker = new CeilingTracker({ fleetCapacityBlocks: 1 });
          const fromText = replayed.map((r) => tracker.observe(promptOf(r)).idealHitTokens);
          expect(fromText).toEqual(idealHitsFromIds(trace, blockTokens));
        },
      ),
      { numRuns: 40 },
    );
  });

  test('GIVEN speedup=2 THEN every arrival is half its timestamp; GIVEN duration THEN later requests are left out', () => {
    const fast = Array.from(traceWorkload(EXCERPT, { speedup: 2, duration: 2 }).requests());
    expect(fast.length).toBe(lines.filter((l) => l.timestamp / 2 < 2_000).length);
    expect(fast.length).toBeGreaterThan(1);
    fast.forEach((r, i) => expect(r.arrivalMs).toBe(lines[i].timestamp / 2));
    expect(traceWorkload(EXCERPT, { speedup: 2 }).load).toEqual({ mode: 'open-trace', speedup: 2 });
  });

  test('GIVEN the chat api (default) THEN the prompt is one user message', () => {
    const [r] = Array.from(traceWorkload(EXCERPT, { count: 1 }).requests());
    expect(r.kind).toBe('chat');
    if (r.kind === 'chat') expect(r.messages).toEqual([{ role: 'user', content: promptOf(requests[0]) }]);
  });

  test('GIVEN concurrency THEN the load is closed loop in trace order', () => {
    const workload = parseWorkloadSpec(`trace:${EXCERPT}?concurrency=4&count=10`);
    expect(workload.load).toEqual({ mode: 'closed', concurrency: 4 });
    expect(workload.expectedRequests).toBe(10);
    expect(Array.from(workload.requests()).map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test('GIVEN the full trace shipped in router/traces THEN it validates: 3,993 requests, mean input 15,325 tokens', () => {
    const summary = scanTrace(FULL_TRACE, 512, false);
    expect(summary.requests).toBe(3993);
    expect(Math.round(summary.inputTokens / summary.requests)).toBe(15325);
    expect(summary.badLines).toEqual([]);
  });
});

describe('when a trace has bad lines', () => {
  const good = (t: number, ids: number[] = [1, 2]) =>
    JSON.stringify({ timestamp: t, input_length: 600, output_length: 5, hash_ids: ids });
  const content = [
    good(0),
    '{"timestamp": 5, "input_length": 600',
    JSON.stringify({ timestamp: 10, input_length: 600, output_length: 0, hash_ids: [1, 2] }),
    good(20, [1]),
    '',
    good(20),
    good(3),
    '[1,2]',
    good(30),
  ].join('\n');
  const path = tempFile(content);

  test('GIVEN the default THEN loading fails with one error listing every bad line by number and reason', () => {
    let error: unknown;
    try {
      traceWorkload(path);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TraceFormatError);
    const problems = (error as TraceFormatError).problems;
    expect(problems.map((p) => p.lineNumber)).toEqual([2, 3, 4, 7, 8]);
    expect(problems[0].message).toMatch(/^not valid JSON/);
    expect(problems[1].message).toBe('output_length must be an integer ≥ 1 (got 0)');
    expect(problems[2].message).toBe('hash_ids has 1 ids but input_length 600 needs 2 blocks of 512 tokens');
    expect(problems[3].message).toBe("timestamp 3 is before the previous line's 20 (lines must be in arrival order)");
    expect(problems[4].message).toBe('not a JSON object');
    expect((error as Error).message).toMatch(
      /^trace .* has 5 bad lines \(pass skipBadLines=true to skip them\): line 2: not valid JSON/,
    );
    expect((error as Error).message).toContain('line 8: not a JSON object');
  });

  test('GIVEN skipBadLines=true THEN the good lines replay and the notes list the skipped ones', () => {
    const workload = parseWorkloadSpec(`trace:${path}?skipBadLines=true`);
    expect(Array.from(workload.requests()).map((r) => r.arrivalMs)).toEqual([0, 20, 30]);
    expect(workload.notes).toEqual([
      expect.stringMatching(/^skipped 5 bad trace line\(s\): line 2: not valid JSON.*line 8: not a JSON object$/),
    ]);
  });

  test('GIVEN more than twenty bad lines THEN the message lists twenty and counts the rest', () => {
    const many = tempFile(Array.from({ length: 25 }, () => 'nope').join('\n'));
    expect(() => traceWorkload(many)).toThrow(/line 20: not valid JSON.*; … and 5 more$/);
  });

  test('GIVEN a trace with no request THEN it is refused', () => {
    expect(() => traceWorkload(tempFile('\n\n'))).toThrow('trace');
    expect(() => traceWorkload(tempFile('\n\n'))).toThrow(/holds no request/);
  });
});

describe('when reading lines in chunks', () => {
  test('GIVEN lines that straddle chunk boundaries, multi-byte characters, CRLF and no final newline THEN every line comes back whole and numbered', () => {
    const original = ['héllo wörld', '', 'ünïcødé ✓ line', 'x'.repeat(50), 'last line without newline'];
    const path = tempFile(original.slice(0, 3).join('\r\n') + '\n' + original.slice(3).join('\n'));
    for (const chunk of [1, 2, 3, 7, 64]) {
      expect(Array.from(readLines(path, chunk))).toEqual(original.map((text, i) => ({ lineNumber: i + 1, text })));
    }
  });
});

describe('when a trace is named rather than a path', () => {
  test('GIVEN trace:mooncake-synthetic from another working directory THEN the shipped trace replays', () => {
    const cwd = process.cwd();
    process.chdir(mkdtempSync(join(tmpdir(), 'trace-cwd-')));
    try {
      const workload = parseWorkloadSpec('trace:mooncake-synthetic?count=3');
      expect(workload.spec).toMatch(/^trace:mooncake-synthetic\?/);
      expect(workload.parameters.traceRequests).toBe(3993);
      expect(Array.from(workload.requests())).toHaveLength(3);
    } finally {
      process.chdir(cwd);
    }
  });

  test('GIVEN the shipped name THEN it reads the same file as its path', () => {
    const byName = Array.from(parseWorkloadSpec('trace:mooncake-synthetic?count=5').requests());
    const byPath = Array.from(parseWorkloadSpec(`trace:${FULL_TRACE}?count=5`).requests());
    expect(byName).toEqual(byPath);
  });

  test('GIVEN a missing file THEN the error names the workload, the absolute path and the shipped names', () => {
    expect(() => parseWorkloadSpec('trace:no/such/trace.jsonl')).toThrow(
      `workload trace:no/such/trace.jsonl: no trace file at ${join(process.cwd(), 'no/such/trace.jsonl')}; shipped traces, usable by name: trace:mooncake-synthetic`,
    );
    expect(() => parseWorkloadSpec('trace:not-shipped')).toThrow(
      /^workload trace:not-shipped: no trace file at .*not-shipped; shipped traces/,
    );
  });
});
