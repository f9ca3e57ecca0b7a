import { Agent } from 'undici';
import type { PrometheusCacheDeltas } from '../report/report-model';
import { errorMessage } from '../common/request-errors';
import { parsePrometheusText, sumCounter } from '../common/prometheus-text';

/**
 * Engine-reported prefix-cache counters from each backend's Prometheus endpoint (vLLM's
 * `vllm:prefix_cache_queries` / `vllm:prefix_cache_hits`, in tokens), scraped before the measured window and
 * at the end; the report shows Δhits ÷ Δqueries beside the usage-derived hit rate.
 */
export const PREFIX_CACHE_QUERIES = 'vllm:prefix_cache_queries';
export const PREFIX_CACHE_HITS = 'vllm:prefix_cache_hits';

export type CacheScrape =
  | { readonly url: string; readonly ok: true; readonly queries: number; readonly hits: number }
  | { readonly url: string; readonly ok: false; readonly problem: string };

export interface BackendCacheDelta {
  readonly url: string;
  /** Δ queries / Δ hits over the window; null when a scrape failed or the counters were missing. */
  readonly queries: number | null;
  readonly hits: number | null;
  readonly problem?: string;
}

export interface CacheDeltaSummary {
  readonly perBackend: readonly BackendCacheDelta[];
  /** Sums over every backend; undefined unless every backend gave both scrapes. */
  readonly total?: PrometheusCacheDeltas;
  readonly notes: readonly string[];
}

/**
 * A metrics URL as given, or a server root: a URL whose path is empty or '/' gets `/metrics` (vLLM's path).
 * Must be http(s).
 */
export function normalizeMetricsUrl(raw: string, name = 'backend metrics URL'): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RangeError(`${name} must be an http:// or https:// URL (got '${raw}')`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RangeError(`${name} must be an http:// or https:// URL (got '${raw}')`);
  if (url.pathname === '' || url.pathname === '/') url.pathname = '/metrics';
  return url.toString();
}

/** Counters of one scrape, or why there are none. */
export function cacheCountersOf(url: string, text: string): CacheScrape {
  try {
    const samples = parsePrometheusText(text);
    const queries = sumCounter(samples, PREFIX_CACHE_QUERIES);
    const hits = sumCounter(samples, PREFIX_CACHE_HITS);
    if (queries === undefined || hits === undefined) {
      return {
        url,
        ok: false,
        problem: `no ${PREFIX_CACHE_QUERIES}/${PREFIX_CACHE_HITS} counters (a vLLM older than V1, or not vLLM)`,
      };
    }
    return { url, ok: true, queries, hits };
  } catch (err) {
    return { url, ok: false, problem: `unreadable metrics: ${errorMessage(err)}` };
  }
}

function delta(before: number, after: number): number {
  // A counter that went down was reset (the backend restarted): Prometheus counts from zero then.
  return after >= before ? after - before : after;
}

/** Per-backend deltas between two scrapes of the same URLs (same order), and their sum when all are known. */
export function cacheDeltas(before: readonly CacheScrape[], after: readonly CacheScrape[]): CacheDeltaSummary {
  const notes: string[] = [];
  const perBackend: BackendCacheDelta[] = before.map((b, i) => {
    const a = after[i];
    if (!b.ok || a === undefined || !a.ok) {
      const problem = !b.ok
        ? `first scrape: ${b.problem}`
        : a === undefined || a.ok
          ? 'no final scrape'
          : `final scrape: ${a.problem}`;
      notes.push(`Prometheus counters of ${b.url} are unknown (${problem}); the Prometheus hit rate is left out.`);
      return { url: b.url, queries: null, hits: null, problem };
    }
    if (a.queries < b.queries || a.hits < b.hits)
      notes.push(`Prefix-cache counters of ${b.url} went down during the run (restart?); counted from zero.`);
    return { url: b.url, queries: delta(b.queries, a.queries), hits: delta(b.hits, a.hits) };
  });
  const complete = perBackend.length > 0 && perBackend.every((d) => d.queries !== null && d.hits !== null);
  const total = complete
    ? {
        prefixCacheQueries: perBackend.reduce((s, d) => s + d.queries!, 0),
        prefixCacheHits: perBackend.reduce((s, d) => s + d.hits!, 0),
      }
    : undefined;
  return { perBackend, total, notes };
}

/** Scrapes backends' /metrics; one keep-alive agent for all of them, closed with close(). */
export class BackendMetricsScraper {
  private readonly agent = new Agent({ connections: 4 });

  constructor(
    readonly urls: readonly string[],
    private readonly timeoutMs: number,
  ) {}

  scrapeAll(): Promise<CacheScrape[]> {
    return Promise.all(this.urls.map((url) => this.scrape(url)));
  }

  async scrape(url: string): Promise<CacheScrape> {
    try {
      const parsed = new URL(url);
      const res = await this.agent.request({
        origin: parsed.origin,
        path: parsed.pathname + parsed.search,
        method: 'GET',
        headers: { accept: 'text/plain' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) return { url, ok: false, problem: `HTTP ${res.statusCode}` };
      return cacheCountersOf(url, text);
    } catch (err) {
      return { url, ok: false, problem: errorMessage(err) };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/**
 * KV-cache tokens one backend holds, from vLLM's `vllm:cache_config_info` (labels `num_gpu_blocks` and
 * `block_size`; the emulator exports the same); undefined when the metric or either label is missing.
 */
export function kvCacheTokensOf(text: string): number | undefined {
  const info = parsePrometheusText(text).find((s) => s.name === 'vllm:cache_config_info');
  const blocks = Number(info?.labels.num_gpu_blocks);
  const blockSize = Number(info?.labels.block_size);
  return Number.isFinite(blocks) && blocks > 0 && Number.isFinite(blockSize) && blockSize > 0
    ? blocks * blockSize
    : undefined;
}

/** Σ KV-cache tokens over every backend, or undefined when any backend does not say (the sum would undercount). */
export async function fleetKvTokensOf(urls: readonly string[], timeoutMs = 10_000): Promise<number | undefined> {
  if (urls.length === 0) return undefined;
  const agent = new Agent({ connections: 4 });
  try {
    const each = await Promise.all(
      urls.map(async (url) => {
        try {
          const parsed = new URL(url);
          const res = await agent.request({
            origin: parsed.origin,
            path: parsed.pathname + parsed.search,
            method: 'GET',
            signal: AbortSignal.timeout(timeoutMs),
          });
          const text = await res.body.text();
          return res.statusCode === 200 ? kvCacheTokensOf(text) : undefined;
        } catch {
          return undefined;
        }
      }),
    );
    return each.every((t) => t !== undefined) ? each.reduce((a, t) => a + t, 0) : undefined;
  } finally {
    await agent.close();
  }
}
