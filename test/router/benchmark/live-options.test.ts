import {
  LiveBenchmarkOptionsError,
  parseTargetUrl,
  resolveLiveOptions,
  type LiveBenchmarkOptions,
} from '../../../router/src/benchmark';
import { parseWorkloadSpec } from '../../../router/src/workload';

const workload = parseWorkloadSpec('short-chat?count=4');
const valid: LiveBenchmarkOptions = { url: 'http://127.0.0.1:8080', workload };

function problemsOf(options: Partial<LiveBenchmarkOptions>): readonly string[] {
  try {
    resolveLiveOptions({ ...valid, ...options });
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(LiveBenchmarkOptionsError);
    return (err as LiveBenchmarkOptionsError).problems;
  }
}

describe('when live benchmark options are validated', () => {
  it('GIVEN only url and workload THEN the defaults apply', () => {
    const r = resolveLiveOptions(valid);
    expect(r).toMatchObject({
      timeScale: 1,
      warmupMs: 0,
      requestTimeoutMs: 600_000,
      drainTimeoutMs: 600_000,
      instanceHeader: 'x-prefix-router-instance',
      maxConnections: 1024,
      ignoreEos: true,
    });
    expect(r.maxRequests).toBe(Infinity);
    expect(r.durationMs).toBe(Infinity);
  });

  it('GIVEN a closed loop THEN connections default to its concurrency', () => {
    expect(resolveLiveOptions({ ...valid, load: { mode: 'closed', concurrency: 12 } }).maxConnections).toBe(12);
  });

  it.each([
    [{ timeScale: 0 }, 'timeScale must be a number in (0, 1000000] (got 0)'],
    [{ timeScale: 1_000_001 }, 'timeScale must be a number in (0, 1000000] (got 1000001)'],
    [{ maxRequests: 0 }, 'maxRequests must be an integer in [1, 100000000] (got 0)'],
    [{ maxRequests: 1.5 }, 'maxRequests must be an integer in [1, 100000000] (got 1.5)'],
    [{ durationMs: 0 }, 'durationMs must be a number in (0, 604800000] (got 0)'],
    [{ warmupMs: -1 }, 'warmupMs must be a number in [0, 604800000] (got -1)'],
    [{ warmupMs: 1000, durationMs: 1000 }, 'warmupMs (1000) must be shorter than durationMs (1000)'],
    [{ requestTimeoutMs: 0 }, 'requestTimeoutMs must be a number in (0, 86400000] (got 0)'],
    [{ drainTimeoutMs: -1 }, 'drainTimeoutMs must be a number in [0, 86400000] (got -1)'],
    [{ maxConnections: 0 }, 'maxConnections must be an integer in [1, 65536] (got 0)'],
    [{ load: { mode: 'closed', concurrency: 0 } as const }, 'concurrency must be an integer in [1, 100000] (got 0)'],
    [{ instanceHeader: 'bad header' }, "instanceHeader must be an HTTP header name (got 'bad header')"],
    [{ model: ' ' }, 'model must not be empty'],
    [{ url: 'ftp://x' }, "url must be an http:// or https:// URL (got 'ftp://x')"],
    [{ backendMetricsUrls: ['nope'] }, "backendMetricsUrls entry must be an http:// or https:// URL (got 'nope')"],
    [{ headers: { 'a b': 'x' } }, "headers: 'a b' is not an HTTP header name"],
    [{ ceilings: { fleetCapacityBlocks: 0 } }, 'ceilings.fleetCapacityBlocks must be a positive integer (got 0)'],
  ])('GIVEN %p THEN the problem is named: %s', (options, message) => {
    expect(problemsOf(options as Partial<LiveBenchmarkOptions>)).toEqual([message]);
  });

  it('GIVEN several bad options THEN all are reported at once', () => {
    expect(problemsOf({ timeScale: -1, maxRequests: 0 })).toHaveLength(2);
  });

  it.each([
    ['http://h:8080', 'http://h:8080', ''],
    ['http://h:8080/', 'http://h:8080', ''],
    ['http://h:8080/v1', 'http://h:8080', ''],
    ['https://h/endpoints/e/openai/v1/', 'https://h', '/endpoints/e/openai'],
  ])('GIVEN url %s THEN requests go to %s%s/v1/…', (raw, origin, basePath) => {
    expect(parseTargetUrl(raw)).toMatchObject({ origin, basePath });
  });

  it.each([
    ['http://user:pw@h', 'url must not carry credentials; pass them as a header'],
    ['http://h/?a=1', "url must not have a query or fragment (got 'http://h/?a=1')"],
    ['localhost:8080', "url must be an http:// or https:// URL (got 'localhost:8080')"],
  ])('GIVEN url %s THEN it is refused: %s', (raw, message) => {
    expect(() => parseTargetUrl(raw)).toThrow(message);
  });
});
