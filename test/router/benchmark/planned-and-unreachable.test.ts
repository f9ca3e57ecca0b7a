import http from 'node:http';
import { createServer } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseBenchArgv } from '../../../router/src/cli/bench-flags';
import { runBenchWithOutcome } from '../../../router/src/cli/bench-run';
import { plannedRequests } from '../../../router/src/benchmark/planned-requests';
import { discoverModel, ModelDiscoveryError } from '../../../router/src/benchmark/served-model';
import { parseTargetUrl } from '../../../router/src/benchmark/target-url';

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('when bench targets a server that is down', () => {
  test('GIVEN nothing listening THEN the error says the server is unreachable and does not blame --model', async () => {
    const port = await closedPort();
    const settings = parseBenchArgv([
      '--url',
      `http://127.0.0.1:${port}`,
      '--workload',
      'short-chat?count=2',
      '--quiet',
      '--out',
      await mkdtemp(join(tmpdir(), 'down-')),
    ]);
    const io = { stdout: { write: () => true }, stderr: { write: () => true } };
    const failure = runBenchWithOutcome(settings, io);
    await expect(failure).rejects.toThrow(`the server at http://127.0.0.1:${port} is unreachable (connection refused`);
    await expect(failure).rejects.not.toThrow(/--model/);
  });

  test('GIVEN a server that answers /v1/models without a model THEN the error names --model', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[]}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      await expect(discoverModel(parseTargetUrl(url, '--url'))).rejects.toThrow(
        new ModelDiscoveryError(`GET ${url}/v1/models listed no model; pass the model name with --model`),
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('when progress plans the total', () => {
  const closed = {
    expectedRequests: 2400,
    expectedRequestsExact: false,
    load: { mode: 'closed', concurrency: 16 } as const,
  };
  const poisson = {
    expectedRequests: 4800,
    expectedRequestsExact: false,
    load: { mode: 'open-poisson', ratePerSecond: 8 } as const,
  };

  test('GIVEN no duration THEN the workload count, capped by max requests', () => {
    expect(plannedRequests(poisson, { maxRequests: Infinity, durationMs: Infinity }, { sent: 0, modelMs: 0 })).toEqual({
      expected: 4800,
      exact: false,
    });
    expect(plannedRequests(poisson, { maxRequests: 100, durationMs: Infinity }, { sent: 0, modelMs: 0 })).toEqual({
      expected: 100,
      exact: true,
    });
  });

  test('GIVEN an open loop bounded by --duration THEN rate × duration, marked approximate', () => {
    expect(plannedRequests(poisson, { maxRequests: Infinity, durationMs: 120_000 }, { sent: 0, modelMs: 0 })).toEqual({
      expected: 960,
      exact: false,
    });
  });

  test('GIVEN a closed loop bounded by --duration THEN the pace so far extrapolated to the duration', () => {
    expect(plannedRequests(closed, { maxRequests: Infinity, durationMs: 120_000 }, { sent: 0, modelMs: 0 })).toEqual({
      expected: 2400,
      exact: false,
    });
    expect(
      plannedRequests(closed, { maxRequests: Infinity, durationMs: 120_000 }, { sent: 50, modelMs: 30_000 }),
    ).toEqual({ expected: 200, exact: false });
    // Past the duration (draining), never below what was sent.
    expect(
      plannedRequests(closed, { maxRequests: Infinity, durationMs: 120_000 }, { sent: 210, modelMs: 125_000 }),
    ).toEqual({ expected: 210, exact: false });
  });

  test('GIVEN a duration longer than the workload THEN the workload count stands', () => {
    expect(
      plannedRequests(
        { ...poisson, expectedRequests: 40, expectedRequestsExact: true },
        { maxRequests: Infinity, durationMs: 3_600_000 },
        { sent: 0, modelMs: 0 },
      ),
    ).toEqual({ expected: 40, exact: true });
  });
});
