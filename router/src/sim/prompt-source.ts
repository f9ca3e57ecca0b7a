import { PromptHasher, type PromptBlocks } from './prompt-hasher';
import type { Workload } from './workload';
import type { WorkloadRequest } from './workload/workload-request';

/**
 * A workload's requests together with their prompts' block hashes, for the simulator. Two implementations give
 * the same requests and the same hashes: `inlinePromptSource` (this thread, on demand) and
 * `startPromptWorker` (prompt-worker.ts: a worker thread generates and hashes ahead of the simulation).
 */
export interface PromptSource {
  /** The workload's requests in workload order. */
  readonly requests: Iterable<WorkloadRequest>;
  /** Block hashes and token count of a request that came out of `requests` (each asked for once). */
  blocksOf(request: WorkloadRequest): PromptBlocks;
  /** Frees what the source holds (stops its worker). Idempotent. */
  close(): void;
}

export function inlinePromptSource(workload: Workload, blockTokens: number): PromptSource {
  const hasher = new PromptHasher(blockTokens);
  return {
    requests: { [Symbol.iterator]: () => workload.requests() },
    blocksOf: (request) => hasher.blocksOf(request),
    close: () => undefined,
  };
}
