/**
 * The chaos suite's client: sends one chat request over node:http (so it can cut the connection at any point)
 * and classifies how it ended. Every request must end in exactly one final outcome the client can name:
 *  - 'ok'            a 2xx answer, complete (a streamed one ends with `data: [DONE]` and carries no error event);
 *  - 'http_error'    an error status with an OpenAI-style JSON body naming its code;
 *  - 'stream_error'  a 2xx stream that ended with a terminal SSE error event naming its code;
 *  - 'cut'           the connection ended without any of those (a violation unless the client cut it itself);
 *  - 'aborted'       the client cut it on purpose (abort plans).
 */
import { Agent, request, type IncomingMessage } from 'node:http';

export type OutcomeKind = 'ok' | 'http_error' | 'stream_error' | 'cut' | 'aborted';

export interface Outcome {
  readonly kind: OutcomeKind;
  readonly status?: number;
  /** The router error code for http_error / stream_error. */
  readonly code?: string;
  readonly retryAfter?: string;
  /** The socket error of a 'cut' before any response (ECONNREFUSED, ECONNRESET, ...). */
  readonly errorCode?: string;
  /** Milliseconds from sending to the end of the response. */
  readonly ms: number;
}

/** Where the client cuts its own request. */
export type AbortPlan = 'during-upload' | 'before-headers' | 'mid-stream';

export interface ChaosRequest {
  readonly url: string;
  readonly body: Buffer;
  readonly stream: boolean;
  readonly headers?: Record<string, string>;
  readonly abort?: AbortPlan;
  /** For 'before-headers': cut after this many ms (0: right after the body was handed to the socket). */
  readonly abortDelayMs?: number;
  readonly agent?: Agent;
  readonly path?: string;
}

/**
 * The clients' connection pool. Idle sockets close after 4 s, before the router's 5 s keep-alive timeout, as a
 * well-behaved client's do (the router keeps 4 s towards its backends for the same reason): otherwise a request
 * written on an idle socket just as the server closes it is reset — a race of HTTP keep-alive itself, which a
 * client that reuses connections must avoid, not a failure of the router under test.
 */
export const CLIENT_IDLE_SOCKET_TIMEOUT_MS = 4_000;

export function chaosAgent(maxSockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets, timeout: CLIENT_IDLE_SOCKET_TIMEOUT_MS });
}

export function chaosBody(key: string, stream: boolean, padBytes = 0): Buffer {
  const system = `chaos system prompt ${key} ${'x'.repeat(padBytes)}`;
  return Buffer.from(
    JSON.stringify({
      model: 'fake-model',
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: 'q' },
      ],
      stream,
      max_tokens: 8,
    }),
  );
}

export function sendChaosRequest(r: ChaosRequest): Promise<Outcome> {
  const started = performance.now();
  const elapsed = (): number => performance.now() - started;
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    const finish = (o: Omit<Outcome, 'ms'>): void => {
      if (settled) return;
      settled = true;
      resolve({ ...o, ms: elapsed() });
    };
    const target = new URL(r.path ?? '/v1/chat/completions', r.url);
    const req = request(target, {
      method: 'POST',
      agent: r.agent,
      headers: { 'content-type': 'application/json', 'content-length': String(r.body.length), ...r.headers },
    });
    const cut = (): void => {
      finish({ kind: 'aborted' });
      req.destroy();
    };
    req.on('error', (err: Error & { code?: string }) =>
      finish(
        r.abort !== undefined
          ? { kind: 'aborted' }
          : { kind: 'cut', ...(err.code !== undefined ? { errorCode: err.code } : {}) },
      ),
    );
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        if (r.abort === 'mid-stream') cut();
      });
      res.on('error', () => finish({ kind: r.abort !== undefined ? 'aborted' : 'cut' }));
      res.on('aborted', () => finish({ kind: r.abort !== undefined ? 'aborted' : 'cut' }));
      res.on('end', () => finish(classify(res, Buffer.concat(chunks).toString('utf8'), r.stream)));
      res.on('close', () => finish({ kind: r.abort !== undefined ? 'aborted' : 'cut' }));
    });
    if (r.abort === 'during-upload') {
      req.write(r.body.subarray(0, r.body.length >> 1));
      setImmediate(cut);
      return;
    }
    req.end(r.body);
    if (r.abort === 'before-headers') setTimeout(cut, r.abortDelayMs ?? 0);
  });
}

function classify(res: IncomingMessage, text: string, stream: boolean): Omit<Outcome, 'ms'> {
  const status = res.statusCode ?? 0;
  const retryAfter = typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : undefined;
  if (status < 200 || status >= 300) {
    const code = errorCode(text);
    return code === undefined
      ? { kind: 'cut', status }
      : { kind: 'http_error', status, code, ...(retryAfter !== undefined ? { retryAfter } : {}) };
  }
  if (!stream) {
    try {
      const json = JSON.parse(text) as { choices?: unknown };
      return Array.isArray(json.choices) ? { kind: 'ok', status } : { kind: 'cut', status };
    } catch {
      return { kind: 'cut', status };
    }
  }
  if (!text.endsWith('data: [DONE]\n\n')) return { kind: 'cut', status };
  const errorLine = text.split('\n\n').find((event) => event.startsWith('data: {"error"'));
  if (errorLine !== undefined)
    return { kind: 'stream_error', status, code: errorCode(errorLine.slice('data: '.length)) ?? 'unknown' };
  return { kind: 'ok', status };
}

/** The `error.code` of an OpenAI-style error body, if it is one. */
export function errorCode(text: string): string | undefined {
  try {
    const json = JSON.parse(text) as { error?: { code?: unknown } };
    return typeof json.error?.code === 'string' ? json.error.code : undefined;
  } catch {
    return undefined;
  }
}

/** Counts outcomes by `kind` or `kind:code`. */
export function tally(outcomes: readonly Outcome[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of outcomes) {
    const key = o.code !== undefined ? `${o.kind}:${o.code}` : o.kind;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

export function percentileMs(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** Open loop at `rate` req/s for `durationMs` (bounded: never more than rate × duration requests). */
export async function openLoopFor(
  rate: number,
  durationMs: number,
  send: (i: number) => Promise<void>,
): Promise<number> {
  const total = Math.floor((rate * durationMs) / 1000);
  const pending = new Set<Promise<void>>();
  const started = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    while (sent < due) {
      const p = send(sent).finally(() => pending.delete(p));
      pending.add(p);
      sent++;
    }
    await new Promise((r) => setTimeout(r, 2));
    if (performance.now() - started > durationMs * 3 + 10_000) break; // a starved machine: stop sending
  }
  await Promise.all(pending);
  return sent;
}
