import type { JsonObject } from '../protocol/json-body';
import { UnusableRequest, type CapturedRequest, type CapturedResponse } from './captured-request';

/**
 * The two line formats the importer reads.
 *
 * SageMaker Data Capture (https://docs.aws.amazon.com/sagemaker/latest/dg/model-monitor-data-capture.html): one
 * JSON object per line, `captureData.endpointInput` and `captureData.endpointOutput` each with
 * `observedContentType`, `mode` (INPUT / OUTPUT), `data` and `encoding`: JSON and CSV store the payload as text
 * (content types listed in the endpoint config's CaptureContentTypeHeader), BASE64 stores its bytes base64-encoded
 * (every other content type, and all of them when no CaptureContentTypeHeader is set:
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DataCaptureConfig.html). `eventMetadata` has
 * `eventId`, `inferenceTime` (ISO 8601) and optional `inferenceId`; `eventVersion` is "0". Data Capture sees
 * InvokeEndpoint bodies, so they are read as the router reads /invocations bodies.
 *
 * OpenAI request logs (what a gateway or application writes): one JSON object per line with the request `body`
 * (or `request`) as an object, a time (`timestamp`, `time`, `created_at` or `created`: ISO 8601, or epoch seconds or
 * milliseconds), optionally the `url` / `path` it was sent to, the `headers` it carried and the `response` (or its
 * `usage`). The OpenAI Batch API's request lines (`custom_id`, `method`, `url`, `body`) are of this shape.
 */
export type CaptureFormat = 'datacapture' | 'openai';

export const CAPTURE_FORMATS = ['auto', 'datacapture', 'openai'] as const;
export type CaptureFormatOption = (typeof CAPTURE_FORMATS)[number];

/** Data Capture's encodings (CaptureContentTypeHeader decides which a content type gets). */
export const CAPTURE_ENCODINGS = ['JSON', 'CSV', 'BASE64'] as const;

function parseLine(text: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The parser's message quotes the line: never shown (it may be prompt text).
    throw new UnusableRequest('not valid JSON', 'malformed-line');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UnusableRequest('not a JSON object', 'malformed-line');
  return value as JsonObject;
}

/** The format of a file, from its first line: Data Capture lines have `captureData`. */
export function detectFormat(firstLine: string): CaptureFormat {
  try {
    const o = JSON.parse(firstLine) as JsonObject;
    return typeof o === 'object' && o !== null && 'captureData' in o ? 'datacapture' : 'openai';
  } catch {
    return firstLine.includes('"captureData"') ? 'datacapture' : 'openai';
  }
}

/**
 * The capture format a line is written in, or undefined when it is neither: the line is read as detectFormat says,
 * and counts as that format when it parses, or fails only on its content (a bad timestamp, base64 or body kind)
 * rather than its shape. So a Mooncake trace line (no request body) or any other JSON is neither.
 */
export function recognizeCaptureLine(text: string): CaptureFormat | undefined {
  const format = detectFormat(text);
  try {
    parseCapturedLine(format, text);
  } catch (err) {
    if (!(err instanceof UnusableRequest) || err.kind === 'malformed-line') return undefined;
  }
  return format;
}

/** How each format is called in messages to users, with its article. */
export const CAPTURE_FORMAT_TITLES: Readonly<Record<CaptureFormat, string>> = {
  datacapture: 'a SageMaker Data Capture file',
  openai: 'an OpenAI request log',
};

export function parseCapturedLine(format: CaptureFormat, text: string): CapturedRequest {
  return format === 'datacapture' ? parseDataCaptureLine(text) : parseRequestLogLine(text);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeData(side: JsonObject, which: string): Uint8Array {
  const data = side.data;
  if (typeof data !== 'string')
    throw new UnusableRequest(`captureData.${which}.data is not a string`, 'malformed-line');
  const encoding = side.encoding;
  if (encoding === 'JSON' || encoding === 'CSV') return Buffer.from(data, 'utf8');
  if (encoding === 'BASE64') {
    // Buffer's decoder skips what is not base64; a capture that does not decode exactly is damaged.
    if (data.length % 4 !== 0 || !BASE64.test(data))
      throw new UnusableRequest(`captureData.${which}.data is not valid base64`, 'bad-base64');
    return Buffer.from(data, 'base64');
  }
  throw new UnusableRequest(
    `captureData.${which}.encoding must be one of ${CAPTURE_ENCODINGS.join(', ')} (got ${JSON.stringify(String(encoding).slice(0, 20))})`,
    'malformed-line',
  );
}

function isoTime(value: unknown, field: string): number {
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms)) throw new UnusableRequest(`${field} is not an ISO 8601 time`, 'bad-timestamp');
  return ms;
}

export function parseDataCaptureLine(text: string): CapturedRequest {
  const line = parseLine(text);
  const capture = line.captureData as JsonObject | undefined;
  if (typeof capture !== 'object' || capture === null)
    throw new UnusableRequest('no captureData object', 'malformed-line');
  const input = capture.endpointInput as JsonObject | undefined;
  if (typeof input !== 'object' || input === null) {
    throw new UnusableRequest(
      'no captureData.endpointInput (was the endpoint capturing Output only?)',
      'malformed-line',
    );
  }
  const metadata = line.eventMetadata as JsonObject | undefined;
  const timestampMs = isoTime(metadata?.inferenceTime, 'eventMetadata.inferenceTime');
  const output = capture.endpointOutput as JsonObject | undefined;
  let response: CapturedResponse | undefined;
  if (typeof output === 'object' && output !== null) {
    try {
      response = { body: decodeData(output, 'endpointOutput'), contentType: stringOr(output.observedContentType) };
    } catch {
      // A damaged response loses only the output length (the request's max_tokens stands in), not the request.
      response = undefined;
    }
  }
  return {
    timestampMs,
    route: 'invocations',
    body: decodeData(input, 'endpointInput'),
    contentType: stringOr(input.observedContentType),
    response,
  };
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Epoch seconds below this, milliseconds above (1e11 s is the year 5138; 1e11 ms is 1973). */
const EPOCH_MS_THRESHOLD = 1e11;

function logTime(line: JsonObject): number {
  const value = line.timestamp ?? line.time ?? line.created_at ?? line.created;
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0)
    return value < EPOCH_MS_THRESHOLD ? value * 1000 : value;
  if (typeof value === 'string') {
    const asNumber = Number(value);
    if (value.trim() !== '' && Number.isFinite(asNumber))
      return asNumber < EPOCH_MS_THRESHOLD ? asNumber * 1000 : asNumber;
    return isoTime(value, 'timestamp');
  }
  throw new UnusableRequest('no timestamp, time, created_at or created field', 'bad-timestamp');
}

function routeOf(url: unknown, body: JsonObject): CapturedRequest['route'] {
  if (typeof url === 'string') {
    const path = url.split('?')[0];
    if (path.endsWith('/chat/completions')) return 'chat';
    if (path.endsWith('/completions')) return 'completions';
    if (path.endsWith('/invocations') || path.endsWith('/invocations-response-stream')) return 'invocations';
  }
  if (body.messages !== undefined) return 'chat';
  if (body.prompt !== undefined) return 'completions';
  return 'invocations';
}

function lowerCaseHeaders(value: unknown): Record<string, string> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as JsonObject)) if (typeof v === 'string') out[k.toLowerCase()] = v;
  return out;
}

export function parseRequestLogLine(text: string): CapturedRequest {
  const line = parseLine(text);
  const body = (line.body ?? line.request) as JsonObject | undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new UnusableRequest('no request body object (body or request)', 'malformed-line');
  const timestampMs = logTime(line);
  const headers = lowerCaseHeaders(line.headers) ?? {};
  if (typeof line.prefix_aware_id === 'string') headers['x-amzn-sagemaker-prefix-aware-id'] = line.prefix_aware_id;
  let response: CapturedResponse | undefined;
  const r = line.response as JsonObject | undefined;
  if (typeof r === 'object' && r !== null) {
    const inner = r.body;
    response = { body: typeof inner === 'object' && inner !== null ? (inner as JsonObject) : r };
  } else if (typeof line.usage === 'object' && line.usage !== null) {
    response = { body: { usage: line.usage } };
  }
  return { timestampMs, route: routeOf(line.url ?? line.path ?? line.endpoint, body), body, headers, response };
}
