import { invocationBodyKind, routingRequestFromOpenAiJson, type RequestHeaders } from '../protocol/parse-request';
import { parseJsonObject, type JsonObject } from '../protocol/json-body';
import { RouterError } from '../protocol/router-errors';
import { tenantKeyOf, PREFIX_AWARE_ID_HEADER } from '../protocol/tenant-key';
import type { RoutingRequest } from '../protocol/routing-request';
import { routedText } from '../policy/routing-blocks';

/**
 * One request as a capture or a log recorded it, before it is reduced to lengths and block ids. Both input
 * formats (Data Capture lines, OpenAI request logs) produce these; everything after is shared.
 */
export interface CapturedRequest {
  /** Arrival time, ms since the epoch. */
  readonly timestampMs: number;
  /** Which API the body went to: SageMaker InvokeEndpoint (`invocations`) or an OpenAI path. */
  readonly route: 'invocations' | 'chat' | 'completions';
  /** The request body: bytes (captured), or a JSON object already parsed (request logs). */
  readonly body: Uint8Array | JsonObject;
  /** The body's content type (Data Capture's observedContentType); undefined when the log names none. */
  readonly contentType?: string;
  /** Request headers the log kept (lower-case names): `x-amzn-sagemaker-prefix-aware-id` is read. */
  readonly headers?: RequestHeaders;
  /** The captured response, when there is one. */
  readonly response?: CapturedResponse;
}

export interface CapturedResponse {
  readonly body: Uint8Array | JsonObject;
  readonly contentType?: string;
}

/** A line the importer cannot use: why, in words that quote nothing of the payload. */
export class UnusableRequest extends Error {
  constructor(
    message: string,
    readonly kind: ProblemKind,
  ) {
    super(message);
    this.name = 'UnusableRequest';
  }
}

/** What went wrong with a line, counted by kind in the import summary. */
export type ProblemKind =
  | 'malformed-line'
  | 'truncated-last-line'
  | 'bad-base64'
  | 'unknown-content-type'
  | 'not-a-generation-body'
  | 'bad-timestamp'
  | 'out-of-order'
  | 'unreadable-source';

/** What the trace needs of one request, taken exactly as the router takes it. */
export interface RequestShape {
  readonly routing: RoutingRequest;
  /** The text the router's blocks cover (routedText): message text, the prompt, or an opaque body's bytes. */
  readonly text: string;
  /** chat / completions (OpenAI bodies, also sent through InvokeEndpoint), or a native text-generation body. */
  readonly kind: 'chat' | 'completions' | 'native' | 'text';
  /** The request's own limit on generated tokens, when it sets one. */
  readonly maxTokens?: number;
}

const TEXT_CONTENT_TYPES = new Set(['text/plain', 'text/csv']);

function mimeOf(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]!.trim().toLowerCase();
}

export function isJsonMime(mime: string | undefined): boolean {
  return mime === 'application/json' || (mime?.endsWith('+json') ?? false);
}

function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** max_completion_tokens / max_tokens (OpenAI), or parameters.max_new_tokens (TGI/LMI native bodies). */
function maxTokensOf(json: JsonObject): number | undefined {
  const parameters = json.parameters as JsonObject | undefined;
  return (
    positiveInteger(json.max_completion_tokens) ??
    positiveInteger(json.max_tokens) ??
    (typeof parameters === 'object' && parameters !== null ? positiveInteger(parameters.max_new_tokens) : undefined)
  );
}

function parseBody(body: Uint8Array | JsonObject): JsonObject {
  if (!(body instanceof Uint8Array)) return body;
  try {
    return parseJsonObject(body);
  } catch {
    throw new UnusableRequest('the body is not a JSON object', 'malformed-line');
  }
}

/**
 * The routing request of a captured body, built by the router's own protocol code: a JSON body shaped as chat
 * (`messages`) or completions (`prompt`) gives the routing text the router keys on; a native text-generation
 * body (`inputs`, TGI/LMI) and a text/plain or text/csv body are opaque to the router, which keys on their bytes,
 * and so does the trace. Anything else (an embedding or image payload, a JSON body of another shape) is not a
 * generation request and is refused.
 */
export function requestShape(request: CapturedRequest): RequestShape {
  const headers: RequestHeaders = {
    ...(request.headers ?? {}),
    ...(request.contentType !== undefined ? { 'content-type': request.contentType } : {}),
  };
  const mime = mimeOf(request.contentType);
  const isObject = !(request.body instanceof Uint8Array);
  if (!isObject && mime !== undefined && !isJsonMime(mime)) {
    if (!TEXT_CONTENT_TYPES.has(mime))
      throw new UnusableRequest(
        `unknown content type ${JSON.stringify(mime.slice(0, 80))} (expected application/json, text/plain or text/csv)`,
        'unknown-content-type',
      );
    return opaque(request.body, headers, undefined, 'text');
  }
  const json = parseBody(request.body);
  try {
    const kind = request.route === 'invocations' ? invocationBodyKind(json) : request.route;
    if (kind !== undefined) {
      const routing = routingRequestFromOpenAiJson(json, kind, headers);
      return { routing, text: routedText(routing), kind, maxTokens: maxTokensOf(json) };
    }
    if (typeof json.inputs === 'string') {
      const bytes = request.body instanceof Uint8Array ? request.body : Buffer.from(JSON.stringify(json), 'utf8');
      return opaque(bytes, headers, json, 'native');
    }
  } catch (error) {
    if (error instanceof RouterError)
      throw new UnusableRequest(
        `not a usable ${request.route === 'invocations' ? 'invocation' : request.route} body: ${error.message}`,
        'not-a-generation-body',
      );
    throw error;
  }
  throw new UnusableRequest(
    'the body is neither a chat, a completion nor a text-generation (inputs) request',
    'not-a-generation-body',
  );
}

function opaque(
  body: Uint8Array,
  headers: RequestHeaders,
  json: JsonObject | undefined,
  kind: 'native' | 'text',
): RequestShape {
  let tenantKey: string | undefined;
  try {
    tenantKey = tenantKeyOf(
      headers[PREFIX_AWARE_ID_HEADER],
      typeof json?.prompt_cache_key === 'string' ? json.prompt_cache_key : undefined,
    );
  } catch (error) {
    throw new UnusableRequest((error as Error).message, 'not-a-generation-body');
  }
  const routing: RoutingRequest = {
    model: typeof json?.model === 'string' ? json.model : '',
    api: 'invocations',
    keyBasis: 'body-bytes',
    routingText: '',
    rawBody: body,
    tenantKey,
    headers,
    stream: json?.stream === true,
  };
  return { routing, text: routedText(routing), kind, maxTokens: json ? maxTokensOf(json) : undefined };
}

/** Where an output length came from; the summary counts each. */
export type OutputSource = 'usage' | 'generated-text' | 'max-tokens' | 'default';

/**
 * Generated tokens of a captured response: `usage.completion_tokens` (OpenAI JSON, or the last SSE chunk that
 * carries usage), `details.generated_tokens` (TGI/LMI); else the generated text, returned for the caller to
 * count. Undefined when the response says nothing usable.
 */
export function responseOutput(
  response: CapturedResponse | undefined,
): { tokens: number } | { text: string } | undefined {
  if (response === undefined) return undefined;
  const mime = mimeOf(response.contentType);
  if (response.body instanceof Uint8Array) {
    const raw = Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength).toString('utf8');
    if (mime === 'text/event-stream' || raw.startsWith('data:')) return sseOutput(raw);
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return undefined;
    }
    return jsonOutput(json);
  }
  return jsonOutput(response.body);
}

function jsonOutput(json: unknown): { tokens: number } | { text: string } | undefined {
  const first: unknown = Array.isArray(json) ? (json as unknown[])[0] : json;
  if (typeof first !== 'object' || first === null) return undefined;
  const o = first as JsonObject;
  const usage = o.usage as JsonObject | undefined;
  const fromUsage = typeof usage === 'object' && usage !== null ? positiveInteger(usage.completion_tokens) : undefined;
  if (fromUsage !== undefined) return { tokens: fromUsage };
  const details = o.details as JsonObject | undefined;
  const generated =
    typeof details === 'object' && details !== null ? positiveInteger(details.generated_tokens) : undefined;
  if (generated !== undefined) return { tokens: generated };
  if (typeof o.generated_text === 'string' && o.generated_text.length > 0) return { text: o.generated_text };
  const choices = o.choices;
  if (Array.isArray(choices)) {
    const texts = choices.map((c: unknown) => {
      const choice = c as JsonObject;
      const message = choice?.message as JsonObject | undefined;
      return typeof message?.content === 'string'
        ? message.content
        : typeof choice?.text === 'string'
          ? choice.text
          : '';
    });
    const text = texts.join('');
    if (text.length > 0) return { text };
  }
  return undefined;
}

/** An SSE body: the usage of the chunk that carries it (stream_options.include_usage), else the streamed text. */
function sseOutput(raw: string): { tokens: number } | { text: string } | undefined {
  let text = '';
  for (const line of raw.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const payload = line.slice(5).trim();
    if (payload === '[DONE]' || payload === '') continue;
    let chunk: JsonObject;
    try {
      chunk = JSON.parse(payload) as JsonObject;
    } catch {
      continue;
    }
    const usage = chunk.usage as JsonObject | undefined;
    const tokens = typeof usage === 'object' && usage !== null ? positiveInteger(usage.completion_tokens) : undefined;
    if (tokens !== undefined) return { tokens };
    for (const c of Array.isArray(chunk.choices) ? chunk.choices : []) {
      const choice = c as JsonObject;
      const delta = choice?.delta as JsonObject | undefined;
      if (typeof delta?.content === 'string') text += delta.content;
      else if (typeof choice?.text === 'string') text += choice.text;
    }
  }
  return text.length > 0 ? { text } : undefined;
}
