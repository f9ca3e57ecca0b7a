import { Counter, Histogram, Registry } from 'prom-client';
import { parsePrometheusText } from '../../../router/src/common/prometheus-text';
import {
  EmfEmitter,
  emfDocuments,
  engineCounters,
  MAX_EMF_VALUES,
  mergeEngineMetrics,
  PREDICTED_CACHED_METRIC,
  REQUESTS_METRIC,
  TTFT_HISTOGRAM,
  valueChunks,
  type EngineScrape,
} from '../../../router/src/container';

const vllmText = (prompt: number, hits: number) => `# HELP vllm:prompt_tokens_total Prompt tokens.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{model_name="m",engine="0"} ${prompt}
# HELP vllm:prefix_cache_hits_total Hits.
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{model_name="m",engine="0"} ${hits}
# HELP vllm:time_to_first_token_seconds TTFT.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="m"} 1
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 2
vllm:time_to_first_token_seconds_sum{model_name="m"} 0.5
vllm:time_to_first_token_seconds_count{model_name="m"} 2
process_open_fds 12
`;

describe("when the engines' metrics are merged into the router's /metrics", () => {
  it('GIVEN two engines THEN every sample carries its engine label, each family is declared once with its samples together, and the text parses', () => {
    const merged = mergeEngineMetrics([
      { engine: 'engine-0', text: vllmText(10, 4) },
      { engine: 'engine-1', text: vllmText(20, 8) },
      { engine: 'engine-2', text: undefined },
    ]);
    expect(merged.match(/^# TYPE vllm:prompt_tokens_total counter$/gm)).toHaveLength(1);
    const samples = parsePrometheusText(merged);
    expect(
      samples.filter((s) => s.name === 'vllm:prompt_tokens_total').map((s) => [s.labels.prefix_router_engine, s.value]),
    ).toEqual([
      ['engine-0', 10],
      ['engine-1', 20],
    ]);
    expect(samples.find((s) => s.name === 'process_open_fds')?.labels).toEqual({ prefix_router_engine: 'engine-0' });
    // A histogram's bucket, sum and count lines stay in its family, contiguous.
    const lines = merged.split('\n');
    const first = lines.findIndex((l) => l.startsWith('vllm:time_to_first_token_seconds'));
    expect(lines.slice(first, first + 8).every((l) => l.startsWith('vllm:time_to_first_token_seconds'))).toBe(true);
  });

  it('GIVEN a scrape THEN prompt and cache-hit counters are read, and unreadable text gives nothing', () => {
    expect(engineCounters(vllmText(7, 3))).toEqual({ promptTokens: 7, cachedTokens: 3 });
    expect(engineCounters('garbage{')).toEqual({ promptTokens: undefined, cachedTokens: undefined });
    expect(engineCounters(undefined)).toEqual({ promptTokens: undefined, cachedTokens: undefined });
  });
});

describe('when EMF documents are written', () => {
  it('GIVEN one interval THEN names, units, dimensions and namespace follow the contract', () => {
    const docs = emfDocuments({
      timestampMs: 1000,
      namespace: 'PrefixRouter',
      endpointName: 'ep',
      decisionsByReason: new Map([
        ['threshold-spill', 2],
        ['prefix-affinity', 5],
        ['random', 0],
      ]),
      ttftMs: [{ value: 250, count: 2 }],
      engines: [{ engine: 'engine-0', promptTokens: 100, predictedCachedTokens: 0, reportedCachedTokens: 60 }],
    });
    expect(docs).toEqual([
      {
        _aws: {
          Timestamp: 1000,
          CloudWatchMetrics: [
            {
              Namespace: 'PrefixRouter',
              Dimensions: [['EndpointName', 'Reason']],
              Metrics: [{ Name: 'RoutingDecisions', Unit: 'Count' }],
            },
          ],
        },
        EndpointName: 'ep',
        Reason: 'prefix-affinity',
        RoutingDecisions: 5,
      },
      {
        _aws: {
          Timestamp: 1000,
          CloudWatchMetrics: [
            {
              Namespace: 'PrefixRouter',
              Dimensions: [['EndpointName', 'Reason']],
              Metrics: [{ Name: 'RoutingDecisions', Unit: 'Count' }],
            },
          ],
        },
        EndpointName: 'ep',
        Reason: 'threshold-spill',
        RoutingDecisions: 2,
      },
      {
        _aws: {
          Timestamp: 1000,
          CloudWatchMetrics: [
            {
              Namespace: 'PrefixRouter',
              Dimensions: [['EndpointName']],
              Metrics: [{ Name: 'TimeToFirstToken', Unit: 'Milliseconds' }],
            },
          ],
        },
        EndpointName: 'ep',
        TimeToFirstToken: [250, 250],
      },
      {
        _aws: {
          Timestamp: 1000,
          CloudWatchMetrics: [
            {
              Namespace: 'PrefixRouter',
              Dimensions: [['EndpointName', 'Engine']],
              Metrics: [
                { Name: 'PromptTokens', Unit: 'Count' },
                { Name: 'PredictedCachedTokens', Unit: 'Count' },
                { Name: 'ReportedCachedTokens', Unit: 'Count' },
              ],
            },
          ],
        },
        EndpointName: 'ep',
        Engine: 'engine-0',
        PromptTokens: 100,
        PredictedCachedTokens: 0,
        ReportedCachedTokens: 60,
      },
    ]);
  });

  it('GIVEN more values than EMF allows in one array THEN they are split, none lost', () => {
    const chunks = valueChunks([
      { value: 1, count: 150 },
      { value: 2, count: 60 },
    ]);
    expect(chunks.map((c) => c.length)).toEqual([MAX_EMF_VALUES, 100, 10]);
    expect(chunks.flat().filter((v) => v === 2)).toHaveLength(60);
  });
});

describe('when the EMF emitter flushes intervals', () => {
  it('GIVEN router and engine counters THEN each interval reports what changed in it, and an engine restart counts from zero', async () => {
    const registry = new Registry();
    const requests = new Counter({
      name: REQUESTS_METRIC,
      help: 'h',
      labelNames: ['policy', 'reason', 'instance', 'status'],
      registers: [registry],
    });
    const ttft = new Histogram({
      name: TTFT_HISTOGRAM,
      help: 'h',
      labelNames: ['instance'],
      buckets: [0.01, 0.1, 1],
      registers: [registry],
    });
    const predicted = new Counter({
      name: PREDICTED_CACHED_METRIC,
      help: 'h',
      labelNames: ['instance'],
      registers: [registry],
    });
    let scrapes: EngineScrape[] = [{ engine: 'engine-0', text: vllmText(100, 40) }];
    const lines: string[] = [];
    const emitter = new EmfEmitter({
      registry,
      engines: [{ name: 'engine-0', instanceId: 'http://127.0.0.1:8100' }],
      scrapeEngines: async () => scrapes,
      intervalMs: 60_000,
      namespace: 'PrefixRouter',
      endpointName: 'ep',
      write: (l) => lines.push(l),
      now: () => 5,
    });
    const interval = async () => {
      lines.length = 0;
      await emitter.flush();
      return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    };

    requests.inc({ policy: 'p', reason: 'prefix-affinity', instance: 'http://127.0.0.1:8100', status: '200' }, 3);
    ttft.observe({ instance: 'http://127.0.0.1:8100' }, 0.05);
    ttft.observe({ instance: 'http://127.0.0.1:8100' }, 5);
    predicted.inc({ instance: 'http://127.0.0.1:8100' }, 32);
    const first = await interval();
    expect(first.find((d) => d.Reason === 'prefix-affinity')?.RoutingDecisions).toBe(3);
    expect(first.find((d) => d.TimeToFirstToken !== undefined)?.TimeToFirstToken).toEqual([100, 1000]);
    expect(first.find((d) => d.Engine === 'engine-0')).toMatchObject({
      PromptTokens: 100,
      ReportedCachedTokens: 40,
      PredictedCachedTokens: 32,
    });

    requests.inc({ policy: 'p', reason: 'threshold-spill', instance: 'http://127.0.0.1:8100', status: '200' });
    scrapes = [{ engine: 'engine-0', text: vllmText(130, 50) }];
    const second = await interval();
    expect(second.filter((d) => d.Reason !== undefined).map((d) => [d.Reason, d.RoutingDecisions])).toEqual([
      ['threshold-spill', 1],
    ]);
    expect(second.some((d) => d.TimeToFirstToken !== undefined)).toBe(false);
    expect(second.find((d) => d.Engine === 'engine-0')).toMatchObject({
      PromptTokens: 30,
      ReportedCachedTokens: 10,
      PredictedCachedTokens: 0,
    });

    scrapes = [{ engine: 'engine-0', text: vllmText(12, 2) }]; // restarted engine: counters from zero
    expect((await interval()).find((d) => d.Engine === 'engine-0')).toMatchObject({
      PromptTokens: 12,
      ReportedCachedTokens: 2,
    });
    scrapes = [{ engine: 'engine-0', text: undefined }]; // engine down: no line for it
    expect((await interval()).some((d) => d.Engine === 'engine-0')).toBe(false);
    await emitter.stop();
  });
});
