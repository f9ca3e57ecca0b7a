import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import {
  isCancelCode,
  errorMessage,
  httpErrorCode,
  httpErrorMessage,
  transportErrorCode,
  type CancelCode,
} from '../common/request-errors';
import { SseDecoder } from './sse-decoder';
import type { StreamUsage } from './stream-chunk';
import { routingHeaderFacts, StreamTally, type RoutingHeaderFacts } from './stream-tally';
import type { TargetUrl } from './target-url';
import { INSTANCE_HEADER } from '../protocol/routing-headers';

/**
 * The benchmark's HTTP client: one undici Pool to the target, one streamed POST per request, timed on the
 * monotonic clock as bytes arrive. Every call resolves (never rejects) with what happened, so no request is
 * lost whatever the server does.
 */
export interface StreamingClientOptions {
  readonly target: TargetUrl;
  /** Connections the pool may open (requests beyond them wait in the client). */
  readonly connections: number;
  /** Response header naming the instance that served the request. Default x-prefix-router-instance. */
  readonly instanceHeader?: string;
  /** Extra request headers (e.g. authorization). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface SendOptions {
  /** Wall milliseconds the whole exchange may take before it is cancelled as `timeout`. */
  readonly timeoutMs: number;
  /** Cancels the request; `signal.reason` may be a CancelCode ('aborted' or 'drain_timeout'), else 'aborted'. */
  readonly signal?: AbortSignal;
  /** The send time to measure from (performance.now()); default: when send() is called. */
  readonly startedAt?: number;
}

/** Wall-clock (performance.now()) times and what the answer carried. */
export interface StreamOutcome {
  readonly startedAt: number;
  /** When the first event carrying generated output arrived (not the role-only opening chunk). */
  readonly firstTokenAt: number | null;
  /** Stream end, or the failure. */
  readonly endedAt: number;
  readonly status: number | null;
  readonly instance: string | null;
  /** The router's decide + commit time for this request (x-prefix-router-decision-us), when it sent one. */
  readonly decisionMicros?: number;
  /** The router's decision reason (x-prefix-router-decision), when it sent one. */
  readonly decisionReason?: string;
  /** Prompt tokens the router's policy predicted cached (x-prefix-router-predicted-cached-tokens), when it sent one. */
  readonly predictedCachedTokens?: number;
  readonly usage?: StreamUsage;
  /** Events that carried generated output (an output-token count when usage is missing). */
  readonly generatedEvents: number;
  /** A code from request-errors.ts; present exactly when the request failed. */
  readonly error?: string;
  /** The server's or client's message for the error (never request content). */
  readonly errorDetail?: string;
}

/** The header the benchmark reads the serving instance from, unless told another: the one prefix-router writes. */
export const DEFAULT_INSTANCE_HEADER = INSTANCE_HEADER;
const ERROR_BODY_LIMIT = 64 * 1024;

function headerValue(value: string | string[] | undefined): string | null {
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v === '' ? null : v;
}

async function readBounded(body: AsyncIterable<Buffer>, limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < limit) parts.push(chunk.subarray(0, limit - size));
    size += chunk.length;
  }
  return Buffer.concat(parts).toString('utf8');
}

export class StreamingClient {
  private readonly pool: Pool;
  private readonly instanceHeader: string;
  private readonly headers: Record<string, string>;

  constructor(private readonly options: StreamingClientOptions) {
    this.pool = new Pool(options.target.origin, {
      connections: options.connections,
      pipelining: 1,
      // The per-request timeout below covers the whole exchange; undici's own timers would fire first on slow
      // prefills and give a different code for the same thing.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    this.instanceHeader = (options.instanceHeader ?? DEFAULT_INSTANCE_HEADER).toLowerCase();
    this.headers = { ...(options.headers ?? {}), 'content-type': 'application/json', accept: 'text/event-stream' };
  }

  /** POSTs `body` to basePath + `path` and reads the SSE answer to its end. */
  async send(path: string, body: string | Buffer, options: SendOptions): Promise<StreamOutcome> {
    const startedAt = options.startedAt ?? performance.now();
    const signal = options.signal;
    if (signal?.aborted) {
      return {
        startedAt,
        firstTokenAt: null,
        endedAt: startedAt,
        status: null,
        instance: null,
        generatedEvents: 0,
        error: isCancelCode(signal.reason) ? signal.reason : 'aborted',
      };
    }
    const controller = new AbortController();
    let cancel: CancelCode | undefined;
    const onAbort = (): void => {
      cancel ??= isCancelCode(signal?.reason) ? signal.reason : 'aborted';
      controller.abort();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      cancel ??= 'timeout';
      controller.abort();
    }, options.timeoutMs);

    let status: number | null = null;
    let instance: string | null = null;
    let routing: RoutingHeaderFacts = {};
    let afterHeaders = false;
    const tally = new StreamTally();
    let endedAt = startedAt;

    try {
      const res = await this.pool.request({
        method: 'POST',
        path: this.options.target.basePath + path,
        headers: this.headers,
        body,
        signal: controller.signal,
      });
      afterHeaders = true;
      status = res.statusCode;
      instance = headerValue(res.headers[this.instanceHeader]);
      routing = routingHeaderFacts((name) => headerValue(res.headers[name]) ?? undefined);
      const contentType = headerValue(res.headers['content-type']) ?? '';
      if (status < 200 || status > 299) {
        const text = await readBounded(res.body, ERROR_BODY_LIMIT);
        tally.error = httpErrorCode(status, text);
        tally.errorDetail = httpErrorMessage(text);
      } else if (!contentType.toLowerCase().startsWith('text/event-stream')) {
        await res.body.dump();
        tally.error = 'not_streamed';
        tally.errorDetail = `expected text/event-stream, got '${contentType}'`;
      } else {
        const decoder = new SseDecoder();
        for await (const chunk of res.body) tally.push(decoder, chunk as Buffer, performance.now());
        tally.end(decoder, performance.now());
      }
      endedAt = performance.now();
    } catch (err) {
      endedAt = performance.now();
      tally.error = cancel ?? transportErrorCode(err, afterHeaders);
      tally.errorDetail = cancel === undefined ? errorMessage(err) : `cancelled: ${cancel}`;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    const { firstTokenAt, usage, generatedEvents, error, errorDetail } = tally;
    return {
      startedAt,
      firstTokenAt,
      endedAt,
      status,
      instance,
      ...routing,
      usage,
      generatedEvents,
      error,
      errorDetail,
    };
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
