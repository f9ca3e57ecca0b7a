import type { RoutingRequest } from '../protocol/routing-request';
import { PromptHasher } from './prompt-hasher';
import type { Workload } from '../workload';
import { routingRequestOf } from '../feed/workload-routing';
import type { WorkloadRequest } from '../workload/workload-request';

/**
 * A workload request as the simulator needs it: what the router sees (`routing`), what the engine sees (block
 * hashes and token count of the rendered prompt), and the few fields that schedule it. No prompt text beyond
 * the routing text, so a request costs the simulator one copy of its text, not three.
 */
export interface PreparedRequest extends Pick<
  WorkloadRequest,
  'id' | 'arrivalMs' | 'dependsOnId' | 'maxTokens' | 'priority'
> {
  readonly routing: RoutingRequest;
  /** `blockHashes(renderedPromptOf(request), { blockTokens })`. */
  readonly hashes: Float64Array;
  readonly promptTokens: number;
}

/**
 * A workload's requests, prepared, in workload order. Two implementations give the same requests:
 * `inlinePromptSource` (this thread, as the simulation pulls them) and `startPromptWorker` (prompt-worker.ts:
 * a worker thread generates, renders and hashes ahead of the simulation).
 */
export interface PromptSource {
  readonly requests: Iterable<PreparedRequest>;
  /** Frees what the source holds (stops its worker). Idempotent. */
  close(): void;
}

/** What preparing needs besides the workload. */
export interface PrepareSettings {
  readonly blockTokens: number;
  /** Model name put in the request bodies the router parses. */
  readonly model: string;
}

/** Prepares requests one at a time (the shared-head memo lives as long as the preparer). */
export function requestPreparer(settings: PrepareSettings): (request: WorkloadRequest) => PreparedRequest {
  const hasher = new PromptHasher(settings.blockTokens);
  return (request) => {
    const { hashes, promptTokens } = hasher.blocksOf(request);
    const prepared: PreparedRequest = {
      id: request.id,
      arrivalMs: request.arrivalMs,
      maxTokens: request.maxTokens,
      routing: routingRequestOf(request, settings.model),
      hashes,
      promptTokens,
      ...(request.priority !== undefined ? { priority: request.priority } : {}),
    };
    return request.dependsOnId === undefined ? prepared : { ...prepared, dependsOnId: request.dependsOnId };
  };
}

export function inlinePromptSource(workload: Workload, settings: PrepareSettings): PromptSource {
  return {
    requests: {
      *[Symbol.iterator]() {
        const prepare = requestPreparer(settings);
        for (const request of workload.requests()) yield prepare(request);
      },
    },
    close: () => undefined,
  };
}
