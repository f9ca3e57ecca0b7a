/**
 * Child process for the router benchmark, so the load generator, the router and the backends each have their
 * own event loop (as in production). Started with child_process.fork:
 *   overhead-child backend <count>          → starts <count> fake backends, sends { urls }
 *   overhead-child router <RouterOptions>   → starts a router (logs silent), sends { url }
 * and then waits for 'stop' on IPC.
 */
import { startRouter, type RunningRouter } from '../src/server';
import type { RouterOptions } from '../src/config';
import { createRouterLogger } from '../src/server/logger';
import { startFakeBackend, type FakeBackend } from './fake-openai-backend';

export interface ChildReady {
  readonly urls: string[];
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
    const router: RunningRouter = await startRouter(JSON.parse(arg) as RouterOptions, { logger: createRouterLogger('silent') });
    urls = [router.url];
    stop = () => router.close();
  } else {
    throw new Error(`unknown role ${role}`);
  }
  process.on('message', (message) => {
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
