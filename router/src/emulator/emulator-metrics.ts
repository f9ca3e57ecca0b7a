/**
 * Prometheus metrics under vLLM's own names, types, labels (`model_name`, `engine`) and histogram buckets, on a
 * private registry per emulator so several instances can live in one process. The list, the buckets and the
 * meaning of each family follow vLLM's `vllm/v1/metrics/loggers.py` (PrometheusStatLogger, v0.11 line);
 * test/router/emulator/vllm-metrics-parity.test.ts holds the reference list and checks every family.
 *
 * Gauges and counters are read from the engine at scrape time; histograms are observed from engine events as
 * they are delivered, in the engine's virtual seconds (what the modelled hardware would show, independent of
 * --time-scale). Request phases as vLLM defines them: queue = arrival → first scheduled; prefill = first
 * scheduled → first token; decode = first token → last token; inference = first scheduled → last token.
 *
 * vLLM's Python client names a counter `vllm:x` and prints its samples as `vllm:x_total`; prom-client prints
 * names verbatim, so our counters are declared with the `_total` suffix to produce the same sample lines.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EngineEvent, EngineModel, EngineStats, StepRecord } from './engine-model';
import type { EngineProfile } from './engine-profile';

const LABELS = ['model_name', 'engine'] as const;
type Label = (typeof LABELS)[number];

/** vLLM's TTFT buckets (seconds). */
export const VLLM_TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
  640.0, 2560.0,
];
/** vLLM's inter-token latency buckets (seconds). */
export const VLLM_ITL_BUCKETS = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
];
/** vLLM's request latency buckets (seconds): e2e, queue, prefill, decode, inference. */
export const VLLM_REQUEST_LATENCY_BUCKETS = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
  7680.0,
];
/** vLLM's tokens-per-engine-step buckets. */
export const VLLM_ITERATION_TOKENS_BUCKETS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
/** vLLM's finish reasons (FinishReason): every one has a series from the start. */
export const VLLM_FINISH_REASONS = ['stop', 'length', 'abort'] as const;

/** 1, 2, 5, 10, 20, 50, … up to `max` (vLLM's build_1_2_5_buckets, for token-count histograms). */
export function buckets125(max: number): number[] {
  const out: number[] = [];
  for (let scale = 1; ; scale *= 10) {
    for (const m of [1, 2, 5]) {
      if (m * scale > max) return out;
      out.push(m * scale);
    }
  }
}

type CounterField =
  | 'prefixCacheQueryTokens'
  | 'prefixCacheHitTokens'
  | 'promptTokens'
  | 'generationTokens'
  | 'preemptions'
  | 'finished'
  | 'aborted';

/** Per-request times (virtual ms) between its events. */
interface RequestTimes {
  scheduledMs: number;
  lastTokenMs: number;
}

type HistogramName =
  'ttft' | 'itl' | 'e2e' | 'queue' | 'prefill' | 'decode' | 'inference' | 'prompt' | 'generation' | 'iteration';

/** A request running with an adapter: its name and whether the engine is running it now (else it waits). */
interface AdapterRequest {
  readonly adapter: string;
  running: boolean;
}

/** What every engine series is built from: its labels, the registry, and the engine's figures read at scrape. */
interface SeriesContext {
  readonly labels: Record<Label, string>;
  readonly registers: Registry[];
  readonly stats: () => EngineStats;
}

/** The engine's queue lengths and KV-cache usage, read at each scrape. */
function registerEngineGauges({ labels, registers, stats }: SeriesContext): void {
  const gauge = (name: string, help: string, read: (s: EngineStats) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: LABELS,
      registers,
      collect() {
        this.set(labels, read(stats()));
      },
    });
  };
  gauge('vllm:num_requests_running', 'Number of requests in model execution batches.', (s) => s.running);
  gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', (s) => s.waiting);
  gauge(
    'vllm:kv_cache_usage_perc',
    'KV-cache usage. 1 means 100 percent usage (cached but unreferenced blocks count as free).',
    (s) => s.kvUsage,
  );
}

/** The engine's running totals (prefix cache, tokens, preemptions, finished requests), as vLLM's counters. */
function registerEngineCounters({ labels, registers, stats }: SeriesContext): void {
  const counter = (name: string, help: string, field: CounterField, extraLabels: Record<string, string> = {}): void => {
    let seen = 0;
    const all = { ...labels, ...extraLabels };
    new Counter({
      name,
      help,
      labelNames: [...LABELS, ...Object.keys(extraLabels)],
      registers,
      collect() {
        const value = stats()[field];
        if (value > seen) this.inc(all, value - seen);
        else this.inc(all, 0); // make the series exist from the first scrape
        seen = value;
      },
    });
  };
  counter(
    'vllm:prefix_cache_queries_total',
    'Prefix cache queries, in terms of number of queried tokens (re-admissions after preemption excluded).',
    'prefixCacheQueryTokens',
  );
  counter(
    'vllm:prefix_cache_hits_total',
    'Prefix cache hits, in terms of number of cached tokens (re-admissions after preemption excluded).',
    'prefixCacheHitTokens',
  );
  counter('vllm:prompt_tokens_total', 'Number of prefill tokens processed.', 'promptTokens');
  counter('vllm:generation_tokens_total', 'Number of generation tokens processed.', 'generationTokens');
  counter('vllm:num_preemptions_total', 'Cumulative number of preemption from the engine.', 'preemptions');

  // request_success_total: the engine always generates max_tokens, so every finish is `length`; aborts are
  // client disconnects; `stop` exists (at 0) as in vLLM, where every reason has a series.
  const seen = { length: 0, abort: 0 };
  new Counter({
    name: 'vllm:request_success_total',
    help: 'Count of successfully processed requests.',
    labelNames: [...LABELS, 'finished_reason'],
    registers,
    collect() {
      const s = stats();
      this.inc({ ...labels, finished_reason: 'stop' }, 0);
      this.inc({ ...labels, finished_reason: 'length' }, Math.max(0, s.finished - seen.length));
      this.inc({ ...labels, finished_reason: 'abort' }, Math.max(0, s.aborted - seen.abort));
      seen.length = s.finished;
      seen.abort = s.aborted;
    },
  });
}

/**
 * An info metric as vLLM exports it: a gauge fixed at 1 whose labels carry the cache configuration.
 * Routers size their prefix index from it; bench sums it for the fleet ceiling.
 */
function registerCacheConfigInfo(registers: Registry[], profile: EngineProfile): void {
  const info = new Gauge({
    name: 'vllm:cache_config_info',
    help: 'Information of the LLMEngine CacheConfig',
    labelNames: ['block_size', 'num_gpu_blocks', 'enable_prefix_caching', 'engine'],
    registers,
  });
  info.set(
    {
      block_size: String(profile.blockTokens),
      num_gpu_blocks: String(profile.kvCapacityBlocks),
      enable_prefix_caching: 'True',
      engine: '0',
    },
    1,
  );
}

/**
 * vLLM's per-adapter view (PrometheusStatLogger, LoRA enabled): one series whose labels list the adapters of
 * running and of waiting requests (comma-separated, each once) and max_lora, valued at the time of the update.
 */
function registerLoraRequestsInfo(
  registers: Registry[],
  maxLoras: number,
  adapterRequests: ReadonlyMap<string, AdapterRequest>,
): void {
  new Gauge({
    name: 'vllm:lora_requests_info',
    help: 'Running stats on lora requests.',
    labelNames: ['max_lora', 'waiting_lora_adapters', 'running_lora_adapters'],
    registers,
    collect() {
      const running = new Set<string>();
      const waiting = new Set<string>();
      for (const r of adapterRequests.values()) (r.running ? running : waiting).add(r.adapter);
      this.reset();
      this.set(
        {
          max_lora: String(maxLoras),
          waiting_lora_adapters: [...waiting].join(','),
          running_lora_adapters: [...running].join(','),
        },
        Date.now() / 1000,
      );
    },
  });
}

/** vLLM's latency and token-count histograms, zero-valued from the start. */
function latencyHistograms(
  { labels, registers }: SeriesContext,
  profile: EngineProfile,
): Record<HistogramName, Histogram<Label>> {
  const tokenBuckets = buckets125(profile.maxModelLen);
  const histogram = (name: string, help: string, buckets: number[]): Histogram<Label> => {
    const h = new Histogram({ name, help, labelNames: LABELS, buckets, registers });
    h.zero(labels); // zero-valued series from the start, as vLLM exposes them
    return h;
  };
  return {
    ttft: histogram(
      'vllm:time_to_first_token_seconds',
      'Histogram of time to first token in seconds.',
      VLLM_TTFT_BUCKETS,
    ),
    itl: histogram(
      'vllm:inter_token_latency_seconds',
      'Histogram of inter-token latency in seconds.',
      VLLM_ITL_BUCKETS,
    ),
    e2e: histogram(
      'vllm:e2e_request_latency_seconds',
      'Histogram of e2e request latency in seconds.',
      VLLM_REQUEST_LATENCY_BUCKETS,
    ),
    queue: histogram(
      'vllm:request_queue_time_seconds',
      'Histogram of time spent in WAITING phase for request.',
      VLLM_REQUEST_LATENCY_BUCKETS,
    ),
    prefill: histogram(
      'vllm:request_prefill_time_seconds',
      'Histogram of time spent in PREFILL phase for request.',
      VLLM_REQUEST_LATENCY_BUCKETS,
    ),
    decode: histogram(
      'vllm:request_decode_time_seconds',
      'Histogram of time spent in DECODE phase for request.',
      VLLM_REQUEST_LATENCY_BUCKETS,
    ),
    inference: histogram(
      'vllm:request_inference_time_seconds',
      'Histogram of time spent in RUNNING phase for request.',
      VLLM_REQUEST_LATENCY_BUCKETS,
    ),
    prompt: histogram('vllm:request_prompt_tokens', 'Number of prefill tokens processed.', tokenBuckets),
    generation: histogram('vllm:request_generation_tokens', 'Number of generation tokens processed.', tokenBuckets),
    iteration: histogram(
      'vllm:iteration_tokens_total',
      'Histogram of number of tokens per engine_step.',
      VLLM_ITERATION_TOKENS_BUCKETS,
    ),
  };
}

export class EmulatorMetrics {
  readonly registry = new Registry();
  private readonly labels: { model_name: string; engine: string };
  private readonly histograms: Record<HistogramName, Histogram<Label>>;
  private readonly times = new Map<string, RequestTimes>();
  /** Requests running with an adapter: its name and whether the engine is running it now (else it waits). */
  private readonly adapterRequests = new Map<string, AdapterRequest>();

  /**
   * `maxLoras`: set when the engine serves LoRA adapters (vLLM `--enable-lora`); only then is
   * `vllm:lora_requests_info` exported, as vLLM does.
   */
  constructor(engine: EngineModel, modelName: string, profile: EngineProfile = engine.profile, maxLoras?: number) {
    this.labels = { model_name: modelName, engine: '0' };
    const series: SeriesContext = {
      labels: this.labels,
      registers: [this.registry],
      stats: (): EngineStats => engine.stats(),
    };
    registerEngineGauges(series);
    registerEngineCounters(series);
    registerCacheConfigInfo(series.registers, profile);
    if (maxLoras !== undefined) registerLoraRequestsInfo(series.registers, maxLoras, this.adapterRequests);
    this.histograms = latencyHistograms(series, profile);
  }

  /** One engine step: tokens it scheduled (prefill + decode), as vLLM's iteration_tokens_total. */
  observeStep(step: StepRecord): void {
    if (step.scheduledTokens > 0) this.histograms.iteration.observe(this.labels, step.scheduledTokens);
  }

  /** A request entered the engine (waiting), with the adapter it runs with, if any. */
  started(id: string, adapter: string | undefined): void {
    if (adapter !== undefined) this.adapterRequests.set(id, { adapter, running: false });
  }

  observe(event: EngineEvent): void {
    const h = this.histograms;
    const adapterRequest = this.adapterRequests.get(event.id);
    if (adapterRequest !== undefined) {
      if (event.type === 'admitted') adapterRequest.running = true;
      else if (event.type === 'preempted') adapterRequest.running = false;
      else if (event.type === 'finished') this.adapterRequests.delete(event.id);
    }
    switch (event.type) {
      case 'admitted':
        if (!event.resumed) this.times.set(event.id, { scheduledMs: event.timeMs, lastTokenMs: NaN });
        return;
      case 'first-token': {
        const t = this.times.get(event.id);
        if (t) t.lastTokenMs = event.timeMs;
        return;
      }
      case 'token': {
        const t = this.times.get(event.id);
        if (t === undefined) return;
        if (event.outputTokens > 1 && t.lastTokenMs === t.lastTokenMs)
          h.itl.observe(this.labels, (event.timeMs - t.lastTokenMs) / 1000);
        t.lastTokenMs = event.timeMs;
        return;
      }
      case 'finished': {
        const t = this.times.get(event.id);
        this.times.delete(event.id);
        const firstTokenMs = event.timeMs - event.e2eMs + event.ttftMs;
        const arrivalMs = event.timeMs - event.e2eMs;
        const scheduledMs = t?.scheduledMs ?? arrivalMs;
        h.ttft.observe(this.labels, event.ttftMs / 1000);
        h.e2e.observe(this.labels, event.e2eMs / 1000);
        h.queue.observe(this.labels, (scheduledMs - arrivalMs) / 1000);
        h.prefill.observe(this.labels, (firstTokenMs - scheduledMs) / 1000);
        h.decode.observe(this.labels, (event.timeMs - firstTokenMs) / 1000);
        h.inference.observe(this.labels, (event.timeMs - scheduledMs) / 1000);
        h.prompt.observe(this.labels, event.promptTokens);
        h.generation.observe(this.labels, event.outputTokens);
        return;
      }
      default:
        return;
    }
  }

  /** The request was aborted: drop its timing state (the abort itself is counted from the engine's stats). */
  forget(id: string): void {
    this.times.delete(id);
    this.adapterRequests.delete(id);
  }

  contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
