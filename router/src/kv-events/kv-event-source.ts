import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KvEventSink } from './kv-event';
import { KvEventSubscriber } from './kv-event-subscriber';

/** One engine's event stream: the backend it belongs to and the ZeroMQ endpoint its engine publishes on. */
export interface KvEventStream {
  /** The backend's id (its normalized URL), as the engine index names it. */
  readonly engine: string;
  /** The engine's publisher, e.g. tcp://127.0.0.1:5557. */
  readonly endpoint: string;
  /** Its replay socket (vLLM's replay_endpoint), when it has one. */
  readonly replayEndpoint?: string;
}

/**
 * What delivers engines' KV events to a sink: the ZeroMQ subscriber for live engines, or any in-process source in
 * tests. Batches reach `sink.applyBatch` in sequence order per engine; a loss it cannot repair is `sink.markStale`.
 */
export interface KvEventSource {
  start(streams: readonly KvEventStream[], sink: KvEventSink): void;
  close(): Promise<void>;
}

/**
 * The live source: one KvEventSubscriber per engine on the ZeroMQ endpoint its engine publishes on (loopback only:
 * events carry prompts). A subscriber that cannot start is logged and its engine stays unknown (the estimate).
 */
export function zmqKvEventSource(registry: Registry, logger: Logger): KvEventSource {
  let subscribers: Promise<KvEventSubscriber | undefined>[] = [];
  return {
    start(streams, sink) {
      subscribers = streams.map(({ engine, endpoint, replayEndpoint }) =>
        KvEventSubscriber.connect({ engine, endpoint, replayEndpoint, sink, registry, logger }).catch(
          (error: unknown) => {
            logger.error({ engine }, `KV events: cannot subscribe: ${(error as Error).message}`);
            return undefined;
          },
        ),
      );
    },
    async close() {
      const started = await Promise.all(subscribers);
      await Promise.all(started.map((s) => s?.close() ?? Promise.resolve()));
    },
  };
}
