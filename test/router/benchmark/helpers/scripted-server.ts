import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * An OpenAI-compatible test server whose every answer is scripted by the test, and which counts what it sees
 * from its own side: arrivals, in-flight requests (peak included), and each call's arrival and end times on
 * its clock. Load-shape tests assert on these counts, never on client timing.
 */
export interface ServerCall {
  readonly index: number;
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly arrivedAt: number;
  /** When the server ended (or destroyed) the response; undefined while in flight. */
  endedAt?: number;
}

export interface ScriptedServer {
  readonly url: string;
  readonly calls: readonly ServerCall[];
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Resolves once `predicate` holds (checked now, after every arrival and every end, and on notify()). */
  until(predicate: () => boolean): Promise<void>;
  /** Re-checks pending until() predicates (after the test changed something they read). */
  notify(): void;
  close(): Promise<void>;
}

export type Script = (call: ServerCall, res: ServerResponse, server: ScriptedServer) => Promise<void> | void;

export function sseChunk(
  chat: boolean,
  text: string,
  usage?: { prompt: number; completion: number; cached?: number },
): string {
  const choices = chat
    ? [{ index: 0, delta: { content: text }, finish_reason: null }]
    : [{ index: 0, text, finish_reason: null }];
  const u =
    usage === undefined
      ? undefined
      : {
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
          ...(usage.cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cached } }),
        };
  return `data: ${JSON.stringify({ id: 'x', object: chat ? 'chat.completion.chunk' : 'text_completion', choices: u ? [] : choices, ...(u ? { usage: u } : {}) })}\n\n`;
}

/** A whole vLLM-like streamed answer: a role-only chunk (chat), `tokens` content chunks, usage, [DONE]. */
export async function streamAnswer(
  call: ServerCall,
  res: ServerResponse,
  options: { tokens?: number; tokenDelayMs?: number; cached?: number; headers?: Record<string, string> } = {},
): Promise<void> {
  const chat = call.path.endsWith('/chat/completions');
  const tokens = options.tokens ?? 3;
  res.writeHead(200, { 'content-type': 'text/event-stream', ...(options.headers ?? {}) });
  if (chat)
    res.write(
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] })}\n\n`,
    );
  for (let i = 0; i < tokens; i++) {
    if (options.tokenDelayMs) await sleep(options.tokenDelayMs);
    if (res.destroyed) return;
    res.write(sseChunk(chat, `tok${i} `));
  }
  res.write(sseChunk(chat, '', { prompt: 100, completion: tokens, cached: options.cached ?? 0 }));
  res.end('data: [DONE]\n\n');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function startScriptedServer(script: Script): Promise<ScriptedServer> {
  const calls: ServerCall[] = [];
  const sockets = new Set<Socket>();
  const waiters: { predicate: () => boolean; resolve: () => void }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const changed = (): void => {
    for (const w of [...waiters]) {
      if (w.predicate()) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted-model', object: 'model' }] }));
      return;
    }
    if (req.method === 'GET' && (path === '/health' || path === '/ping')) {
      res.writeHead(200);
      res.end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        // the script sees an empty body
      }
      const call: ServerCall = { index: calls.length, path, body, arrivedAt: performance.now() };
      calls.push(call);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.once('close', () => {
        call.endedAt ??= performance.now();
        inFlight--;
        changed();
      });
      res.once('finish', () => {
        call.endedAt ??= performance.now();
      });
      changed();
      Promise.resolve(script(call, res, handle)).catch(() => res.destroy());
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const handle: ScriptedServer = {
    url: `http://127.0.0.1:${port}`,
    calls,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    notify() {
      changed();
    },
    until(predicate) {
      if (predicate()) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return handle;
}
