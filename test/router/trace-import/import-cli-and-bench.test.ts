/**
 * `prefix-router trace import` / `trace write-capture` flags (each refused naming the flag and its range, one test
 * per bound) and `npm run bench:import` at smoke size.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, runImportSpeed } from '../../../router/bench/import-speed';
import { runTraceImport, runWriteCapture } from '../../../router/src/cli/trace-command';

jest.setTimeout(60_000);

let dir: string;
let capture: string;
const quiet = () => undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'trace-cli-'));
  capture = join(dir, 'capture');
  await runWriteCapture(
    { workload: 'shared-system?groups=2&promptsPerGroup=5', captureDir: capture, encoding: 'json' },
    quiet,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const importWith = (flags: Record<string, unknown>) =>
  runTraceImport([capture], { out: join(dir, 'out.jsonl'), ...flags }, quiet);

describe('when trace import flags are at and beyond their bounds', () => {
  test.each([
    ['blockTokens', '16'],
    ['blockTokens', '1000000'],
    ['sampling', '100'],
    ['sampling', '0.5'],
    ['defaultOutputTokens', '1'],
    ['reorderWindow', '0'],
    ['reorderWindow', '86400'],
    ['instances', '1'],
    ['instances', '1024'],
  ])('GIVEN --%s %s THEN the import runs', async (flag, value) => {
    const report = await importWith({ [flag]: value });
    expect(report.requests).toBe(10);
  });

  test.each([
    ['blockTokens', '15', '--block-tokens must be an integer between 16 and 1000000 (got "15")'],
    ['blockTokens', '1000001', '--block-tokens must be an integer between 16 and 1000000 (got "1000001")'],
    ['sampling', '0', '--sampling must be a number greater than 0 and at most 100 (got "0")'],
    ['sampling', '100.5', '--sampling must be a number greater than 0 and at most 100 (got "100.5")'],
    ['defaultOutputTokens', '0', '--default-output-tokens must be an integer between 1 and 1000000 (got "0")'],
    ['reorderWindow', '-1', '--reorder-window must be a number between 0 and 86400 (got "-1")'],
    ['reorderWindow', '86401', '--reorder-window must be a number between 0 and 86400 (got "86401")'],
    ['instances', '0', '--instances must be an integer between 1 and 1024 (got "0")'],
    ['instances', '1025', '--instances must be an integer between 1 and 1024 (got "1025")'],
    ['format', 'csv', '--format must be one of auto, datacapture, openai (got "csv")'],
  ])('GIVEN --%s %s THEN it is refused naming the flag and the range', async (flag, value, message) => {
    await expect(importWith({ [flag]: value })).rejects.toThrow(message);
  });

  test('GIVEN the summary printed THEN it comes before the replay command, which names the trace (with the speedup of a sampled capture)', async () => {
    const printed: string[] = [];
    await runTraceImport([capture], { out: join(dir, 'sampled.jsonl'), sampling: '50' }, (t) => printed.push(t));
    expect(printed[0]).toMatch(/^trace: .*sampled\.jsonl\n {2}requests {8}10 from 1 file/);
    expect(printed[1]).toBe(
      `replay: prefix-router simulate --workload 'trace:${join(dir, 'sampled.jsonl')}?speedup=2' --instances 7`,
    );
  });

  test('GIVEN write-capture without a destination or with an unknown encoding THEN it is refused', async () => {
    await expect(runWriteCapture({ workload: 'short-chat' }, quiet)).rejects.toThrow(
      'give --capture-dir DIR, --request-log FILE, or both',
    );
    await expect(
      runWriteCapture({ workload: 'short-chat', requestLog: join(dir, 'x.jsonl'), encoding: 'gzip' }, quiet),
    ).rejects.toThrow('--encoding must be one of json, base64, alternate (got "gzip")');
  });
});

describe('when the import benchmark runs (smoke size)', () => {
  test('GIVEN 3,000 requests in files of 1,000 THEN it imports them all in a child and reports wall, CPU and RSS against the targets', async () => {
    const keep = join(dir, 'bench');
    const { result, markdown } = await runImportSpeed({ requests: 3000, perFile: 1000, prefixes: 20, keep });
    expect(result.input.files).toBe(3);
    expect(result.summary).toContain('requests        3,000 from 3 file(s)');
    expect(result.wallSeconds).toBeGreaterThan(0);
    expect(result.cpuSeconds).toBeGreaterThan(0);
    expect(result.maxRssMb).toBeGreaterThan(10);
    expect(readFileSync(join(keep, 'trace.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3000);
    expect(markdown).toMatch(/^\| 3,000 \| [\d.]+ GB \| 3 \| [\d.]+ s \| [\d.]+ s \|/m);
  });

  test('GIVEN the documented flags THEN they parse; bad ones are refused naming the flag', () => {
    expect(parseArgs([])).toEqual({ requests: 1_000_000, perFile: 10_000, prefixes: 200, keep: undefined });
    expect(parseArgs(['--requests', '5', '--per-file', '2', '--prefixes', '3', '--keep', '/tmp/x'])).toEqual({
      requests: 5,
      perFile: 2,
      prefixes: 3,
      keep: '/tmp/x',
    });
    expect(() => parseArgs(['--requests', '0'])).toThrow(
      '--requests must be an integer between 1 and 100000000 (got "0")',
    );
    expect(() => parseArgs(['--fast', '1'])).toThrow(/unknown flag "--fast"/);
  });
});
