import fc from 'fast-check';
import { Counter, Registry } from 'prom-client';
import {
  cacheCountersOf,
  cacheDeltas,
  normalizeMetricsUrl,
  parsePrometheusText,
  PrometheusTextError,
  sumCounter,
  type CacheScrape,
} from '../../../router/src/benchmark';

describe('when Prometheus text is parsed', () => {
  it('GIVEN labels with escaped quotes, commas and braces, a timestamp and special values THEN every sample is read', () => {
    const text = [
      '# HELP vllm:prefix_cache_hits_total hits',
      '# TYPE vllm:prefix_cache_hits_total counter',
      'vllm:prefix_cache_hits_total{model_name="a \\"b\\", {c}",engine="0"} 42 1700000000000',
      'up 1',
      'x{le="+Inf"} +Inf',
      'y NaN',
      '',
    ].join('\n');
    const samples = parsePrometheusText(text);
    expect(samples[0]).toEqual({
      name: 'vllm:prefix_cache_hits_total',
      labels: { model_name: 'a "b", {c}', engine: '0' },
      value: 42,
    });
    expect(samples[1]).toEqual({ name: 'up', labels: {}, value: 1 });
    expect(samples[2].value).toBe(Infinity);
    expect(Number.isNaN(samples[3].value)).toBe(true);
  });

  it.each([
    ['a value that is not a number', 'metric abc', /line 1: sample value 'abc'/],
    ['an unterminated label value', 'metric{a="x} 1', /line 1: unterminated value of label a/],
    ['a bad metric name', '1metric 1', /line 1: bad metric name/],
  ])('GIVEN %s THEN it throws naming the line', (_name, text, message) => {
    expect(() => parsePrometheusText(text)).toThrow(PrometheusTextError);
    expect(() => parsePrometheusText(text)).toThrow(message);
  });

  it('GIVEN counters with and without _total and a _created sample THEN _total series are summed, _created never counts', () => {
    const samples = parsePrometheusText('c_total{e="0"} 3\nc_total{e="1"} 4\nc_created 1700000000\nd 5\nd{e="1"} 6');
    expect(sumCounter(samples, 'c')).toBe(7);
    expect(sumCounter(samples, 'c_total')).toBe(7);
    expect(sumCounter(samples, 'd')).toBe(11);
    expect(sumCounter(samples, 'missing')).toBeUndefined();
    // both forms present: the _total series win, so nothing is counted twice
    expect(sumCounter(parsePrometheusText('e_total 2\ne 2'), 'e')).toBe(2);
  });

  it('GIVEN any counter values prom-client writes over several label sets THEN the sum read back is their sum', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('m1', 'm"2', 'm\\3'), fc.nat({ max: 1e9 })), { minLength: 1, maxLength: 6 }),
        async (incs) => {
          const registry = new Registry();
          const counter = new Counter({
            name: 'vllm:prefix_cache_queries_total',
            help: 'q',
            labelNames: ['model_name'],
            registers: [registry],
          });
          for (const [model, n] of incs) counter.inc({ model_name: model }, n);
          const samples = parsePrometheusText(await registry.metrics());
          expect(sumCounter(samples, 'vllm:prefix_cache_queries')).toBe(incs.reduce((s, [, n]) => s + n, 0));
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('when backend cache counters are compared', () => {
  const ok = (url: string, queries: number, hits: number): CacheScrape => ({ url, ok: true, queries, hits });

  it('GIVEN two scrapes of every backend THEN per-backend deltas and their sum are reported', () => {
    const summary = cacheDeltas([ok('a', 100, 10), ok('b', 0, 0)], [ok('a', 300, 110), ok('b', 50, 5)]);
    expect(summary.perBackend).toEqual([
      { url: 'a', queries: 200, hits: 100 },
      { url: 'b', queries: 50, hits: 5 },
    ]);
    expect(summary.total).toEqual({ prefixCacheQueries: 250, prefixCacheHits: 105 });
    expect(summary.notes).toEqual([]);
  });

  it('GIVEN a counter that went down THEN it counts from zero (a restart) and says so', () => {
    const summary = cacheDeltas([ok('a', 100, 10)], [ok('a', 40, 4)]);
    expect(summary.total).toEqual({ prefixCacheQueries: 40, prefixCacheHits: 4 });
    expect(summary.notes[0]).toContain('went down');
  });

  it('GIVEN one backend whose scrape failed THEN the total is left out rather than understated, with a note naming it', () => {
    const summary = cacheDeltas(
      [ok('a', 0, 0), { url: 'b', ok: false, problem: 'HTTP 404' }],
      [ok('a', 10, 1), ok('b', 10, 1)],
    );
    expect(summary.total).toBeUndefined();
    expect(summary.perBackend[1]).toEqual({ url: 'b', queries: null, hits: null, problem: 'first scrape: HTTP 404' });
    expect(summary.notes[0]).toContain('b');
  });

  it('GIVEN metrics without the vLLM counters THEN the scrape says what is missing', () => {
    expect(cacheCountersOf('u', 'vllm:gpu_prefix_cache_hit_rate 0.5')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('no vllm:prefix_cache_queries'),
    });
    expect(cacheCountersOf('u', 'vllm:prefix_cache_queries_total 9\nvllm:prefix_cache_hits_total 3')).toEqual(
      ok('u', 9, 3),
    );
  });

  it.each([
    ['http://10.0.0.1:8000', 'http://10.0.0.1:8000/metrics'],
    ['http://10.0.0.1:8000/', 'http://10.0.0.1:8000/metrics'],
    ['https://h/custom/metrics', 'https://h/custom/metrics'],
  ])('GIVEN metrics URL %s THEN it scrapes %s', (raw, url) => {
    expect(normalizeMetricsUrl(raw)).toBe(url);
  });

  it('GIVEN a metrics URL that is not http(s) THEN it is refused', () => {
    expect(() => normalizeMetricsUrl('ftp://h/metrics', '--backend-metrics')).toThrow(
      "--backend-metrics must be an http:// or https:// URL (got 'ftp://h/metrics')",
    );
  });
});

describe('when the KV-cache size is read from vllm:cache_config_info', () => {
  const { kvCacheTokensOf } = jest.requireActual<typeof import('../../../router/src/benchmark/backend-metrics')>(
    '../../../router/src/benchmark/backend-metrics',
  );
  test('GIVEN num_gpu_blocks and block_size labels THEN tokens = blocks × block size', () => {
    const text =
      '# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",engine="0",num_gpu_blocks="84000"} 1\n';
    expect(kvCacheTokensOf(text)).toBe(1_344_000);
  });
  test.each([
    ['vllm:num_requests_running{engine="0"} 0\n'],
    ['vllm:cache_config_info{block_size="16",engine="0"} 1\n'],
    ['vllm:cache_config_info{block_size="16",num_gpu_blocks="None"} 1\n'],
  ])('GIVEN %p THEN unknown', (text) => expect(kvCacheTokensOf(text)).toBeUndefined());
});
