import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../router/src/common/config-error';
import { parseBenchArgv } from '../../../router/src/cli/bench-flags';
import { parsePlanFlags } from '../../../router/src/cli/plan-command';
import { parseSimulateFlags } from '../../../router/src/cli/simulate-command';
import { runTraceImport } from '../../../router/src/cli/trace-command';
import { recognizeCaptureFile } from '../../../router/src/cli/workload-flag';
import { recognizeCaptureLine } from '../../../router/src/trace-import/capture-formats';

const PROMPT = 'You are a support assistant for a bicycle shop. '.repeat(40);
const chat = (question: string) => ({
  model: 'm',
  messages: [
    { role: 'system', content: PROMPT },
    { role: 'user', content: question },
  ],
  max_tokens: 16,
});

/** An OpenAI request log, as a gateway writes one: a time, the URL and the request body per line. */
function requestLogLine(second: number): string {
  return JSON.stringify({
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
    url: '/v1/chat/completions',
    body: chat(`question ${second}?`),
  });
}

/** A SageMaker Data Capture line (docs.aws.amazon.com/sagemaker/latest/dg/model-monitor-data-capture.html). */
function dataCaptureLine(second: number): string {
  const data = JSON.stringify(chat(`question ${second}?`));
  return JSON.stringify({
    captureData: { endpointInput: { observedContentType: 'application/json', mode: 'INPUT', data, encoding: 'JSON' } },
    eventMetadata: { eventId: `e${second}`, inferenceTime: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() },
    eventVersion: '0',
  });
}

function fileOf(name: string, lines: string[]): string {
  const path = join(mkdtempSync(join(tmpdir(), 'workload-flag-')), name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const range = (n: number) => [...Array(n).keys()];

function errorOf(parse: () => unknown): Error {
  try {
    parse();
  } catch (err) {
    return err as Error;
  }
  throw new Error('no error');
}

describe('when a capture file is passed as trace:FILE', () => {
  test.each([
    ['an OpenAI request log', 'requests.jsonl', requestLogLine],
    ['a SageMaker Data Capture file', 'capture.jsonl', dataCaptureLine],
  ])(
    'GIVEN %s of 50 lines WHEN simulate parses it THEN one error names the format and the import command, no per-line errors',
    (what, name, line) => {
      const path = fileOf(name, range(50).map(line));
      const error = errorOf(() => parseSimulateFlags({ workload: `trace:${path}` }));
      expect(error).toBeInstanceOf(ConfigError);
      const trace = path.replace(/\.jsonl$/, '-trace.jsonl');
      expect(error.message).toBe(
        `trace:${path} is ${what}, not a replayable trace; import it first (the trace keeps block hashes and lengths, no prompt text):\n` +
          `    prefix-router trace import --out ${trace} ${path}\n` +
          `  then use --workload trace:${trace}`,
      );
      expect(error.message).not.toMatch(/line \d+:/);
    },
  );

  test('GIVEN skipBadLines=true THEN the capture is still recognized (not "holds no request")', () => {
    const path = fileOf('requests.jsonl', range(3).map(requestLogLine));
    expect(() => parseSimulateFlags({ workload: `trace:${path}?skipBadLines=true` })).toThrow(
      `trace:${path} is an OpenAI request log, not a replayable trace`,
    );
  });

  test('GIVEN bench and plan THEN they give the same error', () => {
    const path = fileOf('requests.jsonl', range(3).map(requestLogLine));
    expect(() => parseBenchArgv(['--url', 'http://127.0.0.1:8080', '--workload', `trace:${path}`])).toThrow(
      `--workload: trace:${path} is an OpenAI request log`,
    );
    expect(() => parsePlanFlags({ slo: ['p90-ttft<=1s'], workload: `trace:${path}` })).toThrow(
      `trace:${path} is an OpenAI request log`,
    );
  });

  test('GIVEN a path with a space THEN the command quotes it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'workload flag '));
    const path = join(dir, 'my log.jsonl');
    writeFileSync(path, `${requestLogLine(0)}\n`);
    expect(() => parseSimulateFlags({ workload: `trace:${path}` })).toThrow(
      `prefix-router trace import --out '${join(dir, 'my log-trace.jsonl')}' '${path}'`,
    );
  });

  test('GIVEN the suggested command WHEN run THEN the file it writes simulates', async () => {
    const path = fileOf('requests.jsonl', range(20).map(requestLogLine));
    const trace = path.replace(/\.jsonl$/, '-trace.jsonl');
    await runTraceImport([path], { out: trace }, () => undefined);
    expect(parseSimulateFlags({ workload: `trace:${trace}` }).workload.expectedRequests).toBe(20);
  });

  test('GIVEN a Mooncake trace with bad lines THEN the per-line error is kept', () => {
    const path = fileOf('broken.jsonl', [
      JSON.stringify({ timestamp: 0, input_length: 0, output_length: 1, hash_ids: [] }),
    ]);
    expect(() => parseSimulateFlags({ workload: `trace:${path}` })).toThrow(
      /has 1 bad line .*line 1: input_length must be an integer ≥ 1/,
    );
  });

  test('GIVEN a capture line first and then Mooncake lines THEN the file is not taken for a capture', () => {
    const path = fileOf('mixed.jsonl', [
      requestLogLine(0),
      JSON.stringify({ timestamp: 0, input_length: 10, output_length: 1, hash_ids: [0] }),
    ]);
    expect(recognizeCaptureFile(path)).toBeUndefined();
    expect(() => parseSimulateFlags({ workload: `trace:${path}` })).toThrow(/has 1 bad line/);
  });
});

describe('when a single line is recognized', () => {
  test.each([
    [
      'a Mooncake trace line',
      undefined,
      JSON.stringify({ timestamp: 0, input_length: 10, output_length: 1, hash_ids: [0] }),
    ],
    ['any other JSON object', undefined, '{"foo":1}'],
    ['text that is not JSON', undefined, 'hello'],
    ['an OpenAI request log line', 'openai', requestLogLine(0)],
    [
      'an OpenAI Batch API line (no time: bad content, right shape)',
      'openai',
      JSON.stringify({ custom_id: 'r1', method: 'POST', url: '/v1/chat/completions', body: chat('q') }),
    ],
    ['a Data Capture line', 'datacapture', dataCaptureLine(0)],
  ])('GIVEN %s THEN it is recognized as %p', (_what, format, line) => {
    expect(recognizeCaptureLine(line)).toBe(format);
  });
});
