import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { tokenCount } from '../state/block-hash';
import { toOpenAiBody, type WorkloadRequest } from '../workload/workload-request';
import type { Workload } from '../workload/workload';

/**
 * Writes a workload as SageMaker would have captured it (the files `trace import` reads), so the import can be
 * rehearsed without an endpoint and tested end to end: Data Capture files in AWS's S3 layout,
 * `OUT/ENDPOINT/VARIANT/yyyy/mm/dd/hh/<mm>-<ss>-<mmm>-<event id>.jsonl` (one file per `fileSeconds` of
 * inference time), and/or an OpenAI request log. Each request's body is the OpenAI body the benchmark would send
 * (not streamed), its response a chat or completion object whose usage reports `maxTokens` generated tokens.
 * Synthetic text only: this never sees a real prompt.
 */
export type CaptureEncodingChoice = 'json' | 'base64' | 'alternate';

export interface CaptureWriteOptions {
  /** Directory of the Data Capture files (the DestinationS3Uri's local stand-in); none when undefined. */
  readonly captureDir?: string;
  /** An OpenAI request log file to write too; none when undefined. */
  readonly requestLog?: string;
  readonly endpointName?: string;
  readonly variantName?: string;
  /** Time of the workload's first request (default 2026-01-01T00:00:00Z, fixed so files are reproducible). */
  readonly startMs?: number;
  /** JSON (content type listed in JsonContentTypes), BASE64 (not listed), or alternating per request. */
  readonly encoding?: CaptureEncodingChoice;
  /** Start a new capture file after this many seconds of inference time (default 60). */
  readonly fileSeconds?: number;
  /** Capture the response too (CaptureMode Output), default true. */
  readonly captureOutput?: boolean;
  readonly model?: string;
  readonly maxRequests?: number;
}

export interface CaptureWriteResult {
  readonly requests: number;
  readonly files: readonly string[];
}

export const DEFAULT_CAPTURE_START_MS = Date.UTC(2026, 0, 1);

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** A deterministic event id shaped as a UUID (Data Capture's eventId is one). */
function eventId(index: number): string {
  const h = createHash('sha256').update(`capture-event-${index}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The S3 key (relative to the capture prefix) of the file a request at `ms` starts. */
export function captureFileKey(endpointName: string, variantName: string, ms: number, id: string): string {
  const d = new Date(ms);
  return [
    endpointName,
    variantName,
    String(d.getUTCFullYear()),
    pad(d.getUTCMonth() + 1),
    pad(d.getUTCDate()),
    pad(d.getUTCHours()),
    `${pad(d.getUTCMinutes())}-${pad(d.getUTCSeconds())}-${pad(d.getUTCMilliseconds(), 3)}-${id}.jsonl`,
  ].join('/');
}

function responseBody(request: WorkloadRequest, id: string): Record<string, unknown> {
  const promptTokens = tokenCount(
    request.kind === 'chat' ? request.messages.map((m) => m.content).join('') : request.prompt,
  );
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: request.maxTokens,
    total_tokens: promptTokens + request.maxTokens,
  };
  return request.kind === 'chat'
    ? {
        id,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'length' }],
        usage,
      }
    : { id, object: 'text_completion', choices: [{ index: 0, text: '', finish_reason: 'length' }], usage };
}

function side(mode: 'INPUT' | 'OUTPUT', json: string, base64: boolean): Record<string, string> {
  return base64
    ? {
        observedContentType: 'application/json',
        mode,
        data: Buffer.from(json, 'utf8').toString('base64'),
        encoding: 'BASE64',
      }
    : { observedContentType: 'application/json', mode, data: json, encoding: 'JSON' };
}

async function put(stream: WriteStream, line: string): Promise<void> {
  if (!stream.write(line)) await once(stream, 'drain');
}

async function close(stream: WriteStream | undefined): Promise<void> {
  if (stream === undefined) return;
  stream.end();
  await once(stream, 'finish');
}

export async function writeCapture(workload: Workload, options: CaptureWriteOptions): Promise<CaptureWriteResult> {
  const endpoint = options.endpointName ?? 'my-llm';
  const variant = options.variantName ?? 'AllTraffic';
  const start = options.startMs ?? DEFAULT_CAPTURE_START_MS;
  const fileMs = (options.fileSeconds ?? 60) * 1000;
  const model = options.model ?? 'my-model';
  const files: string[] = [];
  let capture: WriteStream | undefined;
  let captureFileStart = -Infinity;
  let log: WriteStream | undefined;
  if (options.requestLog !== undefined) {
    mkdirSync(dirname(options.requestLog), { recursive: true });
    log = createWriteStream(options.requestLog);
    files.push(options.requestLog);
  }
  let count = 0;
  try {
    for (const request of workload.requests()) {
      if (options.maxRequests !== undefined && count >= options.maxRequests) break;
      const ms = start + request.arrivalMs;
      const id = eventId(request.index);
      const body = JSON.stringify(toOpenAiBody(request, { model, stream: false, ignoreEos: false }));
      const response = JSON.stringify(responseBody(request, `cmpl-${id}`));
      if (options.captureDir !== undefined) {
        if (capture === undefined || ms - captureFileStart >= fileMs) {
          await close(capture);
          const file = join(options.captureDir, captureFileKey(endpoint, variant, ms, id));
          mkdirSync(dirname(file), { recursive: true });
          capture = createWriteStream(file);
          captureFileStart = ms;
          files.push(file);
        }
        const base64 = options.encoding === 'base64' || (options.encoding === 'alternate' && request.index % 2 === 1);
        const captureData: Record<string, unknown> = { endpointInput: side('INPUT', body, base64) };
        if (options.captureOutput ?? true) captureData.endpointOutput = side('OUTPUT', response, base64);
        const line = {
          captureData,
          eventMetadata: { eventId: id, inferenceTime: new Date(ms).toISOString() },
          eventVersion: '0',
        };
        await put(capture, `${JSON.stringify(line)}\n`);
      }
      if (log !== undefined) {
        const path = request.kind === 'chat' ? '/v1/chat/completions' : '/v1/completions';
        await put(
          log,
          `{"timestamp":${JSON.stringify(new Date(ms).toISOString())},"url":"${path}","body":${body},"response":${response}}\n`,
        );
      }
      count++;
    }
  } finally {
    await close(capture);
    await close(log);
  }
  return { requests: count, files };
}
