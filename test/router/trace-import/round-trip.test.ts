/**
 * The proof of `trace import`: a trace → prompts with exactly its sharing → Data Capture files in AWS's S3 layout
 * and line format (and an OpenAI request log) → import → a trace with the same ceilings and the same simulated
 * TTFT under cache-aware and sagemaker-prefix-aware.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { compareStrategies } from '../../../router/src/sim/compare-strategies';
import { parseWorkloadSpec } from '../../../router/src/workload';
import { workloadCeilings } from '../../../router/src/report/workload-ceilings';
import { importTrace, writeCapture } from '../../../router/src/trace-import';

jest.setTimeout(120_000);

const SHIPPED = join(__dirname, '..', '..', '..', 'router', 'traces', 'mooncake-synthetic.jsonl');
const SLICE = 240;
const p5 = builtinProfile('p5-llama-3.1-70b');

let dir: string;
let original: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'trace-round-trip-'));
  original = join(dir, 'original.jsonl');
  writeFileSync(original, readFileSync(SHIPPED, 'utf8').split('\n').slice(0, SLICE).join('\n') + '\n');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function filesUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out.push(relative(root, join(d, e.name)));
    }
  };
  walk(root);
  return out.sort();
}

function ceilingsOf(trace: string) {
  return workloadCeilings(parseWorkloadSpec(`trace:${trace}`), { instances: 2 });
}

/** Replayed 4× faster on 2 instances, so queues form and placement matters. */
function ttftOf(trace: string) {
  const { report } = compareStrategies({
    workload: parseWorkloadSpec(`trace:${trace}?speedup=4`),
    policies: [{ name: 'cache-aware' }, { name: 'sagemaker-prefix-aware' }],
    instances: 2,
    profile: p5,
  });
  return Object.fromEntries(
    report.strategies.map((s) => [s.strategy.name, { p50: s.ttftMs.p50!, p90: s.ttftMs.p90! }]),
  );
}

describe('when a trace goes through Data Capture files and back', () => {
  let imported: string;
  let capture: string;

  beforeAll(async () => {
    capture = join(dir, 'capture');
    await writeCapture(parseWorkloadSpec(`trace:${original}`), {
      captureDir: capture,
      encoding: 'alternate',
      endpointName: 'support-llm',
      variantName: 'AllTraffic',
    });
    imported = join(dir, 'imported.jsonl');
    await importTrace({ inputs: [capture], out: imported });
  });

  test('GIVEN the capture directory THEN its files follow the S3 layout ENDPOINT/VARIANT/yyyy/mm/dd/hh/<mm>-<ss>-<mmm>-<uuid>.jsonl and the line format', () => {
    const files = filesUnder(capture);
    expect(files.length).toBeGreaterThan(1);
    for (const f of files)
      expect(f).toMatch(
        /^support-llm\/AllTraffic\/\d{4}\/\d{2}\/\d{2}\/\d{2}\/\d{2}-\d{2}-\d{3}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$/,
      );
    const line = JSON.parse(readFileSync(join(capture, files[0]), 'utf8').split('\n')[0]);
    expect(Object.keys(line).sort()).toEqual(['captureData', 'eventMetadata', 'eventVersion']);
    expect(line.captureData.endpointInput).toEqual({
      observedContentType: 'application/json',
      mode: 'INPUT',
      data: expect.any(String),
      encoding: 'JSON',
    });
    expect(line.captureData.endpointOutput.mode).toBe('OUTPUT');
    expect(line.eventMetadata).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      inferenceTime: '2026-01-01T00:00:00.000Z',
    });
    const second = JSON.parse(readFileSync(join(capture, files[0]), 'utf8').split('\n')[1]);
    expect(second.captureData.endpointInput.encoding).toBe('BASE64');
  });

  test("THEN the ideal and fleet ceilings equal the original trace's within 0.5 points", () => {
    const a = ceilingsOf(original);
    const b = ceilingsOf(imported);
    expect(b.requests).toBe(SLICE);
    expect(Math.abs(a.idealHitRate! - b.idealHitRate!)).toBeLessThanOrEqual(0.005);
    expect(Math.abs(a.fleetHitRate! - b.fleetHitRate!)).toBeLessThanOrEqual(0.005);
  });

  test("THEN cache-aware and sagemaker-prefix-aware P50 and P90 TTFT match the original's within 2 %", () => {
    const a = ttftOf(original);
    const b = ttftOf(imported);
    for (const policy of ['cache-aware', 'sagemaker-prefix-aware']) {
      for (const q of ['p50', 'p90'] as const) {
        const rel = Math.abs(b[policy][q] - a[policy][q]) / a[policy][q];
        expect({ policy, q, rel: rel <= 0.02 }).toEqual({ policy, q, rel: true });
      }
    }
  });

  test('THEN no 8-character piece of any captured prompt is in the trace', () => {
    const trace = readFileSync(imported, 'utf8');
    let checked = 0;
    for (const request of parseWorkloadSpec(`trace:${original}?count=40`).requests()) {
      const text = request.kind === 'chat' ? request.messages.map((m) => m.content).join('') : request.prompt;
      for (let i = 0; i + 8 <= text.length; i += 97) {
        expect(trace.includes(text.slice(i, i + 8))).toBe(false);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  test('THEN, ids being numbered in order of first appearance as Mooncake numbers them, the trace comes back line for line', () => {
    expect(readFileSync(imported, 'utf8')).toBe(
      readFileSync(original, 'utf8').replace(/, /g, ',').replace(/": /g, '":'),
    );
  });
});

describe('when the original trace numbers its blocks in another order', () => {
  test('GIVEN its ids permuted WHEN it goes through an OpenAI request log and back THEN the sharing is the same: equal ceilings, and the canonical numbering', async () => {
    const rows = readFileSync(original, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { hash_ids: number[] });
    const distinct = [...new Set(rows.flatMap((r) => r.hash_ids))];
    const permuted = new Map(distinct.map((id, i) => [id, 1_000_000 + ((i * 7919) % distinct.length) * 3]));
    const shuffled = join(dir, 'shuffled.jsonl');
    writeFileSync(
      shuffled,
      rows.map((r) => JSON.stringify({ ...r, hash_ids: r.hash_ids.map((id) => permuted.get(id)) })).join('\n') + '\n',
    );
    const log = join(dir, 'requests.log.jsonl');
    await writeCapture(parseWorkloadSpec(`trace:${shuffled}?api=completion`), { requestLog: log });
    const back = join(dir, 'from-log.jsonl');
    const report = await importTrace({ inputs: [log], out: back });
    expect(report.formats).toEqual({ datacapture: 0, openai: SLICE });
    expect(report.kinds.completions).toBe(SLICE);
    const a = ceilingsOf(shuffled);
    const b = ceilingsOf(back);
    expect(Math.abs(a.idealHitRate! - b.idealHitRate!)).toBeLessThanOrEqual(0.005);
    expect(Math.abs(a.fleetHitRate! - b.fleetHitRate!)).toBeLessThanOrEqual(0.005);
    expect(readFileSync(back, 'utf8')).toBe(readFileSync(original, 'utf8').replace(/, /g, ',').replace(/": /g, '":'));
  });
});
