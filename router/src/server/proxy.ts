import { once } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { LimitOptions } from '../config';
import type { RoutingDecision } from '../policy';
import {
  eventStream,
  openAiErrorBody,
  RouterError,
  sse,
  type ParsedRequest,
  type RouteMatch,
} from '../protocol';
import type { Backend } from './backend';
import type { RouterMetrics } from './router-metrics';

/** SageMaker reports the production variant that served a request; ours is a single fixed variant. */
export const PRODUCTION_VARIANT = 'AllTraffic';
export const INSTANCE_HEADER = 'x-prefix-router-instance';
export const DECISION_HEADER = 'x-prefix-router-decision';

/** Largest backend error body kept for a ModelError's OriginalMessage. */
const MAX_ORIGINAL_MESSAGE_BYTES = 64 * 1024;

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

const NOT_FORWARDED_UPSTREAM = new Set([...HOP_BY_HOP, 'host', 'content-length', 'expect']);

export interface ForwardRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly route: RouteMatch;
  readonly parsed: ParsedRequest;
  readonly body: Buffer;
  readonly backend: Backend;
  readonly decision: RoutingDecision;
  /** Aborted when the client goes away: cancels the upstream request and any wait on the client. */
  readonly signal: AbortSignal;
  readonly limits: LimitOptions;
  readonly metrics: RouterMetrics;
  /** Called when the backend fails after the response started (for logging). */
  readonly onStreamFailure: (error: unknown) => void;
}

/** The status label of a finished request: the HTTP status, '499' (client left), 'stream_error'. */
export type OutcomeStatus = string;

export function routingHeaders(decision: RoutingDecision): OutgoingHttpHeaders {
  return { [INSTANCE_HEADER]: decision.instance, [DECISION_HEADER]: decision.reason };
}

/**
 * Sends the request to the chosen backend and streams the answer back. Throws (for the caller to answer or
 * retry) only while nothing has been written to the client: connection errors, upstream header timeouts, and
 * `model_error` on the runtime-API paths. Once the response has started, failures are handled here: the
 * stream ends with a terminal error event (SSE or event-stream) or, for a plain body, the connection is cut.
 */
export async function forward(f: ForwardRequest): Promise<OutcomeStatus> {
  const started = performance.now();
  const upstream = await f.backend.pool.request({
    method: 'POST',
    path: `${f.backend.basePath}${f.parsed.upstreamPath}`,
    headers: upstreamRequestHeaders(f.req.headers, f.route, f.parsed),
    body: f.body,
    signal: f.signal,
    headersTimeout: f.limits.upstreamHeadersTimeoutMs,
    bodyTimeout: f.limits.upstreamBodyTimeoutMs,
  });
  const ok = upstream.statusCode >= 200 && upstream.statusCode < 300;
  if (!ok && f.route.framing !== 'passthrough') {
    const text = await readBounded(upstream.body, MAX_ORIGINAL_MESSAGE_BYTES);
    throw new RouterError('model_error', `Received error (${upstream.statusCode}) from the model instance ${f.decision.instance}`, {
      originalStatusCode: upstream.statusCode,
      originalMessage: text,
    });
  }
  const eventStreamFraming = f.route.framing === 'sagemaker-eventstream';
  const upstreamType = upstream.headers['content-type'];
  // Event boundaries can only be found in uncompressed SSE; a compressed stream is passed through as it comes.
  const encoding = firstValue(upstream.headers['content-encoding']);
  const identity = encoding === undefined || encoding === 'identity';
  const aligner = identity && sse.isEventStream(upstreamType) ? new sse.SseEventAligner() : undefined;
  const head: OutgoingHttpHeaders = eventStreamFraming
    ? {
        'content-type': eventStream.EVENT_STREAM_CONTENT_TYPE,
        'x-amzn-sagemaker-content-type': firstValue(upstreamType) ?? 'application/octet-stream',
        'x-amzn-invoked-production-variant': PRODUCTION_VARIANT,
      }
    : responseHeaders(upstream.headers);
  if (f.route.framing === 'sagemaker-invoke') head['x-amzn-invoked-production-variant'] = PRODUCTION_VARIANT;
  Object.assign(head, routingHeaders(f.decision));
  f.res.writeHead(upstream.statusCode, head);

  let first = true;
  try {
    for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
      if (first) {
        first = false;
        f.metrics.upstreamTtftSeconds.observe({ instance: f.backend.id }, (performance.now() - started) / 1000);
      }
      const bytes = aligner === undefined ? chunk : aligner.push(chunk);
      if (bytes.length === 0) continue;
      if (!f.res.write(eventStreamFraming ? eventStream.payloadPartMessage(bytes) : bytes)) {
        await once(f.res, 'drain', { signal: f.signal });
      }
    }
    const rest = aligner?.flush();
    if (rest !== undefined) f.res.write(eventStreamFraming ? eventStream.payloadPartMessage(rest) : rest);
    f.res.end();
    return String(upstream.statusCode);
  } catch (err) {
    if (f.signal.aborted) return '499';
    f.onStreamFailure(err);
    const failure = new RouterError('upstream_stream_failed', `the model instance failed mid-response (${describeUpstreamError(err)})`);
    if (eventStreamFraming) f.res.end(eventStream.modelStreamErrorMessage(failure.message, failure.code));
    else if (aligner !== undefined) f.res.end(sse.sseErrorEvent(openAiErrorBody(failure).error));
    else f.res.destroy();
    return 'stream_error';
  }
}

/** GET passthrough (e.g. /v1/models) to one backend, without routing or in-flight accounting. */
export async function forwardGet(
  res: ServerResponse,
  backend: Backend,
  path: string,
  headers: IncomingHttpHeaders,
  signal: AbortSignal,
  limits: LimitOptions,
): Promise<void> {
  const upstream = await backend.pool.request({
    method: 'GET',
    path: `${backend.basePath}${path}`,
    headers: filterHeaders(headers, NOT_FORWARDED_UPSTREAM, false),
    signal,
    headersTimeout: limits.upstreamHeadersTimeoutMs,
    bodyTimeout: limits.upstreamBodyTimeoutMs,
  });
  const body = Buffer.from(await upstream.body.arrayBuffer());
  const head = responseHeaders(upstream.headers);
  head[INSTANCE_HEADER] = backend.id;
  res.writeHead(upstream.statusCode, head);
  res.end(body);
}

export function upstreamRequestHeaders(headers: IncomingHttpHeaders, route: RouteMatch, parsed: ParsedRequest): Record<string, string | string[]> {
  // SageMaker runtime-API requests carry SigV4 credentials meant for AWS, never for the model container.
  const runtimeApi = route.endpointName !== undefined;
  const out = filterHeaders(headers, NOT_FORWARDED_UPSTREAM, runtimeApi);
  // SageMaker hands the container's bytes to the caller as they are; ask for them uncompressed.
  if (runtimeApi) delete out['accept-encoding'];
  if (parsed.jsonBody) out['content-type'] = 'application/json';
  if (route.framing === 'sagemaker-eventstream') {
    const accept = headers['x-amzn-sagemaker-accept'];
    if (accept !== undefined) out.accept = accept;
  }
  return out;
}

function filterHeaders(headers: IncomingHttpHeaders, drop: ReadonlySet<string>, dropAwsAuth: boolean): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key in headers) {
    const value = headers[key];
    if (value === undefined || drop.has(key)) continue;
    if (dropAwsAuth && (key === 'authorization' || key.startsWith('x-amz-') || key.startsWith('amz-sdk-'))) continue;
    out[key] = value;
  }
  return out;
}

function responseHeaders(headers: Dispatcher.ResponseData['headers']): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const key in headers) {
    const value = headers[key];
    if (value === undefined || HOP_BY_HOP.has(key)) continue;
    out[key] = value;
  }
  return out;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readBounded(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size < maxBytes) chunks.push(chunk.subarray(0, maxBytes - size));
    size += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Error codes of a connection refused before anything was sent: safe to retry elsewhere. */
export function isConnectionRefused(err: unknown): boolean {
  return (err as { code?: unknown })?.code === 'ECONNREFUSED';
}

export function isUpstreamTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

export function describeUpstreamError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return code !== undefined ? `${code}: ${message}` : message;
}
