import type { Backend } from './backend';

/**
 * The KV-cache capacity of a vLLM backend, in tokens, from its Prometheus info metric
 * `vllm:cache_config_info{block_size="16",num_gpu_blocks="84000",…} 1` (served by vLLM and by the emulator).
 * Undefined when the backend does not expose it; the cache-aware policy then uses its kvCacheTokens option.
 */
export function kvCapacityFromMetrics(text: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith('vllm:cache_config_info{'));
  if (line === undefined) return undefined;
  const label = (name: string): number | undefined => {
    const m = new RegExp(`[{,]${name}="(\\d+)"`).exec(line);
    return m === null ? undefined : Number(m[1]);
  };
  const blocks = label('num_gpu_blocks');
  const blockSize = label('block_size');
  if (blocks === undefined || blockSize === undefined || blocks <= 0 || blockSize <= 0) return undefined;
  return blocks * blockSize;
}

/** Reads a backend's /metrics once and records its KV capacity; any failure leaves it unknown (never throws). */
export async function readKvCapacity(backend: Backend, timeoutMs: number): Promise<void> {
  try {
    // The whole read within timeoutMs: a backend that trickles its answer cannot hold up the router's start.
    const res = await backend.pool.request({
      method: 'GET',
      path: `${backend.basePath}/metrics`,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.body.text();
    if (res.statusCode === 200) backend.kvCapacityTokens = kvCapacityFromMetrics(text);
  } catch {
    // Not every backend serves /metrics; the policy falls back to its configured capacity.
  }
}

/**
 * The context length a vLLM backend serves, in tokens: the largest `max_model_len` of the models its GET /v1/models
 * lists (vLLM's model card carries it; so does the emulator). Undefined when none states one. Read with the served
 * models list (server/served-models.ts), the one reader of /v1/models.
 */
export function maxModelLenFromModels(json: unknown): number | undefined {
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  let longest: number | undefined;
  for (const model of data) {
    const len = (model as { max_model_len?: unknown } | null)?.max_model_len;
    if (typeof len === 'number' && Number.isSafeInteger(len) && len > 0) longest = Math.max(longest ?? 0, len);
  }
  return longest;
}
