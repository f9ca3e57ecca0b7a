import { runLiveBenchmark, toStrategyRun } from '../../../router/src/benchmark';
import { buildReport } from '../../../router/src/report';
import { parseWorkloadSpec, type WorkloadRequest } from '../../../router/src/workload';
import { sleep, startScriptedServer, streamAnswer, type ScriptedServer } from './helpers/scripted-server';

/**
 * Load shapes and ordering, asserted on what the server saw (its own in-flight counts, arrival and end order),
 * never on client timing. Servers hold answers until a condition on their state holds, so every count below
 * is exact.
 */
const SMALL = 'shared-system?groups=2&promptsPerGroup=6&systemTokens=40&questionTokens=8&outputTokens=4';

/** Workload request id of each server call, matched by the messages the client sent. */
function idsByBody(requests: Iterable<WorkloadRequest>): Map<string, string> {
  const byBody = new Map<string, string>();
  for (const r of requests) byBody.set(JSON.stringify(r.kind === 'chat' ? r.messages : r.prompt), r.id);
  return byBody;
}

describe('when the live benchmark runs a closed loop', () => {
  let server: ScriptedServer;
  afterEach(() => server.close());

  it.each([1, 3, 5])(
    'GIVEN concurrency %i THEN the server sees exactly that many in flight at its peak and every request once',
    async (concurrency) => {
      const workload = parseWorkloadSpec(`${SMALL}&concurrency=${concurrency}`);
      // Hold each answer until the client has filled every slot (or sent everything), so the peak is reached.
      server = await startScriptedServer(async (call, res, s) => {
        await s.until(() => s.inFlight >= concurrency || s.calls.length === workload.expectedRequests);
        await streamAnswer(call, res);
      });
      const result = await runLiveBenchmark({ url: server.url, workload, model: 'm' });
      expect(server.maxInFlight).toBe(concurrency);
      expect(server.calls).toHaveLength(12);
      expect(result.sent).toBe(12);
      expect(result.records).toHaveLength(12);
      expect(result.failed).toBe(0);
      expect(result.peakInFlight).toBe(concurrency);
    },
  );

  it('GIVEN maxRequests 5 THEN exactly 5 requests reach the server, the first 5 in workload order', async () => {
    const workload = parseWorkloadSpec(`${SMALL}&concurrency=2`);
    server = await startScriptedServer((call, res) => streamAnswer(call, res));
    const result = await runLiveBenchmark({ url: server.url, workload, model: 'm', maxRequests: 5 });
    const ids = idsByBody(workload.requests());
    expect(server.calls.map((c) => ids.get(JSON.stringify(c.body.messages))).sort()).toEqual([
      'ss-000000',
      'ss-000001',
      'ss-000002',
      'ss-000003',
      'ss-000004',
    ]);
    expect(result.stopReason).toBe('max-requests');
  });
});

describe('when the live benchmark runs an open loop', () => {
  let server: ScriptedServer;
  afterEach(() => server.close());

  it('GIVEN a server that answers nothing until all requests arrived THEN every request is sent anyway (arrivals do not wait for completions)', async () => {
    const workload = parseWorkloadSpec(`${SMALL}&rate=500`);
    server = await startScriptedServer(async (call, res, s) => {
      await s.until(() => s.calls.length === 12);
      await streamAnswer(call, res);
    });
    const result = await runLiveBenchmark({ url: server.url, workload, model: 'm' });
    expect(server.maxInFlight).toBe(12);
    expect(result.records.every((r) => r.error === undefined)).toBe(true);
  });

  it('GIVEN arrival times THEN requests leave in arrival order, none before its planned time, and the server gets each once', async () => {
    const workload = parseWorkloadSpec(`${SMALL}&rate=200`);
    server = await startScriptedServer((call, res) => streamAnswer(call, res));
    const result = await runLiveBenchmark({ url: server.url, workload, model: 'm' });
    const planned = [...workload.requests()].map((r) => r.id);
    // Send order is the driver's; arrival order at the server may swap requests sent a microsecond apart on
    // two connections, so the server side checks the set.
    expect(result.records.map((r) => r.id)).toEqual(planned);
    const ids = idsByBody(workload.requests());
    expect(server.calls.map((c) => ids.get(JSON.stringify(c.body.messages))).sort()).toEqual(planned);
    for (const r of result.records) expect(r.sentAtMs).toBeGreaterThanOrEqual(r.arrivalMs);
  });

  it('GIVEN a duration ending in a gap between arrivals THEN exactly the arrivals before it are sent', async () => {
    const workload = parseWorkloadSpec(`${SMALL}&rate=20`);
    const arrivals = [...workload.requests()].map((r) => r.arrivalMs);
    // the widest gap among the first arrivals: the duration ends in its middle, far from any arrival
    let best = 1;
    for (let i = 2; i < 8; i++) if (arrivals[i] - arrivals[i - 1] > arrivals[best] - arrivals[best - 1]) best = i;
    const durationMs = (arrivals[best] + arrivals[best - 1]) / 2;
    server = await startScriptedServer((call, res) => streamAnswer(call, res));
    const result = await runLiveBenchmark({ url: server.url, workload, model: 'm', durationMs });
    expect(result.sent).toBe(best);
    expect(server.calls).toHaveLength(best);
    expect(result.stopReason).toBe('duration');
  });

  it('GIVEN a duration that passes while the last answers drain THEN the run counts as completed, not cut by the duration', async () => {
    const workload = parseWorkloadSpec(`${SMALL}&rate=500`);
    const last = Math.max(...[...workload.requests()].map((r) => r.arrivalMs));
    let open = false;
    server = await startScriptedServer(async (call, res, s) => {
      await s.until(() => open);
      await streamAnswer(call, res);
    });
    // answers are held until well after the duration has passed
    void server
      .until(() => server.calls.length === 12)
      .then(() => setTimeout(() => ((open = true), server.notify()), 100));
    const result = await runLiveBenchmark({ url: server.url, workload, model: 'm', durationMs: last + 1 });
    expect(result.sent).toBe(12);
    expect(result.stopReason).toBe('completed');
  });

  it('GIVEN time scale 10 and a server that takes 20 ms per answer THEN arrivals are 10× closer and every duration reads ≥ 200 ms of model time', async () => {
    const workload = parseWorkloadSpec(`${SMALL}&rate=20&count=6`);
    server = await startScriptedServer(async (call, res) => {
      await sleep(20);
      await streamAnswer(call, res);
    });
    const result = await runLiveBenchmark({ url: server.url, workload, model: 'm', timeScale: 10 });
    const last = Math.max(...[...workload.requests()].map((r) => r.arrivalMs));
    // the run may not finish before the last planned arrival (compressed 10×) plus one answer
    expect(result.wallMs).toBeGreaterThanOrEqual(last / 10 + 20 - 1);
    for (const r of result.records) {
      expect(r.e2eMs).toBeGreaterThanOrEqual(200 - 1e-6);
      expect(r.ttftMs!).toBeGreaterThanOrEqual(200 - 1e-6);
      expect(r.sentAtMs).toBeGreaterThanOrEqual(r.arrivalMs);
    }
    expect(result.notes.some((n) => n.startsWith('Time scale 10'))).toBe(true);
  });
});

describe('when a multi-turn workload runs', () => {
  let server: ScriptedServer;
  afterEach(() => server.close());

  const CHAT =
    'short-chat?count=24&systemPrompts=2&systemTokens=20..40&userTokens=5..10&outputTokens=2..4&turns=2..4&thinkSeconds=0&maxContextTokens=400';

  it.each([
    ['open loop', `${CHAT}&rate=200`],
    ['closed loop', `${CHAT}&concurrency=4`],
  ])('GIVEN %s THEN the server receives turn k+1 of a conversation only after it ended turn k', async (_name, spec) => {
    const workload = parseWorkloadSpec(spec);
    server = await startScriptedServer(async (call, res) => {
      await sleep(3);
      await streamAnswer(call, res);
    });
    const result = await runLiveBenchmark({ url: server.url, workload, model: 'm' });
    expect(result.failed).toBe(0);
    const byConversation = new Map<string, { messages: number; arrivedAt: number; endedAt: number }[]>();
    for (const c of server.calls) {
      const user = c.body.user as string;
      const list = byConversation.get(user) ?? [];
      list.push({ messages: (c.body.messages as unknown[]).length, arrivedAt: c.arrivedAt, endedAt: c.endedAt! });
      byConversation.set(user, list);
    }
    const dependents = [...workload.requests()].filter((r) => r.dependsOnId !== undefined).length;
    expect(dependents).toBeGreaterThan(0);
    let checked = 0;
    for (const turns of byConversation.values()) {
      turns.sort((a, b) => a.messages - b.messages);
      for (let k = 1; k < turns.length; k++) {
        expect(turns[k].arrivedAt).toBeGreaterThanOrEqual(turns[k - 1].endedAt);
        checked++;
      }
    }
    expect(checked).toBe(dependents);
    expect(server.calls).toHaveLength(24);
  });
});

describe('when a warm-up is set', () => {
  let server: ScriptedServer;
  afterEach(() => server.close());

  it('GIVEN warmupMs THEN the window starts there and the report counts only requests sent after it', async () => {
    const workload = parseWorkloadSpec(`${SMALL}&rate=40`);
    // eight requests are planned before the warm-up ends, four after
    const warmupMs = [...workload.requests()][8].arrivalMs - 1e-3;
    server = await startScriptedServer((call, res) => streamAnswer(call, res));
    const result = await runLiveBenchmark({
      url: server.url,
      workload,
      model: 'm',
      warmupMs,
      ceilings: { fleetCapacityBlocks: 1000 },
    });
    expect(result.window.startMs).toBe(warmupMs);
    const report = buildReport({ mode: 'live', workload, runs: [toStrategyRun(result, 'live')] });
    const measured = result.records.filter((r) => r.sentAtMs >= warmupMs && r.sentAtMs < result.window.endMs).length;
    expect(measured).toBeLessThan(12);
    expect(report.strategies[0].requests).toBe(measured);
    // the ceilings score the same requests: warm-up ones only filled their caches
    expect(result.ceilings!.requests).toBe(measured);
  });
});
