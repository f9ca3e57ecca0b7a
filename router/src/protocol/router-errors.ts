/**
 * The one registry of errors the router answers with. Every error response, log line and metric uses these
 * codes; docs/errors.md documents each (a test keeps the two in step).
 *
 * Wire shape: OpenAI-style `{"error":{"message","type","code"}}`. On the SageMaker runtime-API paths
 * (/endpoints/{name}/...) the same body also carries `message`/`Message` and the response has an
 * `x-amzn-errortype` header, so the AWS SDK raises its named exception (ValidationError, ServiceUnavailable,
 * ModelError, ...).
 */
export interface ErrorSpec {
  /** HTTP status (for errors raised after a stream started, the status that would have been used). */
  readonly status: number;
  /** OpenAI-style error type. */
  readonly type: 'invalid_request_error' | 'server_error' | 'upstream_error' | 'NotFoundError';
  /** The SageMaker runtime exception the AWS SDK maps this to. */
  readonly awsErrorType:
    | 'ValidationError'
    | 'AccessDeniedException'
    | 'ThrottlingException'
    | 'ServiceUnavailable'
    | 'ModelError'
    | 'InternalFailure'
    | 'ModelStreamError';
  /** When it happens (rendered into docs/errors.md). */
  readonly when: string;
  /**
   * 'vllm': the body is the one vLLM itself answers with, `{"error":{"message","type","param","code":STATUS}}`, so a
   * client sees the same error whether the router or the engine refused the request.
   */
  readonly wire?: 'vllm';
  /** With wire 'vllm': the request field at fault. */
  readonly param?: string;
}

export const ROUTER_ERRORS = {
  invalid_json: {
    status: 400,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: 'The body is not valid UTF-8 JSON, or is JSON but not an object.',
  },
  missing_field: {
    status: 400,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: 'A required field is absent: `messages` (chat) or `prompt` (completions).',
  },
  invalid_field: {
    status: 400,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: 'A field has the wrong type or shape, e.g. `messages` is not a non-empty array of message objects, a text part has no string `text`, `stream` is not a boolean, `prompt_cache_key` is not a string; or a query parameter of `GET /router/v1/instance-state` is not an integer in its range.',
  },
  malformed_request: {
    status: 400,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: "The request is not parseable HTTP/1.1 (bad request line, header syntax, framing or encoding). Answered by the HTTP parser's error hook; the connection is closed.",
  },
  invalid_prefix_aware_id: {
    status: 400,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: 'The `X-Amzn-SageMaker-Prefix-Aware-Id` header is not 1 to 64 printable ASCII characters.',
  },
  invalid_inference_component: {
    status: 400,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: "The `X-Amzn-SageMaker-Inference-Component` header (the SDK's `InferenceComponentName`) on a runtime-API path is not 1 to 63 letters, digits and inner hyphens (the API reference's constraint).",
  },
  invalid_priority: {
    status: 400,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: 'The `x-prefix-router-priority` header is not an integer in -1000000..1000000.',
  },
  unauthorized: {
    status: 401,
    type: 'invalid_request_error',
    awsErrorType: 'AccessDeniedException',
    when: 'The router runs with `--api-key-file` (or the admin listener with `--admin-api-key-file`) and the request carries no accepted key in `Authorization: Bearer KEY` or `x-prefix-router-api-key`. Answered from the headers alone, before the body is read (the connection is then closed); comes with `WWW-Authenticate: Bearer`.',
  },
  not_found: {
    status: 404,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: 'No route for the path, or `GET /router/v1/instance-state` on a router that does not publish its state (`--publish-state-ms`).',
  },
  model_not_found: {
    status: 404,
    type: 'NotFoundError',
    awsErrorType: 'ModelError',
    wire: 'vllm',
    param: 'model',
    when: 'The body\'s `model` names a model or LoRA adapter that no backend serves (by each engine\'s `GET /v1/models`, re-read once before answering). The body is vLLM\'s own: `{"error":{"message":"The model `x` does not exist.","type":"NotFoundError","param":"model","code":404}}`. On SageMaker runtime-API paths it is answered as SageMaker relays a container\'s 404: `model_error` (424) with `OriginalStatusCode` 404 and that body as `OriginalMessage`.',
  },
  method_not_allowed: {
    status: 405,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: 'The path exists but not for this method; the `Allow` header lists the methods it takes.',
  },
  request_timeout: {
    status: 408,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: 'The client did not send the whole body within `bodyTimeoutMs`, paused its body longer than `bodyIdleTimeoutMs`, or did not send its headers within `headersTimeoutMs` (then the connection is closed).',
  },
  payload_too_large: {
    status: 413,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: 'The body (by `Content-Length` or as read) is larger than `maxBodyBytes`.',
  },
  unsupported_media_type: {
    status: 415,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: 'An OpenAI route (`/v1/chat/completions`, `/v1/completions`, `/endpoints/{name}/openai/v1/chat/completions`) got a body whose `Content-Type` is not `application/json` (or `application/*+json`). Checked before the body is read; the content type is never rewritten, so a web page cannot post a form or `text/plain` body to the engines through the router.',
  },
  misdirected_request: {
    status: 421,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: "The router runs with `--allowed-hosts` and the request's `Host` header names none of them (RFC 9110 §15.5.20): a DNS-rebinding page reaching the router from a browser is refused. Checked before authentication and before the body is read; `/ping` and `/health` are exempt.",
  },
  headers_too_large: {
    status: 431,
    type: 'invalid_request_error',
    awsErrorType: 'ValidationError',
    when: "The request headers are larger than Node's limit (16 KiB by default, `--max-http-header-size`) or too many; the connection is closed.",
  },
  too_many_requests: {
    status: 429,
    type: 'invalid_request_error',
    awsErrorType: 'ThrottlingException',
    when: 'The client (its API key, else its address) already has `maxInFlightPerClient` routed requests in flight. Answered before the body is read, with `Retry-After: 1`.',
  },
  flow_control_full: {
    status: 429,
    type: 'invalid_request_error',
    awsErrorType: 'ThrottlingException',
    when: "Flow control by priority class: a request with a priority above 0 would wait at the router, and the router's queue of waiting requests is full. With `Retry-After`.",
  },
  model_error: {
    status: 424,
    type: 'upstream_error',
    awsErrorType: 'ModelError',
    when: 'SageMaker runtime-API paths only: the backend answered with a non-2xx status; `OriginalStatusCode` and `OriginalMessage` carry its status and body (OpenAI paths pass backend errors through unchanged).',
  },
  internal_error: {
    status: 500,
    type: 'server_error',
    awsErrorType: 'InternalFailure',
    when: 'A bug in the router. The request is answered, logged with its stack, and the process keeps serving.',
  },
  upstream_connect_failed: {
    status: 502,
    type: 'upstream_error',
    awsErrorType: 'ModelError',
    when: 'The chosen backend refused the connection and so did the retry (or there was no other healthy backend to retry on).',
  },
  upstream_error: {
    status: 502,
    type: 'upstream_error',
    awsErrorType: 'ModelError',
    when: 'The backend connection failed after the request was sent and before any response byte (reset, closed); not retried, because the backend may have started the work.',
  },
  upstream_stream_failed: {
    status: 502,
    type: 'upstream_error',
    awsErrorType: 'ModelStreamError',
    when: 'The backend failed after the response had started. Streams end with a terminal event carrying this error: an SSE `data: {"error":...}` event then `data: [DONE]`, or a `ModelStreamError` event-stream message on `invocations-response-stream`. A non-streamed body is cut (the connection is destroyed) because its status was already sent.',
  },
  no_healthy_backend: {
    status: 503,
    type: 'server_error',
    awsErrorType: 'ServiceUnavailable',
    when: 'Health checks have ejected every backend (or none has passed its first check yet). Comes with `Retry-After`.',
  },
  overloaded: {
    status: 503,
    type: 'server_error',
    awsErrorType: 'ServiceUnavailable',
    when: 'The router already has `maxInFlight` routed requests in flight (answered before the body is read), the request bodies it holds fill `maxBufferedBodyBytes` (answered as the body arrives; the message says the router is busy, not its figures), or the chosen backend had no free connection for `poolWaitTimeoutMs`. With `Retry-After: 1`.',
  },
  shutting_down: {
    status: 503,
    type: 'server_error',
    awsErrorType: 'ServiceUnavailable',
    when: 'The router got SIGTERM/SIGINT (or `close()`) and is draining; new requests are refused with `Retry-After` and `Connection: close`.',
  },
  upstream_timeout: {
    status: 504,
    type: 'upstream_error',
    awsErrorType: 'ModelError',
    when: 'The backend sent no response headers within `upstreamHeadersTimeoutMs` (non-streamed generations send headers only at the end, so keep it above your longest generation). Silence mid-body longer than `upstreamBodyTimeoutMs` ends the response as `upstream_stream_failed`.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type RouterErrorCode = keyof typeof ROUTER_ERRORS;

export interface RouterErrorDetails {
  /** Seconds for the Retry-After header (503s). */
  readonly retryAfterSeconds?: number;
  /** The WWW-Authenticate challenge (401). */
  readonly authenticate?: string;
  /** Methods for the Allow header (405). */
  readonly allow?: readonly string[];
  /** model_error: the backend's status and (truncated) body text. */
  readonly originalStatusCode?: number;
  readonly originalMessage?: string;
}

export class RouterError extends Error {
  readonly status: number;
  readonly type: ErrorSpec['type'];

  constructor(
    readonly code: RouterErrorCode,
    message: string,
    readonly details: RouterErrorDetails = {},
  ) {
    super(message);
    this.name = 'RouterError';
    this.status = ROUTER_ERRORS[code].status;
    this.type = ROUTER_ERRORS[code].type;
  }

  get awsErrorType(): ErrorSpec['awsErrorType'] {
    return ROUTER_ERRORS[this.code].awsErrorType;
  }
}

/** The OpenAI-style body for an error. */
export function openAiErrorBody(error: RouterError): {
  error: { message: string; type: string; code: string | number; param?: string | null };
} {
  const spec: ErrorSpec = ROUTER_ERRORS[error.code];
  if (spec.wire === 'vllm')
    return { error: { message: error.message, type: error.type, param: spec.param ?? null, code: error.status } };
  return { error: { message: error.message, type: error.type, code: error.code } };
}
