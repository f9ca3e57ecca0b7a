import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A small OpenAI-compatible backend for router tests and the router benchmark: answers chat, completions and
 * /invocations instantly (or with configured delays and faults), streams SSE like vLLM, serves /health and
 * /v1/models, and records what it received. It does not model an engine (that is the emulator's job).
 */
export interface FakeBackendBehavior {
  /** Status of GET /health (and /ping). */
  healthStatus: number;
  /** Content chunks in a streamed answer (plus a final chunk and [DONE]). */
  streamChunks: number;
  /** Delay between streamed chunks. */
  chunkDelayMs: number;
  /** Delay before the response headers. */
  responseDelayMs: number;
  /** Destroy the socket after this many streamed chunks (mid-stream failure). */
  failAfterChunks?: number;
  /** Accept the request and never answer. */
  hang: boolean;
  /** Answer every inference request with this status and an OpenAI-style error body. */
  errorStatus?: number;
  /** Destroy the connection as soon as a request arrives, before any response byte. */
  resetOnRequest: boolean;
  /** Non-streamed answers: send the headers and half the body, then destroy the connection. */
  truncateBody: boolean;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

export interface FakeBackendOptions {
  readonly name?: string;
  readonly host?: string;
  readonly port?: number;
  /** Keep request bodies (tests); the benchmark turns this off. @default true */
  readonly record?: boolean;
  readonly behavior?: Partial<FakeBackendBehavior>;
}

export interface FakeBackend {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly behavior: FakeBackendBehavior;
  /** Inference requests received (health checks excluded), most recent last (bounded to 1000). */
  readonly requests: RecordedRequest[];
  /** Health checks received. */
  readonly healthChecks: number;
  /** Inference requests whose response is still being written. */
  readonly openResponses: number;
  /** Inference requests whose client (the router) went away before the response ended. */
  readonly abortedResponses: number;
  /**
   * How each request carrying an `x-chaos-id` header ended at this backend: 'finished' (response fully written)
   * or 'closed' (the router closed the connection first). Lets chaos tests check each client abort reached the
   * backend as a closed connection.
   */
  readonly outcomes: Map<string, 'finished' | 'closed'>;
  /** Resolves when `openResponses` reaches 0. */
  whenIdle(): Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_BEHAVIOR: FakeBackendBehavior = {
  healthStatus: 200,
  streamChunks: 3,
  chunkDelayMs: 0,
  responseDelayMs: 0,
  hang: false,
  resetOnRequest: false,
  truncateBody: false,
};

const MAX_RECORDED = 1000;
/** Per-request header: after this many streamed chunks (0: before the headers) hold the response open until
 *  the connection closes. Chaos tests use it to make a client abort land at a chosen point. */
export const HOLD_HEADER = 'x-fake-hold-after-chunks';
export const CHAOS_ID_HEADER = 'x-chaos-id';

// eslint-disable-next-line max-lines-per-function -- a benchmark or example script read top to bottom as one scenario
export async function startFakeBackend(options: FakeBackendOptions = {}): Promise<FakeBackend> {
  const name = options.name ?? 'fake';
  const record = options.record ?? true;
  const behavior: FakeBackendBehavior = { ...DEFAULT_BEHAVIOR, ...options.behavior };
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const idleWaiters: Array<() => void> = [];
  let healthChecks = 0;
  let openResponses = 0;
  let abortedResponses = 0;
  const outcomes = new Map<string, 'finished' | 'closed'>();

  const chatJson = (model: string): string =>
    JSON.stringify({
      id: `chatcmpl-${name}`,
      object: 'chat.completion',
      created: 1,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: `hello from ${name}` }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4, prompt_tokens_details: { cached_tokens: 0 } },
    });
  const completionJson = (model: string): string =>
    JSON.stringify({
      id: `cmpl-${name}`,
      object: 'text_completion',
      created: 1,
      model,
      choices: [{ index: 0, text: `hello from ${name}`, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 },
    });
  const chunk = (model: string, chat: boolean, text: string, finish: string | null): string =>
    `data: ${JSON.stringify(
      chat
        ? {
            id: `chatcmpl-${name}`,
            object: 'chat.completion.chunk',
            created: 1,
            model,
            choices: [{ index: 0, delta: { content: text }, finish_reason: finish }],
          }
        : {
            id: `cmpl-${name}`,
            object: 'text_completion',
            created: 1,
            model,
            choices: [{ index: 0, text, finish_reason: finish }],
          },
    )}\n\n`;

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && (path === '/health' || path === '/ping')) {
      healthChecks++;
      req.resume();
      res.writeHead(behavior.healthStatus, { 'content-type': 'application/json' });
      res.end('{}');
      return;
    }
    if (req.method === 'GET' && path === '/v1/models') {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'fake-model', object: 'model', owned_by: name }] }));
      return;
    }
    if (behavior.resetOnRequest) {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (record) {
        requests.push({ method: req.method ?? '', path, headers: req.headers, body });
        if (requests.length > MAX_RECORDED) requests.shift();
      } else {
        requests.length = 0;
      }
      void answer(req, res, path, body);
    });
  });

  async function answer(req: IncomingMessage, res: ServerResponse, path: string, body: Buffer): Promise<void> {
    openResponses++;
    let finished = false;
    const chaosId = req.headers[CHAOS_ID_HEADER];
    const holdHeader = req.headers[HOLD_HEADER];
    const holdAfter = typeof holdHeader === 'string' ? Number(holdHeader) : undefined;
    res.once('close', () => {
      if (typeof chaosId === 'string') outcomes.set(chaosId, finished ? 'finished' : 'closed');
      if (!finished) abortedResponses++;
      openResponses--;
      if (openResponses === 0) for (const wake of idleWaiters.splice(0)) wake();
    });
    const done = (): void => {
      finished = true;
    };
    if (behavior.hang || holdAfter === 0) return;
    if (behavior.responseDelayMs > 0) await sleep(behavior.responseDelayMs);
    if (res.destroyed) return;
    if (behavior.errorStatus !== undefined) {
      res.writeHead(behavior.errorStatus, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { message: `fake failure from ${name}`, type: 'server_error', code: 'fake' } }),
        done,
      );
      return;
    }
    let json: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      if (typeof parsed === 'object' && parsed !== null) json = parsed as Record<string, unknown>;
    } catch {
      // /invocations may carry any payload
    }
    const model = typeof json.model === 'string' ? json.model : 'fake-model';
    if (path === '/invocations') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ backend: name, bytes: body.length }), done);
      return;
    }
    const chat = path === '/v1/chat/completions';
    if (!chat && path !== '/v1/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not found","type":"invalid_request_error","code":"not_found"}}', done);
      return;
    }
    if (json.stream !== true) {
      const text = chat ? chatJson(model) : completionJson(model);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      if (behavior.truncateBody) {
        await new Promise<void>((resolve) => res.write(text.slice(0, text.length >> 1), () => resolve()));
        res.socket?.destroy();
        return;
      }
      res.end(text, done);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (let i = 0; i < behavior.streamChunks; i++) {
      if (holdAfter !== undefined && i >= holdAfter) return;
      if (behavior.failAfterChunks !== undefined && i >= behavior.failAfterChunks) {
        res.socket?.destroy();
        return;
      }
      if (res.destroyed) return;
      const text = chunk(model, chat, i === 0 ? `hello from ${name}` : ` ${i}`, null);
      // Before a planned failure, let the chunk reach the wire: destroy() drops unflushed writes.
      if (behavior.failAfterChunks !== undefined)
        await new Promise<void>((resolve) => res.write(text, () => resolve()));
      else res.write(text);
      if (behavior.chunkDelayMs > 0) await sleep(behavior.chunkDelayMs);
    }
    if (res.destroyed) return;
    res.write(chunk(model, chat, '', 'stop'));
    res.end('data: [DONE]\n\n', done);
    void req;
  }

  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    name,
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    behavior,
    requests,
    get healthChecks() {
      return healthChecks;
    },
    get openResponses() {
      return openResponses;
    },
    get abortedResponses() {
      return abortedResponses;
    },
    outcomes,
    whenIdle() {
      return openResponses === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
