import { InvokeEndpointWithResponseStreamCommand } from '@aws-sdk/client-sagemaker-runtime';
import { performance } from 'node:perf_hooks';
import type { RequestTransport } from '../benchmark/request-transport';
import { isCancelCode, httpErrorMessage, sanitizeCode, type CancelCode } from '../common/request-errors';
import { SseDecoder } from '../benchmark/sse-decoder';
import { routingHeaderFacts, StreamTally } from '../benchmark/stream-tally';
import type { SendOptions, StreamOutcome } from '../benchmark/streaming-client';
import { CUSTOM_ATTRIBUTES_HEADER } from '../protocol/routing-headers';
import type { WorkloadRequest } from '../workload/workload-request';
import type { PrefixAwareLlmClient } from './runtime-client';

/**
 * The live benchmark's transport for a SageMaker endpoint: each request is one InvokeEndpointWithResponseStream
 * through the official SDK (SigV4, retries, the AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME override), with the body the
 * HTTP benchmark would send. TTFT is taken when the first PayloadPart carrying generated text arrives, E2E at
 * the end of the event stream; usage (cached_tokens included) is read from the final SSE chunk inside the parts.
 *
 * Instance: the header named `instanceHeader` when the answer carries it (the local router's
 * `x-prefix-router-instance`), else `prefix-router-instance=<id>` in Custom Attributes (see below); SageMaker itself
 * names only the production variant (`x-Amzn-Invoked-Production-Variant`), recorded per request in `answeredBy`.
 */
export interface SageMakerTransportOptions {
  readonly client: PrefixAwareLlmClient;
  /** Response header naming the instance (lower case). */
  readonly instanceHeader: string;
  /** TargetVariant per request (variants mode); undefined = by the endpoint's weights. */
  readonly targetVariantOf?: (request: WorkloadRequest) => string | undefined;
  /** PrefixAwareId for every request; default none (the workload's tenant key travels in the body as prompt_cache_key). */
  readonly prefixAwareId?: string;
}

/** Record error code of an SDK failure: `sagemaker:<Name>` (+ the container's status for ModelError). */
export function sdkErrorCode(err: unknown): string {
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    name?: string;
    OriginalStatusCode?: number;
    ErrorCode?: string;
  };
  const name = sanitizeCode(e.name ?? 'unknown');
  if (name === 'ModelError' && e.OriginalStatusCode !== undefined)
    return `sagemaker:ModelError:${e.OriginalStatusCode}`;
  if (name === 'ModelStreamError') return `stream_error:${sanitizeCode(e.ErrorCode ?? 'ModelStreamError')}`;
  return `sagemaker:${name}`;
}

function errorDetailOf(err: unknown): string {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { message?: string; OriginalMessage?: string };
  // ModelError carries the container's body: its OpenAI-style message when it has one.
  return e.OriginalMessage !== undefined
    ? httpErrorMessage(e.OriginalMessage)
    : (e.message ?? String(err)).slice(0, 300);
}

/**
 * SageMaker strips every response header of the container except its own and Custom Attributes, so on a real
 * endpoint an instance header never reaches the client. A container that names itself in Custom Attributes as
 * `prefix-router-instance=<id>` (among other `key=value` pairs separated by `;` or `,`) is counted per instance.
 */
export { CUSTOM_ATTRIBUTES_HEADER };
export const CUSTOM_ATTRIBUTE_INSTANCE_KEY = 'prefix-router-instance';

export function instanceFromCustomAttributes(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  for (const part of value.split(/[;,]/)) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === CUSTOM_ATTRIBUTE_INSTANCE_KEY) {
      const id = part.slice(eq + 1).trim();
      if (id !== '') return id;
    }
  }
  return undefined;
}

/** The HTTP status and lower-cased headers of a streamed answer, as the SDK's middleware saw them. */
interface CapturedResponse {
  status: number | null;
  readonly headers: Record<string, string>;
}

export class SageMakerRuntimeTransport implements RequestTransport {
  /** Production variant each request was answered by (request id → variant), for variants mode. */
  readonly answeredBy = new Map<string, string>();

  constructor(private readonly options: SageMakerTransportOptions) {}

  async send(request: WorkloadRequest, body: string, options: SendOptions): Promise<StreamOutcome> {
    const startedAt = options.startedAt ?? performance.now();
    const signal = options.signal;
    if (signal?.aborted) {
      return {
        startedAt,
        firstTokenAt: null,
        endedAt: startedAt,
        status: null,
        instance: null,
        generatedEvents: 0,
        error: isCancelCode(signal.reason) ? signal.reason : 'aborted',
      };
    }
    const controller = new AbortController();
    let cancel: CancelCode | undefined;
    const onAbort = (): void => {
      cancel ??= isCancelCode(signal?.reason) ? signal.reason : 'aborted';
      controller.abort();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      cancel ??= 'timeout';
      controller.abort();
    }, options.timeoutMs);

    const response: CapturedResponse = { status: null, headers: {} };
    const tally = new StreamTally();
    let endedAt = startedAt;
    const { client } = this.options;
    const command = this.streamCommand(request, body, response);
    try {
      const out = await client.sdk.send(command, { abortSignal: controller.signal });
      response.status ??= out.$metadata.httpStatusCode ?? 200;
      if (out.InvokedProductionVariant !== undefined) this.answeredBy.set(request.id, out.InvokedProductionVariant);
      const decoder = new SseDecoder();
      for await (const part of out.Body ?? []) {
        const bytes = part.PayloadPart?.Bytes;
        if (bytes !== undefined) tally.push(decoder, Buffer.from(bytes), performance.now());
      }
      tally.end(decoder, performance.now());
      endedAt = performance.now();
    } catch (err) {
      endedAt = performance.now();
      const e = err as { $metadata?: { httpStatusCode?: number } };
      response.status ??= e.$metadata?.httpStatusCode ?? null;
      tally.error = cancel ?? sdkErrorCode(err);
      tally.errorDetail = cancel === undefined ? errorDetailOf(err) : `cancelled: ${cancel}`;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    const { headers, status } = response;
    const instance =
      headers[this.options.instanceHeader] ?? instanceFromCustomAttributes(headers[CUSTOM_ATTRIBUTES_HEADER]) ?? null;
    // The same decision headers as over HTTP: a local router behind the runtime API override sends them.
    const routing = routingHeaderFacts((name) => headers[name]);
    const { firstTokenAt, usage, generatedEvents, error, errorDetail } = tally;
    return {
      startedAt,
      firstTokenAt,
      endedAt,
      status,
      instance: instance === '' ? null : instance,
      ...routing,
      usage,
      generatedEvents,
      error,
      errorDetail,
    };
  }

  /** The streaming InvokeEndpoint call, with a middleware that records the HTTP status and headers in `response`. */
  private streamCommand(
    request: WorkloadRequest,
    body: string,
    response: CapturedResponse,
  ): InvokeEndpointWithResponseStreamCommand {
    const targetVariant = this.options.targetVariantOf?.(request);
    const input = this.options.client.input(Buffer.from(body), {
      prefixAwareId: this.options.prefixAwareId,
      targetVariant,
    });
    const command = new InvokeEndpointWithResponseStreamCommand(input);
    command.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        const raw = (out.response as { statusCode?: number; headers?: Record<string, string> } | undefined) ?? {};
        response.status = raw.statusCode ?? null;
        for (const [k, v] of Object.entries(raw.headers ?? {})) response.headers[k.toLowerCase()] = String(v);
        return out;
      },
      { step: 'deserialize', name: 'benchmarkCaptureResponse', priority: 'low' },
    );
    return command;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the transport interface's close is async; this one has nothing to wait for
  async close(): Promise<void> {
    this.options.client.destroy();
  }
}
