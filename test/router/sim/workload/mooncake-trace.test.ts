import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheableHitTokens } from '../../../../router/src/state/block-hash';
import { CeilingTracker } from '../../../../router/src/sim/report/ceilings';
import {
  parseWorkloadSpec,
  readLines,
  scanTrace,
  TraceFormatError,
  traceBlockText,
  traceWorkload,
  type WorkloadRequest,
} from '../../../../router/src/sim/workload';

const EXCERPT = join(__dirname, 'fixtures', 'mooncake-excerpt.jsonl');
const FULL_TRACE = join(__dirname, '..', '..', '..', '..', 'router', 'traces', 'mooncake-synthetic.jsonl');

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

describe('when replaying a Mooncake trace', () => {
  const requests = Array.from(traceWorkload(EXCERPT, { api: 'completion' }).requests());

  test('GIVEN the excerpt THEN one request per line, arrivals at the timestamps, prompts of input_length tokens and max_tokens of output_length', () => {
    expect(requests).toHaveLength(200);
    requests.forEach((r, i) => {
      expect(r.arrivalMs).toBe(lines[i]!.timestamp);
      expect(promptOf(r)).toHaveLength(lines[i]!.input_length * 4);
      expect(r.maxTokens).toBe(lines[i]!.output_length);
    });
  });

  test('GIVEN hash ids THEN each prompt is its blocks’ texts in order, so shared leading ids are shared leading text', () => {
    requests.forEach((r, i) => {
      const ids = lines[i]!.hash_ids;
      const prompt = promptOf(r);
      ids.forEach((id, b) => {
        const block = traceBlockText(id, 512);
        expect(prompt.slice(b * 2048, (b + 1) * 2048)).toBe(block.slice(0, Math.min(2048, prompt.length - b * 2048)));
      });
    });
  });

  test('GIVEN the excerpt THEN the ideal ceiling equals the one computed from hash ids alone (text identity end to end)', () => {
    // Model from ids: for every prefix of ids, the most tokens of its last block any earlier request had.
    const seen = new Map<string, number>();
    const tracker = new CeilingTracker({ fleetCapacityBlocks: 1 });
    lines.forEach((line, i) => {
      let matched = 0;
      let key = '';
      for (let b = 0; b < line.hash_ids.length; b++) {
        key += `${line.hash_ids[b]},`;
        const mine = Math.min(512, line.input_length - b * 512);
        const before = seen.get(key) ?? 0;
        const full16 = Math.floor(Math.min(before, mine) / 16) * 16;
        matched += full16;
        if (full16 < 512) break;
      }
      const expected = cacheableHitTokens(matched / 16, line.input_length);
      key = '';
      for (let b = 0; b < line.hash_ids.length; b++) {
        key += `${line.hash_ids[b]},`;
        seen.set(key, Math.max(seen.get(key) ?? 0, Math.min(512, line.input_length - b * 512)));
      }
      expect(tracker.observe(promptOf(requests[i]!)).idealHitTokens).toBe(expected);
    });
    expect(tracker.result().idealHitTokens).toBeGreaterThan(0);
  });

  test('GIVEN speedup=2 THEN every arrival is half its timestamp; GIVEN duration THEN later requests are left out', () => {
    const fast = Array.from(traceWorkload(EXCERPT, { speedup: 2, duration: 10 }).requests());
    expect(fast.length).toBe(lines.filter((l) => l.timestamp / 2 < 10_000).length);
    fast.forEach((r, i) => expect(r.arrivalMs).toBe(lines[i]!.timestamp / 2));
    expect(traceWorkload(EXCERPT, { speedup: 2 }).load).toEqual({ mode: 'open-trace', speedup: 2 });
  });

  test('GIVEN the chat api (default) THEN the prompt is one user message', () => {
    const [r] = Array.from(traceWorkload(EXCERPT, { count: 1 }).requests());
    expect(r!.kind).toBe('chat');
    if (r!.kind === 'chat') expect(r!.messages).toEqual([{ role: 'user', content: promptOf(requests[0]!) }]);
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
  const good = (t: number, ids: number[] = [1, 2]) => JSON.stringify({ timestamp: t, input_length: 600, output_length: 5, hash_ids: ids });
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
    expect(problems[0]!.message).toMatch(/^not valid JSON/);
    expect(problems[1]!.message).toBe('output_length must be an integer ≥ 1 (got 0)');
    expect(problems[2]!.message).toBe('hash_ids has 1 ids but input_length 600 needs 2 blocks of 512 tokens');
    expect(problems[3]!.message).toBe("timestamp 3 is before the previous line's 20 (lines must be in arrival order)");
    expect(problems[4]!.message).toBe('not a JSON object');
    expect((error as Error).message).toMatch(/^trace .* has 5 bad lines \(pass skipBadLines=true to skip them\): line 2: not valid JSON/);
    expect((error as Error).message).toContain('line 8: not a JSON object');
  });

  test('GIVEN skipBadLines=true THEN the good lines replay and the notes list the skipped ones', () => {
    const workload = parseWorkloadSpec(`trace:${path}?skipBadLines=true`);
    expect(Array.from(workload.requests()).map((r) => r.arrivalMs)).toEqual([0, 20, 30]);
    expect(workload.notes).toEqual([expect.stringMatching(/^skipped 5 bad trace line\(s\): line 2: not valid JSON.*line 8: not a JSON object$/)]);
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
