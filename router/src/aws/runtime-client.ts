import {
  InvokeEndpointCommand,
  InvokeEndpointWithResponseStreamCommand,
  SageMakerRuntimeClient,
  type InvokeEndpointCommandInput,
  type SageMakerRuntimeClientConfig,
} from '@aws-sdk/client-sagemaker-runtime';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { SseDecoder } from '../benchmark/sse-decoder';
import { openAiErrorOf } from '../common/request-errors';
import { LlmModelError, LlmStreamError, toLlmError } from './runtime-errors';

/**
 * A small typed client for the endpoints PrefixAwareLlmEndpoint creates, on the official
 * `@aws-sdk/client-sagemaker-runtime`: OpenAI-style chat bodies in, text (or a stream of text deltas) and usage
 * out. Credentials, region, retries and the `AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME` override all come from the
 * SDK's default chain, so the same code calls a deployed endpoint or a local `prefix-router serve`.
 *
 * Why `prefixAwareId` matters: PREFIX_AWARE keys a request by the first `PrefixLength` bytes of the body plus
 * this id. Two applications that share a system prompt would otherwise pile onto one instance; a stable id per
 * application keeps each one's prompts together and the applications apart. The prefix bytes must be identical
 * too: put the shared part (system prompt, tools, documents) first and byte-for-byte the same on every call,
 * and anything that varies (timestamps, user names, request ids) after it.
 */
export interface ChatMessageInput {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string;
}

/** An OpenAI chat-completions body. Unknown fields pass through to vLLM unchanged. */
export interface ChatCompletionBody {
  readonly messages: readonly ChatMessageInput[];
  /** Omit to let vLLM use the model it serves (the DLC accepts a missing model). */
  readonly model?: string;
  readonly max_tokens?: number;
  readonly temperature?: number;
  readonly [field: string]: unknown;
}

export interface PrefixAwareLlmClientOptions {
  readonly endpointName: string;
  /** Default: the SDK's region chain (AWS_REGION, profile). */
  readonly region?: string;
  /** Routing hint sent with every call unless a call gives its own (1–64 printable ASCII). */
  readonly prefixAwareId?: string;
  /**
   * The inference component every call invokes unless a call names its own (SageMaker `InferenceComponentName`):
   * required on an endpoint that hosts components, where it picks the model, or the LoRA adapter, and so the
   * instances holding a copy of it. The body's `model` should name what the component's engine serves.
   */
  readonly inferenceComponentName?: string;
  /** SDK attempts per call, throttling and 5xx retries included. Default: the SDK's (3). */
  readonly maxAttempts?: number;
  /** Sockets to the endpoint; the SDK's default (50) caps concurrency. Default 256. */
  readonly maxSockets?: number;
  /** An SDK client to use instead of building one (tests, custom middleware). */
  readonly client?: SageMakerRuntimeClient;
  /** Extra SDK configuration (endpoint, credentials, logger…). */
  readonly sdkConfig?: SageMakerRuntimeClientConfig;
}

export interface CallOptions {
  /** Overrides the client's prefixAwareId for this call. */
  readonly prefixAwareId?: string;
  /** Stateful-session id (SageMaker `SessionId`): `NEW_SESSION` or one a previous answer returned. */
  readonly sessionId?: string;
  /** Send to this production variant (SageMaker `TargetVariant`) instead of by weight. */
  readonly targetVariant?: string;
  /** Overrides the client's inferenceComponentName for this call. */
  readonly inferenceComponentName?: string;
  readonly signal?: AbortSignal;
}

export interface ChatUsage {
  readonly promptTokens?: number;
  readonly completionTokens?: number;
  /** `usage.prompt_tokens_details.cached_tokens`: prompt tokens the engine served from its prefix cache. */
  readonly cachedTokens?: number;
}

export interface ChatAnswer {
  readonly text: string;
  readonly usage?: ChatUsage;
  readonly finishReason?: string;
  /** The production variant that served the call. */
  readonly variant?: string;
  /** Response headers (lower-case names), e.g. the router sidecar's `x-prefix-router-instance`. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body. */
  readonly body: unknown;
}

export type ChatStreamEvent =
  { readonly type: 'delta'; readonly text: string } | { readonly type: 'usage'; readonly usage: ChatUsage };

/** The answer to `stream()`: iterate it for deltas (then the usage, when the engine sends it). */
export interface ChatStream extends AsyncIterable<ChatStreamEvent> {
  readonly variant?: string;
  readonly headers: Readonly<Record<string, string>>;
}

export const DEFAULT_MAX_SOCKETS = 256;

/** Builds an SDK runtime client with enough sockets for concurrent streams (the SDK's default is 50). */
export function createRuntimeClient(
  options: Pick<PrefixAwareLlmClientOptions, 'region' | 'maxAttempts' | 'maxSockets' | 'sdkConfig'> = {},
): SageMakerRuntimeClient {
  const maxSockets = options.maxSockets ?? DEFAULT_MAX_SOCKETS;
  return new SageMakerRuntimeClient({
    ...(options.region !== undefined ? { region: options.region } : {}),
    ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
    // Handler options (not a handler instance): the SDK builds its own node handler with these agents.
    requestHandler: {
      httpAgent: new HttpAgent({ keepAlive: true, maxSockets }),
      httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets }),
    },
    ...options.sdkConfig,
  });
}

type HeaderSink = { headers: Record<string, string> };

/** Adds a middleware to one command that copies the raw response headers out (the SDK models only a few). */
function captureHeaders<C extends { middlewareStack: { add: (...args: never[]) => unknown } }>(
  command: C,
  sink: HeaderSink,
): C {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it: C's add takes never[]
  (command.middlewareStack as unknown as { add(mw: unknown, opts: unknown): void }).add(
    (next: (args: unknown) => Promise<{ response: unknown }>) => async (args: unknown) => {
      const out = await next(args);
      const headers = (out.response as { headers?: Record<string, string> } | undefined)?.headers ?? {};
      for (const [k, v] of Object.entries(headers)) sink.headers[k.toLowerCase()] = String(v);
      return out;
    },
    { step: 'deserialize', name: 'prefixAwareCaptureHeaders', priority: 'low' },
  );
  return command;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function usageOf(value: unknown): ChatUsage | undefined {
  if (!isObject(value)) return undefined;
  const details = isObject(value.prompt_tokens_details) ? value.prompt_tokens_details : undefined;
  return {
    promptTokens: num(value.prompt_tokens),
    completionTokens: num(value.completion_tokens),
    cachedTokens: details ? num(details.cached_tokens) : undefined,
  };
}

export class PrefixAwareLlmClient {
  readonly endpointName: string;
  readonly sdk: SageMakerRuntimeClient;
  private readonly ownsClient: boolean;

  constructor(private readonly options: PrefixAwareLlmClientOptions) {
    this.endpointName = options.endpointName;
    this.ownsClient = options.client === undefined;
    this.sdk = options.client ?? createRuntimeClient(options);
  }

  /** The InvokeEndpoint fields every call shares. */
  input(body: Uint8Array, options: CallOptions): InvokeEndpointCommandInput {
    const prefixAwareId = options.prefixAwareId ?? this.options.prefixAwareId;
    const inferenceComponentName = options.inferenceComponentName ?? this.options.inferenceComponentName;
    return {
      EndpointName: this.endpointName,
      ContentType: 'application/json',
      Accept: 'application/json',
      Body: body,
      ...(prefixAwareId !== undefined ? { PrefixAwareId: prefixAwareId } : {}),
      ...(options.sessionId !== undefined ? { SessionId: options.sessionId } : {}),
      ...(options.targetVariant !== undefined ? { TargetVariant: options.targetVariant } : {}),
      ...(inferenceComponentName !== undefined ? { InferenceComponentName: inferenceComponentName } : {}),
    };
  }

  /** InvokeEndpoint: one buffered answer. */
  async invoke(body: ChatCompletionBody, options: CallOptions = {}): Promise<ChatAnswer> {
    const sink: HeaderSink = { headers: {} };
    const payload = encoder.encode(JSON.stringify({ ...body, stream: false }));
    let out;
    try {
      out = await this.sdk.send(captureHeaders(new InvokeEndpointCommand(this.input(payload, options)), sink), {
        abortSignal: options.signal,
      });
    } catch (err) {
      throw toLlmError(err, this.endpointName);
    }
    const text = decoder.decode(out.Body ?? new Uint8Array());
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: returned as text
    }
    const choice =
      isObject(parsed) && Array.isArray(parsed.choices) && isObject(parsed.choices[0]) ? parsed.choices[0] : undefined;
    const message = choice && isObject(choice.message) ? choice.message : undefined;
    return {
      text:
        typeof message?.content === 'string'
          ? message.content
          : typeof choice?.text === 'string'
            ? choice.text
            : typeof parsed === 'string'
              ? parsed
              : '',
      usage: isObject(parsed) ? usageOf(parsed.usage) : undefined,
      finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : undefined,
      variant: out.InvokedProductionVariant,
      headers: sink.headers,
      body: parsed,
    };
  }

  /**
   * InvokeEndpointWithResponseStream with `stream: true` and usage requested: resolves once the response has
   * started; iterate the result for text deltas and, last, the usage (with cached_tokens when the engine reports it).
   */
  async stream(body: ChatCompletionBody, options: CallOptions = {}): Promise<ChatStream> {
    const sink: HeaderSink = { headers: {} };
    const payload = encoder.encode(JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }));
    let out;
    try {
      out = await this.sdk.send(
        captureHeaders(new InvokeEndpointWithResponseStreamCommand(this.input(payload, options)), sink),
        {
          abortSignal: options.signal,
        },
      );
    } catch (err) {
      throw toLlmError(err, this.endpointName);
    }
    const endpointName = this.endpointName;
    const parts = out.Body;
    async function* events(): AsyncGenerator<ChatStreamEvent> {
      const sse = new SseDecoder();
      try {
        if (parts === undefined) return;
        for await (const part of parts) {
          const bytes = part.PayloadPart?.Bytes;
          if (bytes === undefined) continue;
          for (const event of sse.push(Buffer.from(bytes))) yield* readEvent(event.type, event.data, endpointName);
        }
        for (const event of sse.end()) yield* readEvent(event.type, event.data, endpointName);
      } catch (err) {
        throw toLlmError(err, endpointName);
      }
    }
    return { variant: out.InvokedProductionVariant, headers: sink.headers, [Symbol.asyncIterator]: () => events() };
  }

  /** Closes the SDK client's sockets (only when this client built it). */
  destroy(): void {
    if (this.ownsClient) this.sdk.destroy();
  }
}

function* readEvent(type: string, data: string, endpointName: string): Generator<ChatStreamEvent> {
  const trimmed = data.trim();
  if (trimmed === '[DONE]' || trimmed === '') return;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    throw new LlmStreamError(
      `the response stream of ${endpointName} carried an event that is not JSON`,
      undefined,
      undefined,
      undefined,
    );
  }
  const error = openAiErrorOf(value);
  if (error !== undefined || type === 'error') {
    throw new LlmModelError(
      `the model container of ${endpointName} failed mid-stream: ${error?.message ?? trimmed.slice(0, 200)}`,
      undefined,
      error?.message,
      undefined,
      undefined,
      error?.code,
      undefined,
    );
  }
  if (!isObject(value)) return;
  for (const choice of Array.isArray(value.choices) ? value.choices : []) {
    if (!isObject(choice)) continue;
    const delta = isObject(choice.delta) ? choice.delta : undefined;
    const text =
      typeof delta?.content === 'string' ? delta.content : typeof choice.text === 'string' ? choice.text : '';
    if (text !== '') yield { type: 'delta', text };
  }
  const usage = usageOf(value.usage);
  if (usage !== undefined) yield { type: 'usage', usage };
}
