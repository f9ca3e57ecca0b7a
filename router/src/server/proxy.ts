import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { LimitOptions, RoutingHeaderMode } from '../config';
import type { ReleaseOutcome, RoutingDecision } from '../policy';
import { eventStream, openAiErrorBody, RouterError, sse, type ParsedRequest, type RouteMatch } from '../protocol';
import type { Backend } from './backend';
import type { RouterMetrics } from './router-metrics';
import type { UsageScanner } from './usage-scanner';
import { API_KEY_HEADER } from '../common/api-keys';

/** SageMaker reports the production variant that served a request; ours is a single fixed variant. */
export const PRODUCTION_VARIANT = 'AllTraffic';
import {
  CUSTOM_ATTRIBUTES_HEADER,
  DECISION_HEADER,
  DECISION_TIME_HEADER,
  INSTANCE_HEADER,
  PREDICTED_CACHED_HEADER,
} from '../protocol/routing-headers';
export { CUSTOM_ATTRIBUTES_HEADER, DECISION_HEADER, DECISION_TIME_HEADER, INSTANCE_HEADER, PREDICTED_CACHED_HEADER };

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

/**
 * Backend answer headers never passed to a client: cookies (an engine has no session with the router's clients, and
 * a chained router's cookie would cross tenants) and another router's x-prefix-router-* headers (a router behind
 * this one speaks about its own engines; only this router's headers, under its --routing-headers, go out).
 */
const NOT_FORWARDED_DOWNSTREAM = new Set([...HOP_BY_HOP, 'set-cookie']);
const ROUTING_HEADER_PREFIX = 'x-prefix-router-';

/** The router's own credential header never reaches an engine. */
const NOT_FORWARDED_UPSTREAM = new Set([...HOP_BY_HOP, 'host', 'content-length', 'expect', API_KEY_HEADER]);

/**
 * What the router does with `Authorization` towards the engines: 'pass' forwards the client's (no router
 * authentication: vLLM's own `--api-key` checks it), 'drop' removes it (the client's key was the router's),
 * or a header value (`Bearer KEY` from --upstream-api-key-file) that replaces it on every path.
 */
export type UpstreamAuthorization = 'pass' | 'drop' | { readonly value: string };

export interface ForwardRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly route: RouteMatch;
  readonly parsed: ParsedRequest;
  readonly body: Buffer;
  readonly backend: Backend;
  readonly decision: RoutingDecision;
  /** Time the policy took for this request's decide + commit, in microseconds. */
  readonly decisionMicros: number;
  /** Fires when the client goes away: cancels the upstream request. */
  readonly clientGone: ClientGone;
  readonly limits: LimitOptions;
  readonly metrics: RouterMetrics;
  /** Called once, at the first body byte of a 2xx answer: the instance finished this request's prefill. */
  readonly onFirstByte?: () => void;
  /** Called once, when a 2xx answer starts: the engine accepted the request. */
  readonly onAccepted?: () => void;
  /** Reads the engine's usage numbers from the 2xx body as it passes. */
  readonly usage?: UsageScanner;
  /** Told the backend's response headers (a request in a stateful session: the router learns where it lives). */
  readonly onResponseHeaders?: (headers: Readonly<Record<string, string | string[] | undefined>>) => void;
  /** Called when the backend fails after the response started (for logging). */
  readonly onStreamFailure: (error: unknown) => void;
  /** @default 'pass' */
  readonly upstreamAuthorization?: UpstreamAuthorization;
  /** Which x-prefix-router-* headers a 2xx answer carries. @default 'off' */
  readonly routingHeaders?: RoutingHeaderMode;
}

/**
 * Set when the client disconnects before its response finished. A one-listener flag: an AbortController
 * (an EventTarget) costs ~6 µs per request to create and wire, a measurable share of the router's work.
 */
export class ClientGone {
  aborted = false;
  private listener: (() => void) | undefined;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }

  /** Sets (or clears, with undefined) the one function called on abort. */
  onAbort(listener: (() => void) | undefined): void {
    this.listener = listener;
  }
}

/** Adds the routing headers `mode` allows to a 2xx answer's head (never to any other status: see docs/security.md). */
export function addRoutingHeaders(
  head: OutgoingHttpHeaders,
  status: number,
  mode: RoutingHeaderMode,
  backend: Backend,
  decision?: RoutingDecision,
  decisionMicros?: number,
): void {
  if (mode === 'off' || status < 200 || status > 299) return;
  head[INSTANCE_HEADER] = backend.name;
  if (mode !== 'all' || decision === undefined) return;
  head[DECISION_HEADER] = decision.reason;
  if (decisionMicros !== undefined) head[DECISION_TIME_HEADER] = formatMicros(decisionMicros);
  if (decision.predictedCachedTokens !== undefined)
    head[PREDICTED_CACHED_HEADER] = String(decision.predictedCachedTokens);
}

/**
 * How an error a client reads names the instance it concerns: by its opaque name (`the model instance backend-2`)
 * only when routing headers are on, else not at all. A name on errors would let a client steer cheap rejected
 * probes to each instance and read another tenant's cached prefix there (docs/security.md).
 */
export function instanceInErrors(mode: RoutingHeaderMode, backend: Backend): string {
  return mode === 'off' ? 'the model instance' : `the model instance ${backend.name}`;
}

function formatMicros(us: number): string {
  return us.toFixed(1);
}

/**
 * How a routed request ended on one backend, as the proxy and the router's retry loop see it:
 * - `answered`: the backend's answer went to the client whole (any HTTP status the backend chose);
 * - `client-gone`: the client left before its answer ended;
 * - `stream-failed`: the backend failed after the answer started (the client got a terminal error event or a cut);
 * - `refused`: the backend refused the connection before anything was sent (the caller retries elsewhere);
 * - `error`: the router answered the client with `error` (model error, timeout, connect or upstream failure).
 */
export type ProxyOutcome =
  | { readonly kind: 'answered'; readonly status: number }
  | { readonly kind: 'client-gone' }
  | { readonly kind: 'stream-failed' }
  | { readonly kind: 'refused' }
  | { readonly kind: 'error'; readonly error: RouterError };

/** What an outcome counts as: the metrics' status label, the routing core's release, and the backend's counter. */
export interface OutcomeClass {
  /** prefix_router_requests_total's `status`: the HTTP status sent, `499` (client left) or `stream_error`. */
  readonly statusLabel: string;
  readonly release: ReleaseOutcome['kind'];
  /** The backend counter it adds to (BackendStats.completed / failed), if any. */
  readonly backendCounter: 'completed' | 'failed' | undefined;
}

/** The one mapping from a proxy outcome to what it counts as. */
export function classifyOutcome(outcome: ProxyOutcome): OutcomeClass {
  switch (outcome.kind) {
    case 'answered':
      return { statusLabel: String(outcome.status), release: 'completed', backendCounter: 'completed' };
    case 'client-gone':
      return { statusLabel: '499', release: 'aborted', backendCounter: undefined };
    case 'stream-failed':
      return { statusLabel: 'stream_error', release: 'failed', backendCounter: 'failed' };
    case 'refused':
      return { statusLabel: '502', release: 'failed', backendCounter: 'failed' };
    case 'error': {
      // A model error is the engine's complete answer (it rejected the request), not a failure of the backend.
      const answered = outcome.error.code === 'model_error';
      return {
        statusLabel: String(outcome.error.status),
        release: answered ? 'completed' : 'failed',
        backendCounter: answered ? 'completed' : 'failed',
      };
    }
  }
}

/**
 * Sends the request to the chosen backend and streams the answer back. Rejects (for the caller to answer or
 * retry) only while nothing has been written to the client: connection errors, upstream header timeouts, a
 * client that left, and `model_error` on the runtime-API paths. Once the response has started, failures are
 * handled here: the stream ends with a terminal error event (SSE or event-stream) or, for a plain body, the
 * connection is cut.
 *
 * Uses undici's dispatch handler API rather than request(): chunks go straight from the upstream socket to
 * the client response, with no intermediate Readable or async iterator per request (about a fifth less router
 * CPU per request in bench:router). Backpressure: when the client's buffer is full the upstream is paused
 * until it drains.
 */
export function forward(f: ForwardRequest): Promise<ProxyOutcome> {
  return new Promise<ProxyOutcome>((resolve, reject) => new UpstreamExchange(f, resolve, reject).dispatch());
}

/** One forwarded request: undici's handler for its answer, and the client response it writes. */
class UpstreamExchange implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly res: ServerResponse;
  private readonly eventStreamFraming: boolean;
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  /** The client's answer head was written: failures from here on end the stream rather than reject. */
  private streaming = false;
  private firstChunk = true;
  private status = 0;
  private aligner: sse.SseEventAligner | undefined;
  /** Bytes of a non-2xx answer on a runtime-API path, kept for ModelError.OriginalMessage. */
  private errorBody: Buffer[] | undefined;
  private errorBodyBytes = 0;
  /** Set while the client's socket is full and the upstream paused: fires after clientDrainTimeoutMs. */
  private drainTimer: NodeJS.Timeout | undefined;
  private readonly onAbort = (): void => this.controller?.abort(new ClientGoneAbort());
  private readonly onDrain = (): void => {
    if (this.drainTimer !== undefined) {
      clearTimeout(this.drainTimer);
      this.drainTimer = undefined;
    }
    this.controller?.resume();
  };

  constructor(
    private readonly f: ForwardRequest,
    private readonly resolve: (outcome: ProxyOutcome) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.res = f.res;
    this.eventStreamFraming = f.route.framing === 'sagemaker-eventstream';
  }

  dispatch(): void {
    const f = this.f;
    f.clientGone.onAbort(this.onAbort);
    this.res.on('drain', this.onDrain);
    try {
      f.backend.pool.dispatch(
        {
          method: 'POST',
          path: `${f.backend.basePath}${f.parsed.upstreamPath}`,
          headers: upstreamRequestHeaders(f.req.headers, f.route, f.parsed, f.upstreamAuthorization),
          body: f.body,
          headersTimeout: f.limits.upstreamHeadersTimeoutMs,
          bodyTimeout: f.limits.upstreamBodyTimeoutMs,
        },
        this,
      );
    } catch (err) {
      this.fail(err);
    }
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.controller = c;
    if (this.f.clientGone.aborted) c.abort(new ClientGoneAbort());
  }

  onResponseStart(
    _c: Dispatcher.DispatchController,
    statusCode: number,
    headers: Dispatcher.ResponseData['headers'],
  ): void {
    // An informational answer (103 Early Hints) is the engine's business: the final answer follows.
    if (statusCode < 200) return;
    this.status = statusCode;
    this.f.onResponseHeaders?.(headers);
    const accepted = statusCode < 300;
    if (!accepted && this.f.route.framing !== 'passthrough') {
      this.errorBody = [];
      return;
    }
    if (accepted) this.f.onAccepted?.();
    // Event boundaries can only be found in uncompressed SSE; a compressed stream passes through as it comes.
    const encoding = firstValue(headers['content-encoding']);
    if ((encoding === undefined || encoding === 'identity') && sse.isEventStream(headers['content-type']))
      this.aligner = new sse.SseEventAligner();
    this.res.writeHead(statusCode, this.answerHead(statusCode, headers));
    this.streaming = true;
  }

  /** The client's answer head: the backend's headers as clients may see them, or the event-stream framing's own. */
  private answerHead(statusCode: number, headers: Dispatcher.ResponseData['headers']): OutgoingHttpHeaders {
    const f = this.f;
    const head: OutgoingHttpHeaders = this.eventStreamFraming
      ? {
          'content-type': eventStream.EVENT_STREAM_CONTENT_TYPE,
          'x-amzn-sagemaker-content-type': firstValue(headers['content-type']) ?? 'application/octet-stream',
          'x-amzn-invoked-production-variant': PRODUCTION_VARIANT,
        }
      : responseHeaders(headers, this.aligner !== undefined);
    // InvokeEndpointWithResponseStream returns the container's custom attributes (its CustomAttributes output).
    const customAttributes = this.eventStreamFraming ? firstValue(headers[CUSTOM_ATTRIBUTES_HEADER]) : undefined;
    if (customAttributes !== undefined) head[CUSTOM_ATTRIBUTES_HEADER] = customAttributes;
    if (f.route.framing === 'sagemaker-invoke') head['x-amzn-invoked-production-variant'] = PRODUCTION_VARIANT;
    addRoutingHeaders(head, statusCode, f.routingHeaders ?? 'off', f.backend, f.decision, f.decisionMicros);
    return head;
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.errorBody !== undefined) {
      if (this.errorBodyBytes < MAX_ORIGINAL_MESSAGE_BYTES)
        this.errorBody.push(chunk.subarray(0, MAX_ORIGINAL_MESSAGE_BYTES - this.errorBodyBytes));
      this.errorBodyBytes += chunk.length;
      return;
    }
    const f = this.f;
    if (this.firstChunk) {
      this.firstChunk = false;
      f.metrics.upstreamTtftSeconds.observe({ instance: f.backend.id }, (performance.now() - this.started) / 1000);
      f.onFirstByte?.();
    }
    f.usage?.push(chunk);
    let bytes = chunk;
    if (this.aligner !== undefined) {
      try {
        bytes = this.aligner.push(chunk);
      } catch (err) {
        // No event boundary in MAX_SSE_EVENT_BYTES: abort; onResponseError ends the stream with an error event.
        c.abort(err as Error);
        return;
      }
    }
    if (bytes.length > 0 && !this.res.write(this.framed(bytes))) this.pauseForClient(c);
  }

  onResponseEnd(): void {
    if (this.errorBody !== undefined) {
      const { status, f } = this;
      this.fail(
        new RouterError(
          'model_error',
          `Received error (${status}) from ${instanceInErrors(f.routingHeaders ?? 'off', f.backend)}`,
          { originalStatusCode: status, originalMessage: Buffer.concat(this.errorBody).toString('utf8') },
        ),
      );
      return;
    }
    const rest = this.aligner?.flush();
    if (rest !== undefined) this.res.write(this.framed(rest));
    this.res.end();
    this.settle({ kind: 'answered', status: this.status });
  }

  onResponseError(_c: Dispatcher.DispatchController, error: Error): void {
    if (!this.streaming) return this.fail(error);
    if (this.f.clientGone.aborted) return this.settle({ kind: 'client-gone' });
    this.f.onStreamFailure(error);
    const failure = new RouterError(
      'upstream_stream_failed',
      `the model instance failed mid-response (${upstreamErrorCode(error)})`,
    );
    if (this.eventStreamFraming) this.res.end(eventStream.modelStreamErrorMessage(failure.message, failure.code));
    else if (this.aligner !== undefined) this.res.end(sse.sseErrorEvent(openAiErrorBody(failure).error));
    else this.res.destroy();
    this.settle({ kind: 'stream-failed' });
  }

  /** Answer bytes as the client's framing carries them (event-stream messages on the streaming runtime API). */
  private framed(bytes: Buffer): Buffer {
    return this.eventStreamFraming ? eventStream.payloadPartMessage(bytes) : bytes;
  }

  private pauseForClient(c: Dispatcher.DispatchController): void {
    c.pause();
    const limit = this.f.limits.clientDrainTimeoutMs;
    if (limit > 0 && this.drainTimer === undefined) {
      this.drainTimer = setTimeout(() => {
        // The client reads nothing: cut it, which aborts the upstream request (clientGone) and frees the connection.
        this.drainTimer = undefined;
        this.res.destroy();
      }, limit);
      this.drainTimer.unref();
    }
  }

  private settle(outcome: ProxyOutcome): void {
    if (this.finish()) this.resolve(outcome);
  }

  private fail(error: unknown): void {
    if (this.finish()) this.reject(error);
  }

  /** Ends this exchange's hold on the client (timers, listeners); false when it already ended. */
  private finish(): boolean {
    if (this.settled) return false;
    this.settled = true;
    if (this.drainTimer !== undefined) clearTimeout(this.drainTimer);
    this.f.clientGone.onAbort(undefined);
    this.res.off('drain', this.onDrain);
    return true;
  }
}

/** The reason an upstream request is aborted with when the client goes away. */
class ClientGoneAbort extends Error {
  constructor() {
    super('client disconnected');
    this.name = 'AbortError';
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
  authorization: UpstreamAuthorization = 'pass',
  routingHeaderMode: RoutingHeaderMode = 'off',
): Promise<void> {
  const upstream = await backend.pool.request({
    method: 'GET',
    path: `${backend.basePath}${path}`,
    headers: applyAuthorization(filterHeaders(headers, NOT_FORWARDED_UPSTREAM, false), authorization),
    signal,
    headersTimeout: limits.upstreamHeadersTimeoutMs,
    bodyTimeout: limits.upstreamBodyTimeoutMs,
  });
  const body = Buffer.from(await upstream.body.arrayBuffer());
  const head = responseHeaders(upstream.headers);
  addRoutingHeaders(head, upstream.statusCode, routingHeaderMode, backend);
  res.writeHead(upstream.statusCode, head);
  res.end(body);
}

export function upstreamRequestHeaders(
  headers: IncomingHttpHeaders,
  route: RouteMatch,
  parsed: ParsedRequest,
  authorization: UpstreamAuthorization = 'pass',
): Record<string, string | string[]> {
  // SageMaker runtime-API requests carry SigV4 credentials meant for AWS, never for the model container.
  const runtimeApi = route.endpointName !== undefined;
  const out = applyAuthorization(filterHeaders(headers, NOT_FORWARDED_UPSTREAM, runtimeApi), authorization);
  // SageMaker hands the container's bytes to the caller as they are; ask for them uncompressed.
  if (runtimeApi) delete out['accept-encoding'];
  // An invocation re-addressed to an OpenAI path must be declared JSON there; OpenAI routes already are (they
  // require it), and their content type goes through as the client sent it.
  if (parsed.jsonBody && route.kind === 'invocations') out['content-type'] = 'application/json';
  if (route.framing === 'sagemaker-eventstream') {
    const accept = headers['x-amzn-sagemaker-accept'];
    if (accept !== undefined) out.accept = accept;
  }
  return out;
}

function applyAuthorization(
  out: Record<string, string | string[]>,
  authorization: UpstreamAuthorization,
): Record<string, string | string[]> {
  if (authorization === 'drop') delete out.authorization;
  else if (authorization !== 'pass') out.authorization = authorization.value;
  return out;
}

/**
 * Header names listed in `Connection`: hop-by-hop for this connection only, never forwarded (RFC 9110 §7.6.1).
 * Undefined (the common case) when Connection names nothing but close/keep-alive.
 */
export function connectionNamedHeaders(connection: string | string[] | undefined): Set<string> | undefined {
  if (connection === undefined) return undefined;
  let named: Set<string> | undefined;
  for (const token of (Array.isArray(connection) ? connection.join(',') : connection).split(',')) {
    const name = token.trim().toLowerCase();
    if (name === '' || name === 'close' || name === 'keep-alive') continue;
    (named ??= new Set()).add(name);
  }
  return named;
}

function filterHeaders(
  headers: IncomingHttpHeaders,
  drop: ReadonlySet<string>,
  dropAwsAuth: boolean,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const named = connectionNamedHeaders(headers.connection);
  for (const key in headers) {
    const value = headers[key];
    if (value === undefined || drop.has(key) || named?.has(key) === true) continue;
    if (dropAwsAuth && (key === 'authorization' || key.startsWith('x-amz-') || key.startsWith('amz-sdk-'))) continue;
    out[key] = value;
  }
  return out;
}

/**
 * A backend answer's headers as the client gets them. `reframed`: the body is re-cut at SSE event boundaries (an
 * unfinished or oversized event held back or replaced), so the backend's Content-Length no longer describes it.
 */
function responseHeaders(headers: Dispatcher.ResponseData['headers'], reframed = false): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const named = connectionNamedHeaders(headers.connection);
  for (const key in headers) {
    const value = headers[key];
    if (value === undefined || NOT_FORWARDED_DOWNSTREAM.has(key) || named?.has(key) === true) continue;
    if (key.startsWith(ROUTING_HEADER_PREFIX) || (reframed && key === 'content-length')) continue;
    out[key] = value;
  }
  return out;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Error codes of a connection refused before anything was sent: safe to retry elsewhere. */
export function isConnectionRefused(err: unknown): boolean {
  return (err as { code?: unknown })?.code === 'ECONNREFUSED';
}

export function isUpstreamTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

/**
 * What a client is told of an upstream failure: the error's code only. The full message (describeUpstreamError)
 * can name internal addresses ("connect ECONNREFUSED 10.0.3.7:8000") and goes to the log instead.
 */
export function upstreamErrorCode(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : 'connection error';
}

export function describeUpstreamError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return code !== undefined ? `${code}: ${message}` : message;
}
