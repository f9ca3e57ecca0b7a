import { modelCardsOf } from '../protocol/model-cards';
import type { Backend } from './backend';
import { maxModelLenFromModels } from './cache-config';

export type { ModelCard } from '../protocol/model-cards';

/**
 * How the router learns which models and adapters each engine serves: from the engine itself, GET /v1/models,
 * which vLLM answers with its served model and every LoRA adapter it holds (`--lora-modules`, and adapters loaded
 * at run time through /v1/load_lora_adapter), one card each (https://docs.vllm.ai/en/latest/features/lora/).
 * Not from router configuration: a second list beside the engines' own would drift from it whenever an adapter
 * is loaded or unloaded, and a request sent on a stale list gets the engine's 404.
 *
 * When: every backend at start; a backend again each time health checks admit it (an engine restarted with other
 * adapters); every backend when a request names a model none is known to serve (an adapter loaded at run time),
 * at most once per MISS_REFRESH_MS; and every REFRESH_MS in the background (an adapter unloaded). An engine whose
 * list cannot be read keeps the last one read, or stays unknown (served as before: it may take any model).
 */
/** Background re-read period: bounds how long a request can still be sent to an engine that unloaded its adapter. */
export const REFRESH_MS = 30_000;
/** Least time between two fleet-wide re-reads caused by requests for unknown models (a flood of them costs one per period). */
export const MISS_REFRESH_MS = 1_000;

/** Most bytes of a GET /v1/models answer read (a model list is a few hundred bytes a model). */
const MAX_MODELS_BYTES = 1024 * 1024;

export class ServedModelsDirectory {
  private readonly reading = new Map<Backend, Promise<void>>();
  private lastMissRefreshMs = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly backends: readonly Backend[],
    private readonly timeoutMs: number,
    /** The Authorization value to send (the router's upstream key), if any. */
    private readonly authorization: () => string | undefined,
  ) {}

  /** Re-reads one backend's list (and its context length, max_model_len); concurrent calls share one read; never throws. */
  refresh(backend: Backend): Promise<void> {
    let read = this.reading.get(backend);
    if (read === undefined) {
      read = this.read(backend).finally(() => this.reading.delete(backend));
      this.reading.set(backend, read);
    }
    return read;
  }

  refreshAll(): Promise<void> {
    return Promise.all(this.backends.map((b) => this.refresh(b))).then(() => undefined);
  }

  /** A request named a model no engine is known to serve: re-read every list unless that was done within MISS_REFRESH_MS. True when it re-read. */
  async refreshOnMiss(nowMs: number): Promise<boolean> {
    if (nowMs - this.lastMissRefreshMs < MISS_REFRESH_MS) return false;
    this.lastMissRefreshMs = nowMs;
    await this.refreshAll();
    return true;
  }

  /** Starts the background re-reads. */
  start(): void {
    this.timer ??= setInterval(() => void this.refreshAll(), REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async read(backend: Backend): Promise<void> {
    try {
      const authorization = this.authorization();
      const res = await backend.pool.request({
        method: 'GET',
        path: `${backend.basePath}/v1/models`,
        headers: authorization === undefined ? {} : { authorization },
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_MODELS_BYTES) {
          res.body.destroy();
          return;
        }
        chunks.push(chunk);
      }
      if (res.statusCode !== 200) return;
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const cards = modelCardsOf(body);
      if (cards === undefined) return;
      backend.modelCards = cards;
      backend.servedModels = new Set(cards.map((c) => c.id));
      backend.maxModelLen = maxModelLenFromModels(body);
    } catch {
      // Unreachable, slow or not JSON: the last list read (or none) stands.
    }
  }
}
