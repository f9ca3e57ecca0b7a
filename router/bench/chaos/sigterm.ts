/**
 * SIGTERM under load: `prefix-router serve` in its own process, a steady mixed load of 0.5 s streams, then
 * SIGTERM; the load stops and new requests keep probing on fresh connections until the process exits.
 *
 * Invariants: every request sent before the signal ends ok (streams complete with [DONE]) or, if the router
 * had not taken it yet, with 503 shutting_down; every probe after the router logged "router draining" gets 503
 * shutting_down with Retry-After while it drains, or a refused connection once it has stopped listening; at least one
 * probe saw the 503 (the drain was observed); the process exits 0 within the grace period plus `slackMs`.
 */
import { spawn } from 'node:child_process';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { startFakeBackend } from '../fake-openai-backend';
import { chaosBody, openLoopFor, sendChaosRequest, tally, type Outcome } from './chaos-client';

export interface SigtermOptions {
  readonly rate: number;
  readonly loadMs: number;
  readonly shutdownGraceMs: number;
  readonly slackMs: number;
}

export interface SigtermResult {
  readonly beforeSignal: Record<string, number>;
  readonly inFlightAtSignal: number;
  readonly probesAfterSignal: Record<string, number>;
  readonly exitCode: number | null;
  readonly exitAfterMs: number;
  readonly violations: string[];
}

function cliCommand(): { command: string; args: string[] } {
  const ts = __filename.endsWith('.ts');
  const bin = join(__dirname, '..', '..', '..', 'bin', ts ? 'prefix-router.ts' : 'prefix-router.js');
  return { command: process.execPath, args: ts ? ['-r', 'ts-node/register/transpile-only', bin] : [bin] };
}

// eslint-disable-next-line max-lines-per-function -- a benchmark or example script read top to bottom as one scenario
export async function runSigterm(o: SigtermOptions): Promise<SigtermResult> {
  const backends = await Promise.all(
    [0, 1].map((i) =>
      startFakeBackend({ name: `term-${i}`, record: false, behavior: { streamChunks: 20, chunkDelayMs: 25 } }),
    ),
  );
  const { command, args } = cliCommand();
  const child = spawn(
    command,
    [
      ...args,
      'serve',
      ...backends.flatMap((b) => ['--backend', b.url]),
      '--port',
      '0',
      '--health-interval-ms',
      '1000',
      '--shutdown-grace-ms',
      String(o.shutdownGraceMs),
      '--log-level',
      'info',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const violations: string[] = [];
  // One connection per request: no keep-alive race between a reused idle connection and the drain closing it.
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  try {
    let drainingSeenAt = Infinity;
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (drainingSeenAt === Infinity && out.includes('"msg":"router draining"')) drainingSeenAt = performance.now();
        const m =
          /"url":"(http:\/\/[^"]+)".*"msg":"router listening"|"msg":"router listening".*"url":"(http:\/\/[^"]+)"/.exec(
            out,
          );
        if (m !== null) resolve(m[1] ?? m[2]);
      });
      child.stderr.resume();
      void exited.then((code) => reject(new Error(`prefix-router serve exited with ${code} before listening`)));
    });
    const before: Outcome[] = [];
    let signalled = false;
    let inFlightAtSignal = 0;
    let inFlight = 0;
    let lastBeforeEnded = 0;
    const load = openLoopFor(o.rate, o.loadMs * 4, async (i) => {
      if (signalled) return;
      const stream = i % 2 === 0;
      inFlight++;
      before.push(await sendChaosRequest({ url, body: chaosBody(`t${i % 32}`, stream), stream, agent }));
      inFlight--;
      lastBeforeEnded = performance.now();
    });
    await new Promise((r) => setTimeout(r, o.loadMs));
    signalled = true;
    inFlightAtSignal = inFlight;
    const signalAt = performance.now();
    child.kill('SIGTERM');
    let exitAfterMs = 0;
    let probeTally: Record<string, number> = {};
    const exitCode = await (async () => {
      const probes: Promise<Outcome>[] = [];
      const sentAt: number[] = [];
      let done = false;
      void exited.then(() => (done = true));
      while (!done && performance.now() - signalAt < o.shutdownGraceMs + o.slackMs) {
        sentAt.push(performance.now());
        probes.push(sendChaosRequest({ url, body: chaosBody('probe', false), stream: false, agent }));
        await new Promise((r) => setTimeout(r, 20));
      }
      const code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 1000))]);
      exitAfterMs = performance.now() - signalAt;
      const results = await Promise.all(probes);
      probeTally = tally(
        results.map((p) => (p.kind === 'cut' && p.errorCode !== undefined ? { ...p, code: p.errorCode } : p)),
      );
      results.forEach((p, i) => {
        const drained503 =
          p.kind === 'http_error' && p.status === 503 && p.code === 'shutting_down' && p.retryAfter !== undefined;
        const refused = p.kind === 'cut' && p.errorCode === 'ECONNREFUSED';
        // A connection still in the accept queue when the drained router closes its listener is reset by the
        // kernel: possible only once the last in-flight request has finished.
        const resetAtClose = p.kind === 'cut' && p.errorCode === 'ECONNRESET' && sentAt[i] + p.ms >= lastBeforeEnded;
        // The signal reaches the router's handler a moment after kill(): until it logs "router draining", a
        // request may still be served normally.
        const beforeDrainStarted = p.kind === 'ok' && sentAt[i] < drainingSeenAt;
        if (!drained503 && !refused && !resetAtClose && !beforeDrainStarted)
          violations.push(`a request after SIGTERM ended ${p.kind} ${p.status ?? ''} ${p.code ?? p.errorCode ?? ''}`);
      });
      if (!results.some((p) => p.status === 503))
        violations.push('no request saw 503 shutting_down while the router drained');
      return code;
    })();
    await load;
    for (const b of before) {
      const ok = b.kind === 'ok' || (b.kind === 'http_error' && b.status === 503 && b.code === 'shutting_down');
      if (!ok)
        violations.push(
          `a request sent before SIGTERM ended ${b.kind} ${b.status ?? ''} ${b.code ?? b.errorCode ?? ''}`,
        );
    }
    if (exitCode !== 0) violations.push(`exit code ${exitCode}`);
    if (exitAfterMs > o.shutdownGraceMs + o.slackMs)
      violations.push(`exited ${exitAfterMs.toFixed(0)} ms after SIGTERM`);
    return {
      beforeSignal: tally(before),
      inFlightAtSignal,
      probesAfterSignal: probeTally,
      exitCode,
      exitAfterMs: Math.round(exitAfterMs),
      violations: violations.slice(0, 20),
    };
  } finally {
    agent.destroy();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await Promise.all(backends.map((b) => b.close()));
  }
}
