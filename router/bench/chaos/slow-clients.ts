/**
 * Slow clients (slowloris): `slowClients` connections trickle their headers or their body a few bytes at a
 * time, while normal requests keep coming at `rate` req/s. Latency of the normal requests is measured first
 * without, then with the slow clients.
 *
 * Invariants: every slow client is cut off — answered 408 request_timeout (JSON) and disconnected — within its
 * timeout plus `slackMs`; every normal request succeeds in both phases; afterwards every load counter is 0.
 */
import { connect, type Socket } from 'node:net';
import { chaosBody, openLoopFor, percentileMs, sendChaosRequest, tally, type Outcome } from './chaos-client';
import { loadCounters, nonZero, startChaosStack } from './chaos-stack';

export interface SlowClientOptions {
  readonly slowClients: number;
  readonly rate: number;
  readonly phaseMs: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  /** How late past its timeout a slow client may be cut (the machine may be busy). */
  readonly slackMs: number;
}

export interface SlowClientResult {
  readonly slowClients: number;
  readonly cutOff: Record<string, number>;
  /** Milliseconds from connecting to being disconnected, worst case per kind. */
  readonly worstCutMs: { headers: number; body: number };
  readonly normal: { without: { n: number; p50: number; p99: number }; with: { n: number; p50: number; p99: number } };
  readonly normalOutcomes: Record<string, number>;
  readonly violations: string[];
}

interface SlowEnd {
  readonly kind: 'headers' | 'body';
  readonly status: string;
  readonly ms: number;
}

function slowClient(port: number, kind: 'headers' | 'body', maxMs: number): Promise<SlowEnd> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket: Socket = connect(port, '127.0.0.1');
    const body = chaosBody('slow', false, 4096);
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: slow\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n`;
    let data = '';
    let sent = 0;
    const payload = kind === 'headers' ? Buffer.from(`${head}X-Slow: ${'s'.repeat(400)}\r\n\r\n`) : body;
    const tick = setInterval(() => {
      if (socket.destroyed || sent >= payload.length || performance.now() - started > maxMs) {
        if (performance.now() - started > maxMs) socket.destroy();
        return;
      }
      socket.write(payload.subarray(sent, sent + 4));
      sent += 4;
    }, 200);
    socket.on('connect', () => {
      if (kind === 'body') socket.write(`${head}\r\n`);
      else {
        socket.write(payload.subarray(0, 20));
        sent = 20;
      }
    });
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(tick);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 'none';
      const code = /"code":"([a-z_]+)"/.exec(data)?.[1];
      resolve({ kind, status: code !== undefined ? `${status} ${code}` : status, ms: performance.now() - started });
    });
  });
}

export async function runSlowClients(o: SlowClientOptions): Promise<SlowClientResult> {
  const stack = await startChaosStack(
    2,
    {},
    { limits: { headersTimeoutMs: o.headersTimeoutMs, bodyTimeoutMs: o.bodyTimeoutMs } },
  );
  const violations: string[] = [];
  const normal = async (into: Outcome[]): Promise<void> => {
    await openLoopFor(o.rate, o.phaseMs, async (i) => {
      const stream = i % 2 === 0;
      into.push(
        await sendChaosRequest({
          url: stack.router.url,
          body: chaosBody(`n${i % 16}`, stream, 1024),
          stream,
          agent: stack.agent,
        }),
      );
    });
  };
  try {
    const without: Outcome[] = [];
    await normal(without);
    const maxMs = Math.max(o.headersTimeoutMs, o.bodyTimeoutMs) + o.slackMs + 5000;
    const slow = Array.from({ length: o.slowClients }, (_, i) =>
      slowClient(stack.router.port, i % 2 === 0 ? 'headers' : 'body', maxMs),
    );
    const withSlow: Outcome[] = [];
    await normal(withSlow);
    const ends = await Promise.all(slow);
    const cutOff: Record<string, number> = {};
    const worst = { headers: 0, body: 0 };
    for (const e of ends) {
      cutOff[`${e.kind}: ${e.status}`] = (cutOff[`${e.kind}: ${e.status}`] ?? 0) + 1;
      worst[e.kind] = Math.max(worst[e.kind], e.ms);
      const limit = (e.kind === 'headers' ? o.headersTimeoutMs : o.bodyTimeoutMs) + o.slackMs;
      if (e.status !== '408 request_timeout') violations.push(`a slow ${e.kind} client ended with ${e.status}`);
      else if (e.ms > limit)
        violations.push(`a slow ${e.kind} client was cut after ${e.ms.toFixed(0)} ms (limit ${limit})`);
    }
    const all = [...without, ...withSlow];
    const failed = all.filter((x) => x.kind !== 'ok');
    if (failed.length > 0) violations.push(`${failed.length} normal requests failed: ${JSON.stringify(tally(failed))}`);
    const stats = (xs: Outcome[]) => ({
      n: xs.length,
      p50: percentileMs(
        xs.map((x) => x.ms),
        50,
      ),
      p99: percentileMs(
        xs.map((x) => x.ms),
        99,
      ),
    });
    const left = nonZero(await loadCounters(stack.router));
    if (Object.keys(left).length > 0) violations.push(`load counters not 0: ${JSON.stringify(left)}`);
    return {
      slowClients: o.slowClients,
      cutOff: Object.fromEntries(Object.entries(cutOff).slice(0, 10)),
      worstCutMs: { headers: Math.round(worst.headers), body: Math.round(worst.body) },
      normal: { without: stats(without), with: stats(withSlow) },
      normalOutcomes: tally(all),
      violations: violations.slice(0, 20),
    };
  } finally {
    await stack.close();
  }
}
