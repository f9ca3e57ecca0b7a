import { looksLikeJsonObject, parseJsonObject, type JsonObject } from './json-body';
import { readChatFields, type ChatFields } from './openai-chat';
import { readCompletionFields, type CompletionFields } from './openai-completions';
import type { RouteMatch } from './routes';
import type { PrefixKeyBasis, RoutingRequest } from './routing-request';
import { cacheScopeOf, PREFIX_AWARE_ID_HEADER, tenantKeyOf } from './tenant-key';
import { INFERENCE_COMPONENT_HEADER, inferenceComponentOf } from './inference-component';
import { bodyPriorityOf } from './request-priority';

/** The backend path a routed request is forwarded to. */
export type UpstreamPath = '/v1/chat/completions' | '/v1/completions' | '/invocations';

export interface ParsedRequest {
  readonly routing: RoutingRequest;
  readonly upstreamPath: UpstreamPath;
  /** True when the upstream body is JSON (chat/completions), so the router sets its content type. */
  readonly jsonBody: boolean;
  /** True when the body carries its own vLLM `cache_salt` (the router then never sets one: engine-cache-salt.ts). */
  readonly ownCacheSalt?: boolean;
  /** The body's `priority` when it is an integer (request-priority.ts). */
  readonly priority?: number;
  /** True when the body has a `priority` member (the router then never sets one). */
  readonly ownPriority?: boolean;
}

import type { RequestHeaders } from './request-headers';

export type { RequestHeaders };

/** What the server knows of a request beyond its bytes. */
export interface RequestContext {
  /** KeyRing.identity of the API key the request was authenticated by, when the router requires keys. */
  readonly keyIdentity?: string;
}

/** An OpenAI chat completion request (POST /v1/chat/completions and the runtime OpenAI path). */
export function parseChatRequest(
  body: Uint8Array,
  headers: RequestHeaders,
  keyBasis: PrefixKeyBasis = 'message-text',
  context: RequestContext = {},
): ParsedRequest {
  return chatFrom(parseJsonObject(body), body, headers, keyBasis, context);
}

/** An OpenAI completions request (POST /v1/completions). */
export function parseCompletionRequest(
  body: Uint8Array,
  headers: RequestHeaders,
  keyBasis: PrefixKeyBasis = 'message-text',
  context: RequestContext = {},
): ParsedRequest {
  return completionFrom(parseJsonObject(body), body, headers, keyBasis, context);
}

/**
 * A SageMaker invocation (container /invocations, runtime InvokeEndpoint[WithResponseStream]). The key is
 * always the raw body bytes; the body's shape picks the backend route: `messages` → chat completions,
 * `prompt` → completions, anything else (including non-JSON payloads) → the backend's own /invocations.
 * A body declared as JSON (Content-Type application/json or +json) that does not parse is a 400.
 */
export function parseInvocationRequest(
  body: Uint8Array,
  headers: RequestHeaders,
  context: RequestContext = {},
): ParsedRequest {
  const declaredJson = isJsonContentType(headers['content-type']);
  if (declaredJson || looksLikeJsonObject(body)) {
    let json: JsonObject | undefined;
    try {
      json = parseJsonObject(body);
    } catch (err) {
      if (declaredJson) throw err;
    }
    if (json !== undefined) {
      const kind = invocationBodyKind(json);
      if (kind === 'chat') return chatFrom(json, body, headers, 'body-bytes', context, 'invocations');
      if (kind === 'completions') return completionFrom(json, body, headers, 'body-bytes', context, 'invocations');
      return passthrough(body, headers, json, context);
    }
  }
  return passthrough(body, headers, undefined, context);
}

/**
 * Which OpenAI API a JSON invocation body is shaped for: `messages` → chat, `prompt` → completions, else none
 * (forwarded to the backend's own /invocations). The trace importer classifies captured bodies by it too.
 */
export function invocationBodyKind(json: JsonObject): 'chat' | 'completions' | undefined {
  if (json.messages !== undefined) return 'chat';
  if (json.prompt !== undefined) return 'completions';
  return undefined;
}

/** Dispatches on the matched route. */
export function parseRoutedRequest(
  route: RouteMatch,
  body: Uint8Array,
  headers: RequestHeaders,
  context: RequestContext = {},
): ParsedRequest {
  const parsed = parseByKind(route, body, headers, context);
  // On the runtime API, the inference component a call names decides which engines may take it (inference-component.ts).
  const component =
    route.endpointName !== undefined ? inferenceComponentOf(headers[INFERENCE_COMPONENT_HEADER]) : undefined;
  return component === undefined ? parsed : { ...parsed, routing: { ...parsed.routing, model: component } };
}

function parseByKind(
  route: RouteMatch,
  body: Uint8Array,
  headers: RequestHeaders,
  context: RequestContext,
): ParsedRequest {
  switch (route.kind) {
    case 'chat':
      return parseChatRequest(body, headers, route.keyBasis, context);
    case 'completions':
      return parseCompletionRequest(body, headers, route.keyBasis, context);
    default:
      return parseInvocationRequest(body, headers, context);
  }
}

function chatFrom(
  json: JsonObject,
  body: Uint8Array,
  headers: RequestHeaders,
  keyBasis: PrefixKeyBasis,
  context: RequestContext,
  api: 'chat' | 'invocations' = 'chat',
): ParsedRequest {
  const fields = readChatFields(json);
  return {
    routing: routingFromFields(fields, api, keyBasis, headers, body, context),
    upstreamPath: '/v1/chat/completions',
    jsonBody: true,
    ownCacheSalt: fields.cacheSalt !== undefined,
    ...priorityFields(json),
  };
}

function completionFrom(
  json: JsonObject,
  body: Uint8Array,
  headers: RequestHeaders,
  keyBasis: PrefixKeyBasis,
  context: RequestContext,
  api: 'completions' | 'invocations' = 'completions',
): ParsedRequest {
  const fields = readCompletionFields(json);
  return {
    routing: routingFromFields(fields, api, keyBasis, headers, body, context),
    upstreamPath: '/v1/completions',
    jsonBody: true,
    ownCacheSalt: fields.cacheSalt !== undefined,
    ...priorityFields(json),
  };
}

function priorityFields(json: JsonObject): Pick<ParsedRequest, 'priority' | 'ownPriority'> {
  const priority = bodyPriorityOf(json);
  return { ownPriority: json.priority !== undefined, ...(priority !== undefined ? { priority } : {}) };
}

function routingFromFields(
  fields: ChatFields | CompletionFields,
  api: RoutingRequest['api'],
  keyBasis: PrefixKeyBasis,
  headers: RequestHeaders,
  body: Uint8Array | undefined,
  context: RequestContext,
): RoutingRequest {
  const cacheScope = cacheScopeOf(fields.cacheSalt, context.keyIdentity);
  return {
    model: fields.model,
    api,
    keyBasis,
    routingText: fields.routingText,
    rawBody: keyBasis === 'body-bytes' ? body : undefined,
    tenantKey: tenantKeyOf(headers[PREFIX_AWARE_ID_HEADER], fields.promptCacheKey),
    ...(cacheScope !== undefined ? { cacheScope } : {}),
    sessionKey: fields.user,
    headers,
    stream: fields.stream,
    ...(fields.enginePrompt !== undefined ? { enginePrompt: fields.enginePrompt } : {}),
  };
}

/**
 * The RoutingRequest of an already-parsed OpenAI body sent to the OpenAI-compatible path, exactly as the HTTP
 * path would build it. The simulator uses it, so simulated and live requests key alike.
 */
export function routingRequestFromOpenAiJson(
  json: JsonObject,
  api: 'chat' | 'completions',
  headers: RequestHeaders = {},
): RoutingRequest {
  const fields = api === 'chat' ? readChatFields(json) : readCompletionFields(json);
  return routingFromFields(fields, api, 'message-text', headers, undefined, {});
}

function passthrough(
  body: Uint8Array,
  headers: RequestHeaders,
  json: JsonObject | undefined,
  context: RequestContext,
): ParsedRequest {
  const promptCacheKey = typeof json?.prompt_cache_key === 'string' ? json.prompt_cache_key : undefined;
  const cacheScope = cacheScopeOf(
    typeof json?.cache_salt === 'string' ? json.cache_salt : undefined,
    context.keyIdentity,
  );
  return {
    routing: {
      model: typeof json?.model === 'string' ? json.model : '',
      api: 'invocations',
      keyBasis: 'body-bytes',
      routingText: '',
      rawBody: body,
      tenantKey: tenantKeyOf(headers[PREFIX_AWARE_ID_HEADER], promptCacheKey),
      ...(cacheScope !== undefined ? { cacheScope } : {}),
      headers,
      stream: json?.stream === true,
    },
    upstreamPath: '/invocations',
    jsonBody: false,
  };
}

/** Content-Type application/json or application/*+json (parameters allowed): what the OpenAI routes require. */
export function isJsonContentType(value: string | string[] | undefined): boolean {
  const v = (Array.isArray(value) ? value[0] : value)?.toLowerCase();
  if (v === undefined) return false;
  const mime = v.split(';')[0].trim();
  return mime === 'application/json' || mime.endsWith('+json');
}
