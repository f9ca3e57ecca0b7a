import type { KvEventSink } from './kv-event';

/** One engine's event stream: the backend it belongs to and the ZeroMQ endpoint its engine publishes on. */
export interface KvEventStream {
  /** The backend's id (its normalized URL), as the engine index names it. */
  readonly engine: string;
  /** The engine's publisher, e.g. tcp://127.0.0.1:5557. */
  readonly endpoint: string;
}

/**
 * What delivers engines' KV events to a sink: the ZeroMQ subscriber for live engines, or any in-process source in
 * tests. Batches reach `sink.applyBatch` in sequence order per engine; a loss it cannot repair is `sink.markStale`.
 */
export interface KvEventSource {
  start(streams: readonly KvEventStream[], sink: KvEventSink): void;
  close(): Promise<void>;
}
