/**
 * `npm run bench:router` — what the router costs, measured side by side with calling a backend directly.
 *
 * The load generator (this process), the router and the fake backends run in separate processes (forked),
 * like a real deployment; on the 2-core dev machine they share the cores, so every figure is a ratio or a
 * difference measured in the same run. Phases:
 *  1. added latency: open loop at `rate` req/s to the router AND `rate` req/s straight to a backend,
 *     interleaved, with 32 KiB chat bodies, non-streamed and streamed; p50/p99 of both and their difference;
 *  2. throughput: closed loop at `concurrency`, direct and routed alternately (twice each), req/s ratio;
 *  3. decision time: policy.decide() in-process at 2/8/32 instances, plus parsing a 32 KiB chat body.
 * Prints a markdown table and writes it into docs/router.md between the bench:router markers.
 */
import { numberFlag } from '../src/cli/flag-values';
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { SeededRng } from '../src/common/seeded-rng';
import { createPolicy, type InstanceView, type PolicyConfig, type RoutingPolicy } from '../src/policy';
import { parseChatRequest, parseInvocationRequest, type RoutingRequest } from '../src/protocol';
import { createRouterLogger, startRouter } from '../src/server';
import type { RouterOptions } from '../src/config';
import { startFakeBackend } from './fake-openai-backend';
import { startNginxReference } from './nginx-reference';
import { closedLoop, openLoop, percentile, sorted, type PathResult, type Target } from './load-generator';
import type { ChildCpu, ChildReady, ChildStats } from './overhead-child';

/** Seconds of open-loop load per mode before the latency phases (see where it is used). */
const WARMUP_SECONDS = 10;

export interface RouterBenchOptions {
  /** Requests per second sent to EACH path (routed and direct) in the latency phase. */
  readonly rate: number;
  /** Requests per path and mode in the latency phase. */
  readonly requests: number;
  /** Duration of each closed-loop throughput phase (4 per mode). */
  readonly throughputPhaseMs: number;
  readonly concurrency: number;
  readonly backends: number;
  readonly decisionIterations: number;
  /** 'child-process' (the benchmark) or 'in-process' (the smoke test: no build needed). */
  readonly isolation: 'child-process' | 'in-process';
  /** Hard limit on the whole run. */
  readonly maxRunMs: number;
}

export const DEFAULT_BENCH_OPTIONS: RouterBenchOptions = {
  rate: 500,
  requests: 5000,
  throughputPhaseMs: 2500,
  concurrency: 32,
  backends: 2,
  decisionIterations: 20_000,
  isolation: 'child-process',
  maxRunMs: 180_000,
};

export interface LatencyRow {
  readonly mode: string;
  /** Router process CPU time per routed request (µs), when it runs in its own process. */
  readonly routerCpuUsPerRequest?: number;
  /** The kernel's (system time) part of routerCpuUsPerRequest. */
  readonly routerSystemUsPerRequest?: number;
  /** The bare Node.js proxy's CPU time per request at the same open-loop rate (its own phase), when it runs. */
  readonly bareCpuUsPerRequest?: number;
  readonly direct: { p50: number; p99: number; n: number; errors: number };
  readonly routed: { p50: number; p99: number; n: number; errors: number };
}

export interface ThroughputRow {
  readonly mode: string;
  readonly directRps: number;
  readonly routedRps: number;
  /** Through nginx (the reference proxy) in the same rounds; undefined when nginx is not installed. */
  readonly nginxRps?: number;
  /** Through the bare Node.js proxy (bare-node-proxy.ts: same stack, no features) in the same rounds. */
  readonly bareRps?: number;
  /** Process CPU per request at saturation (µs), router and bare proxy, when they run in their own processes. */
  readonly routedCpuUs?: number;
  readonly bareCpuUs?: number;
  readonly errors: number;
}

export interface DecisionRow {
  readonly label: string;
  /** instances → { p50, p99 } in microseconds */
  readonly byInstances: Record<number, { p50: number; p99: number }>;
}

export interface RouterBenchResult {
  readonly options: RouterBenchOptions;
  readonly bodyBytes: number;
  readonly latency: LatencyRow[];
  readonly throughput: ThroughputRow[];
  readonly decisions: DecisionRow[];
  readonly parse: { p50: number; p99: number };
  readonly machine: string;
  /** "nginx 1.22.1, one worker" or why there was no reference proxy. */
  readonly reference: string;
}

const BODY_BYTES = 32 * 1024;

/** 64 distinct 32 KiB chat bodies: 8 long system prompts × 8 questions, so requests spread over backends. */
const bodyCache = new Map<boolean, Buffer[]>();

export function benchBodies(stream: boolean): Buffer[] {
  let bodies = bodyCache.get(stream);
  if (bodies === undefined) {
    bodies = generateBodies(stream);
    bodyCache.set(stream, bodies);
  }
  return bodies;
}

function generateBodies(stream: boolean): Buffer[] {
  const rng = new SeededRng(42);
  const words = ['route', 'cache', 'prefix', 'token', 'instance', 'latency', 'sagemaker', 'vllm', 'block', 'policy'];
  const bodies: Buffer[] = [];
  for (let g = 0; g < 8; g++) {
    for (let q = 0; q < 8; q++) {
      const question = `Question ${q} about group ${g}?`;
      const shell = (system: string): string =>
        JSON.stringify({
          model: 'fake-model',
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: question },
          ],
          stream,
          max_tokens: 16,
        });
      // ASCII words only, so characters = bytes and the padding is exact.
      const target = BODY_BYTES - Buffer.byteLength(shell(''));
      let system = `System prompt ${g}: `;
      while (system.length < target) system += `${words[Math.floor(rng.next() * words.length)]} `;
      bodies.push(Buffer.from(shell(system.slice(0, target))));
    }
  }
  return bodies;
}

interface Stack {
  readonly backendUrls: string[];
  readonly routerUrl: string;
  /** The bare Node.js proxy (child-process runs only). */
  readonly bareUrl?: string;
  bareCpuUs?: () => Promise<ChildCpu>;
  /** CPU time (µs) the router process has used so far; undefined in-process (it shares this process). */
  routerCpuUs: () => Promise<ChildCpu | undefined>;
  stop(): Promise<void>;
}

async function startStack(options: RouterBenchOptions): Promise<Stack> {
  // Routing headers on, as measured before they became opt-in: the overhead figures include writing them.
  const routerOptions = (backends: string[]): RouterOptions => ({
    backends,
    port: 0,
    logLevel: 'silent',
    routingHeaders: 'all',
  });
  if (options.isolation === 'in-process') {
    const backends = await Promise.all(
      Array.from({ length: options.backends }, (_, i) => startFakeBackend({ name: `bench-${i}`, record: false })),
    );
    const router = await startRouter(routerOptions(backends.map((b) => b.url)), {
      logger: createRouterLogger('silent'),
    });
    return {
      backendUrls: backends.map((b) => b.url),
      routerUrl: router.url,
      routerCpuUs: () => Promise.resolve(undefined),
      async stop() {
        await router.close();
        await Promise.all(backends.map((b) => b.close()));
      },
    };
  }
  const backendChild = await forkChild(['backend', String(options.backends)]);
  // BENCH_ROUTER_CPU_PROF=<dir>: the router process writes a V8 CPU profile there when it stops (docs/router.md).
  const profileDir = process.env.BENCH_ROUTER_CPU_PROF;
  const profile = profileDir !== undefined && profileDir !== '' ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const routerChild = await forkChild(['router', JSON.stringify(routerOptions(backendChild.ready.urls))], profile);
  const bareChild = await forkChild(['bare-proxy', JSON.stringify(backendChild.ready.urls)]);
  return {
    backendUrls: backendChild.ready.urls,
    routerUrl: routerChild.ready.urls[0],
    bareUrl: bareChild.ready.urls[0],
    routerCpuUs: () => routerChild.cpuUs(),
    bareCpuUs: () => bareChild.cpuUs(),
    async stop() {
      await routerChild.stop();
      await bareChild.stop();
      await backendChild.stop();
    },
  };
}

export interface BenchChild {
  readonly ready: ChildReady;
  cpuUs(): Promise<ChildCpu>;
  stats(): Promise<ChildStats>;
  stop(): Promise<void>;
}

/** Forks overhead-child (compiled, or through ts-node under jest) with `nodeFlags`. */
export async function forkChild(args: string[], nodeFlags: string[] = []): Promise<BenchChild> {
  const ts = __filename.endsWith('.ts');
  const script = join(__dirname, ts ? 'overhead-child.ts' : 'overhead-child.js');
  const child: ChildProcess = fork(script, args, {
    execArgv: [...(ts ? ['-r', 'ts-node/register/transpile-only'] : []), ...nodeFlags],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<ChildReady>((resolve, reject) => {
    child.once('message', (m) => resolve(m as ChildReady));
    child.once('exit', (code) => reject(new Error(`benchmark child ${args[0]} exited with ${code}`)));
  });
  return {
    ready,
    cpuUs: () =>
      new Promise<ChildCpu>((resolve) => {
        child.once('message', (m) => resolve(m as ChildCpu));
        child.send('cpu');
      }),
    stats: () =>
      new Promise<ChildStats>((resolve) => {
        child.once('message', (m) => resolve(m as ChildStats));
        child.send('stats');
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
}

function latencyRow(
  mode: string,
  direct: PathResult,
  routed: PathResult,
  pick: (s: { firstByteUs: number; totalUs: number }) => number,
): LatencyRow {
  const stats = (r: PathResult) => {
    const values = sorted(r.samples.map(pick));
    return {
      p50: percentile(values, 50) / 1000,
      p99: percentile(values, 99) / 1000,
      n: values.length,
      errors: r.errors,
    };
  };
  return { mode, direct: stats(direct), routed: stats(routed) };
}

interface ThroughputPaths {
  readonly direct: Target;
  readonly routed: Target;
  readonly nginx?: Target;
  readonly bare?: Target;
  readonly routedCpu: () => Promise<ChildCpu | undefined>;
  readonly bareCpu?: () => Promise<ChildCpu | undefined>;
}

/** Closed loop on each path in turn, twice; CPU per request of the router and bare proxy during their phases. */
async function measureThroughput(
  mode: string,
  paths: ThroughputPaths,
  bodies: Buffer[],
  options: RouterBenchOptions,
): Promise<ThroughputRow> {
  let directRps = 0;
  let routedRps = 0;
  let nginxRps = 0;
  let bareRps = 0;
  let errors = 0;
  const cpu = { routed: { us: 0, n: 0 }, bare: { us: 0, n: 0 } };
  const phase = async (
    target: Target,
    meter?: () => Promise<ChildCpu | undefined>,
    into?: { us: number; n: number },
  ): Promise<number> => {
    const before = await meter?.();
    const r = await closedLoop(target, bodies, options.concurrency, options.throughputPhaseMs);
    const after = await meter?.();
    errors += r.errors;
    if (before !== undefined && after !== undefined && into !== undefined) {
      into.us += after.cpuUs - before.cpuUs;
      into.n += r.done;
    }
    return r.rps / 2;
  };
  for (let round = 0; round < 2; round++) {
    directRps += await phase(paths.direct);
    routedRps += await phase(paths.routed, paths.routedCpu, cpu.routed);
    if (paths.nginx !== undefined) nginxRps += await phase(paths.nginx);
    if (paths.bare !== undefined) bareRps += await phase(paths.bare, paths.bareCpu, cpu.bare);
  }
  return {
    mode,
    directRps,
    routedRps,
    ...(paths.nginx !== undefined ? { nginxRps } : {}),
    ...(paths.bare !== undefined ? { bareRps } : {}),
    ...(cpu.routed.n > 0 ? { routedCpuUs: cpu.routed.us / cpu.routed.n } : {}),
    ...(cpu.bare.n > 0 ? { bareCpuUs: cpu.bare.us / cpu.bare.n } : {}),
    errors,
  };
}

/** Per-call timing of decide() (µs), after a warm-up. */
function timeDecisions(
  policy: RoutingPolicy,
  requests: RoutingRequest[],
  views: InstanceView[],
  iterations: number,
): { p50: number; p99: number } {
  const snapshot = { instances: views, nowMs: 0 };
  for (let i = 0; i < Math.min(2000, iterations); i++)
    policy.commit(requests[i % requests.length], policy.decide(requests[i % requests.length], snapshot));
  const times = new Float64Array(iterations);
  for (let i = 0; i < iterations; i++) {
    const request = requests[i % requests.length];
    const t0 = process.hrtime.bigint();
    const decision = policy.decide(request, snapshot);
    times[i] = Number(process.hrtime.bigint() - t0) / 1000;
    policy.commit(request, decision);
  }
  const s = Array.from(times).sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99) };
}

export function measureDecisions(iterations: number): {
  decisions: DecisionRow[];
  parse: { p50: number; p99: number };
} {
  const bodies = benchBodies(false);
  const chat = bodies.map((b) => parseChatRequest(b, {}).routing);
  const invocations = bodies.map((b) => parseInvocationRequest(b, { 'content-type': 'application/json' }).routing);
  const cases: Array<{ label: string; config: PolicyConfig; requests: RoutingRequest[] }> = [
    {
      label: 'sagemaker-prefix-aware, 8,192 characters of message text (default)',
      config: { name: 'sagemaker-prefix-aware', prefixLength: 8192 },
      requests: chat,
    },
    {
      label: 'sagemaker-prefix-aware, 32,768 characters of message text',
      config: { name: 'sagemaker-prefix-aware', prefixLength: 32768 },
      requests: chat,
    },
    {
      label: 'sagemaker-prefix-aware, 32,768 body bytes (InvokeEndpoint)',
      config: { name: 'sagemaker-prefix-aware', prefixLength: 32768 },
      requests: invocations,
    },
    { label: 'least-outstanding-requests', config: { name: 'least-outstanding-requests' }, requests: chat },
    { label: 'random', config: { name: 'random' }, requests: chat },
    { label: 'round-robin', config: { name: 'round-robin' }, requests: chat },
  ];
  const decisions = cases.map(({ label, config, requests }) => {
    const byInstances: Record<number, { p50: number; p99: number }> = {};
    for (const n of [2, 8, 32]) {
      const rng = new SeededRng(n);
      const views = Array.from({ length: n }, (_, i) => ({
        id: `http://10.0.${i >> 8}.${i & 255}:8000`,
        healthy: true,
        inFlight: Math.floor(rng.next() * 4),
      }));
      byInstances[n] = timeDecisions(createPolicy(config, { rng: new SeededRng(7) }), requests, views, iterations);
    }
    return { label, byInstances };
  });
  const parseTimes: number[] = [];
  for (let i = 0; i < Math.min(iterations, 5000); i++) {
    const t0 = process.hrtime.bigint();
    parseChatRequest(bodies[i % bodies.length], {});
    parseTimes.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  const parseSorted = sorted(parseTimes.slice(Math.min(500, parseTimes.length >> 2)));
  return { decisions, parse: { p50: percentile(parseSorted, 50), p99: percentile(parseSorted, 99) } };
}

// eslint-disable-next-line max-lines-per-function -- a benchmark or example script read top to bottom as one scenario
export async function runRouterOverheadBench(
  partial: Partial<RouterBenchOptions> = {},
  log: (line: string) => void = () => undefined,
): Promise<RouterBenchResult> {
  const options = { ...DEFAULT_BENCH_OPTIONS, ...partial };
  const deadline = Date.now() + options.maxRunMs;
  const remaining = (): number => Math.max(1000, deadline - Date.now());
  const stack = await startStack(options);
  const direct = new Pool(stack.backendUrls[0], { connections: 256 });
  const router = new Pool(stack.routerUrl, { connections: 256 });
  const directTarget: Target = { pool: direct, path: '/v1/chat/completions' };
  const routedTarget: Target = { pool: router, path: '/v1/chat/completions' };
  // The reference proxy only where processes are separate (the benchmark), not in the in-process smoke test.
  const nginx =
    options.isolation === 'child-process'
      ? await startNginxReference(stack.backendUrls)
      : { missing: 'not started in-process' };
  const nginxPool = 'url' in nginx ? new Pool(nginx.url, { connections: 256 }) : undefined;
  const nginxTarget: Target | undefined =
    nginxPool === undefined ? undefined : { pool: nginxPool, path: '/v1/chat/completions' };
  const barePool = stack.bareUrl === undefined ? undefined : new Pool(stack.bareUrl, { connections: 256 });
  const paths = (): ThroughputPaths => ({
    direct: directTarget,
    routed: routedTarget,
    ...(nginxTarget !== undefined ? { nginx: nginxTarget } : {}),
    ...(barePool !== undefined ? { bare: { pool: barePool, path: '/v1/chat/completions' } } : {}),
    routedCpu: () => stack.routerCpuUs(),
    ...(stack.bareCpuUs !== undefined ? { bareCpu: stack.bareCpuUs } : {}),
  });
  const reference =
    'url' in nginx ? `${nginx.version} (one worker process, keep-alive upstream, proxy_buffering off)` : nginx.missing;
  log(`reference proxy: ${reference}`);
  try {
    const plain = benchBodies(false);
    const streamed = benchBodies(true);
    // Warm up at the measured rate (JIT, connection pools on every hop, heap sizing) so the first phase is not
    // charged for it. Ten seconds per mode: with two, whichever phase ran first still had a p99 1–2 ms higher
    // and about 100 µs more router CPU per request than the same phase run second (measured both ways round).
    log('warming up');
    const warmup = Math.min(options.requests, Math.max(100, options.rate * WARMUP_SECONDS));
    await openLoop([directTarget, routedTarget], plain, options.rate, warmup, remaining());
    await openLoop([directTarget, routedTarget], streamed, options.rate, warmup, remaining());

    const cpuPerRequest = async (
      run: () => Promise<PathResult[]>,
    ): Promise<{ results: PathResult[]; cpu?: number; system?: number }> => {
      const before = await stack.routerCpuUs();
      const results = await run();
      const after = await stack.routerCpuUs();
      const routed = results[1].samples.length + results[1].errors;
      if (before === undefined || after === undefined) return { results };
      return {
        results,
        cpu: (after.cpuUs - before.cpuUs) / routed,
        system: (after.systemUs - before.systemUs) / routed,
      };
    };
    log(`latency: ${options.requests} requests per path at ${options.rate} req/s each, non-streamed`);
    const plainRun = await cpuPerRequest(() =>
      openLoop([directTarget, routedTarget], plain, options.rate, options.requests, remaining()),
    );
    log(`latency: ${options.requests} requests per path at ${options.rate} req/s each, streamed`);
    const streamRun = await cpuPerRequest(() =>
      openLoop([directTarget, routedTarget], streamed, options.rate, options.requests, remaining()),
    );
    const [dPlain, rPlain] = plainRun.results;
    const [dStream, rStream] = streamRun.results;
    log(`throughput: closed loop, concurrency ${options.concurrency}`);
    const throughput = [
      await measureThroughput('non-streamed', paths(), plain, options),
      await measureThroughput('streamed', paths(), streamed, options),
    ];
    // The platform's floor at the latency phases' rate: the bare proxy, warmed up the same way, in phases of its
    // own after everything the router is measured in (so the router's figures are taken as before).
    const bareCpu = stack.bareCpuUs;
    const bareCpuPerRequest = async (
      bodies: readonly Buffer[],
      mode: string,
    ): Promise<{ bareCpuUsPerRequest?: number }> => {
      if (barePool === undefined || bareCpu === undefined) return {};
      const bare: Target = { pool: barePool, path: '/v1/chat/completions' };
      log(`latency: bare Node.js proxy, ${options.requests} requests at ${options.rate} req/s, ${mode}`);
      await openLoop([directTarget, bare], bodies, options.rate, warmup, remaining());
      const before = await bareCpu();
      const results = await openLoop([directTarget, bare], bodies, options.rate, options.requests, remaining());
      const after = await bareCpu();
      return { bareCpuUsPerRequest: (after.cpuUs - before.cpuUs) / (results[1].samples.length + results[1].errors) };
    };
    const barePlain = await bareCpuPerRequest(plain, 'non-streamed');
    const bareStreamed = await bareCpuPerRequest(streamed, 'streamed');
    const latency = [
      {
        ...latencyRow('non-streamed, full response', dPlain, rPlain, (s) => s.totalUs),
        routerCpuUsPerRequest: plainRun.cpu,
        routerSystemUsPerRequest: plainRun.system,
        ...barePlain,
      },
      {
        ...latencyRow('streamed, first byte', dStream, rStream, (s) => s.firstByteUs),
        routerCpuUsPerRequest: streamRun.cpu,
        routerSystemUsPerRequest: streamRun.system,
        ...bareStreamed,
      },
      latencyRow('streamed, full response', dStream, rStream, (s) => s.totalUs),
    ];
    log('decision time');
    const { decisions, parse } = measureDecisions(options.decisionIterations);
    const cpu = cpus();
    const machine = `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at the end`;
    return { options, bodyBytes: BODY_BYTES, latency, throughput, decisions, parse, machine, reference };
  } finally {
    await direct.close();
    await router.close();
    await nginxPool?.close();
    await barePool?.close();
    if ('stop' in nginx) await nginx.stop();
    await stack.stop();
  }
}

const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : 'n/a');
const us = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');

export function renderMarkdown(r: RouterBenchResult, command: string, date: string): string {
  const o = r.options;
  const lines = [
    `Measured ${date} with \`${command}\` on ${r.machine}. Router and ${o.backends} fake backends in separate processes from the load generator; ${r.bodyBytes.toLocaleString('en-US')}-byte chat bodies; policy sagemaker-prefix-aware (defaults).`,
    '',
    `**Added latency** — open loop, ${o.rate} req/s to the router and ${o.rate} req/s straight to a backend, interleaved, ${o.requests} requests each (milliseconds), after ${WARMUP_SECONDS} s of warm-up per mode. The bare Node.js proxy's CPU is measured the same way in phases of its own, after all of the router's:`,
    '',
    '| mode | direct p50 | routed p50 | added p50 | direct p99 | routed p99 | added p99 | router CPU per request | bare proxy CPU per request, same rate | errors (direct/routed) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...r.latency.map(
      (l) =>
        `| ${l.mode} | ${ms(l.direct.p50)} | ${ms(l.routed.p50)} | **${ms(l.routed.p50 - l.direct.p50)}** | ${ms(l.direct.p99)} | ${ms(l.routed.p99)} | **${ms(l.routed.p99 - l.direct.p99)}** | ${l.routerCpuUsPerRequest === undefined ? '' : `${l.routerCpuUsPerRequest.toFixed(0)} µs (kernel ${(l.routerSystemUsPerRequest ?? 0).toFixed(0)})`} | ${l.bareCpuUsPerRequest === undefined ? '' : `${l.bareCpuUsPerRequest.toFixed(0)} µs`} | ${l.direct.errors}/${l.routed.errors} |`,
    ),
    '',
    `**Throughput** — closed loop, ${o.concurrency} concurrent requests, direct, routed, through the reference proxy and through the bare Node.js proxy (\`router/bench/bare-node-proxy.ts\`: node:http + undici, reads the body, hashes 8 KiB, nothing else) in turn (2 × ${o.throughputPhaseMs} ms each). Reference proxy: ${r.reference}. CPU per request is the process's user + system time over its phases ÷ the requests it served.`,
    '',
    '| mode | direct req/s | routed req/s | nginx req/s | bare Node.js req/s | routed / nginx | bare / nginx | router CPU per request | bare proxy CPU per request | errors |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...r.throughput.map((t) => {
      const ratio = (a: number | undefined, b: number | undefined): string =>
        a === undefined || b === undefined ? 'n/a' : (a / b).toFixed(2);
      const rate = (v: number | undefined): string => (v === undefined ? 'n/a' : v.toFixed(0));
      const cpuUs = (v: number | undefined): string => (v === undefined ? 'n/a' : `${v.toFixed(0)} µs`);
      return `| ${t.mode} | ${rate(t.directRps)} | ${rate(t.routedRps)} | ${rate(t.nginxRps)} | ${rate(t.bareRps)} | **${ratio(t.routedRps, t.nginxRps)}** | ${ratio(t.bareRps, t.nginxRps)} | ${cpuUs(t.routedCpuUs)} | ${cpuUs(t.bareCpuUs)} | ${t.errors} |`;
    }),
    '',
    `**Decision time** — \`policy.decide()\` in-process, ${o.decisionIterations.toLocaleString('en-US')} decisions per cell, p50 / p99 in microseconds (parsing a 32 KiB chat body, done once per request before deciding: p50 ${us(r.parse.p50)} µs, p99 ${us(r.parse.p99)} µs):`,
    '',
    '| policy | 2 instances | 8 instances | 32 instances |',
    '| --- | ---: | ---: | ---: |',
    ...r.decisions.map(
      (d) =>
        `| ${d.label} | ${[2, 8, 32].map((n) => `${us(d.byInstances[n].p50)} / ${us(d.byInstances[n].p99)}`).join(' | ')} |`,
    ),
  ];
  return lines.join('\n');
}

const BEGIN = '<!-- bench:router:begin -->';
const END = '<!-- bench:router:end -->';

export function writeIntoDocs(docsPath: string, markdown: string): void {
  const block = `${BEGIN}\n${markdown}\n${END}`;
  const current = existsSync(docsPath) ? readFileSync(docsPath, 'utf8') : '';
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next =
    start !== -1 && end > start
      ? `${current.slice(0, start)}${block}${current.slice(end + END.length)}`
      : `${current}\n## Router overhead\n\n${block}\n`;
  writeFileSync(docsPath, next);
}

function parseArgs(argv: string[]): { options: Partial<RouterBenchOptions>; write: boolean } {
  const options: Record<string, number> = {};
  let write = true;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--no-write') write = false;
    else if (a.startsWith('--')) {
      const key = a.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      if (!(key in DEFAULT_BENCH_OPTIONS)) throw new Error(`unknown option ${a}`);
      options[key] = numberFlag(a.slice(2), argv[++i], 0, Number.MAX_SAFE_INTEGER, true);
    }
  }
  return { options: options, write };
}

async function main(): Promise<void> {
  const { options, write } = parseArgs(process.argv.slice(2));
  const result = await runRouterOverheadBench(options, (line) => process.stderr.write(`bench:router: ${line}\n`));
  const args = process.argv.slice(2).filter((a) => a !== '--no-write');
  const command = `npm run bench:router${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`;
  const markdown = renderMarkdown(result, command, new Date().toISOString().slice(0, 10));
  process.stdout.write(`${markdown}\n`);
  if (write) {
    const docs = join(__dirname, '..', '..', ...(__filename.endsWith('.ts') ? [] : ['..']), 'docs', 'router.md');
    writeIntoDocs(docs, markdown);
    process.stderr.write(`bench:router: table written to ${docs}\n`);
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench:router failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
