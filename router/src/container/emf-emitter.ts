import type { Registry } from 'prom-client';
import { engineCounters, type EngineScrape } from './engine-metrics';
import { emfDocuments, type EngineTokens } from './emf-format';

/**
 * Once per interval, turns the router's Prometheus counters and the engines' counters into EMF lines on stdout
 * (see emf-format.ts and docs/container.md):
 * - RoutingDecisions: Δ prefix_router_requests_total by reason (every routed request once, retries included
 *   once).
 * - TimeToFirstToken: Δ of the router's prefix_router_upstream_ttft_seconds histogram (dispatch → first
 *   response byte; for a streamed request that is its first token), one value per request at its bucket's
 *   upper bound, so CloudWatch percentiles have the histogram's bucket resolution.
 * - PromptTokens / ReportedCachedTokens: Δ of each engine's vllm:prompt_tokens / vllm:prefix_cache_hits.
 * - PredictedCachedTokens: Δ prefix_router_predicted_cached_tokens_total by instance when the policy exports
 *   it, else 0 (the SageMaker-style policy predicts nothing).
 * A counter that went down (an engine restarted) counts from zero.
 */
export const REQUESTS_METRIC = 'prefix_router_requests_total';
export const TTFT_HISTOGRAM = 'prefix_router_upstream_ttft_seconds';
export const PREDICTED_CACHED_METRIC = 'prefix_router_predicted_cached_tokens_total';

export interface EmfEngine {
  readonly name: string;
  /** The router's instance id of this engine (its backend URL). */
  readonly instanceId: string;
}

export interface EmfEmitterOptions {
  readonly registry: Registry;
  readonly engines: readonly EmfEngine[];
  readonly scrapeEngines: () => Promise<readonly EngineScrape[]>;
  readonly intervalMs: number;
  readonly namespace: string;
  readonly endpointName: string;
  readonly write: (line: string) => void;
  readonly now?: () => number;
}

interface MetricJson {
  readonly name: string;
  readonly values: ReadonlyArray<{
    readonly value: number;
    readonly labels: Readonly<Record<string, string | number>>;
    readonly metricName?: string;
  }>;
}

export class EmfEmitter {
  private timer: NodeJS.Timeout | undefined;
  private readonly previous = new Map<string, number>();
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly options: EmfEmitterOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes the last, partial interval. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** Collects one interval and writes its lines; flushes never overlap. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.collectAndWrite()).catch(() => undefined);
    return this.flushing;
  }

  private delta(key: string, cumulative: number): number {
    const before = this.previous.get(key) ?? 0;
    this.previous.set(key, cumulative);
    return cumulative >= before ? cumulative - before : cumulative;
  }

  private async collectAndWrite(): Promise<void> {
    const [metrics, scrapes] = await Promise.all([
      this.options.registry.getMetricsAsJSON() as Promise<MetricJson[]>,
      this.options.scrapeEngines(),
    ]);
    const byName = new Map(metrics.map((m) => [m.name, m]));

    const requestsByReason = new Map<string, number>();
    for (const v of byName.get(REQUESTS_METRIC)?.values ?? []) {
      const reason = String(v.labels.reason ?? 'unknown');
      requestsByReason.set(reason, (requestsByReason.get(reason) ?? 0) + v.value);
    }
    const decisionsByReason = new Map<string, number>();
    for (const [reason, total] of requestsByReason)
      decisionsByReason.set(reason, this.delta(`requests/${reason}`, total));

    const ttftMs = this.ttftDeltas(byName.get(TTFT_HISTOGRAM));

    const predictedByInstance = new Map<string, number>();
    for (const v of byName.get(PREDICTED_CACHED_METRIC)?.values ?? []) {
      const instance = String(v.labels.instance ?? '');
      predictedByInstance.set(instance, (predictedByInstance.get(instance) ?? 0) + v.value);
    }
    const engines: EngineTokens[] = [];
    for (const engine of this.options.engines) {
      const counters = engineCounters(scrapes.find((s) => s.engine === engine.name)?.text);
      if (counters.promptTokens === undefined || counters.cachedTokens === undefined) continue;
      engines.push({
        engine: engine.name,
        promptTokens: this.delta(`prompt/${engine.name}`, counters.promptTokens),
        reportedCachedTokens: this.delta(`cached/${engine.name}`, counters.cachedTokens),
        predictedCachedTokens: this.delta(`predicted/${engine.name}`, predictedByInstance.get(engine.instanceId) ?? 0),
      });
    }

    const docs = emfDocuments({
      timestampMs: (this.options.now ?? Date.now)(),
      namespace: this.options.namespace,
      endpointName: this.options.endpointName,
      decisionsByReason,
      ttftMs,
      engines,
    });
    for (const doc of docs) this.options.write(`${JSON.stringify(doc)}\n`);
  }

  /** Per-bucket request counts of the interval, each at the bucket's upper bound in milliseconds. */
  private ttftDeltas(histogram: MetricJson | undefined): Array<{ value: number; count: number }> {
    const cumulativeByLe = new Map<number, number>();
    for (const v of histogram?.values ?? []) {
      if (v.metricName !== `${TTFT_HISTOGRAM}_bucket`) continue;
      const le = v.labels.le === '+Inf' ? Infinity : Number(v.labels.le);
      cumulativeByLe.set(le, (cumulativeByLe.get(le) ?? 0) + v.value);
    }
    const bounds = [...cumulativeByLe.keys()].sort((a, b) => a - b);
    const largestFinite = bounds.filter(Number.isFinite).at(-1) ?? 0;
    const out: Array<{ value: number; count: number }> = [];
    let below = 0;
    for (const le of bounds) {
      const cumulativeDelta = this.delta(`ttft/${le}`, cumulativeByLe.get(le) ?? 0);
      const count = cumulativeDelta - below;
      below = cumulativeDelta;
      if (count > 0) out.push({ value: (Number.isFinite(le) ? le : largestFinite) * 1000, count });
    }
    return out;
  }
}
