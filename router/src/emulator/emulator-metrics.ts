/**
 * Prometheus metrics under vLLM's own names, types and labels (`model_name`, `engine`), on a private
 * registry per emulator so several instances can live in one process. Gauges and counters are read from the
 * engine at scrape time; latency histograms are observed as requests finish, in the engine's virtual seconds
 * (what the modelled hardware would show, independent of --time-scale).
 *
 * vLLM's Python client names a counter `vllm:x` and prints its samples as `vllm:x_total`; prom-client prints
 * names verbatim, so our counters are declared with the `_total` suffix to produce the same sample lines.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EngineEvent, EngineModel, EngineStats } from './engine-model';

const LABELS = ['model_name', 'engine'] as const;

/** Bucket bounds (seconds) chosen to resolve cached (tens of ms) and queued (seconds) first tokens. */
const TTFT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 20, 40, 80, 160];
const E2E_BUCKETS = [0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120, 240, 480, 960, 1920];

type CounterField = 'prefixCacheQueryTokens' | 'prefixCacheHitTokens' | 'promptTokens' | 'generationTokens' | 'preemptions' | 'finished';

export class EmulatorMetrics {
  readonly registry = new Registry();
  private readonly labels: { model_name: string; engine: string };
  private readonly ttft: Histogram<(typeof LABELS)[number]>;
  private readonly e2e: Histogram<(typeof LABELS)[number]>;

  constructor(engine: EngineModel, modelName: string) {
    this.labels = { model_name: modelName, engine: '0' };
    const labels = this.labels;
    const registers = [this.registry];
    const stats = (): EngineStats => engine.stats();

    // vLLM's info metric: the KV-cache layout as labels, value 1. Routers size their prefix index from it.
    const profile = engine.profile;
    new Gauge({
      name: 'vllm:cache_config_info',
      help: 'Information of the LLMEngine CacheConfig.',
      labelNames: ['block_size', 'num_gpu_blocks', 'enable_prefix_caching', 'engine'] as const,
      registers,
    }).set({ block_size: String(profile.blockTokens), num_gpu_blocks: String(profile.kvCapacityBlocks), enable_prefix_caching: 'True', engine: '0' }, 1);
    new Gauge({
      name: 'vllm:num_requests_running',
      help: 'Requests the engine is running (in the current batch).',
      labelNames: LABELS,
      registers,
      collect() {
        this.set(labels, stats().running);
      },
    });
    new Gauge({
      name: 'vllm:num_requests_waiting',
      help: 'Requests queued for admission.',
      labelNames: LABELS,
      registers,
      collect() {
        this.set(labels, stats().waiting);
      },
    });
    new Gauge({
      name: 'vllm:kv_cache_usage_perc',
      help: 'Fraction of KV-cache blocks held by requests (0 to 1); cached but unreferenced blocks count as free.',
      labelNames: LABELS,
      registers,
      collect() {
        this.set(labels, stats().kvUsage);
      },
    });

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
    counter('vllm:prefix_cache_queries_total', 'Prefix-cache lookups, in tokens (prompt tokens of admitted requests).', 'prefixCacheQueryTokens');
    counter('vllm:prefix_cache_hits_total', 'Prefix-cache hits, in tokens served from cached blocks.', 'prefixCacheHitTokens');
    counter('vllm:prompt_tokens_total', 'Prompt tokens of requests that produced their first token.', 'promptTokens');
    counter('vllm:generation_tokens_total', 'Tokens generated.', 'generationTokens');
    counter('vllm:num_preemptions_total', 'Requests preempted (KV cache exhausted), recomputed later.', 'preemptions');
    counter('vllm:request_success_total', 'Requests finished, by reason.', 'finished', { finished_reason: 'length' });

    this.ttft = new Histogram({
      name: 'vllm:time_to_first_token_seconds',
      help: 'Time to first token, in the engine model\'s seconds.',
      labelNames: LABELS,
      buckets: TTFT_BUCKETS,
      registers,
    });
    this.e2e = new Histogram({
      name: 'vllm:e2e_request_latency_seconds',
      help: 'End-to-end request latency, in the engine model\'s seconds.',
      labelNames: LABELS,
      buckets: E2E_BUCKETS,
      registers,
    });
    // Zero-valued series from the start, as vLLM exposes them.
    this.ttft.zero(labels);
    this.e2e.zero(labels);
  }

  observe(event: EngineEvent): void {
    if (event.type !== 'finished') return;
    this.ttft.observe(this.labels, event.ttftMs / 1000);
    this.e2e.observe(this.labels, event.e2eMs / 1000);
  }

  contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
