import type { PrefixKeyBasis } from './routing-request';
import { RouterError } from './router-errors';

/**
 * The router's URL surface. OpenAI paths, the SageMaker container contract, and the SageMaker runtime-API
 * paths (what the AWS SDK calls with a custom endpoint), so both official clients work unchanged.
 */
export type RouteKind = 'chat' | 'completions' | 'invocations' | 'models' | 'ping' | 'metrics' | 'instance-state';

/**
 * How the proxied response is shaped:
 * - 'passthrough': status, headers and body as the backend sent them (OpenAI paths, container /invocations);
 * - 'sagemaker-invoke': InvokeEndpoint — a 2xx body as is; a non-2xx becomes a 424 ModelError;
 * - 'sagemaker-eventstream': InvokeEndpointWithResponseStream — each body chunk becomes a PayloadPart
 *   message of an application/vnd.amazon.eventstream response.
 */
export type ResponseFraming = 'passthrough' | 'sagemaker-invoke' | 'sagemaker-eventstream';

/** Error body flavour: OpenAI-style everywhere; AWS-readable additions on the runtime-API paths. */
export type ErrorDialect = 'openai' | 'sagemaker-runtime';

export interface RouteMatch {
  readonly kind: RouteKind;
  readonly keyBasis: PrefixKeyBasis;
  readonly framing: ResponseFraming;
  readonly dialect: ErrorDialect;
  /** The `{name}` of /endpoints/{name}/... paths. */
  readonly endpointName?: string;
}

interface RouteSpec {
  readonly method: 'GET' | 'POST';
  readonly kind: RouteKind;
  readonly keyBasis: PrefixKeyBasis;
  readonly framing: ResponseFraming;
  readonly dialect: ErrorDialect;
}

const openAi = (kind: RouteKind, method: 'GET' | 'POST' = 'POST'): RouteSpec => ({
  method,
  kind,
  keyBasis: 'message-text',
  framing: 'passthrough',
  dialect: 'openai',
});

const STATIC_ROUTES: ReadonlyMap<string, RouteSpec> = new Map([
  ['/v1/chat/completions', openAi('chat')],
  ['/v1/completions', openAi('completions')],
  ['/v1/models', openAi('models', 'GET')],
  ['/ping', openAi('ping', 'GET')],
  ['/health', openAi('ping', 'GET')],
  ['/metrics', openAi('metrics', 'GET')],
  ['/router/v1/instance-state', openAi('instance-state', 'GET')],
  [
    '/invocations',
    { method: 'POST', kind: 'invocations', keyBasis: 'body-bytes', framing: 'passthrough', dialect: 'openai' },
  ],
]);

/** SageMaker endpoint names: 1-63 alphanumerics and hyphens, starting and ending alphanumeric. */
const ENDPOINT_NAME = /^[a-zA-Z0-9](?:-*[a-zA-Z0-9]){0,62}$/;

const ENDPOINT_ROUTES: ReadonlyMap<string, RouteSpec> = new Map([
  [
    'invocations',
    {
      method: 'POST',
      kind: 'invocations',
      keyBasis: 'body-bytes',
      framing: 'sagemaker-invoke',
      dialect: 'sagemaker-runtime',
    },
  ],
  [
    'invocations-response-stream',
    {
      method: 'POST',
      kind: 'invocations',
      keyBasis: 'body-bytes',
      framing: 'sagemaker-eventstream',
      dialect: 'sagemaker-runtime',
    },
  ],
  ['openai/v1/chat/completions', openAi('chat')],
]);

/** Resolves method + path (query string already removed). Throws `not_found` / `method_not_allowed`. */
export function matchRoute(method: string, pathname: string): RouteMatch {
  let spec = STATIC_ROUTES.get(pathname);
  let endpointName: string | undefined;
  if (spec === undefined && pathname.startsWith('/endpoints/')) {
    const rest = pathname.slice('/endpoints/'.length);
    const slash = rest.indexOf('/');
    if (slash > 0) {
      const name = safeDecode(rest.slice(0, slash));
      const candidate = ENDPOINT_ROUTES.get(rest.slice(slash + 1));
      if (candidate !== undefined && name !== undefined && ENDPOINT_NAME.test(name)) {
        spec = candidate;
        endpointName = name;
      }
    }
  }
  if (spec === undefined) throw new RouterError('not_found', `no route for ${method} ${truncatePath(pathname)}`);
  const allowed = spec.method === 'GET' ? ['GET', 'HEAD'] : [spec.method];
  if (!allowed.includes(method)) {
    throw new RouterError(
      'method_not_allowed',
      `${method} is not allowed on ${truncatePath(pathname)}; use ${allowed.join(' or ')}`,
      {
        allow: allowed,
      },
    );
  }
  return { kind: spec.kind, keyBasis: spec.keyBasis, framing: spec.framing, dialect: spec.dialect, endpointName };
}

/** The dialect to answer in before the route is known (e.g. for 404s under /endpoints/). */
export function dialectForPath(pathname: string): ErrorDialect {
  return pathname.startsWith('/endpoints/') && !pathname.includes('/openai/') ? 'sagemaker-runtime' : 'openai';
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function truncatePath(pathname: string): string {
  return pathname.length > 200 ? `${pathname.slice(0, 200)}...` : pathname;
}
