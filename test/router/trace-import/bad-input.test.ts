/**
 * Bad input is counted and listed by file and line, never aborting the import unless nothing is usable;
 * --strict stops at the first bad line.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImportFailed, importTrace } from '../../../router/src/trace-import';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trace-bad-input-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const PROMPT = 'You are a support assistant for a bicycle shop. '.repeat(60);

function captureLine(timeIso: string, input: Record<string, unknown>, output?: Record<string, unknown>): string {
  const captureData: Record<string, unknown> = {
    endpointInput: { observedContentType: 'application/json', mode: 'INPUT', encoding: 'JSON', ...input },
  };
  if (output)
    captureData.endpointOutput = {
      observedContentType: 'application/json',
      mode: 'OUTPUT',
      encoding: 'JSON',
      ...output,
    };
  return JSON.stringify({ captureData, eventMetadata: { eventId: 'e', inferenceTime: timeIso }, eventVersion: '0' });
}

const chat = (text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'm', messages: [{ role: 'user', content: text }], max_tokens: 64, ...extra });
const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();

function write(name: string, lines: string[], trailingNewline = true): string {
  const file = join(dir, 'capture', name);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, lines.join('\n') + (trailingNewline ? '\n' : ''));
  return file;
}

describe('when capture files hold every kind of bad line', () => {
  test('GIVEN malformed JSON, bad base64, an unknown content type, an embedding body, a bad time and a truncated last line THEN each is counted by kind and listed by file and line, and the good lines make the trace', async () => {
    const a = write('00/a.jsonl', [
      captureLine(at(0), { data: chat(PROMPT) }),
      '{"captureData": {"endpointInput": ',
      captureLine(at(1), { data: 'bm90IGJhc2U2NA=!', encoding: 'BASE64' }),
      captureLine(at(2), { data: 'AAAA', encoding: 'BASE64', observedContentType: 'image/png' }),
      captureLine(at(3), { data: JSON.stringify({ input: ['embed me'] }) }),
      captureLine('yesterday', { data: chat(PROMPT) }),
      captureLine(at(4), { data: chat(`${PROMPT} second`) }),
    ]);
    const b = write(
      '01/b.jsonl',
      [captureLine(at(5), { data: chat(PROMPT) }), captureLine(at(6), { data: chat(PROMPT) }).slice(0, 50)],
      false,
    );
    const out = join(dir, 'trace.jsonl');
    const report = await importTrace({ inputs: [join(dir, 'capture')], out });
    expect(report.requests).toBe(3);
    expect(report.problemCounts).toEqual({
      'malformed-line': 1,
      'bad-base64': 1,
      'unknown-content-type': 1,
      'not-a-generation-body': 1,
      'bad-timestamp': 1,
      'truncated-last-line': 1,
    });
    expect(report.problems.map((p) => `${p.source}:${p.lineNumber}:${p.kind}`)).toEqual([
      `${a}:2:malformed-line`,
      `${a}:3:bad-base64`,
      `${a}:4:unknown-content-type`,
      `${a}:5:not-a-generation-body`,
      `${a}:6:bad-timestamp`,
      `${b}:2:truncated-last-line`,
    ]);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(3);
  });

  test('GIVEN requests older than what was already written, beyond the reorder window THEN each is listed as out of order and kept at the time written so far', async () => {
    // 100 and 101 are written once 200 is seen (5 s window); 10 comes after them.
    const file = write(
      '00/late.jsonl',
      [100, 101, 200, 10].map((t) => captureLine(at(t), { data: chat(PROMPT) })),
    );
    const out = join(dir, 'trace.jsonl');
    const report = await importTrace({ inputs: [join(dir, 'capture')], out, reorderWindowMs: 5_000 });
    expect(report.requests).toBe(4);
    expect(report.problems).toEqual([expect.objectContaining({ source: file, lineNumber: 4, kind: 'out-of-order' })]);
    const times = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).timestamp);
    expect(times).toEqual([0, 1000, 1000, 100_000]);
  });

  test('GIVEN the same requests within the reorder window THEN they are put in time order, nothing reported', async () => {
    write(
      '00/late.jsonl',
      [100, 101, 200, 10].map((t) => captureLine(at(t), { data: chat(PROMPT) })),
    );
    const out = join(dir, 'trace.jsonl');
    const report = await importTrace({ inputs: [join(dir, 'capture')], out, reorderWindowMs: 300_000 });
    expect(report.problemTotal).toBe(0);
    expect(
      readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).timestamp),
    ).toEqual([0, 90_000, 91_000, 190_000]);
  });

  test('GIVEN log files whose names do not sort by time (app.log, app.log.1, app.log.2 as logrotate names them) THEN they are read oldest first', async () => {
    const log = (s: number) =>
      JSON.stringify({ timestamp: at(s), url: '/v1/chat/completions', body: JSON.parse(chat(PROMPT)) });
    write('app.log', [log(200), log(201)]);
    write('app.log.1', [log(100), log(101)]);
    write('app.log.2', [log(0), log(1)]);
    const out = join(dir, 'trace.jsonl');
    const report = await importTrace({ inputs: [join(dir, 'capture')], out, reorderWindowMs: 0 });
    expect(report.problemTotal).toBe(0);
    expect(
      readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).timestamp),
    ).toEqual([0, 1000, 100_000, 101_000, 200_000, 201_000]);
  });

  test('GIVEN --strict THEN the first bad line stops the import, naming file and line, and no trace is left', async () => {
    const a = write('00/a.jsonl', [captureLine(at(0), { data: chat(PROMPT) }), 'not json', 'not json either']);
    const out = join(dir, 'trace.jsonl');
    await expect(importTrace({ inputs: [a], out, strict: true })).rejects.toThrow(
      `${a}:2: not valid JSON (--strict stops at the first bad line)`,
    );
    expect(() => readFileSync(out)).toThrow(/ENOENT/);
    expect(() => readFileSync(`${out}.partial`)).toThrow(/ENOENT/);
  });

  test('GIVEN nothing usable THEN the import fails listing what was wrong, and no trace is written', async () => {
    const a = write('00/a.jsonl', ['nope', captureLine(at(0), { data: JSON.stringify({ input: 'x' }) })]);
    const out = join(dir, 'trace.jsonl');
    const failure = importTrace({ inputs: [a], out });
    await expect(failure).rejects.toBeInstanceOf(ImportFailed);
    await expect(failure).rejects.toThrow(
      `nothing usable in 1 file(s) (2 line(s) read, 2 bad): ${a}:1: not valid JSON; ${a}:2:`,
    );
    expect(() => readFileSync(out)).toThrow(/ENOENT/);
  });

  test('GIVEN an input path that does not exist THEN the error names it', async () => {
    await expect(importTrace({ inputs: [join(dir, 'missing')], out: join(dir, 't.jsonl') })).rejects.toThrow(
      `cannot read ${join(dir, 'missing')}: ENOENT`,
    );
  });
});
