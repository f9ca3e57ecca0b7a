import { createServer, type Server } from 'node:net';
import { runLiveBenchmark } from '../../../router/src/benchmark';
import { startRouter, type RunningRouter } from '../../../router/src/server';
import { parseWorkloadSpec } from '../../../router/src/workload';
import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import { sseChunk, startScriptedServer, streamAnswer, type ScriptedServer } from './helpers/scripted-server';

/** Every failure becomes a record with an error code; none is lost, and the run always ends. */
const SIX = 'shared-system?groups=2&promptsPerGroup=3&systemTokens=40&questionTokens=8&outputTokens=4&concurrency=2';

describe('when the server fails requests directly', () => {
  let server: ScriptedServer;
  afterEach(() => server.close());

  it('GIVEN every third request answered 500 with an OpenAI error THEN those are recorded as http_500:<code> and the rest succeed', async () => {
    server = await startScriptedServer(async (call, res) => {
      if (call.index % 3 === 2) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'engine crashed', type: 'server_error', code: 'engine_dead' } }));
        return;
      }
      await streamAnswer(call, res, { cached: 16 });
    });
    const result = await runLiveBenchmark({ url: server.url, workload: parseWorkloadSpec(SIX), model: 'm' });
    expect(result.records).toHaveLength(6);
    expect(result.failed).toBe(2);
    const failed = result.records.filter((r) => r.error !== undefined);
    expect(failed.map((r) => [r.error, r.httpStatus, r.errorDetail])).toEqual([
      ['http_500:engine_dead', 500, 'engine crashed'],
      ['http_500:engine_dead', 500, 'engine crashed'],
    ]);
    for (const r of result.records.filter((x) => x.error === undefined))
      expect(r).toMatchObject({ promptTokens: 100, cachedPromptTokens: 16, outputTokens: 3 });
  });

  it("GIVEN vLLM's error shape (numeric code) THEN the code comes from its type", async () => {
    server = await startScriptedServer((_call, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ object: 'error', message: 'too long', type: 'BadRequestError', param: null, code: 400 }),
      );
    });
    const result = await runLiveBenchmark({
      url: server.url,
      workload: parseWorkloadSpec(SIX),
      model: 'm',
      maxRequests: 1,
    });
    expect(result.records[0]).toMatchObject({ error: 'http_400:BadRequestError', httpStatus: 400, ttftMs: null });
  });

  it('GIVEN a connection closed after two tokens THEN the request is recorded as stream_cut with its first-token time', async () => {
    server = await startScriptedServer(async (call, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      await new Promise<void>((resolve) => res.write(sseChunk(true, 'a') + sseChunk(true, 'b'), () => resolve()));
      res.socket?.destroy();
      void call;
    });
    const result = await runLiveBenchmark({
      url: server.url,
      workload: parseWorkloadSpec(SIX),
      model: 'm',
      maxRequests: 2,
    });
    expect(result.records.map((r) => r.error)).toEqual(['stream_cut', 'stream_cut']);
    for (const r of result.records) {
      expect(r.ttftMs).not.toBeNull();
      expect(r.outputTokens).toBe(2);
    }
  });

  it('GIVEN a stream that ends without [DONE] THEN it is stream_incomplete', async () => {
    server = await startScriptedServer((_call, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sseChunk(true, 'a'));
    });
    const result = await runLiveBenchmark({
      url: server.url,
      workload: parseWorkloadSpec(SIX),
      model: 'm',
      maxRequests: 1,
    });
    expect(result.records[0].error).toBe('stream_incomplete');
  });

  it('GIVEN a terminal SSE error event THEN it is stream_error:<code>', async () => {
    server = await startScriptedServer((_call, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        `${sseChunk(true, 'a')}data: {"error":{"message":"boom","type":"server_error","code":"kv_lost"}}\n\ndata: [DONE]\n\n`,
      );
    });
    const result = await runLiveBenchmark({
      url: server.url,
      workload: parseWorkloadSpec(SIX),
      model: 'm',
      maxRequests: 1,
    });
    expect(result.records[0]).toMatchObject({ error: 'stream_error:kv_lost', errorDetail: 'boom' });
  });

  it('GIVEN a 200 JSON answer to a streamed request THEN it is not_streamed', async () => {
    server = await startScriptedServer((_call, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"choices":[]}');
    });
    const result = await runLiveBenchmark({
      url: server.url,
      workload: parseWorkloadSpec(SIX),
      model: 'm',
      maxRequests: 1,
    });
    expect(result.records[0].error).toBe('not_streamed');
  });

  it('GIVEN a server that never answers and a 100 ms timeout THEN each request is a timeout after at least 100 ms', async () => {
    server = await startScriptedServer(() => undefined);
    const result = await runLiveBenchmark({
      url: server.url,
      workload: parseWorkloadSpec(SIX),
      model: 'm',
      maxRequests: 3,
      requestTimeoutMs: 100,
    });
    expect(result.records.map((r) => r.error)).toEqual(['timeout', 'timeout', 'timeout']);
    for (const r of result.records) expect(r.e2eMs).toBeGreaterThanOrEqual(99);
  });
});

describe('when nothing listens', () => {
  let closedPort: number;
  beforeAll(async () => {
    const probe: Server = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });

  it('GIVEN a closed port THEN every request is connection_refused with no instance', async () => {
    const result = await runLiveBenchmark({
      url: `http://127.0.0.1:${closedPort}`,
      workload: parseWorkloadSpec(SIX),
      model: 'm',
      maxRequests: 4,
    });
    expect(result.records).toHaveLength(4);
    expect(
      result.records.every((r) => r.error === 'connection_refused' && r.instance === null && r.httpStatus === null),
    ).toBe(true);
  });
});

describe('when the router fronts failing backends', () => {
  let backend: FakeBackend;
  let router: RunningRouter;
  afterEach(async () => {
    await router.close();
    await backend.close();
  });

  async function start(behavior: Parameters<typeof startFakeBackend>[0]): Promise<void> {
    backend = await startFakeBackend(behavior);
    router = await startRouter({
      backends: [backend.url],
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 0 },
      routingHeaders: 'all',
    });
  }

  it('GIVEN a backend answering 500 THEN the error passes through, without routing headers (never on errors)', async () => {
    await start({ behavior: { errorStatus: 500 } });
    const result = await runLiveBenchmark({
      url: router.url,
      workload: parseWorkloadSpec(SIX),
      model: 'fake-model',
      maxRequests: 3,
    });
    expect(result.records.map((r) => [r.error, r.instance])).toEqual([
      ['http_500:fake', null],
      ['http_500:fake', null],
      ['http_500:fake', null],
    ]);
  });

  it("GIVEN a backend that dies mid-stream THEN the router's terminal event makes it stream_error:upstream_stream_failed", async () => {
    await start({ behavior: { streamChunks: 4, failAfterChunks: 1 } });
    const result = await runLiveBenchmark({
      url: router.url,
      workload: parseWorkloadSpec(SIX),
      model: 'fake-model',
      maxRequests: 2,
    });
    expect(result.records.map((r) => r.error)).toEqual([
      'stream_error:upstream_stream_failed',
      'stream_error:upstream_stream_failed',
    ]);
    expect(result.records.every((r) => r.ttftMs !== null && r.instance === 'backend-1')).toBe(true);
  });
});

describe('when a run is stopped or aborted', () => {
  let server: ScriptedServer;
  afterEach(() => server.close());

  const OPEN = 'shared-system?groups=2&promptsPerGroup=10&systemTokens=40&questionTokens=8&outputTokens=4&rate=100';

  it('GIVEN abort while requests are held THEN the result is partial: every request sent is recorded, as aborted', async () => {
    let open = false;
    server = await startScriptedServer(async (call, res, s) => {
      await s.until(() => open);
      await streamAnswer(call, res);
    });
    const abort = new AbortController();
    void server.until(() => server.calls.length === 3).then(() => abort.abort());
    const result = await runLiveBenchmark({
      url: server.url,
      workload: parseWorkloadSpec(OPEN),
      model: 'm',
      signal: abort.signal,
    });
    open = true;
    server.notify();
    expect(result.stopReason).toBe('aborted');
    // the abort fires on the server's third arrival; a fourth may already have been on its way
    expect(result.sent).toBeGreaterThanOrEqual(3);
    expect(result.sent).toBeLessThan(20);
    expect(result.records).toHaveLength(result.sent);
    expect(result.records.every((r) => r.error === 'aborted')).toBe(true);
    expect(result.notes.some((n) => n.includes('aborted'))).toBe(true);
  });

  it('GIVEN stop while requests are held THEN in-flight requests finish and succeed, and no new one is sent', async () => {
    let open = false;
    server = await startScriptedServer(async (call, res, s) => {
      await s.until(() => open);
      await streamAnswer(call, res);
    });
    const stop = new AbortController();
    void server
      .until(() => server.calls.length === 3)
      .then(() => {
        stop.abort();
        open = true;
        server.notify();
      });
    const result = await runLiveBenchmark({
      url: server.url,
      workload: parseWorkloadSpec(OPEN),
      model: 'm',
      stopSignal: stop.signal,
    });
    expect(result.stopReason).toBe('stopped');
    expect(result.sent).toBeLessThan(20);
    expect(result.records).toHaveLength(result.sent);
    expect(result.records.every((r) => r.error === undefined)).toBe(true);
  });

  it('GIVEN the workload ends while answers are held past the drain time THEN the held requests are drain_timeout', async () => {
    server = await startScriptedServer(() => undefined);
    const result = await runLiveBenchmark({
      url: server.url,
      workload: parseWorkloadSpec(SIX),
      model: 'm',
      maxRequests: 2,
      drainTimeoutMs: 50,
    });
    expect(result.records.map((r) => r.error)).toEqual(['drain_timeout', 'drain_timeout']);
    expect(result.stopReason).toBe('max-requests');
  });
});
