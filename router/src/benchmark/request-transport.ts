import type { WorkloadRequest } from '../workload/workload-request';
import type { SendOptions, StreamOutcome } from './streaming-client';

/**
 * How the live benchmark sends one request. The default is the HTTP streaming client to an OpenAI-compatible
 * URL; other transports (the SageMaker runtime API through the AWS SDK) plug in here and are timed the same way:
 * the outcome's monotonic times, status, instance and usage, never a rejection.
 */
export interface RequestTransport {
  /** Sends `body` (the request's OpenAI JSON, stream: true) and reads the answer to its end. */
  send(request: WorkloadRequest, body: string, options: SendOptions): Promise<StreamOutcome>;
  close(): Promise<void>;
}
