/**
 * Child process for the router benchmark, so the load generator, the router and the backends each have their
 * own event loop (as in production). Started with child_process.fork:
 *   overhead-child backend <count>          → starts <count> fake backends, sends { urls }
 *   overhead-child router <RouterOptions>   → starts a router (logs silent), sends { url }
 *   overhead-child bare-proxy <urls JSON>   → starts the bare Node.js proxy (bare-node-proxy.ts), sends { url }
 * and then waits for 'stop' on IPC.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startRouter, type RunningRouter } from '../src/server';
import type { RouterOptions } from '../src/config';
import { createRouterLogger } from '../src/server/logger';
import { startBareNodeProxy } from './bare-node-proxy';
import { startFakeBackend, type FakeBackend } from './fake-openai-backend';

export interface ChildReady {
  readonly urls: string[];
}

/** Resource figures of the child (the chaos soak): after a full GC when the child runs with --expose-gc. */
export interface ChildStats {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  /** Open TCP handles (listening sockets included). */
  readonly tcpHandles: number;
  /** Event-loop delay since the previous 'stats' message, in milliseconds. */
  readonly eventLoopDelayP99Ms: number;
  readonly eventLoopDelayMaxMs: number;
}

export interface ChildCpu {
  readonly cpuUs: number;
  /** The kernel's share of cpuUs (system time: loopback TCP, syscalls). */
  readonly systemUs: number;
}

async function main(): Promise<void> {
  const [role, arg] = process.argv.slice(2);
  let stop: () => Promise<void>;
  let urls: string[];
  if (role === 'backend') {
    const backends: FakeBackend[] = await Promise.all(
      Array.from({ length: Number(arg) }, (_, i) => startFakeBackend({ name: `bench-${i}`, record: false })),
    );
    urls = backends.map((b) => b.url);
    stop = async () => {
      await Promise.all(backends.map((b) => b.close()));
    };
  } else if (role === 'router') {
    const router: RunningRouter = await startRouter(JSON.parse(arg) as RouterOptions, {
      logger: createRouterLogger('silent'),
    });
    urls = [router.url];
    stop = () => router.close();
  } else if (role === 'bare-proxy') {
    const proxy = await startBareNodeProxy(JSON.parse(arg) as string[]);
    urls = [proxy.url];
    stop = () => proxy.close();
  } else {
    throw new Error(`unknown role ${role}`);
  }
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  process.on('message', (message) => {
    if (message === 'stats') {
      (globalThis as { gc?: () => void }).gc?.();
      const memory = process.memoryUsage();
      const stats: ChildStats = {
        rssBytes: memory.rss,
        heapUsedBytes: memory.heapUsed,
        tcpHandles: process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP')).length,
        eventLoopDelayP99Ms: delay.percentile(99) / 1e6,
        eventLoopDelayMaxMs: delay.max / 1e6,
      };
      delay.reset();
      process.send?.(stats);
    }
    if (message === 'stop') void stop().then(() => process.exit(0));
    // CPU time used so far (µs, user + system), so the benchmark can report router CPU per request.
    if (message === 'cpu') {
      const usage = process.cpuUsage();
      process.send?.({ cpuUs: usage.user + usage.system, systemUs: usage.system } satisfies ChildCpu);
    }
  });
  process.send?.({ urls } satisfies ChildReady);
}

main().catch((err: unknown) => {
  process.stderr.write(`overhead-child: ${String(err)}\n`);
  process.exit(1);
});
